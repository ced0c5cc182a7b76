//! Inline-aware line lookup over one debug file's DWARF, with `addr2line`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use gimli::{EndianReader, Reader as _, RunTimeEndian};
use memmap2::Mmap;
use object::{Object, ObjectSection};

use crate::elf::map_file;
use crate::{demangle, Reason, Svma};

type Reader = EndianReader<RunTimeEndian, SectionData>;

/// Where a DWARF section's bytes live: in the debug file's mapping when the
/// section is stored as it is (the common case: a big binary's debug info is
/// read where it lies, not copied, and only the pages lookups touch are
/// read in), or inflated into memory of its own when it is compressed.
#[derive(Debug)]
enum Backing {
    Map(Mmap),
    Owned(Box<[u8]>),
}

impl std::ops::Deref for Backing {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Backing::Map(m) => m,
            Backing::Owned(b) => b,
        }
    }
}

/// One section's bytes: a range of a shared [`Backing`].
#[derive(Debug, Clone)]
pub struct SectionData {
    backing: Arc<Backing>,
    start: usize,
    len: usize,
}

impl SectionData {
    fn empty() -> Self {
        SectionData {
            backing: Arc::new(Backing::Owned(Box::default())),
            start: 0,
            len: 0,
        }
    }
}

impl std::ops::Deref for SectionData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // The range was checked against the backing when it was made.
        &self.backing[self.start..self.start + self.len]
    }
}

// SAFETY: the bytes are owned by the `Arc`'d backing, which is never changed
// or moved while shared: a mapping's address and a boxed slice's heap
// allocation stay where they are, so every clone derefs to the same address
// for as long as any clone lives (what gimli's reader needs).
unsafe impl stable_deref_trait::StableDeref for SectionData {}
unsafe impl stable_deref_trait::CloneStableDeref for SectionData {}

/// One frame at an address: a function and the source position within it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Demangled function name, as `addr2line -C` prints it.
    pub function: Option<String>,
    /// The name as DWARF gives it (the linkage name, mangled, where there is one).
    pub raw_function: Option<String>,
    /// Source file, with the compilation directory prefixed where DWARF gives one.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// True for every frame but the outermost: the code was inlined into the next one.
    pub inlined: bool,
}

impl Frame {
    /// The function name, or `??` like addr2line.
    pub fn function_or_unknown(&self) -> &str {
        self.function.as_deref().unwrap_or("??")
    }

    /// The file name, or `??` like addr2line.
    pub fn file_or_unknown(&self) -> &str {
        self.file.as_deref().unwrap_or("??")
    }
}

/// One frame's DWARF entry, as binutils' BFD sees it when objdump -l names the function at
/// an address (see [`DwarfInfo::frame_origins`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameOrigin {
    /// The entry's offset in its unit (one per function or inlined copy).
    pub die: Option<u64>,
    /// BFD takes the entry's name as the function's linkage name: DWARF gives a mangled
    /// one, or the unit's language mangles nothing (C). Otherwise BFD names the function
    /// from the symbol table the first time it meets the entry.
    pub linkage: bool,
    /// The start of the entry's first address range (BFD's `arange.low`).
    pub low: Option<u64>,
}

/// Languages whose names binutils does not demangle (`mangle_style` 0 in BFD's dwarf2.c):
/// there a plain `DW_AT_name` is the linkage name.
fn unmangled_language(lang: gimli::DwLang) -> bool {
    use gimli::constants::*;
    // (UPC's vendor code and HP's Basic91, IMacro and Assembler, which gimli does not
    // name, are on BFD's list too.)
    [
        DW_LANG_C89,
        DW_LANG_C,
        DW_LANG_Cobol74,
        DW_LANG_Cobol85,
        DW_LANG_Fortran77,
        DW_LANG_Pascal83,
        DW_LANG_PLI,
        DW_LANG_C99,
        DW_LANG_UPC,
        DW_LANG_C11,
        DW_LANG_Mips_Assembler,
        DwLang(0x8765),
        DwLang(0x8004),
        DwLang(0x8006),
        DwLang(0x8007),
    ]
    .contains(&lang)
}

/// Whether the entry at `offset`, or one it refers to for its name (`DW_AT_abstract_origin`,
/// `DW_AT_specification`, in this unit), has a `DW_AT_linkage_name`: even an unmangled one
/// (glibc's `strchr`) is a linkage name to BFD.
fn has_linkage_name(unit: &gimli::UnitRef<'_, Reader>, offset: gimli::UnitOffset) -> bool {
    let mut at = offset;
    // (Compilers chain two or three entries; a cycle in hostile DWARF ends here.)
    for _ in 0..16 {
        let Ok(entry) = unit.entry(at) else {
            return false;
        };
        let mut next = None;
        let mut attrs = entry.attrs();
        while let Ok(Some(a)) = attrs.next() {
            match a.name() {
                gimli::DW_AT_linkage_name | gimli::DW_AT_MIPS_linkage_name => return true,
                gimli::DW_AT_abstract_origin | gimli::DW_AT_specification => {
                    next = match a.value() {
                        gimli::AttributeValue::UnitRef(o) => Some(o),
                        gimli::AttributeValue::DebugInfoRef(o) => o.to_unit_offset(&unit.header),
                        _ => None,
                    };
                }
                _ => {}
            }
        }
        match next {
            Some(n) => at = n,
            None => return false,
        }
    }
    false
}

/// Where BFD's first address range of the entry at `offset` starts: the first range as
/// listed, grown downwards by a later range that ends where it starts (BFD joins such).
fn first_range_start(unit: &gimli::UnitRef<'_, Reader>, offset: gimli::UnitOffset) -> Option<u64> {
    let entry = unit.entry(offset).ok()?;
    let mut ranges = unit.die_ranges(&entry).ok()?;
    let mut first = None;
    // (A hostile list is cut short: BFD reads it all, compilers write a few.)
    for _ in 0..4096 {
        let Ok(Some(r)) = ranges.next() else { break };
        if r.begin == r.end {
            continue;
        }
        let Some((low, high)) = &mut first else {
            first = Some((r.begin, r.end));
            continue;
        };
        if r.begin == *high {
            *high = r.end;
        } else if r.end == *low {
            *low = r.begin;
        }
    }
    first.map(|(low, _)| low)
}

/// What a frame lookup fills in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FrameDetail {
    /// Everything addr2line prints: demangled names, files as binutils names them,
    /// lines.
    #[default]
    Full,
    /// The functions' raw (linkage) names and the lines only: no file names, and
    /// `function` left empty where a raw name is known (the caller demangles the names
    /// it keeps). A report that shows no source positions needs no more, and skips
    /// reading each unit's file table a second time.
    Names,
}

/// The DWARF of one debug file, parsed lazily unit by unit as addresses ask for it.
pub struct DwarfInfo {
    ctx: addr2line::Context<Reader>,
    /// The debug file, named in warnings.
    path: std::path::PathBuf,
    /// Shared with every context on the same sections ([`DwarfSections`]).
    warned: Arc<Warned>,
    /// Per unit (by offset): where binutils names files otherwise than the line table.
    file_names: std::cell::RefCell<HashMap<usize, BinutilsFiles>>,
}

/// The warnings a debug file has had, each given once.
#[derive(Debug, Default)]
struct Warned {
    too_deep: std::sync::atomic::AtomicBool,
    unreadable: std::sync::atomic::AtomicBool,
}

/// How binutils (2.40, perf's addr2line) names a unit's files where it differs from
/// addr2line's reading of the line table.
#[derive(Debug, Default)]
struct BinutilsFiles {
    /// addr2line's file path → the path binutils prints.
    paths: HashMap<String, String>,
    /// DWARF 5: rows a sequence gives before its first `DW_LNS_set_file` are in file 1
    /// (the file register's initial value), but binutils names file 0 (the primary source
    /// file) for them. Where the two differ: file 0's path as binutils prints it, and the
    /// sorted, disjoint address ranges of those rows.
    default_file: Option<(String, Vec<(u64, u64)>)>,
}

impl BinutilsFiles {
    fn new(unit: gimli::UnitRef<'_, Reader>) -> Self {
        let paths = file_name_map(unit);
        let default_file = default_file_rows(unit, &paths);
        BinutilsFiles {
            paths,
            default_file,
        }
    }
}

/// addr2line's rendering of a line-table file: the compilation directory, the file's
/// directory (unless entry 0, which is the compilation directory) and its name, a later
/// absolute part replacing what came before.
fn render_file(
    unit: gimli::UnitRef<'_, Reader>,
    header: &gimli::LineProgramHeader<Reader>,
    file: &gimli::FileEntry<Reader>,
) -> Option<String> {
    let string = |v: gimli::AttributeValue<Reader>| -> Option<String> {
        let r = unit.attr_string(v).ok()?;
        Some(r.to_string_lossy().ok()?.into_owned())
    };
    let push = |path: &mut String, p: &str| {
        if p.starts_with('/') {
            *path = p.to_owned();
        } else {
            if !path.is_empty() && !path.ends_with('/') {
                path.push('/');
            }
            path.push_str(p);
        }
    };
    let mut path = match &unit.comp_dir {
        Some(c) => c.to_string_lossy().ok()?.into_owned(),
        None => String::new(),
    };
    if file.directory_index() != 0 {
        if let Some(dir) = file.directory(header).and_then(string) {
            push(&mut path, &dir);
        }
    }
    push(&mut path, &string(file.path_name())?);
    Some(path)
}

/// [`BinutilsFiles::default_file`] of a unit: None before DWARF 5, where files 0 and 1
/// are the same, or where the line program cannot be read.
fn default_file_rows(
    unit: gimli::UnitRef<'_, Reader>,
    paths: &HashMap<String, String>,
) -> Option<(String, Vec<(u64, u64)>)> {
    let mut program = unit.line_program.clone()?;
    let (file0, file1) = {
        let header = program.header();
        if header.version() < 5 {
            return None;
        }
        let render = |i: u64| {
            let path = render_file(unit, header, header.file(i)?)?;
            Some(paths.get(&path).cloned().unwrap_or(path))
        };
        (render(0)?, render(1)?)
    };
    if file0 == file1 {
        return None;
    }
    // gimli's tombstone: -2 and above in the address size.
    let min_tombstone = match program.header().address_size() {
        4 => u64::from(u32::MAX - 1),
        _ => u64::MAX - 1,
    };
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    let mut instructions = program.header().instructions();
    let mut row = gimli::LineRow::new(program.header());
    // Per sequence: its rows' addresses and whether their file is the initial one.
    let mut rows: Vec<(u64, bool)> = Vec::new();
    let (mut set_file, mut tombstone) = (false, false);
    while let Ok(Some(ins)) = instructions.next_instruction(program.header()) {
        match ins {
            gimli::LineInstruction::SetFile(_) => set_file = true,
            // gimli skips the rows of an address below the previous one (a dead
            // function's, relocated to 0) until the next address.
            gimli::LineInstruction::SetAddress(a) => {
                tombstone = a < row.address() || a >= min_tombstone;
            }
            _ => {}
        }
        let Ok(new_row) = row.execute(ins, &mut program) else {
            break;
        };
        if !new_row {
            continue;
        }
        if !tombstone {
            rows.push((row.address(), !set_file && row.file_index() == 1));
        }
        if row.end_sequence() {
            for w in rows.windows(2) {
                let ((a, default), (b, _)) = (w[0], w[1]);
                if default && a < b {
                    match ranges.last_mut() {
                        Some(last) if last.1 == a => last.1 = b,
                        _ => ranges.push((a, b)),
                    }
                }
            }
            rows.clear();
            set_file = false;
            tombstone = false;
            row = gimli::LineRow::new(program.header());
        } else {
            row.reset(program.header());
        }
    }
    if ranges.is_empty() {
        return None;
    }
    ranges.sort_unstable();
    Some((file0, ranges))
}

impl std::fmt::Debug for DwarfInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DwarfInfo").finish_non_exhaustive()
    }
}

/// The DWARF sections of one object file as gimli asks for them.
fn read_sections(obj: &object::File<'_>, map: &Arc<Backing>, path: &Path) -> SectionSet {
    let endian = if obj.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    // A section stored as it is stays in the mapping (`map`, which `obj`
    // parses); a compressed one is inflated once. Either way the context
    // owns what it reads through and does not borrow `obj`.
    let mut sections = Vec::new();
    let load = |id: gimli::SectionId| -> Result<Reader, std::convert::Infallible> {
        let data = obj
            .section_by_name(id.name())
            .filter(|s| plausible_size(s, path))
            .and_then(|s| s.uncompressed_data().ok())
            .map(|data| match data {
                std::borrow::Cow::Borrowed(b) => {
                    // `b` lies within the mapping `obj` was parsed from.
                    let start = (b.as_ptr() as usize).wrapping_sub(map.as_ptr() as usize);
                    match map.get(start..start.wrapping_add(b.len())) {
                        Some(_) => SectionData {
                            backing: map.clone(),
                            start,
                            len: b.len(),
                        },
                        None => owned(b.to_vec()),
                    }
                }
                std::borrow::Cow::Owned(v) => owned(v),
            })
            .unwrap_or_else(SectionData::empty);
        let r = EndianReader::new(data, endian);
        sections.push((id, r.clone()));
        Ok(r)
    };
    // (Loading only records what gimli asks for: the reader itself never fails.)
    let _ = gimli::Dwarf::load(load);
    SectionSet { endian, sections }
}

/// One object file's DWARF sections, each held once.
#[derive(Clone)]
struct SectionSet {
    endian: RunTimeEndian,
    sections: Vec<(gimli::SectionId, Reader)>,
}

impl SectionSet {
    fn dwarf(&self) -> gimli::Dwarf<Reader> {
        let load = |id: gimli::SectionId| -> Result<Reader, std::convert::Infallible> {
            Ok(self
                .sections
                .iter()
                .find(|(s, _)| *s == id)
                .map(|(_, r)| r.clone())
                .unwrap_or_else(|| EndianReader::new(SectionData::empty(), self.endian)))
        };
        match gimli::Dwarf::load(load) {
            Ok(d) => d,
            Err(never) => match never {},
        }
    }
}

/// A debug file's DWARF sections (and its supplementary file's), read and decompressed
/// once. Cheap to clone and shareable between threads: each thread that looks up
/// addresses of the same binary builds its own [`DwarfInfo`] on the same bytes.
#[derive(Clone)]
pub struct DwarfSections {
    main: SectionSet,
    sup: Option<SectionSet>,
    /// What the contexts on these sections have warned about (shared: one warning a file).
    warned: Arc<Warned>,
}

impl std::fmt::Debug for DwarfSections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DwarfSections")
            .field("sections", &self.main.sections.len())
            .field("sup", &self.sup.is_some())
            .finish()
    }
}

impl DwarfSections {
    /// The DWARF sections of the ELF file `bytes`, held in memory (`path` names it in
    /// warnings; no supplementary file is looked for): for tests and the fuzz targets.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<DwarfSections, Reason> {
        let map = Arc::new(Backing::Owned(bytes.into_boxed_slice()));
        let obj = object::File::parse(&**map).map_err(|_| Reason::NotElf)?;
        let main = read_sections(&obj, &map, path);
        Ok(DwarfSections {
            main,
            sup: None,
            warned: Default::default(),
        })
    }

    /// Reads the DWARF sections of the debug file at `path` (and of the supplementary
    /// file its `.gnu_debugaltlink` names, where that can be read).
    pub fn read(path: &Path) -> Result<DwarfSections, Reason> {
        let map = Arc::new(Backing::Map(map_file(path).map_err(|e| e.reason())?));
        let obj = object::File::parse(&**map).map_err(|_| Reason::NotElf)?;
        let main = read_sections(&obj, &map, path);
        let mut sup = None;
        if let Ok(Some((sup_name, _))) = obj.gnu_debugaltlink() {
            let sup_name = String::from_utf8_lossy(sup_name);
            let dir = path.parent().unwrap_or(Path::new("/"));
            let sup_path = dir.join(&*sup_name);
            match map_file(&sup_path) {
                Ok(sup_map) => {
                    let sup_map = Arc::new(Backing::Map(sup_map));
                    match object::File::parse(&**sup_map) {
                        Ok(sup_obj) => sup = Some(read_sections(&sup_obj, &sup_map, &sup_path)),
                        Err(e) => log::warn!("{}: {e}", sup_path.display()),
                    }
                }
                Err(e) => log::warn!("{e}"),
            }
        }
        Ok(DwarfSections {
            main,
            sup,
            warned: Default::default(),
        })
    }
}

/// Section bytes in memory of their own.
fn owned(v: Vec<u8>) -> SectionData {
    let len = v.len();
    SectionData {
        backing: Arc::new(Backing::Owned(v.into_boxed_slice())),
        start: 0,
        len,
    }
}

/// The most a compressed debug section may inflate to, per compressed byte. zlib and zstd
/// reach about 1000:1 on zeros, but DWARF compresses 3 to 10 times (20 at the most in the
/// binaries measured): a section claiming more is corrupt or a bomb (4 MB inflating to
/// 4 GiB of zeros) and is not given the memory it asks for.
const MAX_INFLATION: u64 = 64;

fn plausible_size(section: &object::Section<'_, '_>, path: &Path) -> bool {
    match section.compressed_data() {
        Ok(c) if c.format != object::CompressionFormat::None => {
            let limit = (c.data.len() as u64)
                .saturating_mul(MAX_INFLATION)
                .saturating_add(1 << 20);
            let ok = c.uncompressed_size <= limit;
            if !ok {
                log::warn!(
                    "{}: {} claims {} bytes from {} compressed (more than {MAX_INFLATION}:1: \
                     corrupt, or a decompression bomb); ignored",
                    path.display(),
                    section.name().unwrap_or("?"),
                    c.uncompressed_size,
                    c.data.len()
                );
            }
            ok
        }
        Ok(_) => true,
        Err(_) => false,
    }
}

/// For the files named through directory entry 0 of a unit's line table, addr2line's
/// rendering (comp_dir/file) and binutils' (comp_dir/dir0/file, when dir0 is relative).
fn file_name_map(unit: gimli::UnitRef<'_, Reader>) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let (Some(program), Some(comp_dir)) = (unit.line_program.as_ref(), unit.comp_dir.as_ref())
    else {
        return map;
    };
    let header = program.header();
    let string = |v: gimli::AttributeValue<Reader>| -> Option<String> {
        let r = unit.attr_string(v).ok()?;
        Some(r.to_string_lossy().ok()?.into_owned())
    };
    let Some(comp_dir) = comp_dir.to_string_lossy().ok().map(|c| c.into_owned()) else {
        return map;
    };
    let Some(dir0) = header.directory(0).and_then(string) else {
        return map;
    };
    if header.version() < 5 || dir0.starts_with('/') || dir0.is_empty() {
        return map;
    }
    for file in header.file_names() {
        if file.directory_index() != 0 {
            continue;
        }
        let Some(name) = string(file.path_name()) else {
            continue;
        };
        if name.starts_with('/') {
            continue;
        }
        map.insert(
            format!("{comp_dir}/{name}"),
            format!("{comp_dir}/{dir0}/{name}"),
        );
    }
    map
}

impl DwarfInfo {
    /// Parses the DWARF of the file at `path` (and its dwz supplementary file, if any).
    pub fn load(path: &Path) -> Result<DwarfInfo, Reason> {
        DwarfInfo::from_sections(&DwarfSections::read(path)?, path)
    }

    /// A context on sections already read (`path` names them in warnings).
    pub fn from_sections(sections: &DwarfSections, path: &Path) -> Result<DwarfInfo, Reason> {
        let mut dwarf = sections.main.dwarf();
        if let Some(sup) = &sections.sup {
            dwarf.set_sup(sup.dwarf());
        }
        let ctx = addr2line::Context::from_dwarf(dwarf).map_err(|e| {
            log::warn!("{}: {e}", path.display());
            Reason::BadDebugInfo
        })?;
        Ok(DwarfInfo {
            ctx,
            path: path.to_path_buf(),
            warned: sections.warned.clone(),
            file_names: Default::default(),
        })
    }

    /// The line table's rows in `[start, end)` of the unit holding `start`, as
    /// (address, line, discriminator), in address order: objdump marks a new
    /// discriminator as it marks a new line (`file:7 (discriminator 3)`).
    pub fn line_rows(&self, start: u64, end: u64) -> Vec<(u64, u64, u64)> {
        let mut out = Vec::new();
        let Some(unit) = self.ctx.find_dwarf_and_unit(start).skip_all_loads() else {
            return out;
        };
        let Some(program) = unit.line_program.clone() else {
            return out;
        };
        let mut rows = program.rows();
        // (A hostile table ends the walk: a bounded number of rows.)
        let mut budget: u32 = 1 << 24;
        while let Ok(Some((_, row))) = rows.next_row() {
            budget = budget.saturating_sub(1);
            if budget == 0 {
                break;
            }
            let a = row.address();
            if !row.end_sequence() && a >= start && a < end {
                let line = row.line().map_or(0, |l| l.get());
                out.push((a, line, row.discriminator()));
            }
        }
        out.sort_by_key(|r| r.0);
        out
    }

    /// The frames at `addr`, innermost (most deeply inlined) first.
    pub fn frames(&self, addr: Svma) -> Result<Vec<Frame>, Reason> {
        self.frames_as(addr, FrameDetail::Full)
    }

    /// [`DwarfInfo::frames`] with the detail `detail` asks for.
    pub fn frames_as(&self, addr: Svma, detail: FrameDetail) -> Result<Vec<Frame>, Reason> {
        let full = detail == FrameDetail::Full;
        let mut iter = self
            .ctx
            .find_frames(addr.0)
            .skip_all_loads()
            .map_err(|e| self.unreadable(addr, e))?;
        let mut out = Vec::new();
        while let Some(f) = iter.next().map_err(|e| self.unreadable(addr, e))? {
            let raw_function = f
                .function
                .as_ref()
                .and_then(|n| n.raw_name().ok())
                .map(|n| n.into_owned());
            let function = match &raw_function {
                Some(raw) if full => Some(demangle(raw)),
                _ => None,
            };
            let (file, line, column) = match f.location {
                Some(l) if full => (l.file.map(str::to_owned), l.line, l.column),
                Some(l) => (None, l.line, l.column),
                None => (None, None, None),
            };
            out.push(Frame {
                function,
                raw_function,
                file,
                line,
                column,
                inlined: true,
            });
        }
        self.warn_if_too_deep();
        match out.last_mut() {
            Some(outer) => outer.inlined = false,
            None => return Err(Reason::NoLineInfo),
        }
        if full {
            self.binutils_file_names(addr, &mut out);
        }
        Ok(out)
    }

    /// Where each frame at `addr` comes from, innermost first (as [`DwarfInfo::frames`]
    /// lists them): what objdump's line lookup (binutils' BFD) keeps per function entry.
    pub fn frame_origins(&self, addr: Svma) -> Vec<FrameOrigin> {
        let mut out = Vec::new();
        let Ok(mut iter) = self.ctx.find_frames(addr.0).skip_all_loads() else {
            return out;
        };
        let unit = self.ctx.find_dwarf_and_unit(addr.0).skip_all_loads();
        while let Ok(Some(f)) = iter.next() {
            let (linkage_attr, low) = match (f.dw_die_offset, &unit) {
                (Some(o), Some(u)) => (has_linkage_name(u, o), first_range_start(u, o)),
                _ => (false, None),
            };
            let linkage = linkage_attr
                || f.function
                    .as_ref()
                    .is_some_and(|n| n.language.is_some_and(unmangled_language));
            out.push(FrameOrigin {
                die: f.dw_die_offset.map(|o| o.0 as u64),
                linkage,
                low,
            });
        }
        out
    }

    /// Crafted DWARF can nest inlined subroutines deeper than any compiler does (its parse
    /// recursed per level and overflowed the stack): sear's addr2line reads the first
    /// [`addr2line::MAX_INLINED_DEPTH`] levels of a function and flags the rest; say so
    /// once for the file.
    fn warn_if_too_deep(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        if self.ctx.inlined_too_deep() && !self.warned.too_deep.swap(true, Relaxed) {
            log::warn!(
                "{}: its DWARF nests inlined functions more than {} deep; the deeper \
                 inline frames are left out",
                self.path.display(),
                addr2line::MAX_INLINED_DEPTH
            );
        }
    }

    /// A unit whose functions or line table cannot be read where `addr` asks (an address
    /// that overflows, a reference out of its section): its addresses are named from the
    /// symbol table; say so once for the file.
    fn unreadable(&self, addr: Svma, e: gimli::Error) -> Reason {
        use std::sync::atomic::Ordering::Relaxed;
        if !self.warned.unreadable.swap(true, Relaxed) {
            log::warn!(
                "{}: DWARF unreadable for {:#x} ({e}); frames there are named from the symbol \
                 table, without inline frames or source lines",
                self.path.display(),
                addr.0
            );
        }
        Reason::BadDebugInfo
    }

    /// addr2line leaves out directory entry 0 (DWARF 5: the compilation directory), while
    /// binutils and LLVM join it to the compilation directory when it is relative, as in
    /// glibc's `./stdlib/./stdlib/strtod_l.c`; and binutils 2.40 names file 0 for the rows
    /// a DWARF 5 sequence gives before setting a file (glibc's `libc-start.c:58` for what
    /// the table places in `libc_start_call_main.h:58`). perf shows binutils' form, so we
    /// do too.
    fn binutils_file_names(&self, addr: Svma, frames: &mut [Frame]) {
        let Some(unit) = self.ctx.find_dwarf_and_unit(addr.0).skip_all_loads() else {
            return;
        };
        let key = unit
            .header
            .offset()
            .as_debug_info_offset()
            .map_or(0, |o| o.0);
        let mut cache = self.file_names.borrow_mut();
        let names = cache.entry(key).or_insert_with(|| BinutilsFiles::new(unit));
        for f in frames.iter_mut() {
            if let Some(fixed) = f.file.as_ref().and_then(|p| names.paths.get(p)) {
                f.file = Some(fixed.clone());
            }
        }
        // The innermost frame's position is the line table's.
        if let (Some((file0, ranges)), Some(inner)) = (&names.default_file, frames.first_mut()) {
            let i = ranges.partition_point(|&(start, _)| start <= addr.0);
            if i > 0 && addr.0 < ranges[i - 1].1 && inner.file.is_some() {
                inner.file = Some(file0.clone());
            }
        }
    }
}
