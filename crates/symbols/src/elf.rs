//! One ELF binary, memory-mapped: build id, function symbols, PT_LOAD segments.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use memmap2::Mmap;
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, ObjectSymbolTable};

use crate::{demangle, Error, FileOffset, Reason, Svma};

/// A function (or data object) symbol, with its raw (mangled) name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub start: u64,
    /// Size in bytes; zero-sized symbols are extended to the next symbol (not counting
    /// `@plt` entries), the last one to the end of its page, as perf does.
    pub size: u64,
    pub name: String,
    /// A data object (`STT_OBJECT`): perf names an address in it `name+0xOFFSET` where
    /// it shows data addresses.
    pub object: bool,
}

/// The source file binutils (`addr2line`, which perf 6.1 runs for source lines) names
/// from the symbol table alone, for code no DWARF line covers: that of the last
/// `STT_FILE` symbol before a local function, or before a global one as long as no file
/// symbol followed an earlier symbol; else none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SymtabFile {
    /// No file (`??`).
    Unnamed,
    /// The file symbol's name (may be empty).
    Named(Arc<str>),
}

/// A symbol binutils' `_bfd_elf_find_function` may take for a function, with the file it
/// names for it.
#[derive(Debug, Clone)]
struct BfdFunction {
    addr: u64,
    /// The name as stored.
    name: Arc<str>,
    /// The ELF size, 1 for none.
    size: u64,
    /// STT_FUNC or STT_GNU_IFUNC.
    func: bool,
    /// Not STT_NOTYPE.
    typed: bool,
    file: SymtabFile,
}

/// What binutils' addr2line reads of a file to answer from its symbol table.
#[derive(Debug, Clone, Default)]
struct BfdTable {
    /// The address ranges of the sections loaded into memory (SHF_ALLOC), sorted.
    sections: Vec<(u64, u64)>,
    /// The candidate functions of `.symtab` (`.dynsym` without one), by address (in
    /// table order within one).
    functions: Vec<BfdFunction>,
}

/// The symbol covering an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolHit<'a> {
    /// The name as stored in the file.
    pub raw_name: &'a str,
    /// Bytes from the symbol's start to the address.
    pub offset: u64,
    /// The symbol's size (zero-sized symbols extended as in [`Symbol::size`]).
    pub size: u64,
    /// See [`Symbol::object`].
    pub object: bool,
}

impl SymbolHit<'_> {
    /// The demangled name (computed on each call: callers that look up many
    /// addresses of one symbol should demangle `raw_name` once themselves).
    pub fn name(&self) -> String {
        demangle(self.raw_name)
    }
}

/// A PT_LOAD program header: which file bytes land at which Svma.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadSegment {
    pub file_offset: u64,
    pub file_size: u64,
    pub svma: u64,
    pub mem_size: u64,
}

/// A memory-mapped ELF binary with what symbolization needs from it already extracted.
pub struct ElfFile {
    path: PathBuf,
    // Held so the file stays mapped for as long as we describe it (`None` for an image
    // read into memory, such as a process's vdso).
    _map: Option<Mmap>,
    build_id: Option<Vec<u8>>,
    debuglink: Option<(String, u32)>,
    has_dwarf: bool,
    symbols: SymbolTable,
    /// The `@plt` entries, kept for a debug file's symbols to join.
    plt: Vec<Symbol>,
    loads: Vec<LoadSegment>,
    /// Read on first use: only source lines of code without DWARF need it.
    bfd: OnceLock<BfdTable>,
    architecture: object::Architecture,
}

impl std::fmt::Debug for ElfFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElfFile")
            .field("path", &self.path)
            .field("symbols", &self.symbols.symbols.len())
            .field("has_dwarf", &self.has_dwarf)
            .finish_non_exhaustive()
    }
}

pub(crate) fn map_file(path: &Path) -> Result<Mmap, Error> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let file = crate::open_regular(path).map_err(io)?;
    // SAFETY: the map is only read. Binaries and debug files are not expected to be
    // rewritten while we profile them; if one is truncated meanwhile, reads past the new
    // end fault, which is the documented limit of memory-mapping files.
    unsafe { Mmap::map(&file) }.map_err(io)
}

/// The build id of the ELF file at `path` (None: it has none), read from
/// its notes without indexing its symbols.
pub fn read_build_id(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    let map = map_file(path)?;
    let obj = object::File::parse(&map[..]).map_err(|e| Error::NotElf {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    Ok(obj.build_id().ok().flatten().map(<[u8]>::to_vec))
}

impl ElfFile {
    /// Maps and indexes the binary at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<ElfFile, Error> {
        let path = path.as_ref();
        let map = map_file(path)?;
        let mut elf = ElfFile::from_bytes(path, &map)?;
        elf._map = Some(map);
        Ok(elf)
    }

    /// Indexes an ELF image already in memory; `path` is only its name in messages and
    /// in [`ElfFile::path`] (e.g. `[vdso]`).
    pub fn from_bytes(path: impl AsRef<Path>, data: &[u8]) -> Result<ElfFile, Error> {
        let path = path.as_ref();
        let not_elf = |e: &dyn std::fmt::Display| Error::NotElf {
            path: path.to_owned(),
            message: e.to_string(),
        };
        let obj = object::File::parse(data).map_err(|e| not_elf(&e))?;
        if obj.format() != object::BinaryFormat::Elf {
            return Err(not_elf(&"not ELF"));
        }
        let build_id = obj.build_id().ok().flatten().map(<[u8]>::to_vec);
        let debuglink = obj
            .gnu_debuglink()
            .ok()
            .flatten()
            .map(|(name, crc)| (String::from_utf8_lossy(name).into_owned(), crc));
        let has_dwarf = obj
            .section_by_name(".debug_info")
            .is_some_and(|s| s.size() > 0 && s.kind() != object::SectionKind::UninitializedData);
        let loads = obj
            .segments()
            .map(|seg| {
                let (file_offset, file_size) = seg.file_range();
                LoadSegment {
                    file_offset,
                    file_size,
                    svma: seg.address(),
                    mem_size: seg.size(),
                }
            })
            .collect();
        let architecture = obj.architecture();
        let plt = plt_symbols(&obj);
        let mut table = own_table(&obj);
        if obj.section_by_name(".symtab").is_none() {
            if let Some(mini) = mini_debuginfo_symbols(&obj, path) {
                table.extend(mini);
            }
        }
        let symbols = perf_symbols(table, plt.clone());
        log::debug!(
            "{}: {} symbols, {} overlap cuts, dwarf: {has_dwarf}",
            path.display(),
            symbols.symbols.len(),
            symbols.overlaps.len()
        );
        Ok(ElfFile {
            path: path.to_owned(),
            _map: None,
            build_id,
            debuglink,
            has_dwarf,
            symbols,
            plt,
            loads,
            bfd: OnceLock::new(),
            architecture,
        })
    }

    /// The whole file's bytes (None for an image indexed from memory, such as the vdso).
    pub fn data(&self) -> Option<&[u8]> {
        self._map.as_deref()
    }

    /// Up to `len` bytes of the file from `offset`, fewer at its end (None past it, or
    /// for an image indexed from memory).
    pub fn file_bytes(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let data = self.data()?;
        let start = usize::try_from(offset).ok().filter(|&s| s < data.len())?;
        Some(&data[start..data.len().min(start.saturating_add(len))])
    }

    /// The name of the section holding `addr` (as objdump's `Disassembly of section`
    /// names it), where the file's section headers say.
    pub fn section_name_at(&self, addr: Svma) -> Option<String> {
        use object::{Object, ObjectSection};
        let obj = object::File::parse(self.data()?).ok()?;
        let sec = obj
            .sections()
            .find(|s| s.size() > 0 && addr.0 >= s.address() && addr.0 - s.address() < s.size())?;
        sec.name().ok().map(str::to_owned)
    }

    /// The code sections (executable, with bytes in the file) that overlap
    /// `[start, end)`, each as (name, start, end) clamped to the range, in
    /// address order: what `objdump -d --start-address --stop-address`
    /// disassembles, section by section. Empty where the section headers
    /// say nothing (a file without them).
    pub fn code_sections(&self, start: Svma, end: Svma) -> Vec<(String, u64, u64)> {
        use object::{Object, ObjectSection, SectionFlags, SectionKind};
        let Some(obj) = self.data().and_then(|d| object::File::parse(d).ok()) else {
            return Vec::new();
        };
        let mut out: Vec<(String, u64, u64)> = obj
            .sections()
            .filter(|s| {
                let exec = match s.flags() {
                    SectionFlags::Elf { sh_flags } => {
                        sh_flags & u64::from(object::elf::SHF_EXECINSTR) != 0
                    }
                    _ => false,
                };
                exec && s.kind() != SectionKind::UninitializedData && s.size() > 0
            })
            .filter_map(|s| {
                let (a, b) = (s.address(), s.address().checked_add(s.size())?);
                let (lo, hi) = (a.max(start.0), b.min(end.0));
                (lo < hi).then(|| (s.name().unwrap_or("").to_owned(), lo, hi))
            })
            .collect();
        out.sort_by_key(|s| s.1);
        out
    }

    /// Whether the file is 32-bit x86 code.
    pub fn is_x86_32(&self) -> bool {
        self.architecture == object::Architecture::I386
    }

    /// Whether the code is x86-64 (the only architecture [`crate::disasm`] decodes).
    pub fn is_x86_64(&self) -> bool {
        self.architecture == object::Architecture::X86_64
    }

    /// The architecture's name, for messages (`Aarch64`, `X86_64`, ...).
    pub fn architecture(&self) -> String {
        format!("{:?}", self.architecture)
    }

    /// The `len` bytes loaded at `addr`, read from the file: they must lie within the file
    /// part of one PT_LOAD segment.
    pub fn bytes_at(&self, addr: Svma, len: u64) -> Result<&[u8], Reason> {
        let data = self.data().ok_or(Reason::Unreadable)?;
        let seg = self
            .loads
            .iter()
            .find(|l| addr.0 >= l.svma && addr.0 - l.svma < l.file_size)
            .ok_or(Reason::NotMapped)?;
        let into = addr.0 - seg.svma;
        if len > seg.file_size - into {
            return Err(Reason::NotMapped);
        }
        let start = seg.file_offset.checked_add(into).ok_or(Reason::NotMapped)?;
        let end = start.checked_add(len).ok_or(Reason::NotMapped)?;
        usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(s, e)| data.get(s..e))
            .ok_or(Reason::NotMapped)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The NT_GNU_BUILD_ID note's bytes, if the binary has one.
    pub fn build_id(&self) -> Option<&[u8]> {
        self.build_id.as_deref()
    }

    /// The build id as lower-case hex, as in `.build-id/` paths.
    pub fn build_id_hex(&self) -> Option<String> {
        self.build_id.as_deref().map(hex)
    }

    /// `.gnu_debuglink`: the debug file's name and the CRC-32 of its contents.
    pub fn debuglink(&self) -> Option<(&str, u32)> {
        self.debuglink.as_ref().map(|(n, c)| (n.as_str(), *c))
    }

    /// Whether the file itself carries `.debug_info`.
    pub fn has_dwarf(&self) -> bool {
        self.has_dwarf
    }

    /// Whether the file has a symbol table of its own (`.symtab`, not only the dynamic
    /// symbols a stripped file keeps).
    pub fn has_symtab(&self) -> bool {
        use object::{Object, ObjectSection};
        self.data()
            .and_then(|d| object::File::parse(d).ok())
            .is_some_and(|o| o.section_by_name(".symtab").is_some_and(|s| s.size() > 0))
    }

    /// The function symbols, sorted by start address.
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols.symbols
    }

    pub fn load_segments(&self) -> &[LoadSegment] {
        &self.loads
    }

    /// Adds symbols from another file of the same link (a debug file's `.symtab`). Its
    /// names win where both name one address: perf reads a debug file's `.symtab` in
    /// place of the binary's `.dynsym`.
    pub(crate) fn merge_symbols(&mut self, other: &ElfFile) {
        // perf reads the symbols of the debug file's table and the PLT of the binary.
        if let Some(obj) = other.data().and_then(|d| object::File::parse(d).ok()) {
            let table = own_table(&obj);
            if !table.is_empty() {
                self.symbols = perf_symbols(table, self.plt.clone());
            }
        }
        // perf hands addr2line the debug file, whose table it then reads.
        let table = other.bfd_table();
        if !table.functions.is_empty() {
            let _ = self.bfd.set(table.clone());
        }
    }

    fn bfd_table(&self) -> &BfdTable {
        self.bfd.get_or_init(
            || match self.data().and_then(|d| object::File::parse(d).ok()) {
                Some(obj) => bfd_table(&obj),
                None => BfdTable::default(),
            },
        )
    }

    /// The symbol covering `addr`, with the offset into it.
    pub fn lookup(&self, addr: Svma) -> Result<SymbolHit<'_>, Reason> {
        let syms = &self.symbols.symbols;
        let sym = match self.symbols.overlap(addr.0) {
            Some(found) => found.map(|i| &syms[i]),
            None => syms
                .partition_point(|s| s.start <= addr.0)
                .checked_sub(1)
                .map(|i| &syms[i]),
        }
        .ok_or(Reason::NoSymbol)?;
        let offset = addr.0 - sym.start;
        if offset >= sym.size.max(1) {
            return Err(Reason::NoSymbol);
        }
        Ok(SymbolHit {
            raw_name: &sym.name,
            offset,
            size: sym.size,
            object: sym.object,
        })
    }

    /// What binutils' addr2line answers from the symbol table alone for an address: it
    /// takes the nearest function symbol of its table at or before the address in the
    /// same section, covering the address or not (of several there, by its
    /// `better_fit`), and names its [`SymtabFile`]. None: no section holds the address,
    /// or no such symbol precedes it there (a PLT entry): addr2line finds nothing.
    pub fn symtab_file(&self, addr: Svma) -> Option<&SymtabFile> {
        self.bfd_function(addr).map(|f| &f.file)
    }

    /// The function symbol binutils' `_bfd_elf_find_function` picks for `addr` (see
    /// [`ElfFile::symtab_file`]): its name as stored and its start. objdump -l names a
    /// function whose DWARF gives no linkage name by it.
    pub fn bfd_function_at(&self, addr: Svma) -> Option<(&str, u64)> {
        self.bfd_function(addr).map(|f| (&*f.name, f.addr))
    }

    fn bfd_function(&self, addr: Svma) -> Option<&BfdFunction> {
        let a = addr.0;
        let table = self.bfd_table();
        let i = table.sections.partition_point(|&(s, _)| s <= a);
        let &(start, end) = table.sections.get(i.checked_sub(1)?)?;
        if a >= end {
            return None;
        }
        let idx = table.functions.partition_point(|f| f.addr <= a);
        let nearest = table.functions[..idx].last()?.addr;
        if nearest < start {
            return None;
        }
        let group = &table.functions[..idx];
        let first = group.partition_point(|f| f.addr < nearest);
        let covers = |f: &BfdFunction| f.addr.saturating_add(f.size) > a;
        let mut best: Option<&BfdFunction> = None;
        for c in &group[first..] {
            let Some(b) = best else {
                best = Some(c);
                continue;
            };
            let better = if !covers(b) {
                c.size > b.size
            } else if !covers(c) {
                false
            } else if b.func != c.func {
                c.func
            } else if b.typed != c.typed {
                c.typed
            } else {
                c.size < b.size
            };
            if better {
                best = Some(c);
            }
        }
        best
    }

    /// The Svma at which the byte at `offset` in the file is loaded (via PT_LOAD).
    /// An offset past a segment's file bytes but within its memory (`.bss`, as a
    /// mapping's `start + pgoff` arithmetic reaches it) maps the same way when no
    /// segment holds it in the file.
    pub fn file_offset_to_svma(&self, offset: FileOffset) -> Result<Svma, Reason> {
        let within = |size: fn(&LoadSegment) -> u64| {
            move |l: &&LoadSegment| offset.0 >= l.file_offset && offset.0 - l.file_offset < size(l)
        };
        self.loads
            .iter()
            .find(within(|l| l.file_size))
            .or_else(|| self.loads.iter().find(within(|l| l.mem_size)))
            .ok_or(Reason::NotMapped)
            // (A crafted segment's address can make the sum overflow.)
            .and_then(|l| {
                (offset.0 - l.file_offset)
                    .checked_add(l.svma)
                    .map(Svma)
                    .ok_or(Reason::NotMapped)
            })
    }

    /// The Svma of a process address in a mapping of this file that starts at `map_start`
    /// with file offset `pgoff` (the fields of an MMAP record).
    pub fn avma_to_svma(&self, avma: u64, map_start: u64, pgoff: u64) -> Result<Svma, Reason> {
        let delta = avma.checked_sub(map_start).ok_or(Reason::NotMapped)?;
        let off = pgoff.checked_add(delta).ok_or(Reason::NotMapped)?;
        self.file_offset_to_svma(FileOffset(off))
    }
}

/// MiniDebugInfo is at most a symbol table; anything that inflates past this is refused.
const MINI_DEBUGINFO_LIMIT: usize = 256 << 20;

/// Refuses to grow past a limit, so a hostile xz stream cannot exhaust memory.
struct Bounded(Vec<u8>);

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MINI_DEBUGINFO_LIMIT {
            return Err(std::io::Error::other("MiniDebugInfo larger than the limit"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The function symbols of `.gnu_debugdata` (MiniDebugInfo: an xz-compressed ELF file
/// holding the `.symtab` a stripped binary lost, as Fedora ships them).
fn mini_debuginfo_symbols(obj: &object::File<'_>, path: &Path) -> Option<Vec<TableSym>> {
    let data = obj.section_by_name(".gnu_debugdata")?.data().ok()?;
    let mut out = Bounded(Vec::new());
    if let Err(e) = lzma_rs::xz_decompress(&mut std::io::Cursor::new(data), &mut out) {
        log::warn!("{}: .gnu_debugdata: {e}", path.display());
        return None;
    }
    match object::File::parse(&*out.0) {
        Ok(inner) => Some(own_table(&inner)),
        Err(e) => {
            log::warn!("{}: .gnu_debugdata is not ELF: {e}", path.display());
            None
        }
    }
}

/// A build id's directory under `root` in the layout perf's cache and
/// `/usr/lib/debug` share: `ROOT/.build-id/xx/rest`, for `id` in hex (more
/// than two digits; see [`id_hex`]).
pub(crate) fn build_id_dir(root: &Path, id: &str) -> PathBuf {
    let (head, rest) = id.split_at(2.min(id.len()));
    root.join(".build-id").join(head).join(rest)
}

/// A build id in hex when it can name a `.build-id` directory (more than
/// one byte).
pub(crate) fn id_hex(build_id: &[u8]) -> Option<String> {
    (build_id.len() > 1).then(|| hex(build_id))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A symbol of the table perf loads, with what its `choose_best_symbol` weighs.
struct TableSym {
    sym: Symbol,
    weak: bool,
    global: bool,
}

const STT_NOTYPE: u8 = 0;
const STT_OBJECT: u8 = 1;
const STT_FUNC: u8 = 2;
/// STT_GNU_IFUNC: an indirect function, a function for perf.
const STT_GNU_IFUNC: u8 = 10;
const SHF_ALLOC: u64 = 2;

/// The symbols perf 6.1 loads from one table, in the table's order (the order it inserts
/// them): named functions and data objects of a section that is loaded, and named labels
/// (`_start`, `_edata`) of a section whose name says text or data.
fn table_symbols<'d>(
    obj: &object::File<'d>,
    table: impl Iterator<Item = object::Symbol<'d, 'd>>,
) -> Vec<TableSym> {
    let mut out = Vec::new();
    for s in table {
        let (Some(index), object::SymbolFlags::Elf { st_info, .. }) =
            (s.section_index(), s.flags())
        else {
            continue;
        };
        let kind = st_info & 0xf;
        if !matches!(kind, STT_NOTYPE | STT_OBJECT | STT_FUNC | STT_GNU_IFUNC) {
            continue;
        }
        let Ok(name) = s.name() else { continue };
        if name.is_empty() {
            continue;
        }
        let Ok(sec) = obj.section_by_index(index) else {
            continue;
        };
        let alloc = match sec.flags() {
            object::SectionFlags::Elf { sh_flags } => sh_flags & SHF_ALLOC != 0,
            _ => false,
        };
        if !alloc {
            continue;
        }
        if kind == STT_NOTYPE
            && !sec
                .name()
                .is_ok_and(|n| n.contains("text") || n.contains("data"))
        {
            continue;
        }
        out.push(TableSym {
            sym: Symbol {
                start: s.address(),
                size: s.size(),
                name: name.to_owned(),
                object: kind == STT_OBJECT,
            },
            weak: s.is_weak(),
            global: s.is_global(),
        });
    }
    out
}

/// The table perf reads from a file: `.symtab`, or `.dynsym` where there is none.
fn own_table(obj: &object::File<'_>) -> Vec<TableSym> {
    let symtab = table_symbols(obj, obj.symbols());
    if symtab.is_empty() {
        table_symbols(obj, obj.dynamic_symbols())
    } else {
        symtab
    }
}

/// perf's `choose_best_symbol` between two symbols of one address: true for `a`
/// (sized, non-weak, global, fewer leading underscores, longer name; else the first).
fn first_is_best(a: &TableSym, b: &TableSym) -> bool {
    let underscores = |s: &TableSym| s.sym.name.bytes().take_while(|&b| b == b'_').count();
    let key = |s: &TableSym| (s.sym.size > 0, !s.weak, s.global);
    match key(a).cmp(&key(b)) {
        std::cmp::Ordering::Equal => {}
        o => return o.is_gt(),
    }
    match underscores(b).cmp(&underscores(a)) {
        std::cmp::Ordering::Equal => a.sym.name.len() >= b.sym.name.len(),
        o => o.is_gt(),
    }
}

/// A binary's symbols as perf 6.1 holds them: `table` (in its file order) with each
/// zero-sized symbol stretched to the next one (the last to the page after its own),
/// one symbol kept per address, then the `@plt` entries added. Where ranges overlap,
/// the answers of perf's tree are worked out here, once.
fn perf_symbols(mut table: Vec<TableSym>, plt: Vec<Symbol>) -> SymbolTable {
    // perf's tree in order: by start, equal starts in insertion order.
    let mut order: Vec<u32> = (0..table.len() as u32).collect();
    order.sort_by_key(|&i| table[i as usize].sym.start);
    for k in 0..order.len() {
        let i = order[k] as usize;
        if table[i].sym.size == 0 {
            let start = table[i].sym.start;
            let end = match order.get(k + 1) {
                Some(&n) => table[n as usize].sym.start,
                None => start
                    .div_ceil(4096)
                    .saturating_mul(4096)
                    .saturating_add(4096),
            };
            table[i].sym.size = end - start;
        }
    }
    // symbols__fixup_duplicate, noting what it erases in its order.
    let mut erased: Vec<u32> = Vec::new();
    let mut kept = vec![true; table.len()];
    if let Some(&first) = order.first() {
        let mut curr = first as usize;
        for &next in &order[1..] {
            let next = next as usize;
            if table[curr].sym.start != table[next].sym.start {
                curr = next;
            } else if first_is_best(&table[curr], &table[next]) {
                erased.push(next as u32);
                kept[next] = false;
            } else {
                erased.push(curr as u32);
                kept[curr] = false;
                curr = next;
            }
        }
    }
    // Items: table symbols by index, then PLT entries.
    let n_table = table.len();
    let mut items: Vec<u32> = order
        .iter()
        .copied()
        .filter(|&i| kept[i as usize])
        .collect();
    let mut plt_order: Vec<u32> = (0..plt.len() as u32).map(|i| i + n_table as u32).collect();
    plt_order.sort_by_key(|&i| plt[i as usize - n_table].start);
    let sym_of = |i: u32| -> &Symbol {
        match (i as usize).checked_sub(n_table) {
            Some(p) => &plt[p],
            None => &table[i as usize].sym,
        }
    };
    // Merge, PLT entries after table symbols of their address (inserted later).
    let mut merged = Vec::with_capacity(items.len() + plt_order.len());
    {
        let (mut a, mut b) = (items.iter().peekable(), plt_order.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (Some(&&x), Some(&&y)) => {
                    if sym_of(y).start < sym_of(x).start {
                        merged.push(y);
                        b.next();
                    } else {
                        merged.push(x);
                        a.next();
                    }
                }
                (Some(&&x), None) => {
                    merged.push(x);
                    a.next();
                }
                (None, Some(&&y)) => {
                    merged.push(y);
                    b.next();
                }
                (None, None) => break,
            }
        }
    }
    items = merged;
    // Where a symbol reaches past the start of a later one, the sorted list alone does
    // not say which perf finds: those stretches are resolved by perf's own tree.
    let mut stretches: Vec<(u64, u64)> = Vec::new();
    let mut reach = 0u64;
    for w in items.windows(2) {
        let (a, b) = (sym_of(w[0]), sym_of(w[1]));
        reach = reach.max(a.start.saturating_add(a.size));
        if reach > b.start {
            match stretches.last_mut() {
                Some(last) if last.1 >= b.start => last.1 = last.1.max(reach),
                _ => stretches.push((b.start, reach)),
            }
        }
    }
    let mut overlaps = Vec::new();
    if !stretches.is_empty() {
        let mut tree = crate::symtree::RbTree::with_capacity(table.len() + plt.len());
        let mut node_of = Vec::with_capacity(table.len());
        for (i, t) in table.iter().enumerate() {
            let end = t.sym.start.saturating_add(t.sym.size);
            node_of.push(tree.insert(t.sym.start, end, i as u32));
        }
        for &i in &erased {
            tree.erase(node_of[i as usize]);
        }
        for (p, s) in plt.iter().enumerate() {
            tree.insert(s.start, s.start + s.size, (n_table + p) as u32);
        }
        // Index in the final list of each item.
        let mut pos = vec![u32::MAX; n_table + plt.len()];
        for (k, &i) in items.iter().enumerate() {
            pos[i as usize] = k as u32;
        }
        // The answer changes only where a symbol starts or ends: those points inside
        // a stretch, with the stretches' bounds, in one pass over the symbols.
        let inside = |a: u64| {
            let k = stretches.partition_point(|&(lo, _)| lo <= a);
            k > 0 && a < stretches[k - 1].1
        };
        let mut cuts: Vec<u64> = stretches.iter().map(|&(lo, _)| lo).collect();
        for &i in &items {
            let s = sym_of(i);
            for a in [s.start, s.start.saturating_add(s.size)] {
                if inside(a) {
                    cuts.push(a);
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let mut k = 0;
        for &(_, hi) in &stretches {
            while k < cuts.len() && cuts[k] < hi {
                let found = tree.find(cuts[k]).map_or(u32::MAX, |i| pos[i as usize]);
                overlaps.push((cuts[k], found));
                k += 1;
            }
            overlaps.push((hi, OUTSIDE));
        }
    }
    // The final list is made in the table's own memory: its symbols (then the PLT
    // entries) put in the items' order, the erased ones last and cut off. A symbol table
    // of millions of names is held once.
    let n_items = items.len();
    let mut symbols: Vec<Symbol> = table.into_iter().map(|t| t.sym).collect();
    symbols.extend(plt);
    let mut order = items;
    let mut listed = vec![false; symbols.len()];
    for &i in &order {
        listed[i as usize] = true;
    }
    order.extend((0..symbols.len() as u32).filter(|&i| !listed[i as usize]));
    drop(listed);
    gather_in_place(&mut symbols, &order);
    symbols.truncate(n_items);
    SymbolTable { symbols, overlaps }
}

/// Reorders `v` so that its element `k` is the one that was at `order[k]` (`order` a
/// permutation of its indices), by following the permutation's cycles: no second copy.
fn gather_in_place<T>(v: &mut [T], order: &[u32]) {
    let mut done = vec![false; v.len()];
    for start in 0..v.len() {
        let mut k = start;
        while !done[k] {
            done[k] = true;
            let from = order[k] as usize;
            if from == start {
                break;
            }
            v.swap(k, from);
            k = from;
        }
    }
}

/// Marks the end of a resolved stretch in [`SymbolTable::overlaps`].
const OUTSIDE: u32 = u32::MAX - 1;

/// Symbols sorted by start, and perf's answers where their ranges overlap.
#[derive(Debug, Default)]
struct SymbolTable {
    symbols: Vec<Symbol>,
    /// Sorted cut points: from each, up to the next, addresses resolve to that symbol
    /// (u32::MAX: none); an [`OUTSIDE`] cut ends a stretch.
    overlaps: Vec<(u64, u32)>,
}

impl SymbolTable {
    /// perf's answer where ranges overlap: Some(index or None), or None outside them.
    fn overlap(&self, addr: u64) -> Option<Option<usize>> {
        let k = self.overlaps.partition_point(|&(c, _)| c <= addr);
        let (_, found) = *self.overlaps.get(k.checked_sub(1)?)?;
        match found {
            OUTSIDE => None,
            u32::MAX => Some(None),
            i => Some(Some(i as usize)),
        }
    }
}

/// The allocated sections, and the symbols binutils' `_bfd_elf_find_function` considers,
/// from the table addr2line reads (`.symtab`, or `.dynsym` where there is none), sorted
/// by address: those of an allocated section but sections, files, objects, TLS and
/// annobin's zero-sized hidden local labels; each with the file binutils names for it.
fn bfd_table(obj: &object::File<'_>) -> BfdTable {
    let mut sections: Vec<(u64, u64)> = obj
        .sections()
        .filter(|sec| is_alloc(sec) && sec.size() > 0)
        .map(|sec| (sec.address(), sec.address().saturating_add(sec.size())))
        .collect();
    sections.sort_unstable();
    let use_dynsym = obj.symbols().next().is_none();
    let table: Box<dyn Iterator<Item = object::Symbol<'_, '_>>> = if use_dynsym {
        Box::new(obj.dynamic_symbols())
    } else {
        Box::new(obj.symbols())
    };
    let mut out = Vec::new();
    // Once a file symbol follows another symbol, global functions have no file.
    let (mut symbol_seen, mut file_after_symbol) = (false, false);
    let mut file: Option<Arc<str>> = None;
    for s in table {
        let object::SymbolFlags::Elf { st_info, st_other } = s.flags() else {
            continue;
        };
        let st_type = st_info & 0xf;
        if st_type == object::elf::STT_FILE {
            file = s.name().ok().map(Arc::from);
            file_after_symbol |= symbol_seen;
            continue;
        }
        symbol_seen = true;
        let excluded = matches!(
            st_type,
            object::elf::STT_SECTION
                | object::elf::STT_OBJECT
                | object::elf::STT_COMMON
                | object::elf::STT_TLS
        );
        let in_alloc_section = s
            .section_index()
            .is_some_and(|i| obj.section_by_index(i).is_ok_and(|sec| is_alloc(&sec)));
        let annobin = s.size() == 0
            && s.is_local()
            && st_type == object::elf::STT_NOTYPE
            && st_other & 3 == object::elf::STV_HIDDEN;
        if excluded || !in_alloc_section || annobin {
            continue;
        }
        let named = file.as_ref().filter(|_| s.is_local() || !file_after_symbol);
        out.push(BfdFunction {
            addr: s.address(),
            name: Arc::from(s.name().unwrap_or_default()),
            size: s.size().max(1),
            func: st_type == object::elf::STT_FUNC || st_type == STT_GNU_IFUNC,
            typed: st_type != object::elf::STT_NOTYPE,
            file: match named {
                Some(f) => SymtabFile::Named(f.clone()),
                None => SymtabFile::Unnamed,
            },
        });
    }
    // Stable: table order stays within one address.
    out.sort_by_key(|f| f.addr);
    BfdTable {
        sections,
        functions: out,
    }
}

fn is_alloc(sec: &object::Section<'_, '_>) -> bool {
    matches!(sec.flags(), object::SectionFlags::Elf { sh_flags }
        if sh_flags & u64::from(object::elf::SHF_ALLOC) != 0)
}

/// `name@plt` entries for the lazy-binding stubs, one per `.rela.plt` entry (x86-64 layout:
/// 16-byte entries, after the 16-byte PLT0 in `.plt`, or from the start of `.plt.sec`).
fn plt_symbols(obj: &object::File<'_>) -> Vec<Symbol> {
    plt_entries(obj, false)
}

/// The `@plt` entries as objdump names them (its synthetic symbols): an IRELATIVE slot is
/// `*ABS*+0xADDEND@plt`, where perf says `@plt`.
pub(crate) fn objdump_plt_symbols(obj: &object::File<'_>) -> Vec<Symbol> {
    let mut out = plt_entries(obj, true);
    out.extend(plt_got_entries(obj));
    out
}

/// objdump's `name@plt` for the entries of `.plt.got` (a function both called and whose
/// address is taken, or bound at load time): each jumps through a GOT slot that a
/// `.rela.dyn` relocation names.
fn plt_got_entries(obj: &object::File<'_>) -> Vec<Symbol> {
    let mut out = Vec::new();
    let (Some(sec), Some(rela), Some(dynsyms)) = (
        obj.section_by_name(".plt.got"),
        obj.section_by_name(".rela.dyn"),
        obj.dynamic_symbol_table(),
    ) else {
        return out;
    };
    if obj.architecture() != object::Architecture::X86_64 || !obj.is_little_endian() {
        return out;
    }
    let (Ok(code), Ok(relocs)) = (sec.data(), rela.data()) else {
        return out;
    };
    let mut by_slot: HashMap<u64, usize> = HashMap::new();
    for entry in relocs.chunks_exact(24) {
        let slot = u64::from_le_bytes(entry[0..8].try_into().unwrap_or_default());
        let info = u64::from_le_bytes(entry[8..16].try_into().unwrap_or_default());
        if info >> 32 != 0 {
            by_slot.insert(slot, (info >> 32) as usize);
        }
    }
    // 8-byte entries (`jmp *slot(%rip)`, a nop), or 16 with IBT's `endbr64` first.
    let size = if code.starts_with(&[0xf3, 0x0f, 0x1e, 0xfa]) {
        16
    } else {
        8
    };
    for (k, e) in code.chunks_exact(size).enumerate() {
        let Some(p) = e.windows(2).position(|w| w == [0xff, 0x25]) else {
            continue;
        };
        let Some(disp) = e.get(p + 2..p + 6) else {
            continue;
        };
        let disp = i32::from_le_bytes(disp.try_into().unwrap_or_default());
        let at = sec.address() + (size * k) as u64;
        let slot = at
            .wrapping_add(p as u64 + 6)
            .wrapping_add(disp as i64 as u64);
        let Some(&i) = by_slot.get(&slot) else {
            continue;
        };
        let Ok(sym) = dynsyms.symbol_by_index(object::SymbolIndex(i)) else {
            continue;
        };
        if let Ok(name) = sym.name() {
            out.push(Symbol {
                start: at,
                size: size as u64,
                name: format!("{name}@plt"),
                object: false,
            });
        }
    }
    out
}

fn plt_entries(obj: &object::File<'_>, objdump_names: bool) -> Vec<Symbol> {
    let mut out = Vec::new();
    if obj.architecture() != object::Architecture::X86_64 || !obj.is_little_endian() {
        return out;
    }
    let Some(rela) = obj.section_by_name(".rela.plt") else {
        return out;
    };
    let Ok(data) = rela.data() else { return out };
    let (base, first) = match obj.section_by_name(".plt.sec") {
        Some(sec) => (sec.address(), 0),
        None => match obj.section_by_name(".plt") {
            Some(plt) => (plt.address(), 1),
            None => return out,
        },
    };
    let Some(dynsyms) = obj.dynamic_symbol_table() else {
        return out;
    };
    // objdump pairs each PLT entry with the relocation of the GOT slot its `jmp *slot(%rip)`
    // reads (perf takes them in order; they differ where IRELATIVE slots were sorted apart).
    let slot_of_entry: Option<HashMap<u64, u64>> = objdump_names.then(|| {
        let sec = obj
            .section_by_name(".plt.sec")
            .or_else(|| obj.section_by_name(".plt"));
        let code = sec.as_ref().and_then(|s| s.data().ok()).unwrap_or(&[]);
        let mut slots = HashMap::new();
        for (k, e) in code.chunks_exact(16).enumerate().skip(first as usize) {
            let Some(p) = e.windows(2).position(|w| w == [0xff, 0x25]) else {
                continue;
            };
            let Some(disp) = e.get(p + 2..p + 6) else {
                continue;
            };
            let disp = i32::from_le_bytes(disp.try_into().unwrap_or_default());
            let at = base + 16 * k as u64;
            let slot = at
                .wrapping_add(p as u64 + 6)
                .wrapping_add(disp as i64 as u64);
            slots.insert(slot, at);
        }
        slots
    });
    for (i, entry) in data.chunks_exact(24).enumerate() {
        // Elf64_Rela: r_offset, r_info (symbol index in the high half), r_addend.
        let info = u64::from_le_bytes(entry[8..16].try_into().unwrap_or_default());
        let sym_index = (info >> 32) as usize;
        // IRELATIVE slots name no symbol: perf calls them `@plt`, objdump names the
        // absolute section and the resolver's address.
        let name = if sym_index == 0 {
            let addend = u64::from_le_bytes(entry[16..24].try_into().unwrap_or_default());
            match (objdump_names, addend) {
                (false, _) => String::new(),
                (true, 0) => "*ABS*".to_owned(),
                (true, a) => format!("*ABS*+{a:#x}"),
            }
        } else {
            let Ok(sym) = dynsyms.symbol_by_index(object::SymbolIndex(sym_index)) else {
                continue;
            };
            let Ok(name) = sym.name() else { continue };
            name.to_owned()
        };
        let start = match &slot_of_entry {
            Some(slots) => {
                let slot = u64::from_le_bytes(entry[0..8].try_into().unwrap_or_default());
                let Some(&at) = slots.get(&slot) else {
                    continue;
                };
                at
            }
            None => base + 16 * (i as u64 + first),
        };
        out.push(Symbol {
            start,
            size: 16,
            name: format!("{name}@plt"),
            object: false,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::gather_in_place;

    /// Reordering in place gives what a copy in that order gives, for
    /// permutations with long cycles, fixed points and the identity.
    #[test]
    fn gather_in_place_is_a_gather() {
        let n = 1000u32;
        let mut seed = 12345u64;
        let mut shuffled: Vec<u32> = (0..n).collect();
        for i in (1..n as usize).rev() {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            shuffled.swap(i, (seed >> 33) as usize % (i + 1));
        }
        let reversed: Vec<u32> = (0..n).rev().collect();
        let identity: Vec<u32> = (0..n).collect();
        let mut some_fixed = identity.clone();
        some_fixed.swap(3, 700);
        some_fixed.swap(10, 11);
        for order in [shuffled, reversed, identity, some_fixed] {
            let v: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
            let want: Vec<String> = order.iter().map(|&i| v[i as usize].clone()).collect();
            let mut got = v;
            gather_in_place(&mut got, &order);
            assert_eq!(got, want);
        }
    }
}
