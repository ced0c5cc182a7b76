//! What a recording says about itself: byte order, events and their ids,
//! feature sections. Built from the file header or from pipe-mode records.

use std::collections::BTreeMap;

use crate::attr::{Event, EventAttr};
use crate::bytes::{Cursor, Endian};
use crate::consts::*;
use crate::error::{Error, ParseError};
use crate::features::Features;
use crate::header::{FileHeader, Kind};
use crate::records::{has_trailer, parse_record, RecordData, SampleId};
use crate::sample::Sample;

/// Metadata of a recording; grows while a pipe-mode stream is read.
#[derive(Debug, Clone)]
pub struct Meta {
    pub kind: Kind,
    pub endian: Endian,
    /// The file header (file mode only).
    pub header: Option<FileHeader>,
    pub events: Vec<Event>,
    pub features: Features,
    /// Sample id → event index. A map, not a vector re-sorted per event:
    /// pipe-mode streams add events one record at a time.
    ids: BTreeMap<u64, usize>,
    /// Events by config not yet named by a HEADER_EVENT_TYPE record.
    by_config: BTreeMap<u64, Vec<usize>>,
}

impl Meta {
    pub(crate) fn new(kind: Kind, endian: Endian) -> Self {
        Meta {
            kind,
            endian,
            header: None,
            events: Vec::new(),
            features: Features {
                endian,
                ..Default::default()
            },
            ids: BTreeMap::new(),
            by_config: BTreeMap::new(),
        }
    }

    pub fn is_pipe(&self) -> bool {
        self.kind == Kind::Pipe
    }

    pub(crate) fn add_event(&mut self, attr: EventAttr, ids: Vec<u64>) {
        let idx = self.events.len();
        for &id in &ids {
            // A repeated id belongs to the event added last, as in perf's id hash.
            self.ids.insert(id, idx);
        }
        self.by_config.entry(attr.config).or_default().push(idx);
        self.events.push(Event {
            attr,
            ids,
            name: None,
        });
    }

    /// Applies names from the EVENT_DESC feature (matched by id, else by position).
    pub(crate) fn apply_event_desc(&mut self) {
        let Some(descs) = self.features.event_desc() else {
            return;
        };
        for (i, d) in descs.iter().enumerate() {
            let by_id = d.ids.first().and_then(|id| self.lookup(*id));
            let idx = by_id.or(if i < self.events.len() { Some(i) } else { None });
            if let Some(idx) = idx {
                if self.events[idx].name.is_none() {
                    self.events[idx].name = Some(d.name.clone());
                }
            }
        }
    }

    pub(crate) fn set_name_by_id(&mut self, id: u64, name: String) {
        if let Some(i) = self.lookup(id) {
            self.events[i].name = Some(name);
        }
    }

    /// Names events from HEADER_EVENT_TYPE-style (config, name) pairs.
    pub(crate) fn set_name_by_config(&mut self, config: u64, name: String) {
        // Each event is visited by the first record naming its config only:
        // scanning all events per record went quadratic on long streams.
        for idx in self.by_config.remove(&config).unwrap_or_default() {
            let e = &mut self.events[idx];
            if e.name.is_none() {
                e.name = Some(name.clone());
            }
        }
    }

    fn lookup(&self, id: u64) -> Option<usize> {
        self.ids.get(&id).copied()
    }

    /// The event a record with sample id `id` belongs to, as perf decides it:
    /// the only event, or the first for id 0, or the one listing the id.
    pub fn event_of_id(&self, id: Option<u64>) -> Option<usize> {
        if self.events.len() <= 1 {
            return if self.events.is_empty() {
                None
            } else {
                Some(0)
            };
        }
        match id {
            None | Some(0) => Some(0),
            Some(id) => self.lookup(id),
        }
    }

    fn first_attr(&self) -> Option<&EventAttr> {
        self.events.first().map(|e| &e.attr)
    }

    /// Event index of a SAMPLE payload (None: unknown sample id).
    pub fn event_of_sample(&self, payload: &[u8]) -> Option<usize> {
        if self.events.len() <= 1 {
            return self.event_of_id(None);
        }
        let pos = self.first_attr()?.sample_id_pos()?;
        let id = word(payload, pos * 8, self.endian);
        self.event_of_id(id)
    }

    /// Event index of a non-sample kernel record via its trailer id; falls
    /// back to the first event, whose trailer layout perf requires all share.
    pub fn event_of_other(&self, payload: &[u8]) -> Option<usize> {
        let first = self.first_attr()?;
        if self.events.len() == 1 {
            return Some(0);
        }
        let id = first.trailer_id_pos().and_then(|p| {
            let at = payload.len().checked_sub(p * 8)?;
            word(payload, at, self.endian)
        });
        Some(self.event_of_id(id).unwrap_or(0))
    }

    /// Timestamp of a record (for ordering), if it has one.
    pub fn record_time(&self, type_: u32, payload: &[u8]) -> Option<u64> {
        if type_ == PERF_RECORD_SAMPLE {
            let ev = self.event_of_sample(payload)?;
            let st = self.events[ev].attr.sample_type;
            if st & PERF_SAMPLE_TIME == 0 {
                return None;
            }
            let mut at = 0;
            for b in [PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID] {
                if st & b != 0 {
                    at += 8;
                }
            }
            word(payload, at, self.endian)
        } else if has_trailer(type_) {
            let ev = self.event_of_other(payload)?;
            let a = &self.events[ev].attr;
            let st = a.sample_type;
            if !a.sample_id_all() || st & PERF_SAMPLE_TIME == 0 {
                return None;
            }
            let start = payload.len().checked_sub(a.trailer_size())?;
            let at = start + if st & PERF_SAMPLE_TID != 0 { 8 } else { 0 };
            word(payload, at, self.endian)
        } else {
            None
        }
    }

    /// Decodes a SAMPLE record payload.
    pub fn parse_sample<'a>(&self, misc: u16, payload: &'a [u8]) -> Result<Sample<'a>, ParseError> {
        let ev = self.event_of_sample(payload).ok_or(ParseError {
            what: "sample id (matches no event in the header)",
            pos: 0,
        })?;
        Sample::parse(payload, misc, &self.events[ev].attr, ev, self.endian)
    }

    /// Decodes a non-sample record and its sample_id trailer.
    pub fn parse_other<'a>(
        &self,
        type_: u32,
        misc: u16,
        payload: &'a [u8],
    ) -> Result<(RecordData<'a>, SampleId), ParseError> {
        let (sid, body, read_format) = if has_trailer(type_) {
            match self.event_of_other(payload) {
                Some(ev) => {
                    let a = &self.events[ev].attr;
                    let (sid, body) = SampleId::parse(payload, a, self.endian)?;
                    (sid, body, a.read_format)
                }
                None => (SampleId::default(), payload, 0),
            }
        } else {
            (SampleId::default(), payload, 0)
        };
        Ok((
            parse_record(type_, misc, body, self.endian, read_format)?,
            sid,
        ))
    }

    /// Handles a metadata record of a pipe-mode stream (attrs, names, features).
    pub(crate) fn absorb(&mut self, type_: u32, payload: &[u8], offset: u64) -> Result<(), Error> {
        let e = |p: ParseError| p.at_record(offset, type_);
        match type_ {
            PERF_RECORD_HEADER_ATTR => {
                let attr = EventAttr::parse(payload, self.endian).map_err(e)?;
                let asz = if attr.size == 0 {
                    64
                } else {
                    attr.size as usize
                };
                let ids = payload
                    .get(asz..)
                    .map(|b| Cursor::new(b, self.endian))
                    .map(|mut c| {
                        let n = c.remaining() / 8;
                        c.u64_array(n as u64, "ids").map(|a| a.iter().collect())
                    })
                    .transpose()
                    .map_err(e)?
                    .unwrap_or_default();
                self.add_event(attr, ids);
            }
            PERF_RECORD_HEADER_EVENT_TYPE => {
                if let RecordData::HeaderEventType { event_id, name } =
                    parse_record(type_, 0, payload, self.endian, 0).map_err(e)?
                {
                    self.set_name_by_config(event_id, String::from_utf8_lossy(name).into_owned());
                }
            }
            PERF_RECORD_EVENT_UPDATE => {
                let mut c = Cursor::new(payload, self.endian);
                let kind = c.u64("event update type").map_err(e)?;
                let id = c.u64("event update id").map_err(e)?;
                const PERF_EVENT_UPDATE_NAME: u64 = 2;
                if kind == PERF_EVENT_UPDATE_NAME {
                    let name =
                        String::from_utf8_lossy(crate::bytes::until_nul(c.rest())).into_owned();
                    self.set_name_by_id(id, name);
                }
            }
            PERF_RECORD_HEADER_FEATURE => {
                let mut c = Cursor::new(payload, self.endian);
                let feat = c.u64("feat_id").map_err(e)?;
                if let Ok(feat) = u32::try_from(feat) {
                    self.features.sections.insert(
                        feat,
                        crate::features::FeatureData {
                            offset,
                            bytes: c.rest().to_vec(),
                        },
                    );
                    if feat == crate::consts::feature::EVENT_DESC {
                        self.apply_event_desc();
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn word(b: &[u8], at: usize, endian: Endian) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    Some(endian.u64(s.try_into().ok()?))
}
