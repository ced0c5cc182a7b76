//! `sear annotate` on a C program built here (-O2 -g, a known hot loop, an inlined helper,
//! a global written through a RIP-relative store), recorded with perf 6.1:
//!
//! 1. the largest share falls inside the hot loop, whose source line is shown;
//! 2. instruction addresses, mnemonics and operands equal `objdump -d --no-show-raw-insn`
//!    on the same functions;
//! 3. per function, the samples of its instructions add up to the function's samples in
//!    `sear report --no-children`;
//! 4. the instructions with samples and their percentages equal `perf annotate --stdio`'s;
//! 5. bad input: an unknown symbol and a missing binary give clear messages and exit 1; a
//!    binary without DWARF is disassembled without source lines.

mod common;
use common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
static volatile long sink;
long table[256];
__attribute__((noinline)) long hot(const int *a, int n) {
    long s = 0;
    for (int r = 0; r < 3000; r++)
        for (int i = 0; i < n; i++)
            s += (long)a[i] * (i ^ r); /* HOT LINE */
    return s;
}
static inline long helper(long x) { return x * 3 + (x >> 2) + table[x & 255]; }
__attribute__((noinline)) long warm(int n) {
    long s = 0;
    for (int i = 0; i < n; i++) { s += helper(i); sink = s; }
    return s;
}
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    int *a = malloc(n * sizeof *a);
    for (int i = 0; i < 256; i++) table[i] = i;
    for (int i = 0; i < n; i++) a[i] = i * 7;
    for (int k = 0; k < 10; k++) sink += hot(a, n) + warm(n * 300);
    printf("%ld\n", sink);
    return 0;
}
"#;

const HOT_LINE: &str = "s += (long)a[i] * (i ^ r); /* HOT LINE */";

struct Setup {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    prog: PathBuf,
    data: PathBuf,
}

fn setup() -> Setup {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let prog = build_c(&d, "prog", PROGRAM, &["-O2", "-g"]);
    let data = perf_record(
        &d,
        "perf.data",
        &["-e", "cpu-clock", "-F", "4000"],
        &[prog.display().to_string()],
    );
    Setup {
        _dir: dir,
        dir: d,
        prog,
        data,
    }
}

/// An instruction line of perf annotate's layout: (value, address, text).
type InsnLine = (String, u64, String);

fn insn_line(l: &str) -> Option<InsnLine> {
    let (value, rest) = l.split_once(" : ")?;
    let rest = rest.trim_start();
    let (addr, text) = rest.split_once(':')?;
    let addr = u64::from_str_radix(addr, 16).ok()?;
    let value = value.trim();
    if value.is_empty() {
        return None;
    }
    Some((value.to_owned(), addr, text.trim().to_owned()))
}

/// The functions of one annotate output: header line → its instruction lines.
fn sections(out: &str) -> Vec<(String, Vec<InsnLine>)> {
    let mut v: Vec<(String, Vec<_>)> = Vec::new();
    for l in out.lines() {
        if l.contains("|\tSource code & Disassembly of ") {
            v.push((l.to_owned(), Vec::new()));
        } else if let (Some(last), Some(i)) = (v.last_mut(), insn_line(l)) {
            last.1.push(i);
        }
    }
    v
}

/// `TOOL annotate --stdio -i f ARGS` (sear or perf), however it ends.
fn annotate_run(mut tool: Command, f: &Path, args: &[&str]) -> std::process::Output {
    tool.args(["annotate", "--stdio", "-i"])
        .arg(f)
        .args(args)
        .output()
        .unwrap()
}

fn sear_annotate(f: &Path, args: &[&str]) -> String {
    stdout_of(&run_ok(
        sear().args(["annotate", "--stdio", "-i"]).arg(f).args(args),
    ))
}

/// `perf annotate --stdio -i f ARGS`.
fn perf_annotate(f: &Path, args: &[&str]) -> String {
    stdout_of(&run_ok(
        perf().args(["annotate", "--stdio", "-i"]).arg(f).args(args),
    ))
}

/// `sear annotate --symbol name` expected to fail: its exit code and stderr.
fn failing_annotate(f: &Path, name: &str) -> (Option<i32>, String) {
    let o = annotate_run(sear(), f, &["--symbol", name]);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// objdump's instructions of function `name`: address → text.
fn objdump_function(prog: &Path, name: &str, intel: bool) -> BTreeMap<u64, String> {
    let mut cmd = Command::new("objdump");
    cmd.args(["-d", "--no-show-raw-insn", "-w"]);
    if intel {
        cmd.args(["-M", "intel"]);
    }
    let out = stdout_of(&run_ok(cmd.arg(prog)));
    let mut inside = false;
    let mut v = BTreeMap::new();
    for l in out.lines() {
        if l.ends_with(&format!("<{name}>:")) {
            inside = true;
            continue;
        }
        if inside {
            if l.trim().is_empty() {
                break;
            }
            let Some((addr, text)) = l.trim_start().split_once(":\t") else {
                continue;
            };
            if let Ok(a) = u64::from_str_radix(addr, 16) {
                v.insert(a, text.trim_end().to_owned());
            }
        }
    }
    assert!(!v.is_empty(), "objdump shows no function {name}");
    v
}

#[test]
fn hot_loop_gets_the_largest_share_and_its_source_line() {
    let s = setup();
    let out = sear_annotate(&s.data, &["--symbol", "hot"]);
    let secs = sections(&out);
    assert_eq!(secs.len(), 1, "{out}");
    let (header, insns) = &secs[0];
    assert!(
        header.starts_with(" Percent |\tSource code & Disassembly of prog for cpu-clock ("),
        "{header}"
    );
    assert!(
        out.contains(HOT_LINE),
        "the loop's source line is shown:\n{out}"
    );
    assert!(out.contains("hot():"), "{out}");
    // The loop: the range of the backward conditional jump that holds the hottest
    // instruction.
    let pct = |v: &str| v.parse::<f64>().unwrap();
    let (_, hottest, _) = insns
        .iter()
        .max_by(|a, b| pct(&a.0).total_cmp(&pct(&b.0)))
        .unwrap();
    let loops: Vec<(u64, u64)> = insns
        .iter()
        .filter(|(_, _, t)| t.starts_with('j') && !t.starts_with("jmp"))
        .filter_map(|(_, a, t)| {
            let target = u64::from_str_radix(t.split_whitespace().nth(1)?, 16).ok()?;
            (target < *a).then_some((target, *a))
        })
        .collect();
    let inner = loops
        .iter()
        .filter(|(lo, hi)| lo <= hottest && hottest <= hi)
        .min_by_key(|(lo, hi)| hi - lo)
        .unwrap_or_else(|| panic!("hottest {hottest:#x} is in no loop {loops:x?}:\n{out}"));
    let in_loop: f64 = insns
        .iter()
        .filter(|(_, a, _)| inner.0 <= *a && *a <= inner.1)
        .map(|(v, _, _)| pct(v))
        .sum();
    assert!(in_loop > 80.0, "only {in_loop}% in the loop:\n{out}");
    let total: f64 = insns.iter().map(|(v, _, _)| pct(v)).sum();
    assert!((total - 100.0).abs() < 0.1, "shares add up to {total}");
    // The source line is printed above instructions of the loop.
    let mut under_hot_line = false;
    let mut hot_line_insns = 0;
    for l in out.lines() {
        if l.contains("): ") {
            continue;
        }
        if let Some((_, a, _)) = insn_line(l) {
            if under_hot_line && inner.0 <= a && a <= inner.1 {
                hot_line_insns += 1;
            }
        } else if l.contains(" : ") || l.trim_end().ends_with(':') {
            under_hot_line = l.contains(HOT_LINE);
        }
    }
    assert!(
        hot_line_insns > 0,
        "no loop instruction under the hot line:\n{out}"
    );
}

#[test]
fn instructions_equal_objdump() {
    let s = setup();
    let mut compared = 0;
    for intel in [false, true] {
        for f in ["hot", "warm"] {
            let mut args = vec!["--symbol", f, "-n"];
            if intel {
                args.extend(["-M", "intel"]);
            }
            let out = sear_annotate(&s.data, &args);
            let ours = &sections(&out)
                .into_iter()
                .next()
                .unwrap_or_else(|| panic!("no section for {f}:\n{out}"))
                .1;
            let theirs = objdump_function(&s.prog, f, intel);
            // Every instruction of ours, in order, at objdump's address with objdump's text
            // (the same spacing: sear prints objdump's `addr:\ttext` with the tab expanded).
            let want: Vec<(u64, &String)> = theirs.iter().map(|(a, t)| (*a, t)).collect();
            assert!(
                ours.len() <= want.len(),
                "{f}: more instructions than objdump"
            );
            for (i, (_, addr, text)) in ours.iter().enumerate() {
                assert_eq!(
                    (*addr, text.as_str()),
                    (want[i].0, want[i].1.as_str()),
                    "{f} (intel: {intel}) instruction {i}"
                );
                compared += 1;
            }
            // What sear leaves out is the padding that ends the function (perf drops it).
            for (a, t) in &want[ours.len()..] {
                assert!(
                    t.starts_with("nop")
                        || t.starts_with("cs nop")
                        || t.starts_with("xchg   %ax,%ax")
                        || t.starts_with("xchg   ax,ax")
                        || t.starts_with("data16"),
                    "{f}: {a:x} {t} left out"
                );
            }
        }
    }
    assert!(compared > 80, "only {compared} instructions compared");
}

/// Every function of a binary disassembled by sear's library: (address, text).
fn library_disassembly(path: &Path, syntax: symbols::disasm::Syntax) -> Vec<(u64, String)> {
    let elf = symbols::ElfFile::open(path).unwrap();
    let names = symbols::disasm::AddressNames::from_elf(&elf);
    disassembly_named(&elf, path, syntax, &names)
}

/// The same with objdump's names for addresses (`AddressNames::objdump`).
fn library_disassembly_as_objdump(path: &Path) -> Vec<(u64, String)> {
    let elf = symbols::ElfFile::open(path).unwrap();
    let names = symbols::disasm::AddressNames::objdump(&elf, None, false);
    disassembly_named(&elf, path, symbols::disasm::Syntax::Att, &names)
}

fn disassembly_named(
    elf: &symbols::ElfFile,
    path: &Path,
    syntax: symbols::disasm::Syntax,
    names: &symbols::disasm::AddressNames,
) -> Vec<(u64, String)> {
    // The code sections (the symbol table holds data objects too, as perf's does).
    let sections = stdout_of(&run_ok(Command::new("readelf").arg("-SW").arg(path)));
    let code: Vec<(u64, u64)> = sections
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(']').nth(1)?.split_whitespace().collect();
            let (addr, size) = (f.get(2)?, f.get(4)?);
            let flags = f.get(6)?;
            flags.contains('X').then(|| {
                let a = u64::from_str_radix(addr, 16).unwrap_or(0);
                (a, a + u64::from_str_radix(size, 16).unwrap_or(0))
            })
        })
        .collect();
    assert!(!code.is_empty(), "{sections}");
    let mut v = Vec::new();
    for s in elf.symbols() {
        let in_code = code.iter().any(|&(lo, hi)| s.start >= lo && s.start < hi);
        if s.size == 0 || s.name.ends_with("@plt") || !in_code {
            continue;
        }
        let end = symbols::Svma(s.start + s.size);
        if let Ok(insns) =
            symbols::disasm::disassemble_range(elf, symbols::Svma(s.start), end, syntax, names)
        {
            v.extend(insns.into_iter().map(|i| (i.addr, i.text())));
        }
    }
    v
}

/// All of objdump's instructions of a binary: address → text.
fn objdump_all(path: &Path, intel: bool) -> std::collections::HashMap<u64, String> {
    let mut cmd = Command::new("objdump");
    cmd.args(["-d", "--no-show-raw-insn", "-w"]);
    if intel {
        cmd.args(["-M", "intel"]);
    }
    let out = stdout_of(&run_ok(cmd.arg(path)));
    out.lines()
        .filter_map(|l| {
            let (a, t) = l.trim_start().split_once(":\t")?;
            Some((u64::from_str_radix(a, 16).ok()?, t.trim_end().to_owned()))
        })
        .collect()
}

/// objdump's text without the symbol names in `<...>`: objdump adds symbol versions
/// (`<abort@@GLIBC_2.2.5+0x53>`) and names GOT slots by their relocations, which sear's
/// names do not (documented differences, harmless to the instruction itself).
fn without_names(t: &str) -> String {
    let mut out = String::new();
    let mut rest = t;
    while let Some(i) = rest.find(" <") {
        out.push_str(&rest[..i]);
        match rest[i..].find('>') {
            Some(j) => rest = &rest[i + j + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn library_matches_objdump_on_libc() {
    let libc = Path::new("/lib/x86_64-linux-gnu/libc.so.6");
    for (syntax, intel) in [
        (symbols::disasm::Syntax::Att, false),
        (symbols::disasm::Syntax::Intel, true),
    ] {
        let ours = library_disassembly(libc, syntax);
        let theirs = objdump_all(libc, intel);
        let total = ours.len();
        assert!(total > 50_000, "{total}");
        let at_boundary = ours.iter().filter(|(a, _)| theirs.contains_key(a)).count();
        let mnemonic = |t: &str| t.split(' ').next().unwrap_or("").to_owned();
        let same_mnemonic = ours
            .iter()
            .filter(|(a, t)| theirs.get(a).is_some_and(|o| mnemonic(o) == mnemonic(t)))
            .count();
        let same_text = ours
            .iter()
            .filter(|(a, t)| {
                theirs
                    .get(a)
                    .is_some_and(|o| without_names(o) == without_names(t))
            })
            .count();
        eprintln!(
            "libc ({}): {total} instructions, {at_boundary} at objdump's boundaries, {same_mnemonic} with its mnemonic, {same_text} with its text but symbol names",
            if intel { "intel" } else { "att" }
        );
        assert_eq!(at_boundary, total, "instruction boundaries");
        // Known differences: x87 operands objdump spells out (`fxch %st(1)`), and in Intel
        // syntax negative RIP displacements objdump prints as 64-bit sums.
        assert!(
            same_mnemonic * 10_000 >= total * 9_995,
            "{same_mnemonic} of {total}"
        );
        assert!(same_text * 1000 >= total * 995, "{same_text} of {total}");
    }
}

/// Names in operands as objdump gives them, on whole system libraries: the nearest symbol
/// (thread-local ones included), versions on dynamic symbols, GOT slots and other
/// relocated words by their relocation's symbol where the nearest symbol lies in another
/// section, PLT entries paired with their slots (`*ABS*+0x...@plt` for IRELATIVE ones) and
/// `.plt.got`'s.
#[test]
fn operand_names_match_objdump_on_libraries() {
    for lib in [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/usr/lib/x86_64-linux-gnu/libgcc_s.so.1",
    ] {
        let path = Path::new(lib);
        let ours = library_disassembly_as_objdump(path);
        let theirs = objdump_all(path, false);
        let same = ours
            .iter()
            .filter(|(a, t)| theirs.get(a) == Some(t))
            .count();
        eprintln!(
            "{lib}: {same} of {} instructions as objdump prints them",
            ours.len()
        );
        let named: Vec<_> = ours.iter().filter(|(_, t)| t.contains(" <")).collect();
        let differ: Vec<String> = named
            .iter()
            .filter(|(a, t)| theirs.get(a) != Some(t))
            .map(|(a, t)| format!("{a:x}: {t} / objdump: {:?}", theirs.get(a)))
            .collect();
        eprintln!(
            "{lib}: {} instructions name an address, {} differ from objdump",
            named.len(),
            differ.len()
        );
        for d in differ.iter().take(5) {
            eprintln!("  {d}");
        }
        assert!(named.len() > 2_000, "{lib}: {}", named.len());
        assert!(
            differ.len() * 1000 <= named.len(),
            "{lib}: {} of {}:\n{}",
            differ.len(),
            named.len(),
            differ[..differ.len().min(20)].join("\n")
        );
    }
}

/// `Symbol → samples` of `sear report --no-children --sort sym -n` for the program's DSO.
fn report_self_samples(data: &Path, extra: &[&str]) -> BTreeMap<String, u64> {
    let mut args = vec!["--no-children", "--sort", "sym", "-n", "--dsos", "prog"];
    args.extend_from_slice(extra);
    let out = sear_report(data, &args);
    let mut m = BTreeMap::new();
    for l in out
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains("[.] "))
    {
        let mut w = l.split_whitespace();
        let _pct = w.next();
        let n: u64 = w.next().unwrap().parse().unwrap();
        let name = l.split("[.] ").nth(1).unwrap().trim().to_owned();
        m.insert(name, n);
    }
    m
}

/// Also on time slices (`--time`, perf's forms).
#[test]
fn sums_equal_report_self_samples() {
    let s = setup();
    for extra in [&[][..], &["--time", "0%-50%"], &["--time", "25%/4"]] {
        sums_equal_report_in(&s, extra);
    }
}

fn sums_equal_report_in(s: &Setup, extra: &[&str]) {
    let mut args = vec!["-n", "--dsos", "prog"];
    args.extend_from_slice(extra);
    let out = sear_annotate(&s.data, &args);
    let mut ours = BTreeMap::new();
    for (header, insns) in sections(&out) {
        let n: u64 = insns
            .iter()
            .map(|(v, _, _)| v.parse::<u64>().unwrap())
            .sum();
        // The header's count is the function's samples too.
        let said: u64 = header
            .split(" (")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|x| x.parse().ok())
            .unwrap();
        assert_eq!(n, said, "{header}");
        let start = insns[0].1;
        ours.insert(start, n);
    }
    let report = report_self_samples(&s.data, extra);
    assert!(
        report.contains_key("hot") && report.contains_key("warm"),
        "{extra:?}: {report:?}"
    );
    // Functions by start address from the symbol table.
    let nm = stdout_of(&run_ok(Command::new("nm").arg(&s.prog)));
    let mut by_name = BTreeMap::new();
    for l in nm.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() == 3 {
            by_name.insert(w[2].to_owned(), u64::from_str_radix(w[0], 16).unwrap());
        }
    }
    for (name, n) in &report {
        let start = by_name[name];
        assert_eq!(
            ours.get(&start),
            Some(n),
            "{extra:?} {name}: annotate and report differ"
        );
    }
    assert_eq!(
        ours.len(),
        report.len(),
        "{extra:?}: {ours:?} vs {report:?}"
    );
}

#[test]
fn percentages_equal_perf_annotate() {
    let s = setup();
    // (perf 6.1 prints 0.00 on every line with global-hits, a bug: sear
    // prints the share of the event's samples that perf documents.)
    for (f, extra) in [
        ("hot", &[][..]),
        ("warm", &[][..]),
        ("hot", &["--percent-type", "local-hits"][..]),
        ("warm", &["--percent-type", "global-period"][..]),
        ("hot", &["--percent-type", "period-local", "--source"][..]),
    ] {
        let ours = sear_annotate(&s.data, &[&["--symbol", f][..], extra].concat());
        let perf_out = perf_annotate(&s.data, &[&["--symbol", f][..], extra].concat());
        let hot_of = |text: &str| -> BTreeMap<u64, String> {
            sections(text)
                .into_iter()
                .flat_map(|(_, v)| v)
                .filter(|(p, _, _)| p != "0.00")
                .map(|(p, a, _)| (a, p))
                .collect()
        };
        let (a, b) = (hot_of(&ours), hot_of(&perf_out));
        assert!(!a.is_empty(), "{ours}");
        assert_eq!(a, b, "{f}: sear\n{ours}\nperf\n{perf_out}");
        // The headers agree too.
        let header = |t: &str| t.lines().next().unwrap_or("").to_owned();
        assert_eq!(header(&ours), header(&perf_out));
        // And every instruction perf lists, sear lists at the same address.
        let addrs = |t: &str| -> Vec<u64> {
            sections(t)
                .into_iter()
                .flat_map(|(_, v)| v)
                .map(|(_, a, _)| a)
                .collect()
        };
        assert_eq!(addrs(&ours), addrs(&perf_out), "{f}");
    }
}

/// `--skip-missing`: functions whose code cannot be read (the kernel's,
/// without vmlinux) are left out without the warning each gets otherwise.
#[test]
fn skip_missing_leaves_out_unreadable_functions_quietly() {
    have_perf();
    let s = setup();
    // A program that makes system calls: kernel functions get samples.
    let w = busy_workload(150);
    let data = perf_record(&s.dir, "kernel.data", &["-e", "cpu-clock"], &w);
    let run = |extra: &[&str]| {
        let o = annotate_run(sear(), &data, extra);
        assert!(o.status.success());
        (
            stdout_of(&o),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (out, err) = run(&[]);
    assert!(err.contains("kernel code is not annotated"), "{err}");
    let (quiet_out, quiet_err) = run(&["--skip-missing"]);
    assert!(!quiet_err.contains("cannot annotate"), "{quiet_err}");
    assert_eq!(quiet_out, out);
}

#[test]
fn print_line_and_no_source() {
    let s = setup();
    let out = sear_annotate(&s.data, &["--symbol", "hot", "-l"]);
    assert!(out.starts_with("\nSorted summary for file "), "{out}");
    assert!(out.contains(" prog.c:10\n"), "{out}");
    assert!(out.contains(" // prog.c:"), "{out}");
    let plain = sear_annotate(&s.data, &["--symbol", "hot", "--no-source"]);
    assert!(!plain.contains(HOT_LINE), "{plain}");
    assert_eq!(
        sections(&plain)[0].1.len(),
        sections(&out)[0].1.len(),
        "the same instructions"
    );
}

#[test]
fn unknown_symbol_and_missing_binary() {
    have_perf();
    let s = setup();
    let (code, err) = failing_annotate(&s.data, "no_such_function");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("no_such_function") && err.contains("no samples"),
        "{err}"
    );

    // A build without DWARF (a build id of its own, so no debug file of the other build
    // is found for it), recorded without perf's build-id cache, which would keep a copy.
    let bare = build_c(&s.dir, "bare", PROGRAM, &["-O2"]);
    let data = perf_record(
        &s.dir,
        "bare.data",
        &["-e", "cpu-clock", "-F", "4000", "-N"],
        &[bare.display().to_string(), "3000".into()],
    );
    let out = sear_annotate(&data, &["--symbol", "hot"]);
    let secs = sections(&out);
    assert_eq!(secs.len(), 1, "{out}");
    assert!(secs[0].1.len() > 10, "{out}");
    assert!(!out.contains("HOT LINE"), "{out}");
    // objdump -l names the ELF symbol where no DWARF does (BFD falls back to the symbol
    // table), and perf shows that line: so does sear.
    let theirs = perf_annotate(&data, &["hot"]);
    assert!(theirs.contains("hot():"), "{theirs}");
    assert!(out.contains("hot():"), "{out}");

    std::fs::remove_file(&bare).unwrap();
    let (code, err) = failing_annotate(&data, "hot");
    // Without the binary nothing names its functions: the message says which binary is
    // missing and what to do.
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("`hot`"), "{err}");
    assert!(
        err.contains(&format!("{}: no such file", bare.display())),
        "{err}"
    );
    assert!(err.contains("perf buildid-cache -a"), "{err}");
}

#[test]
fn other_architectures_are_not_supported_yet() {
    let s = setup();
    // The recorded binary, its ELF header's machine changed to AArch64 (183): the same
    // build id, so it is the recorded binary, but its code is not x86-64.
    let mut elf = std::fs::read(&s.prog).unwrap();
    elf[18..20].copy_from_slice(&183u16.to_le_bytes());
    std::fs::write(&s.prog, &elf).unwrap();
    let (code, err) = failing_annotate(&s.data, "hot");
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(
        err.matches("not supported yet").count(),
        1,
        "said once: {err}"
    );
    assert!(
        err.contains("cannot annotate hot") && err.to_lowercase().contains("aarch64"),
        "{err}"
    );
}

/// `--asm-raw` (instruction bytes, seven a line as objdump prints them),
/// `-P` (the binary's full path in the header), `-C` (one CPU's samples)
/// and `-n`: the header and every instruction line equal perf's.
#[test]
fn raw_bytes_full_paths_and_cpus_equal_perf_annotate() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let prog = build_c(dir.path(), "prog", PROGRAM, &["-O2", "-g"]);
    let data = perf_record(
        dir.path(),
        "cpu.data",
        &["-e", "cpu-clock", "-F", "4000", "--sample-cpu"],
        &[prog.display().to_string()],
    );
    let lines = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains("Source code & Disassembly") || insn_line(l).is_some())
            .map(str::to_owned)
            .collect()
    };
    // A CPU that ran hot (the scheduler picks which).
    let script = stdout_of(&run_ok(
        perf().args(["script", "-F", "cpu,ip,sym", "-i"]).arg(&data),
    ));
    let cpu = script
        .lines()
        .find(|l| l.contains(" hot"))
        .and_then(|l| l.split(']').next())
        .map(|c| {
            c.trim()
                .trim_start_matches('[')
                .trim_start_matches('0')
                .to_owned()
        })
        .map(|c| if c.is_empty() { "0".to_owned() } else { c })
        .expect("a sample in hot");
    let mut compared = 0;
    for extra in [
        &["--asm-raw"][..],
        &["-P"][..],
        &["--asm-raw", "-n", "-M", "intel"][..],
        &["-C", &cpu, "--asm-raw"][..],
        &["--cpu", "0-1", "-P"][..],
        &["--objdump", "/usr/bin/objdump"][..],
    ] {
        let args = [&["--symbol", "hot"][..], extra].concat();
        let ours = sear_annotate(&data, &args);
        let theirs = perf_annotate(&data, &args);
        assert_eq!(
            lines(&ours),
            lines(&theirs),
            "{extra:?}\nsear\n{ours}\nperf\n{theirs}"
        );
        compared += lines(&theirs).len();
    }
    assert!(compared > 50, "only {compared} lines compared");
    let raw = sear_annotate(&data, &["--symbol", "hot", "--asm-raw"]);
    assert!(
        raw.lines()
            .any(|l| l.contains("   48 ") || l.contains("   0f ")),
        "no instruction bytes:\n{raw}"
    );
    let full = sear_annotate(&data, &["--symbol", "hot", "-P"]);
    assert!(
        full.contains(&format!("Disassembly of {} for", prog.display())),
        "{full}"
    );
}

/// The whole annotation, byte for byte: objdump's preamble as perf keeps
/// it, perf's numbering of the lines after each source mark (from the
/// marked line's number, the context lines before it too), the inlined
/// helper's `helper():` line, with and without source, raw bytes and
/// Intel syntax.
#[test]
fn layout_equals_perf_annotate_byte_for_byte() {
    let s = setup();
    let mut differ = Vec::new();
    for f in ["hot", "warm"] {
        for extra in [
            &[][..],
            &["--no-source"][..],
            &["--asm-raw", "-n"][..],
            &["-M", "intel", "--show-total-period"][..],
            &["--print-line"][..],
            // perf's colours: values by share, addresses, instructions,
            // the source-line summary.
            &["--stdio-color=always", "--print-line", "--asm-raw"][..],
            &["--stdio-color", "-n"][..],
            &["--demangle", "--group", "-m", "--ignore-vmlinux"][..],
        ] {
            let args = [&["--symbol", f][..], extra].concat();
            let ours = sear_annotate(&s.data, &args);
            let theirs = perf_annotate(&s.data, &args);
            assert!(theirs.contains("Disassembly of section"), "{theirs}");
            differ.extend(difference(&format!("{args:?}"), &theirs, &ours));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// A C++ function with inlined members and templates, byte for byte: names
/// demangled as `objdump -C` prints them (branch targets too), function
/// lines without `()` where the name was demangled and with it otherwise.
/// And names as binutils gives them: an inlined copy whose DWARF has no linkage
/// name (a lambda's `operator()`, a template taking a lambda) is named by the
/// enclosing symbol the first time and by its DWARF name after that; glibc's
/// inline `strchr` has an unmangled linkage name; the line is marked again after
/// each function line.
#[test]
fn cpp_layout_equals_perf_annotate() {
    have_perf();
    const CPP: &str = r#"
#include <cstring>
#include <vector>
namespace app {
template <class F>
inline long each(const std::vector<long> &v, const F &f) {
    long s = 0;
    for (long x : v)
        s += f(x);
    return s;
}
__attribute__((noinline)) long lam(const std::vector<long> &v, int rounds, const char *text) {
    long t = 0;
    for (int r = 0; r < rounds; r++) {
        t += each(v, [r](long x) { return x * r + (x >> 3); });
        t += std::strchr(text, 'a' + (r & 7)) != nullptr;
    }
    return t;
}
struct Acc {
    std::vector<long> v;
    long total() const {
        long s = 0;
        for (long x : v)
            s += x * 3;
        return s;
    }
};
__attribute__((noinline)) long run(const Acc &a, int rounds) {
    long t = 0;
    for (int r = 0; r < rounds; r++)
        t += a.total() + r;
    return t;
}
}
int main(int argc, char **argv) {
    app::Acc a;
    for (int i = 0; i < 100000; i++) a.v.push_back(i);
    volatile long sink = app::run(a, 3000) + app::lam(a.v, 3000, argv[0]);
    (void)sink;
    return 0;
}
"#;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("cx.cpp");
    std::fs::write(&src, CPP).unwrap();
    let exe = dir.path().join("cx");
    run_ok(
        Command::new("g++")
            .args(["-O2", "-g", "-o"])
            .arg(&exe)
            .arg(&src),
    );
    let data = perf_record(
        dir.path(),
        "cx.data",
        &["-e", "cpu-clock"],
        &[exe.display().to_string()],
    );
    for (f, start) in [
        ("app::run", "<app::run(app::Acc const&, int)"),
        (
            "app::lam",
            "<app::lam(std::vector<long, std::allocator<long> > const&, int, char const*)",
        ),
    ] {
        for extra in [&[][..], &["--no-source"][..], &["--asm-raw"][..]] {
            let args = [&[f][..], extra].concat();
            let ours = sear_annotate(&data, &args);
            let theirs = perf_annotate(&data, &args);
            assert!(theirs.contains(start), "{theirs}");
            assert_eq!(ours, theirs, "{args:?}");
        }
    }
}

/// The vdso, from perf's build-id cache where the recording put it: byte for byte, names
/// below the first function taken from the version symbol at 0 (`LINUX_2.6@@LINUX_2.6+0x780`)
/// as objdump does.
#[test]
fn vdso_equals_perf_annotate() {
    have_perf();
    const C: &str = r#"
#include <time.h>
int main(void) {
    struct timespec ts;
    long s = 0;
    for (long i = 0; i < 6000000; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s += ts.tv_nsec & 1;
    }
    return (int)(s & 0);
}
"#;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("v.c");
    std::fs::write(&src, C).unwrap();
    let exe = dir.path().join("v");
    run_ok(Command::new("gcc").args(["-O2", "-o"]).arg(&exe).arg(&src));
    let data = perf_record(
        dir.path(),
        "v.data",
        &["-e", "cpu-clock"],
        &[exe.display().to_string()],
    );
    for extra in [&[][..], &["--asm-raw"][..]] {
        let args = [&["__vdso_clock_gettime"][..], extra].concat();
        let theirs = perf_annotate(&data, &args);
        assert!(
            theirs.contains("<__vdso_clock_gettime@@LINUX_2.6>:"),
            "{theirs}"
        );
        assert_eq!(sear_annotate(&data, &args), theirs, "{extra:?}");
    }
}

/// `--stdio2`, perf's browser layout printed, byte for byte: jump targets labelled,
/// branches drawn as arrows with targets by offset or name, RIP-relative operands by
/// symbol, blank lines for instructions without samples; with each column and option.
#[test]
fn stdio2_equals_perf_annotate_byte_for_byte() {
    let s = setup();
    let mut differ = Vec::new();
    let check = |data: &Path, args: Vec<&str>, differ: &mut Vec<String>| {
        let ours = stdout_of(&run_ok(
            sear()
                .args(["annotate", "--stdio2", "-i"])
                .arg(data)
                .args(&args),
        ));
        let theirs = stdout_of(&run_ok(
            perf()
                .args(["annotate", "--stdio2", "-i"])
                .arg(data)
                .args(&args),
        ));
        assert!(theirs.contains("Disassembly of section"), "{theirs}");
        differ.extend(difference(&format!("{args:?}"), &theirs, &ours));
        theirs
    };
    for f in ["hot", "warm"] {
        for extra in [
            &[][..],
            &["--no-source"][..],
            &["--asm-raw", "-n"][..],
            &["-M", "intel", "--show-total-period"][..],
            &["--print-line", "--percent-type", "local-hits"][..],
        ] {
            check(&s.data, [&[f][..], extra].concat(), &mut differ);
        }
    }
    // Tail calls to functions before and after the caller (kept in source order):
    // perf prints a jump back out as objdump wrote it, one forward by the name of its
    // target, or by its offset where a symbol filter made perf forget that function.
    const TAILS: &str = r#"
#include <stdio.h>
volatile long counter;
__attribute__((noinline)) long before(long x) {
    for (int i = 0; i < 300; i++) x = x * 5 + (x >> 7);
    counter += x;
    return x;
}
__attribute__((noinline)) long after(long x);
__attribute__((noinline)) long mid(long x) {
    long s = 0;
    for (long i = 0; i < 3000; i++) s += i * x ^ (s >> 3);
    if (s & 1) return after(s);
    if (s & 2) return before(s);
    return s;
}
__attribute__((noinline)) long after(long x) {
    for (int i = 0; i < 300; i++) x = x * 7 + (x >> 5);
    counter -= x;
    return x;
}
int main(void) {
    long t = 0;
    for (int k = 0; k < 300000; k++) t += mid(k);
    printf("%ld\n", t);
    return 0;
}
"#;
    let prog = build_c(
        &s.dir,
        "tails",
        TAILS,
        &["-O2", "-g", "-fno-toplevel-reorder"],
    );
    let data = perf_record(
        &s.dir,
        "tails.data",
        &["-e", "cpu-clock", "-F", "4000"],
        &[prog.display().to_string()],
    );
    let tail_to = |out: &str, to: &str| {
        out.lines()
            .any(|l| l.contains("→ jmp") && l.trim_end().ends_with(&format!(" {to}")))
    };
    // (Above 0.5%: the functions of the program's loop. A sample that lands
    // in `_init` or `_fini` at start or exit is chance: those have a test of
    // their own.)
    let all = check(
        &data,
        vec!["-d", "tails", "--percent-limit", "0.5"],
        &mut differ,
    );
    assert!(tail_to(&all, "after"), "no tail call by name in:\n{all}");
    assert!(tail_to(&all, "<before>"), "no tail call back in:\n{all}");
    let mid = check(&data, vec!["mid"], &mut differ);
    assert!(!tail_to(&mid, "after"), "{mid}");
    check(&data, vec!["after", "-n"], &mut differ);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// `_init` and `_fini` have no size: perf stretches `_init` over the PLT
/// sections after it and `_fini` up to `.rodata`'s first object, and
/// objdump disassembles such a range section by section, with each
/// section's header, a label at its start (a symbol there, else the
/// section's next symbol with a negative offset, else the section's name)
/// and one at each symbol it meets (the PLT entries). Position-independent
/// or not, with PLT entries or only `.plt.got`'s.
#[test]
fn init_and_fini_are_annotated_section_by_section_as_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    const WITH_CALLS: &str = r#"
#include <stdio.h>
#include <stdlib.h>
__asm__(".section .init\n\tmov $150000000, %ecx\n1:\tdec %ecx\n\tjnz 1b\n\t.text");
__asm__(".section .fini\n\tmov $150000000, %ecx\n1:\tdec %ecx\n\tjnz 1b\n\t.text");
int main(int c, char **v) { puts("x"); printf("%d\n", atoi(c > 1 ? v[1] : "3")); return 0; }
"#;
    let mut differ = Vec::new();
    for (name, src, flags) in [
        ("plain", INIT_FINI_C, &["-O1", "-g"][..]),
        ("calls", WITH_CALLS, &["-O1", "-g"][..]),
        ("calls_nopie", WITH_CALLS, &["-O1", "-g", "-no-pie"][..]),
    ] {
        let prog = build_c(dir.path(), name, src, flags);
        let data = perf_record(
            dir.path(),
            &format!("{name}.data"),
            &["-e", "cpu-clock", "-F", "2000"],
            &[prog.display().to_string()],
        );
        for args in [&["_init"][..], &["_fini"], &["--stdio2", "_init"]] {
            let theirs = perf_annotate(&data, args);
            let ours = sear_annotate(&data, args);
            // (The hot loop each of them holds.)
            assert!(
                theirs.contains("dec") && theirs.contains("%ecx"),
                "{name} {args:?}:\n{theirs}"
            );
            if theirs != ours {
                differ.push(format!("{name} {args:?}:\nperf:\n{theirs}\nsear:\n{ours}"));
            }
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// A function without a size (hand-written assembly with no `.size`, like crt's
/// `deregister_tm_clones`) reaches up to the next symbol, padding included: perf prints
/// the padding's nops as objdump does (it drops them only for /proc/kcore's code).
#[test]
fn a_function_without_a_size_keeps_its_padding_nops() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    const SRC: &str = r#"
#include <stdio.h>
long spin(long n);
__asm__(
    ".text\n"
    ".globl spin\n"
    ".type spin, @function\n"
    "spin:\n"
    "  xor %eax, %eax\n"
    "1: add %rdi, %rax\n"
    "  imul $3, %rax, %rax\n"
    "  dec %rdi\n"
    "  jnz 1b\n"
    "  ret\n"
    ".p2align 5\n"
    ".globl after_spin\n"
    ".type after_spin, @function\n"
    "after_spin:\n"
    "  ret\n"
    ".size after_spin, .-after_spin\n");
int main(void) {
    long t = 0;
    for (int i = 0; i < 2000; i++) t += spin(200000);
    printf("%ld\n", t);
    return 0;
}
"#;
    let prog = build_c(dir.path(), "sizeless", SRC, &["-O2", "-g"]);
    let data = perf_record(
        dir.path(),
        "sizeless.data",
        &["-e", "cpu-clock", "-F", "2000"],
        &[prog.display().to_string()],
    );
    for args in [&["spin"][..], &["--stdio2", "spin"][..]] {
        let theirs = stdout_of(&run_ok(
            perf()
                .args(["annotate", "--stdio", "-i"])
                .arg(&data)
                .args(args),
        ));
        let ours = stdout_of(&run_ok(
            sear()
                .args(["annotate", "--stdio", "-i"])
                .arg(&data)
                .args(args),
        ));
        // spin's loop has the samples; the padding after `ret` is shown.
        assert!(theirs.contains("imul"), "{theirs}");
        assert!(theirs.lines().any(|l| l.contains("nop")), "{theirs}");
        if let Some(d) = difference(&format!("{args:?}"), &theirs, &ours) {
            panic!("{d}");
        }
    }
}

/// A function compiled without debug info in a program with it: objdump -l names it from
/// the symbol table (`hot():`), and sear's --stdio and --stdio2 equal perf's byte for byte
/// (the `tails` case above hits this when a sample lands in `_start`).
#[test]
fn a_function_without_dwarf_equals_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("hot.c"),
        "volatile long sink;\nlong hot(long n) { long x = sink; for (long i = 0; i < n; i++) x += i ^ (x >> 3); return x; }\n",
    )
    .unwrap();
    std::fs::write(
        d.join("main.c"),
        "long hot(long n);\nextern volatile long sink;\nint main(void) { for (int k = 0; k < 300; k++) sink += hot(1000000); return 0; }\n",
    )
    .unwrap();
    run_ok(
        Command::new("gcc")
            .args(["-O2", "-c", "-o"])
            .arg(d.join("hot.o"))
            .arg(d.join("hot.c")),
    );
    run_ok(
        Command::new("gcc")
            .args(["-O2", "-g", "-o"])
            .arg(d.join("nd"))
            .arg(d.join("main.c"))
            .arg(d.join("hot.o")),
    );
    let data = perf_record(d, "nd.data", &["-N"], &[d.join("nd").display().to_string()]);
    for layout in ["--stdio", "--stdio2"] {
        let theirs = stdout_of(&run_ok(
            perf()
                .args(["annotate", layout, "-i"])
                .arg(&data)
                .arg("hot"),
        ));
        let ours = stdout_of(&run_ok(
            sear()
                .args(["annotate", layout, "-i"])
                .arg(&data)
                .arg("hot"),
        ));
        assert!(theirs.contains("hot():"), "{theirs}");
        assert_eq!(ours, theirs, "{layout}");
    }
}

/// A function of a stripped library whose symbols and lines are in a separate debug file
/// (libc with Debian's libc6-dbg): perf runs objdump on the library, which with `-l` (perf's
/// default) reads the debug file's symbols too and labels the code with the one it sorts first
/// of the aliases there (`__memcpy_avx512_unaligned_erms` where perf reports `__memmove_...`),
/// and without it (`--no-source`) knows only the dynamic symbols (`<sym@VERSION+0xOFF>`
/// labels); padding nops with extra operand-size prefixes are `data16 cs nopw`. sear's
/// annotation of libc's hot functions, with and without source, equals perf's byte for byte.
#[test]
fn library_with_separate_debug_file_equals_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let prog = build_c(
        d,
        "strings",
        r#"
#include <stdlib.h>
#include <string.h>
int main(void) {
    char *a = malloc(1 << 20), *b = malloc(1 << 20);
    long s = 0;
    for (int i = 0; i < 6000; i++) {
        memset(a, i, 1 << 20);
        memcpy(b, a, 1 << 20);
        s += b[i % 1000];
    }
    return s == 42;
}
"#,
        &["-O1", "-g"],
    );
    let data = perf_record(
        d,
        "strings.data",
        &["-e", "cpu-clock", "-F", "2000"],
        &[prog.display().to_string()],
    );
    // libc's functions with at least 10% of the samples: the memset and memcpy the program
    // spends its time in.
    let report = stdout_of(&run_ok(
        perf()
            .args(["report", "--stdio", "-q", "--sort", "dso,sym", "-i"])
            .arg(&data),
    ));
    let hot: Vec<String> = report
        .lines()
        .filter(|l| l.contains("libc.so.6"))
        .filter(|l| {
            l.split_whitespace()
                .next()
                .and_then(|p| p.trim_end_matches('%').parse::<f64>().ok())
                .is_some_and(|p| p >= 10.0)
        })
        .filter_map(|l| l.split_whitespace().last().map(str::to_owned))
        .collect();
    assert!(hot.len() >= 2, "{report}");
    for sym in &hot {
        for extra in [&[][..], &["--no-source"][..]] {
            let mut args = extra.to_vec();
            args.push(sym);
            let theirs = perf_annotate(&data, &args);
            let ours = sear_annotate(&data, &args);
            assert!(theirs.contains("Disassembly of section"), "{theirs}");
            assert_eq!(ours, theirs, "{sym} {extra:?}");
        }
    }
}

/// A recording of kernel code only (`cpu-clock:k` on a copy from /dev/zero): nothing
/// can be annotated without a vmlinux, which sear does not read yet. As perf, that is
/// said and the exit status is 0, whether or not a function is named.
#[test]
fn kernel_code_alone_is_a_warning_not_an_error() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = perf_record(
        dir.path(),
        "k.data",
        &["-e", "cpu-clock:k"],
        &[
            "dd".into(),
            "if=/dev/zero".into(),
            "of=/dev/null".into(),
            "bs=1M".into(),
            "count=2000".into(),
        ],
    );
    // The hottest kernel function, named.
    let rows = sear_report(&data, &["--no-children", "--sort", "sym", "-g", "none"]);
    let hottest = rows
        .lines()
        .find_map(|l| l.split_once("[k] ").map(|(_, name)| name.trim().to_owned()))
        .unwrap_or_else(|| panic!("no kernel row:\n{rows}"));
    for args in [&[][..], &["--symbol", hottest.as_str()][..]] {
        let o = annotate_run(sear(), &data, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        if args.is_empty() {
            assert!(err.contains("kernel code is not annotated yet"), "{err}");
        }
        let p = annotate_run(perf(), &data, args);
        assert_eq!(p.status.code(), Some(0), "perf {args:?}");
    }
}
