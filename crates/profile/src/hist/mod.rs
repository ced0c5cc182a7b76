//! Histograms of samples by sort keys (perf's `hists`), one per event, with
//! self and accumulated ("children") periods and, per entry, the chains its
//! call graph is built from.

use rustc_hash::FxHashMap as HashMap;
use std::cmp::Ordering;

use crate::collect::{Collector, Loc, Origin, EMPTY_STACK, NO_DSO};
use crate::machine::Machine;
use crate::symbolize::{SymInfo, SymbolTable};

mod filter;
mod history;
mod keys;
mod trie;

pub use filter::{dso_short_name, Filters};
pub use history::{BranchCounts, EntryBranches};
pub use keys::{
    mem_text, page_size_name, Key, MemField, Names, RankedNames, SortKey, SymRef, SORT_KEY_NAMES,
};
use keys::{KeyCtx, KeyMaker};
use trie::{ChainTrie, NONE};

/// What one entry adds up to for one event (the leader's or a group
/// member's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stat {
    pub period: u64,
    pub samples: u64,
    pub period_acc: u64,
    pub samples_acc: u64,
    /// Own period by the samples' cpumode: kernel, user, guest kernel,
    /// guest user (kept only when a column needs it).
    pub modes: [u64; 4],
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
    /// Made by a sample the filters (`--dsos`, `--comms`, ...) drop: perf
    /// hides such an entry even when kept samples add to it later, and an
    /// entry a kept sample made shows what dropped samples add to it. Set
    /// by [`Report::apply_filters`] from [`HistEntry::maker`].
    pub filtered: bool,
    /// The sample that made the entry, as the filters see it.
    pub maker: Maker,
    /// The part of `period` from samples with a call chain (what the
    /// entry adds to [`Hists::callchain_period`] when it shows).
    pub chain_period: u64,
    /// In a group's leader, the entry's values in each other member's
    /// rows (perf's pairs), in member order.
    pub group: Vec<Stat>,
}

/// What the filters ask of the sample that made an entry (its thread is
/// [`HistEntry::thread`]): perf decides once, when the entry is made,
/// whether they hide it, so filters can be applied again to built rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Maker {
    pub comm: u32,
    pub cpu: u32,
    /// The sample's own location (after `--ignore-callees`' cut).
    pub leaf: u32,
    /// The entry's own symbol (`--symbol-filter` tests its name), or
    /// `u32::MAX` for an address without one.
    pub sym: u32,
    /// The address perf keeps for the entry (its `he->ip`, printed by
    /// `report -v`): the map-relative address of a sample's own location,
    /// the process address of a call-chain frame.
    pub ip: u64,
    /// The DSO of that address ([`crate::collect::NO_DSO`] for none).
    pub dso: u32,
    /// Branch mode: whether a symbol covers the source (bit 0) and the
    /// target (bit 1) of the entry's first branch. perf sizes the branch
    /// DSO columns by those ends' DSO names only then.
    pub branch_syms: u8,
    /// Branch mode: the source and target of the entry's first branch as
    /// `report -v` shows them: the address in the DSO's terms and the DSO.
    pub branch_ends: [(u64, u32); 2],
    /// Branch mode: the entry's first branch's flag word and its ends'
    /// process addresses (what perf's branch statistics count, for every
    /// branch that lands in the entry).
    pub first_branch: (u64, u64, u64),
}

/// perf's branch statistics (`report` in branch mode, printed after the
/// report): per branch type how many branches, conditional ones forward
/// and backward, and how many cross a 4 KiB page or a 2 MiB one. As perf
/// counts them, each branch counts as the first branch of the entry it
/// lands in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BranchTypeStats {
    /// By `type` (perf's `PERF_BR_*`).
    pub counts: [u64; 16],
    /// By `new_type`, for type `PERF_BR_EXTEND_ABI`.
    pub new_counts: [u64; 16],
    pub cond_fwd: u64,
    pub cond_bwd: u64,
    pub cross_4k: u64,
    pub cross_2m: u64,
}

impl BranchTypeStats {
    /// perf's `branch_type_count`, `n` times, for a branch of flag word
    /// `flags` from `from` to `to`.
    fn count(&mut self, (flags, from, to): (u64, u64, u64), n: u64) {
        let ty = (flags >> 20) & 0xf;
        if ty == 0 || from == 0 {
            return;
        }
        if ty == 15 {
            self.new_counts[((flags >> 26) & 0xf) as usize] += n;
        } else {
            self.counts[ty as usize] += n;
        }
        if ty == 1 {
            if to > from {
                self.cond_fwd += n;
            } else {
                self.cond_bwd += n;
            }
        }
        let cross = |size: u64| from & !(size - 1) != to & !(size - 1);
        if cross(2 << 20) {
            self.cross_2m += n;
        } else if cross(4 << 10) {
            self.cross_4k += n;
        }
    }

    /// What the shares are of: the branches of a known type, not the
    /// extended types (perf's sum leaves those out, and shows nothing
    /// when only they were counted).
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
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

/// With call graphs keyed by address (`-g ...,address`), where a frame is:
/// its location, which of the location's frames (0: the innermost), and
/// the address perf compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSite {
    pub loc: u32,
    pub depth: u8,
    pub ip: u64,
}

/// How the rows are built.
#[derive(Debug, Clone, Default)]
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
    /// perf's `-p/--parent` regex for the parent key.
    pub parent: Option<regex_lite::Regex>,
    /// Keep own periods by cpumode (sys/usr columns).
    pub cpumode: bool,
    /// Socket id per CPU, for the socket key (empty: unknown).
    pub sockets: Vec<i32>,
    /// `--ignore-callees`: each sample is charged to the outermost recorded
    /// frame whose function matches, and its chain starts there.
    pub ignore_callees: Option<regex_lite::Regex>,
    /// Call-graph frames are equal when their addresses are (perf's `-g
    /// ...,address`), not their functions: each keeps its site.
    pub frames_by_address: bool,
    /// Call-graph frames are equal when their functions and source lines
    /// are (perf's `-g ...,srcline`); each keeps its site.
    pub frames_by_srcline: bool,
    /// `--ns`: the time key to the nanosecond.
    pub nanosecs: bool,
    /// The `trace` key's texts: per raw data of
    /// [`crate::collect::Collector::trace_raws`], its formatted fields
    /// (None: not a tracepoint's). The caller formats them (libtraceevent).
    pub trace_texts: Vec<Option<String>>,
    /// `-v`: the dso key tells DSOs apart by their paths (perf's long
    /// names), not by their short names.
    pub dsos_by_path: bool,
}

/// All events' rows plus the interned callchains they refer to.
#[derive(Debug, Default)]
pub struct Report {
    pub hists: Vec<Hists>,
    /// Interned frames.
    pub frames: Vec<Frame>,
    /// With [`HistOptions::frames_by_address`], each frame's site (parallel
    /// to `frames`); empty otherwise.
    pub frame_sites: Vec<FrameSite>,
    /// Texts the srcline, srcfile and parent keys refer to.
    pub strings: Vec<String>,
    /// Per frame: the frame call graphs merge it with (perf's
    /// `match_chain`: inlined frames are equal by name alone, wherever
    /// they were inlined); itself for the others, and for all with frames
    /// keyed by address or source line. Entries keep frames apart.
    pub frame_canon: Vec<u32>,
    /// Every sample's chain (in insertion order) as a path in one trie of
    /// frames, with a root per (event, comm, thread).
    trie: ChainTrie,
    /// In branch-history mode, the branch counts of each entry's graph by
    /// (event, entry id).
    branches: HashMap<(u32, u32), EntryBranches>,
    /// In branch mode, perf's branch statistics over every event.
    pub branch_types: BranchTypeStats,
}

/// Where a sample's chain ends, with its weight and own entry.
#[derive(Debug, Clone, Copy)]
pub struct Term {
    pub node: u32,
    /// The [`HistEntry::id`] of the sample's own (self) entry.
    pub entry: u32,
    pub period: u64,
    pub samples: u64,
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
    fn entry_index(&mut self, keys: &[Key], thread: u32, level: u8, maker: Maker) -> usize {
        self.entry_index_as(keys, keys, thread, level, maker)
    }

    /// The entry of keys `compared` (what tells entries apart), made with
    /// `keys` (what it shows) if new.
    fn entry_index_as(
        &mut self,
        keys: &[Key],
        compared: &[Key],
        thread: u32,
        level: u8,
        maker: Maker,
    ) -> usize {
        if let Some(&i) = self.index.get(compared) {
            return i;
        }
        self.index.insert(compared.to_vec(), self.entries.len());
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
            filtered: false,
            maker,
            chain_period: 0,
        });
        self.entries.len() - 1
    }
}

/// A location's frames (inline frames first, then the function), interned
/// once per location.
struct LocFrames {
    spans: Vec<Option<(u32, u32)>>,
    ids: Vec<u32>,
    frame_ids: HashMap<Frame, u32>,
    /// With frames by address: frames interned with their address.
    by_address: bool,
    /// Frames interned with their source line instead (see
    /// [`HistOptions::frames_by_srcline`]).
    by_srcline: bool,
    site_ids: HashMap<(Frame, u64), u32>,
}

impl LocFrames {
    fn get(
        &mut self,
        frames: &mut Vec<Frame>,
        sites: &mut Vec<FrameSite>,
        syms: &SymbolTable,
        locs: &[Loc],
        lid: u32,
    ) -> &[u32] {
        let (a, b) = match self.spans.get(lid as usize).copied().flatten() {
            Some(r) => r,
            None => {
                let l = &locs[lid as usize];
                let a = self.ids.len() as u32;
                let ls = syms.per_loc.get(lid as usize);
                // -g srcline: the frame's source position as perf compares
                // its srcline text: file and line, else perf's `??:0`.
                let srcline_key = |depth: usize| -> u64 {
                    let pos = ls.and_then(|ls| match ls.frame_lines.get(depth) {
                        Some(p) => Some(*p),
                        None if depth == 0 => ls.line,
                        None => None,
                    });
                    match pos {
                        Some(p) => (1 << 63) | (u64::from(p.file) << 32) | u64::from(p.line),
                        None => 0,
                    }
                };
                let mut intern = |f: Frame, depth: usize| {
                    if !self.by_address && !self.by_srcline {
                        return intern_frame(frames, &mut self.frame_ids, f);
                    }
                    let key = if self.by_address {
                        l.ip
                    } else {
                        srcline_key(depth)
                    };
                    *self.site_ids.entry((f, key)).or_insert_with(|| {
                        frames.push(f);
                        sites.push(FrameSite {
                            loc: lid,
                            depth: depth.min(255) as u8,
                            ip: l.ip,
                        });
                        (frames.len() - 1) as u32
                    })
                };
                match syms.per_loc.get(lid as usize).filter(|s| s.sym.is_some()) {
                    Some(ls) => {
                        for (depth, &f) in ls.frames.iter().enumerate() {
                            let id = intern((SymRef::Sym(f), l.level), depth);
                            self.ids.push(id);
                        }
                    }
                    None => {
                        let f = (
                            SymRef::Addr {
                                ip: l.ip,
                                dso: l.dso,
                            },
                            l.level,
                        );
                        let id = intern(f, 0);
                        self.ids.push(id);
                    }
                }
                let r = (a, self.ids.len() as u32);
                if self.spans.len() <= lid as usize {
                    self.spans.resize(lid as usize + 1, None);
                }
                self.spans[lid as usize] = Some(r);
                r
            }
        };
        &self.ids[a as usize..b as usize]
    }
}

/// What the entries of a chain's frames depend on besides the frame: the
/// sample's event, comm, thread, cpu and parent (the last two `NONE`
/// unless they are sort keys) and the level of its own address.
struct ChainCtx {
    event: u32,
    comm: u32,
    thread: u32,
    cpu: u32,
    /// The sample's tag where a key needs it (time, cgroup), else `NONE`.
    tag: u32,
    parent_id: u32,
    parent: Option<u32>,
    leaf_level: u8,
    /// The sample's own location (see [`Maker::leaf`]) and CPU.
    leaf: u32,
    sample_cpu: u32,
}

/// (event, comm, thread, frame, location, cpu, parent).
type FrameEntryKey = (u32, u32, u32, u32, u32, u32, u32, u32);

/// Everything that grows while chains are added to the trie.
struct Grow<'a> {
    syms: &'a SymbolTable,
    keys: KeyMaker<'a>,
    keybuf: Vec<Key>,
    /// [`KeyMaker::merge_view`]'s keys, where they differ.
    comparebuf: Vec<Key>,
    /// A frame's entry within one (event, comm, thread, cpu, parent): each
    /// is hashed only once.
    frame_entry: HashMap<FrameEntryKey, u32>,
    /// The sort keys name the comm / the thread.
    by_comm: bool,
    by_thread: bool,
}

impl Grow<'_> {
    /// The entry of frame `f` in a chain with context `c`, made with
    /// `level` if new. `at` is the frame's location where keys need it
    /// (else `NONE`) and the location it came from.
    fn entry(
        &mut self,
        frames: &[Frame],
        h: &mut Hists,
        c: &ChainCtx,
        f: u32,
        (at, lid): (u32, u32),
        level: u8,
    ) -> u32 {
        // The keys depend on the comm and thread only where they name
        // them: entries of other threads' chains are then shared.
        let key = (
            c.event,
            if self.by_comm { c.comm } else { NONE },
            if self.by_thread { c.thread } else { NONE },
            f,
            at,
            c.cpu,
            c.parent_id,
            c.tag,
        );
        if let Some(&i) = self.frame_entry.get(&key) {
            return i;
        }
        let (sref, _) = frames[f as usize];
        let ctx = KeyCtx {
            comm: c.comm,
            thread: c.thread,
            cpu: c.cpu,
            tag: c.tag,
            dso: frame_dso(self.syms, sref),
            sym: sref,
            loc: at,
            parent: c.parent,
            own: false,
            branch: None,
        };
        self.keys.make(&mut self.keybuf, &ctx);
        let maker = Maker {
            comm: c.comm,
            cpu: c.sample_cpu,
            leaf: c.leaf,
            sym: sym_index(&sref),
            ip: self.keys.locs.get(lid as usize).map_or(0, |l| l.ip),
            dso: self.keys.locs.get(lid as usize).map_or(NO_DSO, |l| l.dso),
            branch_syms: 0,
            branch_ends: [(0, NO_DSO); 2],
            first_branch: (0, 0, 0),
        };
        let i = h.entry_index(&self.keybuf, c.thread, level, maker) as u32;
        self.frame_entry.insert(key, i);
        i
    }
}

/// The DSO of a frame's symbol or address.
fn frame_dso(syms: &SymbolTable, sref: SymRef) -> u32 {
    match sref {
        SymRef::Sym(s) => syms.syms[s as usize].dso,
        SymRef::Addr { dso, .. } => dso,
    }
}

/// (trie root, stack node of pass one) → trie node. A stack node is
/// mostly reached under one root only (roots are per event, comm and
/// thread), so the first root's node is kept in an array by stack node,
/// which the sums, coming in the order their stacks were made, walk
/// nearly in order; other roots' in a map.
struct StackNodeMap {
    first: Vec<(u32, u32)>,
    others: HashMap<(u32, u32), u32>,
}

impl StackNodeMap {
    fn new(stack_nodes: usize) -> Self {
        StackNodeMap {
            first: vec![(NONE, NONE); stack_nodes],
            others: HashMap::default(),
        }
    }

    fn get(&self, root: u32, s: u32) -> Option<u32> {
        match self.first.get(s as usize) {
            Some(&(r, n)) if r == root => Some(n),
            Some(&(NONE, _)) => None,
            _ => self.others.get(&(root, s)).copied(),
        }
    }

    fn insert(&mut self, root: u32, s: u32, node: u32) {
        match self.first.get_mut(s as usize) {
            Some(slot) if slot.0 == NONE || slot.0 == root => *slot = (root, node),
            _ => {
                self.others.insert((root, s), node);
            }
        }
    }
}

/// perf 6.1 compares each callchain entry with the entries of the sample
/// so far through a template that lacks the socket, cgroup_id, time,
/// cgroup and code_page_size keys (as if they were 0): where an entry's value is not 0, nothing matches, so
/// its children period counts every occurrence of its frame in the stack,
/// the sample's own frame included.
fn counts_every_occurrence(e: &HistEntry) -> bool {
    e.keys.iter().any(|k| match *k {
        Key::Socket(s) => s != 0,
        Key::CgroupId(dev, ino) => (dev, ino) != (0, 0),
        Key::Time(t, _) => t != 0,
        Key::Cgroup(id) => id != 0,
        Key::CodePageSize(p) => p != 0,
        _ => false,
    })
}

/// Gives each entry its subtrees: the trie nodes of its frame with no node
/// of the entry above them (every node of it where the keys make each
/// occurrence count, see [`counts_every_occurrence`]). One walk of the
/// finished trie in pre-order, which keeps the path to each node and how
/// many of its nodes each entry has, so the cost grows with the nodes, not
/// with the chains times their depth.
fn first_occurrences(report: &mut Report, check_every: bool) {
    let t = &report.trie;
    let hists = &mut report.hists;
    let mut on_path: Vec<u32> = vec![0; hists.iter().map(|h| h.entries.len()).max().unwrap_or(0)];
    let mut open: Vec<u32> = Vec::new();
    let mut hist = None;
    // (Node ids are pre-order numbers.)
    for n in 0..t.parent.len() as u32 {
        while let Some(&top) = open.last() {
            if n < t.pre_end[top as usize] {
                break;
            }
            open.pop();
            if let Some(c) = on_path.get_mut(t.entry[top as usize] as usize) {
                *c = c.saturating_sub(1);
            }
        }
        if t.parent[n as usize] == NONE {
            // A root: the last one's path is closed.
            hist = t.root_events.get(&n).copied();
            continue;
        }
        let Some(h) = hist.and_then(|ev| hists.get_mut(ev as usize)) else {
            continue;
        };
        let idx = t.entry[n as usize] as usize;
        let (Some(e), Some(c)) = (h.entries.get_mut(idx), on_path.get_mut(idx)) else {
            continue;
        };
        open.push(n);
        *c += 1;
        if *c == 1 || check_every && counts_every_occurrence(e) {
            e.subtrees.push(n);
        }
    }
}

/// Builds the rows of every event from pass one and pass two.
/// `sums` are the collector's sums in order
/// ([`Collector::take_sums_in_order`]).
///
/// Each sample's chain becomes a path in one trie of frames (rooted per
/// event, comm and thread); a frame's entry is found once per trie node,
/// and with `--children` an entry's accumulated period is summed from the
/// subtrees where its frame first occurs. With caller order the path of a
/// stack extends the path of the stack without its leaf, so each stack
/// node of pass one is walked once, not once per sample.
pub fn build(
    collector: &Collector,
    sums: Vec<(crate::collect::SampleKey, crate::collect::SampleSum)>,
    syms: &SymbolTable,
    machine: &Machine,
    dso_names: &[String],
    opts: &HistOptions,
    filters: &Filters,
) -> Report {
    let mut report = Report::default();
    let locs = collector.interner.locs();
    let mut stack = Vec::new();
    let mut chain: Vec<u32> = Vec::new();
    // In branch-history mode, what each term's chain positions are.
    let mut term_positions: Vec<&[crate::collect::Position]> = Vec::new();
    let need_chain = opts.children || opts.callchains;
    let dso_rows: Vec<u32> = {
        let names: Vec<&str> = if opts.dsos_by_path {
            machine.dsos().iter().map(|d| d.name.as_str()).collect()
        } else {
            dso_names.iter().map(String::as_str).collect()
        };
        let mut first: HashMap<&str, u32> = HashMap::default();
        names
            .iter()
            .enumerate()
            .map(|(i, n)| *first.entry(n).or_insert(i as u32))
            .collect()
    };
    let mut loc_frames = LocFrames {
        spans: Vec::new(),
        ids: Vec::new(),
        frame_ids: HashMap::default(),
        by_address: opts.frames_by_address && opts.callchains,
        by_srcline: opts.frames_by_srcline && opts.callchains,
        site_ids: HashMap::default(),
    };
    let mut g = Grow {
        syms,
        keys: KeyMaker::new(&opts.keys, locs, syms, dso_names, dso_rows, &opts.sockets)
            .with_identity(machine.dsos().iter().map(|d| d.maps_identity()).collect())
            .with_tags(collector.tags(), &opts.trace_texts, opts.nanosecs)
            .with_cgroup_ns(if opts.keys.contains(&SortKey::CgroupId) {
                (0..machine.nr_threads())
                    .map(|t| machine.cgroup_ns_of(t))
                    .collect()
            } else {
                Vec::new()
            })
            .with_cache_lines(opts.keys.contains(&SortKey::Dcacheline).then(|| {
                keys::CacheLines {
                    size: keys::cacheline_size(),
                    pids: (0..machine.nr_threads())
                        .map(|t| machine.thread_info(t).pid)
                        .collect(),
                    with_id: (0..machine.dsos().len())
                        .map(|d| !machine.dso_id(d).is_empty())
                        .collect(),
                }
            }))
            .with_lbr_cycles(collector.branch_cycles())
            .with_chain_srclines_bare(opts.frames_by_address),
        keybuf: Vec::new(),
        comparebuf: Vec::new(),
        frame_entry: HashMap::default(),
        by_comm: opts.keys.contains(&SortKey::Comm),
        by_thread: opts.keys.contains(&SortKey::Pid),
    };
    let want_parent = opts.keys.contains(&SortKey::Parent);
    let want_cpu = opts.keys.iter().any(|k| k.needs_cpu());
    let want_tag = opts.keys.iter().any(|k| {
        matches!(
            k,
            SortKey::Time | SortKey::Cgroup | SortKey::Trace | SortKey::CodePageSize
        )
    });
    // Keys that depend on the frame's location, not only its symbol: the
    // chains then keep frames of different locations apart.
    let by_loc = opts.keys.iter().any(|k| k.needs_loc());
    let mut parents: HashMap<u32, Option<u32>> = HashMap::default();
    // Per symbol: 0 not yet asked, 1 no match, 2 match.
    let mut sym_matches: Vec<u8> = vec![0; syms.syms.len()];
    // Caller order: (trie root, stack node of pass one) → trie node.
    let mut stack_nodes = StackNodeMap::new(collector.interner.stack_nodes());
    let mut pending: Vec<u32> = Vec::new();
    // Trie nodes a chain made, with their locations (`NONE` unless keys
    // need them), root first.
    // (New trie node, the location keys see or NONE, the location.)
    let mut fresh: Vec<(u32, u32, u32)> = Vec::new();
    // The sort keys hold one perf leaves out of its callchain entries'
    // template (see [`counts_every_occurrence`]).
    let check_every = opts.keys.iter().any(|k| {
        matches!(
            k,
            SortKey::Socket
                | SortKey::CgroupId
                | SortKey::Time
                | SortKey::Cgroup
                | SortKey::CodePageSize
        )
    });
    report.trie.children = opts.children;
    report.trie.caller_order = opts.caller_order;
    // The sums are taken from the end of a reversed copy, and their vector
    // shrinks as it empties: the histogram grows while they go, so the
    // two are not both whole at the peak.
    let mut sums = sums;
    sums.reverse();
    // --ignore-callees: per stack, the node (and location) it is cut at.
    let mut cuts: HashMap<u32, Option<(u32, u32)>> = HashMap::default();
    let mut callee_matches: Vec<u8> = vec![0; syms.syms.len()];
    while let Some((mut key, sum)) = sums.pop() {
        if let Some(re) = &opts.ignore_callees {
            let cut = *cuts.entry(key.stack).or_insert_with(|| {
                outermost_match(collector, key.stack, locs, syms, re, &mut callee_matches)
            });
            if let Some((node, lid)) = cut {
                key.stack = node;
                key.leaf = lid;
            }
        }
        if sums.capacity() > 4096 && sums.len() < sums.capacity() / 2 {
            sums.shrink_to_fit();
        }
        let ev = key.event as usize;
        if report.hists.len() <= ev {
            report.hists.resize_with(ev + 1, Hists::default);
        }
        let leaf = &locs[key.leaf as usize];
        let leaf_sym = sym_ref_of(syms, key.leaf, leaf);
        if filters.skips(key.cpu, &leaf_sym) {
            continue;
        }
        let branch = collector.branch(key.branch);
        let resolved = |lid: u32| {
            locs.get(lid as usize)
                .is_some_and(|l| matches!(sym_ref_of(syms, lid, l), SymRef::Sym(_)))
        };
        let branch_syms =
            branch.map_or(0, |b| resolved(b.from) as u8 | (resolved(b.to) as u8) << 1);
        // -U in branch mode also leaves out branches with an end no
        // symbol covers, as perf.
        if branch.is_some() && filters.hide_unresolved && branch_syms != 3 {
            continue;
        }
        // What the entry's own keys (dso, sym, ...) see: the sample's
        // address, or in branch mode the branch's target, as perf's branch
        // iterator gives it (its address in the process, unmapped).
        let (own_lid, own_dso, own_ip, own_sym) = match branch.and_then(|b| {
            let l = locs.get(b.to as usize)?;
            Some((b.to, l))
        }) {
            Some((lid, l)) => {
                let sym = match sym_ref_of(syms, lid, l) {
                    SymRef::Addr { dso, .. } => SymRef::Addr { ip: l.ip, dso },
                    s => s,
                };
                (lid, l.dso, l.ip, sym)
            }
            None => (key.leaf, leaf.dso, leaf.rel, leaf_sym),
        };
        {
            let h = &mut report.hists[ev];
            h.all_samples += sum.samples;
            h.all_period = h.all_period.wrapping_add(sum.period);
            if need_chain && key.stack != EMPTY_STACK {
                h.all_callchain_period = h.all_callchain_period.wrapping_add(sum.period);
            }
        }
        // perf adds the samples the filters drop too: the entries they
        // make are hidden (see `Report::apply_filters`, after the build).
        let parent = match (&opts.parent, want_parent) {
            (Some(re), true) => *parents.entry(key.stack).or_insert_with(|| {
                collector.interner.stack(key.stack, &mut stack);
                let m = find_parent(&stack, locs, syms, re, opts.caller_order, &mut sym_matches);
                m.map(|s| g.keys.intern(&syms.syms[s as usize].name))
            }),
            _ => None,
        };
        let cctx = ChainCtx {
            event: key.event,
            comm: key.comm,
            thread: key.thread,
            cpu: if want_cpu { key.cpu } else { NONE },
            tag: if want_tag { key.tag } else { NONE },
            parent_id: if want_parent {
                parent.unwrap_or(NONE - 1)
            } else {
                NONE
            },
            parent,
            leaf_level: leaf.level,
            leaf: key.leaf,
            sample_cpu: key.cpu,
        };
        let h = &mut report.hists[ev];
        let ctx = KeyCtx {
            comm: key.comm,
            thread: key.thread,
            cpu: key.cpu,
            tag: key.tag,
            dso: own_dso,
            sym: own_sym,
            loc: own_lid,
            parent,
            own: true,
            branch,
        };
        g.keys.make(&mut g.keybuf, &ctx);
        let compared = if g.keys.merge_view(&g.keybuf, &mut g.comparebuf) {
            &g.comparebuf
        } else {
            &g.keybuf
        };
        let self_index = h.entry_index_as(
            &g.keybuf,
            compared,
            key.thread,
            leaf.level,
            Maker {
                comm: key.comm,
                cpu: key.cpu,
                // (Filters look at the sample's own location, as perf's
                // do, also in branch mode.)
                leaf: key.leaf,
                sym: sym_index(&own_sym),
                ip: own_ip,
                dso: own_dso,
                branch_syms,
                branch_ends: branch.map_or([(0, NO_DSO); 2], |b| {
                    [b.from, b.to].map(|lid| {
                        locs.get(lid as usize)
                            .map_or((0, NO_DSO), |l| (l.rel, l.dso))
                    })
                }),
                first_branch: branch.map_or((0, 0, 0), |b| {
                    let ip = |lid: u32| locs.get(lid as usize).map_or(0, |l| l.ip);
                    (b.flags, ip(b.from), ip(b.to))
                }),
            },
        );
        if branch.is_some() {
            // (The sums come in the order of their first samples, so an
            // entry's maker is its first branch, as perf's is.)
            let first = h.entries[self_index].maker.first_branch;
            report.branch_types.count(first, sum.samples);
        }
        {
            let e = &mut h.entries[self_index];
            if need_chain && key.stack != EMPTY_STACK {
                e.chain_period = e.chain_period.wrapping_add(sum.period);
            }
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
        }
        if !need_chain || key.stack == EMPTY_STACK {
            continue;
        }
        let trie = &mut report.trie;
        // One trie per thread only where the keys tell threads (or comms)
        // apart: otherwise the chains of every process share their paths.
        let root = trie.root(
            key.event,
            if g.by_comm { key.comm } else { NONE },
            if g.by_thread { key.thread } else { NONE },
            cctx.cpu,
            cctx.parent_id,
            cctx.tag,
        );
        // The chain goes into the trie root first whatever the order: the
        // path of a stack extends the path of the stack without its leaf,
        // so only stack nodes not yet under this root are walked: the
        // deepest one there, then the locations below it, each location's
        // frames outermost first.
        pending.clear();
        fresh.clear();
        let mut node = root;
        let mut s = key.stack;
        while let Some((up, _)) = collector.interner.node(s) {
            if let Some(n) = stack_nodes.get(root, s) {
                node = n;
                break;
            }
            pending.push(s);
            s = up;
        }
        for &s in pending.iter().rev() {
            let Some((_, lid)) = collector.interner.node(s) else {
                continue;
            };
            let at = if by_loc { lid } else { NONE };
            chain.clear();
            chain.extend_from_slice(loc_frames.get(
                &mut report.frames,
                &mut report.frame_sites,
                syms,
                locs,
                lid,
            ));
            for &f in chain.iter().rev() {
                // -U: perf leaves frames without a symbol out of chains.
                if filters.hide_unresolved
                    && matches!(report.frames[f as usize].0, SymRef::Addr { .. })
                {
                    continue;
                }
                let (n, new) = trie.child(node, f, at);
                if new {
                    trie.depth[n as usize] = trie.depth[node as usize] + 1;
                    if opts.children {
                        fresh.push((n, at, lid));
                    }
                }
                node = n;
            }
            stack_nodes.insert(root, s, node);
        }
        let end = node;
        // New nodes get their frames' entries, made (when new) in the
        // order perf walks the chain: from the root for caller order,
        // from the leaf for callee order. perf fills one location per
        // frame and only sets its level for frames with a map: a frame
        // without one shows the level before it in that walk (the
        // sample's own level before any).
        if opts.children && !fresh.is_empty() {
            if opts.caller_order {
                for &(n, at, lid) in &fresh {
                    let f = trie.frame[n as usize];
                    let (sref, frame_level) = report.frames[f as usize];
                    let before = trie.level[trie.parent[n as usize] as usize];
                    let state = if frame_dso(syms, sref) != NO_DSO {
                        frame_level
                    } else {
                        before
                    };
                    trie.level[n as usize] = state;
                    let level = if state != 0 { state } else { cctx.leaf_level };
                    let idx = g.entry(&report.frames, h, &cctx, f, (at, lid), level);
                    trie.entry[n as usize] = idx;
                }
            } else {
                let mut level = cctx.leaf_level;
                let mut fi = fresh.len();
                let mut n = end;
                while trie.parent[n as usize] != NONE {
                    let f = trie.frame[n as usize];
                    let (sref, frame_level) = report.frames[f as usize];
                    if frame_dso(syms, sref) != NO_DSO {
                        level = frame_level;
                    }
                    if fi > 0 && fresh[fi - 1].0 == n {
                        fi -= 1;
                        let (_, at, lid) = fresh[fi];
                        let idx = g.entry(&report.frames, h, &cctx, f, (at, lid), level);
                        trie.entry[n as usize] = idx;
                        if opts.callchains {
                            let e = &mut h.entries[idx as usize];
                            e.max_depth = e.max_depth.max(trie.depth[n as usize] as usize);
                        }
                    }
                    n = trie.parent[n as usize];
                }
            }
        }
        let e = &mut h.entries[self_index];
        let term = trie.add_term(end, e.id, sum.period, sum.samples);
        e.ends.push(term);
        if collector.branch_history() {
            term_positions.push(collector.history(key.branch).unwrap_or(&[]));
        }
        if opts.callchains {
            e.max_depth = e.max_depth.max(trie.depth[end as usize] as usize);
        }
    }
    // What only adding chains needs goes before the trie's sums are made
    // (on many unique stacks, the map by stack node is 8 bytes a node).
    drop(stack_nodes);
    drop(std::mem::take(&mut g.frame_entry));
    drop(sums);
    log::debug!(
        "rows: {} trie nodes, {} terms",
        report.trie.parent.len(),
        report.trie.terms.len()
    );
    if need_chain {
        report.trie.finish();
        if opts.children {
            first_occurrences(&mut report, check_every);
        }
    }
    let count_branches = collector.branch_history() && need_chain;
    let by_name = !loc_frames.by_address && !loc_frames.by_srcline;
    let mut inlined: HashMap<&str, u32> = HashMap::default();
    report.frame_canon = report
        .frames
        .iter()
        .enumerate()
        .map(|(i, (sref, _))| match sref {
            SymRef::Sym(s) if by_name => match syms.syms.get(*s as usize) {
                Some(sym) if sym.inlined => *inlined.entry(sym.name.as_str()).or_insert(i as u32),
                _ => i as u32,
            },
            _ => i as u32,
        })
        .collect();
    if count_branches {
        report.count_branches(&term_positions);
    }
    if opts.children {
        // An entry's accumulated period: its own, plus every chain through
        // the nodes where its frame first occurs, less its own samples
        // among those (counted once).
        let t = &report.trie;
        for h in &mut report.hists {
            for (idx, e) in h.entries.iter_mut().enumerate() {
                for &s in &e.subtrees {
                    let s = s as usize;
                    let (p, c) = t.weight(s as u32);
                    e.period_acc = e.period_acc.wrapping_add(p);
                    e.samples_acc = e.samples_acc.wrapping_add(c);
                    // (Callee order: counted as entries were made.)
                    if opts.callchains && opts.caller_order {
                        let d = t.max_depth[s].saturating_sub(t.depth[s]) + 1;
                        e.max_depth = e.max_depth.max(d as usize);
                    }
                }
                if check_every && counts_every_occurrence(e) {
                    continue;
                }
                for &term in &e.ends {
                    let Some(term) = t.terms.get(term as usize) else {
                        continue;
                    };
                    if t.on_path(term.node, idx as u32) {
                        e.period_acc = e.period_acc.wrapping_sub(term.period);
                        e.samples_acc = e.samples_acc.wrapping_sub(term.samples);
                    }
                }
            }
        }
    }
    for h in &mut report.hists {
        for e in &mut h.entries {
            e.ends.shrink_to_fit();
            e.subtrees.shrink_to_fit();
        }
    }
    report.strings = g.keys.strings;
    report.apply_filters(collector, syms, machine, dso_names, filters);
    report
}

impl Report {
    /// Marks the entries the filters hide (those a dropped sample made)
    /// and sums the totals of the rest: what [`build`] ends with, and what
    /// a view that changes its filters (a zoom) does instead of building
    /// the rows again. The samples `-C` and `-U` leave out altogether
    /// ([`Filters::skips`]) are the build's.
    pub fn apply_filters(
        &mut self,
        collector: &Collector,
        syms: &SymbolTable,
        machine: &Machine,
        dso_names: &[String],
        filters: &Filters,
    ) {
        let locs = collector.interner.locs();
        let comms = collector.comms();
        for (ev, h) in self.hists.iter_mut().enumerate() {
            h.nr_samples = 0;
            h.total_period = 0;
            h.callchain_period = 0;
            for e in &mut h.entries {
                let m = e.maker;
                let th = machine.thread_info(e.thread as usize);
                let own = match syms.syms.get(m.sym as usize) {
                    Some(_) => SymRef::Sym(m.sym),
                    None => SymRef::Addr { ip: 0, dso: NO_DSO },
                };
                e.filtered = match locs.get(m.leaf as usize) {
                    Some(leaf) => {
                        let leaf_sym = sym_ref_of(syms, m.leaf, leaf);
                        !filters.keep_thread(comms, m.comm, th.pid, th.tid)
                            || !filters.keep_sample(dso_names, syms, leaf, &leaf_sym)
                            || !filters.keep_socket(m.cpu)
                            // (perf gives --symbol-filter to its first
                            // event's histogram only.)
                            || (ev == 0 && filters.hides_symbol(syms, &own))
                    }
                    // (Every entry's maker has a location.)
                    None => e.filtered,
                };
                // The filtered totals count the samples whose own entry
                // shows.
                if !e.filtered {
                    h.nr_samples += e.samples;
                    h.total_period = h.total_period.wrapping_add(e.period);
                    h.callchain_period = h.callchain_period.wrapping_add(e.chain_period);
                }
            }
        }
    }
}

/// [`Maker::sym`] of a symbol column.
fn sym_index(s: &SymRef) -> u32 {
    match s {
        SymRef::Sym(i) => *i,
        SymRef::Addr { .. } => NONE,
    }
}

/// perf's parent of a sample: the first frame of the recorded callchain,
/// in the order in effect (leaf first for callee order, root first for
/// caller order), whose symbol matches the regex. perf matches while it
/// resolves the recorded chain only, so DWARF-unwound frames never count.
/// The outermost recorded frame of stack `stack` whose function matches
/// `re`: its stack node (the path from the root to it) and location. perf
/// resets its chain at each match while it walks from the leaf, and charges
/// the sample to the frame it reset at last.
fn outermost_match(
    collector: &Collector,
    stack: u32,
    locs: &[Loc],
    syms: &SymbolTable,
    re: &regex_lite::Regex,
    cache: &mut [u8],
) -> Option<(u32, u32)> {
    let mut found = None;
    let mut s = stack;
    while let Some((up, lid)) = collector.interner.node(s) {
        let recorded = matches!(locs[lid as usize].origin, Origin::Exact | Origin::Return);
        let sym = syms.per_loc.get(lid as usize).and_then(|l| l.sym);
        if let (true, Some(sym)) = (recorded, sym) {
            if let Some(c) = cache.get_mut(sym as usize) {
                if *c == 0 {
                    *c = if re.is_match(&syms.syms[sym as usize].name) {
                        2
                    } else {
                        1
                    };
                }
                if *c == 2 {
                    found = Some((s, lid));
                }
            }
        }
        s = up;
    }
    found
}

fn find_parent(
    stack: &[u32],
    locs: &[Loc],
    syms: &SymbolTable,
    re: &regex_lite::Regex,
    caller_order: bool,
    cache: &mut [u8],
) -> Option<u32> {
    let recorded =
        |&&lid: &&u32| matches!(locs[lid as usize].origin, Origin::Exact | Origin::Return);
    let mut check = |lid: u32| {
        let s = syms.per_loc.get(lid as usize)?.sym?;
        let c = cache.get_mut(s as usize)?;
        if *c == 0 {
            *c = if re.is_match(&syms.syms[s as usize].name) {
                2
            } else {
                1
            };
        }
        (*c == 2).then_some(s)
    };
    if caller_order {
        stack.iter().rev().filter(recorded).find_map(|&l| check(l))
    } else {
        stack.iter().filter(recorded).find_map(|&l| check(l))
    }
}

fn intern_frame(frames: &mut Vec<Frame>, ids: &mut HashMap<Frame, u32>, f: Frame) -> u32 {
    *ids.entry(f).or_insert_with(|| {
        frames.push(f);
        (frames.len() - 1) as u32
    })
}

/// The symbol column of a location: its symbol, else its address (the
/// map-relative one for a sample's own address, as perf keeps it).
fn sym_ref_of(syms: &SymbolTable, lid: u32, l: &Loc) -> SymRef {
    match syms.per_loc.get(lid as usize).and_then(|s| s.sym) {
        Some(s) => SymRef::Sym(s),
        None => SymRef::Addr {
            ip: l.rel,
            dso: l.dso,
        },
    }
}

/// perf's order among sibling frames of equal weight (its `match_chain`):
/// by DSO, then symbol start (inlined frames by name), else by address.
pub fn frame_order(
    report: &Report,
    syms: &[crate::symbolize::SymInfo],
    x: u32,
    y: u32,
) -> std::cmp::Ordering {
    // perf compares DSO pointers: none (an address without a map) is
    // the smallest; DSOs otherwise in the order they were made.
    let dso_key = |d: u32| {
        if d == crate::collect::NO_DSO {
            0
        } else {
            u64::from(d) + 1
        }
    };
    // (By address: the DSO, then the address.)
    let key = |f: u32| match (
        report.frames[f as usize].0,
        report.frame_sites.get(f as usize),
    ) {
        (SymRef::Sym(i), Some(site)) => (dso_key(syms[i as usize].dso), site.ip, ""),
        (SymRef::Sym(i), None) => {
            let s = &syms[i as usize];
            (
                dso_key(s.dso),
                s.start,
                if s.inlined { s.name.as_str() } else { "" },
            )
        }
        (SymRef::Addr { ip, dso }, _) => (dso_key(dso), ip, ""),
    };
    key(x).cmp(&key(y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_lists_parse_as_perf_reads_them() {
        assert_eq!(
            SortKey::parse_list("tid,srcline").unwrap(),
            vec![SortKey::Pid, SortKey::Srcline]
        );
        // perf appends its IPC placeholder to any list naming "symbol".
        assert_eq!(
            SortKey::parse_list("dso,symbol_size").unwrap(),
            vec![SortKey::Dso, SortKey::SymSize, SortKey::IpcNull]
        );
        assert_eq!(SortKey::parse_list("sym").unwrap(), vec![SortKey::Sym]);
        assert!(matches!(
            SortKey::parse_list("comm,bogus"),
            Err(crate::Error::UnknownSortKey(k)) if k == "bogus"
        ));
        assert_eq!(SortKey::parse("ipc_null"), None);
    }

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
