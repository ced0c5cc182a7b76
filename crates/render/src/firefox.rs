//! The Firefox Profiler's processed profile format (what samply writes,
//! `preprocessedProfileVersion` 49 with per-thread string arrays; the
//! profiler upgrades it on load): one thread per recorded thread with its
//! samples (the first event's), stack, frame, function, resource and
//! string tables, libraries from the mappings, and categories that tell
//! kernel frames from user frames.

use std::collections::HashMap;
use std::io::{self, Write};

use profile::export::ExportProfile;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::{json, Value};

/// Category indexes of [`categories`].
const OTHER: u32 = 0;
const USER: u32 = 1;
const KERNEL: u32 = 2;

fn categories() -> Value {
    json!([
        {"name": "Other", "color": "grey", "subcategories": ["Other"]},
        {"name": "User", "color": "yellow", "subcategories": ["Other"]},
        {"name": "Kernel", "color": "orange", "subcategories": ["Other"]},
    ])
}

/// Per-thread tables being filled.
#[derive(Default)]
struct Tables {
    strings: Vec<String>,
    string_ids: HashMap<String, u32>,
    // stackTable
    stack_prefix: Vec<Option<u32>>,
    stack_frame: Vec<u32>,
    stack_category: Vec<u32>,
    stack_ids: HashMap<(Option<u32>, u32), u32>,
    // frameTable
    frame_address: Vec<i64>,
    frame_inline_depth: Vec<u32>,
    frame_category: Vec<u32>,
    frame_func: Vec<u32>,
    frame_line: Vec<Option<u32>>,
    frame_ids: HashMap<(u32, u32), u32>,
    // funcTable
    func_name: Vec<u32>,
    func_resource: Vec<i64>,
    func_file: Vec<Option<u32>>,
    func_ids: HashMap<(u32, i64), u32>,
    // resourceTable
    resource_lib: Vec<u32>,
    resource_name: Vec<u32>,
    resource_ids: HashMap<u32, u32>,
}

impl Tables {
    fn string(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_owned());
        self.string_ids.insert(s.to_owned(), i);
        i
    }
}

/// Writes `p` as a processed profile named `name`.
pub fn write_firefox<W: Write>(out: W, p: &ExportProfile, name: &str) -> io::Result<()> {
    // Libraries: one per mapped file.
    let mut libs: Vec<Value> = Vec::new();
    let mut lib_of_file: HashMap<&str, u32> = HashMap::new();
    let lib_of_mapping: Vec<u32> = p
        .mappings
        .iter()
        .map(|m| {
            *lib_of_file.entry(m.filename.as_str()).or_insert_with(|| {
                let base = m.filename.rsplit('/').next().unwrap_or(&m.filename);
                let id = m.build_id.clone().unwrap_or_default();
                // `Lib.arch` is a string; the export does not know the
                // recording's architecture, so it is empty (unknown).
                libs.push(json!({
                    "name": base, "path": m.filename, "debugName": base,
                    "debugPath": m.filename, "breakpadId": breakpad_id(&id),
                    "codeId": id, "arch": "",
                }));
                (libs.len() - 1) as u32
            })
        })
        .collect();
    let (first_time, last_time) = p.time_range.unwrap_or((0, 0));
    let interval_ms = {
        let (n, period) = p.totals().first().copied().unwrap_or((0, 0));
        match p.events.first() {
            Some(e) if e.unit == "nanoseconds" && n > 0 => period as f64 / n as f64 / 1e6,
            _ => 1.0,
        }
    };
    // (Each thread's tables are written as they are, not as JSON values:
    // a value per number would cost several times the tables.)
    let mut threads = Vec::new();
    // One track per thread and event: with several events each thread's
    // samples of each event are a thread of their own, named after both.
    for ((ev, ti), indexes) in p.samples_by_track() {
        let (e, th) = (&p.events[ev as usize], &p.threads[ti as usize]);
        let name = if p.events.len() > 1 {
            format!("{} ({})", th.comm, e.name)
        } else {
            th.comm.clone()
        };
        let mut t = Tables::default();
        let mut sample_stack: Vec<Option<u32>> = Vec::new();
        let mut sample_time: Vec<f64> = Vec::new();
        let mut stack_cache: HashMap<u32, Option<u32>> = HashMap::new();
        for s in indexes.iter().map(|&i| &p.samples[i as usize]) {
            let stack = *stack_cache
                .entry(s.stack)
                .or_insert_with(|| stack_of(p, &mut t, s.stack, &lib_of_mapping));
            sample_stack.push(stack);
            sample_time.push(s.time.saturating_sub(first_time) as f64 / 1e6);
        }
        if sample_stack.is_empty() {
            continue;
        }
        // (Only the tables are written.)
        t.string_ids = HashMap::new();
        t.stack_ids = HashMap::new();
        t.frame_ids = HashMap::new();
        t.func_ids = HashMap::new();
        t.resource_ids = HashMap::new();
        let start = sample_time.first().copied().unwrap_or(0.0);
        let end = sample_time.last().copied().unwrap_or(0.0) + interval_ms;
        threads.push(ThreadOut {
            name,
            process_name: th.comm.clone(),
            start,
            end,
            is_main_thread: th.pid == th.tid,
            pid: th.pid.to_string(),
            tid: th.tid,
            sample_stack,
            sample_time,
            t,
        });
    }
    let duration_ms = last_time.saturating_sub(first_time) as f64 / 1e6;
    let file = json!({
        "meta": {
            "version": 24,
            "preprocessedProfileVersion": 49,
            "interval": interval_ms,
            // Wall-clock ms since the epoch of the first sample (0 where
            // it cannot be told); sample times are relative to it.
            "startTime": p.wall_start_ns.map_or(0.0, |t| t as f64 / 1e6),
            "processType": 0,
            "product": format!("{name} (sear {})", env!("CARGO_PKG_VERSION")),
            "importedFrom": "sear",
            "stackwalk": 1,
            "debug": false,
            "categories": categories(),
            "markerSchema": [],
            "symbolicated": true,
            "extensions": {"length": 0, "baseURL": [], "id": [], "name": []},
            "sampleUnits": {"time": "ms", "eventDelay": "ms", "threadCPUDelta": "µs"},
            "usesOnlyOneStackType": true,
            "doesNotUseFrameImplementation": true,
            "sourceCodeIsNotOnSearchfox": true,
            "profilingStartTime": 0.0,
            "profilingEndTime": duration_ms + interval_ms,
        },
        "libs": libs,
        "threads": [],
        "pages": [],
        "profilerOverhead": [],
        "counters": [],
    });
    // The file's members in the order a JSON object of them prints (by
    // name), the threads among them.
    let Value::Object(members) = file else {
        unreachable!("a JSON object")
    };
    let mut w = io::BufWriter::new(out);
    w.write_all(b"{")?;
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            w.write_all(b",")?;
        }
        serde_json::to_writer(&mut w, key).map_err(io::Error::other)?;
        w.write_all(b":")?;
        if key == "threads" {
            serde_json::to_writer(&mut w, &threads).map_err(io::Error::other)?;
        } else {
            serde_json::to_writer(&mut w, value).map_err(io::Error::other)?;
        }
    }
    w.write_all(b"}")?;
    w.flush()
}

/// One thread of the processed profile, written with its members in name
/// order (as a JSON object of them prints).
struct ThreadOut {
    name: String,
    process_name: String,
    start: f64,
    end: f64,
    is_main_thread: bool,
    pid: String,
    tid: i32,
    sample_stack: Vec<Option<u32>>,
    sample_time: Vec<f64>,
    t: Tables,
}

/// `n` copies of a JSON value (`0`, `null`, `false`, `1`).
struct Repeat<T>(usize, T);

impl<T: Serialize> Serialize for Repeat<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0))?;
        for _ in 0..self.0 {
            seq.serialize_element(&self.1)?;
        }
        seq.end()
    }
}

/// Writes a JSON object's members in the order given (callers give them
/// by name, as a JSON object of them prints).
macro_rules! object {
    ($s:expr, $( $k:literal => $v:expr ),* $(,)?) => {{
        let mut m = $s.serialize_map(None)?;
        $( m.serialize_entry($k, $v)?; )*
        m.end()
    }};
}

/// A thread's `frameTable`.
struct FrameTable<'a>(&'a Tables);

impl Serialize for FrameTable<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let n = t.frame_func.len();
        object!(s,
            "address" => &t.frame_address,
            "category" => &t.frame_category,
            "column" => &Repeat(n, ()),
            "func" => &t.frame_func,
            "implementation" => &Repeat(n, ()),
            "inlineDepth" => &t.frame_inline_depth,
            "innerWindowID" => &Repeat(n, ()),
            "length" => &n,
            "line" => &t.frame_line,
            "nativeSymbol" => &Repeat(n, ()),
            "subcategory" => &Repeat(n, 0),
        )
    }
}

/// A thread's `funcTable`.
struct FuncTable<'a>(&'a Tables);

impl Serialize for FuncTable<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let n = t.func_name.len();
        object!(s,
            "columnNumber" => &Repeat(n, ()),
            "fileName" => &t.func_file,
            "isJS" => &Repeat(n, false),
            "length" => &n,
            "lineNumber" => &Repeat(n, ()),
            "name" => &t.func_name,
            "relevantForJS" => &Repeat(n, false),
            "resource" => &t.func_resource,
        )
    }
}

/// A thread's `resourceTable`.
struct ResourceTable<'a>(&'a Tables);

impl Serialize for ResourceTable<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let n = t.resource_lib.len();
        object!(s,
            "host" => &Repeat(n, ()),
            "length" => &n,
            "lib" => &t.resource_lib,
            "name" => &t.resource_name,
            "type" => &Repeat(n, 1),
        )
    }
}

/// A thread's `stackTable`.
struct StackTable<'a>(&'a Tables);

impl Serialize for StackTable<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let n = t.stack_frame.len();
        object!(s,
            "category" => &t.stack_category,
            "frame" => &t.stack_frame,
            "length" => &n,
            "prefix" => &t.stack_prefix,
            "subcategory" => &Repeat(n, 0),
        )
    }
}

/// A thread's `samples`.
struct Samples<'a>(&'a ThreadOut);

impl Serialize for Samples<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let th = self.0;
        object!(s,
            "length" => &th.sample_stack.len(),
            "stack" => &th.sample_stack,
            "time" => &th.sample_time,
            "weight" => &(),
            "weightType" => "samples",
        )
    }
}

impl Serialize for ThreadOut {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = &self.t;
        let markers = json!({
            "length": 0, "category": [], "data": [], "endTime": [],
            "name": [], "phase": [], "startTime": [],
        });
        let native_symbols = json!({
            "length": 0, "libIndex": [], "address": [], "name": [], "functionSize": [],
        });
        object!(s,
            "frameTable" => &FrameTable(t),
            "funcTable" => &FuncTable(t),
            "isMainThread" => &self.is_main_thread,
            "markers" => &markers,
            "name" => &self.name,
            "nativeSymbols" => &native_symbols,
            "pausedRanges" => &[(); 0],
            "pid" => &self.pid,
            "processName" => &self.process_name,
            "processShutdownTime" => &self.end,
            "processStartupTime" => &self.start,
            "processType" => "default",
            "registerTime" => &self.start,
            "resourceTable" => &ResourceTable(t),
            "samples" => &Samples(self),
            "stackTable" => &StackTable(t),
            "stringArray" => &t.strings,
            "tid" => &self.tid,
            "unregisterTime" => &self.end,
        )
    }
}
/// A breakpad id from a build id: the first 16 bytes as a GUID (the first
/// three fields byte-swapped, as breakpad reads ELF ids), uppercase, and
/// an age of 0.
fn breakpad_id(hex: &str) -> String {
    if hex.len() < 32 {
        return String::new();
    }
    let b: Vec<&str> = (0..16).map(|i| &hex[2 * i..2 * i + 2]).collect();
    let order = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];
    let mut s: String = order.iter().map(|&i| b[i]).collect();
    s.push('0');
    s.to_uppercase()
}

/// The stack index of export stack `stack` in `t` (None for an empty one).
fn stack_of(p: &ExportProfile, t: &mut Tables, stack: u32, lib_of_mapping: &[u32]) -> Option<u32> {
    let mut prefix: Option<u32> = None;
    let mut locs = Vec::new();
    p.stack_root_first(stack, &mut locs);
    for &loc in &locs {
        let l = &p.locations[loc as usize];
        let category = match (l.kernel, l.mapping) {
            (true, _) => KERNEL,
            (false, Some(_)) => USER,
            (false, None) => OTHER,
        };
        let resource = l.mapping.map_or(-1, |m| {
            let lib = lib_of_mapping[m as usize];
            let (id, new) = intern(&mut t.resource_ids, lib);
            if new {
                let m = &p.mappings[m as usize];
                let base = m
                    .filename
                    .rsplit('/')
                    .next()
                    .unwrap_or(&m.filename)
                    .to_owned();
                let name = t.string(&base);
                t.resource_lib.push(lib);
                t.resource_name.push(name);
            }
            i64::from(id)
        });
        let address = match l.mapping {
            Some(m) if !l.kernel => {
                let m = &p.mappings[m as usize];
                (l.address - m.start + m.file_offset) as i64
            }
            _ => -1,
        };
        let names = p.frame_names(loc);
        // Outermost (the function) first, then its inlined callees.
        let depth = names.len() as u32;
        for (d, name) in names.iter().rev().enumerate() {
            let d = d as u32;
            let frame = match t.frame_ids.get(&(loc, d)) {
                Some(&f) => f,
                None => {
                    let name_id = t.string(name);
                    let line_of = l.lines.get((depth - 1 - d) as usize);
                    let file = line_of
                        .map(|ln| &p.functions[ln.function as usize].filename)
                        .filter(|f| !f.is_empty())
                        .cloned();
                    let file = file.map(|f| t.string(&f));
                    let (func, new) = intern(&mut t.func_ids, (name_id, resource));
                    if new {
                        t.func_name.push(name_id);
                        t.func_resource.push(resource);
                        t.func_file.push(file);
                    }
                    let f = t.frame_func.len() as u32;
                    t.frame_address.push(address);
                    t.frame_inline_depth.push(d);
                    t.frame_category.push(category);
                    t.frame_func.push(func);
                    t.frame_line
                        .push(line_of.map(|ln| ln.line).filter(|&n| n != 0));
                    t.frame_ids.insert((loc, d), f);
                    f
                }
            };
            let (s, new) = intern(&mut t.stack_ids, (prefix, frame));
            if new {
                t.stack_prefix.push(prefix);
                t.stack_frame.push(frame);
                t.stack_category.push(category);
            }
            prefix = Some(s);
        }
    }
    prefix
}

/// The dense id of `key` in `ids` (the next one for a new key) and whether
/// it is new: the caller then pushes the key's row to its table.
fn intern<K: std::hash::Hash + Eq>(ids: &mut HashMap<K, u32>, key: K) -> (u32, bool) {
    let next = ids.len() as u32;
    let id = *ids.entry(key).or_insert(next);
    (id, id == next)
}
