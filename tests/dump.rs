//! `sear report -D` against `perf report -D` (perf 6.1) on the same files:
//! the wild conformance files and recordings made here at test time.
//!
//! The outputs must be byte for byte the same, with one normalisation:
//! for `[vdso]` maps perf names the DSO after a temporary copy of the vdso
//! it makes at run time (`/tmp/perf-vdso.so-XXXXXX`, random each run); sear
//! prints `[vdso]`, so perf's temporary name is mapped to `[vdso]`.

mod common;
use common::{have_perf, PERF, WILD};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn wild(name: &str) -> Option<PathBuf> {
    let p = Path::new(WILD).join(name);
    if p.exists() {
        Some(p)
    } else {
        panic!(
            "{} is missing (the conformance data beside the repository)",
            p.display()
        )
    }
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("running a command")
}

/// perf's temporary vdso copies get a random suffix; they stand for `[vdso]`.
fn normalise_vdso(s: &str) -> String {
    const PREFIX: &str = "/tmp/perf-vdso.so-";
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(PREFIX) {
        out.push_str(&rest[..i]);
        let after = &rest[i + PREFIX.len()..];
        let n = after
            .bytes()
            .take(6)
            .take_while(u8::is_ascii_alphanumeric)
            .count();
        if n == 6 {
            out.push_str("[vdso]");
            rest = &after[6..];
        } else {
            out.push_str(PREFIX);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn perf_dump(file: &Path) -> String {
    let o = run(Command::new(PERF).args(["report", "-D", "-i"]).arg(file));
    normalise_vdso(&String::from_utf8_lossy(&o.stdout))
}

fn sear_dump(file: &Path) -> Output {
    run(Command::new(env!("CARGO_BIN_EXE_sear"))
        .args(["report", "-D", "-i"])
        .arg(file))
}

/// Fails with the first differing line (and its number) of the two dumps.
fn assert_same(what: &str, perf: &str, sear: &str) {
    if perf == sear {
        return;
    }
    let (pl, sl): (Vec<&str>, Vec<&str>) = (perf.lines().collect(), sear.lines().collect());
    let i = pl
        .iter()
        .zip(&sl)
        .position(|(a, b)| a != b)
        .unwrap_or(pl.len().min(sl.len()));
    panic!(
        "{what}: sear's -D output differs from perf's at line {}:\n perf: {:?}\n sear: {:?}\n({} vs {} lines)",
        i + 1,
        pl.get(i),
        sl.get(i),
        pl.len(),
        sl.len()
    );
}

fn compare_file(file: &Path) {
    let perf = perf_dump(file);
    assert!(
        perf.contains("PERF_RECORD_SAMPLE"),
        "perf dumped {}",
        file.display()
    );
    let o = sear_dump(file);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "sear failed on {}: {stderr}",
        file.display()
    );
    assert_same(
        &file.display().to_string(),
        &perf,
        &String::from_utf8_lossy(&o.stdout),
    );
}

#[test]
fn wild_files_match_perf() {
    if !have_perf() {
        return;
    }
    let mut n = 0;
    for name in [
        "perf.data.armv7-3.4",
        "perf.data.branch-4.14",
        "perf.data.busy.0-3.4",
        "perf.data.callgraph-3.4",
        "perf.data.callgraph_and_branch-3.4",
        "perf.data.forkexit-3.4",
        "perf.data.hw_and_sw-3.4",
        "perf.data.i686-3.4",
        "perf.data.lost_samples-4.4",
        "perf.data.numatopology-3.2",
        "perf.data.piped.header_features_aligned-6.12",
        "perf.data.piped.hw_and_sw-3.4",
        "perf.data.piped.lost_samples-4.4",
        "perf.data.piped.target-3.4",
        "perf.data.raw-3.4",
        "perf.data.singleprocess-3.4",
        "perf.data.systemwide.0-3.4",
    ] {
        if let Some(p) = wild(name) {
            compare_file(&p);
            n += 1;
        }
    }
    eprintln!("{n} wild files identical to perf");
}

/// perf stops at the broken record without its closing stats; sear prints
/// the same records, then fails with a message naming the offset.
#[test]
fn corrupted_pipe_gives_perfs_records_and_a_clear_error() {
    if !have_perf() {
        return;
    }
    let Some(p) = wild("perf.data.piped.corrupted.zero_size_sample-3.2") else {
        return;
    };
    let perf = perf_dump(&p);
    let o = sear_dump(&p);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("corrupt") && stderr.contains("49104"),
        "the error should say what is wrong and where: {stderr}"
    );
    assert!(!perf.contains("Aggregated stats"));
    assert_same("corrupted pipe", &perf, &String::from_utf8_lossy(&o.stdout));
}

/// Records `perf record ARGS -- sh -c LOOP` into `dir/name`.
fn record(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let o = run(Command::new(PERF)
        .arg("record")
        .args(args)
        .arg("-o")
        .arg(&out)
        .args(["--", "sh", "-c", WORKLOAD]));
    assert!(
        o.status.success(),
        "perf record {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Some work in a shell, a fork+exec, and a data mapping or two.
const WORKLOAD: &str =
    "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; ls / > /dev/null; echo $i > /dev/null";

#[test]
fn fresh_recordings_match_perf() {
    if !have_perf() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = [
        record(d, "fp.data", &["-e", "cpu-clock", "-g"]),
        record(
            d,
            "dwarf.data",
            &["-e", "cpu-clock", "--call-graph", "dwarf,2048"],
        ),
        record(d, "z.data", &["-e", "cpu-clock", "-g", "-z"]),
        record(d, "switch.data", &["-e", "cpu-clock", "--switch-events"]),
        record(d, "group.data", &["-e", "{cpu-clock,task-clock}:S"]),
        record(d, "two.data", &["-e", "cpu-clock", "-e", "task-clock"]),
        record(
            d,
            "many.data",
            &[
                "-e",
                "cpu-clock",
                "-d",
                "--phys-data",
                "--data-page-size",
                "--code-page-size",
                "-W",
                "--intr-regs=ax,bx",
                "--user-regs=ax,sp",
                "--namespaces",
                "--all-cgroups",
                "-T",
                "--sample-cpu",
                "-s",
                "--transaction",
            ],
        ),
    ];
    for f in &files {
        compare_file(f);
    }
}

/// Runs `cmd` with `input` on a real pipe as stdin (perf and sear read
/// stdin only when it is a FIFO).
fn through_pipe(cmd: &mut Command, input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("waiting");
    writer.join().unwrap();
    out
}

#[test]
fn pipe_mode_from_stdin_matches_perf() {
    if !have_perf() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("pipe.data");
    let o = run(Command::new(PERF)
        .args([
            "record",
            "-e",
            "cpu-clock",
            "-g",
            "-o",
            "-",
            "--",
            "sh",
            "-c",
            WORKLOAD,
        ])
        .stdout(std::fs::File::create(&data).unwrap()));
    assert!(o.status.success());
    // A pipe-mode file named with -i, and the same bytes on stdin.
    compare_file(&data);
    let bytes = std::fs::read(&data).unwrap();
    let perf = through_pipe(Command::new(PERF).args(["report", "-D"]), &bytes);
    let sear = through_pipe(
        Command::new(env!("CARGO_BIN_EXE_sear")).args(["report", "-D"]),
        &bytes,
    );
    assert!(sear.status.success());
    let perf = normalise_vdso(&String::from_utf8_lossy(&perf.stdout));
    let sear = String::from_utf8_lossy(&sear.stdout);
    assert!(
        sear.contains("@pipe ["),
        "pipe-mode records are labelled `pipe`"
    );
    assert_same("stdin", &perf, &sear);
}
