//! `sear html` in a real browser: a two-thread C program with two hot functions is recorded
//! with perf, `sear html` writes its page, and two browsers open it with the same checks:
//! headless Chromium (Debian's `chromium`, driven over the DevTools pipe as in
//! tests/flame_browser.rs) and headless Firefox (Debian's `firefox-esr`, driven over WebDriver
//! BiDi). The test checks what a person sees: the table's self shares equal perf report's, a
//! mouse click on a frame zooms the flame graph, typing in the search box paints frames and
//! shows the matched share, choosing a thread narrows the totals to that thread's samples, and
//! clicking a function shows its hot source line with its text. The file must fetch nothing.
//! Damaged recordings give an error or a warning naming the file, never a panic.
mod common;

use std::path::{Path, PathBuf};

use common::browser::Browser;
use common::chromium::Chromium;
use common::firefox::Firefox;
use common::{build_c, have_perf, perf, perf_record, run_ok, sear, stdout_of};
use serde_json::{json, Value};

const PROGRAM: &str = r#"#include <pthread.h>
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) long work_a(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) x += i * 3 + (x >> 2); /* HOT_A */
    return x;
}

__attribute__((noinline)) long work_b(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) x ^= i * 7 + (x << 1); /* HOT_B */
    return x;
}

__attribute__((noinline)) void middle_a(void) {
    for (int k = 0; k < 40; k++) sink += work_a(2000000);
}

static void *thread_b(void *arg) {
    (void)arg;
    for (int k = 0; k < 25; k++) sink += work_b(2000000);
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, thread_b, NULL);
    middle_a();
    pthread_join(t, NULL);
    printf("%ld\n", sink);
    return 0;
}
"#;

/// The 1-based line of `PROGRAM` holding `marker`.
fn line_of(marker: &str) -> usize {
    PROGRAM
        .lines()
        .position(|l| l.contains(marker))
        .expect("marker in the program")
        + 1
}

/// Builds and records the program; returns (recording, source file).
fn record(dir: &Path) -> (PathBuf, PathBuf) {
    let bin = build_c(
        dir,
        "prog",
        PROGRAM,
        &["-O0", "-g", "-fno-omit-frame-pointer", "-pthread"],
    );
    let data = perf_record(
        dir,
        "perf.data",
        &["-e", "cpu-clock", "-F", "2000", "-g"],
        &[bin.display().to_string()],
    );
    (data, dir.join("prog.c"))
}

/// The data a page embeds: gzipped JSON in base64 (without padding).
fn page_data(html: &str) -> Value {
    use std::io::Read;
    let start = html
        .find("<script id=\"sear-data\" type=\"text/plain\" data-encoding=\"gzip-base64\">")
        .expect("the data element");
    let rest = &html[start..];
    let text = &rest[rest.find('>').unwrap() + 1..rest.find("</script>").unwrap()];
    let gz = data_encoding::BASE64_NOPAD
        .decode(text.trim().as_bytes())
        .expect("base64");
    let mut json = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut json)
        .expect("gzipped JSON");
    serde_json::from_str(&json).expect("JSON")
}

fn sear_html(data: &Path, out: &Path) -> String {
    run_ok(sear().arg("html").arg("-i").arg(data).arg("-o").arg(out));
    std::fs::read_to_string(out).expect("the page is UTF-8 text")
}

/// perf report's self share of each symbol (`--no-children --sort sym`).
fn perf_self_shares(data: &Path) -> Vec<(String, f64)> {
    let out = run_ok(
        perf()
            .args(["report", "--stdio", "--no-children", "--sort", "sym", "-i"])
            .arg(data),
    );
    stdout_of(&out)
        .lines()
        .filter_map(|l| {
            let (pct, rest) = l.trim().split_once("%  ")?;
            let pct: f64 = pct.parse().ok()?;
            let name = rest.trim().split_once(' ')?.1.trim().to_string();
            Some((name, pct))
        })
        .collect()
}

/// perf report's sample count per thread id (`--sort pid -n`: `tid:comm`).
fn perf_thread_samples(data: &Path) -> Vec<(i64, u64)> {
    let out = run_ok(
        perf()
            .args([
                "report",
                "--stdio",
                "--no-children",
                "--sort",
                "pid",
                "-n",
                "-g",
                "none",
                "-i",
            ])
            .arg(data),
    );
    stdout_of(&out)
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('%'))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let _pct = f.next()?;
            let n: u64 = f.next()?.parse().ok()?;
            let tid: i64 = f.next()?.split(':').next()?.parse().ok()?;
            Some((tid, n))
        })
        .collect()
}

/// The symbols table as shown: (children %, self %, samples, symbol, dso) per row (the page
/// shows the dso before the symbol, as perf report).
fn table(ch: &mut impl Browser) -> Vec<(f64, f64, u64, String, String)> {
    let v = ch.eval(
        "[...document.querySelectorAll('#symbols tbody tr')].map(r => [...r.cells].map(c => c.textContent))",
    );
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let c = |i: usize| r[i].as_str().unwrap().to_string();
            let p = |i: usize| c(i).trim_end_matches('%').parse::<f64>().unwrap();
            let sym = c(4);
            let sym = sym
                .strip_prefix("[.] ")
                .or_else(|| sym.strip_prefix("[k] "))
                .unwrap_or(&sym)
                .to_string();
            (p(0), p(1), c(2).parse().unwrap(), sym, c(3))
        })
        .collect()
}

fn row<'a>(
    t: &'a [(f64, f64, u64, String, String)],
    name: &str,
) -> Option<&'a (f64, f64, u64, String, String)> {
    t.iter().find(|r| r.3 == name)
}

/// Centre of the first element `selector` matches, scrolled into view.
fn centre_of(ch: &mut impl Browser, selector: &str) -> (f64, f64) {
    let v = ch.eval(&format!(
        "(() => {{ const e = document.querySelector({}); if (!e) return null; e.scrollIntoView({{block: 'center'}}); const b = e.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; }})()",
        json!(selector)
    ));
    assert!(v.is_array(), "nothing matches {selector}");
    (v[0].as_f64().unwrap(), v[1].as_f64().unwrap())
}

/// Sets the value of the control `id` and fires `event` on it, as a change by hand does.
fn set_value(ch: &mut impl Browser, id: &str, event: &str, value: &Value) {
    ch.eval(&format!(
        "(() => {{ const e = document.getElementById({}); e.value = {value}; e.dispatchEvent(new Event({})); return true; }})()",
        json!(id),
        json!(event)
    ));
}

/// Flame graph frames as drawn: (name, left px, width px, classes).
fn frames(ch: &mut impl Browser) -> Vec<(String, f64, f64, String)> {
    let v = ch.eval(
        "[...document.querySelectorAll('#flame .f')].map(d => { const n = Number(d.dataset.n); \
         const b = d.getBoundingClientRect(); return [n < 0 ? 'all' : window.searFrameName(n), b.x, b.width, d.className]; })",
    );
    v.as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f[0].as_str().unwrap().to_string(),
                f[1].as_f64().unwrap(),
                f[2].as_f64().unwrap(),
                f[3].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_report_works_in_chromium() {
    the_report_works(Chromium::launch);
}

#[test]
fn the_report_works_in_firefox() {
    the_report_works(Firefox::launch);
}

/// Records the program, writes its page and checks it in the browser `launch` starts.
fn the_report_works<B: Browser>(launch: impl FnOnce() -> B) {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let (data, src) = record(dir.path());
    let page = dir.path().join("report.html");
    let html = sear_html(&data, &page);

    // Self-contained: nothing to fetch.
    for bad in ["http://", "https://", "src=", "href=", "url(", "@import"] {
        assert!(!html.contains(bad), "the page contains `{bad}`");
    }
    assert!(html.contains("<script id=\"sear-data\""));

    let mut ch = launch();
    ch.open(&page);
    ch.wait_for("window.searReady === true");
    // A test hook to name frames (node → function name).
    ch.eval("window.searFrameName = n => { const D = window.searData; return D.strings[D.fn_name[D.node_fn[n]]]; }; true");

    // The table: perf report's self shares.
    let t = table(&mut ch);
    let perf_self = perf_self_shares(&data);
    for name in ["work_a", "work_b"] {
        let want = perf_self
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("perf report has no {name}: {perf_self:?}"))
            .1;
        let r = row(&t, name).unwrap_or_else(|| panic!("no row {name}: {t:?}"));
        assert!(
            (r.1 - want).abs() <= 0.01 + 1e-9,
            "{name}: self {}% in the page, {want}% in perf report",
            r.1
        );
        assert!(r.0 >= r.1, "children ≥ self for {name}: {r:?}");
        assert!(r.2 > 0, "samples of {name}");
        assert_eq!(r.4, "prog", "{name}'s dso");
    }
    // Sorted by self, heaviest first; a click on the header sorts by symbol.
    assert!(
        t.windows(2).all(|w| w[0].1 >= w[1].1),
        "sorted by self: {t:?}"
    );
    let (x, y) = centre_of(&mut ch, "#symbols th[data-key=name]");
    ch.click(x, y);
    let by_name = table(&mut ch);
    assert!(
        by_name.windows(2).all(|w| w[0].3 <= w[1].3),
        "sorted by name: {by_name:?}"
    );
    // The filter box narrows the table.
    // (A kernel function such as task_work_run matches too when a sample
    // lands in it: the rows are those whose names contain the text.)
    set_value(&mut ch, "filter", "input", &json!("work_"));
    let filtered = table(&mut ch);
    assert!(
        filtered.iter().all(|r| r.3.contains("work_")),
        "{filtered:?}"
    );
    for name in ["work_a", "work_b"] {
        assert!(filtered.iter().any(|r| r.3 == name), "{name}: {filtered:?}");
    }
    let matching = by_name.iter().filter(|r| r.3.contains("work_")).count();
    assert_eq!(filtered.len(), matching, "{filtered:?} of {by_name:?}");
    set_value(&mut ch, "filter", "input", &json!(""));

    // Zoom: a real click on work_a's frame makes it fill the graph and hides work_b.
    let before = frames(&mut ch);
    let all_w = before.iter().find(|f| f.0 == "all").unwrap().2;
    let a = before
        .iter()
        .filter(|f| f.0 == "work_a")
        .max_by(|x, y| x.2.total_cmp(&y.2))
        .unwrap_or_else(|| panic!("no frame work_a: {before:?}"))
        .clone();
    assert!(a.2 < all_w * 0.9, "work_a is narrower than the graph");
    assert!(before.iter().any(|f| f.0 == "work_b"));
    let sel = format!(
        "[...document.querySelectorAll('#flame .f')].find(d => Math.abs(d.getBoundingClientRect().width - {}) < 0.01 && window.searFrameName(Number(d.dataset.n)) === 'work_a')",
        a.2
    );
    let pos = ch.eval(&format!(
        "(() => {{ const d = {sel}; d.scrollIntoView({{block: 'center'}}); const b = d.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; }})()"
    ));
    ch.click(pos[0].as_f64().unwrap(), pos[1].as_f64().unwrap());
    let zoomed = frames(&mut ch);
    let za = zoomed
        .iter()
        .find(|f| f.0 == "work_a" && !f.3.contains("anc"))
        .unwrap_or_else(|| panic!("work_a after zoom: {zoomed:?}"));
    // (The graph as wide as it is drawn now: the source the click opens can make the page
    // scroll, and a browser with scroll bars then draws it narrower.)
    let all_now = zoomed.iter().find(|f| f.0 == "all").unwrap().2;
    assert!(
        (all_now - all_w).abs() < 20.0,
        "the graph keeps its width: {all_now} after, {all_w} before"
    );
    assert!(
        (za.2 - all_now).abs() < 1.0,
        "the clicked frame fills the width: {za:?}, graph {all_now}"
    );
    assert!(
        zoomed.iter().all(|f| f.0 != "work_b"),
        "other stacks hide: {zoomed:?}"
    );
    assert!(zoomed
        .iter()
        .any(|f| f.0 == "middle_a" && f.3.contains("anc")));
    assert_eq!(
        ch.eval("getComputedStyle(document.getElementById('reset')).display !== 'none'"),
        json!(true)
    );
    // The click also opened work_a's source.
    ch.wait_for("document.getElementById('src-title').textContent === 'Source: work_a'");
    let (x, y) = centre_of(&mut ch, "#reset");
    ch.click(x, y);
    let reset = frames(&mut ch);
    assert_eq!(reset.len(), before.len(), "Reset zoom restores every frame");

    // Search: typing paints work_b's frames and shows their share.
    let (x, y) = centre_of(&mut ch, "#search");
    ch.click(x, y);
    ch.type_text("work_b");
    let found = frames(&mut ch);
    let painted: Vec<_> = found
        .iter()
        .filter(|f| f.3.split(' ').any(|c| c == "m"))
        .collect();
    assert!(!painted.is_empty(), "search paints frames: {found:?}");
    assert!(painted.iter().all(|f| f.0 == "work_b"), "{painted:?}");
    let colour = ch.eval("getComputedStyle(document.querySelector('#flame .f.m')).backgroundColor");
    assert_eq!(colour, json!("rgb(230, 0, 230)"));
    let matched = ch.eval("document.getElementById('matched').textContent");
    let matched = matched.as_str().unwrap();
    let m: f64 = matched
        .strip_prefix("Matched: ")
        .and_then(|x| x.strip_suffix('%'))
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("matched text: {matched:?}"));
    let b_children = row(&t, "work_b").unwrap().0;
    assert!(
        (m - b_children).abs() <= 0.051,
        "Matched {m}% but work_b's children share is {b_children}%"
    );

    // Threads: the option of thread_b's thread (tid ≠ pid) narrows everything to it.
    let per_thread = perf_thread_samples(&data);
    let opts = ch
        .eval("[...document.getElementById('thread').options].map(o => [o.value, o.textContent])");
    let pid = per_thread.iter().map(|t| t.0).min().unwrap();
    let (tid, want) = *per_thread
        .iter()
        .find(|t| t.0 != pid)
        .unwrap_or_else(|| panic!("no second thread in perf report: {per_thread:?}"));
    let opt = opts
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o[1].as_str().unwrap().contains(&format!("/{tid} ")))
        .unwrap_or_else(|| panic!("no option for thread {tid}: {opts}"))
        .clone();
    assert!(
        opt[1]
            .as_str()
            .unwrap()
            .contains(&format!("({want} samples)")),
        "the option counts perf's {want} samples: {opt}"
    );
    let total_all = ch.eval("Number(document.getElementById('total').dataset.samples)");
    set_value(&mut ch, "thread", "change", &opt[0]);
    let total_thread = ch.eval("Number(document.getElementById('total').dataset.samples)");
    assert_eq!(total_thread, json!(want), "totals of thread {tid}");
    assert_ne!(total_thread, total_all);
    let tt = table(&mut ch);
    assert!(
        row(&tt, "work_a").is_none(),
        "work_a ran on the main thread: {tt:?}"
    );
    let b = row(&tt, "work_b").unwrap();
    assert!(b.1 > 90.0, "work_b is most of its thread: {b:?}");
    assert!(frames(&mut ch)
        .iter()
        .all(|f| f.0 != "work_a" && f.0 != "middle_a"));
    set_value(&mut ch, "thread", "change", &json!("all"));
    assert_eq!(
        ch.eval("Number(document.getElementById('total').dataset.samples)"),
        total_all
    );

    // Source: a click on work_b's row shows the hot loop's line and its text.
    let f = ch.eval(
        "(() => { const r = [...document.querySelectorAll('#symbols tbody tr')].find(r => r.cells[4].textContent.endsWith(' work_b')); r.scrollIntoView({block: 'center'}); const b = r.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; })()",
    );
    ch.click(f[0].as_f64().unwrap(), f[1].as_f64().unwrap());
    ch.wait_for("document.getElementById('src-title').textContent === 'Source: work_b'");
    let hot = ch.eval("document.querySelector('#src-lines tbody tr td').textContent");
    let line = line_of("HOT_B");
    assert_eq!(
        hot,
        json!(format!("prog.c:{line}")),
        "work_b's hottest line"
    );
    let text = ch.eval(&format!(
        "document.querySelector('pre.src .ln.hot[data-line=\"{line}\"]')?.textContent ?? null"
    ));
    assert!(
        text.as_str().is_some_and(|t| t.contains("/* HOT_B */")),
        "the hot line's source text is shown: {text}"
    );
    assert!(src.exists());
}

/// Two phases on the main thread (work_a, then the same loop as work_b) beside a thread
/// running work_c the whole time: a time range early in the recording surely holds
/// work_a and work_c, and hardly any work_b.
const PHASES: &str = r#"#include <pthread.h>
#include <stdio.h>

static volatile long sink;
static volatile int done;

__attribute__((noinline)) long work_a(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) x += i * 3 + (x >> 2); /* HOT_A */
    return x;
}

__attribute__((noinline)) long work_b(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) x += i * 3 + (x >> 2); /* HOT_B */
    return x;
}

__attribute__((noinline)) long work_c(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) x ^= i * 7 + (x << 1); /* HOT_C */
    return x;
}

static void *background(void *arg) {
    (void)arg;
    while (!done) sink += work_c(100000);
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, background, NULL);
    for (int k = 0; k < 40; k++) sink += work_a(8000000);
    for (int k = 0; k < 40; k++) sink += work_b(8000000);
    done = 1;
    pthread_join(t, NULL);
    printf("%ld\n", sink);
    return 0;
}
"#;

/// A `--stdio -n` report's sections: (event, samples of its rows, rows), each row the
/// fields of a line that has a share (`%`), split on white space. (The header's count is
/// rounded by perf: `1K`.)
type Section = (String, u64, Vec<Vec<String>>);

fn sections(out: &str) -> Vec<Section> {
    let mut all: Vec<Section> = Vec::new();
    for l in out.lines() {
        if let Some(rest) = l.strip_prefix("# Samples: ") {
            // `N of event 'NAME'` and, with --time, ` (time slices: ...)`
            let ev = rest.split('\'').nth(1).unwrap();
            all.push((ev.to_string(), 0, Vec::new()));
        } else if !l.starts_with('#') && l.contains('%') {
            if let Some(s) = all.last_mut() {
                let row: Vec<String> = l.split_whitespace().map(str::to_string).collect();
                s.1 += row[1].parse::<u64>().unwrap();
                s.2.push(row);
            }
        }
    }
    all
}

/// `report --stdio --no-children -g none -n ARGS -i data` by `tool` (sear or perf), as sections.
fn report_sections(mut tool: std::process::Command, data: &Path, args: &[&str]) -> Vec<Section> {
    let o = run_ok(
        tool.args(["report", "--stdio", "--no-children", "-g", "none", "-n"])
            .args(args)
            .arg("-i")
            .arg(data),
    );
    sections(&stdout_of(&o))
}

/// (self %, samples) of `sym` in a `--sort sym` section's rows (0 without a row).
fn sym_row(rows: &[Vec<String>], sym: &str) -> (f64, u64) {
    rows.iter()
        .find(|r| r.len() >= 4 && r[3] == sym)
        .map_or((0.0, 0), |r| {
            (
                r[0].trim_end_matches('%').parse().unwrap(),
                r[1].parse().unwrap(),
            )
        })
}

/// The timeline lanes as drawn: (kind, label, samples, tid or -1).
fn lanes(ch: &mut impl Browser) -> Vec<(String, String, u64, i64)> {
    let v = ch.eval(
        "[...document.querySelectorAll('#timeline .tl-row')].map(r => [r.className.replace('tl-row ', '').replace(' chosen', ''), r.querySelector('.tl-label').textContent, Number(r.dataset.samples), Number(r.dataset.tid || -1)])",
    );
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l[0].as_str().unwrap().to_string(),
                l[1].as_str().unwrap().to_string(),
                l[2].as_u64().unwrap(),
                l[3].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_timeline_works_in_chromium() {
    the_timeline_works(Chromium::launch);
}

#[test]
fn the_timeline_works_in_firefox() {
    the_timeline_works(Firefox::launch);
}

/// The timeline: lanes per event and per thread count what perf report counts; dragging
/// across them chooses a range whose table, flame graph, source lines and thread totals are
/// `sear report --time RANGE`'s (and perf report's shares), the URL carries the range and
/// opening that URL shows the same, and "Whole recording" undoes it.
fn the_timeline_works<B: Browser>(launch: impl FnOnce() -> B) {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let bin = build_c(
        dir.path(),
        "phases",
        PHASES,
        &["-O0", "-g", "-fno-omit-frame-pointer", "-pthread"],
    );
    let data = perf_record(
        dir.path(),
        "perf.data",
        &["-e", "cpu-clock,task-clock", "-F", "1000", "-g"],
        &[bin.display().to_string()],
    );
    let page = dir.path().join("report.html");
    sear_html(&data, &page);

    let mut ch = launch();
    ch.open(&page);
    ch.wait_for("window.searReady === true");

    // A lane per event and per thread (of the first event), with perf report's totals.
    let perf_events = report_sections(perf(), &data, &["--sort", "sym"]);
    let perf_threads = report_sections(perf(), &data, &["--sort", "pid"]);
    let shown = lanes(&mut ch);
    let events: Vec<_> = shown.iter().filter(|l| l.0 == "ev").collect();
    assert_eq!(events.len(), 2, "{shown:?}");
    for (lane, (ev, n, _)) in events.iter().zip(&perf_events) {
        assert_eq!((&lane.1, lane.2), (ev, *n), "event lane {lane:?}");
    }
    let threads: Vec<_> = shown.iter().filter(|l| l.0 == "t").collect();
    assert_eq!(threads.len(), 2, "{shown:?}");
    for r in &perf_threads[0].2 {
        // `tid:comm`
        let tid: i64 = r[2].split(':').next().unwrap().parse().unwrap();
        let lane = threads
            .iter()
            .find(|l| l.3 == tid)
            .unwrap_or_else(|| panic!("no lane for thread {tid}: {shown:?}"));
        assert_eq!(lane.2, r[1].parse::<u64>().unwrap(), "thread {tid}'s lane");
    }
    let total_all = ch.eval("Number(document.getElementById('total').dataset.samples)");

    // Drag across the first 30% of a lane.
    let lane = ch.eval(
        "(() => { const b = document.querySelector('#timeline canvas').getBoundingClientRect(); return [b.left, b.top + b.height / 2, b.width]; })()",
    );
    let (left, y, width) = (
        lane[0].as_f64().unwrap(),
        lane[1].as_f64().unwrap(),
        lane[2].as_f64().unwrap(),
    );
    ch.drag((left + 2.0, y), (left + width * 0.3, y));
    ch.wait_for("document.getElementById('range').dataset.time !== undefined");
    let time = ch.eval("document.getElementById('range').dataset.time");
    let time = time.as_str().unwrap().to_string();
    assert_eq!(
        ch.eval("location.hash"),
        json!(format!("#time={time}")),
        "the URL carries the range"
    );

    // The table is sear report's for that range, row by row, and perf report's shares.
    let ours = report_sections(sear(), &data, &["--sort", "sym", "--time", &time]);
    let theirs = report_sections(perf(), &data, &["--sort", "sym", "--time", &time]);
    let t = table(&mut ch);
    let (want, in_range) = (&ours[0].2, ours[0].1);
    assert_eq!(
        ch.eval("Number(document.getElementById('total').dataset.samples)"),
        json!(in_range),
        "samples in the range"
    );
    assert!(
        json!(in_range) != total_all,
        "the range holds fewer samples"
    );
    for r in want {
        let (pct, n) = sym_row(want, &r[3]);
        let got = row(&t, &r[3]).unwrap_or_else(|| panic!("no row {}: {t:?}", r[3]));
        assert_eq!(got.2, n, "{}'s samples in the range", r[3]);
        assert!((got.1 - pct).abs() < 0.006, "{}: {} vs {pct}", r[3], got.1);
    }
    assert_eq!(
        t.iter().filter(|r| r.2 > 0).count(),
        want.len(),
        "the same symbols: {t:?} against {want:?}"
    );
    for name in ["work_a", "work_c"] {
        let perf_pct = sym_row(&theirs[0].2, name).0;
        let got = row(&t, name).unwrap().1;
        assert!(
            (got - perf_pct).abs() <= 0.01 + 1e-9,
            "{name}: {got}% in the page, {perf_pct}% in perf report --time {time}"
        );
    }
    let (a, b) = (sym_row(want, "work_a").1, sym_row(want, "work_b").1);
    assert!(
        a > 0 && b * 4 <= a,
        "early on, work_a ({a}) and not work_b ({b})"
    );

    // The flame graph is the range's.
    assert_eq!(
        ch.eval("Number(document.querySelector('#flame .f[data-n=\"-1\"]').dataset.s)"),
        json!(in_range)
    );

    // Source lines: work_a's hot line counts the range's samples at it.
    let by_line = report_sections(sear(), &data, &["--sort", "sym,srcline", "--time", &time]);
    let line = format!("phases.c:{}", {
        PHASES.lines().position(|l| l.contains("HOT_A")).unwrap() + 1
    });
    let at_line: u64 = by_line[0]
        .2
        .iter()
        .find(|r| r[3] == "work_a" && r[4] == line)
        .unwrap_or_else(|| panic!("no work_a {line} row: {:?}", by_line[0].2))[1]
        .parse()
        .unwrap();
    let pos = ch.eval(
        "(() => { const r = [...document.querySelectorAll('#symbols tbody tr')].find(r => r.cells[4].textContent.endsWith(' work_a')); r.scrollIntoView({block: 'center'}); const b = r.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; })()",
    );
    ch.click(pos[0].as_f64().unwrap(), pos[1].as_f64().unwrap());
    ch.wait_for("document.getElementById('src-title').textContent === 'Source: work_a'");
    let hot = ch.eval(
        "[...document.querySelector('#src-lines tbody tr').cells].slice(0, 2).map(c => c.textContent)",
    );
    assert_eq!(hot, json!([line, at_line.to_string()]), "work_a's hot line");

    // A thread's name chooses it: the totals are its samples in the range.
    let per_thread = report_sections(sear(), &data, &["--sort", "pid", "--time", &time]);
    let main_tid = threads.iter().map(|l| l.3).min().unwrap();
    let want_main: u64 = per_thread[0]
        .2
        .iter()
        .find(|r| r[2].starts_with(&format!("{main_tid}:")))
        .unwrap()[1]
        .parse()
        .unwrap();
    let (x, y) = centre_of(
        &mut ch,
        &format!("#timeline .tl-row[data-tid=\"{main_tid}\"] .tl-label"),
    );
    ch.click(x, y);
    ch.wait_for(&format!(
        "Number(document.getElementById('total').dataset.samples) === {want_main}"
    ));
    assert!(ch
        .eval("document.getElementById('thread').value")
        .as_str()
        .unwrap()
        .starts_with("t:"));
    let tt = table(&mut ch);
    assert!(
        row(&tt, "work_c").is_none(),
        "work_c is the other thread's: {tt:?}"
    );
    set_value(&mut ch, "thread", "change", &json!("all"));

    // An event's name chooses the event: task-clock's samples in the range.
    let (x, y) = centre_of(&mut ch, "#timeline .tl-row.ev:nth-child(2) .tl-label");
    ch.click(x, y);
    let n2 = ours[1].1;
    assert_eq!(ours[1].0, "task-clock");
    ch.wait_for(&format!(
        "Number(document.getElementById('total').dataset.samples) === {n2}"
    ));

    // The URL, opened afresh, shows the same range.
    let url = format!("file://{}#time={time}", page.display());
    ch.open_url("about:blank");
    ch.open_url(&url);
    ch.wait_for("window.searReady === true");
    assert_eq!(
        ch.eval("document.getElementById('range').dataset.time"),
        json!(time)
    );
    assert_eq!(table(&mut ch), t, "the shared URL shows the same table");

    // "Whole recording" undoes the range.
    let (x, y) = centre_of(&mut ch, "#clear-range");
    ch.click(x, y);
    ch.wait_for("location.hash === ''");
    assert_eq!(
        ch.eval("Number(document.getElementById('total').dataset.samples)"),
        total_all
    );
}

/// With the source file gone, the page still names the hot line and says the text is missing.
#[test]
fn missing_sources_are_named() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let (data, src) = record(dir.path());
    std::fs::remove_file(&src).unwrap();
    let html = sear_html(&data, &dir.path().join("r.html"));
    let d = page_data(&html);
    assert_eq!(d["sources"], json!([]), "nothing to embed");
    assert!(
        d["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.as_str().unwrap().ends_with("/prog.c")),
        "the file is still named: {}",
        d["files"]
    );
}

/// A program whose samples land in thousands of distinct call paths: `pick` recurses 10
/// levels through one of four functions chosen at random, the leaf spinning a little.
const MANY_PATHS: &str = r#"#include <stdlib.h>
volatile unsigned long sink;
static unsigned long rng = 88172645463325252UL;
static unsigned long next(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
__attribute__((noinline)) void f0(int d); __attribute__((noinline)) void f1(int d);
__attribute__((noinline)) void f2(int d); __attribute__((noinline)) void f3(int d);
__attribute__((noinline)) void pick(int d) {
    if (d == 0) { for (int i = 0; i < 20000; i++) sink += i; return; }
    switch (next() & 3) { case 0: f0(d - 1); break; case 1: f1(d - 1); break;
                          case 2: f2(d - 1); break; default: f3(d - 1); }
}
void f0(int d) { pick(d); sink++; }
void f1(int d) { pick(d); sink++; }
void f2(int d) { pick(d); sink++; }
void f3(int d) { pick(d); sink++; }
int main(void) { for (long k = 0; k < 60000; k++) pick(10); return 0; }
"#;

/// `--max-nodes` bounds the page: past the budget the narrowest call paths merge into their
/// callers, the page and stderr say so, and every sum the table shows is unchanged (the
/// samples per self function equal the unpruned page's).
#[test]
fn a_node_budget_bounds_the_page_and_keeps_the_sums() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let bin = build_c(
        dir.path(),
        "paths",
        MANY_PATHS,
        &["-O1", "-fno-omit-frame-pointer", "-fno-inline"],
    );
    let data = dir.path().join("paths.data");
    run_ok(
        sear()
            .args(["record", "-q", "-g", "-F", "4000", "-o"])
            .arg(&data)
            .arg(&bin),
    );
    let page = |max: &str| -> (Value, String, u64) {
        let out = dir.path().join(format!("p{max}.html"));
        let o = run_ok(
            sear()
                .args(["html", "--max-nodes", max, "-i"])
                .arg(&data)
                .arg("-o")
                .arg(&out),
        );
        let size = std::fs::metadata(&out).unwrap().len();
        let html = std::fs::read_to_string(&out).unwrap();
        (
            page_data(&html),
            String::from_utf8_lossy(&o.stderr).into_owned(),
            size,
        )
    };
    let (all, err_all, size_all) = page("0");
    let nodes_all = all["node_fn"].as_array().unwrap().len();
    // (A few hundred samples of random 10-level paths already make thousands of nodes.)
    assert!(nodes_all > 1000, "many call paths: {nodes_all} nodes");
    assert!(!err_all.contains("merged"), "{err_all}");
    let (cut, err_cut, size_cut) = page("500");
    let nodes_cut = cut["node_fn"].as_array().unwrap().len();
    assert!(
        nodes_cut <= 501,
        "{nodes_cut} nodes (the budget and the pruned root)"
    );
    assert!(size_cut < size_all, "{size_cut} against {size_all} bytes");
    let said = err_cut
        .lines()
        .filter(|l| l.contains("merged into their callers") && l.contains("paths.data"))
        .count();
    assert_eq!(said, 1, "{err_cut}");
    assert!(
        cut["detail"]
            .as_str()
            .unwrap()
            .contains("merged into their callers"),
        "the page says so: {}",
        cut["detail"]
    );
    // Samples per (self function name), summed from the weights: unchanged.
    let per_self = |d: &Value| -> std::collections::BTreeMap<String, u64> {
        let strings = d["strings"].as_array().unwrap();
        let fn_name = d["fn_name"].as_array().unwrap();
        let w = d["weights"].as_array().unwrap();
        let mut out = std::collections::BTreeMap::new();
        for row in w.chunks(7) {
            let f = row[4].as_u64().unwrap() as usize;
            let name = strings[fn_name[f].as_u64().unwrap() as usize]
                .as_str()
                .unwrap();
            *out.entry(name.to_owned()).or_default() += row[5].as_u64().unwrap();
        }
        out
    };
    let (a, c) = (per_self(&all), per_self(&cut));
    assert_eq!(a, c);
    assert!(a.get("pick").copied().unwrap_or(0) > 0, "{a:?}");
}

/// Damaged input: a cut header is an error naming the file; a recording cut in its data
/// is read up to the cut, with a warning, and still makes a page. Never a panic.
#[test]
fn truncated_recordings_give_errors_not_panics() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let (data, _) = record(dir.path());
    let bytes = std::fs::read(&data).unwrap();

    let head = dir.path().join("head.data");
    std::fs::write(&head, &bytes[..40]).unwrap();
    let o = sear()
        .args(["html", "-i"])
        .arg(&head)
        .arg("-o")
        .arg(dir.path().join("head.html"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&head.display().to_string()), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let half = dir.path().join("half.data");
    std::fs::write(&half, &bytes[..bytes.len() / 2]).unwrap();
    let out = dir.path().join("half.html");
    let o = sear()
        .args(["html", "-i"])
        .arg(&half)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    if o.status.code() == Some(0) {
        assert!(
            err.contains(&half.display().to_string()),
            "a warning names the file: {err}"
        );
        assert!(std::fs::read_to_string(&out).unwrap().contains("sear-data"));
    } else {
        assert!(err.contains(&half.display().to_string()), "{err}");
    }
}

/// `--help` explains the page.
#[test]
fn help_teaches() {
    let o = run_ok(sear().args(["html", "--help"]));
    let h = stdout_of(&o);
    for want in [
        "self-contained",
        "zoom",
        "search",
        "thread",
        "source",
        "timeline",
        "#time=",
        "-o",
    ] {
        assert!(h.contains(want), "--help mentions {want}: {h}");
    }
}

/// Page load time of a given report (BENCHMARKS.md): `SEAR_HTML_PAGE=report.html cargo test
/// --test html -- --ignored --nocapture page_load` (in Chromium; `SEAR_BROWSER=firefox` for
/// Firefox). Prints, for three fresh loads, the time from navigation start until the page's
/// script has drawn the flame graph and the table (`window.searLoadMs`, set when it finishes), and
/// the time it takes to redraw for a time range given in the URL (`window.searRangeMs`).
#[test]
#[ignore = "a measurement: needs SEAR_HTML_PAGE"]
fn page_load_time() {
    let page = std::env::var("SEAR_HTML_PAGE").expect("SEAR_HTML_PAGE=path/to/report.html");
    let page = std::fs::canonicalize(page).unwrap();
    match std::env::var("SEAR_BROWSER").as_deref() {
        Ok("firefox") => measure_page_load(&mut Firefox::launch(), &page),
        _ => measure_page_load(&mut Chromium::launch(), &page),
    }
}

fn measure_page_load(ch: &mut impl Browser, page: &Path) {
    for run in 1..=3 {
        ch.open(Path::new("/dev/null"));
        let t = std::time::Instant::now();
        ch.open(page);
        ch.wait_for("window.searReady === true");
        let ms = ch.eval("window.searLoadMs");
        let steps = ch.eval(
            "[window.searInflateStart, window.searParseStart, window.searParsed].map(Math.round)",
        );
        // A range (the middle half of the recording, set through the URL as a shared link
        // would): the time the page takes to redraw for it.
        ch.eval("(() => { const D = window.searData, w = BigInt(D.slot_ns), f = BigInt(D.slot_first), q = BigInt(D.slots / 4); const s = n => (n / 1000000000n) + '.' + (n % 1000000000n).toString().padStart(9, '0'); location.hash = '#time=' + s(f + q * w) + ',' + s(f + 3n * q * w - 1n); return true; })()");
        ch.wait_for("document.getElementById('range').dataset.time !== undefined");
        let range_ms = ch.eval("Math.round(window.searRangeMs)");
        ch.eval("location.hash = ''; true");
        let rows = ch.eval("document.querySelectorAll('#symbols tbody tr').length");
        let frames = ch.eval("document.querySelectorAll('#flame .f').length");
        println!(
            "run {run}: ready after {ms} ms (page's clock; base64 decoded, inflated, parsed at {steps} ms), {:.0} ms seen by the test; {rows} table rows, {frames} frames drawn; a range redrawn in {range_ms} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}
