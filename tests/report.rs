//! `sear report --stdio --sort KEYS --no-children -g none` against perf 6.1:
//! same header, columns, percentages and order. perf ends with a random tip,
//! which both sides drop before comparing.

mod common;
use common::*;

fn report(cmd: &mut std::process::Command, f: &std::path::Path, sort: &str) -> (String, bool) {
    let out = cmd
        .args([
            "report",
            "--stdio",
            "--no-children",
            "-g",
            "none",
            "--no-branch-stack",
            "--sort",
            sort,
            "-i",
        ])
        .arg(f)
        .output()
        .unwrap();
    let text = stdout_of(&out)
        .lines()
        .filter(|l| !l.starts_with("# (Tip:"))
        .map(|l| format!("{l}\n"))
        .collect();
    (text, out.status.success())
}

fn compare(files: &[std::path::PathBuf]) -> Vec<String> {
    let mut failures = Vec::new();
    for f in files {
        for sort in ["comm,dso", "dso", "pid", "dso,comm", "pid,dso"] {
            let (p, _) = report(&mut perf(), f, sort);
            let (s, ok) = report(&mut sear(), f, sort);
            if !ok || p != s || !p.contains("Overhead") {
                failures.push(format!(
                    "{} --sort {sort}:\n--- perf\n{p}\n--- sear\n{s}",
                    f.display()
                ));
            }
        }
    }
    failures
}

#[test]
fn hotspot_table_equals_perf_on_wild_files() {
    let files: Vec<_> = wild_files()
        .into_iter()
        .filter(|f| {
            let n = f.file_name().unwrap().to_string_lossy().into_owned();
            // Not the corrupted stream (perf refuses it; sear reports what
            // came first).
            !n.contains("corrupted")
        })
        .collect();
    assert_eq!(files.len(), 17, "conformance files missing");
    let failures = compare(&files);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn hotspot_table_equals_perf_on_fresh_recordings() {
    let dir = tempfile::tempdir().unwrap();
    let w = busy_workload(150);
    let sleep: Vec<String> = vec!["sleep".into(), "0.1".into()];
    let files = vec![
        perf_record(
            dir.path(),
            "plain.data",
            &["-e", "cpu-clock", "-F", "2000"],
            &w,
        ),
        perf_record(
            dir.path(),
            "fp.data",
            &["-e", "cpu-clock", "-F", "2000", "-g"],
            &w,
        ),
        perf_record(
            dir.path(),
            "pipe.data",
            &["-e", "cpu-clock", "-F", "2000", "-o-"],
            &w,
        ),
        perf_record(
            dir.path(),
            "z.data",
            &["-e", "cpu-clock", "-F", "2000", "-z"],
            &w,
        ),
        perf_record(
            dir.path(),
            "multi.data",
            &["-e", "cpu-clock,page-faults", "-F", "1000"],
            &w,
        ),
        perf_record(
            dir.path(),
            "a.data",
            &["-e", "cpu-clock", "-F", "500", "-a"],
            &sleep,
        ),
    ];
    let failures = compare(&files);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unknown_sort_keys_say_what_works() {
    let f = wild_dir().join("perf.data.callgraph-3.4");
    let out = sear()
        .args(["report", "--stdio", "--sort", "nosuchkey", "-i"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nosuchkey")
            && err.contains("comm, pid (alias tid), dso")
            && err.contains("srcline"),
        "{err}"
    );
}

/// Memory without a file behind it (anonymous memory, JIT code perf looks
/// up in /tmp/perf-PID.map, heap, stack) translates addresses as they are,
/// as perf's `identity__map_ip`: an unresolved address there is the
/// process's, not an offset into the map. The forkexit file has samples
/// in Chrome's JIT code (anonymous executable maps, no perf map here).
#[test]
fn unresolved_addresses_in_anonymous_memory_are_the_processs() {
    let f = wild_dir().join("perf.data.forkexit-3.4");
    let (p, _) = report(&mut perf(), &f, "comm,dso,sym");
    let (s, ok) = report(&mut sear(), &f, "comm,dso,sym");
    assert!(ok);
    let jit: Vec<&str> = s.lines().filter(|l| l.contains("[JIT] tid ")).collect();
    assert!(!jit.is_empty(), "{s}");
    for l in &jit {
        let addr = l.rsplit(' ').next().unwrap();
        let addr = u64::from_str_radix(addr.trim_start_matches("0x"), 16).unwrap();
        assert!(addr > 0x1000_0000_0000, "a map offset, not an address: {l}");
    }
    assert_eq!(p, s);
}

/// A kernel module's map gives offsets (perf's `map__map_ip`): an address
/// kallsyms does not name prints as its offset into the module, as perf
/// prints it (the raw-3.4 file has one in mac80211), while `script` prints
/// the address (its callchain frames are the kernel's addresses).
#[test]
fn unresolved_addresses_in_kernel_modules_are_offsets() {
    let f = wild_dir().join("perf.data.raw-3.4");
    for sort in ["comm,dso,sym", "dso,sym"] {
        let (p, _) = report(&mut perf(), &f, sort);
        let (s, ok) = report(&mut sear(), &f, sort);
        assert!(ok);
        assert!(
            s.contains("[mac80211]") && s.contains("] 0x000000000000d0af"),
            "{s}"
        );
        assert_eq!(p, s);
    }
    let f = wild_dir().join("perf.data.callgraph-3.4");
    let p = stdout_of(&perf().args(["script", "-i"]).arg(&f).output().unwrap());
    let s = stdout_of(&sear().args(["script", "-i"]).arg(&f).output().unwrap());
    assert!(s.contains("ffffffffa01215ed [unknown] ([ath9k_hw])"));
    assert_eq!(p, s);
}
