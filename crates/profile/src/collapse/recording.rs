//! Folding a replayed recording: each distinct summed sample of pass one
//! becomes the stack `perf script` would print for it, folded by the same
//! rules as text input ([`super::perf_script::Collapser`]), at a cost that
//! grows with distinct stacks and locations, not with samples.

use rustc_hash::FxHashMap as HashMap;

use perf_data::Diagnostics;

use super::perf_script::{Collapser, Options, Weight};
use super::Folded;
use crate::collect::{Collector, SampleKey, SampleSum, NO_DSO};
use crate::machine::Machine;
use crate::symbolize::SymbolTable;

/// What [`fold`] needs besides the collapser's options.
pub struct Recording<'a> {
    pub collector: &'a Collector,
    pub sums: &'a [(SampleKey, SampleSum)],
    pub syms: &'a SymbolTable,
    pub machine: &'a Machine,
    /// Event names by event index, as the recording names them.
    pub event_names: &'a [String],
    /// Mark inline frames `_[i]` (they are always expanded where perf
    /// expands them; unmarked, as `perf script` text folds them, otherwise).
    pub mark_inline: bool,
    /// For a flame graph that leaves out frames narrower than this
    /// percentage of all samples (inferno's `min_width`): the stacks below
    /// such a frame are folded into one line ending in an empty frame
    /// under it. The graph drawn from the lines is the same (the lines
    /// sort where the ones they replace did), from far less text.
    pub prune_below_percent: Option<f64>,
}

/// How a recording is replayed for folding.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// See [`Recording::mark_inline`].
    pub mark_inline: bool,
    /// See [`Recording::prune_below_percent`].
    pub prune_below_percent: Option<f64>,
    pub raw_return_addresses: bool,
    pub max_stack: usize,
    /// `--time`: only samples in these ranges.
    pub time: Option<crate::session::TimeRanges>,
    /// `-C/--cpu`: only samples of these CPUs.
    pub cpus: Option<Vec<u32>>,
}

/// A whole recording's samples replayed, unwound, symbolized (perf's short
/// names, which the folding rules would cut parameter lists from anyway)
/// and folded by the text rules; with the collapser's warnings and the
/// reader (for the recording's warnings).
pub fn fold_recording(
    reader: perf_data::RecordReader,
    opts: &Options,
    r: &Replay,
) -> Result<(Folded, Diagnostics, perf_data::OrderedReader), crate::Error> {
    let mut summed = crate::session::sum(
        reader,
        &crate::session::SumOptions {
            collect: crate::collect::CollectOptions {
                max_stack: r.max_stack,
                callchains: true,
                adjust_returns: !r.raw_return_addresses,
                by_cpu: false,
                max_stack_from_root: false,
                time_quantum: None,
                by_cgroup: false,
                by_trace: false,
                by_code_page: false,
                by_weight: false,
                mem: false,
                branches: false,
                branch_history: false,
            },
            names: crate::symbolize::NameStyle::Short,
            inline: true,
            srclines: false,
            time: r.time.clone(),
            cpus: r.cpus.clone(),
            thread_values: false,
            switch: None,
        },
    )?;
    let t0 = std::time::Instant::now();
    let event_names: Vec<String> = summed
        .reader
        .meta()
        .events
        .iter()
        .map(|e| e.name())
        .collect();
    let sums = summed.collector.take_sums_in_order();
    log::debug!("{} sums in order: {:?}", sums.len(), t0.elapsed());
    if opts.wall_clock {
        wall_clock_events(&event_names)?;
    } else if let Some(asked) = &opts.event_filter {
        if !event_names.iter().any(|e| event_matches(e, asked)) {
            return Err(crate::Error::BadOption(format!(
                "no event {asked} in this recording (it has {})",
                event_names.join(", ")
            )));
        }
    }
    let (folded, diag) = fold(
        &Recording {
            collector: &summed.collector,
            sums: &sums,
            syms: &summed.syms,
            machine: &summed.machine,
            event_names: &event_names,
            mark_inline: r.mark_inline,
            prune_below_percent: r.prune_below_percent,
        },
        opts,
    );
    log::debug!("folded: {:?}", t0.elapsed());
    Ok((folded, diag, summed.reader))
}

/// perf's name for off-CPU time (`record --off-cpu`).
pub const OFFCPU_EVENT: &str = "offcpu-time";

/// The events a wall-clock view sums (the time-based on-CPU events and
/// `offcpu-time`, whose periods are nanoseconds), and which is off-CPU's;
/// an error saying what to record where the recording lacks either.
pub fn wall_clock_events(event_names: &[String]) -> Result<(Vec<u32>, u32), crate::Error> {
    let off = event_names.iter().position(|e| e == OFFCPU_EVENT);
    let on: Vec<u32> = event_names
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            ["cpu-clock", "task-clock"]
                .iter()
                .any(|t| event_matches(e, t))
        })
        .map(|(i, _)| i as u32)
        .collect();
    match off {
        Some(off) if !on.is_empty() => {
            Ok((on.into_iter().chain([off as u32]).collect(), off as u32))
        }
        Some(_) => Err(crate::Error::BadOption(format!(
            "--wall-clock adds on-CPU time to off-CPU time: it needs cpu-clock or task-clock \
             samples (whose periods are nanoseconds), and this recording has {}",
            event_names.join(", ")
        ))),
        None => Err(crate::Error::BadOption(format!(
            "--wall-clock needs off-CPU samples: record with `sear record --off-cpu` (this \
             recording has {})",
            event_names.join(", ")
        ))),
    }
}

/// Whether `asked` names `event`: exactly, or without perf's modifiers
/// (`cpu-clock` for `cpu-clock:ppp`).
pub fn event_matches(event: &str, asked: &str) -> bool {
    event == asked || event.split(':').next() == Some(asked)
}

/// Folds the samples of one event (the option's `event_filter`, else the
/// first event sampled); returns the stacks and the collapser's warnings.
pub fn fold(r: &Recording<'_>, opts: &Options) -> (Folded, Diagnostics) {
    let t0 = std::time::Instant::now();
    let mut c = Collapser::new(Options {
        inline: false,
        ..opts.clone()
    });
    let mut diag = Diagnostics::default();
    let event = match &opts.event_filter {
        Some(asked) => r
            .event_names
            .iter()
            .position(|e| event_matches(e, asked))
            .map(|i| i as u32),
        None => r.sums.first().map(|(k, _)| k.event),
    };
    // (Wall-clock: several events, off-CPU's marked.)
    let (events, offcpu) = match wall_clock_events(r.event_names) {
        Ok((events, off)) if opts.wall_clock => (events, Some(off)),
        _ => (event.into_iter().collect(), None),
    };
    let other = r
        .sums
        .iter()
        .filter(|(k, _)| !events.contains(&k.event))
        .count();
    if other > 0 && offcpu.is_none() {
        let which = event
            .and_then(|e| r.event_names.get(e as usize))
            .map_or("no event", |s| s.as_str());
        diag.warn("other event", 0, || {
            format!("samples of other events than {which} skipped (choose with --event-filter)")
        });
    }
    let comms = r.collector.comms();
    // Folded names (interned) per (location, java comm), leaf first.
    let mut cache: HashMap<(u32, bool, bool), Vec<u32>> = HashMap::default();
    // The stacks are folded in a trie of frame names, rooted at the
    // comm (and pid/tid) text: each stack node of pass one is walked once
    // per root, and each distinct folded line is written out once.
    let mut tree = NameTrie::default();
    let off_cpu_frame = tree.intern(b"[off-cpu]");
    let mut roots: HashMap<Vec<u8>, u32> = HashMap::default();
    // Per stack node of pass one: its trie node under the root (and java
    // flag) that folded it last; another root folds it again.
    let nodes = r.collector.interner.stack_nodes();
    let mut memo: Vec<(u32, u32)> = vec![(u32::MAX, u32::MAX); nodes];
    let mut key = Vec::new();
    let mut pending: Vec<u32> = Vec::new();
    for (k, sum) in r.sums {
        if !events.contains(&k.event) {
            continue;
        }
        let comm = comms.get(k.comm as usize).map_or("", |c| c.as_str());
        let java = comm == "java";
        let th = r.machine.thread_info(k.thread as usize);
        key.clear();
        key.extend(comm.bytes().map(|b| if b == b' ' { b'_' } else { b }));
        if opts.include_tid {
            key.extend_from_slice(format!("-{}/{}", th.pid, th.tid).as_bytes());
        } else if opts.include_pid {
            key.extend_from_slice(format!("-{}", th.pid).as_bytes());
        }
        let root = match roots.get(&key) {
            Some(&n) => n,
            None => {
                let n = tree.add_root(&key);
                roots.insert(key.clone(), n);
                n
            }
        };
        let node = if r.collector.interner.node(k.stack).is_none() {
            // No chain: the sample's own location alone.
            let mut n = root;
            for &name in names_of(&mut cache, &mut c, &mut tree, r, k.leaf, java, false)
                .iter()
                .rev()
            {
                n = tree.child(n, name);
            }
            n
        } else {
            // The deepest part of the stack folded before under this root,
            // then the locations below it, root first.
            pending.clear();
            let mut n = root;
            let mut s = k.stack;
            while let Some((up, _)) = r.collector.interner.node(s) {
                let tag = root << 1 | java as u32;
                if let Some(&(t, m)) = memo.get(s as usize) {
                    if t == tag {
                        n = m;
                        break;
                    }
                }
                pending.push(s);
                s = up;
            }
            for &s in pending.iter().rev() {
                if let Some((_, lid)) = r.collector.interner.node(s) {
                    for &name in names_of(&mut cache, &mut c, &mut tree, r, lid, java, true)
                        .iter()
                        .rev()
                    {
                        n = tree.child(n, name);
                    }
                }
                if let Some(m) = memo.get_mut(s as usize) {
                    *m = (root << 1 | java as u32, n);
                }
            }
            n
        };
        let node = if Some(k.event) == offcpu {
            tree.child(node, off_cpu_frame)
        } else {
            node
        };
        let count = match opts.weight {
            Weight::Samples => sum.samples,
            // As for text: a zero period counts as one per sample.
            Weight::Period if sum.period == 0 => sum.samples,
            Weight::Period => sum.period,
        };
        tree.add(node, count);
    }
    // (What only folding needs goes before the lines are made.)
    drop(memo);
    drop(cache);
    log::debug!(
        "{} trie nodes, {} names: {:?}",
        tree.parent.len(),
        tree.names.len(),
        t0.elapsed()
    );
    let (cut, marks_below) = match r.prune_below_percent {
        Some(p) if !tree.odd_names => tree.cuts(p),
        _ => (Vec::new(), Vec::new()),
    };
    let lines = tree.lines();
    // The lines are written from the tree itself where its paths' texts
    // are the lines, one each: no frames pruned into a line of their own,
    // no count kept at its maximum (the collapser warns of those), no name
    // holding the separator.
    if cut.is_empty()
        && !lines.iter().any(|l| l.1 .1)
        && !tree.names.iter().any(|n| n.contains(&b';'))
    {
        let NameTrie {
            parent,
            children,
            names,
            ..
        } = tree;
        let name = (0..parent.len() as u32)
            .map(|n| children.key(n).unwrap_or(NONE))
            .collect();
        drop(children);
        let no_lines = lines.is_empty();
        let (mut folded, d) = c.finish();
        folded.set_tree(super::LineTree {
            names,
            parent,
            name,
            lines: lines.into_iter().map(|(n, (c, _))| (n, c)).collect(),
        });
        log::debug!("lines as a tree: {:?}", t0.elapsed());
        merge_warnings(&mut diag, d, no_lines);
        return (folded, diag);
    }
    let mut line = Vec::new();
    let mut below: HashMap<u32, u64> = HashMap::default();
    for (node, count) in lines {
        match cut.get(node as usize) {
            Some(&c) if c != NONE && c != node => {
                let b = below.entry(c).or_default();
                *b = b.saturating_add(count.0);
                continue;
            }
            _ => {}
        }
        tree.text(node, &mut line);
        // Counts beyond u64 were kept at the maximum: the collapser warns.
        c.add_folded(&line, count.0);
        if count.1 {
            c.add_folded(&line, 1);
        }
    }
    for (node, count) in below {
        tree.text(node, &mut line);
        line.push(b';');
        // Any name after the `;` sorts the line where the ones it
        // replaces were; one with a mark keeps the palette the marks
        // choose (kernel, JIT and inline colours).
        let marks = marks_below.get(node as usize).copied().unwrap_or(0);
        if let Some(m) = MARKS.iter().find(|m| marks & mark_bit(m) != 0) {
            line.extend_from_slice(m);
        }
        c.add_folded(&line, count);
    }
    log::debug!("lines: {:?}", t0.elapsed());
    let (folded, d) = c.finish();
    log::debug!("finished: {:?}", t0.elapsed());
    let no_lines = d.warnings.contains_key("no samples");
    merge_warnings(&mut diag, d, no_lines);
    (folded, diag)
}

/// The collapser's warnings into `diag`, its "no samples" (of text) said
/// of the recording's event where no line was made.
fn merge_warnings(diag: &mut Diagnostics, mut d: Diagnostics, no_lines: bool) {
    d.warnings.remove("no samples");
    if no_lines {
        diag.warn("no samples", 0, || {
            "the recording has no samples of that event".into()
        });
    }
    for (kind, w) in d.warnings {
        diag.warnings.entry(kind).or_insert(w);
    }
}

/// The folded names of a location (leaf first), made once per (location,
/// java comm).
fn names_of<'c>(
    cache: &'c mut HashMap<(u32, bool, bool), Vec<u32>>,
    c: &mut Collapser,
    tree: &mut NameTrie,
    r: &Recording<'_>,
    lid: u32,
    java: bool,
    chain: bool,
) -> &'c [u32] {
    let locs = r.collector.interner.locs();
    let dsos = r.machine.dsos();
    cache.entry((lid, java, chain)).or_insert_with(|| {
        let l = &locs[lid as usize];
        // As perf script prints it: a callchain entry in a binary that is
        // not mapped at its own addresses by its map-relative address.
        let identity = dsos
            .get(l.dso as usize)
            .is_none_or(crate::machine::Dso::maps_identity);
        let pc = format!("{:x}", if chain && !identity { l.rel } else { l.ip });
        let module = |dso: u32| -> &str {
            if dso == NO_DSO {
                "[unknown]"
            } else {
                dsos.get(dso as usize)
                    .map_or("[unknown]", |d| d.name.as_str())
            }
        };
        let mut out = Vec::new();
        match r.syms.per_loc.get(lid as usize).filter(|s| s.sym.is_some()) {
            Some(ls) => {
                for &f in &ls.frames {
                    let s = &r.syms.syms[f as usize];
                    let m = if s.inlined { "inlined" } else { module(s.dso) };
                    for mut n in c.frame_names(java, pc.as_bytes(), s.name.as_bytes(), m.as_bytes())
                    {
                        if s.inlined && r.mark_inline {
                            n.extend_from_slice(b"_[i]");
                        }
                        out.push(tree.intern(&n));
                    }
                }
            }
            None => {
                for n in c.frame_names(java, pc.as_bytes(), b"[unknown]", module(l.dso).as_bytes())
                {
                    out.push(tree.intern(&n));
                }
            }
        }
        out
    })
}

const NONE: u32 = u32::MAX;

/// The marks folded names end with (kernel, JIT, inline).
const MARKS: [&[u8]; 3] = [b"_[k]", b"_[j]", b"_[i]"];

fn mark_bit(m: &[u8]) -> u8 {
    MARKS.iter().position(|x| *x == m).map_or(0, |i| 1 << i)
}

fn marks_of(name: &[u8]) -> u8 {
    MARKS
        .iter()
        .find(|m| name.ends_with(m))
        .map_or(0, |m| mark_bit(m))
}

/// Folded stacks as a trie of frame names under one root per comm text.
#[derive(Default)]
struct NameTrie {
    /// Some name would change on its way into the SVG (control
    /// characters), which could merge frames: no pruning then.
    odd_names: bool,
    /// Per node: parent (`u32::MAX` for a root); its name is its key in
    /// `children`.
    parent: Vec<u32>,
    /// The nodes where samples ended: the count, and whether it overflowed
    /// (on many unique stacks a few of the nodes: kept apart from them).
    count: HashMap<u32, (u64, bool)>,
    children: crate::children::Children,
    names: Vec<Vec<u8>>,
    name_ids: HashMap<Vec<u8>, u32>,
}

impl NameTrie {
    fn intern(&mut self, name: &[u8]) -> u32 {
        if let Some(&i) = self.name_ids.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        let s = String::from_utf8_lossy(name);
        self.odd_names |=
            s.contains(|c: char| (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}');
        self.names.push(name.to_vec());
        self.name_ids.insert(name.to_vec(), i);
        i
    }

    fn push(&mut self, parent: u32, name: u32) -> u32 {
        let n = self.parent.len() as u32;
        self.parent.push(parent);
        self.children.add((parent != NONE).then_some(parent), name);
        n
    }

    /// Node `n`'s name.
    fn name(&self, n: u32) -> u32 {
        self.children.key(n).unwrap_or(NONE)
    }

    fn add_root(&mut self, text: &[u8]) -> u32 {
        let name = self.intern(text);
        self.push(u32::MAX, name)
    }

    fn child(&mut self, parent: u32, name: u32) -> u32 {
        if let Some(n) = self.children.get(Some(parent), name) {
            return n;
        }
        self.push(parent, name)
    }

    fn add(&mut self, node: u32, count: u64) {
        let c = self.count.entry(node).or_insert((0, false));
        match c.0.checked_add(count) {
            Some(v) => c.0 = v,
            None => *c = (u64::MAX, true),
        }
    }

    /// The nodes where samples ended, with their counts.
    fn lines(&self) -> Vec<(u32, (u64, bool))> {
        let mut v: Vec<(u32, (u64, bool))> = self.count.iter().map(|(&n, &c)| (n, c)).collect();
        v.sort_unstable_by_key(|l| l.0);
        v
    }

    /// Per node, the first node of its path (below the root) whose
    /// stacks' count is under `percent` of all (inferno's test: `weight <
    /// min_width / (100 / total)`), or `NONE`. Parents come before their
    /// children in the node order.
    /// Also per node, the marks of the names below it.
    fn cuts(&self, percent: f64) -> (Vec<u32>, Vec<u8>) {
        let n = self.parent.len();
        let mut weight: Vec<u64> = vec![0; n];
        for (&i, c) in &self.count {
            weight[i as usize] = c.0;
        }
        let mut below = vec![0u8; n];
        for i in (0..n).rev() {
            let p = self.parent[i];
            if p != NONE {
                weight[p as usize] = weight[p as usize].saturating_add(weight[i]);
                below[p as usize] |= below[i] | marks_of(&self.names[self.name(i as u32) as usize]);
            }
        }
        let total = (0..n)
            .filter(|&i| self.parent[i] == NONE)
            .fold(0u64, |t, i| t.saturating_add(weight[i]));
        let min = percent / (100.0 / total as f64);
        let mut cut = vec![NONE; n];
        for i in 0..n {
            let p = self.parent[i];
            if p == NONE {
                continue;
            }
            cut[i] = if cut[p as usize] != NONE {
                cut[p as usize]
            } else if (weight[i] as f64) < min {
                i as u32
            } else {
                NONE
            };
        }
        (cut, below)
    }

    /// The folded text of the path to `node`: root text, then names.
    fn text(&self, node: u32, out: &mut Vec<u8>) {
        let mut path = Vec::new();
        let mut n = node;
        while n != u32::MAX {
            path.push(self.name(n));
            n = self.parent[n as usize];
        }
        out.clear();
        for (i, &id) in path.iter().rev().enumerate() {
            if i > 0 {
                out.push(b';');
            }
            out.extend_from_slice(&self.names[id as usize]);
        }
    }
}
