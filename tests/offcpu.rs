//! Off-CPU time (`sear record --off-cpu`): how long each thread waited and
//! with which stack, measured against what the test programs surely do
//! (sleep 5 × 100 ms, block ~300 ms on a pipe another thread or process
//! fills late, compute ~500 ms), within 10%; for one process, for threads,
//! and system-wide. The file is perf's: perf 6.1 reads it, and its
//! `offcpu-time` rows and lines equal sear's.

mod common;
use common::browser::Browser;
use common::chromium::Chromium;
use common::*;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One process: `sleeper` naps 5 × 100 ms, `reader` blocks on a pipe a
/// child fills after 300 ms, `burner` computes 500 ms of CPU time.
const ONE_THREAD: &str = r#"
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
volatile unsigned long sink;
static void nap(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}
__attribute__((noinline)) void sleeper(void) { for (int i = 0; i < 5; i++) nap(100); }
__attribute__((noinline)) void reader(void) {
    int fd[2];
    if (pipe(fd)) exit(1);
    pid_t p = fork();
    if (p == 0) { nap(300); if (write(fd[1], "x", 1) != 1) _exit(1); _exit(0); }
    char c;
    if (read(fd[0], &c, 1) != 1) exit(1);
    waitpid(p, NULL, 0);
}
__attribute__((noinline)) void burner(void) {
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    do {
        for (int i = 0; i < 100000; i++) sink += i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 500000000L);
}
int main(void) { sleeper(); reader(); burner(); return 0; }
"#;

/// The same jobs on four threads at once (`filler` writes the pipe after
/// 300 ms).
const THREADS: &str = r#"
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static int fds[2];
volatile unsigned long sink;
static void nap(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}
__attribute__((noinline)) void sleeper(void) { for (int i = 0; i < 5; i++) nap(100); }
static int reading;
__attribute__((noinline)) void reader(void) {
    char c;
    __atomic_store_n(&reading, 1, __ATOMIC_RELEASE);
    if (read(fds[0], &c, 1) != 1) exit(1);
}
__attribute__((noinline)) void filler(void) {
    /* The 300 ms start once the reader is about to block (its thread may
       start late on a loaded machine); yielding is not waiting. */
    while (!__atomic_load_n(&reading, __ATOMIC_ACQUIRE)) sched_yield();
    nap(300);
    if (write(fds[1], "x", 1) != 1) exit(1);
}
__attribute__((noinline)) void burner(void) {
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    do {
        for (int i = 0; i < 100000; i++) sink += i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 500000000L);
}
static void *run(void *f) { ((void (*)(void))f)(); return NULL; }
int main(void) {
    if (pipe(fds)) return 1;
    void (*fs[])(void) = {sleeper, reader, filler, burner};
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, run, (void *)fs[i]);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    return 0;
}
"#;

fn build(dir: &Path, name: &str, src: &str) -> PathBuf {
    build_c(
        dir,
        name,
        src,
        &["-O1", "-g", "-fno-omit-frame-pointer", "-pthread"],
    )
}

fn record(dir: &Path, name: &str, args: &[&str], exe: &Path) -> PathBuf {
    let _one = one_at_a_time();
    let data = dir.join(format!("{name}.data"));
    run_ok(
        sear()
            .args(["record", "--off-cpu", "-q", "-o"])
            .arg(&data)
            .args(args)
            .arg("--")
            .arg(exe),
    );
    data
}

/// Folded stacks (`collapse ARGS`) as (frames, count).
fn folded(data: &Path, args: &[&str]) -> Vec<(Vec<String>, u64)> {
    let out = stdout_of(&run_ok(
        sear().arg("collapse").args(args).arg("-i").arg(data),
    ));
    out.lines()
        .filter_map(|l| {
            let (stack, n) = l.rsplit_once(' ')?;
            Some((
                stack.split(';').map(str::to_string).collect(),
                n.parse().ok()?,
            ))
        })
        .collect()
}

/// Milliseconds of the stacks that hold every one of `frames`.
fn ms_through(stacks: &[(Vec<String>, u64)], frames: &[&str]) -> f64 {
    let ns: u64 = stacks
        .iter()
        .filter(|(s, _)| frames.iter().all(|f| s.iter().any(|x| x == f)))
        .map(|(_, n)| n)
        .sum();
    ns as f64 / 1e6
}

fn assert_near(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= want * 0.10,
        "{what}: {got:.1} ms off the CPU, expected {want} ms ± 10%"
    );
}

/// The recordings of these tests are made one at a time: each records
/// every switch of its program (and, system-wide, of the machine) with a
/// copy of the stack, and two at once on two cores lose events.
static RECORDING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    RECORDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The record counts of `data` (LOST records say why a wait is missing).
fn stats_of(data: &Path) -> String {
    let out = sear()
        .args(["report", "--stats", "-i"])
        .arg(data)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The waits each job surely makes, off-CPU, with stacks that reach `main`
/// (or the thread's start) through the function that waits.
fn assert_waits(off: &[(Vec<String>, u64)], threads: bool, data: &Path) {
    let outcome = std::panic::catch_unwind(|| check_waits(off, threads));
    if let Err(e) = outcome {
        eprintln!("{}: {}", data.display(), stats_of(data));
        std::panic::resume_unwind(e);
    }
}

fn check_waits(off: &[(Vec<String>, u64)], threads: bool) {
    assert_near("sleeper", ms_through(off, &["sleeper"]), 500.0);
    // (The pipe's read alone: the forked child's own nap is under reader
    // too in the one-thread program.)
    let read = ms_through(off, &["reader", "__GI___libc_read"]);
    assert_near("reader's read", read, 300.0);
    let root = if threads { "start_thread" } else { "main" };
    for f in ["sleeper", "reader"] {
        assert!(
            off.iter()
                .any(|(s, _)| s.iter().any(|x| x == f) && s.iter().any(|x| x == root)),
            "no off-CPU stack reaches {root} through {f}: {off:?}"
        );
    }
    assert!(
        ms_through(off, &["burner"]) < 50.0,
        "burner computes: it should hardly wait ({off:?})"
    );
}

#[test]
fn off_cpu_time_of_one_process_is_measured_with_its_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "waits", ONE_THREAD);
    let data = record(dir.path(), "one", &["--call-graph", "dwarf"], &exe);
    let off = folded(&data, &["--event-filter", "offcpu-time"]);
    assert_waits(&off, false, &data);
    // On the CPU: burner.
    let on = folded(&data, &["--event-filter", "cpu-clock"]);
    let burn = ms_through(&on, &["burner"]);
    let total: f64 = on.iter().map(|(_, n)| *n as f64 / 1e6).sum();
    assert!(
        burn > 0.8 * total,
        "burner has {burn:.0} of {total:.0} ms on the CPU"
    );
    // The wall-clock view is both: on-CPU stacks as they are, off-CPU ones
    // ending in [off-cpu].
    let wall = folded(&data, &["--wall-clock"]);
    let off_in_wall: HashMap<Vec<String>, u64> = wall
        .iter()
        .filter(|(s, _)| s.last().map(String::as_str) == Some("[off-cpu]"))
        .map(|(s, n)| (s[..s.len() - 1].to_vec(), *n))
        .collect();
    let off_map: HashMap<Vec<String>, u64> = off.iter().cloned().collect();
    assert_eq!(
        off_in_wall, off_map,
        "off-CPU stacks in the wall-clock view"
    );
    let on_in_wall: u64 = wall
        .iter()
        .filter(|(s, _)| s.last().map(String::as_str) != Some("[off-cpu]"))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(on_in_wall, on.iter().map(|(_, n)| n).sum::<u64>());
    // The flame graph draws them, off-CPU frames in blue.
    let svg = dir.path().join("wall.svg");
    run_ok(
        sear()
            .args(["flame", "--wall-clock", "-o"])
            .arg(&svg)
            .arg(&data),
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("<title>[off-cpu] (") && svg.contains("fill=\"rgb(60,110,220)\""));
    assert!(svg.contains("<title>burner ("));
    // The HTML report has the wall-clock view as an event of its own:
    // chosen in Chromium, its table gives [off-cpu] and burner their
    // shares of on-CPU plus off-CPU time.
    let page = dir.path().join("wall.html");
    run_ok(sear().args(["html", "-o"]).arg(&page).arg("-i").arg(&data));
    let mut ch = Chromium::launch();
    ch.open(&page);
    ch.wait_for("window.searReady === true");
    let events = ch.eval("[...document.querySelectorAll('#event option')].map(o => o.textContent)");
    let wall_index = events
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e.as_str().unwrap().starts_with("wall-clock"))
        .unwrap_or_else(|| panic!("no wall-clock event in the page: {events}"));
    ch.eval(&format!(
        "(() => {{ const e = document.getElementById('event'); e.value = '{wall_index}'; \
         e.dispatchEvent(new Event('change')); return true; }})()"
    ));
    let rows = ch.eval(
        "[...document.querySelectorAll('#symbols tbody tr')].map(r => [...r.cells].map(c => c.textContent))",
    );
    let self_share = |name: &str| -> f64 {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r[4].as_str().unwrap().ends_with(name))
            .map(|r| {
                r[1].as_str()
                    .unwrap()
                    .trim_end_matches('%')
                    .parse()
                    .unwrap()
            })
            .unwrap_or_else(|| panic!("no row {name}: {rows}"))
    };
    let total_ms = ms_through(&wall, &[]);
    let off_ms: f64 = off.iter().map(|(_, n)| *n as f64 / 1e6).sum();
    let (want_off, got_off) = (100.0 * off_ms / total_ms, self_share("[off-cpu]"));
    assert!(
        (got_off - want_off).abs() < 0.1,
        "[off-cpu]: {got_off}% in the page, {want_off:.2}% folded"
    );
    // (Its own time: burner also spends some in clock_gettime's system
    // call, a share that depends on the machine.)
    let burn_self: u64 = wall
        .iter()
        .filter(|(s, _)| s.last().map(String::as_str) == Some("burner"))
        .map(|(_, n)| n)
        .sum();
    let want_burner = 100.0 * burn_self as f64 / 1e6 / total_ms;
    let burner = self_share("burner");
    assert!(
        (burner - want_burner).abs() < 0.1,
        "burner: {burner}% of wall-clock time in the page, {want_burner:.2}% folded"
    );
    drop(ch);
    // pprof (go tool pprof) reads off-CPU time in nanoseconds.
    let pb = dir.path().join("one.pb.gz");
    run_ok(
        sear()
            .args(["export", "--format", "pprof", "-o"])
            .arg(&pb)
            .arg("-i")
            .arg(&data),
    );
    let top = stdout_of(&run_ok(
        go().args([
            "tool",
            "pprof",
            "-sample_index=offcpu-time",
            "-unit=ms",
            "-top",
        ])
        .arg(&pb),
    ));
    let cum = |name: &str| -> f64 {
        top.lines()
            .find(|l| l.split_whitespace().last() == Some(name))
            .and_then(|l| {
                l.split_whitespace()
                    .nth(3)?
                    .strip_suffix("ms")?
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no {name} in pprof's top:\n{top}"))
    };
    assert_near("sleeper in pprof", cum("sleeper"), 500.0);
    // Without off-CPU samples, --wall-clock says what to record.
    let plain = dir.path().join("plain.data");
    run_ok(sear().args(["record", "-q", "-o"]).arg(&plain).arg(&exe));
    let out = sear()
        .args(["collapse", "--wall-clock", "-i"])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sear record --off-cpu"));
}

#[test]
fn off_cpu_time_of_threads_and_system_wide() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "threads", THREADS);
    // (DWARF: libc has no frame pointers, and a frame-pointer walk from a
    // libc function skips its caller, the job's function.)
    let data = record(dir.path(), "threads", &["--call-graph", "dwarf"], &exe);
    let off = folded(&data, &["--event-filter", "offcpu-time"]);
    assert_waits(&off, true, &data);
    assert_near("filler", ms_through(&off, &["filler"]), 300.0);
    // (A bigger buffer: system-wide, every switch of the machine comes
    // with a copy of its stack, and a fresh-clone run lost one of the
    // sleeper's naps to a LOST record with the default one.)
    let data = record(
        dir.path(),
        "all",
        &["-a", "--call-graph", "dwarf", "-m", "2048"],
        &exe,
    );
    // Only the test program's threads (others wait too, system-wide).
    let name = exe.file_name().unwrap().to_str().unwrap();
    let off: Vec<_> = folded(&data, &["--event-filter", "offcpu-time"])
        .into_iter()
        .filter(|(s, _)| s.first().map(String::as_str) == Some(name))
        .collect();
    assert_waits(&off, true, &data);
}

#[test]
fn perf_reads_the_off_cpu_recording_as_sear_does() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(dir.path(), "waits", ONE_THREAD);
    for (name, args) in [("fp", vec!["-g"]), ("dwarf", vec!["--call-graph", "dwarf"])] {
        let data = record(dir.path(), name, &args, &exe);
        let evlist = stdout_of(&run_ok(perf().args(["evlist", "-i"]).arg(&data)));
        assert!(evlist.lines().any(|l| l == "offcpu-time"), "{evlist}");
        // The off-CPU section of the report, and the samples' lines.
        let section = |r: String| -> String {
            r.split("# Samples: ")
                .find(|s| s.contains("of event 'offcpu-time'"))
                .unwrap_or_default()
                .to_string()
        };
        for opts in [
            vec!["--no-children"],
            vec!["--no-children", "--sort", "comm,dso,sym", "-g", "caller"],
            vec!["--no-children", "--sort", "sym", "-g", "none"],
        ] {
            let theirs = section(perf_report(&data, &opts));
            let ours = section(sear_report(&data, &opts));
            assert!(theirs.contains("Event count"), "{theirs}");
            if let Some(d) = difference(&format!("{name} report {opts:?}"), &theirs, &ours) {
                panic!("{d}");
            }
        }
        let fields = ["-F", "comm,tid,time,period,event,ip,sym"];
        let theirs = stdout_of(&run_ok(
            perf().args(["script", "-i"]).arg(&data).args(fields),
        ));
        let ours = stdout_of(&run_ok(
            sear()
                .args(["script", "--short-names", "--raw-return-addresses", "-i"])
                .arg(&data)
                .args(fields),
        ));
        // (Only the off-CPU samples: the on-CPU ones sampled anywhere,
        // and perf's and sear's unwinders differ in corners such as the
        // vDSO.)
        let off_cpu = |text: String| -> String {
            text.split("\n\n")
                .filter(|b| b.contains("offcpu-time"))
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        let (theirs, ours) = (off_cpu(theirs), off_cpu(ours));
        assert!(theirs.contains("offcpu-time"));
        if let Some(d) = difference(&format!("{name} script"), &theirs, &ours) {
            panic!("{d}");
        }
    }
}
