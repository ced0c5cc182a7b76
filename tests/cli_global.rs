//! Global command-line behaviour shared with perf: the version in perf's
//! form, `--debug verbose=N`.

mod common;

use common::*;

#[test]
fn version_in_perfs_form() {
    have_perf();
    let perf_line = stdout_of(&run_ok(perf().arg("version")));
    assert!(perf_line.starts_with("perf version "), "{perf_line}");
    let v = stdout_of(&run_ok(sear().arg("version")));
    let flag = stdout_of(&run_ok(sear().arg("--version")));
    assert_eq!(v, flag);
    let first = v.lines().next().unwrap();
    let number = first.strip_prefix("sear version ").expect(first);
    assert!(
        number.split('.').count() == 3 && number.split('.').all(|p| p.parse::<u32>().is_ok()),
        "{first}"
    );
    let opts = stdout_of(&run_ok(sear().args(["version", "--build-options"])));
    assert!(opts.contains("dwarf: [ on  ]"), "{opts}");
}

/// perf's `--debug verbose=N` is -v N times (before or after the command);
/// perf's other debug variables are accepted and change nothing.
#[test]
fn debug_verbose_is_verbosity() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/two-processes.data");
    let report = |pre: &[&str], post: &[&str]| {
        let out = run_ok(
            sear()
                .args(pre)
                .args(["report", "--stdio", "-i", data])
                .args(post),
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(!report(&[], &[]).contains("debug:"));
    assert!(report(&["--debug", "verbose=2"], &[]).contains("debug: pass one"));
    assert!(report(&[], &["--debug", "verbose=2"]).contains("debug: pass one"));
    assert!(!report(&["--debug", "verbose=1"], &[]).contains("debug:"));
    assert!(!report(&["--debug", "ordered-events=1"], &[]).contains("debug:"));
}
