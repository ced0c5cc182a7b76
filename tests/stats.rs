//! `sear report --stats` must print exactly what `perf report --stats` prints.

mod common;
use common::*;

fn compare_stats(path: &std::path::Path) -> Result<(), String> {
    let p = perf()
        .args(["report", "--stats", "-i"])
        .arg(path)
        .output()
        .expect("perf");
    let s = sear()
        .args(["report", "--stats", "-i"])
        .arg(path)
        .output()
        .expect("sear");
    if !s.status.success() {
        return Err(format!(
            "{}: sear failed: {}",
            path.display(),
            String::from_utf8_lossy(&s.stderr)
        ));
    }
    let (p, s) = (stdout_of(&p), stdout_of(&s));
    if p != s {
        return Err(format!(
            "{}: --stats differs\n--- perf\n{p}\n--- sear\n{s}",
            path.display()
        ));
    }
    Ok(())
}

#[test]
fn stats_equal_perf_on_wild_files() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for f in wild_files() {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name.contains("corrupted") {
            continue; // covered by corrupt_piped_file_gives_partial_result_and_warning
        }
        compared += 1;
        if let Err(e) = compare_stats(&f) {
            failures.push(e);
        }
    }
    assert!(compared >= 17, "only {compared} wild files found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn stats_equal_perf_on_fresh_recordings() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for f in standard_recordings(dir.path()) {
        if let Err(e) = compare_stats(&f) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn stats_read_pipe_mode_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let w = busy_workload(100);
    let f = perf_record(dir.path(), "p.data", &["-e", "cpu-clock", "-g", "-o-"], &w);
    let expected = stdout_of(&run_ok(perf().args(["report", "--stats", "-i"]).arg(&f)));
    let out = run_ok(
        sear()
            .args(["report", "--stats", "-i", "-"])
            .stdin(std::fs::File::open(&f).unwrap()),
    );
    assert_eq!(stdout_of(&out), expected);
    // With stdin a FIFO and no -i, sear reads the pipe like perf does.
    let out = run_ok(std::process::Command::new("sh").arg("-c").arg(format!(
        "cat '{}' | '{}' report --stats",
        f.display(),
        env!("CARGO_BIN_EXE_sear")
    )));
    assert_eq!(stdout_of(&out), expected);
}

#[test]
fn corrupt_piped_file_gives_partial_result_and_warning() {
    let f = wild_dir().join("perf.data.piped.corrupted.zero_size_sample-3.2");
    let out = sear()
        .args(["report", "--stats", "-i"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("perf.data.piped.corrupted.zero_size_sample-3.2")
            && err.contains("byte offset 49104")
            && err.contains("size 0"),
        "warning must name the file, offset and problem: {err}"
    );
    // Everything before the damage is still counted (the damaged record is
    // the first sample; 468 MMAP and 100 COMM records precede it).
    let text = stdout_of(&out);
    assert!(text.contains("MMAP events:        468"), "{text}");
    assert!(text.contains("COMM events:        100"), "{text}");
}

#[test]
fn missing_file_is_a_clear_error() {
    let out = sear()
        .args(["report", "--stats", "-i", "/nonexistent/perf.data"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent/perf.data") && err.contains("no such file"),
        "{err}"
    );
}
