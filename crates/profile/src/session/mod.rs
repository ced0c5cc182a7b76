//! The replay driver: a recording's records in time order into the session
//! model ([`Machine`]), each sample handed to a [`Sink`].
//!
//! A file is read and ordered on a thread of its own while this one
//! replays it, its records passed by offset into the file rather than
//! copied; a pipe's attributes come as records, so a stream is read on the
//! calling thread. Either way the driver does what every consumer of
//! samples needs done the same way: the model's threads, maps and DSOs
//! kept current, counter values read with samples (`:S` leader sampling)
//! turned into one sample per member as perf does, a process's exit told
//! to the sink before its maps go, and the span of sample times.

use std::collections::{HashMap, VecDeque};
use std::sync::mpsc;

use perf_data::stats::Stats;
use perf_data::{RecordReader, Sample};

use crate::machine::Machine;
pub use crate::symbolize::KernelPrefetch;
pub use crate::Error;

mod each;
mod summed;
mod time_ranges;
mod timeline;
pub use each::{each_record, SampleSite, Step};
pub use summed::{sum, SumOptions, Summed, Summing, ThreadValue};
pub use time_ranges::TimeRanges;
pub use timeline::{
    KeptBranch, KeptRegs, LeafFilter, SampleExtra, SampleFilter, ShownTime, SideBand, TimeClock,
    TimedSample, TimedSide, Timeline,
};

/// perf's `--switch-on`/`--switch-off` (its evswitch): samples count
/// only after one of the `on` event (from the start when there is none)
/// and until one of the `off` event; the switching samples themselves are
/// left out unless `show` (`--show-on-off-events`). Applied in delivery
/// order, after `--time`, as perf applies it.
#[derive(Debug, Clone, Copy, Default)]
pub struct EvSwitch {
    pub on: Option<usize>,
    pub off: Option<usize>,
    pub show: bool,
    discarding: bool,
}

impl EvSwitch {
    /// The switch for events `on` and `off` (indices into the recording's
    /// events).
    pub fn new(on: Option<usize>, off: Option<usize>, show: bool) -> Self {
        EvSwitch {
            on,
            off,
            show,
            discarding: on.is_some(),
        }
    }

    /// Resolves event names as perf finds them (the event's name as the
    /// recording gives it); an unknown name is an error naming it.
    pub fn by_names(
        meta: &perf_data::Meta,
        on: Option<&str>,
        off: Option<&str>,
        show: bool,
    ) -> Result<Self, String> {
        let find = |n: &str, which: &str| {
            meta.events
                .iter()
                .position(|e| e.name.as_deref() == Some(n))
                .ok_or_else(|| {
                    let names: Vec<&str> = meta
                        .events
                        .iter()
                        .filter_map(|e| e.name.as_deref())
                        .collect();
                    format!(
                        "{which} event not found ({n}): the recording's events are {}",
                        names.join(", ")
                    )
                })
        };
        let on = on.map(|n| find(n, "switch-on")).transpose()?;
        let off = off.map(|n| find(n, "switch-off")).transpose()?;
        Ok(EvSwitch::new(on, off, show))
    }

    /// Whether a sample of `event`, in delivery order, is left out.
    pub fn discard(&mut self, event: usize) -> bool {
        if self.on.is_some() && self.discarding {
            if self.on != Some(event) {
                return true;
            }
            self.discarding = false;
            return !self.show;
        }
        if self.off.is_some() && !self.discarding {
            if self.off != Some(event) {
                return false;
            }
            self.discarding = true;
            return !self.show;
        }
        false
    }
}

/// What consumes a replay.
pub trait Sink {
    /// One sample, counting `period` for its event (for a `:S` group, one
    /// call per member whose counter moved, with `s.event` that member).
    fn sample(&mut self, machine: &mut Machine, s: &Sample<'_>, period: u64);

    /// The process `pid` exited: its maps are about to go.
    fn process_exited(&mut self, _machine: &Machine, _pid: i32) {}

    /// A batch of records was replayed: a point to hand work that the
    /// samples so far made to other threads.
    fn batch_done(&mut self, _machine: &Machine) {}

    /// A build id that came as a record (a pipe-mode stream's
    /// HEADER_BUILD_ID), in its place among the others.
    fn build_id(&mut self, _machine: &mut Machine, _b: &perf_data::records::BuildIdRecord<'_>) {}

    /// A kernel record that is not a sample, decoded: called before the
    /// model applies it (`applied` false) and after (`applied` true), for
    /// sinks that show such records (script's `--show-*-events`).
    fn side_band(
        &mut self,
        _machine: &mut Machine,
        _rec: &perf_data::Record<'_>,
        _data: &perf_data::records::RecordData<'_>,
        _sid: &perf_data::records::SampleId,
        _applied: bool,
    ) {
    }

    /// A FINISHED_ROUND record, where the recording wrote it (sinks fed in file
    /// order: script's `--show-round-events`).
    fn finished_round(&mut self) {}
}

/// A session fed one record at a time, in time order, by its caller (a
/// live recorder's ring buffers): the same model, `:S` attribution and
/// exits as [`replay`], and the sink's state readable between pushes.
pub struct Live<S: Sink> {
    pub machine: Machine,
    pub sink: S,
    /// Record counts by type, of the records pushed so far.
    pub stats: Stats,
    driver: Driver,
}

impl<S: Sink> Live<S> {
    /// A session starting from `machine` (see [`start`]).
    pub fn new(machine: Machine, sink: S) -> Self {
        Live {
            machine,
            sink,
            stats: Stats::default(),
            driver: Driver::default(),
        }
    }

    /// Replays one record.
    pub fn push(&mut self, rec: &perf_data::Record<'_>) {
        self.stats.add(rec);
        self.driver.record(&mut self.machine, &mut self.sink, rec);
    }

    /// Ends a batch of pushes (see [`Sink::batch_done`]).
    pub fn batch_done(&mut self) {
        self.sink.batch_done(&self.machine);
    }

    /// Counter values read with samples (`:S`) whose id names no event.
    pub fn unknown_read_ids(&self) -> u64 {
        self.driver.unknown_read_ids
    }

    /// The times of the first and last samples so far.
    pub fn sample_times(&self) -> Option<(u64, u64)> {
        self.driver.sample_times
    }
}

/// What a replay leaves besides the sink's state.
pub struct Replay {
    /// The session model at the end.
    pub machine: Machine,
    /// Record counts by type.
    pub stats: Stats,
    /// The reader, for the file's metadata and warnings.
    pub reader: perf_data::OrderedReader,
    /// Counter values read with samples (`:S`) whose id names no event.
    pub unknown_read_ids: u64,
    /// The times of the first and last samples (None: no sample had a time).
    pub sample_times: Option<(u64, u64)>,
}

/// Replays every record of `reader` into `machine` (made by
/// [`crate::machine::Machine::new`], build ids set) and `sink`, in perf's
/// delivery order.
pub fn replay(
    reader: RecordReader,
    machine: Machine,
    sink: &mut dyn Sink,
) -> Result<Replay, Error> {
    replay_in(reader, machine, sink, perf_data::Order::Time)
}

/// [`replay`] in the order given: perf's time order, or the file's (perf's
/// unordered processing, which script's `--show-round-events` asks for).
pub fn replay_in(
    reader: RecordReader,
    mut machine: Machine,
    sink: &mut dyn Sink,
    order: perf_data::Order,
) -> Result<Replay, Error> {
    let mut state = Driver::default();
    let (mut reader, stats) = if reader.meta().is_pipe() {
        let mut reader = perf_data::OrderedReader::new(reader, order);
        let mut stats = Stats::default();
        let mut n = 0usize;
        while let Some(rec) = reader.next_record()? {
            stats.add(&rec);
            state.record(&mut machine, sink, &rec);
            n += 1;
            if n.is_multiple_of(BATCH_RECORDS) {
                sink.batch_done(&machine);
            }
        }
        (reader, stats)
    } else {
        threaded(reader, &mut machine, sink, &mut state, order)?
    };
    sink.batch_done(&machine);
    // Every record is replayed: the file's pages can go.
    reader.release_read();
    Ok(Replay {
        machine,
        stats,
        reader,
        unknown_read_ids: state.unknown_read_ids,
        sample_times: state.sample_times,
    })
}

/// A file's records read and ordered on another thread, replayed on this one.
fn threaded(
    reader: RecordReader,
    machine: &mut Machine,
    sink: &mut dyn Sink,
    state: &mut Driver,
    order: perf_data::Order,
) -> Result<(perf_data::OrderedReader, Stats), Error> {
    let meta = reader.meta().clone();
    // Records outside COMPRESSED records are passed by offset into the
    // file, not copied (see `Batch`).
    let input = reader.input_bytes();
    let (reader, stats, read) = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<Batch>(BATCHES);
        // Replayed batches go back to be filled again, so memory stays at
        // a few batches.
        let (back_tx, back_rx) = mpsc::channel::<Batch>();
        let producer = std::thread::Builder::new()
            .name("sear-read".into())
            .spawn_scoped(scope, move || {
                let mut reader = perf_data::OrderedReader::new(reader, order);
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
                            if replayed(t) {
                                batch.push(&rec.raw, random_access);
                                if batch.len >= BATCH_BYTES || batch.records.len() >= BATCH_RECORDS
                                {
                                    let fresh = sent.returned(&back_rx);
                                    let full = std::mem::replace(&mut batch, fresh);
                                    sent.push(full.min_offset);
                                    in_flight = sent.min_offset();
                                    if tx.send(full).is_err() {
                                        break Ok(());
                                    }
                                }
                                // The consumer reads the file at the offsets
                                // of batches not yet replayed.
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
            .map_err(Error::Thread)?;
        for batch in rx {
            for raw in batch.records(input.as_deref()) {
                let rec = perf_data::Record { raw, meta: &meta };
                state.record(machine, sink, &rec);
            }
            let _ = back_tx.send(batch);
            sink.batch_done(machine);
        }
        producer.join().map_err(|_| Error::ReaderFailed)
    })?;
    read?;
    Ok((reader, stats))
}

/// The record types a replay looks at: samples, those that change the
/// session model, and build ids.
fn replayed(t: u32) -> bool {
    t == perf_data::PERF_RECORD_SAMPLE
        || t < perf_data::PERF_RECORD_HEADER_ATTR
        || t == perf_data::PERF_RECORD_HEADER_BUILD_ID
        || t == perf_data::PERF_RECORD_FINISHED_ROUND
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
    offsets: VecDeque<u64>,
    free: Vec<Batch>,
}

impl InFlight {
    fn push(&mut self, min_offset: u64) {
        self.offsets.push_back(min_offset);
    }

    /// Takes back the batches replayed so far; returns an empty batch to
    /// fill next (a recycled one if any came back).
    fn returned(&mut self, back: &mpsc::Receiver<Batch>) -> Batch {
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

/// The replaying side: what the driver keeps between records.
#[derive(Default)]
struct Driver {
    /// Per counter id, its value at its last sample (`:S` groups).
    last_read: HashMap<u64, u64>,
    unknown_read_ids: u64,
    sample_times: Option<(u64, u64)>,
    /// The model was told the recording's clock.
    clock_told: bool,
}

impl Driver {
    /// One record in delivery order: a sample goes to the sink, a record
    /// that changes the session model is applied.
    fn record(&mut self, machine: &mut Machine, sink: &mut dyn Sink, rec: &perf_data::Record<'_>) {
        if machine.jit_pending() {
            if let Some(t) = rec.time() {
                machine.advance(t);
            }
        }
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
                        sink.sample(machine, &member, delta);
                    }
                }
                _ => {
                    // Without PERIOD in the sample, perf counts the attr's period.
                    let period = s.period.unwrap_or(attr.sample_period_or_freq);
                    sink.sample(machine, &s, period);
                }
            }
        } else if rec.type_() < perf_data::PERF_RECORD_HEADER_ATTR {
            if !self.clock_told {
                self.clock_told = true;
                machine.set_monotonic_clock(crate::jit::monotonic(rec.meta));
            }
            if let Ok((data, sid)) = rec.decode() {
                if let (Some(t), perf_data::records::RecordData::Mmap2(_)) = (sid.time, &data) {
                    // (A jitdump's marker places the code loaded by now.)
                    machine.advance(t);
                }
                sink.side_band(machine, rec, &data, &sid, false);
                if let perf_data::records::RecordData::Exit(e) = &data {
                    if e.pid == e.tid {
                        sink.process_exited(machine, e.pid as i32);
                    }
                }
                machine.apply(rec.raw.misc, &data);
                sink.side_band(machine, rec, &data, &sid, true);
            }
        } else if rec.type_() == perf_data::PERF_RECORD_FINISHED_ROUND {
            sink.finished_round();
        } else if rec.type_() == perf_data::PERF_RECORD_HEADER_BUILD_ID {
            if let Ok((perf_data::records::RecordData::BuildId(b), _)) = rec.decode() {
                sink.build_id(machine, &b);
            }
        }
    }
}

/// A `--cpu` filter needs each event's samples to carry their CPU: perf
/// checks the first event of each type, and refuses otherwise.
pub fn check_cpu_filter(meta: &perf_data::Meta) -> Result<(), Error> {
    let mut seen: Vec<u32> = Vec::new();
    for e in &meta.events {
        if seen.contains(&e.attr.type_) {
            continue;
        }
        seen.push(e.attr.type_);
        if e.attr.sample_type & perf_data::PERF_SAMPLE_CPU == 0 {
            return Err(Error::BadOption(
                "the recording's samples carry no CPU, so --cpu cannot select any: \
                 record with -a, -C or --sample-cpu, or leave --cpu out"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// Replays every record for the session model alone (`report --tasks` and
/// `--mmaps`): threads and maps, each sample's thread made as perf makes
/// it.
pub fn threads_only(reader: RecordReader) -> Result<Replay, Error> {
    struct Threads;
    impl Sink for Threads {
        fn sample(&mut self, machine: &mut Machine, s: &Sample<'_>, _period: u64) {
            machine.sample_thread(s);
        }
    }
    replay(reader, Machine::new(), &mut Threads)
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
    (machine, KernelPrefetch::start(id, wants_kernel))
}
