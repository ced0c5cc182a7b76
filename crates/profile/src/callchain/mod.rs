//! perf's call-graph tree (`util/callchain.c`): the `-g` option, the radix
//! tree of chains one histogram entry collects, and its sorting and
//! thresholds.
//!
//! What it does: [`CallGraphParams::parse`] reads `perf report -g`'s
//! argument; [`CallTree::add`] merges chains of frame ids into perf's radix
//! tree (nodes holding runs of frames, with `hit`, `children_hit` and
//! sample counts); [`CallTree::sort`] applies perf's per-mode sort and
//! threshold (`callchain_param.sort`); [`children_chains`] says which chain
//! each entry of a sample gets in `--children` mode. What it does not:
//! decide which frames are equal (the caller interns frames so that equal
//! ids are the frames perf would merge for the chosen [`ChainKey`]), know
//! names, or print (see `render::callgraph`).
//!
//! ```
//! use profile::callchain::{CallGraphParams, CallTree, ChainOrder};
//! let params = CallGraphParams::parse("graph,0.5,callee").unwrap();
//! let mut tree = CallTree::new();
//! // Chains are given in the order perf inserts them: leaf first for callee.
//! tree.add(&[3, 2, 1], 100); // c <- a <- main
//! tree.add(&[3, 4, 1], 50); //  c <- b <- main
//! assert_eq!(params.resolved_order(false), ChainOrder::Callee);
//! let sorted = tree.sort(&params, 150, &|a, b| a.cmp(&b));
//! let top = sorted.children(CallTree::ROOT);
//! assert_eq!(top.len(), 1);
//! assert_eq!(tree.node(top[0]).frames(), &[3]);
//! assert_eq!(tree.node(top[0]).cumul_hits(), 150);
//! ```

use std::cmp::Ordering;

mod cnum;
use cnum::c_double_to_u64;
mod params;
mod trie;
pub use trie::TrieBuilder;

pub use params::{
    CallGraphParams, ChainKey, ChainOrder, ChainValue, PrintType, Prune, REPORT_DEFAULT_OPT,
};

/// A frame as the caller interned it; compared for equality only, except
/// where a caller-given order breaks ties (see [`CallTree::sort`]).
pub type FrameId = u32;

/// Index of a node in a [`CallTree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeId(u32);

/// A node of the radix tree (`struct callchain_node`): a run of frames
/// shared by every chain through it.
#[derive(Debug, Clone)]
pub struct Node {
    frames: Vec<FrameId>,
    parent: Option<NodeId>,
    /// Children with their first frames (kept here so a lookup scans one
    /// array), unordered; perf's order is recovered at sort time from the
    /// caller's frame order.
    children: Vec<(FrameId, NodeId)>,
    hit: u64,
    children_hit: u64,
    count: u64,
    children_count: u64,
}

impl Node {
    /// The frames of this node, in chain order (`callchain_node.val`).
    pub fn frames(&self) -> &[FrameId] {
        &self.frames
    }
    /// The parent; `None` for the root.
    pub fn parent(&self) -> Option<NodeId> {
        self.parent
    }
    /// Period of the chains ending exactly here.
    pub fn hit(&self) -> u64 {
        self.hit
    }
    /// Period of the chains going on below this node.
    pub fn children_hit(&self) -> u64 {
        self.children_hit
    }
    /// Samples ending exactly here.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Samples going on below this node.
    pub fn children_count(&self) -> u64 {
        self.children_count
    }
    /// `callchain_cumul_hits`: `hit + children_hit`.
    pub fn cumul_hits(&self) -> u64 {
        self.hit.saturating_add(self.children_hit)
    }
    /// `callchain_cumul_counts`: `count + children_count`.
    pub fn cumul_count(&self) -> u64 {
        self.count.saturating_add(self.children_count)
    }
}

/// perf's callchain radix tree for one histogram entry
/// (`struct callchain_root`).
#[derive(Debug, Clone)]
pub struct CallTree {
    nodes: Vec<Node>,
}

impl Default for CallTree {
    fn default() -> Self {
        Self::new()
    }
}

impl CallTree {
    /// The root: it has no frames, only children.
    pub const ROOT: NodeId = NodeId(0);

    pub fn new() -> Self {
        CallTree {
            nodes: vec![Node {
                frames: Vec::new(),
                parent: None,
                children: Vec::new(),
                hit: 0,
                children_hit: 0,
                count: 0,
                children_count: 0,
            }],
        }
    }

    /// A node by id. Ids come from this tree, so indexing cannot fail.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.0 as usize]
    }

    /// Number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    fn push(&mut self, node: Node) -> NodeId {
        // More than 4 billion nodes would need hundreds of GB first.
        let id = NodeId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        self.nodes.push(node);
        id
    }

    /// Sets what the root's children weigh together (for trees built node
    /// by node with [`CallTree::push_child`]).
    pub fn set_root_children(&mut self, period: u64, count: u64) {
        let r = self.node_mut(Self::ROOT);
        r.children_hit = period;
        r.children_count = count;
    }

    /// Adds a node below `parent` with its frames, the (period, samples)
    /// of chains ending at it and of those going on below it. The caller
    /// keeps the tree a radix tree and the sums consistent.
    pub fn push_child(
        &mut self,
        parent: NodeId,
        frames: Vec<FrameId>,
        hit: (u64, u64),
        below: (u64, u64),
    ) -> NodeId {
        let first = frames.first().copied().unwrap_or(0);
        let id = self.push(Node {
            frames,
            parent: Some(parent),
            children: Vec::new(),
            hit: hit.0,
            children_hit: below.0,
            count: hit.1,
            children_count: below.1,
        });
        self.node_mut(parent).children.push((first, id));
        id
    }

    /// Replaces every frame, walking each path from the root: `f` gets
    /// the state the frame before it left (`start` at the top) and the
    /// frame, and gives the new frame and the state for the next one (the
    /// tree's shape and weights stay).
    pub fn relabel<S: Copy>(&mut self, start: S, mut f: impl FnMut(S, FrameId) -> (FrameId, S)) {
        let mut work = vec![(Self::ROOT, start)];
        while let Some((id, mut state)) = work.pop() {
            let node = &mut self.nodes[id.0 as usize];
            for fr in &mut node.frames {
                let (new, next) = f(state, *fr);
                *fr = new;
                state = next;
            }
            let children: Vec<NodeId> = node.children.iter().map(|&(_, c)| c).collect();
            for c in children {
                work.push((c, state));
            }
        }
        for i in 0..self.nodes.len() {
            for k in 0..self.nodes[i].children.len() {
                let c = self.nodes[i].children[k].1;
                let first = self.nodes[c.0 as usize]
                    .frames
                    .first()
                    .copied()
                    .unwrap_or(0);
                self.nodes[i].children[k].0 = first;
            }
        }
    }

    /// Adds one sample's chain with its period (`callchain_append`). The
    /// chain is in perf's insertion order for the chosen order: sampled
    /// frame first for callee order, outermost caller first for caller
    /// order. An empty chain adds nothing, as in perf. Sums saturate
    /// instead of wrapping at 2^64.
    pub fn add(&mut self, chain: &[FrameId], period: u64) {
        self.add_samples(chain, period, 1);
    }

    /// Adds `count` samples with one chain and their summed period at once,
    /// as `count` calls of [`CallTree::add`] would (what callers that sum
    /// identical samples first use).
    pub fn add_samples(&mut self, chain: &[FrameId], period: u64, count: u64) {
        if chain.is_empty() {
            return;
        }
        let mut parent = Self::ROOT;
        let mut pos = 0;
        // Each turn is perf's append_chain_children(parent, chain[pos..]).
        loop {
            {
                let p = self.node_mut(parent);
                p.children_hit = p.children_hit.saturating_add(period);
                p.children_count = p.children_count.saturating_add(count);
            }
            let first = chain[pos];
            let found = self
                .node(parent)
                .children
                .iter()
                .find(|&&(f, _)| f == first)
                .map(|&(_, c)| c);
            let Some(child) = found else {
                let id = self.push(Node {
                    frames: chain[pos..].to_vec(),
                    parent: Some(parent),
                    children: Vec::new(),
                    hit: period,
                    children_hit: 0,
                    count,
                    children_count: 0,
                });
                self.node_mut(parent).children.push((first, id));
                return;
            };
            // append_chain: how far the chain follows this node's frames.
            let frames = &self.node(child).frames;
            let matched = frames
                .iter()
                .zip(&chain[pos..])
                .take_while(|(a, b)| a == b)
                .count();
            pos += matched;
            let exhausted = pos == chain.len();
            if matched < frames.len() {
                self.split(child, matched, &chain[pos..], period, count);
                return;
            }
            if exhausted {
                let c = self.node_mut(child);
                c.hit = c.hit.saturating_add(period);
                c.count = c.count.saturating_add(count);
                return;
            }
            parent = child;
        }
    }

    /// perf's split_add_child: `node` keeps its first `at` frames, a new
    /// child takes the rest with the node's hits and children, and the
    /// remaining chain (if any) becomes a second child.
    fn split(&mut self, node: NodeId, at: usize, rest: &[FrameId], period: u64, count: u64) {
        let n = self.node_mut(node);
        let tail_frames = n.frames.split_off(at);
        let tail = Node {
            frames: tail_frames,
            parent: Some(node),
            children: std::mem::take(&mut n.children),
            hit: n.hit,
            children_hit: n.children_hit,
            count: n.count,
            children_count: n.children_count,
        };
        let (tail_hits, tail_count) = (tail.cumul_hits(), tail.cumul_count());
        let moved: Vec<NodeId> = tail.children.iter().map(|&(_, c)| c).collect();
        let tail_first = tail.frames.first().copied().unwrap_or(0);
        let tail_id = self.push(tail);
        for c in moved {
            self.node_mut(c).parent = Some(tail_id);
        }
        let n = self.node_mut(node);
        n.children.push((tail_first, tail_id));
        n.children_hit = tail_hits;
        n.children_count = tail_count;
        if rest.is_empty() {
            n.hit = period;
            n.count = count;
        } else {
            n.hit = 0;
            n.count = 0;
            n.children_hit = n.children_hit.saturating_add(period);
            n.children_count = n.children_count.saturating_add(count);
            let id = self.push(Node {
                frames: rest.to_vec(),
                parent: Some(node),
                children: Vec::new(),
                hit: period,
                children_hit: 0,
                count,
                children_count: 0,
            });
            self.node_mut(node).children.push((rest[0], id));
        }
    }

    /// Sorts and filters the tree as `callchain_param.sort` does for the
    /// params' print type.
    ///
    /// `callchain_total` is what perf's graph, flat and folded thresholds
    /// are a percentage of: the event's total period of samples with call
    /// chains (`hists->callchain_period`, normally the total period).
    /// Fractal mode ignores it and cuts each node's children at
    /// `ceil(children_hit * threshold / 100)`.
    ///
    /// `frame_order` reproduces perf's order among siblings of equal
    /// value: perf keeps siblings in a tree ordered by their first frame
    /// (for `function`, by DSO and then symbol start; for `address`, by
    /// DSO and address) and visits them from the greatest down. Give a
    /// comparison consistent with that to match perf's ties; any total
    /// order (e.g. `|a, b| a.cmp(&b)`) gives a deterministic result.
    pub fn sort(
        &self,
        params: &CallGraphParams,
        callchain_total: u64,
        frame_order: &dyn Fn(FrameId, FrameId) -> Ordering,
    ) -> SortedCallTree {
        let mut sorted = SortedCallTree {
            print_type: params.print_type,
            children: vec![Vec::new(); self.nodes.len()],
            chains: Vec::new(),
        };
        let min_hit = params.min_hit(callchain_total);
        let fractal_pct = params.threshold / 100.0;
        // Siblings in perf's rb_root_in order: greatest first frame first.
        let in_order = |id: NodeId| -> Vec<NodeId> {
            let mut c = self.node(id).children.clone();
            c.sort_by(|&(fa, _), &(fb, _)| frame_order(fb, fa));
            c.into_iter().map(|(_, n)| n).collect::<Vec<NodeId>>()
        };
        match params.print_type {
            PrintType::Graph | PrintType::Fractal => {
                // Every node is visited once; the order does not matter
                // because each node's list only depends on its children.
                for (i, node) in self.nodes.iter().enumerate() {
                    if node.children.is_empty() {
                        continue;
                    }
                    let min = if params.print_type == PrintType::Fractal {
                        c_double_to_u64((node.children_hit as f64 * fractal_pct).ceil())
                    } else {
                        min_hit
                    };
                    let mut kept: Vec<NodeId> = in_order(NodeId(i as u32))
                        .into_iter()
                        .filter(|&c| self.node(c).cumul_hits() >= min)
                        .collect();
                    // perf's rb_insert_callchain puts equal values after
                    // those already there: a stable descending sort.
                    kept.sort_by_key(|&c| std::cmp::Reverse(self.node(c).cumul_hits()));
                    sorted.children[i] = kept;
                }
            }
            PrintType::Flat | PrintType::Folded => {
                // perf's __sort_chain_flat: children (in sibling order)
                // before their parent, keeping nodes with their own hits.
                let mut post = Vec::new();
                let mut stack = vec![(Self::ROOT, false)];
                while let Some((id, expanded)) = stack.pop() {
                    if expanded {
                        post.push(id);
                        continue;
                    }
                    stack.push((id, true));
                    for c in in_order(id).into_iter().rev() {
                        stack.push((c, false));
                    }
                }
                let mut chains: Vec<NodeId> = post
                    .into_iter()
                    .filter(|&id| {
                        let h = self.node(id).hit;
                        h != 0 && h >= min_hit
                    })
                    .collect();
                chains.sort_by_key(|&c| std::cmp::Reverse(self.node(c).hit));
                sorted.chains = chains;
            }
            PrintType::None => {}
        }
        sorted
    }
}

/// A [`CallTree`] sorted for printing (perf's `sorted_chain`).
#[derive(Debug, Clone)]
pub struct SortedCallTree {
    print_type: PrintType,
    children: Vec<Vec<NodeId>>,
    chains: Vec<NodeId>,
}

impl SortedCallTree {
    /// The print type it was sorted for.
    pub fn print_type(&self) -> PrintType {
        self.print_type
    }
    /// Graph and fractal: a node's children above the threshold, in
    /// printing order.
    pub fn children(&self, id: NodeId) -> &[NodeId] {
        self.children.get(id.0 as usize).map_or(&[], Vec::as_slice)
    }
    /// Flat and folded: the nodes that end chains, in printing order; each
    /// chain is the frames from the root down to that node.
    pub fn chains(&self) -> &[NodeId] {
        &self.chains
    }
}

/// The entries a sample feeds in `--children` mode besides its own (self)
/// entry, and the chain each one gets (perf's
/// `iter_add_next_cumulative_entry`).
///
/// `chain` is the sample's chain in insertion order for the order in
/// effect (as given to [`CallTree::add`]). The self entry, keyed by the
/// sampled frame, gets the whole chain. Then perf walks the chain in that
/// order and gives each frame's entry the chain from that frame to the
/// end: with callee order (`c, a, main`) `a` gets `a, main` and `main`
/// gets `main`; with caller order (`main, a, c`) `main` gets
/// `main, a, c` and `a` gets `a, c`. A frame whose entry key equals the
/// self entry's or an earlier frame's (recursion) is skipped, so an entry
/// counts a sample once and keeps the first occurrence in walking order.
///
/// `entry_key` maps a frame to its histogram entry's key (with `--sort
/// sym`, the frame itself); `self_key` is the self entry's key.
pub fn children_chains<K: PartialEq>(
    chain: &[FrameId],
    self_key: K,
    mut entry_key: impl FnMut(FrameId) -> K,
) -> Vec<(FrameId, &[FrameId])> {
    let mut seen = vec![self_key];
    let mut out = Vec::new();
    for (i, &frame) in chain.iter().enumerate() {
        let key = entry_key(frame);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        out.push((frame, &chain[i..]));
    }
    out
}

#[cfg(test)]
mod tests {

    /// A tree as a canonical set of (path of frames, hit, count, children
    /// hit, children count) per node, independent of node ids and order.
    fn canonical(t: &CallTree) -> Vec<(Vec<FrameId>, u64, u64, u64, u64)> {
        let mut out = Vec::new();
        let mut work = vec![(CallTree::ROOT, Vec::new())];
        while let Some((id, path)) = work.pop() {
            let n = t.node(id);
            let mut p: Vec<FrameId> = path;
            p.extend_from_slice(n.frames());
            out.push((
                p.clone(),
                n.hit(),
                n.count(),
                n.children_hit(),
                n.children_count(),
            ));
            for &(_, c) in &n.children {
                work.push((c, p.clone()));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn trie_builder_makes_the_tree_add_samples_makes() {
        // A small xorshift generator: chains over few frames so they share
        // prefixes, branch, end inside each other and repeat.
        let mut x: u64 = 0x9e3779b97f4a7c15;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for round in 0..200 {
            let mut a = CallTree::new();
            let mut b = TrieBuilder::new();
            for _ in 0..(1 + round % 40) {
                let len = next(7) as usize;
                let chain: Vec<FrameId> = (0..len).map(|_| next(4) as FrameId).collect();
                let period = next(1000);
                let count = 1 + next(3);
                a.add_samples(&chain, period, count);
                b.add_chain(&chain, period, count);
            }
            assert_eq!(
                canonical(&a),
                canonical(&b.into_call_tree()),
                "round {round}"
            );
        }
    }
    use super::*;

    fn by_id(a: FrameId, b: FrameId) -> Ordering {
        a.cmp(&b)
    }

    #[test]
    fn parse_defaults_and_abbreviations() {
        let p = CallGraphParams::parse(REPORT_DEFAULT_OPT).unwrap();
        assert_eq!(p.print_type, PrintType::Graph);
        assert_eq!(p.threshold, 0.5);
        assert_eq!(p.order, Some(ChainOrder::Caller));
        assert_eq!(CallGraphParams::default().order, None);
        assert_eq!(
            CallGraphParams::parse("").unwrap(),
            CallGraphParams::default()
        );
        let p = CallGraphParams::parse("f").unwrap();
        assert_eq!(p.print_type, PrintType::Flat);
        let p = CallGraphParams::parse("fr,calle,co").unwrap();
        assert_eq!(p.print_type, PrintType::Fractal);
        // "calle" is a prefix of "caller", which perf tries first.
        assert_eq!(p.order, Some(ChainOrder::Caller));
        assert_eq!(p.value, ChainValue::Count);
        let p = CallGraphParams::parse("callee,per,fo").unwrap();
        assert_eq!(p.order, Some(ChainOrder::Callee));
        assert_eq!(p.value, ChainValue::Percent);
        assert_eq!(p.print_type, PrintType::Folded);
        assert_eq!(
            CallGraphParams::parse("peri").unwrap().value,
            ChainValue::Period
        );
        assert_eq!(
            CallGraphParams::parse("n").unwrap().print_type,
            PrintType::None
        );
        assert!(!CallGraphParams::parse("graph,none,bogus")
            .unwrap()
            .enabled());
        assert_eq!(CallGraphParams::parse("a").unwrap().key, ChainKey::Address);
        assert_eq!(CallGraphParams::parse("s").unwrap().key, ChainKey::Srcline);
        assert!(CallGraphParams::parse("b").unwrap().branch);
    }

    #[test]
    fn display_reads_back() {
        for s in [
            "f,2,3,callee,co",
            "fr",
            "fo,a,b,peri",
            "none",
            "graph,-inf,caller",
            "s,1e-9",
        ] {
            let p = CallGraphParams::parse(s).unwrap();
            let again = CallGraphParams::parse(&p.to_string()).unwrap();
            assert_eq!(again, p, "{s} -> {p}");
        }
        assert_eq!(
            CallGraphParams::parse(REPORT_DEFAULT_OPT)
                .unwrap()
                .to_string(),
            "graph,0.5,0,caller,function,percent"
        );
        assert_eq!(
            CallGraphParams::default().to_string(),
            "graph,0.5,0,function,percent"
        );
    }

    #[test]
    fn parse_numbers() {
        let p = CallGraphParams::parse(",,0.1,,callee,").unwrap();
        assert_eq!(p.threshold, 0.1);
        assert_eq!(p.print_limit, 0);
        let p = CallGraphParams::parse("2,3,0x10").unwrap();
        assert_eq!(p.threshold, 2.0);
        assert_eq!(p.print_limit, 16, "the last print limit wins");
        assert_eq!(
            CallGraphParams::parse("1,-1").unwrap().print_limit,
            u32::MAX
        );
        assert_eq!(CallGraphParams::parse("1,010").unwrap().print_limit, 8);
        assert_eq!(CallGraphParams::parse("1,7x").unwrap().print_limit, 7);
        assert_eq!(CallGraphParams::parse("0.5abc").unwrap().threshold, 0.5);
        assert_eq!(CallGraphParams::parse("1e1").unwrap().threshold, 10.0);
        assert_eq!(CallGraphParams::parse("5.").unwrap().threshold, 5.0);
        assert_eq!(CallGraphParams::parse(".5").unwrap().threshold, 0.5);
        assert_eq!(CallGraphParams::parse("0x1p3").unwrap().threshold, 8.0);
        assert_eq!(
            CallGraphParams::parse("-inf").unwrap().threshold,
            f64::NEG_INFINITY
        );
        assert!(CallGraphParams::parse("nan").unwrap().threshold.is_nan());
        let e = CallGraphParams::parse("graph,caller,x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'x'") && e.contains("graph|flat"), "{e}");
        assert!(CallGraphParams::parse("1,x")
            .unwrap_err()
            .to_string()
            .contains("print limit"));
        assert!(CallGraphParams::parse("graphs").is_err());
        assert!(CallGraphParams::parse(".").is_err());
    }

    #[test]
    fn min_hit_converts_like_x86() {
        let mut p = CallGraphParams::default();
        assert_eq!(p.min_hit(1000), 5);
        p.threshold = -1.0;
        assert_eq!(p.min_hit(1000), (-10i64) as u64);
        p.threshold = f64::NAN;
        assert_eq!(p.min_hit(1000), 1 << 63);
        p.threshold = f64::INFINITY;
        assert_eq!(p.min_hit(1000), 0);
        p.threshold = 100.0;
        assert_eq!(p.min_hit(u64::MAX), 0, "2^64 is out of range: x86 gives 0");
        assert_eq!(c_double_to_u64(1.5e19), 15_000_000_000_000_000_000);
    }

    #[test]
    fn empty_chain_adds_nothing() {
        let mut t = CallTree::new();
        t.add(&[], 10);
        assert!(t.is_empty());
        assert_eq!(t.node(CallTree::ROOT).children_hit(), 0);
    }

    #[test]
    fn merge_and_split() {
        let mut t = CallTree::new();
        t.add(&[1, 2, 3], 10);
        t.add(&[1, 2, 3], 5);
        assert_eq!(t.len(), 2);
        let n = t.node(NodeId(1));
        assert_eq!((n.hit(), n.count()), (15, 2));
        // Diverging at the third frame splits the node in two.
        t.add(&[1, 2, 4], 7);
        let root = t.node(CallTree::ROOT);
        assert_eq!((root.children_hit(), root.children_count()), (22, 3));
        let top = t.node(NodeId(1));
        assert_eq!(top.frames(), &[1, 2]);
        assert_eq!(
            (
                top.hit(),
                top.children_hit(),
                top.count(),
                top.children_count()
            ),
            (0, 22, 0, 3)
        );
        let kids: Vec<_> = top
            .children
            .iter()
            .map(|&(_, c)| t.node(c).frames().to_vec())
            .collect();
        assert_eq!(kids, vec![vec![3], vec![4]]);
        // A chain ending inside a node splits it and takes the upper part.
        t.add(&[1], 1);
        let top = t.node(NodeId(1));
        assert_eq!(top.frames(), &[1]);
        assert_eq!((top.hit(), top.count(), top.children_hit()), (1, 1, 22));
        assert_eq!(top.cumul_hits(), 23);
        let mid = top.children[0].1;
        assert_eq!(t.node(mid).frames(), &[2]);
        assert_eq!(t.node(mid).parent(), Some(NodeId(1)));
        for &(_, c) in &t.node(mid).children {
            assert_eq!(t.node(c).parent(), Some(mid));
        }
    }

    #[test]
    fn huge_periods_saturate() {
        let mut t = CallTree::new();
        t.add(&[1], u64::MAX);
        t.add(&[1], u64::MAX);
        t.add(&[1, 2], u64::MAX);
        let n = t.node(NodeId(1));
        assert_eq!(n.hit(), u64::MAX);
        assert_eq!(n.cumul_hits(), u64::MAX);
        let s = t.sort(&CallGraphParams::default(), u64::MAX, &by_id);
        assert_eq!(s.children(CallTree::ROOT), &[NodeId(1)]);
    }

    #[test]
    fn graph_sort_ties_and_threshold() {
        let mut t = CallTree::new();
        for (chain, p) in [
            (&[1, 5][..], 10),
            (&[1, 3], 10),
            (&[1, 4], 30),
            (&[1, 2], 1),
        ] {
            t.add(chain, p);
        }
        let p = CallGraphParams::parse("graph,5").unwrap();
        let s = t.sort(&p, 51, &by_id);
        let top = s.children(CallTree::ROOT)[0];
        let order: Vec<_> = s
            .children(top)
            .iter()
            .map(|&c| t.node(c).frames()[0])
            .collect();
        // 30 first; the tie between 5 and 3 goes to the greater frame; 2
        // (1 < 5% of 51) is cut.
        assert_eq!(order, vec![4, 5, 3]);
        let s = t.sort(&p, 51, &|a, b| b.cmp(&a));
        let order: Vec<_> = s
            .children(top)
            .iter()
            .map(|&c| t.node(c).frames()[0])
            .collect();
        assert_eq!(order, vec![4, 3, 5]);
        // A threshold above everything leaves nothing.
        // 100.1% of 51 is 51.05, truncated to 51 as perf does: still kept.
        let s = t.sort(&CallGraphParams::parse("graph,100.1").unwrap(), 51, &by_id);
        assert_eq!(s.children(CallTree::ROOT).len(), 1);
        let s = t.sort(&CallGraphParams::parse("graph,102").unwrap(), 51, &by_id);
        assert!(s.children(CallTree::ROOT).is_empty());
    }

    #[test]
    fn fractal_threshold_is_per_parent() {
        let mut t = CallTree::new();
        t.add(&[1, 2], 90);
        t.add(&[1, 3], 10);
        t.add(&[9], 50);
        let p = CallGraphParams::parse("fractal,10").unwrap();
        let s = t.sort(&p, 0, &by_id);
        let top: Vec<_> = s.children(CallTree::ROOT).to_vec();
        assert_eq!(top.len(), 2);
        let one = top[0];
        assert_eq!(t.node(one).frames(), &[1]);
        // 10 is exactly ceil(100 * 10%): kept.
        assert_eq!(s.children(one).len(), 2);
        let p = CallGraphParams::parse("fractal,10.1").unwrap();
        let s = t.sort(&p, 0, &by_id);
        assert_eq!(s.children(one).len(), 1, "10 < ceil(100 * 10.1%) = 11");
        assert_eq!(s.children(CallTree::ROOT).len(), 2);
        let s = t.sort(&CallGraphParams::parse("fractal,40").unwrap(), 0, &by_id);
        assert_eq!(
            s.children(CallTree::ROOT),
            &[one],
            "50 < ceil(150 * 40%) = 60"
        );
    }

    #[test]
    fn flat_sort_is_by_own_hits_post_order() {
        let mut t = CallTree::new();
        t.add(&[1], 5);
        t.add(&[1, 2], 5);
        t.add(&[1, 3], 7);
        t.add(&[4], 1);
        let s = t.sort(&CallGraphParams::parse("flat,0").unwrap(), 18, &by_id);
        let ends: Vec<_> = s
            .chains()
            .iter()
            .map(|&c| *t.node(c).frames().last().unwrap())
            .collect();
        // 7; then the tie 5/5: children before their parent, so [1,2]
        // before [1]; then 1.
        assert_eq!(ends, vec![3, 2, 1, 4]);
        let s = t.sort(&CallGraphParams::parse("folded,30").unwrap(), 18, &by_id);
        // min_hit = 18 * 30% = 5.4, truncated to 5: the 1 goes.
        assert_eq!(s.chains().len(), 3);
    }

    #[test]
    fn children_chain_rule() {
        // Callee order: c <- a <- main, sampled in c.
        let chain = [3, 2, 1];
        let got = children_chains(&chain, 3, |f| f);
        assert_eq!(got, vec![(2, &chain[1..]), (1, &chain[2..])]);
        // Caller order: main -> a -> c.
        let chain = [1, 2, 3];
        let got = children_chains(&chain, 3, |f| f);
        assert_eq!(got, vec![(1, &chain[..]), (2, &chain[1..])]);
        // Recursion: f appears twice, counted once at its first place.
        let chain = [1, 5, 5, 6];
        let got = children_chains(&chain, 6, |f| f);
        assert_eq!(got, vec![(1, &chain[..]), (5, &chain[1..])]);
        // Keys other than the frame: frames 7 and 8 share an entry.
        let chain = [7, 8, 9];
        let got = children_chains(&chain, 0, |f| f / 8);
        assert_eq!(
            got,
            vec![(8, &chain[1..])],
            "7 has the self key 0, 9 shares 8's key"
        );
        assert!(children_chains(&[], 1, |f| f).is_empty());
    }
}
