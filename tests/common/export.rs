//! The recording the export tests share: a program whose two functions do work in the
//! ratio 2:1 (and a loop of system calls), recorded by perf with frame pointers, and perf
//! report's totals for it.

use std::path::{Path, PathBuf};

use super::*;
use serde_json::Value;

pub const SRC: &str = r#"
#include <unistd.h>
volatile unsigned long sink;
#define BODY { unsigned long x = sink; for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL; sink = x; }
__attribute__((noinline)) void work_a(long n) BODY
__attribute__((noinline)) void work_b(long n) BODY
/* Real system calls: kernel frames are sampled on any machine. */
__attribute__((noinline)) void syscalls(int n) { for (int i = 0; i < n; i++) sink += getppid(); }
int main(void) {
  for (int r = 0; r < 100; r++) { work_a(3000000); work_b(1500000); syscalls(2000); }
  return 0;
}
"#;

pub struct Rec {
    _dir: tempfile::TempDir,
    pub dir: PathBuf,
    pub data: PathBuf,
    /// perf report's sample count and event count.
    pub samples: u64,
    pub period: u64,
    /// Wall clock (ns since the epoch) just before and after recording.
    pub wall: (u64, u64),
}

pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// A first sample's wall-clock time must fall while the recording ran.
pub fn assert_during_recording(r: &Rec, t_ns: u64, what: &str) {
    // File times may be coarser than the clock by a tick.
    let slack = 20_000_000;
    assert!(
        r.wall.0 <= t_ns + slack && t_ns <= r.wall.1 + slack,
        "{what}: {t_ns} not within the recording's {:?}",
        r.wall
    );
}

/// One event's section of `perf report -n --sort comm`: its name, the
/// rows' samples summed and its event count.
#[derive(Debug)]
pub struct PerfCounts {
    pub event: String,
    pub samples: u64,
    pub period: u64,
}

pub fn perf_counts(data: &Path) -> Vec<PerfCounts> {
    let text = stdout_of(&run_ok(
        perf()
            .args([
                "report",
                "--stdio",
                "-n",
                "--no-children",
                "-g",
                "none",
                "--sort",
                "comm",
                "-i",
            ])
            .arg(data),
    ));
    let mut out: Vec<PerfCounts> = Vec::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("# Samples: ") {
            let event = rest.split('\'').nth(1).expect("an event name").to_owned();
            out.push(PerfCounts {
                event,
                samples: 0,
                period: 0,
            });
        } else if let Some(n) = l.strip_prefix("# Event count (approx.): ") {
            out.last_mut().expect("a section").period = n.trim().parse().unwrap();
        } else if !l.starts_with('#') && l.contains('%') {
            let n: u64 = l.split_whitespace().nth(1).unwrap().parse().unwrap();
            out.last_mut().expect("a section").samples += n;
        }
    }
    out
}

/// The test program, -O2 with frame pointers (and no identical-code
/// folding, so each function keeps its own name).
pub fn build_hot(dir: &std::path::Path) -> std::path::PathBuf {
    build_c(
        dir,
        "hot",
        SRC,
        &["-O2", "-g", "-fno-omit-frame-pointer", "-fno-ipa-icf"],
    )
}

pub fn recording() -> &'static Rec {
    static R: std::sync::OnceLock<Rec> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        have_perf();
        let dir = tempfile::tempdir().unwrap();
        let exe = build_hot(dir.path());
        let before = now_ns();
        let data = perf_record(
            dir.path(),
            "perf.data",
            &["-e", "cpu-clock", "-F", "4000", "-g"],
            &[exe.to_str().unwrap().to_owned()],
        );
        let wall = (before, now_ns());
        let events = perf_counts(&data);
        assert_eq!(events.len(), 1, "one event: {events:?}");
        let PerfCounts {
            samples, period, ..
        } = events.into_iter().next().unwrap();
        Rec {
            dir: dir.path().to_owned(),
            _dir: dir,
            data,
            samples,
            period,
            wall,
        }
    })
}

/// Exports the shared recording into a file of its own (tests run in parallel, and two
/// writing one file could read each other's half-written output).
pub fn export(r: &Rec, format: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = r.dir.join(format!("out{n}.{format}"));
    run_ok(
        sear()
            .args(["export", "--format", format, "-i"])
            .arg(&r.data)
            .arg("-o")
            .arg(&out),
    );
    out
}

pub fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).expect("valid JSON")
}

/// The test program built and recorded in `dir` with two events: cpu-clock and page-faults.
pub fn two_events(dir: &Path) -> PathBuf {
    have_perf();
    let exe = build_hot(dir);
    perf_record(
        dir,
        "two.data",
        &["-e", "cpu-clock/period=200000/,page-faults/period=1/", "-g"],
        &[exe.to_str().unwrap().to_owned()],
    )
}
