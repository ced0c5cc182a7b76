//! Writing perf.data files that perf reads (file mode and pipe mode).
//!
//! Both writers stream: records go to the output as they are given (through
//! a buffer, or through a bounded zstd batch when compression is on), so
//! memory stays bounded however long a recording runs.
//!
//! File layout written by [`FileWriter`]:
//!
//! ```text
//! header (104 bytes) | attr entries | id arrays | data ... | feature table | feature bodies [| attrs again]
//! ```
//!
//! The attrs are written first so that a file whose writer never reached
//! [`FileWriter::finish`] (a killed recorder) still has its events and a data
//! size of 0, which perf and our reader treat as "read to the end of the file".
//! `finish` only appends the feature sections and rewrites the header; if the
//! events changed after creation their attrs are appended again at the end
//! and the header points there.

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};

use crate::attr::{Event, EventAttr, PERF_ATTR_SIZE_VER0};
use crate::bytes::Endian;
use crate::consts::*;
use crate::error::{Error, Result};
use crate::features::Features;
use crate::header::{FILE_HEADER_SIZE, PERF_MAGIC2, PIPE_HEADER_SIZE};
use crate::records::RawRecord;

mod compress;
use compress::Compressor;

/// Largest record the 16-bit size field can describe.
pub const MAX_RECORD_SIZE: usize = u16::MAX as usize;

/// Decompressed bytes one COMPRESSED record may hold at most. perf sizes its
/// decompression buffer from the COMPRESSED feature's `mmap_len`, so every
/// batch stays below what we declare there.
pub const COMPRESS_MMAP_LEN: usize = 512 << 10;

/// perf's id of zstd in the COMPRESSED feature.
const COMP_TYPE_ZSTD: u32 = 1;

/// Feature sections by id: the raw bytes each section holds.
pub type FeatureMap = BTreeMap<u32, Vec<u8>>;

/// The feature sections of a recording as a [`FeatureMap`], without the
/// pipe-mode end marker (HEADER_LAST_FEATURE) and ids the bitmap cannot hold.
pub fn feature_map(f: &Features) -> FeatureMap {
    f.sections
        .iter()
        .filter(|(&id, _)| id != feature::RESERVED && id < feature::BITS && id != LAST_FEATURE)
        .map(|(&id, d)| (id, d.bytes.clone()))
        .collect()
}

/// The feature id perf sends last in a pipe-mode stream to end the features.
pub const LAST_FEATURE: u32 = feature::LAST_FEATURE;

/// Bytes of the COMPRESSED feature section: version, type, level, ratio, mmap_len.
pub fn compressed_feature(endian: Endian, level: u32, ratio: u32, mmap_len: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity(20);
    for x in [0, COMP_TYPE_ZSTD, level, ratio, mmap_len] {
        v.extend_from_slice(&endian.put_u32(x));
    }
    v
}

/// The 8-byte header of a record with a payload of `payload_len` bytes.
fn record_header(endian: Endian, type_: u32, misc: u16, payload_len: usize) -> Result<[u8; 8]> {
    let size = payload_len
        .checked_add(8)
        .filter(|&s| s <= MAX_RECORD_SIZE)
        .ok_or_else(|| Error::Unwritable {
            what: "record",
            detail: format!(
                "a {} record of {} bytes is larger than a record can be ({MAX_RECORD_SIZE} bytes)",
                record_type_name(type_),
                payload_len.saturating_add(8)
            ),
        })?;
    let mut h = [0u8; 8];
    h[..4].copy_from_slice(&endian.put_u32(type_));
    h[4..6].copy_from_slice(&endian.put_u16(misc));
    // The filter above proves the size fits in u16.
    h[6..].copy_from_slice(&endian.put_u16(size as u16));
    Ok(h)
}

/// The records part both writers share: buffered output that knows its
/// position, the byte order and the compressor. [`FileWriter`] and
/// [`PipeWriter`] dereference to it, so records are written the same way
/// into both.
pub struct Records<W: Write> {
    out: Out<W>,
    endian: Endian,
    compressor: Option<Compressor>,
}

impl<W: Write> Records<W> {
    fn new(out: Out<W>, endian: Endian) -> Self {
        Records {
            out,
            endian,
            compressor: None,
        }
    }

    /// Appends one record: `payload` is everything after the 8-byte header,
    /// `trailing` data that follows the record outside its size (AUXTRACE).
    pub fn write_record(
        &mut self,
        type_: u32,
        misc: u16,
        payload: &[u8],
        trailing: &[u8],
    ) -> Result<()> {
        // Into the compressor's batch when there is one and the record may
        // be compressed, else as is (after flushing the batch, so records
        // keep their order).
        match &mut self.compressor {
            Some(c) if compressible(type_, trailing) => {
                c.push(&mut self.out, self.endian, type_, misc, payload)
            }
            _ => {
                self.flush_compressed()?;
                self.out.record(self.endian, type_, misc, payload, trailing)
            }
        }
    }

    /// Appends a record as the reader handed it out.
    pub fn write_raw(&mut self, r: &RawRecord<'_>) -> Result<()> {
        self.write_record(r.type_, r.misc, r.payload, r.trailing)
    }

    /// (uncompressed, compressed) bytes of the records compressed so far,
    /// with compression on; records still batched are not counted yet.
    pub fn compression_totals(&self) -> Option<(u64, u64)> {
        self.compressor.as_ref().map(|c| (c.bytes_in, c.bytes_out))
    }

    /// File offset where the next uncompressed byte goes.
    pub fn position(&self) -> u64 {
        self.out.pos
    }

    fn flush_compressed(&mut self) -> Result<()> {
        match &mut self.compressor {
            Some(c) => c.flush(&mut self.out, self.endian),
            None => Ok(()),
        }
    }

    /// Flushes and returns the output.
    fn into_inner(mut self) -> Result<W> {
        self.flush_compressed()?;
        self.out.flush()?;
        let end = self.out.pos;
        self.out.w.into_inner().map_err(|e| Error::Io {
            offset: end,
            source: e.into_error(),
        })
    }
}

/// Buffered output that knows its position, so I/O errors name an offset.
struct Out<W: Write> {
    w: BufWriter<W>,
    pos: u64,
}

impl<W: Write> Out<W> {
    fn new(w: W, pos: u64) -> Self {
        Out {
            w: BufWriter::with_capacity(256 << 10, w),
            pos,
        }
    }
    fn put(&mut self, b: &[u8]) -> Result<()> {
        self.w.write_all(b).map_err(|source| Error::Io {
            offset: self.pos,
            source,
        })?;
        self.pos += b.len() as u64;
        Ok(())
    }
    fn record(
        &mut self,
        endian: Endian,
        type_: u32,
        misc: u16,
        payload: &[u8],
        trailing: &[u8],
    ) -> Result<()> {
        let h = record_header(endian, type_, misc, payload.len())?;
        self.put(&h)?;
        self.put(payload)?;
        self.put(trailing)
    }
    fn flush(&mut self) -> Result<()> {
        self.w.flush().map_err(|source| Error::Io {
            offset: self.pos,
            source,
        })
    }
}

/// Whether a record may go inside a COMPRESSED record: what perf itself
/// compresses, kernel records from the ring buffers. User records stay
/// outside so that metadata and round boundaries are where perf expects them.
fn compressible(type_: u32, trailing: &[u8]) -> bool {
    type_ < PERF_RECORD_HEADER_ATTR && trailing.is_empty()
}

/// The attr bytes of one event in a file's attr section: every entry must
/// have the same size there, so smaller (older) attrs are widened; the new
/// fields are zero, which means "not used" for every one of them.
fn encode_attr_sized(attr: &EventAttr, size: u32, endian: Endian) -> Vec<u8> {
    let mut a = attr.clone();
    a.size = size;
    a.encode(endian)
}

/// Largest attr perf 6.1 accepts in a file's attr section (it rejects
/// bigger ones as "a more recent ABI" there, though not in pipe mode).
const FILE_ATTR_SIZE_PERF61: u32 = 128;

/// The attr size the file's entries get: the largest the events use, but
/// no larger than perf 6.1 reads when the fields beyond that are all zero
/// (a zero field and a missing one mean the same).
fn attr_size_of(events: &[Event]) -> u32 {
    events
        .iter()
        .map(|e| {
            let size = if e.attr.size == 0 {
                PERF_ATTR_SIZE_VER0
            } else {
                e.attr.size
            };
            if size > FILE_ATTR_SIZE_PERF61 && e.attr.config3 == 0 {
                FILE_ATTR_SIZE_PERF61
            } else {
                size
            }
        })
        .max()
        .unwrap_or(PERF_ATTR_SIZE_VER0)
        .max(PERF_ATTR_SIZE_VER0)
}

/// The attr section (entries then id arrays) as it sits at file offset `base`.
/// Returns the bytes, the entry size and the size of the entries alone.
fn attr_block(events: &[Event], endian: Endian, base: u64) -> (Vec<u8>, u64, u64) {
    let asz = attr_size_of(events);
    let entry = u64::from(asz) + 16;
    let entries = entry * events.len() as u64;
    let mut v = Vec::new();
    let mut ids_at = base + entries;
    for e in events {
        v.extend_from_slice(&encode_attr_sized(&e.attr, asz, endian));
        let n = e.ids.len() as u64 * 8;
        v.extend_from_slice(&endian.put_u64(if n == 0 { 0 } else { ids_at }));
        v.extend_from_slice(&endian.put_u64(n));
        ids_at += n;
    }
    for e in events {
        for &id in &e.ids {
            v.extend_from_slice(&endian.put_u64(id));
        }
    }
    (v, entry, entries)
}

struct HeaderFields {
    attr_size: u64,
    attrs: (u64, u64),
    data: (u64, u64),
    features: [u64; 4],
}

fn encode_file_header(endian: Endian, h: &HeaderFields) -> Vec<u8> {
    let mut v = Vec::with_capacity(FILE_HEADER_SIZE as usize);
    // The magic is the same 8 characters in either byte order; readers tell
    // the order from how it reads back as a number.
    v.extend_from_slice(&endian.put_u64(PERF_MAGIC2));
    v.extend_from_slice(&endian.put_u64(FILE_HEADER_SIZE));
    v.extend_from_slice(&endian.put_u64(h.attr_size));
    for x in [h.attrs.0, h.attrs.1, h.data.0, h.data.1, 0, 0] {
        v.extend_from_slice(&endian.put_u64(x));
    }
    for w in h.features {
        v.extend_from_slice(&endian.put_u64(w));
    }
    v
}

/// Writes a file-mode perf.data: header, attrs, streamed records, features.
///
/// ```no_run
/// use perf_data::writer::{FileWriter, FeatureMap};
/// use perf_data::{Endian, Event};
/// let f = std::fs::File::create("out.data")?;
/// let events: Vec<Event> = Vec::new(); // the recording's events and their ids
/// let mut w = FileWriter::create(f, Endian::native(), &events)?;
/// w.write_record(perf_data::PERF_RECORD_FINISHED_ROUND, 0, &[], &[])?;
/// w.finish(&FeatureMap::new())?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FileWriter<W: Write + Seek> {
    rec: Records<W>,
    events: Vec<Event>,
    /// Where the attrs written at creation are, and whether they still hold.
    attrs: (u64, u64, u64),
    events_changed: bool,
    data_offset: u64,
}

impl<W: Write + Seek> FileWriter<W> {
    /// Starts a file at the current position of `w` (which should be 0):
    /// writes a header that already points at `events`, so the file is
    /// readable (data size 0: "up to the end") even if `finish` never runs.
    pub fn create(w: W, endian: Endian, events: &[Event]) -> Result<Self> {
        let mut out = Out::new(w, 0);
        let (block, entry, entries) = attr_block(events, endian, FILE_HEADER_SIZE);
        let data_offset = FILE_HEADER_SIZE + block.len() as u64;
        let header = encode_file_header(
            endian,
            &HeaderFields {
                attr_size: entry,
                attrs: (FILE_HEADER_SIZE, entries),
                data: (data_offset, 0),
                features: [0; 4],
            },
        );
        out.put(&header)?;
        out.put(&block)?;
        // Make the header durable before any data: a reader of a killed
        // recording needs it.
        out.flush()?;
        Ok(FileWriter {
            rec: Records::new(out, endian),
            events: events.to_vec(),
            attrs: (entry, FILE_HEADER_SIZE, entries),
            events_changed: false,
            data_offset,
        })
    }

    /// Writes kernel records inside zstd-compressed COMPRESSED records from
    /// now on (perf record's `-z`); `finish` adds the COMPRESSED feature.
    pub fn set_compression(&mut self, level: i32) -> Result<()> {
        self.rec.flush_compressed()?;
        self.rec.compressor = Some(Compressor::new(level)?);
        Ok(())
    }

    /// Replaces the events (for streams whose events arrive with the data,
    /// such as pipe-mode input); `finish` writes their attrs.
    pub fn set_events(&mut self, events: &[Event]) {
        if events != self.events.as_slice() {
            self.events = events.to_vec();
            self.events_changed = true;
        }
    }

    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Writes the feature sections and the final header; returns the output.
    /// Cost is that of the features plus one seek: cheap at any data size.
    pub fn finish(mut self, features: &FeatureMap) -> Result<W> {
        self.rec.flush_compressed()?;
        let mut features = features.clone();
        features.retain(|&id, _| id != feature::RESERVED && id < feature::BITS);
        if let Some(c) = &self.rec.compressor {
            features.insert(feature::COMPRESSED, c.feature(self.rec.endian));
        }
        let data_end = self.rec.out.pos;
        // perf finds the feature table right after the data.
        let mut body_at = data_end + 16 * features.len() as u64;
        let mut bitmap = [0u64; 4];
        for (&id, bytes) in &features {
            bitmap[(id / 64) as usize] |= 1 << (id % 64);
            let mut e = [0u8; 16];
            e[..8].copy_from_slice(&self.rec.endian.put_u64(body_at));
            e[8..].copy_from_slice(&self.rec.endian.put_u64(bytes.len() as u64));
            self.rec.out.put(&e)?;
            body_at += bytes.len() as u64;
        }
        for bytes in features.values() {
            self.rec.out.put(bytes)?;
        }
        if self.events_changed {
            let base = self.rec.out.pos;
            let (block, entry, entries) = attr_block(&self.events, self.rec.endian, base);
            self.rec.out.put(&block)?;
            self.attrs = (entry, base, entries);
        }
        let header = encode_file_header(
            self.rec.endian,
            &HeaderFields {
                attr_size: self.attrs.0,
                attrs: (self.attrs.1, self.attrs.2),
                data: (self.data_offset, data_end - self.data_offset),
                features: bitmap,
            },
        );
        self.rec.out.flush()?;
        let end = self.rec.out.pos;
        let w = self.rec.out.w.get_mut();
        let io = |offset: u64| move |source: io::Error| Error::Io { offset, source };
        w.seek(SeekFrom::Start(0)).map_err(io(0))?;
        w.write_all(&header).map_err(io(0))?;
        w.seek(SeekFrom::Start(end)).map_err(io(end))?;
        w.flush().map_err(io(end))?;
        self.rec.out.w.into_inner().map_err(|e| Error::Io {
            offset: end,
            source: e.into_error(),
        })
    }
}

impl<W: Write + Seek> std::ops::Deref for FileWriter<W> {
    type Target = Records<W>;
    fn deref(&self) -> &Records<W> {
        &self.rec
    }
}

impl<W: Write + Seek> std::ops::DerefMut for FileWriter<W> {
    fn deref_mut(&mut self) -> &mut Records<W> {
        &mut self.rec
    }
}

/// Writes a pipe-mode stream: a 16-byte header, then only records; events
/// and features travel as HEADER_ATTR and HEADER_FEATURE records.
pub struct PipeWriter<W: Write> {
    rec: Records<W>,
}

impl<W: Write> PipeWriter<W> {
    /// Writes the pipe header.
    pub fn new(w: W, endian: Endian) -> Result<Self> {
        let mut out = Out::new(w, 0);
        out.put(&endian.put_u64(PERF_MAGIC2))?;
        out.put(&endian.put_u64(PIPE_HEADER_SIZE))?;
        Ok(PipeWriter {
            rec: Records::new(out, endian),
        })
    }

    /// Compresses kernel records from now on, and first sends the COMPRESSED
    /// feature perf needs before the first COMPRESSED record (its ratio is
    /// not known yet and is sent as 0).
    pub fn set_compression(&mut self, level: i32) -> Result<()> {
        self.rec.flush_compressed()?;
        let c = Compressor::new(level)?;
        let f = c.feature(self.rec.endian);
        self.write_feature(feature::COMPRESSED, &f)?;
        self.rec.compressor = Some(c);
        Ok(())
    }

    /// A HEADER_ATTR record: the attr, then the event's ids.
    pub fn write_attr(&mut self, e: &Event) -> Result<()> {
        let mut p = e.attr.encode(self.rec.endian);
        for &id in &e.ids {
            p.extend_from_slice(&self.rec.endian.put_u64(id));
        }
        self.write_record(PERF_RECORD_HEADER_ATTR, 0, &p, &[])
    }

    /// A HEADER_FEATURE record holding one feature section.
    pub fn write_feature(&mut self, id: u32, bytes: &[u8]) -> Result<()> {
        let mut p = Vec::with_capacity(8 + bytes.len());
        p.extend_from_slice(&self.rec.endian.put_u64(u64::from(id)));
        p.extend_from_slice(bytes);
        self.write_record(PERF_RECORD_HEADER_FEATURE, 0, &p, &[])
    }

    /// The record perf sends after the last feature.
    pub fn write_features_end(&mut self) -> Result<()> {
        self.write_feature(LAST_FEATURE, &[])
    }

    /// Writes what is batched and buffered through to the output now.
    pub fn flush(&mut self) -> Result<()> {
        self.rec.flush_compressed()?;
        self.rec.out.flush()
    }

    /// Flushes and returns the output.
    pub fn finish(self) -> Result<W> {
        self.rec.into_inner()
    }
}

impl<W: Write> std::ops::Deref for PipeWriter<W> {
    type Target = Records<W>;
    fn deref(&self) -> &Records<W> {
        &self.rec
    }
}

impl<W: Write> std::ops::DerefMut for PipeWriter<W> {
    fn deref_mut(&mut self) -> &mut Records<W> {
        &mut self.rec
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reader::RecordReader;
    use std::io::Cursor as IoCursor;

    fn event(ids: Vec<u64>) -> Event {
        Event {
            attr: EventAttr {
                type_: PERF_TYPE_SOFTWARE,
                size: 128,
                sample_type: PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ID,
                flags: 1 << crate::attr::flag::SAMPLE_ID_ALL,
                ..Default::default()
            },
            ids,
            name: None,
        }
    }

    /// A SAMPLE payload for `event`: ip, pid/tid, id, then `extra` raw bytes
    /// (not part of the sample format; only the reader's framing sees them).
    fn sample(ip: u64, id: u64, extra: &[u8]) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&ip.to_le_bytes());
        p.extend_from_slice(&[7, 0, 0, 0, 7, 0, 0, 0]);
        p.extend_from_slice(&id.to_le_bytes());
        p.extend_from_slice(extra);
        p
    }

    type Rec = (u32, u16, Vec<u8>, Vec<u8>);

    fn read_all(bytes: Vec<u8>) -> (RecordReader, Vec<Rec>) {
        let mut r = RecordReader::from_bytes(bytes).unwrap();
        let mut v = Vec::new();
        while let Some(x) = r.next_raw().unwrap() {
            let wrapper = !x.from_compressed && x.type_ == PERF_RECORD_COMPRESSED;
            let meta = matches!(
                x.type_,
                PERF_RECORD_HEADER_ATTR | PERF_RECORD_HEADER_FEATURE
            );
            if !wrapper && !meta {
                v.push((x.type_, x.misc, x.payload.to_vec(), x.trailing.to_vec()));
            }
        }
        (r, v)
    }

    /// Pseudo-random bytes that zstd cannot shrink.
    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    fn records() -> Vec<Rec> {
        let mut v: Vec<Rec> = Vec::new();
        for i in 0..3000u64 {
            // Mostly compressible samples, some large incompressible ones
            // (one nearly the largest record possible) and user records.
            let extra = match i % 500 {
                0 => noise(65_000, i),
                1 => noise(3000, i),
                _ => vec![0; (i % 5) as usize * 8],
            };
            v.push((
                PERF_RECORD_SAMPLE,
                2,
                sample(0x1000 + i, 42, &extra),
                vec![],
            ));
            if i % 1000 == 999 {
                v.push((PERF_RECORD_FINISHED_ROUND, 0, vec![], vec![]));
            }
        }
        v.push((
            PERF_RECORD_AUXTRACE,
            0,
            16u64.to_le_bytes().repeat(6),
            vec![9; 16],
        ));
        v
    }

    fn features() -> FeatureMap {
        let mut f = FeatureMap::new();
        let mut host = 8u32.to_le_bytes().to_vec();
        host.extend_from_slice(b"box\0\0\0\0\0");
        f.insert(feature::HOSTNAME, host);
        f.insert(feature::TOTAL_MEM, 1234u64.to_le_bytes().to_vec());
        f
    }

    fn write_file(recs: &[Rec], level: Option<i32>) -> Vec<u8> {
        let mut w = FileWriter::create(
            IoCursor::new(Vec::new()),
            Endian::Little,
            &[event(vec![42])],
        )
        .unwrap();
        if let Some(l) = level {
            w.set_compression(l).unwrap();
        }
        for (t, m, p, tr) in recs {
            w.write_record(*t, *m, p, tr).unwrap();
        }
        w.finish(&features()).unwrap().into_inner()
    }

    #[test]
    fn file_round_trip_keeps_records_events_and_features() {
        let recs = records();
        let (r, got) = read_all(write_file(&recs, None));
        assert_eq!(got, recs);
        assert!(r.diagnostics().is_empty(), "{:?}", r.diagnostics());
        assert_eq!(r.meta().events.len(), 1);
        assert_eq!(r.meta().events[0].ids, vec![42]);
        assert_eq!(r.meta().events[0].attr, event(vec![]).attr);
        assert_eq!(r.meta().features.hostname().as_deref(), Some("box"));
        assert_eq!(r.meta().features.total_mem(), Some(1234));
        assert!(!r.meta().features.has(feature::COMPRESSED));
    }

    #[test]
    fn compressed_file_round_trips_in_records_that_fit() {
        let recs = records();
        let bytes = write_file(&recs, Some(3));
        // Every COMPRESSED record fits its size field, and some exist.
        let mut r = RecordReader::from_bytes(bytes.clone()).unwrap();
        let mut n_compressed = 0;
        let mut plain_samples = 0;
        while let Some(x) = r.next_raw().unwrap() {
            if x.type_ == PERF_RECORD_COMPRESSED && !x.from_compressed {
                n_compressed += 1;
            }
            if x.type_ == PERF_RECORD_SAMPLE && !x.from_compressed {
                plain_samples += 1;
            }
        }
        assert!(n_compressed > 1, "{n_compressed} COMPRESSED records");
        // Only the near-maximal noise records cannot be compressed into one.
        assert!(
            plain_samples <= 6,
            "{plain_samples} samples left uncompressed"
        );
        let (r, got) = read_all(bytes);
        assert_eq!(got, recs);
        assert!(r.diagnostics().is_empty(), "{:?}", r.diagnostics());
        let mut w = FileWriter::create(IoCursor::new(Vec::new()), Endian::Little, &[]).unwrap();
        assert_eq!(w.compression_totals(), None);
        w.set_compression(3).unwrap();
        for (t, m, p, tr) in &recs[..100] {
            w.write_record(*t, *m, p, tr).unwrap();
        }
        w.write_record(PERF_RECORD_FINISHED_ROUND, 0, &[], &[])
            .unwrap();
        let (raw, packed) = w.compression_totals().unwrap();
        assert!(raw > packed && packed > 0, "{raw} -> {packed}");
        let (ver, ty, level, ratio, mmap_len) = r.meta().features.compressed().unwrap();
        assert_eq!((ver, ty, level), (0, 1, 3));
        assert!(ratio >= 1);
        assert_eq!(mmap_len as usize, COMPRESS_MMAP_LEN);
    }

    #[test]
    fn unfinished_file_is_readable_to_its_end() {
        let recs = records();
        let mut w = FileWriter::create(
            IoCursor::new(Vec::new()),
            Endian::Little,
            &[event(vec![42])],
        )
        .unwrap();
        for (t, m, p, tr) in &recs[..100] {
            w.write_record(*t, *m, p, tr).unwrap();
        }
        // Stop without finish: what reached the output is all there is.
        w.out.flush().unwrap();
        let bytes = w.out.w.get_ref().get_ref().clone();
        let (r, got) = read_all(bytes);
        assert_eq!(got, recs[..100].to_vec());
        assert_eq!(r.meta().events[0].ids, vec![42]);
        assert!(r.diagnostics().warnings.contains_key("data size 0"));
    }

    #[test]
    fn events_set_late_are_written_at_finish() {
        let mut w = FileWriter::create(IoCursor::new(Vec::new()), Endian::Big, &[]).unwrap();
        let mut e = event(vec![5, 6]);
        e.attr.size = 64;
        let mut e2 = event(vec![7]);
        e2.attr.config = 3;
        w.set_events(&[e.clone(), e2.clone()]);
        let mut p = Vec::new();
        for x in [0x10u64, 0x0000_0007_0000_0007, 6] {
            p.extend_from_slice(&x.to_be_bytes());
        }
        w.write_record(PERF_RECORD_SAMPLE, 1, &p, &[]).unwrap();
        let bytes = w.finish(&FeatureMap::new()).unwrap().into_inner();
        let r = RecordReader::from_bytes(bytes).unwrap();
        assert_eq!(r.meta().endian, Endian::Big);
        let ev = &r.meta().events;
        assert_eq!(ev.len(), 2);
        // Both entries share the larger size; the smaller attr is widened.
        assert_eq!(ev[0].attr.size, 128);
        assert_eq!(ev[0].ids, vec![5, 6]);
        assert_eq!(ev[1].attr, e2.attr);
        assert_eq!(ev[1].ids, vec![7]);
        assert_eq!(r.meta().event_of_sample(&p), Some(0));
    }

    #[test]
    fn pipe_round_trip_with_metadata_and_compression() {
        let recs = records();
        let mut w = PipeWriter::new(Vec::new(), Endian::Little).unwrap();
        w.write_attr(&event(vec![42])).unwrap();
        for (id, b) in features() {
            w.write_feature(id, &b).unwrap();
        }
        w.set_compression(1).unwrap();
        w.write_features_end().unwrap();
        for (t, m, p, tr) in &recs {
            w.write_record(*t, *m, p, tr).unwrap();
        }
        let bytes = w.finish().unwrap();
        let mut r = RecordReader::from_stream(Box::new(IoCursor::new(bytes.clone()))).unwrap();
        let mut got = Vec::new();
        while let Some(x) = r.next_raw().unwrap() {
            let skip = (!x.from_compressed && x.type_ == PERF_RECORD_COMPRESSED)
                || x.type_ == PERF_RECORD_HEADER_ATTR
                || x.type_ == PERF_RECORD_HEADER_FEATURE;
            if !skip {
                got.push((x.type_, x.misc, x.payload.to_vec(), x.trailing.to_vec()));
            }
        }
        assert_eq!(got, recs);
        assert!(r.meta().is_pipe());
        assert_eq!(r.meta().events[0].ids, vec![42]);
        assert_eq!(r.meta().features.hostname().as_deref(), Some("box"));
        assert!(r.meta().features.compressed().is_some());
        assert!(r.meta().features.has(LAST_FEATURE));
    }

    #[test]
    fn oversized_records_are_refused_not_truncated() {
        let mut w = PipeWriter::new(Vec::new(), Endian::Little).unwrap();
        let err = w
            .write_record(PERF_RECORD_SAMPLE, 0, &vec![0; MAX_RECORD_SIZE - 7], &[])
            .unwrap_err();
        assert!(matches!(err, Error::Unwritable { .. }), "{err}");
        w.write_record(PERF_RECORD_SAMPLE, 0, &vec![0; MAX_RECORD_SIZE - 8], &[])
            .unwrap();
    }
}
