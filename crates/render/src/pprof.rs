//! pprof's profile.proto, gzipped: what `go tool pprof` and the pprof web
//! UI read. The messages are written by hand after
//! github.com/google/pprof/proto/profile.proto (same field numbers).
//!
//! Two sample values per event: the number of samples and the summed
//! period (`samples/count` and `cpu-clock/nanoseconds` for one event; with
//! several, `EVENT-samples/count` and `EVENT/UNIT`, a sample of one event
//! has zeros in the others' values). Locations carry their inline frames
//! as `line` lists, innermost first; mappings their build ids; samples the
//! labels `comm`, `pid` and `tid`.

use std::collections::HashMap;
use std::io::{self, Write};

use profile::export::ExportProfile;

/// `perftools.profiles.Profile`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Profile {
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueType {
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(int64, tag = "2")]
    pub str: i64,
    #[prost(int64, tag = "3")]
    pub num: i64,
    #[prost(int64, tag = "4")]
    pub num_unit: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Mapping {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    #[prost(int64, tag = "5")]
    pub filename: i64,
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    #[prost(uint64, tag = "3")]
    pub address: u64,
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    #[prost(int64, tag = "2")]
    pub line: i64,
    #[prost(int64, tag = "3")]
    pub column: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "2")]
    pub name: i64,
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    #[prost(int64, tag = "4")]
    pub filename: i64,
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

/// The string table: index 0 is "" as pprof requires.
struct Strings {
    table: Vec<String>,
    ids: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut s = Strings {
            table: Vec::new(),
            ids: HashMap::new(),
        };
        s.id("");
        s
    }

    fn id(&mut self, v: &str) -> i64 {
        if let Some(&i) = self.ids.get(v) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(v.to_owned());
        self.ids.insert(v.to_owned(), i);
        i
    }
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The pprof message of `p` (not yet encoded), its samples given to
/// `on_sample` one by one, in order, as they are made (the profile
/// returned has none).
fn profile_with(p: &ExportProfile, on_sample: &mut dyn FnMut(Sample)) -> Profile {
    let mut st = Strings::new();
    let one = p.events.len() == 1;
    let mut sample_type = Vec::new();
    for e in &p.events {
        let (samples, values) = if one {
            ("samples".to_owned(), e.name.clone())
        } else {
            (format!("{}-samples", e.name), e.name.clone())
        };
        sample_type.push(ValueType {
            r#type: st.id(&samples),
            unit: st.id("count"),
        });
        sample_type.push(ValueType {
            r#type: st.id(&values),
            unit: st.id(e.unit),
        });
    }
    let function: Vec<Function> = p
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| Function {
            id: i as u64 + 1,
            name: st.id(&f.name),
            system_name: st.id(&f.name),
            filename: st.id(&f.filename),
            start_line: 0,
        })
        .collect();
    let mut has_lines = vec![(false, false, false); p.mappings.len()];
    let mut location: Vec<Location> = p
        .locations
        .iter()
        .enumerate()
        .map(|(i, l)| {
            if let Some(h) = l.mapping.and_then(|m| has_lines.get_mut(m as usize)) {
                h.0 |= l
                    .lines
                    .iter()
                    .any(|ln| !p.functions[ln.function as usize].filename.is_empty());
                h.1 |= l.lines.iter().any(|ln| ln.line != 0);
                h.2 |= l.lines.len() > 1;
            }
            Location {
                id: i as u64 + 1,
                mapping_id: 0,
                address: l.address,
                line: l
                    .lines
                    .iter()
                    .map(|ln| Line {
                        function_id: u64::from(ln.function) + 1,
                        line: i64::from(ln.line),
                        column: 0,
                    })
                    .collect(),
                is_folded: false,
            }
        })
        .collect();
    // (Mapping ids are set below, once the mappings are ordered.)
    // pprof takes the first mapping for the main binary: the mappings by
    // how many samples have their leaf there, user space first.
    let mut leaf_samples = vec![0u64; p.mappings.len()];
    for s in &p.samples {
        let leaf = p.stack(s.stack).next();
        let m = leaf.and_then(|l| p.locations[l as usize].mapping);
        if let Some(c) = m.and_then(|m| leaf_samples.get_mut(m as usize)) {
            *c += 1;
        }
    }
    let mut order: Vec<usize> = (0..p.mappings.len()).collect();
    order.sort_by_key(|&m| (p.mappings[m].kernel, std::cmp::Reverse(leaf_samples[m]), m));
    let mut mapping_id = vec![0u64; p.mappings.len()];
    for (pos, &m) in order.iter().enumerate() {
        mapping_id[m] = pos as u64 + 1;
    }
    let mapping: Vec<Mapping> = order
        .iter()
        .map(|&i| {
            let m = &p.mappings[i];
            let (n, l, inl) = has_lines[i];
            Mapping {
                id: mapping_id[i],
                memory_start: m.start,
                memory_limit: m.limit,
                file_offset: m.file_offset,
                filename: st.id(&m.filename),
                build_id: st.id(m.build_id.as_deref().unwrap_or("")),
                // Symbolized by sear: pprof need not look for the binaries
                // (those without symbols would not do better there).
                has_functions: true,
                has_filenames: n,
                has_line_numbers: l,
                has_inline_frames: inl,
            }
        })
        .collect();
    for (loc, l) in location.iter_mut().zip(&p.locations) {
        loc.mapping_id = l.mapping.map_or(0, |m| mapping_id[m as usize]);
    }
    // Samples summed by (stack, thread, event).
    let nvalues = 2 * p.events.len();
    let mut sums: HashMap<(u32, u32, u32), (u64, u64)> = HashMap::new();
    let mut order = Vec::new();
    for s in &p.samples {
        let e = sums.entry((s.stack, s.thread, s.event)).or_insert_with(|| {
            order.push((s.stack, s.thread, s.event));
            (0, 0)
        });
        e.0 += 1;
        e.1 = e.1.saturating_add(s.period);
    }
    let (k_comm, k_pid, k_tid) = (st.id("comm"), st.id("pid"), st.id("tid"));
    for key @ &(stack, thread, event) in &order {
        let (n, period) = sums[key];
        let mut value = vec![0i64; nvalues];
        value[2 * event as usize] = clamp(n);
        value[2 * event as usize + 1] = clamp(period);
        let t = &p.threads[thread as usize];
        on_sample(Sample {
            location_id: p.stack(stack).map(|l| u64::from(l) + 1).collect(),
            value,
            label: vec![
                Label {
                    key: k_comm,
                    str: st.id(&t.comm),
                    ..Default::default()
                },
                Label {
                    key: k_pid,
                    num: i64::from(t.pid),
                    ..Default::default()
                },
                Label {
                    key: k_tid,
                    num: i64::from(t.tid),
                    ..Default::default()
                },
            ],
        });
    }
    let period_type = p.events.first().map(|e| ValueType {
        r#type: st.id(&e.name),
        unit: st.id(e.unit),
    });
    let default_sample_type = if p.events.is_empty() {
        0
    } else {
        sample_type[1].r#type
    };
    Profile {
        sample_type,
        sample: Vec::new(),
        mapping,
        location,
        function,
        string_table: st.table,
        drop_frames: 0,
        keep_frames: 0,
        time_nanos: p
            .wall_start_ns
            .and_then(|t| i64::try_from(t).ok())
            .unwrap_or(0),
        duration_nanos: p.time_range.map_or(0, |(a, b)| clamp(b - a)),
        period_type,
        period: 0,
        comment: Vec::new(),
        default_sample_type,
    }
}

/// Writes `p` as a gzipped profile.proto. Each sample is encoded as it is
/// made (the message's fields go out in tag order: the sample types, the
/// samples, then the rest), so no sample is kept as a message.
pub fn write_pprof<W: Write>(out: W, p: &ExportProfile) -> io::Result<()> {
    use prost::Message;
    let mut samples = Vec::new();
    let mut rest = profile_with(p, &mut |s| {
        prost::encoding::message::encode(2, &s, &mut samples);
    });
    let head = Profile {
        sample_type: std::mem::take(&mut rest.sample_type),
        ..Profile::default()
    };
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    gz.write_all(&head.encode_to_vec())?;
    gz.write_all(&samples)?;
    drop(samples);
    gz.write_all(&rest.encode_to_vec())?;
    gz.finish()?;
    Ok(())
}
