//! Damaged and hostile perf.data input: truncations, garbage, absurd sizes,
//! corrupt zstd frames, killed recorders. The reader must return an `Error`
//! naming a byte offset, or a partial result with a counted warning that
//! keeps every complete record before the damage. Never a panic, a hang or
//! an unbounded allocation: every case runs on its own thread with a time
//! limit, and a panic there fails the test with the case's name.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use perf_data::stats::Stats;
use perf_data::*;

const WILD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/perfdata-wild"
);
const CORRUPT_WILD: &str = "perf.data.piped.corrupted.zero_size_sample-3.2";
const TIME_LIMIT: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------- harness

/// Counts each thread's heap bytes so a case can check its peak allocation.
struct CountingAlloc;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note_alloc(delta: isize) {
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
fn with_peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(|l| l.get());
    PEAK.with(|p| p.set(base));
    let v = f();
    let peak = PEAK.with(|p| p.get()) - base;
    (v, peak.max(0) as usize)
}

/// The most heap a read of `len` input bytes may hold (Rust allocations;
/// zstd's own window is C memory). Generous, but linear in the input.
fn heap_bound(len: usize) -> usize {
    64 * len + (16 << 20)
}

/// Runs `f` on its own thread; fails the test if it panics or takes too long.
fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `RecordReader::from_bytes`, file order.
    Bytes,
    /// `Reader` in perf's time order.
    Time,
    /// `RecordReader::from_stream`, fed in small chunks.
    Stream,
    /// `Stats::collect`.
    Stats,
}
const MODES: [Mode; 4] = [Mode::Bytes, Mode::Time, Mode::Stream, Mode::Stats];

/// What one read of some bytes produced.
#[derive(Debug)]
struct Run {
    /// Error from opening (header, attrs).
    open_err: Option<Error>,
    /// Error that ended the record walk.
    walk_err: Option<Error>,
    records: u64,
    samples: u64,
    /// Records whose `sample()` / `decode()` failed (each failure checked).
    undecodable: u64,
    warnings: Diagnostics,
}

impl Run {
    fn warning(&self, kind: &str) -> Option<&Warning> {
        self.warnings.warnings.get(kind)
    }
    fn describe(&self) -> String {
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

fn assert_error_names_offset(e: &Error, ctx: &str) {
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

fn visit(rec: &Record<'_>, run: &mut Run, ctx: &str) {
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

fn open(bytes: Vec<u8>, mode: Mode) -> Result<RecordReader> {
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

fn read_unbounded(bytes: Vec<u8>, mode: Mode, ctx: &str) -> Run {
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
            let mut r = Reader::new(rr, Order::Time);
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

fn finish(run: Run, ctx: &str) -> Run {
    if let Some(e) = &run.walk_err {
        assert_error_names_offset(e, ctx);
    }
    run
}

/// Reads `bytes` in `mode` on a thread with a time and a heap limit.
fn read(bytes: &[u8], mode: Mode, ctx: &str) -> Run {
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
struct Index {
    /// End offset of the outermost record that completes each SAMPLE.
    sample_ends: Vec<u64>,
    /// (offset, end, type) of each record framed in the input itself.
    tops: Vec<(u64, u64, u32)>,
    /// The data section offset (file mode) or 16 (pipe mode).
    data_start: u64,
    pipe: bool,
    /// Diagnostics of the undamaged file.
    warnings: Diagnostics,
}

fn index(bytes: &[u8]) -> Index {
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
    fn samples_before(&self, cut: u64) -> u64 {
        self.sample_ends.iter().filter(|&&e| e <= cut).count() as u64
    }
    fn is_record_boundary(&self, cut: u64) -> bool {
        cut == self.data_start || self.tops.iter().any(|t| t.1 == cut)
    }
    fn samples(&self) -> u64 {
        self.sample_ends.len() as u64
    }
    fn first_top_of_type(&self, t: u32) -> Option<(u64, u64)> {
        self.tops
            .iter()
            .find(|r| r.2 == t)
            .map(|&(off, end, _)| (off, end))
    }
}

/// Cuts the file at `cut` bytes and checks salvage in every mode.
fn check_truncation(name: &str, good: &[u8], idx: &Index, cut: usize) {
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

fn truncation_points(len: usize) -> Vec<usize> {
    let mut v = vec![0, 8, 15, 16, 17, 64, 103, 104, 256];
    v.extend((1..32).map(|k| len * k / 32));
    v.push(len.saturating_sub(1));
    v.sort_unstable();
    v.dedup();
    v
}

fn wild_files() -> Vec<PathBuf> {
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

fn name_of(p: &Path) -> String {
    p.file_name().unwrap_or_default().to_string_lossy().into()
}

// ---------------------------------------------------------------- fresh recordings

struct Fresh {
    /// `perf record -e cpu-clock -g`
    file: Vec<u8>,
    /// `... -z`
    file_z: Vec<u8>,
    /// `... -o -` (pipe mode)
    pipe: Vec<u8>,
    /// `... -z -o -`
    pipe_z: Vec<u8>,
    dir: PathBuf,
}

const WORKLOAD: &str = "i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done";

fn perf_available() -> bool {
    Command::new("perf")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn perf_record(dir: &Path, name: &str, extra: &[&str], pipe: bool) -> Vec<u8> {
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
fn fresh() -> Option<&'static Fresh> {
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

fn fresh_sets(f: &Fresh) -> [(&'static str, &[u8]); 4] {
    [
        ("fresh -g", &f.file),
        ("fresh -g -z", &f.file_z),
        ("fresh pipe -g", &f.pipe),
        ("fresh pipe -g -z", &f.pipe_z),
    ]
}

// ---------------------------------------------------------------- byte surgery

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Deterministic xorshift64* generator for garbage and mutations.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

// ---------------------------------------------------------------- tests: real files

#[test]
fn wild_files_agree_across_modes() {
    for p in wild_files() {
        let name = name_of(&p);
        let good = std::fs::read(&p).unwrap();
        let idx = index(&good);
        let runs: Vec<Run> = MODES
            .iter()
            .map(|&m| read(&good, m, &format!("{name} ({m:?})")))
            .collect();
        for (m, r) in MODES.iter().zip(&runs) {
            assert!(r.open_err.is_none() && r.walk_err.is_none(), "{name} {m:?}");
            assert_eq!(r.samples, idx.samples(), "{name} {m:?}: {}", r.describe());
            assert_eq!(r.records, runs[0].records, "{name} {m:?}");
        }
        if name == CORRUPT_WILD {
            let w = runs[0]
                .warning("corrupt record")
                .unwrap_or_else(|| panic!("{name}: no warning: {}", runs[0].describe()));
            assert!(w.message.contains("size 0"), "{name}: {w:?}");
            assert!(w.first_offset > 16 && w.first_offset < good.len() as u64);
            // Everything before the bad record was kept: it is the last framed.
            assert_eq!(idx.tops.last().unwrap().1, w.first_offset, "{name}");
        } else {
            assert!(
                runs[0].warning("corrupt record").is_none() && runs[0].undecodable == 0,
                "{name}: {}",
                runs[0].describe()
            );
        }
    }
}

#[test]
fn wild_files_truncated_keep_every_complete_record() {
    for p in wild_files() {
        let name = name_of(&p);
        let good = std::fs::read(&p).unwrap();
        let idx = index(&good);
        for cut in truncation_points(good.len()) {
            check_truncation(&name, &good, &idx, cut);
        }
        // Cuts one byte into, and one byte short of the end of, a few records.
        for &(off, end, _) in idx.tops.iter().step_by(idx.tops.len() / 7 + 1) {
            check_truncation(&name, &good, &idx, off as usize + 1);
            check_truncation(&name, &good, &idx, end as usize - 1);
        }
    }
}

#[test]
fn fresh_recordings_truncated_keep_every_complete_record() {
    let Some(f) = fresh() else { return };
    for (name, good) in fresh_sets(f) {
        let idx = index(good);
        assert!(idx.samples() > 5, "{name}: only {} samples", idx.samples());
        assert!(idx.warnings.is_empty(), "{name}: {:?}", idx.warnings);
        for cut in truncation_points(good.len()) {
            check_truncation(name, good, &idx, cut);
        }
        for &(off, end, _) in idx.tops.iter().step_by(idx.tops.len() / 11 + 1) {
            check_truncation(name, good, &idx, off as usize + 5);
            check_truncation(name, good, &idx, end as usize - 1);
        }
    }
}

#[test]
fn pipe_truncated_mid_record_warns_at_that_record() {
    let Some(f) = fresh() else { return };
    for (name, good) in [("pipe", &f.pipe), ("pipe -z", &f.pipe_z)] {
        let idx = index(good);
        let &(off, end, t) = &idx.tops[idx.tops.len() / 2];
        let cut = (off + (end - off) / 2) as usize;
        for mode in MODES {
            let ctx = format!("{name} cut inside the record at {off} ({mode:?})");
            let run = read(&good[..cut], mode, &ctx);
            let w = run
                .warning("truncated record")
                .unwrap_or_else(|| panic!("{ctx}: {}", run.describe()));
            assert_eq!(w.first_offset, off, "{ctx}: type {t}: {w:?}");
            assert_eq!(run.samples, idx.samples_before(off), "{ctx}");
        }
    }
}

// ---------------------------------------------------------------- tests: garbage

#[test]
fn random_garbage_is_refused_with_an_offset() {
    let mut rng = Rng(0x5eed_0001);
    for i in 0..200 {
        let n = rng.below(5000) as usize;
        let mut b = rng.bytes(n);
        if b.len() >= 8 && &b[..8] == b"PERFILE2" {
            b[0] = b'X';
        }
        for mode in [Mode::Bytes, Mode::Stream] {
            let run = read(&b, mode, &format!("garbage #{i} ({n} bytes, {mode:?})"));
            let e = run.open_err.expect("garbage must be refused");
            assert!(
                matches!(
                    e,
                    Error::BadMagic { .. } | Error::Truncated { offset: 0, .. }
                ),
                "garbage #{i}: {e}"
            );
            assert_eq!(e.offset(), Some(0));
        }
    }
}

#[test]
fn random_garbage_behind_a_valid_magic_never_panics() {
    let mut rng = Rng(0x5eed_0002);
    for i in 0..300 {
        let n = 16 + rng.below(6000) as usize;
        let mut b = rng.bytes(n);
        b[..8].copy_from_slice(b"PERFILE2");
        // Half pipe mode, half file mode with a plausible header.
        if i % 2 == 0 {
            put_u64(&mut b, 8, 16);
        } else if b.len() >= 104 {
            put_u64(&mut b, 8, 104);
            put_u64(&mut b, 16, [0, 72, 80, 136, 152, rng.next()][i % 6]);
            for at in [24, 32, 40, 48] {
                let v = if rng.below(2) == 0 {
                    rng.below(n as u64)
                } else {
                    rng.next()
                };
                put_u64(&mut b, at, v);
            }
        }
        for mode in MODES {
            read(&b, mode, &format!("garbage-with-magic #{i} ({mode:?})"));
        }
    }
}

#[test]
fn mutated_recordings_never_panic() {
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    for n in [
        "perf.data.singleprocess-3.4",
        "perf.data.branch-4.14",
        "perf.data.piped.lost_samples-4.4",
        "perf.data.piped.header_features_aligned-6.12",
    ] {
        inputs.push((n.into(), std::fs::read(Path::new(WILD).join(n)).unwrap()));
    }
    if let Some(f) = fresh() {
        for (n, b) in fresh_sets(f) {
            inputs.push((n.into(), b.to_vec()));
        }
    }
    let mut rng = Rng(0x5eed_0003);
    for (name, good) in &inputs {
        for i in 0..60 {
            let mut b = good.clone();
            for _ in 0..1 + rng.below(12) {
                let at = rng.below(b.len() as u64) as usize;
                match rng.below(4) {
                    0 => b[at] ^= 1 << rng.below(8),
                    1 => b[at] = 0xff,
                    2 => b[at] = 0,
                    _ => {
                        let at = at.min(b.len() - 8);
                        put_u64(&mut b, at, u64::MAX - rng.below(3));
                    }
                }
            }
            for mode in MODES {
                read(&b, mode, &format!("{name} mutation #{i} ({mode:?})"));
            }
        }
    }
}

// ---------------------------------------------------------------- tests: headers

#[test]
fn wrong_magic_and_header_size_name_offsets() {
    let good = std::fs::read(Path::new(WILD).join("perf.data.singleprocess-3.4")).unwrap();
    let mut b = good.clone();
    b[..8].copy_from_slice(b"PERFILE3");
    let run = read(&b, Mode::Bytes, "PERFILE3");
    let e = run.open_err.expect("bad magic refused");
    assert!(matches!(e, Error::BadMagic { .. }), "{e}");
    assert!(e.to_string().contains("byte offset 0"), "{e}");

    b[..8].copy_from_slice(b"PERFFILE");
    let e = read(&b, Mode::Bytes, "PERFFILE")
        .open_err
        .expect("v1 refused");
    assert!(matches!(e, Error::VersionOne), "{e}");

    // A byte-swapped magic means a big-endian file; a swapped size is then absurd.
    let mut b = good.clone();
    b[..8].reverse();
    for mode in MODES {
        let run = read(&b, mode, "swapped magic");
        assert!(run.open_err.is_some(), "swapped magic: {}", run.describe());
    }

    for size in [0u64, 17, 103] {
        let mut b = good.clone();
        put_u64(&mut b, 8, size);
        for mode in [Mode::Bytes, Mode::Stream] {
            let e = read(&b, mode, &format!("header size {size}"))
                .open_err
                .unwrap_or_else(|| panic!("header size {size} accepted"));
            assert_eq!(e.offset(), Some(8), "header size {size}: {e}");
        }
    }
    for n in [0usize, 7, 8, 15] {
        let e = read(&good[..n], Mode::Bytes, "tiny")
            .open_err
            .expect("tiny");
        assert!(matches!(e, Error::Truncated { offset: 0, .. }), "{n}: {e}");
    }
}

/// A file-mode recording with a header field replaced.
fn with_field(good: &[u8], at: usize, v: u64) -> Vec<u8> {
    let mut b = good.to_vec();
    put_u64(&mut b, at, v);
    b
}

#[test]
fn absurd_header_sizes_give_errors_or_warnings() {
    let mut files = vec![(
        "singleprocess".to_string(),
        std::fs::read(Path::new(WILD).join("perf.data.singleprocess-3.4")).unwrap(),
    )];
    if let Some(f) = fresh() {
        files.push(("fresh -g".into(), f.file.clone()));
        files.push(("fresh -g -z".into(), f.file_z.clone()));
    }
    for (name, good) in &files {
        let idx = index(good);
        let len = good.len() as u64;
        let attr_size = get_u64(good, 16);
        let attrs_off = get_u64(good, 24);
        let data_off = get_u64(good, 40);
        let data_size = get_u64(good, 48);

        // attr_size: too small is an error at the attr_size field.
        for v in [0u64, 1, 64, 79] {
            let run = read(&with_field(good, 16, v), Mode::Bytes, "small attr_size");
            let e = run
                .open_err
                .unwrap_or_else(|| panic!("{name}: attr_size {v}"));
            assert_eq!(e.offset(), Some(16), "{name}: attr_size {v}: {e}");
        }
        // attr_size not matching the section: the attrs cannot be trusted;
        // an error inside the attr section, or a warning at attr_size.
        let attrs_end = attrs_off + get_u64(good, 32);
        for v in [attr_size - 8, attr_size + 8, 1 << 40, u64::MAX] {
            for mode in MODES {
                let ctx = format!("{name}: attr_size {v} ({mode:?})");
                let run = read(&with_field(good, 16, v), mode, &ctx);
                match &run.open_err {
                    Some(e) => assert!(
                        e.offset().is_some_and(|o| o >= attrs_off && o < attrs_end),
                        "{ctx}: {e}"
                    ),
                    None => {
                        let w = run.warning("corrupt attr section");
                        assert!(
                            w.is_some_and(|w| w.first_offset == 16),
                            "{ctx}: {}",
                            run.describe()
                        );
                    }
                }
            }
        }
        // attrs section offset and size.
        for (at, v) in [
            (24, u64::MAX),
            (24, u64::MAX - 7),
            (24, len),
            (32, u64::MAX),
            (32, len + 1),
        ] {
            let run = read(&with_field(good, at, v), Mode::Stats, "attrs section");
            let e = run
                .open_err
                .unwrap_or_else(|| panic!("{name}: attrs field {at} = {v} accepted"));
            assert!(matches!(e, Error::Truncated { .. }), "{name}: {e}");
        }
        // Data offset past the end: error naming that offset.
        for v in [len + 1, u64::MAX, u64::MAX - 100] {
            let run = read(&with_field(good, 40, v), Mode::Stats, "data offset");
            let e = run.open_err.expect("data offset past the end refused");
            assert_eq!(e.offset(), Some(v), "{name}: {e}");
        }
        // Data offset inside the header or misaligned: garbage records, no panic.
        for v in [0, 8, 104, data_off + 1, data_off + 3, len - 1, len] {
            for mode in MODES {
                read(
                    &with_field(good, 40, v),
                    mode,
                    &format!("{name}: data offset {v}"),
                );
            }
        }
        // Data size past the end: salvage every record, warn.
        for mode in MODES {
            let run = read(&with_field(good, 48, data_size + 1), mode, "data size + 1");
            assert!(run.samples >= idx.samples(), "{name}: {}", run.describe());
        }
        for v in [len, u64::MAX, u64::MAX - data_off + 1] {
            for mode in MODES {
                let ctx = format!("{name}: data size {v} ({mode:?})");
                let run = read(&with_field(good, 48, v), mode, &ctx);
                assert!(run.open_err.is_none(), "{ctx}: {}", run.describe());
                assert!(run.samples >= idx.samples(), "{ctx}: {}", run.describe());
                let w = run.warning("truncated data section");
                assert!(
                    w.is_some_and(|w| w.first_offset == data_off),
                    "{ctx}: {}",
                    run.describe()
                );
            }
        }
        // event_types is ignored by perf; absurd values must not matter.
        for v in [u64::MAX, len + 5] {
            let run = read(&with_field(good, 56, v), Mode::Stats, "event types");
            assert_eq!(run.samples, idx.samples(), "{name}: {}", run.describe());
        }
        // Every feature bit set: the table runs into the sections; no panic.
        let mut b = good.clone();
        for at in (72..104).step_by(8) {
            put_u64(&mut b, at, u64::MAX);
        }
        for mode in MODES {
            let run = read(&b, mode, &format!("{name}: all features ({mode:?})"));
            assert_eq!(run.samples, idx.samples(), "{name}: {}", run.describe());
        }
        // Absurd feature sections: warned about at their table entry, data intact.
        let table = (data_off + data_size) as usize;
        let nfeat = (72..104)
            .step_by(8)
            .map(|at| get_u64(good, at).count_ones() as usize)
            .sum::<usize>();
        assert!(nfeat > 0, "{name}: no features");
        for k in [0, nfeat / 2, nfeat - 1] {
            let entry = table + 16 * k;
            for (field, v) in [
                (0, u64::MAX),
                (0, len),
                (8, u64::MAX),
                (8, len),
                (0, u64::MAX - 3),
            ] {
                if field == 0 && v == len && get_u64(good, entry + 8) == 0 {
                    continue; // an empty section at the end of the file is fine
                }
                let b = with_field(good, entry + field, v);
                for mode in MODES {
                    let ctx = format!("{name}: feature #{k} field {field} = {v} ({mode:?})");
                    let run = read(&b, mode, &ctx);
                    assert!(run.open_err.is_none(), "{ctx}: {}", run.describe());
                    assert_eq!(run.samples, idx.samples(), "{ctx}");
                    let w = run.warning("truncated feature section");
                    assert!(
                        w.is_some_and(|w| w.first_offset == entry as u64),
                        "{ctx}: {}",
                        run.describe()
                    );
                }
            }
        }
        // The first attr's id section pointing nowhere: warned, data intact.
        let ids_at = (attrs_off + attr_size - 16) as usize;
        for (field, v) in [(0, u64::MAX), (8, u64::MAX), (8, len)] {
            let ctx = format!("{name}: ids field {field} = {v}");
            let run = read(&with_field(good, ids_at + field, v), Mode::Stats, &ctx);
            assert!(run.open_err.is_none(), "{ctx}: {}", run.describe());
            assert!(run.warning("truncated id section").is_some(), "{ctx}");
            assert_eq!(run.samples, idx.samples(), "{ctx}");
        }
    }
}

// ---------------------------------------------------------------- tests: records

#[test]
fn zero_size_record_stops_the_walk_with_a_warning_at_it() {
    let mut files = vec![(
        "singleprocess".to_string(),
        std::fs::read(Path::new(WILD).join("perf.data.singleprocess-3.4")).unwrap(),
    )];
    files.push((
        "piped.lost_samples".to_string(),
        std::fs::read(Path::new(WILD).join("perf.data.piped.lost_samples-4.4")).unwrap(),
    ));
    if let Some(f) = fresh() {
        files.push(("fresh -g".into(), f.file.clone()));
        files.push(("fresh pipe".into(), f.pipe.clone()));
    }
    for (name, good) in &files {
        let idx = index(good);
        for k in [0, idx.tops.len() / 3, idx.tops.len() - 1] {
            let off = idx.tops[k].0 as usize;
            for size in [0u16, 1, 7] {
                let mut b = good.clone();
                b[off + 6..off + 8].copy_from_slice(&size.to_le_bytes());
                for mode in MODES {
                    let ctx = format!("{name}: record #{k} at {off} size {size} ({mode:?})");
                    let run = read(&b, mode, &ctx);
                    let w = run
                        .warning("corrupt record")
                        .unwrap_or_else(|| panic!("{ctx}: {}", run.describe()));
                    assert_eq!(w.first_offset, off as u64, "{ctx}");
                    assert_eq!(run.samples, idx.samples_before(off as u64), "{ctx}");
                }
            }
        }
    }
}

#[test]
fn corrupt_zstd_frame_is_a_counted_warning_at_its_record() {
    let Some(f) = fresh() else { return };
    for (name, good) in [("-z", &f.file_z), ("pipe -z", &f.pipe_z)] {
        let idx = index(good);
        let (off, end) = idx
            .first_top_of_type(PERF_RECORD_COMPRESSED)
            .unwrap_or_else(|| panic!("{name}: no COMPRESSED record"));
        let from_it = idx.sample_ends.iter().filter(|&&e| e == end).count() as u64;
        assert!(
            from_it > 0,
            "{name}: the first COMPRESSED record holds no samples"
        );
        // Break the zstd frame magic (right after the 8-byte record header).
        let mut b = good.clone();
        b[off as usize + 8] ^= 0xff;
        for mode in MODES {
            let ctx = format!("{name}: bad zstd magic at {off} ({mode:?})");
            let run = read(&b, mode, &ctx);
            let w = run
                .warning("corrupt compressed record")
                .unwrap_or_else(|| panic!("{ctx}: {}", run.describe()));
            assert_eq!(w.first_offset, off, "{ctx}");
            assert!(w.message.contains("zstd"), "{ctx}: {w:?}");
            assert!(
                run.samples <= idx.samples() - from_it,
                "{ctx}: {}",
                run.describe()
            );
            assert!(
                run.samples >= idx.samples_before(off),
                "{ctx}: {}",
                run.describe()
            );
        }
        // Damage inside the frame: whatever zstd makes of it, no panic.
        let mut rng = Rng(0x5eed_0004);
        for i in 0..40 {
            let mut b = good.clone();
            let at = off + 8 + rng.below(end - off - 8);
            b[at as usize] = rng.next() as u8;
            for mode in MODES {
                read(
                    &b,
                    mode,
                    &format!("{name}: frame damage #{i} at {at} ({mode:?})"),
                );
            }
        }
        // The frame cut short inside its record (record size kept).
        let mut b = good.clone();
        let mid = (off + (end - off) / 2) as usize;
        b[mid..end as usize].fill(0);
        for mode in MODES {
            read(&b, mode, &format!("{name}: frame zeroed tail ({mode:?})"));
        }
    }
}

#[test]
fn killed_recorder_is_salvaged_to_the_end_of_the_file() {
    let Some(f) = fresh() else { return };
    // A recording whose recorder died: perf never rewrote the header.
    let path = f.dir.join("killed.data");
    let mut child = Command::new("perf")
        .args(["record", "-q", "-m", "4", "-e", "cpu-clock", "-g", "-o"])
        .arg(&path)
        .args([
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 1500000 ]; do i=$((i+1)); done",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("perf record");
    let pid = child.id();
    let t0 = Instant::now();
    while std::fs::metadata(&path).map_or(0, |m| m.len()) < 20_000
        && t0.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let workload =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    child.kill().expect("kill -9 perf");
    let _ = child.wait();
    for w in workload.split_whitespace() {
        let _ = Command::new("kill").args(["-9", w]).status();
    }
    let killed = std::fs::read(&path).unwrap();
    assert_eq!(
        get_u64(&killed, 48),
        0,
        "perf rewrote the data size before dying"
    );
    for mode in MODES {
        let ctx = format!("killed recording ({mode:?})");
        let run = read(&killed, mode, &ctx);
        assert!(
            run.open_err.is_none() && run.walk_err.is_none(),
            "{ctx}: {}",
            run.describe()
        );
        let w = run.warning("data size 0").expect("data size 0 warned");
        // The warning points at the header's data section (offset, size).
        assert_eq!(w.first_offset, 40, "{ctx}: {w:?}");
        assert!(
            run.samples > 0,
            "{ctx}: nothing salvaged: {}",
            run.describe()
        );
    }

    // The same damage made by hand: every sample of the data section is kept.
    for (name, good) in [("-g", &f.file), ("-g -z", &f.file_z)] {
        let idx = index(good);
        let b = with_field(good, 48, 0);
        for mode in MODES {
            let ctx = format!("{name} with data size 0 ({mode:?})");
            let run = read(&b, mode, &ctx);
            assert!(run.open_err.is_none(), "{ctx}: {}", run.describe());
            assert!(run.warning("data size 0").is_some(), "{ctx}");
            assert!(run.samples >= idx.samples(), "{ctx}: {}", run.describe());
        }
    }
}

// ---------------------------------------------------------------- synthetic streams

/// Builds pipe-mode streams with one event of a chosen layout.
struct PipeBuilder {
    b: Vec<u8>,
    /// Offsets of the records written, in order.
    offsets: Vec<u64>,
}

impl PipeBuilder {
    fn new(sample_type: u64, read_format: u64, branch_sample_type: u64, regs_user: u64) -> Self {
        let mut b = Vec::new();
        b.extend_from_slice(b"PERFILE2");
        b.extend_from_slice(&16u64.to_le_bytes());
        let mut p = PipeBuilder {
            b,
            offsets: Vec::new(),
        };
        let mut attr = vec![0u8; 136];
        attr[0..4].copy_from_slice(&1u32.to_le_bytes()); // PERF_TYPE_SOFTWARE
        attr[4..8].copy_from_slice(&136u32.to_le_bytes());
        put_u64(&mut attr, 24, sample_type);
        put_u64(&mut attr, 32, read_format);
        put_u64(&mut attr, 40, 1 << 18); // sample_id_all
        put_u64(&mut attr, 72, branch_sample_type);
        put_u64(&mut attr, 80, regs_user);
        attr.extend_from_slice(&7u64.to_le_bytes()); // one id
        p.record(PERF_RECORD_HEADER_ATTR, 0, &attr);
        p
    }
    fn record(&mut self, type_: u32, misc: u16, payload: &[u8]) -> u64 {
        let off = self.b.len() as u64;
        let size = u16::try_from(8 + payload.len()).expect("record fits");
        self.b.extend_from_slice(&type_.to_le_bytes());
        self.b.extend_from_slice(&misc.to_le_bytes());
        self.b.extend_from_slice(&size.to_le_bytes());
        self.b.extend_from_slice(payload);
        self.offsets.push(off);
        off
    }
    fn sample(&mut self, words: &[u64]) -> u64 {
        self.record(PERF_RECORD_SAMPLE, 2, &words_to_bytes(words))
    }
}

fn words_to_bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A stream with a good sample, a bad one and a good one; checks that the
/// bad one fails to decode at its own offset naming `field`, and that the
/// good ones around it decode and are all counted.
fn check_bad_sample(
    label: &str,
    b: PipeBuilder,
    good_words: &[u64],
    bad_words: &[u64],
    field: &str,
    check_good: impl Fn(&Sample<'_>),
) {
    let mut b = b;
    b.sample(good_words);
    let bad_off = b.sample(bad_words);
    b.sample(good_words);
    let bytes = b.b;
    let mut rr = RecordReader::from_bytes(bytes.clone()).expect("stream opens");
    let mut seen = 0;
    while let Some(rec) = rr.next_record().expect("framing is intact") {
        if rec.type_() != PERF_RECORD_SAMPLE {
            continue;
        }
        seen += 1;
        match rec.sample() {
            Ok(s) => {
                assert_ne!(
                    rec.raw.offset, bad_off,
                    "{label}: the bad sample decoded: {s:?}"
                );
                check_good(&s);
            }
            Err(e) => {
                assert_eq!(
                    rec.raw.offset, bad_off,
                    "{label}: a good sample failed: {e}"
                );
                assert_eq!(e.offset(), Some(bad_off), "{label}: {e}");
                assert!(e.to_string().contains(field), "{label}: {e}");
            }
        }
    }
    assert_eq!(seen, 3, "{label}");
    // The whole-file passes count all three and report the bad one.
    for mode in MODES {
        let ctx = format!("{label} ({mode:?})");
        let run = read(&bytes, mode, &ctx);
        assert_eq!(run.samples, 3, "{ctx}: {}", run.describe());
        if mode == Mode::Stats {
            let w = run
                .warning("undecodable record")
                .unwrap_or_else(|| panic!("{ctx}: {}", run.describe()));
            assert_eq!((w.count, w.first_offset), (1, bad_off), "{ctx}");
        } else {
            assert_eq!(run.undecodable, 1, "{ctx}");
        }
    }
}

const BASE: u64 = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;

#[test]
fn absurd_callchain_nr() {
    let st = BASE | PERF_SAMPLE_CALLCHAIN;
    let good = [0x1000, 0x0000_0005_0000_0005, 100, 1, 2, 0xaaa, 0xbbb];
    for nr in [3u64, 1 << 29, u64::MAX / 8 + 1, u64::MAX] {
        let mut bad = good;
        bad[4] = nr;
        check_bad_sample(
            &format!("callchain nr {nr}"),
            PipeBuilder::new(st, 0, 0, 0),
            &good,
            &bad,
            "callchain",
            |s| {
                let cc: Vec<u64> = s.callchain.unwrap().iter().collect();
                assert_eq!(cc, [0xaaa, 0xbbb]);
                assert_eq!(
                    (s.ip, s.pid, s.time, s.period),
                    (Some(0x1000), Some(5), Some(100), Some(1))
                );
            },
        );
    }
}

#[test]
fn absurd_stack_size() {
    let st = BASE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    // regs: abi 2, mask 0b11 → two values; stack: size 16, 16 bytes, dyn_size 8.
    let good = [0x1000, 5, 100, 1, 2, 0x11, 0x22, 16, 0x55, 0x66, 8];
    for size in [24u64, 1 << 40, u64::MAX - 7, u64::MAX] {
        let mut bad = good;
        bad[7] = size;
        check_bad_sample(
            &format!("stack size {size}"),
            PipeBuilder::new(st, 0, 0, 0b11),
            &good,
            &bad,
            "stack",
            |s| {
                let r = s.regs_user.unwrap();
                assert_eq!((r.get(0), r.get(1)), (Some(0x11), Some(0x22)));
                let su = s.stack_user.unwrap();
                assert_eq!((su.data.len(), su.valid().len()), (16, 8));
            },
        );
    }
    // A dyn_size larger than the stack copy is clamped, not trusted.
    let mut b = PipeBuilder::new(st, 0, 0, 0b11);
    b.sample(&[0x1000, 5, 100, 1, 2, 0x11, 0x22, 16, 0x55, 0x66, u64::MAX]);
    let mut rr = RecordReader::from_bytes(b.b).unwrap();
    rr.next_record().unwrap();
    let rec = rr.next_record().unwrap().unwrap();
    assert_eq!(rec.sample().unwrap().stack_user.unwrap().valid().len(), 16);
}

#[test]
fn absurd_read_group_nr() {
    let st = BASE | PERF_SAMPLE_READ;
    let rf = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED;
    // nr 2, time_enabled, (value, id) × 2
    let good = [0x1000, 5, 100, 1, 2, 999, 10, 7, 20, 8];
    for nr in [3u64, 1 << 40, u64::MAX / 2, u64::MAX] {
        let mut bad = good;
        bad[4] = nr;
        check_bad_sample(
            &format!("read nr {nr}"),
            PipeBuilder::new(st, rf, 0, 0),
            &good,
            &bad,
            "read",
            |s| {
                let r = s.read.unwrap();
                assert_eq!(r.time_enabled(), Some(999));
                let v: Vec<(u64, Option<u64>)> = r.values().map(|v| (v.value, v.id)).collect();
                assert_eq!(v, [(10, Some(7)), (20, Some(8))]);
            },
        );
    }
}

#[test]
fn absurd_branch_nr() {
    let st = BASE | PERF_SAMPLE_BRANCH_STACK;
    let good = [0x1000, 5, 100, 1, 1, 0xa, 0xb, 0x3];
    for nr in [2u64, 1 << 61, u64::MAX / 3 + 1, u64::MAX] {
        let mut bad = good;
        bad[4] = nr;
        check_bad_sample(
            &format!("branch nr {nr}"),
            PipeBuilder::new(st, 0, 0, 0),
            &good,
            &bad,
            "branch",
            |s| {
                let e: Vec<_> = s.branch_stack.unwrap().entries().collect();
                assert_eq!((e.len(), e[0].from, e[0].to, e[0].flags), (1, 0xa, 0xb, 3));
            },
        );
    }
}

#[test]
fn absurd_raw_and_aux_sizes() {
    let st = BASE | PERF_SAMPLE_RAW;
    // raw: u32 size 4 + 4 bytes, packed into one word.
    let good = [0x1000, 5, 100, 1, 0xdead_beef_0000_0004];
    for size in [12u32, u32::MAX] {
        let mut bad = good;
        bad[4] = 0xdead_beef_0000_0000 | u64::from(size);
        check_bad_sample(
            &format!("raw size {size}"),
            PipeBuilder::new(st, 0, 0, 0),
            &good,
            &bad,
            "raw",
            |s| assert_eq!(s.raw.unwrap(), 0xdead_beefu32.to_le_bytes()),
        );
    }
    let st = BASE | PERF_SAMPLE_AUX;
    let good = [0x1000, 5, 100, 1, 8, 42];
    for size in [16u64, u64::MAX] {
        let mut bad = good;
        bad[4] = size;
        check_bad_sample(
            &format!("aux size {size}"),
            PipeBuilder::new(st, 0, 0, 0),
            &good,
            &bad,
            "aux",
            |s| assert_eq!(s.aux.unwrap(), 42u64.to_le_bytes()),
        );
    }
}

#[test]
fn absurd_counts_in_other_records_fail_at_their_offset() {
    let st = BASE;
    let cases: Vec<(u32, Vec<u8>, &str)> = vec![
        // NAMESPACES: pid, tid, nr, then nr (dev, ino) pairs.
        (
            PERF_RECORD_NAMESPACES,
            words_to_bytes(&[0x0000_0005_0000_0005, u64::MAX, 1, 2]),
            "namespaces",
        ),
        (
            PERF_RECORD_NAMESPACES,
            words_to_bytes(&[0x0000_0005_0000_0005, 1 << 62, 1, 2]),
            "namespaces",
        ),
        // TEXT_POKE: addr, old_len, new_len larger than the record.
        (
            PERF_RECORD_TEXT_POKE,
            [
                words_to_bytes(&[0x1000]),
                vec![0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0],
            ]
            .concat(),
            "old bytes",
        ),
        // READ without group: pid, tid, then nothing.
        (
            PERF_RECORD_READ,
            words_to_bytes(&[0x0000_0005_0000_0005]),
            "read",
        ),
        // MMAP too short for its fixed fields.
        (PERF_RECORD_MMAP, words_to_bytes(&[1, 2]), "len"),
    ];
    for (t, payload, field) in cases {
        let mut b = PipeBuilder::new(st, 0, 0, 0);
        // sample_id_all with TID|TIME: 16-byte trailer.
        let payload = [payload, words_to_bytes(&[5, 100])].concat();
        let off = b.record(t, 0, &payload);
        let mut rr = RecordReader::from_bytes(b.b).unwrap();
        let mut checked = false;
        while let Some(rec) = rr.next_record().unwrap() {
            if rec.raw.offset == off {
                let e = rec.decode().expect_err("absurd count decoded");
                assert_eq!(e.offset(), Some(off), "type {t}: {e}");
                assert!(e.to_string().contains(field), "type {t}: {e}");
                checked = true;
            }
        }
        assert!(checked, "type {t}: record not seen");
    }
}

#[test]
fn auxtrace_with_absurd_size_stops_without_allocating_it() {
    // AUXTRACE carries its data after the record; the size is the stream's word.
    for size in [1u64 << 20, 1 << 40, u64::MAX - 100, u64::MAX] {
        let mut b = PipeBuilder::new(BASE, 0, 0, 0);
        b.sample(&[0x1000, 5, 100, 1]);
        let off = b.record(
            PERF_RECORD_AUXTRACE,
            0,
            &words_to_bytes(&[size, 0, 0, 0, 0]),
        );
        b.sample(&[0x1000, 5, 100, 1]);
        for mode in MODES {
            let ctx = format!("auxtrace size {size} ({mode:?})");
            let run = read(&b.b, mode, &ctx);
            let w = run
                .warning("truncated record")
                .or(run.warning("corrupt record"))
                .unwrap_or_else(|| panic!("{ctx}: {}", run.describe()));
            assert_eq!(w.first_offset, off, "{ctx}");
            assert_eq!(run.samples, 1, "{ctx}: {}", run.describe());
        }
    }
}

#[test]
fn many_tiny_attr_records_stay_fast() {
    // Thousands of HEADER_ATTR records, each with ids: must not go quadratic.
    let mut b = PipeBuilder::new(BASE | PERF_SAMPLE_ID, 0, 0, 0);
    let mut attr = vec![0u8; 64];
    attr[4..8].copy_from_slice(&64u32.to_le_bytes());
    put_u64(&mut attr, 24, BASE | PERF_SAMPLE_ID);
    for i in 0..20_000u64 {
        let p = [attr.clone(), words_to_bytes(&[1000 + i, 900_000 - i])].concat();
        b.record(PERF_RECORD_HEADER_ATTR, 0, &p);
    }
    b.sample(&[0x1000, 5, 100, 1000, 1]);
    let t0 = Instant::now();
    let run = read(&b.b, Mode::Stats, "20000 attrs");
    assert_eq!(run.samples, 1);
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
}

// ---------------------------------------------------------------- regressions

/// Inputs that once crashed or hung the reader (from the fuzzer).
#[test]
fn fuzz_regressions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("tests/regressions") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            continue;
        }
        let b = std::fs::read(&p).unwrap();
        for mode in MODES {
            read(&b, mode, &format!("{} ({mode:?})", name_of(&p)));
        }
        n += 1;
    }
    assert!(n > 0, "no regression inputs in {}", dir.display());
}

#[test]
fn untimed_records_behind_a_big_queue_stay_fast() {
    // Timed samples that no FINISHED_ROUND releases pile up in the time
    // queue; untimed records after them are handed out one by one. Each
    // hand-out must not copy the whole queue.
    let mut b = PipeBuilder::new(BASE, 0, 0, 0);
    for i in 0..200_000u64 {
        b.sample(&[0x1000, 5, 1_000_000 + i % 1000, 1]);
    }
    for _ in 0..150_000 {
        b.record(100, 0, &[]);
    }
    let t0 = Instant::now();
    let run = read(&b.b, Mode::Time, "untimed behind a big queue");
    assert_eq!(run.samples, 200_000, "{}", run.describe());
    assert_eq!(run.records, 1 + 200_000 + 150_000);
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
}

#[test]
fn attrs_sharing_one_id_section_do_not_multiply_it() {
    // 4000 attrs whose ids all point at the same 400 kB: reading each
    // copy would be 4000 × 50000 ids (1.6 GB).
    let (n, id_bytes) = (4000u64, 400_000u64);
    let attrs_at = 104u64;
    let ids_at = attrs_at + n * 80;
    let len = ids_at + id_bytes;
    let mut b = vec![0u8; len as usize];
    b[..8].copy_from_slice(b"PERFILE2");
    for (at, v) in [
        (8, 104),
        (16, 80),
        (24, attrs_at),
        (32, n * 80),
        (40, len),
        (48, 0),
    ] {
        put_u64(&mut b, at, v);
    }
    for i in 0..n {
        let a = (attrs_at + i * 80) as usize;
        b[a + 4..a + 8].copy_from_slice(&64u32.to_le_bytes());
        put_u64(&mut b, a + 24, PERF_SAMPLE_IP | PERF_SAMPLE_ID);
        put_u64(&mut b, a + 64, ids_at);
        put_u64(&mut b, a + 72, id_bytes);
    }
    for k in 0..id_bytes / 8 {
        put_u64(&mut b, (ids_at + 8 * k) as usize, k + 1);
    }
    let t0 = Instant::now();
    let run = read(&b, Mode::Bytes, "shared id sections");
    assert!(run.open_err.is_none(), "{}", run.describe());
    let w = run
        .warning("overlapping id sections")
        .unwrap_or_else(|| panic!("{}", run.describe()));
    assert_eq!(w.count, n - 1, "{w:?}");
    assert_eq!(w.first_offset, attrs_at + 80, "{w:?}");
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
}

#[test]
fn feature_sections_sharing_the_file_are_copied_once() {
    // Every feature bit set and all 256 sections pointing at the whole file.
    let good = std::fs::read(Path::new(WILD).join("perf.data.callgraph-3.4")).unwrap();
    let idx = index(&good);
    let table = (get_u64(&good, 40) + get_u64(&good, 48)) as usize;
    let mut b = good.clone();
    b.resize(b.len().max(table + 256 * 16), 0);
    let len = b.len() as u64;
    for at in (72..104).step_by(8) {
        put_u64(&mut b, at, u64::MAX);
    }
    for k in 0..256 {
        put_u64(&mut b, table + 16 * k, 0);
        put_u64(&mut b, table + 16 * k + 8, len);
    }
    for mode in MODES {
        let ctx = format!("256 features over the whole file ({mode:?})");
        let run = read(&b, mode, &ctx);
        assert!(run.open_err.is_none(), "{ctx}: {}", run.describe());
        assert_eq!(run.samples, idx.samples(), "{ctx}");
        let w = run
            .warning("overlapping feature sections")
            .unwrap_or_else(|| panic!("{ctx}: {}", run.describe()));
        assert_eq!(w.count, 255, "{ctx}: {w:?}");
        assert_eq!(w.first_offset, table as u64 + 16, "{ctx}: {w:?}");
    }
}

#[test]
fn many_event_type_records_stay_fast() {
    // Old pipe streams name events with HEADER_EVENT_TYPE (config, name)
    // records: 20000 events × 100000 such records must not be 2·10^9 steps.
    let mut b = PipeBuilder::new(BASE, 0, 0, 0);
    let mut attr = vec![0u8; 64];
    attr[4..8].copy_from_slice(&64u32.to_le_bytes());
    put_u64(&mut attr, 24, BASE);
    for i in 0..20_000u64 {
        put_u64(&mut attr, 8, i); // config
        b.record(PERF_RECORD_HEADER_ATTR, 0, &attr);
    }
    for j in 0..100_000u64 {
        let p = [words_to_bytes(&[1_000_000 + j]), b"name\0\0\0\0".to_vec()].concat();
        b.record(PERF_RECORD_HEADER_EVENT_TYPE, 0, &p);
    }
    // One that matches: it names event 1 (config 0; event 0 is the builder's).
    b.record(
        PERF_RECORD_HEADER_EVENT_TYPE,
        0,
        &[words_to_bytes(&[0]), b"zero\0\0\0\0".to_vec()].concat(),
    );
    let bytes = b.b;
    let t0 = Instant::now();
    let names = bounded("event types", move || {
        let mut rr = RecordReader::from_bytes(bytes).unwrap();
        while rr.next_record().unwrap().is_some() {}
        let ev = &rr.meta().events;
        (ev.len(), ev[1].name.clone(), ev[2].name.clone())
    });
    assert_eq!(names, (20_001, Some("zero".to_string()), None));
    // Quadratic took 19 s in a debug build here; linear takes under 1 s.
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
}
