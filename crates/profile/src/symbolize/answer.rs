//! Answering one DSO's locations: opening its binary (or the vdso from
//! perf's cache, a JIT runtime's perf map, the kernel's symbols) and
//! finding each location's symbol, inline frames and source line.

use rustc_hash::FxHashMap as HashMap;

use symbols::{Binary, Reason, Svma};

use super::*;
use crate::collect::Loc;
use crate::machine::Dso;

pub(super) fn symbolize_dso(
    d: &Dso,
    ids: &[u32],
    locs: &[Loc],
    opts: &SymbolizeOptions,
    shared: Option<symbols::SharedDwarf>,
) -> DsoAnswer {
    if is_jit_map(&d.name) {
        return symbolize_jit(d, ids, locs);
    }
    if let Some(code) = &d.jit {
        return symbolize_jit_code(code, ids, locs, opts.srclines);
    }
    let mut bin = match open_shared(d, opts, shared) {
        Ok(b) => b,
        Err(r) => return unreadable(d, ids, r),
    };
    let mut names = HashMap::default();
    (answer_dso(&mut bin, &mut names, d, ids, locs, opts), None)
}

/// Opens a DSO's binary, reading its DWARF sections through `shared` (one
/// copy for every view of the binary) when given.
pub(super) fn open_shared(
    d: &Dso,
    opts: &SymbolizeOptions,
    shared: Option<symbols::SharedDwarf>,
) -> Result<Binary, Reason> {
    let mut bin = open_dso(d, opts)?;
    if let Some(s) = shared {
        bin.share_dwarf(s);
    }
    Ok(bin)
}

/// The bytes of the x86 instruction at each of the user-space locations
/// `ids`, read from its DSO's file at the location's offset, as perf's
/// `insn` field shows them: up to 16 bytes, cut to the instruction's
/// decoded length. Locations without a readable file (the kernel, JIT
/// code, anonymous memory, a file whose build id differs) have none.
pub fn instruction_bytes(
    locs: &[Loc],
    ids: impl IntoIterator<Item = u32>,
    dsos: &[Dso],
    opts: &SymbolizeOptions,
) -> HashMap<u32, Vec<u8>> {
    let mut by_dso: HashMap<u32, Vec<u32>> = HashMap::default();
    for id in ids {
        if let Some(l) = locs.get(id as usize) {
            if l.dso != crate::collect::NO_DSO && l.level == b'.' {
                by_dso.entry(l.dso).or_default().push(id);
            }
        }
    }
    let mut out = HashMap::default();
    for (dso, ids) in by_dso {
        let Some(d) = dsos.get(dso as usize) else {
            continue;
        };
        if is_jit_map(&d.name) || d.jit.is_some() {
            continue;
        }
        let Ok(bin) = open_dso(d, opts) else {
            continue;
        };
        let elf = bin.elf();
        let bitness = if elf.is_x86_64() {
            64
        } else if elf.is_x86_32() {
            32
        } else {
            continue;
        };
        for id in ids {
            let Some(bytes) = elf.file_bytes(locs[id as usize].rel, 16) else {
                continue;
            };
            if let Some(n) = symbols::disasm::instruction_length(bytes, bitness) {
                out.insert(id, bytes[..n].to_vec());
            }
        }
    }
    out
}

/// perf's name for a JIT runtime's symbol map: `/tmp/perf-PID.map`.
pub(super) fn is_jit_map(name: &str) -> bool {
    name.strip_prefix("/tmp/perf-")
        .and_then(|r| r.strip_suffix(".map"))
        .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// Opens the binary behind a DSO that names a file (or the vdso, from
/// perf's build-id cache).
pub(crate) fn open_dso(d: &Dso, opts: &SymbolizeOptions) -> Result<Binary, Reason> {
    if d.name == "[vdso]" {
        let elf = match d.build_id.as_deref() {
            Some(id) => symbols::find_vdso(id, &opts.finder)?,
            // No build id (the vdso only in call chains, which perf's and
            // sear's recorders do not mark as hit): this machine's own, as
            // perf reads it.
            None => symbols::read_own_vdso()
                .ok()
                .and_then(|image| symbols::ElfFile::from_bytes("[vdso]", &image).ok())
                .ok_or(Reason::NoSuchFile)?,
        };
        Ok(Binary::from_elf(elf))
    } else if d.name.starts_with('/') {
        let mut bin = open_binary(&d.name, d.build_id.as_deref(), &opts.finder)?;
        if !opts.srclines {
            // Inline frames are named from their raw names, and no file is shown.
            bin.set_frame_detail(symbols::FrameDetail::Names);
        }
        Ok(bin)
    } else {
        // Anonymous memory, [heap], [stack], [unknown]: nothing to read.
        Err(Reason::NoSuchFile)
    }
}

/// The answers for locations `ids` of the DSO `d`, read from `bin`;
/// `printed` keeps each raw name's printed form across calls.
pub(super) fn answer_dso(
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
    #[derive(Clone)]
    struct Pending {
        name: Result<u32, String>,
        start: u64,
        end: u64,
        size: u64,
        inline_frame: bool,
        object: bool,
    }
    /// A location's answer with its names still pending.
    #[derive(Clone)]
    struct PendingLoc {
        loc: u32,
        found: Option<(Pending, Vec<Pending>)>,
        line: Option<(String, u32)>,
        frame_lines: Vec<(String, u32)>,
        offset: u64,
        svma: Option<u64>,
        /// The earlier location whose answer this one shares, or `NONE`.
        same: u32,
    }
    let mut pending: Vec<PendingLoc> = Vec::with_capacity(ids.len());
    // The answer depends on the address in the file and how it came into
    // the stack only: the same code in many processes (mapped at other
    // addresses) is looked up once.
    let mut looked_up: HashMap<(u64, Origin), usize> = HashMap::default();
    for &i in ids {
        let l = &locs[i as usize];
        match looked_up.entry(l.answer_key()) {
            std::collections::hash_map::Entry::Occupied(o) => {
                let first: &PendingLoc = &pending[*o.get()];
                pending.push(PendingLoc {
                    loc: i,
                    found: None,
                    line: None,
                    frame_lines: Vec::new(),
                    offset: 0,
                    svma: None,
                    same: first.loc,
                });
                continue;
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(pending.len());
            }
        }
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
                same: NONE,
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
        // So is one whose call site would be in a kernel function's
        // padding (see [`is_padding`]).
        let hit = match bin.symbol(svma) {
            Err(_) if l.origin == Origin::Return => bin
                .symbol(Svma(svma.0.wrapping_add(1)))
                .map(|h| (h, 1))
                .map_err(|_| ()),
            Ok(h) if l.origin == Origin::Return && is_padding(h.raw_name) => {
                match bin.symbol(Svma(svma.0.wrapping_add(1))) {
                    Ok(next) => Ok((next, 1)),
                    Err(_) => Ok((h, 0)),
                }
            }
            h => h.map(|h| (h, 0)).map_err(|_| ()),
        };
        let (raw, start, end, size, offset, object) = match hit {
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
                    hit.object,
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
                    same: NONE,
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
                        object: false,
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
            object,
        };
        pending.push(PendingLoc {
            loc: i,
            found: Some((real, frames)),
            line,
            frame_lines,
            offset,
            svma: own_svma,
            same: NONE,
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
            if p.same != NONE {
                return LocAnswer::same_as(p.loc, p.same);
            }
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
                            object: false,
                        }
                    })
                    .collect();
                let real = RawFrame {
                    name,
                    start: real.start,
                    end: real.end,
                    size: real.size,
                    inlined: false,
                    object: real.object,
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
                same: NONE,
            }
        })
        .collect()
}

/// addr2line's answer from the symbol table alone (`file:?`, which perf shows
/// as `file:0`).
pub(super) fn symtab_answer(f: &symbols::SymtabFile) -> (String, u32) {
    match f {
        symbols::SymtabFile::Unnamed => ("??".to_owned(), 0),
        symbols::SymtabFile::Named(f) => (f.to_string(), 0),
    }
}

/// The position perf's srcline shows for an address: the innermost inline
/// frame's file (its path; srcline shows the base name) and line, as the
/// first record of `addr2line -i` (`??` and 0 for what DWARF leaves out);
/// None where no line table covers the address.
pub(super) fn source_line(bin: &mut Binary, svma: Svma) -> Option<(String, u32)> {
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
    let on_disk = Binary::open(symbols::on_disk(path), finder);
    match (on_disk, build_id) {
        (Ok(b), None) => Ok(b),
        (Ok(b), Some(want)) if b.elf().build_id().is_none_or(|id| id == want) => Ok(b),
        (first, Some(want)) => {
            if let Some(cached) = finder.binary_by_build_id(want) {
                if let Ok(b) = Binary::open(&cached, finder) {
                    return Ok(b);
                }
            }
            Err(match first {
                Ok(_) => Reason::NotTheRecordedBinary,
                Err(e) => e.reason(),
            })
        }
        (Err(e), None) => Err(e.reason()),
    }
}

/// Names perf gives the kernel image and its modules.
pub(super) fn is_kernel_dso(name: &str) -> bool {
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

/// Whether a symbol is a kernel function's padding (`__pfx_` before each
/// function since Linux 6.2, `__cfi_` with kCFI): filler, never a call, so
/// an address whose `address - 1` falls there is not a return address but
/// an interrupted function's first instruction (the kernel's unwinder gives
/// the interrupted IP of an interrupt or exception frame as recorded).
fn is_padding(name: &str) -> bool {
    name.starts_with("__pfx_") || name.starts_with("__cfi_")
}

pub(super) fn symbolize_kernel(
    d: &Dso,
    ids: &[u32],
    locs: &[Loc],
    kernel: &Result<symbols::Kallsyms, Reason>,
) -> DsoAnswer {
    let k = match kernel {
        Ok(k) => k,
        Err(r) => return unreadable(d, ids, *r),
    };
    let short = crate::machine::dso_short_name(&d.name);
    let res = ids
        .iter()
        .map(|&i| {
            let l = &locs[i as usize];
            let at = l.lookup_ip();
            let found = k.lookup(at).ok().and_then(|hit| {
                // An address after a function's padding is the function's
                // first instruction, interrupted: taken as recorded.
                let (hit, moved) = match hit {
                    h if l.origin == Origin::Return && is_padding(h.name) => {
                        match k.lookup(at.wrapping_add(1)) {
                            Ok(next) => (next, 1),
                            Err(_) => (h, 0),
                        }
                    }
                    h => (h, 0),
                };
                // A module's symbol counts only inside that module's map.
                let ok = match hit.module {
                    None => d.name.starts_with("[kernel.kallsyms]"),
                    Some(m) => m == short,
                };
                let offset = hit.offset.wrapping_sub(moved);
                ok.then(|| plain_symbol(hit.name, at, offset, hit.size))
                    .map(|f| (f, offset))
            });
            plain_answer(i, found)
        })
        .collect();
    (res, None)
}

/// A jitdump's function (see [`crate::jit`]): one symbol over the code, at
/// the offset perf inject's ELF file puts it.
pub(super) fn symbolize_jit_code(
    code: &crate::jit::JitCode,
    ids: &[u32],
    locs: &[Loc],
    srclines: bool,
) -> DsoAnswer {
    let start = crate::jit::TEXT_OFFSET;
    let res = ids
        .iter()
        .map(|&i| {
            // The map-relative address (perf inject's file's).
            let l = &locs[i as usize];
            let ip = l.rel.wrapping_sub(l.ip.wrapping_sub(l.lookup_ip()));
            let found = (ip >= start && ip - start < code.size.max(1)).then(|| {
                let offset = ip - start;
                (plain_symbol(&code.name, ip, offset, code.size), offset)
            });
            let mut answer = plain_answer(i, found);
            // The source position the runtime gave for the code from there on.
            if srclines && answer.found.is_some() {
                let at = code.load_addr.wrapping_add(ip - start);
                let n = code.lines.partition_point(|e| e.addr <= at);
                if let Some(e) = n.checked_sub(1).map(|k| &code.lines[k]) {
                    answer.line = Some((e.file.to_string(), e.line));
                    answer.frame_lines = vec![(e.file.to_string(), e.line)];
                }
            }
            answer
        })
        .collect();
    (res, None)
}

pub(super) fn symbolize_jit(d: &Dso, ids: &[u32], locs: &[Loc]) -> DsoAnswer {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel_loc(ip: u64, origin: Origin) -> Loc {
        Loc {
            ip,
            rel: ip,
            dso: 0,
            level: b'k',
            origin,
            map_size: 0,
        }
    }

    /// A kernel return address is looked up inside its call, except where
    /// that lands in a function's padding: there the address is an
    /// interrupted function's first instruction (an interrupt frame's IP),
    /// named as recorded, as perf names it.
    #[test]
    fn kernel_address_after_padding_is_the_function() {
        let k = Ok(symbols::Kallsyms::parse(
            "ffffffff81000000 T _stext\n\
             ffffffff817d31b0 T __pfx_ext4_es_lookup_extent\n\
             ffffffff817d31c0 T ext4_es_lookup_extent\n\
             ffffffff817d3400 T __pfx_ext4_map_blocks\n\
             ffffffff817d3410 T ext4_map_blocks\n\
             ffffffff817d3800 T _etext\n",
        ));
        let d = Dso {
            name: "[kernel.kallsyms]".into(),
            build_id: None,
            hit: true,
            jit: None,
        };
        let locs = [
            kernel_loc(0xffffffff817d31c0, Origin::Return),
            kernel_loc(0xffffffff817d3450, Origin::Return),
            kernel_loc(0xffffffff817d3410, Origin::Exact),
            // A call that ends the function before: inside it.
            kernel_loc(0xffffffff817d3400, Origin::Return),
        ];
        let (res, warn) = symbolize_kernel(&d, &[0, 1, 2, 3], &locs, &k);
        assert!(warn.is_none());
        let named: Vec<(String, u64, u64)> = res
            .iter()
            .map(|a| {
                let (f, _) = a.found.as_ref().expect("found");
                (f.name.clone(), f.start, a.offset)
            })
            .collect();
        assert_eq!(
            named,
            [
                // Looked up at ip - 1 but found at ip: the offset is the
                // looked-up address's, -1, and reads +0x0 with the 1 back.
                ("ext4_es_lookup_extent".into(), 0xffffffff817d31c0, u64::MAX),
                ("ext4_map_blocks".into(), 0xffffffff817d3410, 0x3f),
                ("ext4_map_blocks".into(), 0xffffffff817d3410, 0),
                ("ext4_es_lookup_extent".into(), 0xffffffff817d31c0, 0x23f),
            ]
        );
    }
}
