//! Pass two started during pass one: the locations pass one interns are
//! handed, a batch at a time, to a thread that opens their binaries and
//! answers them while the records are still being replayed, so a report
//! that is busy on one core unwinding and summing samples uses the other
//! for its symbols. What that thread has not answered when pass one ends
//! (and every kernel and JIT location, whose tables are read at the end) is
//! answered then, on all cores, by [`Background::finish`]; the result is the
//! same as [`super::symbolize_with_kernel`] gives, whatever was answered
//! early.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use rustc_hash::FxHashMap as HashMap;

use super::{answer_dso, is_jit_map, is_kernel_dso, open_dso, LocAnswer, Prepared, Reader};
use super::{SymbolTable, SymbolizeOptions};
use crate::collect::{Loc, Origin, NO_DSO};
use crate::machine::Dso;

/// Locations of one binary answered between looks at the stop flag.
const PIECE: usize = 256;

/// Locations interned since the last batch that are worth answering early
/// (with their ids), and the DSOs met since.
struct Batch {
    locs: Vec<(u32, Loc)>,
    dsos: Vec<Dso>,
}

/// The thread answering locations during pass one.
pub struct Background {
    opts: SymbolizeOptions,
    feeder: Feeder,
    worker: Option<JoinHandle<Prepared>>,
    /// Set when pass one is over: the thread stops after its batch, and
    /// what it has not read is answered on all cores.
    stop: Arc<AtomicBool>,
}

/// What hands the [`Background`] thread its locations: the background's
/// own, or taken by the thread that interns them ([`Background::feeder`]).
pub struct Feeder {
    srclines: bool,
    tx: Option<mpsc::Sender<Batch>>,
    sent_locs: usize,
    sent_dsos: usize,
}

/// Binaries worth opening while pass one runs: files (not JIT maps, which
/// a runtime may still be writing) and the vdso. The kernel's table is
/// prefetched apart.
fn early(d: &Dso) -> bool {
    (d.name.starts_with('/') && !is_jit_map(&d.name) && d.jit.is_none()) || d.name == "[vdso]"
}

impl Background {
    /// Starts the thread (or, where none can start, answers everything in
    /// [`Background::finish`]).
    pub fn start(opts: &SymbolizeOptions) -> Background {
        // The pool of pass two starts here, not on the thread below: its
        // threads would inherit that thread's idle priority.
        let _ = rayon::current_num_threads();
        let (tx, rx) = mpsc::channel::<Batch>();
        let stop = Arc::new(AtomicBool::new(false));
        let worker = {
            let opts = opts.clone();
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("sear-symbols".into())
                .spawn(move || {
                    idle_priority();
                    answer_batches(rx, &opts, &stop)
                })
                .ok()
        };
        Background {
            opts: opts.clone(),
            feeder: Feeder {
                srclines: opts.srclines,
                tx: worker.is_some().then_some(tx),
                sent_locs: 0,
                sent_dsos: 0,
            },
            worker,
            stop,
        }
    }

    /// Hands the thread the locations interned since the last call (`locs`
    /// and `dsos` only grow).
    pub fn feed(&mut self, locs: &[Loc], dsos: &[Dso]) {
        self.feeder.feed(locs, dsos);
    }

    /// Feeds the thread itself again with `feeder` (one [`Self::feeder`]
    /// gave).
    pub fn take_feeder_back(&mut self, feeder: Feeder) {
        self.feeder = feeder;
    }

    /// Gives the feeding to the thread that interns the locations: this
    /// background's [`Self::feed`] does nothing from here on.
    pub fn feeder(&mut self) -> Feeder {
        std::mem::replace(
            &mut self.feeder,
            Feeder {
                srclines: self.opts.srclines,
                tx: None,
                sent_locs: 0,
                sent_dsos: 0,
            },
        )
    }
    /// [`Background::finish`] for the locations `collector` interned while
    /// replaying into `machine`, with the kernel's symbols `kernel`
    /// prefetched ([`super::pass_two`] without the early answers).
    pub fn finish_replay(
        self,
        collector: &mut crate::collect::Collector,
        machine: &crate::machine::Machine,
        kernel: super::KernelPrefetch,
    ) -> SymbolTable {
        let preloaded = kernel.take(machine);
        let syms = self.finish(
            collector.interner.locs(),
            machine.dsos(),
            machine.kernel_reloc(),
            preloaded,
        );
        syms.warn_misses(machine.dsos());
        if let Some((dso, ids)) = &syms.into_kernel {
            collector.interner.move_into(ids, *dso);
        }
        syms
    }

    /// Pass two: stops the thread after its current batch and answers the
    /// rest, as [`super::symbolize_with_kernel`] would answer all of it.
    pub fn finish(
        mut self,
        locs: &[Loc],
        dsos: &[Dso],
        kernel_reloc: Option<(&str, u64)>,
        preloaded_kernel: Option<Result<symbols::Kallsyms, symbols::Reason>>,
    ) -> SymbolTable {
        self.stop.store(true, Ordering::Relaxed);
        self.feeder.tx = None;
        let t0 = std::time::Instant::now();
        let prep = self
            .worker
            .take()
            .and_then(|w| w.join().ok())
            .unwrap_or_default();
        log::debug!(
            "symbols: {} of {} locations answered during pass one ({} binaries read); \
             {:?} waiting for the thread",
            prep.of.iter().filter(|&&k| k != super::NONE).count(),
            locs.len(),
            prep.open.len(),
            t0.elapsed()
        );
        super::complete(
            locs,
            dsos,
            kernel_reloc,
            &self.opts,
            super::KernelSyms::Preloaded(preloaded_kernel),
            prep,
        )
    }
}

impl Feeder {
    /// [`Background::feed`].
    pub fn feed(&mut self, locs: &[Loc], dsos: &[Dso]) {
        let Some(tx) = &self.tx else {
            return;
        };
        if locs.len() <= self.sent_locs {
            return;
        }
        // Frame-pointer chains' addresses need the symbol table alone,
        // which pass two reads in no time: they wait, and so does the
        // memory of their binaries.
        let srclines = self.srclines;
        let batch = Batch {
            locs: (self.sent_locs..locs.len())
                .map(|i| (i as u32, locs[i]))
                .filter(|(_, l)| l.dso != NO_DSO && (srclines || l.expands_inlines()))
                .collect(),
            dsos: dsos[self.sent_dsos.min(dsos.len())..].to_vec(),
        };
        self.sent_locs = locs.len();
        self.sent_dsos = dsos.len();
        if tx.send(batch).is_err() {
            self.tx = None;
        }
    }
}

/// The thread's loop: each batch's locations are answered DSO by DSO, each
/// binary opened once, until the batches end or pass one does.
fn answer_batches(
    rx: mpsc::Receiver<Batch>,
    opts: &SymbolizeOptions,
    stop: &AtomicBool,
) -> Prepared {
    let mut prep = Prepared::default();
    let mut dsos: Vec<Dso> = Vec::new();
    let mut by_dso: HashMap<u32, Vec<(u32, Loc)>> = HashMap::default();
    let mut ids: Vec<u32> = Vec::new();
    let mut local: Vec<Loc> = Vec::new();
    // Per DSO and (file address, origin), the first location looked up:
    // the same code in another process takes its answer.
    let mut first: HashMap<(u32, (u64, Origin)), u32> = HashMap::default();
    let mut copies: Vec<(u32, u32)> = Vec::new();
    let mut got: Vec<LocAnswer> = Vec::new();
    for batch in rx {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        dsos.extend(batch.dsos);
        by_dso.clear();
        copies.clear();
        for (id, l) in batch.locs {
            let known = dsos
                .get(l.dso as usize)
                .filter(|d| early(d) && !is_kernel_dso(&d.name));
            if known.is_none() {
                continue;
            }
            match first.entry((l.dso, l.answer_key())) {
                std::collections::hash_map::Entry::Occupied(e) => copies.push((id, *e.get())),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(id);
                    by_dso.entry(l.dso).or_default().push((id, l));
                }
            }
        }
        let mut groups: Vec<(u32, Vec<(u32, Loc)>)> = by_dso.drain().collect();
        groups.sort_unstable_by_key(|g| g.0);
        for (dso, group) in groups {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if prep.failed.contains_key(&dso) {
                continue;
            }
            let d = &dsos[dso as usize];
            let reader = match prep.open.entry(dso) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => match open_dso(d, opts) {
                    Ok(mut bin) => {
                        // Other views may read the rest of it in pass two.
                        bin.share_dwarf(symbols::SharedDwarf::default());
                        e.insert(Reader {
                            dso: d.clone(),
                            bin,
                            printed: HashMap::default(),
                        })
                    }
                    Err(r) => {
                        prep.failed.insert(dso, (d.clone(), r));
                        continue;
                    }
                },
            };
            let Reader { bin, printed, .. } = reader;
            // In pieces, so that the end of pass one is not kept waiting;
            // each piece's locations numbered from 0 for the lookup.
            for piece in group.chunks(PIECE) {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                local.clear();
                local.extend(piece.iter().map(|&(_, l)| l));
                ids.clear();
                ids.extend(0..piece.len() as u32);
                for mut a in answer_dso(bin, printed, d, &ids, &local, opts) {
                    a.loc = piece[a.loc as usize].0;
                    if let Some(&(first, _)) = piece.get(a.same as usize) {
                        a.same = first;
                    }
                    got.push(a);
                }
            }
            for a in got.drain(..) {
                prep.add(a);
            }
        }
        // (What pass one's end stopped before its first answer is
        // answered, with its copies, in pass two.)
        for &(id, from) in &copies {
            prep.share(id, from);
        }
    }
    prep
}

/// Runs the calling thread only when a core would otherwise idle (Linux's
/// SCHED_IDLE), so reading binaries early never slows pass one down.
fn idle_priority() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if r != 0 {
        log::debug!(
            "symbols thread stays at normal priority: {}",
            std::io::Error::last_os_error()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::Origin;

    /// Locations in this test program (its functions, some DWARF-unwound so
    /// their inline frames expand), in an anonymous map and in a missing file.
    fn locations() -> (Vec<Loc>, Vec<Dso>) {
        let exe = std::env::current_exe().unwrap();
        let elf = symbols::ElfFile::open(&exe).unwrap();
        let to_offset = |svma: u64| {
            elf.load_segments()
                .iter()
                .find(|s| svma >= s.svma && svma < s.svma + s.file_size)
                .map(|s| svma - s.svma + s.file_offset)
        };
        let dso = |name: &str| Dso {
            name: name.to_owned(),
            build_id: None,
            hit: true,
            jit: None,
        };
        let dsos = vec![
            dso(&exe.to_string_lossy()),
            dso("//anon"),
            dso("/nonexistent/sear-test-binary"),
        ];
        let mut locs = Vec::new();
        for (i, s) in elf.symbols().iter().step_by(3).take(3000).enumerate() {
            let Some(rel) = to_offset(s.start + s.size / 2) else {
                continue;
            };
            let origin = match i % 3 {
                0 => Origin::Exact,
                1 => Origin::Return,
                _ => Origin::Unwound,
            };
            let loc = |dso: u32| Loc {
                ip: rel + 0x1000,
                rel,
                dso,
                level: b'.',
                origin,
                map_size: 1 << 20,
            };
            locs.push(loc(0));
            if i % 100 == 0 {
                locs.push(loc(1));
                locs.push(loc(2));
            }
        }
        assert!(locs.len() > 500, "only {} locations", locs.len());
        (locs, dsos)
    }

    fn inline_and_lines() -> SymbolizeOptions {
        SymbolizeOptions {
            inline: true,
            srclines: true,
            ..Default::default()
        }
    }

    /// Answering some locations early, in batches, changes nothing: the
    /// symbols, their ids, every location's answer and the misses are
    /// what pass two alone gives.
    #[test]
    fn early_answers_are_the_same_as_pass_two_alone() {
        let (locs, dsos) = locations();
        let opts = inline_and_lines();
        let alone = super::super::symbolize_with_kernel(&locs, &dsos, None, &opts, None);
        assert!(alone.per_loc.iter().filter(|l| l.sym.is_some()).count() > 400);
        assert_eq!(alone.misses.len(), 2, "{:?}", alone.misses);
        for wait in [false, true] {
            let mut bg = Background::start(&opts);
            let third = locs.len() / 3;
            for end in [third, 2 * third, locs.len()] {
                bg.feed(&locs[..end], &dsos);
                if wait {
                    // Let the thread answer this batch before the next.
                    std::thread::sleep(std::time::Duration::from_millis(200));
                }
            }
            let early = bg.finish(&locs, &dsos, None, None);
            assert_eq!(early.syms, alone.syms);
            assert_eq!(early.per_loc, alone.per_loc);
            assert_eq!(early.misses, alone.misses);
            assert_eq!(early.files, alone.files);
        }
    }

    /// A binary's locations read by several readers at once (taking runs
    /// from both ends) are answered as one reader answers them.
    #[test]
    fn shared_readers_answer_as_one_does() {
        let (locs, dsos) = locations();
        let opts = inline_and_lines();
        let with = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| super::super::symbolize_with_kernel(&locs, &dsos, None, &opts, None))
        };
        let one = with(1);
        assert!(one.per_loc.iter().filter(|l| l.sym.is_some()).count() > 400);
        for threads in [2, 3, 5] {
            let many = with(threads);
            assert_eq!(many.syms, one.syms, "{threads} threads");
            assert_eq!(many.per_loc, one.per_loc, "{threads} threads");
            assert_eq!(many.misses, one.misses, "{threads} threads");
            assert_eq!(many.files, one.files, "{threads} threads");
        }
    }
}
