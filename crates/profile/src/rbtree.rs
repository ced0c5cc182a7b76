//! The order of items inserted one by one into a red-black tree, as perf
//! builds its output tree (`hists__output_resort` into the kernel's
//! `lib/rbtree.c`). Where perf's comparison is a total order that is just
//! a stable sort; but perf's children column compares two entries' chain
//! depths only within one thread, so its ties across threads are no
//! order, and which rows come first depends on the path each insertion
//! takes through the tree, which depends on the tree's balancing. This
//! replays the insertions with the same balancing (the textbook insertion
//! fix-up, which the kernel's `__rb_insert` is case for case). Written
//! here because what is needed is perf's exact tree shape under a
//! comparison that is not an order, which no general-purpose container
//! promises.

const NIL: u32 = u32::MAX;
/// Sides: a node's children are `child[L]` and `child[R]`.
const L: usize = 0;
const R: usize = 1;

struct Tree {
    child: [Vec<u32>; 2],
    parent: Vec<u32>,
    red: Vec<bool>,
    root: u32,
}

impl Tree {
    /// Rotates at `x` towards side `d`: its child on the other side takes
    /// its place and `x` becomes that child's child on side `d` (`L`: a
    /// left rotation).
    fn rotate(&mut self, x: u32, d: usize) {
        let o = 1 - d;
        let xi = x as usize;
        let y = self.child[o][xi];
        let yi = y as usize;
        let inner = self.child[d][yi];
        self.child[o][xi] = inner;
        if inner != NIL {
            self.parent[inner as usize] = x;
        }
        let p = self.parent[xi];
        self.parent[yi] = p;
        if p == NIL {
            self.root = y;
        } else {
            let side = if self.child[L][p as usize] == x { L } else { R };
            self.child[side][p as usize] = y;
        }
        self.child[d][yi] = x;
        self.parent[xi] = y;
    }

    /// Restores the colours after `z` was put in red (the textbook
    /// insertion fix-up; its two mirrored halves by side).
    fn fix_up(&mut self, mut z: u32) {
        loop {
            let p = self.parent[z as usize];
            if p == NIL || !self.red[p as usize] {
                break;
            }
            // A red parent is not the root: the grandparent exists.
            let g = self.parent[p as usize];
            let d = if self.child[L][g as usize] == p { L } else { R };
            let u = self.child[1 - d][g as usize];
            if u != NIL && self.red[u as usize] {
                self.red[p as usize] = false;
                self.red[u as usize] = false;
                self.red[g as usize] = true;
                z = g;
                continue;
            }
            let mut p = p;
            if self.child[1 - d][p as usize] == z {
                z = p;
                self.rotate(z, d);
                p = self.parent[z as usize];
            }
            self.red[p as usize] = false;
            self.red[g as usize] = true;
            self.rotate(g, 1 - d);
        }
        let r = self.root as usize;
        self.red[r] = false;
    }
}

/// Items `0..n` inserted in that order, each going left of a node it
/// `goes_left` of and right otherwise (equal ones after), listed in tree
/// order.
pub fn insertion_order(n: usize, mut goes_left: impl FnMut(usize, usize) -> bool) -> Vec<usize> {
    let mut t = Tree {
        child: [vec![NIL; n], vec![NIL; n]],
        parent: vec![NIL; n],
        red: vec![false; n],
        root: NIL,
    };
    for z in 0..n {
        let mut y = NIL;
        let mut x = t.root;
        let mut left = false;
        while x != NIL {
            y = x;
            left = goes_left(z, x as usize);
            x = t.child[if left { L } else { R }][x as usize];
        }
        let zu = z as u32;
        t.parent[z] = y;
        if y == NIL {
            t.root = zu;
        } else {
            t.child[if left { L } else { R }][y as usize] = zu;
        }
        t.red[z] = true;
        t.fix_up(zu);
    }
    let mut out = Vec::with_capacity(n);
    let mut stack = Vec::new();
    let mut x = t.root;
    while x != NIL || !stack.is_empty() {
        while x != NIL {
            stack.push(x);
            x = t.child[L][x as usize];
        }
        let Some(top) = stack.pop() else { break };
        out.push(top as usize);
        x = t.child[R][top as usize];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_total_order_gives_a_stable_sort() {
        let v = [5, 3, 9, 3, 1, 9, 7, 3, 0, 5, 2, 8, 8, 6];
        let order = insertion_order(v.len(), |a, b| v[a] < v[b]);
        let mut expect: Vec<usize> = (0..v.len()).collect();
        expect.sort_by_key(|&i| v[i]);
        assert_eq!(order, expect);
        // Many items, sorted input and reversed input (the balancing runs
        // every case).
        for n in [1, 2, 3, 100, 1000] {
            let up = insertion_order(n, |a, b| a < b);
            assert_eq!(up, (0..n).collect::<Vec<_>>());
            let down = insertion_order(n, |a, b| a > b);
            assert_eq!(down, (0..n).rev().collect::<Vec<_>>());
        }
    }

    #[test]
    fn ties_that_are_no_order_follow_the_tree() {
        // 0 and 2 compare; 1 ties with both. Inserted 0, 1, 2: 1 goes
        // right of 0. With 0 before 2, 2 goes right of 0 and of 1 (then the
        // tree turns to 1 at the root): 0, 1, 2.
        let before = |a: usize, b: usize| (a, b) == (0, 2);
        assert_eq!(insertion_order(3, before), [0, 1, 2]);
        // With 2 before 0, 2 goes left of the root, 0, and never meets 1:
        // 2, 0, 1, where a sort by "2 before 0, 1 tied" could give 1 first.
        let before = |a: usize, b: usize| (a, b) == (2, 0);
        assert_eq!(insertion_order(3, before), [2, 0, 1]);
    }
}
