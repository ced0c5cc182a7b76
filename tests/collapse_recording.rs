//! `sear collapse -i perf.data` (and `sear flame -i perf.data`) against the
//! standard path on the same file: `perf script` 6.1 text folded by sear's
//! text collapser, which itself equals stackcollapse-perf.pl on the
//! FlameGraph suite (tests/collapse_conformance.rs). `--raw-return-addresses`
//! looks return addresses up as perf 6.1 does.

mod common;
use common::*;
use std::path::Path;

/// A C program at -O2 -g with a function inlined into another and a
/// little kernel time, built with frame pointers.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <unistd.h>
static inline __attribute__((always_inline)) double spin(double x) {
    for (int i = 0; i < 2000; i++) x = x * 1.0000001 + 0.5;
    return x;
}
__attribute__((noinline)) double work(double x) { return spin(x) + 1; }
__attribute__((noinline)) double other(double x) { return spin(x) * 2; }
int main(void) {
    double s = 0;
    for (long i = 0; i < 60000; i++) {
        s += (i % 3) ? work(i) : other(i);
        if (i % 5000 == 0) { FILE *f = fopen("/dev/null", "w"); fprintf(f, "%f", s); fclose(f); }
    }
    return s > 0 ? 0 : 1;
}
"#;

fn build(dir: &Path) -> String {
    let src = dir.join("prog.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let bin = dir.join("prog");
    run_ok(
        std::process::Command::new("gcc")
            .args(["-O2", "-g", "-fno-omit-frame-pointer", "-o"])
            .arg(&bin)
            .arg(&src),
    );
    bin.display().to_string()
}

/// `perf script ARGS -i f | sear collapse OPTS`.
fn via_text(f: &Path, script_args: &[&str], opts: &[&str]) -> String {
    have_perf();
    let text = run_ok(perf().arg("script").args(script_args).arg("-i").arg(f));
    stdout_with_stdin(sear().arg("collapse").args(opts), &text.stdout)
}

fn direct(f: &Path, opts: &[&str]) -> String {
    let out = run_ok(
        sear()
            .args(["collapse", "--raw-return-addresses", "-i"])
            .arg(f)
            .args(opts),
    );
    stdout_of(&out)
}

#[test]
fn recordings_fold_like_perf_script_text() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path());
    let prog = vec![bin];
    let fp = perf_record(dir.path(), "fp.data", &["-F", "4000", "-g"], &prog);
    let dwarf = perf_record(
        dir.path(),
        "dwarf.data",
        &["-F", "2000", "--call-graph", "dwarf,16384"],
        &prog,
    );
    let with_pid = ["-F", "comm,pid,tid,time,period,event,ip,sym,dso"];
    let mut failures = Vec::new();
    for f in [&fp, &dwarf] {
        for (script, opts) in [
            (&[][..], &[][..]),
            (&[][..], &["--all"][..]),
            (&[][..], &["--kernel", "--samples"][..]),
            (&with_pid[..], &["--tid"][..]),
            (&with_pid[..], &["--pid", "--addrs"][..]),
        ] {
            let want = via_text(f, script, opts);
            let got = direct(f, opts);
            // The two hot paths must be there whatever else the run
            // caught (a fast machine may catch nothing in fopen).
            assert!(
                want.lines().any(|l| l.contains("work"))
                    && want.lines().any(|l| l.contains("other")),
                "{}: hot stacks missing: {want}",
                f.display()
            );
            if want != got {
                failures.push(format!(
                    "{} {opts:?}:\n--- perf script | sear collapse\n{want}\n--- sear collapse -i\n{got}",
                    f.display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The inlined loop shows as its own frame in DWARF recordings, marked
    // with --inline; the default address - 1 lookup changes no stack here.
    let marked = direct(&dwarf, &["--inline"]);
    assert!(marked.contains(";work;spin_[i] "), "{marked}");
    let adjusted = run_ok(sear().args(["collapse", "-i"]).arg(&dwarf));
    assert_eq!(stdout_of(&adjusted), direct(&dwarf, &[]));

    // One graph per event: --event-filter picks, an unknown one is an error.
    let out = sear()
        .args(["collapse", "--event-filter", "no-such-event", "-i"])
        .arg(&fp)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no event no-such-event"));
    let picked = direct(&fp, &["--event-filter", "cpu-clock"]);
    assert_eq!(picked, direct(&fp, &[]));

    // A flame graph straight from the recording: the same stacks drawn.
    let svg = dir.path().join("fp.svg");
    run_ok(sear().args(["flame", "-i"]).arg(&fp).arg("-o").arg(&svg));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<?xml"), "{}", &svg[..100.min(svg.len())]);
    assert!(
        svg.contains(">work (") && svg.contains(">other ("),
        "frames missing"
    );
    // Stacks under frames too narrow to draw are folded into one line
    // before drawing: the graph is byte for byte the one drawn from all of
    // them (sear collapse's folded text, marked as flame marks frames).
    let folded = stdout_of(&run_ok(
        sear()
            .args(["collapse", "--all", "--inline", "-i"])
            .arg(&fp),
    ));
    for width in [&[][..], &["--minwidth", "1%"][..], &["--minwidth", "3"][..]] {
        let from_recording = run_ok(sear().arg("flame").args(width).arg("-i").arg(&fp));
        let from_text =
            stdout_with_stdin(sear().arg("flame").args(width).arg("-"), folded.as_bytes());
        assert!(
            stdout_of(&from_recording) == from_text,
            "{width:?}: the graph from the recording differs from the one from its folded stacks"
        );
    }
}
