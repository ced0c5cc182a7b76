//! Bad input gives short stacks, never a panic: truncated stack copies,
//! garbage registers, files that are missing or not binaries.

use std::path::Path;

use unwind::{Binaries, Error, Mapping, Unwinder, UserRegs};

/// This test binary itself, mapped as a whole at a made-up address, gives
/// the unwinder real CFI to chew on.
fn unwinder_over_self(base: u64) -> (Binaries, Unwinder) {
    let exe = std::env::current_exe().unwrap();
    let len = std::fs::metadata(&exe).unwrap().len();
    let mut bins = Binaries::new();
    let mut u = Unwinder::new();
    u.add_module(&mut bins, base, base + len.next_multiple_of(4096), 0, &exe)
        .unwrap();
    (bins, u)
}

/// A fixed stream of pseudo-random words (xorshift64).
fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

#[test]
fn frame_pointer_chain_is_followed_and_ends_where_the_stack_copy_ends() {
    // No modules: every frame is unwound by frame pointer. Build a chain of
    // three frames: [bp] = next bp, [bp+8] = return address.
    let sp = 0x7ffc_0000_1000u64;
    let mut stack = vec![0u8; 0x100];
    let put = |stack: &mut Vec<u8>, addr: u64, v: u64| {
        let o = (addr - sp) as usize;
        stack[o..o + 8].copy_from_slice(&v.to_le_bytes());
    };
    put(&mut stack, sp + 0x10, sp + 0x40);
    put(&mut stack, sp + 0x18, 0x40_1111);
    put(&mut stack, sp + 0x40, sp + 0x80);
    put(&mut stack, sp + 0x48, 0x40_2222);
    put(&mut stack, sp + 0x80, 0);
    put(&mut stack, sp + 0x88, 0x40_3333);
    let regs = UserRegs::new(0x40_0000, sp, sp + 0x10);
    let (mut bins, mut u) = (Binaries::new(), Unwinder::new());
    let full = u.unwind(&mut bins, &regs, &stack, sp, 127);
    assert_eq!(&full[..4], &[0x40_0000, 0x40_1111, 0x40_2222, 0x40_3333]);
    // Cut the copy inside the second frame record: the walk stops there.
    let short = u.unwind(&mut bins, &regs, &stack[..0x44], sp, 127);
    assert_eq!(short, vec![0x40_0000, 0x40_1111]);
    // The frame limit holds.
    assert_eq!(u.unwind(&mut bins, &regs, &stack, sp, 2).len(), 2);
    assert!(u.unwind(&mut bins, &regs, &stack, sp, 0).is_empty());
}

#[test]
fn garbage_registers_and_stacks_give_short_stacks() {
    let base = 0x5555_0000_0000u64;
    let (mut bins, mut u) = unwinder_over_self(base);
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    for i in 0..20_000u64 {
        let stack: Vec<u8> = (0..(next() % 512)).map(|_| next() as u8).collect();
        let ip = match i % 3 {
            0 => next(),
            // Inside the module, where CFI applies to random bytes.
            _ => base + next() % 0x10_0000,
        };
        let sp = if i % 2 == 0 {
            next()
        } else {
            u64::MAX - (next() % 64)
        };
        // Garbage in every register, for the walks that read them all.
        let mut regs = UserRegs::new(ip, sp, next());
        for r in regs.others.iter_mut() {
            *r = Some(next());
        }
        let frames = u.unwind(&mut bins, &regs, &stack, sp, 127);
        assert!(!frames.is_empty() && frames.len() <= 127);
        assert_eq!(frames[0], ip);
    }
    // An empty stack copy: only the leaf.
    let regs = UserRegs::new(base + 0x1000, 0x1000, 0x2000);
    assert_eq!(
        u.unwind(&mut bins, &regs, &[], 0x1000, 127),
        vec![base + 0x1000]
    );
}

#[test]
fn missing_and_non_binary_files_are_errors_not_panics() {
    let mut bins = Binaries::new();
    let mut u = Unwinder::new();
    let missing = u.add_module(&mut bins, 0x1000, 0x2000, 0, Path::new("/nonexistent/x.so"));
    assert!(matches!(missing, Err(Error::Io { .. })), "{missing:?}");
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.so");
    std::fs::write(&junk, b"\x7fELF but not really").unwrap();
    let bad = u.add_module(&mut bins, 0x1000, 0x2000, 0, &junk);
    assert!(matches!(bad, Err(Error::Object { .. })), "{bad:?}");
    let reversed = u.add_module(&mut bins, 0x2000, 0x1000, 0, &junk);
    assert!(matches!(reversed, Err(Error::BadRange { .. })));
    // A file that failed is not tried again (every process maps ld.so's
    // cache, which is no binary)...
    let missing = u.add_module(&mut bins, 0x1000, 0x2000, 0, Path::new("/nonexistent/x.so"));
    assert!(matches!(missing, Err(Error::Again { .. })), "{missing:?}");
    let bad = u.add_module(&mut bins, 0x1000, 0x2000, 0, &junk);
    assert!(matches!(bad, Err(Error::Again { .. })), "{bad:?}");
    // Within one set of binaries a path is opened once, whatever happens
    // to the file; a new set tries again.
    assert_eq!(bins.files_opened(), 2);
    std::fs::write(&junk, b"\x7fELF still not a binary").unwrap();
    let bad = u.add_module(&mut bins, 0x1000, 0x2000, 0, &junk);
    assert!(matches!(bad, Err(Error::Again { .. })), "{bad:?}");
    let mut fresh = Binaries::new();
    let bad = u.add_module(&mut fresh, 0x1000, 0x2000, 0, &junk);
    assert!(matches!(bad, Err(Error::Object { .. })), "{bad:?}");
}

/// A mapping of file key `file` from its offset 0.
fn mapping(start: u64, end: u64, file: u64) -> Mapping {
    Mapping {
        start,
        end,
        pgoff: 0,
        file,
    }
}

/// `sync` keeps an unwinder equal to a process's maps as they change, and
/// opens each file once however many processes and changes there are.
#[test]
fn sync_follows_the_maps_and_opens_each_file_once() {
    let exe = std::env::current_exe().unwrap();
    let missing = Path::new("/nonexistent/lib.so");
    let path = |m: &Mapping| if m.file == 1 { exe.as_path() } else { missing };
    let mut bins = Binaries::new();
    let mut errors = 0;
    let mut procs: Vec<Unwinder> = (0..50).map(|_| Unwinder::new()).collect();
    for (i, u) in procs.iter_mut().enumerate() {
        let base = 0x10_0000 * (i as u64 + 1);
        let mut maps = vec![mapping(base, base + 0x1000, 1)];
        u.sync(&mut bins, &maps, path, |_| errors += 1);
        assert_eq!(u.module_starts(), vec![base]);
        // A library that cannot be loaded comes, then a second map of the
        // executable, then the first map goes.
        maps.push(mapping(base + 0x2000, base + 0x3000, 2));
        u.sync(&mut bins, &maps, path, |_| errors += 1);
        assert_eq!(u.module_starts(), vec![base]);
        maps.push(mapping(base + 0x4000, base + 0x5000, 1));
        u.sync(&mut bins, &maps, path, |_| errors += 1);
        assert_eq!(u.module_starts(), vec![base, base + 0x4000]);
        maps.remove(0);
        u.sync(&mut bins, &maps, path, |_| errors += 1);
        assert_eq!(u.module_starts(), vec![base + 0x4000]);
        // A map replaced at the same start by another file.
        maps[1] = mapping(base + 0x4000, base + 0x5000, 2);
        u.sync(&mut bins, &maps, path, |_| errors += 1);
        assert!(u.module_starts().is_empty());
    }
    assert_eq!(bins.files_opened(), 2, "one open per file, not per process");
    assert_eq!(errors, 1, "a file that fails is reported once");
}

#[test]
fn a_new_mapping_replaces_the_modules_it_overlaps() {
    let exe = std::env::current_exe().unwrap();
    let mut bins = Binaries::new();
    let mut u = Unwinder::new();
    u.add_module(&mut bins, 0x10_0000, 0x20_0000, 0, &exe)
        .unwrap();
    u.add_module(&mut bins, 0x18_0000, 0x30_0000, 0, &exe)
        .unwrap();
    u.add_module(&mut bins, 0x10_0000, 0x11_0000, 0, &exe)
        .unwrap();
    assert_eq!(u.module_starts(), vec![0x10_0000, 0x18_0000]);
    u.add_module(&mut bins, 0x0f_0000, 0x19_0000, 0, &exe)
        .unwrap();
    assert_eq!(u.module_starts(), vec![0x0f_0000]);
    u.remove_module(0x0f_0000);
    assert!(u.module_starts().is_empty());
}

#[test]
fn frames_walked_with_every_register_take_garbage_too() {
    // libc and ld.so at made-up addresses: their signal trampoline and
    // lazy-binding resolvers are walked by the full-register walker.
    let mut bins = Binaries::new();
    let mut u = Unwinder::new();
    let mut base = 0x7f00_0000_0000u64;
    for lib in [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib64/ld-linux-x86-64.so.2",
    ] {
        let len = std::fs::metadata(lib).unwrap().len();
        u.add_module(
            &mut bins,
            base,
            base + len.next_multiple_of(4096),
            0,
            lib.as_ref(),
        )
        .unwrap();
        base += 0x1000_0000;
    }
    let hard = u.full_register_ranges();
    assert!(hard.len() >= 2, "{hard:x?}");
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    for i in 0..20_000u64 {
        let r = &hard[(i as usize) % hard.len()];
        let ip = r.start + next() % (r.end - r.start);
        let sp = 0x7ffc_0000_0000 + (next() % 0x1000) * 8;
        let mut stack: Vec<u8> = (0..(next() % 4096)).map(|_| next() as u8).collect();
        // Now and then a stack of addresses inside the hard functions.
        if i % 4 == 0 {
            for w in stack.chunks_exact_mut(8) {
                let r = &hard[(next() as usize) % hard.len()];
                w.copy_from_slice(&(r.start + next() % (r.end - r.start)).to_le_bytes());
            }
        }
        let mut regs = UserRegs::new(ip, sp, sp + next() % 512);
        for r in regs.others.iter_mut() {
            *r = Some(if next().is_multiple_of(2) {
                sp + next() % 4096
            } else {
                next()
            });
        }
        let frames = u.unwind(&mut bins, &regs, &stack, sp, 127);
        assert!(!frames.is_empty() && frames.len() <= 127);
        assert_eq!(frames[0], ip);
    }
}

/// Where the file of a mapping is: odd file keys name a real binary (`exe`), even ones a
/// file that does not exist.
fn odd_files_load<'a>(exe: &'a Path) -> impl Fn(&Mapping) -> &'a Path + Copy + 'a {
    move |m| {
        if m.file % 2 == 1 {
            exe
        } else {
            Path::new("/nonexistent/lib.so")
        }
    }
}

/// Catching up with the changed starts gives the modules a full `sync`
/// gives.
#[test]
fn applied_changes_equal_a_full_sync() {
    let exe = std::env::current_exe().unwrap();
    let path = odd_files_load(&exe);
    let mut bins = Binaries::new();
    let (mut full, mut caught_up) = (Unwinder::new(), Unwinder::new());
    let steps: Vec<Vec<Mapping>> = vec![
        vec![mapping(0x1000, 0x2000, 1), mapping(0x3000, 0x4000, 2)],
        vec![
            mapping(0x1000, 0x2000, 1),
            mapping(0x3000, 0x4000, 3),
            mapping(0x5000, 0x6000, 1),
        ],
        vec![
            mapping(0x1000, 0x1800, 1),
            mapping(0x1800, 0x2000, 5),
            mapping(0x5000, 0x6000, 1),
        ],
        vec![],
        vec![mapping(0x7000, 0x9000, 7)],
    ];
    let mut before: Vec<Mapping> = Vec::new();
    for maps in steps {
        full.sync(&mut bins, &maps, path, |_| {});
        // Every start either list has, with the mapping there now.
        let mut starts: Vec<u64> = before.iter().chain(&maps).map(|m| m.start).collect();
        starts.sort();
        starts.dedup();
        let changes: Vec<(u64, Option<Mapping>)> = starts
            .into_iter()
            .map(|s| (s, maps.iter().find(|m| m.start == s).copied()))
            .collect();
        caught_up.apply_changes(&mut bins, &changes, path, |_| {});
        assert_eq!(full.module_starts(), caught_up.module_starts(), "{maps:?}");
        before = maps;
    }
}

/// Many changes at once (a new process's whole table, in the order it was mapped, then
/// most of it replaced) are merged into the table in address order: the same modules as a
/// full sync, and as the same changes applied a few at a time.
#[test]
fn many_changes_at_once_equal_a_full_sync() {
    let exe = std::env::current_exe().unwrap();
    let path = odd_files_load(&exe);
    let mut bins = Binaries::new();
    let (mut full, mut merged, mut few) = (Unwinder::new(), Unwinder::new(), Unwinder::new());
    // Mapped top down, as the loader maps libraries.
    let first: Vec<Mapping> = (0..20u64)
        .rev()
        .map(|i| mapping(0x10000 * (i + 1), 0x10000 * (i + 1) + 0x8000, i))
        .collect();
    // Every other one gone, a third remapped from another file, new ones between.
    let second: Vec<Mapping> = (0..20u64)
        .filter(|i| i % 2 == 0)
        .map(|i| {
            let f = if i % 3 == 0 { i + 101 } else { i };
            mapping(0x10000 * (i + 1), 0x10000 * (i + 1) + 0x8000, f)
        })
        .chain(
            (0..20u64).map(|i| mapping(0x10000 * (i + 1) + 0x9000, 0x10000 * (i + 1) + 0xa000, 1)),
        )
        .collect();
    let mut before: Vec<Mapping> = Vec::new();
    for maps in [first, second, Vec::new()] {
        // (A sync takes the table in address order.)
        let mut sorted = maps.clone();
        sorted.sort_by_key(|m| m.start);
        full.sync(&mut bins, &sorted, path, |_| {});
        // The changes in the order the maps came (not sorted), each start once.
        let mut changes: Vec<(u64, Option<Mapping>)> = Vec::new();
        for m in before.iter().chain(&maps) {
            if !changes.iter().any(|c| c.0 == m.start) {
                changes.push((m.start, maps.iter().find(|n| n.start == m.start).copied()));
            }
        }
        assert!(changes.len() > 8);
        merged.apply_changes(&mut bins, &changes, path, |_| {});
        for part in changes.chunks(3) {
            few.apply_changes(&mut bins, part, path, |_| {});
        }
        assert_eq!(full.module_starts(), merged.module_starts(), "{maps:?}");
        assert_eq!(few.module_starts(), merged.module_starts(), "{maps:?}");
        before = maps;
    }
}

/// A binary given as bytes (the fuzz targets' way in) serves mappings of its path without
/// opening any file, and bytes that are no ELF file are an error, not a panic.
#[test]
fn binaries_given_as_bytes_are_used_without_opening_files() {
    let exe = std::env::current_exe().unwrap();
    let bytes = std::fs::read(&exe).unwrap();
    let len = bytes.len() as u64;
    let mut bins = Binaries::new();
    let fake = Path::new("/nonexistent/in-memory");
    bins.add_elf_bytes(fake, bytes).unwrap();
    let mut u = Unwinder::new();
    let base = 0x5555_0000_0000u64;
    u.add_module(&mut bins, base, base + len.next_multiple_of(4096), 0, fake)
        .unwrap();
    assert_eq!(u.module_starts(), vec![base]);
    assert_eq!(bins.files_opened(), 0);
    assert!(bins
        .add_elf_bytes(Path::new("/nonexistent/garbage"), vec![7u8; 100])
        .is_err());
}

/// Inputs the `cfi_unwind` fuzz target found (tests/regressions/README.md), unwound as the
/// target unwinds them: the binary from memory, random registers and stacks whose words
/// point into the stack and the code. Each must give a stack, never a panic.
#[test]
fn fuzz_regressions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().path();
        if file.extension().is_some_and(|e| e == "md") {
            continue;
        }
        seen += 1;
        let data = std::fs::read(&file).unwrap();
        let path = Path::new("fuzz.elf");
        let mut bins = Binaries::new();
        if bins.add_elf_bytes(path, data.clone()).is_err() {
            continue;
        }
        let base = 0x5555_0000_0000u64;
        let len = (data.len() as u64).next_multiple_of(4096);
        let mut u = Unwinder::new();
        u.add_module(&mut bins, base, base + len, 0, path).unwrap();
        let mut next = xorshift(data.len() as u64 | 1);
        let sp = 0x7ffc_0000_0000u64;
        for _ in 0..64 {
            let mut stack = vec![0u8; 2048];
            for w in stack.chunks_exact_mut(8) {
                let r = next();
                let v = match r % 4 {
                    0 => sp + (r >> 8) % 2048,
                    1 => base + (r >> 8) % len,
                    2 => r >> 8,
                    _ => 0,
                };
                w.copy_from_slice(&v.to_le_bytes());
            }
            let regs = UserRegs::new(base + next() % len, sp + next() % 64, sp + next() % 2048);
            let frames = u.unwind(&mut bins, &regs, &stack, sp, 127);
            assert!(
                !frames.is_empty() && frames.len() <= 127,
                "{}",
                file.display()
            );
        }
    }
    assert!(seen > 0, "no inputs in {}", dir.display());
}
