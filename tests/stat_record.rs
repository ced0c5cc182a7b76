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

fn stat_report(cmd: &mut std::process::Command, f: &std::path::Path) -> String {
    let o = cmd.args(["stat", "report", "-i"]).arg(f).output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `stat report` of perf's `stat record` file prints what perf's does, and
/// `sear stat record` writes a file perf's `stat report` reads to the same
/// counts; a recording without stat data is refused.
#[test]
fn stat_record_and_report_interoperate_with_perf() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("perf-stat.data");
    run_ok(perf().args(["stat", "record", "-o"]).arg(&theirs).args([
        "-e",
        "task-clock,page-faults,context-switches",
        "--",
        "sleep",
        "0.05",
    ]));
    let p = stat_report(&mut perf(), &theirs);
    assert!(p.contains("page-faults"), "{p}");
    assert_eq!(stat_report(&mut sear(), &theirs), p);

    let ours = dir.path().join("sear-stat.data");
    let rec = sear()
        .args(["stat", "record", "-o"])
        .arg(&ours)
        .args(["-e", "task-clock,page-faults", "--", "sleep", "0.05"])
        .output()
        .unwrap();
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    // (The recording prints its counts as stat does.)
    assert!(String::from_utf8_lossy(&rec.stderr).contains("page-faults"));
    let p = stat_report(&mut perf(), &ours);
    assert_eq!(stat_report(&mut sear(), &ours), p);
    let faults: u64 = p
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.get(1) == Some(&"page-faults"))
        .and_then(|w| w.first().copied())
        .and_then(|n| n.replace(',', "").parse().ok())
        .expect("a page-faults count");
    assert!(faults > 0, "{p}");
    assert!(p.contains("msec task-clock"), "{p}");
    assert!(p.contains("seconds time elapsed"), "{p}");

    let plain = dir.path().join("plain.data");
    run_ok(
        perf()
            .args(["record", "-q", "-o"])
            .arg(&plain)
            .args(["--", "true"]),
    );
    let o = sear()
        .args(["stat", "report", "-i"])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a `stat record` file"));
}

/// `script` on `stat record` files prints perf script's table: each round's
/// counts per thread and CPU (plain, interval and system-wide recordings,
/// and sear's own).
#[test]
fn script_of_stat_files_prints_perfs_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (name, args) in [
        ("plain.data", &["-e", "task-clock,page-faults"][..]),
        ("interval.data", &["-I", "30", "-e", "task-clock"][..]),
        ("all.data", &["-a", "-e", "cpu-clock"][..]),
    ] {
        let f = dir.path().join(name);
        run_ok(
            perf()
                .args(["stat", "record", "-o"])
                .arg(&f)
                .args(args)
                .args(["--", "sleep", "0.1"]),
        );
        files.push(f);
    }
    let ours = dir.path().join("sear.data");
    run_ok(sear().args(["stat", "record", "-o"]).arg(&ours).args([
        "-e",
        "page-faults",
        "--",
        "true",
    ]));
    files.push(ours);
    for f in &files {
        let p = stdout_of(&run_ok(perf().args(["script", "-i"]).arg(f)));
        assert!(p.starts_with("CPU   THREAD"), "{}: {p}", f.display());
        let s = stdout_of(&run_ok(sear().args(["script", "-i"]).arg(f)));
        assert_eq!(s, p, "{}", f.display());
    }
}
