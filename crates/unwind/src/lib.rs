//! Stack unwinding for user-space samples: (registers, stack bytes, modules)
//! → the leaf instruction pointer followed by the return addresses found on
//! the stack.
//!
//! What it does: loads each binary's unwind information (`.eh_frame` with
//! `.eh_frame_hdr`, or `.debug_frame`) once per run ([`Binaries`], shared by
//! every process that maps the file), places it at the addresses a mapping
//! (start, end, file offset, path) gives it in a process, and walks a copied
//! user stack with DWARF CFI, falling back to the frame pointer where a
//! module has no CFI or no module covers an address. A process's
//! [`Unwinder`] is its mapping table: it follows the process's maps by what
//! changed ([`Unwinder::sync`], [`Unwinder::apply_changes`]); framehop holds
//! each binary once, at an address range of its own, and a process's
//! addresses are translated there, so the rules it finds serve every
//! process and a whole machine's recording costs binaries and changes, not
//! processes × mappings.
//! framehop does the walking; where it cannot finish a stack because a
//! frame's CFA comes from a register other than SP and BP, or from a DWARF
//! expression (ld.so's lazy-binding resolver, signal trampolines), the
//! sample is walked again by a slower walker that tracks every general
//! register (see `full`). x86-64 only for now.
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
//! let regs = UserRegs::new(0x5555_5555_5123, 0x7ffc_0000_0000, 0);
//! let stack: &[u8] = &[0; 64];
//! let frames = unwinder.unwind(&mut bins, &regs, stack, regs.sp, 127);
//! assert_eq!(frames[0], regs.ip);
//! # Ok::<(), unwind::Error>(())
//! ```

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{ExplicitModuleSectionInfo, FrameAddress, Module, Unwinder as _};

mod full;
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
    /// R8; R9–R15 follow it.
    pub const R8: u32 = 16;
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
    /// Loading this file failed before (the error was returned then); it
    /// is not tried again.
    #[error("{path}: no unwind information (it failed to load before)")]
    Again { path: PathBuf },
}

/// The registers a user-space unwind starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserRegs {
    pub ip: u64,
    pub sp: u64,
    pub bp: u64,
    /// The other general registers in DWARF numbering (RAX, RDX, RCX, RBX,
    /// RSI, RDI, -, -, R8–R15), where the sample has them; only frames
    /// whose CFI reads them need them.
    pub others: [Option<u64>; 16],
}

impl UserRegs {
    /// IP, SP and BP alone.
    pub fn new(ip: u64, sp: u64, bp: u64) -> Self {
        UserRegs {
            ip,
            sp,
            bp,
            others: [None; 16],
        }
    }

    /// Picks the registers out of perf's numbering; `get` returns a
    /// register's value if the sample carries it. None without IP or SP;
    /// a missing BP reads as 0 (no frame pointer).
    pub fn from_perf_x86_64(get: impl Fn(u32) -> Option<u64>) -> Option<Self> {
        use perf_reg_x86_64::*;
        let mut regs = UserRegs::new(get(IP)?, get(SP)?, get(BP).unwrap_or(0));
        // perf's order AX, BX, CX, DX, SI, DI against DWARF's.
        for (perf, dwarf) in [(AX, 0), (BX, 3), (CX, 2), (DX, 1), (SI, 4), (DI, 5)] {
            regs.others[dwarf] = get(perf);
        }
        for i in 0..8 {
            regs.others[8 + i as usize] = get(R8 + i);
        }
        Some(regs)
    }

    fn dwarf(&self) -> full::Regs {
        let mut r = [None; 17];
        r[..16].copy_from_slice(&self.others);
        r[full::RBP] = Some(self.bp);
        r[full::RSP] = Some(self.sp);
        r[full::RA] = Some(self.ip);
        r
    }
}

/// A binary's bytes: a file mapped, or tables made in memory (JIT code's).
enum Image {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Deref for Image {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Image::Mapped(m) => m,
            Image::Owned(v) => v,
        }
    }
}

/// A byte range of a memory-mapped binary, shared by every module that
/// shows that binary, so a file is mapped once however often it is loaded.
#[derive(Clone)]
pub struct SectionBytes {
    map: Arc<Image>,
    range: Range<usize>,
}

impl Deref for SectionBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // The range was checked against the map when it was made.
        &self.map[self.range.clone()]
    }
}

/// Unwind tables of code no file holds (a JIT runtime's, from its
/// jitdump), laid out as `perf inject --jit` lays out the ELF file it
/// writes for it: the code at `text` (addresses equal to file offsets),
/// `.eh_frame` and `.eh_frame_hdr` at the addresses given.
#[derive(Debug, Clone)]
pub struct MemoryImage {
    pub text: Range<u64>,
    pub eh_frame_svma: u64,
    pub eh_frame: Vec<u8>,
    pub eh_frame_hdr_svma: u64,
    pub eh_frame_hdr: Vec<u8>,
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
    segments: Vec<Segment>,
    sections: ExplicitModuleSectionInfo<SectionBytes>,
    /// Functions framehop would unwind by frame pointer for want of a rule
    /// (`full::hard_ranges`), by the binary's own addresses.
    hard: Vec<Range<u64>>,
    /// Where the binary's address 0 lies in the canonical address space
    /// of [`Binaries`].
    canonical: u64,
}

impl Binary {
    /// Its canonical range's length: the binary's own addresses from 0 to the end of its
    /// last segment.
    fn file_span(&self) -> u64 {
        self.segments
            .iter()
            .map(|s| s.svma.saturating_add(s.filesz))
            .max()
            .unwrap_or(0)
    }
}

/// The binaries loaded so far, by path. Share one between the unwinders of
/// all processes: each file is opened, mapped and parsed once per
/// `Binaries`, however many processes map it and however often their
/// module sets change.
pub struct Binaries {
    by_path: HashMap<PathBuf, Arc<Binary>>,
    /// Paths that could not be opened or parsed: each is tried once, not
    /// once per process that maps it (ld.so maps /etc/ld.so.cache into
    /// every process).
    failed: HashSet<PathBuf>,
    /// What [`Unwinder::sync`] found for each of its callers' file keys
    /// (dense small numbers, as DSO indexes are, by index).
    by_key: Vec<Option<Option<Arc<Binary>>>>,
    /// How many times a file was opened (a test and the benchmarks check
    /// that this grows with binaries, not with processes or samples).
    opened: usize,
    /// Every binary loaded, each placed once at an address range of its
    /// own far above user space ("canonical" addresses): a process's
    /// address is translated there before framehop looks it up, so the
    /// rules framehop finds and caches serve every process that maps the
    /// binary.
    frames: UnwinderX86_64<SectionBytes>,
    cache: CacheX86_64,
    next_canonical: u64,
}

/// Where canonical addresses start: above any user-space address, so an
/// address no mapping covers is never mistaken for a binary's.
const CANONICAL_START: u64 = 1 << 60;

impl Default for Binaries {
    fn default() -> Self {
        Binaries {
            by_path: HashMap::new(),
            failed: HashSet::new(),
            by_key: Vec::new(),
            opened: 0,
            frames: UnwinderX86_64::new(),
            cache: CacheX86_64::new(),
            next_canonical: CANONICAL_START,
        }
    }
}

impl Binaries {
    pub fn new() -> Self {
        Self::default()
    }

    /// How many files this set has opened so far: one per distinct path
    /// it was asked for.
    pub fn files_opened(&self) -> usize {
        self.opened
    }

    /// framehop's rule cache: lookups that hit, and all lookups (debug
    /// figures).
    pub fn rule_cache_hits(&self) -> (u64, u64) {
        let s = self.cache.stats();
        (s.hit_count, s.total())
    }

    /// The binary a mapping shows, by its file key, loaded the first time
    /// (`path` names the key's file); None where it cannot be loaded.
    fn for_mapping<'a>(
        &mut self,
        m: &Mapping,
        path: &impl Fn(&Mapping) -> &'a Path,
        failed: &mut impl FnMut(Error),
    ) -> Option<Arc<Binary>> {
        let key = usize::try_from(m.file).ok().filter(|&k| k < MAX_KEYS);
        if let Some(b) = key.and_then(|k| self.by_key.get(k).cloned().flatten()) {
            return b;
        }
        let b = match self.load(path(m)) {
            Ok(b) => Some(b),
            Err(Error::Again { .. }) => None,
            Err(e) => {
                failed(e);
                None
            }
        };
        if let Some(k) = key {
            if self.by_key.len() <= k {
                self.by_key.resize(k + 1, None);
            }
            self.by_key[k] = Some(b.clone());
        }
        b
    }

    fn load(&mut self, path: &Path) -> Result<Arc<Binary>, Error> {
        if let Some(b) = self.by_path.get(path) {
            return Ok(b.clone());
        }
        if self.failed.contains(path) {
            return Err(Error::Again {
                path: path.to_owned(),
            });
        }
        self.opened += 1;
        let parsed = open_regular(path)
            .map_err(|source| Error::Io {
                path: path.to_owned(),
                source,
            })
            .and_then(|file| Self::parse_file(path, &file));
        match parsed {
            Ok(b) => {
                let span = b.file_span();
                Ok(self.place(path, b, span))
            }
            Err(e) => {
                self.failed.insert(path.to_owned());
                Err(e)
            }
        }
    }

    fn parse_file(path: &Path, file: &File) -> Result<Binary, Error> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        // SAFETY: the map is only read; a binary changed on disk while we
        // read it gives wrong unwind rules, never memory unsafety in our
        // parsers, which bound every access by the slice length.
        let map = unsafe { Mmap::map(file) }.map_err(io)?;
        parse(path, Arc::new(Image::Mapped(map)))
    }

    /// Registers the ELF file `bytes` (held in memory, not read from disk) as the binary of
    /// `path`, as if `path` held it: for tests and the fuzz targets. Does nothing if `path`
    /// is loaded already.
    pub fn add_elf_bytes(&mut self, path: &Path, bytes: Vec<u8>) -> Result<(), Error> {
        if self.by_path.contains_key(path) {
            return Ok(());
        }
        let b = parse(path, Arc::new(Image::Owned(bytes)))?;
        let span = b.file_span();
        self.place(path, b, span);
        Ok(())
    }

    /// Registers `image` as the binary of `path`: mappings whose path is
    /// `path` are unwound with its tables (a path that names no file, so
    /// nothing is opened). Does nothing if `path` is loaded already.
    pub fn add_memory_image(&mut self, path: &Path, image: MemoryImage) {
        if self.by_path.contains_key(path) {
            return;
        }
        let eh_len = image.eh_frame.len();
        let mut bytes = image.eh_frame;
        bytes.extend_from_slice(&image.eh_frame_hdr);
        let map = Arc::new(Image::Owned(bytes));
        let slice = |range: Range<usize>| SectionBytes {
            map: map.clone(),
            range,
        };
        let end = |svma: u64, len: usize| svma.saturating_add(len as u64);
        let mut hdr_len = map.len() - eh_len;
        let eh_range = image.eh_frame_svma..end(image.eh_frame_svma, eh_len);
        if hdr_len > 0 && !eh_frame_hdr_sane(&map[eh_len..], image.eh_frame_hdr_svma, &eh_range) {
            log::warn!(
                "{}: its .eh_frame_hdr table points outside .eh_frame; unwinding without it",
                path.display()
            );
            hdr_len = 0;
        }
        let sections = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: Some(image.text.clone()),
            text: None,
            got_svma: None,
            eh_frame_svma: Some(image.eh_frame_svma..end(image.eh_frame_svma, eh_len)),
            eh_frame: Some(slice(0..eh_len)),
            eh_frame_hdr_svma: (hdr_len > 0)
                .then(|| image.eh_frame_hdr_svma..end(image.eh_frame_hdr_svma, hdr_len)),
            eh_frame_hdr: (hdr_len > 0).then(|| slice(eh_len..map.len())),
            debug_frame: None,
            stubs_svma: None,
            stub_helper_svma: None,
            unwind_info: None,
            text_segment_svma: None,
            text_segment: None,
        };
        let span = [
            image.text.end,
            end(image.eh_frame_svma, eh_len),
            end(image.eh_frame_hdr_svma, hdr_len),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        let hard = full::hard_ranges(&sections);
        let b = Binary {
            // No segments: a mapping's file offsets are the addresses.
            segments: Vec::new(),
            sections,
            hard,
            canonical: 0,
        };
        self.place(path, b, span);
    }

    /// Gives a parsed binary its canonical range (its own addresses from 0
    /// to `span`, at a base of its own) and keeps it under `path`.
    fn place(&mut self, path: &Path, mut b: Binary, span: u64) -> Arc<Binary> {
        let span = span.clamp(1, u64::from(u32::MAX));
        b.canonical = self.next_canonical;
        self.next_canonical += span.next_multiple_of(1 << 20) + (1 << 20);
        self.frames.add_module(Module::new(
            String::new(),
            b.canonical..b.canonical + span,
            b.canonical,
            b.sections.clone(),
        ));
        let b = Arc::new(b);
        self.by_path.insert(path.to_owned(), b.clone());
        b
    }
}

fn parse(path: &Path, map: Arc<Image>) -> Result<Binary, Error> {
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
    // A table that points outside `.eh_frame` is not used (frames there are walked by frame
    // pointer or `.debug_frame`): the lookup would compute a wild offset from it.
    let (eh_frame_hdr_svma, eh_frame_hdr) =
        match (&eh_frame_hdr_svma, &eh_frame_hdr, &eh_frame_svma) {
            (Some(hs), Some(Some(h)), Some(es)) if !eh_frame_hdr_sane(h, hs.start, es) => {
                log::warn!(
                    "{}: its .eh_frame_hdr table points outside .eh_frame; unwinding without it",
                    path.display()
                );
                (None, None)
            }
            _ => (eh_frame_hdr_svma, eh_frame_hdr),
        };
    let got_svma = section(".got").map(|(r, _)| r);
    let debug_frame = section(".debug_frame").and_then(|(_, b)| b);
    if eh_frame.is_none() && debug_frame.is_none() {
        log::debug!(
            "{}: no CFI, unwinding through it by frame pointer",
            path.display()
        );
    }
    let sections = ExplicitModuleSectionInfo {
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
    };
    let hard = full::hard_ranges(&sections);
    if !hard.is_empty() {
        log::debug!(
            "{}: {} functions need the full-register unwinder",
            path.display(),
            hard.len()
        );
    }
    Ok(Binary {
        segments,
        sections,
        hard,
        canonical: 0,
    })
}

/// Whether a `.eh_frame_hdr` (its bytes, at `hdr_svma`) can be trusted for `.eh_frame` at
/// `eh`: its `.eh_frame` pointer is that section's address and every FDE its search table
/// names lies inside the section. gimli computes an FDE's offset as the table's pointer minus
/// the header's `.eh_frame` pointer, which a crafted table makes underflow (a panic in a debug
/// build, a wild offset otherwise). Linear in the table, once per binary.
fn eh_frame_hdr_sane(hdr: &[u8], hdr_svma: u64, eh: &Range<u64>) -> bool {
    use gimli::{BaseAddresses, EhFrameHdr, LittleEndian};
    let bases = BaseAddresses::default()
        .set_eh_frame_hdr(hdr_svma)
        .set_eh_frame(eh.start);
    let Ok(parsed) = EhFrameHdr::new(hdr, LittleEndian).parse(&bases, 8) else {
        return false;
    };
    if parsed.eh_frame_ptr().direct().ok() != Some(eh.start) {
        return false;
    }
    let Some(table) = parsed.table() else {
        return true;
    };
    let mut entries = table.iter(&bases);
    loop {
        match entries.next() {
            Ok(Some((_, fde))) => match fde.direct() {
                Ok(p) if eh.contains(&p) => {}
                _ => return false,
            },
            Ok(None) => return true,
            Err(_) => return false,
        }
    }
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

/// One mapping of a process: the file's binary (None where it failed to
/// load) and where its address 0 lies.
#[derive(Clone)]
struct Slot {
    map: Mapping,
    /// The process address of the binary's address 0.
    base: u64,
    bin: Option<Arc<Binary>>,
}

/// The modules of one process: its mapping table. The binaries, their
/// unwind rules and the rule cache are shared in [`Binaries`]. A clone is a
/// copy of the table (a forked process's, before its maps change).
#[derive(Clone)]
pub struct Unwinder {
    /// The process's file mappings by start, not overlapping: what
    /// [`Unwinder::sync`] last saw, or what `add_module` added.
    slots: Vec<Slot>,
}

/// File keys above this are looked up by path each time (keys are meant to
/// be small dense numbers).
const MAX_KEYS: usize = 1 << 20;

/// A file mapping of a process as [`Unwinder::sync`] takes it: where it
/// lies, which file offset its start shows, and a key that names the file
/// (the caller's own number for it; equal keys mean the same file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub pgoff: u64,
    pub file: u64,
}

impl Slot {
    /// A mapping, its binary loaded if need be.
    fn new<'a>(
        binaries: &mut Binaries,
        m: &Mapping,
        path: &impl Fn(&Mapping) -> &'a Path,
        failed: &mut impl FnMut(Error),
    ) -> Slot {
        Slot::of(*m, binaries.for_mapping(m, path, failed))
    }

    /// A mapping showing `bin` (None: a file that did not load).
    fn of(map: Mapping, bin: Option<Arc<Binary>>) -> Slot {
        Slot {
            map,
            base: bin
                .as_ref()
                .map_or(0, |b| base_avma(&b.segments, map.start, map.pgoff)),
            bin,
        }
    }
}

impl full::Modules for [Slot] {
    fn find(&self, avma: u64) -> Option<(&Binary, u64)> {
        let s = find_slot(self, avma).map(|i| &self[i])?;
        Some((s.bin.as_deref()?, s.base))
    }
}

/// The slot whose mapping holds `avma`.
fn find_slot(slots: &[Slot], avma: u64) -> Option<usize> {
    let i = slots.partition_point(|s| s.map.start <= avma);
    (i > 0 && avma < slots[i - 1].map.end).then(|| i - 1)
}

/// [`find_slot`], trying the slot found last first (`hint`, updated): a
/// stack's frames mostly lie in the binary of the frame before, and the
/// search's loads are a frame's main cost in deep stacks. (Slots do not
/// overlap, so the slot holding an address is the one the search finds.)
fn find_slot_near(slots: &[Slot], hint: &mut usize, avma: u64) -> Option<usize> {
    if let Some(s) = slots.get(*hint) {
        if s.map.start <= avma && avma < s.map.end {
            return Some(*hint);
        }
    }
    let found = find_slot(slots, avma);
    if let Some(i) = found {
        *hint = i;
    }
    found
}

/// `addr` as framehop finds it among the canonical placements of
/// [`Binaries`]: translated into its binary's range where a mapping of the
/// process covers its lookup address, else kept as it is (no binary there:
/// framehop's fallback rule), or moved to address 0 if it lies where
/// canonical ranges are.
/// (`slot`: the slot of `addr`'s lookup address, found by the caller.)
fn canonical_in(slots: &[Slot], slot: Option<usize>, addr: FrameAddress) -> FrameAddress {
    let at = addr.address_for_lookup();
    let shift = slot.and_then(|i| {
        let s = &slots[i];
        let b = s.bin.as_ref()?;
        Some((s.base, b.canonical))
    });
    let a = match addr {
        FrameAddress::InstructionPointer(a) => a,
        FrameAddress::ReturnAddress(a) => a.get(),
    };
    let moved = match shift {
        Some((base, canonical)) => {
            // Outside the binary's own addresses: no binary, as for an
            // unmapped address.
            let svma = at.wrapping_sub(base);
            if svma >= u64::from(u32::MAX) {
                0
            } else {
                a.wrapping_sub(base).wrapping_add(canonical)
            }
        }
        None if at >= CANONICAL_START => 0,
        None => a,
    };
    match addr {
        FrameAddress::InstructionPointer(_) => FrameAddress::from_instruction_pointer(moved),
        FrameAddress::ReturnAddress(_) => FrameAddress::from_return_address(moved.max(1))
            .unwrap_or(FrameAddress::from_instruction_pointer(0)),
    }
}

impl Default for Unwinder {
    fn default() -> Self {
        Self::new()
    }
}

impl Unwinder {
    pub fn new() -> Self {
        Unwinder { slots: Vec::new() }
    }

    /// Makes the module set the given mappings, sorted by start and not
    /// overlapping, changing only what differs from the last call: a
    /// process's maps change a few at a time (a library loaded, a map
    /// split), so keeping an unwinder current costs a comparison per
    /// mapping. A file is loaded once per `binaries` and file key (`path`
    /// names a key's file); a mapping whose file fails to load is unwound
    /// through by frame pointer and its error passed to `failed`, once per
    /// [`Binaries`] and file.
    pub fn sync<'a>(
        &mut self,
        binaries: &mut Binaries,
        maps: &[Mapping],
        path: impl Fn(&Mapping) -> &'a Path,
        mut failed: impl FnMut(Error),
    ) {
        if self.slots.len() == maps.len() && self.slots.iter().zip(maps).all(|(s, m)| s.map == *m) {
            return;
        }
        let old = std::mem::take(&mut self.slots);
        let mut slots = Vec::with_capacity(maps.len());
        // Both lists are sorted by start: one merge finds what stays, what
        // went and what came.
        let mut old = old.into_iter().peekable();
        for m in maps {
            // What went: mappings before this one, or at its start but
            // not the same.
            while old
                .next_if(|o| o.map.start < m.start || (o.map.start == m.start && o.map != *m))
                .is_some()
            {}
            if let Some(o) = old.next_if(|o| o.map == *m) {
                slots.push(o);
                continue;
            }
            if m.start >= m.end {
                continue;
            }
            slots.push(Slot::new(binaries, m, &path, &mut failed));
        }
        self.slots = slots;
    }

    /// Brings the module set up to date from what changed since the last
    /// [`Unwinder::sync`] or `apply_changes`: each start address a change
    /// touched, with the mapping that starts there now (None: none does,
    /// or it is not a file). Costs what changed, not what is mapped.
    pub fn apply_changes<'a>(
        &mut self,
        binaries: &mut Binaries,
        changes: &[(u64, Option<Mapping>)],
        path: impl Fn(&Mapping) -> &'a Path,
        mut failed: impl FnMut(Error),
    ) {
        if changes.len() > 8 {
            return self.merge_changes(binaries, changes, path, failed);
        }
        for (start, now) in changes {
            let i = self.slots.partition_point(|s| s.map.start < *start);
            if self.slots.get(i).is_some_and(|s| s.map.start == *start) {
                if now.is_some_and(|m| m == self.slots[i].map) {
                    continue;
                }
                self.slots.remove(i);
            }
            let Some(m) = now.filter(|m| m.start < m.end) else {
                continue;
            };
            let slot = Slot::new(binaries, &m, &path, &mut failed);
            self.slots.insert(i, slot);
        }
    }

    /// [`Self::apply_changes`] for many changes (a new process's first
    /// sync brings its whole table, in the order it was mapped): the changes
    /// in address order merged with the table in one pass, where inserting
    /// each in place would move the table's tail each time. The same
    /// result: a change meets the slot at its start as the one before it at
    /// that start left it.
    fn merge_changes<'a>(
        &mut self,
        binaries: &mut Binaries,
        changes: &[(u64, Option<Mapping>)],
        path: impl Fn(&Mapping) -> &'a Path,
        mut failed: impl FnMut(Error),
    ) {
        let mut order: Vec<usize> = (0..changes.len()).collect();
        order.sort_by_key(|&i| changes[i].0);
        let old = std::mem::take(&mut self.slots);
        let mut out: Vec<Slot> = Vec::with_capacity(old.len() + changes.len());
        let mut old = old.into_iter().peekable();
        for i in order {
            let (start, now) = &changes[i];
            while let Some(s) = old.next_if(|s| s.map.start < *start) {
                out.push(s);
            }
            // The slot at this start: one an earlier change put there, or
            // the table's.
            let here = if out.last().is_some_and(|s| s.map.start == *start) {
                out.pop()
            } else {
                old.next_if(|s| s.map.start == *start)
            };
            if let Some(s) = here {
                if now.is_some_and(|m| m == s.map) {
                    out.push(s);
                    continue;
                }
            }
            let Some(m) = now.filter(|m| m.start < m.end) else {
                continue;
            };
            out.push(Slot::new(binaries, &m, &path, &mut failed));
        }
        out.extend(old);
        self.slots = out;
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
        let i = self.slots.partition_point(|s| s.map.start < start);
        let map = Mapping {
            start,
            end,
            pgoff,
            file: u64::MAX,
        };
        self.slots.insert(i, Slot::of(map, Some(bin)));
        Ok(())
    }

    /// Removes the module added at `start`, if any.
    pub fn remove_module(&mut self, start: u64) {
        let i = self.slots.partition_point(|s| s.map.start < start);
        if self.slots.get(i).is_some_and(|s| s.map.start == start) {
            self.slots.remove(i);
        }
    }

    /// The process address ranges of the functions whose frames are walked
    /// with every register (their CFI has rules framehop does not cover),
    /// sorted.
    pub fn full_register_ranges(&self) -> Vec<Range<u64>> {
        hard_avmas(&self.slots)
    }

    /// The start addresses of the modules present, in order.
    pub fn module_starts(&self) -> Vec<u64> {
        self.slots
            .iter()
            .filter(|s| s.bin.is_some())
            .map(|s| s.map.start)
            .collect()
    }

    fn remove_overlapping(&mut self, start: u64, end: u64) {
        let hit: Vec<u64> = self
            .slots
            .iter()
            .filter(|s| s.map.start < end && s.map.end > start)
            .map(|s| s.map.start)
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
    ///
    /// framehop walks; a frame in a function framehop has no rule for (it
    /// would take the frame pointer, wrong for the code that needs such
    /// CFI) is walked again from the leaf by the full-register walker,
    /// which hands back to framehop once past that frame.
    pub fn unwind(
        &mut self,
        binaries: &mut Binaries,
        regs: &UserRegs,
        stack: &[u8],
        stack_start: u64,
        max_frames: usize,
    ) -> Vec<u64> {
        // One allocation for most stacks, not one per doubling.
        let mut frames = Vec::with_capacity(max_frames.min(128));
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
        let slots = &mut self.slots;
        frames.push(regs.ip);
        let mut fh = UnwindRegsX86_64::new(regs.ip, regs.sp, regs.bp);
        let mut addr = FrameAddress::from_instruction_pointer(regs.ip);
        // Frames before this index are final.
        let mut settled = 0;
        loop {
            // The frame that needs the full walker, if the walk below met
            // one; frames from `settled` up to `checked` are known not to
            // (one slot lookup per frame serves both questions).
            let mut hard_at = None;
            let mut checked = settled;
            let mut near = usize::MAX;
            while frames.len() < max_frames {
                // A frame framehop has no rule for is the full walker's:
                // framehop is not asked (it evaluates CFI expressions
                // without a bound: a looping one would never return).
                let i = frames.len() - 1;
                let f = frames[i];
                let look = if i == 0 { f } else { f.wrapping_sub(1) };
                let slot = find_slot_near(slots, &mut near, look);
                if i >= settled {
                    if hard_in(slots, slot, look) {
                        hard_at = Some(i);
                        break;
                    }
                    checked = i + 1;
                }
                // (The lookup address is `look` but for a frame the full
                // walker ended on an instruction pointer.)
                let at = addr.address_for_lookup();
                let slot = if at == look {
                    slot
                } else {
                    find_slot_near(slots, &mut near, at)
                };
                match binaries.frames.unwind_frame(
                    canonical_in(slots, slot, addr),
                    &mut fh,
                    &mut binaries.cache,
                    &mut read_stack,
                ) {
                    Ok(Some(ra)) => match FrameAddress::from_return_address(ra) {
                        Some(a) => {
                            frames.push(ra);
                            addr = a;
                        }
                        None => break,
                    },
                    Ok(None) => break,
                    Err(e) => {
                        log::trace!("unwind stopped after {} frames: {e}", frames.len());
                        break;
                    }
                }
            }
            let Some(at) = hard_at.or_else(|| {
                (checked.max(settled)..frames.len()).find(|&i| {
                    let f = frames[i];
                    in_hard(slots, if i == 0 { f } else { f.wrapping_sub(1) })
                })
            }) else {
                return frames;
            };
            // Out of the frame at `at` by every register, then framehop on.
            let mut read = |a| read_stack(a).ok();
            let walk = full::unwind(&slots[..], regs.dwarf(), &mut read, max_frames, at + 2);
            log::trace!(
                "full-register walk past frame {at}: {} frames",
                walk.frames.len()
            );
            match walk.state {
                Some((r, exact)) => {
                    let ip = walk.frames[at + 1];
                    fh = UnwindRegsX86_64::new(
                        ip,
                        r[full::RSP].unwrap_or(0),
                        r[full::RBP].unwrap_or(0),
                    );
                    addr = if exact {
                        FrameAddress::from_instruction_pointer(ip)
                    } else {
                        match FrameAddress::from_return_address(ip) {
                            Some(a) => a,
                            None => return walk.frames,
                        }
                    };
                    frames = walk.frames;
                    settled = at + 1;
                }
                // The full walk ended by itself: keep it unless it ended
                // before getting out of the frame that needed it.
                None => {
                    if walk.frames.len() > at + 1 {
                        return walk.frames;
                    }
                    return frames;
                }
            }
        }
    }
}

/// Whether process address `a` lies in a hard range of the module mapped
/// there (one lookup, where [`hard_avmas`] would list every module's).
fn in_hard(slots: &[Slot], a: u64) -> bool {
    hard_in(slots, find_slot(slots, a), a)
}

/// [`in_hard`] with the slot of `a` already found.
fn hard_in(slots: &[Slot], slot: Option<usize>, a: u64) -> bool {
    slot.is_some_and(|i| {
        let s = &slots[i];
        let svma = a.wrapping_sub(s.base);
        s.bin.as_ref().is_some_and(|b| {
            // (Sorted and not overlapping: see `full::hard_ranges`.)
            let i = b.hard.partition_point(|r| r.start <= svma);
            i > 0 && b.hard[i - 1].contains(&svma)
        })
    })
}

/// The process address ranges of every module's hard functions
/// (`full::hard_ranges`), sorted.
fn hard_avmas(slots: &[Slot]) -> Vec<Range<u64>> {
    let mut v: Vec<Range<u64>> = slots
        .iter()
        .flat_map(|s| {
            let hard = s.bin.as_ref().map_or(&[][..], |b| &b.hard[..]);
            hard.iter().filter_map(move |r| {
                let lo = r.start.wrapping_add(s.base).max(s.map.start);
                let hi = r.end.wrapping_add(s.base).min(s.map.end);
                (lo < hi).then_some(lo..hi)
            })
        })
        .collect();
    v.sort_by_key(|r| r.start);
    v
}

/// Opens `path` only if it is a regular file, without blocking on a FIFO
/// (`symbols::open_regular`'s rule; this crate does not depend on symbols).
fn open_regular(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device, socket or directory)",
        ));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_register_numbers_pick_ip_sp_bp() {
        // values indexed by perf's numbering: AX..DI, BP=6, SP=7, IP=8.
        let values = [10, 11, 12, 13, 14, 15, 16, 17, 18];
        let regs = UserRegs::from_perf_x86_64(|r| values.get(r as usize).copied()).unwrap();
        assert_eq!((regs.ip, regs.sp, regs.bp), (18, 17, 16));
        // RAX, RDX, RCX, RBX in DWARF's order.
        assert_eq!(&regs.others[..4], &[Some(10), Some(13), Some(12), Some(11)]);
        assert_eq!(regs.others[8], None);
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
