//! Unwinds random registers and stacks through the CFI of an ELF file (`.eh_frame`,
//! `.eh_frame_hdr`, `.debug_frame`): framehop and sear's full-register walker, as a DWARF
//! report runs them. Stacks hold words that point back into the stack and into the code, so
//! walks go several frames deep. The mutator mostly mutates inside one section of a real
//! binary (`sear_fuzz::mutate_elf`). Short stacks are fine; panics, hangs and unbounded
//! allocations are bugs.

#![no_main]

use std::path::Path;

use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use unwind::{Binaries, Unwinder, UserRegs};

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    sear_fuzz::mutate_elf(data, size, max_size, seed)
});

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.elf");
    let mut bins = Binaries::new();
    if bins.add_elf_bytes(path, data.to_vec()).is_err() {
        return;
    }
    let base = 0x5555_0000_0000u64;
    let len = (data.len() as u64).next_multiple_of(4096).max(4096);
    let mut u = Unwinder::new();
    if u.add_module(&mut bins, base, base + len, 0, path).is_err() {
        return;
    }
    let mut next = sear_fuzz::stream(data);
    let sp = 0x7ffc_0000_0000u64;
    for _ in 0..4 {
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
        let ip = base + next() % len;
        let regs = UserRegs::new(ip, sp + next() % 64, sp + next() % 2048);
        let frames = u.unwind(&mut bins, &regs, &stack, sp, 127);
        assert!(frames.len() <= 127);
    }
});
