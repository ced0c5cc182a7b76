//! Histograms of samples by sort keys (perf's `hists`), one per event, with
//! self and accumulated ("children") periods and, per entry, the chains its
//! call graph is built from.

use rustc_hash::FxHashMap as HashMap;
use std::cmp::Ordering;

use crate::fields::Stat;
use crate::machine::Machine;
use crate::resolve::{Collector, Loc, EMPTY_STACK, NO_DSO};
use crate::symbolize::{SymInfo, Symbols};

/// A column perf can sort and group samples by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortKey {
    Comm,
    /// perf's "pid" key is the thread: its tid and comm.
    Pid,
    Dso,
    Sym,
}

impl SortKey {
    /// Parses perf's `--sort` names.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "comm" => SortKey::Comm,
            "pid" => SortKey::Pid,
            "dso" => SortKey::Dso,
            "sym" | "symbol" => SortKey::Sym,
            _ => return None,
        })
    }
    /// The column header perf prints.
    pub fn header(self) -> &'static str {
        match self {
            SortKey::Comm => "Command",
            SortKey::Pid => "    Pid:Command",
            SortKey::Dso => "Shared Object",
            SortKey::Sym => "Symbol",
        }
    }
}

/// A symbol column value: a symbol, or an address nothing covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymRef {
    Sym(u32),
    /// `ip` as perf keeps it (map-relative for a sample's own address,
    /// raw for a callchain frame), in the DSO `dso` (or [`NO_DSO`]).
    Addr {
        ip: u64,
        dso: u32,
    },
}

/// The value of one sort key for an entry. Ids point into [`Names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// The comm at sample time (an index into [`Names::comms`]).
    Comm(u32),
    /// A thread (machine index), shown with its last comm.
    Thread(u32),
    /// A DSO (machine index); None where the address hit no map.
    Dso(Option<u32>),
    /// The symbol. (perf's level character, `.` user, `k` kernel, ..., is
    /// not part of an entry's identity: see [`HistEntry::level`].)
    Sym(SymRef),
}

/// Everything keys refer to, for comparing and printing them.
pub struct Names<'a> {
    pub comms: &'a [String],
    /// perf's short name of each DSO of the machine.
    pub dso_names: Vec<String>,
    pub syms: &'a [SymInfo],
    pub machine: &'a Machine,
}

impl Names<'_> {
    fn comm(&self, id: u32) -> &str {
        self.comms.get(id as usize).map_or("", String::as_str)
    }

    fn dso(&self, d: Option<u32>) -> Option<&str> {
        d.and_then(|d| self.dso_names.get(d as usize))
            .map(String::as_str)
    }

    /// perf's order among entries of equal period (its `se_sort`).
    pub(crate) fn cmp_for_sort(&self, a: &Key, b: &Key) -> Ordering {
        match (a, b) {
            (Key::Comm(x), Key::Comm(y)) => self.comm(*x).cmp(self.comm(*y)),
            (Key::Thread(x), Key::Thread(y)) => {
                let tid = |t: u32| self.machine.thread_info(t as usize).tid;
                tid(*x).cmp(&tid(*y))
            }
            // Entries without a DSO go after those with one.
            (Key::Dso(x), Key::Dso(y)) => match (self.dso(*x), self.dso(*y)) {
                (Some(a), Some(b)) => a.cmp(b),
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
            },
            // By name; unresolved entries after symbols, equal among
            // themselves (perf's `cmp_null`): later sort columns decide.
            (Key::Sym(x), Key::Sym(y)) => match (x, y) {
                (SymRef::Sym(p), SymRef::Sym(q)) => self.syms[*p as usize]
                    .name
                    .cmp(&self.syms[*q as usize].name),
                (SymRef::Sym(_), SymRef::Addr { .. }) => Ordering::Less,
                (SymRef::Addr { .. }, SymRef::Sym(_)) => Ordering::Greater,
                (SymRef::Addr { .. }, SymRef::Addr { .. }) => Ordering::Equal,
            },
            _ => Ordering::Equal,
        }
    }

    /// A thread's comm at the end of the recording (`:tid` if never named).
    pub fn thread_comm(&self, t: u32) -> String {
        match self.machine.comm_of(t as usize) {
            Some(c) => c.to_owned(),
            None => format!(":{}", self.machine.thread_info(t as usize).tid),
        }
    }

    /// The text perf prints for a key of an entry whose level is `level`.
    pub fn display(&self, k: &Key, level: u8) -> String {
        match k {
            Key::Comm(c) => self.comm(*c).to_owned(),
            Key::Thread(t) => {
                let info = self.machine.thread_info(*t as usize);
                let comm = self
                    .machine
                    .comm_of(*t as usize)
                    .map_or_else(|| format!(":{}", info.tid), str::to_owned);
                format!("{:>7}:{comm}", info.tid)
            }
            Key::Dso(d) => self.dso(*d).unwrap_or("[unknown]").to_owned(),
            Key::Sym(s) => format!("[{}] {}", level as char, self.sym_name(s)),
        }
    }

    /// A symbol's name as perf prints it in the symbol column and call
    /// graphs: `name`, `name (inlined)`, or the address in hex.
    pub fn sym_name(&self, s: &SymRef) -> String {
        match s {
            SymRef::Sym(i) => {
                let s = &self.syms[*i as usize];
                if s.inlined {
                    format!("{} (inlined)", s.name)
                } else {
                    s.name.clone()
                }
            }
            // C's `%#.16llx`: no `0x` for zero.
            SymRef::Addr { ip: 0, .. } => "0".repeat(16),
            SymRef::Addr { ip, .. } => format!("{ip:#018x}"),
        }
    }
}

/// One row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistEntry {
    pub keys: Vec<Key>,
    /// The entry's own period (perf's "Self").
    pub period: u64,
    pub samples: u64,
    /// The period of samples with this entry anywhere on their stack
    /// (perf's "Children"); equal to `period` without accumulation.
    pub period_acc: u64,
    pub samples_acc: u64,
    /// The thread of the entry's first sample and its longest chain: perf
    /// breaks ties with them.
    pub thread: u32,
    pub max_depth: usize,
    /// The entry's index when it was made (stable across sorting): what
    /// [`Term::entry`] refers to.
    pub id: u32,
    /// Chains of the entry's own samples, whole: their ends ([`Term`] ids).
    pub ends: Vec<u32>,
    /// Chains of samples that pass the entry (`--children`): the trie
    /// nodes where its frame first occurs; each node's subtree, minus the
    /// entry's own samples, is the part of those chains from the entry on.
    pub subtrees: Vec<u32>,
    /// perf's level character of the sample that created the entry.
    pub level: u8,
    /// Own period by cpumode (see [`Stat::modes`]), when asked for.
    pub modes: [u64; 4],
    /// In a group's leader, the entry's values in each other member's
    /// rows (perf's pairs), in member order.
    pub group: Vec<Stat>,
}

impl HistEntry {
    pub fn stat(&self) -> Stat {
        Stat {
            period: self.period,
            samples: self.samples,
            period_acc: self.period_acc,
            samples_acc: self.samples_acc,
            modes: self.modes,
        }
    }
}

/// The rows of one event.
#[derive(Debug, Clone, Default)]
pub struct Hists {
    index: HashMap<Vec<Key>, usize>,
    pub entries: Vec<HistEntry>,
    pub nr_samples: u64,
    pub total_period: u64,
    /// The period of samples that have a callchain (perf's
    /// `callchain_period`, what call-graph thresholds are relative to).
    pub callchain_period: u64,
    /// Samples and period including those the filters dropped.
    pub all_samples: u64,
    pub all_period: u64,
    pub all_callchain_period: u64,
}

/// A callchain frame: its symbol (or address) and level.
pub type Frame = (SymRef, u8);

/// How the rows are built.
#[derive(Debug, Clone)]
pub struct HistOptions {
    pub keys: Vec<SortKey>,
    /// Accumulate callers' periods (perf's `--children`).
    pub children: bool,
    /// Keep per-entry chains for call graphs.
    pub callchains: bool,
    /// Caller order (perf's default with children) or callee order: decides
    /// how chains are stored, which part each entry gets and so the depth
    /// tie-break.
    pub caller_order: bool,
    /// Keep own periods by cpumode (sys/usr columns).
    pub cpumode: bool,
}

/// All events' rows plus the interned callchains they refer to.
#[derive(Debug, Default)]
pub struct Report {
    pub hists: Vec<Hists>,
    /// Interned frames.
    pub frames: Vec<Frame>,
    /// Every sample's chain (in insertion order) as a path in one trie of
    /// frames, with a root per (event, comm, thread).
    trie: ChainTrie,
}

/// Where a sample's chain ends, with its weight and own entry.
#[derive(Debug, Clone, Copy)]
pub struct Term {
    pub node: u32,
    /// The [`HistEntry::id`] of the sample's own (self) entry.
    pub entry: u32,
    pub period: u64,
    pub samples: u64,
    /// The next term at the same node, or `NONE`.
    next: u32,
}

/// The chains of all samples, sharing common starts.
#[derive(Debug, Default)]
struct ChainTrie {
    /// Per node: parent (`NONE` for a root), frame, first child, next sibling, first term.
    parent: Vec<u32>,
    frame: Vec<u32>,
    first_child: Vec<u32>,
    next_sibling: Vec<u32>,
    first_term: Vec<u32>,
    terms: Vec<Term>,
    ids: HashMap<(u32, u32), u32>,
    roots: HashMap<(u32, u32, u32), u32>,
}

const NONE: u32 = u32::MAX;

impl ChainTrie {
    fn push(&mut self, parent: u32, frame: u32) -> u32 {
        let id = self.parent.len() as u32;
        self.parent.push(parent);
        self.frame.push(frame);
        self.first_child.push(NONE);
        self.next_sibling.push(NONE);
        self.first_term.push(NONE);
        if parent != NONE {
            self.next_sibling[id as usize] = self.first_child[parent as usize];
            self.first_child[parent as usize] = id;
        }
        id
    }

    fn root(&mut self, event: u32, comm: u32, thread: u32) -> u32 {
        if let Some(&r) = self.roots.get(&(event, comm, thread)) {
            return r;
        }
        let r = self.push(NONE, NONE);
        self.roots.insert((event, comm, thread), r);
        r
    }

    /// The child of `parent` for `frame` and whether it is new.
    fn child(&mut self, parent: u32, frame: u32) -> (u32, bool) {
        if let Some(&c) = self.ids.get(&(parent, frame)) {
            return (c, false);
        }
        let c = self.push(parent, frame);
        self.ids.insert((parent, frame), c);
        (c, true)
    }

    fn add_term(&mut self, node: u32, entry: u32, period: u64, samples: u64) -> u32 {
        let id = self.terms.len() as u32;
        self.terms.push(Term {
            node,
            entry,
            period,
            samples,
            next: self.first_term[node as usize],
        });
        self.first_term[node as usize] = id;
        id
    }

    fn children(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(
            Some(self.first_child[node as usize]).filter(|&c| c != NONE),
            |&c| Some(self.next_sibling[c as usize]).filter(|&n| n != NONE),
        )
    }

    fn terms_at(&self, node: u32) -> impl Iterator<Item = &Term> + '_ {
        std::iter::successors(
            self.terms.get(self.first_term[node as usize] as usize),
            |t| self.terms.get(t.next as usize),
        )
    }
}

impl Report {
    /// An entry's call graph: perf's callchain tree of the chains it
    /// collected (its own samples' whole chains and, with `--children`,
    /// the rest of every chain from the entry's first frame in it).
    pub fn entry_call_tree(&self, e: &HistEntry) -> crate::callchain::CallTree {
        use crate::callchain::TrieBuilder;
        let t = &self.trie;
        let mut b = TrieBuilder::new();
        let mut path = Vec::new();
        for &term in &e.ends {
            let Some(term) = t.terms.get(term as usize) else {
                continue;
            };
            path.clear();
            let mut n = term.node;
            while t.parent[n as usize] != NONE {
                path.push(t.frame[n as usize]);
                n = t.parent[n as usize];
            }
            path.reverse();
            b.add_chain(&path, term.period, term.samples);
        }
        let mut work = Vec::new();
        for &top in &e.subtrees {
            let start = b.child(TrieBuilder::ROOT, t.frame[top as usize]);
            work.push((top, start));
            while let Some((n, bn)) = work.pop() {
                for term in t.terms_at(n) {
                    if term.entry != e.id {
                        b.add_hit(bn, term.period, term.samples);
                    }
                }
                for c in t.children(n) {
                    let bc = b.child(bn, t.frame[c as usize]);
                    work.push((c, bc));
                }
            }
        }
        b.into_call_tree()
    }

    /// Pairs the rows of an event group for perf's group view (its
    /// `hists__match` and `hists__link`): each of the leader's rows gets
    /// the values of the row with the same keys in every member, and rows
    /// only a member has are added to the leader with zero values of its
    /// own. Call before sorting.
    pub fn link_group(&mut self, leader: usize, members: &[usize]) {
        let Some(mut lead) = self.hists.get_mut(leader).map(std::mem::take) else {
            return;
        };
        for (slot, &m) in members.iter().enumerate() {
            let Some(mh) = self.hists.get(m).filter(|_| m != leader) else {
                continue;
            };
            for e in &mut lead.entries {
                e.group.resize(members.len(), Stat::default());
            }
            for me in &mh.entries {
                let i = match lead.index.get(&me.keys) {
                    Some(&i) => i,
                    None => {
                        let i = lead.entry_index(&me.keys, me.thread, me.level);
                        lead.entries[i].group.resize(members.len(), Stat::default());
                        i
                    }
                };
                lead.entries[i].group[slot] = me.stat();
            }
        }
        self.hists[leader] = lead;
    }
}

/// Samples kept by the filters.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub comms: Option<Vec<String>>,
    pub dsos: Option<Vec<String>>,
    pub pids: Option<Vec<i32>>,
    pub tids: Option<Vec<i32>>,
    pub symbols: Option<Vec<String>>,
}

/// perf's short name for a DSO: `[JIT] tid N` for a perf-N.map, `[mod_name]`
/// for a kernel module, the file name of other paths, other names as they are.
pub fn dso_short_name(name: &str) -> String {
    if !name.starts_with('/') {
        return name.to_string();
    }
    let base = name.rsplit('/').next().unwrap_or(name);
    if let Some(pid) = name
        .strip_prefix("/tmp/perf-")
        .and_then(|r| r.strip_suffix(".map"))
        .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        return format!("[JIT] tid {pid}");
    }
    for ext in [".ko", ".ko.gz", ".ko.xz", ".ko.zst"] {
        if let Some(m) = base.strip_suffix(ext) {
            return format!("[{}]", m.replace('-', "_"));
        }
    }
    base.to_string()
}

impl Hists {
    /// What percentages are of: all samples' period (perf's default,
    /// `--percentage absolute`) or only those the filters kept (`relative`).
    pub fn percent_base(&self, relative: bool) -> u64 {
        if relative {
            self.total_period
        } else {
            self.all_period
        }
    }

    /// (samples, period) for the section header, as `percent_base`.
    pub fn header_totals(&self, relative: bool) -> (u64, u64) {
        if relative {
            (self.nr_samples, self.total_period)
        } else {
            (self.all_samples, self.all_period)
        }
    }

    /// What call-graph thresholds are relative to, as `percent_base`.
    pub fn callchain_base(&self, relative: bool) -> u64 {
        if relative {
            self.callchain_period
        } else {
            self.all_callchain_period
        }
    }

    pub(crate) fn clear_index(&mut self) {
        self.index.clear();
    }

    /// The index of the entry with `keys`, created if new (allocating only then).
    fn entry_index(&mut self, keys: &[Key], thread: u32, level: u8) -> usize {
        if let Some(&i) = self.index.get(keys) {
            return i;
        }
        self.index.insert(keys.to_vec(), self.entries.len());
        self.entries.push(HistEntry {
            keys: keys.to_vec(),
            period: 0,
            samples: 0,
            period_acc: 0,
            samples_acc: 0,
            thread,
            max_depth: 0,
            id: self.entries.len() as u32,
            ends: Vec::new(),
            subtrees: Vec::new(),
            level,
            modes: [0; 4],
            group: Vec::new(),
        });
        self.entries.len() - 1
    }
}

/// Builds the rows of every event from pass one and pass two.
/// `sums` are the collector's sums in order
/// ([`Collector::take_sums_in_order`]).
pub fn build(
    collector: &Collector,
    sums: Vec<(crate::resolve::SampleKey, crate::resolve::SampleSum)>,
    syms: &Symbols,
    machine: &Machine,
    dso_names: &[String],
    opts: &HistOptions,
    filters: &Filters,
) -> Report {
    let mut report = Report::default();
    let mut frame_ids: HashMap<Frame, u32> = HashMap::default();
    let locs = collector.interner.locs();
    let mut stack = Vec::new();
    let mut chain: Vec<u32> = Vec::new();
    let mut keybuf: Vec<Key> = Vec::new();
    // Entries a sample already added its period to, as a stamp per entry
    // index (the sample's number), so recursion costs O(1) per frame.
    let mut seen: Vec<u32> = Vec::new();
    // The same, for entries whose frame already occurred on the chain
    // (the self entry not counted).
    let mut path_seen: Vec<u32> = Vec::new();
    let mut path_nodes: Vec<u32> = Vec::new();
    let mut new_nodes: Vec<bool> = Vec::new();
    let mut stamp: u32 = 0;
    // A frame's entry within one (event, comm, thread): the sort keys here
    // are functions of those and the frame, so each is hashed only once.
    let mut frame_entry: HashMap<(u32, u32, u32, u32), usize> = HashMap::default();
    let need_chain = opts.children || opts.callchains;
    let dso_rows: Vec<u32> = {
        let mut first: HashMap<&str, u32> = HashMap::default();
        dso_names
            .iter()
            .enumerate()
            .map(|(i, n)| *first.entry(n.as_str()).or_insert(i as u32))
            .collect()
    };
    let mut loc_frames: Vec<Option<(u32, u32)>> = Vec::new();
    let mut loc_frame_ids: Vec<u32> = Vec::new();
    let comms = collector.comms();
    for (key, sum) in sums {
        let ev = key.event as usize;
        if report.hists.len() <= ev {
            report.hists.resize_with(ev + 1, Hists::default);
        }
        {
            let h = &mut report.hists[ev];
            h.all_samples += sum.samples;
            h.all_period = h.all_period.wrapping_add(sum.period);
            if need_chain && key.stack != EMPTY_STACK {
                h.all_callchain_period = h.all_callchain_period.wrapping_add(sum.period);
            }
        }
        let th = machine.thread_info(key.thread as usize);
        if !filters.keep_thread(comms, key.comm, th.pid, th.tid) {
            continue;
        }
        let leaf = &locs[key.leaf as usize];
        let leaf_sym = sym_ref_of(syms, key.leaf, leaf);
        if !filters.keep_sample(dso_names, syms, leaf, &leaf_sym) {
            continue;
        }
        // The chain, expanded into frames (inline frames included).
        chain.clear();
        if need_chain {
            collector.interner.stack(key.stack, &mut stack);
            for &lid in &stack {
                // A location's frames are interned once and then copied.
                let (a, b) = match loc_frames.get(lid as usize).copied().flatten() {
                    Some(r) => r,
                    None => {
                        let l = &locs[lid as usize];
                        let a = loc_frame_ids.len() as u32;
                        match syms.per_loc.get(lid as usize).filter(|s| s.sym.is_some()) {
                            Some(ls) => {
                                for &f in &ls.frames {
                                    loc_frame_ids.push(intern_frame(
                                        &mut report.frames,
                                        &mut frame_ids,
                                        (SymRef::Sym(f), l.level),
                                    ));
                                }
                            }
                            None => loc_frame_ids.push(intern_frame(
                                &mut report.frames,
                                &mut frame_ids,
                                (
                                    SymRef::Addr {
                                        ip: l.ip,
                                        dso: l.dso,
                                    },
                                    l.level,
                                ),
                            )),
                        }
                        let r = (a, loc_frame_ids.len() as u32);
                        if loc_frames.len() <= lid as usize {
                            loc_frames.resize(lid as usize + 1, None);
                        }
                        loc_frames[lid as usize] = Some(r);
                        r
                    }
                };
                chain.extend_from_slice(&loc_frame_ids[a as usize..b as usize]);
            }
        }
        // perf's cursor holds the chain in the order in effect: root first
        // for caller order.
        if opts.caller_order {
            chain.reverse();
        }
        // The chain's path in the trie, and which of its nodes are new.
        path_nodes.clear();
        new_nodes.clear();
        let keep_chain = opts.callchains && !chain.is_empty();
        if keep_chain {
            let mut node = report.trie.root(key.event, key.comm, key.thread);
            for &f in &chain {
                let (n, new) = report.trie.child(node, f);
                path_nodes.push(n);
                new_nodes.push(new);
                node = n;
            }
        }
        let h = &mut report.hists[ev];
        h.nr_samples += sum.samples;
        h.total_period = h.total_period.wrapping_add(sum.period);
        if !chain.is_empty() {
            h.callchain_period = h.callchain_period.wrapping_add(sum.period);
        }
        keys_for(
            &mut keybuf,
            &opts.keys,
            &dso_rows,
            key.comm,
            key.thread,
            leaf.dso,
            leaf_sym,
        );
        let depth = chain.len();
        let self_index = h.entry_index(&keybuf, key.thread, leaf.level);
        {
            let e = &mut h.entries[self_index];
            e.period = e.period.wrapping_add(sum.period);
            e.samples += sum.samples;
            e.period_acc = e.period_acc.wrapping_add(sum.period);
            e.samples_acc += sum.samples;
            if opts.cpumode {
                // perf charges the sample's cpumode, which its leaf's
                // level says.
                let m = match leaf.level {
                    b'k' => Some(0),
                    b'.' => Some(1),
                    b'g' => Some(2),
                    b'u' => Some(3),
                    _ => None,
                };
                if let Some(m) = m {
                    e.modes[m] = e.modes[m].wrapping_add(sum.period);
                }
            }
            if opts.callchains {
                e.max_depth = e.max_depth.max(depth);
            }
            if keep_chain {
                let end = path_nodes[path_nodes.len() - 1];
                let id = e.id;
                let term = report.trie.add_term(end, id, sum.period, sum.samples);
                report.hists[ev].entries[self_index].ends.push(term);
            }
        }
        let h = &mut report.hists[ev];
        if !opts.children {
            continue;
        }
        // perf walks the chain in its order; each frame's entry (once per
        // sample: recursion and the self entry are skipped) accumulates the
        // period and gets the chain from that frame on.
        stamp = stamp.wrapping_add(1);
        if stamp == 0 {
            seen.iter_mut().for_each(|s| *s = 0);
            path_seen.iter_mut().for_each(|s| *s = 0);
            stamp = 1;
        }
        let mark = |seen: &mut Vec<u32>, idx: usize| -> bool {
            if seen.len() <= idx {
                seen.resize(idx + 1, 0);
            }
            let fresh = seen[idx] != stamp;
            seen[idx] = stamp;
            fresh
        };
        mark(&mut seen, self_index);
        // perf fills one location per frame and only sets its level for
        // frames with a map: a frame without one shows the level before it.
        let mut level = leaf.level;
        for (pos, &f) in chain.iter().enumerate() {
            let (sref, frame_level) = report.frames[f as usize];
            let dso = match sref {
                SymRef::Sym(s) => syms.syms[s as usize].dso,
                SymRef::Addr { dso, .. } => dso,
            };
            if dso != NO_DSO {
                level = frame_level;
            }
            let idx = match frame_entry.get(&(key.event, key.comm, key.thread, f)) {
                Some(&i) => i,
                None => {
                    keys_for(
                        &mut keybuf,
                        &opts.keys,
                        &dso_rows,
                        key.comm,
                        key.thread,
                        dso,
                        sref,
                    );
                    let i = h.entry_index(&keybuf, key.thread, level);
                    frame_entry.insert((key.event, key.comm, key.thread, f), i);
                    i
                }
            };
            // Where a frame's entry first occurs on the path is a property
            // of the trie node: recorded once, when the node is made.
            if mark(&mut path_seen, idx) && keep_chain && new_nodes[pos] {
                h.entries[idx].subtrees.push(path_nodes[pos]);
            }
            if !mark(&mut seen, idx) {
                continue;
            }
            let e = &mut h.entries[idx];
            e.period_acc = e.period_acc.wrapping_add(sum.period);
            e.samples_acc += sum.samples;
            if opts.callchains {
                e.max_depth = e.max_depth.max(depth - pos);
            }
        }
    }
    for h in &mut report.hists {
        for e in &mut h.entries {
            e.ends.shrink_to_fit();
            e.subtrees.shrink_to_fit();
        }
    }
    report
}

fn intern_frame(frames: &mut Vec<Frame>, ids: &mut HashMap<Frame, u32>, f: Frame) -> u32 {
    *ids.entry(f).or_insert_with(|| {
        frames.push(f);
        (frames.len() - 1) as u32
    })
}

/// The symbol column of a location: its symbol, else its address (the
/// map-relative one for a sample's own address, as perf keeps it).
fn sym_ref_of(syms: &Symbols, lid: u32, l: &Loc) -> SymRef {
    match syms.per_loc.get(lid as usize).and_then(|s| s.sym) {
        Some(s) => SymRef::Sym(s),
        None => SymRef::Addr {
            ip: l.rel,
            dso: l.dso,
        },
    }
}

/// The sort keys of a sample or frame. `dso_rows` maps each DSO to the
/// first one with its short name: perf's dso key compares short names, so
/// two binaries named alike (`a/sear`, `b/sear`) share a row.
fn keys_for(
    out: &mut Vec<Key>,
    keys: &[SortKey],
    dso_rows: &[u32],
    comm: u32,
    thread: u32,
    dso: u32,
    sym: SymRef,
) {
    out.clear();
    let dso = dso_rows.get(dso as usize).copied().unwrap_or(dso);
    out.extend(keys.iter().map(|k| match k {
        SortKey::Comm => Key::Comm(comm),
        SortKey::Pid => Key::Thread(thread),
        SortKey::Dso => Key::Dso((dso != NO_DSO).then_some(dso)),
        // perf tells unresolved symbols apart by address only.
        SortKey::Sym => Key::Sym(match sym {
            SymRef::Addr { ip, .. } => SymRef::Addr { ip, dso: NO_DSO },
            s => s,
        }),
    }));
}

impl Filters {
    fn keep_thread(&self, comms: &[String], comm: u32, pid: i32, tid: i32) -> bool {
        if let Some(list) = &self.comms {
            match comms.get(comm as usize) {
                Some(c) if list.iter().any(|x| x == c) => {}
                _ => return false,
            }
        }
        if let Some(p) = &self.pids {
            if !p.contains(&pid) {
                return false;
            }
        }
        if let Some(t) = &self.tids {
            if !t.contains(&tid) {
                return false;
            }
        }
        true
    }

    fn keep_sample(&self, dso_names: &[String], syms: &Symbols, l: &Loc, s: &SymRef) -> bool {
        if let Some(list) = &self.dsos {
            let name = dso_names.get(l.dso as usize);
            if !name.is_some_and(|n| list.iter().any(|x| x == n)) {
                return false;
            }
        }
        if let Some(list) = &self.symbols {
            match s {
                SymRef::Sym(i) => {
                    if !list.iter().any(|x| *x == syms.syms[*i as usize].name) {
                        return false;
                    }
                }
                SymRef::Addr { .. } => return false,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_follow_perf() {
        assert_eq!(dso_short_name("/usr/lib/libc.so.6"), "libc.so.6");
        assert_eq!(dso_short_name("/tmp/perf-2046.map"), "[JIT] tid 2046");
        assert_eq!(dso_short_name("/tmp/perf-x.map"), "perf-x.map");
        assert_eq!(
            dso_short_name("/lib/modules/3.4/kernel/net/mac80211/mac80211.ko"),
            "[mac80211]"
        );
        assert_eq!(
            dso_short_name("/lib/modules/x/snd-hda-intel.ko.xz"),
            "[snd_hda_intel]"
        );
        assert_eq!(dso_short_name("[kernel.kallsyms]"), "[kernel.kallsyms]");
    }
}
