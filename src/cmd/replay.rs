//! Pass one and pass two shared by the commands that read samples (report,
//! collapse, flame): replay the records in time order into the session
//! model, sum the samples by stack, then symbolize every unique location.

use std::path::Path;

use anyhow::{Context, Result};
use perf_data::stats::Stats;
use profile::machine::Machine;
use profile::resolve::{CollectOptions, Collector};
use profile::session;
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
    let (machine, kernel) = session::start(reader.meta());
    let sym_opts = SymbolizeOptions {
        names: o.names,
        inline: o.inline,
        finder: symbols::DebugFinder::default(),
        srclines: o.srclines,
    };
    let mut sink = Summing {
        collector: Collector::new(o.collect),
        // Binaries are read while the records are replayed.
        early: Background::start(&sym_opts),
    };
    let session::Replay {
        machine,
        stats,
        reader,
        unknown_read_ids,
        sample_times,
    } = session::replay(reader, machine, &mut sink)
        .with_context(|| format!("reading records of {}", path.display()))?;
    log::debug!("pass one: {:?}", t0.elapsed());
    crate::ui::log_memory("after pass one");
    let Summing {
        mut collector,
        early,
    } = sink;
    log::debug!("pass one: {} distinct chains", collector.distinct_chains());
    collector.finish();
    log::debug!("pass one finished: {:?}", t0.elapsed());
    let syms = early.finish_replay(&collector, &machine, kernel);
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

/// Pass one of the summing commands: every sample's stack summed, and the
/// locations met handed to the symbolizer as they come.
struct Summing {
    collector: Collector,
    early: Background,
}

impl session::Sink for Summing {
    fn sample(&mut self, machine: &mut Machine, s: &perf_data::Sample<'_>, period: u64) {
        self.collector.add(machine, s, period);
    }

    fn process_exited(&mut self, machine: &Machine, pid: i32) {
        self.collector.process_exited(machine, pid);
    }

    fn batch_done(&mut self, machine: &Machine) {
        self.early
            .feed(self.collector.interner.locs(), machine.dsos());
    }
}
