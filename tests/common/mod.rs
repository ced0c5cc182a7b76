//! Shared helpers for integration tests: run sear and perf, make recordings.
#![allow(dead_code)]

pub mod browser;
pub mod chromium;
pub mod export;
pub mod firefox;
pub mod tty;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const PERF: &str = "/usr/bin/perf";

/// The real-world perf.data files beside the repository.
pub const WILD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/conformance/perfdata-wild"
);

/// Differential tests need perf 6.1: fail (never skip) without it.
pub fn have_perf() -> bool {
    assert!(
        std::path::Path::new(PERF).exists(),
        "perf 6.1 is required by the differential tests: apt-get install linux-perf"
    );
    true
}

pub fn sear() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sear"));
    // Like perf below: no configuration of the machine's user, and no debuginfod server
    // (Debian's profile script names one: tests must not wait on the network).
    c.env("PERF_CONFIG", "/dev/null")
        .env_remove("DEBUGINFOD_URLS");
    c
}

pub fn perf() -> Command {
    let mut c = Command::new(PERF);
    // Keep perf away from the user's ~/.debug cache and config.
    c.env("PERF_CONFIG", "/dev/null")
        .env("TZ", "UTC")
        .env_remove("DEBUGINFOD_URLS");
    c
}

pub fn wild_dir() -> PathBuf {
    PathBuf::from(WILD)
}

/// The perf.data files of the conformance folder (sorted).
pub fn wild_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(wild_dir())
        .expect("../shared/conformance/perfdata-wild must exist beside the repository")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("perf.data"))
        })
        .collect();
    v.sort();
    v
}

pub fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `cmd` with `input` on its stdin; its stdout, which it must exit 0 with.
pub fn stdout_with_stdin(cmd: &mut Command, input: &[u8]) -> String {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    // Written from a thread: the child may fill its stdout pipe first.
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout_of(&out)
}

pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A CPU-bound shell workload of roughly `ms` milliseconds with a few forks.
pub fn busy_workload(ms: u32) -> Vec<String> {
    let script = format!(
        "end=$(( $(date +%s%N) + {ms}000000 )); while [ $(date +%s%N) -lt $end ]; do i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; done"
    );
    vec!["sh".into(), "-c".into(), script]
}

/// Records `workload` with perf 6.1 and the given options into `dir/name`.
pub fn perf_record(dir: &Path, name: &str, opts: &[&str], workload: &[String]) -> PathBuf {
    let out = dir.join(name);
    let pipe = opts.contains(&"-o-");
    let mut cmd = perf();
    cmd.arg("record").arg("-q");
    for o in opts.iter().filter(|o| **o != "-o-") {
        cmd.arg(o);
    }
    if pipe {
        cmd.arg("-o").arg("-");
        let f = std::fs::File::create(&out).expect("create pipe output");
        cmd.stdout(f);
    } else {
        cmd.arg("-o").arg(&out);
    }
    cmd.arg("--").args(workload);
    let o = cmd.output().expect("run perf record");
    assert!(
        o.status.success(),
        "perf record {opts:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Compiles the C source `src` into `dir/name` with gcc and `flags` (which
/// come before the source: use `-pthread`, not `-lpthread`); gcc's
/// messages fail the test.
pub fn build_c(dir: &Path, name: &str, src: &str, flags: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).expect("write the C source");
    let exe = dir.join(name);
    run_ok(Command::new("gcc").args(flags).arg("-o").arg(&exe).arg(&c));
    exe
}

/// The standard set of recordings the differential tests use.
pub fn standard_recordings(dir: &Path) -> Vec<PathBuf> {
    let w = busy_workload(150);
    let sleep: Vec<String> = vec!["sleep".into(), "0.1".into()];
    vec![
        perf_record(dir, "fp.data", &["-e", "cpu-clock", "-F", "2000", "-g"], &w),
        perf_record(
            dir,
            "dwarf.data",
            &[
                "-e",
                "cpu-clock",
                "-F",
                "1000",
                "--call-graph",
                "dwarf,4096",
            ],
            &w,
        ),
        perf_record(
            dir,
            "zstd.data",
            &["-e", "cpu-clock", "-F", "2000", "-g", "-z"],
            &w,
        ),
        perf_record(
            dir,
            "pipe.data",
            &["-e", "cpu-clock", "-F", "2000", "-g", "-o-"],
            &w,
        ),
        perf_record(
            dir,
            "syswide.data",
            &["-e", "cpu-clock", "-F", "500", "-a"],
            &sleep,
        ),
        perf_record(
            dir,
            "multi.data",
            &["-e", "cpu-clock,task-clock,page-faults", "-F", "1000"],
            &w,
        ),
        perf_record(
            dir,
            "group.data",
            &["-e", "{cpu-clock,task-clock}:S", "-F", "1000"],
            &w,
        ),
        perf_record(
            dir,
            "switch.data",
            &["-e", "cpu-clock", "-F", "1000", "--switch-events"],
            &w,
        ),
    ]
}

/// perf's random closing tip dropped (both sides of a comparison).
pub fn without_tip(s: &str) -> String {
    s.lines()
        .filter(|l| !l.starts_with("# (Tip:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `perf report --stdio -i f ARGS`, without its tip.
pub fn perf_report(f: &Path, args: &[&str]) -> String {
    let out = run_ok(perf().args(["report", "--stdio", "-i"]).arg(f).args(args));
    without_tip(&stdout_of(&out))
}

/// Whether `perf report --stdio -i f ARGS` survives every one of `sets`:
/// perf 6.1 now and then dies of SIGSEGV on a pipe-mode recording of a
/// leader-sampled group, which leaves nothing to compare with.
pub fn perf_reads_all(f: &Path, sets: &[Vec<&str>]) -> bool {
    use std::os::unix::process::ExitStatusExt;
    sets.iter().all(|args| {
        let o = perf()
            .args(["report", "--stdio", "-i"])
            .arg(f)
            .args(args)
            .output()
            .expect("run perf report");
        o.status.signal().is_none()
    })
}

/// `sear report --stdio -i f ARGS` with the flags that make its names and
/// return-address lookups those of perf 6.1.
pub fn sear_report(f: &Path, args: &[&str]) -> String {
    let out = run_ok(
        sear()
            .args([
                "report",
                "--stdio",
                "--short-names",
                "--raw-return-addresses",
                "-i",
            ])
            .arg(f)
            .args(args),
    );
    without_tip(&stdout_of(&out))
}

/// A report as a sorted list of blocks (an entry's row with its call
/// graph, its lines sorted): perf orders entries and graph lines of equal
/// weight by details (the thread that created an entry, tree insertion
/// order) sear reproduces only approximately, so content is compared.
/// Blank lines are dropped too: the section's closing ones follow
/// whichever entry comes last.
pub fn blocks(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in text.lines().filter(|l| !l.starts_with("# (Tip")) {
        let is_row = l.len() > 10 && l.as_bytes()[9] == b'%';
        if is_row || out.is_empty() || l.starts_with('#') {
            out.push(String::new());
        }
        if let Some(b) = out.last_mut() {
            b.push_str(l);
            b.push('\n');
        }
    }
    for b in &mut out {
        let mut lines: Vec<&str> = b.lines().filter(|l| !l.trim().is_empty()).collect();
        lines.sort_unstable();
        *b = lines.join("\n");
    }
    out.sort();
    out
}

/// A C program with hot loops inside `_init` and `_fini` (code added to `.init` and
/// `.fini`), the zero-sized symbols perf stretches to the next symbol.
pub const INIT_FINI_C: &str = r#"
__asm__(".section .init\n\tmov $150000000, %ecx\n1:\tdec %ecx\n\tjnz 1b\n\t.text");
__asm__(".section .fini\n\tmov $150000000, %ecx\n1:\tdec %ecx\n\tjnz 1b\n\t.text");
int main(void) { return 0; }
"#;

/// The index of the first line where two texts differ (or where the
/// shorter one ends), for messages that show it.
pub fn first_difference(a: &str, b: &str) -> usize {
    a.lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or(a.lines().count().min(b.lines().count()))
}

pub const TWO_PROCESS_PROGRAM: &str = r#"
#include <unistd.h>
volatile long x;
__attribute__((noinline)) void work(long n) { for (long i = 0; i < n; i++) x += i; }
__attribute__((noinline)) void other(long n) { for (long i = 0; i < n; i++) x -= i; }
int main(void) {
    for (int i = 0; i < 60; i++) { work(1500000); other(500000); getppid(); }
    return 0;
}
"#;

/// [`TWO_PROCESS_PROGRAM`] built in `dir` (`hot`, frame pointers), and
/// the shell command that runs two processes of it at once.
pub fn two_process_workload(dir: &Path) -> Vec<String> {
    let exe = build_c(
        dir,
        "hot",
        TWO_PROCESS_PROGRAM,
        &["-O1", "-g", "-fno-omit-frame-pointer"],
    );
    let exe = exe.display().to_string();
    vec!["sh".into(), "-c".into(), format!("{exe} & {exe}; wait")]
}

/// A frame-pointer recording (with CPUs) of two processes of a C program
/// that calls work, other and getppid in a loop.
pub fn two_process_recording(dir: &Path) -> PathBuf {
    perf_record(
        dir,
        "fp.data",
        &["-g", "--sample-cpu", "-F", "2000"],
        &two_process_workload(dir),
    )
}

/// The first and last sample times of a recording, in seconds (as perf
/// script prints them).
fn sample_span(data: &Path) -> (f64, f64) {
    let out = run_ok(perf().args(["script", "-F", "time", "-i"]).arg(data));
    let times: Vec<f64> = stdout_of(&out)
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(':').parse().ok())
        .collect();
    assert!(times.len() > 30, "too few samples: {}", times.len());
    (times[0], times[times.len() - 1])
}

/// The middle third of the recording's sample times, as `--time` takes it.
pub fn middle_third(data: &Path) -> String {
    let (lo, hi) = sample_span(data);
    let third = (hi - lo) / 3.0;
    format!("{:.6},{:.6}", lo + third, hi - third)
}

/// Two ranges in perf's `--time` form (`A,B C,D`): the second fifth and
/// the fourth of the recording's samples' span.
pub fn two_fifths(data: &Path) -> String {
    let (lo, hi) = sample_span(data);
    let f = (hi - lo) / 5.0;
    format!(
        "{:.6},{:.6} {:.6},{:.6}",
        lo + f,
        lo + 2.0 * f,
        lo + 3.0 * f,
        lo + 4.0 * f
    )
}

/// Runs `perf` and `sear` (each given a row of arguments) on every row and
/// fails listing the rows whose outputs differ.
pub fn assert_rows_equal(
    rows: &[Vec<&str>],
    perf: impl Fn(&[&str]) -> String,
    sear: impl Fn(&[&str]) -> String,
) {
    let mut differ = Vec::new();
    for args in rows {
        let (p, s) = (perf(args), sear(args));
        if s != p {
            differ.push(format!("{args:?}:\n--- perf\n{p}--- sear\n{s}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// As [`assert_rows_equal`], but where a row's outputs differ it is enough
/// that the entries come in the same order and each entry's call graph
/// holds the same lines ([`blocks`]): perf orders call-graph branches of
/// equal weight from different binaries by the addresses of its DSO
/// objects on its heap, which no other program can know.
pub fn assert_rows_equal_up_to_ties(
    rows: &[Vec<&str>],
    perf: impl Fn(&[&str]) -> String,
    sear: impl Fn(&[&str]) -> String,
) {
    let rows_of = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.len() > 10 && l.as_bytes()[9] == b'%')
            .map(str::to_owned)
            .collect()
    };
    let mut differ = Vec::new();
    for args in rows {
        let (p, s) = (perf(args), sear(args));
        if s != p && (rows_of(&s) != rows_of(&p) || blocks(&s) != blocks(&p)) {
            differ.push(format!("{args:?}:\n--- perf\n{p}--- sear\n{s}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// A C program busy on the CPU for 400 ms of wall time (however fast the
/// machine), for tests that start or stop sampling part-way through.
pub const BUSY_400MS_C: &str = r#"
#include <time.h>
int main(void) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  volatile long x = 0;
  do {
    for (int i = 0; i < 100000; i++) x += i;
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 400000000L);
  return 0;
}
"#;

/// A cgroup made for a test under the cgroup2 hierarchy, with a shell
/// spinning in it; removed (the shell killed) when dropped. None where no
/// cgroup2 file system is mounted or a cgroup cannot be made.
pub struct BusyCgroup {
    pub name: String,
    pub pid: u32,
    dir: PathBuf,
    child: std::process::Child,
}

impl BusyCgroup {
    pub fn new() -> Option<BusyCgroup> {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let root = mounts.lines().find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 2 && f[2] == "cgroup2").then(|| f[1].to_owned())
        })?;
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("sear-test-{}-{n}", std::process::id());
        let dir = Path::new(&root).join(&name);
        if let Err(e) = std::fs::create_dir(&dir) {
            eprintln!("cannot make a cgroup at {}: {e}", dir.display());
            return None;
        }
        let procs = dir.join("cgroup.procs");
        let child = Command::new("sh")
            .args([
                "-c",
                &format!("echo $$ > {}; while :; do :; done", procs.display()),
            ])
            .spawn()
            .expect("spawn a busy shell");
        let pid = child.id();
        // Until the shell is in its cgroup.
        for _ in 0..200 {
            if std::fs::read_to_string(&procs)
                .unwrap_or_default()
                .lines()
                .any(|l| l.trim() == pid.to_string())
            {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Some(BusyCgroup {
            name,
            pid,
            dir,
            child,
        })
    }
}

impl Drop for BusyCgroup {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// A C program that spins on the CPU for argv[1] milliseconds of wall
/// time (400 by default).
pub const SPIN_C: &str = r#"
#include <stdlib.h>
#include <time.h>
static volatile long sink;
int main(int argc, char **argv) {
    long ms = argc > 1 ? atol(argv[1]) : 400;
    struct timespec s, n;
    clock_gettime(CLOCK_MONOTONIC, &s);
    do {
        for (int i = 0; i < 100000; i++) sink += i;
        clock_gettime(CLOCK_MONOTONIC, &n);
    } while ((n.tv_sec - s.tv_sec) * 1000L + (n.tv_nsec - s.tv_nsec) / 1000000L < ms);
    return 0;
}
"#;

/// Where `ours` first differs from `theirs` (perf's), as a test's failure line
/// says it: `label line N`, then perf's line and sear's; None when equal.
pub fn difference(label: &str, theirs: &str, ours: &str) -> Option<String> {
    if ours == theirs {
        return None;
    }
    let at = first_difference(theirs, ours);
    Some(format!(
        "{label} line {}:\n  perf: {}\n  sear: {}",
        at + 1,
        theirs.lines().nth(at).unwrap_or("<end>"),
        ours.lines().nth(at).unwrap_or("<end>")
    ))
}

/// `go` (for `go tool pprof`), with pprof kept from looking for binaries
/// and symbol servers.
pub fn go() -> Command {
    let go = ["/usr/local/go/bin/go", "/usr/lib/go/bin/go", "/usr/bin/go"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect(
            "the pprof test needs Go (`go tool pprof`): apt-get install golang-go (.ci/run does)",
        );
    let mut c = Command::new(go);
    c.env("PPROF_BINARY_PATH", "/nonexistent");
    c
}
