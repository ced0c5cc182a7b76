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

#[derive(Debug, Default)]
pub(crate) struct Children {
    key: Vec<u32>,
    first: Vec<u32>,
    next: Vec<u32>,
    count: Vec<u32>,
    /// Children of wide nodes, and every top-level node (parent `None`).
    wide: HashMap<(u32, u32), u32>,
}

impl Children {
    /// The child of `parent` (`None`: a top-level node) with key `key`.
    pub(crate) fn get(&self, parent: Option<u32>, key: u32) -> Option<u32> {
        let Some(p) = parent else {
            return self.wide.get(&(NONE, key)).copied();
        };
        if self.count.get(p as usize).copied().unwrap_or(0) > WIDE {
            return self.wide.get(&(p, key)).copied();
        }
        let mut c = self.first.get(p as usize).copied().unwrap_or(NONE);
        while c != NONE {
            if self.key[c as usize] == key {
                return Some(c);
            }
            c = self.next[c as usize];
        }
        None
    }

    /// Adds the next node (its id the number of nodes added so far), a
    /// child of `parent` with key `key`; returns its id.
    pub(crate) fn add(&mut self, parent: Option<u32>, key: u32) -> u32 {
        let n = self.key.len() as u32;
        self.key.push(key);
        self.first.push(NONE);
        self.next.push(NONE);
        self.count.push(0);
        let Some(p) = parent.filter(|&p| p < n) else {
            self.wide.insert((NONE, key), n);
            return n;
        };
        let pi = p as usize;
        self.next[n as usize] = self.first[pi];
        self.first[pi] = n;
        self.count[pi] += 1;
        match self.count[pi] {
            c if c == WIDE + 1 => {
                // Just became wide: all its children go into the map.
                let mut c = self.first[pi];
                while c != NONE {
                    self.wide.insert((p, self.key[c as usize]), c);
                    c = self.next[c as usize];
                }
            }
            c if c > WIDE + 1 => {
                self.wide.insert((p, key), n);
            }
            _ => {}
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
