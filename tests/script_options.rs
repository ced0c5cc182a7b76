//! perf script's options, one per row of a table: perf 6.1 and sear read
//! the same recording with the same arguments and print the same text.
//! (sear with --raw-return-addresses: by default it looks a return address
//! up inside its call, so `_start` where perf names ld.so's
//! `_dl_start_user`, the label after the call.)

mod common;

use common::*;

#[test]
fn options_print_what_perf_prints() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = two_process_recording(dir.path());
    let time = middle_third(&data);
    let rows: Vec<Vec<&str>> = vec![
        vec!["-C", "0"],
        vec!["--cpu", "1", "-F", "comm,tid,cpu,ip,sym"],
        vec!["--dsos", "hot"],
        vec!["--dsos", "libc.so.6,hot", "-G"],
        vec!["-S", "work"],
        vec!["--symbols", "work,other", "--hide-call-graph"],
        vec!["-G"],
        vec!["--reltime"],
        vec!["--deltatime"],
        vec!["--reltime", "-C", "1"],
        vec!["--reltime", "--time", "0.01,0.05"],
        vec!["--time", &time],
        vec!["--header-only"],
        vec!["--header-only", "-I"],
        vec!["-c", "hot", "--tid", "1"],
    ];
    assert_rows_equal(
        &rows,
        |args| {
            stdout_of(&run_ok(
                perf().arg("script").arg("-i").arg(&data).args(args),
            ))
        },
        |args| {
            stdout_of(&run_ok(
                sear()
                    .args(["script", "--short-names", "--raw-return-addresses", "-i"])
                    .arg(&data)
                    .args(args),
            ))
        },
    );
}
