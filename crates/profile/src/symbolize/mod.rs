//! Pass two of a report: each unique location gets its symbol and, where
//! perf expands them, its inline frames. Binaries are opened once, their
//! lookups run in parallel (one task per DSO), and every result is interned
//! so later passes compare symbols by id.

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;

use rayon::prelude::*;
use symbols::{Binary, DebugFinder, Reason, Svma};

use crate::machine::Dso;
use crate::resolve::{Loc, Origin, NO_DSO};

mod background;
pub use background::Background;

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
    fn apply(self, raw: &str) -> String {
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
/// id into [`Symbols::files`], `??` where DWARF names none) and the line (0
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
pub struct Symbols {
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
}

impl Symbols {
    /// Interns a source file by its path; [`Symbols::files`] gets its base
    /// name (what perf's srcline shows).
    fn intern_file(&mut self, path: String) -> u32 {
        if let Some(&i) = self.file_ids.get(&path) {
            return i;
        }
        let i = self.files.len() as u32;
        let base = path.rsplit('/').next().unwrap_or(&path);
        self.files.push(base.to_owned());
        self.paths.push(path.clone());
        self.file_ids.insert(path, i);
        i
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
struct LocAnswer {
    loc: u32,
    found: Found,
    line: Option<(String, u32)>,
    /// Per frame of `found`, its position ([`LocSyms::frame_lines`]).
    frame_lines: Vec<(String, u32)>,
    /// How far the looked-up address is into the symbol found.
    offset: u64,
    svma: Option<u64>,
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
        }
    }
}

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

/// A raw per-location answer from a worker, before interning.
struct RawFrame {
    name: String,
    start: u64,
    end: u64,
    size: u64,
    inlined: bool,
}

/// Resolves every location of `locs` against the DSOs they fall in.
/// `kernel_reloc` is the kernel MMAP record's reference symbol and address
/// ([`crate::machine::Machine::kernel_reloc`]).
pub fn symbolize(
    locs: &[Loc],
    dsos: &[Dso],
    kernel_reloc: Option<(&str, u64)>,
    opts: &SymbolizeOptions,
) -> Symbols {
    symbolize_with_kernel(locs, dsos, kernel_reloc, opts, None)
}

/// Pass two of a replay: every location the collector interned
/// symbolized, with the kernel's symbols prefetched by
/// [`crate::session::start`] where pass one kept the kernel's build id the
/// features named. DSOs without symbols are warned about once each.
pub fn pass_two(
    collector: &crate::resolve::Collector,
    machine: &crate::machine::Machine,
    kernel: crate::session::KernelPrefetch,
    opts: &SymbolizeOptions,
) -> Symbols {
    let preloaded = kernel.take(machine);
    let syms = symbolize_with_kernel(
        collector.interner.locs(),
        machine.dsos(),
        machine.kernel_reloc(),
        opts,
        preloaded,
    );
    syms.warn_misses();
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
) -> Symbols {
    complete(
        locs,
        dsos,
        kernel_reloc,
        opts,
        preloaded_kernel,
        Prepared::default(),
    )
}

/// What was answered before pass two (see [`background`]): answers by
/// location, the binaries read for them (still open), and the DSOs that
/// could not be read, each with the name and build id it had then.
#[derive(Default)]
pub(crate) struct Prepared {
    answers: Vec<Option<LocAnswer>>,
    open: HashMap<u32, Reader>,
    failed: HashMap<u32, (Dso, Reason)>,
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
fn complete(
    locs: &[Loc],
    dsos: &[Dso],
    kernel_reloc: Option<(&str, u64)>,
    opts: &SymbolizeOptions,
    preloaded_kernel: Option<Result<symbols::Kallsyms, Reason>>,
    mut prep: Prepared,
) -> Symbols {
    let mut by_dso: HashMap<u32, Vec<u32>> = HashMap::default();
    for (i, l) in locs.iter().enumerate() {
        if l.dso != NO_DSO {
            by_dso.entry(l.dso).or_default().push(i as u32);
        }
    }
    // Answers given for a DSO whose identity changed since (a build id
    // learnt later) are asked again.
    prep.answers.resize_with(locs.len(), || None);
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
                prep.answers[i as usize] = None;
            }
        }
    }
    // The kernel's symbols serve the kernel and its modules: load them once.
    let any_kernel = by_dso
        .keys()
        .any(|&d| is_kernel_dso(&dsos[d as usize].name));
    let kernel = if any_kernel {
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
    let kernel = &kernel;
    let mut groups: Vec<(u32, Vec<u32>)> = by_dso.into_iter().collect();
    // Big groups first so the workers finish together.
    groups.sort_by_key(|(d, v)| (std::cmp::Reverse(v.len()), *d));
    // Reading DWARF (inline frames, source lines) dominates where one
    // binary has most of the locations, as a big program's does: its
    // locations are cut by address into one piece per core, each piece
    // read with its own view of the binary (so each parses mostly its own
    // compile units), and the pieces' answers are put back in the group's
    // order, so that what comes out does not depend on the cores.
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
    enum With {
        Open(Option<symbols::SharedDwarf>),
        Kept(Box<Reader>),
    }
    let mut jobs: Vec<(u32, Vec<u32>, With)> = Vec::new();
    let mut misses: Vec<(String, Reason)> = Vec::new();
    for (dso, ids) in &groups {
        let todo: Vec<u32> = ids
            .iter()
            .copied()
            .filter(|&i| prep.answers[i as usize].is_none())
            .collect();
        if let Some((_, r)) = prep.failed.remove(dso) {
            misses.push((dsos[*dso as usize].name.clone(), r));
            continue;
        }
        if todo.is_empty() {
            continue;
        }
        let kept = prep.open.remove(dso);
        let split = cores > 1
            && !is_kernel_dso(&dsos[*dso as usize].name)
            && dwarf_work(&todo) >= SPLIT_MIN_LOCATIONS;
        if !split {
            let with = match kept {
                Some(r) => With::Kept(Box::new(r)),
                None => With::Open(None),
            };
            jobs.push((*dso, todo, with));
            continue;
        }
        // The pieces read the binary's DWARF sections once, together (a
        // binary read during pass one goes on as the first piece).
        let shared = kept
            .as_ref()
            .and_then(|r| r.bin.shared_dwarf())
            .unwrap_or_default();
        let mut kept = kept.map(Box::new);
        let mut by_addr = todo;
        by_addr.sort_by_key(|&i| (locs[i as usize].lookup_rel(), i));
        let per = by_addr.len().div_ceil(cores);
        for piece in by_addr.chunks(per) {
            let with = match kept.take() {
                Some(r) => With::Kept(r),
                None => With::Open(Some(shared.clone())),
            };
            jobs.push((*dso, piece.to_vec(), with));
        }
    }
    let t0 = std::time::Instant::now();
    let njobs = jobs.len();
    let pieces: Vec<DsoAnswer> = jobs
        .into_par_iter()
        .with_max_len(1)
        .map(|(dso, ids, with)| {
            let d = &dsos[dso as usize];
            let t = std::time::Instant::now();
            let kept = matches!(with, With::Kept(_));
            let r = match with {
                _ if is_kernel_dso(&d.name) => symbolize_kernel(d, &ids, locs, kernel),
                With::Open(shared) => symbolize_dso(d, &ids, locs, opts, shared),
                With::Kept(mut r) => {
                    let Reader { bin, printed, .. } = &mut *r;
                    (answer_dso(bin, printed, d, &ids, locs, opts), None)
                }
            };
            log::debug!(
                "symbols: {} locations of {} (kept {kept}) in {:?}",
                ids.len(),
                d.name,
                t.elapsed()
            );
            r
        })
        .collect();
    for (res, miss) in pieces {
        // Each piece of an unreadable binary says so: once is enough.
        if let Some(m) = miss.filter(|m| !misses.contains(m)) {
            misses.push(m);
        }
        for a in res {
            let i = a.loc as usize;
            prep.answers[i] = Some(a);
        }
    }
    log::debug!("symbols: {njobs} lookup jobs in {:?}", t0.elapsed());
    let mut out = Symbols {
        per_loc: vec![LocSyms::default(); locs.len()],
        kernel_extent: kernel.as_ref().ok().and_then(|k| k.kernel_extent()),
        misses,
        ..Default::default()
    };
    for (dso, ids) in groups {
        for i in ids {
            let Some(a) = prep.answers[i as usize].take() else {
                continue;
            };
            out.add_answer(dso, &locs[i as usize], a);
        }
    }
    out.misses.sort_by(|a, b| a.0.cmp(&b.0));
    log::debug!("symbols: answers interned after {:?}", t0.elapsed());
    out
}

impl Symbols {
    /// One warning per DSO that could not be symbolized.
    pub(crate) fn warn_misses(&self) {
        for (dso, reason) in &self.misses {
            log::warn!("{dso}: no symbols ({reason})");
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

fn symbolize_dso(
    d: &Dso,
    ids: &[u32],
    locs: &[Loc],
    opts: &SymbolizeOptions,
    shared: Option<symbols::SharedDwarf>,
) -> DsoAnswer {
    if is_jit_map(&d.name) {
        return symbolize_jit(d, ids, locs);
    }
    let mut bin = match open_dso(d, opts) {
        Ok(b) => b,
        Err(r) => return unreadable(d, ids, r),
    };
    if let Some(s) = shared {
        bin.share_dwarf(s);
    }
    let mut names = HashMap::default();
    (answer_dso(&mut bin, &mut names, d, ids, locs, opts), None)
}

/// perf's name for a JIT runtime's symbol map: `/tmp/perf-PID.map`.
fn is_jit_map(name: &str) -> bool {
    name.strip_prefix("/tmp/perf-")
        .and_then(|r| r.strip_suffix(".map"))
        .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// Opens the binary behind a DSO that names a file (or the vdso, from
/// perf's build-id cache).
fn open_dso(d: &Dso, opts: &SymbolizeOptions) -> Result<Binary, Reason> {
    if d.name == "[vdso]" {
        let elf = d
            .build_id
            .as_deref()
            .ok_or(Reason::NoSuchFile)
            .and_then(|id| symbols::find_vdso(id, &opts.finder))?;
        Ok(Binary::from_elf(elf))
    } else if d.name.starts_with('/') {
        open_binary(&d.name, d.build_id.as_deref(), &opts.finder)
    } else {
        // Anonymous memory, [heap], [stack], [unknown]: nothing to read.
        Err(Reason::NoSuchFile)
    }
}

/// The answers for locations `ids` of the DSO `d`, read from `bin`;
/// `printed` keeps each raw name's printed form across calls.
fn answer_dso(
    bin: &mut Binary,
    printed: &mut HashMap<String, String>,
    d: &Dso,
    ids: &[u32],
    locs: &[Loc],
    opts: &SymbolizeOptions,
) -> Vec<LocAnswer> {
    // perf hands addr2line files only, never the vdso (nor names in
    // brackets): its source lines stay unknown.
    let srclines = opts.srclines && !d.name.starts_with('[');
    // Many addresses share a symbol: each raw name is demangled once, and
    // the distinct names of a DSO are demangled on all cores.
    let mut raw_names: HashMap<String, u32> = HashMap::default();
    let mut name_id = |raw: &str| -> u32 {
        if let Some(&n) = raw_names.get(raw) {
            return n;
        }
        let n = raw_names.len() as u32;
        raw_names.insert(raw.to_owned(), n);
        n
    };
    /// A frame whose name is still an index into the DSO's raw names (or,
    /// for DWARF names without a linkage name, the name itself).
    struct Pending {
        name: Result<u32, String>,
        start: u64,
        end: u64,
        size: u64,
        inline_frame: bool,
    }
    /// A location's answer with its names still pending.
    struct PendingLoc {
        loc: u32,
        found: Option<(Pending, Vec<Pending>)>,
        line: Option<(String, u32)>,
        frame_lines: Vec<(String, u32)>,
        offset: u64,
        svma: Option<u64>,
    }
    let mut pending: Vec<PendingLoc> = Vec::with_capacity(ids.len());
    for &i in ids {
        let l = &locs[i as usize];
        let Ok(svma) = bin
            .elf()
            .file_offset_to_svma(symbols::FileOffset(l.lookup_rel()))
        else {
            pending.push(PendingLoc {
                loc: i,
                found: None,
                line: None,
                frame_lines: Vec::new(),
                offset: 0,
                svma: None,
            });
            continue;
        };
        // The recorded address itself (one past the looked-up one for a
        // return address).
        let own_svma = Some(svma.0.wrapping_add(l.rel.wrapping_sub(l.lookup_rel())));
        let line = if srclines {
            source_line(bin, svma)
        } else {
            None
        };
        // A "return address" that starts a function and follows no
        // symbol (a lazy-binding trampoline's target, a thunk) is taken as
        // it is, as perf takes every address.
        let hit = match bin.symbol(svma) {
            Err(_) if l.origin == Origin::Return => bin
                .symbol(Svma(svma.0.wrapping_add(1)))
                .map(|h| (h, 1))
                .map_err(|_| ()),
            h => h.map(|h| (h, 0)).map_err(|_| ()),
        };
        let (raw, start, end, size, offset) = match hit {
            Ok((hit, moved)) => {
                let start = (svma.0 + moved) - hit.offset;
                (
                    name_id(hit.raw_name),
                    start,
                    start.saturating_add(hit.size.max(1)),
                    hit.size,
                    // The offset is made relative to the return address
                    // below, by adding back what the lookup took off.
                    hit.offset.wrapping_sub(moved),
                )
            }
            Err(_) => {
                // binutils then answers with a symbol before the address.
                let line = match line {
                    None if srclines => bin.elf().symtab_file(svma).map(symtab_answer),
                    l => l,
                };
                pending.push(PendingLoc {
                    loc: i,
                    found: None,
                    line,
                    frame_lines: Vec::new(),
                    offset: 0,
                    svma: own_svma,
                });
                continue;
            }
        };
        // Where no line covers the address, addr2line answers from the
        // symbol table (`file:?`, which perf shows as `file:0`).
        let symtab_line = if srclines {
            bin.elf().symtab_file(svma).map(symtab_answer)
        } else {
            None
        };
        let line = match line {
            None => symtab_line.clone(),
            l => l,
        };
        let mut frames = Vec::new();
        let mut frame_lines = Vec::new();
        if opts.inline && l.expands_inlines() {
            if let Ok(fs) = bin.frames(Svma(svma.0)) {
                for f in fs {
                    if srclines {
                        let file = f.file.as_deref().unwrap_or("??");
                        frame_lines.push((file.to_owned(), f.line.unwrap_or(0)));
                    }
                    let name = match (&f.raw_function, &f.function) {
                        (Some(r), _) => Ok(name_id(r)),
                        (None, Some(f)) => Err(f.clone()),
                        (None, None) => Err("??".to_owned()),
                    };
                    frames.push(Pending {
                        name,
                        start,
                        end,
                        size,
                        inline_frame: true,
                    });
                }
            }
            // Without DWARF, addr2line's one record is the symbol table's.
            if srclines && frames.is_empty() {
                frame_lines.extend(symtab_line);
            }
        }
        let real = Pending {
            name: Ok(raw),
            start,
            end,
            size,
            inline_frame: false,
        };
        pending.push(PendingLoc {
            loc: i,
            found: Some((real, frames)),
            line,
            frame_lines,
            offset,
            svma: own_svma,
        });
    }
    let mut raw_list: Vec<(&str, u32)> = raw_names.iter().map(|(k, &v)| (k.as_str(), v)).collect();
    raw_list.sort_unstable_by_key(|&(_, v)| v);
    let unprinted: Vec<&str> = raw_list
        .iter()
        .map(|&(raw, _)| raw)
        .filter(|raw| !printed.contains_key(*raw))
        .collect();
    // On the pool's threads (pass two) the names of a DSO are demangled on
    // all of them; the thread of pass one ([`background`]) stays alone.
    let fresh: Vec<String> = if rayon::current_thread_index().is_some() {
        unprinted
            .par_iter()
            .map(|raw| opts.names.apply(raw))
            .collect()
    } else {
        unprinted.iter().map(|raw| opts.names.apply(raw)).collect()
    };
    let fresh = unprinted.into_iter().zip(fresh);
    for (raw, name) in fresh {
        printed.insert(raw.to_owned(), name);
    }
    let names: Vec<&str> = raw_list
        .iter()
        .map(|&(raw, _)| printed.get(raw).map_or(raw, String::as_str))
        .collect();
    let name_of = |p: &Result<u32, String>| match p {
        Ok(n) => names[*n as usize].to_owned(),
        Err(s) => s.clone(),
    };
    pending
        .into_iter()
        .map(|p| {
            let found = p.found.map(|(real, frames)| {
                let name = name_of(&real.name);
                let frames = frames
                    .iter()
                    .map(|f| {
                        let fname = name_of(&f.name);
                        // perf reuses the real symbol for any frame named
                        // like it; every other frame is an inline fake.
                        let inlined = f.inline_frame && fname != name;
                        RawFrame {
                            name: fname,
                            start: f.start,
                            end: f.end,
                            size: f.size,
                            inlined,
                        }
                    })
                    .collect();
                let real = RawFrame {
                    name,
                    start: real.start,
                    end: real.end,
                    size: real.size,
                    inlined: false,
                };
                (real, frames)
            });
            LocAnswer {
                loc: p.loc,
                found,
                line: p.line,
                frame_lines: p.frame_lines,
                offset: p.offset,
                svma: p.svma,
            }
        })
        .collect()
}

/// addr2line's answer from the symbol table alone (`file:?`, which perf shows
/// as `file:0`).
fn symtab_answer(f: &symbols::SymtabFile) -> (String, u32) {
    match f {
        symbols::SymtabFile::Unnamed => ("??".to_owned(), 0),
        symbols::SymtabFile::Named(f) => (f.to_string(), 0),
    }
}

/// The position perf's srcline shows for an address: the innermost inline
/// frame's file (its path; srcline shows the base name) and line, as the
/// first record of `addr2line -i` (`??` and 0 for what DWARF leaves out);
/// None where no line table covers the address.
fn source_line(bin: &mut Binary, svma: Svma) -> Option<(String, u32)> {
    let frames = bin.frames(svma).ok()?;
    let f = frames.first()?;
    let file = f.file.as_deref().unwrap_or("??");
    Some((file.to_owned(), f.line.unwrap_or(0)))
}

/// Opens the binary a DSO names, never one whose build id differs from the
/// recorded one: then perf's build-id cache is tried, and else the DSO stays
/// unresolved.
pub fn open_binary(
    path: &str,
    build_id: Option<&[u8]>,
    finder: &DebugFinder,
) -> Result<Binary, Reason> {
    let on_disk = Binary::open(Path::new(path), finder);
    match (on_disk, build_id) {
        (Ok(b), None) => Ok(b),
        (Ok(b), Some(want)) if b.elf().build_id().is_none_or(|id| id == want) => Ok(b),
        (first, Some(want)) => {
            if let Some(cached) = finder.cached_binary(want) {
                if let Ok(b) = Binary::open(&cached, finder) {
                    return Ok(b);
                }
            }
            Err(match first {
                Ok(_) => Reason::BuildIdMismatch,
                Err(e) => e.reason(),
            })
        }
        (Err(e), None) => Err(e.reason()),
    }
}

/// Names perf gives the kernel image and its modules.
fn is_kernel_dso(name: &str) -> bool {
    name.starts_with("[kernel.kallsyms]")
        || (name.starts_with('[')
            && name != "[vdso]"
            && name != "[vsyscall]"
            && !name.starts_with("[stack")
            && name != "[heap]"
            && name != "[unknown]")
        || name.ends_with(".ko")
        || name.contains(".ko.")
}

fn symbolize_kernel(
    d: &Dso,
    ids: &[u32],
    locs: &[Loc],
    kernel: &Result<symbols::Kallsyms, Reason>,
) -> DsoAnswer {
    let k = match kernel {
        Ok(k) => k,
        Err(r) => return unreadable(d, ids, *r),
    };
    let short = crate::hist::dso_short_name(&d.name);
    let res = ids
        .iter()
        .map(|&i| {
            let l = &locs[i as usize];
            let found = k.lookup(l.lookup_ip()).ok().and_then(|hit| {
                // A module's symbol counts only inside that module's map.
                let ok = match hit.module {
                    None => d.name.starts_with("[kernel.kallsyms]"),
                    Some(m) => m == short,
                };
                ok.then(|| plain_symbol(hit.name, l.lookup_ip(), hit.offset, hit.size))
                    .map(|f| (f, hit.offset))
            });
            plain_answer(i, found)
        })
        .collect();
    (res, None)
}

fn symbolize_jit(d: &Dso, ids: &[u32], locs: &[Loc]) -> DsoAnswer {
    let map = match symbols::PerfMap::load(&d.name) {
        Ok(m) => m,
        Err(e) => return unreadable(d, ids, e.reason()),
    };
    let res = ids
        .iter()
        .map(|&i| {
            let l = &locs[i as usize];
            let found = map.lookup(l.lookup_ip()).ok().map(|hit| {
                let f = plain_symbol(hit.name, l.lookup_ip(), hit.offset, hit.size);
                (f, hit.offset)
            });
            plain_answer(i, found)
        })
        .collect();
    (res, None)
}
