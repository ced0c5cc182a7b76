//! perf's symbol tree, for the addresses several symbols cover.
//!
//! perf keeps a binary's symbols in a red-black tree keyed by start address and finds an
//! address by walking down from the root, returning the first node whose range holds it.
//! Where ranges overlap (a zero-sized `_init` stretched over the PLT entries after it),
//! which symbol wins depends on the tree's shape: the one met first on the way down. This
//! tree is built by the same insertions and removals as perf 6.1's (the kernel's rbtree,
//! whose insert and erase rebalance as the textbook algorithms do), so its walk gives
//! perf's answer.

const NIL: u32 = u32::MAX;

/// A child's side: `kids[L]` is the left child, `kids[R]` the right. The
/// rebalancing steps come in mirrored pairs; each is written once, for a side
/// `s` and its mirror `1 - s`.
const L: usize = 0;
const R: usize = 1;

#[derive(Debug, Clone, Copy)]
struct Node {
    start: u64,
    /// Exclusive, as perf's `symbol::end`.
    end: u64,
    kids: [u32; 2],
    parent: u32,
    red: bool,
    item: u32,
}

/// What [`RbTree::find_node`] finds: the node's range and item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub start: u64,
    pub end: u64,
    pub item: u32,
}

#[derive(Debug, Clone)]
pub(crate) struct RbTree {
    nodes: Vec<Node>,
    root: u32,
}

impl Default for RbTree {
    fn default() -> RbTree {
        RbTree::with_capacity(0)
    }
}

impl RbTree {
    pub(crate) fn with_capacity(n: usize) -> RbTree {
        RbTree {
            nodes: Vec::with_capacity(n),
            root: NIL,
        }
    }

    fn n(&self, i: u32) -> &Node {
        &self.nodes[i as usize]
    }

    fn m(&mut self, i: u32) -> &mut Node {
        &mut self.nodes[i as usize]
    }

    fn is_red(&self, i: u32) -> bool {
        i != NIL && self.n(i).red
    }

    /// The side of `parent` that `child` hangs from.
    fn side(&self, parent: u32, child: u32) -> usize {
        if self.n(parent).kids[L] == child {
            L
        } else {
            R
        }
    }

    /// Puts `v` where `u` hangs from its parent (or at the root).
    fn replace_child(&mut self, parent: u32, u: u32, v: u32) {
        if parent == NIL {
            self.root = v;
        } else {
            let s = self.side(parent, u);
            self.m(parent).kids[s] = v;
        }
    }

    /// Rotates `x` down to side `s` (`L`: a left rotation); its child on the
    /// other side takes its place.
    fn rotate(&mut self, x: u32, s: usize) {
        let o = 1 - s;
        let y = self.n(x).kids[o];
        let inner = self.n(y).kids[s];
        self.m(x).kids[o] = inner;
        if inner != NIL {
            self.m(inner).parent = x;
        }
        let xp = self.n(x).parent;
        self.m(y).parent = xp;
        self.replace_child(xp, x, y);
        self.m(y).kids[s] = x;
        self.m(x).parent = y;
    }

    /// perf's `symbols__insert`: equal starts go right. Returns the node's id.
    pub(crate) fn insert(&mut self, start: u64, end: u64, item: u32) -> u32 {
        let z = self.nodes.len() as u32;
        let mut parent = NIL;
        let mut x = self.root;
        let mut s = L;
        while x != NIL {
            parent = x;
            s = if start < self.n(x).start { L } else { R };
            x = self.n(x).kids[s];
        }
        self.nodes.push(Node {
            start,
            end,
            kids: [NIL; 2],
            parent,
            red: true,
            item,
        });
        if parent == NIL {
            self.root = z;
        } else {
            self.m(parent).kids[s] = z;
        }
        let mut z = z;
        while self.is_red(self.n(z).parent) {
            let p = self.n(z).parent;
            // A red node is never the root, so the grandparent exists.
            let g = self.n(p).parent;
            let s = self.side(g, p);
            let u = self.n(g).kids[1 - s];
            if self.is_red(u) {
                self.m(p).red = false;
                self.m(u).red = false;
                self.m(g).red = true;
                z = g;
            } else {
                if self.n(p).kids[1 - s] == z {
                    z = p;
                    self.rotate(z, s);
                }
                let p = self.n(z).parent;
                let g = self.n(p).parent;
                self.m(p).red = false;
                self.m(g).red = true;
                self.rotate(g, 1 - s);
            }
        }
        let root = self.root;
        self.m(root).red = false;
        self.nodes.len() as u32 - 1
    }

    /// The kernel's `rb_erase`: a node with two children is replaced by its successor.
    pub(crate) fn erase(&mut self, z: u32) {
        let ([zl, zr], zp) = (self.n(z).kids, self.n(z).parent);
        let mut removed_red = self.n(z).red;
        let (x, xp);
        if zl == NIL || zr == NIL {
            x = if zl == NIL { zr } else { zl };
            xp = zp;
            self.replace_child(zp, z, x);
            if x != NIL {
                self.m(x).parent = zp;
            }
        } else {
            let mut y = zr;
            while self.n(y).kids[L] != NIL {
                y = self.n(y).kids[L];
            }
            removed_red = self.n(y).red;
            x = self.n(y).kids[R];
            if self.n(y).parent == z {
                xp = y;
            } else {
                xp = self.n(y).parent;
                self.replace_child(xp, y, x);
                if x != NIL {
                    self.m(x).parent = xp;
                }
                self.m(y).kids[R] = zr;
                self.m(zr).parent = y;
            }
            self.replace_child(zp, z, y);
            self.m(y).parent = zp;
            self.m(y).kids[L] = zl;
            self.m(zl).parent = y;
            self.m(y).red = self.n(z).red;
        }
        if !removed_red {
            self.erase_fixup(x, xp);
        }
    }

    fn erase_fixup(&mut self, mut x: u32, mut xp: u32) {
        while x != self.root && !self.is_red(x) && xp != NIL {
            // (`x` may be NIL: its side is the one that is not its sibling's.)
            let s = if self.n(xp).kids[L] == x { L } else { R };
            let o = 1 - s;
            let mut w = self.n(xp).kids[o];
            if self.is_red(w) {
                self.m(w).red = false;
                self.m(xp).red = true;
                self.rotate(xp, s);
                w = self.n(xp).kids[o];
            }
            if !self.is_red(self.n(w).kids[L]) && !self.is_red(self.n(w).kids[R]) {
                self.m(w).red = true;
                x = xp;
                xp = self.n(x).parent;
            } else {
                if !self.is_red(self.n(w).kids[o]) {
                    let inner = self.n(w).kids[s];
                    self.m(inner).red = false;
                    self.m(w).red = true;
                    self.rotate(w, o);
                    w = self.n(xp).kids[o];
                }
                self.m(w).red = self.n(xp).red;
                self.m(xp).red = false;
                let outer = self.n(w).kids[o];
                if outer != NIL {
                    self.m(outer).red = false;
                }
                self.rotate(xp, s);
                x = self.root;
                xp = NIL;
            }
        }
        if x != NIL {
            self.m(x).red = false;
        }
    }

    /// perf's `symbols__find`: the item of the first node on the way down whose range
    /// holds `ip` (a zero-sized node holds its start).
    pub(crate) fn find(&self, ip: u64) -> Option<u32> {
        self.find_node(ip).map(|f| f.item)
    }

    /// [`Self::find`] with the node's range.
    pub(crate) fn find_node(&self, ip: u64) -> Option<Found> {
        let mut n = self.root;
        while n != NIL {
            let s = self.n(n);
            if ip < s.start {
                n = s.kids[L];
            } else if ip > s.end || (ip == s.end && ip != s.start) {
                n = s.kids[R];
            } else {
                return Some(Found {
                    start: s.start,
                    end: s.end,
                    item: s.item,
                });
            }
        }
        None
    }

    #[cfg(test)]
    pub(crate) fn check(&self) -> usize {
        // Red-black invariants: returns the black height; panics where broken.
        fn walk(t: &RbTree, n: u32, lo: u64) -> (usize, u64) {
            if n == NIL {
                return (1, lo);
            }
            let s = t.n(n);
            if s.red {
                assert!(
                    !t.is_red(s.kids[L]) && !t.is_red(s.kids[R]),
                    "red node with red child"
                );
            }
            for c in s.kids {
                if c != NIL {
                    assert_eq!(t.n(c).parent, n, "parent link");
                }
            }
            let (hl, lo) = walk(t, s.kids[L], lo);
            assert!(s.start >= lo, "in-order");
            let (hr, hi) = walk(t, s.kids[R], s.start);
            assert_eq!(hl, hr, "black heights");
            (hl + usize::from(!s.red), hi)
        }
        assert!(!self.is_red(self.root));
        walk(self, self.root, 0).0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_order(t: &RbTree) -> Vec<u32> {
        fn go(t: &RbTree, n: u32, out: &mut Vec<u32>) {
            if n != NIL {
                go(t, t.n(n).kids[L], out);
                out.push(t.n(n).item);
                go(t, t.n(n).kids[R], out);
            }
        }
        let mut v = Vec::new();
        go(t, t.root, &mut v);
        v
    }

    #[test]
    fn stays_balanced_and_ordered_through_inserts_and_erases() {
        let mut t = RbTree::with_capacity(0);
        let mut x = 0x9e37_79b9_u64;
        let mut ids = Vec::new();
        for i in 0..2000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let start = (x >> 40) % 500;
            ids.push((start, t.insert(start, start + 1, i)));
        }
        t.check();
        let mut live: Vec<(u64, u32)> = Vec::new();
        for (k, (start, id)) in ids.iter().enumerate() {
            if k % 3 == 0 {
                t.erase(*id);
            } else {
                live.push((*start, k as u32));
            }
        }
        let h = t.check();
        assert!(h <= 2 * 12, "black height {h}");
        // Stable: equal starts keep their insertion order.
        live.sort_by_key(|&(s, _)| s);
        let want: Vec<u32> = live.iter().map(|&(_, k)| k).collect();
        assert_eq!(in_order(&t), want);
    }

    #[test]
    fn an_overlapping_range_wins_only_when_met_first() {
        // `_init` stretched over one PLT entry inserted after it: recolouring (no
        // rotation) leaves `_init` the entry's parent, met first.
        let mut t = RbTree::with_capacity(4);
        t.insert(0x1000, 0x1050, 1);
        t.insert(0x1050, 0x10a0, 0);
        t.insert(0x2000, 0x2010, 3);
        t.insert(0x1030, 0x1040, 2);
        assert_eq!(t.find(0x1035), Some(1));
        // Three nodes in that order rotate: the entry becomes the root, met first.
        let mut t = RbTree::with_capacity(3);
        t.insert(0x1050, 0x10a0, 0);
        t.insert(0x1000, 0x1050, 1);
        t.insert(0x1030, 0x1040, 2);
        assert_eq!(t.find(0x1035), Some(2));
        assert_eq!(t.find(0x1060), Some(0));
        assert_eq!(t.find(0x10a0), None);
        // Inserted first, the entry is the root and met first; past its end the walk
        // turns right, away from `_init`, and finds nothing, as perf does.
        let mut t = RbTree::with_capacity(3);
        t.insert(0x1030, 0x1040, 2);
        t.insert(0x1000, 0x1050, 1);
        assert_eq!(t.find(0x1035), Some(2));
        assert_eq!(t.find(0x1010), Some(1));
        assert_eq!(t.find(0x1045), None);
    }
}
