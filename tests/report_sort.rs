//! `sear report --sort` keys beyond comm/pid/dso/sym against perf 6.1, on a
//! two-file C program (-O2 -g, frame pointers, an inlined helper) the test
//! builds and records in fp and DWARF mode and with `--sample-cpu`: srcline,
//! srcfile, parent with `-p`/`-x`, cpu, socket, addr, symbol_size,
//! dso_size, tid, and combinations. Rows are compared as sets (perf's order among rows of
//! equal weight is not reproduced exactly); headers (column widths) must be
//! equal. `symoff`, which perf 6.1 lacks, is checked against the per-sample
//! `sym+offset` of `perf script`.

mod common;
use common::*;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const MAIN_C: &str = r#"
#include <stdlib.h>
static volatile long sink;
long helper(long x);
static inline long mix(long x) { return x * 2654435761u ^ (x >> 7); }
__attribute__((noinline)) long leaf(int n) { long s = 0; for (int i = 0; i < n; i++) s += mix(i); return s; }
__attribute__((noinline)) long mid(int n) { return leaf(n) + leaf(n / 2); }
__attribute__((noinline)) long top(int n) { return mid(n) + leaf(n / 3) + helper(n); }
int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 3000;
    for (long k = 0; k < rounds; k++) { int j = (int)(k & 7); sink += top(40000 + j); sink += mid(20000 + j); }
    return 0;
}
"#;

const HELPER_C: &str = r#"
__attribute__((noinline)) long helper(long n) {
  long s = 1;
  for (long i = 0; i < n; i++)
    s = s * 31 + i;
  return s;
}
"#;

fn build_prog(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let (a, b) = (dir.join("sortprog.c"), dir.join("helper.c"));
    std::fs::write(&a, MAIN_C).unwrap();
    std::fs::write(&b, HELPER_C).unwrap();
    let exe = dir.join(name);
    let out = Command::new("gcc")
        .args(["-O2", "-g", "-fno-omit-frame-pointer"])
        .args(flags)
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("gcc runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// The column headers and the rows (sorted) of a `-g none` report.
fn table(text: &str) -> (Vec<String>, Vec<String>) {
    let mut head = Vec::new();
    let mut rows = Vec::new();
    for l in text.lines() {
        if l.starts_with("# Overhead") || l.starts_with("# Children") || l.starts_with("# ....") {
            head.push(l.to_owned());
        } else if l.len() > 10 && l.as_bytes()[9] == b'%' {
            rows.push(l.to_owned());
        }
    }
    rows.sort();
    (head, rows)
}

#[test]
fn sort_keys_equal_perf() {
    assert!(have_perf());
    let dir = tempfile::tempdir().unwrap();
    let exe = build_prog(dir.path(), "sortprog", &[]);
    // Static too: glibc's code without DWARF, where binutils (which perf
    // runs) names the object file of the symbol table (`libc-start.o:0`).
    let exe_static = build_prog(dir.path(), "sortprog_static", &["-static"]);
    let w = vec![exe.display().to_string(), "3000".to_owned()];
    let ws = vec![exe_static.display().to_string(), "3000".to_owned()];
    let fp = perf_record(
        dir.path(),
        "fp.data",
        &["-e", "cpu-clock", "-F", "2000", "-g"],
        &w,
    );
    let dwarf = perf_record(
        dir.path(),
        "dwarf.data",
        &["-e", "cpu-clock", "-F", "1000", "--call-graph", "dwarf"],
        &w,
    );
    let cpu = perf_record(
        dir.path(),
        "cpu.data",
        &["-e", "cpu-clock", "-F", "2000", "-g", "--sample-cpu"],
        &w,
    );
    // Threads' cgroup namespaces come from NAMESPACES records.
    let ns = perf_record(
        dir.path(),
        "ns.data",
        &[
            "-e",
            "cpu-clock",
            "-F",
            "2000",
            "-g",
            "--namespaces",
            "--all-cgroups",
        ],
        &w,
    );
    let static_fp = perf_record(
        dir.path(),
        "static-fp.data",
        &["-e", "cpu-clock", "-F", "2000", "-g"],
        &ws,
    );
    let static_dwarf = perf_record(
        dir.path(),
        "static-dwarf.data",
        &["-e", "cpu-clock", "-F", "1000", "--call-graph", "dwarf"],
        &ws,
    );
    // Hot loops in `_init` and `_fini`: perf sizes `_init` up to the next symbol past
    // the PLT, and `_fini` up to `.rodata`'s first object.
    let init_fini_exe = build_c(
        dir.path(),
        "initfini",
        INIT_FINI_C,
        &["-O2", "-g", "-fno-omit-frame-pointer"],
    );
    let init_fini = perf_record(
        dir.path(),
        "initfini.data",
        &["-e", "cpu-clock", "-F", "2000", "-g"],
        &[init_fini_exe.display().to_string()],
    );
    let init_fini_text = sear_report(&init_fini, &["--no-children", "-g", "none"]);
    assert!(
        init_fini_text.contains("[.] _init") && init_fini_text.contains("[.] _fini"),
        "{init_fini_text}"
    );
    let src_sets: Vec<Vec<&str>> = vec![
        vec!["--sort", "srcline"],
        vec!["--sort", "srcfile"],
        vec!["--sort", "dso,srcline"],
        vec!["--sort", "srcline,sym"],
        vec!["--sort", "sym,srcline"],
        vec!["--sort", "srcfile,srcline"],
        vec!["--sort", "comm,srcfile,parent"],
        vec!["--sort", "srcline", "-p", "^top$|^mid$", "-x"],
    ];
    let sets: Vec<Vec<&str>> = vec![
        vec!["--sort", "parent"],
        vec!["--sort", "comm,parent"],
        vec!["--sort", "comm,parent", "-p", "^mid$|^top"],
        vec!["--sort", "sym", "-p", "leaf|main|^top"],
        vec!["--sort", "sym", "-p", "leaf|main|^top", "-x"],
        vec!["--sort", "comm,parent", "-p", "^top$", "-x"],
        vec!["-x"],
        vec!["--sort", "pid,sym"],
        vec!["--sort", "cpu,sym"],
        vec!["--sort", "symbol_size"],
        vec!["--sort", "sym,symbol_size"],
        vec!["--sort", "dso,dso_size"],
        vec!["--sort", "symbol"],
        vec!["--sort", "addr"],
        vec!["--sort", "sym,addr"],
    ];
    // The socket comes from the sample's CPU (where samples carry none,
    // socket -1, perf 6.1's children column counts a frame once per stack
    // entry: its callchain template lacks the key; so for cgroup_id).
    let cpu_sets: Vec<Vec<&str>> = vec![vec!["--sort", "socket,sym"], vec!["--sort", "cpu,socket"]];
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut runs: Vec<(&PathBuf, &Vec<&str>)> = Vec::new();
    for f in [&fp, &dwarf, &cpu] {
        runs.extend(sets.iter().map(|s| (f, s)));
    }
    runs.extend(
        sets.iter()
            .filter(|s| s.iter().any(|k| k.contains("_size")))
            .map(|s| (&init_fini, s)),
    );
    for f in [&fp, &dwarf, &static_fp, &static_dwarf] {
        runs.extend(src_sets.iter().map(|s| (f, s)));
    }
    runs.extend(cpu_sets.iter().map(|s| (&cpu, s)));
    runs.extend(cpu_sets.iter().map(|s| (&fp, s)));
    let ns_sets: Vec<Vec<&str>> = vec![
        vec!["--sort", "cgroup_id"],
        vec!["--sort", "cgroup_id,comm,sym"],
        vec!["--sort", "cgroup"],
        vec!["--sort", "cgroup,sym"],
        vec!["--sort", "time,sym"],
        vec!["--sort", "comm,time", "--time-quantum", "50ms"],
        vec!["--sort", "time", "--ns", "--time-quantum", "10ms"],
    ];
    runs.extend(ns_sets.iter().map(|s| (&ns, s)));
    // (Without NAMESPACES records: 0/0x0.)
    runs.extend(ns_sets.iter().map(|s| (&fp, s)));
    // Code page sizes (`record --code-page-size`: 4K, and 2M where the kernel's text is
    // in huge pages), `N/A` in a recording without them.
    let pages = perf_record(
        dir.path(),
        "pages.data",
        &["-e", "cpu-clock", "-F", "2000", "-g", "--code-page-size"],
        &w,
    );
    let page_sets: Vec<Vec<&str>> = vec![
        vec!["--sort", "code_page_size"],
        vec!["--sort", "code_page_size,sym"],
        vec!["--sort", "comm,code_page_size,dso"],
    ];
    runs.extend(page_sets.iter().map(|s| (&pages, s)));
    runs.extend(page_sets.iter().map(|s| (&fp, s)));
    {
        for (f, set) in runs {
            for mode in [
                &["--no-children", "-g", "none"][..],
                &["--children", "-g", "none"][..],
            ] {
                // perf 6.1 looks callchain frames' source lines up at their
                // unrelocated addresses (see the README): self rows only.
                // Children of DWARF stacks differ in inline frames (see
                // tests/report_symbols.rs).
                if mode[0] == "--children"
                    && (set.iter().any(|a| a.contains("src")) || f == &dwarf || f == &static_dwarf)
                {
                    continue;
                }
                let mut args: Vec<&str> = mode.to_vec();
                args.extend(set);
                let perf_text = perf_report(f, &args);
                let (ph, pr) = table(&perf_text);
                let (sh, sr) = table(&sear_report(f, &args));
                compared += 1;
                if ph != sh || pr != sr || ph.is_empty() {
                    let only_p: Vec<&String> = pr.iter().filter(|r| !sr.contains(r)).collect();
                    let only_s: Vec<&String> = sr.iter().filter(|r| !pr.contains(r)).collect();
                    failures.push(format!(
                        "{} {args:?}\nperf header: {ph:?}\nsear header: {sh:?}\nonly perf: {only_p:#?}\nonly sear: {only_s:#?}",
                        f.display()
                    ));
                }
            }
        }
    }
    // With call graphs (frame pointers: perf's and sear's stacks agree).
    let graph_sets: Vec<(&PathBuf, Vec<&str>)> = vec![
        (
            &fp,
            vec!["--no-children", "--sort", "parent", "-p", "leaf|main|^top"],
        ),
        (
            &fp,
            vec!["--no-children", "--sort", "comm,parent", "-p", "^top", "-x"],
        ),
        (
            &fp,
            vec!["--children", "--sort", "sym,parent", "-p", "^top"],
        ),
        (
            &fp,
            vec!["--no-children", "--sort", "cpu,sym", "-g", "caller"],
        ),
        (&static_fp, vec!["--no-children", "--sort", "srcline"]),
        (&fp, vec!["--no-children", "--sort", "srcline"]),
        (
            &static_fp,
            vec!["--no-children", "--sort", "dso,srcfile", "-g", "caller"],
        ),
    ];
    for (f, args) in &graph_sets {
        let (p, s) = (perf_report(f, args), sear_report(f, args));
        compared += 1;
        if blocks(&p) != blocks(&s) || !p.contains('|') {
            failures.push(format!(
                "{} {args:?} (call graphs)\n--- perf:\n{p}\n--- sear:\n{s}",
                f.display()
            ));
        }
    }
    eprintln!(
        "{} of {compared} reports equal perf's",
        compared - failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));

    // `tid` is `pid` (perf 6.1 has no `tid` key; its pid key is per thread).
    let args = ["--no-children", "-g", "none", "--sort"];
    let tid = sear_report(&fp, &[&args[..], &["tid"]].concat());
    let pid = sear_report(&fp, &[&args[..], &["pid"]].concat());
    assert_eq!(tid, pid);
    assert!(pid.contains("Pid:Command"));

    // An unknown key is a clear error that lists the known ones.
    let out = sear()
        .args(["report", "--stdio", "--sort", "comm,nosuchkey", "-i"])
        .arg(&fp)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nosuchkey") && err.contains("srcline") && err.contains("parent"),
        "{err}"
    );
}

/// `symoff` rows: each `[.] sym+0xOFF` row's share equals the share of
/// samples `perf script` prints at that symbol and offset.
#[test]
fn symoff_matches_perf_script() {
    assert!(have_perf());
    let dir = tempfile::tempdir().unwrap();
    let exe = build_prog(dir.path(), "sortprog", &[]);
    let w = vec![exe.display().to_string(), "1500".to_owned()];
    let f = perf_record(
        dir.path(),
        "fp.data",
        &["-e", "cpu-clock", "-F", "2000", "-g"],
        &w,
    );
    let script = stdout_of(&run_ok(
        perf()
            .args(["script", "-F", "ip,sym,symoff,dso", "-G", "-i"])
            .arg(&f),
    ));
    let mut counts: HashMap<String, u64> = HashMap::new();
    let mut total = 0u64;
    for l in script.lines().filter(|l| !l.trim().is_empty()) {
        total += 1;
        let mut parts = l.split_whitespace().skip(1);
        let (Some(symoff), Some(dso)) = (parts.next(), parts.next()) else {
            continue;
        };
        if dso.contains("sortprog") {
            *counts.entry(symoff.to_owned()).or_default() += 1;
        }
    }
    assert!(total > 200, "too few samples: {total}");
    let report = sear_report(&f, &["--no-children", "-g", "none", "--sort", "dso,symoff"]);
    assert!(report.contains("Symbol Offset"), "{report}");
    let mut sear_rows: HashMap<String, String> = HashMap::new();
    for l in report
        .lines()
        .filter(|l| l.contains("sortprog") && l.contains("[.] "))
    {
        let pct = l.split_whitespace().next().unwrap().to_owned();
        let key = l.rsplit("[.] ").next().unwrap().trim().to_owned();
        sear_rows.insert(key, pct);
    }
    assert!(counts.len() > 3, "{counts:?}");
    let expected: HashMap<String, String> = counts
        .iter()
        .map(|(k, n)| {
            (
                k.clone(),
                format!("{:.2}%", 100.0 * *n as f64 / total as f64),
            )
        })
        .collect();
    assert_eq!(sear_rows, expected);
}
