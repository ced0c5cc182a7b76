//! `sear flame`'s SVG in a real browser: headless Chromium (Debian's `chromium`) opens the
//! graph and the test uses it as a person would, through Chromium's DevTools protocol: real
//! mouse clicks on frames zoom (the frame fills the width, its ancestors stay full width, the
//! rest is hidden, "Reset Zoom" appears and restores the view), and the Search button (with
//! `window.prompt` answered by the test) paints the matching frames in the search colour and
//! shows "Matched: X%" as computed from the folded input. The SVG is also checked to be
//! well-formed XML, and a copy without its script must fail the same checks (so they can fail).
//!
//! The protocol runs over `--remote-debugging-pipe` (fd 3 to Chromium, fd 4 from it, JSON
//! messages ended by NUL): no WebSocket, no port. Every wait has a time limit and Chromium's
//! whole process group is killed at the end, so a stuck browser fails the test instead of
//! hanging it. Chromium is required, never skipped: `apt-get install chromium`.

mod common;

use std::path::{Path, PathBuf};

use common::browser::Browser;
use common::chromium::Chromium;
use common::{build_c, have_perf, perf_record, run_ok, sear, stdout_of};
use serde_json::{json, Value};

/// inferno's search colour (`searchcolor` in the SVG's script).
const SEARCH_FILL: &str = "rgb(230,0,230)";

/// One frame (a `<g>` in `#frames`) as the page shows it now.
#[derive(Debug, Clone)]
struct Frame {
    name: String,
    class: String,
    /// The rect's x and width attributes, percent of the frames' width.
    x: f64,
    w: f64,
    /// inferno's `fg:x` / `fg:w`: position and width in samples.
    fx: u64,
    fw: u64,
    y: f64,
    fill: String,
    /// The fill the browser paints (`getComputedStyle`), normalised to `rgb(r,g,b)`.
    shown_fill: String,
    /// The group's computed `display` (`none` when hidden).
    display: String,
    /// The rect's rendered width and centre in CSS pixels.
    px: f64,
    cx: f64,
    cy: f64,
}

impl Frame {
    fn hidden(&self) -> bool {
        self.class.split(' ').any(|c| c == "hide")
    }
    fn parent(&self) -> bool {
        self.class.split(' ').any(|c| c == "parent")
    }
}

/// The graph's controls: "Reset Zoom", "Search" and "Matched: X%".
#[derive(Debug)]
struct Controls {
    unzoom_shown: bool,
    unzoom_at: (f64, f64),
    search_label: String,
    search_at: (f64, f64),
    matched: String,
    matched_shown: bool,
}

#[derive(Debug)]
struct View {
    frames: Vec<Frame>,
    controls: Controls,
}

const SNAPSHOT: &str = r#"(() => {
  const centre = e => { const b = e.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2, b.width]; };
  const shown = e => getComputedStyle(e).display !== 'none' && !e.classList.contains('hide');
  const frames = Array.from(document.getElementById('frames').children).map(g => {
    const r = g.querySelector('rect');
    const [cx, cy, px] = centre(r);
    const title = g.querySelector('title').textContent;
    return {
      name: title.replace(/ \([^(]*\)$/, ''),
      class: g.getAttribute('class') || '',
      x: parseFloat(r.getAttribute('x')), w: parseFloat(r.getAttribute('width')),
      fx: parseInt(r.getAttribute('fg:x')), fw: parseInt(r.getAttribute('fg:w')),
      y: parseFloat(r.getAttribute('y')),
      fill: r.getAttribute('fill'),
      shown_fill: getComputedStyle(r).fill.replace(/\s+/g, ''),
      display: getComputedStyle(g).display,
      px, cx, cy,
    };
  });
  const unzoom = document.getElementById('unzoom');
  const search = document.getElementById('search');
  const matched = document.getElementById('matched');
  return {
    frames,
    unzoom_shown: shown(unzoom), unzoom_at: centre(unzoom),
    search_label: search.textContent, search_at: centre(search),
    matched: matched.textContent, matched_shown: shown(matched),
  };
})()"#;

fn snapshot(c: &mut Chromium) -> View {
    let v = c.eval(SNAPSHOT);
    let f = |x: &Value| x.as_f64().unwrap_or_else(|| panic!("not a number: {x}"));
    let s = |x: &Value| x.as_str().unwrap_or_default().to_string();
    let frames = v["frames"]
        .as_array()
        .unwrap_or_else(|| panic!("no frames in the page: {v}"))
        .iter()
        .map(|g| Frame {
            name: s(&g["name"]),
            class: s(&g["class"]),
            x: f(&g["x"]),
            w: f(&g["w"]),
            fx: g["fx"].as_u64().unwrap(),
            fw: g["fw"].as_u64().unwrap(),
            y: f(&g["y"]),
            fill: s(&g["fill"]),
            shown_fill: s(&g["shown_fill"]),
            display: s(&g["display"]),
            px: f(&g["px"]),
            cx: f(&g["cx"]),
            cy: f(&g["cy"]),
        })
        .collect();
    let at = |x: &Value| (f(&x[0]), f(&x[1]));
    View {
        frames,
        controls: Controls {
            unzoom_shown: v["unzoom_shown"] == json!(true),
            unzoom_at: at(&v["unzoom_at"]),
            search_label: s(&v["search_label"]),
            search_at: at(&v["search_at"]),
            matched: s(&v["matched"]),
            matched_shown: v["matched_shown"] == json!(true),
        },
    }
}

impl View {
    fn total(&self) -> u64 {
        self.frames.iter().map(|f| f.fw).max().unwrap()
    }
    fn root(&self) -> &Frame {
        self.frames
            .iter()
            .find(|f| f.fw == self.total() && f.name == "all")
            .unwrap()
    }
    /// The frame called `name` starting at sample `fx` (names repeat).
    fn get(&self, name: &str, fx: u64) -> &Frame {
        self.frames
            .iter()
            .find(|f| f.name == name && f.fx == fx)
            .unwrap_or_else(|| panic!("no frame {name} at {fx}: {:?}", self.frames))
    }
    fn named(&self, name: &str) -> Vec<&Frame> {
        self.frames.iter().filter(|f| f.name == name).collect()
    }
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-3, "{what}: {a} != {b}");
}

/// How a frame relates to the clicked one `c`, by the graph's geometry
/// (roots at the bottom: larger y is nearer the root).
#[derive(Debug, PartialEq)]
enum Relation {
    Ancestor,
    SelfOrDescendant,
    Unrelated,
}

fn relation(f: &Frame, c: &Frame) -> Relation {
    let inside = f.fx >= c.fx && f.fx < c.fx + c.fw;
    if f.y > c.y && f.fx <= c.fx && f.fx + f.fw >= c.fx + c.fw {
        Relation::Ancestor
    } else if f.y <= c.y && inside {
        Relation::SelfOrDescendant
    } else {
        Relation::Unrelated
    }
}

/// Clicks frame `c` (as it was in `before`) and checks the zoomed view: `c` fills the width
/// (attribute and rendered pixels), its ancestors are full width and dimmed, its subtree is
/// rescaled to it, everything else is hidden, and "Reset Zoom" shows. Returns the new view.
fn click_and_check_zoom(ch: &mut Chromium, before: &View, c: &Frame) -> View {
    assert!(
        c.fw < before.total(),
        "zoom into a frame narrower than the root"
    );
    ch.click(c.cx, c.cy);
    let after = snapshot(ch);
    let full_px = before.root().px;
    assert_eq!(after.frames.len(), before.frames.len());
    for (b, a) in before.frames.iter().zip(&after.frames) {
        assert_eq!((&b.name, b.fx), (&a.name, a.fx), "frames keep their order");
        match relation(b, c) {
            Relation::Ancestor => {
                assert!(
                    a.parent() && !a.hidden(),
                    "ancestor {a:?} after clicking {c:?}"
                );
                close(a.w, 100.0, &format!("width of ancestor {}", a.name));
            }
            Relation::SelfOrDescendant => {
                assert!(
                    !a.hidden() && a.display != "none",
                    "{a:?} is in the zoomed subtree"
                );
                let scale = 100.0 / c.fw as f64;
                close(a.w, a.fw as f64 * scale, &format!("width of {}", a.name));
                close(
                    a.x,
                    (a.fx - c.fx) as f64 * scale,
                    &format!("x of {}", a.name),
                );
                close(a.px, full_px * a.fw as f64 / c.fw as f64, "rendered width");
            }
            Relation::Unrelated => {
                assert!(a.hidden(), "{a:?} should be hidden after clicking {c:?}");
                assert_eq!(a.display, "none", "{a:?} is hidden");
            }
        }
    }
    let clicked = after.get(&c.name, c.fx);
    close(clicked.w, 100.0, "the clicked frame's width");
    assert!(
        (clicked.px - full_px).abs() < 1.0,
        "the clicked frame is drawn {} px wide, the graph {full_px} px",
        clicked.px
    );
    assert!(
        after.controls.unzoom_shown,
        "Reset Zoom shows when zoomed: {:?}",
        after.controls
    );
    after
}

/// Clicks "Reset Zoom" and checks that every frame is back where it was in `orig`.
fn reset_zoom_and_check(ch: &mut Chromium, zoomed: &View, orig: &View) -> View {
    let (x, y) = zoomed.controls.unzoom_at;
    ch.click(x, y);
    let after = snapshot(ch);
    for (o, a) in orig.frames.iter().zip(&after.frames) {
        assert!(!a.hidden() && !a.parent(), "after Reset Zoom: {a:?}");
        assert_ne!(a.display, "none");
        close(a.x, o.x, &format!("x of {} after Reset Zoom", a.name));
        close(a.w, o.w, &format!("width of {} after Reset Zoom", a.name));
        assert!((a.px - o.px).abs() < 0.5, "{a:?} drawn as before: {o:?}");
    }
    assert!(!after.controls.unzoom_shown, "Reset Zoom hides itself");
    after
}

/// Answers the search prompt with `term`, clicks "Search" and checks the highlighting:
/// frames for which `matches(name)` holds are painted in the search colour, the rest keep
/// their fill, and "Matched: X%" says `expected_pct`. Then "Reset Search" restores the fills.
fn search_and_check(
    ch: &mut Chromium,
    orig: &View,
    term: &str,
    matches: &dyn Fn(&str) -> bool,
    expected_pct: &str,
) {
    ch.eval(&format!(
        "window.asked = 0; window.prompt = () => {{ window.asked++; return {}; }}; true",
        json!(term)
    ));
    let (x, y) = orig.controls.search_at;
    ch.click(x, y);
    assert_eq!(ch.eval("window.asked"), json!(1), "Search asks for a term");
    let found = snapshot(ch);
    let mut hits = 0;
    for (o, a) in orig.frames.iter().zip(&found.frames) {
        if matches(&a.name) {
            hits += 1;
            assert_eq!(a.fill, SEARCH_FILL, "{a:?} matches {term}");
            assert_eq!(
                a.shown_fill, SEARCH_FILL,
                "{a:?} is painted in the search colour"
            );
        } else {
            assert_eq!(a.fill, o.fill, "{a:?} does not match {term}");
            assert_ne!(a.shown_fill, SEARCH_FILL);
        }
    }
    assert!(hits > 0, "{term} matches some frame");
    assert!(found.controls.matched_shown, "{:?}", found.controls);
    assert_eq!(found.controls.matched, expected_pct, "search for {term}");
    assert_eq!(found.controls.search_label, "Reset Search");

    ch.click(x, y);
    let reset = snapshot(ch);
    for (o, a) in orig.frames.iter().zip(&reset.frames) {
        assert_eq!(a.fill, o.fill, "Reset Search restores {a:?}");
    }
    assert_eq!(reset.controls.search_label, "Search");
    assert!(!reset.controls.matched_shown, "{:?}", reset.controls);
}

/// inferno's "Matched: X%": the share of samples under a matching frame.
fn matched_text(folded: &str, matches: &dyn Fn(&str) -> bool) -> String {
    let (mut total, mut hit) = (0u64, 0u64);
    for line in folded.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        let n: u64 = n.parse().unwrap();
        total += n;
        if stack.split(';').any(matches) {
            hit += n;
        }
    }
    // The script's arithmetic: `100 * count / maxwidth` in doubles, then `toFixed(1)`
    // unless exactly 100.
    let pct = 100.0 * hit as f64 / total as f64;
    if pct == 100.0 {
        "Matched: 100%".into()
    } else {
        format!("Matched: {}%", to_fixed_1(pct))
    }
}

/// JavaScript's `x.toFixed(1)` for 0 <= x < 1e6: the exact value of `x` rounded to one
/// decimal, ties (x.25, x.75, which doubles hold exactly) to the larger; Rust's `{:.1}`
/// rounds the exact value too, but ties to even.
fn to_fixed_1(x: f64) -> String {
    let tie = (x * 4.0).fract() == 0.0 && (x * 2.0).fract() != 0.0;
    if tie {
        format!("{:.1}", (x * 10.0).ceil() / 10.0)
    } else {
        format!("{x:.1}")
    }
}

#[test]
fn to_fixed_1_rounds_as_javascript_does() {
    assert_eq!(to_fixed_1(45.833333), "45.8");
    assert_eq!(to_fixed_1(12.25), "12.3");
    assert_eq!(to_fixed_1(12.75), "12.8");
    assert_eq!(to_fixed_1(0.05), "0.1"); // 0.05 is a little above 0.05
    assert_eq!(to_fixed_1(50.0), "50.0");
}

/// Panics unless `svg` is well-formed XML (balanced, matching tags, valid syntax).
fn assert_well_formed(svg: &[u8]) {
    use quick_xml::events::Event;
    let text = std::str::from_utf8(svg).expect("the SVG is UTF-8");
    let mut r = quick_xml::Reader::from_str(text);
    let mut open: Vec<Vec<u8>> = Vec::new();
    let mut roots = 0;
    loop {
        match r.read_event() {
            Err(e) => panic!("malformed SVG at byte {}: {e}", r.buffer_position()),
            Ok(Event::Start(e)) => {
                if open.is_empty() {
                    roots += 1;
                }
                open.push(e.name().as_ref().to_vec());
            }
            Ok(Event::End(e)) => {
                let name = open.pop().expect("an end tag without a start tag");
                assert_eq!(name, e.name().as_ref(), "mismatched end tag");
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
        }
    }
    assert!(open.is_empty(), "unclosed elements: {open:?}");
    assert_eq!(roots, 1, "one root element");
}

/// `sear flame ARGS -o DIR/NAME`; returns the SVG's path after checking it is well-formed.
fn sear_flame(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let svg = dir.join(name);
    run_ok(sear().arg("flame").args(args).arg("-o").arg(&svg));
    assert_well_formed(&std::fs::read(&svg).unwrap());
    svg
}

/// Several roots, depths 1 to 4, a name at two places (`expr`) and a frame with no callees.
const FOLDED: &str = "\
main;parse;lex;next_char 5
main;parse;lex 3
main;parse;expr 4
main;eval;expr 2
main;eval;apply;call 6
main;init 1
worker;work 3
";

#[test]
fn zoom_and_search_work_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("in.folded");
    std::fs::write(&folded, FOLDED).unwrap();
    let svg = sear_flame(dir.path(), "flame.svg", &[folded.to_str().unwrap()]);

    let mut ch = Chromium::launch();
    ch.open(&svg);
    assert_eq!(
        ch.eval("document.getElementsByTagName('parsererror').length"),
        json!(0),
        "Chromium's XML parser accepts the SVG"
    );
    let orig = snapshot(&mut ch);
    let mut names: Vec<&str> = orig.frames.iter().map(|f| f.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "all",
            "apply",
            "call",
            "eval",
            "expr",
            "expr",
            "init",
            "lex",
            "main",
            "next_char",
            "parse",
            "work",
            "worker"
        ]
    );
    assert_eq!(orig.total(), 24);
    for f in &orig.frames {
        assert!(!f.hidden() && f.display != "none", "{f:?} shows at first");
        close(
            f.w,
            100.0 * f.fw as f64 / 24.0,
            &format!("width of {}", f.name),
        );
        assert!(f.px > 0.0, "{f:?} is drawn");
    }
    assert!(!orig.controls.unzoom_shown, "no Reset Zoom before zooming");

    // (a) Click `parse`: it fills the width, main and all are its dimmed ancestors, lex,
    // next_char and its expr are rescaled, everything else is hidden.
    let parse = orig.named("parse")[0].clone();
    let zoomed = click_and_check_zoom(&mut ch, &orig, &parse);
    let mut hidden: Vec<&str> = zoomed
        .frames
        .iter()
        .filter(|f| f.hidden())
        .map(|f| f.name.as_str())
        .collect();
    hidden.sort();
    assert_eq!(
        hidden,
        ["apply", "call", "eval", "expr", "init", "work", "worker"]
    );
    let lex = zoomed.named("lex")[0];
    close(lex.w, 100.0 * 8.0 / 12.0, "lex is 8 of parse's 12 samples");
    let mut parents: Vec<&str> = zoomed
        .frames
        .iter()
        .filter(|f| f.parent())
        .map(|f| f.name.as_str())
        .collect();
    parents.sort();
    assert_eq!(parents, ["all", "main"]);

    // Clicking a dimmed ancestor zooms out to it: eval and init are back, worker is not.
    let main = zoomed.named("main")[0].clone();
    let main_view = {
        ch.click(main.cx, main.cy);
        snapshot(&mut ch)
    };
    for f in &main_view.frames {
        let under_main = f.name != "worker" && f.name != "work";
        assert_eq!(!f.hidden(), under_main, "zoomed to main: {f:?}");
    }
    close(
        main_view.named("eval")[0].w,
        100.0 * 8.0 / 21.0,
        "eval in main",
    );

    // (b) Reset Zoom restores every frame.
    reset_zoom_and_check(&mut ch, &main_view, &orig);

    // (c) Search: the expr frames and next_char; 5 + 4 + 2 of 24 samples.
    let hit = |name: &str| name == "expr" || name == "next_char";
    let expected = matched_text(FOLDED, &hit);
    assert_eq!(expected, "Matched: 45.8%");
    search_and_check(&mut ch, &orig, "^(expr|next_char) ", &hit, &expected);
    // Both roots' children: every sample, and flamegraph.pl's "100%" without decimals.
    let roots = |name: &str| name == "main" || name == "worker";
    let expected = matched_text(FOLDED, &roots);
    assert_eq!(expected, "Matched: 100%");
    search_and_check(&mut ch, &orig, "^(main|worker) ", &roots, &expected);
}

/// The same checks on a copy of the SVG without its script must fail: clicks change nothing.
#[test]
fn the_checks_fail_without_the_script() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("in.folded");
    std::fs::write(&folded, FOLDED).unwrap();
    let svg = sear_flame(dir.path(), "flame.svg", &[folded.to_str().unwrap()]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let start = text.find("<script").expect("the SVG has a script");
    let end = text.find("</script>").expect("the script ends") + "</script>".len();
    let stripped = dir.path().join("stripped.svg");
    std::fs::write(&stripped, format!("{}{}", &text[..start], &text[end..])).unwrap();
    assert_well_formed(&std::fs::read(&stripped).unwrap());

    let mut ch = Chromium::launch();
    ch.open(&stripped);
    let orig = snapshot(&mut ch);
    let parse = orig.named("parse")[0].clone();
    let zoom = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        click_and_check_zoom(&mut ch, &orig, &parse);
    }));
    assert!(
        zoom.is_err(),
        "the zoom check passed on a graph without its script"
    );
    let after = snapshot(&mut ch);
    for (o, a) in orig.frames.iter().zip(&after.frames) {
        assert_eq!(
            (o.w, &o.class),
            (a.w, &a.class),
            "nothing moves without the script"
        );
    }
    let hit = |name: &str| name == "expr";
    let search = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        search_and_check(&mut ch, &orig, "^expr ", &hit, &matched_text(FOLDED, &hit));
    }));
    assert!(
        search.is_err(),
        "the search check passed on a graph without its script"
    );
}

const PROGRAM: &str = r#"
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void leaf_a(void) { for (unsigned long i = 0; i < 20000; i++) sink += i; }
__attribute__((noinline)) void leaf_b(void) { for (unsigned long i = 0; i < 10000; i++) sink ^= i; }
__attribute__((noinline)) void middle(void) { leaf_a(); leaf_b(); }
__attribute__((noinline)) void other(void) { leaf_b(); }
int main(void) {
    while (clock() < CLOCKS_PER_SEC / 3) { middle(); other(); }
    return 0;
}
"#;

/// A flame graph straight from a perf recording of a small C program zooms and searches too.
#[test]
fn a_graph_from_a_recording_zooms_and_searches() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let bin = build_c(
        dir.path(),
        "prog",
        PROGRAM,
        &["-O0", "-g", "-fno-omit-frame-pointer"],
    );
    let data = perf_record(
        dir.path(),
        "perf.data",
        &["-e", "cpu-clock", "-F", "2000", "-g"],
        &[bin.display().to_string()],
    );
    let svg = sear_flame(dir.path(), "rec.svg", &["-i", data.to_str().unwrap()]);
    // The same stacks as folded text, for the expected "Matched" figure.
    let folded = stdout_of(&run_ok(sear().arg("collapse").arg("-i").arg(&data)));

    let mut ch = Chromium::launch();
    ch.open(&svg);
    let orig = snapshot(&mut ch);
    let middle = orig
        .named("middle")
        .into_iter()
        .max_by_key(|f| f.fw)
        .unwrap_or_else(|| panic!("no frame `middle`: {:?}", orig.frames))
        .clone();
    let zoomed = click_and_check_zoom(&mut ch, &orig, &middle);
    assert!(zoomed.named("other").iter().all(|f| f.hidden()));
    reset_zoom_and_check(&mut ch, &zoomed, &orig);

    let hit = |name: &str| name == "leaf_b";
    let expected = matched_text(&folded, &hit);
    search_and_check(&mut ch, &orig, "^leaf_b ", &hit, &expected);
}
