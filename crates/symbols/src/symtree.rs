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

#[derive(Debug, Clone, Copy)]
struct Node {
    start: u64,
    /// Exclusive, as perf's `symbol::end`.
    end: u64,
    left: u32,
    right: u32,
    parent: u32,
    red: bool,
    item: u32,
}

#[derive(Debug, Default)]
pub(crate) struct RbTree {
    nodes: Vec<Node>,
    root: u32,
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

    /// Puts `v` where `u` hangs from its parent (or at the root).
    fn replace_child(&mut self, parent: u32, u: u32, v: u32) {
        if parent == NIL {
            self.root = v;
        } else if self.n(parent).left == u {
            self.m(parent).left = v;
        } else {
            self.m(parent).right = v;
        }
    }

    fn rotate_left(&mut self, x: u32) {
        let y = self.n(x).right;
        let yl = self.n(y).left;
        self.m(x).right = yl;
        if yl != NIL {
            self.m(yl).parent = x;
        }
        let xp = self.n(x).parent;
        self.m(y).parent = xp;
        self.replace_child(xp, x, y);
        self.m(y).left = x;
        self.m(x).parent = y;
    }

    fn rotate_right(&mut self, x: u32) {
        let y = self.n(x).left;
        let yr = self.n(y).right;
        self.m(x).left = yr;
        if yr != NIL {
            self.m(yr).parent = x;
        }
        let xp = self.n(x).parent;
        self.m(y).parent = xp;
        self.replace_child(xp, x, y);
        self.m(y).right = x;
        self.m(x).parent = y;
    }

    /// perf's `symbols__insert`: equal starts go right. Returns the node's id.
    pub(crate) fn insert(&mut self, start: u64, end: u64, item: u32) -> u32 {
        let z = self.nodes.len() as u32;
        let mut parent = NIL;
        let mut x = self.root;
        while x != NIL {
            parent = x;
            x = if start < self.n(x).start {
                self.n(x).left
            } else {
                self.n(x).right
            };
        }
        self.nodes.push(Node {
            start,
            end,
            left: NIL,
            right: NIL,
            parent,
            red: true,
            item,
        });
        if parent == NIL {
            self.root = z;
        } else if start < self.n(parent).start {
            self.m(parent).left = z;
        } else {
            self.m(parent).right = z;
        }
        let mut z = z;
        while self.is_red(self.n(z).parent) {
            let p = self.n(z).parent;
            let g = self.n(p).parent;
            if self.n(g).left == p {
                let u = self.n(g).right;
                if self.is_red(u) {
                    self.m(p).red = false;
                    self.m(u).red = false;
                    self.m(g).red = true;
                    z = g;
                } else {
                    if self.n(p).right == z {
                        z = p;
                        self.rotate_left(z);
                    }
                    let p = self.n(z).parent;
                    let g = self.n(p).parent;
                    self.m(p).red = false;
                    self.m(g).red = true;
                    self.rotate_right(g);
                }
            } else {
                let u = self.n(g).left;
                if self.is_red(u) {
                    self.m(p).red = false;
                    self.m(u).red = false;
                    self.m(g).red = true;
                    z = g;
                } else {
                    if self.n(p).left == z {
                        z = p;
                        self.rotate_right(z);
                    }
                    let p = self.n(z).parent;
                    let g = self.n(p).parent;
                    self.m(p).red = false;
                    self.m(g).red = true;
                    self.rotate_left(g);
                }
            }
        }
        let root = self.root;
        self.m(root).red = false;
        self.nodes.len() as u32 - 1
    }

    /// The kernel's `rb_erase`: a node with two children is replaced by its successor.
    pub(crate) fn erase(&mut self, z: u32) {
        let (zl, zr, zp) = (self.n(z).left, self.n(z).right, self.n(z).parent);
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
            while self.n(y).left != NIL {
                y = self.n(y).left;
            }
            removed_red = self.n(y).red;
            x = self.n(y).right;
            if self.n(y).parent == z {
                xp = y;
            } else {
                xp = self.n(y).parent;
                self.replace_child(xp, y, x);
                if x != NIL {
                    self.m(x).parent = xp;
                }
                self.m(y).right = zr;
                self.m(zr).parent = y;
            }
            self.replace_child(zp, z, y);
            self.m(y).parent = zp;
            self.m(y).left = zl;
            self.m(zl).parent = y;
            self.m(y).red = self.n(z).red;
        }
        if !removed_red {
            self.erase_fixup(x, xp);
        }
    }

    fn erase_fixup(&mut self, mut x: u32, mut xp: u32) {
        while x != self.root && !self.is_red(x) && xp != NIL {
            if self.n(xp).left == x {
                let mut w = self.n(xp).right;
                if self.is_red(w) {
                    self.m(w).red = false;
                    self.m(xp).red = true;
                    self.rotate_left(xp);
                    w = self.n(xp).right;
                }
                if !self.is_red(self.n(w).left) && !self.is_red(self.n(w).right) {
                    self.m(w).red = true;
                    x = xp;
                    xp = self.n(x).parent;
                } else {
                    if !self.is_red(self.n(w).right) {
                        let wl = self.n(w).left;
                        self.m(wl).red = false;
                        self.m(w).red = true;
                        self.rotate_right(w);
                        w = self.n(xp).right;
                    }
                    self.m(w).red = self.n(xp).red;
                    self.m(xp).red = false;
                    let wr = self.n(w).right;
                    if wr != NIL {
                        self.m(wr).red = false;
                    }
                    self.rotate_left(xp);
                    x = self.root;
                    xp = NIL;
                }
            } else {
                let mut w = self.n(xp).left;
                if self.is_red(w) {
                    self.m(w).red = false;
                    self.m(xp).red = true;
                    self.rotate_right(xp);
                    w = self.n(xp).left;
                }
                if !self.is_red(self.n(w).left) && !self.is_red(self.n(w).right) {
                    self.m(w).red = true;
                    x = xp;
                    xp = self.n(x).parent;
                } else {
                    if !self.is_red(self.n(w).left) {
                        let wr = self.n(w).right;
                        self.m(wr).red = false;
                        self.m(w).red = true;
                        self.rotate_left(w);
                        w = self.n(xp).left;
                    }
                    self.m(w).red = self.n(xp).red;
                    self.m(xp).red = false;
                    let wl = self.n(w).left;
                    if wl != NIL {
                        self.m(wl).red = false;
                    }
                    self.rotate_right(xp);
                    x = self.root;
                    xp = NIL;
                }
            }
        }
        if x != NIL {
            self.m(x).red = false;
        }
    }

    /// perf's `symbols__find`: the item of the first node on the way down whose range
    /// holds `ip` (a zero-sized node holds its start).
    pub(crate) fn find(&self, ip: u64) -> Option<u32> {
        let mut n = self.root;
        while n != NIL {
            let s = self.n(n);
            if ip < s.start {
                n = s.left;
            } else if ip > s.end || (ip == s.end && ip != s.start) {
                n = s.right;
            } else {
                return Some(s.item);
            }
        }
        None
    }

    #[cfg(test)]
    fn check(&self) -> usize {
        // Red-black invariants: returns the black height; panics where broken.
        fn walk(t: &RbTree, n: u32, lo: u64) -> (usize, u64) {
            if n == NIL {
                return (1, lo);
            }
            let s = t.n(n);
            if s.red {
                assert!(
                    !t.is_red(s.left) && !t.is_red(s.right),
                    "red node with red child"
                );
            }
            for c in [s.left, s.right] {
                if c != NIL {
                    assert_eq!(t.n(c).parent, n, "parent link");
                }
            }
            let (hl, lo) = walk(t, s.left, lo);
            assert!(s.start >= lo, "in-order");
            let (hr, hi) = walk(t, s.right, s.start);
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
                go(t, t.n(n).left, out);
                out.push(t.n(n).item);
                go(t, t.n(n).right, out);
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
