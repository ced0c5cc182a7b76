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
    let rows: Vec<Vec<&str>> = vec![
        vec!["-G", "--no-children"],
        vec!["--inverted", "--no-children", "-g", "callee"],
        vec!["-U", "--no-children"],
        vec!["--hide-unresolved", "-g", "none"],
        vec!["-C", "0", "--no-children"],
        vec!["--cpu", "0-1", "-g", "none", "-n"],
        vec!["--symbol-filter", "work", "--no-children"],
        vec!["--symbol-filter=o", "-g", "none"],
        vec!["--time", &time, "--no-children"],
        vec!["--time", &time, "-g", "none", "-s", "dso,sym"],
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
    ];
    assert_rows_equal(
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
    // The filters filtered: fewer samples than without them.
    let samples = |args: &[&str]| -> String {
        let p = perf_report(&data, args);
        p.lines()
            .find(|l| l.starts_with("# Samples"))
            .unwrap_or_default()
            .to_string()
    };
    let all = samples(&["--no-children"]);
    assert_ne!(samples(&["--time", &time, "--no-children"]), all);
    assert_ne!(samples(&["-C", "0", "--no-children"]), all);
}
