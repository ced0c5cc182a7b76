//! Feeds arbitrary bytes to the jitdump reader (`jit-PID.dump` of V8, CPython, the JVM's
//! agents) as a stream, then writes perf's ELF image (`sear inject --jit`) of each code load
//! with its unwinding tables and parses that image back. Damage is fine (it is reported);
//! panics, hangs and unbounded allocations are bugs.

#![no_main]

use std::io::Cursor;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use symbols::jitdump::{elf_image, JitDump};
use symbols::ElfFile;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("jit-1.dump");
    let Ok(dump) = JitDump::from_reader(path, Cursor::new(data), data.len() as u64) else {
        return;
    };
    let _ = (dump.big_endian(), &dump.damage, dump.moves.len());
    for load in dump.loads.iter().take(8) {
        let code = vec![0xccu8; load.size.min(4096) as usize];
        let image = elf_image(
            &load.name,
            &code,
            load.unwind.as_deref(),
            dump.elf_mach as u16,
        );
        let elf = ElfFile::from_bytes(Path::new("jitted-1-0.so"), &image)
            .expect("sear's own ELF image parses");
        let _ = elf.symbols().len();
    }
});
