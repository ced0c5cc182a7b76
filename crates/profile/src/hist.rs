//! Histograms of samples by sort keys (perf's `hists`), one per event, with
//! self and accumulated ("children") periods and, per entry, the chains its
//! call graph is built from.

use rustc_hash::FxHashMap as HashMap;
use std::cmp::Ordering;

use crate::fields::Stat;
use crate::machine::Machine;
use crate::resolve::{Collector, Loc, Origin, EMPTY_STACK, NO_DSO};
use crate::symbolize::{SymInfo, Symbols};

/// A column perf can sort and group samples by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortKey {
    Comm,
    /// perf's "pid" key is the thread: its tid and comm.
    Pid,
    Dso,
    Sym,
    /// `file:line` of the sample's address (innermost inline frame).
    Srcline,
    /// The file of `Srcline`.
    Srcfile,
    /// The first callchain symbol matching the parent regex, else `[other]`.
    Parent,
    Cpu,
    /// The symbol and the address's offset into it (newer perf's `symoff`).
    SymOff,
    SymSize,
    /// The size of the map the address fell in.
    DsoSize,
    /// perf's placeholder IPC column, added to any `--sort` naming `symbol`
    /// (IPC needs branch stacks; without them it shows dashes).
    IpcNull,
}

/// The `--sort` names sear knows, for messages.
pub const SORT_KEY_NAMES: &str =
    "comm, pid (alias tid), dso, sym (symbol), symoff, srcline, srcfile, parent, cpu, symbol_size, dso_size";

impl SortKey {
    /// Parses perf's `--sort` names. perf 6.1 has no `tid` key: its `pid`
    /// key is already per thread, so `tid` is accepted as the same.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "comm" => SortKey::Comm,
            "pid" | "tid" => SortKey::Pid,
            "dso" => SortKey::Dso,
            "sym" | "symbol" => SortKey::Sym,
            "srcline" => SortKey::Srcline,
            "srcfile" => SortKey::Srcfile,
            "parent" => SortKey::Parent,
            "cpu" => SortKey::Cpu,
            "symoff" => SortKey::SymOff,
            "symbol_size" => SortKey::SymSize,
            "dso_size" => SortKey::DsoSize,
            _ => return None,
        })
    }

    /// Parses a `--sort` list the way perf reads it: unknown names are
    /// returned as the error; a list naming `symbol` anywhere (perf looks
    /// for the substring) gets perf's IPC placeholder column appended.
    pub fn parse_list(list: &str) -> Result<Vec<SortKey>, crate::Error> {
        let mut keys = Vec::new();
        for k in list.split(',').map(str::trim) {
            keys.push(SortKey::parse(k).ok_or_else(|| crate::Error::UnknownSortKey(k.to_owned()))?);
        }
        if list.contains("symbol") {
            keys.push(SortKey::IpcNull);
        }
        Ok(keys)
    }

    /// The column header perf prints.
    pub fn header(self) -> &'static str {
        match self {
            SortKey::Comm => "Command",
            SortKey::Pid => "    Pid:Command",
            SortKey::Dso => "Shared Object",
            SortKey::Sym => "Symbol",
            SortKey::Srcline => "Source:Line",
            SortKey::Srcfile => "Source File",
            SortKey::Parent => "Parent symbol",
            SortKey::Cpu => "CPU",
            SortKey::SymOff => "Symbol Offset",
            SortKey::SymSize => "Symbol size",
            SortKey::DsoSize => "DSO size",
            SortKey::IpcNull => "IPC   [IPC Coverage]",
        }
    }

    /// Whether perf pads the value to the column width itself (so also in
    /// the last column); the others are padded only when a column follows.
    pub fn pads_value(self) -> bool {
        !matches!(
            self,
            SortKey::Sym | SortKey::SymOff | SortKey::Srcline | SortKey::Srcfile
        )
    }

    /// Columns as wide as their header whatever the values (perf sizes
    /// them by the header only; longer values overflow).
    pub fn header_width_only(self) -> bool {
        matches!(
            self,
            SortKey::Cpu | SortKey::SymSize | SortKey::DsoSize | SortKey::IpcNull
        )
    }

    /// Numbers perf right-aligns.
    pub fn right_aligned(self) -> bool {
        matches!(self, SortKey::Cpu | SortKey::SymSize | SortKey::DsoSize)
    }

    /// Whether the key needs each location's source line.
    pub fn needs_srclines(self) -> bool {
        matches!(self, SortKey::Srcline | SortKey::Srcfile)
    }

    /// Whether a frame's value depends on its location (address), not
    /// only on its symbol.
    pub fn needs_loc(self) -> bool {
        matches!(
            self,
            SortKey::Srcline | SortKey::Srcfile | SortKey::SymOff | SortKey::DsoSize
        )
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
    /// perf's srcline text (an index into [`Names::strings`]): entries with
    /// equal text are one entry, as in perf.
    Srcline(u32),
    /// perf's srcfile text (an index into [`Names::strings`]).
    Srcfile(u32),
    /// The parent symbol's name (an index into [`Names::strings`]), None for
    /// `[other]`.
    Parent(Option<u32>),
    /// The CPU, `u32::MAX` for none (perf's -1).
    Cpu(u32),
    /// A symbol and the offset into it (for an unresolved address, 0).
    SymOff(SymRef, u64),
    /// The symbol's size, None without a symbol (perf's `unknown`).
    SymSize(Option<u64>),
    /// The map's size, None without a map.
    DsoSize(Option<u64>),
    /// perf's IPC placeholder shows dashes but compares entries by symbol
    /// (its `sort__sym_cmp`), so it splits entries as a symbol key would.
    IpcNull(SymRef),
}

/// Everything keys refer to, for comparing and printing them.
pub struct Names<'a> {
    pub comms: &'a [String],
    /// perf's short name of each DSO of the machine.
    pub dso_names: Vec<String>,
    pub syms: &'a [SymInfo],
    pub machine: &'a Machine,
    /// Texts of srcline, srcfile and parent keys ([`Report::strings`]).
    pub strings: &'a [String],
}

impl Names<'_> {
    fn comm(&self, id: u32) -> &str {
        self.comms.get(id as usize).map_or("", String::as_str)
    }

    fn dso(&self, d: Option<u32>) -> Option<&str> {
        d.and_then(|d| self.dso_names.get(d as usize))
            .map(String::as_str)
    }

    fn string(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", String::as_str)
    }

    fn cmp_sym(&self, x: &SymRef, y: &SymRef) -> Ordering {
        match (x, y) {
            (SymRef::Sym(p), SymRef::Sym(q)) => self.syms[*p as usize]
                .name
                .cmp(&self.syms[*q as usize].name),
            (SymRef::Sym(_), SymRef::Addr { .. }) => Ordering::Less,
            (SymRef::Addr { .. }, SymRef::Sym(_)) => Ordering::Greater,
            (SymRef::Addr { ip: p, dso: d }, SymRef::Addr { ip: q, dso: e }) => {
                let dn = |d: u32| (d == NO_DSO, self.dso((d != NO_DSO).then_some(d)));
                dn(*d).cmp(&dn(*e)).then(p.cmp(q))
            }
        }
    }

    /// perf's `sort__sym_cmp` as an order: unresolved addresses by
    /// address, after symbols; symbols by DSO name, then start address
    /// (inlined ones by name first).
    fn cmp_by_address(&self, x: &SymRef, y: &SymRef) -> Ordering {
        let dso = |s: &SymRef| match s {
            SymRef::Sym(i) => self.syms[*i as usize].dso,
            SymRef::Addr { dso, .. } => *dso,
        };
        if let (SymRef::Addr { ip: p, .. }, SymRef::Addr { ip: q, .. }) = (x, y) {
            return p.cmp(q);
        }
        let dn = |d: u32| (d == NO_DSO, self.dso((d != NO_DSO).then_some(d)));
        dn(dso(x)).cmp(&dn(dso(y))).then_with(|| match (x, y) {
            (SymRef::Sym(p), SymRef::Sym(q)) => {
                let (a, b) = (&self.syms[*p as usize], &self.syms[*q as usize]);
                let by_name = if a.inlined || b.inlined {
                    a.name.cmp(&b.name)
                } else {
                    Ordering::Equal
                };
                by_name.then(a.start.cmp(&b.start)).then(a.end.cmp(&b.end))
            }
            (SymRef::Sym(_), SymRef::Addr { .. }) => Ordering::Less,
            (SymRef::Addr { .. }, SymRef::Sym(_)) => Ordering::Greater,
            (SymRef::Addr { ip: p, .. }, SymRef::Addr { ip: q, .. }) => p.cmp(q),
        })
    }

    /// perf's order among entries of equal period (its `se_sort`).
    pub(crate) fn cmp_for_sort(&self, a: &Key, b: &Key) -> Ordering {
        match (a, b) {
            (Key::Srcline(x), Key::Srcline(y)) | (Key::Srcfile(x), Key::Srcfile(y)) => {
                self.string(*x).cmp(self.string(*y))
            }
            // Named parents before `[other]`.
            (Key::Parent(x), Key::Parent(y)) => match (x, y) {
                (Some(p), Some(q)) => self.string(*p).cmp(self.string(*q)),
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
            },
            (Key::Cpu(x), Key::Cpu(y)) => (*x as i32).cmp(&(*y as i32)),
            (Key::SymOff(x, p), Key::SymOff(y, q)) => self.cmp_sym(x, y).then(p.cmp(q)),
            (Key::SymSize(x), Key::SymSize(y)) => x.unwrap_or(0).cmp(&y.unwrap_or(0)),
            (Key::IpcNull(x), Key::IpcNull(y)) => self.cmp_by_address(x, y),
            (Key::DsoSize(x), Key::DsoSize(y)) => x.unwrap_or(0).cmp(&y.unwrap_or(0)),
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
            Key::Srcline(i) | Key::Srcfile(i) => self.string(*i).to_owned(),
            Key::Parent(Some(i)) => self.string(*i).to_owned(),
            Key::Parent(None) => "[other]".to_owned(),
            // C's `%3.3d`: at least three digits.
            Key::Cpu(c) => {
                let c = *c as i32;
                if c < 0 {
                    format!("-{:03}", c.unsigned_abs())
                } else {
                    format!("{c:03}")
                }
            }
            Key::SymOff(s @ SymRef::Sym(_), off) => {
                format!("[{}] {}+{off:#x}", level as char, self.sym_name(s))
            }
            Key::SymOff(s, _) => format!("[{}] {}", level as char, self.sym_name(s)),
            Key::SymSize(Some(n)) => n.to_string(),
            Key::SymSize(None) => "unknown".to_owned(),
            Key::DsoSize(Some(n)) => n.to_string(),
            Key::DsoSize(None) => "unknown".to_owned(),
            Key::IpcNull(_) => "-      -".to_owned(),
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
    /// Made by a sample the filters (`--dsos`, `--comms`, ...) drop: perf
    /// hides such an entry even when kept samples add to it later, and an
    /// entry a kept sample made shows what dropped samples add to it.
    pub filtered: bool,
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
    /// perf's `-p/--parent` regex for the parent key.
    pub parent: Option<regex_lite::Regex>,
    /// Keep own periods by cpumode (sys/usr columns).
    pub cpumode: bool,
}

/// All events' rows plus the interned callchains they refer to.
#[derive(Debug, Default)]
pub struct Report {
    pub hists: Vec<Hists>,
    /// Interned frames.
    pub frames: Vec<Frame>,
    /// Texts the srcline, srcfile and parent keys refer to.
    pub strings: Vec<String>,
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
    /// Per node: the level of the last frame with a map on its path (0:
    /// none yet), its depth (roots 0) and, with `--children`, the index of
    /// its frame's entry (`NONE` for roots).
    level: Vec<u8>,
    depth: Vec<u32>,
    entry: Vec<u32>,
    /// Chains are printed outermost caller first.
    caller_order: bool,
    /// Frames have entries of their own (`--children`): `level` and
    /// `entry` are kept, and [`ChainTrie::finish`] sums the chains.
    children: bool,
    terms: Vec<Term>,
    /// Per node, its number of children; the children of nodes with more
    /// than [`WIDE`] are also in `ids` by (parent, frame), the others are
    /// found by walking the sibling list.
    nkids: Vec<u32>,
    ids: HashMap<(u32, u32), u32>,
    /// Children also told apart by location (keys that depend on it).
    loc_ids: HashMap<(u32, u32, u32), u32>,
    /// Roots by (event, comm, thread, cpu, parent): `NONE` for the cpu and
    /// parent unless they are sort keys.
    roots: HashMap<(u32, u32, u32, u32, u32), u32>,
    /// After [`ChainTrie::finish`], per node: the period and samples of
    /// the chains through it, their greatest depth, and its pre-order
    /// number and the number after its subtree's.
    weight: Vec<u64>,
    count: Vec<u64>,
    max_depth: Vec<u32>,
    pre: Vec<u32>,
    pre_end: Vec<u32>,
    /// The roots in pre-order.
    roots_by_pre: Vec<u32>,
    /// The nodes in pre-order.
    by_pre: Vec<u32>,
}

const NONE: u32 = u32::MAX;

/// Children a trie node has before they are looked up by hash rather
/// than by walking its sibling list (most nodes have one or two).
const WIDE: u32 = 8;

/// A trie node whose chains go into an entry's call graph: only the
/// entry's own samples, or all others.
#[derive(Debug, Clone, Copy)]
struct Src {
    node: u32,
    own: bool,
}

/// A node of an entry's call graph before compression: the trie nodes
/// with its frame at its place, and their summed weight.
#[derive(Debug)]
struct Merged {
    frame: u32,
    srcs: Vec<Src>,
    cum: (u64, u64),
}

impl ChainTrie {
    fn push(&mut self, parent: u32, frame: u32) -> u32 {
        let id = self.parent.len() as u32;
        self.parent.push(parent);
        self.frame.push(frame);
        self.first_child.push(NONE);
        self.next_sibling.push(NONE);
        self.first_term.push(NONE);
        self.depth.push(0);
        if self.children {
            self.level.push(0);
            self.entry.push(NONE);
        }
        self.nkids.push(0);
        if parent != NONE {
            self.next_sibling[id as usize] = self.first_child[parent as usize];
            self.first_child[parent as usize] = id;
            self.nkids[parent as usize] += 1;
        }
        id
    }

    fn root(&mut self, event: u32, comm: u32, thread: u32, cpu: u32, parent: u32) -> u32 {
        let key = (event, comm, thread, cpu, parent);
        if let Some(&r) = self.roots.get(&key) {
            return r;
        }
        let r = self.push(NONE, NONE);
        self.roots.insert(key, r);
        r
    }

    /// The child of `parent` for `frame` (from location `loc`, or `NONE`
    /// when no key depends on it) and whether it is new.
    fn child(&mut self, parent: u32, frame: u32, loc: u32) -> (u32, bool) {
        if loc != NONE {
            if let Some(&c) = self.loc_ids.get(&(parent, frame, loc)) {
                return (c, false);
            }
            let c = self.push(parent, frame);
            self.loc_ids.insert((parent, frame, loc), c);
            return (c, true);
        }
        let p = parent as usize;
        let wide = self.nkids.get(p).is_some_and(|&n| n > WIDE);
        if wide {
            if let Some(&c) = self.ids.get(&(parent, frame)) {
                return (c, false);
            }
        } else if let Some(c) = self
            .children(parent)
            .find(|&c| self.frame[c as usize] == frame)
        {
            return (c, false);
        }
        let c = self.push(parent, frame);
        if wide {
            self.ids.insert((parent, frame), c);
        } else if self.nkids[p] > WIDE {
            // Just became wide: its children go into the map.
            let kids: Vec<u32> = self.children(parent).collect();
            for k in kids {
                self.ids.insert((parent, self.frame[k as usize]), k);
            }
        }
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

    /// Whether a node on the path from `node` up to its root (itself
    /// included) has the entry `entry`.
    fn on_path(&self, mut node: u32, entry: u32) -> bool {
        while let Some(&up) = self.parent.get(node as usize) {
            if up == NONE {
                return false;
            }
            if self.entry[node as usize] == entry {
                return true;
            }
            node = up;
        }
        false
    }

    /// Sums the chains through every node and numbers the nodes in
    /// pre-order; the maps used to find children are dropped.
    fn finish(&mut self) {
        let n = self.parent.len();
        self.ids = HashMap::default();
        self.nkids = Vec::new();
        self.loc_ids = HashMap::default();
        self.roots = HashMap::default();
        if !self.children {
            // Call graphs then hold only entries' own chains, built from
            // their ends (see `Report::entry_call_tree`).
            return;
        }
        let mut weight = vec![0u64; n];
        let mut count = vec![0u64; n];
        let mut max_depth = vec![0u32; n];
        for t in &self.terms {
            let i = t.node as usize;
            weight[i] = weight[i].wrapping_add(t.period);
            count[i] = count[i].wrapping_add(t.samples);
            max_depth[i] = self.depth[i];
        }
        // Children are made after their parents.
        for i in (0..n).rev() {
            let p = self.parent[i];
            if p != NONE {
                let p = p as usize;
                weight[p] = weight[p].wrapping_add(weight[i]);
                count[p] = count[p].wrapping_add(count[i]);
                max_depth[p] = max_depth[p].max(max_depth[i]);
            }
        }
        let mut pre = vec![0u32; n];
        let mut pre_end = vec![0u32; n];
        let mut roots_by_pre = Vec::new();
        let mut by_pre = Vec::with_capacity(n);
        let mut next = 0u32;
        let mut work: Vec<(u32, bool)> = Vec::new();
        for r in 0..n as u32 {
            if self.parent[r as usize] != NONE {
                continue;
            }
            roots_by_pre.push(r);
            work.push((r, false));
            while let Some((node, done)) = work.pop() {
                if done {
                    pre_end[node as usize] = next;
                    continue;
                }
                pre[node as usize] = next;
                by_pre.push(node);
                next += 1;
                work.push((node, true));
                let mut c = self.first_child[node as usize];
                while c != NONE {
                    work.push((c, false));
                    c = self.next_sibling[c as usize];
                }
            }
        }
        self.weight = weight;
        self.count = count;
        self.max_depth = max_depth;
        self.pre = pre;
        self.pre_end = pre_end;
        self.roots_by_pre = roots_by_pre;
        self.by_pre = by_pre;
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
    ///
    /// Only what `prune` keeps is built in full: a node the sort would
    /// drop is made with its weights but without its subtree, which is
    /// never printed. The nodes are merged from the trie as they are
    /// needed, weighed by the sums [`ChainTrie::finish`] made, so the cost
    /// grows with the printed graph, not with the chains under the entry.
    pub fn entry_call_tree(
        &self,
        e: &HistEntry,
        prune: crate::callchain::Prune,
    ) -> crate::callchain::CallTree {
        use crate::callchain::CallTree;
        let t = &self.trie;
        if !t.children || !t.caller_order {
            return self.entry_call_tree_whole(e);
        }
        // The entry's own chains ends, by pre-order number, with running
        // sums: what of a subtree is its own is then two binary searches.
        let mut own: Vec<(u32, u64, u64)> = e
            .ends
            .iter()
            .filter_map(|&i| t.terms.get(i as usize))
            .map(|term| (t.pre[term.node as usize], term.period, term.samples))
            .collect();
        own.sort_unstable_by_key(|o| o.0);
        let mut sums = Vec::with_capacity(own.len() + 1);
        sums.push((0u64, 0u64));
        for &(_, p, c) in &own {
            let (sp, sc) = sums[sums.len() - 1];
            sums.push((sp.wrapping_add(p), sc.wrapping_add(c)));
        }
        let own_in = |n: u32| -> (u64, u64) {
            if own.is_empty() {
                return (0, 0);
            }
            let (a, b) = (t.pre[n as usize], t.pre_end[n as usize]);
            let lo = own.partition_point(|o| o.0 < a);
            let hi = own.partition_point(|o| o.0 < b);
            (
                sums[hi].0.wrapping_sub(sums[lo].0),
                sums[hi].1.wrapping_sub(sums[lo].1),
            )
        };
        // A source is a trie node whose chains count: only the entry's own
        // samples (`own`), or all but those (a subtree from the entry's
        // frame on).
        let weight = |s: Src| -> (u64, u64) {
            let (p, c) = own_in(s.node);
            if s.own {
                (p, c)
            } else {
                let n = s.node as usize;
                (t.weight[n].wrapping_sub(p), t.count[n].wrapping_sub(c))
            }
        };
        let hit = |srcs: &[Src]| -> (u64, u64) {
            let mut h = (0u64, 0u64);
            for s in srcs {
                for term in t.terms_at(s.node) {
                    if (term.entry == e.id) == s.own {
                        h = (
                            h.0.saturating_add(term.period),
                            h.1.saturating_add(term.samples),
                        );
                    }
                }
            }
            h
        };
        // Sources grouped by frame into the merged nodes below them.
        let group = |pairs: &mut Vec<(u32, Src)>| -> Vec<Merged> {
            pairs.sort_unstable_by_key(|&(f, s)| (f, s.node, s.own));
            let mut out: Vec<Merged> = Vec::new();
            for &(f, s) in pairs.iter() {
                let w = weight(s);
                if w == (0, 0) {
                    continue;
                }
                match out.last_mut() {
                    Some(m) if m.frame == f => {
                        m.srcs.push(s);
                        m.cum = (m.cum.0.saturating_add(w.0), m.cum.1.saturating_add(w.1));
                    }
                    _ => out.push(Merged {
                        frame: f,
                        srcs: vec![s],
                        cum: w,
                    }),
                }
            }
            pairs.clear();
            out
        };
        let children_of = |srcs: &[Src], pairs: &mut Vec<(u32, Src)>| {
            for s in srcs {
                for c in t.children(s.node) {
                    pairs.push((
                        t.frame[c as usize],
                        Src {
                            node: c,
                            own: s.own,
                        },
                    ));
                }
            }
        };
        let mut pairs: Vec<(u32, Src)> = Vec::new();
        // The roots of the entry's own chains, then the subtrees.
        let mut roots: Vec<u32> = own
            .iter()
            .map(|&(pre, _, _)| {
                let i = t
                    .roots_by_pre
                    .partition_point(|&r| t.pre[r as usize] <= pre);
                t.roots_by_pre[i.saturating_sub(1)]
            })
            .collect();
        roots.dedup();
        let roots: Vec<Src> = roots
            .into_iter()
            .map(|node| Src { node, own: true })
            .collect();
        children_of(&roots, &mut pairs);
        for &s in &e.subtrees {
            pairs.push((
                t.frame[s as usize],
                Src {
                    node: s,
                    own: false,
                },
            ));
        }
        let top = group(&mut pairs);
        let mut tree = CallTree::new();
        let total = top.iter().fold((0u64, 0u64), |a, m| {
            (a.0.saturating_add(m.cum.0), a.1.saturating_add(m.cum.1))
        });
        tree.set_root_children(total.0, total.1);
        let mut work: Vec<(crate::callchain::NodeId, u64, Merged)> = top
            .into_iter()
            .map(|m| (CallTree::ROOT, total.0, m))
            .collect();
        while let Some((parent, parent_children, m)) = work.pop() {
            let expand = prune.keeps(m.cum.0, parent_children);
            let mut frames = vec![m.frame];
            let mut cur = m;
            loop {
                let h = hit(&cur.srcs);
                let rest = (cur.cum.0.wrapping_sub(h.0), cur.cum.1.wrapping_sub(h.1));
                if !expand {
                    tree.push_child(parent, frames, h, rest);
                    break;
                }
                children_of(&cur.srcs, &mut pairs);
                let mut below = group(&mut pairs);
                // perf's radix tree: a run without branches or chain ends
                // is one node.
                if h == (0, 0) && below.len() == 1 {
                    if let Some(next) = below.pop() {
                        frames.push(next.frame);
                        cur = next;
                        continue;
                    }
                }
                let id = tree.push_child(parent, frames, h, rest);
                for b in below {
                    work.push((id, rest.0, b));
                }
                break;
            }
        }
        tree
    }

    /// [`Self::entry_call_tree`] built whole from the chains, for what
    /// the trie does not hold in order: the entry's own chains (all there
    /// is without `--children`) and, with `--children` in callee order,
    /// the rest of every chain through the entry from its frame's
    /// occurrence nearest the leaf up to the root.
    fn entry_call_tree_whole(&self, e: &HistEntry) -> crate::callchain::CallTree {
        use crate::callchain::TrieBuilder;
        let t = &self.trie;
        let mut b = TrieBuilder::new();
        let mut path = Vec::new();
        // The chain from trie node `n` up to its root, in the order in
        // effect.
        let mut add = |b: &mut TrieBuilder, mut n: u32, period: u64, samples: u64| {
            path.clear();
            while t.parent[n as usize] != NONE {
                path.push(t.frame[n as usize]);
                n = t.parent[n as usize];
            }
            if t.caller_order {
                path.reverse();
            }
            b.add_chain(&path, period, samples);
        };
        for &term in &e.ends {
            if let Some(term) = t.terms.get(term as usize) {
                add(&mut b, term.node, term.period, term.samples);
            }
        }
        if t.children && !t.caller_order {
            // The entry's nodes in pre-order; each weighs what goes through
            // it and through no deeper node of the entry (its chains' part
            // from the entry on starts there), less the entry's own.
            // (All are in the subtrees of its first occurrences.)
            let mut nodes: Vec<u32> = Vec::new();
            for &s in &e.subtrees {
                let (a, z) = (t.pre[s as usize] as usize, t.pre_end[s as usize] as usize);
                nodes.extend(
                    t.by_pre[a.min(z)..z]
                        .iter()
                        .filter(|&&n| t.entry[n as usize] == e.id),
                );
            }
            nodes.sort_unstable_by_key(|&n| t.pre[n as usize]);
            let mut w: Vec<(u64, u64)> = nodes
                .iter()
                .map(|&n| (t.weight[n as usize], t.count[n as usize]))
                .collect();
            let mut open: Vec<usize> = Vec::new();
            for i in 0..nodes.len() {
                let pre = t.pre[nodes[i] as usize];
                while let Some(&top) = open.last() {
                    if pre < t.pre_end[nodes[top] as usize] {
                        break;
                    }
                    open.pop();
                }
                if let Some(&up) = open.last() {
                    let (p, c) = (t.weight[nodes[i] as usize], t.count[nodes[i] as usize]);
                    w[up] = (w[up].0.wrapping_sub(p), w[up].1.wrapping_sub(c));
                }
                open.push(i);
            }
            for &term in &e.ends {
                let Some(term) = t.terms.get(term as usize) else {
                    continue;
                };
                let mut n = term.node;
                while t.parent[n as usize] != NONE && t.entry[n as usize] != e.id {
                    n = t.parent[n as usize];
                }
                if let Ok(i) =
                    nodes.binary_search_by_key(&t.pre[n as usize], |&m| t.pre[m as usize])
                {
                    w[i] = (
                        w[i].0.wrapping_sub(term.period),
                        w[i].1.wrapping_sub(term.samples),
                    );
                }
            }
            for (&n, &(p, c)) in nodes.iter().zip(&w) {
                if (p, c) != (0, 0) {
                    add(&mut b, n, p, c);
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
                        let i = lead.entry_index(&me.keys, me.thread, me.level, me.filtered);
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
    fn entry_index(&mut self, keys: &[Key], thread: u32, level: u8, filtered: bool) -> usize {
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
            filtered,
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
}

impl LocFrames {
    fn get(&mut self, frames: &mut Vec<Frame>, syms: &Symbols, locs: &[Loc], lid: u32) -> &[u32] {
        let (a, b) = match self.spans.get(lid as usize).copied().flatten() {
            Some(r) => r,
            None => {
                let l = &locs[lid as usize];
                let a = self.ids.len() as u32;
                match syms.per_loc.get(lid as usize).filter(|s| s.sym.is_some()) {
                    Some(ls) => {
                        for &f in &ls.frames {
                            let id = intern_frame(
                                frames,
                                &mut self.frame_ids,
                                (SymRef::Sym(f), l.level),
                            );
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
                        let id = intern_frame(frames, &mut self.frame_ids, f);
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
    parent_id: u32,
    parent: Option<u32>,
    leaf_level: u8,
    /// The filters drop the sample (see [`HistEntry::filtered`]).
    filtered: bool,
}

/// (event, comm, thread, frame, location, cpu, parent).
type FrameEntryKey = (u32, u32, u32, u32, u32, u32, u32);

/// Everything that grows while chains are added to the trie.
struct Grow<'a> {
    syms: &'a Symbols,
    keys: KeyMaker<'a>,
    keybuf: Vec<Key>,
    /// A frame's entry within one (event, comm, thread, cpu, parent): each
    /// is hashed only once.
    frame_entry: HashMap<FrameEntryKey, u32>,
    /// The sort keys name the comm / the thread.
    by_comm: bool,
    by_thread: bool,
}

impl Grow<'_> {
    /// The entry of frame `f` (from location `at`, or `NONE`) in a chain
    /// with context `c`, made with `level` if new.
    fn entry(
        &mut self,
        frames: &[Frame],
        h: &mut Hists,
        c: &ChainCtx,
        f: u32,
        at: u32,
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
        );
        if let Some(&i) = self.frame_entry.get(&key) {
            return i;
        }
        let (sref, _) = frames[f as usize];
        let ctx = KeyCtx {
            comm: c.comm,
            thread: c.thread,
            cpu: c.cpu,
            dso: frame_dso(self.syms, sref),
            sym: sref,
            loc: at,
            parent: c.parent,
        };
        self.keys.make(&mut self.keybuf, &ctx);
        let i = h.entry_index(&self.keybuf, c.thread, level, c.filtered) as u32;
        self.frame_entry.insert(key, i);
        i
    }
}

/// The DSO of a frame's symbol or address.
fn frame_dso(syms: &Symbols, sref: SymRef) -> u32 {
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

/// The entries on one trie path, as the path's new nodes are taken root
/// first: each node is checked against its ancestors in constant time,
/// not by walking up (which made deep stacks cost their depth squared).
#[derive(Default)]
struct PathMarks {
    stamp: u32,
    /// Per entry, the stamp of the path it was last seen on.
    mark: Vec<u32>,
}

impl PathMarks {
    /// A new path, whose nodes from `node` up (below the root) exist.
    fn start(&mut self, trie: &ChainTrie, mut node: u32) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.iter_mut().for_each(|m| *m = 0);
            self.stamp = 1;
        }
        while let Some(&up) = trie.parent.get(node as usize) {
            if up == NONE {
                break;
            }
            self.see(trie.entry[node as usize]);
            node = up;
        }
    }

    /// Marks `entry` as on the path; whether it was not already.
    fn see(&mut self, entry: u32) -> bool {
        let i = entry as usize;
        if i >= self.mark.len() {
            self.mark.resize(i + 1, 0);
        }
        let first = self.mark[i] != self.stamp;
        self.mark[i] = self.stamp;
        first
    }

    /// Records trie node `n`, the next new node of the path, in its entry's
    /// subtrees if its frame's entry does not occur above it.
    fn note_first_occurrence(&mut self, trie: &ChainTrie, h: &mut Hists, n: u32) {
        let idx = trie.entry[n as usize];
        if self.see(idx) {
            h.entries[idx as usize].subtrees.push(n);
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
    sums: Vec<(crate::resolve::SampleKey, crate::resolve::SampleSum)>,
    syms: &Symbols,
    machine: &Machine,
    dso_names: &[String],
    opts: &HistOptions,
    filters: &Filters,
) -> Report {
    let mut report = Report::default();
    let locs = collector.interner.locs();
    let mut stack = Vec::new();
    let mut chain: Vec<u32> = Vec::new();
    let need_chain = opts.children || opts.callchains;
    let dso_rows: Vec<u32> = {
        let mut first: HashMap<&str, u32> = HashMap::default();
        dso_names
            .iter()
            .enumerate()
            .map(|(i, n)| *first.entry(n.as_str()).or_insert(i as u32))
            .collect()
    };
    let mut loc_frames = LocFrames {
        spans: Vec::new(),
        ids: Vec::new(),
        frame_ids: HashMap::default(),
    };
    let comms = collector.comms();
    let mut g = Grow {
        syms,
        keys: KeyMaker::new(&opts.keys, locs, syms, dso_names, dso_rows),
        keybuf: Vec::new(),
        frame_entry: HashMap::default(),
        by_comm: opts.keys.contains(&SortKey::Comm),
        by_thread: opts.keys.contains(&SortKey::Pid),
    };
    let want_parent = opts.keys.contains(&SortKey::Parent);
    let want_cpu = opts.keys.contains(&SortKey::Cpu);
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
    let mut fresh: Vec<(u32, u32)> = Vec::new();
    let mut marks = PathMarks::default();
    report.trie.children = opts.children;
    report.trie.caller_order = opts.caller_order;
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
        // perf adds the samples the filters drop too: the entries they
        // make are marked and hidden, the ones they pass count them.
        let th = machine.thread_info(key.thread as usize);
        let leaf = &locs[key.leaf as usize];
        let leaf_sym = sym_ref_of(syms, key.leaf, leaf);
        let filtered = !filters.keep_thread(comms, key.comm, th.pid, th.tid)
            || !filters.keep_sample(dso_names, syms, leaf, &leaf_sym);
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
            parent_id: if want_parent {
                parent.unwrap_or(NONE - 1)
            } else {
                NONE
            },
            parent,
            leaf_level: leaf.level,
            filtered,
        };
        let h = &mut report.hists[ev];
        let ctx = KeyCtx {
            comm: key.comm,
            thread: key.thread,
            cpu: key.cpu,
            dso: leaf.dso,
            sym: leaf_sym,
            loc: key.leaf,
            parent,
        };
        g.keys.make(&mut g.keybuf, &ctx);
        let self_index = h.entry_index(&g.keybuf, key.thread, leaf.level, filtered);
        // The filtered totals count the samples whose own entry shows.
        let counted = !h.entries[self_index].filtered;
        if counted {
            h.nr_samples += sum.samples;
            h.total_period = h.total_period.wrapping_add(sum.period);
        }
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
        }
        if !need_chain || key.stack == EMPTY_STACK {
            continue;
        }
        if counted {
            h.callchain_period = h.callchain_period.wrapping_add(sum.period);
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
            chain.extend_from_slice(loc_frames.get(&mut report.frames, syms, locs, lid));
            for &f in chain.iter().rev() {
                let (n, new) = trie.child(node, f, at);
                if new {
                    trie.depth[n as usize] = trie.depth[node as usize] + 1;
                    if opts.children {
                        fresh.push((n, at));
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
            marks.start(trie, trie.parent[fresh[0].0 as usize]);
            if opts.caller_order {
                for &(n, at) in &fresh {
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
                    let idx = g.entry(&report.frames, h, &cctx, f, at, level);
                    trie.entry[n as usize] = idx;
                    marks.note_first_occurrence(trie, h, n);
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
                        let idx = g.entry(&report.frames, h, &cctx, f, fresh[fi].1, level);
                        trie.entry[n as usize] = idx;
                        if opts.callchains {
                            let e = &mut h.entries[idx as usize];
                            e.max_depth = e.max_depth.max(trie.depth[n as usize] as usize);
                        }
                    }
                    n = trie.parent[n as usize];
                }
                for &(n, _) in &fresh {
                    marks.note_first_occurrence(trie, h, n);
                }
            }
        }
        let e = &mut h.entries[self_index];
        let term = trie.add_term(end, e.id, sum.period, sum.samples);
        e.ends.push(term);
        if opts.callchains {
            e.max_depth = e.max_depth.max(trie.depth[end as usize] as usize);
        }
    }
    if need_chain {
        report.trie.finish();
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
                    e.period_acc = e.period_acc.wrapping_add(t.weight[s]);
                    e.samples_acc = e.samples_acc.wrapping_add(t.count[s]);
                    // (Callee order: counted as entries were made.)
                    if opts.callchains && opts.caller_order {
                        let d = t.max_depth[s].saturating_sub(t.depth[s]) + 1;
                        e.max_depth = e.max_depth.max(d as usize);
                    }
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
    report
}

/// perf's parent of a sample: the first frame of the recorded callchain,
/// in the order in effect (leaf first for callee order, root first for
/// caller order), whose symbol matches the regex. perf matches while it
/// resolves the recorded chain only, so DWARF-unwound frames never count.
fn find_parent(
    stack: &[u32],
    locs: &[Loc],
    syms: &Symbols,
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

/// What one entry's keys are made of.
struct KeyCtx {
    comm: u32,
    thread: u32,
    cpu: u32,
    dso: u32,
    sym: SymRef,
    /// The location (loc id) the entry's address came from.
    loc: u32,
    parent: Option<u32>,
}

/// Makes entries' keys, computing per location (once) the texts of keys
/// perf compares as text.
struct KeyMaker<'a> {
    keys: &'a [SortKey],
    locs: &'a [Loc],
    syms: &'a Symbols,
    dso_names: &'a [String],
    /// Each DSO's row: the first DSO with its short name (perf's dso key
    /// compares short names, so two binaries named alike share a row).
    dso_rows: Vec<u32>,
    strings: Vec<String>,
    string_ids: HashMap<String, u32>,
    /// Per loc id: its srcline and srcfile string ids (`u32::MAX`: not yet).
    srclines: Vec<(u32, u32)>,
}

/// perf's text for an address without a source line or map.
const SRCLINE_UNKNOWN: &str = "??:0";

impl<'a> KeyMaker<'a> {
    fn new(
        keys: &'a [SortKey],
        locs: &'a [Loc],
        syms: &'a Symbols,
        dso_names: &'a [String],
        dso_rows: Vec<u32>,
    ) -> Self {
        let lines = keys.iter().any(|k| k.needs_srclines());
        KeyMaker {
            keys,
            locs,
            syms,
            dso_names,
            dso_rows,
            strings: Vec::new(),
            string_ids: HashMap::default(),
            srclines: if lines {
                vec![(u32::MAX, u32::MAX); locs.len()]
            } else {
                Vec::new()
            },
        }
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_owned());
        self.string_ids.insert(s.to_owned(), i);
        i
    }

    /// perf's srcline and srcfile texts of a location: `file:line`, where
    /// DWARF (or, as `??:0`, the symbol table) covers the address; else
    /// `symbol+offset` (decimal) or `dso[address]`; `??:0` without a map.
    /// The srcfile is the file part of a found line, else empty.
    fn srcline(&mut self, lid: u32) -> (u32, u32) {
        if let Some(&(l, f)) = self.srclines.get(lid as usize) {
            if l != u32::MAX {
                return (l, f);
            }
        }
        let loc = &self.locs[lid as usize];
        let ls = self.syms.per_loc.get(lid as usize);
        let (line, file) = if loc.dso == NO_DSO {
            (SRCLINE_UNKNOWN.to_owned(), String::new())
        } else if let Some(pos) = ls.and_then(|l| l.line) {
            let name = self
                .syms
                .files
                .get(pos.file as usize)
                .map_or("??", String::as_str);
            let text = format!("{name}:{}", pos.line);
            let file = if text == SRCLINE_UNKNOWN {
                String::new()
            } else {
                // perf cuts the text at its first colon.
                text.split(':').next().unwrap_or("").to_owned()
            };
            (text, file)
        } else if let Some((s, ls)) = ls.and_then(|l| l.sym.map(|s| (s, l))) {
            let name = &self.syms.syms[s as usize].name;
            (format!("{name}+{}", ls.sym_offset), String::new())
        } else {
            let dso = self
                .dso_names
                .get(loc.dso as usize)
                .map_or("", String::as_str);
            // The address in the binary's own terms, where it was read.
            let at = ls.and_then(|l| l.svma).unwrap_or(loc.rel);
            (format!("{dso}[{at:x}]"), String::new())
        };
        let ids = (self.intern(&line), self.intern(&file));
        if let Some(slot) = self.srclines.get_mut(lid as usize) {
            *slot = ids;
        }
        ids
    }

    fn make(&mut self, out: &mut Vec<Key>, c: &KeyCtx) {
        out.clear();
        for k in self.keys {
            let key = match k {
                SortKey::Comm => Key::Comm(c.comm),
                SortKey::Pid => Key::Thread(c.thread),
                SortKey::Dso => {
                    let dso = self.dso_rows.get(c.dso as usize).copied().unwrap_or(c.dso);
                    Key::Dso((dso != NO_DSO).then_some(dso))
                }
                // perf tells unresolved symbols apart by address only.
                SortKey::Sym => Key::Sym(unresolved_by_address(c.sym)),
                SortKey::Srcline => Key::Srcline(self.srcline(c.loc).0),
                SortKey::Srcfile => Key::Srcfile(self.srcline(c.loc).1),
                SortKey::Parent => Key::Parent(c.parent),
                SortKey::Cpu => Key::Cpu(c.cpu),
                SortKey::SymOff => {
                    let off = match c.sym {
                        SymRef::Sym(_) => self
                            .syms
                            .per_loc
                            .get(c.loc as usize)
                            .map_or(0, |l| l.sym_offset),
                        SymRef::Addr { .. } => 0,
                    };
                    Key::SymOff(c.sym, off)
                }
                SortKey::SymSize => Key::SymSize(match c.sym {
                    SymRef::Sym(s) => Some(self.syms.syms[s as usize].size),
                    SymRef::Addr { .. } => None,
                }),
                SortKey::DsoSize => {
                    let l = &self.locs[c.loc as usize];
                    let kernel = self
                        .dso_names
                        .get(l.dso as usize)
                        .is_some_and(|n| n == "[kernel.kallsyms]");
                    let size = match self.syms.kernel_extent {
                        Some((start, end)) if kernel => end.wrapping_sub(start),
                        _ => l.map_size,
                    };
                    Key::DsoSize((l.dso != NO_DSO).then_some(size))
                }
                SortKey::IpcNull => Key::IpcNull(unresolved_by_address(c.sym)),
            };
            out.push(key);
        }
    }
}

/// An unresolved symbol without its DSO: perf's symbol keys compare such
/// entries by address only.
fn unresolved_by_address(sym: SymRef) -> SymRef {
    match sym {
        SymRef::Addr { ip, .. } => SymRef::Addr { ip, dso: NO_DSO },
        s => s,
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
fn sym_ref_of(syms: &Symbols, lid: u32, l: &Loc) -> SymRef {
    match syms.per_loc.get(lid as usize).and_then(|s| s.sym) {
        Some(s) => SymRef::Sym(s),
        None => SymRef::Addr {
            ip: l.rel,
            dso: l.dso,
        },
    }
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
