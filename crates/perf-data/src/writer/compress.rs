//! COMPRESSED records as perf writes them: one zstd stream over batches of
//! whole records.

use super::*;

/// Batches whole records and writes them as COMPRESSED records of at most
/// [`MAX_RECORD_SIZE`] bytes. As perf does, all COMPRESSED records form one
/// zstd stream whose history carries over from batch to batch (much better
/// ratios on repetitive data such as DWARF stack copies than independent
/// frames); each batch is flushed at its end, so every record decompresses
/// to at most one batch ([`COMPRESS_MMAP_LEN`]) and readers decode it with
/// the records before it (perf and our reader keep one stream context).
/// The library is the system's libzstd (linked through pkg-config), the one
/// perf links: zstd 1.5.7, which the crate would otherwise bundle, splits
/// blocks at levels 1-2 in a way that costs ~6% on DWARF stack copies.
pub(super) struct Compressor {
    level: i32,
    ctx: zstd::stream::raw::Encoder<'static>,
    /// Packed records waiting to be compressed.
    buf: Vec<u8>,
    /// Compressed bytes waiting to fill a record.
    out: Vec<u8>,
    pub(super) bytes_in: u64,
    pub(super) bytes_out: u64,
}

const COMPRESSED_PAYLOAD_MAX: usize = MAX_RECORD_SIZE - 8;

/// log2 of the compressor's window.
const WINDOW_LOG: u32 = 23;

impl Compressor {
    pub(super) fn new(level: i32) -> Result<Self> {
        let mut ctx = zstd::stream::raw::Encoder::new(level).map_err(|e| Error::Unwritable {
            what: "zstd compressor",
            detail: format!("level {level}: {e}"),
        })?;
        // A window of several batches: samples repeat stacks (and DWARF
        // stack copies) seen many batches before. 8 MiB stays far under
        // what perf's decompressor accepts (128 MiB).
        ctx.set_parameter(zstd::stream::raw::CParameter::WindowLog(WINDOW_LOG))
            .map_err(|e| Error::Unwritable {
                what: "zstd compressor",
                detail: format!("window: {e}"),
            })?;
        Ok(Compressor {
            level,
            ctx,
            buf: Vec::new(),
            out: vec![0u8; COMPRESSED_PAYLOAD_MAX],
            bytes_in: 0,
            bytes_out: 0,
        })
    }

    /// perf's rounded compression ratio for the COMPRESSED feature.
    pub(super) fn ratio(&self) -> u32 {
        if self.bytes_out == 0 {
            0
        } else {
            (self.bytes_in as f64 / self.bytes_out as f64 + 0.5) as u32
        }
    }

    pub(super) fn push<W: Write>(
        &mut self,
        out: &mut Out<W>,
        endian: Endian,
        type_: u32,
        misc: u16,
        payload: &[u8],
    ) -> Result<()> {
        let h = record_header(endian, type_, misc, payload.len())?;
        let size = 8 + payload.len();
        if !self.buf.is_empty() && self.buf.len() + size > COMPRESS_MMAP_LEN {
            self.flush(out, endian)?;
        }
        self.buf.extend_from_slice(&h);
        self.buf.extend_from_slice(payload);
        Ok(())
    }

    pub(super) fn zstd_error(e: io::Error) -> Error {
        Error::Unwritable {
            what: "zstd stream",
            detail: e.to_string(),
        }
    }

    /// Compresses everything waiting into the stream, flushes the stream
    /// and writes its output as COMPRESSED records, each full but the last.
    pub(super) fn flush<W: Write>(&mut self, out: &mut Out<W>, endian: Endian) -> Result<()> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        if self.buf.is_empty() {
            return Ok(());
        }
        let mut input = InBuffer::around(&self.buf[..]);
        let mut pos = 0usize;
        let mut emitted = 0u64;
        loop {
            let mut o = OutBuffer::around_pos(&mut self.out[..], pos);
            let more = if input.pos() < input.src.len() {
                self.ctx.run(&mut input, &mut o).map_err(Self::zstd_error)?;
                true
            } else {
                self.ctx.flush(&mut o).map_err(Self::zstd_error)? > 0
            };
            pos = o.pos();
            let done = !more && input.pos() >= input.src.len();
            if pos == self.out.len() || (done && pos > 0) {
                out.record(endian, PERF_RECORD_COMPRESSED, 0, &self.out[..pos], &[])?;
                emitted += pos as u64 + 8;
                pos = 0;
            }
            if done {
                break;
            }
        }
        self.bytes_in += self.buf.len() as u64;
        self.bytes_out += emitted;
        self.buf.clear();
        // Do not keep a large buffer alive after one unusual batch.
        if self.buf.capacity() > 2 * COMPRESS_MMAP_LEN {
            self.buf.shrink_to(COMPRESS_MMAP_LEN);
        }
        Ok(())
    }

    pub(super) fn feature(&self, endian: Endian) -> Vec<u8> {
        compressed_feature(
            endian,
            self.level.max(0) as u32,
            self.ratio(),
            COMPRESS_MMAP_LEN as u32,
        )
    }
}
