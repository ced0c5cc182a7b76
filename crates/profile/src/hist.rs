//! Histograms of samples by sort keys (perf's `hists`), one per event, with
//! self and accumulated ("children") periods and, per entry, the chains its
//! call graph is built from.

use rustc_hash::FxHashMap as HashMap;
use std::cmp::Ordering;

use crate::machine::Machine;
use crate::resolve::{Collector, Loc, Origin, NO_DSO};
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
    pub fn parse_list(list: &str) -> Result<Vec<SortKey>, String> {
        let mut keys = Vec::new();
        for k in list.split(',').map(str::trim) {
            keys.push(SortKey::parse(k).ok_or_else(|| k.to_owned())?);
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
    fn cmp_for_sort(&self, a: &Key, b: &Key) -> Ordering {
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
            // By name; unresolved entries after symbols, by address.
            (Key::Sym(x), Key::Sym(y)) => self.cmp_sym(x, y),
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

/// Where an entry's call graph comes from: a chain ([`Report::frames_of`],
/// in insertion order: root first for caller order) and the position of the
/// entry's own frame in it; the entry's chain is the rest from there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainRef {
    pub chain: u32,
    /// 0 for the sample's own entry; the frame's index for an entry a
    /// children pass added.
    pub pos: u32,
    pub period: u64,
    pub samples: u64,
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
    pub chains: Vec<ChainRef>,
    /// perf's level character of the sample that created the entry.
    pub level: u8,
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
}

/// All events' rows plus the interned callchains they refer to.
#[derive(Debug, Default)]
pub struct Report {
    pub hists: Vec<Hists>,
    /// Interned frames and chains (frame ids, in insertion order).
    pub frames: Vec<Frame>,
    pub chains: Vec<Vec<u32>>,
    /// Texts the srcline, srcfile and parent keys refer to.
    pub strings: Vec<String>,
}

impl Report {
    pub fn frames_of(&self, chain: u32) -> &[u32] {
        &self.chains[chain as usize]
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
            chains: Vec::new(),
            level,
        });
        self.entries.len() - 1
    }

    /// Orders rows as perf prints them.
    pub fn sort(&mut self, names: &Names<'_>, children: bool, caller_order: bool) {
        self.entries.sort_by(|a, b| {
            let mut o = Ordering::Equal;
            if children {
                o = b.period_acc.cmp(&a.period_acc);
                if o.is_eq() {
                    // perf puts callers above callees of equal period (only
                    // within one thread; a sort needs a total order, so we
                    // apply it to all).
                    o = b.max_depth.cmp(&a.max_depth);
                    if !caller_order {
                        o = o.reverse();
                    }
                }
            }
            o.then_with(|| b.period.cmp(&a.period)).then_with(|| {
                a.keys
                    .iter()
                    .zip(&b.keys)
                    .map(|(x, y)| names.cmp_for_sort(x, y))
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            })
        });
        self.index.clear();
    }
}

/// Builds the rows of every event from pass one and pass two.
pub fn build(
    collector: &Collector,
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
    // The location each frame of `chain` came from.
    let mut chain_locs: Vec<u32> = Vec::new();
    let mut keybuf: Vec<Key> = Vec::new();
    let mut seen: Vec<usize> = Vec::new();
    let need_chain = opts.children || opts.callchains;
    let comms = collector.comms();
    let mut keys = KeyMaker::new(&opts.keys, locs, syms, dso_names);
    let want_parent = opts.keys.contains(&SortKey::Parent);
    let mut parents: HashMap<u32, Option<u32>> = HashMap::default();
    // Per symbol: 0 not yet asked, 1 no match, 2 match.
    let mut sym_matches: Vec<u8> = vec![0; syms.syms.len()];
    for (key, sum) in collector.sums_in_order() {
        let th = machine.thread_info(key.thread as usize);
        if !filters.keep_thread(comms, key.comm, th.pid, th.tid) {
            continue;
        }
        let leaf = &locs[key.leaf as usize];
        let leaf_sym = sym_ref_of(syms, key.leaf, leaf);
        if !filters.keep_sample(dso_names, syms, leaf, &leaf_sym) {
            continue;
        }
        let ev = key.event as usize;
        if report.hists.len() <= ev {
            report.hists.resize_with(ev + 1, Hists::default);
        }
        // The chain, expanded into frames (inline frames included).
        chain.clear();
        chain_locs.clear();
        if need_chain || want_parent {
            collector.interner.stack(key.stack, &mut stack);
        }
        if need_chain {
            for &lid in &stack {
                let l = &locs[lid as usize];
                match syms.per_loc.get(lid as usize).filter(|s| s.sym.is_some()) {
                    Some(ls) => {
                        for &f in &ls.frames {
                            chain.push(intern_frame(
                                &mut report.frames,
                                &mut frame_ids,
                                (SymRef::Sym(f), l.level),
                            ));
                            chain_locs.push(lid);
                        }
                    }
                    None => {
                        chain.push(intern_frame(
                            &mut report.frames,
                            &mut frame_ids,
                            (
                                SymRef::Addr {
                                    ip: l.ip,
                                    dso: l.dso,
                                },
                                l.level,
                            ),
                        ));
                        chain_locs.push(lid);
                    }
                }
            }
        }
        // perf's cursor holds the chain in the order in effect: root first
        // for caller order.
        if opts.caller_order {
            chain.reverse();
            chain_locs.reverse();
        }
        let parent = match (&opts.parent, want_parent) {
            (Some(re), true) => *parents.entry(key.stack).or_insert_with(|| {
                let m = find_parent(&stack, locs, syms, re, opts.caller_order, &mut sym_matches);
                m.map(|s| keys.intern(&syms.syms[s as usize].name))
            }),
            _ => None,
        };
        let chain_id = if opts.callchains {
            report.chains.push(chain.clone());
            (report.chains.len() - 1) as u32
        } else {
            u32::MAX
        };
        let h = &mut report.hists[ev];
        h.nr_samples += sum.samples;
        h.total_period = h.total_period.wrapping_add(sum.period);
        if !chain.is_empty() {
            h.callchain_period = h.callchain_period.wrapping_add(sum.period);
        }
        let mut ctx = KeyCtx {
            comm: key.comm,
            thread: key.thread,
            cpu: key.cpu,
            dso: leaf.dso,
            sym: leaf_sym,
            loc: key.leaf,
            parent,
        };
        keys.make(&mut keybuf, &ctx);
        let depth = chain.len();
        let self_index = h.entry_index(&keybuf, key.thread, leaf.level);
        {
            let e = &mut h.entries[self_index];
            e.period = e.period.wrapping_add(sum.period);
            e.samples += sum.samples;
            e.period_acc = e.period_acc.wrapping_add(sum.period);
            e.samples_acc += sum.samples;
            if chain_id != u32::MAX {
                e.max_depth = e.max_depth.max(depth);
                e.chains.push(ChainRef {
                    chain: chain_id,
                    pos: 0,
                    period: sum.period,
                    samples: sum.samples,
                });
            }
        }
        if !opts.children {
            continue;
        }
        // perf walks the chain in its order; each frame's entry (once per
        // sample: recursion and the self entry are skipped) accumulates the
        // period and gets the chain from that frame on.
        seen.clear();
        seen.push(self_index);
        // perf fills one location per frame and only sets its level for
        // frames with a map: a frame without one shows the level before it.
        let mut level = leaf.level;
        for (pos, (&f, &lid)) in chain.iter().zip(&chain_locs).enumerate() {
            let (sref, frame_level) = report.frames[f as usize];
            let dso = match sref {
                SymRef::Sym(s) => syms.syms[s as usize].dso,
                SymRef::Addr { dso, .. } => dso,
            };
            if dso != NO_DSO {
                level = frame_level;
            }
            ctx.dso = dso;
            ctx.sym = sref;
            ctx.loc = lid;
            keys.make(&mut keybuf, &ctx);
            let idx = h.entry_index(&keybuf, key.thread, level);
            if seen.contains(&idx) {
                continue;
            }
            seen.push(idx);
            let e = &mut h.entries[idx];
            e.period_acc = e.period_acc.wrapping_add(sum.period);
            e.samples_acc += sum.samples;
            if chain_id != u32::MAX {
                e.max_depth = e.max_depth.max(depth - pos);
                e.chains.push(ChainRef {
                    chain: chain_id,
                    pos: pos as u32,
                    period: sum.period,
                    samples: sum.samples,
                });
            }
        }
    }
    report.strings = keys.strings;
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
    ) -> Self {
        let lines = keys.iter().any(|k| k.needs_srclines());
        KeyMaker {
            keys,
            locs,
            syms,
            dso_names,
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
            (format!("{dso}[{:x}]", loc.rel), String::new())
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
                SortKey::Dso => Key::Dso((c.dso != NO_DSO).then_some(c.dso)),
                SortKey::Sym => Key::Sym(c.sym),
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
                SortKey::IpcNull => Key::IpcNull(c.sym),
            };
            out.push(key);
        }
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
            SortKey::parse_list("tid,srcline"),
            Ok(vec![SortKey::Pid, SortKey::Srcline])
        );
        // perf appends its IPC placeholder to any list naming "symbol".
        assert_eq!(
            SortKey::parse_list("dso,symbol_size"),
            Ok(vec![SortKey::Dso, SortKey::SymSize, SortKey::IpcNull])
        );
        assert_eq!(SortKey::parse_list("sym"), Ok(vec![SortKey::Sym]));
        assert_eq!(SortKey::parse_list("comm,bogus"), Err("bogus".to_owned()));
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
