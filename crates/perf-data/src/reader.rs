//! Reading perf.data: open a file (memory-mapped) or a pipe-mode stream, and
//! walk its records in file order, decompressing COMPRESSED records.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use crate::attr::EventAttr;
use crate::bytes::{Cursor, Endian};
use crate::consts::*;
use crate::error::{Error, Result};
use crate::features::FeatureData;
use crate::header::{self, Kind, Section};
use crate::meta::Meta;
use crate::records::{RawRecord, RecordData, SampleId};
use crate::sample::Sample;

/// A record handed out by a reader, with the metadata needed to decode it.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    pub raw: RawRecord<'a>,
    pub meta: &'a Meta,
}

impl<'a> Record<'a> {
    pub fn type_(&self) -> u32 {
        self.raw.type_
    }
    /// Decodes a SAMPLE record.
    pub fn sample(&self) -> Result<Sample<'a>> {
        self.meta
            .parse_sample(self.raw.misc, self.raw.payload)
            .map_err(|p| p.at_record(self.raw.offset, self.raw.type_))
    }
    /// Decodes any other record and its sample_id trailer.
    pub fn decode(&self) -> Result<(RecordData<'a>, SampleId)> {
        self.meta
            .parse_other(self.raw.type_, self.raw.misc, self.raw.payload)
            .map_err(|p| p.at_record(self.raw.offset, self.raw.type_))
    }
    /// The record's timestamp, if it has one.
    pub fn time(&self) -> Option<u64> {
        self.meta.record_time(self.raw.type_, self.raw.payload)
    }
}

/// Largest amount of data one COMPRESSED record may expand to. perf's own
/// limit is the ring-buffer size; this bounds memory against zstd bombs.
pub const MAX_DECOMPRESSED: usize = 256 << 20;

/// A problem the reader worked around; counted, with the first offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub count: u64,
    pub first_offset: u64,
    pub message: String,
}

/// Counted warnings by kind, for the summary at the end of a run.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    pub warnings: BTreeMap<&'static str, Warning>,
}

impl Diagnostics {
    pub fn warn(&mut self, kind: &'static str, offset: u64, message: impl FnOnce() -> String) {
        self.warnings
            .entry(kind)
            .and_modify(|w| w.count += 1)
            .or_insert_with(|| {
                let message = message();
                log::debug!("{kind} at byte offset {offset}: {message}");
                Warning {
                    count: 1,
                    first_offset: offset,
                    message,
                }
            });
    }
    pub fn is_empty(&self) -> bool {
        self.warnings.is_empty()
    }
}

enum Input {
    Mapped(Arc<memmap2::Mmap>),
    Owned(Arc<Vec<u8>>),
    Stream(StreamIn),
}

/// The whole input of a file-backed reader (mapped or read into memory),
/// shared so that another thread can read records by offset without
/// copying them (see [`RecordReader::input_bytes`]).
#[derive(Clone)]
pub struct InputBytes(Bytes);

#[derive(Clone)]
enum Bytes {
    Mapped(Arc<memmap2::Mmap>),
    Owned(Arc<Vec<u8>>),
}

impl std::ops::Deref for InputBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

struct StreamIn {
    r: Box<dyn Read + Send>,
    buf: Vec<u8>,
    /// Stream offset of buf[0].
    base: u64,
    eof: bool,
}

impl StreamIn {
    /// Makes bytes [off, off+n) available; false if the stream ends first.
    fn fill(&mut self, off: u64, n: usize) -> io::Result<bool> {
        let want_end = off - self.base + n as u64;
        while (self.buf.len() as u64) < want_end {
            if self.eof {
                return Ok(false);
            }
            let old = self.buf.len();
            // Grow by what is missing, but at most 1 MiB per read: a length
            // field from the stream must not decide an allocation before
            // the bytes it promises have arrived.
            let need = (want_end - old as u64).clamp(64 << 10, 1 << 20) as usize;
            self.buf.resize(old + need, 0);
            let got = loop {
                match self.r.read(&mut self.buf[old..]) {
                    Ok(g) => break g,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        self.buf.truncate(old);
                        return Err(e);
                    }
                }
            };
            self.buf.truncate(old + got);
            if got == 0 {
                self.eof = true;
            }
        }
        Ok(true)
    }
    /// Drops bytes before `off`.
    fn consume_to(&mut self, off: u64) {
        let k = (off - self.base) as usize;
        if k > 0 && k <= self.buf.len() && (k >= (1 << 20) || k == self.buf.len()) {
            self.buf.drain(..k);
            self.base = off;
        }
    }
    fn slice(&self, off: u64, n: usize) -> &[u8] {
        let s = (off - self.base) as usize;
        &self.buf[s..s + n]
    }
}

#[derive(Clone, Copy)]
enum Loc {
    Decomp {
        start: usize,
        size: usize,
    },
    Input {
        off: u64,
        size: usize,
        trailing: usize,
        type_: u32,
        misc: u16,
    },
}

/// Decompressed bytes of COMPRESSED records not yet handed out.
struct Decomp {
    buf: Vec<u8>,
    pos: usize,
    /// Offset of the COMPRESSED record the bytes came from.
    offset: u64,
    dctx: Option<zstd::stream::raw::Decoder<'static>>,
    scratch: Vec<u8>,
}

/// Walks the records of a perf.data file or stream in file order.
///
/// Metadata records of pipe-mode streams (HEADER_ATTR, HEADER_FEATURE, ...)
/// update [`Meta`] as they pass and are still handed out, so counts match perf.
pub struct RecordReader {
    input: Input,
    pos: u64,
    end: u64,
    meta: Meta,
    decomp: Decomp,
    diag: Diagnostics,
    done: bool,
    /// Mapped bytes before this offset were handed back to the kernel
    /// (see [`RecordReader::release_consumed`]).
    released: u64,
    /// Mapped bytes from this offset on are still in use by the caller
    /// (see [`RecordReader::hold_from`]).
    hold: u64,
}

/// Options for opening a recording.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Read the whole file into memory instead of mapping it.
    pub no_mmap: bool,
}

impl RecordReader {
    /// Opens a perf.data file (file or pipe mode), memory-mapped.
    pub fn open(path: &Path) -> Result<Self> {
        if crate::dir_format::is_dir_format(path) {
            // perf's directory format (`record --threads`): one file,
            // assembled in memory.
            let (bytes, warnings) = crate::dir_format::assemble(path)?;
            let mut r = Self::from_input(Input::Owned(Arc::new(bytes)))?;
            for w in warnings {
                r.diag.warn("torn record in a directory part", 0, || w);
            }
            return Ok(r);
        }
        let f = File::open(path).map_err(|source| Error::Io { offset: 0, source })?;
        let meta = f
            .metadata()
            .map_err(|source| Error::Io { offset: 0, source })?;
        if meta.is_file() {
            // SAFETY: the map is read-only; perf.data files are not modified
            // while we read them (a concurrent writer could only make us see
            // inconsistent bytes, which every parser here tolerates).
            let map = unsafe { memmap2::Mmap::map(&f) };
            match map {
                Ok(m) => Self::from_input(Input::Mapped(Arc::new(m))),
                Err(_) => {
                    let mut v = Vec::new();
                    let mut f = f;
                    f.read_to_end(&mut v)
                        .map_err(|source| Error::Io { offset: 0, source })?;
                    Self::from_input(Input::Owned(Arc::new(v)))
                }
            }
        } else {
            Self::from_stream(Box::new(f))
        }
    }

    /// Reads from bytes in memory.
    pub fn from_bytes(data: Vec<u8>) -> Result<Self> {
        Self::from_input(Input::Owned(Arc::new(data)))
    }

    /// Reads a pipe-mode (or file-mode, if it fits the rules) stream such as stdin.
    pub fn from_stream(r: Box<dyn Read + Send>) -> Result<Self> {
        let mut s = StreamIn {
            r,
            buf: Vec::new(),
            base: 0,
            eof: false,
        };
        s.fill(0, 16)
            .map_err(|source| Error::Io { offset: 0, source })?;
        let have = s.buf.len().min(16);
        let (kind, endian) = header::detect(&s.buf[..have])?;
        if kind == Kind::File {
            // A file-mode header needs random access: slurp the stream.
            let mut v = std::mem::take(&mut s.buf);
            s.r.read_to_end(&mut v).map_err(|source| Error::Io {
                offset: v.len() as u64,
                source,
            })?;
            return Self::from_input(Input::Owned(Arc::new(v)));
        }
        Ok(RecordReader {
            input: Input::Stream(s),
            pos: header::PIPE_HEADER_SIZE,
            end: u64::MAX,
            meta: Meta::new(Kind::Pipe, endian),
            decomp: Decomp::new(),
            diag: Diagnostics::default(),
            done: false,
            released: 0,
            hold: u64::MAX,
        })
    }

    fn from_input(input: Input) -> Result<Self> {
        let data: &[u8] = match &input {
            Input::Mapped(m) => m,
            Input::Owned(v) => v,
            Input::Stream(_) => unreachable!("streams are opened by from_stream"),
        };
        let (kind, endian) = header::detect(&data[..data.len().min(16)])?;
        let mut diag = Diagnostics::default();
        let (meta, pos, end) = match kind {
            Kind::Pipe => (
                Meta::new(Kind::Pipe, endian),
                header::PIPE_HEADER_SIZE,
                data.len() as u64,
            ),
            Kind::File => {
                let (meta, data_sec) = read_file_meta(data, endian, &mut diag)?;
                (meta, data_sec.offset, data_sec.end())
            }
        };
        Ok(RecordReader {
            input,
            pos,
            end,
            meta,
            decomp: Decomp::new(),
            diag,
            done: false,
            released: 0,
            hold: u64::MAX,
        })
    }

    pub fn meta(&self) -> &Meta {
        &self.meta
    }
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diag
    }
    pub(crate) fn diagnostics_mut(&mut self) -> &mut Diagnostics {
        &mut self.diag
    }
    pub fn take_diagnostics(&mut self) -> Diagnostics {
        std::mem::take(&mut self.diag)
    }
    /// Stream offset of the next record.
    pub fn position(&self) -> u64 {
        self.pos
    }
    /// Total input size, when known (file mode and mapped pipe files).
    pub fn input_len(&self) -> Option<u64> {
        match &self.input {
            Input::Mapped(m) => Some(m.len() as u64),
            Input::Owned(v) => Some(v.len() as u64),
            Input::Stream(_) => None,
        }
    }

    /// The whole input when it is a file (mapped or in memory): records
    /// not from COMPRESSED records lie in it at their offsets, so a caller
    /// can keep offsets instead of copies. Pipes and streams give None.
    pub fn input_bytes(&self) -> Option<InputBytes> {
        match &self.input {
            Input::Mapped(m) => Some(InputBytes(Bytes::Mapped(m.clone()))),
            Input::Owned(v) => Some(InputBytes(Bytes::Owned(v.clone()))),
            Input::Stream(_) => None,
        }
    }

    /// Whether records outside COMPRESSED records can be read back by
    /// offset (see [`Self::input_bytes`]).
    pub(crate) fn is_random_access(&self) -> bool {
        !matches!(self.input, Input::Stream(_))
    }

    /// The caller still reads input bytes from `off` on (through
    /// [`Self::input_bytes`] or records handed out earlier): mapped pages
    /// from there on stay in memory (see [`Self::release_consumed`]).
    /// `u64::MAX` holds nothing.
    pub fn hold_from(&mut self, off: u64) {
        self.hold = off;
    }

    /// All bytes of a random-access input (see [`Self::is_random_access`]).
    pub(crate) fn input_all(&self) -> Option<&[u8]> {
        match &self.input {
            Input::Mapped(m) => Some(m),
            Input::Owned(v) => Some(v),
            Input::Stream(_) => None,
        }
    }

    /// Records are read once, front to back: the mapped pages before `off`
    /// (or before what the caller holds, see [`Self::hold_from`]) are
    /// dropped from this process (in steps of [`RELEASE_STEP`]), so reading
    /// a big file does not hold all of it in memory. Touching them again
    /// just reads them back from the page cache.
    fn release_consumed(&mut self, off: u64) {
        let off = off.min(self.hold);
        if off >= self.released + RELEASE_STEP {
            self.release_to(off);
        }
    }

    /// Hands the mapped pages of every record read so far back to the
    /// kernel, whatever was held: for when the caller is done with them.
    pub fn release_read(&mut self) {
        self.hold = u64::MAX;
        self.release_to(self.pos.min(self.end));
    }

    fn release_to(&mut self, off: u64) {
        const PAGE: u64 = 4096;
        let Input::Mapped(m) = &self.input else {
            return;
        };
        let upto = off & !(PAGE - 1);
        if upto <= self.released {
            return;
        }
        let (Ok(start), Ok(len)) = (
            usize::try_from(self.released),
            usize::try_from(upto - self.released),
        ) else {
            return;
        };
        // SAFETY: the map is a read-only file mapping, so MADV_DONTNEED
        // loses nothing: later reads of the range (from this thread or
        // another holding `input_bytes`) fault the same file bytes back in,
        // so no reference into the range ever sees different contents.
        let _ = unsafe { m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, len) };
        self.released = upto;
    }

    fn stop(&mut self, kind: &'static str, offset: u64, msg: impl FnOnce() -> String) {
        self.diag.warn(kind, offset, msg);
        self.done = true;
    }

    /// The next record in file order, or None at the end of the data.
    /// Damage stops the walk with a counted warning (see [`Self::diagnostics`]).
    pub fn next_raw(&mut self) -> Result<Option<RawRecord<'_>>> {
        Ok(self.advance()?.map(|loc| self.raw_at(loc)))
    }

    /// The next HEADER_FEATURE record of a pipe-mode stream, as (feature
    /// id, its bytes), skipping the records between; None at the end.
    pub fn next_feature(&mut self) -> Result<Option<(u64, Vec<u8>)>> {
        loop {
            let Some(loc) = self.advance()? else {
                return Ok(None);
            };
            let raw = self.raw_at(loc);
            if raw.type_ != crate::consts::PERF_RECORD_HEADER_FEATURE {
                continue;
            }
            let Some((id, bytes)) = raw.payload.split_first_chunk::<8>() else {
                continue;
            };
            let id = match self.meta.endian {
                Endian::Little => u64::from_le_bytes(*id),
                Endian::Big => u64::from_be_bytes(*id),
            };
            return Ok(Some((id, bytes.to_vec())));
        }
    }

    /// Reads the rest of a pipe-mode stream, handing each HEADER_FEATURE
    /// record's (feature id, bytes) to `each` with the metadata read so far.
    /// Returns the reading error that ended the stream early, if one did
    /// (what was handed on stands, as perf keeps what it printed).
    pub fn each_feature<E>(
        &mut self,
        mut each: impl FnMut(&Meta, u64, &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<Error>, E> {
        loop {
            match self.next_feature() {
                Ok(Some((id, bytes))) => each(&self.meta, id, &bytes)?,
                Ok(None) => return Ok(None),
                Err(e) => return Ok(Some(e)),
            }
        }
    }

    /// The next record with the metadata needed to decode it.
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>> {
        Ok(self.advance()?.map(|loc| Record {
            raw: self.raw_at(loc),
            meta: &self.meta,
        }))
    }

    #[inline(always)]
    fn raw_at(&self, loc: Loc) -> RawRecord<'_> {
        match loc {
            Loc::Decomp { start, size } => {
                let b = &self.decomp.buf[start..start + size];
                let (type_, misc) = header_fields(b, self.meta.endian);
                RawRecord {
                    type_,
                    misc,
                    payload: &b[8..],
                    trailing: &[],
                    offset: self.decomp.offset,
                    from_compressed: true,
                }
            }
            Loc::Input {
                off,
                size,
                trailing,
                type_,
                misc,
            } => {
                let rec = slice_of(&self.input, off, size + trailing);
                RawRecord {
                    type_,
                    misc,
                    payload: &rec[8..size],
                    trailing: &rec[size..],
                    offset: off,
                    from_compressed: false,
                }
            }
        }
    }

    // Inlined into its two callers: returning the location through memory
    // cost more than the framing itself (store-forwarding stalls).
    #[inline(always)]
    fn advance(&mut self) -> Result<Option<Loc>> {
        loop {
            // 1. Records still waiting in decompressed data.
            if let Some((start, size)) = self.decomp.next_record(self.meta.endian, &mut self.diag) {
                return Ok(Some(Loc::Decomp { start, size }));
            }
            if self.done {
                return Ok(None);
            }
            let off = self.pos;
            if off >= self.end {
                if !self.decomp.is_drained() {
                    let left = self.decomp.buf.len() - self.decomp.pos;
                    self.diag
                        .warn("truncated compressed data", self.decomp.offset, || {
                            format!("{left} bytes of decompressed data end inside a record")
                        });
                }
                self.done = true;
                return Ok(None);
            }
            // 2. The next record header.
            let avail = self.available(off, 8)?;
            if avail < 8 {
                if avail > 0 {
                    self.stop("truncated record", off, || {
                        format!("the data ends {avail} bytes into a record header")
                    });
                } else {
                    self.done = true;
                }
                continue;
            }
            let (type_, misc, size) = {
                let h = self.bytes(off, 8);
                let (t, m) = header_fields(h, self.meta.endian);
                (t, m, self.meta.endian.u16([h[6], h[7]]) as usize)
            };
            if size < 8 {
                self.stop("corrupt record", off, || {
                    format!(
                        "record header size {size} is smaller than a header (type {type_}); \
                         the rest of the data cannot be framed"
                    )
                });
                continue;
            }
            let have = self.available(off, size)?;
            if have < size {
                self.stop("truncated record", off, || {
                    format!(
                        "{} record of {size} bytes is cut off after {have} bytes",
                        record_type_name(type_)
                    )
                });
                continue;
            }
            // 3. Payload that lives outside the header's size.
            let trailing_len = match type_ {
                PERF_RECORD_AUXTRACE => {
                    let p = &self.bytes(off, size)[8..];
                    Cursor::new(p, self.meta.endian)
                        .u64("auxtrace size")
                        .unwrap_or(0)
                }
                PERF_RECORD_HEADER_TRACING_DATA if self.meta.is_pipe() => {
                    let p = &self.bytes(off, size)[8..];
                    let n = Cursor::new(p, self.meta.endian)
                        .u32("tracing size")
                        .unwrap_or(0);
                    (u64::from(n) + 7) & !7
                }
                _ => 0,
            };
            let trailing_len = match usize::try_from(trailing_len) {
                Ok(n) if (off + size as u64).checked_add(n as u64).is_some() => n,
                _ => {
                    self.stop("corrupt record", off, || "absurd trailing data size".into());
                    continue;
                }
            };
            if trailing_len > 0 {
                let have = self.available(off + size as u64, trailing_len)?;
                if have < trailing_len {
                    self.stop("truncated record", off, || {
                        format!(
                            "{} data of {trailing_len} bytes is cut off after {have} bytes",
                            record_type_name(type_)
                        )
                    });
                    continue;
                }
            }
            let next = off + size as u64 + trailing_len as u64;
            self.release_consumed(off);
            // 4. Side effects: metadata and decompression.
            if matches!(
                type_,
                PERF_RECORD_HEADER_ATTR
                    | PERF_RECORD_HEADER_EVENT_TYPE
                    | PERF_RECORD_EVENT_UPDATE
                    | PERF_RECORD_HEADER_FEATURE
            ) {
                let payload = slice_of(&self.input, off, size)[8..].to_vec();
                if let Err(e) = self.meta.absorb(type_, &payload, off) {
                    self.diag
                        .warn("corrupt metadata record", off, || e.to_string());
                }
            }
            // A stream's tracing data follows its record: it is the
            // TRACING_DATA feature a file would hold.
            if type_ == PERF_RECORD_HEADER_TRACING_DATA && trailing_len > 0 {
                let bytes = slice_of(&self.input, off + size as u64, trailing_len).to_vec();
                self.meta.features.sections.insert(
                    crate::consts::feature::TRACING_DATA,
                    crate::features::FeatureData { offset: off, bytes },
                );
            }
            if type_ == PERF_RECORD_COMPRESSED || type_ == PERF_RECORD_COMPRESSED2 {
                let p = &slice_of(&self.input, off, size)[8..];
                let data = if type_ == PERF_RECORD_COMPRESSED2 {
                    let n = Cursor::new(p, self.meta.endian)
                        .u64("data_size")
                        .unwrap_or(0);
                    p.get(8..8 + (n as usize).min(p.len().saturating_sub(8)))
                        .unwrap_or(&[])
                } else {
                    p
                };
                if let Err(msg) = self.decomp.feed(data, off) {
                    self.diag.warn("corrupt compressed record", off, || msg);
                }
            }
            if !is_known_record_type(type_) {
                self.diag.warn("unknown record type", off, || {
                    format!("record type {type_} is not known; skipped by its size ({size} bytes)")
                });
            }
            self.pos = next;
            if let Input::Stream(s) = &mut self.input {
                s.consume_to(off);
            }
            return Ok(Some(Loc::Input {
                off,
                size,
                trailing: trailing_len,
                type_,
                misc,
            }));
        }
    }

    /// How many of the n bytes at `off` exist (up to the data end).
    fn available(&mut self, off: u64, n: usize) -> Result<usize> {
        let limit = self.end.saturating_sub(off).min(n as u64) as usize;
        match &mut self.input {
            Input::Mapped(_) | Input::Owned(_) => Ok(limit),
            Input::Stream(s) => {
                if s.fill(off, limit).map_err(|source| Error::Io {
                    offset: off,
                    source,
                })? {
                    Ok(limit)
                } else {
                    Ok((s.base + s.buf.len() as u64)
                        .saturating_sub(off)
                        .min(limit as u64) as usize)
                }
            }
        }
    }

    fn bytes(&self, off: u64, n: usize) -> &[u8] {
        slice_of(&self.input, off, n)
    }
}

fn slice_of(input: &Input, off: u64, n: usize) -> &[u8] {
    match input {
        Input::Mapped(m) => &m[off as usize..off as usize + n],
        Input::Owned(v) => &v[off as usize..off as usize + n],
        Input::Stream(s) => s.slice(off, n),
    }
}

/// Mapped input is handed back to the kernel in steps of this many bytes.
pub(crate) const RELEASE_STEP: u64 = 256 << 10;

fn header_fields(b: &[u8], e: Endian) -> (u32, u16) {
    (e.u32([b[0], b[1], b[2], b[3]]), e.u16([b[4], b[5]]))
}

impl Decomp {
    fn new() -> Self {
        Decomp {
            buf: Vec::new(),
            pos: 0,
            offset: 0,
            dctx: None,
            scratch: Vec::new(),
        }
    }

    fn is_drained(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Appends the decompressed bytes of one COMPRESSED record, keeping an
    /// incomplete record left over from the previous one in front.
    fn feed(&mut self, data: &[u8], offset: u64) -> std::result::Result<(), String> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        self.buf.drain(..self.pos.min(self.buf.len()));
        self.pos = 0;
        self.offset = offset;
        if self.dctx.is_none() {
            self.dctx = Some(zstd::stream::raw::Decoder::new().map_err(|e| e.to_string())?);
        }
        if self.scratch.is_empty() {
            self.scratch = vec![0u8; 256 << 10];
        }
        let dctx = self.dctx.as_mut().ok_or("no zstd context")?;
        let mut input = InBuffer::around(data);
        let keep = self.buf.len();
        loop {
            let mut out = OutBuffer::around(&mut self.scratch[..]);
            if let Err(e) = dctx.run(&mut input, &mut out) {
                self.buf.truncate(keep);
                let _ = dctx.reinit();
                return Err(format!("zstd: {e}"));
            }
            let n = out.pos();
            if self.buf.len() + n > MAX_DECOMPRESSED {
                self.buf.truncate(keep);
                let _ = dctx.reinit();
                return Err(format!(
                    "expands to more than {MAX_DECOMPRESSED} bytes; dropped"
                ));
            }
            self.buf.extend_from_slice(&self.scratch[..n]);
            if input.pos() >= data.len() && n < self.scratch.len() {
                break;
            }
        }
        Ok(())
    }

    /// (start, size) of the next complete record in the buffer.
    fn next_record(&mut self, e: Endian, diag: &mut Diagnostics) -> Option<(usize, usize)> {
        let rest = self.buf.len().checked_sub(self.pos)?;
        if rest < 8 {
            return None;
        }
        let h = &self.buf[self.pos..self.pos + 8];
        let size = e.u16([h[6], h[7]]) as usize;
        if size < 8 {
            let off = self.offset;
            diag.warn("corrupt record in compressed data", off, || {
                format!("record size {size} inside decompressed data; the rest of this COMPRESSED record is dropped")
            });
            self.buf.clear();
            self.pos = 0;
            return None;
        }
        if size > rest {
            return None;
        }
        let start = self.pos;
        self.pos += size;
        Some((start, size))
    }
}

/// Reads the header, attrs and features of a file-mode recording.
pub(crate) fn read_file_meta(
    data: &[u8],
    endian: Endian,
    diag: &mut Diagnostics,
) -> Result<(Meta, Section)> {
    let h = header::parse_file_header(data, endian)?;
    let len = data.len() as u64;
    let mut meta = Meta::new(Kind::File, endian);

    // Attributes and their ids.
    if h.attr_size < 16 + 64 && h.attrs.size > 0 {
        return Err(Error::corrupt(
            "perf.data file header",
            16,
            format!(
                "attr_size {} is too small for an event attribute",
                h.attr_size
            ),
        ));
    }
    if h.attrs.end() > len {
        return Err(Error::Truncated {
            what: "event attribute section",
            offset: h.attrs.offset,
            need: h.attrs.size,
            have: len.saturating_sub(h.attrs.offset),
        });
    }
    let n_attrs = h.attrs.size.checked_div(h.attr_size).unwrap_or(0);
    if h.attrs
        .size
        .checked_rem(h.attr_size)
        .is_some_and(|r| r != 0)
    {
        // perf divides and ignores the rest; say that attrs may be lost.
        diag.warn("corrupt attr section", 16, || {
            format!(
                "the attr section size {} is not a multiple of attr_size {}; \
                 reading {n_attrs} attrs and ignoring the rest",
                h.attrs.size, h.attr_size
            )
        });
    }
    // Sections of a sound file do not overlap, so all id sections together
    // fit in the file; a budget of the file's length keeps attrs that share
    // one id section from multiplying it (n_attrs × ids).
    let mut ids_budget = len;
    for i in 0..n_attrs {
        let at = h.attrs.offset + i * h.attr_size;
        let entry = &data[at as usize..(at + h.attr_size) as usize];
        let attr_bytes = &entry[..entry.len() - 16];
        let attr = EventAttr::parse(attr_bytes, endian)
            .map_err(|p| Error::corrupt("event attribute", at + p.pos as u64, p.what))?;
        let mut c = Cursor::new(&entry[entry.len() - 16..], endian);
        let ids_sec =
            Section::read(&mut c).map_err(|p| Error::corrupt("event attribute ids", at, p.what))?;
        let ids = if ids_sec.size == 0 {
            Vec::new()
        } else if ids_sec.end() > len || ids_sec.offset > len {
            diag.warn("truncated id section", at, || {
                format!("ids of event {i} point past the end of the file")
            });
            Vec::new()
        } else if ids_sec.size > ids_budget {
            diag.warn("overlapping id sections", at, || {
                format!("the id sections of the events add up to more than the file (event {i}); ids ignored")
            });
            Vec::new()
        } else {
            ids_budget -= ids_sec.size;
            let b = &data[ids_sec.offset as usize..ids_sec.end() as usize];
            let mut c = Cursor::new(b, endian);
            c.u64_array(ids_sec.size / 8, "ids")
                .map(|a| a.iter().collect())
                .unwrap_or_default()
        };
        meta.add_event(attr, ids);
    }

    // Data section; a killed recorder leaves size 0: salvage to the end.
    let mut data_sec = h.data;
    if data_sec.offset > len {
        return Err(Error::Truncated {
            what: "data section",
            offset: data_sec.offset,
            need: data_sec.size,
            have: 0,
        });
    }
    let mut features_ok = true;
    if data_sec.size == 0 && len > data_sec.offset {
        diag.warn("data size 0", 40, || {
            "the header's data size is 0 (was the recorder killed?); reading records up to the end of the file".into()
        });
        data_sec.size = len - data_sec.offset;
        features_ok = false;
    } else if data_sec.end() > len {
        diag.warn("truncated data section", data_sec.offset, || {
            format!(
                "the data section should end at byte {} but the file has {len} bytes",
                data_sec.end()
            )
        });
        data_sec.size = len - data_sec.offset;
        features_ok = false;
    }

    // Feature sections.
    if features_ok {
        let ids: Vec<u32> = h.feature_ids().collect();
        let table = data_sec.end();
        // As for ids: disjoint sections fit in the file; overlapping ones
        // must not make us copy the file up to 256 times.
        let mut budget = len;
        for (k, id) in ids.iter().enumerate() {
            let at = table + 16 * k as u64;
            let Some(b) = data.get(at as usize..at as usize + 16) else {
                diag.warn("truncated feature table", at, || {
                    "the feature section table is cut off".into()
                });
                break;
            };
            let mut c = Cursor::new(b, endian);
            let (Ok(off), Ok(size)) = (c.u64("offset"), c.u64("size")) else {
                break;
            };
            let sec = Section { offset: off, size };
            if sec.end() > len || sec.offset > len {
                let name = crate::consts::feature::name(*id).unwrap_or("unknown");
                diag.warn("truncated feature section", at, || {
                    format!("feature {name} points past the end of the file")
                });
                continue;
            }
            if size > budget {
                let name = crate::consts::feature::name(*id).unwrap_or("unknown");
                diag.warn("overlapping feature sections", at, || {
                    format!("feature {name}: the feature sections add up to more than the file; skipped")
                });
                continue;
            }
            budget -= size;
            meta.features.sections.insert(
                *id,
                FeatureData {
                    offset: off,
                    bytes: data[off as usize..sec.end() as usize].to_vec(),
                },
            );
        }
    }
    meta.header = Some(h);
    meta.apply_event_desc();
    Ok((meta, data_sec))
}
