//! Pass one of a report: every sample becomes a stack of locations
//! (DSO + address), leaf first, the way perf builds its callchain cursor,
//! and identical (thread, comm, stack) samples are summed. Nothing is
//! symbolized here; that happens once per unique location afterwards, so
//! the cost of symbolization grows with unique addresses, not samples.

use rustc_hash::FxHashMap as HashMap;

use perf_data::consts::*;
use perf_data::sample::Sample;

use unwind::{Binaries, Mapping, Unwinder, UserRegs};

use crate::machine::{Machine, MapHit, MapInfo, ThreadInfo};

mod history;
mod piped;
pub use history::Position;

/// No DSO: the address hit no map.
pub const NO_DSO: u32 = u32::MAX;

/// How an address came into a stack; decides how it is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// The sampled instruction itself (the leaf).
    Exact,
    /// A return address from a recorded (frame-pointer or kernel)
    /// callchain: the call is at `ip - 1`.
    Return,
    /// A frame of a DWARF-unwound user stack; its `ip` is already the
    /// call site (`return address - 1`, as perf's libdw unwinder gives it)
    /// and perf expands its inline frames.
    Unwound,
    /// The first frame of a DWARF-unwound stack (the register ip).
    UnwoundLeaf,
}

/// One address of a stack, as perf's callchain cursor holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Loc {
    /// The address in the process.
    pub ip: u64,
    /// The address as its DSO sees it (perf's `map__map_ip`).
    pub rel: u64,
    /// Index of the DSO in the machine, or [`NO_DSO`].
    pub dso: u32,
    /// perf's level character: `.` user, `k` kernel, `H` hypervisor,
    /// `g` guest kernel, `u` guest user.
    pub level: u8,
    pub origin: Origin,
    /// The size of the map the address fell in (perf's `dso_size` key), 0
    /// without one.
    pub map_size: u64,
}

impl Loc {
    /// The address a symbolizer should look up, in the DSO's terms.
    pub fn lookup_rel(&self) -> u64 {
        match self.origin {
            Origin::Return => self.rel.wrapping_sub(1),
            _ => self.rel,
        }
    }

    /// The process address a symbolizer should look up (for kernel and
    /// JIT symbols, which are in process addresses).
    pub fn lookup_ip(&self) -> u64 {
        match self.origin {
            Origin::Return => self.ip.wrapping_sub(1),
            _ => self.ip,
        }
    }

    /// What a symbolizer's answer for this location depends on within its
    /// DSO: the file address and how it came into the stack. The same
    /// code mapped at other addresses in other processes shares it.
    pub fn answer_key(&self) -> (u64, Origin) {
        (self.rel, self.origin)
    }

    /// Whether perf expands this address into inline frames.
    pub fn expands_inlines(&self) -> bool {
        matches!(self.origin, Origin::Unwound | Origin::UnwoundLeaf)
    }
}

/// Interned locations and stacks.
///
/// A stack is a node of a tree whose root-first paths are the stacks'
/// location ids. Nodes are found by a 64-bit hash of their whole
/// root-first path (see [`prefix_hash`]), not by (parent, location), so
/// the deepest part of a new stack that already exists is found by a
/// binary search over its depth: a handful of lookups however deep the
/// stack, where a walk from the root costs one cache miss per frame once
/// the tree outgrows the caches.
#[derive(Debug)]
pub struct Interner {
    locs: Vec<Loc>,
    loc_ids: HashMap<Loc, u32>,
    /// Stack nodes: (parent node or `u32::MAX`, loc id); root-most first.
    nodes: Vec<(u32, u32)>,
    /// Node by the hash of its path (empty after [`Self::release_index`]
    /// until the next stack is interned).
    by_path: PrefixTable,
    /// The hash of the empty path (random per run, so a crafted recording
    /// cannot aim at a collision).
    seed: u64,
}

impl Default for Interner {
    fn default() -> Self {
        use std::hash::BuildHasher;
        Interner {
            locs: Vec::new(),
            loc_ids: HashMap::default(),
            nodes: Vec::new(),
            by_path: PrefixTable::default(),
            seed: std::collections::hash_map::RandomState::new().hash_one(0x5ea2u64),
        }
    }
}

/// The hash of a root-first path of location ids extended by `loc`
/// (a folded 128-bit multiply, as in wyhash: the second factor is never
/// zero, bit 32 being set in it).
fn prefix_hash(h: u64, loc: u32) -> u64 {
    const K0: u64 = 0x243f_6a88_85a3_08d3;
    const K1: u64 = 0x1319_8a2e_0370_7344;
    let m = ((h ^ K0) as u128) * ((u64::from(loc) | 1 << 32) ^ K1) as u128;
    (m as u64) ^ ((m >> 64) as u64)
}

/// An open-addressing table from a path hash to its node: each slot holds
/// the whole key and value (hash halves and node id, 12 bytes), so a
/// lookup costs one cache miss, not the two of a table keeping control
/// bytes apart from its slots. Linear probing, at most 3/4 full, any
/// number of slots (a hash is scaled to them).
///
/// A big table is [`SHARDS`] tables, picked by the hash's top bits, each
/// growing on its own: growing one whole table would hold the old slots
/// and the new, twice as many, at once (on millions of unique stacks that
/// moment was pass one's peak of memory); a shard's growth adds a 64th of
/// that. A small one is one table (small shards would be freed into the
/// heap in pieces too small for the next ones); the split comes at 1.5 MB
/// of slots, which a recording of a few hundred thousand stack nodes
/// passes (a 650k-sample recording of one program peaked on growing the
/// one table from 3 to 6 MB).
#[derive(Debug, Default)]
struct PrefixTable {
    shards: Vec<Shard>,
    /// The hash bits that pick a shard: 0 (one table) or [`SHARD_BITS`].
    bits: u32,
    len: usize,
}

#[derive(Debug, Default)]
struct Shard {
    slots: Vec<[u32; 3]>,
    len: usize,
}

/// An empty [`PrefixTable`] slot's node.
const FREE: u32 = u32::MAX;

/// How many shards a big [`PrefixTable`] has (a power of two), the hash
/// bits that pick one, and the slots past which a table is split into
/// them.
const SHARD_BITS: u32 = 6;
const SHARDS: usize = 1 << SHARD_BITS;
const SPLIT_SLOTS: usize = 1 << 17;

impl Shard {
    fn start(&self, h: u64, bits: u32) -> usize {
        // The hash's bits after the shard's, scaled to the slots: the top
        // ones weigh most, and the multiply above mixes them best.
        ((u128::from(h << bits) * self.slots.len() as u128) >> 64) as usize
    }

    fn get(&self, h: u64, bits: u32) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let (lo, hi) = (h as u32, (h >> 32) as u32);
        let mut i = self.start(h, bits);
        loop {
            let [a, b, n] = self.slots[i];
            if n == FREE {
                return None;
            }
            if a == lo && b == hi {
                return Some(n);
            }
            i += 1;
            if i == self.slots.len() {
                i = 0;
            }
        }
    }

    /// Whether one more entry needs more slots.
    fn full(&self) -> bool {
        (self.len + 1) * 4 > self.slots.len() * 3
    }

    fn insert(&mut self, h: u64, node: u32, bits: u32) {
        if self.full() {
            self.grow(bits);
        }
        self.put(h, node, bits);
        self.len += 1;
    }

    fn put(&mut self, h: u64, node: u32, bits: u32) {
        let mut i = self.start(h, bits);
        while self.slots[i][2] != FREE {
            i += 1;
            if i == self.slots.len() {
                i = 0;
            }
        }
        self.slots[i] = [h as u32, (h >> 32) as u32, node];
    }

    /// Twice the slots for the one table of a small index; a shard's grow
    /// by half as many again (it is then 1/2 to 3/4 full; by doubling it
    /// would be 3/8 to 3/4).
    fn grow(&mut self, bits: u32) {
        let n = self.slots.len();
        let size = if bits == 0 {
            (n * 2).max(1024)
        } else {
            n + n / 2
        };
        let old = std::mem::replace(&mut self.slots, vec![[0, 0, FREE]; size]);
        for [a, b, n] in old {
            if n != FREE {
                self.put(u64::from(a) | u64::from(b) << 32, n, bits);
            }
        }
    }
}

impl PrefixTable {
    fn shard(&self, h: u64) -> usize {
        if self.bits == 0 {
            0
        } else {
            (h >> (64 - self.bits)) as usize
        }
    }

    fn get(&self, h: u64) -> Option<u32> {
        self.shards.get(self.shard(h))?.get(h, self.bits)
    }

    /// Adds `h` (not in the table) with its node.
    fn insert(&mut self, h: u64, node: u32) {
        if self.shards.is_empty() {
            self.shards.push(Shard::default());
        }
        if self.bits == 0 && self.shards[0].full() && self.shards[0].slots.len() >= SPLIT_SLOTS {
            self.split();
        }
        let (i, bits) = (self.shard(h), self.bits);
        self.shards[i].insert(h, node, bits);
        self.len += 1;
    }

    /// The one table becomes [`SHARDS`] tables, half as many slots again
    /// in all.
    fn split(&mut self) {
        let Some(one) = self.shards.pop() else {
            return;
        };
        let size = (one.slots.len() + one.slots.len() / 2) / SHARDS;
        self.bits = SHARD_BITS;
        self.shards = (0..SHARDS)
            .map(|_| Shard {
                slots: vec![[0, 0, FREE]; size],
                len: 0,
            })
            .collect();
        for [a, b, n] in one.slots {
            if n != FREE {
                let h = u64::from(a) | u64::from(b) << 32;
                let i = self.shard(h);
                self.shards[i].put(h, n, SHARD_BITS);
                self.shards[i].len += 1;
            }
        }
    }
}

/// The root-first locations of the last stack interned through it, their
/// path hashes and their node ids where known (see
/// [`Interner::stack_id_from`]).
#[derive(Debug, Default, Clone)]
pub struct StackPath {
    locs: Vec<Loc>,
    loc_ids: Vec<u32>,
    hashes: Vec<u64>,
    /// [`FREE`] where the binary search did not look.
    nodes: Vec<u32>,
}

/// The empty stack.
pub const EMPTY_STACK: u32 = u32::MAX;

impl Interner {
    pub fn loc_id(&mut self, l: Loc) -> u32 {
        if let Some(&i) = self.loc_ids.get(&l) {
            return i;
        }
        let i = self.locs.len() as u32;
        self.locs.push(l);
        self.loc_ids.insert(l, i);
        i
    }

    /// Moves locations `ids` (which no map held) into DSO `dso`, its
    /// addresses as they are (a kernel map), as perf does once a map grows
    /// to cover them.
    pub fn move_into(&mut self, ids: &[u32], dso: u32) {
        for &i in ids {
            let Some(l) = self.locs.get_mut(i as usize) else {
                continue;
            };
            self.loc_ids.remove(l);
            l.dso = dso;
            l.rel = l.ip;
            self.loc_ids.insert(*l, i);
        }
    }

    pub fn locs(&self) -> &[Loc] {
        &self.locs
    }

    /// How many stack nodes (distinct root-first stack prefixes) there are.
    pub fn stack_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Interns a leaf-first stack; returns its id ([`EMPTY_STACK`] for none).
    pub fn stack_id(&mut self, leaf_first: &[Loc]) -> u32 {
        self.stack_id_from(leaf_first, &mut StackPath::default())
    }

    /// [`Self::stack_id`], reusing what `path` (the last stack interned
    /// with it) has in common with this stack from the root: consecutive
    /// samples of a thread mostly differ only near the leaf, so only that
    /// part is hashed. The deepest part of the rest that exists already is
    /// found by a binary search over its depth (a path exists only if its
    /// parent's does), and only the nodes below it are made.
    pub fn stack_id_from(&mut self, leaf_first: &[Loc], path: &mut StackPath) -> u32 {
        if self.by_path.len == 0 && !self.nodes.is_empty() {
            self.rebuild_index();
        }
        let common = path
            .locs
            .iter()
            .zip(leaf_first.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        path.locs.truncate(common);
        path.loc_ids.truncate(common);
        path.hashes.truncate(common);
        path.nodes.truncate(common);
        let mut h = path.hashes.last().copied().unwrap_or(self.seed);
        for l in leaf_first[..leaf_first.len() - common].iter().rev() {
            let loc = self.loc_id(*l);
            h = prefix_hash(h, loc);
            path.locs.push(*l);
            path.loc_ids.push(loc);
            path.hashes.push(h);
            path.nodes.push(FREE);
        }
        // Depth `lo` exists (its node, where known, in `node`); deeper
        // than `hi` does not.
        let (mut lo, mut hi) = (common, leaf_first.len());
        let mut node = path
            .nodes
            .get(lo.wrapping_sub(1))
            .copied()
            .unwrap_or(EMPTY_STACK);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            match self.by_path.get(path.hashes[mid - 1]) {
                Some(n) => {
                    lo = mid;
                    node = n;
                    path.nodes[mid - 1] = n;
                }
                None => hi = mid - 1,
            }
        }
        if lo > 0 && node == FREE {
            match self.by_path.get(path.hashes[lo - 1]) {
                Some(n) => node = n,
                // Cannot happen (every path a StackPath holds was
                // interned); start over from the root if it did.
                None => return self.stack_id_from(leaf_first, &mut StackPath::default()),
            }
            path.nodes[lo - 1] = node;
        }
        for d in lo..leaf_first.len() {
            let n = self.nodes.len() as u32;
            self.nodes.push((node, path.loc_ids[d]));
            self.by_path.insert(path.hashes[d], n);
            path.nodes[d] = n;
            node = n;
        }
        node
    }

    /// Frees the index that finds stacks by their paths (pass one is
    /// over); the next stack interned makes it again.
    pub fn release_index(&mut self) {
        self.by_path = PrefixTable::default();
    }

    /// Makes the index of [`Self::release_index`] again from the nodes (a
    /// parent comes before its children).
    fn rebuild_index(&mut self) {
        let mut hashes: Vec<u64> = Vec::with_capacity(self.nodes.len());
        for (i, &(parent, loc)) in self.nodes.iter().enumerate() {
            let up = hashes.get(parent as usize).copied().unwrap_or(self.seed);
            let h = prefix_hash(up, loc);
            hashes.push(h);
            self.by_path.insert(h, i as u32);
        }
    }

    /// A stack node's parent (the stack without its leaf; [`EMPTY_STACK`]
    /// for a one-location stack) and its leaf location.
    pub fn node(&self, id: u32) -> Option<(u32, u32)> {
        self.nodes.get(id as usize).copied()
    }

    /// The loc ids of a stack, leaf first.
    pub fn stack(&self, mut id: u32, out: &mut Vec<u32>) {
        out.clear();
        while let Some(&(parent, loc)) = self.nodes.get(id as usize) {
            out.push(loc);
            id = parent;
        }
    }
}

/// Samples that share thread, comm, event, leaf location and stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SampleKey {
    pub event: u32,
    /// Thread index in the machine.
    pub thread: u32,
    /// Comm id (see [`Collector::comms`]).
    pub comm: u32,
    /// The sample's own location (perf's `al`), a loc id.
    pub leaf: u32,
    /// The callchain, a stack id.
    pub stack: u32,
    /// The sample's CPU when a sort key needs it ([`CollectOptions::by_cpu`]),
    /// else (and for samples without one) `u32::MAX`, which perf shows as -1.
    pub cpu: u32,
    /// The sample's time bucket and cgroup when sort keys need them
    /// ([`Collector::tag`]), else `u32::MAX`.
    pub tag: u32,
    /// In branch mode ([`CollectOptions::branches`]), the sampled branch
    /// the sum counts ([`Collector::branch`]), else `u32::MAX`.
    pub branch: u32,
}

/// One sampled branch (an entry of a sample's branch stack) with its ends
/// located as perf's branch view locates them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Branch {
    /// Location ids of the source and the target.
    pub from: u32,
    pub to: u32,
    /// perf_branch_entry's flag word: mispred (bit 0), predicted (1),
    /// in_tx (2), abort (3), cycles (4-19), type (20-23).
    pub flags: u64,
}

impl SampleKey {
    fn of(s: &Sample<'_>, th: &ThreadInfo, comm: u32, cpu: u32, leaf: u32, stack: u32) -> Self {
        SampleKey {
            event: s.event as u32,
            thread: th.index as u32,
            comm,
            leaf,
            stack,
            cpu,
            tag: u32::MAX,
            branch: u32::MAX,
        }
    }
}

/// What samples with one key add up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleSum {
    pub period: u64,
    pub samples: u64,
}

impl SampleSum {
    /// Counts one more sample of `period`.
    #[inline]
    pub fn add(&mut self, period: u64) {
        self.period = self.period.wrapping_add(period);
        self.samples += 1;
    }
}

/// Options of pass one.
#[derive(Debug, Clone, Copy)]
pub struct CollectOptions {
    /// perf's `--max-stack` (127 by default).
    pub max_stack: usize,
    /// Resolve callchains at all (`-g none` and no sort key needing them).
    pub callchains: bool,
    /// Look recorded return addresses up at `address - 1` (inside the call
    /// instruction, so a call that ends a function is not charged to the
    /// next one). perf 6.1 looks them up as recorded.
    pub adjust_returns: bool,
    /// Keep samples of different CPUs apart (only the cpu sort key needs
    /// it; without it the sums stay fewer).
    pub by_cpu: bool,
    /// `--max-stack` keeps the root-most entries of a recorded chain, not
    /// the leaf-most: perf walks the chain from the root when it shows
    /// callers first (its default with children).
    pub max_stack_from_root: bool,
    /// Keep samples apart by their time, rounded down to this many
    /// nanoseconds (the `time` sort key; perf's `--time-quantum`).
    pub time_quantum: Option<u64>,
    /// Keep samples apart by their cgroup (the `cgroup` sort key).
    pub by_cgroup: bool,
    /// Keep samples apart by their raw tracepoint data (the `trace` sort
    /// key; see [`Collector::trace_raws`]).
    pub by_trace: bool,
    /// Keep samples apart by their code page size (the `code_page_size`
    /// sort key).
    pub by_code_page: bool,
    /// Keep samples apart by their weight, instruction latency and
    /// transaction flags (the weight, ins_lat and transaction sort keys).
    pub by_weight: bool,
    /// perf's memory mode (`report --mem-mode`): each sample counts its
    /// weight (1 without one) and is kept apart by its data access (see
    /// [`Tag::daddr`]).
    pub mem: bool,
    /// perf's branch mode: each entry of a sample's branch stack is summed
    /// (with a period of 1) instead of the sample; samples without a
    /// branch stack are left out.
    pub branches: bool,
    /// perf's `--branch-history`: a sample's branch stack goes into its
    /// chain ahead of its callers, each sample summed apart (see
    /// [`Collector::history`]).
    pub branch_history: bool,
}

impl Default for CollectOptions {
    fn default() -> Self {
        CollectOptions {
            max_stack: 127,
            callchains: true,
            adjust_returns: true,
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
        }
    }
}

/// Threads whose last stack pass one remembers at once.
const MAX_PATHS: usize = 1024;

/// Processes whose unwinders are kept at once (each is the process's
/// mapping table; the binaries and unwind rules behind them are shared).
const MAX_UNWINDERS: usize = 256;

/// Pass one: samples in, summed (key → sum) out.
pub struct Collector {
    opts: CollectOptions,
    pub interner: Interner,
    /// The sums in the order of their first samples.
    sums: Vec<(SampleKey, SampleSum)>,
    /// Index into `sums` by a 128-bit hash: of a recorded chain with
    /// everything that decides its key (see [`Self::sum_hash`]), so a
    /// repeated sample costs one lookup; or, for a stack unwound from a
    /// copy of the user stack, of its [`SampleKey`]. Two chains resolving
    /// to one key may get two sums; their readers add them up.
    /// The running sum is kept here, next to its hash, while samples are
    /// added; it moves to `sums` when pass one ends ([`Self::finish`]).
    sum_ids: SumIndex,
    comms: Vec<String>,
    comm_ids: HashMap<String, u32>,
    binaries: Binaries,
    unwinders: HashMap<usize, (u64, Unwinder)>,
    /// Per DSO: the file its unwind tables are read from (None: none may
    /// be, see [`unwind_file`]).
    unwind_paths: Vec<Option<std::path::PathBuf>>,
    /// Where copies by build id are looked up (made when first needed).
    finder: Option<symbols::DebugFinder>,
    /// The file mappings an unwinder is synced to, and the changes it
    /// catches up with (buffers).
    mappings: Vec<Mapping>,
    changes: Vec<(u64, Option<Mapping>)>,
    /// Per thread, the last stack interned (bounded: cleared past
    /// [`MAX_PATHS`] threads).
    paths: HashMap<u32, StackPath>,
    buf: Vec<Loc>,
    /// Recorded callchains seen before: a 128-bit hash of the chain and of
    /// what decides its locations (address space and its generation, the
    /// kernel maps' generation, cpumode, ip) → (stack id, leaf loc id).
    /// Samples mostly repeat chains, so most skip the lookups.
    chains: HashMap<u128, (u32, u32)>,
    /// Per thread index: its last comm id.
    thread_comms: Vec<u32>,
    map_cache: MapCache,
    /// Samples whose user stack could not be unwound past the leaf.
    pub unwind_failures: u64,
    /// Unwinder syncs and the mappings they compared (debug figures).
    syncs: (u64, u64, u64, u64, u64),
    /// What each [`SampleKey::tag`] stands for.
    tags: Vec<Tag>,
    tag_ids: HashMap<Tag, u32>,
    /// The distinct raw data of the samples (`by_trace`): event, CPU and
    /// bytes; see [`Tag::trace`].
    trace_raws: Vec<(u32, u32, Box<[u8]>)>,
    trace_raw_ids: HashMap<(u32, Box<[u8]>), u32>,
    /// Branch mode: the distinct sampled branches, by [`SampleKey::branch`].
    branches: Vec<Branch>,
    branch_ids: HashMap<Branch, u32>,
    /// In branch-history mode, what each position of each sample's chain
    /// is, by the sample's [`SampleKey::branch`].
    history: Vec<Box<[Position]>>,
    /// Stacks interned on another thread ([`Self::start_interning`]):
    /// `interner`, `paths` and the sums of stacks met anew are there, and
    /// `sum_ids` maps recorded chains to slots, not to `sums`.
    pipe: Option<piped::Pipe>,
}

/// What a sample's [`SampleKey::tag`] stands for: its time bucket, cgroup
/// id and raw data (an index into [`Collector::trace_raws`], `u32::MAX`
/// for none), each where a sort key needs it (else 0 / `u32::MAX`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tag {
    pub time: u64,
    pub cgroup: u64,
    pub trace: u32,
    /// The sampled code's page size (`by_code_page`), 0 without one.
    pub code_page: u64,
    /// The sample's weight, instruction latency and transaction flags
    /// (`by_weight`), 0 without them.
    pub weight: u64,
    pub ins_lat: u64,
    pub transaction: u64,
    /// Memory mode ([`CollectOptions::mem`]): the sampled data address,
    /// its location (a loc id; `u32::MAX` outside memory mode), its data
    /// source word and page size.
    pub daddr: u64,
    pub dloc: u32,
    /// Memory mode: whether the map that held the data address (see
    /// `dloc`'s DSO) was shared and executable ([`DATA_SHARED`],
    /// [`DATA_EXEC`]).
    pub data_map: u8,
    pub data_src: u64,
    pub data_page: u64,
    /// Memory mode: the data address's physical address
    /// (`record --phys-data`; 0 without one).
    pub phys: u64,
}

/// [`Tag::data_map`]'s bits.
pub const DATA_SHARED: u8 = 2;
pub const DATA_EXEC: u8 = 4;

/// The last map found, for user and for kernel addresses: a chain's
/// frames mostly fall in the map of the frame before, so most lookups are
/// two compares instead of a tree search. Keyed by the address space and
/// its generation, which changes with every change of its maps.
#[derive(Debug, Default)]
struct MapCache {
    user: Option<(usize, u64, MapHit)>,
    kernel: Option<(u64, MapHit)>,
}

impl MapCache {
    fn find(&mut self, machine: &Machine, maps: usize, kernel: bool, addr: u64) -> Option<MapHit> {
        if kernel {
            let gen = machine.kernel_generation();
            match self.kernel {
                Some((g, hit)) if g == gen && (hit.start..hit.end).contains(&addr) => Some(hit),
                _ => {
                    let hit = machine.find_map(maps, true, addr)?;
                    self.kernel = Some((gen, hit));
                    Some(hit)
                }
            }
        } else {
            let gen = machine.maps_generation(maps);
            match self.user {
                Some((m, g, hit))
                    if m == maps && g == gen && (hit.start..hit.end).contains(&addr) =>
                {
                    Some(hit)
                }
                _ => {
                    let hit = machine.find_map(maps, false, addr)?;
                    self.user = Some((maps, gen, hit));
                    Some(hit)
                }
            }
        }
    }
}

/// Running sums by a 128-bit hash, numbered in the order they were made.
/// The table holds 4-byte numbers and the entries sit in a vector beside
/// it: a fifth of the bytes per bucket of a map holding the entries, and a
/// vector grows with no second table beside it (the peak of pass one's
/// memory on a recording of many distinct stacks is this index growing).
#[derive(Default)]
pub(super) struct SumIndex {
    table: hashbrown::HashTable<u32>,
    entries: Vec<([u64; 2], SampleSum)>,
}

const ZERO_SUM: SampleSum = SampleSum {
    period: 0,
    samples: 0,
};

impl SumIndex {
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The running sum of `hash`, if it has one.
    pub(super) fn get_mut(&mut self, hash: &[u64; 2]) -> Option<&mut SampleSum> {
        let entries = &self.entries;
        let &i = self
            .table
            .find(hash[0], |&i| entries[i as usize].0 == *hash)?;
        Some(&mut self.entries[i as usize].1)
    }

    /// The running sum of `hash` (zero when new) and its number, and
    /// whether it is new.
    pub(super) fn entry(&mut self, hash: [u64; 2]) -> (&mut SampleSum, u32, bool) {
        let entries = &self.entries;
        let e = self.table.entry(
            hash[0],
            |&i| entries[i as usize].0 == hash,
            |&i| entries[i as usize].0[0],
        );
        match e {
            hashbrown::hash_table::Entry::Occupied(o) => {
                let i = *o.get();
                (&mut self.entries[i as usize].1, i, false)
            }
            hashbrown::hash_table::Entry::Vacant(v) => {
                let i = self.entries.len() as u32;
                v.insert(i);
                self.entries.push((hash, ZERO_SUM));
                (&mut self.entries[i as usize].1, i, true)
            }
        }
    }

    /// The sums by their numbers.
    pub(super) fn sums(&self) -> impl Iterator<Item = (u32, SampleSum)> + '_ {
        (0u32..).zip(self.entries.iter().map(|e| e.1))
    }
}

/// Adds `period` (one sample) to the sum of `key`, whose hash is `hash`:
/// a new sum goes at the end of `sums` (its number in `sum_ids` is its
/// index there: every sum of `sums` is made here), and `sum_ids` keeps the
/// running sum.
fn add_sum(
    sums: &mut Vec<(SampleKey, SampleSum)>,
    sum_ids: &mut SumIndex,
    hash: [u64; 2],
    key: SampleKey,
    period: u64,
) {
    let (e, _, new) = sum_ids.entry(hash);
    e.add(period);
    if new {
        sums.push((key, ZERO_SUM));
    }
}

/// A sample's leaf location id and stack id, interned from its locations
/// `leaf_first` with what `paths` remembers of thread `thread`'s last stack
/// (the memory of at most [`MAX_PATHS`] threads is kept). The stack is
/// interned before the leaf, whichever thread does it, so ids come out
/// the same.
fn intern_sample(
    interner: &mut Interner,
    paths: &mut HashMap<u32, StackPath>,
    thread: u32,
    leaf_first: &[Loc],
    leaf: Loc,
) -> (u32, u32) {
    if paths.len() >= MAX_PATHS && !paths.contains_key(&thread) {
        paths.clear();
    }
    let stack = interner.stack_id_from(leaf_first, paths.entry(thread).or_default());
    (interner.loc_id(leaf), stack)
}

/// The 128-bit hash of a whole [`SampleKey`] (for sums no recorded chain
/// decides alone).
fn key_hash(key: &SampleKey) -> [u64; 2] {
    let mut bytes = [0u8; 32];
    let k = [
        key.event, key.thread, key.comm, key.leaf, key.stack, key.cpu, key.tag, key.branch,
    ];
    for (b, v) in bytes.chunks_exact_mut(4).zip(k) {
        b.copy_from_slice(&v.to_le_bytes());
    }
    split128(twox_hash::XxHash3_128::oneshot(&bytes))
}

/// A 128-bit hash as two words: as a map key it takes 24 bytes with its
/// value, not the 32 a 16-byte-aligned `u128` would.
fn split128(h: u128) -> [u64; 2] {
    [h as u64, (h >> 64) as u64]
}

fn level_of(cpumode: u16) -> (u8, bool) {
    match cpumode {
        PERF_RECORD_MISC_KERNEL => (b'k', true),
        PERF_RECORD_MISC_USER => (b'.', false),
        PERF_RECORD_MISC_GUEST_KERNEL => (b'g', true),
        PERF_RECORD_MISC_GUEST_USER => (b'u', false),
        _ => (b'H', false),
    }
}

impl Collector {
    pub fn new(opts: CollectOptions) -> Self {
        Collector {
            opts,
            interner: Interner::default(),
            sums: Vec::new(),
            sum_ids: SumIndex::default(),
            comms: Vec::new(),
            comm_ids: HashMap::default(),
            binaries: Binaries::new(),
            unwinders: HashMap::default(),
            unwind_paths: Vec::new(),
            finder: None,
            mappings: Vec::new(),
            changes: Vec::new(),
            paths: HashMap::default(),
            buf: Vec::new(),
            chains: HashMap::default(),
            thread_comms: Vec::new(),
            map_cache: MapCache::default(),
            unwind_failures: 0,
            syncs: (0, 0, 0, 0, 0),
            tags: Vec::new(),
            tag_ids: HashMap::default(),
            trace_raws: Vec::new(),
            trace_raw_ids: HashMap::default(),
            branches: Vec::new(),
            branch_ids: HashMap::default(),
            history: Vec::new(),
            pipe: None,
        }
    }

    /// Whether some sampled branch has a cycle count.
    pub fn branch_cycles(&self) -> bool {
        self.branches.iter().any(|b| (b.flags >> 4) & 0xffff != 0)
    }

    /// A sampled branch by its [`SampleKey::branch`].
    pub fn branch(&self, id: u32) -> Option<Branch> {
        if self.opts.branch_history {
            return None;
        }
        self.branches.get(id as usize).copied()
    }

    /// Whether samples are summed in branch-history mode.
    pub fn branch_history(&self) -> bool {
        self.opts.branch_history
    }

    /// In branch-history mode, what the positions of a sample's chain
    /// are, leaf first, by its [`SampleKey::branch`] (`None` otherwise).
    pub fn history(&self, id: u32) -> Option<&[Position]> {
        if !self.opts.branch_history {
            return None;
        }
        self.history.get(id as usize).map(|p| &p[..])
    }

    /// Every tag, by [`SampleKey::tag`].
    pub fn tags(&self) -> &[Tag] {
        &self.tags
    }

    /// The distinct raw data of the samples (with `by_trace`): (event, CPU
    /// of its first sample, bytes), by [`Tag::trace`].
    pub fn trace_raws(&self) -> &[(u32, u32, Box<[u8]>)] {
        &self.trace_raws
    }

    fn tag_of(&mut self, s: &Sample<'_>) -> u32 {
        self.tag_with(s, None, (u32::MAX, 0))
    }

    /// [`Self::tag_of`], with the weight `weight` in place of the
    /// sample's where given (branch mode's), and in memory mode the data
    /// address's location and its map's [`Tag::data_map`] bits.
    fn tag_with(&mut self, s: &Sample<'_>, weight: Option<u64>, data: (u32, u8)) -> u32 {
        let (dloc, data_map) = data;
        if self.opts.time_quantum.is_none()
            && !self.opts.by_cgroup
            && !self.opts.by_trace
            && !self.opts.by_code_page
            && !self.opts.by_weight
            && !self.opts.mem
        {
            return u32::MAX;
        }
        let time = match (self.opts.time_quantum, s.time) {
            (Some(q), Some(t)) if q > 0 => t - t % q,
            (Some(_), Some(t)) => t,
            _ => 0,
        };
        let cgroup = if self.opts.by_cgroup {
            s.cgroup.unwrap_or(0)
        } else {
            0
        };
        let trace = match s.raw {
            Some(raw) if self.opts.by_trace => {
                let raws = &mut self.trace_raws;
                let key = (s.event as u32, Box::<[u8]>::from(raw));
                *self
                    .trace_raw_ids
                    .entry(key)
                    .or_insert_with_key(|(event, raw)| {
                        raws.push((*event, s.cpu.unwrap_or(0), raw.clone()));
                        (raws.len() - 1) as u32
                    })
            }
            _ => u32::MAX,
        };
        let code_page = match s.code_page_size {
            Some(p) if self.opts.by_code_page => p,
            _ => 0,
        };
        // perf's weight struct: the weight in the low 32 bits, the
        // instruction latency in the next 16.
        let (weight, ins_lat, transaction) = if self.opts.by_weight {
            let w = s.weight.unwrap_or(0);
            let (weight, ins_lat) = match weight {
                Some(w) => (w, 0),
                None if s.weight_struct => (w & 0xffff_ffff, (w >> 32) & 0xffff),
                None => (w, 0),
            };
            (weight, ins_lat, s.transaction.unwrap_or(0))
        } else {
            (0, 0, 0)
        };
        let tag = Tag {
            time,
            cgroup,
            trace,
            code_page,
            weight,
            ins_lat,
            transaction,
            daddr: if self.opts.mem {
                s.addr.unwrap_or(0)
            } else {
                0
            },
            dloc,
            data_map,
            data_src: if self.opts.mem {
                s.data_src.unwrap_or(0)
            } else {
                0
            },
            data_page: if self.opts.mem {
                s.data_page_size.unwrap_or(0)
            } else {
                0
            },
            phys: if self.opts.mem {
                s.phys_addr.unwrap_or(0)
            } else {
                0
            },
        };
        let tags = &mut self.tags;
        *self.tag_ids.entry(tag).or_insert_with(|| {
            tags.push(tag);
            (tags.len() - 1) as u32
        })
    }

    /// Process `pid` exited (its leader's EXIT record, before the machine
    /// applies it): its unwinder is dropped. The binaries behind it stay,
    /// shared with every other process that maps them.
    pub fn process_exited(&mut self, machine: &Machine, pid: i32) {
        if let Some(maps) = machine.process_maps(pid) {
            self.unwinders.remove(&maps);
        }
    }

    pub fn comms(&self) -> &[String] {
        &self.comms
    }

    /// How many distinct recorded chains (with their thread, comm, event
    /// and CPU when summed) pass one saw.
    pub fn distinct_chains(&self) -> usize {
        self.chains.len().max(self.sum_ids.len())
    }

    /// How many distinct (event, thread, comm, leaf, stack) sums there are.
    pub fn distinct_samples(&self) -> usize {
        self.sums.len()
    }

    /// Ends pass one: frees what only adding samples needs (the sums'
    /// index, the chain cache, the unwinders and their binaries), so the
    /// passes after it start with that memory back.
    pub fn finish(&mut self) {
        debug_assert!(self.pipe.is_none(), "join_interning comes first");
        log::debug!(
            "pass one: {} unwinder syncs ({} in full, over {} mappings; {} from a parent's) over {} mappings, {} files opened for unwinding",
            self.syncs.0,
            self.syncs.2,
            self.syncs.3,
            self.syncs.4,
            self.syncs.1,
            self.binaries.files_opened()
        );
        let (hits, lookups) = self.binaries.rule_cache_hits();
        log::debug!("pass one: unwind rule cache: {hits} hits in {lookups} lookups");
        self.flush_sums();
        self.chains = HashMap::default();
        self.paths = HashMap::default();
        self.interner.release_index();
        self.unwinders = HashMap::default();
        self.binaries = Binaries::new();
        self.buf = Vec::new();
    }

    /// The sums in the order their first samples came, leaving the
    /// collector without them (their index is freed before the rows are
    /// built).
    pub fn take_sums_in_order(&mut self) -> Vec<(SampleKey, SampleSum)> {
        self.flush_sums();
        std::mem::take(&mut self.sums)
    }

    /// The sums of the samples added so far, in the order their first
    /// samples came, leaving the collector as it was (a live view's
    /// redraw).
    pub fn sums_so_far(&self) -> Vec<(SampleKey, SampleSum)> {
        let mut sums = self.sums.clone();
        for (i, sum) in self.sum_ids.sums() {
            if let Some(e) = sums.get_mut(i as usize) {
                e.1 = sum;
            }
        }
        sums
    }

    /// Moves the sums from their index to `sums`.
    fn flush_sums(&mut self) {
        for (i, sum) in std::mem::take(&mut self.sum_ids).sums() {
            if let Some(e) = self.sums.get_mut(i as usize) {
                e.1 = sum;
            }
        }
    }

    fn comm_id(&mut self, machine: &Machine, t: usize) -> u32 {
        // The thread's comm is mostly the one it had last time: a compare
        // instead of a hash.
        if let (Some(&id), Some(c)) = (self.thread_comms.get(t), machine.comm_of(t)) {
            if self.comms.get(id as usize).is_some_and(|k| k == c) {
                return id;
            }
        }
        let id = self.comm_id_slow(machine, t);
        if self.thread_comms.len() <= t {
            self.thread_comms.resize(t + 1, u32::MAX);
        }
        self.thread_comms[t] = id;
        id
    }

    fn comm_id_slow(&mut self, machine: &Machine, t: usize) -> u32 {
        // A thread never named shows as `:tid`, like perf.
        let unnamed;
        let c = match machine.comm_of(t) {
            Some(c) => c,
            None => {
                unnamed = format!(":{}", machine.thread_info(t).tid);
                &unnamed
            }
        };
        if let Some(&i) = self.comm_ids.get(c) {
            return i;
        }
        let i = self.comms.len() as u32;
        self.comms.push(c.to_owned());
        self.comm_ids.insert(c.to_owned(), i);
        i
    }

    /// The location of `addr` in the maps a cpumode selects.
    fn locate(
        cache: &mut MapCache,
        machine: &Machine,
        th: &ThreadInfo,
        cpumode: u16,
        addr: u64,
        origin: Origin,
    ) -> Loc {
        Self::locate_in(cache, machine, th, cpumode, addr, origin).0
    }

    /// [`Self::locate`], and the map the address fell in.
    fn locate_in(
        cache: &mut MapCache,
        machine: &Machine,
        th: &ThreadInfo,
        cpumode: u16,
        addr: u64,
        origin: Origin,
    ) -> (Loc, Option<MapHit>) {
        let (level, kernel) = level_of(cpumode);
        let hit = match cpumode {
            PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_USER => {
                cache.find(machine, th.maps, kernel, addr)
            }
            _ => None,
        };
        let loc = match hit {
            Some(m) => Loc {
                ip: addr,
                rel: m.map_ip(addr),
                dso: m.dso as u32,
                level,
                origin,
                map_size: m.end.wrapping_sub(m.start),
            },
            None => Loc {
                ip: addr,
                rel: addr,
                dso: NO_DSO,
                level,
                origin,
                map_size: 0,
            },
        };
        (loc, hit)
    }

    /// Adds one sample with its period, replaying nothing: `machine` must
    /// already hold the records before it.
    pub fn add(&mut self, machine: &mut Machine, s: &Sample<'_>, period: u64) {
        if self.opts.branches {
            self.add_branches(machine, s);
            return;
        }
        if self.opts.branch_history {
            self.add_history(machine, s, period);
            return;
        }
        if self.opts.mem {
            self.add_mem(machine, s);
            return;
        }
        let th = machine.sample_thread(s);
        let comm = self.comm_id(machine, th.index);
        let cpu = self.cpu_of(s);
        let tag = self.tag_of(s);
        let fast = self
            .chain_hash(
                machine,
                &th,
                s,
                (s.event as u32, th.index as u32, comm, cpu, tag),
            )
            .map(split128);
        if let Some(e) = fast.and_then(|h| self.sum_ids.get_mut(&h)) {
            e.add(period);
            return;
        }
        if let Some(next_slot) = self.pipe.as_ref().map(|p| p.slots) {
            // Located here, interned on the other thread; a recorded
            // chain's sum stays here, in the next slot.
            let leaf = self.locate_stack(machine, &th, s);
            if let Some(h) = fast {
                // Its number is its slot (one slot per sum made here).
                let (e, slot, _) = self.sum_ids.entry(h);
                debug_assert_eq!(slot, next_slot);
                *e = SampleSum { period, samples: 1 };
            }
            let key = SampleKey {
                tag,
                ..SampleKey::of(s, &th, comm, cpu, 0, 0)
            };
            if self.pipe_item(key, leaf, fast.is_some(), period) {
                self.send_interning(machine.dsos());
            }
            return;
        }
        let (leaf, stack) = self.resolve(machine, &th, s);
        let key = SampleKey {
            tag,
            ..SampleKey::of(s, &th, comm, cpu, leaf, stack)
        };
        let hash = fast.unwrap_or_else(|| key_hash(&key));
        add_sum(&mut self.sums, &mut self.sum_ids, hash, key, period);
    }

    /// Branch mode: each entry of the sample's branch stack counts once
    /// (perf's pseudo period of 1), keyed by the sample's thread, comm and
    /// own location and by the branch, its ends located as perf's
    /// `thread__find_cpumode_addr_location` does: in the user maps, else
    /// the kernel's (level `H` and no DSO where neither holds it).
    fn add_branches(&mut self, machine: &mut Machine, s: &Sample<'_>) {
        let Some(stack) = s.branch_stack else {
            return;
        };
        let th = machine.sample_thread(s);
        let comm = self.comm_id(machine, th.index);
        let cpu = self.cpu_of(s);
        // perf's branch entries weigh the cycles of the sample's first
        // branch (1 without them), whichever entry they are.
        let first_cycles = stack
            .entries()
            .next()
            .map_or(0, |e| (e.flags >> 4) & 0xffff);
        let tag = self.tag_with(s, Some(first_cycles.max(1)), (u32::MAX, 0));
        let leaf = self.sample_leaf(machine, &th, s);
        let leaf = self.interner.loc_id(leaf);
        for e in stack.entries() {
            let from = self.branch_end(machine, &th, e.from);
            let to = self.branch_end(machine, &th, e.to);
            let b = Branch {
                from,
                to,
                flags: e.flags,
            };
            let branches = &mut self.branches;
            let id = *self.branch_ids.entry(b).or_insert_with(|| {
                branches.push(b);
                (branches.len() - 1) as u32
            });
            let key = SampleKey {
                tag,
                branch: id,
                ..SampleKey::of(s, &th, comm, cpu, leaf, EMPTY_STACK)
            };
            self.sum_key(key, 1);
        }
    }

    /// Memory mode (perf's `iter_add_single_mem_entry`): the sample counts
    /// its weight, 1 without one, and is kept apart by its data access:
    /// the data address located as perf's `ip__resolve_data` does, in the
    /// maps of the sample's own cpumode.
    fn add_mem(&mut self, machine: &mut Machine, s: &Sample<'_>) {
        let th = machine.sample_thread(s);
        let comm = self.comm_id(machine, th.index);
        let cpu = self.cpu_of(s);
        let (data, map) = Self::locate_in(
            &mut self.map_cache,
            machine,
            &th,
            s.cpumode(),
            s.addr.unwrap_or(0),
            Origin::Exact,
        );
        // (Not marked hit: a DSO only data addresses reach, the heap or a
        // data file, gets no warning where it has no symbols.)
        let dloc = self.interner.loc_id(data);
        // perf's sample weight: a weight struct's low 32 bits.
        let weight = match s.weight {
            Some(w) if s.weight_struct => w & 0xffff_ffff,
            Some(w) => w,
            None => 0,
        };
        let data_map = map.map_or(0, |m| {
            let mut bits = 0;
            if m.shared {
                bits |= DATA_SHARED;
            }
            if m.exec {
                bits |= DATA_EXEC;
            }
            bits
        });
        let tag = self.tag_with(s, None, (dloc, data_map));
        let (leaf, stack) = self.resolve(machine, &th, s);
        let key = SampleKey {
            tag,
            ..SampleKey::of(s, &th, comm, cpu, leaf, stack)
        };
        self.sum_key(key, weight.max(1));
    }

    /// Sums `period` into the sum of `key`.
    fn sum_key(&mut self, key: SampleKey, period: u64) {
        add_sum(
            &mut self.sums,
            &mut self.sum_ids,
            key_hash(&key),
            key,
            period,
        );
    }

    /// The interned location of a branch end (see [`Self::add_branches`]).
    fn branch_end(&mut self, machine: &Machine, th: &ThreadInfo, addr: u64) -> u32 {
        let loc = self.branch_end_loc(machine, th, addr);
        self.interner.loc_id(loc)
    }

    /// Where a branch end is, located as perf's
    /// `thread__find_cpumode_addr_location` does (see [`Self::branch_end`]).
    fn branch_end_loc(&mut self, machine: &Machine, th: &ThreadInfo, addr: u64) -> Loc {
        let user = Self::locate(
            &mut self.map_cache,
            machine,
            th,
            PERF_RECORD_MISC_USER,
            addr,
            Origin::Exact,
        );
        if user.dso != NO_DSO {
            user
        } else {
            let kernel = Self::locate(
                &mut self.map_cache,
                machine,
                th,
                PERF_RECORD_MISC_KERNEL,
                addr,
                Origin::Exact,
            );
            if kernel.dso != NO_DSO {
                kernel
            } else {
                Loc {
                    level: b'H',
                    ..kernel
                }
            }
        }
    }

    fn cpu_of(&self, s: &Sample<'_>) -> u32 {
        if self.opts.by_cpu {
            s.cpu.unwrap_or(u32::MAX)
        } else {
            u32::MAX
        }
    }

    /// One sample's thread, comm, leaf location and interned stack, without
    /// summing it (for printers that show every sample, like `script`).
    /// `machine` must already hold the records before it.
    pub fn key(&mut self, machine: &mut Machine, s: &Sample<'_>) -> SampleKey {
        debug_assert!(
            self.pipe.is_none(),
            "keys are made where stacks are interned"
        );
        let th = machine.sample_thread(s);
        let comm = self.comm_id(machine, th.index);
        let cpu = self.cpu_of(s);
        let tag = self.tag_of(s);
        let chain_hash = self.chain_hash(machine, &th, s, ());
        let (leaf, stack) = match chain_hash.and_then(|h| self.chains.get(&h)) {
            Some(&(stack, leaf)) => (leaf, stack),
            None => {
                let (leaf, stack) = self.resolve(machine, &th, s);
                if let Some(h) = chain_hash {
                    self.chains.insert(h, (stack, leaf));
                }
                (leaf, stack)
            }
        };
        SampleKey {
            tag,
            ..SampleKey::of(s, &th, comm, cpu, leaf, stack)
        }
    }

    /// The interned location of `addr`, an address a sample carries
    /// besides its own (a data address, a branch's ends), looked up as
    /// perf's `thread__find_map_fb` does: in the maps of the sample's
    /// cpumode, else in those the address itself says (at or above 2^63
    /// kernel, else user). Also the address's offset into its map as perf
    /// computes it before the DSO is loaded (`addr - start + pgoff`; the
    /// kernel's map has no pgoff), or the address where no map holds it.
    pub fn address_loc(&mut self, machine: &mut Machine, s: &Sample<'_>, addr: u64) -> (u32, u64) {
        debug_assert!(self.pipe.is_none(), "locations are interned apart");
        let th = machine.sample_thread(s);
        let mode = s.cpumode();
        let by_addr = if addr >= 1 << 63 {
            PERF_RECORD_MISC_KERNEL
        } else {
            PERF_RECORD_MISC_USER
        };
        let switchable = matches!(mode, PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_USER);
        let mut found = None;
        for m in [mode, by_addr] {
            if found.is_some() || (m != mode && (!switchable || by_addr == mode)) {
                continue;
            }
            let (_, kernel) = level_of(m);
            if matches!(m, PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_USER) {
                if let Some(hit) = self.map_cache.find(machine, th.maps, kernel, addr) {
                    found = Some((m, hit, kernel));
                }
            }
        }
        // Not marked as hit: perf marks only the DSOs samples' code fell in.
        let (loc, offset) = match found {
            Some((m, hit, kernel)) => {
                let loc = Self::locate(&mut self.map_cache, machine, &th, m, addr, Origin::Exact);
                let pgoff = if kernel { 0 } else { hit.pgoff };
                (loc, addr.wrapping_sub(hit.start).wrapping_add(pgoff))
            }
            None => (
                Self::locate(&mut self.map_cache, machine, &th, mode, addr, Origin::Exact),
                addr,
            ),
        };
        (self.interner.loc_id(loc), offset)
    }

    /// A sample's leaf location id and stack id, looked up and interned.
    fn resolve(&mut self, machine: &mut Machine, th: &ThreadInfo, s: &Sample<'_>) -> (u32, u32) {
        let leaf = self.locate_stack(machine, th, s);
        intern_sample(
            &mut self.interner,
            &mut self.paths,
            th.index as u32,
            &self.buf,
            leaf,
        )
    }

    /// A sample's own location, its DSO marked as hit.
    fn sample_leaf(&mut self, machine: &mut Machine, th: &ThreadInfo, s: &Sample<'_>) -> Loc {
        let leaf = Self::locate(
            &mut self.map_cache,
            machine,
            th,
            s.cpumode(),
            s.ip.unwrap_or(0),
            Origin::Exact,
        );
        if leaf.dso != NO_DSO {
            machine.mark_hit(leaf.dso as usize);
        }
        leaf
    }

    /// A sample's own location (its DSO marked as hit), and its stack's
    /// locations in `self.buf`, leaf first.
    fn locate_stack(&mut self, machine: &mut Machine, th: &ThreadInfo, s: &Sample<'_>) -> Loc {
        let leaf = self.sample_leaf(machine, th, s);
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        if self.opts.callchains {
            self.chain(machine, th, s, &mut buf);
        }
        self.buf = buf;
        leaf
    }

    /// The key of a sample's recorded chain in [`Self::chains`], if the
    /// chain is all there is to its stack (no user stack to unwind).
    /// `extra` goes into the hash too (what else a key holds, for sums).
    fn chain_hash(
        &self,
        machine: &Machine,
        th: &ThreadInfo,
        s: &Sample<'_>,
        extra: impl std::hash::Hash,
    ) -> Option<u128> {
        let unwinds = matches!(
            (&s.regs_user, &s.stack_user),
            (Some(r), Some(st)) if r.mask != 0 && !st.valid().is_empty()
        );
        if unwinds {
            return None;
        }
        let chain = match (&s.callchain, self.opts.callchains) {
            (Some(c), true) => c.as_bytes(),
            _ => &[],
        };
        use std::hash::{Hash, Hasher};
        let mut seed = rustc_hash::FxHasher::default();
        (
            th.maps,
            machine.maps_generation(th.maps),
            machine.kernel_generation(),
            s.cpumode(),
            s.ip,
            extra,
        )
            .hash(&mut seed);
        Some(twox_hash::XxHash3_128::oneshot_with_seed(
            seed.finish(),
            chain,
        ))
    }

    /// perf's callchain for a sample, leaf first: the recorded chain (with
    /// its context markers), then the DWARF-unwound user stack if the
    /// sample carries registers and stack.
    fn chain(&mut self, machine: &Machine, th: &ThreadInfo, s: &Sample<'_>, out: &mut Vec<Loc>) {
        // From the root: the whole recorded chain, then its leaf end cut
        // (an unwound user part has a budget of its own, below).
        let from_root = self.opts.max_stack_from_root;
        let max = self.opts.max_stack;
        let recorded_max = if from_root { usize::MAX } else { max };
        if let Some(chain) = &s.callchain {
            let mut cpumode = PERF_RECORD_MISC_KERNEL;
            let mut first = true;
            for ip in chain.iter() {
                if out.len() >= recorded_max {
                    break;
                }
                if ip >= PERF_CONTEXT_MAX {
                    cpumode = match ip {
                        PERF_CONTEXT_HV => PERF_RECORD_MISC_HYPERVISOR,
                        PERF_CONTEXT_KERNEL => PERF_RECORD_MISC_KERNEL,
                        PERF_CONTEXT_USER => PERF_RECORD_MISC_USER,
                        PERF_CONTEXT_GUEST_KERNEL => PERF_RECORD_MISC_GUEST_KERNEL,
                        PERF_CONTEXT_GUEST_USER => PERF_RECORD_MISC_GUEST_USER,
                        // perf drops the whole chain on an unknown marker.
                        _ => {
                            out.clear();
                            return;
                        }
                    };
                    // Each context's chain starts at the address that
                    // context was interrupted at (its registers' ip), not
                    // at a return address.
                    first = true;
                    continue;
                }
                let origin = if first || !self.opts.adjust_returns {
                    Origin::Exact
                } else {
                    Origin::Return
                };
                first = false;
                out.push(Self::locate(
                    &mut self.map_cache,
                    machine,
                    th,
                    cpumode,
                    ip,
                    origin,
                ));
            }
        }
        if from_root && out.len() > self.opts.max_stack {
            out.drain(..out.len() - self.opts.max_stack);
        }
        let (Some(regs), Some(stack)) = (&s.regs_user, &s.stack_user) else {
            return;
        };
        // The unwound user part has a budget of its own, as perf's
        // (`thread__resolve_callchain` gives the recorded chain and the
        // unwinder `max_stack` each).
        if regs.mask == 0 || stack.valid().is_empty() || max == 0 {
            return;
        }
        let Some(uregs) = UserRegs::from_perf_x86_64(|r| regs.get(r)) else {
            return;
        };
        let gen = machine.maps_generation(th.maps);
        if self.unwinders.len() >= MAX_UNWINDERS && !self.unwinders.contains_key(&th.maps) {
            // Bounded memory on a whole machine's recording: processes that
            // come back get their unwinder again from the shared binaries.
            self.unwinders.clear();
        }
        let synced = self.unwinders.get(&th.maps).map(|(g, _)| *g);
        if synced != Some(gen)
            && machine
                .maps_changed_since(th.maps, synced.unwrap_or(u64::MAX))
                .is_none()
        {
            // Syncing would take every mapping anew. A fork's copy of its
            // parent's maps starts instead from the parent's unwinder, if
            // that is synced to the maps copied, and catches up from there.
            let parent = machine
                .maps_copied_from(th.maps)
                .and_then(|(pm, pgen, own)| {
                    let (g, pu) = self.unwinders.get(&pm)?;
                    (*g == pgen).then(|| (own, pu.clone()))
                })
                .filter(|&(own, _)| machine.maps_changed_since(th.maps, own).is_some());
            if let Some(p) = parent {
                self.syncs.4 += 1;
                self.unwinders.insert(th.maps, p);
            }
        }
        let (synced, u) = self
            .unwinders
            .entry(th.maps)
            .or_insert_with(|| (u64::MAX, Unwinder::new()));
        if *synced != gen {
            let dsos = machine.dsos();
            let mapping = |m: &MapInfo<'_>| Mapping {
                start: m.start,
                end: m.end,
                pgoff: m.pgoff,
                file: m.dso as u64,
            };
            // Where each DSO's file is read (under --symfs when set; a
            // copy from the build-id cache where the recorded build id
            // differs from the file's).
            let paths = &mut self.unwind_paths;
            while paths.len() < dsos.len() {
                let d = &dsos[paths.len()];
                paths.push(match &d.jit {
                    Some(code) => jit_unwind_image(&mut self.binaries, d, code),
                    None => unwind_file(d, &mut self.finder),
                });
            }
            let paths = &self.unwind_paths;
            let path = |m: &Mapping| {
                paths[m.file as usize]
                    .as_deref()
                    .unwrap_or(std::path::Path::new(""))
            };
            let failed = |e| log::debug!("no unwind info: {e}");
            let is_file = |m: &MapInfo<'_>| {
                m.filename.starts_with('/') && paths.get(m.dso).is_some_and(Option::is_some)
            };
            let changes = &mut self.changes;
            changes.clear();
            match machine.maps_changed_since(th.maps, *synced) {
                Some(changed) => {
                    changes
                        .extend(changed.map(|(start, now)| {
                            (start, now.filter(is_file).as_ref().map(mapping))
                        }));
                    self.syncs.1 += changes.len() as u64;
                    u.apply_changes(&mut self.binaries, changes, path, failed);
                }
                None => {
                    let wanted = &mut self.mappings;
                    wanted.clear();
                    wanted.extend(
                        machine
                            .iter_maps(th.maps)
                            .filter(is_file)
                            .map(|m| mapping(&m)),
                    );
                    self.syncs.1 += wanted.len() as u64;
                    self.syncs.2 += 1;
                    self.syncs.3 += wanted.len() as u64;
                    u.sync(&mut self.binaries, wanted, path, failed);
                }
            }
            self.syncs.0 += 1;
            *synced = gen;
        }
        let frames = u.unwind(&mut self.binaries, &uregs, stack.valid(), uregs.sp, max);
        if frames.len() <= 1 {
            self.unwind_failures += 1;
        }
        for (i, &a) in frames.iter().enumerate() {
            let (ip, origin) = if i == 0 {
                (a, Origin::UnwoundLeaf)
            } else {
                (a.wrapping_sub(1), Origin::Unwound)
            };
            let loc = Self::locate(
                &mut self.map_cache,
                machine,
                th,
                PERF_RECORD_MISC_USER,
                ip,
                origin,
            );
            // Where a frame has no CFI the unwinder guesses (the return
            // address at the stack pointer, or the frame-pointer chain);
            // a guess that lands in no mapping at all is stack garbage,
            // and so is everything above it: the stack ends there.
            if i > 0 && loc.dso == NO_DSO {
                break;
            }
            out.push(loc);
        }
    }
}

/// The unwind tables of a jitdump's function (see [`crate::jit`]), where
/// its runtime wrote them: placed as perf inject places them in the ELF
/// file it writes (the code, then `.eh_frame` 8-aligned after it, then
/// `.eh_frame_hdr`), under a key that names no file. None without tables:
/// its frames are then unwound by frame pointer.
fn jit_unwind_image(
    bins: &mut unwind::Binaries,
    d: &crate::machine::Dso,
    code: &crate::jit::JitCode,
) -> Option<std::path::PathBuf> {
    let u = code.unwind.as_ref().filter(|u| !u.eh_frame.is_empty())?;
    let key = std::path::PathBuf::from(format!("[jit unwinding] {}", d.name));
    let start = crate::jit::TEXT_OFFSET;
    let eh = start.saturating_add(code.size.next_multiple_of(8));
    bins.add_memory_image(
        &key,
        unwind::MemoryImage {
            text: start..start.saturating_add(code.size),
            eh_frame_svma: eh,
            eh_frame: u.eh_frame.clone(),
            eh_frame_hdr_svma: eh.saturating_add(u.eh_frame.len() as u64),
            eh_frame_hdr: u.eh_frame_hdr.clone(),
        },
    );
    Some(key)
}

/// The file a DSO's unwind tables are read from: its path (under --symfs),
/// unless the recording gives a build id the file there does not have;
/// then perf's build-id cache's copy (or a debuginfod server's), or none (its frames are unwound as
/// code without CFI: a different binary's tables would unwind wrongly).
fn unwind_file(
    d: &crate::machine::Dso,
    finder: &mut Option<symbols::DebugFinder>,
) -> Option<std::path::PathBuf> {
    let path = symbols::on_disk(&d.name).into_owned();
    let Some(want) = d.build_id.as_deref().filter(|_| d.name.starts_with('/')) else {
        return Some(path);
    };
    let have = symbols::read_build_id(&path);
    if let Ok(have) = &have {
        if have.as_deref().is_none_or(|h| h == want) {
            return Some(path);
        }
    }
    let finder = finder.get_or_insert_with(symbols::DebugFinder::default);
    if let Some(cached) = finder.binary_by_build_id(want) {
        log::debug!(
            "{}: unwinding with {} (the recorded build id)",
            d.name,
            cached.display()
        );
        return Some(cached);
    }
    match have {
        Ok(_) => {
            log::debug!(
                "{}: its build id differs from the recording's, and no copy with the \
                 recorded one is in the build-id cache: not used for unwinding",
                path.display()
            );
            None
        }
        Err(_) => Some(path), // gone: the unwinder says so when it tries
    }
}
