//! `report --branch-history` against perf 6.1 on the recordings with
//! branch stacks: each sample's branches (loops cut out) ahead of its
//! callers in the call graph, frames by address, and each frame's branch
//! counts — how often predicted, cycles, loop iterations, `(calltrace)`
//! for the recorded callers — in both graph orders, with and without
//! children, in every print type.

mod common;
use common::*;

/// perf 6.1 report on a wild file. perf's addr2line helper cannot read
/// these recordings' binaries and perf writes to its dead pipe: run with
/// SIGPIPE ignored, as a shell user would see it finish.
fn perf_report_nopipe(f: &std::path::Path, args: &[&str]) -> String {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg("trap '' PIPE; exec \"$0\" report --stdio \"$@\"")
        .arg(PERF)
        .args(args)
        .arg("-i")
        .arg(f)
        .env("PERF_CONFIG", "/dev/null")
        .env("TZ", "UTC")
        .env_remove("DEBUGINFOD_URLS");
    without_tip(&stdout_of(&run_ok(&mut cmd)))
}

fn sear_history(f: &std::path::Path, args: &[&str]) -> String {
    let out = run_ok(
        sear()
            .args(["report", "--stdio"])
            .args(args)
            .arg("-i")
            .arg(f),
    );
    without_tip(&stdout_of(&out))
}

#[test]
fn branch_history_equals_perf_on_wild_files() {
    have_perf();
    // Byte for byte, with and without children (perf's rows of equal
    // weight from different threads in its output tree's order), in both
    // orders and every print type.
    let cases: &[(&str, &[&str])] = &[
        ("branch-4.14", &[]),
        ("branch-4.14", &["-g", "callee"]),
        ("branch-4.14", &["-G"]),
        ("branch-4.14", &["--no-children", "-g", "fractal"]),
        ("branch-4.14", &["--no-children", "-g", "folded"]),
        ("branch-4.14", &["--no-children", "-g", "flat"]),
        ("branch-4.14", &["--max-stack", "5"]),
        ("branch-4.14", &["-g", "graph,1"]),
        ("callgraph_and_branch-3.4", &[]),
        ("callgraph_and_branch-3.4", &["-g", "callee"]),
        ("callgraph_and_branch-3.4", &["-G"]),
        ("callgraph_and_branch-3.4", &["-g", "graph,1"]),
        ("callgraph_and_branch-3.4", &["--no-children"]),
        (
            "callgraph_and_branch-3.4",
            &["--no-children", "-g", "caller"],
        ),
        (
            "callgraph_and_branch-3.4",
            &["--no-children", "-g", "fractal"],
        ),
        (
            "callgraph_and_branch-3.4",
            &["--no-children", "-g", "folded"],
        ),
        ("callgraph_and_branch-3.4", &["--no-children", "-g", "flat"]),
        (
            "callgraph_and_branch-3.4",
            &["--no-children", "--max-stack", "5"],
        ),
    ];
    let mut failures = Vec::new();
    for (name, args) in cases {
        let f = wild_dir().join(format!("perf.data.{name}"));
        let mut all = vec!["--branch-history"];
        all.extend_from_slice(args);
        let p = perf_report_nopipe(&f, &all);
        let s = sear_history(&f, &all);
        // (perf's header and at least one entry with its graph.)
        assert!(p.lines().count() > 20, "{name} {args:?}: perf printed\n{p}");
        if p != s {
            let at = first_difference(&p, &s);
            let around = |t: &str| {
                t.lines()
                    .skip(at.saturating_sub(3))
                    .take(8)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            failures.push(format!(
                "{name} {args:?}: first difference at line {}\n--- perf\n{}\n--- sear\n{}",
                at + 1,
                around(&p),
                around(&s),
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// What the counts say, checked on the file rather than against perf: the
/// first entry of branch-4.14 (caller order, no callers recorded) starts
/// at its oldest branch's target, and its sources carry their cycles.
#[test]
fn branch_history_counts_show_cycles_and_predictions() {
    let f = wild_dir().join("perf.data.branch-4.14");
    let s = sear_history(&f, &["--branch-history"]);
    assert!(s.contains("# Overhead  Source:Line"), "{s}");
    let graph: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.contains("ld-2.23.so[c11b]"))
        .take(8)
        .collect();
    assert!(graph[2].ends_with("---0x78e429407d96"), "{graph:?}");
    assert!(graph[3].ends_with("0x78e42941299e (cycles:4)"), "{graph:?}");
    assert!(s.contains("(predicted:0.0%)"), "{s}");
    // Without branch stacks perf's message, as for -b.
    let plain = wild_dir().join("perf.data.callgraph-3.4");
    let out = sear()
        .args(["report", "--stdio", "--branch-history", "-i"])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no branch data"));
}
