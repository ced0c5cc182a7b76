//! JIT frames from real runtimes, named from the perf maps they write (`/tmp/perf-PID.map`),
//! with no extra step: CPython 3.12 `-X perf`, Node `--perf-basic-prof` and Java 17
//! `-XX:+DumpPerfMapAtExit`. Each program has two functions, one doing twice the other's work;
//! `sear record` records it, and report, script, collapse and html name both with shares at 2:1
//! (±15%), and `sear report`'s rows for them equal perf report's on the same recording.
//!
//! Unwinding: CPython's perf trampolines are reached only with DWARF stacks here (pyenv's
//! interpreters keep no frame pointers), so Python is recorded with `--call-graph dwarf`; V8
//! and HotSpot (`-XX:+PreserveFramePointer`) keep frame pointers, so `-g` is used for them.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

const PYTHON: &str = r#"
def work_a(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

def work_b(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

def main():
    for _ in range(30):
        work_a(200000)
        work_b(100000)

main()
"#;

const NODE: &str = r#"
function work_a(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) * Math.sin(i); } return s; }
function work_b(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) * Math.sin(i); } return s; }
let t = 0;
for (let k = 0; k < 200; k++) { t += work_a(200000); t += work_b(100000); }
if (t === 1) console.log(t);
"#;

const JAVA: &str = r#"
public class W {
    static long workA(int n) { long s = 0; for (int i = 0; i < n; i++) { s += (i * 31L) ^ (s >> 3); } return s; }
    static long workB(int n) { long s = 0; for (int i = 0; i < n; i++) { s += (i * 31L) ^ (s >> 3); } return s; }
    public static void main(String[] a) {
        long t = 0;
        for (int k = 0; k < 3000; k++) { t += workA(200000); t += workB(100000); }
        if (t == 1) System.out.println(t);
    }
}
"#;

/// The first column's share (children with --children, else self) summed over the rows whose
/// symbol contains `name` (a runtime can have several compiled versions of one function).
fn share(report: &str, name: &str) -> f64 {
    report
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(name))
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .strip_suffix('%')?
                .parse::<f64>()
                .ok()
        })
        .sum()
}

fn report(tool: Command, data: &Path, children: bool) -> String {
    let mut t = tool;
    stdout_of(&run_ok(
        t.args(["report", "--stdio", "--sort", "sym", "-g", "none"])
            .arg(if children {
                "--children"
            } else {
                "--no-children"
            })
            .arg("-i")
            .arg(data),
    ))
}

/// The rows naming `a` or `b`, as printed.
fn rows(report: &str, a: &str, b: &str) -> Vec<String> {
    report
        .lines()
        .filter(|l| !l.starts_with('#') && (l.contains(a) || l.contains(b)))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The checks every runtime gets: `a` about twice `b` in the report (children shares, or self
/// where the JIT code itself does the work), perf's rows equal, and both names in script,
/// collapse and html.
fn check(dir: &Path, data: &Path, a: &str, b: &str, children: bool) {
    let ours = report(sear(), data, children);
    let (x, y) = (share(&ours, a), share(&ours, b));
    assert!(y > 0.0, "{b} is named: {ours}");
    let ratio = x / y;
    assert!(
        (1.7..=2.3).contains(&ratio),
        "{a}:{b} = {x}:{y} = {ratio:.2}, not 2:1 ± 15%\n{ours}"
    );
    assert_eq!(
        rows(&ours, a, b),
        rows(&report(perf(), data, children), a, b),
        "perf report's rows"
    );
    let script = stdout_of(&run_ok(sear().args(["script", "-i"]).arg(data)));
    assert!(
        script.contains(a) && script.contains(b),
        "script names both"
    );
    let folded = stdout_of(&run_ok(sear().args(["collapse", "-i"]).arg(data)));
    assert!(
        folded.contains(a) && folded.contains(b),
        "collapse names both"
    );
    let page = dir.join("jit.html");
    run_ok(sear().args(["html", "-i"]).arg(data).arg("-o").arg(&page));
    let strings = page_strings(&page);
    assert!(
        strings.iter().any(|s| s.contains(a)) && strings.iter().any(|s| s.contains(b)),
        "the page names both"
    );
}

/// The strings a `sear html` page embeds (its gzipped, base64'd data).
fn page_strings(page: &Path) -> Vec<String> {
    use std::io::Read;
    let html = std::fs::read_to_string(page).unwrap();
    let start = html.find("data-encoding=\"gzip-base64\">").unwrap();
    let rest = &html[start..];
    let text = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
    let gz = data_encoding::BASE64_NOPAD
        .decode(text.trim().as_bytes())
        .unwrap();
    let mut json = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut json)
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["strings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap_or("").to_owned())
        .collect()
}

fn home() -> std::path::PathBuf {
    std::env::var_os("HOME").map(Into::into).unwrap_or_default()
}

#[test]
fn python_perf_trampolines() {
    have_perf();
    let py = home().join(".pyenv/versions/3.12.1/bin/python3");
    assert!(py.exists(), "CPython 3.12 from pyenv at {}", py.display());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("w.py");
    std::fs::write(&script, PYTHON).unwrap();
    let data = dir.path().join("py.data");
    run_ok(
        sear()
            .args(["record", "-q", "--call-graph", "dwarf", "-F", "1000", "-o"])
            .arg(&data)
            .arg("--")
            .arg(&py)
            .args(["-X", "perf"])
            .arg(&script),
    );
    check(dir.path(), &data, "py::work_a:", "py::work_b:", true);
}

#[test]
fn node_perf_basic_prof() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("w.js");
    std::fs::write(&script, NODE).unwrap();
    let data = dir.path().join("js.data");
    run_ok(
        sear()
            .args(["record", "-q", "-g", "-F", "2000", "-o"])
            .arg(&data)
            .args([
                "--",
                "node",
                "--perf-basic-prof",
                "--interpreted-frames-native-stack",
            ])
            .arg(&script),
    );
    check(dir.path(), &data, "work_a ", "work_b ", true);
}

#[test]
fn java_dump_perf_map_at_exit() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("W.java"), JAVA).unwrap();
    run_ok(
        Command::new("javac")
            .arg("-d")
            .arg(dir.path())
            .arg(dir.path().join("W.java")),
    );
    let data = dir.path().join("java.data");
    run_ok(
        sear()
            .args(["record", "-q", "-g", "-F", "2000", "-o"])
            .arg(&data)
            .args([
                "--",
                "java",
                "-XX:+UnlockDiagnosticVMOptions",
                "-XX:+DumpPerfMapAtExit",
                "-XX:+PreserveFramePointer",
                "-cp",
            ])
            .arg(dir.path())
            .arg("W"),
    );
    // The JIT code does the work itself (no calls): self shares.
    check(dir.path(), &data, "W.workA", "W.workB", false);
}
