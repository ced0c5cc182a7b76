//! `sear record` asks the kernel for what `perf record` asks for: for each
//! option set, both record the same command and `perf evlist -v` (perf
//! 6.1's own print of every attribute) must be the same text. This covers
//! perf's fallback of cycles to cpu-clock on machines without a PMU (the
//! name perf then makes, `cpu-clock:kuH` for `cycles:uk`), the default
//! event (`cycles:P`), modifiers' guest/host bits, the system-wide
//! tracking dummy, and the bits perf sets where the kernel has them.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

fn evlist(data: &Path) -> String {
    stdout_of(&run_ok(perf().args(["evlist", "-v", "-i"]).arg(data)))
}

#[test]
fn attributes_equal_perfs() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    // Lives until the test kills it (the recordings take a while on a
    // loaded machine).
    let mut target = Command::new("sleep")
        .arg("100000")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = target.id().to_string();
    let sets: Vec<Vec<&str>> = vec![
        vec![],
        vec!["-e", "cpu-clock"],
        vec!["-g", "-F", "max", "-e", "cycles:uk"],
        vec!["-e", "cycles"],
        vec!["-e", "{cycles,cpu-clock}"],
        vec!["-g"],
        vec!["--call-graph", "dwarf"],
        vec!["--call-graph", "dwarf,4096"],
        vec!["-c", "10000"],
        vec!["-P", "-c", "10000"],
        vec!["-d"],
        vec!["-F", "1000", "--no-inherit"],
        vec!["-e", "cpu-clock:u"],
        vec!["-e", "cpu-clock:k"],
        vec!["-e", "cpu-clock:G"],
        vec!["-e", "cpu-clock:ppp"],
        vec!["-e", "task-clock:uk,page-faults"],
        vec!["-e", "{cpu-clock,task-clock}"],
        vec!["--switch-events"],
        vec!["-D", "100"],
        vec!["--delay", "50", "-g"],
        vec!["-p", &pid],
        vec!["-t", &pid],
        vec!["-a"],
        vec!["-a", "-g"],
        vec!["-C", "0"],
        vec!["--sample-cpu", "-T", "-i"],
        vec!["--all-user"],
        vec!["-e", "cpu-clock", "--all-kernel"],
        vec!["-a", "--all-user"],
        vec!["-W", "--phys-data", "--data-page-size", "--code-page-size"],
        vec!["-R", "--sample-identifier"],
        vec!["--running-time", "--no-bpf-event"],
        vec!["-s"],
        vec!["-N"],
        vec!["-k", "mono"],
        vec!["--clockid", "CLOCK_REALTIME", "-g"],
        vec!["-k", "7", "-e", "page-faults"],
        vec!["-I"],
        vec!["--intr-regs=ax,sp"],
        vec!["--user-regs=ax,bx,sp"],
        vec!["-g", "--kernel-callchains"],
        vec!["-g", "--user-callchains"],
        vec!["-e", "cpu-clock,page-faults", "--group"],
        vec!["-n", "-c", "1000"],
        vec!["--no-samples"],
        vec!["-a", "-I", "--user-regs=ax"],
        vec!["--call-graph", "dwarf", "--user-regs=ax", "-I"],
        vec!["--mmap-flush", "4", "--aio", "--affinity=cpu"],
        vec!["--per-thread"],
        vec!["--per-thread", "-g", "-T"],
        vec!["--per-thread", "-e", "cpu-clock,page-faults"],
        vec!["--per-thread", "-p", &pid],
        vec!["--per-thread", "-a"],
        vec!["--no-buffering"],
        vec!["--buildid-mmap"],
        vec!["--buildid-all", "--tail-synthesize"],
        vec![
            "--transaction",
            "--timestamp-boundary",
            "--proc-map-timeout",
            "100",
        ],
        vec!["--switch-output", "--no-no-buildid"],
        vec!["--namespaces"],
        vec!["--all-cgroups", "-g"],
        vec!["--namespaces", "--all-cgroups", "-p", &pid],
        // Tracepoints: every hit (period 1) unless -F or -c say otherwise,
        // raw data and CPUs, wildcards in tracefs order.
        vec!["-e", "sched:sched_switch"],
        vec!["-e", "sched:sched_switch", "-a", "-g"],
        vec!["-e", "sched:sched_wakeup*", "-e", "cpu-clock"],
        vec![
            "-e",
            "sched:sched_process_*,syscalls:sys_enter_openat",
            "-F",
            "1000",
        ],
        vec!["-e", "{sched:sched_switch,sched:sched_wakeup}", "-c", "2"],
        vec!["-e", "syscalls:sys_enter_read", "--call-graph", "dwarf"],
        // Leader sampling: the leader's samples read the group (no
        // inheritance across a group read), the members do not sample;
        // a group's modifiers do not rename its events.
        vec!["-e", "{cpu-clock,page-faults}:S"],
        vec!["-e", "{cpu-clock,page-faults}:uS", "-e", "task-clock"],
        vec!["-e", "{cpu-clock:u,page-faults}:S", "-g"],
        vec!["-e", "{cpu-clock,page-faults}:S", "-a", "-g"],
        vec!["-e", "cpu-clock:S"],
        vec!["-e", "{cpu-clock,page-faults}:u"],
        // PMU syntax (this machine's `software` PMU): config, period,
        // freq and name terms, modifiers after, in groups.
        vec!["-e", "software/config=0,period=100000/"],
        vec!["-e", "software/config=2,period=1/u"],
        vec!["-e", "software/config=2,freq=100,name=faults/"],
        vec!["-e", "{software/config=0/,page-faults}"],
    ];
    let mut differ = Vec::new();
    for (i, opts) in sets.iter().enumerate() {
        let p_data = dir.path().join(format!("p{i}.data"));
        let s_data = dir.path().join(format!("s{i}.data"));
        // With -p, -t, -a and -C the command only sets the duration.
        let cmd: &[&str] = if opts.iter().any(|o| ["-p", "-t", "-a", "-C"].contains(o)) {
            &["sleep", "0.05"]
        } else {
            &["true"]
        };
        run_ok(
            perf()
                .args(["record", "-q", "-o"])
                .arg(&p_data)
                .args(opts)
                .arg("--")
                .args(cmd),
        );
        run_ok(
            sear()
                .args(["record", "-q", "-o"])
                .arg(&s_data)
                .args(opts)
                .arg("--")
                .args(cmd),
        );
        // (--switch-output names the file by its time.)
        let stamped = |f: &Path| {
            if f.exists() {
                return f.to_path_buf();
            }
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{name}.")))
                })
                .unwrap_or_else(|| panic!("no {name}"))
        };
        let (p, s) = (evlist(&stamped(&p_data)), evlist(&stamped(&s_data)));
        assert!(!p.is_empty());
        if p != s {
            differ.push(format!("{opts:?}\n  perf: {p}  sear: {s}"));
        }
    }
    let _ = target.kill();
    let _ = target.wait();
    assert!(
        differ.is_empty(),
        "attributes differ:\n{}",
        differ.join("\n")
    );
}

/// Options perf refuses here are refused by sear too, saying why: branch
/// stacks without a PMU that records them, a frequency above the kernel's
/// limit with --strict-freq, an unknown register.
#[test]
fn refused_as_perf_refuses() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.data");
    for (opts, why) in [
        (&["-b"][..], "branch stacks need"),
        (&["-j", "any"][..], "branch stacks need"),
        (
            &["--strict-freq", "-F", "10000000"][..],
            "above the kernel's limit",
        ),
        (&["--user-regs=xx"][..], "available registers: AX"),
        // Raw and PMU events the machine lacks or that cannot sample.
        (&["-e", "r003c"][..], "no hardware performance counters"),
        (
            &["-e", "nosuchpmu/event=0x3c/"][..],
            "no PMU named 'nosuchpmu'",
        ),
        (
            &["-e", "software/event=2/"][..],
            "unknown term 'event' for pmu 'software'",
        ),
        // (x86's msr PMU, where the kernel has it: its events only count.)
        (&["-a", "-e", "msr/tsc/"][..], "may only count, not sample"),
    ]
    .into_iter()
    .filter(|(o, _)| {
        !o.contains(&"msr/tsc/") || Path::new("/sys/bus/event_source/devices/msr").exists()
    }) {
        let record = |mut cmd: std::process::Command| {
            cmd.args(["record", "-q", "-o"])
                .arg(&out)
                .args(opts)
                .args(["--", "true"])
                .output()
                .unwrap()
        };
        assert!(!record(perf()).status.success(), "perf accepted {opts:?}");
        let s = record(sear());
        assert!(!s.status.success(), "sear accepted {opts:?}");
        let err = String::from_utf8_lossy(&s.stderr);
        assert!(err.contains(why), "{opts:?}: {err}");
    }
}

/// The seed's command as typed: on a machine without a PMU it records
/// cpu-clock under perf's fallback name, and says so.
#[test]
fn cycles_falls_back_to_cpu_clock_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("c.data");
    let out = run_ok(
        sear()
            .args(["record", "-g", "-F", "max", "-e", "cycles:uk", "-o"])
            .arg(&data)
            .args(["--", "true"]),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let stats = stdout_of(&run_ok(
        sear().args(["report", "--header-only", "-i"]).arg(&data),
    ));
    if err.contains("falling back to cpu-clock") {
        assert!(stats.contains("cpu-clock:kuH"), "{stats}");
    } else {
        // A machine with a PMU records cycles itself.
        assert!(stats.contains("cycles:uk"), "{stats}");
    }
}

/// `-G`: events opened on a cgroup (made for the test, a shell spinning
/// in it, another spinning outside): the attributes are perf's, and every
/// sample of the event is the inside shell's, in sear's recording as in
/// perf's; without -a, or with -G before the events, both refuse.
#[test]
fn cgroup_events_sample_only_the_cgroup() {
    have_perf();
    let Some(cg) = BusyCgroup::new() else {
        eprintln!("skipped: no cgroup2 hierarchy to make a cgroup in");
        return;
    };
    let mut outside = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let args = ["-e", "cpu-clock", "-G", cg.name.as_str(), "-a", "-q"];
    let rec = |tool: &mut Command, name: &str| {
        let out = dir.path().join(name);
        run_ok(
            tool.arg("record")
                .args(args)
                .arg("-o")
                .arg(&out)
                .args(["--", "sleep", "0.5"]),
        );
        out
    };
    let p = rec(&mut perf(), "perf.data");
    let s = rec(&mut sear(), "sear.data");
    let _ = outside.kill();
    let _ = outside.wait();
    assert_eq!(evlist(&p), evlist(&s));
    for f in [&p, &s] {
        let pids = stdout_of(&run_ok(
            perf().args(["script", "-F", "event,pid", "-i"]).arg(f),
        ));
        let samples: Vec<&str> = pids.lines().filter(|l| l.contains("cpu-clock")).collect();
        // A spinning shell for 500 ms at 4 kHz: hundreds of samples.
        assert!(samples.len() > 100, "{f:?}: {} samples", samples.len());
        let theirs = cg.pid.to_string();
        assert!(
            samples
                .iter()
                .all(|l| l.split_whitespace().next() == Some(theirs.as_str())),
            "{f:?}: a sample outside the cgroup:\n{pids}"
        );
    }
    for bad in [
        vec!["-e", "cpu-clock", "-G", cg.name.as_str()],
        vec!["-G", cg.name.as_str(), "-e", "cpu-clock", "-a"],
    ] {
        for tool in [perf(), sear()] {
            let mut tool = tool;
            let o = tool
                .arg("record")
                .args(&bad)
                .arg("-o")
                .arg(dir.path().join("bad.data"))
                .args(["--", "true"])
                .output()
                .unwrap();
            assert!(!o.status.success(), "{tool:?} {bad:?}");
        }
    }
}

/// A leader-sampled group recorded by sear reads as perf's: each sample of
/// the leader carries the group's counts, and the report's group view (one
/// column per member, the members' shares from those counts) equals perf
/// report's on the same file.
#[test]
fn leader_sampled_groups_report_as_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    // A loop that computes and a loop that touches new pages: both
    // columns have weight.
    let exe = build_c(
        dir.path(),
        "faults",
        r#"
#include <stdlib.h>
#include <string.h>
volatile unsigned long sink;
__attribute__((noinline)) void compute(void) { for (long i = 0; i < 60000000; i++) sink += i; }
__attribute__((noinline)) void touch(void) {
    for (int r = 0; r < 40; r++) { char *p = malloc(8 << 20); memset(p, r, 8 << 20); sink += p[4096]; free(p); }
}
int main(void) { compute(); touch(); return 0; }
"#,
        &["-O1", "-g", "-fno-omit-frame-pointer"],
    );
    let data = dir.path().join("s.data");
    run_ok(
        sear()
            .args(["record", "-q", "-e", "{cpu-clock,page-faults}:S", "-o"])
            .arg(&data)
            .arg(&exe),
    );
    for args in [
        &["--no-children"][..],
        &["--no-children", "--sort", "sym"],
        &["--no-children", "--group", "--sort", "comm,sym", "-n"],
    ] {
        let (p, s) = (perf_report(&data, args), sear_report(&data, args));
        assert!(p.contains("anon group { cpu-clock, page-faults }"), "{p}");
        if let Some(d) = difference(&format!("{args:?}"), &p, &s) {
            panic!("{d}");
        }
    }
}
