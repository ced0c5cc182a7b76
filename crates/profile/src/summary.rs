//! A recording summed for browsing (`sear html`): a call tree of function
//! frames (inline frames expanded, root first) whose nodes carry sample
//! weights per (event, thread, the sample's own symbol), and the source
//! lines samples hit, per (event, thread, function), each also per time
//! slot (the recording's span cut into at most [`SLOTS`] equal slots, for a
//! timeline). Sizes grow with the unique stacks and lines per slot, not with
//! the samples, so a page can embed it and redo every view (one thread, one
//! event, a zoomed subtree, a time range) itself.

use rustc_hash::FxHashMap as HashMap;

use crate::export::{ExportProfile, Thread};

/// A function (or inlined function, or an unresolved address) as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// perf's dso column ("" without one).
    pub dso: String,
    pub kernel: bool,
}

/// A call-tree node: `function` called from `parent`'s function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// The caller's node; None for an outermost frame. Always a smaller id.
    pub parent: Option<u32>,
    pub function: u32,
}

/// Samples that ended at one node, summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weight {
    pub event: u32,
    pub thread: u32,
    /// The time slot (see [`Slots`]).
    pub slot: u32,
    pub node: u32,
    /// The symbol covering the sampled address (perf report's self entry:
    /// the function an inlined leaf frame was inlined into).
    pub self_function: u32,
    pub samples: u64,
    pub period: u64,
}

/// Samples at one source line, summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineWeight {
    pub event: u32,
    pub thread: u32,
    pub slot: u32,
    pub self_function: u32,
    /// The innermost (inlined) function the line belongs to.
    pub inner_function: u32,
    /// Index into [`Summary::files`].
    pub file: u32,
    pub line: u32,
    pub samples: u64,
    pub period: u64,
}

/// Lines `first..first + text.len()` of a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    pub file: u32,
    pub first: u32,
    pub text: Vec<String>,
}

/// What a page needs to draw flame graphs, symbol tables and source lines
/// for any choice of event and threads.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub events: Vec<String>,
    pub threads: Vec<Thread>,
    pub functions: Vec<Function>,
    pub nodes: Vec<Node>,
    pub weights: Vec<Weight>,
    pub lines: Vec<LineWeight>,
    /// Source paths as DWARF names them.
    pub files: Vec<String>,
    /// Source text near the hot lines, where the caller could read it.
    pub sources: Vec<Snippet>,
    /// First and last sample time (nanoseconds).
    pub time_range: Option<(u64, u64)>,
    pub slots: Slots,
}

/// At most this many time slots.
pub const SLOTS: u32 = 200;

/// The recording's span cut into equal slots: slot `i` holds the samples
/// from `first + i * width` to `first + (i + 1) * width - 1` nanoseconds
/// (both ends kept, as perf's `--time START,STOP` keeps them). Samples
/// without a time are in slot 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slots {
    pub first: u64,
    /// Nanoseconds per slot (at least 1).
    pub width: u64,
    pub count: u32,
}

impl Default for Slots {
    fn default() -> Self {
        Slots {
            first: 0,
            width: 1,
            count: 1,
        }
    }
}

impl Slots {
    /// At most [`SLOTS`] slots over the span from `first` to `last`.
    pub fn over(range: Option<(u64, u64)>) -> Slots {
        let Some((first, last)) = range.filter(|&(a, b)| a > 0 && b >= a) else {
            return Slots::default();
        };
        let span = last - first + 1;
        let width = span.div_ceil(u64::from(SLOTS)).max(1);
        Slots {
            first,
            width,
            count: span.div_ceil(width) as u32,
        }
    }

    /// The slot of a sample at `t`.
    pub fn of(&self, t: u64) -> u32 {
        if t < self.first {
            return 0;
        }
        (((t - self.first) / self.width) as u32).min(self.count - 1)
    }
}

/// A stack reduced to what the summary keeps of it.
#[derive(Clone, Copy)]
struct Leaf {
    node: u32,
    self_function: u32,
    inner_function: u32,
    /// File and line of the sampled address, when known.
    src: Option<(u32, u32)>,
}

/// In `build`: an export stack node not placed in the tree yet, and one
/// placed above every tree node (its stack so far has no frames).
const UNPLACED: u32 = u32::MAX;
const ROOT: u32 = u32::MAX - 1;

/// event, thread, slot, self function, inner function, file, line.
type LineKey = (u32, u32, u32, u32, u32, u32, u32);
/// event, thread, slot, node, self function.
type WeightKey = (u32, u32, u32, u32, u32);

/// The summary's event of on-CPU and off-CPU time together (recordings
/// of `record --off-cpu`).
pub const WALL_CLOCK_EVENT: &str = "wall-clock (on-CPU + offcpu-time)";

/// Sums `p`'s samples into a [`Summary`] (without source text: see
/// [`Summary::wanted_lines`]).
pub fn build(p: &ExportProfile) -> Summary {
    let mut s = Summary {
        events: p.events.iter().map(|e| e.name.clone()).collect(),
        threads: p.threads.clone(),
        files: p.files.clone(),
        time_range: p.time_range,
        slots: Slots::over(p.time_range),
        ..Default::default()
    };
    let mut function_ids: HashMap<(String, String), u32> = HashMap::default();
    let mut intern_fn = |s: &mut Summary, name: String, dso: String, kernel: bool| -> u32 {
        let next = s.functions.len() as u32;
        let id = *function_ids
            .entry((name.clone(), dso.clone()))
            .or_insert(next);
        if id == next {
            s.functions.push(Function { name, dso, kernel });
        }
        id
    };
    // Export function id → summary function id.
    let mut from_export: Vec<Option<u32>> = vec![None; p.functions.len()];
    let mut children = crate::children::Children::default();
    let mut leaves: Vec<Option<Leaf>> = vec![None; p.stacks.len()];
    let mut weights: HashMap<WeightKey, (u64, u64)> = HashMap::default();
    let mut lines: HashMap<LineKey, (u64, u64)> = HashMap::default();
    let mut frames: Vec<u32> = Vec::new();
    // Per node of the export's stacks, its tree node (see `UNPLACED`).
    let mut tree_of: Vec<u32> = vec![UNPLACED; p.stack_nodes.len()];
    let mut path: Vec<u32> = Vec::new();
    // With off-CPU samples beside time-based on-CPU ones: a wall-clock
    // event of both, off-CPU stacks ending in an `[off-cpu]` frame.
    let wall = crate::collapse::recording::wall_clock_events(&s.events)
        .ok()
        .map(|(events, off)| {
            let id = s.events.len() as u32;
            s.events.push(WALL_CLOCK_EVENT.to_owned());
            let f = intern_fn(&mut s, "[off-cpu]".to_owned(), String::new(), false);
            (id, events, off, f)
        });
    // Per leaf node: its `[off-cpu]` child.
    let mut off_cpu_nodes: HashMap<u32, u32> = HashMap::default();
    for smp in &p.samples {
        let Some(&known) = leaves.get(smp.stack as usize) else {
            continue;
        };
        let leaf = match known {
            Some(l) => l,
            None => {
                // The stack's nodes up to the first whose tree node is
                // known (every stack shares its callers' nodes: each node of
                // the export's stacks is placed once, not once per stack).
                path.clear();
                let mut parent: Option<u32> = None;
                for n in p.stack(smp.stack).node_ids() {
                    match tree_of[n as usize] {
                        UNPLACED => path.push(n),
                        ROOT => break,
                        t => {
                            parent = Some(t);
                            break;
                        }
                    }
                }
                // Root first: outermost location first, and in each the
                // containing function before what was inlined into it.
                let leaf_node = p.stacks.get(smp.stack as usize).copied();
                let mut self_function = u32::MAX;
                let mut src = None;
                for &n in path.iter().rev() {
                    let lid = p.stack_nodes[n as usize].1;
                    frames.clear();
                    if let Some(loc) = p.locations.get(lid as usize) {
                        if loc.lines.is_empty() {
                            let dso = loc
                                .mapping
                                .and_then(|m| p.mappings.get(m as usize))
                                .map(|m| crate::hist::dso_short_name(&m.filename))
                                .unwrap_or_else(|| "[unknown]".to_owned());
                            let id =
                                intern_fn(&mut s, format!("{:#x}", loc.address), dso, loc.kernel);
                            frames.push(id);
                        } else {
                            for ln in loc.lines.iter().rev() {
                                let f = ln.function as usize;
                                let id = match from_export[f] {
                                    Some(id) => id,
                                    None => {
                                        let ef = &p.functions[f];
                                        let id = intern_fn(
                                            &mut s,
                                            ef.name.clone(),
                                            ef.dso.clone(),
                                            loc.kernel,
                                        );
                                        from_export[f] = Some(id);
                                        id
                                    }
                                };
                                frames.push(id);
                            }
                        }
                    }
                    for &f in &frames {
                        let id = match children.get(parent, f) {
                            Some(id) => id,
                            None => {
                                s.nodes.push(Node {
                                    parent,
                                    function: f,
                                });
                                children.add(parent, f)
                            }
                        };
                        parent = Some(id);
                    }
                    tree_of[n as usize] = parent.unwrap_or(ROOT);
                }
                let Some(node) = parent else {
                    continue; // a stack of no locations: nothing to draw
                };
                // The sampled location's own frames: its function, and the
                // innermost function (the last frame of the stack).
                if let Some(&(_, lid)) = leaf_node.and_then(|n| p.stack_nodes.get(n as usize)) {
                    if let Some(loc) = p.locations.get(lid as usize) {
                        self_function = match loc.lines.last() {
                            // (An address's one frame: the node's own.)
                            None => s.nodes[node as usize].function,
                            Some(ln) => from_export[ln.function as usize].unwrap_or(u32::MAX),
                        };
                        src = loc
                            .file
                            .map(|f| (f, loc.lines.first().map_or(0, |l| l.line)));
                    }
                }
                let inner_function = s.nodes[node as usize].function;
                let l = Leaf {
                    node,
                    self_function,
                    inner_function,
                    src,
                };
                leaves[smp.stack as usize] = Some(l);
                l
            }
        };
        let slot = s.slots.of(smp.time);
        let mut add = |event: u32, node: u32, self_function: u32| {
            let w = weights
                .entry((event, smp.thread, slot, node, self_function))
                .or_default();
            w.0 += 1;
            w.1 = w.1.saturating_add(smp.period);
            if let Some((file, line)) = leaf.src {
                let w = lines
                    .entry((
                        event,
                        smp.thread,
                        slot,
                        leaf.self_function,
                        leaf.inner_function,
                        file,
                        line,
                    ))
                    .or_default();
                w.0 += 1;
                w.1 = w.1.saturating_add(smp.period);
            }
        };
        add(smp.event, leaf.node, leaf.self_function);
        if let Some((id, events, off, off_fn)) = &wall {
            if *off == smp.event {
                let node = *off_cpu_nodes.entry(leaf.node).or_insert_with(|| {
                    s.nodes.push(Node {
                        parent: Some(leaf.node),
                        function: *off_fn,
                    });
                    // (Under a key no stack's frame has: found through
                    // `off_cpu_nodes` only.)
                    children.add(Some(leaf.node), u32::MAX)
                });
                add(*id, node, *off_fn);
            } else if events.contains(&smp.event) {
                add(*id, leaf.node, leaf.self_function);
            }
        }
    }
    // (What finding nodes took is not needed to sort the sums.)
    drop((children, leaves, tree_of, path, off_cpu_nodes));
    s.weights = sorted_weights(weights);
    let mut l: Vec<_> = lines.into_iter().collect();
    l.sort_unstable_by_key(|&(k, _)| k);
    s.lines = l
        .into_iter()
        .map(
            |(
                (event, thread, slot, self_function, inner_function, file, line),
                (samples, period),
            )| {
                LineWeight {
                    event,
                    thread,
                    slot,
                    self_function,
                    inner_function,
                    file,
                    line,
                    samples,
                    period,
                }
            },
        )
        .collect();
    s
}

/// What [`Summary::prune`] merged into callers.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pruned {
    /// Call-tree nodes removed.
    pub nodes: usize,
    /// Nodes kept.
    pub kept: usize,
    /// The share of each event's period a node needed to be kept.
    pub min_share: f64,
}

/// The function of the root that takes pruned outermost frames.
pub const PRUNED_ROOT: &str = "[narrow call paths]";

impl Summary {
    /// Bounds the call tree for a page: a node is kept when, for some event, the samples
    /// through it hold at least `min_share` of that event's period, and at most about
    /// `max_nodes` nodes are kept (the threshold rises until they fit). Samples that ended
    /// in a pruned node move to its nearest kept caller (their own symbol, the symbol table
    /// and the source lines unchanged), as a flame graph leaves out frames narrower than it
    /// can draw; pruned outermost frames go to one root, [`PRUNED_ROOT`]. Sizes then grow
    /// with what can be shown, whatever the number of unique stacks. None when nothing was
    /// pruned.
    pub fn prune(&mut self, min_share: f64, max_nodes: usize) -> Option<Pruned> {
        let n = self.nodes.len();
        if n == 0 {
            return None;
        }
        // Per node, its largest share of an event's period through it.
        let mut share = vec![0f64; n];
        let mut through = vec![0u64; n];
        for e in 0..self.events.len() as u32 {
            through.iter_mut().for_each(|t| *t = 0);
            for w in self.weights.iter().filter(|w| w.event == e) {
                if let Some(t) = through.get_mut(w.node as usize) {
                    *t = t.saturating_add(w.period);
                }
            }
            // Parents have smaller ids: sum children into them, last first.
            for i in (0..n).rev() {
                if let Some(p) = self.nodes[i].parent {
                    let v = through[i];
                    if let Some(t) = through.get_mut(p as usize) {
                        *t = t.saturating_add(v);
                    }
                }
            }
            let total: u64 = (0..n)
                .filter(|&i| self.nodes[i].parent.is_none())
                .map(|i| through[i])
                .fold(0, u64::saturating_add);
            if total == 0 {
                continue;
            }
            for (s, &t) in share.iter_mut().zip(&through) {
                *s = s.max(t as f64 / total as f64);
            }
        }
        let mut threshold = min_share;
        if n > max_nodes && max_nodes > 0 {
            let mut sorted = share.clone();
            // Strictly above the (max_nodes + 1)-th largest share: at most max_nodes kept
            // (ties give fewer), and a caller's share is never below its callee's, so the
            // kept nodes form a tree.
            let (_, nth, _) = sorted.select_nth_unstable_by(max_nodes, |a, b| b.total_cmp(a));
            threshold = threshold.max(next_up(*nth));
        }
        let keep: Vec<bool> = share.iter().map(|&s| s >= threshold).collect();
        let kept = keep.iter().filter(|&&k| k).count();
        if kept == n {
            return None;
        }
        // New ids in the old order (a parent still comes before its children); a pruned
        // node maps to its nearest kept caller, or to the pruned root.
        let mut map = vec![0u32; n];
        let mut nodes = Vec::with_capacity(kept + 1);
        let mut pruned_root = None;
        for i in 0..n {
            let parent = self.nodes[i].parent;
            map[i] = if keep[i] {
                nodes.push(Node {
                    parent: parent.map(|p| map[p as usize]),
                    function: self.nodes[i].function,
                });
                nodes.len() as u32 - 1
            } else if let Some(p) = parent {
                map[p as usize]
            } else {
                *pruned_root.get_or_insert_with(|| {
                    let f = self.functions.len() as u32;
                    self.functions.push(Function {
                        name: PRUNED_ROOT.to_owned(),
                        dso: String::new(),
                        kernel: false,
                    });
                    nodes.push(Node {
                        parent: None,
                        function: f,
                    });
                    nodes.len() as u32 - 1
                })
            };
        }
        self.nodes = nodes;
        let mut weights: HashMap<WeightKey, (u64, u64)> = HashMap::default();
        for w in &self.weights {
            let key = (
                w.event,
                w.thread,
                w.slot,
                map[w.node as usize],
                w.self_function,
            );
            let e = weights.entry(key).or_default();
            e.0 = e.0.saturating_add(w.samples);
            e.1 = e.1.saturating_add(w.period);
        }
        self.weights = sorted_weights(weights);
        Some(Pruned {
            nodes: n - kept,
            kept,
            min_share: threshold,
        })
    }

    /// The source line ranges (1-based, inclusive) worth embedding: the
    /// hottest lines first, each with `context` lines around it, until
    /// `budget` lines are taken. Per file, sorted and merged.
    pub fn wanted_lines(&self, budget: usize, context: u32) -> Vec<(u32, Vec<(u32, u32)>)> {
        let mut heat: HashMap<(u32, u32), u64> = HashMap::default();
        for l in &self.lines {
            if l.line != 0 {
                *heat.entry((l.file, l.line)).or_default() += l.samples;
            }
        }
        let mut hot: Vec<((u32, u32), u64)> = heat.into_iter().collect();
        hot.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut per_file: HashMap<u32, Vec<(u32, u32)>> = HashMap::default();
        let mut taken = 0usize;
        for ((file, line), _) in hot {
            let want = (context * 2 + 1) as usize;
            if taken + want > budget {
                break;
            }
            taken += want;
            per_file.entry(file).or_default().push((
                line.saturating_sub(context).max(1),
                line.saturating_add(context),
            ));
        }
        let mut out: Vec<(u32, Vec<(u32, u32)>)> = per_file
            .into_iter()
            .map(|(f, mut r)| {
                r.sort_unstable();
                let mut merged: Vec<(u32, u32)> = Vec::new();
                for (a, b) in r {
                    match merged.last_mut() {
                        Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                        _ => merged.push((a, b)),
                    }
                }
                (f, merged)
            })
            .collect();
        out.sort_unstable_by_key(|(f, _)| *f);
        out
    }
}

/// Summed weights as a list in key order.
fn sorted_weights(weights: HashMap<WeightKey, (u64, u64)>) -> Vec<Weight> {
    let mut w: Vec<_> = weights.into_iter().collect();
    w.sort_unstable_by_key(|&(k, _)| k);
    w.into_iter()
        .map(
            |((event, thread, slot, node, self_function), (samples, period))| Weight {
                event,
                thread,
                slot,
                node,
                self_function,
                samples,
                period,
            },
        )
        .collect()
}

/// The smallest f64 above `x` (for `x` ≥ 0).
fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    f64::from_bits(if x == 0.0 { 1 } else { x.to_bits() + 1 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{Event, Line, Location, Sample};

    fn profile() -> ExportProfile {
        let f = |name: &str| crate::export::Function {
            name: name.into(),
            filename: String::new(),
            dso: "prog".into(),
        };
        let loc = |function: u32, line: u32| Location {
            address: 0x1000 + u64::from(function),
            mapping: None,
            lines: vec![Line { function, line }],
            kernel: false,
            file: Some(0),
        };
        let mut p = ExportProfile {
            events: vec![Event::named("cpu-clock".into())],
            threads: vec![Thread {
                pid: 1,
                tid: 1,
                comm: "prog".into(),
            }],
            functions: vec![f("main"), f("a"), f("b")],
            locations: vec![loc(0, 3), loc(1, 10), loc(2, 20)],
            files: vec!["/src/prog.c".into()],
            samples: [0, 0, 1, 2, 2]
                .iter()
                .map(|&stack| Sample {
                    time: 0,
                    period: 10,
                    event: 0,
                    thread: 0,
                    stack,
                })
                .collect(),
            ..Default::default()
        };
        // leaf first
        for s in [&[1, 0][..], &[2, 0], &[2, 1, 0]] {
            p.push_stack(s);
        }
        p
    }

    /// The weights' totals: samples, period, and period per self function name.
    fn totals(s: &Summary) -> (u64, u64, Vec<(String, u64)>) {
        let mut by_self: HashMap<String, u64> = HashMap::default();
        for w in &s.weights {
            *by_self
                .entry(s.functions[w.self_function as usize].name.clone())
                .or_default() += w.period;
        }
        let mut by_self: Vec<_> = by_self.into_iter().collect();
        by_self.sort();
        (
            s.weights.iter().map(|w| w.samples).sum(),
            s.weights.iter().map(|w| w.period).sum(),
            by_self,
        )
    }

    #[test]
    fn pruning_merges_narrow_nodes_into_callers_and_keeps_the_sums() {
        // main>a 2, main>b 1, main>a>b 2, and b alone once: shares main 5/6, main>a 4/6,
        // main>a>b 2/6, main>b 1/6, b 1/6.
        let mut p = profile();
        p.push_stack(&[2]);
        p.samples.push(Sample {
            time: 0,
            period: 10,
            event: 0,
            thread: 0,
            stack: 3,
        });
        let whole = build(&p);
        assert_eq!(whole.nodes.len(), 5);
        assert_eq!(whole.clone().prune(0.1, 0), None, "nothing under 10%");

        let mut s = whole.clone();
        let pruned = s.prune(0.2, 0).expect("two nodes under 20%");
        assert_eq!((pruned.nodes, pruned.kept), (2, 3));
        assert_eq!(
            totals(&s),
            totals(&whole),
            "sums and self symbols unchanged"
        );
        // main>b's sample now ends at main; b alone at the pruned root.
        let name = |n: &Node| s.functions[n.function as usize].name.as_str();
        let roots: Vec<&str> = s
            .nodes
            .iter()
            .filter(|n| n.parent.is_none())
            .map(name)
            .collect();
        assert_eq!(roots, ["main", PRUNED_ROOT]);
        assert!(s
            .nodes
            .iter()
            .all(|n| n.parent.is_none_or(|p| (p as usize) < s.nodes.len())));
        let at = |f: &str| -> u64 {
            s.weights
                .iter()
                .filter(|w| name(&s.nodes[w.node as usize]) == f)
                .map(|w| w.samples)
                .sum()
        };
        assert_eq!(
            (at("main"), at("a"), at("b"), at(PRUNED_ROOT)),
            (1, 2, 2, 1)
        );

        // A node budget: the two widest nodes only.
        let mut s = whole.clone();
        let pruned = s.prune(0.0, 2).expect("over budget");
        assert_eq!(pruned.kept, 2);
        assert_eq!(s.nodes.len(), 3, "main, main>a and the pruned root");
        assert_eq!(totals(&s), totals(&whole));
    }

    #[test]
    fn stacks_share_nodes_and_weights_sum() {
        let s = build(&profile());
        // main, main>a, main>b, main>a>b
        assert_eq!(s.nodes.len(), 4);
        assert_eq!(s.nodes[0].parent, None);
        assert!(s.nodes.iter().skip(1).all(|n| n.parent.is_some()));
        let total: u64 = s.weights.iter().map(|w| w.samples).sum();
        assert_eq!(total, 5);
        let b_self: u64 = s
            .weights
            .iter()
            .filter(|w| s.functions[w.self_function as usize].name == "b")
            .map(|w| w.period)
            .sum();
        assert_eq!(b_self, 30);
        let line20: u64 = s
            .lines
            .iter()
            .filter(|l| l.line == 20)
            .map(|l| l.samples)
            .sum();
        assert_eq!(line20, 3);
    }

    #[test]
    fn slots_cut_the_span_evenly_and_keep_both_ends() {
        let s = Slots::over(Some((1_000, 1_999)));
        assert_eq!((s.first, s.width, s.count), (1_000, 5, 200));
        assert_eq!(s.of(1_000), 0);
        assert_eq!(s.of(1_004), 0);
        assert_eq!(s.of(1_005), 1);
        assert_eq!(s.of(1_999), 199);
        // A short span: one nanosecond per slot, no empty slots after it.
        let s = Slots::over(Some((7, 9)));
        assert_eq!((s.width, s.count), (1, 3));
        assert_eq!(s.of(9), 2);
        // No times: one slot.
        assert_eq!(Slots::over(None), Slots::default());
        assert_eq!(Slots::default().of(123), 0);
    }

    #[test]
    fn weights_are_kept_per_time_slot() {
        let mut p = profile();
        for (i, smp) in p.samples.iter_mut().enumerate() {
            smp.time = 1_000 + 250 * i as u64; // 1000 .. 2000
        }
        p.time_range = Some((1_000, 2_000));
        let s = build(&p);
        // 1001 ns: 6 ns per slot, 167 slots.
        assert_eq!((s.slots.width, s.slots.count), (6, 167));
        let slots: Vec<u32> = s.weights.iter().map(|w| w.slot).collect();
        // Samples 0 and 1 share a stack but not a slot.
        assert_eq!(s.weights.len(), 5, "{:?}", s.weights);
        assert!(slots.contains(&0) && slots.contains(&166), "{slots:?}");
        let total: u64 = s.lines.iter().map(|l| l.samples).sum();
        assert_eq!(total, 5);
    }

    #[test]
    fn wanted_lines_merge_and_respect_the_budget() {
        let s = build(&profile());
        assert_eq!(s.wanted_lines(100, 2), vec![(0, vec![(8, 12), (18, 22)])]);
        // Only the hottest line (20) fits.
        assert_eq!(s.wanted_lines(5, 2), vec![(0, vec![(18, 22)])]);
    }
}
