//! The time-ordered reader must hand out samples in the order perf delivers
//! them: compare (pid, tid, time) sequences with `perf script`.

use std::path::{Path, PathBuf};
use std::process::Command;

use perf_data::{Order, OrderedReader, RecordReader, PERF_RECORD_SAMPLE};

fn wild_files() -> Vec<PathBuf> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/perfdata-wild");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("conformance folder beside the repository")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("perf.data") && !n.contains("corrupted")
        })
        .collect();
    v.sort();
    v
}

/// perf script's sample lines as "pid/tid time".
fn perf_order(path: &Path) -> Option<Vec<String>> {
    let out = Command::new("/usr/bin/perf")
        .env("PERF_CONFIG", "/dev/null")
        .args(["script", "-F", "pid,tid,time", "-i"])
        .arg(path)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .map(|l| l.trim_end_matches(':').to_string())
            .collect(),
    )
}

fn our_order(path: &Path) -> Vec<String> {
    let mut r = OrderedReader::new(RecordReader::open(path).unwrap(), Order::Time);
    let mut v = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        if rec.type_() != PERF_RECORD_SAMPLE {
            continue;
        }
        let s = rec.sample().unwrap();
        let t = s.time.unwrap_or(0);
        v.push(format!(
            "{}/{} {}.{:06}",
            // perf prints pid and tid as signed (-1 for exiting tasks).
            s.pid.unwrap_or(0) as i32,
            s.tid.unwrap_or(0) as i32,
            t / 1_000_000_000,
            (t % 1_000_000_000) / 1000
        ));
    }
    v
}

fn record(dir: &Path, name: &str, opts: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let st = Command::new("/usr/bin/perf")
        .args(["record", "-q", "-o"])
        .arg(&out)
        .args(opts)
        .args([
            "--",
            "sh",
            "-c",
            "for j in 1 2 3 4; do (i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done) & done; wait",
        ])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    out
}

#[test]
fn sample_order_equals_perf_script() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = wild_files();
    // Multi-threaded, multi-CPU recordings stress the round-based sort.
    files.push(record(
        dir.path(),
        "fp.data",
        &["-e", "cpu-clock", "-F", "4000", "-g"],
    ));
    files.push(record(
        dir.path(),
        "z.data",
        &["-e", "cpu-clock", "-F", "4000", "-z"],
    ));
    files.push(record(
        dir.path(),
        "a.data",
        &["-a", "-e", "cpu-clock", "-F", "2000"],
    ));
    let mut compared = 0;
    let mut failures = Vec::new();
    for f in &files {
        let Some(expected) = perf_order(f) else {
            continue;
        };
        compared += 1;
        let ours = our_order(f);
        if ours != expected {
            let first = ours
                .iter()
                .zip(&expected)
                .position(|(a, b)| a != b)
                .unwrap_or(ours.len().min(expected.len()));
            failures.push(format!(
                "{}: {} vs {} samples, first difference at #{first}: ours {:?} perf {:?}",
                f.display(),
                ours.len(),
                expected.len(),
                ours.get(first),
                expected.get(first)
            ));
        }
    }
    assert!(compared >= 10, "perf script read only {compared} files");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
