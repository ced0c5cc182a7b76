//! Finding a tree node's child by its key, for trees built node by node
//! (ids dense, a parent before its children): each node keeps a list of
//! its children, and a node with more than [`WIDE`] children also finds
//! them in a map. Most nodes of a stack tree have a few children, made
//! near their parent in memory, where one map of every (parent, key)
//! missed the cache at every step of every stack.

use rustc_hash::FxHashMap as HashMap;

/// Children a node has before they are also found through the map.
const WIDE: u32 = 8;

const NONE: u32 = u32::MAX;

/// One node's part, together: a step down reads one place in memory.
#[derive(Debug, Clone, Copy)]
struct Slot {
    key: u32,
    first: u32,
    next: u32,
    count: u32,
}

#[derive(Debug, Default)]
pub(crate) struct Children {
    nodes: Vec<Slot>,
    /// Children of wide nodes, and every top-level node (parent `None`).
    wide: HashMap<(u32, u32), u32>,
}

impl Children {
    /// The child of `parent` (`None`: a top-level node) with key `key`.
    pub(crate) fn get(&self, parent: Option<u32>, key: u32) -> Option<u32> {
        let Some(p) = parent else {
            return self.wide.get(&(NONE, key)).copied();
        };
        let slot = self.nodes.get(p as usize)?;
        if slot.count > WIDE {
            return self.wide.get(&(p, key)).copied();
        }
        let mut c = slot.first;
        while let Some(s) = self.nodes.get(c as usize) {
            if s.key == key {
                return Some(c);
            }
            c = s.next;
        }
        None
    }

    /// The key node `n` was added with.
    pub(crate) fn key(&self, n: u32) -> Option<u32> {
        self.nodes.get(n as usize).map(|s| s.key)
    }

    /// Adds the next node (its id the number of nodes added so far), a
    /// child of `parent` with key `key`; returns its id.
    pub(crate) fn add(&mut self, parent: Option<u32>, key: u32) -> u32 {
        let n = self.nodes.len() as u32;
        let mut slot = Slot {
            key,
            first: NONE,
            next: NONE,
            count: 0,
        };
        let Some(p) = parent.filter(|&p| p < n) else {
            self.nodes.push(slot);
            self.wide.insert((NONE, key), n);
            return n;
        };
        let up = &mut self.nodes[p as usize];
        slot.next = up.first;
        up.first = n;
        up.count += 1;
        let count = up.count;
        self.nodes.push(slot);
        if count == WIDE + 1 {
            // Just became wide: all its children go into the map.
            let mut c = self.nodes[p as usize].first;
            while let Some(s) = self.nodes.get(c as usize) {
                self.wide.insert((p, s.key), c);
                c = s.next;
            }
        } else if count > WIDE + 1 {
            self.wide.insert((p, key), n);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_are_found_narrow_and_wide() {
        let mut c = Children::default();
        let root = c.add(None, 7);
        assert_eq!(c.get(None, 7), Some(root));
        assert_eq!(c.get(None, 8), None);
        let kids: Vec<u32> = (0..20).map(|k| c.add(Some(root), 100 + k)).collect();
        for (k, &n) in kids.iter().enumerate() {
            assert_eq!(c.get(Some(root), 100 + k as u32), Some(n), "key {k}");
        }
        assert_eq!(c.get(Some(root), 99), None);
        let grandchild = c.add(Some(kids[3]), 100);
        assert_eq!(c.get(Some(kids[3]), 100), Some(grandchild));
        assert_eq!(c.get(Some(kids[4]), 100), None);
        assert_eq!(c.get(Some(grandchild), 100), None);
    }
}
