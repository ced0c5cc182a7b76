//! The system's libc with its separate debug file from libc6-dbg (found by build id under
//! /usr/lib/debug), compared with llvm-addr2line and binutils' addr2line, which find the
//! same file. binutils 2.40 names the unit's primary file for lines that come from an
//! included one (`strfroml.c:73` for a line of `strfrom-skeleton.c`); LLVM and we name the
//! included file, so LLVM is the oracle for files and lines. LLVM names the outer function
//! from DWARF (`abort`) where binutils, perf and we take the symbol table's name at that
//! address (`__GI_abort`), so binutils is the oracle for function names.

mod common;

use std::path::Path;
use std::time::Instant;

use common::*;
use symbols::{Binary, DebugFinder, DebugSource, Svma};

#[test]
fn libc_frames_match_addr2line_through_build_id_debug_file() {
    let libc = Path::new("/usr/lib/x86_64-linux-gnu/libc.so.6");
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
    for (i, (start, size)) in funcs.iter().enumerate() {
        if i % 3 == 0 && *size > 0 {
            addrs.push(start + (i as u64 * 7) % size);
        }
    }
    assert!(addrs.len() > 500, "{} addresses", addrs.len());
    let want = addr2line_with("llvm-addr2line", libc, &addrs);
    let binutils = addr2line(libc, &addrs);

    let lookups = Instant::now();
    let (mut good, mut binutils_good) = (0, 0);
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
            Err(_) => {
                let name = bin
                    .symbol(Svma(*a))
                    .map(|h| h.name())
                    .unwrap_or("??".into());
                vec![(name, "??".to_owned(), 0)]
            }
        };
        let names = |v: &[A2lFrame]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        let places = |v: &[A2lFrame]| v.iter().map(|f| (f.1.clone(), f.2)).collect::<Vec<_>>();
        binutils_good += usize::from(got == binutils[a]);
        if names(&got) == names(&binutils[a]) && places(&got) == places(&want[a]) {
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
        "libc: frames match (names as binutils, places as llvm-addr2line) on {good}/{} \
         addresses ({:.2}%), all of binutils on {binutils_good}; open {:?}, lookups {:?} \
         (debug build)",
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
