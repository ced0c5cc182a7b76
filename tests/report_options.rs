//! perf report's options, one per row of a table: perf 6.1 and sear read
//! the same recording with the same arguments and print the same text.
//! (sear with --raw-return-addresses: by default it looks a return address
//! up inside its call, so `_start` where perf names ld.so's
//! `_dl_start_user`, the label after the call.)
//! (Rows avoid children-mode call graphs where entries of equal weight
//! make perf's order a coin toss.)

mod common;

use common::*;

#[test]
fn options_print_what_perf_prints() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = two_process_recording(dir.path());
    let time = middle_third(&data);
    let fifths = two_fifths(&data);
    // The CPU with the most samples: on a loaded machine both processes
    // may have run on one CPU only.
    let busiest = {
        let out = stdout_of(&run_ok(
            perf().args(["script", "-F", "cpu", "-i"]).arg(&data),
        ));
        let mut n = std::collections::BTreeMap::<String, usize>::new();
        for l in out.lines() {
            let c = l.trim().trim_start_matches('[').trim_end_matches(']');
            if let Ok(c) = c.parse::<u32>() {
                *n.entry(c.to_string()).or_default() += 1;
            }
        }
        n.into_iter().max_by_key(|e| e.1).map(|e| e.0).unwrap()
    };
    let rows: Vec<Vec<&str>> = vec![
        vec!["-G", "--no-children"],
        vec!["--inverted", "--no-children", "-g", "callee"],
        vec!["-U", "--no-children"],
        vec!["--hide-unresolved", "-g", "none"],
        vec!["-C", &busiest, "--no-children"],
        vec!["--cpu", "0-1", "-g", "none", "-n"],
        vec!["--symbol-filter", "work", "--no-children"],
        vec!["--symbol-filter=o", "-g", "none"],
        // (A word after the options is perf's symbol filter; it wins over
        // --symbol-filter.)
        vec!["--no-children", "work"],
        vec!["-g", "none", "--symbol-filter", "zzz", "o"],
        vec!["--time", &time, "--no-children"],
        vec!["--time", &time, "-g", "none", "-s", "dso,sym"],
        vec!["--time", &fifths, "--no-children", "-n"],
        vec!["--time", "10%/2", "--no-children"],
        vec!["--time", "25%", "-g", "none", "-n"],
        // (Self only: a slice's few samples leave children-only entries of one
        // sample each, whose order perf leaves to chance.)
        vec![
            "--time",
            "10%/1,10%/3,10%/10",
            "--no-children",
            "-g",
            "none",
            "-s",
            "pid,sym",
        ],
        vec!["--time", "0%-20%,50%-70%", "--no-children", "-n"],
        vec!["--time", "90%-100%", "-g", "none", "-n", "-s", "sym"],
        vec!["-g", "--no-children"],
        vec!["-g", "caller,0.5,callee", "--no-children"],
        vec!["--percent-limit", "5", "--no-children"],
        vec!["--samples", "5", "--no-children"],
        vec![
            "-M",
            "intel",
            "--objdump",
            "/usr/bin/objdump",
            "--no-children",
        ],
        vec!["--demangle", "--demangle-kernel", "-g", "none"],
        vec!["--percent-type", "global-hits", "--no-children"],
        vec!["--percent-type=local-period", "-g", "none"],
        vec!["-q", "--no-children"],
        vec!["--header", "--no-children"],
        vec!["--header", "-I", "-g", "none"],
        vec!["--header", "-q", "-g", "none"],
        vec!["-t", ";", "--no-children", "-g", "none"],
        vec!["-t", ",", "-n", "--no-children", "-g", "folded"],
        vec!["--field-separator", "::", "--no-children"],
        vec!["-t", "|", "-w", "3,20,4", "--no-children", "-s", "dso,sym"],
        vec!["-w", "5,3,4,6,8", "-n", "--no-children", "-g", "none"],
        vec!["--column-widths", ",,30", "--no-children", "-g", "none"],
        vec!["-w", "12,x,3", "-g", "none"],
        vec!["-w", "0,0,3,3,12", "-g", "none"],
        vec!["-g", "address", "--no-children"],
        vec!["-g", "caller,0.5,address", "--no-children", "-s", "dso,sym"],
        vec!["-g", "srcline", "--no-children"],
        vec!["-g", "caller,0.5,srcline", "--no-children", "-s", "dso,sym"],
        vec!["--full-source-path", "-s", "srcline", "--no-children"],
        vec!["--full-source-path", "-g", "srcline", "--no-children"],
        vec![
            "--source",
            "--asm-raw",
            "--prefix",
            "/x",
            "--prefix-strip",
            "2",
            "--no-children",
        ],
        vec!["--stdio-color=always", "--no-children"],
        vec!["--stdio-color", "-g", "folded", "--no-children"],
        vec!["--stdio-color=always", "-n", "--hierarchy"],
        vec!["--stdio-color=never", "-g", "none"],
        vec!["--stitch-lbr", "--no-children"],
        vec![
            "--skip-empty",
            "--disable-order",
            "--show-ref-call-graph",
            "--ignore-vmlinux",
            "-m",
            "--no-children",
        ],
        vec![
            "--itrace=i",
            "--raw-trace",
            "--total-cycles",
            "--pretty=raw",
            "-g",
            "none",
        ],
        vec!["--hierarchy"],
        vec!["--hierarchy", "-s", "dso,sym", "-n", "-g", "caller"],
        vec!["--hierarchy", "--percent-limit", "40", "-g", "none"],
        vec!["--hierarchy", "-q", "-s", "pid,sym", "--no-children"],
        // perf's verbose columns: DSOs by path, each symbol after its
        // entry's first address and where its DSO's symbols came from.
        vec!["-v", "--no-children"],
        vec!["--verbose", "--no-children", "-s", "dso,sym", "-g", "none"],
        vec!["-v", "--hierarchy", "--no-children", "-g", "none"],
        // An option given twice: the last one wins, as perf.
        vec!["-g", "none", "--call-graph=none", "--no-children"],
        vec![
            "--percent-limit",
            "5",
            "--percent-limit",
            "1",
            "--no-children",
        ],
        vec!["--tasks"],
        vec!["--mmaps"],
        vec!["--max-stack", "2", "-g", "none"],
        vec!["--max-stack", "1", "-G", "--no-children"],
        vec!["--ignore-callees", "^main$", "--no-children"],
        vec![
            "--ignore-callees",
            "getppid",
            "--no-children",
            "-s",
            "dso,sym",
        ],
        vec![
            "--ignore-callees",
            "^(work|other)$",
            "--no-children",
            "-n",
            "-g",
            "flat",
        ],
    ];
    assert_rows_equal_up_to_ties(
        &rows,
        |args| {
            let p = perf_report(&data, args);
            assert!(
                p.lines().count() > 3,
                "perf printed too little for {args:?}:\n{p}"
            );
            p
        },
        |args| {
            let mut c = sear();
            // (perf's are in UTC: the header's times.)
            c.env("TZ", "UTC")
                .args([
                    "report",
                    "--stdio",
                    "--short-names",
                    "--raw-return-addresses",
                    "-i",
                ])
                .arg(&data)
                .args(args);
            without_tip(&stdout_of(&run_ok(&mut c)))
        },
    );
    // -v's rows name the DSO by path and put the entry's address and the
    // symbols' origin before the symbol (`0x1139   d [.] work`).
    let verbose = perf_report(&data, &["-v", "--no-children", "-g", "none"]);
    assert!(
        verbose.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() >= 6
                && f[2].starts_with('/')
                && f[3].starts_with("0x")
                && f[4].len() == 1
                && f[5] == "[.]"
        }),
        "{verbose}"
    );
    // The filters filtered: the middle third of the time has less than the
    // whole, and the CPUs' parts add up to it (whichever CPUs the
    // scheduler used).
    let count = |args: &[&str]| -> u64 {
        let p = perf_report(&data, args);
        p.lines()
            .find_map(|l| l.strip_prefix("# Event count (approx.): "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    };
    let all = count(&["--no-children"]);
    assert!(all > 0);
    assert!(count(&["--time", &time, "--no-children"]) < all);
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n > 1 {
        let rest = format!("1-{}", n - 1);
        let cpus = count(&["-C", "0", "--no-children"]) + count(&["-C", &rest, "--no-children"]);
        assert_eq!(cpus, all);
    }
}

/// Modes the recording has no data for (branch stacks, memory accesses):
/// perf's error on stderr and an empty report, exit 0.
#[test]
fn modes_without_their_data_say_so_as_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = two_process_recording(dir.path());
    // (--branch-history is -b and more; perf 6.1 crashes on it here.)
    let s = sear()
        .args(["report", "--stdio", "--branch-history", "-i"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(s.status.success());
    assert!(String::from_utf8_lossy(&s.stderr).contains("Selected -b but no branch data"));
    for opt in ["-b", "--branch-stack", "--mem-mode"] {
        let p = perf()
            .args(["report", "--stdio", opt, "-i"])
            .arg(&data)
            .output()
            .unwrap();
        let s = sear()
            .args(["report", "--stdio", opt, "-i"])
            .arg(&data)
            .output()
            .unwrap();
        assert!(s.status.success(), "{opt}");
        assert_eq!(stdout_of(&s), stdout_of(&p), "{opt}");
        let err = String::from_utf8_lossy(&s.stderr);
        assert!(
            err.contains(String::from_utf8_lossy(&p.stderr).trim()),
            "{opt}: {err}"
        );
    }
}

/// A long inlined function's entry (`--children`): perf appends
/// " (inlined)" after the name at the symbol column's width and cuts the
/// row only where its line buffer ends, which a field separator moves.
#[test]
fn inlined_entries_and_separators_print_what_perf_prints() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_c(
        dir.path(),
        "inl",
        r#"
#include <stdio.h>
static inline __attribute__((always_inline)) unsigned long
a_long_inlined_helper_function_name_for_the_column_test(unsigned long x) {
  for (int i = 0; i < 1000; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
  return x;
}
__attribute__((noinline)) unsigned long outer_caller(unsigned long s) {
  for (int j = 0; j < 60000; j++)
    s ^= a_long_inlined_helper_function_name_for_the_column_test(s + j);
  return s;
}
int main(void) {
  unsigned long s = 1;
  for (int k = 0; k < 4; k++) s = outer_caller(s);
  printf("%lu\n", s);
  return 0;
}
"#,
        &["-O2", "-g"],
    );
    let data = perf_record(
        dir.path(),
        "inl.data",
        &["-e", "cpu-clock", "--call-graph", "dwarf"],
        &[exe.to_string_lossy().into_owned()],
    );
    // (Entries over 1% only: kernel and loader entries of a sample or two
    // each come and go between runs.)
    let base = ["--children", "-g", "none", "--percent-limit", "1"];
    let extras: [&[&str]; 5] = [
        &[],
        &["-t", ";"],
        &["-t", "::::"],
        &["-w", "0,0,0,0,20"],
        &["-t", ",", "--comms", "inl"],
    ];
    let mut rows: Vec<Vec<&str>> = extras.iter().map(|e| [&base[..], e].concat()).collect();
    // -g ...,address: each inline frame with its own source position.
    rows.push(vec![
        "--no-children",
        "-g",
        "caller,0.5,address",
        "--percent-limit",
        "1",
    ]);
    // -g ...,srcline: frames merged by source line, inline ones by their
    // own.
    rows.push(vec![
        "--no-children",
        "-g",
        "caller,0.5,srcline",
        "--percent-limit",
        "1",
    ]);
    assert_rows_equal(
        &rows,
        |args| {
            let p = perf_report(&data, args);
            assert!(
                p.contains("a_long_inlined_h"),
                "perf shows no inlined entry for {args:?}:\n{p}"
            );
            p
        },
        |args| sear_report(&data, args),
    );
}

/// `--tasks` and `--mmaps` on a shell that forks: the same tree (each
/// process under its parent, in perf's order) and the same maps as perf's.
#[test]
fn tasks_and_mmaps_print_what_perf_prints() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let w = busy_workload(100);
    let data = perf_record(dir.path(), "forks.data", &["-e", "cpu-clock", "-g"], &w);
    for mode in ["--tasks", "--mmaps"] {
        let p = stdout_of(&run_ok(perf().arg("report").arg("-i").arg(&data).arg(mode)));
        let s = stdout_of(&run_ok(sear().arg("report").arg("-i").arg(&data).arg(mode)));
        // The shell, its forks (one level deeper each) and the date
        // commands they ran.
        assert!(
            p.lines().filter(|l| l.ends_with("| date")).count() >= 2,
            "{p}"
        );
        assert_eq!(s, p, "{mode}");
    }
}

/// `-T`: each thread's counter values from the READ records `record -s`
/// leaves (two events, two processes), after the report, as perf prints
/// them; a recording without them gives the bare header.
#[test]
fn thread_counters_print_what_perf_prints() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let with = perf_record(
        dir.path(),
        "s.data",
        &["-s", "-e", "cpu-clock,page-faults"],
        &two_process_workload(dir.path()),
    );
    let without = two_process_recording(dir.path());
    let rows: Vec<Vec<&str>> = vec![
        vec!["-T", "--no-children"],
        vec!["--threads", "-q", "-g", "none"],
    ];
    for data in [&with, &without] {
        assert_rows_equal(
            &rows,
            |args| perf_report(data, args),
            |args| sear_report(data, args),
        );
    }
    // Threads that exited while counted left their counts (two here).
    let p = perf_report(&with, &["-T", "-q"]);
    let table: Vec<&str> = p
        .lines()
        .skip_while(|l| !(l.contains("PID") && l.ends_with("page-faults")))
        .collect();
    assert!(table.len() >= 3, "no per-thread table:\n{p}");
}

/// `--symfs DIR`: binaries are read under DIR by their recorded paths (the
/// program moved there after recording, no build-id cache to fall back
/// on), for symbols (as perf) and for DWARF unwinding; the kernel is
/// looked for under DIR too, unless `--kallsyms FILE` names its symbols.
#[test]
fn symfs_and_kallsyms_read_symbols_elsewhere() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("empty-cache");
    std::fs::create_dir(&cache).unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let exe = build_c(
        &bin,
        "hot",
        TWO_PROCESS_PROGRAM,
        &["-O1", "-g", "-fno-omit-frame-pointer"],
    );
    let record = |name: &str, cg: &[&str]| {
        let out = dir.path().join(name);
        run_ok(
            perf()
                .env("PERF_BUILDID_DIR", &cache)
                .args(["record", "-q", "-N", "-F", "2000", "-o"])
                .arg(&out)
                .args(cg)
                .arg("--")
                .arg(&exe),
        );
        out
    };
    let fp = record("fp.data", &["-g"]);
    let dwarf = record("dwarf.data", &["--call-graph", "dwarf"]);
    let root = dir.path().join("root");
    let moved = root.join(exe.strip_prefix("/").unwrap());
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::rename(&exe, &moved).unwrap();
    let root = root.display().to_string();
    let rows: Vec<Vec<&str>> = vec![
        vec!["--symfs", &root, "--no-children"],
        vec!["--symfs", &root, "-g", "none", "-s", "dso,sym"],
        vec![
            "--symfs",
            &root,
            "--kallsyms",
            "/proc/kallsyms",
            "--no-children",
        ],
    ];
    assert_rows_equal(
        &rows,
        |args| {
            without_tip(&stdout_of(&run_ok(
                perf()
                    .env("PERF_BUILDID_DIR", &cache)
                    .args(["report", "--stdio", "-i"])
                    .arg(&fp)
                    .args(args),
            )))
        },
        |args| {
            without_tip(&stdout_of(&run_ok(
                sear()
                    .env("PERF_BUILDID_DIR", &cache)
                    .args([
                        "report",
                        "--stdio",
                        "--short-names",
                        "--raw-return-addresses",
                        "-i",
                    ])
                    .arg(&fp)
                    .args(args),
            )))
        },
    );
    let report = |data: &std::path::Path, extra: &[&str]| {
        stdout_of(&run_ok(
            sear()
                .env("PERF_BUILDID_DIR", &cache)
                .args(["report", "--stdio", "--children", "-g", "none", "-i"])
                .arg(data)
                .args(extra),
        ))
    };
    // Without --symfs the moved program has no names.
    assert!(!report(&fp, &[]).contains("[.] work"));
    assert!(report(&fp, &["--symfs", &root]).contains("[.] work"));
    // DWARF stacks unwind through the program read under --symfs: main
    // is under nearly every sample (it is under none without the file).
    let main_children = |text: &str| -> f64 {
        text.lines()
            .find(|l| l.ends_with("[.] main"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|p| p.trim_end_matches('%').parse().ok())
            .unwrap_or(0.0)
    };
    let with = report(&dwarf, &["--symfs", &root]);
    assert!(main_children(&with) > 90.0, "{with}");
    assert!(main_children(&report(&dwarf, &[])) < 50.0);
}

/// `--switch-on`/`--switch-off`/`--show-on-off-events` on a recording of
/// two events (cpu-clock and page-faults of a program run three times):
/// report and script keep the same samples as perf's; an unknown event
/// is an error naming it.
#[test]
fn event_switches_keep_what_perf_keeps() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let w = two_process_workload(dir.path());
    let data = perf_record(
        dir.path(),
        "sw.data",
        &["-e", "cpu-clock,page-faults", "-g"],
        &[
            "sh".into(),
            "-c".into(),
            format!("for i in 1 2 3; do {}; done", w[2]),
        ],
    );
    let sets: Vec<Vec<&str>> = vec![
        vec!["--switch-on", "page-faults"],
        vec!["--switch-off", "page-faults"],
        vec!["--switch-on", "page-faults", "--show-on-off-events"],
        vec!["--switch-on", "cpu-clock", "--switch-off", "page-faults"],
        vec![
            "--switch-on",
            "page-faults",
            "--switch-off",
            "cpu-clock",
            "--show-on-off-events",
        ],
    ];
    let mut report_rows = Vec::new();
    for s in &sets {
        let mut r = s.clone();
        r.extend(["--no-children", "-g", "none"]);
        report_rows.push(r);
    }
    assert_rows_equal(
        &report_rows,
        |args| perf_report(&data, args),
        |args| sear_report(&data, args),
    );
    assert_rows_equal(
        &sets,
        |args| {
            stdout_of(&run_ok(
                perf().arg("script").arg("-i").arg(&data).args(args),
            ))
        },
        |args| {
            stdout_of(&run_ok(
                sear()
                    .args(["script", "--raw-return-addresses", "-i"])
                    .arg(&data)
                    .args(args),
            ))
        },
    );
    // Something was switched: fewer samples than without.
    let lines = |args: &[&str]| {
        stdout_of(&run_ok(
            sear()
                .args(["script", "-F", "event", "-i"])
                .arg(&data)
                .args(args),
        ))
        .lines()
        .count()
    };
    assert!(lines(&["--switch-on", "page-faults"]) < lines(&[]));
    let o = sear()
        .args(["report", "--stdio", "--switch-on", "nope", "-i"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("switch-on event not found (nope)"));
}

/// `--max-stack` on DWARF stacks counts the recorded (kernel) chain and
/// the unwound user stack each on its own, as perf (its
/// `thread__resolve_callchain` gives each part the whole budget): a
/// system call made three functions deep keeps two kernel frames and two
/// user frames under `--max-stack 2`.
#[test]
fn max_stack_counts_the_kernel_chain_and_the_unwound_stack_apart() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let src = r#"
#include <unistd.h>
volatile long sink;
__attribute__((noinline)) void leaf(void) { for (int i = 0; i < 200; i++) sink += getppid(); }
__attribute__((noinline)) void mid(void) { leaf(); sink++; }
__attribute__((noinline)) void top(void) { mid(); sink++; }
int main(void) { for (int k = 0; k < 3000; k++) top(); return 0; }
"#;
    let exe = build_c(dir.path(), "deep", src, &["-O1", "-g"]);
    let data = perf_record(
        dir.path(),
        "deep.data",
        &["-e", "cpu-clock", "-F", "2000", "--call-graph", "dwarf"],
        &[exe.display().to_string()],
    );
    let frames = |text: &str| -> Vec<(usize, usize)> {
        // Per sample: its kernel and user frames (kernel addresses are the
        // upper half).
        text.split("\n\n")
            .filter(|b| !b.trim().is_empty())
            .map(|b| {
                let ips: Vec<&str> = b
                    .lines()
                    .filter(|l| l.starts_with('\t'))
                    .filter_map(|l| l.split_whitespace().next())
                    .collect();
                let kernel = ips.iter().filter(|ip| ip.starts_with("ffff")).count();
                (kernel, ips.len() - kernel)
            })
            .collect()
    };
    let args = ["-F", "ip", "--no-inline", "--max-stack", "2"];
    let theirs = frames(&stdout_of(&run_ok(
        perf().arg("script").args(args).arg("-i").arg(&data),
    )));
    let ours = frames(&stdout_of(&run_ok(
        sear()
            .args(["script", "--raw-return-addresses"])
            .args(args)
            .arg("-i")
            .arg(&data),
    )));
    assert_eq!(theirs.len(), ours.len());
    assert!(ours.iter().all(|&(k, u)| k <= 2 && u <= 2), "{ours:?}");
    // Samples in the system call have both parts, two frames each.
    let both = ours.iter().filter(|&&(k, u)| k == 2 && u == 2).count();
    assert!(both * 10 >= ours.len(), "{both} of {}", ours.len());
    let same = theirs.iter().zip(&ours).filter(|(a, b)| a == b).count();
    assert!(
        same * 100 >= ours.len() * 99,
        "{same} of {} samples with perf's frame counts",
        ours.len()
    );
}
