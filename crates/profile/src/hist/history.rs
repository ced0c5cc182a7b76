//! What `perf report --branch-history` prints after each call-graph frame:
//! per node of an entry's graph, what the branches through it said (perf's
//! `callchain_list` counts: taken how often, predicted, aborted, cycles,
//! loop iterations, branch types).
//!
//! perf counts them as it inserts each sample's chain into the entry's
//! tree, in sample order: the sample that makes a node sets its counts
//! (`fill_node`), each later one adds to them (`match_chain`), and the
//! two differ in one count (a branch source's `from_count` counts only
//! the later ones). So the counts are kept here per path from the graph's
//! top, in sample order, for the same paths the entry's graph holds: its
//! own samples' chains, and with `--children` the part of every chain from
//! the entry's first frame on (the one nearest the chain's start, as
//! perf's cumulative entries take it).

use rustc_hash::FxHashMap as HashMap;

use super::trie::NONE;
use super::Report;
use crate::collect::Position;

/// perf's branch counts of one call-graph node (`struct callchain_list`
/// with its `branch_type_stat`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BranchCounts {
    /// Branches through the node (0: a frame of the recorded chain).
    pub branch_count: u64,
    pub predicted: u64,
    pub abort: u64,
    /// Cycles of the branches from here (sources).
    pub cycles: u64,
    /// Loop iterations cut out before the branches from here, and their
    /// cycles.
    pub iter_count: u64,
    pub iter_cycles: u64,
    /// Branches from here after the first (perf's `from_count`).
    pub from_count: u64,
    /// The last branch through the node had it as its target.
    pub branch_to: bool,
    /// Branch types (`PERF_BR_*`, the extended ones apart), conditional
    /// branches forward and backward, and branches crossing a 4 KiB or
    /// 2 MiB boundary.
    pub types: [u64; 16],
    pub new_types: [u64; 16],
    pub cond_fwd: u64,
    pub cond_bwd: u64,
    pub cross_4k: u64,
    pub cross_2m: u64,
}

/// `PERF_BR_COND` and `PERF_BR_EXTEND_ABI`.
const BR_COND: usize = 1;
const BR_EXTEND_ABI: usize = 15;

impl BranchCounts {
    /// One more chain through the node; `made` when it makes the node.
    fn add(&mut self, p: &Position, made: bool) {
        match *p {
            Position::Call => {}
            Position::To { flags, from, to } => {
                self.branch_count += 1;
                self.branch_to = true;
                self.predicted += (flags >> 1) & 1;
                self.abort += (flags >> 3) & 1;
                self.count_type(flags, from, to);
            }
            Position::From {
                flags,
                loops,
                loop_cycles,
            } => {
                self.branch_count += 1;
                self.branch_to = false;
                self.cycles = self.cycles.wrapping_add((flags >> 4) & 0xffff);
                self.iter_count += u64::from(loops);
                self.iter_cycles = self.iter_cycles.wrapping_add(loop_cycles);
                if !made {
                    self.from_count += 1;
                }
            }
        }
    }

    /// perf's `branch_type_count`.
    fn count_type(&mut self, flags: u64, from: u64, to: u64) {
        let ty = ((flags >> 20) & 0xf) as usize;
        if ty == 0 || from == 0 {
            return;
        }
        if ty == BR_EXTEND_ABI {
            self.new_types[((flags >> 26) & 0xf) as usize] += 1;
        } else {
            self.types[ty] += 1;
        }
        if ty == BR_COND {
            if to > from {
                self.cond_fwd += 1;
            } else {
                self.cond_bwd += 1;
            }
        }
        let cross = |size: u64| from & !(size - 1) != to & !(size - 1);
        if cross(2 << 20) {
            self.cross_2m += 1;
        } else if cross(4096) {
            self.cross_4k += 1;
        }
    }
}

/// The branch counts of one entry's graph, by path: a path is its last
/// frame after the path before it.
#[derive(Debug, Default)]
pub struct EntryBranches {
    ids: HashMap<(u32, u32), u32>,
    /// By path id: the path's last frame and its counts.
    pub nodes: Vec<(u32, BranchCounts)>,
}

impl EntryBranches {
    /// The path of `frame` after path `before` (`None` at the top), if
    /// some chain of the entry has it.
    pub fn path(&self, before: Option<u32>, frame: u32) -> Option<u32> {
        self.ids.get(&(before.unwrap_or(NONE), frame)).copied()
    }

    /// One chain, from the graph's top: frames and what each position is.
    fn add(&mut self, frames: &[u32], positions: &[Position]) {
        let mut before = NONE;
        for (&f, p) in frames.iter().zip(positions) {
            let next = self.nodes.len() as u32;
            let id = *self.ids.entry((before, f)).or_insert(next);
            let made = id == next;
            if made {
                self.nodes.push((f, BranchCounts::default()));
            }
            self.nodes[id as usize].1.add(p, made);
            before = id;
        }
    }
}

impl Report {
    /// Counts the branches of every entry's graph (see the module's text),
    /// with `positions` by term: what each position of the term's chain
    /// is, leaf first. A chain whose positions do not match its frames one
    /// to one (frames left out by -U) adds no counts.
    pub(super) fn count_branches(&mut self, positions: &[&[Position]]) {
        let t = &self.trie;
        let mut out: HashMap<(u32, u32), EntryBranches> = HashMap::default();
        let mut nodes: Vec<u32> = Vec::new();
        let mut frames: Vec<u32> = Vec::new();
        let mut pos: Vec<Position> = Vec::new();
        let mut seen: Vec<u32> = Vec::new();
        for (term, p) in t.terms.iter().zip(positions) {
            nodes.clear();
            let mut n = term.node;
            while t.parent[n as usize] != NONE {
                nodes.push(n);
                n = t.parent[n as usize];
            }
            let Some(&event) = t.root_events.get(&n) else {
                continue;
            };
            if nodes.len() != p.len() {
                continue;
            }
            pos.clear();
            pos.extend_from_slice(p);
            if t.caller_order {
                nodes.reverse();
                pos.reverse();
            }
            frames.clear();
            frames.extend(nodes.iter().map(|&n| {
                let f = t.frame[n as usize];
                self.frame_canon.get(f as usize).copied().unwrap_or(f)
            }));
            out.entry((event, term.entry))
                .or_default()
                .add(&frames, &pos);
            if !t.children {
                continue;
            }
            // Each other entry on the chain gets the chain from its first
            // frame on, once per sample.
            seen.clear();
            seen.push(term.entry);
            for (k, &n) in nodes.iter().enumerate() {
                let e = t.entry[n as usize];
                if e == NONE || seen.contains(&e) {
                    continue;
                }
                seen.push(e);
                out.entry((event, e))
                    .or_default()
                    .add(&frames[k..], &pos[k..]);
            }
        }
        self.branches = out;
    }

    /// The branch counts of an entry's graph (of event `event`), in
    /// branch-history mode.
    pub fn entry_branches(&self, event: usize, e: &super::HistEntry) -> Option<&EntryBranches> {
        self.branches.get(&(event as u32, e.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TO: Position = Position::To {
        flags: 2,
        from: 0x10,
        to: 0x20,
    };
    const FROM: Position = Position::From {
        flags: 5 << 4,
        loops: 1,
        loop_cycles: 4,
    };

    #[test]
    fn the_sample_making_a_node_is_no_later_source() {
        let mut b = EntryBranches::default();
        b.add(&[7, 8, 9], &[TO, FROM, Position::Call]);
        b.add(&[7, 8], &[TO, FROM]);
        let to = b.path(None, 7).unwrap();
        let from = b.path(Some(to), 8).unwrap();
        let call = b.path(Some(from), 9).unwrap();
        let (_, c) = &b.nodes[to as usize];
        assert_eq!((c.branch_count, c.predicted, c.branch_to), (2, 2, true));
        let (_, c) = &b.nodes[from as usize];
        assert_eq!(
            (
                c.branch_count,
                c.cycles,
                c.iter_count,
                c.iter_cycles,
                c.from_count
            ),
            (2, 10, 2, 8, 1)
        );
        assert!(!c.branch_to);
        assert_eq!(b.nodes[call as usize].1, BranchCounts::default());
        assert_eq!(b.path(Some(to), 9), None);
    }
}
