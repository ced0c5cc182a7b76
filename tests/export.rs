//! `sear export`: every format read back with sample totals equal to the
//! recording's (as perf report counts them): pprof by `go tool pprof` and by
//! decoding the protobuf, speedscope by its published JSON schema (the one
//! its npm package ships, checked with ajv) and structural checks, the
//! Firefox Profiler's format by structural checks of its tables, folded
//! stacks and sear's JSON by their sums.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use prost::Message;
use serde_json::Value;

const SRC: &str = r#"
volatile unsigned long sink;
#define BODY { unsigned long x = sink; for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL; sink = x; }
__attribute__((noinline)) void work_a(long n) BODY
__attribute__((noinline)) void work_b(long n) BODY
int main(void) {
  for (int r = 0; r < 100; r++) { work_a(3000000); work_b(1500000); }
  return 0;
}
"#;

struct Rec {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    data: PathBuf,
    /// perf report's sample count and event count.
    samples: u64,
    period: u64,
    /// Wall clock (ns since the epoch) just before and after recording.
    wall: (u64, u64),
}

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// A first sample's wall-clock time must fall while the recording ran.
fn assert_during_recording(r: &Rec, t_ns: u64, what: &str) {
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
struct PerfCounts {
    event: String,
    samples: u64,
    period: u64,
}

fn perf_counts(data: &Path) -> Vec<PerfCounts> {
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
fn build_hot(dir: &std::path::Path) -> std::path::PathBuf {
    build_c(
        dir,
        "hot",
        SRC,
        &["-O2", "-g", "-fno-omit-frame-pointer", "-fno-ipa-icf"],
    )
}

fn recording() -> &'static Rec {
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

fn export(r: &Rec, format: &str) -> PathBuf {
    let out = r.dir.join(format!("out.{format}"));
    run_ok(
        sear()
            .args(["export", "--format", format, "-i"])
            .arg(&r.data)
            .arg("-o")
            .arg(&out),
    );
    out
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).expect("valid JSON")
}

fn go() -> Command {
    let go = ["/usr/local/go/bin/go", "/usr/lib/go/bin/go", "/usr/bin/go"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect(
            "the pprof test needs Go (`go tool pprof`): apt-get install golang-go (.ci/run does)",
        );
    let mut c = Command::new(go);
    // pprof looks for binaries and symbol servers otherwise.
    c.env("PPROF_BINARY_PATH", "/nonexistent");
    c
}

#[test]
fn pprof_is_read_by_go_tool_pprof_with_the_recordings_totals() {
    let r = recording();
    let out = export(r, "pprof");
    let top = stdout_of(&run_ok(
        go().args([
            "tool",
            "pprof",
            "-top",
            "-sample_index=samples",
            "-symbolize=none",
        ])
        .arg(&out),
    ));
    assert!(top.contains("File: hot\n"), "{top}");
    assert!(top.contains("Type: samples\n"), "{top}");
    let total = format!("Total samples = {} ", r.samples);
    assert!(top.contains(&total), "expected `{total}`:\n{top}");
    let rows: Vec<&str> = top
        .lines()
        .filter(|l| l.ends_with("work_a") || l.ends_with("work_b"))
        .collect();
    assert_eq!(rows.len(), 2, "{top}");
    // work_a does twice work_b's work: it is the top row.
    assert!(rows[0].ends_with("work_a"), "{top}");
    let flat = |l: &str| {
        l.split_whitespace()
            .nth(1)
            .unwrap()
            .trim_end_matches('%')
            .parse::<f64>()
            .unwrap()
    };
    assert!((flat(rows[0]) - 66.7).abs() < 3.0, "{top}");

    let top = stdout_of(&run_ok(
        go().args([
            "tool",
            "pprof",
            "-top",
            "-sample_index=cpu-clock",
            "-symbolize=none",
            "-unit=ns",
        ])
        .arg(&out),
    ));
    assert!(top.contains("Type: cpu-clock\n"), "{top}");
    let total = format!("Total samples = {}ns ", r.period);
    assert!(top.contains(&total), "expected `{total}`:\n{top}");
}

#[test]
fn pprof_decodes_with_consistent_tables() {
    let r = recording();
    let out = export(r, "pprof");
    let mut bytes = Vec::new();
    use std::io::Read;
    flate2::read::GzDecoder::new(std::fs::File::open(&out).unwrap())
        .read_to_end(&mut bytes)
        .expect("gzip");
    let p = render::pprof::Profile::decode(&bytes[..]).expect("profile.proto");
    let s = |i: i64| p.string_table[i as usize].as_str();
    assert_eq!(s(0), "");
    let types: Vec<(&str, &str)> = p
        .sample_type
        .iter()
        .map(|t| (s(t.r#type), s(t.unit)))
        .collect();
    assert_eq!(types, [("samples", "count"), ("cpu-clock", "nanoseconds")]);
    assert_during_recording(r, p.time_nanos as u64, "pprof time_nanos");
    assert_during_recording(r, (p.time_nanos + p.duration_nanos) as u64, "pprof end");
    let n: i64 = p.sample.iter().map(|x| x.value[0]).sum();
    let period: i64 = p.sample.iter().map(|x| x.value[1]).sum();
    assert_eq!((n as u64, period as u64), (r.samples, r.period));
    let nloc = p.location.len() as u64;
    for x in &p.sample {
        assert!(x.location_id.iter().all(|&l| l >= 1 && l <= nloc));
    }
    let nmap = p.mapping.len() as u64;
    let nfun = p.function.len() as u64;
    for l in &p.location {
        assert!(l.mapping_id <= nmap);
        assert!(l
            .line
            .iter()
            .all(|ln| ln.function_id >= 1 && ln.function_id <= nfun));
        if l.mapping_id > 0 {
            let m = &p.mapping[l.mapping_id as usize - 1];
            assert!(m.memory_start <= l.address && l.address < m.memory_limit);
        }
    }
    let main = &p.mapping[0];
    assert!(s(main.filename).ends_with("/hot"), "{}", s(main.filename));
    assert_eq!(s(main.build_id).len(), 40, "the binary's build id");
    // work_a's location names its source file and line.
    let f = p
        .function
        .iter()
        .find(|f| s(f.name) == "work_a")
        .expect("work_a");
    assert_eq!(s(f.filename), "hot.c");
    assert!(p.location.iter().any(|l| l
        .line
        .iter()
        .any(|ln| ln.function_id == f.id && ln.line > 0)));
    // Stacks are leaf first: work_a (a leaf function without its own frame,
    // so its caller's frame is the next one found) under its callers.
    let loc_fn = |id: u64| {
        p.location[id as usize - 1]
            .line
            .last()
            .map(|l| l.function_id)
    };
    assert!(p.sample.iter().any(|x| x.location_id.len() >= 2
        && loc_fn(x.location_id[0]) == Some(f.id)
        && loc_fn(*x.location_id.last().unwrap()) != Some(f.id)));
}

/// Where `npm install --prefix DIR speedscope@1.25.0 ajv@8` put speedscope's
/// schema and ajv (.ci/run does it): `$SEAR_NPM`, else ~/.cache/sear-npm.
fn npm_dir() -> PathBuf {
    let dir = std::env::var_os("SEAR_NPM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/sear-npm")
        });
    let schema = dir.join("node_modules/speedscope/dist/release/file-format-schema.json");
    assert!(
        schema.exists() && dir.join("node_modules/ajv").exists(),
        "the speedscope test validates against speedscope's own schema: \
         npm install --prefix {} speedscope@1.25.0 ajv@8 (.ci/run does)",
        dir.display()
    );
    dir
}

/// Validates a JSON file against speedscope's schema with ajv under node;
/// the errors on failure.
fn speedscope_schema_errors(file: &Path) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("validate.js");
    std::fs::write(
        &script,
        r#"
const path = require('path');
const dir = process.argv[2];
const Ajv = require(path.join(dir, 'node_modules/ajv'));
const schema = require(path.join(dir, 'node_modules/speedscope/dist/release/file-format-schema.json'));
const data = JSON.parse(require('fs').readFileSync(process.argv[3], 'utf8'));
const ajv = new Ajv({allErrors: true, strict: false});
if (!ajv.validate(schema, data)) {
  console.log(JSON.stringify(ajv.errors.slice(0, 10), null, 1));
  process.exit(1);
}
"#,
    )
    .unwrap();
    let out = Command::new("node")
        .arg(&script)
        .arg(npm_dir())
        .arg(file)
        .output()
        .expect("node (apt-get install nodejs npm)");
    (!out.status.success()).then(|| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn speedscope_profiles_are_well_formed_with_the_recordings_totals() {
    let r = recording();
    let path = export(r, "speedscope");
    if let Some(e) = speedscope_schema_errors(&path) {
        panic!(
            "{} is not valid by speedscope's schema:\n{e}",
            path.display()
        );
    }
    // The validator itself rejects what is not a speedscope file.
    let bad = r.dir.join("not-speedscope.json");
    std::fs::write(&bad, br#"{"profiles": [{"type": "sampled"}]}"#).unwrap();
    assert!(speedscope_schema_errors(&bad).is_some());
    let v = json(&path);
    assert_eq!(
        v["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    assert!(v["exporter"].as_str().unwrap().starts_with("sear "));
    let frames = v["shared"]["frames"].as_array().unwrap();
    assert!(frames.iter().all(|f| f["name"].is_string()));
    let profiles = v["profiles"].as_array().unwrap();
    assert!(!profiles.is_empty());
    assert!(v["activeProfileIndex"].as_u64().unwrap() < profiles.len() as u64);
    let (mut n, mut period) = (0u64, 0u64);
    for p in profiles {
        assert_eq!(p["type"], "sampled");
        assert_eq!(p["unit"], "nanoseconds");
        let samples = p["samples"].as_array().unwrap();
        let weights = p["weights"].as_array().unwrap();
        assert_eq!(samples.len(), weights.len());
        for st in samples {
            for f in st.as_array().unwrap() {
                assert!(f.as_u64().unwrap() < frames.len() as u64);
            }
        }
        let w: u64 = weights.iter().map(|w| w.as_u64().unwrap()).sum();
        assert_eq!(p["startValue"].as_u64(), Some(0));
        assert_eq!(p["endValue"].as_u64(), Some(w));
        n += samples.len() as u64;
        period += w;
    }
    assert_eq!((n, period), (r.samples, r.period));
    // Root first: work_a last, under its callers.
    let name = |i: &Value| {
        frames[i.as_u64().unwrap() as usize]["name"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let st = profiles[0]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_array().unwrap().iter().map(name).collect::<Vec<_>>())
        .find(|s| s.last().map(String::as_str) == Some("work_a"))
        .expect("a work_a sample");
    assert!(st.len() >= 2 && st[0] != "work_a", "{st:?}");
}

#[test]
fn firefox_profile_tables_are_consistent_with_the_recordings_totals() {
    let r = recording();
    let v = json(&export(r, "firefox"));
    let meta = &v["meta"];
    assert!(meta["preprocessedProfileVersion"].as_u64().is_some());
    assert!(meta["interval"].as_f64().unwrap() > 0.0);
    let start_ms = meta["startTime"].as_f64().unwrap();
    assert_during_recording(r, (start_ms * 1e6) as u64, "firefox startTime");
    let cats = meta["categories"].as_array().unwrap();
    let ncats = cats.len() as u64;
    let nlibs = v["libs"].as_array().unwrap().len() as i64;
    let mut n = 0u64;
    let mut kernel_frames = 0;
    for t in v["threads"].as_array().unwrap() {
        let len = |tab: &str| t[tab]["length"].as_u64().unwrap();
        let col = |tab: &str, c: &str| {
            t[tab][c]
                .as_array()
                .unwrap_or_else(|| panic!("{tab}.{c}"))
                .clone()
        };
        for (tab, cols) in [
            ("samples", &["stack", "time"][..]),
            (
                "stackTable",
                &["prefix", "frame", "category", "subcategory"][..],
            ),
            (
                "frameTable",
                &[
                    "address",
                    "inlineDepth",
                    "category",
                    "subcategory",
                    "func",
                    "line",
                ][..],
            ),
            (
                "funcTable",
                &["name", "isJS", "relevantForJS", "resource", "fileName"][..],
            ),
            ("resourceTable", &["lib", "name", "type"][..]),
        ] {
            for c in cols {
                assert_eq!(col(tab, c).len() as u64, len(tab), "{tab}.{c}");
            }
        }
        let strings = t["stringArray"].as_array().unwrap().len() as u64;
        let stacks = len("stackTable");
        let times = col("samples", "time");
        assert!(
            times.windows(2).all(|w| w[0].as_f64() <= w[1].as_f64()),
            "sample times in order"
        );
        for s in col("samples", "stack") {
            assert!(s.as_u64().unwrap() < stacks);
        }
        for (i, p) in col("stackTable", "prefix").iter().enumerate() {
            if let Some(p) = p.as_u64() {
                assert!(p < i as u64, "a prefix comes before its stack");
            }
        }
        for f in col("stackTable", "frame") {
            assert!(f.as_u64().unwrap() < len("frameTable"));
        }
        for c in col("stackTable", "category")
            .iter()
            .chain(&col("frameTable", "category"))
        {
            assert!(c.as_u64().unwrap() < ncats);
        }
        for (f, c) in col("frameTable", "func")
            .iter()
            .zip(col("frameTable", "category"))
        {
            assert!(f.as_u64().unwrap() < len("funcTable"));
            if cats[c.as_u64().unwrap() as usize]["name"] == "Kernel" {
                kernel_frames += 1;
            }
        }
        for s in col("funcTable", "name") {
            assert!(s.as_u64().unwrap() < strings);
        }
        for res in col("funcTable", "resource") {
            assert!(res.as_i64().unwrap() < len("resourceTable") as i64);
        }
        for l in col("resourceTable", "lib") {
            assert!((l.as_i64().unwrap()) < nlibs);
        }
        n += len("samples");
    }
    assert_eq!(n, r.samples);
    // A fp recording of a busy loop has timer interrupts in the kernel:
    // their frames are in the Kernel category.
    assert!(kernel_frames > 0);
}

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

/// With two events, the Firefox profile has a track per thread and event,
/// named after both, and every sample of each event is in its tracks.
#[test]
fn firefox_profile_has_a_track_per_event() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_hot(dir.path());
    let data = perf_record(
        dir.path(),
        "two.data",
        &["-e", "cpu-clock/period=200000/,page-faults/period=1/", "-g"],
        &[exe.to_str().unwrap().to_owned()],
    );
    let want: Vec<(String, u64)> = perf_counts(&data)
        .into_iter()
        .map(|c| (c.event, c.samples))
        .collect();
    assert_eq!(want.len(), 2, "perf shows two events: {want:?}");
    let out = dir.path().join("two.json");
    run_ok(
        sear()
            .args(["export", "--format", "firefox", "-i"])
            .arg(&data)
            .arg("-o")
            .arg(&out),
    );
    let v = json(&out);
    for (ev, n) in &want {
        let got: u64 = v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"].as_str().unwrap().ends_with(&format!(" ({ev})")))
            .map(|t| t["samples"]["length"].as_u64().unwrap())
            .sum();
        assert_eq!(got, *n, "{ev}: samples in its tracks, and perf's");
    }
}
