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
    profiles: Vec<Profile<'a>>,
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
struct Profile<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u64,
    #[serde(rename = "endValue")]
    end_value: u64,
    samples: SampleStacks<'a>,
    weights: Vec<u64>,
}

/// A profile's samples' stacks (frame ids, root first), written from the
/// export's stacks sample by sample.
struct SampleStacks<'a> {
    p: &'a ExportProfile,
    loc_frames: &'a [Vec<u32>],
    stacks: Vec<u32>,
}

impl Serialize for SampleStacks<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.stacks.len()))?;
        let mut locs = Vec::new();
        let mut frames: Vec<u32> = Vec::new();
        for &stack in &self.stacks {
            self.p.stack_root_first(stack, &mut locs);
            frames.clear();
            for &l in &locs {
                frames.extend(self.loc_frames.get(l as usize).into_iter().flatten());
            }
            seq.serialize_element(&frames)?;
        }
        seq.end()
    }
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
    // A profile per (event, thread) with samples.
    let mut profiles = Vec::new();
    for ((ev, t), indexes) in p.samples_by_track() {
        let (e, th) = (&p.events[ev as usize], &p.threads[t as usize]);
        let stacks: Vec<u32> = indexes
            .iter()
            .map(|&i| p.samples[i as usize].stack)
            .collect();
        let weights: Vec<u64> = indexes
            .iter()
            .map(|&i| p.samples[i as usize].period)
            .collect();
        let samples = SampleStacks {
            p,
            loc_frames: &loc_frames,
            stacks,
        };
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
