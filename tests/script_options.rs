//! perf script's options, one per row of a table: perf 6.1 and sear read
//! the same recording with the same arguments and print the same text.
//! (sear with --raw-return-addresses: by default it looks a return address
//! up inside its call, so `_start` where perf names ld.so's
//! `_dl_start_user`, the label after the call.)

mod common;

use common::*;

#[test]
fn options_print_what_perf_prints() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = two_process_recording(dir.path());
    let time = middle_third(&data);
    let fifths = two_fifths(&data);
    let rows: Vec<Vec<&str>> = vec![
        vec!["-C", "0"],
        vec!["--cpu", "1", "-F", "comm,tid,cpu,ip,sym"],
        vec!["--dsos", "hot"],
        vec!["--dsos", "libc.so.6,hot", "-G"],
        vec!["-S", "work"],
        vec!["--symbols", "work,other", "--hide-call-graph"],
        vec!["-G"],
        vec!["--reltime"],
        vec!["--deltatime"],
        vec!["--reltime", "-C", "1"],
        vec!["--reltime", "--time", "0.01,0.05"],
        vec!["--time", &time],
        vec!["--time", &fifths, "-F", "comm,tid,time,ip,sym"],
        vec!["--time", "10%/2"],
        vec!["--time", "10%/1,10%/4", "-F", "tid,time,sym"],
        vec!["--time", "30%"],
        vec!["--time", "0%-10%,45%-55%,90%-100%", "-F", "time,ip"],
        vec!["--reltime", "--time", "0.01,0.02 0.04,0.05"],
        vec!["--header-only"],
        vec!["--header-only", "-I"],
        vec!["-c", "hot", "--tid", "1"],
        vec!["-D"],
        vec!["--stop-bt", "main"],
        vec!["--stop-bt", "work,other", "-F", "comm,ip,sym"],
        vec!["-a", "--show-kernel-path", "--max-blocks", "3"],
        vec!["--debug-mode"],
        vec!["-L"],
        vec!["-F", "comm,ip", "-F", "tid,sym", "--ns", "--ns"],
        vec!["--stitch-lbr", "-F", "comm,tid,ip,sym"],
    ];
    assert_script_rows_equal(&data, &rows);
    // --stop-bt cut the chains (perf's and so sear's): work and other
    // are the leaves of most samples.
    let full = stdout_of(&run_ok(
        sear()
            .args(["script", "-F", "comm,ip,sym", "-i"])
            .arg(&data),
    ));
    let cut = stdout_of(&run_ok(
        sear()
            .args([
                "script",
                "--stop-bt",
                "work,other",
                "-F",
                "comm,ip,sym",
                "-i",
            ])
            .arg(&data),
    ));
    let starts = |t: &str| t.matches("__libc_start_call_main").count();
    assert!(starts(&cut) < starts(&full) / 2, "{cut}");
    // What sear does not do is refused, saying why.
    for (args, why) in [
        (&["-s", "x.py"][..], "out of sear's scope"),
        (&["-g", "python"][..], "out of sear's scope"),
        (&["-l"][..], "out of sear's scope"),
        (&["--itrace=i0ns"][..], "Intel PT"),
        (&["--call-trace"][..], "Intel PT"),
        (&["--dlfilter", "x.so"][..], "dlfilters"),
        (&["--guestmount", "/x"][..], "perf kvm"),
        (&["--xed"][..], "xed"),
        (&["-k", "/x"][..], "--kallsyms"),
    ] {
        let o = sear()
            .arg("script")
            .args(args)
            .arg("-i")
            .arg(&data)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(why), "{args:?}: {err}");
    }
}

/// `--show-*-events`: the kernel records perf script shows beside the
/// samples (task, mmap, context switches), with their thread, CPU and time,
/// in time order among the samples, under the time options too.
#[test]
fn side_band_events_print_what_perf_prints() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = perf_record(
        dir.path(),
        "sw.data",
        &["-g", "--sample-cpu", "-F", "2000", "--switch-events"],
        &two_process_workload(dir.path()),
    );
    let rows: Vec<Vec<&str>> = vec![
        vec!["--show-task-events"],
        vec!["--show-mmap-events"],
        vec!["--show-switch-events"],
        vec![
            "--show-task-events",
            "--show-mmap-events",
            "--show-switch-events",
        ],
        vec!["--show-task-events", "--show-switch-events", "-G"],
        vec!["--show-task-events", "--reltime"],
        vec!["--show-mmap-events", "--deltatime", "-G"],
        vec!["--show-switch-events", "-C", "0"],
        vec!["--show-task-events", "-F", "comm,tid,cpu,time,event"],
        vec!["--show-task-events", "--ns", "-G"],
        vec!["--Latency", "--show-task-events", "-G"],
        vec!["-L", "-F", "comm,tid,cpu,time,event,ip,sym"],
        vec!["-D"],
        // Kinds this recording has none of: the samples alone.
        vec![
            "--show-lost-events",
            "--show-namespace-events",
            "--show-cgroup-events",
            "--show-bpf-events",
            "--show-text-poke-events",
        ],
    ];
    let out = stdout_of(&run_ok(
        perf()
            .args(["script", "--show-switch-events", "-i"])
            .arg(&data),
    ));
    assert!(
        out.contains("PERF_RECORD_SWITCH"),
        "the recording has no context switches"
    );
    assert_script_rows_equal(&data, &rows);
}

/// `--show-round-events` and `--dump-unsorted-raw-trace`: perf's unordered
/// processing, every record in file order (the round marks where the recorder
/// wrote them, each sample's lines after its raw record), on a recording
/// with small ring buffers, so that it has many rounds.
#[test]
fn file_order_prints_what_perf_prints() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = perf_record(
        dir.path(),
        "rounds.data",
        &["-g", "--sample-cpu", "-F", "4000", "-m", "2"],
        &two_process_workload(dir.path()),
    );
    let out = stdout_of(&run_ok(
        perf()
            .args(["script", "--show-round-events", "-i"])
            .arg(&data),
    ));
    let rounds = out.matches("PERF_RECORD_FINISHED_ROUND").count();
    assert!(rounds >= 3, "{rounds} rounds:\n{out}");
    let rows: Vec<Vec<&str>> = vec![
        vec!["--show-round-events"],
        vec![
            "--show-round-events",
            "--show-task-events",
            "--show-mmap-events",
        ],
        vec!["--show-round-events", "-F", "comm,tid,cpu,time,event"],
        vec!["--show-round-events", "-C", "1", "--reltime"],
        vec!["--dump-unsorted-raw-trace"],
    ];
    assert_script_rows_equal(&data, &rows);
}

/// perf script and sear script (with perf's names and return addresses)
/// on `data` print the same for every row of arguments.
fn assert_script_rows_equal(data: &std::path::Path, rows: &[Vec<&str>]) {
    assert_rows_equal(
        rows,
        |args| stdout_of(&run_ok(perf().arg("script").arg("-i").arg(data).args(args))),
        |args| {
            stdout_of(&run_ok(
                sear()
                    .args(["script", "--short-names", "--raw-return-addresses", "-i"])
                    .arg(data)
                    .args(args),
            ))
        },
    );
}

/// `--per-event-dump`: each event's sample lines in INPUT.EVENT.dump (a
/// file for every event, samples or not), what each got said on stdout in
/// perf's words; the files hold what perf's hold.
#[test]
fn per_event_dump_writes_perfs_files() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = two_process_recording(dir.path());
    let p_dir = dir.path().join("p");
    let s_dir = dir.path().join("s");
    for d in [&p_dir, &s_dir] {
        std::fs::create_dir(d).unwrap();
        std::fs::copy(&data, d.join("x.data")).unwrap();
    }
    let p = run_ok(
        perf()
            .args(["script", "--per-event-dump", "-i"])
            .arg(p_dir.join("x.data")),
    );
    let s = run_ok(
        sear()
            .args([
                "script",
                "--per-event-dump",
                "--short-names",
                "--raw-return-addresses",
                "-i",
            ])
            .arg(s_dir.join("x.data")),
    );
    let names = |d: &std::path::Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".dump"))
            .collect();
        v.sort();
        v
    };
    let dumps = names(&s_dir);
    assert!(!dumps.is_empty());
    assert_eq!(dumps, names(&p_dir));
    for n in &dumps {
        let ours = std::fs::read_to_string(s_dir.join(n)).unwrap();
        let theirs = std::fs::read_to_string(p_dir.join(n)).unwrap();
        assert!(
            ours == theirs,
            "{n} differs at line {}",
            first_difference(&theirs, &ours)
        );
    }
    let said = |o: &std::process::Output, who: &str, d: &std::path::Path| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("[ {who} script: ")))
            .map(|l| l.replace(&d.display().to_string(), "DIR"))
            .collect::<Vec<_>>()
    };
    assert_eq!(said(&s, "sear", &s_dir), said(&p, "perf", &p_dir));
}

/// `-F` naming a field some event types cannot have: perf's warnings, one
/// per type, as it reads the option (and stops at a `+`/`-` item mixed into
/// a plain list); with a type prefix, its error.
#[test]
fn field_type_warnings_are_perfs() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = two_process_recording(dir.path());
    let stderr = |mut c: std::process::Command, spec: &str| -> (bool, Vec<String>) {
        let o = c
            .args(["script", "-i"])
            .arg(&data)
            .args(["-F", spec])
            .output()
            .unwrap();
        let lines = String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| l.contains("not valid for"))
            .map(|l| l.trim_start_matches("sear: error: ").to_owned())
            .collect();
        (o.status.success(), lines)
    };
    for spec in [
        "trace",
        "comm,trace,bpf-output",
        "-trace",
        "comm,trace,+ip",
        "sw:trace",
    ] {
        let (p_ok, p) = stderr(perf(), spec);
        let (s_ok, s) = stderr(sear(), spec);
        assert_eq!(s, p, "-F {spec}");
        assert_eq!(s_ok, p_ok, "-F {spec}: exit status");
    }
}
