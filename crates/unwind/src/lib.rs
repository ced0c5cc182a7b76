//! Stack unwinding for user-space samples: (registers, stack bytes, modules)
//! → the leaf instruction pointer followed by the return addresses found on
//! the stack.
//!
//! What it does: loads each binary's unwind information (`.eh_frame` with
//! `.eh_frame_hdr`, or `.debug_frame`) once per file, places it at the
//! addresses a mapping (start, end, file offset, path) gives it in a process,
//! and walks a copied user stack with DWARF CFI, falling back to the frame
//! pointer where a module has no CFI or no module covers an address.
//! x86-64 only for now.
//!
//! What it does not: read perf.data, track processes (the caller adds and
//! removes modules as MMAP records come), symbolize, or look for separate
//! debug files. Return addresses are returned as found; a symbolizer looks
//! them up at `addr - 1`.
//!
//! ```no_run
//! use unwind::{Binaries, Unwinder, UserRegs};
//! let mut bins = Binaries::new();
//! let mut unwinder = Unwinder::new();
//! unwinder.add_module(&mut bins, 0x5555_5555_5000, 0x5555_5555_6000, 0x1000, "/bin/true".as_ref())?;
//! let regs = UserRegs { ip: 0x5555_5555_5123, sp: 0x7ffc_0000_0000, bp: 0 };
//! let stack: &[u8] = &[0; 64];
//! let frames = unwinder.unwind(&regs, stack, regs.sp, 127);
//! assert_eq!(frames[0], regs.ip);
//! # Ok::<(), unwind::Error>(())
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::ops::{Deref, Range};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, Module, Unwinder as _};
use memmap2::Mmap;
use object::{Object, ObjectSection, ObjectSegment, SegmentFlags};

/// perf's x86-64 register numbers in `PERF_SAMPLE_REGS_USER`
/// (arch/x86/include/uapi/asm/perf_regs.h).
pub mod perf_reg_x86_64 {
    pub const AX: u32 = 0;
    pub const BX: u32 = 1;
    pub const CX: u32 = 2;
    pub const DX: u32 = 3;
    pub const SI: u32 = 4;
    pub const DI: u32 = 5;
    pub const BP: u32 = 6;
    pub const SP: u32 = 7;
    pub const IP: u32 = 8;
    /// The registers an unwinder needs: BP, SP and IP.
    pub const UNWIND_MASK: u64 = (1 << BP) | (1 << SP) | (1 << IP);
}

/// Anything that can go wrong loading a binary's unwind information.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("opening {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("parsing {path} as an object file: {message}")]
    Object { path: PathBuf, message: String },
    #[error("mapping {start:#x}..{end:#x} of {path} is empty or reversed")]
    BadRange { path: PathBuf, start: u64, end: u64 },
}

/// The registers a user-space unwind starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserRegs {
    pub ip: u64,
    pub sp: u64,
    pub bp: u64,
}

impl UserRegs {
    /// Picks IP, SP and BP out of perf's register numbering; `get` returns a
    /// register's value if the sample carries it. None without IP or SP;
    /// a missing BP reads as 0 (no frame pointer).
    pub fn from_perf_x86_64(get: impl Fn(u32) -> Option<u64>) -> Option<Self> {
        use perf_reg_x86_64::*;
        Some(UserRegs {
            ip: get(IP)?,
            sp: get(SP)?,
            bp: get(BP).unwrap_or(0),
        })
    }
}

/// A byte range of a memory-mapped binary, shared by every module that
/// shows that binary, so a file is mapped once however often it is loaded.
#[derive(Clone)]
pub struct SectionBytes {
    map: Arc<Mmap>,
    range: Range<usize>,
}

impl Deref for SectionBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // The range was checked against the map when it was made.
        &self.map[self.range.clone()]
    }
}

/// A loadable segment: where it lies in the file and in the binary's own
/// address space.
#[derive(Debug, Clone, Copy)]
struct Segment {
    offset: u64,
    filesz: u64,
    svma: u64,
    exec: bool,
}

/// One binary's unwind sections, found once.
struct Binary {
    /// What identifies the file on disk; a different file at the same path
    /// (a rebuilt binary) is loaded anew.
    identity: (u64, u64, u64, i64),
    segments: Vec<Segment>,
    sections: ExplicitModuleSectionInfo<SectionBytes>,
}

/// The binaries loaded so far, by path. Share one between the unwinders of
/// all processes so each file is parsed once.
#[derive(Default)]
pub struct Binaries {
    by_path: HashMap<PathBuf, Arc<Binary>>,
}

fn identity(m: &std::fs::Metadata) -> (u64, u64, u64, i64) {
    (m.dev(), m.ino(), m.size(), m.mtime())
}

impl Binaries {
    pub fn new() -> Self {
        Self::default()
    }

    fn load(&mut self, path: &Path) -> Result<Arc<Binary>, Error> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let id = identity(&file.metadata().map_err(io)?);
        if let Some(b) = self.by_path.get(path) {
            if b.identity == id {
                return Ok(b.clone());
            }
        }
        // SAFETY: the map is only read; a binary changed on disk while we
        // read it gives wrong unwind rules, never memory unsafety in our
        // parsers, which bound every access by the slice length.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        let map = Arc::new(map);
        let b = Arc::new(parse(path, id, map)?);
        self.by_path.insert(path.to_owned(), b.clone());
        Ok(b)
    }
}

fn parse(path: &Path, identity: (u64, u64, u64, i64), map: Arc<Mmap>) -> Result<Binary, Error> {
    let obj = object::File::parse(&map[..]).map_err(|e| Error::Object {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let segments = obj
        .segments()
        .map(|s| {
            let (offset, filesz) = s.file_range();
            let exec = match s.flags() {
                SegmentFlags::Elf { p_flags } => p_flags & object::elf::PF_X != 0,
                _ => false,
            };
            Segment {
                offset,
                filesz,
                svma: s.address(),
                exec,
            }
        })
        .collect();
    let len = map.len() as u64;
    let section = |name: &str| -> Option<(Range<u64>, Option<SectionBytes>)> {
        let s = obj.section_by_name(name)?;
        let svma = s.address()..s.address().checked_add(s.size())?;
        let bytes = s.file_range().and_then(|(off, size)| {
            let end = off.checked_add(size).filter(|&e| e <= len)?;
            Some(SectionBytes {
                map: map.clone(),
                range: usize::try_from(off).ok()?..usize::try_from(end).ok()?,
            })
        });
        Some((svma, bytes))
    };
    let (text_svma, text) = section(".text").unzip();
    let (eh_frame_svma, eh_frame) = section(".eh_frame").unzip();
    let (eh_frame_hdr_svma, eh_frame_hdr) = section(".eh_frame_hdr").unzip();
    let got_svma = section(".got").map(|(r, _)| r);
    let debug_frame = section(".debug_frame").and_then(|(_, b)| b);
    if eh_frame.is_none() && debug_frame.is_none() {
        log::debug!(
            "{}: no CFI, unwinding through it by frame pointer",
            path.display()
        );
    }
    Ok(Binary {
        identity,
        segments,
        sections: ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma,
            text: text.flatten(),
            got_svma,
            eh_frame_svma,
            eh_frame: eh_frame.flatten(),
            eh_frame_hdr_svma,
            eh_frame_hdr: eh_frame_hdr.flatten(),
            debug_frame,
            stubs_svma: None,
            stub_helper_svma: None,
            unwind_info: None,
            text_segment_svma: None,
            text_segment: None,
        },
    })
}

/// The process address of the binary's address 0, for a mapping at `start`
/// of the file from offset `pgoff`: the loadable segment the mapping shows
/// fixes the distance between file offsets and the binary's own addresses.
fn base_avma(segments: &[Segment], start: u64, pgoff: u64) -> u64 {
    const PAGE: u64 = 4096;
    let shows = |s: &&Segment| {
        let first_page = s.offset & !(PAGE - 1);
        first_page <= pgoff && pgoff < s.offset.saturating_add(s.filesz.max(1))
    };
    let seg = segments
        .iter()
        .filter(shows)
        .find(|s| s.exec)
        .or_else(|| segments.iter().find(shows));
    // svma(start) = seg.svma + (pgoff - seg.offset); without a segment the
    // file is taken to be laid out as it is loaded (svma == offset).
    let svma_of_start = match seg {
        Some(s) => s.svma.wrapping_add(pgoff).wrapping_sub(s.offset),
        None => pgoff,
    };
    start.wrapping_sub(svma_of_start)
}

/// The modules of one process and the state to unwind its samples.
pub struct Unwinder {
    modules: UnwinderX86_64<SectionBytes>,
    cache: CacheX86_64,
    /// Start → end of each module added, to remove what a new map covers.
    ranges: BTreeMap<u64, u64>,
}

impl Default for Unwinder {
    fn default() -> Self {
        Self::new()
    }
}

impl Unwinder {
    pub fn new() -> Self {
        Unwinder {
            modules: UnwinderX86_64::new(),
            cache: CacheX86_64::new(),
            ranges: BTreeMap::new(),
        }
    }

    /// Adds the mapping `start..end` of `path` from file offset `pgoff`,
    /// replacing modules it overlaps (as a new mmap replaces old ones).
    /// On error the range is left without a module, so addresses in it are
    /// unwound by frame pointer.
    pub fn add_module(
        &mut self,
        binaries: &mut Binaries,
        start: u64,
        end: u64,
        pgoff: u64,
        path: &Path,
    ) -> Result<(), Error> {
        if start >= end {
            return Err(Error::BadRange {
                path: path.to_owned(),
                start,
                end,
            });
        }
        self.remove_overlapping(start, end);
        let bin = binaries.load(path)?;
        let base = base_avma(&bin.segments, start, pgoff);
        let module = Module::new(
            path.display().to_string(),
            start..end,
            base,
            bin.sections.clone(),
        );
        self.modules.add_module(module);
        self.ranges.insert(start, end);
        Ok(())
    }

    /// Removes the module added at `start`, if any.
    pub fn remove_module(&mut self, start: u64) {
        if self.ranges.remove(&start).is_some() {
            self.modules.remove_module(start);
        }
    }

    /// The start addresses of the modules present, in order.
    pub fn module_starts(&self) -> Vec<u64> {
        self.ranges.keys().copied().collect()
    }

    fn remove_overlapping(&mut self, start: u64, end: u64) {
        let hit: Vec<u64> = self
            .ranges
            .range(..end)
            .rev()
            .take_while(|(_, &e)| e > start)
            .map(|(&s, _)| s)
            .collect();
        for s in hit {
            self.remove_module(s);
        }
    }

    /// Unwinds from `regs` over `stack`, the bytes copied from the process
    /// starting at address `stack_start` (perf copies from the sampled SP).
    /// Returns the leaf IP and then each return address, at most
    /// `max_frames` in all; stops early where the stack ends, a rule fails
    /// or the registers make no sense, keeping what it found so far.
    pub fn unwind(
        &mut self,
        regs: &UserRegs,
        stack: &[u8],
        stack_start: u64,
        max_frames: usize,
    ) -> Vec<u64> {
        let mut frames = Vec::new();
        if max_frames == 0 {
            return frames;
        }
        let mut read_stack = |addr: u64| -> Result<u64, ()> {
            let off = usize::try_from(addr.checked_sub(stack_start).ok_or(())?).map_err(|_| ())?;
            let bytes = stack.get(off..off.checked_add(8).ok_or(())?).ok_or(())?;
            let mut word = [0u8; 8];
            word.copy_from_slice(bytes);
            Ok(u64::from_le_bytes(word))
        };
        let start = UnwindRegsX86_64::new(regs.ip, regs.sp, regs.bp);
        let mut it = self
            .modules
            .iter_frames(regs.ip, start, &mut self.cache, &mut read_stack);
        while frames.len() < max_frames {
            match it.next() {
                Ok(Some(f)) => frames.push(f.address()),
                Ok(None) => break,
                Err(e) => {
                    log::trace!("unwind stopped after {} frames: {e}", frames.len());
                    break;
                }
            }
        }
        frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_register_numbers_pick_ip_sp_bp() {
        // values indexed by perf's numbering: AX..DI, BP=6, SP=7, IP=8.
        let values = [10, 11, 12, 13, 14, 15, 16, 17, 18];
        let regs = UserRegs::from_perf_x86_64(|r| values.get(r as usize).copied()).unwrap();
        assert_eq!(
            regs,
            UserRegs {
                ip: 18,
                sp: 17,
                bp: 16
            }
        );
        let no_bp = UserRegs::from_perf_x86_64(|r| (r != 6).then_some(1)).unwrap();
        assert_eq!(no_bp.bp, 0);
        assert!(UserRegs::from_perf_x86_64(|r| (r != 8).then_some(1)).is_none());
    }

    #[test]
    fn base_follows_the_segment_the_mapping_shows() {
        // A PIE whose text segment is at offset 0x1000 and address 0x1000,
        // and a data segment whose address is ahead of its offset.
        let segs = [
            Segment {
                offset: 0,
                filesz: 0x5e0,
                svma: 0,
                exec: false,
            },
            Segment {
                offset: 0x1000,
                filesz: 0x1d1,
                svma: 0x1000,
                exec: true,
            },
            Segment {
                offset: 0x2e00,
                filesz: 0x210,
                svma: 0x3e00,
                exec: false,
            },
        ];
        assert_eq!(base_avma(&segs, 0x5555_0000_1000, 0x1000), 0x5555_0000_0000);
        assert_eq!(base_avma(&segs, 0x5555_0000_3000, 0x2000), 0x5555_0000_0000);
        // Unknown layout: offsets are addresses.
        assert_eq!(base_avma(&[], 0x7000_0000, 0x3000), 0x7000_0000 - 0x3000);
    }
}
