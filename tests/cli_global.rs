//! Global command-line behaviour shared with perf: the version in perf's
//! form.

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
