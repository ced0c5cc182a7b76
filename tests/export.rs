//! `sear export`: folded stacks and sear's JSON keep the recording's totals (as perf report
//! counts them), and errors name the file. The other formats have a test file each
//! (export_pprof.rs, export_speedscope.rs, export_firefox.rs); the recording they share is
//! made by tests/common/export.rs.

mod common;

use common::export::*;
use common::*;
use serde_json::Value;

#[test]
fn folded_and_json_keep_the_totals() {
    let r = recording();
    let folded = std::fs::read_to_string(export(r, "folded")).unwrap();
    let sum: u64 = folded
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, r.period);
    assert!(
        folded
            .lines()
            .any(|l| l.starts_with("hot;") && l.contains(";work_a ")),
        "{folded}"
    );

    let v = json(&export(r, "json"));
    assert_eq!(v["format"], "sear-stacks");
    let ev = &v["events"][0];
    assert_eq!(ev["name"], "cpu-clock");
    assert_eq!(
        (
            ev["samples"].as_u64().unwrap(),
            ev["period"].as_u64().unwrap()
        ),
        (r.samples, r.period)
    );
    let stacks = v["stacks"].as_array().unwrap();
    let n: u64 = stacks.iter().map(|s| s["samples"].as_u64().unwrap()).sum();
    assert_eq!(n, r.samples);
    assert!(stacks.iter().any(|s| {
        let f = s["frames"].as_array().unwrap();
        f.len() >= 2 && f.last() == Some(&Value::from("work_a"))
    }));
}

#[test]
fn export_errors_name_the_file() {
    let o = sear()
        .args([
            "export",
            "--format",
            "pprof",
            "-i",
            "/nonexistent.data",
            "-o",
            "/tmp/x",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent.data"));
    let o = sear()
        .args(["export", "--format", "bogus", "-o", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
