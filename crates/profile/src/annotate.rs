//! perf annotate's model of one function: its disassembly with the source lines that
//! produced each instruction interleaved above it, and the samples per instruction.
//!
//! The source is interleaved as `objdump -S -l` does (perf annotate runs objdump so): a
//! `function():` line where the innermost (inlined) function changes, and at each change of
//! source line the lines of that file not yet shown, with at most five lines of context
//! before it, or the line alone when the code goes back. Source files are read from disk;
//! where one is missing its `file:line` stands in for the text.

use std::collections::HashMap;
use std::path::Path;

use symbols::disasm::{self, AddressNames, DisasmError, Insn, Syntax};
use symbols::{Binary, Svma};

/// objdump's `SHOW_PRECEDING_CONTEXT_LINES`.
const CONTEXT_LINES: u32 = 5;

/// What to show.
#[derive(Debug, Clone, Default)]
pub struct AnnotateOptions {
    pub syntax: Syntax,
    /// Interleave source lines (perf's default; `--no-source` turns it off).
    pub source: bool,
    /// `--asm-raw`: each instruction's bytes before it, as objdump prints
    /// them (seven a line; longer instructions continue on lines of their
    /// own).
    pub raw_bytes: bool,
    /// `--prefix`/`--prefix-strip`: source files of absolute paths are read
    /// with this many leading directories removed and the prefix added (as
    /// objdump's options of those names).
    pub prefix: Option<(String, usize)>,
    /// How the names of branch targets ([`Line::Insn`]'s `target`) are shown.
    pub names: crate::symbolize::NameStyle,
}

/// One line of an annotated function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// An empty line.
    Blank,
    /// A line without a line number: the function's label, `function():` at an inline
    /// boundary, or `file:line` where the source file cannot be read.
    Text(String),
    /// A line of source code and its number.
    Source { line: u32, text: String },
    /// With raw bytes shown: the bytes of an instruction longer than
    /// objdump puts on one line, at their address (no samples of their own).
    MoreBytes { addr: u64, text: String },
    /// objdump's `/path/file.c:N` line, which perf does not show: it numbers
    /// the lines after it from N (the source lines objdump prints before the
    /// marked one too).
    Mark(u32),
    /// An instruction: its address and text, and its position as perf's srcline shows it
    /// (`file.c:7`, the innermost inline frame's), where the line table has one.
    Insn {
        addr: u64,
        text: String,
        srcline: Option<String>,
        /// The name of the function a direct call or jump lands in, as the binary's
        /// symbol table (perf's, with its fixed-up sizes) names it: perf's
        /// `--stdio2` shows calls, and jumps out of the function, by it.
        target: Option<String>,
    },
}

/// A function's annotation, without samples.
#[derive(Debug, Clone, Default)]
pub struct Annotated {
    pub lines: Vec<Line>,
    /// The instruction addresses in order (the start of each one's sample range).
    pub addrs: Vec<u64>,
    /// One past the last instruction.
    pub end: u64,
}

/// Reads and caches source files: lines as perf annotate shows them (indentation dropped,
/// tabs expanded), or as the files hold them ([`SourceFiles::raw`]).
#[derive(Debug, Default)]
pub struct SourceFiles {
    files: HashMap<String, Option<Vec<String>>>,
    /// Keep tabs as they are (perf script's `srccode`), instead of
    /// expanding them as annotate's views do.
    raw: bool,
}

/// Source files larger than this are not read (a line table naming a huge generated file).
const MAX_SOURCE_BYTES: u64 = 64 << 20;

impl SourceFiles {
    /// A cache that keeps lines as the files hold them (tabs unexpanded).
    pub fn raw() -> Self {
        SourceFiles {
            raw: true,
            ..Default::default()
        }
    }

    /// Line `n` (1-based) of `path`, None where the file or line is not there.
    pub fn line(&mut self, path: &str, n: u32) -> Option<&str> {
        self.lines(path)?
            .get((n as usize).checked_sub(1)?)
            .map(String::as_str)
    }

    fn lines(&mut self, path: &str) -> Option<&Vec<String>> {
        let raw = self.raw;
        self.files
            .entry(path.to_owned())
            .or_insert_with(|| read_source(Path::new(path), raw))
            .as_ref()
    }

    /// Whether `path` can be read.
    pub fn exists(&mut self, path: &str) -> bool {
        self.lines(path).is_some()
    }
}

fn read_source(path: &Path, raw: bool) -> Option<Vec<String>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_SOURCE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(if raw {
        text.lines().map(str::to_owned).collect()
    } else {
        // perf shows a line without its indentation and trailing blanks, tabs expanded
        // from there on.
        text.lines().map(|l| expand_tabs(l.trim())).collect()
    })
}

/// Tabs to spaces at multiples of eight, as perf's and objdump's `expand`.
fn expand_tabs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\t' {
            out.push(' ');
            while !out.chars().count().is_multiple_of(8) {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Instruction bytes objdump prints on a line (x86).
const RAW_BYTES_PER_LINE: usize = 7;

/// objdump's `--prefix`/`--prefix-strip` applied to a source file's path:
/// absolute paths lose `strip` leading directories and gain the prefix.
fn with_prefix(file: &str, prefix: Option<&(String, usize)>) -> String {
    match prefix {
        Some((p, strip)) if file.starts_with('/') => {
            let rest: Vec<&str> = file.split('/').filter(|c| !c.is_empty()).collect();
            let keep = rest.len().saturating_sub(1).min(*strip);
            format!("{}/{}", p.trim_end_matches('/'), rest[keep..].join("/"))
        }
        _ => file.to_owned(),
    }
}

/// Per source file, what objdump remembers while it interleaves one function.
#[derive(Default)]
struct FileState {
    max_printed: u32,
    last_line: u32,
}

/// The annotation of the function at `[start, end)` of `bin`, named `name`. Branch
/// targets are named by the binary's symbols whose start `known` accepts.
pub fn annotate_function(
    bin: &mut Binary,
    names: &AddressNames,
    sources: &mut SourceFiles,
    name: &str,
    (start, end): (Svma, Svma),
    opts: &AnnotateOptions,
    known: &dyn Fn(u64) -> bool,
) -> Result<Annotated, DisasmError> {
    // (perf keeps the padding nops at a function's end, which a symbol
    // without a size reaches up to the next symbol; it drops them only for
    // /proc/kcore's code, which sear does not annotate.)
    // (A symbol stretched over several sections, as perf stretches
    // `_init` over the PLT, is disassembled section by section, as objdump
    // does.)
    let pieces = disasm::disassemble_sections(bin.elf(), start, end, opts.syntax, names)?;
    if pieces.iter().all(|p| p.2.is_empty()) {
        return Err(DisasmError::NoCode);
    }
    // (objdump's own name for the address: of several symbols there, the
    // one binutils sorts first, which need not be the one perf reports.)
    let label = names.label(start.0);
    let name = label.as_deref().unwrap_or(name);
    Ok(interleave(
        bin,
        &pieces,
        sources,
        (name, names),
        start,
        opts,
        known,
    ))
}

fn interleave(
    bin: &mut Binary,
    pieces: &[(String, u64, Vec<Insn>)],
    sources: &mut SourceFiles,
    (name, names): (&str, &AddressNames),
    start: Svma,
    opts: &AnnotateOptions,
    known: &dyn Fn(u64) -> bool,
) -> Annotated {
    // objdump's preamble as perf keeps it (the `file format` line dropped).
    let mut lines = vec![Line::Blank, Line::Blank];
    // Where each section's part starts: its header and label come first.
    let mut headers: HashMap<u64, (&str, String)> = HashMap::new();
    for (i, (section, at, _)) in pieces.iter().enumerate() {
        let label = if i == 0 {
            name.to_owned()
        } else {
            // (objdump labels a section's start by a symbol there, else by
            // the section's first symbol after it, else by the section.)
            let end = pieces[i]
                .2
                .last()
                .map_or(*at, |x| x.addr + u64::from(x.len));
            match (names.at(*at), names.next_after(*at, end)) {
                (Some(n), _) => n.to_owned(),
                (None, Some((a, n))) => format!("{n}-0x{:x}", a - at),
                (None, None) => section.to_owned(),
            }
        };
        headers.insert(*at, (section.as_str(), label));
    }
    let insns: Vec<&Insn> = pieces.iter().flat_map(|p| &p.2).collect();
    let insns = insns.as_slice();
    let mut prev_loc: Option<(String, u32, u64)> = None;
    let code_end = insns
        .last()
        .map_or(start.0, |i| i.addr.wrapping_add(u64::from(i.len)));
    // The line table's rows, for the discriminators objdump marks too.
    let rows = bin.line_rows(start, Svma(code_end));
    let discriminator = |addr: u64, line: u32| -> u64 {
        let i = rows.partition_point(|r| r.0 <= addr);
        rows[..i]
            .last()
            .filter(|r| r.1 == u64::from(line))
            .map_or(0, |r| r.2)
    };
    let mut prev_function: Option<String> = None;
    let mut prev_place: Option<(String, u32, u64)> = None;
    let mut files: HashMap<String, FileState> = HashMap::new();
    // objdump -l names a function even where no DWARF covers it, from the symbol table
    // (BFD's fallback), but finds nothing in a binary with neither (a stripped one whose
    // debug file is not there): no name line then.
    let has_dwarf = bin.debug_file().is_ok() || bin.elf().has_symtab();
    // binutils' BFD names a function entry without a linkage name (a C++ lambda's
    // `operator()`, some template instances: DWARF gives only `DW_AT_name`) from the
    // symbol table the first time an address asks for it, and by its DWARF name after
    // that, unless the symbol starts where the entry does (then by the symbol's name for
    // good). objdump -l prints what BFD answers, so an inlined copy's first name line is
    // the enclosing symbol's, and a function of two folded instances is named by the
    // symbol BFD picks. Per entry: the name BFD settled on, if not DWARF's.
    let mut met: HashMap<u64, Option<String>> = HashMap::new();
    for &insn in insns {
        let addr = Svma(insn.addr);
        if let Some((section, label)) = headers.get(&insn.addr) {
            lines.push(Line::Blank);
            lines.push(Line::Text(format!("Disassembly of section {section}:")));
            lines.push(Line::Blank);
            lines.push(Line::Text(format!("{:016x} <{label}>:", insn.addr)));
        } else if let Some(sym) = names.at(insn.addr).filter(|_| insn.addr != start.0) {
            // objdump labels each symbol it meets inside the range.
            lines.push(Line::Blank);
            lines.push(Line::Text(format!("{:016x} <{sym}>:", insn.addr)));
        }
        let origin = bin.frame_origins(addr).first().copied();
        // The raw name objdump gets where it is not the DWARF entry's.
        let bfd_name = match origin {
            Some(symbols::FrameOrigin {
                die: Some(die),
                linkage: false,
                low,
            }) => match met.get(&die) {
                Some(settled) => settled.clone(),
                None => {
                    // (Of several symbols there, BFD's pick: the first in the table, where
                    // perf's may be another alias.)
                    let hit = bin.elf().bfd_function_at(addr);
                    let raw = hit.map(|h| h.0.to_owned());
                    let starts_there = hit.is_some_and(|h| low == Some(h.1));
                    met.insert(die, raw.clone().filter(|_| starts_there));
                    raw
                }
            },
            _ => None,
        };
        let frames = bin.frames(addr).ok();
        let inner = frames.and_then(|f| f.first());
        let srcline = inner.and_then(|f| {
            let file = f.file.as_deref()?;
            let base = file.rsplit('/').next().unwrap_or(file);
            Some(format!("{base}:{}", f.line.unwrap_or(0)))
        });
        // Where no DWARF names a function (code without debug info), objdump -l names the
        // ELF symbol, once: BFD's nearest-line lookup falls back to the symbol table.
        // (Not in a PLT: no symbol of the file covers it, only objdump's synthetic ones.)
        if inner.and_then(|f| f.function.as_ref()).is_none()
            && prev_function.is_none()
            && has_dwarf
            && !name.ends_with("@plt")
        {
            lines.push(Line::Text(if name.contains('(') {
                format!("{name}:")
            } else {
                format!("{name}():")
            }));
            prev_function = Some(name.to_owned());
        }
        if let Some(f) = inner {
            if let Some(raw) = bfd_name.as_deref().or(f.raw_function.as_deref()) {
                // (objdump compares the names as BFD gives them, before demangling.)
                if prev_function.as_deref() != Some(raw) {
                    // objdump -C adds no parentheses to a name it demangled
                    // (it has its own).
                    lines.push(Line::Text(match symbols::demangle_objdump(raw) {
                        Some(func) => format!("{func}:"),
                        None => format!("{raw}():"),
                    }));
                    prev_function = Some(raw.to_owned());
                    // objdump marks the line again after a function's name
                    // (its `prev_line = -1`).
                    prev_loc = None;
                    prev_place = None;
                }
            }
            // objdump (with -l) marks each change of source line.
            if let (Some(file), Some(line)) = (&f.file, f.line) {
                let here = (file.clone(), line, discriminator(insn.addr, line));
                if prev_loc.as_ref() != Some(&here) {
                    let d = here.2;
                    prev_loc = Some(here);
                    if file.starts_with('/') {
                        lines.push(Line::Mark(line));
                    }
                    if opts.source && line > 0 {
                        let file = with_prefix(file, opts.prefix.as_ref());
                        source_lines(
                            &mut lines,
                            sources,
                            &mut files,
                            &mut prev_place,
                            (&file, line, d),
                        );
                    } else if !opts.source && !file.starts_with('/') {
                        // Without source (objdump's -l alone) every change of place is
                        // marked, and perf shows the marks that are not absolute paths.
                        lines.push(Line::Text(match d {
                            0 => format!("{file}:{line}"),
                            d => format!("{file}:{line} (discriminator {d})"),
                        }));
                    }
                }
            }
        }
        let target = insn.target.and_then(|t| {
            let hit = bin.symbol(Svma(t)).ok()?;
            known(t.wrapping_sub(hit.offset)).then(|| opts.names.apply(hit.raw_name))
        });
        if !opts.raw_bytes {
            lines.push(Line::Insn {
                addr: insn.addr,
                text: insn.text(),
                srcline,
                target,
            });
            continue;
        }
        let bytes = bin
            .elf()
            .bytes_at(Svma(insn.addr), u64::from(insn.len))
            .unwrap_or(&[]);
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x} ")).collect::<String>();
        let mut chunks = bytes.chunks(RAW_BYTES_PER_LINE);
        let first = hex(chunks.next().unwrap_or(&[]));
        // objdump pads the bytes to seven and tabs to the instruction.
        lines.push(Line::Insn {
            addr: insn.addr,
            text: format!("{first:<24}{}", insn.text()),
            srcline,
            target,
        });
        for (i, more) in chunks.enumerate() {
            lines.push(Line::MoreBytes {
                addr: insn.addr + ((i + 1) * RAW_BYTES_PER_LINE) as u64,
                text: hex(more).trim_end().to_owned(),
            });
        }
    }
    let end = insns
        .last()
        .map_or(start.0, |i| i.addr.wrapping_add(u64::from(i.len)));
    Annotated {
        lines,
        addrs: insns.iter().map(|i| i.addr).collect(),
        end,
    }
}

/// objdump's `show_line` for one instruction at `file:line`.
fn source_lines(
    out: &mut Vec<Line>,
    sources: &mut SourceFiles,
    files: &mut HashMap<String, FileState>,
    prev_place: &mut Option<(String, u32, u64)>,
    (file, line, discriminator): (&str, u32, u64),
) {
    if !sources.exists(file) {
        // perf shows objdump's mark only where it is not an absolute path.
        let place = (file.to_owned(), line, discriminator);
        if prev_place.as_ref() != Some(&place) && !file.starts_with('/') {
            out.push(Line::Text(match discriminator {
                0 => format!("{file}:{line}"),
                d => format!("{file}:{line} (discriminator {d})"),
            }));
        }
        *prev_place = Some(place);
        return;
    }
    let st = files.entry(file.to_owned()).or_default();
    if line == st.last_line {
        return;
    }
    let mut first = line.saturating_sub(CONTEXT_LINES).max(1);
    if st.max_printed >= first {
        first = if st.max_printed < line {
            st.max_printed + 1
        } else {
            line
        };
    }
    for n in first..=line {
        let text = sources.line(file, n).unwrap_or("").trim_start().to_owned();
        out.push(Line::Source { line: n, text });
    }
    st.max_printed = st.max_printed.max(line);
    st.last_line = line;
}

/// Samples and period at each address of a function.
#[derive(Debug, Clone, Default)]
pub struct Hits {
    /// address → (samples, period)
    pub by_addr: HashMap<u64, (u64, u64)>,
    pub samples: u64,
    pub period: u64,
}

impl Hits {
    pub fn add(&mut self, addr: u64, samples: u64, period: u64) {
        let e = self.by_addr.entry(addr).or_insert((0, 0));
        e.0 += samples;
        e.1 = e.1.wrapping_add(period);
        self.samples += samples;
        self.period = self.period.wrapping_add(period);
    }

    /// Per instruction of `a` (in order), the (samples, period) of the addresses from its
    /// start up to the next instruction's, as perf sums a line's range.
    pub fn per_insn(&self, a: &Annotated) -> Vec<(u64, u64)> {
        let mut out = vec![(0u64, 0u64); a.addrs.len()];
        for (&addr, &(s, p)) in &self.by_addr {
            let i = a.addrs.partition_point(|&x| x <= addr);
            if i == 0 || addr >= a.end {
                continue;
            }
            let e = &mut out[i - 1];
            e.0 += s;
            e.1 = e.1.wrapping_add(p);
        }
        out
    }
}

/// One function's samples in one event.
#[derive(Debug, Clone)]
pub struct HotFunction {
    pub event: usize,
    /// Symbol id in [`crate::symbolize::SymbolTable::syms`].
    pub sym: u32,
    pub hits: Hits,
}

/// Which functions to annotate.
#[derive(Debug, Clone, Default)]
pub struct FunctionFilter {
    /// The one function asked for (a C++ name matches with or without its
    /// parameter list).
    pub symbol: Option<String>,
    /// DSOs by long or short name (`--dsos`).
    pub dsos: Option<Vec<String>>,
    /// `-C`: only samples of these CPUs (the sums must be kept by CPU).
    pub cpus: Option<Vec<u32>>,
}

/// The functions with samples, and each event's total period.
#[derive(Debug, Clone, Default)]
pub struct HotFunctions {
    pub entries: Vec<HotFunction>,
    pub event_totals: Vec<u64>,
    /// Per event, the (samples, period) of the samples the filter passes
    /// (perf's histogram totals, which `--percent-type global-*` takes:
    /// with `-s`, only that function's).
    pub shown_totals: Vec<(u64, u64)>,
    /// (DSO, start) of the sampled functions a symbol filter passed over: perf
    /// annotate deletes them from its symbol tables, so `--stdio2` names no branch
    /// target in them (see [`Annotator::forget`]).
    pub forgotten: std::collections::HashSet<(u32, u64)>,
}

impl HotFunctions {
    /// Leaves out functions with less than `limit` percent of their
    /// event's period (`--percent-limit`).
    pub fn retain_above(&mut self, limit: f64) {
        let totals = &self.event_totals;
        self.entries.retain(|e| {
            let total = totals.get(e.event).copied().unwrap_or(0);
            total > 0 && e.hits.period as f64 * 100.0 / total as f64 >= limit
        });
    }
}

/// Every sample's own location summed per (event, function, address):
/// the functions `filter` passes, per event, hottest first (ties by name,
/// then address).
pub fn hot_functions(
    sums: Vec<(crate::collect::SampleKey, crate::collect::SampleSum)>,
    syms: &crate::symbolize::SymbolTable,
    dsos: &[crate::machine::Dso],
    nr_events: usize,
    filter: &FunctionFilter,
) -> HotFunctions {
    let dso_ok = |d: u32| -> bool {
        let Some(list) = &filter.dsos else {
            return true;
        };
        let Some(dso) = dsos.get(d as usize) else {
            return false;
        };
        let short = crate::hist::dso_short_name(&dso.name);
        list.iter().any(|x| *x == dso.name || *x == short)
    };
    let sym_ok = |name: &str| -> bool {
        match &filter.symbol {
            None => true,
            // (perf's names have no parameter lists, but keep `@plt`.)
            Some(w) => {
                name == w
                    || name.split_once('(').is_some_and(|(head, rest)| {
                        match (rest.ends_with("@plt"), w.strip_suffix("@plt")) {
                            (true, Some(w)) => head == w,
                            (false, None) => head == w,
                            _ => false,
                        }
                    })
            }
        }
    };
    let mut entries: Vec<HotFunction> = Vec::new();
    let mut index: HashMap<(usize, u32), usize> = HashMap::new();
    let mut event_totals = vec![0u64; nr_events];
    let mut shown_totals = vec![(0u64, 0u64); nr_events];
    let mut forgotten = std::collections::HashSet::new();
    for (key, sum) in sums {
        if filter.cpus.as_ref().is_some_and(|c| !c.contains(&key.cpu)) {
            continue;
        }
        let ev = key.event as usize;
        if let Some(t) = event_totals.get_mut(ev) {
            *t = t.wrapping_add(sum.period);
        }
        let mut shown = |ev: usize| {
            if let Some(t) = shown_totals.get_mut(ev) {
                *t = (t.0 + sum.samples, t.1.wrapping_add(sum.period));
            }
        };
        let sym_id = syms.per_loc.get(key.leaf as usize).and_then(|l| l.sym);
        let (Some(loc), Some(sym_id)) = (syms.per_loc.get(key.leaf as usize), sym_id) else {
            // (A sample without a symbol counts where no filter names one.)
            if filter.symbol.is_none() && filter.dsos.is_none() {
                shown(ev);
            }
            continue;
        };
        let sym = &syms.syms[sym_id as usize];
        if !dso_ok(sym.dso) {
            continue;
        }
        if !sym_ok(&sym.name) {
            // perf annotate deletes the symbols of the samples it passes over from
            // their DSOs; what points into them is then left unnamed.
            forgotten.insert((sym.dso, sym.start));
            continue;
        }
        shown(ev);
        let i = *index.entry((ev, sym_id)).or_insert_with(|| {
            entries.push(HotFunction {
                event: ev,
                sym: sym_id,
                hits: Hits::default(),
            });
            entries.len() - 1
        });
        let addr = sym.start.wrapping_add(loc.sym_offset);
        entries[i].hits.add(addr, sum.samples, sum.period);
    }
    // perf's order: the hottest first, then by DSO (its short name) and name.
    let short: Vec<String> = dsos
        .iter()
        .map(|d| crate::machine::dso_short_name(&d.name))
        .collect();
    let dso_name = |d: u32| short.get(d as usize).map_or("", String::as_str);
    entries.sort_by(|x, y| {
        let (sx, sy) = (&syms.syms[x.sym as usize], &syms.syms[y.sym as usize]);
        x.event
            .cmp(&y.event)
            .then(y.hits.period.cmp(&x.hits.period))
            .then_with(|| dso_name(sx.dso).cmp(dso_name(sy.dso)))
            .then_with(|| sx.name.cmp(&sy.name))
            .then(sx.start.cmp(&sy.start))
    });
    HotFunctions {
        entries,
        event_totals,
        shown_totals,
        forgotten,
    }
}

/// Disassembles the functions asked for, each binary read and each
/// function annotated once however many events sample it, and keeps what
/// could not be done to say once each.
pub struct Annotator<'a> {
    syms: &'a crate::symbolize::SymbolTable,
    dsos: &'a [crate::machine::Dso],
    opts: AnnotateOptions,
    finder: symbols::DebugFinder,
    binaries: HashMap<u32, Result<(Binary, AddressNames), String>>,
    annotations: HashMap<u32, Result<Annotated, String>>,
    sources: SourceFiles,
    /// Functions that could not be disassembled (said once each).
    func_failures: Vec<String>,
    failed_funcs: std::collections::HashSet<u32>,
    /// Per DSO that cannot be read: (functions skipped, why, the first
    /// one's name).
    dso_failures: HashMap<u32, (usize, String, Option<String>)>,
    /// Functions no branch target is named by (see [`HotFunctions::forgotten`]).
    forgotten: std::collections::HashSet<(u32, u64)>,
}

impl<'a> Annotator<'a> {
    /// Names no branch target by these functions ((DSO, start) pairs), as perf
    /// annotate, which deleted them, cannot.
    pub fn forget(&mut self, functions: std::collections::HashSet<(u32, u64)>) {
        self.forgotten = functions;
    }

    pub fn new(
        syms: &'a crate::symbolize::SymbolTable,
        dsos: &'a [crate::machine::Dso],
        opts: AnnotateOptions,
    ) -> Self {
        Annotator {
            syms,
            dsos,
            opts,
            finder: symbols::DebugFinder::default(),
            binaries: HashMap::new(),
            annotations: HashMap::new(),
            sources: SourceFiles::default(),
            func_failures: Vec::new(),
            failed_funcs: Default::default(),
            dso_failures: HashMap::new(),
            forgotten: Default::default(),
        }
    }

    /// Function `sym`'s annotation and its DSO, or None when it cannot be
    /// had (the reason is kept for [`Self::failures`]).
    pub fn function(&mut self, sym: u32) -> Option<(&Annotated, &'a crate::machine::Dso)> {
        let s = &self.syms.syms[sym as usize];
        let dso = self.dsos.get(s.dso as usize)?;
        let finder = &self.finder;
        let bin = self
            .binaries
            .entry(s.dso)
            .or_insert_with(|| open(&dso.name, dso.build_id.as_deref(), finder, self.opts.source));
        let (bin, names) = match bin {
            Ok(b) => b,
            Err(msg) => {
                // One message per DSO, with how many functions it kept from view.
                let n = self
                    .dso_failures
                    .entry(s.dso)
                    .or_insert((0, msg.clone(), None));
                n.0 += 1;
                n.2.get_or_insert_with(|| s.name.clone());
                return None;
            }
        };
        let (opts, sources, forgotten) = (&self.opts, &mut self.sources, &self.forgotten);
        let ann = self.annotations.entry(sym).or_insert_with(|| {
            let known = |start: u64| !forgotten.contains(&(s.dso, start));
            annotate_function(
                bin,
                names,
                sources,
                &s.name,
                (Svma(s.start), Svma(s.start.wrapping_add(s.size.max(1)))),
                opts,
                &known,
            )
            .map_err(|err| format!("{}: {err}", dso.name))
        });
        match ann {
            Ok(a) => Some((a, dso)),
            Err(msg) => {
                // Said once per function, not once per event.
                if self.failed_funcs.insert(sym) {
                    self.func_failures
                        .push(format!("cannot annotate {}: {msg}", s.name));
                }
                None
            }
        }
    }

    /// Whether everything that could not be annotated is kernel code, which
    /// sear does not annotate yet (perf, without a vmlinux, says so and
    /// exits 0 too): no error, however little was printed.
    pub fn only_kernel_failed(&self) -> bool {
        self.func_failures.is_empty()
            && self.dso_failures.keys().all(|&d| {
                self.dsos
                    .get(d as usize)
                    .is_some_and(|dso| kernel_code(&dso.name))
            })
    }

    /// What could not be annotated, one message per function and per
    /// binary that could not be read (most functions first).
    pub fn failures(self) -> Vec<String> {
        let mut out = self.func_failures;
        let mut failures: Vec<_> = self.dso_failures.into_values().collect();
        failures.sort_by(|x, y| y.0.cmp(&x.0).then_with(|| x.1.cmp(&y.1)));
        for (n, msg, first) in &failures {
            let what = match (n, first) {
                (1, Some(name)) => name.clone(),
                _ => format!("{n} functions of"),
            };
            let sep = if what.ends_with(" of") { " " } else { ": " };
            out.push(format!("cannot annotate {what}{sep}{msg}"));
        }
        out
    }
}

/// Whether a DSO is the kernel or one of its modules (not annotated yet).
fn kernel_code(name: &str) -> bool {
    name.starts_with("[kernel.kallsyms]") || name.ends_with(".ko") || name.contains(".ko.")
}

/// The binary of a DSO and the names of its addresses, or what to tell the user.
fn open(
    name: &str,
    build_id: Option<&[u8]>,
    finder: &symbols::DebugFinder,
    source: bool,
) -> Result<(Binary, AddressNames), String> {
    if kernel_code(name) {
        return Err(format!(
            "{name}: kernel code is not annotated yet (sear does not read vmlinux or /proc/kcore)"
        ));
    }
    // The vdso from perf's build-id cache, as perf annotates it.
    let opened = match (name, build_id) {
        ("[vdso]", Some(id)) => symbols::find_vdso(id, finder).map(Binary::from_elf),
        _ if !name.starts_with('/') => return Err(format!("{name}: no file holds this code")),
        _ => crate::symbolize::open_binary(name, build_id, finder),
    };
    match opened {
        Ok(bin) => {
            // perf runs objdump with -C: names demangled (and with -l unless
            // --no-source, which makes binutils read a stripped binary's
            // symbols from its debug file).
            let debug = bin.debug_file().ok().map(|d| d.path.clone());
            let names = AddressNames::objdump(bin.elf(), debug.as_deref(), source).demangled();
            Ok((bin, names))
        }
        Err(reason) => Err(format!(
            "{name}: {reason}{}",
            missing_hint(reason, build_id)
        )),
    }
}

/// The recorded binaries that could not be read, each with why and what
/// to do (their functions have no names, so a function asked for by name
/// may be in one of them).
pub fn unread_binaries(
    syms: &crate::symbolize::SymbolTable,
    dsos: &[crate::machine::Dso],
) -> Vec<String> {
    syms.misses
        .iter()
        .filter(|(d, _)| d.starts_with('/'))
        .map(|(d, r)| {
            let id = dsos
                .iter()
                .find(|x| &x.name == d)
                .and_then(|x| x.build_id.as_deref());
            format!("{d}: {r}{}", missing_hint(*r, id))
        })
        .collect()
}

/// What to do about a binary that cannot be read.
pub fn missing_hint(reason: symbols::Reason, build_id: Option<&[u8]>) -> String {
    let id = build_id.map(|b| b.iter().map(|x| format!("{x:02x}")).collect::<String>());
    match (reason, id) {
        (symbols::Reason::NoSuchFile, Some(id)) => format!(
            " (put the binary back at that path, or add it to the build-id cache with `perf buildid-cache -a FILE`; its build id is {id})"
        ),
        (symbols::Reason::NoSuchFile, None) => " (put the binary back at that path)".to_owned(),
        (symbols::Reason::BuildIdMismatch | symbols::Reason::NotTheRecordedBinary, Some(id)) => format!(
            " (the file there was rebuilt after the recording: add the recorded one, build id {id}, with `perf buildid-cache -a FILE`)"
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_expand_to_eight() {
        assert_eq!(expand_tabs("\tx"), "        x");
        assert_eq!(expand_tabs("ab\tc"), "ab      c");
    }

    fn run(places: &[u32], have_file: bool) -> Vec<Line> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.c");
        let src: String = (1..=30).map(|i| format!("  line {i}\n")).collect();
        if have_file {
            std::fs::write(&path, src).unwrap();
        }
        let file = path.to_str().unwrap().to_owned();
        let mut sources = SourceFiles::default();
        let mut files = HashMap::new();
        let mut prev = None;
        let mut out = Vec::new();
        for &l in places {
            source_lines(&mut out, &mut sources, &mut files, &mut prev, (&file, l, 0));
        }
        out
    }

    fn numbers(v: &[Line]) -> Vec<u32> {
        v.iter()
            .filter_map(|l| match l {
                Line::Source { line, .. } => Some(*line),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn context_as_objdump() {
        // First line 12: five lines of context (7..=12); forward to 14: 13, 14; back to 12:
        // just 12; repeated 12: nothing; far forward to 25: 20..=25.
        let v = run(&[12, 14, 12, 12, 25], true);
        let mut want: Vec<u32> = (7..=14).collect();
        want.push(12);
        want.extend(20..=25);
        assert_eq!(numbers(&v), want);
        assert!(matches!(&v[0], Line::Source { text, .. } if text == "line 7"));
    }

    #[test]
    fn missing_file_shows_file_and_line() {
        // An absolute path's mark is objdump's, which perf does not show.
        assert!(run(&[3, 3, 4], false).is_empty());
        // A relative one perf shows, once per place.
        let mut sources = SourceFiles::default();
        let (mut files, mut prev, mut v) = (HashMap::new(), None, Vec::new());
        for l in [3, 3, 4] {
            source_lines(
                &mut v,
                &mut sources,
                &mut files,
                &mut prev,
                ("no/such/f.c", l, 0),
            );
        }
        assert_eq!(v.len(), 2);
        assert!(matches!(&v[0], Line::Text(t) if t == "no/such/f.c:3"));
    }

    #[test]
    fn hits_sum_over_instruction_ranges() {
        let a = Annotated {
            lines: Vec::new(),
            addrs: vec![0x10, 0x13, 0x18],
            end: 0x1a,
        };
        let mut h = Hits::default();
        h.add(0x10, 1, 10);
        h.add(0x14, 2, 20); // inside the second instruction
        h.add(0x18, 3, 30);
        h.add(0x40, 4, 40); // past the end: counted in the total only
        assert_eq!(h.per_insn(&a), vec![(1, 10), (2, 20), (3, 30)]);
        assert_eq!(h.samples, 10);
    }
}
