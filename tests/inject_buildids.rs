//! `sear inject -b` and `--buildid-all` against perf 6.1's on the same
//! recording: the same records in the same order (perf's `-b` delivers the
//! kernel's records in time order, each binary's build-id record before
//! its first sample; `--buildid-all` before its first mapping), the same
//! header but for the command line, and the same build-id table.

mod common;

use std::path::Path;

use common::*;

/// `perf report -D` without the file name it puts in each record's line.
fn dump(f: &Path) -> String {
    let name = format!("@{}", f.display());
    stdout_of(&run_ok(perf().args(["report", "-D", "-i"]).arg(f))).replace(&name, "@")
}

fn header(f: &Path) -> String {
    stdout_of(&run_ok(
        perf().args(["report", "--header-only", "-i"]).arg(f),
    ))
    .lines()
    // (`captured on` is the file's time: the two are written moments
    // apart, sometimes in different seconds.)
    .filter(|l| !l.starts_with("# cmdline :") && !l.starts_with("# captured on"))
    .collect::<Vec<_>>()
    .join("\n")
}

#[test]
fn build_id_records_as_perf_injects_them() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = two_process_recording(dir.path());
    for opts in [&["-b"][..], &["--buildid-all"][..], &["--build-ids"][..]] {
        let p = dir.path().join("p.data");
        let s = dir.path().join("s.data");
        run_ok(
            perf()
                .arg("inject")
                .args(opts)
                .arg("-i")
                .arg(&data)
                .arg("-o")
                .arg(&p),
        );
        run_ok(
            sear()
                .arg("inject")
                .args(opts)
                .arg("-i")
                .arg(&data)
                .arg("-o")
                .arg(&s),
        );
        let d = dump(&s);
        assert!(
            d.contains("PERF_RECORD_BUILD_ID"),
            "{opts:?}: no build-id record"
        );
        let pd = dump(&p);
        if pd != d {
            let at = first_difference(&pd, &d);
            panic!(
                "{opts:?}: perf report -D differs at line {at}:\n{:?}\n{:?}",
                pd.lines().nth(at),
                d.lines().nth(at)
            );
        }
        assert_eq!(header(&p), header(&s), "{opts:?}");
        let ids = |f: &Path| stdout_of(&run_ok(perf().args(["buildid-list", "-i"]).arg(f)));
        assert_eq!(ids(&p), ids(&s), "{opts:?}");
        // The command line says what made the file.
        let h = stdout_of(&run_ok(
            perf().args(["report", "--header-only", "-i"]).arg(&s),
        ));
        assert!(h.contains("inject"), "{h}");
    }
}

/// sched_stat merging, hardware traces, a guest or --jit with -b are refused
/// saying why; a malformed --known-build-ids is a usage error.
#[test]
fn unsupported_inject_modes_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let data = two_process_recording(dir.path());
    for (opts, why) in [
        (&["-s"][..], "tracepoint"),
        (&["--jit", "-b"][..], "run sear inject twice"),
        (&["--itrace"][..], "hardware traces"),
        (&["--strip"][..], "hardware traces"),
        (
            &["--known-build-ids", "xyz=/bin/true"][..],
            "not a build id",
        ),
    ] {
        let o = sear()
            .arg("inject")
            .args(opts)
            .arg("-i")
            .arg(&data)
            .arg("-o")
            .arg(dir.path().join("x.data"))
            .output()
            .unwrap();
        assert!(!o.status.success(), "{opts:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(why), "{opts:?}: {err}");
    }
}
