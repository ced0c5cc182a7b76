//! The system's libc with its separate debug file from libc6-dbg (found by build id under
//! /usr/lib/debug), compared with binutils' addr2line, whose answers perf 6.1 prints, and
//! llvm-addr2line (reported), which find the same file. binutils 2.40 names a DWARF 5
//! unit's primary file (file 0) for the lines a sequence gives before its first file change
//! (`strfroml.c:73` for what the line table, and LLVM, place in `strfrom-skeleton.c:73`);
//! we name binutils' file. LLVM names the outer function from DWARF (`abort`) where
//! binutils, perf and we take the symbol table's name at that address (`__GI_abort`).

mod common;

use std::path::Path;
use std::time::Instant;

use common::*;
use symbols::{Binary, DebugFinder, DebugSource, Svma, SymtabFile};

#[test]
fn libc_frames_match_addr2line_through_build_id_debug_file() {
    check(Path::new("/usr/lib/x86_64-linux-gnu/libc.so.6"));
}

/// The loader: its DWARF 5 tables hold most of binutils' file-0 lines
/// (`dl-get-cpu-features.c:321` for `dl-cacheinfo.h:321`).
#[test]
fn loader_frames_match_addr2line_through_build_id_debug_file() {
    check(Path::new("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"));
}

fn check(libc: &Path) {
    assert!(libc.exists(), "this test reads the system libc (libc6)");
    let started = Instant::now();
    let mut bin = Binary::open(libc, &DebugFinder::default()).expect("open libc");
    let debug = bin
        .debug_file()
        .unwrap_or_else(|r| panic!("libc's debug file: {r}; install it: apt-get install libc6-dbg"))
        .clone();
    assert_eq!(debug.source, DebugSource::BuildId);

    // A spread of addresses over every sized function in the debug file's symbol table.
    let mut addrs: Vec<u64> = Vec::new();
    let mut funcs: Vec<(u64, u64)> = nm_functions(&debug.path)
        .into_iter()
        .map(|(start, (size, _))| (start, size))
        .collect();
    funcs.sort();
    // About 1200 addresses: one in every third function of libc, several in
    // each of the loader's.
    let per_function = (3600 / funcs.len().max(1)).clamp(1, 8) as u64;
    for (i, (start, size)) in funcs.iter().enumerate() {
        if (i % 3 == 0 || per_function > 1) && *size > 0 {
            for k in 0..per_function {
                addrs.push(start + (i as u64 * 7 + k * 13) % size);
            }
        }
    }
    addrs.sort_unstable();
    addrs.dedup();
    assert!(addrs.len() > 500, "{} addresses", addrs.len());
    let want = addr2line_with("llvm-addr2line", libc, &addrs);
    let binutils = addr2line(libc, &addrs);

    let lookups = Instant::now();
    let (mut good, mut llvm_places) = (0, 0);
    let mut bad = Vec::new();
    for a in &addrs {
        let got: Vec<A2lFrame> = match bin.frames(Svma(*a)) {
            Ok(frames) => frames
                .iter()
                .map(|f| {
                    (
                        f.function_or_unknown().to_owned(),
                        f.file_or_unknown().to_owned(),
                        f.line.unwrap_or(0),
                    )
                })
                .collect(),
            // No DWARF: binutils answers from the symbol table.
            Err(_) => {
                let name = bin
                    .symbol(Svma(*a))
                    .map(|h| h.name())
                    .unwrap_or("??".into());
                let file = match bin.elf().symtab_file(Svma(*a)) {
                    Some(SymtabFile::Named(f)) => f.to_string(),
                    _ => "??".to_owned(),
                };
                vec![(name, file, 0)]
            }
        };
        let names = |v: &[A2lFrame]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        let places = |v: &[A2lFrame]| v.iter().map(|f| (f.1.clone(), f.2)).collect::<Vec<_>>();
        llvm_places += usize::from(places(&got) == places(&want[a]));
        if names(&got) == names(&binutils[a]) && places(&got) == places(&binutils[a]) {
            good += 1;
        } else {
            bad.push(format!(
                "{a:#x}:\n  llvm      {:?}\n  binutils  {:?}\n  ours      {got:?}",
                want[a], binutils[a]
            ));
        }
    }
    let elapsed = lookups.elapsed();
    let rate = good as f64 / addrs.len() as f64;
    eprintln!(
        "{}: frames match binutils' addr2line on {good}/{} addresses ({:.2}%), \
         llvm-addr2line's files and lines on {llvm_places}; open {:?}, lookups {:?} \
         (debug build)",
        libc.display(),
        addrs.len(),
        rate * 100.0,
        lookups.duration_since(started),
        elapsed
    );
    for m in bad.iter().take(8) {
        eprintln!("{m}");
    }
    assert!(rate >= 0.99);
}
