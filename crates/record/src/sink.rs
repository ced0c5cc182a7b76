//! Where the records go (a file, cut back to a complete round after a
//! write error, or a pipe) and what the drain loop learns from them.

use super::*;

/// Counts bytes on their way to the output.
pub(crate) struct Counted<W> {
    pub(crate) inner: W,
    pub(crate) n: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(b)?;
        self.n
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

pub(crate) enum Sink {
    File {
        w: FileWriter<File>,
        /// A second handle, to cut the file back to a complete round after a
        /// write error.
        file: Option<File>,
        /// Positions just after recent FINISHED_ROUND records.
        round_ends: Vec<u64>,
        /// Where the data section starts.
        data_offset: u64,
    },
    Pipe(
        PipeWriter<Counted<Box<dyn Write + Send>>>,
        std::sync::Arc<std::sync::atomic::AtomicU64>,
    ),
}

impl Sink {
    pub(crate) fn write(&mut self, type_: u32, misc: u16, payload: &[u8]) -> perf_data::Result<()> {
        match self {
            Sink::File { w, .. } => w.write_record(type_, misc, payload, &[]),
            Sink::Pipe(w, _) => w.write_record(type_, misc, payload, &[]),
        }
    }

    /// Bytes of output so far (`--max-size` compares them).
    pub(crate) fn written(&self) -> u64 {
        match self {
            Sink::File { w, .. } => w.position(),
            Sink::Pipe(_, n) => n.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    pub(crate) fn round(&mut self) -> perf_data::Result<()> {
        self.write(PERF_RECORD_FINISHED_ROUND, 0, &[])?;
        if let Sink::File { w, round_ends, .. } = self {
            if round_ends.len() >= 1024 {
                round_ends.drain(..512);
            }
            round_ends.push(w.position());
        }
        Ok(())
    }

    /// After a write error: leave a file that ends on a complete round.
    /// The writer goes first (dropping it flushes what it still buffers),
    /// then the file is cut back to the last round that reached it whole.
    pub(crate) fn salvage(self) {
        if let Sink::File {
            w,
            file: Some(f),
            round_ends,
            data_offset,
        } = self
        {
            drop(w);
            let Ok(len) = f.metadata().map(|m| m.len()) else {
                return;
            };
            if let Some(&end) = round_ends.iter().rev().find(|&&e| e <= len) {
                if f.set_len(end).is_ok() {
                    log::info!(
                        "the recording was cut back to {end} bytes, its last complete round"
                    );
                    // perf 6.1 cannot read a file whose header says "data size
                    // 0": give the real size (it needs no new space).
                    use std::os::unix::fs::FileExt;
                    if let Some(size) = end.checked_sub(data_offset) {
                        let _ = f.write_all_at(&size.to_ne_bytes(), 48);
                    }
                }
            }
        }
    }

    pub(crate) fn compression(&self) -> Option<(u64, u64)> {
        match self {
            Sink::File { w, .. } => w.compression_totals(),
            Sink::Pipe(w, _) => w.compression_totals(),
        }
    }
}

/// What the drain loop learns from the records going by.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) samples: u64,
    pub(crate) lost: u64,
    pub(crate) lost_chunks: u64,
    pub(crate) first_time: Option<u64>,
    pub(crate) last_time: u64,
    pub(crate) hits: Option<buildid::HitBinaries>,
}

pub(crate) fn u32_at(b: &[u8], o: usize) -> u32 {
    b.get(o..o + 4)
        .map_or(0, |x| u32::from_ne_bytes([x[0], x[1], x[2], x[3]]))
}
pub(crate) fn u64_at(b: &[u8], o: usize) -> u64 {
    b.get(o..o + 8).map_or(0, |x| {
        u64::from_ne_bytes([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]])
    })
}
pub(crate) fn name_at(b: &[u8], o: usize) -> &str {
    let s = b.get(o..).unwrap_or(&[]);
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    std::str::from_utf8(&s[..end]).unwrap_or("")
}

impl Tally {
    pub(crate) fn see(&mut self, st: u64, type_: u32, misc: u16, p: &[u8]) {
        match type_ {
            PERF_RECORD_SAMPLE => {
                self.samples += 1;
                let mut o = if st & PERF_SAMPLE_IDENTIFIER != 0 {
                    8
                } else {
                    0
                };
                let ip = u64_at(p, o);
                o += 8;
                let pid = u32_at(p, o);
                o += 8;
                let t = u64_at(p, o);
                if self.first_time.is_none_or(|f| t < f) {
                    self.first_time = Some(t);
                }
                self.last_time = self.last_time.max(t);
                if let Some(h) = &mut self.hits {
                    h.sample(misc, pid, ip);
                }
            }
            PERF_RECORD_MMAP2 | PERF_RECORD_MMAP => {
                if let Some(h) = &mut self.hits {
                    let name_off = if type_ == PERF_RECORD_MMAP2 { 64 } else { 32 };
                    h.mmap(
                        u32_at(p, 0),
                        u64_at(p, 8),
                        u64_at(p, 16),
                        name_at(p, name_off),
                    );
                }
            }
            PERF_RECORD_FORK => {
                if let Some(h) = &mut self.hits {
                    h.fork(u32_at(p, 0), u32_at(p, 4));
                }
            }
            PERF_RECORD_COMM if misc & PERF_RECORD_MISC_COMM_EXEC != 0 => {
                if let Some(h) = &mut self.hits {
                    h.exec(u32_at(p, 0));
                }
            }
            PERF_RECORD_LOST => {
                self.lost += u64_at(p, 8);
                self.lost_chunks += 1;
            }
            _ => {}
        }
    }
}
