//! The trie of every sample's chain that rows and call graphs are built
//! from, and the call graph of one entry built from it.

use rustc_hash::FxHashMap as HashMap;

use super::*;

/// The chains of all samples, sharing common starts.
#[derive(Debug, Default)]
pub(super) struct ChainTrie {
    /// Per node: parent (`NONE` for a root), frame, first child, next
    /// sibling (the last two until [`Self::finish`] numbers the nodes in
    /// pre-order).
    pub(super) parent: Vec<u32>,
    pub(super) frame: Vec<u32>,
    pub(super) first_child: Vec<u32>,
    pub(super) next_sibling: Vec<u32>,
    /// Per node: the level of the last frame with a map on its path (0:
    /// none yet), its depth (roots 0) and, with `--children`, the index of
    /// its frame's entry (`NONE` for roots).
    pub(super) level: Vec<u8>,
    pub(super) depth: Vec<u32>,
    pub(super) entry: Vec<u32>,
    /// Chains are printed outermost caller first.
    pub(super) caller_order: bool,
    /// Frames have entries of their own (`--children`): `level` and
    /// `entry` are kept, and [`ChainTrie::finish`] sums the chains.
    pub(super) children: bool,
    pub(super) terms: Vec<Term>,
    /// Per node, its number of children (counted up to 255); the children of nodes with more
    /// than [`WIDE`] are also in `ids` by (parent, frame), the others are
    /// found by walking the sibling list.
    pub(super) nkids: Vec<u8>,
    pub(super) ids: HashMap<(u32, u32), u32>,
    /// Children also told apart by location (keys that depend on it).
    pub(super) loc_ids: HashMap<(u32, u32, u32), u32>,
    /// Roots by (event, comm, thread, cpu, parent): `NONE` for the cpu and
    /// parent unless they are sort keys.
    pub(super) roots: HashMap<(u32, u32, u32, u32, u32, u32), u32>,
    /// After [`finish`](Self::finish), each root's event.
    pub(super) root_events: HashMap<u32, u32>,
    /// After [`ChainTrie::finish`] with `--children`, per node (its id
    /// now its pre-order number): the greatest depth of the chains through
    /// it, and the id after its subtree's.
    pub(super) max_depth: Vec<u32>,
    pub(super) pre_end: Vec<u32>,
    /// After [`ChainTrie::finish`] with `--children`: the terms in node
    /// order (a subtree's are then one run), their nodes, and the running
    /// sums of their period and samples from 0 (one more than the terms).
    /// A node's weight is a difference of two sums: 24 bytes a chain end
    /// instead of 16 a node.
    term_order: Vec<u32>,
    term_nodes: Vec<u32>,
    term_sums: Vec<(u64, u64)>,
    /// Per node id and one past them: how many terms lie at lower ids (a
    /// subtree's run of terms is then two reads, not two binary searches
    /// of every term, which missed the cache at each step).
    term_at: Vec<u32>,
    /// The roots in pre-order.
    pub(super) roots_by_pre: Vec<u32>,
    /// The nodes are numbered in pre-order (see [`Self::finish`]).
    pub(super) renumbered: bool,
}

pub(super) const NONE: u32 = u32::MAX;

/// Children a trie node has before they are looked up by hash rather
/// than by walking its sibling list (most nodes have one or two).
const WIDE: u32 = 8;

/// A trie node whose chains go into an entry's call graph: only the
/// entry's own samples, or all others.
#[derive(Debug, Clone, Copy)]
struct Src {
    node: u32,
    own: bool,
    /// The entry's own chain ends in the node's subtree, as a range of
    /// their list (a child's is found inside its parent's).
    ends: (u32, u32),
    /// All chain ends in the node's subtree, as a run of the trie's terms
    /// in node order (likewise).
    terms: (u32, u32),
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
    pub(super) fn push(&mut self, parent: u32, frame: u32) -> u32 {
        let id = self.parent.len() as u32;
        self.parent.push(parent);
        self.frame.push(frame);
        self.first_child.push(NONE);
        self.next_sibling.push(NONE);
        self.depth.push(0);
        if self.children {
            self.level.push(0);
            self.entry.push(NONE);
        }
        self.nkids.push(0);
        if parent != NONE {
            self.next_sibling[id as usize] = self.first_child[parent as usize];
            self.first_child[parent as usize] = id;
            let k = &mut self.nkids[parent as usize];
            *k = k.saturating_add(1);
        }
        id
    }

    pub(super) fn root(
        &mut self,
        event: u32,
        comm: u32,
        thread: u32,
        cpu: u32,
        parent: u32,
        tag: u32,
    ) -> u32 {
        let key = (event, comm, thread, cpu, parent, tag);
        if let Some(&r) = self.roots.get(&key) {
            return r;
        }
        let r = self.push(NONE, NONE);
        self.roots.insert(key, r);
        r
    }

    /// The child of `parent` for `frame` (from location `loc`, or `NONE`
    /// when no key depends on it) and whether it is new.
    pub(super) fn child(&mut self, parent: u32, frame: u32, loc: u32) -> (u32, bool) {
        if loc != NONE {
            if let Some(&c) = self.loc_ids.get(&(parent, frame, loc)) {
                return (c, false);
            }
            let c = self.push(parent, frame);
            self.loc_ids.insert((parent, frame, loc), c);
            return (c, true);
        }
        let p = parent as usize;
        let wide = self.nkids.get(p).is_some_and(|&n| u32::from(n) > WIDE);
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
        } else if u32::from(self.nkids[p]) > WIDE {
            // Just became wide: its children go into the map.
            let kids: Vec<u32> = self.children(parent).collect();
            for k in kids {
                self.ids.insert((parent, self.frame[k as usize]), k);
            }
        }
        (c, true)
    }

    pub(super) fn add_term(&mut self, node: u32, entry: u32, period: u64, samples: u64) -> u32 {
        let id = self.terms.len() as u32;
        self.terms.push(Term {
            node,
            entry,
            period,
            samples,
        });
        id
    }

    /// A node's children: newest first while the trie grows, in pre-order
    /// once it is numbered so (see [`Self::finish`]).
    pub(super) fn children(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        let (first, end) = if self.renumbered {
            let end = self.pre_end[node as usize];
            (Some(node + 1).filter(|&c| c < end), end)
        } else {
            let c = self.first_child[node as usize];
            (Some(c).filter(|&c| c != NONE), NONE)
        };
        std::iter::successors(first, move |&c| {
            if self.renumbered {
                Some(self.pre_end[c as usize]).filter(|&n| n < end)
            } else {
                Some(self.next_sibling[c as usize]).filter(|&n| n != NONE)
            }
        })
    }

    /// Whether a node on the path from `node` up to its root (itself
    /// included) has the entry `entry`.
    pub(super) fn on_path(&self, mut node: u32, entry: u32) -> bool {
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

    /// Sums the chains through every node; the maps used to find children
    /// are dropped. With `--children` the nodes are numbered again in
    /// pre-order (a node's id is then its pre-order number, its subtree
    /// the ids up to its `pre_end`, and its children found from that), so
    /// the walks over the finished trie read its arrays in order, and the
    /// sibling lists go.
    pub(super) fn finish(&mut self) {
        let n = self.parent.len();
        self.ids = HashMap::default();
        self.nkids = Vec::new();
        self.loc_ids = HashMap::default();
        if !self.children {
            self.root_events = std::mem::take(&mut self.roots)
                .into_iter()
                .map(|(key, root)| (root, key.0))
                .collect();
            // Call graphs then hold only entries' own chains, built from
            // their ends (see `Report::entry_call_tree`).
            return;
        }
        // Pre-order, each node's children oldest first.
        let mut new_of = vec![0u32; n];
        let mut pre_end = vec![0u32; n];
        let mut roots_by_pre = Vec::new();
        let mut next = 0u32;
        let mut work: Vec<(u32, bool)> = Vec::new();
        for r in 0..n as u32 {
            if self.parent[r as usize] != NONE {
                continue;
            }
            roots_by_pre.push(next);
            work.push((r, false));
            while let Some((node, done)) = work.pop() {
                if done {
                    pre_end[new_of[node as usize] as usize] = next;
                    continue;
                }
                new_of[node as usize] = next;
                next += 1;
                work.push((node, true));
                let mut c = self.first_child[node as usize];
                while c != NONE {
                    work.push((c, false));
                    c = self.next_sibling[c as usize];
                }
            }
        }
        drop(work);
        self.first_child = Vec::new();
        self.next_sibling = Vec::new();
        self.level = Vec::new();
        let renumber = |v: &mut Vec<u32>, node_ids: bool| {
            let mut out = vec![0u32; n];
            for (old, &x) in v.iter().enumerate() {
                out[new_of[old] as usize] = if node_ids && x != NONE {
                    new_of[x as usize]
                } else {
                    x
                };
            }
            *v = out;
        };
        renumber(&mut self.parent, true);
        renumber(&mut self.frame, false);
        renumber(&mut self.depth, false);
        renumber(&mut self.entry, false);
        for t in &mut self.terms {
            t.node = new_of[t.node as usize];
        }
        self.root_events = std::mem::take(&mut self.roots)
            .into_iter()
            .map(|(key, root)| (new_of[root as usize], key.0))
            .collect();
        drop(new_of);
        let mut max_depth = vec![0u32; n];
        for t in &self.terms {
            let i = t.node as usize;
            max_depth[i] = self.depth[i];
        }
        // Children come after their parents in pre-order.
        for i in (0..n).rev() {
            let p = self.parent[i];
            if p != NONE {
                let p = p as usize;
                max_depth[p] = max_depth[p].max(max_depth[i]);
            }
        }
        self.max_depth = max_depth;
        let mut order: Vec<u32> = (0..self.terms.len() as u32).collect();
        order.sort_by_key(|&i| self.terms[i as usize].node);
        self.term_nodes = order.iter().map(|&i| self.terms[i as usize].node).collect();
        let mut term_at = vec![0u32; n + 1];
        for &node in &self.term_nodes {
            term_at[node as usize + 1] += 1;
        }
        for i in 1..term_at.len() {
            term_at[i] += term_at[i - 1];
        }
        self.term_at = term_at;
        let mut sums = Vec::with_capacity(order.len() + 1);
        let mut at = (0u64, 0u64);
        sums.push(at);
        for &i in &order {
            let t = &self.terms[i as usize];
            at = (at.0.wrapping_add(t.period), at.1.wrapping_add(t.samples));
            sums.push(at);
        }
        self.term_sums = sums;
        self.term_order = order;
        self.pre_end = pre_end;
        self.roots_by_pre = roots_by_pre;
        self.renumbered = true;
    }

    /// The run of terms (in node order) of the chains through `node`.
    fn term_range(&self, node: u32) -> (u32, u32) {
        let end = self.pre_end.get(node as usize).copied().unwrap_or(node);
        let at = |n: u32| self.term_at.get(n as usize).copied();
        match (at(node), at(end)) {
            (Some(a), Some(z)) if a <= z => (a, z),
            _ => (0, 0),
        }
    }

    /// The summed period and samples of a run of terms.
    fn range_weight(&self, r: (u32, u32)) -> (u64, u64) {
        let (a, b) = (self.term_sums[r.0 as usize], self.term_sums[r.1 as usize]);
        (b.0.wrapping_sub(a.0), b.1.wrapping_sub(a.1))
    }

    /// The period and samples of the chains through `node` (after
    /// [`Self::finish`] with `--children`).
    pub(super) fn weight(&self, node: u32) -> (u64, u64) {
        self.range_weight(self.term_range(node))
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
        if !t.children && !t.caller_order {
            return self.entry_call_tree_callee(e, prune);
        }
        if !t.children || !t.caller_order {
            return self.entry_call_tree_whole(e);
        }
        // The entry's own chains ends, by pre-order number, with running
        // sums: what of a subtree is its own is then two binary searches.
        let mut own: Vec<(u32, u64, u64)> = e
            .ends
            .iter()
            .filter_map(|&i| t.terms.get(i as usize))
            .map(|term| (term.node, term.period, term.samples))
            .collect();
        own.sort_unstable_by_key(|o| o.0);
        let mut sums = Vec::with_capacity(own.len() + 1);
        sums.push((0u64, 0u64));
        for &(_, p, c) in &own {
            let (sp, sc) = sums[sums.len() - 1];
            sums.push((sp.wrapping_add(p), sc.wrapping_add(c)));
        }
        // The own ends under node `n`, searched for in `within` (a range
        // that holds them: the parent's): deep in a big subtree that is
        // mostly an empty range, found without a search.
        let ends_in = |n: u32, within: (u32, u32)| -> (u32, u32) {
            let (lo, hi) = (within.0 as usize, within.1 as usize);
            let Some(part) = own.get(lo..hi).filter(|p| !p.is_empty()) else {
                return (within.0, within.0);
            };
            let (a, b) = (n, t.pre_end[n as usize]);
            (
                (lo + part.partition_point(|o| o.0 < a)) as u32,
                (lo + part.partition_point(|o| o.0 < b)) as u32,
            )
        };
        let all = (0u32, own.len() as u32);
        let own_in = |s: Src| -> (u64, u64) {
            let (lo, hi) = (s.ends.0 as usize, s.ends.1 as usize);
            (
                sums[hi].0.wrapping_sub(sums[lo].0),
                sums[hi].1.wrapping_sub(sums[lo].1),
            )
        };
        // A source is a trie node whose chains count: only the entry's own
        // samples (`own`), or all but those (a subtree from the entry's
        // frame on).
        let weight = |s: Src| -> (u64, u64) {
            let (p, c) = own_in(s);
            if s.own {
                (p, c)
            } else {
                let (wp, wc) = t.range_weight(s.terms);
                (wp.wrapping_sub(p), wc.wrapping_sub(c))
            }
        };
        let hit = |srcs: &[Src]| -> (u64, u64) {
            let mut h = (0u64, 0u64);
            for s in srcs {
                // (A node's own terms start its subtree's run.)
                let at = t.term_order[s.terms.0 as usize..s.terms.1 as usize]
                    .iter()
                    .zip(&t.term_nodes[s.terms.0 as usize..s.terms.1 as usize])
                    .take_while(|&(_, &n)| n == s.node)
                    .filter_map(|(&i, _)| t.terms.get(i as usize));
                for term in at {
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
        // (Frames as call graphs compare them: see `Report::frame_canon`.)
        let canon = |f: u32| self.frame_canon.get(f as usize).copied().unwrap_or(f);
        let children_of = |srcs: &[Src], pairs: &mut Vec<(u32, Src)>| {
            for s in srcs {
                for c in t.children(s.node) {
                    pairs.push((
                        canon(t.frame[c as usize]),
                        Src {
                            node: c,
                            own: s.own,
                            ends: ends_in(c, s.ends),
                            terms: t.term_range(c),
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
                let i = t.roots_by_pre.partition_point(|&r| r <= pre);
                t.roots_by_pre[i.saturating_sub(1)]
            })
            .collect();
        roots.dedup();
        let roots: Vec<Src> = roots
            .into_iter()
            .map(|node| Src {
                node,
                own: true,
                ends: ends_in(node, all),
                terms: t.term_range(node),
            })
            .collect();
        children_of(&roots, &mut pairs);
        // The subtrees' own ends, found walking both lists in pre-order
        // (a binary search of a big entry's ends per subtree missed the
        // cache at every step).
        let from = pairs.len();
        pairs.extend(e.subtrees.iter().map(|&s| {
            (
                canon(t.frame[s as usize]),
                Src {
                    node: s,
                    own: false,
                    ends: (0, 0),
                    terms: t.term_range(s),
                },
            )
        }));
        pairs[from..].sort_unstable_by_key(|p| p.1.node);
        let mut at = 0usize;
        for (_, src) in &mut pairs[from..] {
            let n = src.node as usize;
            let lo = gallop(&own, at, n as u32);
            let hi = gallop(&own, lo, t.pre_end[n]);
            // (Subtrees nest where every occurrence counts: the next one
            // starts from this one's first end.)
            at = lo;
            src.ends = (lo as u32, hi as u32);
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

    /// [`Self::entry_call_tree`] without `--children`, in callee order (perf's default
    /// then): the entry's own chains, leaf first, read up the trie and merged level by
    /// level; a node `prune` drops gets its weights but no subtree, so the cost grows with
    /// the printed graph and the chains' first levels, not with every frame of every chain
    /// (as [`Self::entry_call_tree_whole`]'s would: the same tree where it prints).
    fn entry_call_tree_callee(
        &self,
        e: &HistEntry,
        prune: crate::callchain::Prune,
    ) -> crate::callchain::CallTree {
        use crate::callchain::CallTree;
        let t = &self.trie;
        let canon = |f: u32| self.frame_canon.get(f as usize).copied().unwrap_or(f);
        // A chain at one of its frames: the trie node, and the chain's weight.
        type Cursor = (u32, (u64, u64));
        // The node of the chain's next frame (its caller's), if any: a node whose parent
        // is a root holds the outermost frame.
        let up = |n: u32| -> Option<u32> {
            let p = t.parent[n as usize];
            (p != NONE && t.parent[p as usize] != NONE).then_some(p)
        };
        struct Group {
            frame: u32,
            curs: Vec<Cursor>,
            cum: (u64, u64),
        }
        let group = |pairs: &mut Vec<(u32, Cursor)>| -> Vec<Group> {
            pairs.sort_unstable_by_key(|&(f, (n, _))| (f, n));
            let mut out: Vec<Group> = Vec::new();
            for &(f, c) in pairs.iter() {
                let w = c.1;
                match out.last_mut() {
                    Some(g) if g.frame == f => {
                        g.curs.push(c);
                        g.cum = (g.cum.0.saturating_add(w.0), g.cum.1.saturating_add(w.1));
                    }
                    _ => out.push(Group {
                        frame: f,
                        curs: vec![c],
                        cum: w,
                    }),
                }
            }
            pairs.clear();
            out
        };
        let mut pairs: Vec<(u32, Cursor)> = e
            .ends
            .iter()
            .filter_map(|&i| t.terms.get(i as usize))
            // Weightless chains add nothing, and empty ones (a root's) nothing either.
            .filter(|term| (term.period, term.samples) != (0, 0))
            .filter(|term| t.parent[term.node as usize] != NONE)
            .map(|term| {
                (
                    canon(t.frame[term.node as usize]),
                    (term.node, (term.period, term.samples)),
                )
            })
            .collect();
        let top = group(&mut pairs);
        let mut tree = CallTree::new();
        let total = top.iter().fold((0u64, 0u64), |a, g| {
            (a.0.saturating_add(g.cum.0), a.1.saturating_add(g.cum.1))
        });
        tree.set_root_children(total.0, total.1);
        let mut work: Vec<(crate::callchain::NodeId, u64, Group)> = top
            .into_iter()
            .map(|g| (CallTree::ROOT, total.0, g))
            .collect();
        while let Some((parent, parent_children, g)) = work.pop() {
            let expand = prune.keeps(g.cum.0, parent_children);
            let mut frames = vec![g.frame];
            let mut cur = g;
            loop {
                let mut h = (0u64, 0u64);
                for &(n, w) in &cur.curs {
                    match up(n) {
                        Some(p) if expand => pairs.push((canon(t.frame[p as usize]), (p, w))),
                        Some(_) => {}
                        None => h = (h.0.saturating_add(w.0), h.1.saturating_add(w.1)),
                    }
                }
                let rest = (cur.cum.0.wrapping_sub(h.0), cur.cum.1.wrapping_sub(h.1));
                if !expand {
                    tree.push_child(parent, frames, h, rest);
                    break;
                }
                let mut below = group(&mut pairs);
                // perf's radix tree: a run without branches or chain ends is one node.
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
    pub(super) fn entry_call_tree_whole(&self, e: &HistEntry) -> crate::callchain::CallTree {
        use crate::callchain::TrieBuilder;
        let t = &self.trie;
        let mut b = TrieBuilder::new();
        let mut path = Vec::new();
        // The chain from trie node `n` up to its root, in the order in
        // effect.
        let mut add = |b: &mut TrieBuilder, mut n: u32, period: u64, samples: u64| {
            path.clear();
            while t.parent[n as usize] != NONE {
                let f = t.frame[n as usize];
                path.push(self.frame_canon.get(f as usize).copied().unwrap_or(f));
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
                let (a, z) = (s, t.pre_end[s as usize]);
                nodes.extend((a.min(z)..z).filter(|&n| t.entry[n as usize] == e.id));
            }
            nodes.sort_unstable();
            let mut w: Vec<(u64, u64)> = nodes.iter().map(|&n| t.weight(n)).collect();
            let mut open: Vec<usize> = Vec::new();
            for i in 0..nodes.len() {
                let pre = nodes[i];
                while let Some(&top) = open.last() {
                    if pre < t.pre_end[nodes[top] as usize] {
                        break;
                    }
                    open.pop();
                }
                if let Some(&up) = open.last() {
                    let (p, c) = t.weight(nodes[i]);
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
                if let Ok(i) = nodes.binary_search(&n) {
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
                        let i = lead.entry_index(&me.keys, me.thread, me.level, me.maker);
                        lead.entries[i].filtered = me.filtered;
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

/// The first index from `from` on whose pre-order number in `ends`
/// (sorted) is `bound` or more: steps doubling from `from`, then a binary
/// search within the last step, so a near answer costs a few reads.
fn gallop(ends: &[(u32, u64, u64)], from: usize, bound: u32) -> usize {
    let mut lo = from.min(ends.len());
    let mut step = 1;
    while lo + step <= ends.len() && ends[lo + step - 1].0 < bound {
        lo += step;
        step *= 2;
    }
    let end = (lo + step).min(ends.len());
    lo + ends[lo..end].partition_point(|o| o.0 < bound)
}
