//! The summing sink (report, collapse, flame, diff, annotate, html): every
//! sample's stack summed by (event, thread, comm, stack), the locations met
//! handed to the symbolizer while the records are still being read; then
//! pass two symbolizes every unique location once.

use perf_data::stats::Stats;
use perf_data::{RecordReader, Sample};

use super::{replay, start, Replay, Sink};
use crate::collect::{CollectOptions, Collector, SampleKey, SampleSum};
use crate::machine::Machine;
use crate::symbolize::{Background, NameStyle, SymbolTable, SymbolizeOptions};
use crate::Error;

/// How to sum and symbolize.
#[derive(Debug, Clone, Default)]
pub struct SumOptions {
    pub collect: CollectOptions,
    pub names: NameStyle,
    pub inline: bool,
    /// Look up each location's source line (srcline and srcfile keys).
    pub srclines: bool,
    /// `--time`: only samples in these ranges; the others are left out as
    /// perf leaves them out.
    pub time: Option<super::TimeRanges>,
    /// `-C/--cpu` where the sums do not keep CPUs (collapse, flame): only
    /// samples of these CPUs.
    pub cpus: Option<Vec<u32>>,
    /// Keep the counter values READ records give exiting threads (`record
    /// -s`), for report's `-T`.
    pub thread_values: bool,
    /// `--switch-on`/`--switch-off`.
    pub switch: Option<super::EvSwitch>,
}

/// A counter value a READ record gave a thread: its pid and tid, the
/// event's index and the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadValue {
    pub pid: i32,
    pub tid: i32,
    pub event: usize,
    pub value: u64,
}

/// What [`sum`] leaves: the summed samples, the session model at the end,
/// the symbols of every location, the record counts and the reader (for
/// its metadata and warnings).
pub struct Summed {
    pub collector: Collector,
    pub machine: Machine,
    pub syms: SymbolTable,
    pub stats: Stats,
    pub reader: perf_data::OrderedReader,
    /// Counter values read with samples (`:S`) whose id names no event.
    pub unknown_read_ids: u64,
    /// The times of the first and last samples (None: no sample had a time).
    pub sample_times: Option<(u64, u64)>,
    /// With [`SumOptions::thread_values`]: the READ records' values, in
    /// their order.
    pub thread_values: Vec<ThreadValue>,
}

/// Passes one and two over a whole recording.
pub fn sum(reader: RecordReader, o: &SumOptions) -> Result<Summed, Error> {
    let t0 = std::time::Instant::now();
    let (machine, kernel) = start(reader.meta());
    let mut sink = Summing::new(o);
    // A file's stacks are interned on a thread of their own (a live view
    // reads its sums between records, so it keeps them on its one) where
    // the second core would idle: stacks unwound from copies of the user
    // stack keep it reading their binaries for inline frames and lines
    // early, and taking it from that made those reports slower.
    let unwinds = reader
        .meta()
        .events
        .iter()
        .any(|e| e.attr.sample_type & perf_data::PERF_SAMPLE_STACK_USER != 0);
    if !(unwinds && (o.inline || o.srclines)) {
        sink.collector.start_interning(&mut sink.early);
    }
    let Replay {
        machine,
        stats,
        reader,
        unknown_read_ids,
        sample_times,
    } = replay(reader, machine, &mut sink)?;
    log::debug!("pass one: {:?}", t0.elapsed());
    let Summing {
        mut collector,
        early,
        thread_values,
        ..
    } = sink;
    collector.join_interning(machine.dsos());
    log::debug!("pass one: {} distinct chains", collector.distinct_chains());
    collector.finish();
    log::debug!("pass one finished: {:?}", t0.elapsed());
    let syms = early.finish_replay(&mut collector, &machine, kernel);
    log::debug!(
        "pass one: {} distinct samples, {} locations, {} stack nodes, {} symbols",
        collector.distinct_samples(),
        collector.interner.locs().len(),
        collector.interner.stack_nodes(),
        syms.syms.len()
    );
    log::debug!("passes one and two: {:?}", t0.elapsed());
    Ok(Summed {
        collector,
        machine,
        syms,
        stats,
        reader,
        unknown_read_ids,
        sample_times,
        thread_values: thread_values.unwrap_or_default(),
    })
}

/// Pass one of the summing commands: every sample's stack summed, and the
/// locations met handed to the symbolizer as they come. Its sums can be
/// read at any point ([`Summing::sums_so_far`]), so a live view redraws
/// from them without starting over.
pub struct Summing {
    pub collector: Collector,
    /// Fed by the collector's interning thread where it has one.
    early: Background,
    time: Option<super::TimeRanges>,
    cpus: Option<Vec<u32>>,
    thread_values: Option<Vec<ThreadValue>>,
    switch: Option<super::EvSwitch>,
}

impl Summing {
    /// A sink whose binaries are read on other threads while the records
    /// are replayed.
    pub fn new(o: &SumOptions) -> Self {
        let sym_opts = SymbolizeOptions {
            names: o.names,
            inline: o.inline,
            finder: symbols::DebugFinder::default(),
            srclines: o.srclines,
        };
        Summing {
            collector: Collector::new(o.collect),
            early: Background::start(&sym_opts),
            time: o.time.clone(),
            cpus: o.cpus.clone(),
            thread_values: o.thread_values.then(Vec::new),
            switch: o.switch,
        }
    }

    /// The sums of the samples so far, in the order their first samples
    /// came; the sink keeps summing.
    pub fn sums_so_far(&self) -> Vec<(SampleKey, SampleSum)> {
        self.collector.sums_so_far()
    }
}

impl Sink for Summing {
    fn sample(&mut self, machine: &mut Machine, s: &Sample<'_>, period: u64) {
        if self
            .time
            .as_ref()
            .is_some_and(|r| !r.keeps(s.time.unwrap_or(0)))
            || self
                .cpus
                .as_ref()
                .is_some_and(|c| !c.contains(&s.cpu.unwrap_or(u32::MAX)))
        {
            return;
        }
        if self.switch.as_mut().is_some_and(|w| w.discard(s.event)) {
            return;
        }
        self.collector.add(machine, s, period);
    }

    fn process_exited(&mut self, machine: &Machine, pid: i32) {
        self.collector.process_exited(machine, pid);
    }

    fn batch_done(&mut self, machine: &Machine) {
        if self.collector.interning_apart() {
            self.collector.send_interning(machine.dsos());
        } else {
            self.early
                .feed(self.collector.interner.locs(), machine.dsos());
        }
    }

    fn side_band(
        &mut self,
        _machine: &mut Machine,
        rec: &perf_data::Record<'_>,
        data: &perf_data::records::RecordData<'_>,
        sid: &perf_data::records::SampleId,
        applied: bool,
    ) {
        let (Some(out), false) = (&mut self.thread_values, applied) else {
            return;
        };
        if let perf_data::records::RecordData::Read { pid, tid, values } = data {
            // perf takes the record's first value, for the event its
            // sample id names (the first event without one).
            out.push(ThreadValue {
                pid: *pid as i32,
                tid: *tid as i32,
                event: rec.meta.event_of_id(sid.id).unwrap_or(0),
                value: values.values().next().map_or(0, |v| v.value),
            });
        }
    }
}
