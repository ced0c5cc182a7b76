//! What the symbol-side fuzz targets share: a structure-aware mutator for ELF files, which
//! mostly mutates inside one of the file's sections (DWARF, unwind tables, symbol tables)
//! and keeps the rest of the file as it is, so the parsers get past the ELF headers and the
//! fuzzer reaches deep into the DWARF; and a pseudo-random stream for registers and stacks.

use object::{Object, ObjectSection};

/// The file ranges of the sections worth mutating in place: DWARF, unwind tables, symbol
/// and string tables, notes.
pub fn section_ranges(elf: &[u8]) -> Vec<(usize, usize)> {
    let Ok(obj) = object::File::parse(elf) else {
        return Vec::new();
    };
    obj.sections()
        .filter(|s| {
            let name = s.name().unwrap_or("");
            name.starts_with(".debug_")
                || name.starts_with(".eh_frame")
                || name.starts_with(".zdebug")
                || matches!(
                    name,
                    ".symtab" | ".strtab" | ".dynsym" | ".dynstr" | ".gnu_debugdata"
                )
                || name.starts_with(".note")
        })
        .filter_map(|s| {
            let (off, len) = s.file_range()?;
            let (a, b) = (
                usize::try_from(off).ok()?,
                usize::try_from(off.checked_add(len)?).ok()?,
            );
            (a < b && b <= elf.len()).then_some((a, b))
        })
        .collect()
}

/// libFuzzer's mutation, three times in four confined to one section of an ELF input
/// (same length: the offsets around it stay valid); otherwise, or when the input is no
/// ELF file, over the whole input.
pub fn mutate_elf(data: &mut [u8], size: usize, max_size: usize, seed: u32) -> usize {
    if seed % 4 != 0 {
        let ranges = section_ranges(&data[..size]);
        if !ranges.is_empty() {
            let (a, b) = ranges[(seed / 4) as usize % ranges.len()];
            let len = b - a;
            libfuzzer_sys::fuzzer_mutate(&mut data[a..b], len, len);
            return size;
        }
    }
    libfuzzer_sys::fuzzer_mutate(data, size, max_size)
}

/// A pseudo-random stream (xorshift64) seeded from `bytes`.
pub fn stream(bytes: &[u8]) -> impl FnMut() -> u64 {
    let mut x = bytes.iter().fold(0x9e37_79b9_7f4a_7c15u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    if x == 0 {
        x = 1;
    }
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}
