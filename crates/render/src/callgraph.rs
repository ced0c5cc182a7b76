//! The call graph `perf report --stdio` prints under an entry's row
//! (`ui/stdio/hist.c`): graph and fractal trees with their `|`, `---` and
//! `--12.34%--` decorations, flat blocks and folded lines, byte for byte.
//!
//! What it does: formats one entry's [`SortedCallTree`]. What it does not:
//! build or sort the tree (`profile::callchain`), print the entry's own
//! row, or choose names (the caller's `name_of` gives each frame's text,
//! e.g. `main`, `foo (inlined)` or `0x1139` for an unresolved address).
//!
//! ```
//! use profile::callchain::{CallGraphParams, CallTree};
//! use render::callgraph::{write_callgraph, EntryGraph, Style};
//! let params = CallGraphParams::parse("graph,0.5,callee").unwrap();
//! let mut tree = CallTree::new();
//! tree.add(&[0, 1], 3); // hot <- a
//! tree.add(&[0, 2], 1); // hot <- b
//! let sorted = tree.sort(&params, 4, &|a, b| a.cmp(&b));
//! let names = ["hot", "a", "b"];
//! let name_of = |f: u32| names[f as usize].to_string();
//! let graph = EntryGraph { tree: &tree, sorted: &sorted, entry_period: 4, total_period: 4 };
//! let mut out = Vec::new();
//! write_callgraph(&mut out, &graph, &params, &Style::default(), &name_of).unwrap();
//! assert_eq!(
//!     String::from_utf8(out).unwrap(),
//!     "            |\n            ---hot\n               |          \n               \
//!      |--75.00%--a\n               |          \n                --25.00%--b\n\n"
//! );
//! ```

use std::io::{self, Write};

use profile::callchain::{
    CallGraphParams, CallTree, ChainValue, FrameId, Node, NodeId, PrintType, SortedCallTree,
};

/// One histogram entry's call graph and the totals perf divides by.
pub struct EntryGraph<'a> {
    pub tree: &'a CallTree,
    /// `tree` sorted with the same params' print type.
    pub sorted: &'a SortedCallTree,
    /// The entry's period perf compares the graph with: its self period
    /// with `--no-children`, its accumulated (Children) period with
    /// `--children`. Fractal percentages at the top are of this.
    pub entry_period: u64,
    /// The event's total period (`hists->stats.total_period`): graph,
    /// flat and folded percentages are of this.
    pub total_period: u64,
}

/// How the block sits in the report.
#[derive(Debug, Clone, Default)]
pub struct Style<'a> {
    /// Extra indentation after perf's fixed 12 spaces (0 in `perf report
    /// --stdio`).
    pub left_margin: usize,
    /// perf skips the first frame of a graph with a single top node when
    /// the sort order starts with `sym` (and no `-F` was given), because
    /// it repeats the entry's symbol. Set it in that case.
    pub hide_first_frame: bool,
    /// `-t`/`--field-separator`: folded lines join frames with it instead
    /// of `;`.
    pub field_sep: Option<&'a str>,
    /// Colour percentages as perf does on a terminal (see
    /// [`percent_color`]).
    pub color: bool,
}

/// perf's colour of a percentage: red from 5%, green above 0.5%, else
/// none (its `get_percent_color`), as the escape that starts it.
pub fn percent_color(pct: f64) -> Option<&'static str> {
    let p = pct.abs();
    if p >= 5.0 {
        Some("\x1b[31m")
    } else if p > 0.5 {
        Some("\x1b[32m")
    } else {
        None
    }
}

/// `text` in the colour of `pct` (perf's `color_fprintf`: the escape, the
/// text, then a reset).
pub fn colored(pct: f64, text: &str) -> String {
    match percent_color(pct) {
        Some(c) => format!("{c}{text}\x1b[m"),
        None => text.to_owned(),
    }
}

/// The name of fractal mode's remainder line. perf 6.1 allocates that
/// line's symbol with `malloc` and never sets its `inlined` flag, so
/// depending on what the heap held before it sometimes prints
/// `[...] (inlined)` instead (same input and options give the same
/// choice, but another recording may not). We print what perf prints when
/// the memory is clean.
pub const REMAINDER: &str = "[...]";

/// perf formats names into a 1024-byte buffer: longer names lose their
/// end.
const NAME_MAX: usize = 1023;

/// Writes what perf prints under the entry's row for `params.print_type`
/// (nothing for `none`, or when everything fell under the threshold).
pub fn write_callgraph(
    out: &mut dyn Write,
    graph: &EntryGraph<'_>,
    params: &CallGraphParams,
    style: &Style<'_>,
    name_of: &dyn Fn(FrameId) -> String,
) -> io::Result<()> {
    let p = Printer {
        tree: graph.tree,
        sorted: graph.sorted,
        params,
        name_of,
        buf: Vec::new(),
        color: style.color,
    };
    let buf = match graph.sorted.print_type() {
        PrintType::Graph | PrintType::Fractal => p.graph(graph, style),
        PrintType::Flat => p.flat(graph.total_period),
        PrintType::Folded => p.folded(graph.total_period, style.field_sep.unwrap_or(";")),
        PrintType::None => Vec::new(),
    };
    out.write_all(&buf)
}

struct Printer<'a> {
    tree: &'a CallTree,
    sorted: &'a SortedCallTree,
    params: &'a CallGraphParams,
    name_of: &'a dyn Fn(FrameId) -> String,
    buf: Vec<u8>,
    color: bool,
}

/// perf's depth masks are C `int`s shifted by the depth; on x86 the shift
/// count wraps at 32, so graphs deeper than 32 levels reuse low bits.
fn bit(i: i32) -> i32 {
    1i32.wrapping_shl(i as u32)
}

/// One level of perf's recursive `__callchain__fprintf_graph`.
struct Level<'a> {
    children: &'a [NodeId],
    next: usize,
    total: u64,
    depth: i32,
    depth_mask: i32,
    new_depth_mask: i32,
    remaining: u64,
    cumul_count: u64,
    printed: u32,
    last: Option<NodeId>,
    stop: bool,
}

impl Printer<'_> {
    fn name(&mut self, f: FrameId) {
        let name = (self.name_of)(f);
        let b = name.as_bytes();
        self.buf.extend_from_slice(&b[..b.len().min(NAME_MAX)]);
    }

    /// `callchain_node__fprintf_value` for a node's (period, count).
    fn value(&mut self, period: u64, count: u64, total: u64) {
        let s = match self.params.value {
            ChainValue::Period => period.to_string(),
            ChainValue::Count => count.to_string(),
            ChainValue::Percent => {
                let pct = if total != 0 {
                    period as f64 * 100.0 / total as f64
                } else {
                    0.0
                };
                let t = format!("{pct:.2}%");
                if self.color {
                    colored(pct, &t)
                } else {
                    t
                }
            }
        };
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn cumul_value(&mut self, node: &Node, total: u64) {
        self.value(node.cumul_hits(), node.cumul_count(), total);
    }

    fn margin(&mut self, left_margin: usize) {
        self.buf.resize(self.buf.len() + 12 + left_margin, b' ');
    }

    /// The line before each child: the pipes of the levels still open.
    fn graph_line(&mut self, depth: i32, mask: i32, left_margin: usize) {
        self.margin(left_margin);
        for i in 0..depth {
            let s: &[u8] = if mask & bit(i) != 0 {
                b"|          "
            } else {
                b"           "
            };
            self.buf.extend_from_slice(s);
        }
        self.buf.push(b'\n');
    }

    /// One frame of a child; the first one carries the child's value.
    #[allow(clippy::too_many_arguments)]
    fn graph_frame(
        &mut self,
        value: (u64, u64),
        name: Option<FrameId>,
        depth: i32,
        mask: i32,
        first: bool,
        total: u64,
        left_margin: usize,
    ) {
        self.margin(left_margin);
        for i in 0..depth {
            self.buf.push(if mask & bit(i) != 0 { b'|' } else { b' ' });
            if first && i == depth - 1 {
                self.buf.extend_from_slice(b"--");
                self.value(value.0, value.1, total);
                self.buf.extend_from_slice(b"--");
            } else {
                self.buf.extend_from_slice(b"          ");
            }
        }
        match name {
            Some(f) => self.name(f),
            None => self.buf.extend_from_slice(REMAINDER.as_bytes()),
        }
        self.buf.push(b'\n');
    }

    /// `callchain__fprintf_graph`: an optional single top node printed
    /// after `---`, then the tree below it.
    fn graph(mut self, g: &EntryGraph<'_>, style: &Style<'_>) -> Vec<u8> {
        let fractal = self.sorted.print_type() == PrintType::Fractal;
        let mut left_margin = style.left_margin;
        let mut root = CallTree::ROOT;
        let top = self.sorted.children(root);
        // perf drops the percentage (and one column) when there is one
        // top node holding all of the entry's period.
        if top.len() == 1 && self.tree.node(top[0]).cumul_hits() == g.entry_period {
            let node = self.tree.node(top[0]);
            let mut printed = false;
            let mut n = 0u32;
            for (i, &f) in node.frames().iter().enumerate() {
                if i == 0 && style.hide_first_frame {
                    continue;
                }
                if !printed {
                    self.margin(left_margin);
                    self.buf.extend_from_slice(b"|\n");
                    self.margin(left_margin);
                    self.buf.extend_from_slice(b"---");
                    left_margin += 3;
                    printed = true;
                } else {
                    self.margin(left_margin);
                }
                self.name(f);
                self.buf.push(b'\n');
                n = n.wrapping_add(1);
                if n == self.params.print_limit {
                    break;
                }
            }
            root = top[0];
        }
        let total = if fractal {
            g.entry_period
        } else {
            g.total_period
        };
        self.graph_levels(root, total, left_margin, fractal);
        if !self.buf.is_empty() {
            // perf's blank line after a graph, only if it printed one.
            self.buf.push(b'\n');
        }
        self.buf
    }

    /// `__callchain__fprintf_graph`, with an explicit stack instead of
    /// recursion so that deep chains cannot overflow ours.
    fn graph_levels(&mut self, root: NodeId, total: u64, left_margin: usize, fractal: bool) {
        let sorted = self.sorted;
        let tree = self.tree;
        let limit = self.params.print_limit;
        let level = |children, total, depth, depth_mask| Level {
            children,
            next: 0,
            total,
            depth,
            depth_mask,
            new_depth_mask: depth_mask,
            remaining: total,
            cumul_count: 0,
            printed: 0,
            last: None,
            stop: false,
        };
        let mut stack = vec![level(sorted.children(root), total, 1, 1)];
        while let Some(lv) = stack.last_mut() {
            if !lv.stop && lv.next < lv.children.len() {
                let id = lv.children[lv.next];
                lv.next += 1;
                lv.last = Some(id);
                let child = tree.node(id);
                // perf subtracts without checking; wrapping keeps its
                // result where a caller's totals are inconsistent.
                lv.remaining = lv.remaining.wrapping_sub(child.cumul_hits());
                lv.cumul_count = lv.cumul_count.wrapping_add(child.cumul_count());
                // The last child closes this level's pipe, unless fractal
                // mode still has a "[...]" remainder to print below it.
                if lv.next == lv.children.len() && (!fractal || lv.remaining == 0) {
                    lv.new_depth_mask &= !bit(lv.depth - 1);
                }
                let (depth, mask, new_mask, total) =
                    (lv.depth, lv.depth_mask, lv.new_depth_mask, lv.total);
                lv.printed = lv.printed.wrapping_add(1);
                if lv.printed == limit {
                    lv.stop = true;
                }
                self.graph_line(depth, mask, left_margin);
                let value = (child.cumul_hits(), child.cumul_count());
                for (i, &f) in child.frames().iter().enumerate() {
                    self.graph_frame(value, Some(f), depth, new_mask, i == 0, total, left_margin);
                }
                let child_total = if fractal { child.children_hit() } else { total };
                stack.push(level(
                    sorted.children(id),
                    child_total,
                    depth.wrapping_add(1),
                    new_mask | bit(depth),
                ));
                continue;
            }
            // The level is done: in fractal mode, what its printed
            // children leave of the parent is shown as "[...]".
            let (remaining, total, depth) = (lv.remaining, lv.total, lv.depth);
            if fractal && remaining != 0 && remaining != total {
                let mut count = 0;
                let mut show = true;
                if self.params.value == ChainValue::Count {
                    if let Some(parent) = lv.last.and_then(|c| tree.node(c).parent()) {
                        count = tree
                            .node(parent)
                            .children_count()
                            .wrapping_sub(lv.cumul_count);
                        show = count != 0;
                    }
                }
                if show {
                    let mask = lv.new_depth_mask & !bit(depth - 1);
                    self.graph_frame(
                        (remaining, count),
                        None,
                        depth,
                        mask,
                        true,
                        total,
                        left_margin,
                    );
                }
            }
            stack.pop();
        }
    }

    /// `callchain__fprintf_flat`: each chain under its value, root first.
    fn flat(mut self, total: u64) -> Vec<u8> {
        let limit = self.params.print_limit;
        let mut n = 0u32;
        for &id in self.sorted.chains() {
            let node = self.tree.node(id);
            self.buf.extend_from_slice(b"           ");
            self.cumul_value(node, total);
            self.buf.push(b'\n');
            for f in self.path_frames(id) {
                self.buf.extend_from_slice(b"                ");
                self.name(f);
                self.buf.push(b'\n');
            }
            self.buf.push(b'\n');
            n = n.wrapping_add(1);
            if n == limit {
                break;
            }
        }
        self.buf
    }

    /// `callchain__fprintf_folded`: `value a;b;c`, with the node's own
    /// hits (not its children's).
    fn folded(mut self, total: u64, sep: &str) -> Vec<u8> {
        let limit = self.params.print_limit;
        let mut n = 0u32;
        for &id in self.sorted.chains() {
            let node = self.tree.node(id);
            self.value(node.hit(), node.count(), total);
            self.buf.push(b' ');
            let start = self.buf.len();
            for node_id in self.path(id) {
                // perf decides per node whether a separator is due from
                // whether anything was printed before it.
                let mut first = self.buf.len() == start;
                for &f in self.tree.node(node_id).frames() {
                    if !first {
                        self.buf.extend_from_slice(sep.as_bytes());
                    }
                    self.name(f);
                    first = false;
                }
            }
            self.buf.push(b'\n');
            n = n.wrapping_add(1);
            if n == limit {
                break;
            }
        }
        self.buf
    }

    /// The nodes from the top down to `id`.
    fn path(&self, id: NodeId) -> Vec<NodeId> {
        let mut path = Vec::new();
        let mut cur = Some(id);
        while let Some(c) = cur {
            path.push(c);
            cur = self.tree.node(c).parent();
        }
        path.reverse();
        path
    }

    fn path_frames(&self, id: NodeId) -> Vec<FrameId> {
        self.path(id)
            .into_iter()
            .flat_map(|n| self.tree.node(n).frames().iter().copied())
            .collect()
    }
}

/// What [`write_entry_graph`] needs besides the entry.
pub struct EntryGraphOptions<'a> {
    pub params: &'a CallGraphParams,
    /// `--children`: the entry's accumulated period is its weight.
    pub children: bool,
    /// Leave out the entry's own frame (it shows as the row).
    pub hide_first_frame: bool,
    pub percent_limit: f64,
    /// `--percentage relative`.
    pub relative: bool,
    /// `-t`/`--field-separator` (see [`Style::field_sep`]).
    pub field_sep: Option<&'a str>,
    /// `-g ...,address` or `...,srcline`: frames are named with their
    /// source line (the report's frames carry their sites), from these
    /// symbols.
    pub srclines: Option<&'a profile::symbolize::SymbolTable>,
    /// `-g ...,srcline`: a frame without a known line is named alone (perf
    /// has `??:0` for it and prints no line), where `address` gives `+N`.
    pub srcline_key: bool,
    /// Colour the percentages (see [`Style::color`]).
    pub color: bool,
}

/// The source line perf's `-g ...,address` shows after a frame's name
/// (its `get_srcline` with addresses): `file:line` where the line table
/// has the address (an inline frame: its own position), else how far the
/// address is into the symbol, `+N`.
fn site_srcline(
    t: &profile::symbolize::SymbolTable,
    site: &profile::hist::FrameSite,
    srcline_key: bool,
) -> Option<String> {
    let Some(ls) = t.per_loc.get(site.loc as usize) else {
        return Some(String::new());
    };
    let pos = match ls.frame_lines.get(site.depth as usize) {
        Some(p) => Some(*p),
        None if site.depth == 0 => ls.line,
        None => None,
    };
    match pos {
        Some(p) => {
            let file = t.files.get(p.file as usize).map_or("??", String::as_str);
            Some(format!("{file}:{}", p.line))
        }
        None if srcline_key => None,
        None => Some(format!("+{}", ls.sym_offset)),
    }
}

/// Formats the call graph of entry `e` of event `event` from the report's chains (nothing for
/// entries the table hides or whose graph the threshold would empty).
pub fn write_entry_graph(
    out: &mut dyn Write,
    e: &profile::hist::HistEntry,
    event: usize,
    report: &profile::hist::Report,
    syms: &[profile::symbolize::SymInfo],
    names: &profile::hist::Names<'_>,
    o: &EntryGraphOptions<'_>,
) -> io::Result<()> {
    let (params, children, relative) = (o.params, o.children, o.relative);
    let Some(hists) = report.hists.get(event) else {
        return Ok(());
    };
    let entry_period = if children { e.period_acc } else { e.period };
    let base = hists.percent_base(relative);
    if base > 0 && 100.0 * entry_period as f64 / (base as f64) < o.percent_limit {
        return Ok(());
    }
    // Graph percentages are of all samples even with `--percentage
    // relative`, as in perf.
    let total = hists.percent_base(false);
    // No node of the tree can weigh more than all its chains together:
    // the entry's accumulated period (its self period without children).
    let chains_period = e.period_acc;
    if params.print_type != PrintType::Fractal
        && chains_period < params.min_hit(hists.callchain_base(relative))
    {
        return Ok(());
    }
    let mut tree = report.entry_call_tree(e, params.prune(hists.callchain_base(relative)));
    let order = |x: u32, y: u32| profile::hist::frame_order(report, syms, x, y);
    let sorted = tree.sort(params, hists.callchain_base(relative), &order);
    // Branch history: each frame becomes its path in the entry's branch
    // counts (numbered from `labels`), named with its counts (in graphs:
    // perf's flat and folded lines have names alone).
    let labels = report.frames.len() as u32;
    let branches = matches!(params.print_type, PrintType::Graph | PrintType::Fractal)
        .then(|| report.entry_branches(event, e))
        .flatten();
    if let Some(b) = branches {
        tree.relabel(None, |before, f| match b.path(before, f) {
            Some(id) => (labels.saturating_add(id), Some(id)),
            None => (f, None),
        });
    }
    let graph = EntryGraph {
        tree: &tree,
        sorted: &sorted,
        entry_period,
        total_period: total,
    };
    let style = Style {
        hide_first_frame: o.hide_first_frame,
        field_sep: o.field_sep,
        color: o.color,
        ..Default::default()
    };
    let frame_name = |f: u32| {
        let (sref, _) = report.frames[f as usize];
        match sref {
            // Call graphs print unresolved addresses plainly (C's `%#llx`:
            // plain `0` for zero).
            profile::hist::SymRef::Addr { ip: 0, .. } => "0".to_owned(),
            profile::hist::SymRef::Addr { ip, .. } => format!("{ip:#x}"),
            s => match (o.srclines, report.frame_sites.get(f as usize)) {
                (Some(t), Some(site)) => {
                    let name = names.sym_name(&s);
                    let Some(line) = site_srcline(t, site, o.srcline_key) else {
                        return name;
                    };
                    // perf: "name srcline (inlined)".
                    match name.strip_suffix(" (inlined)") {
                        Some(n) => format!("{n} {line} (inlined)"),
                        None => format!("{name} {line}"),
                    }
                }
                _ => names.sym_name(&s),
            },
        }
    };
    let name_of = |f: u32| match (f.checked_sub(labels), branches) {
        (Some(id), Some(b)) => match b.nodes.get(id as usize) {
            Some((frame, counts)) => frame_name(*frame) + &branch_counts_text(counts),
            None => String::new(),
        },
        _ => frame_name(f),
    };
    write_callgraph(out, &graph, params, &style, &name_of)
}

/// What perf's branch-history graphs print after a frame
/// (`callchain_list_counts__printf_value`): ` (calltrace)` for a frame
/// of the recorded chain; for a branch target its types and how often it
/// was predicted (and aborted); for a branch source its average cycles
/// and loop iterations. perf counts a field whose value it then leaves
/// out (an abort share under 0.1%), so its closing parenthesis can stand
/// alone; so does this.
pub fn branch_counts_text(c: &profile::hist::BranchCounts) -> String {
    if c.branch_count == 0 {
        return " (calltrace)".to_owned();
    }
    let mut out = String::new();
    let mut i = 0;
    let sep = |i: i32| if i > 0 { " " } else { " (" };
    // perf passes these shares as C floats.
    let share = |n: u64| (n as f64 * 100.0 / c.branch_count as f64) as f32;
    if c.branch_to {
        let types = branch_types_text(c);
        if !types.is_empty() {
            out.push_str(&types);
            i += 1;
        }
        if c.predicted < c.branch_count {
            out.push_str(&format!(
                "{}predicted:{:.1}%",
                sep(i),
                f64::from(share(c.predicted))
            ));
            i += 1;
        }
        if c.abort > 0 {
            let v = share(c.abort);
            if v >= 0.1 {
                out.push_str(&format!("{}abort:{:.1}%", sep(i), f64::from(v)));
            }
            i += 1;
        }
    } else {
        let cycles = c.cycles / c.branch_count;
        if cycles != 0 {
            out.push_str(&format!("{}cycles:{}", sep(i), cycles as i64));
            i += 1;
        }
        if c.iter_count != 0 && c.from_count != 0 {
            let v = c.iter_count / c.from_count;
            if v != 0 {
                out.push_str(&format!("{}iter:{}", sep(i), v as i64));
                i += 1;
                out.push_str(&format!(
                    "{}avg_cycles:{}",
                    sep(i),
                    (c.iter_cycles / c.iter_count) as i64
                ));
                i += 1;
            }
        }
    }
    if i > 0 {
        out.push(')');
    }
    out
}

/// perf's `branch_type_str`: the branch types a target was reached by,
/// each after ` (` (the first) or a space; nothing without types.
fn branch_types_text(c: &profile::hist::BranchCounts) -> String {
    let total: u64 = c.types.iter().chain(&c.new_types).sum();
    if total == 0 {
        return String::new();
    }
    let mut items: Vec<&str> = Vec::new();
    if c.cond_fwd > 0 {
        items.push("COND_FWD");
    }
    if c.cond_bwd > 0 {
        items.push("COND_BWD");
    }
    for (t, &n) in c.types.iter().enumerate() {
        // (Conditional branches are told apart by direction above.)
        if t != 1 && n > 0 {
            items.push(
                crate::dump::fmt::BRANCH_TYPE_NAMES
                    .get(t)
                    .copied()
                    .unwrap_or(""),
            );
        }
    }
    for (t, &n) in c.new_types.iter().enumerate() {
        if n > 0 {
            items.push(
                crate::dump::fmt::BRANCH_NEW_TYPE_NAMES
                    .get(t)
                    .copied()
                    .unwrap_or(""),
            );
        }
    }
    if c.cross_4k > 0 {
        items.push("CROSS_4K");
    }
    if c.cross_2m > 0 {
        items.push("CROSS_2M");
    }
    let mut out = String::new();
    for (i, it) in items.iter().enumerate() {
        out.push_str(if i == 0 { " (" } else { " " });
        out.push_str(it);
    }
    out
}

/// Every entry's call graph of each section (events `section_events`),
/// formatted on all cores (one entry per job: the few top rows' graphs
/// are most of the work), in row order.
pub fn entry_graphs(
    report: &profile::hist::Report,
    section_events: &[usize],
    syms: &[profile::symbolize::SymInfo],
    names: &profile::hist::Names<'_>,
    o: &EntryGraphOptions<'_>,
) -> Vec<Vec<Vec<u8>>> {
    use rayon::prelude::*;
    section_events
        .iter()
        .map(|&ev| {
            let Some(h) = report.hists.get(ev) else {
                return Vec::new();
            };
            h.entries
                .par_iter()
                .with_max_len(1)
                .map(|e| {
                    let mut buf = Vec::new();
                    // Writing to a Vec cannot fail.
                    let _ = write_entry_graph(&mut buf, e, ev, report, syms, names, o);
                    buf
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["main", "a", "b", "c", "hot"];

    fn name_of(f: FrameId) -> String {
        NAMES
            .get(f as usize)
            .map_or_else(|| format!("f{f}"), |s| s.to_string())
    }

    fn render(tree: &CallTree, g: &str, entry: u64, total: u64, style: &Style<'_>) -> String {
        let params = CallGraphParams::parse(g).unwrap();
        let sorted = tree.sort(&params, total, &|a, b| a.cmp(&b));
        let graph = EntryGraph {
            tree,
            sorted: &sorted,
            entry_period: entry,
            total_period: total,
        };
        let mut out = Vec::new();
        write_callgraph(&mut out, &graph, &params, style, &name_of).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn plain() -> Style<'static> {
        Style::default()
    }

    /// hot <- a <- main (60), hot <- b <- main (30), hot (10): callee order.
    fn sample_tree() -> CallTree {
        let mut t = CallTree::new();
        t.add(&[4, 1, 0], 60);
        t.add(&[4, 2, 0], 30);
        t.add(&[4], 10);
        t
    }

    #[test]
    fn empty_tree_prints_nothing() {
        let t = CallTree::new();
        for g in ["graph", "fractal", "flat", "folded", "none"] {
            assert_eq!(render(&t, g, 0, 0, &plain()), "", "{g}");
        }
    }

    #[test]
    fn single_frame() {
        let mut t = CallTree::new();
        t.add(&[1], 5);
        assert_eq!(
            render(&t, "graph", 5, 10, &plain()),
            "            |\n            ---a\n\n"
        );
        // With --sort sym the only frame is the entry itself: nothing is
        // left, and perf then prints no blank line either.
        let sym = Style {
            hide_first_frame: true,
            ..plain()
        };
        assert_eq!(render(&t, "graph", 5, 10, &sym), "");
        assert_eq!(
            render(&t, "flat", 5, 10, &plain()),
            "           50.00%\n                a\n\n"
        );
        assert_eq!(render(&t, "folded,0,count", 5, 10, &plain()), "1 a\n");
    }

    #[test]
    fn graph_with_remainder_of_own_hits() {
        let t = sample_tree();
        let want = concat!(
            "            |\n",
            "            ---hot\n",
            "               |          \n",
            "               |--60.00%--a\n",
            "               |          main\n",
            "               |          \n",
            "                --30.00%--b\n",
            "                          main\n",
            "\n",
        );
        assert_eq!(render(&t, "graph", 100, 100, &plain()), want);
        // Fractal shows what the children leave of hot (its own 10) as
        // "[...]", keeping the pipe open for it (and, as perf, with no
        // separator line before it).
        let want = concat!(
            "            |\n",
            "            ---hot\n",
            "               |          \n",
            "               |--60.00%--a\n",
            "               |          main\n",
            "               |          \n",
            "               |--30.00%--b\n",
            "               |          main\n",
            "                --10.00%--[...]\n",
            "\n",
        );
        assert_eq!(render(&t, "fractal", 100, 100, &plain()), want);
        // With counts perf counts the remainder as the parent's
        // children_count minus the printed children's counts, which leaves
        // out the parent's own samples: here 0, so no "[...]" line, though
        // the pipe was already kept open for it.
        let want = concat!(
            "            |\n",
            "            ---hot\n",
            "               |          \n",
            "               |--1--a\n",
            "               |          main\n",
            "               |          \n",
            "               |--1--b\n",
            "               |          main\n",
            "\n",
        );
        assert_eq!(render(&t, "fractal,0,count", 100, 100, &plain()), want);
    }

    #[test]
    fn several_top_nodes_get_values() {
        let mut t = CallTree::new();
        t.add(&[1, 0], 3);
        t.add(&[2, 0], 1);
        let want = concat!(
            "            |          \n",
            "            |--75.00%--a\n",
            "            |          main\n",
            "            |          \n",
            "             --25.00%--b\n",
            "                       main\n",
            "\n",
        );
        assert_eq!(render(&t, "graph", 4, 4, &plain()), want);
        assert_eq!(
            render(&t, "graph,0,period", 4, 4, &plain()),
            want.replace("75.00%", "3").replace("25.00%", "1")
        );
        // A left margin shifts every line.
        let shifted = render(
            &t,
            "graph",
            4,
            4,
            &Style {
                left_margin: 2,
                ..plain()
            },
        );
        assert!(shifted
            .lines()
            .filter(|l| !l.is_empty())
            .all(|l| l.starts_with("              ")));
    }

    #[test]
    fn threshold_cutting_everything_prints_nothing() {
        let t = sample_tree();
        // 100.5% of 100 truncates to 100 in perf (kept); 102% does not.
        assert_ne!(render(&t, "graph,100.5", 100, 100, &plain()), "");
        for g in [
            "graph,102",
            "fractal,101",
            "flat,102",
            "folded,102",
            "graph,-1",
            "graph,nan",
        ] {
            assert_eq!(render(&t, g, 100, 100, &plain()), "", "{g}");
        }
    }

    #[test]
    fn print_limit() {
        let t = sample_tree();
        // One child per level: "a" keeps its pipe since it is not the last.
        let want = concat!(
            "            |\n",
            "            ---hot\n",
            "               |          \n",
            "               |--60.00%--a\n",
            "               |          main\n",
            "\n",
        );
        assert_eq!(render(&t, "graph,0,1", 100, 100, &plain()), want);
        assert_eq!(
            render(&t, "folded,0,2,callee", 100, 100, &plain()),
            "60.00% hot;a;main\n30.00% hot;b;main\n"
        );
        assert_eq!(
            render(&t, "flat,0,1", 100, 100, &plain())
                .matches('%')
                .count(),
            1
        );
    }

    #[test]
    fn flat_and_folded() {
        let t = sample_tree();
        assert_eq!(
            render(&t, "folded,0,period", 100, 100, &plain()),
            "60 hot;a;main\n30 hot;b;main\n10 hot\n"
        );
        let sep = Style {
            field_sep: Some("|"),
            ..plain()
        };
        assert_eq!(
            render(&t, "folded,0,count", 100, 100, &sep),
            "1 hot|a|main\n1 hot|b|main\n1 hot\n"
        );
        // Flat prints cumulated values: hot's own chain shows 100%.
        let flat = render(&t, "flat,0", 100, 100, &plain());
        assert!(
            flat.ends_with("           100.00%\n                hot\n\n"),
            "{flat}"
        );
        assert!(flat.starts_with(
            "           60.00%\n                hot\n                a\n                main\n\n"
        ));
    }

    #[test]
    fn huge_and_zero_totals() {
        let mut t = CallTree::new();
        t.add(&[1, 0], u64::MAX);
        t.add(&[2, 0], u64::MAX);
        let out = render(&t, "graph,0,period", u64::MAX, u64::MAX, &plain());
        assert!(out.contains("--18446744073709551615--a\n"), "{out}");
        let out = render(&t, "graph,0", u64::MAX, u64::MAX, &plain());
        assert!(out.contains("--100.00%--a\n"), "{out}");
        let out = render(&t, "graph,0", 0, 0, &plain());
        assert!(out.contains("--0.00%--a\n"), "{out}");
    }

    #[test]
    fn long_names_are_cut_like_perf() {
        let mut t = CallTree::new();
        t.add(&[1, 2], 1);
        let params = CallGraphParams::parse("folded").unwrap();
        let sorted = t.sort(&params, 1, &|a, b| a.cmp(&b));
        let graph = EntryGraph {
            tree: &t,
            sorted: &sorted,
            entry_period: 1,
            total_period: 1,
        };
        let long = |_f: FrameId| "x".repeat(5000);
        let mut out = Vec::new();
        write_callgraph(&mut out, &graph, &params, &plain(), &long).unwrap();
        let want = format!("100.00% {x};{x}\n", x = "x".repeat(1023));
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn deep_trees_wrap_the_depth_mask_like_perf() {
        // A spine 10, 11, 12, ... with a leaf (100 + level) off every
        // level, under one top node that closes the first column.
        let mut t = CallTree::new();
        for k in 1..45u32 {
            let mut chain: Vec<FrameId> = (0..k).map(|i| 10 + i).collect();
            chain.push(100 + k);
            t.add(&chain, 1);
        }
        // entry_period 0 keeps the top node's value (and column).
        let out = render(&t, "graph,0", 0, 1, &plain());
        let depth = |l: &str| (l.trim_end().len() - 12) / 11;
        let col0 = |l: &str| l.as_bytes().get(12).copied();
        let lines: Vec<&str> = out.lines().skip(2).filter(|l| l.len() > 12).collect();
        // Below the top, column 1 is closed (the top node is the last
        // child) ...
        assert!(lines
            .iter()
            .filter(|l| depth(l) < 32)
            .all(|l| col0(l) == Some(b' ')));
        // ... until depth 33, where perf's `1 << 32` is `1 << 0` on x86 and
        // reopens it.
        assert!(lines.iter().any(|l| depth(l) > 33 && col0(l) == Some(b'|')));
        // And long chains render without recursion.
        let mut t = CallTree::new();
        let chain: Vec<FrameId> = (0..200_000).collect();
        t.add(&chain, 1);
        t.add(&chain[..100_000], 1);
        let out = render(&t, "flat,0", 2, 2, &plain());
        assert_eq!(out.lines().count(), 2 + 200_000 + 2 + 100_000 + 2 - 2);
    }
}
