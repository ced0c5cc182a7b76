//! Tracepoint samples in perf 6.1's recordings, printed by `sear script` as `perf script`
//! prints them: each event's fields formatted from its print format (sear links
//! libtraceevent, the library perf formats them with), kernel functions in fields named
//! by the recording's kernel symbols, with call chains and `-F` as perf handles them for
//! tracepoints; `sear report` rows on them; a damaged TRACING_DATA gives a warning and the
//! samples without their fields.

mod common;
use common::*;

use std::path::Path;

/// A shell workload that opens files, sleeps, syncs, signals and forks.
fn workload(dir: &Path) -> Vec<String> {
    let script = dir.join("work.sh");
    std::fs::write(
        &script,
        "for i in 1 2 3; do\n  ls -la /usr/lib > /dev/null\n  cat /etc/passwd > /dev/null\n  \
         echo x > \"$(dirname \"$0\")/f$i\"; sync\n  sleep 0.05\n  kill -0 $$\ndone\n",
    )
    .unwrap();
    vec!["sh".into(), script.display().to_string()]
}

fn sear_script(f: &Path, args: &[&str]) -> String {
    stdout_of(&run_ok(
        sear()
            .args(["script", "--short-names", "--raw-return-addresses", "-i"])
            .arg(f)
            .args(args),
    ))
}

fn perf_script(f: &Path, args: &[&str]) -> String {
    stdout_of(&run_ok(perf().args(["script", "-i"]).arg(f).args(args)))
}

fn assert_same(f: &Path, args: &[&str]) -> String {
    let (ours, theirs) = (sear_script(f, args), perf_script(f, args));
    if let Some(d) = difference(&format!("{args:?}"), &theirs, &ours) {
        panic!("{d}");
    }
    theirs
}

#[test]
fn tracepoint_fields_equal_perf_script() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let events = [
        "sched:*",
        "syscalls:sys_enter_openat",
        "syscalls:sys_exit_openat",
        "irq:*",
        "timer:*",
        "kmem:kmalloc",
        // (Not block:* or writeback:*: the dirty-buffer events are
        // thousands per write.)
        "block:block_rq_*",
        "block:block_bio_queue",
        "workqueue:*",
        "signal:*",
        "writeback:writeback_written",
    ];
    let mut opts = vec!["-a"];
    for e in &events {
        opts.extend(["-e", e]);
    }
    let data = perf_record(dir.path(), "tp.data", &opts, &workload(dir.path()));
    let out = assert_same(&data, &[]);
    // The kinds of formatting the workload surely exercises.
    for want in [
        "sched:sched_switch: prev_comm=",
        " ==> next_comm=",
        "sched:sched_process_exec: filename=",
        "syscalls:sys_enter_openat: dfd: 0x",
        "syscalls:sys_exit_openat: 0x",
        "timer:hrtimer_start: hrtimer=0x",
        "signal:signal_generate: sig=",
    ] {
        assert!(out.contains(want), "no `{want}` in perf's output");
    }
    // Kernel functions in fields are named, not left as addresses.
    assert!(
        out.lines()
            .any(|l| l.contains("hrtimer_start:") && !l.contains("function=0x")),
        "no timer function named"
    );
    for args in [
        &["-F", "comm,tid,cpu,time,event,trace"][..],
        &["-F", "trace"],
        &["-F", "trace:comm,trace", "--ns"],
        &["--show-task-events", "-C", "0"],
    ] {
        assert_same(&data, args);
    }
    // report's rows on the same recording, also by the samples' fields
    // (perf's `trace` key, as formatted and with --raw-trace).
    for args in [
        &["--no-children", "-g", "none"][..],
        &["--sort", "comm,sym", "--no-children", "-g", "none"],
        &["--sort", "trace", "-g", "none"],
        &["--sort", "comm,trace", "-n", "-g", "none"],
        &["--sort", "trace", "--raw-trace", "-g", "none"],
    ] {
        assert_report_same(&data, args);
    }
}

/// `report --stdio -q ARGS` of perf and sear on `f`: the same lines.
fn assert_report_same(f: &Path, args: &[&str]) {
    let report = |mut c: std::process::Command| {
        stdout_of(&run_ok(
            c.args(["report", "--stdio", "-q", "-i"]).arg(f).args(args),
        ))
    };
    let (p, s) = (report(perf()), report(sear()));
    if let Some(d) = difference(&format!("{} report {args:?}", f.display()), &p, &s) {
        panic!("{d}");
    }
}

/// With call chains (and another event beside them): perf shows each
/// tracepoint sample's chain unless `-F` decides its fields or `-G` hides it.
#[test]
fn tracepoints_with_call_chains_equal_perf_script() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = perf_record(
        dir.path(),
        "tpg.data",
        &[
            "-g",
            "-e",
            "sched:sched_switch",
            "-e",
            "cpu-clock",
            "-e",
            "syscalls:sys_enter_read",
        ],
        &workload(dir.path()),
    );
    let out = assert_same(&data, &[]);
    assert!(out.contains("syscalls:sys_enter_read: fd: 0x"), "{out}");
    for args in [
        &["-G"][..],
        &["-F", "+trace"],
        &["-F", "-trace"],
        &["-F", "sw:comm,period"],
        &["-F", "trace:+cpu"],
        &["-F", "comm,tid,event,trace"],
    ] {
        assert_same(&data, args);
    }
}

/// A damaged TRACING_DATA: a warning, every sample still printed, without its
/// fields; a format libtraceevent cannot read: the others still printed.
#[test]
fn damaged_tracing_data_is_a_warning() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = perf_record(
        dir.path(),
        "tp.data",
        &["-a", "-e", "sched:sched_switch", "-e", "sched:sched_wakeup"],
        &workload(dir.path()),
    );
    let bytes = std::fs::read(&data).unwrap();
    let good = perf_script(&data, &[]);
    let lines = good.lines().count();
    assert!(lines > 10, "{good}");

    // The section's magic overwritten.
    let magic = b"\x17\x08\x44tracing";
    let at = bytes
        .windows(magic.len())
        .position(|w| w == magic)
        .expect("TRACING_DATA");
    let mut bad = bytes.clone();
    bad[at..at + magic.len()].fill(0);
    let f = dir.path().join("bad-magic.data");
    std::fs::write(&f, &bad).unwrap();
    let o = sear().args(["script", "-i"]).arg(&f).output().unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("tracing data"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), lines);
    assert!(!out.contains("prev_comm="), "{out}");

    // One event's print format garbled: the other's fields still come out.
    let fmt = b"print fmt: \"prev_comm";
    let at = bytes
        .windows(fmt.len())
        .position(|w| w == fmt)
        .expect("sched_switch's format");
    let mut bad = bytes.clone();
    bad[at + 11..at + 12].copy_from_slice(b"(");
    let f = dir.path().join("bad-format.data");
    std::fs::write(&f, &bad).unwrap();
    let o = sear().args(["script", "-i"]).arg(&f).output().unwrap();
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), lines);
    assert!(out.contains("sched:sched_wakeup: comm="), "{out}");
}

/// A pipe-mode recording carries its tracing data in a record of its own.
#[test]
fn pipe_mode_tracepoints_equal_perf_script() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = perf_record(
        dir.path(),
        "tp-pipe.data",
        &[
            "-a",
            "-e",
            "sched:sched_switch",
            "-e",
            "sched:sched_wakeup",
            "-o-",
        ],
        &workload(dir.path()),
    );
    let out = assert_same(&data, &[]);
    assert!(out.contains("prev_comm="), "{out}");
}

/// `sear record -e SYS:NAME`: perf reads sear's tracepoint recordings (their
/// TRACING_DATA copied from tracefs as perf copies it) and prints what sear
/// prints; unknown tracepoints are an error that says where to look.
#[test]
fn sear_recordings_read_by_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    for (i, opts) in [
        &["-a", "-e", "sched:sched_switch,sched:sched_process_*"][..],
        &[
            "-g",
            "-e",
            "syscalls:sys_enter_openat",
            "-e",
            "signal:*",
            "-e",
            "cpu-clock",
        ],
        &["-a", "-e", "timer:hrtimer_*", "-e", "kmem:kmalloc"],
    ]
    .iter()
    .enumerate()
    {
        let data = dir.path().join(format!("s{i}.data"));
        run_ok(
            sear()
                .args(["record", "-q", "-o"])
                .arg(&data)
                .args(*opts)
                .arg("--")
                .args(workload(dir.path())),
        );
        let o = perf().args(["script", "-i"]).arg(&data).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && !err.contains("Error"),
            "{opts:?}: {err}"
        );
        let theirs = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(theirs.lines().count() > 3, "{opts:?}: {theirs}");
        assert!(!theirs.contains("FAILED TO PARSE"), "{opts:?}");
        assert_same(&data, &[]);
        // perf report's rows on sear's file, by symbol and by the fields.
        for args in [
            &["--no-children", "-g", "none"][..],
            &["--sort", "comm,trace", "-g", "none"],
        ] {
            assert_report_same(&data, args);
        }
    }
    let o = sear()
        .args(["record", "-q", "-o"])
        .arg(dir.path().join("x.data"))
        .args(["-e", "sched:no_such_event", "--", "true"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no such tracepoint") && err.contains("events/sched"),
        "{err}"
    );
}

/// `--filter` (the kernel's filter language) and `--exclude-perf` apply to the
/// tracepoints of the `-e` before them; a filter after a non-tracepoint, or one
/// the kernel rejects, is an error.
#[test]
fn filters_apply_to_the_tracepoints_before_them() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("f.data");
    run_ok(
        sear()
            .args(["record", "-q", "-a", "-o"])
            .arg(&data)
            .args([
                "-e",
                "sched:sched_switch",
                "--filter",
                "prev_pid != 0",
                "--filter",
                "next_pid != 0",
            ])
            .arg("--")
            .args(workload(dir.path())),
    );
    let out = perf_script(&data, &[]);
    assert!(out.lines().count() > 3, "{out}");
    assert!(
        !out.contains("prev_pid=0 ") && !out.contains("next_pid=0 "),
        "{out}"
    );
    // The recorder's own switches left out.
    let data = dir.path().join("x.data");
    let child = sear()
        .args(["record", "-q", "-a", "-o"])
        .arg(&data)
        .args(["-e", "sched:sched_switch", "--exclude-perf", "--"])
        .args(workload(dir.path()))
        .spawn()
        .unwrap();
    let me = child.id();
    assert!(child.wait_with_output().unwrap().status.success());
    let out = perf_script(&data, &["-F", "tid"]);
    assert!(out.lines().count() > 3, "{out}");
    assert!(
        !out.lines().any(|l| l.trim() == me.to_string()),
        "samples of the recorder {me}:\n{out}"
    );
    for (args, want) in [
        (
            &["-e", "cpu-clock", "--filter", "x"][..],
            "should follow a -e tracepoint",
        ),
        (
            &["--filter", "x", "-e", "sched:sched_switch"],
            "follow a -e tracepoint",
        ),
        (
            &["-e", "sched:sched_switch", "--filter", "no_field == 1"],
            "failed to set filter",
        ),
    ] {
        let o = sear()
            .args(["record", "-q", "-o"])
            .arg(dir.path().join("e.data"))
            .args(args)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// `sear stat` counts tracepoints: a program that opens three files counts at
/// least three `openat` entries, on perf's line for the event.
#[test]
fn stat_counts_tracepoints() {
    have_perf();
    let o = sear()
        .args(["stat", "-x,", "-e", "syscalls:sys_enter_openat", "--"])
        .args(["cat", "/etc/hostname", "/etc/passwd", "/etc/hosts"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("syscalls:sys_enter_openat"))
        .unwrap_or_else(|| panic!("{err}"));
    let count: u64 = line.split(',').next().unwrap().parse().unwrap();
    assert!(count >= 3, "{line}");
}
