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
struct File {
    format: &'static str,
    version: u32,
    events: Vec<Event>,
    threads: Vec<Thread>,
    stacks: Vec<Stack>,
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
struct Stack {
    event: u32,
    thread: u32,
    frames: Vec<String>,
    samples: u64,
    period: u64,
}

/// Writes `p`'s stacks summed by (event, thread, stack), heaviest first.
pub fn write_json<W: Write>(out: W, p: &ExportProfile) -> io::Result<()> {
    // Different addresses with the same names are one stack here.
    let names: Vec<Vec<String>> = (0..p.stacks.len() as u32)
        .map(|s| {
            let locs: Vec<u32> = p.stack(s).collect();
            locs.iter()
                .rev()
                .flat_map(|&l| p.frame_names(l).into_iter().rev())
                .collect()
        })
        .collect();
    let mut sums: HashMap<(u32, u32, &[String]), (u64, u64)> = HashMap::new();
    for s in &p.samples {
        let e = sums
            .entry((s.event, s.thread, names[s.stack as usize].as_slice()))
            .or_default();
        e.0 += 1;
        e.1 = e.1.saturating_add(s.period);
    }
    let mut keys: Vec<_> = sums.keys().copied().collect();
    keys.sort_by(|a, b| {
        (a.0, std::cmp::Reverse(sums[a].1), a.1, a.2).cmp(&(
            b.0,
            std::cmp::Reverse(sums[b].1),
            b.1,
            b.2,
        ))
    });
    let stacks = keys
        .into_iter()
        .map(|k @ (event, thread, frames)| {
            let (samples, period) = sums[&k];
            Stack {
                event,
                thread,
                frames: frames.to_vec(),
                samples,
                period,
            }
        })
        .collect();
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
        stacks,
    };
    serde_json::to_writer(out, &file).map_err(io::Error::other)
}
