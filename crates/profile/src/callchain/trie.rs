//! Building perf's call tree from whole weighted subtrees: an uncompressed
//! trie merged node by node, then turned into the radix tree.

use super::*;

/// An uncompressed trie of frames with weights where chains end, turned
/// into perf's radix tree by [`TrieBuilder::into_call_tree`].
///
/// perf's tree is canonical: however chains are inserted, a node ends
/// exactly where chains branch or end. So whole weighted subtrees (shared
/// by many samples) can be merged in here node by node, and the result is
/// the tree [`CallTree::add_samples`] would build from every chain one by
/// one, at a cost that grows with distinct frames instead of chain lengths.
#[derive(Debug, Clone)]
pub struct TrieBuilder {
    nodes: Vec<TrieNode>,
}

#[derive(Debug, Clone)]
struct TrieNode {
    hit: u64,
    count: u64,
    children: Vec<(FrameId, u32)>,
}

impl Default for TrieBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl TrieBuilder {
    /// The root: no frame; chains start at its children.
    pub const ROOT: u32 = 0;

    pub fn new() -> Self {
        TrieBuilder {
            nodes: vec![TrieNode {
                hit: 0,
                count: 0,
                children: Vec::new(),
            }],
        }
    }

    /// The child of `parent` for `frame`, created if new.
    pub fn child(&mut self, parent: u32, frame: FrameId) -> u32 {
        let p = parent as usize;
        if let Some(&(_, c)) = self.nodes[p].children.iter().find(|&&(f, _)| f == frame) {
            return c;
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(TrieNode {
            hit: 0,
            count: 0,
            children: Vec::new(),
        });
        self.nodes[p].children.push((frame, id));
        id
    }

    /// Chains ending at `node`: their period and sample count.
    pub fn add_hit(&mut self, node: u32, period: u64, count: u64) {
        let n = &mut self.nodes[node as usize];
        n.hit = n.hit.saturating_add(period);
        n.count = n.count.saturating_add(count);
    }

    /// Adds a whole chain from the root (as [`CallTree::add_samples`]).
    pub fn add_chain(&mut self, chain: &[FrameId], period: u64, count: u64) {
        if chain.is_empty() {
            return;
        }
        let mut node = Self::ROOT;
        for &f in chain {
            node = self.child(node, f);
        }
        self.add_hit(node, period, count);
    }

    /// perf's radix tree of the chains: runs of frames without a branch
    /// or a chain end become one node; weightless branches are dropped.
    pub fn into_call_tree(self) -> CallTree {
        let n = self.nodes.len();
        // Children are created after their parents, so one backward pass
        // sums every subtree.
        let mut cum: Vec<(u64, u64)> = self.nodes.iter().map(|t| (t.hit, t.count)).collect();
        for i in (0..n).rev() {
            let mut h = self.nodes[i].hit;
            let mut c = self.nodes[i].count;
            for &(_, ch) in &self.nodes[i].children {
                let (ch_h, ch_c) = cum[ch as usize];
                h = h.saturating_add(ch_h);
                c = c.saturating_add(ch_c);
            }
            cum[i] = (h, c);
        }
        let live = |i: u32| cum[i as usize] != (0, 0);
        let mut tree = CallTree::new();
        // (trie node whose live children to attach, call-tree parent)
        let mut work: Vec<(u32, NodeId)> = vec![(Self::ROOT, CallTree::ROOT)];
        {
            let (h, c) = cum[0];
            let r = tree.node_mut(CallTree::ROOT);
            r.children_hit = h.saturating_sub(self.nodes[0].hit);
            r.children_count = c.saturating_sub(self.nodes[0].count);
        }
        while let Some((t, parent)) = work.pop() {
            for &(first, child) in &self.nodes[t as usize].children {
                if !live(child) {
                    continue;
                }
                let mut frames = vec![first];
                let mut cur = child;
                loop {
                    let node = &self.nodes[cur as usize];
                    if node.hit != 0 || node.count != 0 {
                        break;
                    }
                    let mut alive = node.children.iter().filter(|&&(_, c)| live(c));
                    match (alive.next(), alive.next()) {
                        (Some(&(f, c)), None) => {
                            frames.push(f);
                            cur = c;
                        }
                        _ => break,
                    }
                }
                let node = &self.nodes[cur as usize];
                let (h, c) = cum[cur as usize];
                let id = tree.push(Node {
                    frames,
                    parent: Some(parent),
                    children: Vec::new(),
                    hit: node.hit,
                    children_hit: h.saturating_sub(node.hit),
                    count: node.count,
                    children_count: c.saturating_sub(node.count),
                });
                tree.node_mut(parent).children.push((first, id));
                work.push((cur, id));
            }
        }
        tree
    }
}
