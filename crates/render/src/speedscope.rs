//! speedscope's file format (https://www.speedscope.app/file-format-schema.json):
//! one `sampled` profile per thread and event, its samples in time order
//! as frame-index stacks (root first) with their periods as weights.

use std::io::{self, Write};

use profile::export::ExportProfile;
use serde::Serialize;

#[derive(Serialize)]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    shared: Shared,
    profiles: Vec<Profile>,
    name: &'a str,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: usize,
    exporter: String,
}

#[derive(Serialize)]
struct Shared {
    frames: Vec<Frame>,
}

#[derive(Serialize)]
struct Frame {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
}

#[derive(Serialize)]
struct Profile {
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u64,
    #[serde(rename = "endValue")]
    end_value: u64,
    samples: Vec<Vec<u32>>,
    weights: Vec<u64>,
}

/// Writes `p` as a speedscope file named `name`.
pub fn write_speedscope<W: Write>(out: W, p: &ExportProfile, name: &str) -> io::Result<()> {
    // Frames: one per function, one per location without symbols.
    let mut frames: Vec<Frame> = p
        .functions
        .iter()
        .map(|f| Frame {
            name: f.name.clone(),
            file: (!f.filename.is_empty()).then(|| f.filename.clone()),
        })
        .collect();
    // Per location, its frames root-most first.
    let loc_frames: Vec<Vec<u32>> = (0..p.locations.len() as u32)
        .map(|l| {
            let loc = &p.locations[l as usize];
            if loc.lines.is_empty() {
                let name = p.frame_names(l).pop().unwrap_or_default();
                frames.push(Frame { name, file: None });
                vec![(frames.len() - 1) as u32]
            } else {
                loc.lines.iter().rev().map(|ln| ln.function).collect()
            }
        })
        .collect();
    let stacks: Vec<Vec<u32>> = (0..p.stacks.len() as u32)
        .map(|s| {
            let locs: Vec<u32> = p.stack(s).collect();
            locs.iter()
                .rev()
                .flat_map(|&l| loc_frames[l as usize].iter().copied())
                .collect()
        })
        .collect();
    let mut profiles = Vec::new();
    for (ev, e) in p.events.iter().enumerate() {
        for (t, th) in p.threads.iter().enumerate() {
            let mut samples = Vec::new();
            let mut weights = Vec::new();
            for s in p
                .samples
                .iter()
                .filter(|s| s.event as usize == ev && s.thread as usize == t)
            {
                samples.push(stacks[s.stack as usize].clone());
                weights.push(s.period);
            }
            if samples.is_empty() {
                continue;
            }
            let total = weights.iter().fold(0u64, |a, &w| a.saturating_add(w));
            let event = if p.events.len() > 1 {
                format!(" {}", e.name)
            } else {
                String::new()
            };
            profiles.push(Profile {
                kind: "sampled",
                name: format!("{} (pid {}, tid {}){event}", th.comm, th.pid, th.tid),
                unit: if e.unit == "nanoseconds" {
                    "nanoseconds"
                } else {
                    "none"
                },
                start_value: 0,
                end_value: total,
                samples,
                weights,
            });
        }
    }
    let file = File {
        schema: "https://www.speedscope.app/file-format-schema.json",
        shared: Shared { frames },
        profiles,
        name,
        active_profile_index: 0,
        exporter: format!("sear {}", env!("CARGO_PKG_VERSION")),
    };
    serde_json::to_writer(out, &file).map_err(io::Error::other)
}
