//! `sear report --header-only` (and `-I`) against perf 6.1 on the same files,
//! byte for byte, with TZ=UTC for both.
//!
//! Deliberate differences from perf (not exercised by these files):
//! - BPF_PROG_INFO: perf lists each recorded BPF program; sear prints nothing.
//! - strings with invalid UTF-8 are printed with U+FFFD where perf prints raw bytes.
//! - a recording whose recorder was killed (data size 0): perf reads the
//!   feature table from inside the data and prints what that garbage decodes
//!   to; sear does not load features from such a file and prints each set
//!   feature in its undecoded state ("(null)", 0, "not available").
//! - reading from stdin: perf and sear both print the pipe's mtime, which is
//!   not comparable between two runs, so that case compares from line 3 on.

mod common;
use common::{have_perf, PERF, WILD};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn run(cmd: &mut Command) -> (Vec<u8>, i32) {
    let out = cmd.env("TZ", "UTC").output().expect("spawn");
    (out.stdout, out.status.code().unwrap_or(-1))
}

fn perf_header(file: &Path, full: bool) -> Vec<u8> {
    let mut c = Command::new(PERF);
    c.args(["report", "--header-only"]);
    if full {
        c.arg("-I");
    }
    c.arg("-i").arg(file).stderr(Stdio::null());
    run(&mut c).0
}

fn sear_header(file: &Path, full: bool) -> (Vec<u8>, i32) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sear"));
    c.args(["report", "--header-only"]);
    if full {
        c.arg("-I");
    }
    c.arg("-i").arg(file).stderr(Stdio::null());
    run(&mut c)
}

/// Compares both modes; returns a description of each mismatch.
fn compare(file: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    for full in [false, true] {
        let want = perf_header(file, full);
        let (got, code) = sear_header(file, full);
        if code != 0 {
            bad.push(format!(
                "{} (-I: {full}): sear exited {code}",
                file.display()
            ));
        }
        if want.is_empty() {
            bad.push(format!("{}: perf printed nothing", file.display()));
        }
        if got != want {
            bad.push(format!(
                "{} (-I: {full}):\n--- perf\n{}\n--- sear\n{}",
                file.display(),
                String::from_utf8_lossy(&want),
                String::from_utf8_lossy(&got)
            ));
        }
    }
    bad
}

#[test]
fn wild_files_match_perf() {
    assert!(have_perf());
    let files = common::wild_files();
    assert!(files.len() >= 18, "expected the wild perf.data files");
    let bad: Vec<String> = files.iter().flat_map(|f| compare(f)).collect();
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}

/// Records with perf 6.1 (`args` go before `--`); pipe mode writes stdout to the file.
fn record(dir: &Path, name: &str, args: &[&str], workload: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut c = Command::new(PERF);
    c.arg("record").args(args);
    let pipe = args.contains(&"-");
    if pipe {
        c.stdout(std::fs::File::create(&path).expect("create"));
    } else {
        c.arg("-o").arg(&path).stdout(Stdio::null());
    }
    c.arg("--").args(workload).stderr(Stdio::null());
    let st = c.status().expect("perf record");
    assert!(st.success(), "perf record {args:?} failed");
    path
}

#[test]
fn fresh_recordings_match_perf() {
    assert!(have_perf());
    let dir = tempfile::tempdir().expect("tempdir");
    let sleep: &[&str] = &["sleep", "0.05"];
    let cases: &[(&str, &[&str])] = &[
        ("g", &["-e", "cpu-clock", "-g"]),
        ("dwarf", &["-e", "cpu-clock", "--call-graph", "dwarf"]),
        ("z", &["-e", "cpu-clock", "-z"]),
        ("pipe", &["-e", "cpu-clock", "-o", "-"]),
        ("pipe-g", &["-e", "cpu-clock", "-g", "-o", "-"]),
        ("pipe-group", &["-e", "{cpu-clock,task-clock}:S", "-o", "-"]),
        ("pipe-z", &["-e", "cpu-clock,task-clock", "-z", "-o", "-"]),
        ("a", &["-e", "cpu-clock", "-a"]),
        ("multi", &["-e", "cpu-clock,task-clock"]),
        ("group", &["-e", "{cpu-clock,task-clock}:S"]),
        ("switch", &["-e", "cpu-clock", "--switch-events"]),
        ("clock", &["-e", "cpu-clock", "-k", "monotonic_raw"]),
        ("period", &["-e", "page-faults", "-c", "1", "--no-inherit"]),
    ];
    let mut bad = Vec::new();
    for (name, args) in cases {
        let f = record(dir.path(), name, args, sleep);
        bad.extend(compare(&f));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n\n"));
}

#[test]
fn stdin_pipe_matches_perf_after_the_mtime_line() {
    assert!(have_perf());
    let file = Path::new(WILD).join("perf.data.piped.header_features_aligned-6.12");
    let bytes = std::fs::read(&file).expect("read");
    // A real pipe on stdin, as in `perf record -o - | perf report`.
    let feed = |prog: &str| -> Vec<u8> {
        let mut child = Command::new(prog)
            .args(["report", "--header-only", "-I", "-i", "-"])
            .env("TZ", "UTC")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let mut stdin = child.stdin.take().expect("stdin");
        let data = bytes.clone();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&data);
        });
        let out = child.wait_with_output().expect("wait");
        writer.join().expect("writer");
        let s = String::from_utf8_lossy(&out.stdout).into_owned();
        s.lines()
            .filter(|l| !l.starts_with("# captured on"))
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes()
    };
    let want = feed(PERF);
    let got = feed(env!("CARGO_BIN_EXE_sear"));
    assert!(want.len() > 200, "perf printed too little");
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want)
    );
}

#[test]
fn damaged_feature_sections_never_crash() {
    assert!(have_perf());
    let dir = tempfile::tempdir().expect("tempdir");
    let f = record(dir.path(), "base", &["-e", "cpu-clock"], &["true"]);
    let orig = std::fs::read(&f).expect("read");
    // The feature sections follow the data section: data offset + size.
    let word = |at: usize| u64::from_le_bytes(orig[at..at + 8].try_into().unwrap()) as usize;
    let feat_start = word(40) + word(48);
    assert!(feat_start < orig.len());
    let span = orig.len() - feat_start;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let bad = dir.path().join("bad");
    for round in 0..60 {
        let mut data = orig.clone();
        match round % 3 {
            // Random bytes anywhere in the feature area, including the
            // section table and length fields.
            0 | 1 => {
                for _ in 0..1 + next() % 8 {
                    let at = feat_start + (next() as usize % span);
                    data[at] = if next() % 2 == 0 { 0xff } else { next() as u8 };
                }
            }
            // Cut the file inside the feature area.
            _ => data.truncate(feat_start + next() as usize % span),
        }
        std::fs::write(&bad, &data).expect("write");
        for full in [false, true] {
            let (_, code) = sear_header(&bad, full);
            assert!(
                code == 0 || code == 1,
                "round {round}: sear exited {code} (crash?)"
            );
        }
    }
}
