//! Files written by `perf stat record` (STAT_CONFIG, STAT, STAT_ROUND, no
//! samples, no sample_id_all): --stats, --header-only and -D equal perf's.

mod common;
use common::*;

#[test]
fn perf_stat_record_files_read_like_perf() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("stat.data");
    let interval = dir.path().join("stat-interval.data");
    run_ok(perf().args(["stat", "record", "-o"]).arg(&plain).args([
        "-e",
        "task-clock,page-faults",
        "--",
        "sleep",
        "0.05",
    ]));
    run_ok(perf().args(["stat", "record", "-o"]).arg(&interval).args([
        "-I",
        "20",
        "-a",
        "-e",
        "task-clock",
        "--",
        "sleep",
        "0.07",
    ]));
    let mut failures = Vec::new();
    for f in [&plain, &interval] {
        for mode in ["--stats", "--header-only", "-D"] {
            let p = stdout_of(&perf().args(["report", mode, "-i"]).arg(f).output().unwrap());
            let s = sear()
                .args(["report", mode, "-i"])
                .arg(f)
                .env("TZ", "UTC")
                .output()
                .unwrap();
            if p != stdout_of(&s) || p.is_empty() {
                failures.push(format!(
                    "{} {mode}:\n--- perf\n{p}\n--- sear\n{}",
                    f.display(),
                    stdout_of(&s)
                ));
            }
        }
    }
    // The unordered-processing notice is part of perf's -D output here.
    let d = stdout_of(
        &sear()
            .args(["report", "-D", "-i"])
            .arg(&plain)
            .output()
            .unwrap(),
    );
    assert!(d.starts_with("WARNING: No sample_id_all support"), "{d}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
