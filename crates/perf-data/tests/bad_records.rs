//! Damaged and hostile records inside otherwise good perf.data input:
//! zero sizes, corrupt zstd frames, killed recorders, absurd counts in
//! samples and other records, and fuzzing regressions (see bad_input.rs
//! for the rules every case holds to).

mod common;
use common::*;

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
