//! Binaries that are gone or rebuilt after the recording: perf's build-id cache (`~/.debug`,
//! where `perf record` copies the binaries its samples hit) holds the file with the recorded
//! build id, and sear both names and unwinds frames with it, as perf does; a different binary
//! at the recorded path never lends its unwind tables or names. Each test has its own `HOME`,
//! so its cache is its own.

mod common;

use common::*;
use std::path::Path;

/// Without frame pointers (`-O2`): stacks through `outer` and `middle` come only from DWARF
/// unwinding with the binary's CFI.
const PROGRAM: &str = r#"
volatile long sink;
__attribute__((noinline)) long inner(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) x += i ^ (x >> 3);
    return x;
}
__attribute__((noinline)) long middle(long n) { long r = inner(n); sink += r; return r + 1; }
__attribute__((noinline)) long outer(long n) { long r = middle(n); sink += r; return r * 3; }
int main(void) {
    for (int k = 0; k < 400; k++) sink += outer(1000000);
    return 0;
}
"#;

/// A different program for the same path: other code at other addresses.
const OTHER: &str = r#"
volatile double d;
int main(void) {
    for (int k = 0; k < 1000; k++) d += k * 0.5;
    return 0;
}
"#;

/// `report --children --sort sym` children shares by symbol, from `cmd` run with `home`.
fn children(mut cmd: std::process::Command, home: &Path, data: &Path) -> Vec<(String, f64)> {
    let out = run_ok(
        cmd.env("HOME", home)
            .args([
                "report",
                "--stdio",
                "--children",
                "--sort",
                "sym",
                "-g",
                "none",
                "-i",
            ])
            .arg(data),
    );
    stdout_of(&out)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let c: f64 = f.next()?.strip_suffix('%')?.parse().ok()?;
            let _self = f.next()?;
            let _level = f.next()?;
            Some((f.next()?.to_string(), c))
        })
        .collect()
}

fn share(rows: &[(String, f64)], sym: &str) -> f64 {
    rows.iter().find(|r| r.0 == sym).map_or(0.0, |r| r.1)
}

/// Records the program with DWARF stacks, `HOME` set to `home` (perf fills its cache there).
fn record(dir: &Path, home: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let bin = build_c(dir, "prog", PROGRAM, &["-O2", "-g"]);
    let data = dir.join("perf.data");
    run_ok(
        perf()
            .env("HOME", home)
            .args(["record", "-q", "--call-graph", "dwarf", "-F", "1000", "-o"])
            .arg(&data)
            .arg(&bin),
    );
    (bin, data)
}

/// The stacks sear shows equal perf's: `main` and `outer` hold nearly every sample.
fn same_stacks(home: &Path, data: &Path, what: &str) {
    let ours = children(sear(), home, data);
    let theirs = children(perf(), home, data);
    for sym in ["main", "outer", "middle", "inner"] {
        let (a, b) = (share(&ours, sym), share(&theirs, sym));
        assert!(
            (a - b).abs() <= 0.5,
            "{what}: {sym} {a}% in sear, {b}% in perf\nsear: {ours:?}\nperf: {theirs:?}"
        );
    }
    assert!(
        share(&ours, "main") >= 90.0 && share(&ours, "outer") >= 90.0,
        "{what}: stacks reach main: {ours:?}"
    );
}

/// sear's report (call graphs included), script and collapse of a recording.
fn outputs(home: &Path, data: &Path) -> Vec<String> {
    [
        &["report", "--stdio", "--children"][..],
        &["script"][..],
        &["collapse"][..],
    ]
    .iter()
    .map(|args| {
        stdout_of(&run_ok(
            sear().env("HOME", home).args(*args).arg("-i").arg(data),
        ))
    })
    .collect()
}

/// What a removed binary changes in sear's outputs: nothing.
fn same_outputs(before: &[String], after: &[String], what: &str) {
    for (name, (b, a)) in ["report", "script", "collapse"]
        .iter()
        .zip(before.iter().zip(after))
    {
        assert!(b.contains("inner"), "{what}: {name} names the program: {b}");
        assert!(a == b, "{what}: {name} changed:\nbefore:\n{b}\nafter:\n{a}");
    }
}

#[test]
fn a_removed_binary_is_unwound_from_the_cache() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (bin, data) = record(dir.path(), home.path());
    assert!(
        home.path().join(".debug/.build-id").is_dir(),
        "perf record filled its build-id cache"
    );
    same_stacks(home.path(), &data, "binary in place");
    let before = outputs(home.path(), &data);
    // The whole build directory goes (the recording is kept apart).
    let kept = home.path().join("perf.data");
    std::fs::rename(&data, &kept).unwrap();
    std::fs::remove_dir_all(dir.path()).unwrap();
    assert!(!bin.exists());
    same_stacks(home.path(), &kept, "binary removed");
    same_outputs(&before, &outputs(home.path(), &kept), "perf's recording");
}

#[test]
fn a_rebuilt_binary_lends_neither_names_nor_unwind_tables() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let (bin, data) = record(dir.path(), home.path());
    // Another program at the same path: the cache's copy (the recorded build id) is used.
    let other = build_c(dir.path(), "other", OTHER, &["-O2", "-g"]);
    std::fs::rename(&other, &bin).unwrap();
    same_stacks(home.path(), &data, "binary replaced");
    // Without the cache, the replaced binary is not used at all: no frame is named from it
    // and no stack unwound through it (perf does the same: its frames stay addresses).
    std::fs::remove_dir_all(home.path().join(".debug")).unwrap();
    let ours = children(sear(), home.path(), &data);
    for sym in ["main", "outer", "middle", "inner"] {
        assert_eq!(
            share(&ours, sym),
            0.0,
            "{sym} named from another binary: {ours:?}"
        );
    }
}

fn lines_of(out: &std::process::Output) -> Vec<String> {
    stdout_of(out).lines().map(str::to_owned).collect()
}

/// `sear record` adds what its samples hit to the cache in perf's layout: perf lists it, and
/// after the binary is removed both perf and sear unwind and name its frames from there.
/// `-N` adds nothing.
#[test]
fn sear_record_fills_the_cache_perf_reads() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let bin = build_c(dir.path(), "prog", PROGRAM, &["-O2", "-g"]);
    let data = dir.path().join("sear.data");
    run_ok(
        sear()
            .env("HOME", home.path())
            .args(["record", "-q", "--call-graph", "dwarf", "-F", "1000", "-o"])
            .arg(&data)
            .arg(&bin),
    );
    let listed = lines_of(&run_ok(
        perf()
            .env("HOME", home.path())
            .args(["buildid-cache", "-l"]),
    ));
    let id = symbols_id(&bin);
    assert!(
        listed.contains(&format!("{id} {}", bin.display())),
        "perf buildid-cache -l lists the program: {listed:?}"
    );
    let before = outputs(home.path(), &data);
    std::fs::remove_file(&bin).unwrap();
    same_stacks(home.path(), &data, "sear's recording, binary removed");
    same_outputs(&before, &outputs(home.path(), &data), "sear's recording");

    let home2 = tempfile::tempdir().unwrap();
    let bin = build_c(dir.path(), "prog", PROGRAM, &["-O2", "-g"]);
    run_ok(
        sear()
            .env("HOME", home2.path())
            .args(["record", "-q", "-N", "-o"])
            .arg(dir.path().join("n.data"))
            .arg(&bin),
    );
    assert!(!home2.path().join(".debug").exists(), "-N: no cache");
}

/// A binary's build id as perf prints it (`buildid-list -i` reads an ELF file's too).
fn symbols_id(bin: &Path) -> String {
    let out = run_ok(perf().args(["buildid-list", "-i"]).arg(bin));
    stdout_of(&out).trim().to_owned()
}

/// `sear buildid-cache` against `perf buildid-cache` on one cache: what either adds the other
/// lists, `-M` names the same missing binaries, `-r`, `-p` and `-P` remove what perf sees gone.
#[test]
fn buildid_cache_commands_agree_with_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let a = build_c(dir.path(), "a", PROGRAM, &["-O2", "-g"]);
    let b = build_c(dir.path(), "b", OTHER, &["-O2", "-g"]);
    let list = |tool: std::process::Command| {
        let mut t = tool;
        lines_of(&run_ok(t.env("HOME", h).args(["buildid-cache", "-l"])))
    };
    run_ok(sear().env("HOME", h).args(["buildid-cache", "-a"]).arg(&a));
    run_ok(perf().env("HOME", h).args(["buildid-cache", "-a"]).arg(&b));
    let ours = list(sear());
    assert_eq!(ours, list(perf()), "both list the same");
    for (f, want) in [(&a, symbols_id(&a)), (&b, symbols_id(&b))] {
        assert!(
            ours.contains(&format!("{want} {}", f.display())),
            "{ours:?}"
        );
    }
    // -M: a recording's binaries the cache lacks (here: all but the program).
    let data = dir.path().join("perf.data");
    run_ok(
        perf()
            .env("HOME", h)
            .args(["record", "-q", "-N", "-o"])
            .arg(&data)
            .arg(&a),
    );
    let missing = |tool: std::process::Command| {
        let mut t = tool;
        let mut v = lines_of(&run_ok(
            t.env("HOME", h).args(["buildid-cache", "-M"]).arg(&data),
        ));
        v.sort();
        v
    };
    let m = missing(sear());
    assert_eq!(m, missing(perf()));
    assert!(
        !m.iter().any(|l| l.ends_with(&a.display().to_string())),
        "{m:?}"
    );
    // -r by sear: perf no longer lists it; -p the other; -P everything.
    run_ok(sear().env("HOME", h).args(["buildid-cache", "-r"]).arg(&a));
    assert_eq!(list(perf()).len(), 1, "{:?}", list(perf()));
    run_ok(sear().env("HOME", h).args(["buildid-cache", "-p"]).arg(&b));
    assert!(list(perf()).is_empty());
    run_ok(sear().env("HOME", h).args(["buildid-cache", "-a"]).arg(&a));
    assert_eq!(list(perf()).len(), 1);
    run_ok(sear().env("HOME", h).args(["buildid-cache", "-P"]));
    assert!(list(perf()).is_empty() && list(sear()).is_empty());
}

/// A process in another mount namespace, as in a container: the command runs under
/// `unshare -m`, where a bind mount puts the hot program at the path where the host has another
/// one. sear record records the build id of the file the process ran and copies that file into
/// the cache (through /proc/PID/root while it runs), so after the namespace is gone both sear
/// and perf report the process's functions, not the host file's.
#[test]
fn a_containers_binary_is_cached_as_the_container_saw_it() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // (Running a second or so: the recorder sees its maps while it runs.)
    let long = PROGRAM.replace("k < 400", "k < 1200");
    let inside = build_c(dir.path(), "inside", &long, &["-O2", "-g"]);
    let host = build_c(dir.path(), "prog", OTHER, &["-O2", "-g"]);
    let data = dir.path().join("perf.data");
    let script = format!(
        "mount --bind {} {} && exec {}",
        inside.display(),
        host.display(),
        host.display()
    );
    run_ok(
        sear()
            .env("HOME", home.path())
            .args(["record", "-q", "-F", "1000", "-o"])
            .arg(&data)
            .args([
                "--",
                "unshare",
                "-m",
                "--propagation",
                "private",
                "sh",
                "-c",
            ])
            .arg(&script),
    );
    // The host's file is still the other program.
    assert_ne!(symbols_id(&host), symbols_id(&inside));
    let recorded = stdout_of(&run_ok(sear().args(["buildid-list", "-i"]).arg(&data)));
    assert!(
        recorded.contains(&format!("{} {}", symbols_id(&inside), host.display())),
        "the recorded build id is the container's file's: {recorded}"
    );
    let rows = |tool: std::process::Command, home: &Path, data: &Path| {
        let mut t = tool;
        let out = run_ok(
            t.env("HOME", home)
                .args([
                    "report",
                    "--stdio",
                    "--no-children",
                    "--sort",
                    "dso,sym",
                    "-g",
                    "none",
                    "-i",
                ])
                .arg(data),
        );
        stdout_of(&out)
            .lines()
            .filter(|l| !l.starts_with('#') && l.contains('%'))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    let ours = rows(sear(), home.path(), &data);
    assert!(
        ours.iter().any(|r| r.ends_with("[.] inner")),
        "the container's program is named: {ours:?}"
    );
    assert_eq!(
        ours,
        rows(perf(), home.path(), &data),
        "perf reads the same from the cache"
    );
    // (perf 6.1's own recording of this records the host file's build id, read after the
    // namespace is gone, and names the samples from the host's program: not compared.)
}

/// perf's recording of a process running in its own mount namespace, attached with `-p` while
/// it runs (perf record reads the build id of the file the process sees and caches that file):
/// sear's rows equal perf's while the process still runs and after it is gone, and they name
/// the container's program, not the host's file at that path.
#[test]
fn perfs_recording_of_a_running_container_process() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let forever = PROGRAM.replace("k < 400", "k >= 0");
    let inside = build_c(dir.path(), "inside", &forever, &["-O2", "-g"]);
    let host = build_c(dir.path(), "prog", OTHER, &["-O2", "-g"]);
    let script = format!(
        "mount --bind {} {} && exec {}",
        inside.display(),
        host.display(),
        host.display()
    );
    let mut child = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(&script)
        .spawn()
        .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    // The process is the one `unshare` became (sh execs the program).
    let pid = child.id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::read_link(format!("/proc/{pid}/exe"))
        .map(|e| e != host)
        .unwrap_or(true)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the program did not start"
        );
        if let Ok(Some(s)) = child.try_wait() {
            panic!("the container command ended: {s}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let child = Kill(child);
    let data = dir.path().join("perf.data");
    run_ok(
        perf()
            .env("HOME", home.path())
            .args([
                "record",
                "-q",
                "-F",
                "1000",
                "-g",
                "-p",
                &pid.to_string(),
                "-o",
            ])
            .arg(&data)
            .args(["--", "sleep", "1"]),
    );
    let rows = |tool: std::process::Command| {
        let mut t = tool;
        let out = run_ok(
            t.env("HOME", home.path())
                .args([
                    "report",
                    "--stdio",
                    "--no-children",
                    "--sort",
                    "dso,sym",
                    "-g",
                    "none",
                ])
                .arg("-i")
                .arg(&data),
        );
        stdout_of(&out)
            .lines()
            .filter(|l| !l.starts_with('#') && l.contains('%'))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    let running = rows(sear());
    assert!(
        running.iter().any(|r| r.ends_with("[.] inner")),
        "the container's program is named while it runs: {running:?}"
    );
    assert_eq!(running, rows(perf()), "perf's rows while the process runs");
    drop(child);
    let gone = rows(sear());
    assert_eq!(gone, running, "after the process is gone");
    assert_eq!(gone, rows(perf()), "perf's rows after the process is gone");
}
