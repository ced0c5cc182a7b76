//! `sear diff`: on two recordings of a C program whose `work_a` does twice
//! the work in the second, `work_a`'s share rises by the expected amount
//! and the rest falls; the default output is perf diff's byte for byte,
//! and `--new`'s rows and baseline shares are perf diff's.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;

/// Two functions with the same body (so the same speed); `2` as the first
/// argument doubles `work_a`'s work. Base: 50/50; new: 2/3 and 1/3.
const SRC: &str = r#"
volatile unsigned long sink;
#define BODY { unsigned long x = sink; for (long i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL; sink = x; }
__attribute__((noinline)) void work_a(long n) BODY
__attribute__((noinline)) void work_b(long n) BODY
int main(int argc, char **argv) {
  int twice = argc > 1 && argv[1][0] == '2';
  for (int r = 0; r < 200; r++) { work_a(twice ? 2 * 1500000 : 1500000); work_b(1500000); }
  return 0;
}
"#;

/// As [`assert_rows_equal`], but rows of one baseline share (the first
/// column's text) may come in another order: perf orders such ties by its
/// symbols' addresses in ways sear follows only in part (see
/// `profile::diff::perf_order`), and the twin functions' recordings tie
/// now and then (a fresh-clone run had work_a and work_b at 49.82% each).
/// Each run of equal baseline columns must hold the same lines.
fn assert_rows_equal_up_to_baseline_ties(
    rows: &[Vec<&str>],
    perf: impl Fn(&[&str]) -> String,
    sear: impl Fn(&[&str]) -> String,
) {
    let same = |p: &str, s: &str| -> bool {
        let (p, s): (Vec<&str>, Vec<&str>) = (p.lines().collect(), s.lines().collect());
        if p.len() != s.len() {
            return false;
        }
        let column = |l: &str| l.get(..12).unwrap_or(l).to_owned();
        let mut start = 0;
        while start < p.len() {
            let mut end = start + 1;
            while end < p.len() && column(p[end]) == column(p[start]) {
                end += 1;
            }
            let (mut a, mut b) = (p[start..end].to_vec(), s[start..end].to_vec());
            a.sort_unstable();
            b.sort_unstable();
            if a != b {
                return false;
            }
            start = end;
        }
        true
    };
    let mut differ = Vec::new();
    for args in rows {
        let (p, s) = (perf(args), sear(args));
        if !same(&p, &s) {
            differ.push(format!("{args:?}:\n--- perf\n{p}--- sear\n{s}"));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// The two recordings (base, new), made once per test binary run.
fn recordings() -> &'static (tempfile::TempDir, PathBuf, PathBuf) {
    static R: std::sync::OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> =
        std::sync::OnceLock::new();
    R.get_or_init(|| {
        have_perf();
        let dir = tempfile::tempdir().unwrap();
        // -fno-ipa-icf: gcc would otherwise fold the twin functions into one.
        let exe = build_c(dir.path(), "twice", SRC, &["-O2", "-g", "-fno-ipa-icf"]);
        let exe = exe.to_str().unwrap().to_owned();
        let opts = ["-e", "cpu-clock", "-F", "4000", "-g"];
        let base = perf_record(dir.path(), "base.data", &opts, std::slice::from_ref(&exe));
        let new = perf_record(dir.path(), "new.data", &opts, &[exe, "2".into()]);
        (dir, base, new)
    })
}

/// A row of either table: (dso, symbol) → (baseline %, new % or delta %).
type Rows = BTreeMap<(String, String), (Option<f64>, Option<f64>)>;

fn pct(s: &str) -> Option<f64> {
    let s = s.trim();
    (!s.is_empty()).then(|| {
        s.trim_end_matches('%')
            .parse()
            .unwrap_or_else(|_| panic!("not a percentage: {s:?}"))
    })
}

/// (dso, symbol) from a table's key columns: `dso   [.] sym`.
fn dso_sym(keys: &str) -> (String, String) {
    let keys = keys.trim();
    let at = keys
        .find(" [")
        .unwrap_or_else(|| panic!("no symbol in {keys:?}"));
    (keys[..at].trim().to_owned(), keys[at..].trim().to_owned())
}

/// sear's rows: (baseline %, new %) and the delta by key.
fn sear_rows(text: &str) -> (Rows, BTreeMap<(String, String), f64>) {
    let mut rows = Rows::new();
    let mut deltas = BTreeMap::new();
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        // `{base:10}  {new:9}  {delta:9}  keys`
        let k = dso_sym(&l[32..]);
        deltas.insert(k.clone(), pct(&l[22..32]).expect("a delta on every row"));
        rows.insert(k, (pct(&l[..10]), pct(&l[12..21])));
    }
    (rows, deltas)
}

/// perf diff's rows: (baseline %, delta %) by key.
fn perf_rows(text: &str) -> Rows {
    let mut rows = Rows::new();
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        // `{baseline:10}  {delta:9}  keys`
        rows.insert(dso_sym(&l[21..]), (pct(&l[..10]), pct(&l[10..21])));
    }
    rows
}

/// `sear diff --new` (sear's layout, with the new share): what the tests
/// below read.
fn sear_diff(base: &Path, new: &Path, args: &[&str]) -> String {
    stdout_of(&run_ok(
        sear().args(["diff", "--new"]).args(args).arg(base).arg(new),
    ))
}

/// Without --new, sear prints what perf diff prints, byte for byte.
#[test]
fn default_layout_is_perf_diffs() {
    let (_dir, base, new) = recordings();
    let sets: Vec<Vec<&str>> = vec![
        vec![],
        vec!["-s", "dso"],
        vec!["-s", "comm"],
        vec!["-s", "sym"],
        vec!["-s", "comm,dso"],
        vec!["-c", "delta"],
        vec!["-o", "0"],
        vec!["-o", "0", "-c", "ratio"],
        // (By DSO: perf orders rows of equal ratio in one DSO by symbol
        // address, sear by name.)
        vec!["-c", "ratio", "-s", "dso"],
        vec!["-c", "wdiff:1,2", "-s", "dso"],
        vec!["--compute", "delta-abs", "-s", "sym"],
        vec!["-p"],
        vec!["-F"],
        vec!["--period", "--formula", "-c", "delta"],
        vec!["-c", "wdiff:1,2", "-s", "dso", "-F", "-p"],
        vec!["-c", "ratio", "-s", "dso", "--formula"],
        // A filter to one DSO or symbol hides its column, as in perf.
        vec!["-d", "twice"],
        vec!["-S", "work_a", "-p"],
        vec!["--percentage", "relative", "-d", "twice", "-F"],
        vec!["--time", "0,", "-f"],
        vec!["-b"],
        vec!["--baseline-only", "-p", "-s", "sym"],
        vec!["-t", ";"],
        vec!["--field-separator", ",", "-c", "ratio", "-p", "-F"],
        vec!["-t", "::", "-b", "-c", "wdiff:1,2", "-s", "dso"],
        // perf's verbose columns: DSOs by path, symbols after their
        // address and origin, the data files listed.
        vec!["-v"],
        vec!["-v", "-c", "ratio", "-s", "sym"],
    ];
    // These recordings' samples carry no CPU: perf and sear refuse --cpu.
    let cpu = |c: &mut std::process::Command| c.args(["--cpu", "0"]).arg(base).arg(new).output();
    assert!(!cpu(perf().arg("diff")).unwrap().status.success());
    let ours = cpu(sear().arg("diff")).unwrap();
    assert!(!ours.status.success());
    assert!(String::from_utf8_lossy(&ours.stderr).contains("carry no CPU"));
    for (b, n) in [(base, new), (new, base), (base, base)] {
        assert_rows_equal_up_to_baseline_ties(
            &sets,
            |args| stdout_of(&run_ok(perf().arg("diff").args(args).arg(b).arg(n))),
            |args| {
                stdout_of(&run_ok(
                    sear()
                        .args(["diff", "--short-names"])
                        .args(args)
                        .arg(b)
                        .arg(n),
                ))
            },
        );
    }
}

/// A stripped program's samples fall at addresses no symbol covers: perf
/// diff takes all of one DSO's for one row (named by the lowest address,
/// paired with the other recording's row of that DSO whatever its
/// addresses), and with `-s sym` all of them for one; sear prints the same.
#[test]
fn unresolved_addresses_of_a_dso_are_one_row_as_in_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_c(dir.path(), "bare", SRC, &["-O2", "-fno-ipa-icf"]);
    let st = std::process::Command::new("strip")
        .arg("-s")
        .arg(&exe)
        .status()
        .expect("strip runs");
    assert!(st.success());
    let exe = exe.to_str().unwrap().to_owned();
    let opts = ["-e", "cpu-clock", "-F", "4000", "-g"];
    let base = perf_record(dir.path(), "base.data", &opts, std::slice::from_ref(&exe));
    let new = perf_record(dir.path(), "new.data", &opts, &[exe, "2".into()]);
    let sets: Vec<Vec<&str>> = vec![
        vec![],
        vec!["-s", "sym"],
        vec!["-s", "comm,dso,sym"],
        vec!["-c", "ratio"],
        vec!["-v"],
    ];
    for (b, n) in [(&base, &new), (&new, &base)] {
        // The two loops run at two addresses at least: one row.
        let p = stdout_of(&run_ok(perf().arg("diff").arg(b).arg(n)));
        let rows = p
            .lines()
            .filter(|l| l.contains(" bare ") && l.contains("] 0x"))
            .count();
        assert_eq!(rows, 1, "perf diff's rows of bare:\n{p}");
        assert_rows_equal_up_to_baseline_ties(
            &sets,
            |args| stdout_of(&run_ok(perf().arg("diff").args(args).arg(b).arg(n))),
            |args| stdout_of(&run_ok(sear().arg("diff").args(args).arg(b).arg(n))),
        );
    }
}

/// More than two data files: each compared with the baseline in a
/// column of its own (titles `/N`, the data files listed), rows ordered by
/// the column `-o` names; one file is compared with perf.data.old and none
/// means perf.data.old against perf.data, as perf takes them.
#[test]
fn three_or_more_files_and_perfs_default_names() {
    let (dir, base, new) = recordings();
    // A third recording with rows of a program the others do not have.
    let other = build_c(
        dir.path(),
        "other",
        "volatile long s; int main(void) { for (long i = 0; i < 300000000; i++) s += i; return 0; }",
        &["-O1"],
    );
    let third = perf_record(
        dir.path(),
        "third.data",
        &["-e", "cpu-clock", "-F", "4000"],
        &[other.display().to_string()],
    );
    let sets: Vec<Vec<&str>> = vec![
        vec![],
        vec!["-v"],
        vec!["-v", "-s", "dso", "-p"],
        vec!["-o", "2"],
        vec!["-o", "0", "-s", "dso"],
        vec!["-c", "ratio", "-o", "2"],
        vec!["-c", "delta", "-p", "-F"],
        vec!["-c", "wdiff:1,2", "-p"],
        vec!["-b"],
        vec!["-t", ";", "-p"],
        vec!["-s", "sym"],
    ];
    for files in [
        vec![base, new, &third],
        vec![new, &third, base],
        vec![base, new, new, &third],
    ] {
        assert_rows_equal_up_to_baseline_ties(
            &sets,
            |args| stdout_of(&run_ok(perf().arg("diff").args(args).args(&files))),
            |args| {
                stdout_of(&run_ok(
                    sear()
                        .args(["diff", "--short-names"])
                        .args(args)
                        .args(&files),
                ))
            },
        );
    }
    // Not vacuous: a column per file against the baseline.
    let text = stdout_of(&run_ok(sear().arg("diff").arg(base).arg(new).arg(&third)));
    assert!(
        text.contains("# Baseline/0  Delta Abs/1  Delta Abs/2"),
        "{text}"
    );
    assert!(text.contains("#  [2] "), "{text}");
    // perf.data.old and perf.data by default, in the working directory.
    let cwd = tempfile::tempdir().unwrap();
    std::fs::copy(base, cwd.path().join("perf.data.old")).unwrap();
    std::fs::copy(new, cwd.path().join("perf.data")).unwrap();
    for args in [vec![], vec![third.display().to_string()]] {
        let p = stdout_of(&run_ok(
            perf().arg("diff").args(&args).current_dir(cwd.path()),
        ));
        let s = stdout_of(&run_ok(
            sear()
                .args(["diff", "--short-names"])
                .args(&args)
                .current_dir(cwd.path()),
        ));
        assert_eq!(p, s, "diff {args:?}");
    }
    // A column to order by that is not there, and --new with three files.
    for bad in [&["-o", "3"][..], &["--new"]] {
        let out = sear()
            .arg("diff")
            .args(bad)
            .arg(base)
            .arg(new)
            .arg(&third)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad:?}");
    }
}

/// perf diff shows every event of the baseline, in its order, one
/// without samples too (an -a recording's tracking dummy), and none only
/// the new recording has.
#[test]
fn events_are_the_baselines_as_perf_shows_them() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let (_d, base, _) = recordings();
    let exe = build_c(dir.path(), "twice", SRC, &["-O2", "-g", "-fno-ipa-icf"]);
    let exe = vec![exe.display().to_string()];
    let pc = perf_record(
        dir.path(),
        "pc.data",
        &["-e", "page-faults,cpu-clock"],
        &exe,
    );
    let cp = perf_record(
        dir.path(),
        "cp.data",
        &["-e", "cpu-clock,page-faults"],
        &exe,
    );
    let all = perf_record(
        dir.path(),
        "a.data",
        &["-a", "-e", "cpu-clock"],
        &["sleep".into(), "0.1".into()],
    );
    for (b, n) in [
        (&pc, &cp),
        (&cp, &pc),
        (&pc, base),
        (base, &pc),
        (&all, base),
    ] {
        let p = stdout_of(&run_ok(perf().arg("diff").arg(b).arg(n)));
        let s = stdout_of(&run_ok(
            sear().args(["diff", "--short-names"]).arg(b).arg(n),
        ));
        let events = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| l.starts_with("# Event"))
                .map(str::to_owned)
                .collect()
        };
        assert!(!events(&p).is_empty());
        assert_eq!(events(&p), events(&s), "{} {}", b.display(), n.display());
    }
}

#[test]
fn doubled_function_rises_by_the_expected_share() {
    let (_dir, base, new) = recordings();
    let text = sear_diff(base, new, &[]);
    let (rows, deltas) = sear_rows(&text);
    let key = |s: &str| ("twice".to_owned(), format!("[.] {s}"));
    let (a_base, a_new) = rows[&key("work_a")];
    let (b_base, b_new) = rows[&key("work_b")];
    let (a_base, a_new, b_base, b_new) = (
        a_base.unwrap(),
        a_new.unwrap(),
        b_base.unwrap(),
        b_new.unwrap(),
    );
    // Equal work first: 50% each (within noise).
    assert!(
        (a_base - 50.0).abs() <= 2.0,
        "work_a's base share {a_base}\n{text}"
    );
    assert!(
        (b_base - 50.0).abs() <= 2.0,
        "work_b's base share {b_base}\n{text}"
    );
    // Doubled: work_a 2/3, work_b 1/3, the rise +16.67 points.
    let rise = 100.0 * 2.0 / 3.0 - 50.0;
    let a_delta = deltas[&key("work_a")];
    assert!((a_delta - (a_new - a_base)).abs() < 0.011, "{text}");
    assert!(
        (a_delta - rise).abs() <= 2.0,
        "work_a's delta {a_delta}, expected {rise:.2} ± 2\n{text}"
    );
    assert!(
        (deltas[&key("work_b")] + rise).abs() <= 2.0,
        "work_b's delta\n{text}"
    );
    assert!((b_new - 100.0 / 3.0).abs() <= 2.0, "{text}");
    // Nothing else rises beyond noise (the scheduler's functions take a
    // point now and then on a busy machine), and rows come by absolute delta.
    for (k, d) in &deltas {
        if k != &key("work_a") {
            assert!(*d < 2.0, "{k:?} rose by {d}\n{text}");
        }
    }
    let order: Vec<f64> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| pct(&l[22..32]).unwrap().abs())
        .collect();
    assert!(order.windows(2).all(|w| w[0] >= w[1]), "{text}");
    // Totals: samples, events and wall clock of both.
    let head: Vec<&str> = text.lines().take(3).collect();
    assert!(
        head[1].starts_with("#  [0] ") && head[1].contains("(Baseline): "),
        "{text}"
    );
    for h in &head[1..] {
        assert!(
            h.contains(" samples") && h.contains(" cpu-clock events"),
            "{text}"
        );
        assert!(h.contains(" s from first to last sample"), "{text}");
    }
}

#[test]
fn rows_and_baseline_shares_are_perf_diffs() {
    let (_dir, base, new) = recordings();
    let ours = sear_diff(base, new, &["--short-names"]);
    let out = run_ok(perf().arg("diff").arg(base).arg(new));
    let theirs = perf_rows(&stdout_of(&out));
    let (rows, deltas) = sear_rows(&ours);
    let ours_keys: Vec<_> = rows.keys().collect();
    let theirs_keys: Vec<_> = theirs.keys().collect();
    assert_eq!(
        ours_keys,
        theirs_keys,
        "sear:\n{ours}\nperf:\n{}",
        stdout_of(&out)
    );
    for (k, (base_pct, delta)) in &theirs {
        let (our_base, our_new) = rows[k];
        assert_eq!(base_pct.is_some(), our_base.is_some(), "{k:?}");
        if let (Some(p), Some(q)) = (base_pct, our_base) {
            assert!((p - q).abs() <= 0.011, "{k:?}: perf {p}%, sear {q}%");
        }
        // perf shows a delta only for rows on both sides.
        if let (Some(d), Some(_), Some(_)) = (delta, our_base, our_new) {
            assert!(
                (d - deltas[k]).abs() <= 0.011,
                "{k:?}: perf {d}, sear {}",
                deltas[k]
            );
        }
    }
}

#[test]
fn sort_keys_percent_limit_and_errors() {
    let (_dir, base, new) = recordings();
    let text = sear_diff(base, new, &["--sort", "comm"]);
    assert!(
        text.contains("# Baseline        New  Delta Abs  Command\n"),
        "{text}"
    );
    assert!(
        text.contains("   100.00%    100.00%     +0.00%  twice\n"),
        "{text}"
    );
    let text = sear_diff(base, new, &["--sort", "sym", "--percent-limit", "5"]);
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows.iter().all(|r| r.contains("[.] work_")), "{text}");

    let o = sear()
        .args(["diff", "--sort", "bogus"])
        .arg(base)
        .arg(new)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown key `bogus`"), "{err}");
    let o = sear()
        .args(["diff", "/nonexistent.data"])
        .arg(new)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent.data"), "{err}");
}

/// (title, fill) of every frame rect of a flame graph SVG.
fn frame_fills(svg: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for part in svg.split("<title>").skip(1) {
        let Some((title, rest)) = part.split_once("</title>") else {
            continue;
        };
        let Some(rect) = rest.trim_start().strip_prefix("<rect") else {
            continue;
        };
        let fill = rect
            .split_once("fill=\"")
            .and_then(|(_, f)| f.split_once('"'))
            .map(|(f, _)| f.to_owned())
            .unwrap_or_default();
        out.push((title.to_owned(), fill));
    }
    out
}

/// `rgb(r,g,b)` as numbers.
fn rgb(fill: &str) -> (u32, u32, u32) {
    let v: Vec<u32> = fill
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .map(|x| x.trim().parse().expect("rgb component"))
        .collect();
    (v[0], v[1], v[2])
}

fn fill_of<'a>(frames: &'a [(String, String)], name: &str) -> &'a str {
    &frames
        .iter()
        .find(|(t, _)| t.starts_with(&format!("{name} (")))
        .unwrap_or_else(|| panic!("no frame {name} in {frames:?}"))
        .1
}

#[test]
fn differential_flame_graph_of_recordings_is_red_where_work_grew() {
    let (dir, base, new) = recordings();
    let svg_path = dir.path().join("diff.svg");
    run_ok(
        sear()
            .args(["flame", "--diff"])
            .arg(base)
            .arg(new)
            .arg("-o")
            .arg(&svg_path),
    );
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let frames = frame_fills(&svg);
    let (r, g, b) = rgb(fill_of(&frames, "work_a"));
    assert!(
        r == 255 && g < 200 && g == b,
        "work_a is not red: rgb({r},{g},{b})"
    );
    let (r, g, b) = rgb(fill_of(&frames, "work_b"));
    assert!(
        b == 255 && r < 200 && r == g,
        "work_b is not blue: rgb({r},{g},{b})"
    );
    // The new profile's shape: work_a is two thirds of the width; the hover
    // text gives the change in points of all samples.
    let title = frames
        .iter()
        .find(|(t, _)| t.starts_with("work_a ("))
        .unwrap()
        .0
        .clone();
    let (share, delta) = title
        .rsplit_once("%; ")
        .map(|(l, d)| {
            let share: f64 = l.rsplit_once(", ").unwrap().1.parse().unwrap();
            let delta: f64 = d.trim_end_matches("%)").parse().unwrap();
            (share, delta)
        })
        .unwrap();
    assert!((share - 66.67).abs() <= 2.0, "{title}");
    assert!((delta - 16.67).abs() <= 2.0, "{title}");
}

#[test]
fn differential_flame_graph_of_folded_files_is_normalised() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.folded");
    let new = dir.path().join("new.folded");
    // The new profile has three times the samples: scaled, `a` grew from
    // 150 to 200 and `b` shrank from 150 to 100; `main` stayed.
    std::fs::write(&base, "main;a 50\nmain;b 50\n").unwrap();
    std::fs::write(&new, "main;a 200\nmain;b 100\n").unwrap();
    let out = run_ok(sear().args(["flame", "--diff"]).arg(&base).arg(&new));
    let svg = stdout_of(&out);
    let frames = frame_fills(&svg);
    assert_eq!(fill_of(&frames, "main"), "rgb(250,250,250)", "{frames:?}");
    assert_eq!(rgb(fill_of(&frames, "a")).0, 255, "{frames:?}");
    assert_eq!(rgb(fill_of(&frames, "b")).2, 255, "{frames:?}");
    assert!(svg.contains("Differential Flame Graph"));

    let o = sear()
        .args(["flame", "--diff"])
        .arg(&base)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "one file is a usage error");
    let o = sear()
        .args(["flame", "--diff"])
        .arg(&base)
        .arg(dir.path().join("missing.data"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.data"));
}

/// `-D` dumps both recordings as perf diff does (no preamble or counts,
/// its tool's `unhandled!` marks) before the comparison, byte for byte;
/// `-m` changes nothing, as in perf; the LBR cycle views are refused.
#[test]
fn dump_modules_and_cycle_views_like_perf() {
    have_perf();
    let (_dir, base, new) = recordings();
    for args in [&["-D"][..], &["-m"], &["--modules"]] {
        let p = stdout_of(&run_ok(perf().arg("diff").args(args).arg(base).arg(new)));
        let s = stdout_of(&run_ok(sear().arg("diff").args(args).arg(base).arg(new)));
        assert!(
            p == s,
            "{args:?}: first difference at line {}",
            first_difference(&p, &s)
        );
    }
    for args in [&["--cycles-hist"][..], &["--stream"], &["-c", "cycles"]] {
        let o = sear()
            .arg("diff")
            .args(args)
            .arg(base)
            .arg(new)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("cycles"),
            "{args:?}"
        );
    }
}
