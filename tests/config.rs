//! perf's configuration files: sear reads them as perf 6.1 does (the same
//! files, the same defaults changed) and `sear config` reads and writes
//! them as `perf config` does. Each case runs perf and sear with the same
//! `PERF_CONFIG` (or `HOME`) and compares.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/two-processes.data")
}

fn with_config(mut c: Command, file: &Path) -> Command {
    c.env("PERF_CONFIG", file);
    c
}

fn report(c: Command, file: &Path, args: &[&str]) -> String {
    let mut c = with_config(c, file);
    c.args(["report", "--stdio", "-i"]).arg(data()).args(args);
    without_tip(&stdout_of(&run_ok(&mut c)))
}

#[test]
fn report_defaults_change_as_perfs_do() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&[&str]])] = &[
        // The case: no children, dso,sym rows.
        (
            "[report]\n\tchildren = false\n\tsort_order = dso,sym\n[call-graph]\n\trecord-mode = dwarf\n",
            &[&[], &["--children"], &["-g", "caller"], &["-q"], &["-g"]],
        ),
        // Call-graph display defaults, then -g on top of them.
        (
            "[call-graph]\n\tprint-type = fractal\n\torder = caller\n\tthreshold = 5\n",
            &[&[], &["--no-children"], &["-g", "graph"], &["-g", "flat,callee"], &["-g"]],
        ),
        ("[report]\npercent-limit = 12\n", &[&[], &["--percent-limit", "1"]]),
        // A line that does not parse ends the file; what came before stays.
        ("[report]\n children = false\nnot a setting\n[report]\nsort_order = sym\n", &[&[]]),
    ];
    let mut compared = 0;
    for (i, (text, arg_sets)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("config{i}"));
        std::fs::write(&file, text).unwrap();
        for args in *arg_sets {
            let p = report(perf(), &file, args);
            let s = report(sear(), &file, args);
            assert_eq!(s, p, "config {text:?}, args {args:?}");
            compared += 1;
        }
    }
    // The config changed something: without it the first case's table has
    // a Children column.
    let plain = report(sear(), Path::new("/dev/null"), &[]);
    let configured = report(sear(), &dir.path().join("config0"), &[]);
    assert!(plain.contains("Children") && !configured.contains("Children"));
    assert_eq!(compared, 13);
}

/// diff.compute and diff.order change perf diff's defaults; sear's table
/// changes the same way (byte for byte), and a flag still wins.
#[test]
fn diff_defaults_change_as_perfs_do() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    // (A recording whose binary is there: its symbols resolve.)
    let data1 = two_process_recording(dir.path());
    let data2 = dir.path().join("two.data");
    std::fs::copy(&data1, &data2).unwrap();
    let diff = |c: Command, file: &Path, args: &[&str]| {
        let mut c = with_config(c, file);
        c.arg("diff").args(args).arg(&data1).arg(&data2);
        stdout_of(&run_ok(&mut c))
    };
    for (i, (text, args)) in [
        ("[diff]\n\tcompute = ratio\n", &[][..]),
        ("[diff]\n\tcompute = delta\n", &["-s", "dso"][..]),
        // (perf refuses weights in the file: the default stays.)
        ("[diff]\n\tcompute = wdiff:2,3\n", &["-s", "dso"][..]),
        ("[diff]\n\torder = 0\n", &[][..]),
        ("[diff]\n\tcompute = ratio\n", &["-c", "delta"][..]),
    ]
    .into_iter()
    .enumerate()
    {
        let file = dir.path().join(format!("diff{i}"));
        std::fs::write(&file, text).unwrap();
        let p = diff(perf(), &file, args);
        assert!(p.contains("Baseline"), "{p}");
        assert_eq!(
            diff(sear(), &file, args),
            p,
            "config {text:?}, args {args:?}"
        );
    }
    let ratio = diff(sear(), &dir.path().join("diff0"), &[]);
    assert!(ratio.contains("Ratio") && !ratio.contains("Delta Abs"));
}

/// annotate.show_nr_samples, show_total_period and disassembler_style are
/// what perf 6.1's stdio annotate honours: each does what its flag does.
#[test]
fn annotate_defaults_are_its_flags() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = two_process_recording(dir.path());
    let annotate = |file: &Path, args: &[&str]| {
        let mut c = with_config(sear(), file);
        c.args(["annotate", "--stdio", "-i"]).arg(&data).args(args);
        stdout_of(&run_ok(&mut c))
    };
    let plain = annotate(Path::new("/dev/null"), &[]);
    for (i, (text, flags)) in [
        ("[annotate]\n\tshow_nr_samples = true\n", &["-n"][..]),
        (
            "[annotate]\n\tshow_total_period = true\n",
            &["--show-total-period"][..],
        ),
        (
            "[annotate]\n\tdisassembler_style = intel\n",
            &["-M", "intel"][..],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let file = dir.path().join(format!("annotate{i}"));
        std::fs::write(&file, text).unwrap();
        let configured = annotate(&file, &[]);
        assert!(plain.contains("Percent"), "{plain}");
        assert_ne!(configured, plain, "{text:?} changed nothing");
        assert_eq!(
            configured,
            annotate(Path::new("/dev/null"), flags),
            "{text:?}"
        );
    }
}

#[test]
fn a_bad_line_is_reported_as_perf_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cfg");
    std::fs::write(&file, "[report]\n children = false\nbogus line\n").unwrap();
    let mut c = with_config(sear(), &file);
    let out = run_ok(c.args(["report", "--stdio", "-i"]).arg(data()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("bad config file line 3 in {}", file.display())),
        "{err}"
    );
}

/// `sear record -g` records in the configured call-graph mode, as perf.
#[test]
fn record_g_takes_the_configured_mode_and_dump_size() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cfg");
    std::fs::write(
        &file,
        "[call-graph]\n\trecord-mode = dwarf\n\tdump-size = 4096\n",
    )
    .unwrap();
    let attrs = |data: &Path| -> String {
        let out = run_ok(perf().args(["evlist", "-v", "-i"]).arg(data));
        stdout_of(&out)
    };
    let p_data = dir.path().join("perf.data");
    let s_data = dir.path().join("sear.data");
    run_ok(
        with_config(perf(), &file)
            .args(["record", "-q", "-g", "-o"])
            .arg(&p_data)
            .args(["--", "true"]),
    );
    run_ok(
        with_config(sear(), &file)
            .args(["record", "-q", "-g", "-o"])
            .arg(&s_data)
            .args(["--", "true"]),
    );
    for (who, a) in [("perf", attrs(&p_data)), ("sear", attrs(&s_data))] {
        assert!(a.contains("REGS_USER|STACK_USER"), "{who}: {a}");
        assert!(a.contains("sample_stack_user: 4096"), "{who}: {a}");
    }
    // Without the config, -g is frame pointers.
    run_ok(
        sear()
            .args(["record", "-q", "-g", "-o"])
            .arg(&s_data)
            .args(["--", "true"]),
    );
    assert!(!attrs(&s_data).contains("STACK_USER"));
}

/// `sear config` sets, gets and lists as `perf config` does, and writes
/// the same file.
#[test]
fn config_command_matches_perf_config() {
    have_perf();
    let homes = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let run = |who: &str, home: &Path, args: &[&str]| -> (String, i32) {
        let mut c = if who == "perf" { perf() } else { sear() };
        c.env_remove("PERF_CONFIG")
            .env("HOME", home)
            .env("PERF_CONFIG_NOSYSTEM", "1")
            .arg("config")
            .args(args);
        let out = c.output().unwrap();
        (stdout_of(&out), out.status.code().unwrap_or(-1))
    };
    let steps: &[&[&str]] = &[
        &["report.children=false"],
        &["call-graph.record-mode=dwarf", "report.sort_order=dso,sym"],
        &["report.children=true"],
        &["-l"],
        &["--user", "-l"],
        &["report.children", "no.such"],
        &["Report.Sort_Order"],
        &["nosection"],
    ];
    for args in steps {
        let p = run("perf", homes[0].path(), args);
        let s = run("sear", homes[1].path(), args);
        assert_eq!(s, p, "config {args:?}");
        let pf = std::fs::read_to_string(homes[0].path().join(".perfconfig")).unwrap();
        let sf = std::fs::read_to_string(homes[1].path().join(".perfconfig")).unwrap();
        assert_eq!(sf, pf, "~/.perfconfig after config {args:?}");
    }
    // And what it wrote is what sear reads.
    let (listed, _) = run("sear", homes[1].path(), &["-l"]);
    assert!(listed.contains("report.children=true\n"), "{listed}");
}
