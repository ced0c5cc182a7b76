//! Symbols, inline frames and demangled names compared with binutils (nm, addr2line,
//! c++filt) on programs compiled by the test.

mod common;

use std::path::Path;

use common::*;
use symbols::{demangle, demangle_full, Binary, DebugFinder, FrameDetail, Svma};

fn no_debug_dirs() -> DebugFinder {
    DebugFinder::with_roots(Vec::new(), Vec::new())
}

/// Every address inside every sized function symbol.
fn function_addresses(bin: &Path) -> Vec<(u64, u64, Vec<String>)> {
    let mut out = Vec::new();
    for (start, (size, names)) in nm_functions(bin) {
        for a in start..start + size {
            out.push((a, start, names.clone()));
        }
    }
    out.sort();
    out
}

fn check_symbols(bin: &Path) {
    let b = Binary::open(bin, &no_debug_dirs()).expect("open");
    let addrs = function_addresses(bin);
    assert!(addrs.len() > 200, "too few addresses: {}", addrs.len());
    let mut good = 0;
    let mut bad = Vec::new();
    for (a, start, names) in &addrs {
        match b.symbol(Svma(*a)) {
            Ok(hit) if names.iter().any(|n| n == hit.raw_name) && hit.offset == a - start => {
                good += 1
            }
            other => bad.push(format!(
                "{a:#x}: want {names:?}+{:#x}, got {other:?}",
                a - start
            )),
        }
    }
    let rate = good as f64 / addrs.len() as f64;
    eprintln!(
        "{}: symbol+offset matches nm on {good}/{} addresses ({:.2}%)",
        bin.display(),
        addrs.len(),
        rate * 100.0
    );
    assert!(rate >= 0.99, "mismatches: {:#?}", &bad[..bad.len().min(20)]);
}

/// Our frames as addr2line's tuples, naming functions with `name_of(raw, demangled)`.
fn frames_as_a2l(b: &mut Binary, a: u64, name_of: &dyn Fn(&str, &str) -> String) -> Vec<A2lFrame> {
    match b.frames(Svma(a)) {
        Ok(frames) => {
            assert!(!frames.last().expect("non-empty").inlined);
            assert!(frames[..frames.len() - 1].iter().all(|f| f.inlined));
            frames
                .iter()
                .map(|f| {
                    let raw = f.raw_function.as_deref().unwrap_or("??");
                    (
                        name_of(raw, f.function_or_unknown()),
                        f.file_or_unknown().to_owned(),
                        f.line.unwrap_or(0),
                    )
                })
                .collect()
        }
        // addr2line falls back to the symbol table where DWARF has nothing.
        Err(_) => {
            let name = b.symbol(Svma(a)).map(|h| h.name()).unwrap_or("??".into());
            vec![(name, "??".to_owned(), 0)]
        }
    }
}

/// Compares frames with addr2line twice: names demangled by c++filt from our raw names
/// (checks the DWARF walk alone; must be >= 99%), and names from our own demangler
/// (end to end; reported, and bounded by the demangling rate).
fn check_frames(bin: &Path, end_to_end_floor: f64) {
    let mut b = Binary::open(bin, &no_debug_dirs()).expect("open");
    let addrs: Vec<u64> = function_addresses(bin).into_iter().map(|t| t.0).collect();
    let want = addr2line(bin, &addrs);

    let mut raw_names = std::collections::BTreeSet::new();
    for a in &addrs {
        if let Ok(frames) = b.frames(Svma(*a)) {
            raw_names.extend(frames.iter().filter_map(|f| f.raw_function.clone()));
        }
    }
    let raw_names: Vec<String> = raw_names.into_iter().collect();
    let input: String = raw_names.iter().map(|n| format!("{n}\n")).collect();
    let filtered = run_stdin(&mut tool("c++filt"), &input);
    let cxxfilt: std::collections::HashMap<&str, &str> = raw_names
        .iter()
        .map(String::as_str)
        .zip(filtered.lines())
        .collect();

    let (mut walk_good, mut e2e_good, mut inlined_seen) = (0, 0, 0);
    let mut bad = Vec::new();
    for a in &addrs {
        let w = &want[a];
        let walk = frames_as_a2l(&mut b, *a, &|raw, ours| {
            cxxfilt.get(raw).map_or(ours.to_owned(), |s| s.to_string())
        });
        let e2e = frames_as_a2l(&mut b, *a, &|_, ours| ours.to_owned());
        inlined_seen += usize::from(walk.len() > 1);
        if &walk == w {
            walk_good += 1;
        } else {
            bad.push(format!("{a:#x}:\n  addr2line {w:?}\n  ours      {walk:?}"));
        }
        e2e_good += usize::from(&e2e == w);
    }
    // The names-only lookup a report makes: the same frames, raw names and lines, with
    // no file and no demangled name where a raw one is known.
    let mut lean = Binary::open(bin, &no_debug_dirs()).expect("open");
    lean.set_frame_detail(FrameDetail::Names);
    let mut compared = 0;
    for a in &addrs {
        let full = b.frames(Svma(*a)).map(<[_]>::to_vec);
        let names = lean.frames(Svma(*a)).map(<[_]>::to_vec);
        assert_eq!(full.is_ok(), names.is_ok(), "{a:#x}");
        let (Ok(full), Ok(names)) = (full, names) else {
            continue;
        };
        compared += 1;
        assert_eq!(full.len(), names.len(), "{a:#x}");
        for (f, n) in full.iter().zip(&names) {
            assert_eq!(f.raw_function, n.raw_function, "{a:#x}");
            assert_eq!((f.line, f.inlined), (n.line, n.inlined), "{a:#x}");
            assert_eq!(n.file, None, "{a:#x}");
            if n.raw_function.is_some() {
                assert_eq!(n.function, None, "{a:#x}");
            }
        }
    }
    assert!(compared > 10, "only {compared} addresses had frames");
    let n = addrs.len() as f64;
    let (walk_rate, e2e_rate) = (walk_good as f64 / n, e2e_good as f64 / n);
    eprintln!(
        "{}: inline frames (names via c++filt) match addr2line -f -i -C on {walk_good}/{} \
         addresses ({:.2}%), {inlined_seen} with inlining; with our demangler {e2e_good} ({:.2}%)",
        bin.display(),
        addrs.len(),
        walk_rate * 100.0,
        e2e_rate * 100.0
    );
    assert!(
        inlined_seen > 10,
        "the test program should exercise inlining"
    );
    for m in bad.iter().take(8) {
        eprintln!("{m}");
    }
    assert!(
        walk_rate >= 0.99,
        "mismatches: {}",
        bad[..bad.len().min(3)].join("\n")
    );
    assert!(
        e2e_rate >= end_to_end_floor,
        "end to end {:.2}%",
        e2e_rate * 100.0
    );
}

#[test]
fn c_symbols_and_frames_match_binutils() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = compile(dir.path(), "prog_c", C_SRC, false, &[]);
    check_symbols(&bin);
    check_frames(&bin, 0.99);
}

#[test]
fn cxx_symbols_and_frames_match_binutils() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = compile(dir.path(), "prog_cc", CXX_SRC, true, &[]);
    check_symbols(&bin);
    check_frames(&bin, 0.99);
}

fn demangle_rate(names: &[String]) -> (usize, Vec<String>) {
    let input: String = names.iter().map(|n| format!("{n}\n")).collect();
    let want = run_stdin(&mut tool("c++filt"), &input);
    let mut good = 0;
    let mut bad = Vec::new();
    for (raw, w) in names.iter().zip(want.lines()) {
        let ours = demangle(raw);
        if ours == w {
            good += 1;
        } else {
            bad.push(format!("{raw}\n  c++filt {w}\n  ours    {ours}"));
        }
    }
    (good, bad)
}

#[test]
fn demangling_matches_cxxfilt_on_test_program() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = compile(dir.path(), "prog_cc", CXX_SRC, true, &[]);
    let mut names = nm_names(&bin, false);
    names.extend(dwarf_linkage_names(&bin));
    names.sort();
    names.dedup();
    assert!(names.iter().filter(|n| n.starts_with("_Z")).count() > 100);
    let (good, bad) = demangle_rate(&names);
    eprintln!("test program: {good}/{} names as c++filt", names.len());
    for b in &bad {
        eprintln!("{b}");
    }
    assert!(bad.is_empty(), "{} names differ from c++filt", bad.len());
}

#[test]
fn demangling_rate_on_libstdcxx() {
    let lib = Path::new("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
    assert!(lib.exists(), "install libstdc++6 for this test");
    let names: Vec<String> = nm_names(lib, true)
        .into_iter()
        .filter(|n| n.starts_with("_Z"))
        .collect();
    let (good, bad) = demangle_rate(&names);
    let rate = good as f64 / names.len() as f64;
    eprintln!(
        "libstdc++: {good}/{} mangled names as c++filt ({:.2}%)",
        names.len(),
        rate * 100.0
    );
    for b in bad.iter().take(40) {
        eprintln!("{b}");
    }
    assert!(bad.is_empty(), "{} names differ from c++filt", bad.len());
}

#[test]
fn plain_names_are_left_alone() {
    for n in [
        "_start",
        "__libc_start_main",
        "main",
        "_init",
        "foo.cold",
        "_Zfoo",
    ] {
        assert_eq!(demangle(n), n);
    }
    assert_eq!(
        demangle("_ZN3std2rt10lang_start17h0123456789abcdefE"),
        "std::rt::lang_start"
    );
    assert_eq!(demangle("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
    assert_eq!(demangle("_Z3fooi@plt"), "foo(int)@plt");
}

/// Rust symbols of a program rustc builds here, legacy and v0 mangling: `demangle_full`
/// must equal c++filt; `demangle` must equal it less the legacy hash (perf's form).
#[test]
fn rust_demangling_matches_cxxfilt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("r.rs");
    std::fs::write(
        &src,
        r#"
mod inner {
    pub struct W<T>(pub T);
    impl<T: Copy + std::ops::Add<Output = T>> W<T> {
        #[inline(never)]
        pub fn twice(&self) -> T { self.0 + self.0 }
    }
}
fn main() {
    let v: Vec<u64> = (0..10).map(|x| x * 3).collect();
    let w = inner::W(v.len());
    println!("{}", w.twice() + inner::W(2u8).twice() as usize);
}
"#,
    )
    .expect("write");
    for (label, flags) in [
        ("legacy", &[][..]),
        ("v0", &["-C", "symbol-mangling-version=v0"][..]),
    ] {
        let bin = dir.path().join(label);
        run(tool("rustc")
            .args(["-O", "-o"])
            .arg(&bin)
            .args(flags)
            .arg(&src));
        let names: Vec<String> = nm_names(&bin, false)
            .into_iter()
            .filter(|n| n.starts_with("_R") || n.starts_with("_ZN"))
            .collect();
        assert!(names.len() > 100, "{label}: {} Rust symbols", names.len());
        let input: String = names.iter().map(|n| format!("{n}\n")).collect();
        let want = run_stdin(&mut tool("c++filt"), &input);
        // [legacy, v0]: (total, matching)
        let mut counts = [(0usize, 0usize); 2];
        let mut bad = Vec::new();
        for (raw, w) in names.iter().zip(want.lines()) {
            if !raw.starts_with("_R") && !raw.contains("17h") || !raw.is_ascii() {
                continue; // a C++ name from the C runtime, checked elsewhere
            }
            let kind = usize::from(raw.starts_with("_R"));
            counts[kind].0 += 1;
            let full = demangle_full(raw);
            if full == w {
                counts[kind].1 += 1;
            } else {
                bad.push(format!("{raw}\n  c++filt {w}\n  ours    {full}"));
            }
            let short = demangle(raw);
            let hashless = match w.rsplit_once("::h") {
                Some((head, hash)) if !raw.starts_with("_R") && hash.len() == 16 => head,
                _ => w,
            };
            if raw.starts_with("_ZN") {
                assert_eq!(short, hashless, "{raw}");
            }
        }
        let [(lt, lg), (vt, vg)] = counts;
        eprintln!("rust {label} build: legacy names {lg}/{lt}, v0 names {vg}/{vt} as c++filt");
        for b in bad.iter().take(5) {
            eprintln!("{b}");
        }
        assert_eq!(lg, lt, "{label}: legacy names must all match");
        // libiberty writes v0 const generics as `10: usize` where rustc-demangle writes
        // `10usize`, and drops LLVM's `.0` suffixes; everything else must agree.
        assert!(
            vt > 100 && vg as f64 >= 0.95 * vt as f64,
            "{label}: v0 {vg}/{vt}"
        );
    }
}

/// The byte addresses of a binary's code sections (`readelf -SW`).
fn code_addresses(bin: &Path) -> Vec<u64> {
    let out = run(tool("readelf").arg("-SW").arg(bin));
    let mut addrs = Vec::new();
    for l in out.lines() {
        let Some(rest) = l.trim_start().strip_prefix('[') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // [Nr] Name Type Address Off Size ...
        let Some(i) = f.iter().position(|w| w.starts_with('.')) else {
            continue;
        };
        if !matches!(
            f[i],
            ".init" | ".plt" | ".plt.got" | ".plt.sec" | ".text" | ".fini"
        ) {
            continue;
        }
        let (Some(a), Some(s)) = (f.get(i + 2), f.get(i + 4)) else {
            continue;
        };
        let (a, s) = (
            u64::from_str_radix(a, 16).expect("address"),
            u64::from_str_radix(s, 16).expect("size"),
        );
        addrs.extend(a..a + s);
    }
    addrs
}

/// Where no DWARF line covers an address, perf 6.1's srcline is what binutils' addr2line
/// makes of the symbol table: the file of the `STT_FILE` symbol before a local function
/// (`prog.c:0`), `??` for a global one, the nearest function before an address no symbol
/// covers, and nothing in a PLT. Checked at every code address of a C program built
/// without `-g`, of a shared library stripped to its dynamic symbols, and of an assembled
/// DWARF 5 object whose line table's files 0 and 1 differ (binutils 2.40 names file 0
/// for rows before a sequence's first `DW_LNS_set_file`).
#[test]
fn symbol_table_source_files_match_binutils() {
    use symbols::SymtabFile;
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    const SRC: &str = r#"
#include <stdlib.h>
#include <string.h>
volatile long sink;
static __attribute__((noinline)) long local_work(long n) { long s = 0; for (long i = 0; i < n; i++) s += i ^ (s >> 3); return s; }
__attribute__((noinline)) long global_work(long n) { long s = 1; for (long i = 0; i < n; i++) s = s * 7 + i; return s; }
__attribute__((visibility("hidden"), noinline)) long hidden_work(long n) { return local_work(n) * 3; }
long entry(long n) { char b[32]; memset(b, (int)n, sizeof b); return local_work(n) + global_work(n) + hidden_work(n) + (long)strlen(b); }
"#;
    let main_src = format!(
        "{SRC}\nint main(int c, char **v) {{ sink = entry(c > 1 ? atoi(v[1]) : 5); return 0; }}\n"
    );
    let prog = d.join("nodebug.c");
    std::fs::write(&prog, main_src).expect("write");
    let exe = d.join("nodebug");
    run(tool("gcc").args(["-O2", "-o"]).arg(&exe).arg(&prog));
    let lib_src = d.join("lib.c");
    std::fs::write(&lib_src, SRC).expect("write");
    let lib = d.join("libstripped.so");
    run(tool("gcc")
        .args(["-O2", "-fPIC", "-shared", "-o"])
        .arg(&lib)
        .arg(&lib_src));
    run(tool("strip").arg("--strip-unneeded").arg(&lib));
    // Static: glibc's code without DWARF, its file symbols naming object files.
    let stat = d.join("static");
    run(tool("gcc")
        .args(["-O2", "-static", "-o"])
        .arg(&stat)
        .arg(&prog));

    // What sear answers: None where binutils finds nothing.
    let answer = |b: &Binary, a: u64| -> Option<String> {
        match b.elf().symtab_file(Svma(a))? {
            SymtabFile::Unnamed => Some("??".to_owned()),
            SymtabFile::Named(n) => Some(n.to_string()),
        }
    };
    let mut kinds = std::collections::BTreeMap::new();
    for (bin, stride) in [(&exe, 1), (&lib, 1), (&stat, 13)] {
        let b = Binary::open(bin, &no_debug_dirs()).expect("open");
        let addrs: Vec<u64> = code_addresses(bin).into_iter().step_by(stride).collect();
        assert!(
            addrs.len() > 100,
            "{}: {} code bytes",
            bin.display(),
            addrs.len()
        );
        let want = addr2line(bin, &addrs);
        let mut bad = Vec::new();
        for a in &addrs {
            let first = &want[a][0];
            // addr2line prints `??` and `??:0` when it finds nothing.
            let binutils = (first.0 != "??" || first.1 != "??").then(|| first.1.clone());
            let ours = answer(&b, *a);
            *kinds
                .entry(binutils.clone().unwrap_or("(none)".into()))
                .or_insert(0) += 1;
            if ours != binutils {
                bad.push(format!("{a:#x}: binutils {first:?}, ours {ours:?}"));
            }
        }
        assert!(
            bad.is_empty(),
            "{}: {} of {} addresses differ: {:#?}",
            bin.display(),
            bad.len(),
            addrs.len(),
            &bad[..bad.len().min(10)]
        );
    }
    eprintln!("binutils' files by code bytes: {kinds:?}");
    for k in ["nodebug.c", "??", "(none)", "libc-start.o"] {
        assert!(kinds.contains_key(k), "no address answered {k}: {kinds:?}");
    }

    // DWARF 5, files 0 and 1 different; `.loc 1` first leaves the file register at its
    // initial 1 (no DW_LNS_set_file), later `.loc 1` sets it.
    let asm = d.join("files.s");
    let head = format!(
        "\t.file 0 \"{0}\" \"main.c\"\n\t.file 1 \"{0}\" \"hdr.h\"\n\t.file 2 \"{0}\" \"main.c\"\n",
        d.display()
    );
    std::fs::write(
        &asm,
        head + r#"
	.text
	.globl f
	.type f, @function
f:
	.loc 1 10
	nop
	nop
	.loc 1 11
	nop
	.loc 2 20
	nop
	.loc 1 12
	nop
	.loc 2 21
	ret
	.size f, .-f
	.globl g
	.type g, @function
g:
	.loc 1 30
	nop
	ret
	.size g, .-g
"#,
    )
    .expect("write");
    let obj = d.join("files.o");
    // Assembled in its directory, the compilation directory of the line table's.
    run(tool("gcc")
        .current_dir(d)
        .args(["-c", "-gdwarf-5", "-o"])
        .arg(&obj)
        .arg(&asm));
    let so = d.join("files.so");
    run(tool("gcc")
        .args(["-shared", "-nostdlib", "-o"])
        .arg(&so)
        .arg(&obj));
    let mut b = Binary::open(&so, &no_debug_dirs()).expect("open");
    let addrs: Vec<u64> = function_addresses(&so).into_iter().map(|t| t.0).collect();
    assert_eq!(addrs.len(), 8, "f and g: {addrs:?}");
    let want = addr2line(&so, &addrs);
    let mut files = Vec::new();
    for a in &addrs {
        let ours = b.frames(Svma(*a)).expect("frames");
        let inner = &ours[0];
        let w = &want[a][0];
        assert_eq!(
            (inner.file_or_unknown(), inner.line.unwrap_or(0)),
            (w.1.as_str(), w.2),
            "{a:#x}"
        );
        files.push(w.1.rsplit('/').next().unwrap_or("").to_owned());
    }
    // Both forms occur: file 0 named for file 1, and file 1 itself.
    assert!(
        files.iter().any(|f| f == "hdr.h") && files.iter().filter(|f| *f == "main.c").count() > 3
    );
}

/// perf 6.1 stretches a zero-sized symbol to the next symbol of the binary's table
/// (functions, data objects and labels alike) before it adds the `@plt` entries, so
/// `_init` (zero-sized, just before `.plt`) ends at the next function (`main` here,
/// past `.plt` and `.plt.got`), not at the first PLT entry, and `_fini` ends where
/// `.rodata`'s first object starts. `sear report --sort symbol_size` printed 48 where
/// perf printed 80 for a sample in `_init`. With one PLT entry, perf's tree has `_init`
/// above it and finds `_init` for its addresses. tests/plt.rs and tests/report_sort.rs
/// compare both with perf on samples.
#[test]
fn zero_sized_symbols_reach_the_next_table_symbol_not_a_plt_entry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = "#include <stdlib.h>\nint main(int c, char **v) { return (int)strtol(c > 1 ? v[1] : \"7\", 0, 10); }\n";
    let bin = compile(dir.path(), "plt", src, false, &[]);
    // Defined symbols from nm, by address: (address, type letter, name).
    let nm = run(tool("nm").args(["-n", "--defined-only"]).arg(&bin));
    let all: Vec<(u64, String, String)> = nm
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3).then(|| {
                let a = u64::from_str_radix(f[0], 16).expect("hex");
                (a, f[1].to_owned(), f[2].to_owned())
            })
        })
        .collect();
    let at = |name: &str| all.iter().find(|(_, _, n)| n == name).expect(name).0;
    let b = Binary::open(&bin, &no_debug_dirs()).expect("open");
    let init = at("_init");
    let hit = b.symbol(Svma(init)).expect("_init resolves");
    assert_eq!(hit.raw_name, "_init");
    assert_eq!(hit.size, at("main") - init, "_init ends at main");

    // The lone PLT entry (after the 16-byte PLT0) lies under `_init`.
    let sections = run(tool("readelf").args(["-SW"]).arg(&bin));
    let plt = sections
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let i = f.iter().position(|w| *w == ".plt")?;
            u64::from_str_radix(f.get(i + 2)?, 16).ok()
        })
        .expect(".plt section");
    assert!(plt > init && plt < at("main"), "{plt:#x}");
    let entry = b.symbol(Svma(plt + 16 + 5)).expect("PLT entry resolves");
    assert_eq!(
        (entry.raw_name, entry.offset),
        ("_init", plt + 16 + 5 - init)
    );

    // `_fini` (zero-sized, alone in `.fini`) reaches `.rodata`'s first object.
    let fini = at("_fini");
    let hit = b.symbol(Svma(fini)).expect("_fini resolves");
    assert_eq!(hit.raw_name, "_fini");
    assert_eq!(fini + hit.size, at("_IO_stdin_used"));
}
