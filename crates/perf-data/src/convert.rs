//! A recording rewritten in the other mode, or the same one (perf inject's
//! plumbing).
//!
//! COMPRESSED records are unpacked (their records are written in their
//! place) unless `-z` asks for compression. Between modes, metadata moves
//! the way perf expects it:
//!
//! - pipe → file: HEADER_ATTR records become the attr section, HEADER_FEATURE
//!   records feature sections, HEADER_TRACING_DATA the TRACING_DATA feature.
//!   Other user records (EVENT_UPDATE, ID_INDEX, THREAD_MAP, BUILD_ID, ...)
//!   stay in the data, where perf reads them in file mode too.
//! - file → pipe: the attrs become HEADER_ATTR records and the features
//!   HEADER_FEATURE records (ended by the LAST_FEATURE marker), except
//!   BUILD_ID and TRACING_DATA, which pipe mode carries as HEADER_BUILD_ID
//!   and HEADER_TRACING_DATA records; named events get an EVENT_UPDATE name
//!   record, as `perf record -o -` writes.

use std::fs::File;
use std::io::Write;

use crate::consts::*;
use crate::writer::{feature_map, FeatureMap, FileWriter, PipeWriter};
use crate::{feature, Endian, Error, Meta, RawRecord, Record, RecordReader};

/// A record a rewrite adds (perf inject's build ids): type, misc and the
/// bytes after the 8-byte header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extra {
    pub type_: u32,
    pub misc: u16,
    pub payload: Vec<u8>,
}

/// Adds records to a rewrite: [`Inserter::before`] sees each data record
/// (not attrs or features) and says what to write before it.
pub trait Inserter {
    fn before(&mut self, rec: &Record<'_>, out: &mut Vec<Extra>);
    /// Deliver the kernel's timed records in time order, as perf's ordered
    /// queue does when nothing flushes it before the end (perf inject
    /// `-b`): user records and records without a time (or time 0) go out
    /// as read; the timed ones, sorted (ties in read order), at the end.
    fn ordered(&self) -> bool {
        false
    }
    /// Changes the output's features (file mode) after the last record.
    fn features(&mut self, _meta: &Meta, _features: &mut FeatureMap) {}
    /// Whether `rec` (after [`Inserter::before`] saw it) is left out of the
    /// output.
    fn drops(&mut self, _rec: &Record<'_>) -> bool {
        false
    }
}

/// Why a rewrite stopped: the input could not be read further (what was
/// read is written, and the output is valid), or the output not written.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("reading the input: {0}")]
    Read(#[source] Error),
    #[error(transparent)]
    Write(#[from] Error),
}

/// Hands every record of `reader` but COMPRESSED wrappers (whose records
/// come next) to `write`. A write error is the error; a read error ends the
/// walk and is the inner result, so what was read is still written out.
fn copy_records<'a>(
    reader: &mut RecordReader,
    mut inserter: Option<&mut (dyn Inserter + 'a)>,
    mut write: impl FnMut(&RawRecord<'_>) -> Result<(), Error>,
) -> Result<Result<(), Error>, Error> {
    let mut extra = Vec::new();
    let ordered = inserter.as_ref().is_some_and(|i| i.ordered());
    // (time, type, misc, payload) of the records held for the end.
    let mut queue: Vec<(u64, u32, u16, Vec<u8>)> = Vec::new();
    let deliver = |ins: &mut Option<&mut (dyn Inserter + 'a)>,
                   rec: &Record<'_>,
                   extra: &mut Vec<Extra>,
                   write: &mut dyn FnMut(&RawRecord<'_>) -> Result<(), Error>|
     -> Result<(), Error> {
        if let Some(ins) = ins.as_deref_mut() {
            if !is_meta(rec.raw.type_) {
                ins.before(rec, extra);
                for e in extra.drain(..) {
                    write(&RawRecord {
                        type_: e.type_,
                        misc: e.misc,
                        payload: &e.payload,
                        trailing: &[],
                        offset: rec.raw.offset,
                        from_compressed: false,
                    })?;
                }
                if ins.drops(rec) {
                    return Ok(());
                }
            }
        }
        write(&rec.raw)
    };
    let read_result = loop {
        match reader.next_record() {
            Ok(Some(rec)) if is_wrapper(&rec.raw) => {}
            Ok(Some(rec)) => {
                // (Types from 64 on are user records: never queued.)
                if ordered && rec.raw.type_ < 64 {
                    if let Some(t) = rec.time().filter(|&t| t != 0 && t != u64::MAX) {
                        queue.push((t, rec.raw.type_, rec.raw.misc, rec.raw.payload.to_vec()));
                        continue;
                    }
                }
                deliver(&mut inserter, &rec, &mut extra, &mut write)?
            }
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    if !queue.is_empty() {
        queue.sort_by_key(|q| q.0);
        let meta = reader.meta();
        for (_, type_, misc, payload) in &queue {
            let rec = Record {
                raw: RawRecord {
                    type_: *type_,
                    misc: *misc,
                    payload,
                    trailing: &[],
                    offset: 0,
                    from_compressed: false,
                },
                meta,
            };
            deliver(&mut inserter, &rec, &mut extra, &mut write)?;
        }
    }
    Ok(read_result)
}

/// Records that describe the stream rather than what happened.
fn is_meta(t: u32) -> bool {
    matches!(
        t,
        PERF_RECORD_HEADER_ATTR
            | PERF_RECORD_HEADER_FEATURE
            | PERF_RECORD_HEADER_EVENT_TYPE
            | PERF_RECORD_HEADER_TRACING_DATA
            | PERF_RECORD_EVENT_UPDATE
    )
}

/// Whether a record only wraps others the reader hands out next.
fn is_wrapper(r: &RawRecord<'_>) -> bool {
    !r.from_compressed && (r.type_ == PERF_RECORD_COMPRESSED || r.type_ == PERF_RECORD_COMPRESSED2)
}

/// The tracing data a pipe-mode HEADER_TRACING_DATA record carries: its u32
/// size says how much of the (8-byte padded) trailing bytes is real.
fn tracing_data<'a>(r: &RawRecord<'a>, endian: Endian) -> &'a [u8] {
    let n = r
        .payload
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .map(|b| endian.u32(b) as usize)
        .unwrap_or(0);
    &r.trailing[..n.min(r.trailing.len())]
}

/// Writes the records of `reader` as a file-mode recording (`compress`:
/// zstd level of COMPRESSED records, else none).
pub fn to_file_mode(
    reader: &mut RecordReader,
    out: File,
    compress: Option<i32>,
) -> Result<(), ConvertError> {
    to_file_mode_with(reader, out, compress, None)
}

/// [`to_file_mode`], with records added by `inserter`.
pub fn to_file_mode_with(
    reader: &mut RecordReader,
    out: File,
    compress: Option<i32>,
    inserter: Option<&mut dyn Inserter>,
) -> Result<(), ConvertError> {
    let endian = reader.meta().endian;
    let from_pipe = reader.meta().is_pipe();
    let mut w = FileWriter::create(out, endian, &reader.meta().events)?;
    if let Some(level) = compress {
        w.set_compression(level)?;
    }
    let mut tracing: Option<Vec<u8>> = None;
    // A read error still leaves a valid (partial) file behind.
    let mut inserter = inserter;
    let read_result = copy_records(reader, inserter.as_deref_mut(), |rec| {
        match rec.type_ {
            PERF_RECORD_HEADER_ATTR | PERF_RECORD_HEADER_FEATURE => return Ok(()),
            PERF_RECORD_HEADER_TRACING_DATA if from_pipe => {
                tracing = Some(tracing_data(rec, endian).to_vec());
                return Ok(());
            }
            _ => {}
        }
        w.write_raw(rec)
    })?;
    let meta = reader.meta();
    w.set_events(&meta.events);
    let mut features = output_features(meta);
    if let Some(t) = tracing {
        features.insert(feature::TRACING_DATA, t);
    }
    if let Some(ins) = inserter {
        ins.features(meta, &mut features);
    }
    w.finish(&features)?;
    read_result.map_err(ConvertError::Read)
}

/// The input's features minus the COMPRESSED one (the output's compression
/// is ours to describe).
fn output_features(meta: &Meta) -> FeatureMap {
    let mut f = feature_map(&meta.features);
    f.remove(&feature::COMPRESSED);
    f
}

struct PipeOut<W: Write> {
    w: PipeWriter<W>,
    /// Compression level still to switch on (before the first data record).
    compress: Option<i32>,
}

impl<W: Write> PipeOut<W> {
    fn start_compression(&mut self) -> Result<(), Error> {
        if let Some(level) = self.compress.take() {
            self.w.set_compression(level)?;
        }
        Ok(())
    }
}

/// Writes the records of `reader` as a pipe-mode stream (`compress`:
/// zstd level of COMPRESSED records, else none).
pub fn to_pipe_mode(
    reader: &mut RecordReader,
    out: impl Write,
    compress: Option<i32>,
) -> Result<(), ConvertError> {
    to_pipe_mode_with(reader, out, compress, None)
}

/// [`to_pipe_mode`], with records added by `inserter`.
pub fn to_pipe_mode_with(
    reader: &mut RecordReader,
    out: impl Write,
    compress: Option<i32>,
    inserter: Option<&mut dyn Inserter>,
) -> Result<(), ConvertError> {
    let endian = reader.meta().endian;
    let mut p = PipeOut {
        w: PipeWriter::new(out, endian)?,
        compress,
    };
    if !reader.meta().is_pipe() {
        write_file_meta(&mut p, reader.meta())?;
    }
    let read_result = copy_records(reader, inserter, |rec| {
        match rec.type_ {
            PERF_RECORD_HEADER_FEATURE => {
                let id = rec
                    .payload
                    .get(..8)
                    .and_then(|b| b.try_into().ok())
                    .map(|b| endian.u64(b));
                if id == Some(u64::from(feature::COMPRESSED)) {
                    return Ok(());
                }
                if id == Some(u64::from(crate::writer::LAST_FEATURE)) {
                    p.start_compression()?;
                }
            }
            PERF_RECORD_HEADER_ATTR
            | PERF_RECORD_HEADER_EVENT_TYPE
            | PERF_RECORD_EVENT_UPDATE
            | PERF_RECORD_HEADER_TRACING_DATA => {}
            _ => p.start_compression()?,
        }
        p.w.write_raw(rec)
    })?;
    p.start_compression()?;
    p.w.finish()?;
    read_result.map_err(ConvertError::Read)
}

/// Sends a file-mode recording's attrs and features as pipe-mode records.
fn write_file_meta<W: Write>(p: &mut PipeOut<W>, meta: &Meta) -> Result<(), Error> {
    let endian = meta.endian;
    for e in &meta.events {
        p.w.write_attr(e)?;
    }
    // perf names pipe-mode events from their attrs (adding modifiers such as
    // "H") unless an EVENT_UPDATE names them, as perf record -o - does.
    // perf finds the event by id, or takes the only event for any id.
    let only_one = meta.events.len() == 1;
    for e in &meta.events {
        let id = e.ids.first().copied().or(only_one.then_some(0));
        if let (Some(name), Some(id)) = (&e.name, id) {
            let mut payload = Vec::with_capacity(24 + name.len());
            payload.extend_from_slice(&endian.put_u64(EVENT_UPDATE_NAME));
            payload.extend_from_slice(&endian.put_u64(id));
            payload.extend_from_slice(name.as_bytes());
            payload.resize((payload.len() + 1).div_ceil(8) * 8, 0);
            p.w.write_record(PERF_RECORD_EVENT_UPDATE, 0, &payload, &[])?;
        }
    }
    let features = output_features(meta);
    for (&id, bytes) in &features {
        if id == feature::BUILD_ID || id == feature::TRACING_DATA {
            continue;
        }
        if let Err(e) = p.w.write_feature(id, bytes) {
            let name = feature::name(id).unwrap_or("unknown");
            log::warn!("feature {name} is left out of the pipe-mode output: {e}");
        }
    }
    p.start_compression()?;
    p.w.write_features_end()?;
    if let Some(t) = features.get(&feature::TRACING_DATA) {
        // The record holds the size; the data follows it, padded to 8 bytes.
        let size = u32::try_from(t.len()).map_err(|_| Error::Unwritable {
            what: "the tracing data",
            detail: "larger than 4 GiB".into(),
        })?;
        let mut data = t.clone();
        data.resize(t.len().div_ceil(8) * 8, 0);
        p.w.write_record(
            PERF_RECORD_HEADER_TRACING_DATA,
            0,
            &endian.put_u32(size),
            &data,
        )?;
    }
    if let Some(b) = features.get(&feature::BUILD_ID) {
        write_build_ids(p, b, endian)?;
    }
    Ok(())
}

/// EVENT_UPDATE kind that carries the event's name.
const EVENT_UPDATE_NAME: u64 = 2;

/// The BUILD_ID feature is a run of build_id_event records; pipe mode sends
/// each as a HEADER_BUILD_ID record.
fn write_build_ids<W: Write>(p: &mut PipeOut<W>, b: &[u8], endian: Endian) -> Result<(), Error> {
    let mut pos = 0usize;
    while let Some(h) = b.get(pos..pos + 8) {
        let misc = endian.u16([h[4], h[5]]);
        let size = endian.u16([h[6], h[7]]) as usize;
        let Some(body) = b.get(pos + 8..pos + size).filter(|_| size >= 8) else {
            log::warn!(
                "the BUILD_ID feature is damaged at byte {pos}; later build ids are left out"
            );
            break;
        };
        p.w.write_record(PERF_RECORD_HEADER_BUILD_ID, misc, body, &[])?;
        pos += size;
    }
    Ok(())
}
