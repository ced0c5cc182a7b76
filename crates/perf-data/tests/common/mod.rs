//! The harness of the bad-input tests: a counting allocator and time
//! limits, reading in every mode, indexes of good files, fresh recordings
//! and byte surgery.

#![allow(dead_code)]

pub use std::alloc::{GlobalAlloc, Layout, System};
pub use std::cell::Cell;
pub use std::collections::HashMap;
pub use std::io::{self, Read};
pub use std::path::{Path, PathBuf};
pub use std::process::{Command, Stdio};
pub use std::sync::mpsc::{self, RecvTimeoutError};
pub use std::sync::OnceLock;
#[allow(unused_imports)] // (not every test file times its cases)
pub use std::time::{Duration, Instant};

pub use perf_data::stats::Stats;
pub use perf_data::*;

pub const WILD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/perfdata-wild"
);
pub const CORRUPT_WILD: &str = "perf.data.piped.corrupted.zero_size_sample-3.2";
pub const TIME_LIMIT: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------- harness

/// Counts each thread's heap bytes so a case can check its peak allocation.
pub struct CountingAlloc;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

pub fn note_alloc(delta: isize) {
    let _ = LIVE.try_with(|l| {
        let v = l.get() + delta;
        l.set(v);
        let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
    });
}

// SAFETY: forwards every call to the system allocator unchanged; the
// bookkeeping touches only const-initialised thread-locals (no allocation).
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            note_alloc(l.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            note_alloc(l.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        note_alloc(-(l.size() as isize));
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            note_alloc(new as isize - l.size() as isize);
        }
        q
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Runs `f` and returns its result with the most heap it held at once.
pub fn with_peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(|l| l.get());
    PEAK.with(|p| p.set(base));
    let v = f();
    let peak = PEAK.with(|p| p.get()) - base;
    (v, peak.max(0) as usize)
}

/// The most heap a read of `len` input bytes may hold (Rust allocations;
/// zstd's own window is C memory). Generous, but linear in the input.
pub fn heap_bound(len: usize) -> usize {
    64 * len + (16 << 20)
}

/// Runs `f` on its own thread; fails the test if it panics or takes too long.
pub fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(what.to_string())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .expect("spawning a test thread");
    match rx.recv_timeout(TIME_LIMIT) {
        Ok(v) => v,
        Err(RecvTimeoutError::Timeout) => panic!("{what}: no result after {TIME_LIMIT:?} (hang?)"),
        Err(RecvTimeoutError::Disconnected) => panic!("{what}: the reader panicked"),
    }
}

/// Delivers bytes at most `chunk` at a time, like a pipe.
pub struct Chunked {
    pub data: Vec<u8>,
    pub pos: usize,
    pub chunk: usize,
}

impl Read for Chunked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `RecordReader::from_bytes`, file order.
    Bytes,
    /// `OrderedReader` in perf's time order.
    Time,
    /// `RecordReader::from_stream`, fed in small chunks.
    Stream,
    /// `Stats::collect`.
    Stats,
}
pub const MODES: [Mode; 4] = [Mode::Bytes, Mode::Time, Mode::Stream, Mode::Stats];

/// What one read of some bytes produced.
#[derive(Debug)]
pub struct Run {
    /// Error from opening (header, attrs).
    pub open_err: Option<Error>,
    /// Error that ended the record walk.
    pub walk_err: Option<Error>,
    pub records: u64,
    pub samples: u64,
    /// Records whose `sample()` / `decode()` failed (each failure checked).
    pub undecodable: u64,
    pub warnings: Diagnostics,
}

impl Run {
    pub fn warning(&self, kind: &str) -> Option<&Warning> {
        self.warnings.warnings.get(kind)
    }
    pub fn describe(&self) -> String {
        format!(
            "open_err={:?} walk_err={:?} records={} samples={} warnings={:?}",
            self.open_err.as_ref().map(|e| e.to_string()),
            self.walk_err.as_ref().map(|e| e.to_string()),
            self.records,
            self.samples,
            self.warnings.warnings
        )
    }
}

pub fn assert_error_names_offset(e: &Error, ctx: &str) {
    let msg = e.to_string();
    if matches!(e, Error::VersionOne) {
        return;
    }
    assert!(e.offset().is_some(), "{ctx}: error without offset: {msg}");
    assert!(
        msg.contains("byte offset"),
        "{ctx}: error message does not name the offset: {msg}"
    );
}

pub fn visit(rec: &Record<'_>, run: &mut Run, ctx: &str) {
    run.records += 1;
    let _ = rec.time();
    let res = if rec.type_() == PERF_RECORD_SAMPLE {
        run.samples += 1;
        rec.sample().map(|s| {
            // Touch the variable-length parts: they must be within the record.
            let n = s.callchain.map_or(0, |c| c.iter().count());
            let m = s.branch_stack.map_or(0, |b| b.entries().count());
            let r = s.read.map_or(0, |r| r.values().count());
            std::hint::black_box((n, m, r, s.stack_user.map(|st| st.valid().len())));
        })
    } else {
        rec.decode().map(|d| {
            std::hint::black_box(format!("{d:?}"));
        })
    };
    if let Err(e) = res {
        assert_error_names_offset(&e, ctx);
        assert_eq!(
            e.offset(),
            Some(rec.raw.offset),
            "{ctx}: decode error names another offset: {e}"
        );
        run.undecodable += 1;
    }
}

pub fn open(bytes: Vec<u8>, mode: Mode) -> Result<RecordReader> {
    if mode == Mode::Stream {
        let chunk = 1 + bytes.len() % 4093;
        RecordReader::from_stream(Box::new(Chunked {
            data: bytes,
            pos: 0,
            chunk,
        }))
    } else {
        RecordReader::from_bytes(bytes)
    }
}

pub fn read_unbounded(bytes: Vec<u8>, mode: Mode, ctx: &str) -> Run {
    let mut run = Run {
        open_err: None,
        walk_err: None,
        records: 0,
        samples: 0,
        undecodable: 0,
        warnings: Diagnostics::default(),
    };
    let mut rr = match open(bytes, mode) {
        Ok(r) => r,
        Err(e) => {
            assert_error_names_offset(&e, ctx);
            run.open_err = Some(e);
            return run;
        }
    };
    // Every feature decoder must cope with whatever the sections hold.
    let f = &rr.meta().features;
    std::hint::black_box((f.cmdline(), f.event_desc(), f.build_ids(), f.nr_cpus()));
    match mode {
        Mode::Bytes | Mode::Stream => loop {
            match rr.next_record() {
                Ok(Some(rec)) => visit(&rec, &mut run, ctx),
                Ok(None) => break,
                Err(e) => {
                    run.walk_err = Some(e);
                    break;
                }
            }
        },
        Mode::Time => {
            let mut r = OrderedReader::new(rr, Order::Time);
            loop {
                match r.next_record() {
                    Ok(Some(rec)) => visit(&rec, &mut run, ctx),
                    Ok(None) => break,
                    Err(e) => {
                        run.walk_err = Some(e);
                        break;
                    }
                }
            }
            run.warnings = r.diagnostics().clone();
            return finish(run, ctx);
        }
        Mode::Stats => match Stats::collect(&mut rr, |_| {}) {
            Ok(s) => {
                run.records = s.nr_events[0];
                run.samples = s.nr_events[PERF_RECORD_SAMPLE as usize];
            }
            Err(e) => run.walk_err = Some(e),
        },
    }
    run.warnings = rr.diagnostics().clone();
    finish(run, ctx)
}

pub fn finish(run: Run, ctx: &str) -> Run {
    if let Some(e) = &run.walk_err {
        assert_error_names_offset(e, ctx);
    }
    run
}

/// Reads `bytes` in `mode` on a thread with a time and a heap limit.
pub fn read(bytes: &[u8], mode: Mode, ctx: &str) -> Run {
    let (bytes, ctx2) = (bytes.to_vec(), ctx.to_string());
    let len = bytes.len();
    let (run, peak) = bounded(ctx, move || {
        with_peak(|| read_unbounded(bytes, mode, &ctx2))
    });
    assert!(
        peak <= heap_bound(len),
        "{ctx}: held {peak} bytes of heap reading {len} bytes"
    );
    run
}

// ---------------------------------------------------------------- indexes of good files

/// Where each record of an undamaged file ends (for salvage expectations).
pub struct Index {
    /// End offset of the outermost record that completes each SAMPLE.
    pub sample_ends: Vec<u64>,
    /// (offset, end, type) of each record framed in the input itself.
    pub tops: Vec<(u64, u64, u32)>,
    /// The data section offset (file mode) or 16 (pipe mode).
    pub data_start: u64,
    pub pipe: bool,
    /// Diagnostics of the undamaged file.
    pub warnings: Diagnostics,
}

pub fn index(bytes: &[u8]) -> Index {
    let mut rr = RecordReader::from_bytes(bytes.to_vec()).expect("good file opens");
    let pipe = rr.meta().is_pipe();
    let data_start = if pipe {
        16
    } else {
        rr.meta().header.as_ref().expect("file header").data.offset
    };
    let mut ends: HashMap<u64, u64> = HashMap::new();
    let mut tops = Vec::new();
    let mut sample_ends = Vec::new();
    while let Some(rec) = rr.next_record().expect("good file reads") {
        let raw = rec.raw;
        let end = if raw.from_compressed {
            ends[&raw.offset]
        } else {
            let end = raw.offset + raw.size() as u64 + raw.trailing.len() as u64;
            ends.insert(raw.offset, end);
            tops.push((raw.offset, end, raw.type_));
            end
        };
        if raw.type_ == PERF_RECORD_SAMPLE {
            sample_ends.push(end);
        }
    }
    Index {
        sample_ends,
        tops,
        data_start,
        pipe,
        warnings: rr.diagnostics().clone(),
    }
}

impl Index {
    pub fn samples_before(&self, cut: u64) -> u64 {
        self.sample_ends.iter().filter(|&&e| e <= cut).count() as u64
    }
    pub fn is_record_boundary(&self, cut: u64) -> bool {
        cut == self.data_start || self.tops.iter().any(|t| t.1 == cut)
    }
    pub fn samples(&self) -> u64 {
        self.sample_ends.len() as u64
    }
    pub fn first_top_of_type(&self, t: u32) -> Option<(u64, u64)> {
        self.tops
            .iter()
            .find(|r| r.2 == t)
            .map(|&(off, end, _)| (off, end))
    }
}

/// Cuts the file at `cut` bytes and checks salvage in every mode.
pub fn check_truncation(name: &str, good: &[u8], idx: &Index, cut: usize) {
    let cut = cut.min(good.len());
    let want = idx.samples_before(cut as u64);
    for mode in MODES {
        let ctx = format!("{name} cut at {cut} of {} ({mode:?})", good.len());
        let run = read(&good[..cut], mode, &ctx);
        if let Some(e) = &run.open_err {
            // Failing outright is only fine when nothing complete was lost.
            assert_eq!(
                want, 0,
                "{ctx}: refused ({e}) although {want} complete samples precede the cut"
            );
            continue;
        }
        assert!(run.walk_err.is_none(), "{ctx}: {}", run.describe());
        assert_eq!(
            run.samples,
            want,
            "{ctx}: salvage lost or invented samples: {}",
            run.describe()
        );
        let clean_cut = cut == good.len() || (idx.pipe && idx.is_record_boundary(cut as u64));
        if !clean_cut {
            assert!(
                !run.warnings.is_empty(),
                "{ctx}: a cut file read without any warning: {}",
                run.describe()
            );
        }
    }
}

pub fn truncation_points(len: usize) -> Vec<usize> {
    let mut v = vec![0, 8, 15, 16, 17, 64, 103, 104, 256];
    v.extend((1..32).map(|k| len * k / 32));
    v.push(len.saturating_sub(1));
    v.sort_unstable();
    v.dedup();
    v
}

pub fn wild_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(WILD)
        .expect("the wild conformance files")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("perf.data"))
        })
        .collect();
    v.sort();
    assert!(v.len() >= 10, "expected the wild perf.data files in {WILD}");
    v
}

pub fn name_of(p: &Path) -> String {
    p.file_name().unwrap_or_default().to_string_lossy().into()
}

// ---------------------------------------------------------------- fresh recordings

pub struct Fresh {
    /// `perf record -e cpu-clock -g`
    pub file: Vec<u8>,
    /// `... -z`
    pub file_z: Vec<u8>,
    /// `... -o -` (pipe mode)
    pub pipe: Vec<u8>,
    /// `... -z -o -`
    pub pipe_z: Vec<u8>,
    pub dir: PathBuf,
}

pub const WORKLOAD: &str = "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done";

pub fn perf_available() -> bool {
    Command::new("perf")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

pub fn perf_record(dir: &Path, name: &str, extra: &[&str], pipe: bool) -> Vec<u8> {
    let out = dir.join(name);
    let mut cmd = Command::new("perf");
    cmd.args(["record", "-q", "-e", "cpu-clock", "-g"])
        .args(extra);
    if pipe {
        cmd.args(["-o", "-"])
            .stdout(std::fs::File::create(&out).expect("output file"));
    } else {
        cmd.arg("-o").arg(&out).stdout(Stdio::null());
    }
    let st = cmd
        .args(["--", "sh", "-c", WORKLOAD])
        .stderr(Stdio::null())
        .status()
        .expect("running perf record");
    assert!(st.success(), "perf record {extra:?} failed: {st}");
    let b = std::fs::read(&out).expect("reading the recording");
    assert!(
        b.len() > 1000,
        "{name}: recording is only {} bytes",
        b.len()
    );
    b
}

/// Recordings made once per test run; None (test skipped) without perf.
pub fn fresh() -> Option<&'static Fresh> {
    static F: OnceLock<Option<Fresh>> = OnceLock::new();
    F.get_or_init(|| {
        assert!(
            perf_available(),
            "perf 6.1 is required by the differential tests: apt-get install linux-perf"
        );
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("bad_input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Some(Fresh {
            file: perf_record(&dir, "g.data", &[], false),
            file_z: perf_record(&dir, "z.data", &["-z"], false),
            pipe: perf_record(&dir, "pipe.data", &[], true),
            pipe_z: perf_record(&dir, "pipe-z.data", &["-z"], true),
            dir,
        })
    })
    .as_ref()
}

pub fn fresh_sets(f: &Fresh) -> [(&'static str, &[u8]); 4] {
    [
        ("fresh -g", &f.file),
        ("fresh -g -z", &f.file_z),
        ("fresh pipe -g", &f.pipe),
        ("fresh pipe -g -z", &f.pipe_z),
    ]
}

// ---------------------------------------------------------------- byte surgery

pub fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
pub fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Deterministic xorshift64* generator for garbage and mutations.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// A file-mode recording with a header field replaced.
pub fn with_field(good: &[u8], at: usize, v: u64) -> Vec<u8> {
    let mut b = good.to_vec();
    put_u64(&mut b, at, v);
    b
}
