//! `sear report --stats` on damaged recordings: exit 0 with a partial result
//! and a warning naming the file and a byte offset, or exit 1 with an error
//! naming the file and a byte offset. Never a panic (exit 101), a signal or a
//! hang: each run has a time limit.

mod common;
use common::WILD;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use perf_data::{RecordReader, PERF_RECORD_COMPRESSED, PERF_RECORD_SAMPLE};

const TIME_LIMIT: Duration = Duration::from_secs(60);

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `sear report --stats -i INPUT` (stdin from `stdin` if given) with a time limit.
fn sear_stats(input: &Path, stdin: Option<&Path>) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sear"));
    cmd.args(["report", "--stats", "-i"])
        .arg(input)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match stdin {
        Some(p) => cmd.stdin(std::fs::File::open(p).expect("stdin file")),
        None => cmd.stdin(Stdio::null()),
    };
    let mut child = cmd.spawn().expect("running sear");
    // Drain the pipes on threads so a chatty child cannot block.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("waiting for sear") {
            break st;
        }
        if t0.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "sear report --stats -i {}: still running after {TIME_LIMIT:?}",
                input.display()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = Out {
        code: status
            .code()
            .unwrap_or_else(|| panic!("sear killed by a signal: {status}")),
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    };
    assert!(
        out.code == 0 || out.code == 1,
        "{}: exit {} (panic?)\n{}",
        input.display(),
        out.code,
        out.stderr
    );
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    out
}

/// The SAMPLE count of the "Aggregated stats" block.
fn samples(stdout: &str) -> Option<u64> {
    stdout
        .lines()
        .find(|l| l.trim_start().starts_with("SAMPLE events:"))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|n| n.parse().ok())
}

/// Complete SAMPLE records that end at or before `cut`, by the library.
fn samples_before(good: &[u8], cut: u64) -> u64 {
    record_ends(good, cut).0
}

/// (complete SAMPLE records ending at or before `cut`, whether a record ends exactly at `cut`).
fn record_ends(good: &[u8], cut: u64) -> (u64, bool) {
    let mut rr = RecordReader::from_bytes(good.to_vec()).unwrap();
    let mut ends = std::collections::HashMap::new();
    let mut n = 0;
    let mut boundary = false;
    while let Some(rec) = rr.next_record().unwrap() {
        let raw = rec.raw;
        let end = if raw.from_compressed {
            ends[&raw.offset]
        } else {
            let e = raw.offset + raw.size() as u64 + raw.trailing.len() as u64;
            ends.insert(raw.offset, e);
            boundary |= e == cut;
            e
        };
        if raw.type_ == PERF_RECORD_SAMPLE && end <= cut {
            n += 1;
        }
    }
    (n, boundary)
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn write(dir: &Path, name: &str, b: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, b).unwrap();
    p
}

fn wild(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(WILD).join(name)).expect("wild file")
}

fn assert_error_names_file(o: &Out, p: &Path) {
    assert_eq!(o.code, 1, "{}: {}", p.display(), o.stderr);
    assert!(
        o.stderr.contains(&p.display().to_string()),
        "file not named: {}",
        o.stderr
    );
    assert!(
        o.stderr.contains("byte offset"),
        "offset not named: {}",
        o.stderr
    );
}

fn assert_warning_names_file(o: &Out, p: &Path, kind: &str) {
    assert_eq!(o.code, 0, "{}: {}", p.display(), o.stderr);
    let line = o
        .stderr
        .lines()
        .find(|l| l.contains("warning") && l.contains(kind))
        .unwrap_or_else(|| panic!("no '{kind}' warning: {}", o.stderr));
    assert!(
        line.contains(&p.display().to_string()),
        "file not named: {line}"
    );
    assert!(line.contains("byte offset"), "offset not named: {line}");
}

#[test]
fn truncated_files_report_what_precedes_the_cut() {
    let d = tmp();
    for name in [
        "perf.data.callgraph-3.4",
        "perf.data.piped.target-3.4",
        "perf.data.lost_samples-4.4",
    ] {
        let good = wild(name);
        let full = sear_stats(Path::new(WILD).join(name).as_path(), None);
        assert_eq!(full.code, 0, "{name}: {}", full.stderr);
        for k in [1usize, 5, 11, 16, 23, 31] {
            let cut = good.len() * k / 32;
            let p = write(d.path(), &format!("{name}.cut{k}"), &good[..cut]);
            let o = sear_stats(&p, None);
            if o.code == 1 {
                assert_error_names_file(&o, &p);
                assert_eq!(
                    samples_before(&good, cut as u64),
                    0,
                    "{name} cut {cut}: {}",
                    o.stderr
                );
                continue;
            }
            assert_eq!(
                samples(&o.stdout).unwrap_or(0),
                samples_before(&good, cut as u64),
                "{name} cut at {cut}:\n{}",
                o.stdout
            );
            // A pipe stream cut between records looks complete; anything else warns.
            let (_, boundary) = record_ends(&good, cut as u64);
            if !(name.contains("piped") && boundary) {
                assert!(
                    o.stderr.contains("warning"),
                    "{name} cut at {cut}: no warning"
                );
                assert!(o.stderr.contains(&p.display().to_string()), "{}", o.stderr);
            }
        }
    }
    // Cut at 8, 64 and 256 bytes: refused or empty, never a crash.
    let good = wild("perf.data.singleprocess-3.4");
    for cut in [8, 64, 256] {
        let p = write(d.path(), &format!("tiny{cut}"), &good[..cut]);
        let o = sear_stats(&p, None);
        assert_error_names_file(&o, &p);
    }
}

#[test]
fn pipe_stream_truncated_mid_record_on_stdin() {
    let d = tmp();
    let good = wild("perf.data.piped.lost_samples-4.4");
    let cut = good.len() / 2 + 3;
    let p = write(d.path(), "cut.pipe", &good[..cut]);
    let o = sear_stats(Path::new("-"), Some(&p));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        samples(&o.stdout).unwrap_or(0),
        samples_before(&good, cut as u64)
    );
    assert!(o.stderr.contains("truncated record"), "{}", o.stderr);
    assert!(o.stderr.contains("byte offset"), "{}", o.stderr);
    // The same bytes as a named file.
    let o = sear_stats(&p, None);
    assert_warning_names_file(&o, &p, "truncated record");
}

#[test]
fn wrong_magic_empty_and_garbage_are_errors_naming_the_file() {
    let d = tmp();
    let mut b = wild("perf.data.singleprocess-3.4");
    b[..8].copy_from_slice(b"NOTPERF!");
    let p = write(d.path(), "bad-magic.data", &b);
    let o = sear_stats(&p, None);
    assert_error_names_file(&o, &p);
    assert!(o.stderr.contains("byte offset 0"), "{}", o.stderr);
    assert!(o.stdout.is_empty(), "{}", o.stdout);

    let p = write(d.path(), "empty.data", &[]);
    assert_error_names_file(&sear_stats(&p, None), &p);

    let mut x = 0x1234_5678_9abc_def0u64;
    let garbage: Vec<u8> = (0..10_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let p = write(d.path(), "garbage.data", &garbage);
    assert_error_names_file(&sear_stats(&p, None), &p);

    // A directory is not a recording either.
    let o = sear_stats(d.path(), None);
    assert_error_names_file(&o, d.path());
}

#[test]
fn absurd_header_fields() {
    let d = tmp();
    let good = wild("perf.data.singleprocess-3.4");
    let len = good.len() as u64;
    let set = |at: usize, v: u64| {
        let mut b = good.clone();
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        b
    };
    // Errors: attr_size too small, attrs or data section past the end.
    for (what, at, v) in [
        ("attr_size", 16, 3),
        ("attrs-offset", 24, u64::MAX),
        ("attrs-size", 32, u64::MAX),
        ("data-offset", 40, len + 1000),
    ] {
        let p = write(d.path(), what, &set(at, v));
        assert_error_names_file(&sear_stats(&p, None), &p);
    }
    // Warnings: data size past the end (salvaged), data size 0 (killed recorder).
    let p = write(d.path(), "data-size-huge", &set(48, u64::MAX));
    let o = sear_stats(&p, None);
    assert_warning_names_file(&o, &p, "truncated data section");
    let want =
        samples(&sear_stats(&Path::new(WILD).join("perf.data.singleprocess-3.4"), None).stdout);
    assert!(samples(&o.stdout) >= want, "{}", o.stdout);

    let p = write(d.path(), "data-size-0", &set(48, 0));
    let o = sear_stats(&p, None);
    assert_warning_names_file(&o, &p, "data size 0");
    assert!(samples(&o.stdout) >= want, "{}", o.stdout);
}

#[test]
fn zero_size_record_is_a_warning_at_its_offset() {
    let p = Path::new(WILD).join("perf.data.piped.corrupted.zero_size_sample-3.2");
    let o = sear_stats(&p, None);
    assert_warning_names_file(&o, &p, "corrupt record");
    assert!(o.stderr.contains("byte offset 49104"), "{}", o.stderr);
    let good = std::fs::read(&p).unwrap();
    // perf itself stops here too ("bad event header size"), after 0 samples.
    assert_eq!(
        samples(&o.stdout).unwrap_or(0),
        samples_before(&good, 49104)
    );
    assert!(
        o.stdout.contains("TOTAL events:        570"),
        "{}",
        o.stdout
    );
}

#[test]
fn corrupt_zstd_frame_is_a_warning() {
    if Command::new("perf").arg("--version").output().is_err() {
        eprintln!("perf not found: skipped");
        return;
    }
    let d = tmp();
    let rec = d.path().join("z.data");
    let st = Command::new("perf")
        .args(["record", "-q", "-z", "-e", "cpu-clock", "-g", "-o"])
        .arg(&rec)
        .args([
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let mut b = std::fs::read(&rec).unwrap();
    let mut rr = RecordReader::from_bytes(b.clone()).unwrap();
    let mut off = None;
    while let Some(r) = rr.next_record().unwrap() {
        if r.raw.type_ == PERF_RECORD_COMPRESSED {
            off = Some(r.raw.offset as usize);
            break;
        }
    }
    let off = off.expect("a COMPRESSED record");
    b[off + 8] ^= 0xff; // the zstd frame magic
    let p = write(d.path(), "bad-frame.data", &b);
    let o = sear_stats(&p, None);
    assert_warning_names_file(&o, &p, "corrupt compressed record");
    assert!(
        o.stderr.contains(&format!("byte offset {off}")),
        "{}",
        o.stderr
    );
}
