//! `sear flame`: the SVG is well-formed XML with one `<g>` per frame (plus the
//! root "all"), the title set, and --inverted, --reverse, --minwidth, --width,
//! --colors and --flamechart changing the graph as they should; bad input
//! gives warnings and a placeholder graph, damaged recordings a clear error.

mod textcli;

use quick_xml::events::Event;
use quick_xml::Reader;
use textcli::sear;

/// One frame of the graph: its hover title and its box.
#[derive(Debug, Clone)]
struct FrameBox {
    title: String,
    y: f64,
    x_pct: f64,
    w_pct: f64,
    fill: String,
}

impl FrameBox {
    fn name(&self) -> &str {
        self.title.rsplit_once(" (").map_or(&self.title, |(n, _)| n)
    }
}

#[derive(Debug)]
struct Svg {
    title: String,
    width: f64,
    frames: Vec<FrameBox>,
}

/// Parses the SVG; panics unless it is well-formed (balanced, matching tags).
fn parse(svg: &[u8]) -> Svg {
    let text = std::str::from_utf8(svg).expect("SVG is UTF-8");
    let mut r = Reader::from_str(text);
    let mut stack: Vec<String> = Vec::new();
    let mut out = Svg {
        title: String::new(),
        width: 0.0,
        frames: Vec::new(),
    };
    // Text being collected, and for which element.
    let mut text_of: Option<&'static str> = None;
    let mut buf = String::new();
    let mut current: Option<FrameBox> = None;
    let attr = |e: &quick_xml::events::BytesStart<'_>, key: &str| -> Option<String> {
        e.attributes()
            .map(|a| a.expect("well-formed attribute"))
            .find(|a| a.key.as_ref() == key.as_bytes())
            .map(|a| {
                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .expect("attribute value")
                    .into_owned()
            })
    };
    loop {
        let ev = r
            .read_event()
            .unwrap_or_else(|e| panic!("malformed SVG at byte {}: {e}", r.buffer_position()));
        match ev {
            Event::Start(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                if name == "svg" && stack.is_empty() {
                    out.width = attr(&e, "width").unwrap().parse().unwrap();
                }
                if name == "text" && attr(&e, "id").as_deref() == Some("title") {
                    text_of = Some("graph title");
                    buf.clear();
                }
                if name == "g" && stack.last().is_some_and(|p| p == "svg") && stack.len() == 2 {
                    current = Some(FrameBox {
                        title: String::new(),
                        y: 0.0,
                        x_pct: 0.0,
                        w_pct: 0.0,
                        fill: String::new(),
                    });
                }
                if name == "title" && current.is_some() {
                    text_of = Some("frame title");
                    buf.clear();
                }
                stack.push(name);
            }
            Event::Empty(e) if e.name().as_ref() == b"rect" => {
                if let Some(f) = current.as_mut() {
                    let pct = |v: String| v.trim_end_matches('%').parse::<f64>().unwrap();
                    f.y = attr(&e, "y").unwrap().parse().unwrap();
                    f.x_pct = pct(attr(&e, "x").unwrap());
                    f.w_pct = pct(attr(&e, "width").unwrap());
                    f.fill = attr(&e, "fill").unwrap();
                }
            }
            Event::End(e) => {
                let name = stack.pop().expect("an end tag without a start");
                assert_eq!(name.as_bytes(), e.name().as_ref());
                match (name.as_str(), text_of) {
                    ("text", Some("graph title")) => {
                        out.title = buf.clone();
                        text_of = None;
                    }
                    ("title", Some("frame title")) => {
                        current.as_mut().unwrap().title = buf.clone();
                        text_of = None;
                    }
                    ("g", _) => {
                        if let Some(f) = current.take() {
                            out.frames.push(f);
                        }
                    }
                    _ => {}
                }
            }
            Event::Text(t) if text_of.is_some() => buf.push_str(&t.decode().unwrap()),
            Event::GeneralRef(g) if text_of.is_some() => {
                let name = g.decode().unwrap();
                buf.push_str(match name.as_ref() {
                    "lt" => "<",
                    "gt" => ">",
                    "amp" => "&",
                    "quot" => "\"",
                    "apos" => "'",
                    other => panic!("unexpected entity {other}"),
                });
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    out
}

const FOLDED: &str = "main;parse;lex 3\nmain;parse 1\nmain;eval 2\n";

fn flame(args: &[&str], input: &[u8]) -> Svg {
    let mut all = vec!["flame"];
    all.extend_from_slice(args);
    let out = sear(&all, input);
    assert_eq!(out.code, 0, "sear {all:?}: {}", out.stderr);
    parse(&out.stdout)
}

fn frame<'a>(svg: &'a Svg, name: &str) -> &'a FrameBox {
    svg.frames
        .iter()
        .find(|f| f.name() == name)
        .unwrap_or_else(|| panic!("no frame {name} in {:?}", svg.frames))
}

#[test]
fn one_group_per_frame_and_the_title() {
    let svg = flame(
        &["--title", "Parse <time> & more", "--countname", "ms"],
        FOLDED.as_bytes(),
    );
    assert_eq!(svg.title, "Parse <time> & more");
    let mut names: Vec<&str> = svg.frames.iter().map(FrameBox::name).collect();
    names.sort();
    assert_eq!(names, ["all", "eval", "lex", "main", "parse"]);
    let main = frame(&svg, "main");
    assert_eq!(main.title, "main (6 ms, 100.00%)");
    assert!((frame(&svg, "eval").w_pct - 100.0 / 3.0).abs() < 0.01);
    // Callees sit above their callers.
    assert!(frame(&svg, "lex").y < frame(&svg, "parse").y);
    assert!(frame(&svg, "parse").y < main.y);
    assert!(main.y < frame(&svg, "all").y);
    assert_eq!(svg.width, 1200.0);
    assert_eq!(flame(&["--width", "800"], FOLDED.as_bytes()).width, 800.0);
    // flamegraph.pl's `-w` (Getopt takes a unique prefix of --width).
    assert_eq!(flame(&["-w", "2560"], FOLDED.as_bytes()).width, 2560.0);
    // Default title.
    assert_eq!(flame(&[], FOLDED.as_bytes()).title, "Flame Graph");
}

#[test]
fn inverted_puts_roots_on_top() {
    let svg = flame(&["--inverted"], FOLDED.as_bytes());
    assert_eq!(svg.title, "Icicle Graph");
    assert!(frame(&svg, "all").y < frame(&svg, "main").y);
    assert!(frame(&svg, "parse").y < frame(&svg, "lex").y);
}

#[test]
fn reverse_roots_stacks_at_their_leaves() {
    let svg = flame(&["--reverse"], FOLDED.as_bytes());
    let all_y = frame(&svg, "all").y;
    let level1: Vec<&str> = svg
        .frames
        .iter()
        .filter(|f| f.y < all_y && f.y > all_y - 20.0)
        .map(FrameBox::name)
        .collect();
    let mut level1 = level1;
    level1.sort();
    assert_eq!(level1, ["eval", "lex", "parse"]);
    // main is now the top of every tower: three of them.
    assert_eq!(svg.frames.iter().filter(|f| f.name() == "main").count(), 3);
}

#[test]
fn minwidth_drops_narrow_frames() {
    // eval is 1/3 of 1180 px (393 px); lex 1/2 (590 px).
    let svg = flame(&["--minwidth", "400"], FOLDED.as_bytes());
    assert!(svg.frames.iter().all(|f| f.name() != "eval"));
    assert!(svg.frames.iter().any(|f| f.name() == "lex"));
    let svg = flame(&["--minwidth", "0"], FOLDED.as_bytes());
    assert!(svg.frames.iter().any(|f| f.name() == "eval"));
    // As a percentage: eval is 33.3%, lex 50%.
    let svg = flame(&["--minwidth", "40%"], FOLDED.as_bytes());
    assert!(svg.frames.iter().all(|f| f.name() != "eval"));
    assert!(svg.frames.iter().any(|f| f.name() == "lex"));
    let out = sear(&["flame", "--minwidth", "-1"], FOLDED.as_bytes());
    assert_eq!(out.code, 2);
}

#[test]
fn flamechart_keeps_input_order() {
    let timeline = "main;b 1\nmain;a 1\n";
    let sorted = flame(&[], timeline.as_bytes());
    assert!(frame(&sorted, "a").x_pct < frame(&sorted, "b").x_pct);
    let chart = flame(&["--flamechart"], timeline.as_bytes());
    assert!(frame(&chart, "b").x_pct < frame(&chart, "a").x_pct);
}

#[test]
fn marked_frames_get_their_own_colours() {
    let folded =
        "java;start_thread;Interpreter_[j];sys_write_[k] 2\njava;start_thread;inlined_[i] 1\n";
    let svg = flame(&[], folded.as_bytes());
    let rgb = |name: &str| -> (u8, u8, u8) {
        let f = &frame(&svg, name).fill;
        let v: Vec<u8> = f
            .trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(',')
            .map(|x| x.trim().parse().unwrap())
            .collect();
        (v[0], v[1], v[2])
    };
    let (r, g, b) = rgb("sys_write");
    assert!(
        r > 150 && g > 100 && b < 100,
        "kernel frames are orange: {r},{g},{b}"
    );
    let (r, g, b) = rgb("Interpreter");
    assert!(g > r && g > b, "JIT frames are green: {r},{g},{b}");
    let (r, g, b) = rgb("inlined");
    assert!(b > r && g > r, "inline frames are aqua: {r},{g},{b}");
    // An explicit palette wins.
    let red = flame(&["--colors", "red"], folded.as_bytes());
    assert!(red.frames.iter().all(|f| {
        let v: Vec<u32> = f
            .fill
            .trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(',')
            .map(|x| x.parse().unwrap())
            .collect();
        v[0] >= v[1] && v[0] >= v[2]
    }));
    let out = sear(&["flame", "--colors", "nope"], folded.as_bytes());
    assert_eq!(out.code, 2, "{}", out.stderr);
}

#[test]
fn perf_script_text_is_folded_on_the_way() {
    let text = "prog 7 [000] 1.0: 5 cycles:\n\tffffffff81 do_sys ([kernel.kallsyms])\n\t4005b1 main (/bin/prog)\n\n\
                prog 7 [000] 1.1: 9 instructions:\n\t4005b1 other (/bin/prog)\n\n";
    let svg = flame(&[], text.as_bytes());
    assert_eq!(frame(&svg, "prog").title, "prog (5 samples, 100.00%)");
    // Kernel frames are marked (flamegraph.pl hides the mark in the name, keeps the colour).
    assert!(
        frame(&svg, "do_sys").fill.ends_with(",0)"),
        "{:?}",
        frame(&svg, "do_sys")
    );
    let svg = flame(&["--event", "instructions"], text.as_bytes());
    assert_eq!(frame(&svg, "other").title, "other (9 samples, 100.00%)");
}

#[test]
fn bad_input_gives_warnings_and_a_graph() {
    for (what, input) in [
        ("empty", &b""[..]),
        ("garbage", b"no counts here\n;;;\n 12 \n"),
        ("huge count", b"a;b 1180591620717411303424\n"),
    ] {
        let out = sear(&["flame"], input);
        assert_eq!(out.code, 0, "{what}: {}", out.stderr);
        assert!(out.stderr.contains("warn"), "{what}: {}", out.stderr);
        let svg = parse(&out.stdout);
        assert!(svg.frames.is_empty(), "{what}");
    }
    let out = sear(&["flame"], b"a;b\xff 2\na;c 18446744073709551615\na;d 5\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("not valid UTF-8"), "{}", out.stderr);
    assert!(out.stderr.contains("total overflow"), "{}", out.stderr);
    let svg = parse(&out.stdout);
    frame(&svg, "b\u{fffd}");
    // Control characters would make the XML unreadable: replaced.
    let out = sear(&["flame"], b"a;b\x01c 2\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    frame(&parse(&out.stdout), "b\u{fffd}c");
    frame(&svg, "d");
    // a;c would make the total overflow: left out.
    assert!(svg.frames.iter().all(|f| f.name() != "c"));
}

#[test]
fn output_file_and_recordings() {
    let dir = tempfile::tempdir().unwrap();
    let folded = dir.path().join("in.folded");
    std::fs::write(&folded, FOLDED).unwrap();
    let svg_path = dir.path().join("out.svg");
    let out = sear(
        &[
            "flame",
            folded.to_str().unwrap(),
            "-o",
            svg_path.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.is_empty());
    let svg = parse(&std::fs::read(&svg_path).unwrap());
    assert_eq!(svg.frames.len(), 5);

    let rec = dir.path().join("perf.data");
    let mut bytes = b"PERFILE2".to_vec();
    bytes.extend_from_slice(&[0; 64]);
    std::fs::write(&rec, &bytes).unwrap();
    let out = sear(&["flame", "-i", rec.to_str().unwrap()], b"");
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("perf.data") && out.stderr.contains("byte offset"),
        "{}",
        out.stderr
    );
}
