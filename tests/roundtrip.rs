//! `sear inject` against perf 6.1: whatever sear writes, perf must read back
//! to the same `perf script` output and the same `perf report --stats`
//! counts (apart from the record kinds a rewrite legitimately changes), and
//! sear's own reader must see the same records.

mod common;
use common::{first_difference, WILD};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use perf_data::{
    RecordReader, PERF_RECORD_COMPRESSED, PERF_RECORD_COMPRESSED2, PERF_RECORD_HEADER_ATTR,
    PERF_RECORD_HEADER_FEATURE, PERF_RECORD_HEADER_TRACING_DATA,
};

const CORRUPTED: &str = "perf.data.piped.corrupted.zero_size_sample-3.2";

/// Record kinds whose counts a rewrite changes: the wrappers of compressed
/// data, metadata that moves between records and header (ATTR, FEATURE,
/// TRACING_DATA, and BUILD_ID / EVENT_UPDATE records synthesized for pipe
/// output), and so the total.
const CHANGING_KINDS: &[&str] = &[
    "TOTAL",
    "ATTR",
    "FEATURE",
    "TRACING_DATA",
    "BUILD_ID",
    "EVENT_UPDATE",
    "COMPRESSED",
    "COMPRESSED2",
];

fn sear(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sear"))
        .args(args)
        .output()
        .expect("running sear")
}

fn inject(input: &Path, output: &Path, extra: &[&str]) {
    let mut args = vec!["inject", "-i", input.to_str().unwrap()];
    args.extend_from_slice(extra);
    if output.extension().is_some_and(|e| e == "pipe") {
        // `-o -`: pipe mode on stdout.
        args.extend_from_slice(&["-o", "-"]);
        let f = std::fs::File::create(output).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_sear"))
            .args(&args)
            .stdout(Stdio::from(f))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "sear {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        args.extend_from_slice(&["-o", output.to_str().unwrap()]);
        let out = sear(&args);
        assert!(
            out.status.success(),
            "sear {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn perf(args: &[&str]) -> Output {
    Command::new("perf")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("running perf")
}

fn script(p: &Path) -> String {
    let out = perf(&[
        "script",
        "-i",
        p.to_str().unwrap(),
        "--show-task-events",
        "--show-mmap-events",
        "--show-switch-events",
        "--show-lost-events",
    ]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `perf report --stats` as (kind, count) lines in order, percentages dropped
/// (they follow the total), changing kinds left out.
fn stats(p: &Path) -> Vec<(String, u64)> {
    let out = perf(&["report", "--stats", "-i", p.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.ends_with(" stats:") {
            // Per-event blocks are compared by position: perf titles them
            // from the attrs in pipe mode ("cycles:uH") and from the
            // EVENT_DESC names in file mode ("cycles:u").
            v.push(("[event]".to_string(), 0));
            continue;
        }
        let Some((kind, rest)) = t.split_once(" events:") else {
            continue;
        };
        if CHANGING_KINDS.contains(&kind) {
            continue;
        }
        let n = rest
            .split_whitespace()
            .next()
            .unwrap_or("")
            .parse()
            .unwrap_or(u64::MAX);
        v.push((kind.to_string(), n));
    }
    v
}

/// COMPRESSED records as sear's reader sees them (perf 6.1 cannot count
/// them in pipe mode).
fn compressed_records(p: &Path) -> usize {
    let mut r = RecordReader::open(p).unwrap();
    let mut n = 0;
    while let Some(x) = r.next_raw().unwrap() {
        if !x.from_compressed && x.type_ == PERF_RECORD_COMPRESSED {
            n += 1;
        }
    }
    n
}

fn stats_count(p: &Path, kind: &str) -> u64 {
    let out = perf(&["report", "--stats", "-i", p.to_str().unwrap()]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().split_once(" events:"))
        .find(|(k, _)| *k == kind)
        .and_then(|(_, r)| r.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

type Rec = (u32, u16, Vec<u8>, Vec<u8>);

/// The records sear's reader hands out that a rewrite must keep: all but
/// COMPRESSED wrappers and the metadata that moves into or out of the header.
fn data_records(p: &Path) -> Vec<Rec> {
    let mut r = RecordReader::open(p).unwrap();
    let mut v = Vec::new();
    while let Some(x) = r.next_raw().unwrap() {
        let wrapper = !x.from_compressed
            && (x.type_ == PERF_RECORD_COMPRESSED || x.type_ == PERF_RECORD_COMPRESSED2);
        let moved = matches!(
            x.type_,
            PERF_RECORD_HEADER_ATTR | PERF_RECORD_HEADER_FEATURE | PERF_RECORD_HEADER_TRACING_DATA
        );
        if !wrapper && !moved {
            v.push((x.type_, x.misc, x.payload.to_vec(), x.trailing.to_vec()));
        }
    }
    v
}

/// Checks everything the task asks of one input and one output form.
fn check_same(input: &Path, output: &Path, what: &str) {
    let (a, b) = (script(input), script(output));
    assert!(
        !a.is_empty(),
        "{what}: perf script printed nothing for the input"
    );
    if a != b {
        let first = first_difference(&a, &b);
        panic!(
            "{what}: perf script differs at line {first}:\n in: {:?}\nout: {:?}",
            a.lines().nth(first),
            b.lines().nth(first)
        );
    }
    // perf 6.1's `report --stats` cannot decompress pipe-mode streams (not
    // even its own `perf record -z -o -`): those are compared by script only.
    if !compressed_pipe(input) && !compressed_pipe(output) {
        assert_eq!(stats(input), stats(output), "{what}: perf report --stats");
    }
}

fn compressed_pipe(p: &Path) -> bool {
    let r = RecordReader::open(p).unwrap();
    let mut r = r;
    if !r.meta().is_pipe() {
        return false;
    }
    while let Some(x) = r.next_raw().unwrap() {
        if x.type_ == PERF_RECORD_COMPRESSED || x.type_ == PERF_RECORD_COMPRESSED2 {
            return true;
        }
    }
    false
}

/// The metadata after every record was read (pipe-mode streams carry theirs
/// in records).
fn meta_of(p: &Path) -> perf_data::Meta {
    let mut r = RecordReader::open(p).unwrap();
    while r.next_raw().unwrap().is_some() {}
    r.meta().clone()
}

fn wild_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(WILD)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.starts_with("perf.data") && n != CORRUPTED
        })
        .collect();
    v.sort();
    assert!(v.len() >= 17, "conformance files missing");
    v
}

#[test]
fn wild_files_to_file_mode() {
    let dir = tempfile::tempdir().unwrap();
    for f in wild_files() {
        let name = f.file_name().unwrap().to_str().unwrap();
        let out = dir.path().join(format!("{name}.data"));
        inject(&f, &out, &[]);
        check_same(&f, &out, &format!("{name} -> file"));
        assert_eq!(data_records(&f), data_records(&out), "{name}: records");
        let (mi, mo) = (meta_of(&f), meta_of(&out));
        assert!(!mo.is_pipe());
        assert!(!mo.events.is_empty(), "{name}");
        assert_eq!(mi.events.len(), mo.events.len(), "{name}");
        // Names and features survive (pipe-mode features land in the header).
        let names = |m: &perf_data::Meta| m.events.iter().map(|e| e.name()).collect::<Vec<_>>();
        assert_eq!(names(&mi), names(&mo), "{name}: event names");
        let mut fi = perf_data::writer::feature_map(&mi.features);
        fi.remove(&perf_data::feature::COMPRESSED);
        assert_eq!(
            fi,
            perf_data::writer::feature_map(&mo.features),
            "{name}: features"
        );
        for (a, b) in mi.events.iter().zip(&mo.events) {
            assert_eq!(a.ids, b.ids, "{name}: event ids");
            assert_eq!(a.attr.sample_type, b.attr.sample_type, "{name}");
            assert_eq!(a.attr.config, b.attr.config, "{name}");
            assert_eq!(a.attr.flags, b.attr.flags, "{name}");
        }
    }
}

#[test]
fn wild_files_to_pipe_mode_and_back() {
    let dir = tempfile::tempdir().unwrap();
    for f in wild_files() {
        let name = f.file_name().unwrap().to_str().unwrap();
        let pipe = dir.path().join(format!("{name}.pipe"));
        inject(&f, &pipe, &[]);
        check_same(&f, &pipe, &format!("{name} -> pipe"));
        assert!(data_records(&f).len() <= data_records(&pipe).len());
        // And back to a file: the same as going there directly.
        let back = dir.path().join(format!("{name}.back"));
        inject(&pipe, &back, &[]);
        check_same(&f, &back, &format!("{name} -> pipe -> file"));
    }
}

#[test]
fn wild_files_compressed() {
    let dir = tempfile::tempdir().unwrap();
    for f in wild_files() {
        let name = f.file_name().unwrap().to_str().unwrap();
        let z = dir.path().join(format!("{name}.z"));
        inject(&f, &z, &["-z"]);
        check_same(&f, &z, &format!("{name} -> -z file"));
        assert!(
            stats_count(&z, "COMPRESSED") > 0,
            "{name}: nothing compressed"
        );
        assert!(compressed_records(&z) > 0);
        assert_eq!(data_records(&f), data_records(&z), "{name}: records");
    }
}

#[test]
fn corrupted_file_gives_partial_output_and_a_warning() {
    let f = Path::new(WILD).join(CORRUPTED);
    let dir = tempfile::tempdir().unwrap();
    for out in [dir.path().join("c.data"), dir.path().join("c.pipe")] {
        let mut args = vec!["inject", "-i", f.to_str().unwrap(), "-o"];
        let is_pipe = out.extension().is_some_and(|e| e == "pipe");
        args.push(if is_pipe { "-" } else { out.to_str().unwrap() });
        let res = Command::new(env!("CARGO_BIN_EXE_sear"))
            .args(&args)
            .stdout(if is_pipe {
                Stdio::from(std::fs::File::create(&out).unwrap())
            } else {
                Stdio::null()
            })
            .output()
            .unwrap();
        // Exits normally (no signal, no panic), says what is wrong and where.
        assert!(res.status.code().is_some());
        let err = String::from_utf8_lossy(&res.stderr);
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.contains("corrupt record at byte offset 49104"), "{err}");
        // What could be read is written: perf sees the same records up to
        // the damage as in the input.
        let (a, b) = (script(&f), script(&out));
        assert!(a.lines().count() > 500);
        assert_eq!(a, b, "{}", out.display());
    }
}

/// A short busy workload with forks, execs and exits.
const WORKLOAD: &[&str] = &[
    "sh",
    "-c",
    "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; ls / >/dev/null; true",
];

fn record(dir: &Path, name: &str, opts: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let pipe = opts.contains(&"-o");
    let mut args = vec!["record", "-q"];
    args.extend_from_slice(opts);
    if !pipe {
        args.extend_from_slice(&["-o", out.to_str().unwrap()]);
    }
    args.push("--");
    args.extend_from_slice(WORKLOAD);
    let mut cmd = Command::new("perf");
    cmd.args(&args).stdin(Stdio::null());
    if pipe {
        cmd.stdout(Stdio::from(std::fs::File::create(&out).unwrap()));
    } else {
        cmd.stdout(Stdio::null());
    }
    let res = cmd.output().unwrap();
    assert!(
        res.status.success(),
        "perf {args:?}: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    out
}

fn fresh_recordings(dir: &Path) -> Vec<PathBuf> {
    vec![
        record(dir, "g.data", &["-e", "cpu-clock", "-g"]),
        record(
            dir,
            "dwarf.data",
            &["-e", "cpu-clock", "--call-graph", "dwarf"],
        ),
        record(dir, "z.data", &["-e", "cpu-clock", "-g", "-z"]),
        record(dir, "pipe.data", &["-e", "cpu-clock", "-g", "-o", "-"]),
        record(dir, "zpipe.data", &["-e", "cpu-clock", "-z", "-o", "-"]),
        record(
            dir,
            "multi.data",
            &[
                "-e",
                "cpu-clock",
                "-e",
                "task-clock/name=tc/",
                "-e",
                "page-faults:u",
            ],
        ),
        record(
            dir,
            "switch.data",
            &["-e", "cpu-clock", "--switch-events", "-a"],
        ),
    ]
}

#[test]
fn fresh_perf_recordings_in_every_output_form() {
    let dir = tempfile::tempdir().unwrap();
    for f in fresh_recordings(dir.path()) {
        let name = f.file_stem().unwrap().to_str().unwrap().to_string();
        let outputs = [
            (format!("{name}.out.data"), vec![]),
            (format!("{name}.out.pipe"), vec![]),
            (format!("{name}.z.data"), vec!["-z"]),
            (format!("{name}.z9.pipe"), vec!["--compress=9"]),
        ];
        for (out, extra) in outputs {
            let out = dir.path().join(out);
            inject(&f, &out, &extra);
            let what = format!("{name} -> {}", out.file_name().unwrap().to_str().unwrap());
            check_same(&f, &out, &what);
            // sear's reader sees the same records after a rewrite (metadata
            // records move to and from the header, wrappers go).
            let (a, b) = (data_records(&f), data_records(&out));
            if out.extension().is_some_and(|e| e == "data") {
                assert_eq!(a, b, "{what}: records");
            } else {
                // Pipe output may add named-event and build-id records.
                assert!(b.len() >= a.len(), "{what}");
            }
            if !extra.is_empty() {
                assert!(compressed_records(&out) > 0, "{what}: not compressed");
            }
        }
        // Compressed input written plainly has no COMPRESSED records or feature.
        let plain = dir.path().join(format!("{name}.out.data"));
        assert_eq!(stats_count(&plain, "COMPRESSED"), 0, "{name}");
        assert_eq!(compressed_records(&plain), 0, "{name}");
        let r = RecordReader::open(&plain).unwrap();
        assert!(!r.meta().features.has(perf_data::feature::COMPRESSED));
    }
}

#[test]
fn pipe_input_becomes_a_file_with_attrs_and_features_in_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let f = record(
        dir.path(),
        "p.data",
        &["-e", "cpu-clock", "-e", "task-clock", "-o", "-"],
    );
    let out = dir.path().join("p.out.data");
    inject(&f, &out, &[]);
    let header = perf(&["report", "--header-only", "-i", out.to_str().unwrap()]);
    let h = String::from_utf8_lossy(&header.stdout);
    assert!(h.contains("# event : name = cpu-clock"), "{h}");
    assert!(h.contains("# event : name = task-clock"), "{h}");
    assert!(h.contains("# hostname :"), "{h}");
    assert!(h.contains("# cmdline :"), "{h}");
    assert_eq!(stats_count(&out, "ATTR"), 0);
    assert_eq!(stats_count(&out, "FEATURE"), 0);
    let r = RecordReader::open(&out).unwrap();
    assert!(r
        .meta()
        .header
        .as_ref()
        .unwrap()
        .has_feature(perf_data::feature::EVENT_DESC));
}

#[test]
fn unknown_compression_level_is_a_usage_error() {
    let out = sear(&[
        "inject",
        "-i",
        "/dev/null",
        "-o",
        "/dev/null",
        "--compress=99",
    ]);
    assert_eq!(out.status.code(), Some(2));
}
