//! `sear export`: every format read back with sample totals equal to the
//! recording's (as perf report counts them): pprof by `go tool pprof` and by
//! decoding the protobuf (inline frames as `line` lists with their lines);
//! speedscope by its published JSON schema (the one
//! its npm package ships, checked with ajv), structural checks, and by
//! speedscope's own importer: the app its npm package ships, opened in
//! headless Chromium as its CLI opens a file, whose Sandwich view must show
//! the times and shares the file holds; the Firefox Profiler's format by
//! structural checks of its tables and against its type definitions at the
//! version the file declares, written out here as a small schema (it
//! publishes no importer or JSON schema to install); folded stacks and
//! sear's JSON by their sums.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::browser::Browser;
use common::chromium::Chromium;
use common::*;
use prost::Message;
use serde_json::{json, Value};

const SRC: &str = r#"
#include <unistd.h>
volatile unsigned long sink;
#define BODY { unsigned long x = sink; for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL; sink = x; }
__attribute__((noinline)) void work_a(long n) BODY
__attribute__((noinline)) void work_b(long n) BODY
/* Real system calls: kernel frames are sampled on any machine. */
__attribute__((noinline)) void syscalls(int n) { for (int i = 0; i < n; i++) sink += getppid(); }
int main(void) {
  for (int r = 0; r < 100; r++) { work_a(3000000); work_b(1500000); syscalls(2000); }
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

/// Exports the shared recording into a file of its own (tests run in parallel, and two
/// writing one file could read each other's half-written output).
fn export(r: &Rec, format: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = r.dir.join(format!("out{n}.{format}"));
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
    // The program's getppid loop takes a share of the samples that varies
    // with the machine: the two functions' ratio is what the program fixes.
    let ratio = flat(rows[0]) / flat(rows[1]);
    assert!((ratio - 2.0).abs() < 0.3, "work_a:work_b = {ratio}\n{top}");

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

/// A gzipped profile.proto file, decoded.
fn read_pprof(file: &Path) -> render::pprof::Profile {
    let mut bytes = Vec::new();
    use std::io::Read;
    flate2::read::GzDecoder::new(std::fs::File::open(file).unwrap())
        .read_to_end(&mut bytes)
        .expect("gzip");
    render::pprof::Profile::decode(&bytes[..]).expect("profile.proto")
}

/// A hot loop whose body is an inlined function, for the inline frames of pprof locations.
const INLINE_SRC: &str = r#"
volatile unsigned long sink;
static inline __attribute__((always_inline)) unsigned long mix(unsigned long x) {
  x ^= x >> 7;
  return x * 6364136223846793005UL + 1442695040888963407UL;
}
__attribute__((noinline)) void churn(long n) {
  unsigned long x = sink;
  for (long i = 0; i < n; i++)
    x = mix(x); /* CALL */
  sink = x;
}
int main(void) {
  for (int r = 0; r < 40; r++) churn(5000000);
  return 0;
}
"#;

/// pprof locations carry their inline frames as `line` lists, innermost first, each with its
/// own line: a DWARF recording of a loop whose body is an inlined function has locations
/// whose lines are mix (at a line of its body) then churn at the line of the call, as
/// `addr2line -i` reads them from the binary.
#[test]
fn pprof_lines_list_inline_frames_with_their_lines() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_c(dir.path(), "inl", INLINE_SRC, &["-O2", "-g"]);
    let data = perf_record(
        dir.path(),
        "perf.data",
        &[
            "-e",
            "cpu-clock",
            "-F",
            "2000",
            "--call-graph",
            "dwarf,4096",
        ],
        &[exe.to_str().unwrap().to_owned()],
    );
    let out = dir.path().join("out.pprof");
    run_ok(
        sear()
            .args(["export", "--format", "pprof", "-i"])
            .arg(&data)
            .arg("-o")
            .arg(&out),
    );
    let p = read_pprof(&out);
    let s = |i: i64| p.string_table[i as usize].as_str();
    let fname = |id: u64| s(p.function[id as usize - 1].name);
    // (Lines of the file: the source's first line is the empty one after `r#"`.)
    let line_of =
        |marker: &str| 1 + INLINE_SRC.lines().position(|l| l.contains(marker)).unwrap() as i64;
    let (body, call) = (
        line_of("x ^= x >> 7")..=line_of("return x *"),
        line_of("/* CALL */"),
    );
    let inlined: Vec<Vec<(&str, i64)>> = p
        .location
        .iter()
        .map(|l| {
            l.line
                .iter()
                .map(|ln| (fname(ln.function_id), ln.line))
                .collect::<Vec<_>>()
        })
        .filter(|lines| lines.first().is_some_and(|l| l.0 == "mix"))
        .collect();
    assert!(!inlined.is_empty(), "no location with mix inlined");
    for lines in &inlined {
        assert_eq!(lines.len(), 2, "mix inside churn: {lines:?}");
        assert!(
            body.contains(&lines[0].1),
            "mix at a line of its body {body:?}: {lines:?}"
        );
        assert_eq!(
            lines[1],
            ("churn", call),
            "churn at the call's line: {lines:?}"
        );
    }
    // Each function names its file.
    for f in &p.function {
        if matches!(s(f.name), "mix" | "churn") {
            assert_eq!(s(f.filename), "inl.c", "{}", s(f.name));
        }
    }
}

#[test]
fn pprof_decodes_with_consistent_tables() {
    let r = recording();
    let out = export(r, "pprof");
    let p = read_pprof(&out);
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
/// schema and app, and ajv (.ci/run does it): `$SEAR_NPM`, else ~/.cache/sear-npm.
fn npm_dir() -> PathBuf {
    let dir = std::env::var_os("SEAR_NPM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/sear-npm")
        });
    let schema = dir.join("node_modules/speedscope/dist/release/file-format-schema.json");
    assert!(
        schema.exists() && dir.join("node_modules/ajv").exists(),
        "the speedscope tests use speedscope's own schema and app: \
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

/// speedscope's page after an import, as the test reads it.
#[derive(Debug)]
struct SpeedscopePage {
    /// `NAME - speedscope` once a profile group named NAME is imported.
    title: String,
    /// The toolbar's centre: the profile shown, with `(I/N)` when there are several.
    toolbar: Option<String>,
    /// "Something went wrong": the importer threw.
    error: bool,
    /// What it said with `alert()` ("Unrecognized format!" and the like).
    alerts: Vec<String>,
}

/// The Sandwich view's tab in speedscope's toolbar (shown once a profile is loaded).
const SANDWICH_TAB: &str =
    "[...document.querySelectorAll('div')].find(d => d.children.length === 1 \
     && d.lastChild.nodeType === Node.TEXT_NODE && d.lastChild.textContent === 'Sandwich')";

/// Opens `file` in speedscope's own app, the bundled copy its npm package ships, as the
/// package's CLI does (`speedscope FILE`, bin/cli.mjs): it writes a script calling
/// `speedscope.loadFileFromBase64(NAME, BASE64)` and opens dist/release/index.html with
/// `#localProfilePath=` that script; the app adds it as a `<script src>`, which hands the bytes
/// to its importer. The script starts with one more line than the CLI's: `alert()` is
/// recorded in `window.searAlerts` instead of shown, since a headless page has nobody to
/// dismiss it and would stop. Returns once speedscope shows a profile, its error or an alert
/// (at most STEP).
fn open_in_speedscope(b: &mut impl Browser, file: &Path) -> SpeedscopePage {
    let name = file.file_name().unwrap().to_str().unwrap();
    let script = file.with_extension("speedscope.js");
    std::fs::write(
        &script,
        format!(
            "window.searAlerts = []; window.alert = m => window.searAlerts.push(String(m));\n\
             speedscope.loadFileFromBase64({}, {})",
            json!(name),
            json!(data_encoding::BASE64.encode(&std::fs::read(file).unwrap()))
        ),
    )
    .unwrap();
    let index = npm_dir().join("node_modules/speedscope/dist/release/index.html");
    // A new document each time: a URL that differs only in its #fragment would not reload the
    // app, which reads the fragment once.
    b.open_url("about:blank");
    b.open_url(&format!(
        "file://{}#localProfilePath={}",
        index.display(),
        script.display()
    ));
    b.wait_for(&format!(
        "(window.searAlerts ?? []).length > 0 \
         || document.body.innerText.includes('Something went wrong') || !!{SANDWICH_TAB}"
    ));
    let v = b.eval(&format!(
        "(() => {{ const tab = {SANDWICH_TAB}; const bar = tab?.parentElement.parentElement; \
         return {{ title: document.title, \
         toolbar: bar ? [...bar.childNodes].slice(1, -1).map(n => n.nodeType === Node.TEXT_NODE ? n.textContent : n.innerText).join('').trim() : null, \
         error: document.body.innerText.includes('Something went wrong'), \
         alerts: window.searAlerts ?? [] }}; }})()"
    ));
    SpeedscopePage {
        title: v["title"].as_str().unwrap_or_default().to_owned(),
        toolbar: v["toolbar"].as_str().map(str::to_owned),
        error: v["error"] == json!(true),
        alerts: v["alerts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect(),
    }
}

/// What speedscope's toolbar shows for a file: the active profile's name, and `(I/N)` when
/// the file has several profiles.
fn speedscope_toolbar(v: &Value) -> String {
    let profiles = v["profiles"].as_array().unwrap();
    let i = v["activeProfileIndex"].as_u64().unwrap_or(0) as usize;
    let name = profiles[i]["name"].as_str().unwrap();
    if profiles.len() == 1 {
        name.to_owned()
    } else {
        format!("{name} ({}/{})", i + 1, profiles.len())
    }
}

/// A duration as speedscope prints nanoseconds (`1:05`, `1.23s`, `430.75ms`, `250.00µs`,
/// `12.00ns`), as (value, half its last digit) in nanoseconds; minutes:seconds are whole
/// seconds rounded down.
fn speedscope_duration(s: &str) -> (f64, f64) {
    if let Some((m, sec)) = s.split_once(':') {
        let v = (m.parse::<f64>().unwrap() * 60.0 + sec.parse::<f64>().unwrap()) * 1e9;
        return (v + 0.5e9, 0.5e9);
    }
    let (num, scale) = [("ms", 1e6), ("µs", 1e3), ("ns", 1.0), ("s", 1e9)]
        .iter()
        .find_map(|(unit, scale)| Some((s.strip_suffix(unit)?, *scale)))
        .unwrap_or_else(|| panic!("not one of speedscope's durations: {s:?}"));
    (num.parse::<f64>().unwrap() * scale, 0.005 * scale)
}

/// Whether `pct` (a share in percent) prints as speedscope's `shown` (`67%`, `3.1%`, `0.04%`,
/// `<0.01%`, `>99%`, `100%`: fewer decimals the larger it is).
fn speedscope_percent_matches(shown: &str, pct: f64) -> bool {
    let n = shown
        .strip_suffix('%')
        .unwrap_or_else(|| panic!("{shown:?}"));
    if let Some(n) = n.strip_prefix('>') {
        return pct > n.parse::<f64>().unwrap();
    }
    if let Some(n) = n.strip_prefix('<') {
        return pct < n.parse::<f64>().unwrap();
    }
    let decimals = n.split_once('.').map_or(0, |(_, d)| d.len());
    (n.parse::<f64>().unwrap() - pct).abs() <= 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9
}

/// One row of speedscope's Sandwich table: (name, total, self), each value as printed
/// (`410.75ms (67%)`) and its bar's width (the unrounded percentage, `66.6261%`).
type SandwichRow = (String, (String, String), (String, String));

/// The Sandwich table's rows as drawn. speedscope draws only the rows in view: the heaviest
/// by self time, which are the ones the test looks for.
fn sandwich_rows(b: &mut impl Browser) -> Vec<SandwichRow> {
    let v = b.eval(
        "[...document.querySelectorAll('tr')].filter(r => r.cells.length === 3 && r.cells[0].tagName === 'TD')\
         .map(r => [...r.cells].map(c => [c.textContent, c.querySelector('div > div')?.style.width ?? '']))",
    );
    let s = |c: &Value| c.as_str().unwrap().to_owned();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                s(&r[2][0]),
                (s(&r[0][0]), s(&r[0][1])),
                (s(&r[1][0]), s(&r[1][1])),
            )
        })
        .collect()
}

/// The profile's total, self weight and non-idle total of frame `f` as speedscope counts
/// them: a sample's weight counts once towards each frame on its stack (recursion too),
/// towards the leaf's self, and towards the total unless its stack is empty.
fn speedscope_weights(profile: &Value, f: u64) -> (u64, u64, u64) {
    let (mut total, mut own, mut all) = (0, 0, 0);
    let weights = profile["weights"].as_array().unwrap();
    for (st, w) in profile["samples"].as_array().unwrap().iter().zip(weights) {
        let (st, w) = (st.as_array().unwrap(), w.as_u64().unwrap());
        if st.is_empty() {
            continue;
        }
        all += w;
        if st.iter().any(|x| x.as_u64() == Some(f)) {
            total += w;
        }
        if st.last().unwrap().as_u64() == Some(f) {
            own += w;
        }
    }
    (total, own, all)
}

/// speedscope's own importer reads the export: speedscope's app, from its npm package, opened
/// in headless Chromium as `speedscope FILE` opens it. It shows the profile (the toolbar names
/// it; a two-event recording's file shows `(1/N)`, N its number of profiles), and its
/// Sandwich view lists work_a above work_b with the total and self time and shares our JSON
/// gives them (an independent reading of the numbers: speedscope sums them itself). A file
/// that is not speedscope's is refused and a broken one gives speedscope's error, so these
/// checks can fail.
#[test]
fn speedscope_app_imports_the_export() {
    let r = recording();
    let path = export(r, "speedscope");
    let v = json(&path);
    let dir = tempfile::tempdir().unwrap();
    let mut b = Chromium::launch();

    let page = open_in_speedscope(&mut b, &path);
    assert!(
        !page.error && page.alerts.is_empty(),
        "speedscope did not import {}: {page:?}",
        path.display()
    );
    assert_eq!(
        page.title,
        format!("{} - speedscope", v["name"].as_str().unwrap())
    );
    assert_eq!(
        page.toolbar.as_deref(),
        Some(speedscope_toolbar(&v).as_str())
    );

    // The Sandwich view: a table of every function's total and self time, heaviest self first.
    let tab = b.eval(&format!(
        "(() => {{ const b = {SANDWICH_TAB}.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; }})()"
    ));
    b.click(tab[0].as_f64().unwrap(), tab[1].as_f64().unwrap());
    b.wait_for("[...document.querySelectorAll('th')].some(h => h.textContent === 'Symbol Name')");
    let rows = sandwich_rows(&mut b);
    let profile = &v["profiles"][v["activeProfileIndex"].as_u64().unwrap() as usize];
    let frames = v["shared"]["frames"].as_array().unwrap();
    let mut at = Vec::new();
    for name in ["work_a", "work_b"] {
        let f: Vec<u64> = (0..frames.len() as u64)
            .filter(|&i| frames[i as usize]["name"] == name)
            .collect();
        assert_eq!(f.len(), 1, "one frame named {name}");
        let (total, own, all) = speedscope_weights(profile, f[0]);
        let i = rows
            .iter()
            .position(|r| r.0 == name)
            .unwrap_or_else(|| panic!("no {name} in speedscope's Sandwich view: {rows:?}"));
        at.push(i);
        for (what, want, (shown, bar)) in [("total", total, &rows[i].1), ("self", own, &rows[i].2)]
        {
            let msg = format!(
                "{name}'s {what}: speedscope shows {shown:?} (bar {bar}), our JSON has {want} ns of {all}"
            );
            let (time, pct) = shown
                .strip_suffix(')')
                .and_then(|s| s.split_once(" ("))
                .unwrap_or_else(|| panic!("{msg}"));
            let (t, tol) = speedscope_duration(time);
            assert!((t - want as f64).abs() <= tol + 1.0, "{msg}");
            let share = 100.0 * want as f64 / all as f64;
            assert!(speedscope_percent_matches(pct, share), "{msg}");
            let bar: f64 = bar.strip_suffix('%').unwrap().parse().unwrap();
            assert!((bar - share).abs() < 1e-3, "{msg}");
        }
    }
    assert!(at[0] < at[1], "work_a above work_b: {rows:?}");

    // Several profiles: the toolbar counts them.
    let two = dir.path().join("two.json");
    run_ok(
        sear()
            .args(["export", "--format", "speedscope", "-i"])
            .arg(two_events(dir.path()))
            .arg("-o")
            .arg(&two),
    );
    let v2 = json(&two);
    assert!(
        v2["profiles"].as_array().unwrap().len() >= 2,
        "a profile per event"
    );
    let page = open_in_speedscope(&mut b, &two);
    assert!(!page.error && page.alerts.is_empty(), "{page:?}");
    assert_eq!(
        page.toolbar.as_deref(),
        Some(speedscope_toolbar(&v2).as_str())
    );

    // The controls: a JSON file that is not speedscope's is not recognised, and one that says
    // it is but has a profile without its samples and weights makes the importer fail.
    let not_ours = dir.path().join("not-speedscope.json");
    std::fs::write(&not_ours, br#"{"profiles": [{"type": "sampled"}]}"#).unwrap();
    let page = open_in_speedscope(&mut b, &not_ours);
    assert_eq!(
        page.alerts,
        ["Unrecognized format! See documentation about supported formats."],
        "{page:?}"
    );
    assert_eq!(page.toolbar, None, "no profile shown: {page:?}");
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        br#"{"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": []}, "profiles": [{"type": "sampled"}]}"#,
    )
    .unwrap();
    let page = open_in_speedscope(&mut b, &broken);
    assert!(page.error && page.toolbar.is_none(), "{page:?}");
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
    // The program's system calls are sampled in the kernel: their frames
    // are in the Kernel category.
    assert!(kernel_frames > 0);
}

// ---------------------------------------------------------------------------
// The processed profile format at `preprocessedProfileVersion` 49, as the
// Firefox Profiler's type definitions give it (firefox-devtools/profiler).
// No stored copy of src/types/profile.js from the v49 era itself could be
// found, so the shape is the one of the definitions read, taken back to
// v49 with the upgraders for 50 to 56:
//   [T]  src/types/profile.ts at 3bbfffa16085c66f3cb16d033cd163a62b1d5cac
//        (processed version 56: `shared.stringArray`, no stack categories);
//   [F]  a stored Flow src/types/profile.js of the v53-v55 era (same
//        fields; every object type there is exact, `{| |}`, so fields a
//        type does not declare are violations too);
//   [U]  src/profile-logic/processed-profile-versioning.ts at
//        3bbfffa16085c66f3cb16d033cd163a62b1d5cac, upgraders [50]-[56], and
//        docs-developer/CHANGELOG-formats.md at
//        aac2c134f47c2d4b9d7b5927132a8cd55c010f09, which undo to v49:
//        [50] `samples.time` was required (`timeDeltas` came in 50);
//        [51] marker schemas had no `isStackBased`;
//        [53] stackTable had `category` and `subcategory` columns;
//        [54] frameTable had `implementation`, meta could have
//             `doesNotUseFrameImplementation`, sampleUnits.time was 'ms' only;
//        [55] marker schemas had `data`, not `fields` / `description`;
//        [56] each thread had its own `stringArray` (no `profile.shared`);
//   [M]  src/types/markers.ts at 1812fea023eea9ed90af849035a461c8ebf4db0f
//        (MarkerSchema, before [51] and [55] are undone).
// ---------------------------------------------------------------------------

/// A JSON type of the definitions.
#[derive(Clone, Copy)]
enum Ty {
    Num,
    Str,
    Bool,
    Null,
    /// `IndexIntoStringTable`: an integer index into the thread's `stringArray`.
    StrIdx,
    /// Anything (marker payloads, described by the marker schemas instead).
    Any,
    /// One of these strings (a union of string literals).
    OneOf(&'static [&'static str]),
    Or(&'static [Ty]),
    Arr(&'static Ty),
    /// An exact object type.
    Obj(&'static [Field]),
    /// An exact object type whose array fields are columns as long as its `length`.
    Table(&'static [Field]),
}

struct Field {
    name: &'static str,
    required: bool,
    ty: Ty,
}

const fn req(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        required: true,
        ty,
    }
}

const fn opt(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        required: false,
        ty,
    }
}

use Ty::{Bool, Null, Num, Str, StrIdx};
const NUMS: Ty = Ty::Arr(&Num);
const STRS: Ty = Ty::Arr(&Str);
const BOOLS: Ty = Ty::Arr(&Bool);
const STR_IDXS: Ty = Ty::Arr(&StrIdx);
const NUM_OR_NULL: Ty = Ty::Or(&[Num, Null]);
const NUMS_OR_NULLS: Ty = Ty::Arr(&NUM_OR_NULL);
const STR_IDXS_OR_NULLS: Ty = Ty::Arr(&Ty::Or(&[StrIdx, Null]));
const STR_OR_NULL: Ty = Ty::Or(&[Str, Null]);
const LENGTH: Field = req("length", Num);

// [T]/[F] Lib.
const LIB: Ty = Ty::Obj(&[
    req("arch", Str),
    req("name", Str),
    req("path", Str),
    req("debugName", Str),
    req("debugPath", Str),
    req("breakpadId", Str),
    req("codeId", STR_OR_NULL),
]);

// [T]/[F] Category, CategoryColor.
const CATEGORY: Ty = Ty::Obj(&[
    req("name", Str),
    req(
        "color",
        Ty::OneOf(&[
            "transparent",
            "purple",
            "green",
            "orange",
            "yellow",
            "lightblue",
            "blue",
            "brown",
            "magenta",
            "red",
            "lightred",
            "darkgrey",
            "grey",
        ]),
    ),
    req("subcategories", STRS),
]);

// [M] MarkerSchema, with `data` rather than `fields` and no
// `description` / `isStackBased` ([U] 51, 55).
const MARKER_SCHEMA: Ty = Ty::Obj(&[
    req("name", Str),
    opt("tooltipLabel", Str),
    opt("tableLabel", Str),
    opt("chartLabel", Str),
    req("display", STRS),
    req("data", Ty::Arr(&Ty::Any)),
    opt("graphs", Ty::Arr(&Ty::Any)),
]);

// [T]/[F] ProfileMeta; `doesNotUseFrameImplementation` and sampleUnits.time
// as before [U] 54. (Optional fields added after v49 without a version bump
// are accepted.)
const META: Ty = Ty::Obj(&[
    req("interval", Num),
    req("startTime", Num),
    opt("startTimeAsClockMonotonicNanosecondsSinceBoot", Num),
    opt("startTimeAsMachAbsoluteTimeNanoseconds", Num),
    opt("startTimeAsQueryPerformanceCounterValue", Num),
    opt("endTime", Num),
    opt("profilingStartTime", Num),
    opt("profilingEndTime", Num),
    req("processType", Num),
    opt(
        "extensions",
        Ty::Table(&[
            req("baseURL", STRS),
            req("id", STRS),
            req("name", STRS),
            LENGTH,
        ]),
    ),
    opt("categories", Ty::Arr(&CATEGORY)),
    req("product", Str),
    req("stackwalk", Num),
    opt("debug", Bool),
    req("version", Num),
    req("preprocessedProfileVersion", Num),
    opt("abi", Str),
    opt("misc", Str),
    opt("oscpu", Str),
    opt("mainMemory", Num),
    opt("platform", Str),
    opt("toolkit", Str),
    opt("appBuildID", Str),
    opt("arguments", Str),
    opt("sourceURL", Str),
    opt("physicalCPUs", Num),
    opt("logicalCPUs", Num),
    opt("CPUName", Str),
    opt("symbolicated", Bool),
    opt("symbolicationNotSupported", Bool),
    opt("updateChannel", Str),
    opt("visualMetrics", Ty::Any),
    opt("configuration", Ty::Any),
    req("markerSchema", Ty::Arr(&MARKER_SCHEMA)),
    opt(
        "sampleUnits",
        Ty::Obj(&[
            req("time", Ty::OneOf(&["ms"])),
            req("eventDelay", Ty::OneOf(&["ms"])),
            req(
                "threadCPUDelta",
                Ty::OneOf(&["ns", "µs", "variable CPU cycles"]),
            ),
        ]),
    ),
    opt("device", Str),
    opt("importedFrom", Str),
    opt("usesOnlyOneStackType", Bool),
    opt("doesNotUseFrameImplementation", Bool),
    opt("sourceCodeIsNotOnSearchfox", Bool),
    opt("extra", Ty::Any),
    opt("initialVisibleThreads", NUMS),
    opt("initialSelectedThreads", NUMS),
    opt("keepProfileThreadOrder", Bool),
    opt("gramsOfCO2ePerKWh", Num),
]);

// [T]/[F] RawSamplesTable; `time` required before [U] 50.
const SAMPLES: Ty = Ty::Table(&[
    opt("responsiveness", NUMS_OR_NULLS),
    opt("eventDelay", NUMS_OR_NULLS),
    req("stack", NUMS_OR_NULLS),
    req("time", NUMS),
    req("weight", Ty::Or(&[Null, NUMS])),
    req("weightType", Ty::OneOf(&["samples", "tracing-ms", "bytes"])),
    opt("threadCPUDelta", NUMS_OR_NULLS),
    opt("threadId", Ty::Arr(&Ty::Or(&[Num, Str]))),
    LENGTH,
]);

// [T]/[F] RawMarkerTable.
const MARKERS: Ty = Ty::Table(&[
    req("data", Ty::Arr(&Ty::Any)),
    req("name", STR_IDXS),
    req("startTime", NUMS_OR_NULLS),
    req("endTime", NUMS_OR_NULLS),
    req("phase", NUMS),
    req("category", NUMS),
    opt("threadId", Ty::Arr(&Ty::Or(&[Num, Str, Null]))),
    LENGTH,
]);

// [T]/[F] RawStackTable, with the category columns before [U] 53.
const STACK_TABLE: Ty = Ty::Table(&[
    req("frame", NUMS),
    req("category", NUMS),
    req("subcategory", NUMS),
    req("prefix", NUMS_OR_NULLS),
    LENGTH,
]);

// [T]/[F] FrameTable, with `implementation` before [U] 54.
const FRAME_TABLE: Ty = Ty::Table(&[
    req("address", NUMS),
    req("inlineDepth", NUMS),
    req("category", NUMS_OR_NULLS),
    req("subcategory", NUMS_OR_NULLS),
    req("func", NUMS),
    req("nativeSymbol", NUMS_OR_NULLS),
    req("innerWindowID", NUMS_OR_NULLS),
    req("implementation", STR_IDXS_OR_NULLS),
    req("line", NUMS_OR_NULLS),
    req("column", NUMS_OR_NULLS),
    LENGTH,
]);

// [T]/[F] FuncTable (`fileName` until v58).
const FUNC_TABLE: Ty = Ty::Table(&[
    req("name", STR_IDXS),
    req("isJS", BOOLS),
    req("relevantForJS", BOOLS),
    req("resource", NUMS),
    req("fileName", STR_IDXS_OR_NULLS),
    req("lineNumber", NUMS_OR_NULLS),
    req("columnNumber", NUMS_OR_NULLS),
    LENGTH,
]);

// [T]/[F] ResourceTable.
const RESOURCE_TABLE: Ty = Ty::Table(&[
    req("lib", NUMS_OR_NULLS),
    req("name", STR_IDXS),
    req("host", STR_IDXS_OR_NULLS),
    req("type", NUMS),
    LENGTH,
]);

// [T]/[F] NativeSymbolTable.
const NATIVE_SYMBOLS: Ty = Ty::Table(&[
    req("libIndex", NUMS),
    req("address", NUMS),
    req("name", STR_IDXS),
    req("functionSize", NUMS_OR_NULLS),
    LENGTH,
]);

// [T]/[F] RawThread, with its own `stringArray` before [U] 56.
const THREAD: Ty = Ty::Obj(&[
    req("processType", Str),
    req("processStartupTime", Num),
    req("processShutdownTime", NUM_OR_NULL),
    req("registerTime", Num),
    req("unregisterTime", NUM_OR_NULL),
    req(
        "pausedRanges",
        Ty::Arr(&Ty::Obj(&[
            req("startTime", NUM_OR_NULL),
            req("endTime", NUM_OR_NULL),
            req("reason", Ty::OneOf(&["profiler-paused", "collecting"])),
        ])),
    ),
    opt("showMarkersInTimeline", Bool),
    req("name", Str),
    req("isMainThread", Bool),
    opt("eTLD+1", Str),
    opt("processName", Str),
    opt("isJsTracer", Bool),
    req("pid", Str),
    req("tid", Ty::Or(&[Num, Str])),
    req("samples", SAMPLES),
    opt("jsAllocations", Ty::Any),
    opt("nativeAllocations", Ty::Any),
    req("markers", MARKERS),
    req("stackTable", STACK_TABLE),
    req("frameTable", FRAME_TABLE),
    req("funcTable", FUNC_TABLE),
    req("resourceTable", RESOURCE_TABLE),
    req("nativeSymbols", NATIVE_SYMBOLS),
    opt("jsTracer", Ty::Any),
    opt("isPrivateBrowsing", Bool),
    opt("userContextId", Num),
    req("stringArray", STRS),
]);

// [T]/[F] Profile, without `shared` ([U] 56); Page, RawCounter (`time`
// required before [U] 50) and ProfilerOverhead.
const PROFILE: Ty = Ty::Obj(&[
    req("meta", META),
    req("libs", Ty::Arr(&LIB)),
    opt(
        "pages",
        Ty::Arr(&Ty::Obj(&[
            req("tabID", Num),
            req("innerWindowID", Num),
            req("url", Str),
            req("embedderInnerWindowID", Num),
            opt("isPrivateBrowsing", Bool),
            opt("favicon", STR_OR_NULL),
        ])),
    ),
    opt(
        "counters",
        Ty::Arr(&Ty::Obj(&[
            req("name", Str),
            req("category", Str),
            req("description", Str),
            opt("color", Str),
            req("pid", Str),
            req("mainThreadIndex", Num),
            req(
                "samples",
                Ty::Table(&[
                    req("time", NUMS),
                    opt("number", NUMS),
                    req("count", NUMS),
                    LENGTH,
                ]),
            ),
        ])),
    ),
    opt(
        "profilerOverhead",
        Ty::Arr(&Ty::Obj(&[
            req("samples", Ty::Any),
            opt("statistics", Ty::Any),
            req("pid", Str),
            req("mainThreadIndex", Num),
        ])),
    ),
    req("threads", Ty::Arr(&THREAD)),
    opt("profilingLog", Ty::Any),
    opt("profileGatheringLog", Ty::Any),
]);

/// Where `v` breaks the v49 definitions, each naming its JSON path.
fn v49_violations(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(v, &PROFILE, "profile", None, &mut out);
    out
}

/// `ty` in words, for messages.
fn describe(ty: &Ty) -> String {
    match ty {
        Num => "a number".into(),
        Str => "a string".into(),
        Bool => "a boolean".into(),
        Null => "null".into(),
        StrIdx => "a string index".into(),
        Ty::Any => "anything".into(),
        Ty::OneOf(words) => format!("one of {words:?}"),
        Ty::Or(alts) => alts.iter().map(describe).collect::<Vec<_>>().join(" | "),
        Ty::Arr(elem) => format!("an array of {}", describe(elem)),
        Ty::Obj(_) | Ty::Table(_) => "an object".into(),
    }
}

/// Checks `v` against `ty` at `path`; `strings` is the length of the
/// enclosing thread's `stringArray`, once inside a thread.
fn check(v: &Value, ty: &Ty, path: &str, strings: Option<usize>, out: &mut Vec<String>) {
    let expected = |want: &str| {
        let got = v.to_string();
        let short: String = got.chars().take(40).collect();
        let more = if short.len() < got.len() { "…" } else { "" };
        format!("{path}: expected {want}, found {short}{more}")
    };
    match *ty {
        Ty::Any => {}
        Num if !v.is_number() => out.push(expected("a number")),
        Str if !v.is_string() => out.push(expected("a string")),
        Bool if !v.is_boolean() => out.push(expected("a boolean")),
        Null if !v.is_null() => out.push(expected("null")),
        StrIdx => match (v.as_u64(), strings) {
            (Some(i), Some(n)) if i as usize >= n => {
                out.push(expected(&format!("a string index (< stringArray's {n})")))
            }
            (Some(_), _) => {}
            (None, _) => out.push(expected("a string index")),
        },
        Ty::OneOf(words) if !v.as_str().is_some_and(|s| words.contains(&s)) => {
            out.push(expected(&format!("one of {words:?}")))
        }
        Ty::Or(alts) => {
            let fits = |t: &Ty| {
                let mut e = Vec::new();
                check(v, t, path, strings, &mut e);
                e.is_empty()
            };
            if !alts.iter().any(fits) {
                let names: Vec<String> = alts.iter().map(describe).collect();
                out.push(expected(&names.join(" | ")))
            }
        }
        Ty::Arr(elem) => match v.as_array() {
            Some(a) => {
                for (i, e) in a.iter().enumerate() {
                    check(e, elem, &format!("{path}[{i}]"), strings, out);
                }
            }
            None => out.push(expected("an array")),
        },
        Ty::Obj(fields) | Ty::Table(fields) => {
            let Some(o) = v.as_object() else {
                return out.push(expected("an object"));
            };
            let strings = o
                .get("stringArray")
                .and_then(Value::as_array)
                .map_or(strings, |a| Some(a.len()));
            for f in fields {
                match o.get(f.name) {
                    Some(x) => check(x, &f.ty, &format!("{path}.{}", f.name), strings, out),
                    None if f.required => out.push(format!("{path}.{}: missing", f.name)),
                    None => {}
                }
            }
            for k in o.keys().filter(|k| !fields.iter().any(|f| f.name == *k)) {
                out.push(format!("{path}.{k}: not a field of this (exact) type"));
            }
            if let (Ty::Table(_), Some(len)) = (ty, o.get("length").and_then(Value::as_u64)) {
                for f in fields.iter().filter(|f| matches!(f.ty, Ty::Arr(_))) {
                    if let Some(n) = o.get(f.name).and_then(Value::as_array).map(Vec::len) {
                        if n as u64 != len {
                            out.push(format!("{path}.{}: {n} entries, length is {len}", f.name));
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// The export conforms to the processed profile format's type definitions
/// at the version it declares (49): every required field present, every
/// field (and column entry) of its declared type, no undeclared fields, and
/// every table column as long as the table.
#[test]
fn firefox_profile_conforms_to_the_v49_type_definitions() {
    let r = recording();
    let v = json(&export(r, "firefox"));
    assert_eq!(v["meta"]["preprocessedProfileVersion"], 49);
    let errors = v49_violations(&v);
    assert!(
        errors.is_empty(),
        "{} violations of the v49 definitions:\n{}",
        errors.len(),
        errors[..errors.len().min(30)].join("\n")
    );

    // The checker itself catches what it should, naming the path.
    let mut broken = v.clone();
    let t = &mut broken["threads"][0];
    t["samples"].as_object_mut().unwrap().remove("time");
    t["funcTable"]["name"][0] = json!(1_000_000_000);
    t["frameTable"]["line"][0] = json!("7");
    t["stackTable"]["frame"]
        .as_array_mut()
        .unwrap()
        .push(json!(0));
    t["extra"] = json!(1);
    broken["libs"][0]["arch"] = Value::Null;
    let errors = v49_violations(&broken);
    for want in [
        "profile.threads[0].samples.time: missing",
        "profile.threads[0].funcTable.name[0]: expected a string index",
        "profile.threads[0].frameTable.line[0]: expected",
        "profile.threads[0].stackTable.frame: ",
        "profile.threads[0].extra: not a field",
        "profile.libs[0].arch: expected a string",
    ] {
        assert!(
            errors.iter().any(|e| e.starts_with(want)),
            "{want} in {errors:#?}"
        );
    }
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

/// The test program built and recorded in `dir` with two events: cpu-clock and page-faults.
fn two_events(dir: &Path) -> PathBuf {
    have_perf();
    let exe = build_hot(dir);
    perf_record(
        dir,
        "two.data",
        &["-e", "cpu-clock/period=200000/,page-faults/period=1/", "-g"],
        &[exe.to_str().unwrap().to_owned()],
    )
}

/// With two events, the Firefox profile has a track per thread and event,
/// named after both, and every sample of each event is in its tracks.
#[test]
fn firefox_profile_has_a_track_per_event() {
    let dir = tempfile::tempdir().unwrap();
    let data = two_events(dir.path());
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
