//! Inputs the `elf_dwarf` fuzz target found (tests/regressions/README.md), run through what the
//! target calls. Each must give answers or errors, never a panic (these tests are debug builds:
//! arithmetic overflow panics too).

use std::path::Path;

use symbols::{DwarfInfo, DwarfSections, ElfFile, FileOffset, FrameDetail, Svma};

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
        let mut addrs = Vec::new();
        if let Ok(elf) = ElfFile::from_bytes(&file, &data) {
            for s in elf.symbols() {
                addrs.extend([
                    s.start,
                    s.start.wrapping_add(s.size / 2),
                    s.start.wrapping_add(s.size),
                ]);
                let _ = elf.lookup(Svma(s.start));
            }
            for seg in elf.load_segments() {
                for off in [
                    seg.file_offset,
                    seg.file_offset.wrapping_add(seg.file_size / 2),
                ] {
                    let _ = elf.file_offset_to_svma(FileOffset(off));
                    let _ = elf.avma_to_svma(
                        0x5555_0000_0000u64.wrapping_add(off),
                        0x5555_0000_0000,
                        0,
                    );
                }
                let _ = elf.bytes_at(Svma(seg.svma), 16);
            }
        }
        if let Ok(sections) = DwarfSections::from_bytes(&file, data.clone()) {
            if let Ok(dwarf) = DwarfInfo::from_sections(&sections, &file) {
                for &a in &addrs {
                    let _ = dwarf.frames_as(Svma(a), FrameDetail::Full);
                    let _ = dwarf.line_rows(a, a.wrapping_add(0x100));
                }
            }
        }
    }
    assert!(seen > 0, "no inputs in {}", dir.display());
}
