//! Pass two of a report: each unique location gets its symbol and, where
//! perf expands them, its inline frames. Binaries are opened once, their
//! lookups run in parallel (one task per DSO), and every result is interned
//! so later passes compare symbols by id.

use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use rayon::prelude::*;
use symbols::{Binary, DebugFinder, Reason};

use crate::collect::{Loc, Origin, NO_DSO};
use crate::machine::Dso;

mod answer;
mod background;
mod incremental;
pub(crate) use answer::open_dso;
use answer::*;
pub use answer::{instruction_bytes, open_binary};
pub use background::{Background, Feeder};
pub use incremental::Incremental;
mod kernel;
pub use kernel::KernelPrefetch;

/// How names are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NameStyle {
    /// Full demangled names with parameter lists, as `c++filt` prints them.
    #[default]
    Full,
    /// perf 6.1's form: no parameter lists or return types.
    Short,
    /// As stored in the binary (mangled).
    Raw,
}

impl NameStyle {
    /// `raw` (a symbol's name as the binary stores it) in this style.
    pub fn apply(self, raw: &str) -> String {
        match self {
            NameStyle::Full => {
                let d = symbols::demangle(raw);
                // A name the full demangler cannot read still gets its
                // readable part rather than staying mangled.
                if d == raw && raw.starts_with("_Z") {
                    symbols::demangle_short(raw)
                } else {
                    d
                }
            }
            NameStyle::Short => symbols::demangle_short(raw),
            NameStyle::Raw => raw.to_owned(),
        }
    }
}

/// A function symbol, or the fake symbol perf makes for an inlined call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymInfo {
    pub name: String,
    pub dso: u32,
    /// The symbol's range in the DSO's terms (for an inlined frame, the
    /// range of the function it was inlined into, as perf keeps it).
    pub start: u64,
    pub end: u64,
    /// The size perf gives the symbol (`end - start` in perf's terms: the
    /// ELF size, or up to the next symbol for kallsyms).
    pub size: u64,
    pub inlined: bool,
    /// A data object (`STT_OBJECT`; see [`symbols::Symbol::object`]).
    pub object: bool,
}

/// What one location resolved to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocSyms {
    /// The symbol covering the address (perf's `al->sym`).
    pub sym: Option<u32>,
    /// The callchain frames this location becomes, innermost first: the
    /// inline frames and the function (when perf expands inlines and the
    /// DWARF has them), else just `sym`. Empty when `sym` is None.
    pub frames: Vec<u32>,
    /// With [`SymbolizeOptions::srclines`]: the source position of the
    /// address (its innermost inline frame, as `addr2line -i` lists first),
    /// where the binary's line table or symbol table covers it. None where
    /// perf's addr2line gets no answer: no file (the kernel, JIT maps, the
    /// vdso, which perf never hands to addr2line) or nothing covers it.
    pub line: Option<SrcPos>,
    /// With [`SymbolizeOptions::srclines`], for a location whose `frames`
    /// come from addr2line's inline records (perf 6.1 expands DWARF-unwound
    /// frames with a symbol): each frame's own position, parallel to
    /// `frames` (the innermost the address's line, the others their call
    /// sites; `??:0` for a symbol without lines). perf script prints these
    /// instead of the location's `line`. Empty otherwise.
    pub frame_lines: Vec<SrcPos>,
    /// The recorded address (`rel`) in the binary's own address space (its
    /// ELF virtual address: perf's `map__rip_2objdump`), where the binary
    /// was read; perf names an address without a source line by it.
    pub svma: Option<u64>,
    /// How far the location's recorded address (its `rel`, or `ip` for
    /// kernel and JIT symbols) is into `sym`.
    pub sym_offset: u64,
}

/// A source position as perf's srcline shows it: the file's base name (an
/// id into [`SymbolTable::files`], `??` where DWARF names none) and the line (0
/// where unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SrcPos {
    pub file: u32,
    pub line: u32,
}

/// Options of pass two.
#[derive(Debug, Clone, Default)]
pub struct SymbolizeOptions {
    pub names: NameStyle,
    /// Expand inline frames (perf's default; `--no-inline` turns it off).
    pub inline: bool,
    pub finder: DebugFinder,
    /// Look up each location's source line too (for the srcline and
    /// srcfile sort keys).
    pub srclines: bool,
}

/// Interned symbols and the result per location (by loc id).
#[derive(Debug, Default)]
pub struct SymbolTable {
    pub syms: Vec<SymInfo>,
    /// Real symbols by (dso, start); inlined ones by the (dso, start) of
    /// the function they were inlined into, then by name.
    ids: HashMap<(u32, u64), u32>,
    inlined_ids: HashMap<(u32, u64, u64), Vec<u32>>,
    pub per_loc: Vec<LocSyms>,
    /// Source file base names ([`SrcPos::file`]).
    pub files: Vec<String>,
    /// The same files' paths as DWARF gives them (joined with the
    /// compilation directory), for reading their text.
    pub paths: Vec<String>,
    file_ids: HashMap<String, u32>,
    /// The start and end of the kernel image's symbols, to which perf fits
    /// the kernel map (its size is what perf's dso_size shows).
    pub kernel_extent: Option<(u64, u64)>,
    /// DSOs that could not be symbolized, with why (one warning each).
    pub misses: Vec<(String, Reason)>,
    /// Kernel locations no map held that the kernel's symbols cover: the
    /// kernel DSO and the locations, to move into it (see
    /// [`crate::collect::Interner::move_into`]).
    pub into_kernel: Option<(u32, Vec<u32>)>,
}

static FULL_SOURCE_PATH: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// perf's `--full-source-path`: source files are shown by their whole path
/// (as binutils names them), not their base name, from now on in this
/// process.
pub fn set_full_source_path(on: bool) {
    FULL_SOURCE_PATH.store(on, std::sync::atomic::Ordering::Relaxed);
}

impl SymbolTable {
    /// Interns a source file by its path; [`SymbolTable::files`] gets its base
    /// name (what perf's srcline shows), or the whole path with
    /// [`set_full_source_path`].
    fn intern_file(&mut self, path: String) -> u32 {
        if let Some(&i) = self.file_ids.get(&path) {
            return i;
        }
        let i = self.files.len() as u32;
        let base = if FULL_SOURCE_PATH.load(std::sync::atomic::Ordering::Relaxed) {
            &path
        } else {
            path.rsplit('/').next().unwrap_or(&path)
        };
        self.files.push(base.to_owned());
        self.paths.push(path.clone());
        self.file_ids.insert(path, i);
        i
    }

    /// Adds the answers of `more` (a table of the locations after this
    /// one's, as [`Incremental`] looks them up), its symbols and files
    /// interned into this table's.
    pub fn append(&mut self, more: SymbolTable) {
        let sym_ids: Vec<u32> = more.syms.into_iter().map(|s| self.intern(s)).collect();
        let file_ids: Vec<u32> = more
            .paths
            .into_iter()
            .map(|p| self.intern_file(p))
            .collect();
        let sym = |i: u32| sym_ids.get(i as usize).copied().unwrap_or(i);
        let pos = |p: SrcPos| SrcPos {
            file: file_ids.get(p.file as usize).copied().unwrap_or(p.file),
            line: p.line,
        };
        for mut l in more.per_loc {
            l.sym = l.sym.map(sym);
            for f in &mut l.frames {
                *f = sym(*f);
            }
            l.line = l.line.map(pos);
            for p in &mut l.frame_lines {
                *p = pos(*p);
            }
            self.per_loc.push(l);
        }
        if self.kernel_extent.is_none() {
            self.kernel_extent = more.kernel_extent;
        }
        for m in more.misses {
            if !self.misses.iter().any(|x| x.0 == m.0) {
                self.misses.push(m);
            }
        }
    }

    fn intern(&mut self, s: SymInfo) -> u32 {
        // perf tells real symbols apart by (dso, start) and inlined ones by
        // name within the function they were inlined into.
        let next = self.syms.len() as u32;
        let key = (s.dso, s.start);
        if s.inlined {
            // By the name's hash: no name is copied to look one up.
            let h = {
                use std::hash::{BuildHasher, BuildHasherDefault};
                BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(s.name.as_str())
            };
            let same = self.inlined_ids.entry((s.dso, s.start, h)).or_default();
            if let Some(&i) = same.iter().find(|&&i| self.syms[i as usize].name == s.name) {
                return i;
            }
            same.push(next);
        } else {
            match self.ids.entry(key) {
                std::collections::hash_map::Entry::Occupied(e) => return *e.get(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(next);
                }
            }
        }
        self.syms.push(s);
        next
    }
}

/// A location's real symbol and its callchain frames (empty: just the symbol).
type Found = Option<(RawFrame, Vec<RawFrame>)>;

/// One location's answer: its symbol and frames, and its source position
/// (file path and line).
#[derive(Clone)]
struct LocAnswer {
    loc: u32,
    found: Found,
    line: Option<(String, u32)>,
    /// Per frame of `found`, its position ([`LocSyms::frame_lines`]).
    frame_lines: Vec<(String, u32)>,
    /// How far the looked-up address is into the symbol found.
    offset: u64,
    svma: Option<u64>,
    /// `NONE`, or the location (of the same list of answers, before this
    /// one) whose answer this location shares: the same file address
    /// reached the same way, in another process. Such an answer holds
    /// nothing else, and is interned once.
    same: u32,
}

impl LocAnswer {
    fn plain(loc: u32, found: Found) -> Self {
        LocAnswer {
            loc,
            found,
            line: None,
            frame_lines: Vec::new(),
            offset: 0,
            svma: None,
            same: NONE,
        }
    }

    /// Location `loc` answered as `first` is.
    fn same_as(loc: u32, first: u32) -> Self {
        LocAnswer {
            same: first,
            ..LocAnswer::plain(loc, None)
        }
    }
}

/// No location / no answer.
pub(crate) const NONE: u32 = u32::MAX;

/// A DSO's answers per location, and why it could not be read, if so.
type DsoAnswer = (Vec<LocAnswer>, Option<(String, Reason)>);

/// Every location of a DSO that could not be read stays unresolved.
fn unreadable(d: &Dso, ids: &[u32], r: Reason) -> DsoAnswer {
    (
        ids.iter().map(|&i| LocAnswer::plain(i, None)).collect(),
        Some((d.name.clone(), r)),
    )
}

/// A symbol from a table without inline frames (kallsyms, JIT maps): found
/// at `ip`, `offset` bytes into it.
fn plain_symbol(name: &str, ip: u64, offset: u64, size: u64) -> (RawFrame, Vec<RawFrame>) {
    let start = ip.wrapping_sub(offset);
    let real = RawFrame {
        name: name.to_owned(),
        start,
        end: start.wrapping_add(1),
        size,
        inlined: false,
        object: false,
    };
    (real, Vec::new())
}

/// The answer for a symbol of a table without lines, found `offset` bytes in.
fn plain_answer(loc: u32, found: Option<((RawFrame, Vec<RawFrame>), u64)>) -> LocAnswer {
    match found {
        Some((f, offset)) => LocAnswer {
            offset,
            ..LocAnswer::plain(loc, Some(f))
        },
        None => LocAnswer::plain(loc, None),
    }
}

/// How many locations of one binary make it worth reading on all cores.
const SPLIT_MIN_LOCATIONS: usize = 2048;

/// `run` over every job on `workers` threads of the pool, the jobs taken
/// in their order (rayon's iterators split the list in halves instead);
/// the results in the jobs' order.
fn in_order<J: Send, R: Send>(jobs: Vec<J>, workers: usize, run: impl Fn(J) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let n = jobs.len();
    let queue: Vec<Mutex<Option<J>>> = jobs.into_iter().map(|j| Mutex::new(Some(j))).collect();
    let done: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(slot) = queue.get(i) else {
            break;
        };
        let job = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(job) = job {
            let r = run(job);
            *done[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        }
    };
    rayon::scope(|s| {
        for _ in 1..workers.min(n) {
            s.spawn(|_| work());
        }
        work();
    });
    done.into_iter()
        .filter_map(|d| d.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// How a job reads its binary: opening it (through the DWARF sections
/// its other readers share, if any) or with a reader pass one left open.
enum With {
    Open(Option<symbols::SharedDwarf>),
    Kept(Box<Reader>),
}

/// The locations of one job: all of its binary's, or the runs it takes
/// of those several readers share (from the start if `true`).
enum Ids {
    All(Vec<u32>),
    Share(Arc<Shares>, bool),
}

/// One reader's answers for the runs it takes of `shares`.
fn answer_share(
    d: &Dso,
    with: With,
    shares: &Shares,
    front: bool,
    locs: &[Loc],
    opts: &SymbolizeOptions,
) -> DsoAnswer {
    let t = std::time::Instant::now();
    let kept = matches!(with, With::Kept(_));
    let opened = match with {
        With::Kept(r) => {
            let Reader { bin, printed, .. } = *r;
            Ok((bin, printed))
        }
        With::Open(shared) => open_shared(d, opts, shared).map(|b| (b, HashMap::default())),
    };
    let mut all = Vec::new();
    let (mut bin, mut printed) = match opened {
        Ok(o) => o,
        Err(r) => {
            while let Some(part) = shares.take(front) {
                all.extend(unreadable(d, part, r).0);
            }
            return (all, Some((d.name.clone(), r)));
        }
    };
    while let Some(part) = shares.take(front) {
        all.extend(answer_dso(&mut bin, &mut printed, d, part, locs, opts));
    }
    log::debug!(
        "symbols: {} locations of {} (kept {kept}, from the {}) in {:?}",
        all.len(),
        d.name,
        if front { "start" } else { "end" },
        t.elapsed()
    );
    (all, None)
}

/// Locations a binary holds in address order, shared by the readers that
/// answer them: the first takes runs from the start, the others from the
/// end.
struct Shares {
    ids: Vec<u32>,
    /// The runs not yet taken: `ids[left..right]`.
    left_right: std::sync::Mutex<(usize, usize)>,
}

impl Shares {
    /// Locations a reader takes at a time.
    const RUN: usize = 256;

    fn new(ids: Vec<u32>) -> Shares {
        let n = ids.len();
        Shares {
            ids,
            left_right: std::sync::Mutex::new((0, n)),
        }
    }

    /// The next run from the start (`front`) or the end, if any is left.
    fn take(&self, front: bool) -> Option<&[u32]> {
        let mut g = self.left_right.lock().unwrap_or_else(|e| e.into_inner());
        let (left, right) = *g;
        if left >= right {
            return None;
        }
        let n = Self::RUN.min(right - left);
        let (a, b) = if front {
            g.0 = left + n;
            (left, left + n)
        } else {
            g.1 = right - n;
            (right - n, right)
        };
        Some(&self.ids[a..b])
    }
}

/// A raw per-location answer from a worker, before interning.
#[derive(Clone)]
struct RawFrame {
    name: String,
    start: u64,
    end: u64,
    size: u64,
    inlined: bool,
    object: bool,
}

/// Resolves every location of `locs` against the DSOs they fall in.
/// `kernel_reloc` is the kernel MMAP record's reference symbol and address
/// ([`crate::machine::Machine::kernel_reloc`]).
pub fn symbolize(
    locs: &[Loc],
    dsos: &[Dso],
    kernel_reloc: Option<(&str, u64)>,
    opts: &SymbolizeOptions,
) -> SymbolTable {
    symbolize_with_kernel(locs, dsos, kernel_reloc, opts, None)
}

/// Pass two of a replay: every location the collector interned
/// symbolized, with the kernel's symbols prefetched by
/// [`crate::session::start`] where pass one kept the kernel's build id the
/// features named. DSOs without symbols are warned about once each.
pub fn pass_two(
    collector: &mut crate::collect::Collector,
    machine: &crate::machine::Machine,
    kernel: KernelPrefetch,
    opts: &SymbolizeOptions,
) -> SymbolTable {
    let preloaded = kernel.take(machine);
    let syms = symbolize_with_kernel(
        collector.interner.locs(),
        machine.dsos(),
        machine.kernel_reloc(),
        opts,
        preloaded,
    );
    syms.warn_misses(machine.dsos());
    if let Some((dso, ids)) = &syms.into_kernel {
        collector.interner.move_into(ids, *dso);
    }
    syms
}

/// [`symbolize`] with the kernel's symbols already loaded (unrelocated) by
/// [`symbols::KernelFinder::load_for_recording`], e.g. on another thread
/// during pass one.
pub fn symbolize_with_kernel(
    locs: &[Loc],
    dsos: &[Dso],
    kernel_reloc: Option<(&str, u64)>,
    opts: &SymbolizeOptions,
    preloaded_kernel: Option<Result<symbols::Kallsyms, Reason>>,
) -> SymbolTable {
    complete(
        locs,
        dsos,
        kernel_reloc,
        opts,
        KernelSyms::Preloaded(preloaded_kernel),
        Prepared::default(),
    )
}

/// What was answered before pass two (see [`background`]): answers by
/// location, the binaries read for them (still open), and the DSOs that
/// could not be read, each with the name and build id it had then.
#[derive(Default)]
pub(crate) struct Prepared {
    /// The answers, one per distinct (DSO, file address, origin) asked.
    answers: Vec<LocAnswer>,
    /// Per location: the index of its answer in `answers`, or `NONE`
    /// (four bytes a location; an answer is 176).
    of: Vec<u32>,
    open: HashMap<u32, Reader>,
    failed: HashMap<u32, (Dso, Reason)>,
}

impl Prepared {
    /// Whether location `i` has an answer.
    fn answered(&self, i: u32) -> bool {
        self.of.get(i as usize).is_some_and(|&k| k != NONE)
    }

    /// Location `i`'s answer is the `k`th.
    fn set(&mut self, i: u32, k: u32) {
        let i = i as usize;
        if self.of.len() <= i {
            self.of.resize(i + 1, NONE);
        }
        self.of[i] = k;
    }

    /// Keeps an answer of [`answer_dso`]'s list (one that shares another's
    /// comes after it).
    fn add(&mut self, a: LocAnswer) {
        if a.same != NONE {
            self.share(a.loc, a.same);
            return;
        }
        let k = self.answers.len() as u32;
        self.set(a.loc, k);
        self.answers.push(a);
    }

    /// Location `i` takes the answer of location `from`, if it has one.
    fn share(&mut self, i: u32, from: u32) {
        if let Some(&k) = self.of.get(from as usize).filter(|&&k| k != NONE) {
            self.set(i, k);
        }
    }
}

/// A binary kept open across lookups, with the DSO it was opened for and
/// its names' printed forms.
pub(crate) struct Reader {
    dso: Dso,
    bin: Binary,
    printed: HashMap<String, String>,
}

/// The same file: name and build id (not whether samples hit it).
fn same_dso(a: &Dso, b: &Dso) -> bool {
    a.name == b.name && a.build_id == b.build_id
}

/// Pass two: answers every location not answered in `prep`, then interns
/// all answers DSO by DSO (biggest first) and location by location, so the
/// symbols' ids do not depend on what was answered early.
/// The kernel's symbols for pass two: loaded (unrelocated) before, or
/// loaded and relocated already and kept by the caller (a live view's,
/// used refresh after refresh).
pub(crate) enum KernelSyms<'k> {
    Preloaded(Option<Result<symbols::Kallsyms, Reason>>),
    Ready(&'k Result<symbols::Kallsyms, Reason>),
}

/// The running kernel's symbols, relocated for a recording of this machine
/// (what [`KernelSyms::Ready`] holds).
pub(crate) fn load_kernel(
    build_id: Option<&[u8]>,
    kernel_reloc: Option<(&str, u64)>,
) -> Result<symbols::Kallsyms, Reason> {
    let reloc = kernel_reloc.map(|(name, addr)| symbols::RefReloc { name, addr });
    symbols::KernelFinder::default()
        .load_for_recording(build_id)
        .and_then(|k| symbols::KernelFinder::relocate_for_recording(k, reloc))
}

/// [`symbolize`] with the kernel's symbols given ready.
pub(crate) fn symbolize_with_ready_kernel(
    locs: &[Loc],
    dsos: &[Dso],
    opts: &SymbolizeOptions,
    kernel: &Result<symbols::Kallsyms, Reason>,
) -> SymbolTable {
    complete(
        locs,
        dsos,
        None,
        opts,
        KernelSyms::Ready(kernel),
        Prepared::default(),
    )
}

fn complete(
    locs: &[Loc],
    dsos: &[Dso],
    kernel_reloc: Option<(&str, u64)>,
    opts: &SymbolizeOptions,
    kernel_syms: KernelSyms<'_>,
    mut prep: Prepared,
) -> SymbolTable {
    let mut by_dso: HashMap<u32, Vec<u32>> = HashMap::default();
    for (i, l) in locs.iter().enumerate() {
        if l.dso != NO_DSO {
            by_dso.entry(l.dso).or_default().push(i as u32);
        }
    }
    // Answers given for a DSO whose identity changed since (a build id
    // learnt later) are asked again.
    for (&d, ids) in &by_dso {
        let stale = prep
            .open
            .get(&d)
            .is_some_and(|r| !same_dso(&r.dso, &dsos[d as usize]))
            || prep
                .failed
                .get(&d)
                .is_some_and(|(was, _)| !same_dso(was, &dsos[d as usize]));
        if stale {
            prep.open.remove(&d);
            prep.failed.remove(&d);
            for &i in ids {
                if let Some(k) = prep.of.get_mut(i as usize) {
                    *k = NONE;
                }
            }
        }
    }
    // A location whose file address and origin another one answered
    // early had (the same code in another process) takes that answer.
    if !prep.answers.is_empty() {
        for ids in by_dso.values() {
            let mut first: HashMap<(u64, crate::collect::Origin), u32> = HashMap::default();
            for &i in ids.iter().filter(|&&i| prep.answered(i)) {
                let l = &locs[i as usize];
                first.entry(l.answer_key()).or_insert(i);
            }
            if first.is_empty() {
                continue;
            }
            for &i in ids {
                if prep.answered(i) {
                    continue;
                }
                if let Some(&from) = first.get(&locs[i as usize].answer_key()) {
                    prep.share(i, from);
                }
            }
        }
    }
    // The kernel's symbols serve the kernel and its modules: load them once.
    let any_kernel = by_dso
        .keys()
        .any(|&d| is_kernel_dso(&dsos[d as usize].name));
    let owned;
    let kernel: &Result<symbols::Kallsyms, Reason> = match kernel_syms {
        KernelSyms::Ready(k) => k,
        KernelSyms::Preloaded(preloaded_kernel) => {
            owned = if any_kernel {
                let id = dsos
                    .iter()
                    .find(|d| d.name == "[kernel.kallsyms]")
                    .and_then(|d| d.build_id.as_deref());
                let reloc = kernel_reloc.map(|(name, addr)| symbols::RefReloc { name, addr });
                let finder = symbols::KernelFinder::default();
                preloaded_kernel
                    .unwrap_or_else(|| finder.load_for_recording(id))
                    .and_then(|k| symbols::KernelFinder::relocate_for_recording(k, reloc))
            } else {
                Err(Reason::NoSuchFile)
            };
            &owned
        }
    };
    // perf fits the kernel map to the kernel's symbols once it has loaded
    // them: kernel addresses past the end the MMAP record gave (its init
    // text: `start_kernel` under every idle stack of CPU 0) fall in it.
    let mut into_kernel = Vec::new();
    let kernel_dso = dsos.iter().position(|d| d.name == "[kernel.kallsyms]");
    if let (Ok(k), Some(kd)) = (kernel, kernel_dso) {
        if let Some((start, end)) = k.kernel_extent() {
            into_kernel = locs
                .iter()
                .enumerate()
                .filter(|(_, l)| l.dso == NO_DSO && l.level == b'k' && start <= l.ip && l.ip < end)
                .map(|(i, _)| i as u32)
                .collect();
            if !into_kernel.is_empty() {
                let ids = by_dso.entry(kd as u32).or_default();
                ids.extend(&into_kernel);
                ids.sort_unstable();
            }
        }
    }
    let mut groups: Vec<(u32, Vec<u32>)> = by_dso.into_iter().collect();
    // Big groups first so the workers finish together.
    groups.sort_by_key(|(d, v)| (std::cmp::Reverse(v.len()), *d));
    // Reading DWARF (inline frames, source lines) dominates where one
    // binary has most of the locations, as a big program's does: one
    // reader per core, each with its own view of the binary (so each
    // parses mostly its own compile units), takes runs of the locations in
    // address order, the first reader from the lowest address up and the
    // others from the highest down, until they meet. A reader that pass
    // one left open (its units parsed) goes faster than one that opens
    // the binary now, and both finish together. Answers are put back by
    // location, so what comes out does not depend on the cores.
    let cores = rayon::current_num_threads();
    let dwarf_work = |ids: &[u32]| {
        if opts.srclines {
            ids.len()
        } else if opts.inline {
            ids.iter()
                .filter(|&&i| locs[i as usize].expands_inlines())
                .count()
        } else {
            0
        }
    };
    let mut jobs: Vec<(u32, Ids, With)> = Vec::new();
    let mut helpers = Vec::new();
    let mut misses: Vec<(String, Reason)> = Vec::new();
    for (dso, ids) in &groups {
        let todo: Vec<u32> = ids.iter().copied().filter(|&i| !prep.answered(i)).collect();
        if let Some((_, r)) = prep.failed.remove(dso) {
            misses.push((dsos[*dso as usize].name.clone(), r));
            continue;
        }
        if todo.is_empty() {
            continue;
        }
        let kept = prep.open.remove(dso);
        let d = &dsos[*dso as usize];
        let split = cores > 1
            && !is_kernel_dso(&d.name)
            && !is_jit_map(&d.name)
            && d.jit.is_none()
            && dwarf_work(&todo) >= SPLIT_MIN_LOCATIONS;
        if !split {
            let with = match kept {
                Some(r) => With::Kept(Box::new(r)),
                None => With::Open(None),
            };
            jobs.push((*dso, Ids::All(todo), with));
            continue;
        }
        // The readers read the binary's DWARF sections once, together (a
        // binary read during pass one goes on as the first reader).
        let shared = kept
            .as_ref()
            .and_then(|r| r.bin.shared_dwarf())
            .unwrap_or_default();
        let mut kept = kept.map(Box::new);
        let mut by_addr = todo;
        by_addr.sort_by_key(|&i| (locs[i as usize].lookup_rel(), i));
        let shares = Arc::new(Shares::new(by_addr));
        for reader in 0..cores {
            let with = match kept.take() {
                Some(r) => With::Kept(r),
                None => With::Open(Some(shared.clone())),
            };
            let job = (*dso, Ids::Share(shares.clone(), reader == 0), with);
            match reader {
                0 => jobs.push(job),
                _ => helpers.push(job),
            }
        }
    }
    // The jobs are taken in this order: a shared binary's first reader and
    // the binaries read alone, the biggest first, then the shared binaries'
    // other readers, which take what is left of them when the cores are
    // free of the rest.
    jobs.append(&mut helpers);
    let t0 = std::time::Instant::now();
    let njobs = jobs.len();
    let run = |(dso, ids, with): (u32, Ids, With)| -> DsoAnswer {
        let d = &dsos[dso as usize];
        let t = std::time::Instant::now();
        let kept = matches!(with, With::Kept(_));
        let r = match (with, ids) {
            (_, Ids::All(ids)) if is_kernel_dso(&d.name) => symbolize_kernel(d, &ids, locs, kernel),
            (With::Open(shared), Ids::All(ids)) => symbolize_dso(d, &ids, locs, opts, shared),
            (With::Kept(mut r), Ids::All(ids)) => {
                let Reader { bin, printed, .. } = &mut *r;
                (answer_dso(bin, printed, d, &ids, locs, opts), None)
            }
            (with, Ids::Share(shares, front)) => {
                return answer_share(d, with, &shares, front, locs, opts);
            }
        };
        log::debug!(
            "symbols: {} locations of {} (kept {kept}) in {:?}",
            r.0.len(),
            d.name,
            t.elapsed()
        );
        r
    };
    let pieces = in_order(jobs, cores, run);
    // Every answer stays in its list (the early ones', then each job's),
    // found through an index of eight bytes a location; a location whose
    // answer another has (the same code in another process) is pointed at
    // that answer, and takes the symbols it was interned as.
    let mut at: Vec<(u32, u32)> = vec![(NONE, 0); locs.len()];
    let mut answered: Vec<Vec<Option<LocAnswer>>> = Vec::new();
    if !prep.answers.is_empty() {
        for (i, &k) in prep.of.iter().enumerate().take(locs.len()) {
            if k != NONE {
                at[i] = (0, k);
            }
        }
        answered.push(
            std::mem::take(&mut prep.answers)
                .into_iter()
                .map(Some)
                .collect(),
        );
    }
    for (res, miss) in pieces {
        // Each piece of an unreadable binary says so: once is enough.
        if let Some(m) = miss.filter(|m| !misses.contains(m)) {
            misses.push(m);
        }
        let p = answered.len() as u32;
        let mut list = Vec::with_capacity(res.len());
        for a in res {
            let i = a.loc as usize;
            if i >= at.len() {
                continue;
            }
            // (`same` is NONE, no location, or one answered before.)
            at[i] = match at.get(a.same as usize) {
                Some(&shared) => shared,
                None => {
                    list.push(Some(a));
                    (p, list.len() as u32 - 1)
                }
            };
        }
        answered.push(list);
    }
    log::debug!("symbols: {njobs} lookup jobs in {:?}", t0.elapsed());
    let mut out = SymbolTable {
        per_loc: vec![LocSyms::default(); locs.len()],
        kernel_extent: kernel.as_ref().ok().and_then(|k| k.kernel_extent()),
        into_kernel: kernel_dso.map(|d| (d as u32, into_kernel)),
        misses,
        ..Default::default()
    };
    // Per answer, the location it was interned for.
    let mut done: Vec<Vec<u32>> = answered.iter().map(|l| vec![NONE; l.len()]).collect();
    for (dso, ids) in groups {
        for i in ids {
            let Some(&(p, k)) = at.get(i as usize) else {
                continue;
            };
            let Some(d) = done.get_mut(p as usize).and_then(|d| d.get_mut(k as usize)) else {
                continue;
            };
            if *d != NONE {
                out.per_loc[i as usize] = out.per_loc[*d as usize].clone();
                continue;
            }
            let Some(mut a) = answered[p as usize][k as usize].take() else {
                continue;
            };
            *d = i;
            a.loc = i;
            out.add_answer(dso, &locs[i as usize], a);
        }
    }
    out.misses.sort_by(|a, b| a.0.cmp(&b.0));
    log::debug!("symbols: answers interned after {:?}", t0.elapsed());
    out
}

impl SymbolTable {
    /// One warning per DSO a sample's code fell in that could not be
    /// symbolized (not for one only a data address or a branch's end
    /// reached: heap, stack, a data file, which perf does not read either).
    pub(crate) fn warn_misses(&self, dsos: &[crate::machine::Dso]) {
        for (dso, reason) in &self.misses {
            if dsos.iter().any(|d| d.hit && &d.name == dso) {
                log::warn!("{dso}: no symbols ({reason})");
            }
        }
    }

    /// Interns one location's answer.
    fn add_answer(&mut self, dso: u32, l: &Loc, a: LocAnswer) {
        let line = a.line.map(|(file, line)| SrcPos {
            file: self.intern_file(file),
            line,
        });
        let frame_lines: Vec<SrcPos> = a
            .frame_lines
            .into_iter()
            .map(|(file, line)| SrcPos {
                file: self.intern_file(file),
                line,
            })
            .collect();
        let Some((real, frames)) = a.found else {
            let ls = &mut self.per_loc[a.loc as usize];
            ls.line = line;
            ls.svma = a.svma;
            return;
        };
        let mut mk = |f: RawFrame| {
            self.intern(SymInfo {
                name: f.name,
                dso,
                start: f.start,
                end: f.end,
                size: f.size,
                inlined: f.inlined,
                object: f.object,
            })
        };
        let sym = mk(real);
        let mut ids: Vec<u32> = frames.into_iter().map(&mut mk).collect();
        if ids.is_empty() {
            ids.push(sym);
        }
        // The lookup was at `address - 1` for a return address.
        let back = l.rel.wrapping_sub(l.lookup_rel());
        self.per_loc[a.loc as usize] = LocSyms {
            sym: Some(sym),
            // One position per frame, or none.
            frame_lines: if frame_lines.len() == ids.len() {
                frame_lines
            } else {
                Vec::new()
            },
            frames: ids,
            line,
            sym_offset: a.offset.wrapping_add(back),
            svma: a.svma,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Readers taking runs from both ends take every location once, the
    /// first reader from the start and in order.
    #[test]
    fn shares_are_taken_once_from_both_ends() {
        let n = 3 * Shares::RUN + 17;
        let shares = Shares::new((0..n as u32).collect());
        let mut seen = vec![0u8; n];
        let mut front = Vec::new();
        let mut turn = 0;
        loop {
            let first = turn % 3 == 0;
            let Some(run) = shares.take(first) else {
                break;
            };
            if first {
                front.extend_from_slice(run);
            }
            for &i in run {
                seen[i as usize] += 1;
            }
            turn += 1;
        }
        assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
        let expect: Vec<u32> = (0..front.len() as u32).collect();
        assert_eq!(front, expect);
        assert!(shares.take(true).is_none() && shares.take(false).is_none());
    }

    /// Jobs run on several threads come back in the jobs' order.
    #[test]
    fn jobs_in_order_give_results_in_order() {
        let jobs: Vec<u64> = (0..200).collect();
        let out = in_order(jobs, 4, |j| {
            if j % 7 == 0 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            j * 3
        });
        assert_eq!(out, (0..200).map(|j| j * 3).collect::<Vec<_>>());
        assert!(in_order(Vec::<u64>::new(), 4, |j| j).is_empty());
    }
}
