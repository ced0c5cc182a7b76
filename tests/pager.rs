//! On a terminal, reports go through the pager ($SEAR_PAGER, $PERF_PAGER,
//! $PAGER, less); `--no-pager`, `cat` or a non-terminal stdout print
//! directly. The terminal is a pty made by util-linux's `script`.

mod common;
use common::*;

/// Runs `sear ARGS` on a pty with the given environment; returns what the
/// terminal showed.
fn on_tty(args: &str, env: &[(&str, &str)]) -> String {
    let sear = env!("CARGO_BIN_EXE_sear");
    let mut c = std::process::Command::new("script");
    c.args(["-qec", &format!("{sear} {args}"), "/dev/null"]);
    for v in ["SEAR_PAGER", "PERF_PAGER", "PAGER"] {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("util-linux `script` runs");
    assert!(out.status.success(), "{args}: {out:?}");
    stdout_of(&out).replace("\r\n", "\n")
}

#[test]
fn reports_are_paged_only_on_a_terminal() {
    let f = wild_files().into_iter().next().expect("a conformance file");
    // `-q`: no warnings on the terminal, and (as perf report -q) no `#`
    // lines: the rows are what is paged.
    let args = format!(
        "-q report --stdio --no-children -g none --sort comm -i {}",
        f.display()
    );
    let marker = [("PAGER", "sed s/^/PAGED:/")];
    let paged = on_tty(&args, &marker);
    let lines: Vec<&str> = paged.lines().filter(|l| !l.is_empty()).collect();
    assert!(lines.len() > 5, "{paged}");
    assert!(lines.iter().all(|l| l.starts_with("PAGED:")), "{paged}");
    assert!(
        lines.iter().filter(|l| l.contains('%')).count() > 5,
        "{paged}"
    );
    // SEAR_PAGER wins over PAGER.
    let sear_pager = on_tty(&args, &[("PAGER", "false"), ("SEAR_PAGER", "sed s/^/S:/")]);
    assert!(sear_pager
        .lines()
        .next()
        .is_some_and(|l| l.starts_with("S:")));

    let direct = |out: &str| {
        assert!(out.lines().any(|l| l.contains('%')), "{out}");
        assert!(!out.contains("PAGED:"), "{out}");
    };
    direct(&on_tty(&format!("--no-pager {args}"), &marker));
    direct(&on_tty(&args, &[("PAGER", "cat")]));
    direct(&on_tty(&args, &[("PAGER", "")]));
    // Not a terminal: never paged.
    let out = run_ok(sear().env("PAGER", "sed s/^/PAGED:/").args(args.split(' ')));
    direct(&stdout_of(&out));
}

/// perf's `-p/--paginate` (before the command) pages any command's output
/// on a terminal, not only the reports'; off a terminal it changes nothing.
#[test]
fn paginate_pages_every_command_on_a_terminal() {
    let marker = [("PAGER", "sed s/^/PAGED:/")];
    let plain = on_tty("version", &marker);
    assert!(plain.contains("sear version"), "{plain}");
    assert!(!plain.contains("PAGED:"), "{plain}");
    let paged = on_tty("-p version", &marker);
    let lines: Vec<&str> = paged.lines().filter(|l| !l.is_empty()).collect();
    assert!(
        !lines.is_empty() && lines.iter().all(|l| l.starts_with("PAGED:")),
        "{paged}"
    );
    let out = run_ok(
        sear()
            .env("PAGER", "sed s/^/PAGED:/")
            .args(["--paginate", "version"]),
    );
    assert!(!stdout_of(&out).contains("PAGED:"));
}
