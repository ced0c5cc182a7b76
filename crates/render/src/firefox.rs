//! The Firefox Profiler's processed profile format (what samply writes,
//! `preprocessedProfileVersion` 49 with per-thread string arrays; the
//! profiler upgrades it on load): one thread per recorded thread with its
//! samples (the first event's), stack, frame, function, resource and
//! string tables, libraries from the mappings, and categories that tell
//! kernel frames from user frames.

use std::collections::HashMap;
use std::io::{self, Write};

use profile::export::ExportProfile;
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
    let mut threads = Vec::new();
    // One track per thread and event: with several events each thread's
    // samples of each event are a thread of their own, named after both.
    let tracks = p.events.iter().enumerate().flat_map(|(ev, e)| {
        p.threads
            .iter()
            .enumerate()
            .map(move |(ti, th)| (ev as u32, e, ti, th))
    });
    for (event, e, ti, th) in tracks {
        let name = if p.events.len() > 1 {
            format!("{} ({})", th.comm, e.name)
        } else {
            th.comm.clone()
        };
        let mut t = Tables::default();
        let mut sample_stack: Vec<Option<u32>> = Vec::new();
        let mut sample_time: Vec<f64> = Vec::new();
        let mut stack_cache: HashMap<u32, Option<u32>> = HashMap::new();
        for s in p
            .samples
            .iter()
            .filter(|s| s.thread as usize == ti && s.event == event)
        {
            let stack = *stack_cache
                .entry(s.stack)
                .or_insert_with(|| stack_of(p, &mut t, s.stack, &lib_of_mapping));
            sample_stack.push(stack);
            sample_time.push(s.time.saturating_sub(first_time) as f64 / 1e6);
        }
        if sample_stack.is_empty() {
            continue;
        }
        let n_frames = t.frame_func.len();
        let n_funcs = t.func_name.len();
        let n_stacks = t.stack_frame.len();
        let n_resources = t.resource_lib.len();
        let start = sample_time.first().copied().unwrap_or(0.0);
        let end = sample_time.last().copied().unwrap_or(0.0) + interval_ms;
        threads.push(json!({
            "name": name,
            "processName": th.comm,
            "processType": "default",
            "processStartupTime": start,
            "processShutdownTime": end,
            "registerTime": start,
            "unregisterTime": end,
            "pausedRanges": [],
            "isMainThread": th.pid == th.tid,
            "pid": th.pid.to_string(),
            "tid": th.tid,
            "samples": {
                "length": sample_stack.len(),
                "stack": sample_stack,
                "time": sample_time,
                "weight": null,
                "weightType": "samples",
            },
            "markers": {
                "length": 0, "category": [], "data": [], "endTime": [],
                "name": [], "phase": [], "startTime": [],
            },
            "stackTable": {
                "length": n_stacks,
                "prefix": t.stack_prefix,
                "frame": t.stack_frame,
                "category": t.stack_category,
                "subcategory": vec![0; n_stacks],
            },
            "frameTable": {
                "length": n_frames,
                "address": t.frame_address,
                "inlineDepth": t.frame_inline_depth,
                "category": t.frame_category,
                "subcategory": vec![0; n_frames],
                "func": t.frame_func,
                "nativeSymbol": vec![Value::Null; n_frames],
                "innerWindowID": vec![Value::Null; n_frames],
                "implementation": vec![Value::Null; n_frames],
                "line": t.frame_line,
                "column": vec![Value::Null; n_frames],
            },
            "funcTable": {
                "length": n_funcs,
                "name": t.func_name,
                "isJS": vec![false; n_funcs],
                "relevantForJS": vec![false; n_funcs],
                "resource": t.func_resource,
                "fileName": t.func_file,
                "lineNumber": vec![Value::Null; n_funcs],
                "columnNumber": vec![Value::Null; n_funcs],
            },
            "resourceTable": {
                "length": n_resources,
                "lib": t.resource_lib,
                "name": t.resource_name,
                "host": vec![Value::Null; n_resources],
                "type": vec![1; n_resources],
            },
            "nativeSymbols": {
                "length": 0, "libIndex": [], "address": [], "name": [], "functionSize": [],
            },
            "stringArray": t.strings,
        }));
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
        "threads": threads,
        "pages": [],
        "profilerOverhead": [],
        "counters": [],
    });
    serde_json::to_writer(out, &file).map_err(io::Error::other)
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
    let locs: Vec<u32> = p.stack(stack).collect();
    for &loc in locs.iter().rev() {
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
