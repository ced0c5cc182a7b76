//! perf report's options, one per row of a table: perf 6.1 and sear read
//! the same recording with the same arguments and print the same text.
//! (Rows avoid children-mode call graphs where entries of equal weight
//! make perf's order a coin toss.)

mod common;

use std::path::{Path, PathBuf};

use common::*;

const PROGRAM: &str = r#"
#include <unistd.h>
volatile long x;
__attribute__((noinline)) void work(long n) { for (long i = 0; i < n; i++) x += i; }
__attribute__((noinline)) void other(long n) { for (long i = 0; i < n; i++) x -= i; }
int main(void) {
    for (int i = 0; i < 60; i++) { work(1500000); other(500000); getppid(); }
    return 0;
}
"#;

/// A frame-pointer recording with CPUs of two processes of a C program.
fn recording(dir: &Path) -> PathBuf {
    let exe = build_c(
        dir,
        "hot",
        PROGRAM,
        &["-O1", "-g", "-fno-omit-frame-pointer"],
    );
    let exe = exe.display().to_string();
    perf_record(
        dir,
        "fp.data",
        &["-g", "--sample-cpu", "-F", "2000"],
        &["sh".into(), "-c".into(), format!("{exe} & {exe}; wait")],
    )
}

/// The middle third of the recording's sample times, as `--time` takes it.
fn middle_third(data: &Path) -> String {
    let out = run_ok(perf().args(["script", "-F", "time", "-i"]).arg(data));
    let times: Vec<f64> = stdout_of(&out)
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(':').parse().ok())
        .collect();
    assert!(times.len() > 30, "too few samples: {}", times.len());
    let (lo, hi) = (times[0], times[times.len() - 1]);
    let third = (hi - lo) / 3.0;
    format!("{:.6},{:.6}", lo + third, hi - third)
}

#[test]
fn options_print_what_perf_prints() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = recording(dir.path());
    let time = middle_third(&data);
    let rows: Vec<Vec<&str>> = vec![
        vec!["-G", "--no-children"],
        vec!["--inverted", "--no-children", "-g", "callee"],
        vec!["-U", "--no-children"],
        vec!["--hide-unresolved", "-g", "none"],
        vec!["-C", "0", "--no-children"],
        vec!["--cpu", "0-1", "-g", "none", "-n"],
        vec!["--symbol-filter", "work", "--no-children"],
        vec!["--symbol-filter=o", "-g", "none"],
        vec!["--time", &time, "--no-children"],
        vec!["--time", &time, "-g", "none", "-s", "dso,sym"],
        vec!["-g", "--no-children"],
        vec!["-g", "caller,0.5,callee", "--no-children"],
        vec!["--percent-limit", "5", "--no-children"],
        vec!["--samples", "5", "--no-children"],
        vec![
            "-M",
            "intel",
            "--objdump",
            "/usr/bin/objdump",
            "--no-children",
        ],
        vec!["--demangle", "--demangle-kernel", "-g", "none"],
        vec!["-q", "--no-children"],
    ];
    let mut differ = Vec::new();
    for args in &rows {
        let p = perf_report(&data, args);
        let mut c = sear();
        c.args(["report", "--stdio", "--short-names", "-i"])
            .arg(&data)
            .args(args);
        let s = without_tip(&stdout_of(&run_ok(&mut c)));
        assert!(
            p.lines().count() > 3,
            "perf printed too little for {args:?}:\n{p}"
        );
        if s != p {
            differ.push(format!("{args:?}:\n--- perf\n{p}--- sear\n{s}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // The filters filtered: fewer samples than without them.
    let samples = |args: &[&str]| -> String {
        let p = perf_report(&data, args);
        p.lines()
            .find(|l| l.starts_with("# Samples"))
            .unwrap_or_default()
            .to_string()
    };
    let all = samples(&["--no-children"]);
    assert_ne!(samples(&["--time", &time, "--no-children"]), all);
    assert_ne!(samples(&["-C", "0", "--no-children"]), all);
}
