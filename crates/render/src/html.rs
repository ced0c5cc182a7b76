//! `sear html`'s page: one self-contained HTML file (the template's CSS and
//! JavaScript inline, the [`Summary`] embedded as JSON) with a flame graph,
//! the top-symbols table, thread and event filters and a source view. The
//! page draws everything from the embedded data; nothing is fetched.
//!
//! The data is columnar to stay small: functions as string ids, call-tree
//! nodes as (distance to the parent, function), weights and source lines
//! as flat integer arrays, per time slot for the timeline (see the
//! template's first lines for the decoding). The JSON is gzipped and
//! embedded as base64 (a third of its size: the per-slot sums repeat
//! much); the page inflates it with the browser's `DecompressionStream`.

use std::io::{self, Write};

use profile::summary::Summary;
use serde::Serialize;
use std::collections::HashMap;

/// The page; `/*SEAR_DATA*/` and `SEAR_TITLE` are replaced.
const TEMPLATE: &str = include_str!("html/report.html");

/// What the page shows above its views.
#[derive(Debug, Clone, Default)]
pub struct PageInfo {
    /// The recording's name (file name).
    pub name: String,
    /// Free text under the title (host, command line, ...).
    pub detail: String,
}

#[derive(Serialize)]
struct Data<'a> {
    version: u32,
    name: &'a str,
    detail: &'a str,
    /// Seconds between the first and last sample (0 unknown).
    seconds: f64,
    /// The time slots: the first sample's time in nanoseconds (a string:
    /// JSON numbers lose digits past 2^53), nanoseconds per slot, slots.
    slot_first: String,
    slot_ns: u64,
    slots: u32,
    events: &'a [String],
    /// Per thread: pid, tid, comm (a string id).
    threads: Vec<[i64; 3]>,
    strings: Vec<&'a str>,
    /// Per function: name and dso (string ids), kernel (0/1).
    fn_name: Vec<u32>,
    fn_dso: Vec<u32>,
    fn_kernel: Vec<u8>,
    /// Per node: its id minus its parent's id (the parent of an outermost
    /// frame is -1), and its function.
    node_up: Vec<u32>,
    node_fn: Vec<u32>,
    /// event, thread, slot, node, self function, samples, period; repeated.
    weights: Vec<u64>,
    /// event, thread, slot, self function, inner function, file, line,
    /// samples, period; repeated.
    lines: Vec<u64>,
    files: &'a [String],
    /// file, first line, the lines' text; repeated.
    sources: Vec<(u32, u32, &'a [String])>,
}

/// Writes the page for `s` to `out`.
pub fn write_html<W: Write>(mut out: W, s: &Summary, info: &PageInfo) -> io::Result<()> {
    let json = embedded(&data_json(s, info)?)?;
    let title = escape_html(&format!("sear: {}", info.name));
    let (head, tail) = TEMPLATE
        .split_once("/*SEAR_DATA*/")
        .ok_or_else(|| io::Error::other("the HTML template has no data slot"))?;
    out.write_all(head.replace("SEAR_TITLE", &title).as_bytes())?;
    out.write_all(json.as_bytes())?;
    out.write_all(tail.as_bytes())?;
    Ok(())
}

/// `json` gzipped and in base64 without padding (so no `=`, `<`, `:` or
/// `(`: nothing in it can end the `<script>` element or look like a URL).
fn embedded(json: &str) -> io::Result<String> {
    use flate2::{write::GzEncoder, Compression};
    let mut z = GzEncoder::new(Vec::with_capacity(json.len() / 4), Compression::new(4));
    z.write_all(json.as_bytes())?;
    Ok(data_encoding::BASE64_NOPAD.encode(&z.finish()?))
}

/// The page's data as JSON.
fn data_json(s: &Summary, info: &PageInfo) -> io::Result<String> {
    let mut strings = Strings::default();
    let threads = s
        .threads
        .iter()
        .map(|t| {
            [
                i64::from(t.pid),
                i64::from(t.tid),
                i64::from(strings.id(&t.comm)),
            ]
        })
        .collect();
    let fn_name = s.functions.iter().map(|f| strings.id(&f.name)).collect();
    let fn_dso = s.functions.iter().map(|f| strings.id(&f.dso)).collect();
    let fn_kernel = s.functions.iter().map(|f| u8::from(f.kernel)).collect();
    let node_up = s
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| match n.parent {
            Some(p) => i as u32 - p,
            None => i as u32 + 1,
        })
        .collect();
    let node_fn = s.nodes.iter().map(|n| n.function).collect();
    let mut weights = Vec::with_capacity(s.weights.len() * 7);
    for w in &s.weights {
        weights.extend([
            u64::from(w.event),
            u64::from(w.thread),
            u64::from(w.slot),
            u64::from(w.node),
            u64::from(w.self_function),
            w.samples,
            w.period,
        ]);
    }
    let mut lines = Vec::with_capacity(s.lines.len() * 9);
    for l in &s.lines {
        lines.extend([
            u64::from(l.event),
            u64::from(l.thread),
            u64::from(l.slot),
            u64::from(l.self_function),
            u64::from(l.inner_function),
            u64::from(l.file),
            u64::from(l.line),
            l.samples,
            l.period,
        ]);
    }
    let seconds = s
        .time_range
        .map_or(0.0, |(a, b)| b.saturating_sub(a) as f64 / 1e9);
    let data = Data {
        version: 2,
        name: &info.name,
        detail: &info.detail,
        seconds,
        slot_first: s.slots.first.to_string(),
        slot_ns: s.slots.width,
        slots: s.slots.count,
        events: &s.events,
        threads,
        strings: strings.list,
        fn_name,
        fn_dso,
        fn_kernel,
        node_up,
        node_fn,
        weights,
        lines,
        files: &s.files,
        sources: s
            .sources
            .iter()
            .map(|x| (x.file, x.first, x.text.as_slice()))
            .collect(),
    };
    serde_json::to_string(&data).map_err(io::Error::other)
}

/// Interned strings, in first-use order.
#[derive(Default)]
struct Strings<'a> {
    list: Vec<&'a str>,
    ids: HashMap<&'a str, u32>,
}

impl<'a> Strings<'a> {
    fn id(&mut self, t: &'a str) -> u32 {
        if let Some(&i) = self.ids.get(t) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(t);
        self.ids.insert(t, i);
        i
    }
}

/// `t` as HTML text.
fn escape_html(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
