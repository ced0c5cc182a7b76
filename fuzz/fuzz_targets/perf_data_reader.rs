//! Feeds arbitrary bytes to the perf.data reader: as an in-memory file
//! (`RecordReader::from_bytes`) and as a stream delivered in small chunks
//! (`RecordReader::from_stream`). Every record is framed, ordered by time,
//! decoded, and every feature decoder and the stats pass run over it.
//! Errors are fine; panics, hangs and unbounded allocations are bugs.

#![no_main]

use std::io::{self, Read};

use libfuzzer_sys::fuzz_target;
use perf_data::{stats::Stats, Order, OrderedReader, Record, RecordReader, PERF_RECORD_SAMPLE};

/// A reader that hands out at most `chunk` bytes per call, like a pipe.
struct Chunked {
    data: Vec<u8>,
    pos: usize,
    chunk: usize,
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn touch_record(rec: &Record<'_>) {
    let _ = rec.time();
    if rec.type_() == PERF_RECORD_SAMPLE {
        if let Ok(s) = rec.sample() {
            let mut acc = s.ip.unwrap_or(0) ^ s.period.unwrap_or(0);
            if let Some(cc) = s.callchain {
                acc ^= cc.iter().fold(0, |a, x| a ^ x);
            }
            if let Some(r) = s.read {
                acc ^= r.time_enabled().unwrap_or(0) ^ r.time_running().unwrap_or(0);
                for v in r.values() {
                    acc ^= v.value ^ v.id.unwrap_or(0) ^ v.lost.unwrap_or(0);
                }
            }
            if let Some(b) = s.branch_stack {
                for e in b.entries() {
                    acc ^= e.from ^ e.to ^ e.flags;
                }
            }
            for regs in [s.regs_user, s.regs_intr].into_iter().flatten() {
                for i in 0..64 {
                    acc ^= regs.get(i).unwrap_or(0);
                }
            }
            if let Some(st) = s.stack_user {
                acc ^= st.valid().len() as u64;
            }
            std::hint::black_box(acc);
        }
    } else if let Ok(d) = rec.decode() {
        std::hint::black_box(format!("{d:?}"));
    }
}

fn touch_meta(meta: &perf_data::Meta) {
    for e in &meta.events {
        std::hint::black_box(e.name());
    }
    let f = &meta.features;
    for id in 0..32 {
        std::hint::black_box(f.string(id));
    }
    std::hint::black_box((
        f.hostname(),
        f.os_release(),
        f.perf_version(),
        f.arch(),
        f.nr_cpus(),
        f.total_mem(),
        f.cmdline(),
        f.sample_time(),
        f.event_desc(),
        f.build_ids(),
        f.compressed(),
    ));
}

fn walk_time_order(rr: RecordReader) {
    let mut r = OrderedReader::new(rr, Order::Time);
    // A tiny queue limit exercises the early half-flush path too.
    r.set_queue_limit(0);
    while let Ok(Some(rec)) = r.next_record() {
        touch_record(&rec);
    }
    touch_meta(r.meta());
    std::hint::black_box(r.diagnostics());
}

fuzz_target!(|data: &[u8]| {
    if let Ok(rr) = RecordReader::from_bytes(data.to_vec()) {
        walk_time_order(rr);
    }
    if let Ok(mut rr) = RecordReader::from_bytes(data.to_vec()) {
        let _ = Stats::collect(&mut rr, |_| {});
        touch_meta(rr.meta());
    }
    let chunk = 1 + data.first().copied().unwrap_or(0) as usize * 7;
    let stream = Chunked {
        data: data.to_vec(),
        pos: 0,
        chunk,
    };
    if let Ok(mut rr) = RecordReader::from_stream(Box::new(stream)) {
        while let Ok(Some(rec)) = rr.next_record() {
            touch_record(&rec);
        }
        touch_meta(rr.meta());
    }
});
