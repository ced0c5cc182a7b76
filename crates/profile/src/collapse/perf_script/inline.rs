//! `--inline`: a frame's inline callers from the binary's DWARF, as
//! stackcollapse-perf.pl asks addr2line for them.

use super::*;

/// Inline frames from the binaries named in the text, each opened once.
pub(super) struct Inliner {
    finder: DebugFinder,
    binaries: HashMap<Vec<u8>, Option<Binary>>,
}

impl Inliner {
    pub(super) fn new() -> Self {
        Inliner {
            finder: DebugFinder::default(),
            binaries: HashMap::default(),
        }
    }

    /// The frames at `pc` in `module`, innermost first, each with whether it
    /// was inlined; `None` when the binary or its DWARF cannot tell (the frame
    /// is then kept as perf printed it).
    pub(super) fn frames(
        &mut self,
        module: &[u8],
        pc: &[u8],
        leaf: bool,
        diag: &mut Diagnostics,
        offset: u64,
    ) -> Option<Vec<(String, bool)>> {
        let pc = u64::from_str_radix(std::str::from_utf8(pc).ok()?, 16).ok()?;
        let bin = match self.binaries.entry(module.to_vec()) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let path = Path::new(OsStr::from_bytes(module));
                let opened = match Binary::open(path, &self.finder) {
                    Ok(b) => Some(b),
                    Err(err) => {
                        diag.warn("inline: binary unreadable", offset, || {
                            format!("{}: {err}; its frames are kept as printed", path.display())
                        });
                        None
                    }
                };
                e.insert(opened)
            }
        };
        let bin = bin.as_mut()?;
        // A return address is looked up inside the call that made it.
        let addr = if leaf { pc } else { pc.checked_sub(1)? };
        // Old perf printed the binary's own addresses (`4005b1` in a non-PIE
        // executable); newer perf prints offsets into the file (`1157` for the
        // same code). Where the two agree (most shared objects) it is the same.
        let elf = bin.elf();
        let inside = elf
            .load_segments()
            .iter()
            .any(|s| addr >= s.svma && addr - s.svma < s.mem_size);
        let addr = if inside {
            addr
        } else {
            elf.file_offset_to_svma(FileOffset(addr)).ok()?.0
        };
        let frames = bin.frames(Svma(addr)).ok()?;
        if frames.is_empty() || frames.iter().any(|f| f.function.is_none()) {
            return None;
        }
        Some(
            frames
                .iter()
                .map(|f| (f.function_or_unknown().to_string(), f.inlined))
                .collect(),
        )
    }
}
