//! `sear report --stdio --sort KEYS --no-children -g none` against perf 6.1:
//! same header, columns, percentages and order. perf ends with a random tip,
//! which both sides drop before comparing.

mod common;
use common::*;

fn report(cmd: &mut std::process::Command, f: &std::path::Path, sort: &str) -> (String, bool) {
    report_with(
        cmd,
        f,
        &[
            "--no-children",
            "-g",
            "none",
            "--no-branch-stack",
            "--sort",
            sort,
        ],
    )
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

/// stdout of `report --stdio ARGS -i f`, perf's random tip left out, and
/// whether it succeeded.
fn report_with(
    cmd: &mut std::process::Command,
    f: &std::path::Path,
    args: &[&str],
) -> (String, bool) {
    let out = cmd
        .args(["report", "--stdio"])
        .args(args)
        .arg("-i")
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

/// perf's branch view: a recording with branch stacks reports each sampled
/// branch (pseudo period 1) by comm, source DSO, source and target symbol
/// and cycles unless told `--no-branch-stack`; the branch sort keys, -v's
/// columns, the filters and -U as perf applies them there. (perf 6.1
/// crashes when a `--sort` naming "symbol" meets branch-4.14's cycle
/// counts, so that form runs on the older file only; its `mispredict` and
/// `in_tx` keys compare unequal entries as greater both ways, so which of
/// them perf merges depends on its tree's shape: not compared.)
#[test]
fn branch_view_equals_perf_on_wild_files() {
    let cases: &[(&str, &[&str])] = &[
        ("branch-4.14", &[]),
        ("branch-4.14", &["-b", "-n", "--show-total-period"]),
        ("branch-4.14", &["-v"]),
        ("branch-4.14", &["-s", "addr_from,addr_to"]),
        ("branch-4.14", &["-s", "dso_to,dso_from,comm"]),
        ("branch-4.14", &["-s", "sym,dso_from"]),
        ("branch-4.14", &["-s", "abort,cycles", "-T"]),
        ("branch-4.14", &["--dsos", "[kernel.kallsyms]"]),
        ("branch-4.14", &["--comms", "echo", "-q"]),
        ("branch-4.14", &["-U"]),
        ("branch-4.14", &["--hierarchy"]),
        ("branch-4.14", &["-F", "overhead,cycles,dso_to"]),
        ("callgraph_and_branch-3.4", &[]),
        ("callgraph_and_branch-3.4", &["--children", "-g"]),
        ("callgraph_and_branch-3.4", &["-s", "symbol_to,symbol_from"]),
        (
            "callgraph_and_branch-3.4",
            &["-s", "dso_from,symbol_to,cycles"],
        ),
        ("callgraph_and_branch-3.4", &["-s", "addr_to", "-t", ","]),
        ("callgraph_and_branch-3.4", &["--percent-limit", "0.2"]),
        ("callgraph_and_branch-3.4", &["-U", "--dsos", "chrome"]),
    ];
    let mut failures = Vec::new();
    for (name, args) in cases {
        let f = wild_dir().join(format!("perf.data.{name}"));
        let (p, _) = report_with(&mut perf(), &f, args);
        let (s, ok) = report_with(&mut sear(), &f, args);
        if !ok || p != s || p.lines().count() < 2 {
            failures.push(format!("{name} {args:?}:\n--- perf\n{p}\n--- sear\n{s}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The branch keys are branch mode's only; a recording without branch
    // stacks gets perf's message with -b, and with -g perf's when it has
    // no call chains either.
    let plain = wild_dir().join("perf.data.hw_and_sw-3.4");
    let out = sear()
        .args(["report", "--stdio", "-s", "symbol_from", "-i"])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("branch key"));
    for flag in ["-b", "-g"] {
        let p = perf()
            .args(["report", "--stdio", flag, "-i"])
            .arg(&plain)
            .output()
            .unwrap();
        let s = sear()
            .args(["report", "--stdio", flag, "-i"])
            .arg(&plain)
            .output()
            .unwrap();
        assert_eq!(stdout_of(&p), stdout_of(&s), "{flag}");
        assert_eq!(p.status.code(), s.status.code(), "{flag}");
        let err = String::from_utf8_lossy(&s.stderr).into_owned();
        assert!(
            String::from_utf8_lossy(&p.stderr).contains(err.lines().nth(1).unwrap()),
            "{err}"
        );
    }
}

/// Unresolved addresses of a symbol column tie in perf's collapsed order
/// (by the sign of their difference, so kernel addresses first), and `-v`
/// shows each DSO's origin as perf: `!` for a kernel or perf map whose
/// symbols were not found. (Files whose perf output names perf's vdso copy
/// are left out of the -v part: perf names it at random, and its origin
/// depends on what the build-id cache holds.)
#[test]
fn symbol_columns_and_verbose_equal_perf_on_wild_files() {
    let mut failures = Vec::new();
    for f in wild_files() {
        if f.to_string_lossy().contains("corrupted") {
            continue;
        }
        let (vp, _) = report_with(
            &mut perf(),
            &f,
            &["-v", "--no-children", "-g", "none", "-s", "dso,sym"],
        );
        let vdso = vp.contains("perf-vdso.so-");
        for sort in ["sym", "pid,sym", "sym,dso"] {
            for verbose in [false, true] {
                if verbose && vdso {
                    continue;
                }
                let mut args = vec![
                    "--no-children",
                    "-g",
                    "none",
                    "--no-branch-stack",
                    "-s",
                    sort,
                ];
                if verbose {
                    args.push("-v");
                }
                let (p, _) = report_with(&mut perf(), &f, &args);
                let (s, ok) = report_with(&mut sear(), &f, &args);
                if !ok || p != s || !p.contains("Overhead") {
                    failures.push(format!(
                        "{} {args:?}:\n--- perf\n{p}\n--- sear\n{s}",
                        f.display()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// perf takes a word after the options as --symbol-filter, and filters its
/// first event's histogram only: multi-event files show every entry of the
/// later events.
#[test]
fn symbol_filter_word_equals_perf_on_wild_files() {
    let mut failures = Vec::new();
    let mut multi = 0;
    for f in wild_files() {
        if f.to_string_lossy().contains("corrupted") {
            continue;
        }
        for args in [
            &["--no-children", "-g", "none", "--no-branch-stack", "e"][..],
            &["-g", "none", "--no-branch-stack", "--symbol-filter=e"][..],
        ] {
            let (p, _) = report_with(&mut perf(), &f, args);
            let (s, ok) = report_with(&mut sear(), &f, args);
            if !ok || p != s || !p.contains("# Samples:") {
                failures.push(format!(
                    "{} {args:?}:\n--- perf\n{p}\n--- sear\n{s}",
                    f.display()
                ));
            }
            multi += usize::from(p.matches("# Samples:").count() > 1);
        }
    }
    assert!(multi > 0, "no multi-event file among the wild files");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// perf's weight, instruction-latency and transaction keys (and the
/// pipeline-stage keys it leaves out outside powerpc) on every wild file:
/// zeros where the samples carry none; in branch mode each branch weighs
/// its sample's first branch's cycles (branch-4.14 has them), entries of
/// one symbol split by weight, the larger first.
#[test]
fn weight_keys_equal_perf_on_wild_files() {
    let mut failures = Vec::new();
    let mut weighed = false;
    for f in wild_files() {
        if f.to_string_lossy().contains("corrupted") {
            continue;
        }
        for sort in [
            "weight",
            "local_weight",
            "sym,weight,transaction",
            "dso,local_p_stage_cyc,local_weight",
            "sym,dso,ins_lat,local_ins_lat",
            "p_stage_cyc",
        ] {
            for extra in [&["--no-children"][..], &["-n", "--no-branch-stack"][..]] {
                let mut args = vec!["-g", "none", "-s", sort];
                args.extend_from_slice(extra);
                let (p, _) = report_with(&mut perf(), &f, &args);
                let (s, ok) = report_with(&mut sear(), &f, &args);
                weighed |= sort == "weight" && p.contains("  6720 ");
                if !ok || p != s || !p.contains("# Samples:") {
                    failures.push(format!(
                        "{} {args:?}:\n--- perf\n{p}\n--- sear\n{s}",
                        f.display()
                    ));
                }
            }
        }
    }
    assert!(weighed, "no wild file has branch weights");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Rows whose children periods tie across threads: perf compares their
/// chain depths only within a thread, which is no order, so its rows come
/// as its output tree (filled in the order of its collapsed entries) puts
/// them. callgraph-3.4 has such ties in every sort below.
#[test]
fn children_ties_across_threads_come_in_perfs_order() {
    have_perf();
    let f = wild_dir().join("perf.data.callgraph-3.4");
    let sets: [&[&str]; 4] = [
        &[],
        &["-g", "caller"],
        &["-s", "pid,sym"],
        &["-s", "dso,sym"],
    ];
    for args in sets {
        let (p, s) = (perf_report(&f, args), sear_report(&f, args));
        assert!(p.lines().count() > 100, "{args:?}: perf printed\n{p}");
        let at = first_difference(&p, &s);
        assert!(
            p == s,
            "{args:?}: first difference at line {}:\n--- perf\n{}\n--- sear\n{}",
            at + 1,
            p.lines().nth(at).unwrap_or(""),
            s.lines().nth(at).unwrap_or("")
        );
    }
}
