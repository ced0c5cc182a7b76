//! `sear evlist` prints what `perf evlist` prints for the same recording: names,
//! `-v` (every attribute), `-F`, `-g` (groups), `--trace-fields`, and perf's tip
//! line for tracepoints; in file and pipe mode (perf 6.1 names a stream's tracepoints `unknown
//! tracepoint`; sear names them).

mod common;
use common::*;

#[test]
fn evlist_equals_perf_evlist() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let sleep = vec!["sleep".to_string(), "0.05".to_string()];
    let files = [
        perf_record(dir.path(), "a.data", &["-e", "cpu-clock"], &sleep),
        perf_record(
            dir.path(),
            "b.data",
            &["-e", "{cpu-clock,task-clock},page-faults", "-c", "1000000"],
            &sleep,
        ),
        perf_record(
            dir.path(),
            "c.data",
            &[
                "-a",
                "-e",
                "sched:sched_switch,sched:sched_wakeup*",
                "-e",
                "cpu-clock:u",
            ],
            &sleep,
        ),
        perf_record(
            dir.path(),
            "d.data",
            &["-e", "cpu-clock", "-g", "-o-"],
            &sleep,
        ),
    ];
    for f in &files {
        for args in [
            &[][..],
            &["-v"],
            &["-F"],
            &["-g"],
            &["--trace-fields"],
            &["-F", "--trace-fields"],
        ] {
            let theirs = stdout_of(&run_ok(perf().args(["evlist", "-i"]).arg(f).args(args)));
            let ours = stdout_of(&run_ok(sear().args(["evlist", "-i"]).arg(f).args(args)));
            assert_eq!(ours, theirs, "{} {args:?}", f.display());
        }
    }
    let t = stdout_of(&run_ok(
        sear()
            .args(["evlist", "--trace-fields", "-i"])
            .arg(&files[2]),
    ));
    assert!(
        t.contains("sched:sched_switch: trace_fields: prev_comm,prev_pid"),
        "{t}"
    );
}

/// `sear list`: perf list's lines for software and tracepoint events (each kind
/// sorted as perf sorts it), perf's filters (`sched`, `sched:*`, `tracepoint`).
#[test]
fn list_equals_perf_list() {
    have_perf();
    let lines = |out: String, kind: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.ends_with(&format!("[{kind}]")))
            .map(str::to_owned)
            .collect()
    };
    let perf_list = |args: &[&str]| stdout_of(&run_ok(perf().arg("list").args(args)));
    let sear_list = |args: &[&str]| stdout_of(&run_ok(sear().arg("list").args(args)));
    let all = sear_list(&[]);
    let theirs = perf_list(&[]);
    for kind in [
        "Software event",
        "Kernel PMU event",
        "Raw hardware event descriptor",
        "Tracepoint event",
    ] {
        let (s, p) = (lines(all.clone(), kind), lines(theirs.clone(), kind));
        // (A machine may have no PMU with named events; the others are
        // always there.)
        assert!(
            !p.is_empty() || kind == "Kernel PMU event",
            "perf lists no {kind}"
        );
        assert_eq!(s, p, "{kind}");
    }
    for args in [&["sched"][..], &["sched:*"], &["tracepoint"], &["pmu"]] {
        assert_eq!(sear_list(args), perf_list(args), "{args:?}");
    }
    // Hardware events are listed, marked where this machine cannot count them.
    assert!(
        all.contains("cpu-cycles OR cycles") && all.contains("[Hardware event"),
        "{all}"
    );
}

/// On a machine booted without tracefs mounted, `sear list` mounts it where perf mounts it
/// and lists the tracepoints, as `perf list` does (run in a mount namespace of its own, so
/// the host's tracefs stays as it is).
#[test]
fn list_mounts_tracefs_as_perf_does() {
    have_perf();
    let script = format!(
        "umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug 2>/dev/null; \
         test -e /sys/kernel/tracing/events/header_page && exit 3; \
         {} list tracepoint",
        env!("CARGO_BIN_EXE_sear")
    );
    let o = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let theirs = stdout_of(&run_ok(perf().args(["list", "tracepoint"])));
    let n = |t: &str| {
        t.lines()
            .filter(|l| l.ends_with("[Tracepoint event]"))
            .count()
    };
    assert!(n(&theirs) > 100, "{theirs}");
    assert_eq!(n(&out), n(&theirs), "{out}");
}
