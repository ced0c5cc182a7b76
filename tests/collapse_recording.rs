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

/// `--time` (perf's forms) and `--cpu` select the same samples in every
/// command that draws or exports a whole recording as `perf script` does
/// with the same arguments: the folded stacks of the selection equal perf
/// script's text of it folded, and the exports count its samples.
#[test]
fn time_and_cpu_ranges_select_what_perf_script_selects() {
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path());
    let data = perf_record(
        dir.path(),
        "cpu.data",
        &["-F", "4000", "-g", "--sample-cpu"],
        &[bin],
    );
    let fifths = two_fifths(&data);
    let mut failures = Vec::new();
    for args in [
        &["--time", "10%/2"][..],
        &["--time", "0%-30%,60%-90%"],
        &["--time", "40%"],
        &["--time", &fifths],
        &["-C", "0"],
        &["--cpu", "1"],
        &["--time", "50%/2", "--cpu", "0,1"],
    ] {
        let want = via_text(&data, args, &[]);
        let got = direct(&data, args);
        if want != got {
            failures.push(format!(
                "{args:?}:\n--- perf script | sear collapse\n{want}\n--- sear collapse -i\n{got}"
            ));
        }
        // export and flame select the same.
        let exported = stdout_of(&run_ok(
            sear()
                .args(["export", "--format", "folded", "-o", "-", "-i"])
                .arg(&data)
                .args(args),
        ));
        let plain = stdout_of(&run_ok(
            sear().args(["collapse", "-i"]).arg(&data).args(args),
        ));
        if exported != plain {
            failures.push(format!(
                "export {args:?}:\n{exported}\n--- collapse\n{plain}"
            ));
        }
        let n = stdout_of(&run_ok(
            perf()
                .args(["script", "-F", "time", "-i"])
                .arg(&data)
                .args(args),
        ))
        .lines()
        .count() as u64;
        let json = stdout_of(&run_ok(
            sear()
                .args(["export", "--format", "json", "-o", "-", "-i"])
                .arg(&data)
                .args(args),
        ));
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        let counted = json["events"][0]["samples"].as_u64().unwrap_or(0);
        if counted != n {
            failures.push(format!(
                "export json {args:?}: {counted} samples, perf script {n}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The whole recording is not a slice of itself: the slices hold fewer.
    let all = direct(&data, &[]);
    let slice = direct(&data, &["--time", "10%/2"]);
    let count = |t: &str| -> u64 {
        t.lines()
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    };
    assert!(count(&slice) > 0 && count(&slice) * 5 < count(&all));
    // Text has no samples to select: an error that says what to do.
    let out = sear()
        .args(["collapse", "--time", "10%", "-"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("perf script --time"));
    // A percent slice of a recording without its first and last sample
    // times (pipe mode) says why it cannot be cut.
    let piped = dir.path().join("pipe.data");
    let text = run_ok(perf().args(["script", "-F", "time", "-i"]).arg(&data));
    assert!(!text.stdout.is_empty());
    run_ok(
        perf()
            .args(["inject", "-i"])
            .arg(&data)
            .arg("-o")
            .arg("-")
            .stdout(std::fs::File::create(&piped).unwrap()),
    );
    let out = sear()
        .args(["report", "--stdio", "--time", "10%/2", "-i"])
        .arg(&piped)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("SAMPLE_TIME") && err.contains("seconds"),
        "{err}"
    );
}
