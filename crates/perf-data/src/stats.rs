//! Counting records by type, overall and per event (what `perf report --stats` shows).

use crate::consts::*;
use crate::error::Result;
use crate::reader::Record;
use crate::reader::RecordReader;

/// Number of record-type slots counted (perf's PERF_RECORD_HEADER_MAX and beyond).
pub const NR_TYPES: usize = 84;

/// Record counts of one recording.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Count of records by type; index 0 is the total.
    pub nr_events: [u64; NR_TYPES],
    /// Records of types this crate does not know.
    pub nr_unknown_type: u64,
    /// Per event (same order as the file's events): SAMPLE and LOST_SAMPLES records.
    pub per_event: Vec<EventStats>,
    /// Samples whose id matched no event.
    pub nr_unknown_id: u64,
    /// Sum of `lost` over LOST records.
    pub total_lost: u64,
    /// Sum of `lost` over LOST_SAMPLES records.
    pub total_lost_samples: u64,
    /// Sum of periods of all samples.
    pub total_period: u64,
    /// Records whose body could not be decoded: count, first offset and why.
    pub undecodable: Option<(u64, u64, String)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventStats {
    pub samples: u64,
    pub lost_samples_records: u64,
    pub lost_samples: u64,
    pub period: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            nr_events: [0; NR_TYPES],
            nr_unknown_type: 0,
            per_event: Vec::new(),
            nr_unknown_id: 0,
            total_lost: 0,
            total_lost_samples: 0,
            total_period: 0,
            undecodable: None,
        }
    }
}

impl Stats {
    /// Reads every record of `r` (in file order) and counts it.
    pub fn collect(r: &mut RecordReader, mut progress: impl FnMut(u64)) -> Result<Stats> {
        let mut s = Stats::default();
        let mut n = 0u64;
        while let Some(rec) = r.next_record()? {
            s.add(&rec);
            n += 1;
            if n.is_multiple_of(65536) {
                progress(r.position());
            }
        }
        if let Some((count, first_offset, message)) = s.undecodable.clone() {
            let w = r
                .diagnostics_mut()
                .warnings
                .entry("undecodable record")
                .or_insert(crate::Warning {
                    count: 0,
                    first_offset,
                    message,
                });
            w.count += count;
        }
        let nev = r.meta().events.len();
        if s.per_event.len() < nev {
            s.per_event.resize(nev, EventStats::default());
        }
        Ok(s)
    }

    fn note(&mut self, e: crate::Error) {
        match &mut self.undecodable {
            Some((n, _, _)) => *n += 1,
            None => self.undecodable = Some((1, e.offset().unwrap_or(0), e.to_string())),
        }
    }

    /// Counts one record (for callers that walk the records themselves).
    pub fn add(&mut self, rec: &Record<'_>) {
        let s = self;
        let t = rec.raw.type_ as usize;
        s.nr_events[0] += 1;
        if t < NR_TYPES && is_known_record_type(t as u32) {
            s.nr_events[t] += 1;
        } else {
            s.nr_unknown_type += 1;
        }
        let meta = rec.meta;
        if s.per_event.len() < meta.events.len() {
            s.per_event.resize(meta.events.len(), EventStats::default());
        }
        match rec.raw.type_ {
            PERF_RECORD_SAMPLE => match meta.event_of_sample(rec.raw.payload) {
                Some(ev) => {
                    let attr = &meta.events[ev].attr;
                    if attr.sample_type & PERF_SAMPLE_READ == 0 {
                        // Decode fully so damaged samples are counted, but
                        // only the period is kept.
                        let p =
                            match crate::Sample::check_period(rec.raw.payload, attr, meta.endian) {
                                Ok(p) => p.unwrap_or(1),
                                Err(e) => {
                                    s.note(e.at_record(rec.raw.offset, rec.raw.type_));
                                    crate::sample::period_of(rec.raw.payload, attr, meta.endian)
                                        .unwrap_or(1)
                                }
                            };
                        // Periods come from the file: sum them as perf does
                        // (a u64 that wraps), never panic on overflow.
                        s.per_event[ev].samples += 1;
                        s.per_event[ev].period = s.per_event[ev].period.wrapping_add(p);
                        s.total_period = s.total_period.wrapping_add(p);
                    } else {
                        match rec.sample() {
                            // Like perf, a sample carrying counter values is
                            // delivered once per value, to the value's event.
                            Ok(sample) => {
                                for v in sample.read.iter().flat_map(|r| r.values()) {
                                    match meta.event_of_id(v.id) {
                                        Some(e) => s.per_event[e].samples += 1,
                                        None => s.nr_unknown_id += 1,
                                    }
                                }
                            }
                            Err(e) => {
                                s.per_event[ev].samples += 1;
                                s.note(e);
                            }
                        }
                    }
                }
                None => s.nr_unknown_id += 1,
            },
            PERF_RECORD_LOST_SAMPLES => {
                if let Some(ev) = meta.event_of_other(rec.raw.payload) {
                    s.per_event[ev].lost_samples_records += 1;
                    match rec.decode() {
                        Ok((crate::RecordData::LostSamples { lost }, _)) => {
                            s.per_event[ev].lost_samples =
                                s.per_event[ev].lost_samples.wrapping_add(lost);
                            s.total_lost_samples = s.total_lost_samples.wrapping_add(lost);
                        }
                        Ok(_) => {}
                        Err(e) => s.note(e),
                    }
                }
            }
            PERF_RECORD_LOST => match rec.decode() {
                Ok((crate::RecordData::Lost { lost, .. }, _)) => {
                    s.total_lost = s.total_lost.wrapping_add(lost);
                }
                Ok(_) => {}
                Err(e) => s.note(e),
            },
            _ => {}
        }
    }

    /// Makes room for every event of `meta` (events without records count zero).
    pub fn cover(&mut self, meta: &crate::Meta) {
        if self.per_event.len() < meta.events.len() {
            self.per_event
                .resize(meta.events.len(), EventStats::default());
        }
    }
}
