//! `sear collapse` against the FlameGraph project's folded-stack suite
//! (../shared/conformance/flamegraph): every input × option, byte for byte,
//! and bad input (garbage, empty, non-UTF-8, huge counts) as warnings.

mod textcli;

use std::path::PathBuf;

use textcli::sear;

const OPTIONS: [&str; 6] = ["pid", "tid", "kernel", "jit", "all", "addrs"];

fn suite() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/flamegraph")
}

#[test]
fn every_input_and_option_matches_byte_for_byte() {
    let dir = suite();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(dir.join("input"))
        .unwrap_or_else(|e| panic!("{}: {e} (the conformance suite is needed)", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no inputs in {}", dir.display());
    let (mut passed, mut failed) = (0, Vec::new());
    for input in &inputs {
        let name = input.file_stem().unwrap().to_string_lossy().into_owned();
        for opt in OPTIONS {
            let expected_path = dir.join(format!("expected/{name}-collapsed-{opt}.txt"));
            let expected = std::fs::read(&expected_path)
                .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
            let out = sear(
                &["collapse", &format!("--{opt}"), input.to_str().unwrap()],
                b"",
            );
            if out.code != 0 {
                failed.push(format!("{name} --{opt}: exit {}: {}", out.code, out.stderr));
            } else if out.stdout != expected {
                let got = out.stdout_str();
                let want = String::from_utf8_lossy(&expected);
                let first = got
                    .lines()
                    .zip(want.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(got.lines().count().min(want.lines().count()));
                failed.push(format!(
                    "{name} --{opt}: differs from line {} ({} lines, expected {})",
                    first + 1,
                    got.lines().count(),
                    want.lines().count()
                ));
            } else {
                passed += 1;
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{passed} passed, {} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert_eq!(passed, inputs.len() * OPTIONS.len());
}

#[test]
fn stdin_and_dash_read_the_same_text() {
    let input = suite().join("input/perf-dd-stacks-01.txt");
    let text = std::fs::read(&input).unwrap();
    let from_file = sear(&["collapse", "--all", input.to_str().unwrap()], b"");
    let from_stdin = sear(&["collapse", "--all", "-"], &text);
    assert_eq!(from_file.code, 0);
    assert_eq!(from_stdin.code, 0);
    assert_eq!(from_file.stdout, from_stdin.stdout);
    assert!(!from_file.stdout.is_empty());
}

#[test]
fn event_filter_and_sample_counts() {
    let input = suite().join("input/perf-cycles-instructions-01.txt");
    let path = input.to_str().unwrap();
    // Default: the first event (instructions); the cycles samples are skipped with a warning.
    let out = sear(&["collapse", path], b"");
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains("only instructions is folded"),
        "{}",
        out.stderr
    );
    let total = |o: &textcli::Out| -> u64 {
        o.stdout_str()
            .lines()
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(total(&out), 333);
    let cycles = sear(&["collapse", "--event-filter", "cycles", path], b"");
    assert_eq!(cycles.code, 0);
    assert_eq!(total(&cycles), 111);
    // Periods are summed by default; --samples counts samples.
    let dd = suite().join("input/perf-dd-stacks-01.txt");
    let periods = sear(&["collapse", dd.to_str().unwrap()], b"");
    let samples = sear(&["collapse", "--samples", dd.to_str().unwrap()], b"");
    assert_eq!(total(&periods), 10101010 * total(&samples));
}

fn assert_warned_not_crashed(out: &textcli::Out, what: &str, warning: &str) {
    assert_eq!(out.code, 0, "{what}: exit {}: {}", out.code, out.stderr);
    assert!(
        out.stderr.contains(warning),
        "{what}: no {warning:?} in {:?}",
        out.stderr
    );
}

#[test]
fn bad_input_gives_warnings() {
    let garbage = b"hello world\n!!!! ????\n\t\t\n12345\n(((( ))))\n";
    let out = sear(&["collapse"], garbage);
    assert_warned_not_crashed(&out, "garbage", "unrecognised line");
    assert!(out.stdout.is_empty());

    let out = sear(&["collapse", "-"], b"");
    assert_warned_not_crashed(&out, "empty", "no sample headers");
    assert!(out.stdout.is_empty());

    let non_utf8 = b"pr\xffg 7 [000] 1.0: 3 cycles:\n\t  4005b1 ma\xc3in (/bin/x)\n\n";
    let out = sear(&["collapse"], non_utf8);
    assert_warned_not_crashed(&out, "non-UTF-8", "not valid UTF-8");
    assert_eq!(out.stdout, b"pr\xffg;ma\xc3in 3\n");

    // 2^70 does not fit a count: that sample is skipped, the others kept.
    let huge = b"a 7 [000] 1.0: 1180591620717411303424 cycles:\n\t  1 main (/bin/x)\n\n\
                 a 7 [000] 1.1: 5 cycles:\n\t  1 main (/bin/x)\n\n";
    let out = sear(&["collapse"], huge);
    assert_warned_not_crashed(&out, "2^70", "period too large");
    assert_eq!(out.stdout_str(), "a;main 5\n");

    // Sums past u64::MAX saturate with a warning.
    let big = b"a 7 [000] 1.0: 18446744073709551615 cycles:\n\t  1 main (/bin/x)\n\n\
                a 7 [000] 1.1: 18446744073709551615 cycles:\n\t  1 main (/bin/x)\n\n";
    let out = sear(&["collapse"], big);
    assert_warned_not_crashed(&out, "overflow", "count overflow");
    assert_eq!(out.stdout_str(), "a;main 18446744073709551615\n");

    // Random bytes: no panic, no hang.
    let mut noise = Vec::new();
    let mut x: u32 = 0x1234_5678;
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        noise.push(match x % 7 {
            0 => b'\n',
            1 => b' ',
            2 => b'(',
            3 => b')',
            _ => (x >> 8) as u8,
        });
    }
    let out = sear(&["collapse", "--all", "--addrs", "--tid"], &noise);
    assert_eq!(out.code, 0, "noise: {}", out.stderr);
}

#[test]
fn recordings_are_detected_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    for (name, magic) in [("file.data", &b"PERFILE2"[..]), ("be.data", b"2ELIFREP")] {
        let p = dir.path().join(name);
        let mut bytes = magic.to_vec();
        bytes.extend_from_slice(&[0u8; 256]);
        std::fs::write(&p, &bytes).unwrap();
        for args in [
            vec!["collapse", p.to_str().unwrap()],
            vec!["collapse", "-i", p.to_str().unwrap()],
        ] {
            let out = sear(&args, b"");
            assert_eq!(out.code, 1, "{args:?}");
            assert!(
                out.stderr.contains("is a perf.data recording"),
                "{}",
                out.stderr
            );
            assert!(out.stderr.contains("perf script"), "{}", out.stderr);
        }
        // Pipe mode on stdin too.
        let out = sear(&["collapse"], &bytes);
        assert_eq!(out.code, 1);
        assert!(
            out.stderr.contains("is a perf.data recording"),
            "{}",
            out.stderr
        );
    }
}
