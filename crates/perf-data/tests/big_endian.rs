//! Big-endian producers: the same recording written in both byte orders must
//! decode identically, and perf (which byte-swaps such files) must agree.

use std::path::Path;
use std::process::Command;

use perf_data::attr::{flag, EventAttr};
use perf_data::{Endian, Order, OrderedReader, RecordData, RecordReader, PERF_RECORD_SAMPLE};
use perf_data::{
    PERF_RECORD_COMM, PERF_RECORD_FINISHED_ROUND, PERF_RECORD_MMAP, PERF_SAMPLE_CALLCHAIN,
    PERF_SAMPLE_IP, PERF_SAMPLE_PERIOD, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
};

struct Builder {
    e: Endian,
    data: Vec<u8>,
}

impl Builder {
    fn u16(&mut self, v: u16) {
        self.data.extend_from_slice(&self.e.put_u16(v));
    }
    fn u32(&mut self, v: u32) {
        self.data.extend_from_slice(&self.e.put_u32(v));
    }
    fn u64(&mut self, v: u64) {
        self.data.extend_from_slice(&self.e.put_u64(v));
    }
    fn record(&mut self, type_: u32, misc: u16, body: impl FnOnce(&mut Builder)) {
        let start = self.data.len();
        self.u32(type_);
        self.u16(misc);
        self.u16(0);
        body(self);
        while !self.data.len().is_multiple_of(8) {
            self.data.push(0);
        }
        let size = (self.data.len() - start) as u16;
        let b = self.e.put_u16(size);
        self.data[start + 6..start + 8].copy_from_slice(&b);
    }
    fn str_padded(&mut self, s: &str) {
        self.data.extend_from_slice(s.as_bytes());
        self.data.push(0);
    }
}

fn attr() -> EventAttr {
    EventAttr {
        type_: 1, // software
        size: 128,
        config: 0, // cpu-clock
        sample_period_or_freq: 4000,
        sample_type: PERF_SAMPLE_IP
            | PERF_SAMPLE_TID
            | PERF_SAMPLE_TIME
            | PERF_SAMPLE_CALLCHAIN
            | PERF_SAMPLE_PERIOD,
        flags: (1 << flag::DISABLED)
            | (1 << flag::INHERIT)
            | (1 << flag::MMAP)
            | (1 << flag::COMM)
            | (1 << flag::FREQ)
            | (1 << flag::SAMPLE_ID_ALL)
            | (1 << flag::EXCLUDE_HV),
        ..Default::default()
    }
}

/// A small file-mode recording: COMM, MMAP, three samples, FINISHED_ROUND.
fn build(e: Endian) -> Vec<u8> {
    let a = attr();
    let attr_bytes = a.encode(e);
    let attr_size = attr_bytes.len() as u64 + 16;
    let mut b = Builder {
        e,
        data: Vec::new(),
    };
    // Header placeholder, attr section, ids, then data.
    b.data.resize(104, 0);
    let attrs_off = b.data.len() as u64;
    b.data.extend_from_slice(&attr_bytes);
    let ids_off = attrs_off + attr_size;
    b.u64(ids_off);
    b.u64(8);
    b.u64(77); // the one id
    let data_off = b.data.len() as u64;
    // Trailer (sample_id_all): pid/tid, time.
    b.record(PERF_RECORD_COMM, 0, |b| {
        b.u32(42);
        b.u32(42);
        b.str_padded("be-demo");
        while b.data.len() % 8 != 0 {
            b.data.push(0);
        }
        b.u32(42);
        b.u32(42);
        b.u64(1_000_000_000);
    });
    b.record(PERF_RECORD_MMAP, 2, |b| {
        b.u32(42);
        b.u32(42);
        b.u64(0x40_0000);
        b.u64(0x1000);
        b.u64(0);
        b.str_padded("/usr/bin/be-demo");
        while b.data.len() % 8 != 0 {
            b.data.push(0);
        }
        b.u32(42);
        b.u32(42);
        b.u64(1_000_000_500);
    });
    for (i, t) in [1_000_100_000u64, 1_000_050_000, 1_000_200_000]
        .iter()
        .enumerate()
    {
        b.record(PERF_RECORD_SAMPLE, 2, |b| {
            b.u64(0x40_0100 + i as u64 * 16); // ip
            b.u32(42);
            b.u32(42);
            b.u64(*t);
            b.u64(250_000); // period
            b.u64(3); // callchain nr
            b.u64(perf_data::PERF_CONTEXT_USER);
            b.u64(0x40_0100 + i as u64 * 16);
            b.u64(0x40_0200);
        });
    }
    b.record(PERF_RECORD_FINISHED_ROUND, 0, |_| {});
    let data_size = b.data.len() as u64 - data_off;
    // Header.
    let mut h = Builder {
        e,
        data: Vec::new(),
    };
    h.data.extend_from_slice(b"PERFILE2");
    if e == Endian::Big {
        // The magic is a u64 written in the producer's byte order.
        h.data.reverse();
    }
    h.u64(104);
    h.u64(attr_size);
    h.u64(attrs_off);
    h.u64(attr_size);
    h.u64(data_off);
    h.u64(data_size);
    h.u64(0);
    h.u64(0);
    for _ in 0..4 {
        h.u64(0); // no features
    }
    b.data[..104].copy_from_slice(&h.data);
    b.data
}

fn decode_all(bytes: Vec<u8>) -> Vec<String> {
    let mut r = OrderedReader::new(RecordReader::from_bytes(bytes).unwrap(), Order::Time);
    assert_eq!(r.meta().events.len(), 1);
    assert_eq!(
        r.meta().events[0].attr,
        attr(),
        "attr (incl. flag bits) round-trips"
    );
    assert_eq!(r.meta().events[0].ids, vec![77]);
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        if rec.type_() == PERF_RECORD_SAMPLE {
            let s = rec.sample().unwrap();
            let cc: Vec<u64> = s.callchain.unwrap().iter().collect();
            out.push(format!(
                "sample ip={:#x} pid={:?} time={:?} period={:?} chain={cc:x?}",
                s.ip.unwrap(),
                s.pid,
                s.time,
                s.period
            ));
        } else {
            let (d, sid) = rec.decode().unwrap();
            let d = match d {
                RecordData::Comm(c) => format!("comm {}", String::from_utf8_lossy(c.comm)),
                RecordData::Mmap(m) => format!(
                    "mmap {:#x}+{:#x} {}",
                    m.addr,
                    m.len,
                    String::from_utf8_lossy(m.filename)
                ),
                other => format!("{other:?}"),
            };
            out.push(format!("{d} time={:?}", sid.time));
        }
    }
    out
}

#[test]
fn both_byte_orders_decode_identically() {
    let le = decode_all(build(Endian::Little));
    let be = decode_all(build(Endian::Big));
    assert_eq!(le, be);
    assert_eq!(le.len(), 6);
    // perf's delivery: FINISHED_ROUND goes out at once (the first round
    // flushes nothing), then the queue in time order, so the sample at
    // ...050_000 comes before the one at ...100_000 although written after it.
    assert_eq!(le[0], "FinishedRound time=None");
    assert!(le[3].contains("time=Some(1000050000)"), "{le:#?}");
    assert!(
        le[3].contains("chain=[fffffffffffffe00, 400110, 400200]"),
        "{le:#?}"
    );
}

#[test]
fn perf_reads_our_big_endian_file_like_the_little_endian_one() {
    let dir = tempfile::tempdir().unwrap();
    let script = |name: &str, bytes: Vec<u8>| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        perf(
            &p,
            &[
                "script",
                "-F",
                "comm,pid,tid,time,ip,period",
                "--show-task-events",
                "--show-mmap-events",
            ],
        )
    };
    let le = script("le.data", build(Endian::Little));
    let be = script("be.data", build(Endian::Big));
    assert!(
        le.contains("be-demo"),
        "perf could not read the LE file: {le}"
    );
    assert_eq!(le, be);
}

fn perf(path: &Path, args: &[&str]) -> String {
    let out = Command::new("/usr/bin/perf")
        .env("PERF_CONFIG", "/dev/null")
        .args(args)
        .arg("-i")
        .arg(path)
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}
