//! `sear export --format pprof`: read back by `go tool pprof` with the recording's totals
//! (as perf report counts them), and by decoding the protobuf (inline frames as `line`
//! lists with their lines, consistent tables).

mod common;

use std::path::Path;

use common::export::*;
use common::*;
use prost::Message;

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
