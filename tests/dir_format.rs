//! perf's directory format (`perf record --threads`: a `data` file with
//! the header and a `data.N` per writer thread): sear reads it as one
//! recording, in time order, the way perf does, and a torn part is a
//! counted warning, not a failure.

mod common;

use common::*;

#[test]
fn threads_recordings_read_as_perf_reads_them() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let workload = two_process_workload(dir.path());
    let data = perf_record(dir.path(), "thr.data", &["-g", "--threads"], &workload);
    assert!(data.is_dir() && data.join("data.0").exists(), "{data:?}");
    let parts: Vec<_> = std::fs::read_dir(&data).unwrap().collect();
    assert!(parts.len() >= 3, "data and a part per CPU: {parts:?}");

    // Every record, in perf's order and words (sear with
    // --raw-return-addresses: by default it names a return address by its
    // call, `_start` where perf names ld.so's `_dl_start_user`).
    for args in [
        &["script"][..],
        &["script", "--show-task-events", "--show-mmap-events"],
    ] {
        let p = stdout_of(&run_ok(perf().args(args).arg("-i").arg(&data)));
        let s = stdout_of(&run_ok(
            sear()
                .args(args)
                .arg("--raw-return-addresses")
                .arg("-i")
                .arg(&data),
        ));
        assert!(p.lines().count() > 100, "{p}");
        assert!(
            p == s,
            "{args:?}: first difference at line {}",
            first_difference(&p, &s)
        );
    }
    // The report's rows and call graphs; perf 6.1 orders rows of equal
    // weight differently in this format than in a file of the same
    // records, so the rows are compared as sets.
    let rows = |t: String| -> Vec<String> {
        let mut v = blocks(&without_tip(&t));
        v.sort();
        v
    };
    for args in [
        &["--no-children"][..],
        &["--children"],
        &["--sort", "comm,dso"],
    ] {
        let p = rows(perf_report(&data, args));
        let s = rows(sear_report(&data, args));
        assert_eq!(p, s, "{args:?}");
    }

    // A part cut in the middle of a record: what comes before it is read,
    // and the cut is reported.
    let part = (0..8)
        .map(|n| data.join(format!("data.{n}")))
        .filter(|p| p.exists())
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let bytes = std::fs::read(&part).unwrap();
    std::fs::write(&part, &bytes[..bytes.len() / 2 + 3]).unwrap();
    // (Wherever the cut falls: in a record, or in the header of the next.)
    let o = sear()
        .args(["report", "--stdio", "-i"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("fit the file"), "{err}");
    assert!(stdout_of(&o).contains("work"), "{}", stdout_of(&o));
}
