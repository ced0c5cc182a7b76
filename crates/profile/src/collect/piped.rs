//! Interning on a second thread: while a file is replayed, the thread that
//! keeps the session model locates (and unwinds) each new stack, and this
//! one interns its locations and stack and keeps its sum. A recorded chain
//! seen before is still summed where it is met, by its hash, without
//! coming here.
//!
//! The result is the one [`Collector::add`] gives alone, id for id: the
//! items come in sample order, so locations, stack nodes and sums are made
//! in the same order. A sum of a recorded chain is counted by the
//! replaying thread under a slot number; the item that made it tells this
//! thread where its key went, and [`Collector::join_interning`] puts the
//! two together.

use std::sync::mpsc;
use std::thread::JoinHandle;

use rustc_hash::FxHashMap as HashMap;

use super::{
    intern_sample, key_hash, Collector, Interner, Loc, SampleKey, SampleSum, StackPath, SumIndex,
    ZERO_SUM,
};
use crate::machine::Dso;
use crate::symbolize::{Background, Feeder};

/// One sample for the interning thread: its key without its leaf and
/// stack, which are interned here from `leaf` and the batch's frames.
struct Item {
    key: SampleKey,
    leaf: Loc,
    /// How many of the batch's frames are this sample's (leaf first).
    frames: u32,
    /// The replaying thread keeps this sum (it made a slot for it); else
    /// it is summed here by its key, with `period`.
    slotted: bool,
    period: u64,
}

/// Samples handed over at once, with the DSOs the model made since the
/// last batch (for the early symbolizer).
#[derive(Default)]
pub(super) struct Batch {
    items: Vec<Item>,
    frames: Vec<Loc>,
    dsos: Vec<Dso>,
}

/// Batches that may wait for the interning thread, and the frames past
/// which a batch goes before its replay batch ends (new stacks come in
/// bursts; a batch of them is 32 bytes a frame).
const BATCHES: usize = 2;
const BATCH_FRAMES: usize = 1 << 13;

/// What the interning thread owns while it runs.
struct Interning {
    interner: Interner,
    paths: HashMap<u32, StackPath>,
    sums: Vec<(SampleKey, SampleSum)>,
    /// The sums this thread keeps (of samples without a slot), and where
    /// each is in `sums`, by its number.
    sum_ids: SumIndex,
    sum_at: Vec<u32>,
    /// Per slot of the replaying thread: the index of its sum in `sums`.
    slots: Vec<u32>,
    /// Pass two's early thread, fed the locations as they are interned.
    early: Feeder,
    dsos: Vec<Dso>,
}

/// The replaying thread's end of the pipe.
pub(super) struct Pipe {
    batch: Batch,
    tx: mpsc::SyncSender<Batch>,
    back: mpsc::Receiver<Batch>,
    worker: JoinHandle<Option<Interning>>,
    sent_dsos: usize,
    /// Slots given so far.
    pub(super) slots: u32,
}

impl Interning {
    fn take(&mut self, b: &mut Batch) {
        let mut at = 0usize;
        for item in b.items.drain(..) {
            let end = at + item.frames as usize;
            let frames = &b.frames[at..end];
            at = end;
            let mut key = item.key;
            (key.leaf, key.stack) = intern_sample(
                &mut self.interner,
                &mut self.paths,
                key.thread,
                frames,
                item.leaf,
            );
            if item.slotted {
                self.slots.push(self.sums.len() as u32);
                self.sums.push((key, ZERO_SUM));
            } else {
                let (e, _, new) = self.sum_ids.entry(key_hash(&key));
                e.add(item.period);
                if new {
                    self.sum_at.push(self.sums.len() as u32);
                    self.sums.push((key, ZERO_SUM));
                }
            }
        }
        b.frames.clear();
        self.dsos.append(&mut b.dsos);
        self.early.feed(self.interner.locs(), &self.dsos);
    }
}

impl Collector {
    /// Interns stacks on a thread of its own from here on (a collector
    /// that has summed nothing yet and is not in branch mode), which
    /// feeds `early` the locations; whether it does.
    pub fn start_interning(&mut self, early: &mut Background) -> bool {
        if self.pipe.is_some()
            || self.opts.branches
            || self.opts.branch_history
            || self.opts.mem
            || !self.sums.is_empty()
        {
            return false;
        }
        let (init_tx, init_rx) = mpsc::channel::<Interning>();
        let (tx, rx) = mpsc::sync_channel::<Batch>(BATCHES);
        let (back_tx, back) = mpsc::channel::<Batch>();
        let spawned = std::thread::Builder::new()
            .name("sear-intern".into())
            .spawn(move || {
                let mut state = init_rx.recv().ok()?;
                for mut b in rx {
                    state.take(&mut b);
                    let _ = back_tx.send(b);
                }
                Some(state)
            });
        let worker = match spawned {
            Ok(w) => w,
            Err(e) => {
                log::debug!("no interning thread: {e}");
                return false;
            }
        };
        let state = Interning {
            interner: std::mem::take(&mut self.interner),
            paths: std::mem::take(&mut self.paths),
            sums: Vec::new(),
            sum_ids: SumIndex::default(),
            sum_at: Vec::new(),
            slots: Vec::new(),
            early: early.feeder(),
            dsos: Vec::new(),
        };
        if let Err(mpsc::SendError(state)) = init_tx.send(state) {
            // Cannot happen (the thread waits for it), but nothing is lost.
            self.interner = state.interner;
            self.paths = state.paths;
            early.take_feeder_back(state.early);
            return false;
        }
        self.pipe = Some(Pipe {
            batch: Batch::default(),
            tx,
            back,
            worker,
            sent_dsos: 0,
            slots: 0,
        });
        true
    }

    /// Whether stacks are interned on another thread.
    pub fn interning_apart(&self) -> bool {
        self.pipe.is_some()
    }

    /// Queues one sample for the interning thread; whether the batch is
    /// full (to be sent now).
    pub(super) fn pipe_item(&mut self, key: SampleKey, leaf: Loc, slot: bool, period: u64) -> bool {
        let Some(pipe) = &mut self.pipe else {
            return false;
        };
        pipe.batch.frames.extend_from_slice(&self.buf);
        pipe.batch.items.push(Item {
            key,
            leaf,
            frames: self.buf.len() as u32,
            slotted: slot,
            period,
        });
        if slot {
            pipe.slots += 1;
        }
        pipe.batch.frames.len() >= BATCH_FRAMES
    }

    /// Hands the samples queued so far to the interning thread, with the
    /// DSOs `dsos` holds beyond those handed before.
    pub fn send_interning(&mut self, dsos: &[Dso]) {
        let Some(pipe) = &mut self.pipe else {
            return;
        };
        if pipe.batch.items.is_empty() && dsos.len() <= pipe.sent_dsos {
            return;
        }
        pipe.batch
            .dsos
            .extend_from_slice(&dsos[pipe.sent_dsos.min(dsos.len())..]);
        pipe.sent_dsos = dsos.len();
        let fresh = pipe.back.try_recv().unwrap_or_default();
        let full = std::mem::replace(&mut pipe.batch, fresh);
        if pipe.tx.send(full).is_err() {
            // The thread is gone (it panicked): joining says so.
            log::debug!("interning thread gone");
        }
    }

    /// Ends interning apart: the thread's interner and sums come back,
    /// with the replaying thread's sums put in their places; the early
    /// symbolizer's feeder ends there.
    pub fn join_interning(&mut self, dsos: &[Dso]) {
        self.send_interning(dsos);
        let Some(pipe) = self.pipe.take() else {
            return;
        };
        drop(pipe.tx);
        let state = match pipe.worker.join() {
            Ok(s) => s,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        // None: the thread was never given its state, which stayed here.
        let Some(state) = state else {
            return;
        };
        let Interning {
            interner,
            paths,
            mut sums,
            sum_ids,
            sum_at,
            slots,
            early,
            ..
        } = state;
        // The early symbolizer's loop ends when its feeders are gone.
        drop(early);
        for (n, sum) in sum_ids.sums() {
            if let Some(e) = sum_at
                .get(n as usize)
                .and_then(|&i| sums.get_mut(i as usize))
            {
                e.1 = sum;
            }
        }
        for (slot, sum) in std::mem::take(&mut self.sum_ids).sums() {
            if let Some(e) = slots
                .get(slot as usize)
                .and_then(|&i| sums.get_mut(i as usize))
            {
                e.1 = sum;
            }
        }
        self.interner = interner;
        self.paths = paths;
        self.sums = sums;
    }
}
