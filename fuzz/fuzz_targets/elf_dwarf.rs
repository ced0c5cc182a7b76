//! Feeds ELF files to the symbol side: the symbol table (perf's rules), the address
//! translations, and the DWARF (inline frames, lines, line rows) at addresses the file
//! names (its symbols and segments) and at random ones. The mutator mostly mutates inside one
//! section of a real binary (`sear_fuzz::mutate_elf`), so the DWARF parsers see structure.
//! Errors and warnings are fine; panics, hangs and unbounded allocations are bugs.

#![no_main]

use std::path::Path;

use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use symbols::{DwarfInfo, DwarfSections, ElfFile, FrameDetail, Svma};

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    sear_fuzz::mutate_elf(data, size, max_size, seed)
});

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.elf");
    let mut addrs: Vec<u64> = Vec::new();
    if let Ok(elf) = ElfFile::from_bytes(path, data) {
        for s in elf.symbols().iter().take(64) {
            addrs.extend([
                s.start,
                s.start.wrapping_add(s.size / 2),
                s.start.wrapping_add(s.size),
            ]);
        }
        for seg in elf.load_segments().iter().take(8) {
            let _ = elf.file_offset_to_svma(symbols::FileOffset(seg.file_offset));
            let _ = elf.avma_to_svma(
                0x5555_0000_0000u64.wrapping_add(seg.file_offset),
                0x5555_0000_0000,
                0,
            );
        }
        let mut next = sear_fuzz::stream(data);
        for _ in 0..8 {
            addrs.push(next() % 0x20_0000);
        }
        for &a in &addrs {
            if let Ok(hit) = elf.lookup(Svma(a)) {
                let _ = hit.name();
            }
            let _ = elf.symtab_file(Svma(a));
            let _ = elf.section_name_at(Svma(a));
            let _ = elf.bytes_at(Svma(a), 16);
        }
        let _ = (elf.build_id_hex(), elf.debuglink(), elf.has_dwarf());
    }
    let Ok(sections) = DwarfSections::from_bytes(path, data.to_vec()) else {
        return;
    };
    let Ok(dwarf) = DwarfInfo::from_sections(&sections, path) else {
        return;
    };
    for &a in addrs.iter().take(96) {
        if let Ok(frames) = dwarf.frames_as(Svma(a), FrameDetail::Full) {
            for f in &frames {
                let _ = (f.function_or_unknown().len(), f.file_or_unknown().len());
            }
        }
        let _ = dwarf.frames_as(Svma(a), FrameDetail::Names);
        let _ = dwarf.line_rows(a, a.wrapping_add(0x100));
    }
});
