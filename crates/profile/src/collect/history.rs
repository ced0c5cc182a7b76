//! `perf report --branch-history`: each sample's branch stack goes into
//! its call chain, ahead of the recorded callers (perf's
//! `thread__resolve_callchain_sample` with `branch_callstack`). For every
//! branch, most recent first, the chain gets its target then its source;
//! runs of branches that repeat are cut out first (perf's `remove_loops`,
//! the iterations counted on the branch after the run), and the recorded
//! chain follows from its first entry the branches did not already cover.
//!
//! Each position of the chain keeps what the branch said there
//! ([`Position`]); the report sums these per call-graph node
//! ([`crate::hist::BranchCounts`]) and prints them after the frame.

use perf_data::consts::*;
use perf_data::sample::Sample;

use super::{intern_sample, Collector, Loc, Origin, SampleKey};
use crate::machine::{Machine, ThreadInfo};

/// What one position of a branch-history chain is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// A branch's target: the branch's flag word and its addresses.
    To { flags: u64, from: u64, to: u64 },
    /// A branch's source: its flag word, and the loops cut out right
    /// before it (how many, and their cycles).
    From {
        flags: u64,
        loops: u32,
        loop_cycles: u64,
    },
    /// An entry of the recorded call chain.
    Call,
}

/// perf's limit on a branch stack's depth (`PERF_MAX_BRANCH_DEPTH`): a
/// deeper one is taken as corrupt and its branches left out.
const MAX_BRANCH_DEPTH: usize = 127;

/// One branch entry: source, target, flag word.
#[derive(Debug, Clone, Copy)]
struct Entry {
    from: u64,
    to: u64,
    flags: u64,
}

/// perf's `remove_loops`: a run of branches whose sources repeat the run
/// just before it is cut out, the branch after it counting one more
/// iteration with the run's cycles. Sources are found by a 127-slot hash
/// without collision handling, as in perf (which decides which repeats are
/// seen). Returns the number of entries kept at the front of `l`.
fn remove_loops(l: &mut [Entry], iter: &mut [(u32, u64)]) -> usize {
    const NO_ENTRY: u8 = 0xff;
    let mut chash = [NO_ENTRY; 127];
    let mut nr = l.len().min(iter.len()).min(MAX_BRANCH_DEPTH);
    let mut i = 0;
    while i < nr {
        // perf's hash_64(from, 7) % 127.
        let h = (l[i].from.wrapping_mul(0x61C8_8646_80B5_83EB) >> 57) as usize % 127;
        if chash[h] == NO_ENTRY {
            chash[h] = i as u8;
        } else if l[chash[h] as usize].from == l[i].from {
            let mut is_loop = true;
            let mut off = 0;
            let mut j = chash[h] as usize;
            while j < i && i + off < nr {
                if l[j].from != l[i + off].from {
                    is_loop = false;
                    break;
                }
                j += 1;
                off += 1;
            }
            if is_loop {
                if nr > i + off {
                    // The run's iteration goes to the entry after it
                    // (perf's save_iterations: its cycles are the run's).
                    let cycles = l[i..i + off]
                        .iter()
                        .map(|e| (e.flags >> 4) & 0xffff)
                        .fold(0u64, u64::wrapping_add);
                    let it = &mut iter[i + off];
                    it.0 += 1;
                    it.1 = cycles;
                    l.copy_within(i + off..nr, i);
                    iter.copy_within(i + off..nr, i);
                }
                nr -= off;
            }
        }
        i += 1;
    }
    nr
}

impl Collector {
    /// Sums one sample in branch-history mode: its chain is its branches
    /// then its callers (see the module's text), each sample a sum of its
    /// own so the report can count what each chain position's branch said
    /// in sample order.
    pub(super) fn add_history(&mut self, machine: &mut Machine, s: &Sample<'_>, period: u64) {
        let th = machine.sample_thread(s);
        let comm = self.comm_id(machine, th.index);
        let cpu = self.cpu_of(s);
        let tag = self.tag_of(s);
        let leaf = self.sample_leaf(machine, &th, s);
        let mut locs = std::mem::take(&mut self.buf);
        locs.clear();
        let mut positions = Vec::new();
        self.history_chain(machine, &th, s, &mut locs, &mut positions);
        let (leaf, stack) = intern_sample(
            &mut self.interner,
            &mut self.paths,
            th.index as u32,
            &locs,
            leaf,
        );
        self.buf = locs;
        let seq = self.history.len() as u32;
        self.history.push(positions.into_boxed_slice());
        let key = SampleKey {
            tag,
            branch: seq,
            ..SampleKey::of(s, &th, comm, cpu, leaf, stack)
        };
        self.sum_key(key, period);
    }

    /// The chain of a sample in branch-history mode, leaf first, with what
    /// each position is. perf builds it in the graph's order (which
    /// `max_stack_from_root` gives here: set for caller order), and in
    /// caller order the branches go oldest first, each target before its
    /// source, so that chain is not the callee one reversed.
    fn history_chain(
        &mut self,
        machine: &Machine,
        th: &ThreadInfo,
        s: &Sample<'_>,
        locs: &mut Vec<Loc>,
        positions: &mut Vec<Position>,
    ) {
        let caller = self.opts.max_stack_from_root;
        let max_stack = self.opts.max_stack;
        let chain: Vec<u64> = match (&s.callchain, self.opts.callchains) {
            (Some(c), true) => c.iter().collect(),
            _ => Vec::new(),
        };
        let mut chain_nr = chain.len();
        let mut first_call = 0usize;
        if let Some(stack) = s.branch_stack {
            let all: Vec<Entry> = stack
                .entries()
                .map(|e| Entry {
                    from: e.from,
                    to: e.to,
                    flags: e.flags,
                })
                .collect();
            if all.len() <= MAX_BRANCH_DEPTH {
                let n = all.len().min(max_stack);
                let mut be: Vec<Entry> = if caller {
                    all.iter().rev().take(n).copied().collect()
                } else {
                    all[..n].to_vec()
                };
                if !caller && s.callchain.is_some() {
                    for e in &be {
                        // A branch from just before the next caller's
                        // return address is that call: the chain starts
                        // after it (perf allows 8 bytes for the call).
                        match chain.get(first_call) {
                            Some(&ip) if ip >= PERF_CONTEXT_MAX => first_call += 1,
                            Some(&ip) if e.from < ip && e.from >= ip.wrapping_sub(8) => {
                                first_call += 1
                            }
                            _ => {}
                        }
                    }
                }
                let mut iter = vec![(0u32, 0u64); be.len()];
                let nr = remove_loops(&mut be, &mut iter);
                for (e, &(loops, loop_cycles)) in be[..nr].iter().zip(&iter) {
                    let to = self.branch_end_loc(machine, th, e.to);
                    let from = self.branch_end_loc(machine, th, e.from);
                    locs.push(to);
                    positions.push(Position::To {
                        flags: e.flags,
                        from: e.from,
                        to: e.to,
                    });
                    locs.push(from);
                    positions.push(Position::From {
                        flags: e.flags,
                        loops,
                        loop_cycles,
                    });
                }
                if chain_nr == 0 {
                    finish(caller, locs, positions);
                    return;
                }
                // (perf shortens the chain by the branches kept.)
                chain_nr = chain_nr.saturating_sub(nr);
            }
        }
        // The recorded callers, from the first the branches did not cover,
        // in the graph's order; the context before any marker is user, and
        // an unknown marker drops the whole chain, as in perf.
        let context = |ip: u64| -> Option<u16> {
            Some(match ip {
                PERF_CONTEXT_HV => PERF_RECORD_MISC_HYPERVISOR,
                PERF_CONTEXT_KERNEL => PERF_RECORD_MISC_KERNEL,
                PERF_CONTEXT_USER => PERF_RECORD_MISC_USER,
                PERF_CONTEXT_GUEST_KERNEL => PERF_RECORD_MISC_GUEST_KERNEL,
                PERF_CONTEXT_GUEST_USER => PERF_RECORD_MISC_GUEST_USER,
                _ => return None,
            })
        };
        // perf's find_prev_cpumode: the last marker before index `ent`.
        let prev_marker = |ent: usize| {
            chain[..ent.min(chain.len())]
                .iter()
                .rev()
                .find(|&&ip| ip >= PERF_CONTEXT_MAX)
                .copied()
        };
        // Takes a marker's context (none: the current one stays); false
        // for an unknown marker.
        let switch = |m: Option<u64>, cpumode: &mut u16| match m.map(context) {
            Some(None) => false,
            Some(Some(c)) => {
                *cpumode = c;
                true
            }
            None => true,
        };
        let mut cpumode = PERF_RECORD_MISC_USER;
        if caller
            && !switch(
                prev_marker(chain.len().saturating_sub(first_call)),
                &mut cpumode,
            )
        {
            locs.clear();
            positions.clear();
            return;
        }
        let mut entries = 0;
        for i in first_call..chain_nr {
            if entries >= max_stack {
                break;
            }
            let j = if caller { chain.len() - i - 1 } else { i };
            let ip = chain[j];
            if ip >= PERF_CONTEXT_MAX {
                let marker = if caller { prev_marker(j) } else { Some(ip) };
                if !switch(marker, &mut cpumode) {
                    locs.clear();
                    positions.clear();
                    return;
                }
                continue;
            }
            entries += 1;
            locs.push(Self::locate(
                &mut self.map_cache,
                machine,
                th,
                cpumode,
                ip,
                Origin::Exact,
            ));
            positions.push(Position::Call);
        }
        finish(caller, locs, positions);
    }
}

/// A chain built in caller order turned leaf first, as stacks are kept.
fn finish(caller: bool, locs: &mut [Loc], positions: &mut [Position]) {
    if caller {
        locs.reverse();
        positions.reverse();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(froms: &[u64]) -> Vec<Entry> {
        froms
            .iter()
            .map(|&f| Entry {
                from: f,
                to: f + 1,
                flags: 3 << 4,
            })
            .collect()
    }

    #[test]
    fn a_repeated_run_is_cut_and_counted_on_the_entry_after_it() {
        // a b a b c: the second "a b" repeats the first.
        let mut l = entries(&[0x10, 0x20, 0x10, 0x20, 0x30]);
        let mut iter = vec![(0, 0); l.len()];
        let nr = remove_loops(&mut l, &mut iter);
        let froms: Vec<u64> = l[..nr].iter().map(|e| e.from).collect();
        assert_eq!(froms, [0x10, 0x20, 0x30]);
        // The entry after the cut run (c) has one iteration of 2 x 3 cycles.
        assert_eq!(iter[2], (1, 6));
        assert_eq!(iter[0], (0, 0));
    }

    #[test]
    fn no_repeat_keeps_everything() {
        let mut l = entries(&[0x10, 0x20, 0x30]);
        let mut iter = vec![(0, 0); l.len()];
        assert_eq!(remove_loops(&mut l, &mut iter), 3);
        assert!(iter.iter().all(|&i| i == (0, 0)));
    }

    #[test]
    fn a_run_at_the_end_is_dropped_without_an_iteration() {
        let mut l = entries(&[0x10, 0x20, 0x10, 0x20]);
        let mut iter = vec![(0, 0); l.len()];
        assert_eq!(remove_loops(&mut l, &mut iter), 2);
        assert!(iter.iter().all(|&i| i == (0, 0)));
    }
}
