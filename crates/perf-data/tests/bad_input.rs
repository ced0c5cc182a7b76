//! Damaged and hostile perf.data input: truncations, garbage, absurd sizes,
//! corrupt zstd frames, killed recorders. The reader must return an `Error`
//! naming a byte offset, or a partial result with a counted warning that
//! keeps every complete record before the damage. Never a panic, a hang or
//! an unbounded allocation: every case runs on its own thread with a time
//! limit, and a panic there fails the test with the case's name.

mod common;
use common::*;

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
