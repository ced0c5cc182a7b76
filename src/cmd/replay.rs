//! Pass one and pass two shared by the commands that read samples (report,
//! collapse, flame): replay the records in time order into the session
//! model, sum the samples by stack, then symbolize every unique location.

use std::path::Path;

use anyhow::{Context, Result};
use perf_data::stats::Stats;
use profile::machine::Machine;
use profile::resolve::{CollectOptions, Collector};
use profile::symbolize::{Background, NameStyle, SymbolizeOptions, Symbols};

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
    /// The times of the first and last samples (None: no sample had a time).
    pub sample_times: Option<(u64, u64)>,
}

pub fn replay(path: &Path, reader: perf_data::RecordReader, o: &ReplayOptions) -> Result<Replayed> {
    let t0 = std::time::Instant::now();
    let (mut machine, kernel) = start(reader.meta());
    let sym_opts = SymbolizeOptions {
        names: o.names,
        inline: o.inline,
        finder: symbols::DebugFinder::default(),
        srclines: o.srclines,
    };
    // Binaries are read while the records are replayed.
    let mut early = Background::start(&sym_opts);
    let mut state = PassOne {
        collector: Collector::new(o.collect),
        last_read: Default::default(),
        unknown_read_ids: 0,
        sample_times: None,
    };
    let context = || format!("reading records of {}", path.display());
    // A file's metadata is all in its header: one thread reads and orders
    // the records while this one replays them. A pipe's attrs come as
    // records, so it is read on this thread alone.
    let (reader, stats) = if reader.meta().is_pipe() {
        let mut reader = perf_data::Reader::new(reader, perf_data::Order::Time);
        let mut stats = Stats::default();
        let mut n = 0u32;
        while let Some(rec) = reader.next_record().with_context(context)? {
            stats.add(&rec);
            state.record(&mut machine, &rec);
            n = n.wrapping_add(1);
            if n % BATCH_RECORDS as u32 == 0 {
                early.feed(state.collector.interner.locs(), machine.dsos());
            }
        }
        (reader, stats)
    } else {
        let meta = reader.meta().clone();
        // Records outside COMPRESSED records are passed by offset into the
        // file, not copied (see `Batch`).
        let input = reader.input_bytes();
        let (reader, stats, read) = std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(BATCHES);
            // Replayed batches go back to be filled again, so memory stays
            // at a few batches.
            let (back_tx, back_rx) = std::sync::mpsc::channel::<Batch>();
            let producer = std::thread::Builder::new()
                .name("sear-read".into())
                .spawn_scoped(scope, move || {
                    let mut reader = perf_data::Reader::new(reader, perf_data::Order::Time);
                    let random_access = reader.input_bytes().is_some();
                    let mut stats = Stats::default();
                    let mut batch = Batch::default();
                    let mut sent = InFlight::default();
                    // What the batches in flight read, as of the last send
                    // (batches only come back then, so it is never too high).
                    let mut in_flight = u64::MAX;
                    let read = loop {
                        match reader.next_record() {
                            Ok(Some(rec)) => {
                                stats.add(&rec);
                                let t = rec.type_();
                                if t == perf_data::PERF_RECORD_SAMPLE
                                    || t < perf_data::PERF_RECORD_HEADER_ATTR
                                {
                                    batch.push(&rec.raw, random_access);
                                    if batch.len >= BATCH_BYTES
                                        || batch.records.len() >= BATCH_RECORDS
                                    {
                                        let fresh = sent.returned(&back_rx);
                                        let full = std::mem::replace(&mut batch, fresh);
                                        sent.push(full.min_offset);
                                        in_flight = sent.min_offset();
                                        if tx.send(full).is_err() {
                                            break Ok(());
                                        }
                                    }
                                    // The consumer reads the file at the
                                    // offsets of batches not yet replayed.
                                    reader.hold_from(in_flight.min(batch.min_offset));
                                }
                            }
                            Ok(None) => break Ok(()),
                            Err(e) => break Err(e),
                        }
                    };
                    let _ = tx.send(batch);
                    (reader, stats, read)
                })
                .map_err(|e| anyhow::anyhow!("cannot start a thread: {e}"))?;
            for batch in rx {
                for raw in batch.records(input.as_deref()) {
                    let rec = perf_data::Record { raw, meta: &meta };
                    state.record(&mut machine, &rec);
                }
                let _ = back_tx.send(batch);
                early.feed(state.collector.interner.locs(), machine.dsos());
            }
            producer
                .join()
                .map_err(|_| anyhow::anyhow!("the thread reading {} failed", path.display()))
        })?;
        read.with_context(context)?;
        (reader, stats)
    };
    let mut reader = reader;
    // Every record is replayed: the file's pages can go.
    reader.release_read();
    log::debug!("pass one: {:?}", t0.elapsed());
    crate::ui::log_memory("after pass one");
    let PassOne {
        mut collector,
        unknown_read_ids,
        sample_times,
        ..
    } = state;
    log::debug!("pass one: {} distinct chains", collector.distinct_chains());
    collector.finish();
    log::debug!("pass one finished: {:?}", t0.elapsed());
    let syms = finish_symbols(early, &collector, &machine, kernel);
    crate::ui::log_memory("after symbolizing");
    Ok(Replayed {
        collector,
        machine,
        syms,
        stats,
        reader,
        unknown_read_ids,
        sample_times,
    })
}

/// Bytes of records in a batch (copied or held in the file), records per
/// batch, and how many batches may wait.
const BATCH_BYTES: usize = 256 << 10;
const BATCH_RECORDS: usize = 2048;
const BATCHES: usize = 4;

/// Records handed from the reading thread, in delivery order. Records that
/// lie in the file as they are (all but those from COMPRESSED records, when
/// the input is a file) are passed by offset and read from the shared
/// mapping; the others are copied into `bytes`.
struct Batch {
    bytes: Vec<u8>,
    records: Vec<perf_data::KeptRecord>,
    /// The lowest file offset of a record passed by offset (`u64::MAX`:
    /// none), which the reader keeps mapped until the batch comes back.
    min_offset: u64,
    /// Bytes of the records, copied or not.
    len: usize,
}

impl Default for Batch {
    fn default() -> Self {
        Batch {
            bytes: Vec::new(),
            records: Vec::new(),
            min_offset: u64::MAX,
            len: 0,
        }
    }
}

impl Batch {
    fn push(&mut self, r: &perf_data::RawRecord<'_>, random_access: bool) {
        let kept = perf_data::KeptRecord::keep(r, random_access, &mut self.bytes);
        if kept.in_input {
            self.min_offset = self.min_offset.min(kept.offset);
        }
        self.len += kept.len();
        self.records.push(kept);
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.records.clear();
        self.min_offset = u64::MAX;
        self.len = 0;
    }

    /// The records, read from `file` (the reader's input bytes) or from the
    /// batch's own bytes.
    fn records<'a>(
        &'a self,
        file: Option<&'a [u8]>,
    ) -> impl Iterator<Item = perf_data::RawRecord<'a>> + 'a {
        self.records
            .iter()
            .filter_map(move |r| r.get(file, &self.bytes))
    }
}

/// The batches sent to the replaying thread and not yet back, oldest first
/// (it replays and returns them in order), by their lowest file offset.
#[derive(Default)]
struct InFlight {
    offsets: std::collections::VecDeque<u64>,
    free: Vec<Batch>,
}

impl InFlight {
    fn push(&mut self, min_offset: u64) {
        self.offsets.push_back(min_offset);
    }

    /// Takes back the batches replayed so far; returns an empty batch to
    /// fill next (a recycled one if any came back).
    fn returned(&mut self, back: &std::sync::mpsc::Receiver<Batch>) -> Batch {
        while let Ok(mut b) = back.try_recv() {
            self.offsets.pop_front();
            b.clear();
            self.free.push(b);
        }
        self.free.pop().unwrap_or_default()
    }

    /// The lowest file offset the batches in flight read (at most
    /// BATCHES + 1 of them).
    fn min_offset(&self) -> u64 {
        self.offsets.iter().copied().fold(u64::MAX, u64::min)
    }
}

/// What pass one keeps besides the session model.
struct PassOne {
    collector: Collector,
    /// Per counter id, its value at its last sample (`:S` groups).
    last_read: std::collections::HashMap<u64, u64>,
    unknown_read_ids: u64,
    sample_times: Option<(u64, u64)>,
}

impl PassOne {
    /// One record in delivery order: a sample is summed, a record that
    /// changes the session model is applied.
    fn record(&mut self, machine: &mut Machine, rec: &perf_data::Record<'_>) {
        if rec.type_() == perf_data::PERF_RECORD_SAMPLE {
            let Ok(s) = rec.sample() else {
                return; // counted by stats as undecodable
            };
            if let Some(t) = s.time {
                self.sample_times = Some(match self.sample_times {
                    Some((lo, hi)) => (lo.min(t), hi.max(t)),
                    None => (t, t),
                });
            }
            let attr = &rec.meta.events[s.event].attr;
            match s.read {
                // Counter values read with the sample (leader sampling,
                // `:S`): as perf, each value's change since that counter's
                // last sample is a sample of its own event.
                Some(read) if attr.sample_type & perf_data::PERF_SAMPLE_READ != 0 => {
                    for v in read.values() {
                        let event = v.id.and_then(|id| rec.meta.event_of_id(Some(id)));
                        let (Some(id), Some(event)) = (v.id, event) else {
                            self.unknown_read_ids += 1;
                            continue;
                        };
                        let last = self.last_read.entry(id).or_insert(0);
                        let delta = v.value.wrapping_sub(*last);
                        *last = v.value;
                        if delta == 0 {
                            continue;
                        }
                        let mut member = s.clone();
                        member.event = event;
                        self.collector.add(machine, &member, delta);
                    }
                }
                _ => {
                    // Without PERIOD in the sample, perf counts the attr's period.
                    let period = s.period.unwrap_or(attr.sample_period_or_freq);
                    self.collector.add(machine, &s, period);
                }
            }
        } else if rec.type_() < perf_data::PERF_RECORD_HEADER_ATTR {
            if let Ok((data, _)) = rec.decode() {
                if let perf_data::records::RecordData::Exit(e) = &data {
                    if e.pid == e.tid {
                        self.collector.process_exited(machine, e.pid as i32);
                    }
                }
                machine.apply(rec.raw.misc, &data);
            }
        }
    }
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
    let handle = (id.is_some() && wants_kernel)
        .then(|| {
            let id = id.clone();
            std::thread::Builder::new()
                .name("sear-kallsyms".into())
                .spawn(move || symbols::KernelFinder::default().load_for_recording(id.as_deref()))
                .ok()
        })
        .flatten();
    (machine, KernelPrefetch { id, handle })
}

/// Pass two after [`Background`] answered locations during pass one: the
/// rest symbolized, with the prefetched kernel symbols as [`symbolize`].
pub fn finish_symbols(
    early: Background,
    collector: &Collector,
    machine: &Machine,
    kernel: KernelPrefetch,
) -> Symbols {
    let preloaded = kernel.take(machine);
    let syms = early.finish(
        collector.interner.locs(),
        machine.dsos(),
        machine.kernel_reloc(),
        preloaded,
    );
    warn_misses(&syms);
    syms
}

impl KernelPrefetch {
    /// The prefetched kernel symbols, if pass one kept the kernel's build
    /// id the features named.
    fn take(self, machine: &Machine) -> Option<Result<symbols::Kallsyms, symbols::Reason>> {
        let id = self.id;
        self.handle.and_then(|h| h.join().ok()).filter(|_| {
            machine
                .dsos()
                .iter()
                .find(|d| d.name == "[kernel.kallsyms]")
                .is_none_or(|d| d.build_id == id)
        })
    }
}

fn warn_misses(syms: &Symbols) {
    for (dso, reason) in &syms.misses {
        log::warn!("{dso}: no symbols ({reason})");
    }
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
    let preloaded = kernel.take(machine);
    let syms = profile::symbolize::symbolize_with_kernel(
        collector.interner.locs(),
        machine.dsos(),
        machine.kernel_reloc(),
        opts,
        preloaded,
    );
    warn_misses(&syms);
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
