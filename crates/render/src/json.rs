//! sear's own JSON of a recording's aggregated stacks: events with their
//! totals, threads, and one entry per (event, thread, stack) with its
//! frames (root first, inline frames expanded), samples and period.
//!
//! ```json
//! {"format": "sear-stacks", "version": 1,
//!  "events": [{"name": "cpu-clock", "unit": "nanoseconds", "samples": 3, "period": 750000}],
//!  "threads": [{"pid": 7, "tid": 7, "comm": "prog"}],
//!  "stacks": [{"event": 0, "thread": 0, "frames": ["main", "work"], "samples": 3, "period": 750000}]}
//! ```

use std::collections::HashMap;
use std::io::{self, Write};

use profile::export::ExportProfile;
use serde::Serialize;

#[derive(Serialize)]
struct File<'a> {
    format: &'static str,
    version: u32,
    events: Vec<Event>,
    threads: Vec<Thread>,
    stacks: Stacks<'a>,
}

#[derive(Serialize)]
struct Event {
    name: String,
    unit: &'static str,
    samples: u64,
    period: u64,
}

#[derive(Serialize)]
struct Thread {
    pid: i32,
    tid: i32,
    comm: String,
}

#[derive(Serialize)]
struct Stack<'a> {
    event: u32,
    thread: u32,
    frames: Vec<&'a str>,
    samples: u64,
    period: u64,
}

const NO_NAME: u32 = u32::MAX;

/// Frame names as a trie: a stack's names (root first) are a node of it.
/// Stacks of different addresses with the same names are one node.
#[derive(Default)]
struct NameTrie<'a> {
    names: Vec<&'a str>,
    /// Per node: parent (`NO_NAME` for an outermost frame) and name id.
    nodes: Vec<(u32, u32)>,
    ids: HashMap<(u32, u32), u32>,
}

impl NameTrie<'_> {
    fn child(&mut self, parent: u32, name: u32) -> u32 {
        let next = self.nodes.len() as u32;
        let id = *self.ids.entry((parent, name)).or_insert(next);
        if id == next {
            self.nodes.push((parent, name));
        }
        id
    }

    /// Per node, its place among all nodes in the order of their name
    /// paths (a path before the longer ones it begins, as slices compare):
    /// the trie's pre-order with children by name.
    fn ranks(&self) -> Vec<u32> {
        let n = self.nodes.len();
        let name = |x: u32| self.names[self.nodes[x as usize].1 as usize];
        // The nodes by parent (outermost frames last), siblings by name;
        // `first[p]..first[p + 1]` are node p's children there.
        let mut sorted: Vec<u32> = (0..n as u32).collect();
        sorted.sort_unstable_by(|&a, &b| {
            self.nodes[a as usize]
                .0
                .cmp(&self.nodes[b as usize].0)
                .then_with(|| name(a).cmp(name(b)))
        });
        let mut first = vec![0u32; n + 1];
        for &(parent, _) in &self.nodes {
            if let Some(f) = first.get_mut(parent as usize + 1) {
                *f += 1;
            }
        }
        for i in 1..=n {
            first[i] += first[i - 1];
        }
        let roots = first[n] as usize..n;
        let mut rank = vec![0u32; n];
        let mut next = 0u32;
        let mut todo: Vec<u32> = sorted[roots].iter().rev().copied().collect();
        while let Some(x) = todo.pop() {
            rank[x as usize] = next;
            next += 1;
            let (a, b) = (first[x as usize] as usize, first[x as usize + 1] as usize);
            todo.extend(sorted[a..b].iter().rev());
        }
        rank
    }

    /// Node `n`'s names, root first.
    fn path(&self, mut n: u32) -> Vec<&str> {
        let mut v = Vec::new();
        while let Some(&(parent, name)) = self.nodes.get(n as usize) {
            v.push(self.names[name as usize]);
            n = parent;
        }
        v.reverse();
        v
    }
}

/// (event, thread, name node) and (samples, period).
type StackSum = ((u32, u32, u32), (u64, u64));

/// The stacks of the file, written one by one.
struct Stacks<'a> {
    trie: &'a NameTrie<'a>,
    keys: Vec<StackSum>,
}

impl Serialize for Stacks<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.keys.len()))?;
        for &((event, thread, node), (samples, period)) in &self.keys {
            seq.serialize_element(&Stack {
                event,
                thread,
                frames: self.trie.path(node),
                samples,
                period,
            })?;
        }
        seq.end()
    }
}

/// Writes `p`'s stacks summed by (event, thread, stack), heaviest first.
pub fn write_json<W: Write>(out: W, p: &ExportProfile) -> io::Result<()> {
    // Each location's names (root first), each name once.
    let frame_names: Vec<Vec<String>> = (0..p.locations.len() as u32)
        .map(|l| p.frame_names(l).into_iter().rev().collect())
        .collect();
    let mut trie = NameTrie::default();
    let mut name_ids: HashMap<&str, u32> = HashMap::new();
    let mut loc_names: Vec<Vec<u32>> = Vec::with_capacity(frame_names.len());
    for names in &frame_names {
        loc_names.push(
            names
                .iter()
                .map(|n| {
                    *name_ids.entry(n.as_str()).or_insert_with(|| {
                        trie.names.push(n.as_str());
                        (trie.names.len() - 1) as u32
                    })
                })
                .collect(),
        );
    }
    // Per node of the export's stacks, its node here (made once, caller
    // first); per stack, its innermost.
    let mut of_node = vec![NO_NAME; p.stack_nodes.len()];
    for (i, &(caller, loc)) in p.stack_nodes.iter().enumerate() {
        let mut n = of_node.get(caller as usize).copied().unwrap_or(NO_NAME);
        for &name in loc_names.get(loc as usize).map_or(&[][..], Vec::as_slice) {
            n = trie.child(n, name);
        }
        of_node[i] = n;
    }
    let mut sums: HashMap<(u32, u32, u32), (u64, u64)> = HashMap::new();
    for s in &p.samples {
        let node = p
            .stacks
            .get(s.stack as usize)
            .and_then(|&n| of_node.get(n as usize))
            .copied()
            .unwrap_or(NO_NAME);
        let e = sums.entry((s.event, s.thread, node)).or_default();
        e.0 += 1;
        e.1 = e.1.saturating_add(s.period);
    }
    trie.ids = HashMap::new();
    let rank = trie.ranks();
    // (No names: before every path, as an empty slice sorts.)
    let rank_of = |n: u32| rank.get(n as usize).map_or(0, |&r| u64::from(r) + 1);
    let mut keys: Vec<_> = sums.into_iter().collect();
    keys.sort_by_key(|&((event, thread, node), (_, period))| {
        (event, std::cmp::Reverse(period), thread, rank_of(node))
    });
    let totals = p.totals();
    let file = File {
        format: "sear-stacks",
        version: 1,
        events: p
            .events
            .iter()
            .zip(totals)
            .map(|(e, (samples, period))| Event {
                name: e.name.clone(),
                unit: e.unit,
                samples,
                period,
            })
            .collect(),
        threads: p
            .threads
            .iter()
            .map(|t| Thread {
                pid: t.pid,
                tid: t.tid,
                comm: t.comm.clone(),
            })
            .collect(),
        stacks: Stacks { trie: &trie, keys },
    };
    serde_json::to_writer(out, &file).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use profile::export::{Event, Function, Line, Location, Sample};

    /// Stacks of equal weight come in the order of their frame lists as
    /// slices of strings compare them (frames whole: `pick`'s stacks before
    /// `pick2`'s; a stack before the longer stacks it begins); stacks of
    /// different addresses and the same names are one.
    #[test]
    fn equal_weights_in_frame_list_order_and_same_names_merged() {
        let names = ["main", "pick", "pick2", "a", "b"];
        let mut p = ExportProfile {
            events: vec![Event::named("cpu-clock".into())],
            threads: vec![profile::export::Thread {
                pid: 1,
                tid: 1,
                comm: "t".into(),
            }],
            functions: names
                .iter()
                .map(|n| Function {
                    name: (*n).into(),
                    filename: String::new(),
                    dso: String::new(),
                })
                .collect(),
            ..Default::default()
        };
        // Two locations per function (two addresses of each).
        for copy in 0..2u64 {
            for f in 0..names.len() as u32 {
                p.locations.push(Location {
                    address: 0x1000 * copy + u64::from(f),
                    mapping: None,
                    lines: vec![Line {
                        function: f,
                        line: 0,
                    }],
                    kernel: false,
                    file: None,
                });
            }
        }
        let n = names.len() as u32;
        // Leaf first; location f + n is function f's second address.
        let stacks: [&[u32]; 7] = [
            &[3, 1, 0],     // main;pick;a
            &[1, 0],        // main;pick
            &[4, 2, 0],     // main;pick2;b
            &[2, 0],        // main;pick2
            &[3 + n, 1, 0], // main;pick;a again, another address
            &[4, 1, 0],     // main;pick;b
            &[0],           // main
        ];
        for s in stacks {
            let id = p.push_stack(s);
            p.samples.push(Sample {
                time: 0,
                period: 1,
                event: 0,
                thread: 0,
                stack: id,
            });
        }
        let mut out = Vec::new();
        write_json(&mut out, &p).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let got: Vec<(String, u64)> = v["stacks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let frames: Vec<&str> = s["frames"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| f.as_str().unwrap())
                    .collect();
                (frames.join(";"), s["period"].as_u64().unwrap())
            })
            .collect();
        let want: Vec<(String, u64)> = [
            ("main;pick;a", 2),
            ("main", 1),
            ("main;pick", 1),
            ("main;pick;b", 1),
            ("main;pick2", 1),
            ("main;pick2;b", 1),
        ]
        .iter()
        .map(|(s, n)| (s.to_string(), *n))
        .collect();
        assert_eq!(got, want);
    }
}
