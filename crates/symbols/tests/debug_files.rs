//! Separate debug files (build id, debuglink), mismatches, PT_LOAD mapping and PLT names,
//! checked against binutils on programs compiled by the test.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use symbols::{Binary, DebugFinder, DebugSource, ElfFile, FileOffset, Reason, Svma};

struct Built {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    full: PathBuf,
    stripped: PathBuf,
    debug: PathBuf,
}

/// The C test program with debug info, a stripped copy and its `--only-keep-debug` file.
fn build(variant: &str) -> Built {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().to_owned();
    let define = format!("-DVARIANT_{variant}");
    let full = compile(&dir, "prog", C_SRC, false, &[&define]);
    let debug = dir.join("prog.debug");
    run(tool("objcopy")
        .arg("--only-keep-debug")
        .arg(&full)
        .arg(&debug));
    let stripped = dir.join("prog.stripped");
    run(tool("strip").arg("-o").arg(&stripped).arg(&full));
    Built {
        _dir: tmp,
        dir,
        full,
        stripped,
        debug,
    }
}

fn build_id_path(root: &Path, elf: &ElfFile) -> PathBuf {
    let id = elf.build_id_hex().expect("gcc writes a build id");
    root.join(".build-id")
        .join(&id[..2])
        .join(format!("{}.debug", &id[2..]))
}

fn place(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst.parent().expect("parent")).expect("mkdir");
    std::fs::copy(src, dst).expect("copy debug file");
}

fn hot_addresses(full: &Path) -> Vec<u64> {
    let funcs = nm_functions(full);
    let mut out = Vec::new();
    for (start, (size, names)) in funcs {
        if names
            .iter()
            .any(|n| n == "hot_c" || n == "local_helper" || n == "main")
        {
            out.extend(start..start + size);
        }
    }
    assert!(out.len() > 50);
    out
}

#[test]
fn build_id_matches_readelf() {
    let b = build("id");
    let out = run(tool("readelf").arg("-n").arg(&b.full));
    let want = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("readelf shows a build id");
    let elf = ElfFile::open(&b.full).expect("open");
    assert_eq!(elf.build_id_hex().as_deref(), Some(want.trim()));
}

#[test]
fn stripped_binary_uses_debug_file_found_by_build_id() {
    let b = build("bid");
    let root = b.dir.join("debugroot");
    let stripped_elf = ElfFile::open(&b.stripped).expect("open stripped");
    assert!(!stripped_elf.has_dwarf());
    place(&b.debug, &build_id_path(&root, &stripped_elf));

    let finder = DebugFinder::with_roots(vec![root.clone()], Vec::new());
    let mut stripped = Binary::open(&b.stripped, &finder).expect("open");
    let found = stripped.debug_file().expect("debug file found");
    assert_eq!(found.source, DebugSource::BuildId);
    assert!(found.path.starts_with(&root));

    let mut full = Binary::open(&b.full, &DebugFinder::with_roots(vec![], vec![])).expect("open");
    assert_eq!(
        full.debug_file().expect("own dwarf").source,
        DebugSource::Binary
    );
    let addrs = hot_addresses(&b.full);
    for a in &addrs {
        let want_sym = full.symbol(Svma(*a)).map(|h| (h.name(), h.offset));
        let got_sym = stripped.symbol(Svma(*a)).map(|h| (h.name(), h.offset));
        assert_eq!(got_sym, want_sym, "symbol at {a:#x}");
        let want = full.frames(Svma(*a)).map(<[_]>::to_vec);
        let got = stripped.frames(Svma(*a)).map(<[_]>::to_vec);
        assert_eq!(got, want, "frames at {a:#x}");
    }
    assert!(full.frames(Svma(addrs[0])).is_ok());
}

#[test]
fn stripped_binary_uses_debuglink_beside_it() {
    let b = build("link");
    // objcopy records the name and CRC of the debug file it is given.
    run(tool("objcopy")
        .arg(format!("--add-gnu-debuglink={}", b.debug.display()))
        .arg(&b.stripped));
    let elf = ElfFile::open(&b.stripped).expect("open");
    assert_eq!(elf.debuglink().map(|(n, _)| n), Some("prog.debug"));

    let finder = DebugFinder::with_roots(Vec::new(), Vec::new());
    let mut bin = Binary::open(&b.stripped, &finder).expect("open");
    let found = bin.debug_file().expect("found by debuglink");
    assert_eq!(found.source, DebugSource::Debuglink);
    assert_eq!(found.path, b.debug);
    let a = hot_addresses(&b.full)[0];
    let frames = bin.frames(Svma(a)).expect("frames");
    assert!(!frames.is_empty());
    assert!(frames[0].file.as_deref().unwrap_or("").ends_with("prog.c"));
}

#[test]
fn mismatched_debug_file_is_refused_with_a_reason() {
    let b = build("one");
    let other = build("two");
    let stripped_elf = ElfFile::open(&b.stripped).expect("open");
    let other_elf = ElfFile::open(&other.full).expect("open");
    assert_ne!(stripped_elf.build_id(), other_elf.build_id());

    // The wrong debug file sits where the right one would be.
    let root = b.dir.join("debugroot");
    place(&other.debug, &build_id_path(&root, &stripped_elf));
    let finder = DebugFinder::with_roots(vec![root], Vec::new());
    let mut bin = Binary::open(&b.stripped, &finder).expect("open");
    assert_eq!(bin.debug_file().err(), Some(Reason::BuildIdMismatch));

    let local_helper = nm_functions(&b.full)
        .into_iter()
        .find(|(_, (_, names))| names.iter().any(|n| n == "local_helper"))
        .map(|(start, _)| start)
        .expect("local_helper in nm");
    assert_eq!(bin.symbol(Svma(local_helper)).err(), Some(Reason::NoSymbol));
    assert_eq!(
        bin.frames(Svma(local_helper)).err(),
        Some(Reason::BuildIdMismatch)
    );

    // Same for a debuglink whose CRC does not match.
    let linked = b.dir.join("linked");
    std::fs::create_dir_all(&linked).expect("mkdir");
    let bin_path = linked.join("prog");
    std::fs::copy(&b.stripped, &bin_path).expect("copy");
    run(tool("objcopy")
        .arg(format!("--add-gnu-debuglink={}", b.debug.display()))
        .arg(&bin_path));
    std::fs::copy(&other.debug, linked.join("prog.debug")).expect("copy");
    let mut bin = Binary::open(&bin_path, &DebugFinder::with_roots(vec![], vec![])).expect("open");
    assert_eq!(bin.debug_file().err(), Some(Reason::BuildIdMismatch));
    assert_eq!(
        bin.frames(Svma(local_helper)).err(),
        Some(Reason::BuildIdMismatch)
    );
}

#[test]
fn no_debug_info_is_a_reason() {
    let b = build("none");
    let mut bin =
        Binary::open(&b.stripped, &DebugFinder::with_roots(vec![], vec![])).expect("open");
    assert_eq!(bin.debug_file().err(), Some(Reason::NoDebugInfo));
    assert_eq!(bin.frames(Svma(0x1000)).err(), Some(Reason::NoDebugInfo));
}

#[test]
fn missing_and_non_elf_files_are_reasons() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = ElfFile::open(dir.path().join("nope")).expect_err("missing");
    assert_eq!(e.reason(), Reason::NoSuchFile);
    let text = dir.path().join("text");
    std::fs::write(&text, b"#!/bin/sh\necho hi\n").expect("write");
    assert_eq!(
        ElfFile::open(&text).expect_err("not elf").reason(),
        Reason::NotElf
    );
}

#[test]
fn file_offsets_map_to_svma_like_readelf_sections() {
    let b = build("off");
    let elf = ElfFile::open(&b.full).expect("open");
    // .text's address and file offset, from readelf -S.
    let out = run(tool("readelf").arg("-SW").arg(&b.full));
    let line = out
        .lines()
        .find(|l| l.contains(" .text "))
        .expect(".text in readelf -S");
    let f: Vec<&str> = line
        .split(']')
        .nth(1)
        .expect("fields")
        .split_whitespace()
        .collect();
    let addr = u64::from_str_radix(f[2], 16).expect("addr");
    let off = u64::from_str_radix(f[3], 16).expect("off");
    let mut checked = 0;
    for (start, _) in nm_functions(&b.full) {
        let file_off = start - addr + off;
        assert_eq!(
            elf.file_offset_to_svma(FileOffset(file_off)),
            Ok(Svma(start))
        );
        // As an MMAP record of the text segment would give it.
        let map_start = 0x5555_5555_0000u64;
        let seg = elf
            .load_segments()
            .iter()
            .find(|s| file_off >= s.file_offset && file_off < s.file_offset + s.file_size)
            .expect("segment");
        let pgoff = seg.file_offset & !0xfff;
        let avma = map_start + (file_off - pgoff);
        assert_eq!(elf.avma_to_svma(avma, map_start, pgoff), Ok(Svma(start)));
        checked += 1;
    }
    assert!(checked > 3);
    assert_eq!(
        elf.file_offset_to_svma(FileOffset(u64::MAX - 1)),
        Err(Reason::NotMapped)
    );
    let loads = run(tool("readelf").arg("-lW").arg(&b.full));
    let n_loads = loads
        .lines()
        .filter(|l| l.trim_start().starts_with("LOAD"))
        .count();
    assert_eq!(elf.load_segments().len(), n_loads);
}

#[test]
fn plt_entries_are_named_like_objdump() {
    let b = build("plt");
    let elf = ElfFile::open(&b.full).expect("open");
    let out = run(tool("objdump")
        .args(["-d", "-j", ".plt", "-j", ".plt.sec"])
        .arg(&b.full));
    let mut seen = 0;
    for line in out.lines() {
        // "0000000000001030 <puts@plt>:"
        let Some((addr, rest)) = line.split_once(" <") else {
            continue;
        };
        let Some(name) = rest.strip_suffix(">:") else {
            continue;
        };
        if !name.ends_with("@plt") {
            continue;
        }
        let addr = u64::from_str_radix(addr.trim(), 16).expect("address");
        let hit = elf.lookup(Svma(addr + 4)).expect("plt symbol");
        // perf stretches the zero-sized `_init` before `.plt` over the entries and
        // finds it first for some of them, by its tree's shape (tests/plt.rs checks
        // which against perf): the entry's own name otherwise.
        if hit.raw_name == "_init" {
            assert!(hit.offset > 4 && hit.offset < hit.size, "{hit:?}");
        } else {
            assert_eq!((hit.raw_name, hit.offset), (name, 4));
        }
        seen += 1;
    }
    assert!(
        seen >= 3,
        "expected malloc, free, printf... in the PLT:\n{out}"
    );
}

#[test]
fn perf_buildid_cache_layout_is_searched() {
    let b = build("cache");
    let cache = b.dir.join("dot-debug");
    let stripped_elf = ElfFile::open(&b.stripped).expect("open");
    let id = stripped_elf.build_id_hex().expect("build id");
    // As `perf buildid-cache -a` lays it out: the unstripped binary saved as `elf`.
    let entry = cache.join(".build-id").join(&id[..2]).join(&id[2..]);
    place(&b.full, &entry.join("elf"));

    let finder = DebugFinder::with_roots(Vec::new(), vec![cache]);
    assert_eq!(
        finder.cached_binary(stripped_elf.build_id().expect("id")),
        Some(entry.join("elf"))
    );
    assert_eq!(finder.cached_binary(&[1, 2, 3, 4]), None);
    let mut bin = Binary::open(&b.stripped, &finder).expect("open");
    let found = bin.debug_file().expect("found in the cache");
    assert_eq!(found.path, entry.join("elf"));
    let a = hot_addresses(&b.full)[0];
    assert!(bin.frames(Svma(a)).is_ok());
}

/// MiniDebugInfo: a stripped binary carrying its symbol table xz-compressed in
/// `.gnu_debugdata`, made here the way distributions make it.
#[test]
fn mini_debuginfo_symbols_are_used() {
    let b = build("mini");
    let mini = b.dir.join("mini");
    run(tool("objcopy")
        .args(["--strip-debug", "--remove-section=.comment"])
        .arg(&b.full)
        .arg(&mini));
    run(tool("xz").arg("-k").arg(&mini));
    let with_mini = b.dir.join("prog.mini");
    run(tool("objcopy")
        .arg(format!(
            "--add-section=.gnu_debugdata={}.xz",
            mini.display()
        ))
        .arg(&b.stripped)
        .arg(&with_mini));

    let plain = ElfFile::open(&b.stripped).expect("open");
    let elf = ElfFile::open(&with_mini).expect("open");
    let finder = DebugFinder::with_roots(Vec::new(), Vec::new());
    let bin = Binary::open(&with_mini, &finder).expect("open");
    let full = Binary::open(&b.full, &finder).expect("open");
    let addrs = hot_addresses(&b.full);
    for a in &addrs {
        assert_eq!(
            plain.lookup(Svma(*a)).err(),
            Some(Reason::NoSymbol),
            "{a:#x}"
        );
        let want = full.symbol(Svma(*a)).map(|h| (h.name(), h.offset));
        assert_eq!(elf.lookup(Svma(*a)).map(|h| (h.name(), h.offset)), want);
        assert_eq!(bin.symbol(Svma(*a)).map(|h| (h.name(), h.offset)), want);
    }
    // A corrupt section is a warning, not a failure: the binary still opens.
    let corrupt = b.dir.join("corrupt.xz");
    std::fs::write(&corrupt, b"\xfd7zXZ\0 not really xz").expect("write");
    let with_corrupt = b.dir.join("prog.corrupt");
    run(tool("objcopy")
        .arg(format!(
            "--add-section=.gnu_debugdata={}",
            corrupt.display()
        ))
        .arg(&b.stripped)
        .arg(&with_corrupt));
    let elf = ElfFile::open(&with_corrupt).expect("open");
    assert_eq!(elf.lookup(Svma(addrs[0])).err(), Some(Reason::NoSymbol));
}

/// Compressed DWARF (`-gz`, SHF_COMPRESSED sections) gives the same frames.
#[test]
fn compressed_debug_sections_give_the_same_frames() {
    let b = build("gz");
    let gz = compile(
        &b.dir,
        "prog_gz",
        C_SRC,
        false,
        &["-DVARIANT_gz", "-gz=zlib"],
    );
    let out = run(tool("readelf").arg("-SW").arg(&gz));
    assert!(
        out.lines()
            .any(|l| l.contains(".debug_info") && l.split_whitespace().any(|f| f.contains('C'))),
        "gcc -gz should compress .debug_info:\n{out}"
    );
    let finder = DebugFinder::with_roots(Vec::new(), Vec::new());
    let mut plain = Binary::open(&b.full, &finder).expect("open");
    let mut comp = Binary::open(&gz, &finder).expect("open");
    for a in hot_addresses(&b.full) {
        let want = plain.frames(Svma(a)).map(<[_]>::to_vec);
        assert!(want.is_ok());
        let mut got = comp.frames(Svma(a)).map(<[_]>::to_vec);
        // Only the source file's name differs between the two builds.
        if let Ok(frames) = &mut got {
            for f in frames {
                f.file = f.file.take().map(|p| p.replace("prog_gz.c", "prog.c"));
            }
        }
        assert_eq!(got, want, "{a:#x}");
    }
}

#[test]
fn a_directory_is_not_a_regular_file_not_missing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = ElfFile::open(dir.path()).expect_err("a directory is no binary");
    assert_eq!(e.reason(), Reason::NotRegularFile);
}
