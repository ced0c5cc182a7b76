//! Samples in PLT entries and in the zero-sized `_init` and `_fini`, named as perf 6.1
//! names them: perf stretches `_init` over `.plt`, and whether an entry's address finds
//! `_init` or `name@plt` depends on the shape of perf's red-black tree of symbols (with
//! one entry, `_init`; with more, either, entry by entry). `sear script -F ip,sym` must
//! equal `perf script -F ip,sym` sample for sample.

mod common;
use common::*;

/// One PLT entry (labs, so short that its stub gets a fifth of the samples).
const ONE_ENTRY: &str = r#"
#include <stdlib.h>
volatile long sink;
int main(void) {
  for (long i = 0; i < 100000000; i++) sink += labs(i - 7);
  return 0;
}
"#;

/// Several PLT entries, all to functions so short that their stubs get many samples.
const MANY_ENTRIES: &str = r#"
#include <stdlib.h>
#include <ctype.h>
volatile long sink;
int main(void) {
  for (long i = 0; i < 30000000; i++) {
    sink += labs(i - 7);
    sink += abs((int)i - 5);
    sink += llabs(i - 3);
    sink += toupper((int)(i & 127));
    sink += tolower((int)(i & 127));
  }
  return 0;
}
"#;

#[test]
fn plt_init_and_fini_samples_are_named_as_perf_names_them() {
    assert!(have_perf());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        ("one_entry", ONE_ENTRY, "[.] _init"),
        ("many_entries", MANY_ENTRIES, "[.] _init|@plt"),
        ("init_fini", INIT_FINI_C, "[.] _fini"),
    ];
    let mut failures = Vec::new();
    for (name, src, must_show) in cases {
        let exe = build_c(d, name, src, &["-O2", "-g", "-fno-builtin"]);
        let data = perf_record(
            d,
            &format!("{name}.data"),
            &["-e", "cpu-clock", "-F", "4000"],
            &[exe.display().to_string()],
        );
        let args = ["script", "-F", "ip,sym", "-i"];
        let p = stdout_of(&run_ok(perf().args(args).arg(&data)));
        let s = stdout_of(&run_ok(sear().args(args).arg(&data)));
        let (pl, sl): (Vec<&str>, Vec<&str>) = (p.lines().collect(), s.lines().collect());
        assert!(pl.len() > 200, "{name}: {} samples", pl.len());
        let differ: Vec<String> = pl
            .iter()
            .zip(&sl)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("perf {a:?} sear {b:?}"))
            .collect();
        if pl.len() != sl.len() || !differ.is_empty() {
            failures.push(format!(
                "{name}: {} vs {} lines, {} differ: {:#?}",
                pl.len(),
                sl.len(),
                differ.len(),
                &differ[..differ.len().min(10)]
            ));
        }
        // The case happens: the report shows the symbol it is about.
        let report = sear_report(&data, &["--no-children", "--sort", "sym"]);
        assert!(
            must_show.split('|').any(|m| report.contains(m)),
            "{name}:\n{report}"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
