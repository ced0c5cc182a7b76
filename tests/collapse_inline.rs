//! `sear collapse --inline`: inline frames come from the binary's DWARF and
//! are marked `_[i]`, on the text of a real `perf script` (perf and gcc required).

mod common;

use std::process::Command;

use common::{have_perf, perf, run_ok, sear, stdout_of};

const SOURCE: &str = r#"
static volatile unsigned long sink;
static inline __attribute__((always_inline)) void spin(unsigned long n) {
    for (unsigned long i = 0; i < n; i++) sink += i;
}
__attribute__((noinline)) void work(unsigned long n) { spin(n); sink ^= 1; }
int main(int argc, char **argv) {
    (void)argv;
    for (int i = 0; i < 30; i++) work(5000000UL * (unsigned long)argc);
    return 0;
}
"#;

#[test]
fn inline_frames_are_expanded_and_marked() {
    assert!(have_perf());
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("inl.c");
    std::fs::write(&src, SOURCE).unwrap();
    // Without and with PIE: perf prints file offsets for both, old perf
    // printed the binary's own addresses for non-PIE ones.
    for pie in ["-no-pie", "-pie"] {
        let exe = dir.path().join(format!("inl{pie}"));
        run_ok(
            Command::new("gcc")
                .args(["-O2", "-g", "-fno-omit-frame-pointer", pie, "-o"])
                .arg(&exe)
                .arg(&src),
        );
        let data = dir.path().join(format!("perf{pie}.data"));
        run_ok(
            perf()
                .args(["record", "-q", "-g", "-o"])
                .arg(&data)
                .arg(&exe),
        );
        let text = run_ok(perf().args(["script", "-i"]).arg(&data)).stdout;
        let plain = dir.path().join(format!("script{pie}.txt"));
        std::fs::write(&plain, &text).unwrap();

        let without = stdout_of(&run_ok(sear().arg("collapse").arg(&plain)));
        let with = stdout_of(&run_ok(sear().args(["collapse", "--inline"]).arg(&plain)));
        let weight = |folded: &str, needle: &str| -> u64 {
            folded
                .lines()
                .filter(|l| l.contains(needle))
                .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
                .sum()
        };
        assert!(
            weight(&without, ";work") > 0,
            "{pie}: no samples in work:\n{without}"
        );
        assert_eq!(weight(&without, "spin"), 0, "{pie}");
        // Nearly all of work's time is in the inlined loop.
        let work = weight(&with, ";work");
        let spin = weight(&with, ";work;spin_[i]");
        assert!(
            spin * 10 >= work * 9,
            "{pie}: spin {spin} of work {work}:\n{with}"
        );
        // Same samples in total.
        let total = |f: &str| weight(f, "");
        assert_eq!(total(&with), total(&without), "{pie}");
    }
}
