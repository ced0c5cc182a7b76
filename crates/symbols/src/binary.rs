//! A binary with its debug file: the unit that caches lookups per address.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::{
    DebugFile, DebugFinder, DwarfInfo, DwarfSections, ElfFile, Error, Frame, FrameDetail, Reason,
    Svma, SymbolHit,
};

/// DWARF sections shared by the [`Binary`] views of one binary on several threads: the
/// first to need them reads them, the others wait for and reuse that read.
pub type SharedDwarf = Arc<OnceLock<Result<DwarfSections, Reason>>>;

/// One binary, its verified debug file (if any), and a cache of frame lookups.
///
/// The DWARF context is built on the first [`Binary::frames`] call and kept; each address
/// is looked up once.
#[derive(Debug)]
pub struct Binary {
    elf: ElfFile,
    debug: Result<DebugFile, Reason>,
    dwarf: Option<Result<DwarfInfo, Reason>>,
    shared: Option<SharedDwarf>,
    detail: FrameDetail,
    cache: HashMap<u64, Result<Vec<Frame>, Reason>>,
}

impl Binary {
    /// Opens the binary and finds its debug file. When the binary is stripped, the debug
    /// file's `.symtab` supplies the symbols (as perf does).
    pub fn open(path: impl AsRef<Path>, finder: &DebugFinder) -> Result<Binary, Error> {
        let mut elf = ElfFile::open(path)?;
        let debug = finder.find(&elf);
        if let Ok(d) = &debug {
            if d.path != elf.path() {
                match ElfFile::open(&d.path) {
                    Ok(dbg) => elf.merge_symbols(&dbg),
                    Err(e) => log::warn!("{e}"),
                }
            }
        }
        Ok(Binary {
            elf,
            debug,
            dwarf: None,
            shared: None,
            detail: FrameDetail::Full,
            cache: HashMap::new(),
        })
    }

    /// A binary from an already opened ELF file (a vdso image), without debug info.
    pub fn from_elf(elf: ElfFile) -> Binary {
        Binary {
            elf,
            debug: Err(Reason::NoDebugInfo),
            dwarf: None,
            shared: None,
            detail: FrameDetail::Full,
            cache: HashMap::new(),
        }
    }

    /// Reads the debug file's DWARF sections through `shared`, which other views of the
    /// same binary (on other threads) share, instead of reading them again.
    pub fn share_dwarf(&mut self, shared: SharedDwarf) {
        self.shared = Some(shared);
    }

    /// What [`Binary::frames`] fills in from now on (set it before the first lookup: the
    /// answers are cached per address).
    pub fn set_frame_detail(&mut self, detail: FrameDetail) {
        if detail != self.detail {
            self.cache.clear();
            self.detail = detail;
        }
    }

    /// The DWARF sections this view shares, for another view of the same binary.
    pub fn shared_dwarf(&self) -> Option<SharedDwarf> {
        self.shared.clone()
    }

    pub fn elf(&self) -> &ElfFile {
        &self.elf
    }

    /// The verified debug file, or why there is none.
    pub fn debug_file(&self) -> Result<&DebugFile, Reason> {
        self.debug.as_ref().map_err(|r| *r)
    }

    /// The function symbol covering `addr` and the offset into it.
    pub fn symbol(&self, addr: Svma) -> Result<SymbolHit<'_>, Reason> {
        self.elf.lookup(addr)
    }

    /// The line table's rows in `[start, end)`: (address, line, discriminator) (see
    /// [`DwarfInfo::line_rows`]); empty without DWARF.
    pub fn line_rows(&mut self, start: Svma, end: Svma) -> Vec<(u64, u64, u64)> {
        // (Loads the DWARF as `frames` does.)
        let _ = self.frames(start);
        match &self.dwarf {
            Some(Ok(d)) => d.line_rows(start.0, end.0),
            _ => Vec::new(),
        }
    }

    /// Where each frame at `addr` comes from, innermost first (see
    /// [`DwarfInfo::frame_origins`]); empty without DWARF.
    pub fn frame_origins(&mut self, addr: Svma) -> Vec<crate::FrameOrigin> {
        // (Loads the DWARF as `frames` does.)
        let _ = self.frames(addr);
        match &self.dwarf {
            Some(Ok(d)) => d.frame_origins(addr),
            _ => Vec::new(),
        }
    }

    /// The inline frames at `addr`, innermost first, as `addr2line -f -i -C` gives them.
    pub fn frames(&mut self, addr: Svma) -> Result<&[Frame], Reason> {
        if self.dwarf.is_none() {
            let loaded = match &self.debug {
                Ok(d) => match &self.shared {
                    Some(cell) => cell
                        .get_or_init(|| DwarfSections::read(&d.path))
                        .as_ref()
                        .map_err(|r| *r)
                        .and_then(|s| DwarfInfo::from_sections(s, &d.path)),
                    None => DwarfInfo::load(&d.path),
                },
                Err(r) => Err(*r),
            };
            self.dwarf = Some(loaded);
        }
        let dwarf = match &self.dwarf {
            Some(Ok(d)) => d,
            Some(Err(r)) => return Err(*r),
            None => return Err(Reason::NoDebugInfo),
        };
        let elf = &self.elf;
        let detail = self.detail;
        self.cache
            .entry(addr.0)
            .or_insert_with(|| {
                let mut frames = dwarf.frames_as(addr, detail)?;
                // Where DWARF names the outer function only by its plain DW_AT_name (a
                // template's `foo<int>`), the symbol table's linkage name is the full one;
                // binutils prefers it too.
                if let Some(outer) = frames.last_mut() {
                    let linkage = outer
                        .raw_function
                        .as_deref()
                        .is_some_and(|n| n.starts_with("_Z"));
                    let unnamed = outer.raw_function.is_none();
                    if !linkage {
                        // Only a mangled symbol is more complete than a DWARF name
                        // (`main.cold` is not); any symbol beats no name at all.
                        if let Some(hit) = elf
                            .lookup(addr)
                            .ok()
                            .filter(|h| unnamed || h.raw_name.starts_with("_Z"))
                        {
                            outer.raw_function = Some(hit.raw_name.to_owned());
                            outer.function = (detail == FrameDetail::Full)
                                .then(|| crate::demangle(hit.raw_name));
                        }
                    }
                }
                Ok(frames)
            })
            .as_deref()
            .map_err(|r| *r)
    }
}

#[cfg(test)]
mod tests {
    /// The profile crate symbolizes binaries on worker threads.
    #[test]
    fn binary_can_move_between_threads() {
        fn assert_send<T: Send>() {}
        assert_send::<super::Binary>();
        assert_send::<crate::DebugFinder>();
    }
}
