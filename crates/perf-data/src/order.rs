//! Delivering records in time order the way perf does: kernel records are
//! queued by timestamp and flushed at FINISHED_ROUND up to the newest time of
//! the round before; records without a time and perf's own records go out at
//! once. Memory stays bounded: past a limit the older half is flushed early.

use crate::consts::*;
use crate::error::{Error, Result};
use crate::meta::Meta;
use crate::reader::{Diagnostics, Record, RecordReader};
use crate::records::KeptRecord;

/// Arena size below which dead bytes are left in place.
const COMPACT_MIN: usize = 1 << 20;

/// Default bound on queued record bytes before a half flush.
pub const DEFAULT_QUEUE_LIMIT: usize = 512 << 20;

/// How records are handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// Sorted by time between FINISHED_ROUND records, as perf delivers them.
    #[default]
    Time,
    /// In file order, untouched.
    File,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: u64,
    seq: u64,
    /// In the reader's input or in the arena.
    rec: KeptRecord,
}

/// Reads records in perf's delivery order (or file order).
pub struct OrderedReader {
    inner: RecordReader,
    order: Order,
    arena: Vec<u8>,
    queue: Vec<Entry>,
    ready: Vec<Entry>,
    ready_pos: usize,
    seq: u64,
    max_time: u64,
    next_flush: u64,
    last_flush: u64,
    eof: bool,
    limit: usize,
    out_of_order: u64,
    /// Arena bytes of the entries in `queue`.
    queued: usize,
    /// Input bytes of the entries in `queue` that were not copied (see
    /// `zero_copy`).
    queued_input: usize,
    /// Records outside COMPRESSED records are not copied but read back from
    /// the input (a mapped or in-memory file); only decompressed ones go to
    /// the arena.
    zero_copy: bool,
    /// Input bytes from this offset on are still read by the caller.
    hold: u64,
    /// Input position at which the reader's hold is next brought up to date.
    next_hold: u64,
    /// Scratch: queue indices by arena position (see `compact`).
    by_start: Vec<u32>,
}

impl OrderedReader {
    /// Time order falls back to file order when the first event's records
    /// carry no sample_id_all timestamps, as perf does ("unordered processing").
    pub fn new(inner: RecordReader, order: Order) -> Self {
        let order = match inner.meta().events.first() {
            Some(e) if !e.attr.sample_id_all() => Order::File,
            _ => order,
        };
        let zero_copy = inner.is_random_access();
        OrderedReader {
            inner,
            order,
            arena: Vec::new(),
            queue: Vec::new(),
            ready: Vec::new(),
            ready_pos: 0,
            seq: 0,
            max_time: 0,
            next_flush: 0,
            last_flush: 0,
            eof: false,
            limit: DEFAULT_QUEUE_LIMIT,
            out_of_order: 0,
            queued: 0,
            queued_input: 0,
            zero_copy,
            hold: u64::MAX,
            next_hold: 0,
            by_start: Vec::new(),
        }
    }

    /// Opens a file for reading in time order.
    pub fn open(path: &std::path::Path) -> Result<Self> {
        Ok(Self::new(RecordReader::open(path)?, Order::Time))
    }

    pub fn set_queue_limit(&mut self, bytes: usize) {
        self.limit = bytes.max(1 << 16);
    }
    pub fn meta(&self) -> &Meta {
        self.inner.meta()
    }
    /// The order records are actually handed out in (see [`OrderedReader::new`]).
    pub fn order(&self) -> Order {
        self.order
    }
    pub fn diagnostics(&self) -> &Diagnostics {
        self.inner.diagnostics()
    }
    pub fn inner(&self) -> &RecordReader {
        &self.inner
    }
    /// Kernel records that arrived older than records already delivered.
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }
    /// The whole input of a file (see [`RecordReader::input_bytes`]):
    /// records not from COMPRESSED records can be read back from it at
    /// their offsets after the reader has moved on, if the caller says so
    /// with [`OrderedReader::hold_from`].
    pub fn input_bytes(&self) -> Option<crate::reader::InputBytes> {
        self.inner.input_bytes()
    }
    /// The caller still reads input bytes from offset `off` on (`u64::MAX`:
    /// none): mapped pages from there on are kept in memory.
    pub fn hold_from(&mut self, off: u64) {
        self.hold = off;
        if self.order == Order::File {
            self.inner.hold_from(off);
        }
    }
    /// Hands the mapped pages of the records read so far back to the
    /// kernel, whatever was held (see [`RecordReader::release_read`]).
    pub fn release_read(&mut self) {
        self.hold = u64::MAX;
        self.inner.release_read();
    }
    /// Input bytes consumed so far (for progress).
    pub fn position(&self) -> u64 {
        self.inner.position()
    }

    /// The next record, or None at the end.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>> {
        if self.order == Order::File {
            return self.inner.next_record();
        }
        loop {
            if self.ready_pos < self.ready.len() {
                let e = self.ready[self.ready_pos];
                self.ready_pos += 1;
                // (Always there: the input is kept whole and the arena
                // keeps what is queued or ready.)
                let raw = e
                    .rec
                    .get(self.inner.input_all(), &self.arena)
                    .ok_or_else(|| {
                        Error::corrupt("record", e.rec.offset, "its kept bytes are gone")
                    })?;
                return Ok(Some(Record {
                    raw,
                    meta: self.inner.meta(),
                }));
            }
            self.ready.clear();
            self.ready_pos = 0;
            self.compact();
            if self.eof {
                if self.queue.is_empty() {
                    // The reader outlives the reading (for its metadata and
                    // warnings): free the buffers now.
                    self.arena = Vec::new();
                    self.queue = Vec::new();
                    self.ready = Vec::new();
                    self.by_start = Vec::new();
                    return Ok(None);
                }
                self.flush(u64::MAX);
                continue;
            }
            self.fill()?;
        }
    }

    /// The lowest input offset still needed: by records queued or ready
    /// but not handed out, and by the caller.
    fn floor(&self) -> u64 {
        self.queue
            .iter()
            .chain(&self.ready[self.ready_pos..])
            .filter(|e| e.rec.in_input)
            .map(|e| e.rec.offset)
            .fold(self.hold, u64::min)
    }

    /// Reads until some records are ready or the input ends.
    fn fill(&mut self) -> Result<()> {
        while self.ready.is_empty() {
            // What may be handed back to the kernel, looked at every
            // quarter of a release step (the queue is walked each time).
            if self.zero_copy && self.inner.position() >= self.next_hold {
                let floor = self.floor();
                self.inner.hold_from(floor);
                self.next_hold = self.inner.position() + crate::reader::RELEASE_STEP / 4;
            }
            let Some(rec) = self.inner.next_record()? else {
                self.eof = true;
                self.flush(u64::MAX);
                return Ok(());
            };
            let raw = rec.raw;
            // perf does not queue records with time 0 or all ones (as
            // synthesized records have) but delivers them at once.
            let time = if raw.type_ >= PERF_RECORD_HEADER_ATTR {
                None
            } else {
                rec.time().filter(|&t| t != 0 && t != u64::MAX)
            };
            let entry = Entry {
                time: time.unwrap_or(0),
                seq: self.seq,
                rec: KeptRecord::keep(&raw, self.zero_copy, &mut self.arena),
            };
            self.seq += 1;
            match (raw.type_, time) {
                (PERF_RECORD_FINISHED_ROUND, _) => {
                    // perf processes the round marker itself before the
                    // records it releases.
                    self.ready.push(entry);
                    let limit = self.next_flush;
                    self.flush(limit);
                    self.next_flush = self.max_time;
                }
                (_, None) => self.ready.push(entry),
                (_, Some(t)) => {
                    if t < self.last_flush {
                        self.out_of_order += 1;
                    }
                    self.max_time = self.max_time.max(t);
                    if entry.rec.in_input {
                        self.queued_input += entry.rec.len();
                    } else {
                        self.queued += entry.rec.len();
                    }
                    self.queue.push(entry);
                    if self.arena.len() + self.queued_input > self.limit {
                        self.flush_half();
                    }
                }
            }
        }
        Ok(())
    }

    fn flush(&mut self, limit: u64) {
        if self.queue.is_empty() {
            return;
        }
        self.queue.sort_by_key(|e| (e.time, e.seq));
        let n = self.queue.partition_point(|e| e.time <= limit);
        if n == 0 {
            return;
        }
        self.last_flush = self.last_flush.max(self.queue[n - 1].time);
        let start = self.ready.len();
        self.ready.extend(self.queue.drain(..n));
        for e in &self.ready[start..] {
            if e.rec.in_input {
                self.queued_input -= e.rec.len();
            } else {
                self.queued -= e.rec.len();
            }
        }
    }

    fn flush_half(&mut self) {
        let (lo, hi) = self.queue.iter().fold((u64::MAX, 0), |(lo, hi), e| {
            (lo.min(e.time), hi.max(e.time))
        });
        if lo <= hi {
            self.flush(lo + (hi - lo) / 2);
        }
    }

    /// Drops arena bytes no longer referenced once ready records are consumed.
    fn compact(&mut self) {
        if self.queued == 0 {
            self.arena.clear();
            return;
        }
        // Move the live queue down only when at least half the arena is
        // dead, so each byte is moved O(1) times on average; moving on every
        // call copied the whole queue once per untimed record handed out.
        // In place, in the order the records lie (each moves to a lower
        // address), so the arena keeps its capacity: about twice the
        // largest queue (a round: well under 1 MiB here) rather than
        // growing by doubling past a fixed threshold.
        let live = self.queued;
        if self.arena.len() < COMPACT_MIN || self.arena.len() - live < live {
            return;
        }
        let mut by_start = std::mem::take(&mut self.by_start);
        by_start.clear();
        by_start
            .extend((0..self.queue.len() as u32).filter(|&i| !self.queue[i as usize].rec.in_input));
        by_start.sort_unstable_by_key(|&i| self.queue[i as usize].rec.start);
        let mut to = 0;
        for &i in &by_start {
            let r = &mut self.queue[i as usize].rec;
            self.arena.copy_within(r.start..r.start + r.len(), to);
            r.start = to;
            to += r.len();
        }
        self.arena.truncate(to);
        self.by_start = by_start;
    }
}
