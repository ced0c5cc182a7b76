//! A recording's samples as the profile formats of other tools see them
//! (pprof, speedscope, the Firefox Profiler): threads, mappings, functions,
//! locations with their inline frames, interned stacks, and every sample
//! with its time, thread, event and period. Built once from pass one's
//! samples and pass two's symbols; the renderers only reshape it.

use rustc_hash::FxHashMap as HashMap;

use crate::collect::{Collector, NO_DSO};
use crate::machine::Machine;
use crate::symbolize::SymbolTable;

pub use crate::session::TimedSample;

/// A sampled event and what its period counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    /// `nanoseconds` for the clock events and off-CPU time, else `count`.
    pub unit: &'static str,
}

impl Event {
    /// The event `name` with the unit its period has.
    pub fn named(name: String) -> Self {
        let base = name.split(':').next().unwrap_or(&name);
        let unit = if matches!(base, "cpu-clock" | "task-clock" | "offcpu-time") {
            "nanoseconds"
        } else {
            "count"
        };
        Event { name, unit }
    }
}

/// A thread as shown: its ids and comm (the last it had).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    pub pid: i32,
    pub tid: i32,
    pub comm: String,
}

/// A loaded object covering the sampled addresses of one DSO at one load
/// address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// Lowest and one past the highest sampled address in the process.
    pub start: u64,
    pub limit: u64,
    /// The offset in the file `start` corresponds to.
    pub file_offset: u64,
    /// Path (or perf's name: `[kernel.kallsyms]`, `[vdso]`, ...).
    pub filename: String,
    /// Lowercase hex, when the recording has it.
    pub build_id: Option<String>,
    pub kernel: bool,
}

/// A function (or an inlined function's fake symbol).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Function {
    pub name: String,
    /// The source file's base name where DWARF gives it for an address
    /// in the function itself ("" otherwise).
    pub filename: String,
    /// The DSO's short name (perf's dso column), "" without one.
    pub dso: String,
}

/// One frame of a location: a function and the source line (0: unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub function: u32,
    pub line: u32,
}

/// A sampled address with the frames it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub address: u64,
    pub mapping: Option<u32>,
    /// Innermost (inlined) first, the containing function last; empty
    /// where no symbol covers the address.
    pub lines: Vec<Line>,
    pub kernel: bool,
    /// The innermost frame's source file (its line is `lines[0].line`), an
    /// index into [`ExportProfile::files`], where DWARF names one.
    pub file: Option<u32>,
}

/// Aggregated and timed samples of one recording.
#[derive(Debug, Clone, Default)]
pub struct ExportProfile {
    pub events: Vec<Event>,
    pub threads: Vec<Thread>,
    pub mappings: Vec<Mapping>,
    pub functions: Vec<Function>,
    pub locations: Vec<Location>,
    /// Source file paths as DWARF gives them ([`Location::file`]).
    pub files: Vec<String>,
    /// The stacks' frames as a trie: per node, its caller's node
    /// ([`NO_CALLER`] for an outermost frame) and its location id. A
    /// caller's node comes before its callees'.
    pub stack_nodes: Vec<(u32, u32)>,
    /// Per stack, its innermost node (see [`Self::stack`]).
    pub stacks: Vec<u32>,
    /// In time order.
    pub samples: Vec<Sample>,
    /// First and last sample time (perf's clock, nanoseconds).
    pub time_range: Option<(u64, u64)>,
    /// The first sample's wall-clock time, nanoseconds since the Unix
    /// epoch, where it can be told (see [`wall_start`]).
    pub wall_start_ns: Option<u64>,
}

/// One sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub time: u64,
    pub period: u64,
    pub event: u32,
    /// Index into [`ExportProfile::threads`].
    pub thread: u32,
    /// Index into [`ExportProfile::stacks`].
    pub stack: u32,
}

/// The caller of an outermost frame's node in [`ExportProfile::stack_nodes`].
pub const NO_CALLER: u32 = u32::MAX;

impl ExportProfile {
    /// The location ids of stack `stack`, leaf first (none for an unknown
    /// stack).
    pub fn stack(&self, stack: u32) -> StackLocations<'_> {
        StackLocations {
            nodes: &self.stack_nodes,
            next: self
                .stacks
                .get(stack as usize)
                .copied()
                .unwrap_or(NO_CALLER),
        }
    }

    /// Stack `stack`'s location ids root first, into `out`.
    pub fn stack_root_first(&self, stack: u32, out: &mut Vec<u32>) {
        out.clear();
        out.extend(self.stack(stack));
        out.reverse();
    }

    /// The samples of each (event, thread) that has any, in that order
    /// (events, then threads, by index), each track's sample indexes in
    /// time order; samples of an event or thread the profile does not list
    /// are left out. Costs the samples, not events x threads.
    pub fn samples_by_track(&self) -> Vec<((u32, u32), Vec<u32>)> {
        let (events, threads) = (self.events.len(), self.threads.len());
        let mut order: Vec<u32> = (0..self.samples.len() as u32)
            .filter(|&i| {
                let s = &self.samples[i as usize];
                (s.event as usize) < events && (s.thread as usize) < threads
            })
            .collect();
        // (Stable: each track keeps its samples' order.)
        order.sort_by_key(|&i| {
            let s = &self.samples[i as usize];
            (s.event, s.thread)
        });
        let mut tracks: Vec<((u32, u32), Vec<u32>)> = Vec::new();
        for i in order {
            let s = &self.samples[i as usize];
            match tracks.last_mut() {
                Some((key, v)) if *key == (s.event, s.thread) => v.push(i),
                _ => tracks.push(((s.event, s.thread), vec![i])),
            }
        }
        tracks
    }

    /// Adds a stack of these location ids (leaf first) as nodes of its
    /// own; returns its id.
    pub fn push_stack(&mut self, leaf_first: &[u32]) -> u32 {
        let mut above = NO_CALLER;
        for &loc in leaf_first.iter().rev() {
            self.stack_nodes.push((above, loc));
            above = (self.stack_nodes.len() - 1) as u32;
        }
        self.stacks.push(above);
        (self.stacks.len() - 1) as u32
    }

    /// The name to show for a location's frame `i` (innermost first), or
    /// for a location without symbols its address in its DSO.
    pub fn frame_names(&self, loc: u32) -> Vec<String> {
        let Some(l) = self.locations.get(loc as usize) else {
            return Vec::new();
        };
        if l.lines.is_empty() {
            let dso = l
                .mapping
                .and_then(|m| self.mappings.get(m as usize))
                .map(|m| m.filename.rsplit('/').next().unwrap_or(&m.filename))
                .unwrap_or("[unknown]");
            return vec![format!("{:#x} ({dso})", l.address)];
        }
        l.lines
            .iter()
            .map(|ln| self.functions[ln.function as usize].name.clone())
            .collect()
    }

    /// Sum of samples and of periods per event.
    pub fn totals(&self) -> Vec<(u64, u64)> {
        let mut t = vec![(0u64, 0u64); self.events.len()];
        for s in &self.samples {
            if let Some(e) = t.get_mut(s.event as usize) {
                e.0 += 1;
                e.1 = e.1.saturating_add(s.period);
            }
        }
        t
    }
}

/// A stack's location ids, leaf first ([`ExportProfile::stack`]).
pub struct StackLocations<'a> {
    nodes: &'a [(u32, u32)],
    next: u32,
}

impl<'a> StackLocations<'a> {
    /// The next node's id, and its location id.
    fn step(&mut self) -> Option<(u32, u32)> {
        let n = self.next;
        let &(up, loc) = self.nodes.get(n as usize)?;
        // (A caller always comes before its callee: a bad id cannot loop.)
        self.next = if up < n { up } else { NO_CALLER };
        Some((n, loc))
    }

    /// The stack's node ids in [`ExportProfile::stack_nodes`] instead,
    /// leaf first.
    pub fn node_ids(mut self) -> impl Iterator<Item = u32> + 'a {
        std::iter::from_fn(move || self.step().map(|(n, _)| n))
    }
}

impl Iterator for StackLocations<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        self.step().map(|(_, loc)| loc)
    }
}

/// What [`build`] reads.
pub struct Inputs<'a> {
    pub collector: &'a Collector,
    pub machine: &'a Machine,
    pub syms: &'a SymbolTable,
    pub samples: &'a [TimedSample],
    pub event_names: &'a [String],
}

/// Builds the profile: one location per pass-one location that a sample
/// uses, one mapping per (DSO, load address), functions by (name, file,
/// DSO), stacks interned.
pub fn build(i: &Inputs<'_>) -> ExportProfile {
    let mut p = ExportProfile {
        events: i.event_names.iter().cloned().map(Event::named).collect(),
        ..Default::default()
    };
    let locs = i.collector.interner.locs();
    let dsos = i.machine.dsos();
    let comms = i.collector.comms();
    let mut thread_ids: HashMap<u32, u32> = HashMap::default();
    let mut loc_ids: HashMap<u32, u32> = HashMap::default();
    let mut mapping_ids: HashMap<(u32, u64), u32> = HashMap::default();
    let mut function_ids: HashMap<(String, String), u32> = HashMap::default();
    let mut stack_ids: HashMap<(u32, u32), u32> = HashMap::default();
    // Per node of pass one's stacks: its node here (NO_CALLER: none yet);
    // per leaf location of a sample without a chain: its one-frame stack.
    let mut node_of: Vec<u32> = vec![NO_CALLER; i.collector.interner.stack_nodes()];
    let mut leaf_nodes: HashMap<u32, u32> = HashMap::default();
    let mut file_ids: HashMap<u32, u32> = HashMap::default();
    let mut buf = Vec::new();
    let mut order: Vec<usize> = (0..i.samples.len()).collect();
    order.sort_by_key(|&k| i.samples[k].time);
    for k in order {
        let s = &i.samples[k];
        let thread = *thread_ids.entry(s.thread).or_insert_with(|| {
            let info = i.machine.thread_info(s.thread as usize);
            let comm = i
                .machine
                .comm_of(s.thread as usize)
                .map(str::to_owned)
                .or_else(|| comms.get(s.comm as usize).cloned())
                .unwrap_or_else(|| format!(":{}", info.tid));
            p.threads.push(Thread {
                pid: info.pid,
                tid: info.tid,
                comm,
            });
            (p.threads.len() - 1) as u32
        });
        let stack = match stack_ids.get(&(s.stack, s.leaf)) {
            Some(&id) => id,
            None => {
                // The part of the stack not met before (leaf first), down
                // from the deepest node that was: its locations numbered
                // leaf first (as a whole stack's would be: those above it
                // were numbered when it was met), its nodes made root first.
                let mut above = NO_CALLER;
                buf.clear();
                let mut n = s.stack;
                match i.collector.interner.node(n) {
                    None => match leaf_nodes.get(&s.leaf) {
                        Some(&e) => above = e,
                        None => buf.push((u32::MAX, s.leaf)),
                    },
                    Some(_) => {
                        while let Some((up, lid)) = i.collector.interner.node(n) {
                            match node_of.get(n as usize) {
                                Some(&e) if e != NO_CALLER => {
                                    above = e;
                                    break;
                                }
                                _ => buf.push((n, lid)),
                            }
                            n = up;
                        }
                    }
                }
                let ids: Vec<u32> = buf
                    .iter()
                    .map(|&(_, lid)| {
                        *loc_ids.entry(lid).or_insert_with(|| {
                            let l = &locs[lid as usize];
                            let kernel = matches!(l.level, b'k' | b'g');
                            let mapping = (l.dso != NO_DSO).then(|| {
                                let base = l.ip.wrapping_sub(l.rel);
                                let id = *mapping_ids.entry((l.dso, base)).or_insert_with(|| {
                                    let d = &dsos[l.dso as usize];
                                    p.mappings.push(Mapping {
                                        start: l.ip,
                                        limit: l.ip.saturating_add(1),
                                        file_offset: l.rel,
                                        filename: d.name.clone(),
                                        build_id: d.build_id.as_ref().map(|b| {
                                            b.iter().map(|x| format!("{x:02x}")).collect()
                                        }),
                                        kernel,
                                    });
                                    (p.mappings.len() - 1) as u32
                                });
                                let m = &mut p.mappings[id as usize];
                                if l.ip < m.start {
                                    m.start = l.ip;
                                    m.file_offset = l.rel;
                                }
                                m.limit = m.limit.max(l.ip.saturating_add(1));
                                id
                            });
                            let mut lines = Vec::new();
                            let mut src_file = None;
                            if let Some(ls) =
                                i.syms.per_loc.get(lid as usize).filter(|s| s.sym.is_some())
                            {
                                src_file = ls
                                    .line
                                    .filter(|pos| {
                                        i.syms
                                            .files
                                            .get(pos.file as usize)
                                            .is_some_and(|f| f != "??")
                                    })
                                    .and_then(|pos| {
                                        let path = i.syms.paths.get(pos.file as usize)?;
                                        Some(*file_ids.entry(pos.file).or_insert_with(|| {
                                            p.files.push(path.clone());
                                            (p.files.len() - 1) as u32
                                        }))
                                    });
                                for (n, &f) in ls.frames.iter().enumerate() {
                                    let sym = &i.syms.syms[f as usize];
                                    let dso = dsos
                                        .get(sym.dso as usize)
                                        .map(|d| crate::hist::dso_short_name(&d.name))
                                        .unwrap_or_default();
                                    // The source position is the innermost frame's.
                                    let innermost = n == 0;
                                    let next = p.functions.len() as u32;
                                    let id = *function_ids
                                        .entry((sym.name.clone(), dso.clone()))
                                        .or_insert(next);
                                    if id == next {
                                        p.functions.push(Function {
                                            name: sym.name.clone(),
                                            filename: String::new(),
                                            dso,
                                        });
                                    }
                                    // The innermost frame is at the address's
                                    // line; each outer one at the line of its
                                    // call to the frame inside it (what
                                    // addr2line -i prints for it).
                                    let pos = if innermost {
                                        ls.line
                                    } else {
                                        ls.frame_lines.get(n).copied()
                                    };
                                    // A function's file: where its first known
                                    // frame's line is.
                                    let f = &mut p.functions[id as usize];
                                    if f.filename.is_empty() {
                                        if let Some(name) = pos
                                            .and_then(|pos| i.syms.files.get(pos.file as usize))
                                            .filter(|f| *f != "??")
                                        {
                                            f.filename.clone_from(name);
                                        }
                                    }
                                    let line = pos.map_or(0, |pos| pos.line);
                                    lines.push(Line { function: id, line });
                                }
                            }
                            p.locations.push(Location {
                                address: l.ip,
                                mapping,
                                lines,
                                kernel,
                                file: src_file,
                            });
                            (p.locations.len() - 1) as u32
                        })
                    })
                    .collect();
                for (&(n, lid), &loc) in buf.iter().zip(&ids).rev() {
                    p.stack_nodes.push((above, loc));
                    above = (p.stack_nodes.len() - 1) as u32;
                    match node_of.get_mut(n as usize) {
                        Some(e) => *e = above,
                        None => {
                            leaf_nodes.insert(lid, above);
                        }
                    }
                }
                p.stacks.push(above);
                let id = (p.stacks.len() - 1) as u32;
                stack_ids.insert((s.stack, s.leaf), id);
                id
            }
        };
        p.samples.push(Sample {
            time: s.time,
            period: s.period,
            event: s.event,
            thread,
            stack,
        });
    }
    p.time_range = match (p.samples.first(), p.samples.last()) {
        (Some(a), Some(b)) if a.time != 0 => Some((a.time, b.time)),
        _ => None,
    };
    p
}

/// The wall-clock time of the first sample (ns since the epoch): from the
/// recording's CLOCK_DATA pair (sample clock and wall clock read together)
/// when it has one, else the file's modification time (when the recorder
/// wrote its end, as perf's "captured on" shows) less the time from the
/// first to the last sample.
pub fn wall_start(
    clock: Option<perf_data::features::ClockData>,
    file_mtime_ns: Option<u64>,
    time_range: Option<(u64, u64)>,
) -> Option<u64> {
    let (first, last) = time_range?;
    match clock {
        Some(c) => c.tod_ns.checked_sub(c.clockid_ns)?.checked_add(first),
        None => file_mtime_ns?.checked_sub(last.checked_sub(first)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_by_track_in_track_order_each_in_time_order() {
        let thread = |tid: i32| Thread {
            pid: 1,
            tid,
            comm: "t".into(),
        };
        let mut p = ExportProfile {
            events: vec![Event::named("a".into()), Event::named("b".into())],
            threads: vec![thread(1), thread(2)],
            ..Default::default()
        };
        // (Thread 5 and event 7 are not listed: left out.)
        let tracks = [(1, 0), (0, 1), (0, 0), (1, 0), (0, 1), (0, 5), (7, 0)];
        for (i, &(event, thread)) in tracks.iter().enumerate() {
            p.samples.push(Sample {
                time: i as u64,
                period: 1,
                event,
                thread,
                stack: 0,
            });
        }
        assert_eq!(
            p.samples_by_track(),
            vec![
                ((0, 0), vec![2]),
                ((0, 1), vec![1, 4]),
                ((1, 0), vec![0, 3])
            ]
        );
    }

    #[test]
    fn wall_start_from_clock_data_or_file_time() {
        let clock = perf_data::features::ClockData {
            clockid: 1,
            tod_ns: 1_700_000_000_000_000_000,
            clockid_ns: 5_000_000_000,
        };
        // The sample clock read 5 s when the wall clock read tod: a first
        // sample at 6 s was taken 1 s later.
        assert_eq!(
            wall_start(Some(clock), Some(1), Some((6_000_000_000, 9_000_000_000))),
            Some(1_700_000_001_000_000_000)
        );
        // No clock data: the file was closed at its mtime, the last sample
        // 3 s after the first.
        assert_eq!(
            wall_start(
                None,
                Some(10_000_000_000),
                Some((6_000_000_000, 9_000_000_000))
            ),
            Some(7_000_000_000)
        );
        assert_eq!(wall_start(None, None, Some((1, 2))), None);
        assert_eq!(wall_start(Some(clock), Some(1), None), None);
    }
}
