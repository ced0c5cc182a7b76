//! Snapshot tests that need no perf and no particular machine: small recordings written
//! by perf-data's own writer and checked in under `tests/data/`, and what sear prints for
//! them (report modes, script, collapse, flame's folded input, export) checked in beside
//! them. The recordings name binaries under a directory that does not exist, so every
//! frame is an address and nothing depends on the files of the machine that runs the
//! test; user-space only (no kernel symbols are read).
//!
//! After a deliberate change of output, regenerate with `SEAR_BLESS=1 cargo test --test
//! snapshots` and review the diff of `tests/data/`. One test (the only one that needs
//! perf) checks that the report and script snapshots are what perf 6.1 prints.

mod common;

use std::path::{Path, PathBuf};

use perf_data::attr::{Event, EventAttr};
use perf_data::consts::*;
use perf_data::writer::{FeatureMap, FileWriter};
use perf_data::Endian;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn bless() -> bool {
    std::env::var_os("SEAR_BLESS").is_some()
}

/// Checks `got` against the checked-in file `name` (or writes it when blessing).
fn check(name: &str, got: &[u8]) {
    let path = data_dir().join(name);
    if bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (write it with SEAR_BLESS=1 cargo test --test snapshots)",
            path.display()
        )
    });
    if want != got {
        let (w, g) = (String::from_utf8_lossy(&want), String::from_utf8_lossy(got));
        let first = common::first_difference(&w, &g);
        panic!(
            "{name} differs from the checked-in snapshot at line {}:\n want: {:?}\n  got: {:?}\n\
             (if the change is meant, SEAR_BLESS=1 cargo test --test snapshots)",
            first + 1,
            w.lines().nth(first),
            g.lines().nth(first)
        );
    }
}

const SAMPLE_TYPE: u64 = PERF_SAMPLE_IP
    | PERF_SAMPLE_TID
    | PERF_SAMPLE_TIME
    | PERF_SAMPLE_CPU
    | PERF_SAMPLE_PERIOD
    | PERF_SAMPLE_CALLCHAIN;

fn cpu_clock() -> Event {
    Event {
        attr: EventAttr {
            type_: PERF_TYPE_SOFTWARE,
            size: 128,
            config: 0,
            sample_period_or_freq: 4000,
            sample_type: SAMPLE_TYPE,
            flags: (1 << perf_data::attr::flag::FREQ)
                | (1 << perf_data::attr::flag::EXCLUDE_KERNEL)
                | (1 << perf_data::attr::flag::EXCLUDE_HV),
            ..Default::default()
        },
        ids: vec![],
        name: Some("cpu-clock:u".into()),
    }
}

fn put_str(p: &mut Vec<u8>, s: &str) {
    p.extend_from_slice(s.as_bytes());
    p.push(0);
    while !p.len().is_multiple_of(8) {
        p.push(0);
    }
}

fn comm(pid: u32, tid: u32, name: &str) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&pid.to_le_bytes());
    p.extend_from_slice(&tid.to_le_bytes());
    put_str(&mut p, name);
    p
}

fn mmap2(pid: u32, addr: u64, len: u64, pgoff: u64, file: &str) -> Vec<u8> {
    let mut p = Vec::new();
    for v in [pid, pid] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    for v in [addr, len, pgoff] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    p.extend_from_slice(&8u32.to_le_bytes()); // maj
    p.extend_from_slice(&1u32.to_le_bytes()); // min
    p.extend_from_slice(&1234u64.to_le_bytes()); // ino
    p.extend_from_slice(&0u64.to_le_bytes()); // ino generation
    p.extend_from_slice(&5u32.to_le_bytes()); // PROT_READ|PROT_EXEC
    p.extend_from_slice(&2u32.to_le_bytes()); // MAP_PRIVATE
    put_str(&mut p, file);
    p
}

fn fork_exit(pid: u32, ppid: u32, time: u64) -> Vec<u8> {
    let mut p = Vec::new();
    for v in [pid, ppid, pid, ppid] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    p.extend_from_slice(&time.to_le_bytes());
    p
}

/// A user-space sample: `chain` is leaf first (the ip first, as perf's
/// callchains start), after perf's PERF_CONTEXT_USER marker.
fn sample(pid: u32, tid: u32, time: u64, cpu: u32, period: u64, chain: &[u64]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&chain[0].to_le_bytes());
    p.extend_from_slice(&pid.to_le_bytes());
    p.extend_from_slice(&tid.to_le_bytes());
    p.extend_from_slice(&time.to_le_bytes());
    p.extend_from_slice(&cpu.to_le_bytes());
    p.extend_from_slice(&0u32.to_le_bytes());
    p.extend_from_slice(&period.to_le_bytes());
    p.extend_from_slice(&(chain.len() as u64 + 1).to_le_bytes());
    p.extend_from_slice(&PERF_CONTEXT_USER.to_le_bytes());
    for ip in chain {
        p.extend_from_slice(&ip.to_le_bytes());
    }
    p
}

const APP: u64 = 0x5555_5555_4000;
const LIB: u64 = 0x7f00_0000_0000;

/// Two processes of one program: `app` (pid 100) spends its time in a hot
/// loop under main and in a library call; its child `worker` (pid 101,
/// forked) in a second function. Periods differ so that period and sample
/// counts disagree.
fn two_processes() -> Vec<u8> {
    let mut w = FileWriter::create(std::io::Cursor::new(Vec::new()), Endian::Little, &[]).unwrap();
    let misc_user = PERF_RECORD_MISC_USER;
    let mut rec = |t: u32, misc: u16, p: Vec<u8>| w.write_record(t, misc, &p, &[]).unwrap();
    rec(PERF_RECORD_COMM, 0, comm(100, 100, "app"));
    rec(
        PERF_RECORD_MMAP2,
        misc_user,
        mmap2(100, APP, 0x4000, 0, "/nonexistent/sear-test/app"),
    );
    rec(
        PERF_RECORD_MMAP2,
        misc_user,
        mmap2(100, LIB, 0x20000, 0, "/nonexistent/sear-test/libwork.so"),
    );
    let (main, hot, helper, start) = (APP + 0x1200, APP + 0x1100, APP + 0x1300, APP + 0x1050);
    let libcall = LIB + 0x8040;
    let mut t = 1_000_000_000u64;
    for i in 0..40u64 {
        t += 250_000;
        let chain: Vec<u64> = match i % 4 {
            // hot loop <- main <- _start
            0 | 1 => vec![hot + 8 * (i % 3), main + 0x21, start + 0x2e],
            // library call <- helper <- main <- _start
            2 => vec![
                libcall + 4 * (i % 2),
                helper + 0x13,
                main + 0x35,
                start + 0x2e,
            ],
            // helper itself
            _ => vec![helper + 0x8, main + 0x35, start + 0x2e],
        };
        rec(
            PERF_RECORD_SAMPLE,
            misc_user,
            sample(
                100,
                100,
                t,
                (i % 2) as u32,
                250_000 + 1000 * (i % 5),
                &chain,
            ),
        );
        if i == 19 {
            rec(PERF_RECORD_FORK, 0, fork_exit(101, 100, t + 1));
            rec(PERF_RECORD_COMM, 0, comm(101, 101, "worker"));
        }
        if i >= 20 {
            // The worker: its own function under main's child branch.
            let chain = vec![APP + 0x1400 + 4 * (i % 4), main + 0x50, start + 0x2e];
            rec(
                PERF_RECORD_SAMPLE,
                misc_user,
                sample(101, 101, t + 100, 1, 250_000, &chain),
            );
        }
    }
    rec(PERF_RECORD_EXIT, 0, fork_exit(101, 100, t + 500));
    rec(PERF_RECORD_EXIT, 0, fork_exit(100, 1, t + 1000));
    w.set_events(&[cpu_clock()]);
    w.finish(&FeatureMap::new()).unwrap().into_inner()
}

/// The recording, checked against (or written to) its checked-in copy:
/// perf-data's writer must keep writing the same bytes.
fn recording(name: &str, bytes: Vec<u8>) -> PathBuf {
    check(name, &bytes);
    data_dir().join(name)
}

fn sear_out(args: &[&str]) -> Vec<u8> {
    let out = common::sear()
        .args(args)
        .env("PERF_CONFIG", "/dev/null")
        .env("TZ", "UTC")
        .env("HOME", "/nonexistent/sear-test-home")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sear {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Each snapshot and the command that prints it (with `-i FILE` added):
/// those perf prints too, then sear's own.
const CASES: &[(&str, &[&str])] = &[
    ("report.txt", &["report", "--stdio"]),
    (
        "report-no-children.txt",
        &["report", "--stdio", "--no-children"],
    ),
    (
        "report-caller.txt",
        &[
            "report",
            "--stdio",
            "-g",
            "caller,0.5,callee,function,percent",
        ],
    ),
    (
        "report-sort.txt",
        &[
            "report",
            "--stdio",
            "--no-children",
            "--sort",
            "pid,dso,sym",
            "-n",
        ],
    ),
    ("report-folded.txt", &["report", "--stdio", "-g", "folded"]),
    ("report-stats.txt", &["report", "--stats"]),
    ("report-quiet.txt", &["report", "-q", "--stdio"]),
    (
        "report-quiet-self.txt",
        &["report", "-q", "--stdio", "--no-children", "-g", "caller"],
    ),
    ("report-comm.txt", &["report", "--stdio", "-c", "worker"]),
    ("script.txt", &["script"]),
    ("script-comm.txt", &["script", "-c", "worker"]),
    (
        "script-fields.txt",
        &["script", "-F", "comm,pid,tid,cpu,time,period,ip,sym,dso"],
    ),
];
const SEAR_ONLY: &[(&str, &[&str])] = &[
    ("collapse.txt", &["collapse", "--pid"]),
    ("export.json", &["export", "--format", "json", "-o", "-"]),
];

#[test]
fn two_processes_snapshots() {
    let data = recording("two-processes.data", two_processes());
    let f = data.to_str().unwrap();
    for (name, args) in CASES.iter().chain(SEAR_ONLY) {
        let got = sear_out(&[args, &["-i", f][..]].concat());
        check(&format!("two-processes/{name}"), &got);
    }
}

/// The snapshots are perf's output: perf 6.1 prints the same for every
/// report and script case (but for report's random tip line).
#[test]
fn perf_prints_the_two_process_snapshots() {
    common::have_perf();
    let data = recording("two-processes.data", two_processes());
    let f = data.to_str().unwrap();
    let no_tip = |t: &str| -> String {
        t.lines()
            .filter(|l| !l.starts_with("# (Tip:"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    for (name, args) in CASES {
        let out = common::perf().args(*args).args(["-i", f]).output().unwrap();
        assert!(out.status.success(), "perf {args:?}");
        let snapshot =
            std::fs::read_to_string(data_dir().join("two-processes").join(name)).unwrap();
        assert_eq!(
            no_tip(&snapshot),
            no_tip(&String::from_utf8_lossy(&out.stdout)),
            "{name}: the snapshot is not what perf prints"
        );
    }
}

/// The snapshots assert what the recording surely holds, so a blessed
/// snapshot cannot hide a wrong one: the hot loop has half of app's
/// samples, and the worker's function only the worker's.
#[test]
fn two_processes_snapshot_says_what_the_recording_holds() {
    let data = recording("two-processes.data", two_processes());
    let f = data.to_str().unwrap();
    let folded = String::from_utf8(sear_out(&["collapse", "--pid", f])).unwrap();
    let count = |needle: &str| -> u64 {
        folded
            .lines()
            .filter(|l| l.contains(needle))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    // 40 samples of app (period ~250k each) and 20 of the worker.
    let app = count("app-100;");
    let worker = count("worker-101;");
    assert!(app > 0 && worker > 0, "{folded}");
    let ratio = app as f64 / worker as f64;
    assert!((1.95..2.1).contains(&ratio), "app:worker {ratio}\n{folded}");
    let script = String::from_utf8(sear_out(&["script", "-i", f])).unwrap();
    let headers = script.lines().filter(|l| l.contains("cpu-clock:u")).count();
    assert_eq!(headers, 60, "{script}");
}
