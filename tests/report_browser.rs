//! `sear report`'s interactive browser, driven through a real
//! pseudo-terminal: sear runs on a pty, its screen is parsed by a terminal
//! emulator (vt100) and keys are typed as a user types them. What the
//! browser shows is compared with what the text report (`--stdio`) and
//! `sear annotate --stdio` print for the same recording and the same
//! filters.

mod common;

use common::tty::Tty;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROWS: u16 = 40;
const COLS: u16 = 180;

fn browse(data: &Path, extra: &[&str]) -> Tty {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sear"));
    c.args(["report", "-i"]).arg(data).args(extra);
    let mut t = Tty::spawn(c, ROWS, COLS);
    t.wait_for("the table", 60, |l| {
        l.last().is_some_and(|x| x.contains("help on key bindings"))
    });
    t
}

/// The screen's table rows: the lines between the column header and the
/// status line.
fn screen_rows(lines: &[String]) -> Vec<String> {
    let head = lines
        .iter()
        .position(|l| l.contains("Overhead") || l.contains("Children"))
        .expect("a column header on screen");
    lines[head + 1..lines.len() - 1]
        .iter()
        .filter(|l| !l.is_empty())
        .cloned()
        .collect()
}

/// The title lines above the column header.
fn title(lines: &[String]) -> String {
    let head = lines
        .iter()
        .position(|l| l.contains("Overhead") || l.contains("Children"))
        .unwrap();
    lines[..head].join("\n")
}

/// Whether a text report's line is an entry's row (it starts with a
/// percentage; call-graph lines start with `|` or `-`).
fn is_row(l: &str) -> bool {
    l.split_whitespace()
        .next()
        .and_then(|t| t.strip_suffix('%'))
        .is_some_and(|v| v.parse::<f64>().is_ok())
}

/// The text report's rows (no `#` lines, no call graphs), as wide as the
/// screen.
fn stdio_rows(data: &Path, args: &[&str]) -> Vec<String> {
    rows_of(&text_report(data, args))
}

fn rows_of(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && is_row(l))
        .map(|l| {
            l.chars()
                .take(COLS as usize)
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// The text report's `# Samples: ...` and `# Event count ...` values, as
/// the browser's title puts them on one line.
fn stdio_title(data: &Path, args: &[&str]) -> String {
    let text = text_report(data, args);
    let samples = text
        .lines()
        .find(|l| l.starts_with("# Samples:"))
        .unwrap()
        .trim_start_matches("# ")
        .to_owned();
    let count = text
        .lines()
        .find(|l| l.starts_with("# Event count"))
        .unwrap()
        .trim_start_matches("# ")
        .to_owned();
    format!("{samples}, {count}")
}

/// `sear report --stdio ARGS` (as the browser, sear's own defaults).
fn text_report(f: &Path, args: &[&str]) -> String {
    stdout_of(&run_ok(
        sear().args(["report", "--stdio", "-i"]).arg(f).args(args),
    ))
}

fn recording(dir: &Path) -> PathBuf {
    have_perf();
    two_process_recording(dir)
}

#[test]
fn table_call_graphs_and_keys_show_what_the_text_report_prints() {
    let dir = tempfile::tempdir().unwrap();
    let data = recording(dir.path());
    let mut t = browse(&data, &[]);
    let lines = t.lines();
    // The first screen: the text report's title and its first rows.
    assert!(
        title(&lines).contains(&stdio_title(&data, &[])),
        "{}",
        lines.join("\n")
    );
    let rows = screen_rows(&lines);
    let want = stdio_rows(&data, &[]);
    assert!(rows.len() >= want.len().min(20), "{rows:?}");
    assert_eq!(rows[..], want[..rows.len()], "first screen");

    // Enter unfolds the selected (first) entry: its call graph lines as
    // the text report prints them under it.
    t.send(b"\r");
    let lines = t.lines();
    let shown = screen_rows(&lines);
    let text = text_report(&data, &[]);
    let graph: Vec<String> = text
        .lines()
        .skip_while(|l| l.starts_with('#') || l.trim().is_empty())
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.trim_end().to_owned())
        .collect();
    assert!(graph.len() > 2, "the first entry has a call graph: {text}");
    let n = graph.len().min(shown.len() - 1);
    assert_eq!(shown[0], want[0]);
    assert_eq!(shown[1..=n], graph[..n], "the unfolded graph");
    // Enter again folds it; E unfolds all, C folds all.
    t.send(b"\r");
    assert_eq!(screen_rows(&t.lines()), rows);
    t.send(b"E");
    assert!(screen_rows(&t.lines()).len() >= rows.len());
    assert_ne!(screen_rows(&t.lines()), rows);
    t.send(b"C");
    assert_eq!(screen_rows(&t.lines()), rows);

    // `/` shows only symbols containing the text: the rows of
    // --symbol-filter.
    t.send(b"/oth");
    assert!(t.lines().last().unwrap().contains("Symbol filter: oth"));
    t.send(b"\r");
    let lines = t.lines();
    assert!(title(&lines).contains("Symbols containing: oth"));
    assert_shows(
        &screen_rows(&lines),
        &stdio_rows(&data, &["--symbol-filter", "oth"]),
    );
    // Esc undoes it.
    t.send(b"\x1b");
    assert_eq!(screen_rows(&t.lines()), rows);

    // `h` lists the keys; any key closes the list.
    t.send(b"h");
    let help = t.screen();
    for k in [
        "Enter, +, e",
        "annotate",
        "zoom into the selected entry's thread",
        "quit",
    ] {
        assert!(help.contains(k), "{help}");
    }
    t.send(b"x");
    assert!(!t.screen().contains("Help: keys"));

    // q leaves the terminal as it was.
    t.send(b"q");
    assert_eq!(t.wait_exit(10), Some(0));
    assert_eq!(t.cooked(), (true, true), "raw mode left on");
    assert_eq!(t.cursor_shown_on_main_screen(), (true, true));
}

/// A zoomed table shows the filtered report's rows from the first: all of
/// them, or as many as the screen holds (how many rows a recording makes
/// varies from run to run; a 40-line terminal shows 36).
fn assert_shows(shown: &[String], want: &[String]) {
    assert!(!shown.is_empty(), "nothing shown; the report: {want:?}");
    assert!(shown.len() <= want.len(), "{shown:?}\n{want:?}");
    assert_eq!(shown, &want[..shown.len()]);
    if shown.len() < want.len() {
        assert!(
            shown.len() + 4 >= ROWS as usize,
            "rows left out with room on the screen: {shown:?}\n{want:?}"
        );
    }
}

#[test]
fn zooms_equal_the_filtered_reports() {
    let dir = tempfile::tempdir().unwrap();
    let data = recording(dir.path());
    let want = stdio_rows(&data, &[]);
    let mut t = browse(&data, &[]);
    // The row of `work` (the hot program's own function).
    let work = want
        .iter()
        .position(|r| r.ends_with("[.] work"))
        .expect("a row for work");
    t.send("j".repeat(work).as_bytes());

    // t: the thread of the selected entry; totals and rows of --tid.
    t.send(b"t");
    let lines = t.lines();
    let head = title(&lines);
    let tid: i32 = head
        .split("Thread: hot(")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no thread zoom in the title: {head}"));
    let tid_s = tid.to_string();
    assert!(
        head.contains(&stdio_title(&data, &["--tid", &tid_s])),
        "{head}"
    );
    assert_shows(&screen_rows(&lines), &stdio_rows(&data, &["--tid", &tid_s]));
    // t again zooms out (and the selection goes back to the top).
    t.send(b"t");
    assert_eq!(
        screen_rows(&t.lines()),
        want[..screen_rows(&t.lines()).len()]
    );
    t.send("j".repeat(work).as_bytes());

    // d: the shared object of the selected entry (hot): the --dsos report.
    t.send(b"d");
    let lines = t.lines();
    assert!(title(&lines).contains("DSO: hot"), "{}", title(&lines));
    assert!(title(&lines).contains(&stdio_title(&data, &["--dsos", "hot"])));
    let in_dso = stdio_rows(&data, &["--dsos", "hot"]);
    assert_shows(&screen_rows(&lines), &in_dso);
    // t on top of d (on the first row: which rows --dsos keeps depends on which sample made
    // each entry first, perf's rule): both zooms at once, as both filters give them.
    assert!(!in_dso.is_empty());
    t.send(b"t");
    let lines = t.lines();
    let head = title(&lines);
    assert!(head.contains("DSO: hot"), "{head}");
    let tid2: i32 = head
        .split("Thread: ")
        .nth(1)
        .and_then(|r| r.split('(').nth(1))
        .and_then(|r| r.split(')').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no thread zoom in the title: {head}"));
    assert_shows(
        &screen_rows(&lines),
        &stdio_rows(&data, &["--dsos", "hot", "--tid", &tid2.to_string()]),
    );
    t.send(b"\x1b");
    assert!(!title(&t.lines()).contains("DSO:"));
    // Back where it started: every shown row as before any zoom.
    let rows = screen_rows(&t.lines());
    assert_eq!(rows, want[..rows.len()]);

    // a: the annotate view of work, on its hottest instruction, with the
    // percentages `sear annotate --stdio` prints.
    t.send("j".repeat(work).as_bytes());
    t.send(b"a");
    let lines = t.wait_for("the annotate view", 30, |l| {
        l.first().is_some_and(|x| x.starts_with("Annotate work"))
    });
    let text = stdout_of(&run_ok(
        sear()
            .args(["annotate", "--stdio", "-s", "work", "-d", "hot", "-i"])
            .arg(&data),
    ));
    let expand = |l: &str| {
        let mut out = String::new();
        for c in l.chars() {
            if c == '\t' {
                let n = 8 - out.chars().count() % 8;
                out.push_str(&" ".repeat(n));
            } else {
                out.push(c);
            }
        }
        out.trim_end().to_owned()
    };
    let stdio: Vec<String> = text.lines().map(expand).collect();
    let insn = |l: &str| {
        l.split_once(':')
            .and_then(|(v, _)| v.trim().parse::<f64>().ok())
    };
    let body = &lines[1..lines.len() - 1];
    let on_screen: Vec<&String> = body.iter().filter(|l| insn(l).is_some()).collect();
    assert!(on_screen.len() > 3, "{}", lines.join("\n"));
    for l in &on_screen {
        assert!(
            stdio.contains(l),
            "not in sear annotate's text: {l}\n{text}"
        );
    }
    let hottest = stdio
        .iter()
        .filter_map(|l| Some((insn(l)?, l)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap();
    assert!(
        on_screen.contains(&hottest.1),
        "the hottest instruction {} is not on screen",
        hottest.1
    );
    // q goes back to the table.
    t.send(b"q");
    assert!(t.lines().last().unwrap().contains("help on key bindings"));
    t.send(b"\x03");
    assert_eq!(t.wait_exit(10), Some(0));
    assert_eq!(t.cooked(), (true, true));
}

#[test]
fn events_switch_and_the_terminal_survives_signals_and_resizes() {
    let dir = tempfile::tempdir().unwrap();
    have_perf();
    let data = perf_record(
        dir.path(),
        "two.data",
        &["-e", "cpu-clock,task-clock", "-g", "-F", "1000"],
        &two_process_workload(dir.path()),
    );
    let mut t = browse(&data, &["--time", "10%/2"]);
    let lines = t.lines();
    // The time range in force is in the title.
    assert!(
        title(&lines).contains("time slices: 10%/2"),
        "{}",
        title(&lines)
    );
    assert!(title(&lines).contains("'cpu-clock"), "{}", title(&lines));
    // s: the next event's table (the text report's second section).
    t.send(b"s");
    let lines = t.lines();
    assert!(title(&lines).contains("'task-clock"), "{}", title(&lines));
    let text = text_report(&data, &["--time", "10%/2"]);
    let second = rows_of(text.split("# Samples:").nth(2).unwrap());
    let rows = screen_rows(&lines);
    assert_eq!(rows[..], second[..rows.len()]);
    // A smaller terminal: the table is drawn again to fit.
    t.resize(20, 100);
    let lines = t.lines();
    assert!(
        lines[19].contains("help on key bindings"),
        "{}",
        lines.join("\n")
    );
    let rows = screen_rows(&lines);
    assert!(rows.len() >= second.len().min(17), "{}", lines.join("\n"));
    let cut = |l: &String| {
        l.chars()
            .take(100)
            .collect::<String>()
            .trim_end()
            .to_owned()
    };
    assert_eq!(
        rows,
        second[..rows.len()].iter().map(cut).collect::<Vec<_>>()
    );
    // SIGTERM from outside: the terminal is restored all the same.
    unsafe { libc::kill(t.child.id() as i32, libc::SIGTERM) };
    assert_ne!(t.wait_exit(10), Some(0));
    assert_eq!(t.cooked(), (true, true));
    assert_eq!(t.cursor_shown_on_main_screen(), (true, true));
}

#[test]
fn no_browser_without_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let data = recording(dir.path());
    // A pipe: the text report.
    let out = run_ok(sear().args(["report", "--tui", "-i"]).arg(&data));
    assert!(stdout_of(&out).contains("# Samples:"));
    // TERM=dumb on a terminal, or --stdio: text too.
    // (A short report: it must fit on the screen.)
    for (term, args) in [
        ("dumb", &["--no-pager", "--percent-limit", "20"][..]),
        ("xterm", &["--stdio", "--no-pager", "--percent-limit", "20"]),
    ] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_sear"));
        c.args(["report", "-g", "none", "-i"]).arg(&data).args(args);
        let mut t = Tty::spawn_with_term(c, ROWS, COLS, term);
        assert_eq!(t.wait_exit(30), Some(0));
        let screen = t.screen();
        assert!(screen.contains("# Samples:"), "{term} {args:?}: {screen}");
    }
}

/// `sear annotate` on a terminal: perf's annotate browser, one function at a time in the
/// order `sear annotate --stdio` prints them, each page's lines that text's lines, starting on
/// the hottest instruction; Right moves to the next function, Left back, q quits and leaves
/// the terminal as it was. `--stdio` prints the text instead.
#[test]
fn annotate_opens_its_browser_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let data = recording(dir.path());
    let text = stdout_of(&run_ok(
        sear().args(["annotate", "--stdio", "-i"]).arg(&data),
    ));
    // The functions in the text's order, from each section's `<name>:` line.
    let names: Vec<String> = text
        .split(" Percent |")
        .skip(1)
        .filter_map(|sec| {
            sec.lines().find_map(|l| {
                let inner = l.trim_end().strip_suffix(">:")?;
                Some(inner.rsplit_once('<')?.1.to_owned())
            })
        })
        .collect();
    assert!(names.len() >= 2, "{text}");
    let mut c = Command::new(env!("CARGO_BIN_EXE_sear"));
    c.args(["annotate", "-i"]).arg(&data);
    let mut t = Tty::spawn(c, ROWS, COLS);
    let first = format!("Annotate {}:", names[0]);
    // (The whole first screen: a fresh-clone CI run read it when its title
    // had come and its key line not yet.)
    let lines = t.wait_for("the annotate browser", 60, |l| {
        l.first().is_some_and(|x| x.starts_with(&first))
            && l.last()
                .is_some_and(|x| x.contains("Right/Tab next function"))
    });
    assert!(
        lines[0].contains(&format!("[1/{}]", names.len())),
        "{}",
        lines[0]
    );
    assert!(
        lines.last().unwrap().contains("Right/Tab next function"),
        "{}",
        lines.last().unwrap()
    );
    // The page's lines are the text's (tabs expanded), and the hottest instruction of the
    // first function is on screen.
    let expand = |l: &str| {
        let mut out = String::new();
        for ch in l.chars() {
            if ch == '\t' {
                out.push_str(&" ".repeat(8 - out.chars().count() % 8));
            } else {
                out.push(ch);
            }
        }
        out.trim_end().to_owned()
    };
    let first_section: Vec<String> = text
        .split(" Percent |")
        .nth(1)
        .unwrap()
        .lines()
        .map(expand)
        .collect();
    let insn = |l: &str| {
        l.split_once(':')
            .and_then(|(v, _)| v.trim().parse::<f64>().ok())
    };
    let body: Vec<&String> = lines[1..lines.len() - 1]
        .iter()
        .filter(|l| !l.is_empty())
        .collect();
    for l in &body {
        assert!(
            first_section.iter().any(|x| x == *l) || l.contains("Percent |"),
            "not in the text: {l}"
        );
    }
    let hottest = first_section
        .iter()
        .filter_map(|l| Some((insn(l)?, l)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap();
    assert!(body.contains(&hottest.1), "{} not on screen", hottest.1);
    // Right: the next function; Left: back.
    t.send(b"\x1b[C");
    let second = format!("Annotate {}:", names[1]);
    t.wait_for("the next function", 10, |l| {
        l.first().is_some_and(|x| x.starts_with(&second))
    });
    t.send(b"\x1b[D");
    t.wait_for("the first function again", 10, |l| {
        l.first().is_some_and(|x| x.starts_with(&first))
    });
    t.send(b"q");
    assert_eq!(t.wait_exit(10), Some(0));
    assert_eq!(t.cooked(), (true, true));
    assert_eq!(t.cursor_shown_on_main_screen(), (true, true));
}
