//! Pass one and pass two shared by the commands that read samples (report,
//! collapse, flame): replay the records in time order into the session
//! model, sum the samples by stack, then symbolize every unique location.

use std::path::Path;

use anyhow::{Context, Result};
use perf_data::stats::Stats;
use profile::machine::Machine;
use profile::resolve::{CollectOptions, Collector};
use profile::symbolize::{NameStyle, SymbolizeOptions, Symbols};

/// How to replay.
pub struct ReplayOptions {
    pub collect: CollectOptions,
    pub names: NameStyle,
    pub inline: bool,
    /// Look up each location's source line (srcline and srcfile keys).
    pub srclines: bool,
}

/// What a replay leaves: the summed samples, the session model at the end,
/// the symbols of every location, the record counts and the reader (for
/// its metadata and warnings).
pub struct Replayed {
    pub collector: Collector,
    pub machine: Machine,
    pub syms: Symbols,
    pub stats: Stats,
    pub reader: perf_data::Reader,
    /// Counter values read with samples (`:S`) whose id names no event.
    pub unknown_read_ids: u64,
}

pub fn replay(path: &Path, reader: perf_data::RecordReader, o: &ReplayOptions) -> Result<Replayed> {
    let t0 = std::time::Instant::now();
    let (mut machine, kernel) = start(reader.meta());
    let mut collector = Collector::new(o.collect);
    let mut reader = perf_data::Reader::new(reader, perf_data::Order::Time);
    let mut stats = Stats::default();
    let mut last_read: std::collections::HashMap<u64, u64> = Default::default();
    let mut unknown_read_ids = 0u64;
    while let Some(rec) = reader
        .next_record()
        .with_context(|| format!("reading records of {}", path.display()))?
    {
        stats.add(&rec);
        if rec.type_() == perf_data::PERF_RECORD_SAMPLE {
            let Ok(s) = rec.sample() else {
                continue; // counted by stats as undecodable
            };
            let attr = &rec.meta.events[s.event].attr;
            match s.read {
                // Counter values read with the sample (leader sampling,
                // `:S`): as perf, each value's change since that counter's
                // last sample is a sample of its own event.
                Some(read) if attr.sample_type & perf_data::PERF_SAMPLE_READ != 0 => {
                    for v in read.values() {
                        let event = v.id.and_then(|id| rec.meta.event_of_id(Some(id)));
                        let (Some(id), Some(event)) = (v.id, event) else {
                            unknown_read_ids += 1;
                            continue;
                        };
                        let last = last_read.entry(id).or_insert(0);
                        let delta = v.value.wrapping_sub(*last);
                        *last = v.value;
                        if delta == 0 {
                            continue;
                        }
                        let mut member = s.clone();
                        member.event = event;
                        collector.add(&mut machine, &member, delta);
                    }
                }
                _ => {
                    // Without PERIOD in the sample, perf counts the attr's period.
                    let period = s.period.unwrap_or(attr.sample_period_or_freq);
                    collector.add(&mut machine, &s, period);
                }
            }
        } else if rec.type_() < perf_data::PERF_RECORD_HEADER_ATTR {
            if let Ok((data, _)) = rec.decode() {
                machine.apply(rec.raw.misc, &data);
            }
        }
    }
    log::debug!("pass one: {:?}", t0.elapsed());
    let syms = symbolize(
        &collector,
        &machine,
        kernel,
        &SymbolizeOptions {
            names: o.names,
            inline: o.inline,
            finder: symbols::DebugFinder::default(),
            srclines: o.srclines,
        },
    );
    Ok(Replayed {
        collector,
        machine,
        syms,
        stats,
        reader,
        unknown_read_ids,
    })
}

/// The kernel's symbols being read on another thread during pass one, and
/// the build id they are for.
pub struct KernelPrefetch {
    id: Option<Vec<u8>>,
    handle: Option<std::thread::JoinHandle<Result<symbols::Kallsyms, symbols::Reason>>>,
}

/// The session model before pass one (the recording's build ids set) and,
/// when the file names its kernel up front, its symbols read on another
/// core meanwhile (reading /proc/kallsyms takes a tenth of a second).
pub fn start(meta: &perf_data::Meta) -> (Machine, KernelPrefetch) {
    let mut machine = Machine::new();
    let build_ids = meta.features.build_ids().unwrap_or_default();
    for e in &build_ids {
        machine.set_build_id(&e.filename, &e.build_id);
    }
    let id = build_ids
        .iter()
        .find(|e| e.filename == "[kernel.kallsyms]")
        .map(|e| e.build_id.clone());
    let wants_kernel = meta
        .events
        .iter()
        .any(|e| !e.attr.flag(perf_data::attr::flag::EXCLUDE_KERNEL));
    let handle = (id.is_some() && wants_kernel).then(|| {
        let id = id.clone();
        std::thread::spawn(move || {
            symbols::KernelFinder::default().load_for_recording(id.as_deref())
        })
    });
    (machine, KernelPrefetch { id, handle })
}

/// Pass two: every location of pass one symbolized, with the prefetched
/// kernel symbols if pass one kept the kernel's build id the features
/// named. DSOs without symbols are warned about once each.
pub fn symbolize(
    collector: &Collector,
    machine: &Machine,
    kernel: KernelPrefetch,
    opts: &SymbolizeOptions,
) -> Symbols {
    let preloaded = kernel.handle.and_then(|h| h.join().ok()).filter(|_| {
        machine
            .dsos()
            .iter()
            .find(|d| d.name == "[kernel.kallsyms]")
            .is_none_or(|d| d.build_id == kernel.id)
    });
    let syms = profile::symbolize::symbolize_with_kernel(
        collector.interner.locs(),
        machine.dsos(),
        machine.kernel_reloc(),
        opts,
        preloaded,
    );
    for (dso, reason) in &syms.misses {
        log::warn!("{dso}: no symbols ({reason})");
    }
    syms
}

/// The name style the report flags ask for.
pub fn name_style(no_demangle: bool, short_names: bool) -> NameStyle {
    if no_demangle {
        NameStyle::Raw
    } else if short_names {
        NameStyle::Short
    } else {
        NameStyle::Full
    }
}
