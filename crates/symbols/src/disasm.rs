//! x86-64 disassembly in objdump's text form, for annotating functions.
//!
//! [`disassemble`] decodes a function's bytes with iced-x86 and formats each instruction as
//! `objdump -d --no-show-raw-insn` prints it: the mnemonic padded to six columns, AT&T
//! operands (or Intel ones with [`Syntax::Intel`], as `objdump -M intel`), direct branch and
//! call targets as `1222 <hot+0x52>`, and RIP-relative operands followed by objdump's
//! `        # 4060 <table>` comment. [`AddressNames`] names those addresses from every symbol of
//! the binary (functions, data objects, synthesised `name@plt` entries).

use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Formatter, GasFormatter, Instruction, IntelFormatter,
};
use std::collections::HashMap;

use crate::{ElfFile, Reason, Svma};

/// The length of the x86 instruction `bytes` start with, decoded as `bitness`-bit code
/// (64 or 32); None where they hold no whole valid instruction.
pub fn instruction_length(bytes: &[u8], bitness: u32) -> Option<usize> {
    let mut d = Decoder::new(bitness, bytes, DecoderOptions::NONE);
    let insn = d.decode();
    (!insn.is_invalid() && insn.len() <= bytes.len()).then_some(insn.len())
}

/// The length of the instruction `bytes` start with (as
/// [`instruction_length`]) and whether it transfers control as perf's
/// Intel PT decoder counts a branch: jumps, calls, returns, interrupts
/// and system calls, conditional or not.
pub fn instruction_branch(bytes: &[u8], bitness: u32) -> Option<(usize, bool)> {
    use iced_x86::FlowControl as F;
    let mut d = Decoder::new(bitness, bytes, DecoderOptions::NONE);
    let insn = d.decode();
    if insn.is_invalid() || insn.len() > bytes.len() {
        return None;
    }
    let branch = matches!(
        insn.flow_control(),
        F::UnconditionalBranch
            | F::IndirectBranch
            | F::ConditionalBranch
            | F::Return
            | F::Call
            | F::IndirectCall
            | F::Interrupt
    );
    Some((insn.len(), branch))
}

/// Assembly syntax, as `perf annotate -M` / `objdump -M` name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Syntax {
    /// AT&T (GNU as), objdump's default.
    #[default]
    Att,
    /// Intel, as `objdump -M intel`.
    Intel,
}

impl Syntax {
    /// Parses perf's `-M` values (`att`, `intel`; objdump's `intel-mnemonic` and
    /// `att-mnemonic` too).
    pub fn parse(s: &str) -> Option<Syntax> {
        match s {
            "att" | "att-mnemonic" => Some(Syntax::Att),
            "intel" | "intel-mnemonic" => Some(Syntax::Intel),
            _ => None,
        }
    }
}

/// One decoded instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Insn {
    /// Its address (in the binary's own address space).
    pub addr: u64,
    pub len: u8,
    /// The mnemonic with its prefixes (`rep stos`, `lock cmpxchg`), as objdump prints it.
    pub mnemonic: String,
    /// The operands, with branch targets and RIP-relative comments in objdump's form; empty
    /// when there are none.
    pub operands: String,
    /// The target of a direct jump or call.
    pub target: Option<u64>,
    /// A no-op (`nop`, `nopw`, `nopl`): perf drops those that end a function.
    pub is_nop: bool,
    /// Bytes that do not decode: objdump prints `(bad)`.
    pub invalid: bool,
}

impl Insn {
    /// The instruction as objdump prints it after the address: `mov    %rdi,%r9`.
    pub fn text(&self) -> String {
        if self.operands.is_empty() {
            self.mnemonic.clone()
        } else {
            format!("{:<6} {}", self.mnemonic, self.operands)
        }
    }
}

/// Names for addresses: the nearest symbol at or below, as objdump picks them for branch
/// targets and RIP-relative comments.
#[derive(Debug, Default, Clone)]
pub struct AddressNames {
    /// (start, size, name), sorted by start.
    syms: Vec<(u64, u64, String)>,
    /// objdump's names from dynamic relocations (see [`dynamic_reloc_names`]).
    relocs: Vec<Reloc>,
    /// Per symbol, its section (an id of the section's name; `u32::MAX` for none).
    sym_sections: Vec<u32>,
    /// The binary's sections: (start, end, id of the name), by start.
    sections: Vec<(u64, u64, u32)>,
}

impl AddressNames {
    /// Every function and data symbol of `elf` (its symbol table, dynamic symbols and
    /// `@plt` entries), with names as stored (mangled), as objdump prints them without `-C`.
    pub fn from_elf(elf: &ElfFile) -> AddressNames {
        use object::{Object, ObjectSymbol};
        let mut syms: Vec<(u64, u64, String)> = elf
            .symbols()
            .iter()
            .map(|s| (s.start, s.size, s.name.clone()))
            .collect();
        if let Some(data) = elf.data() {
            if let Ok(obj) = object::File::parse(data) {
                let all = obj.symbols().chain(obj.dynamic_symbols());
                for s in all {
                    let keep = matches!(
                        s.kind(),
                        object::SymbolKind::Data
                            | object::SymbolKind::Text
                            | object::SymbolKind::Unknown
                    ) && s.is_definition()
                        && s.address() != 0;
                    if let (true, Ok(name)) = (keep, s.name()) {
                        if !name.is_empty() {
                            syms.push((s.address(), s.size(), name.to_owned()));
                        }
                    }
                }
            }
        }
        Self::new(syms)
    }

    /// The names objdump gives addresses when perf runs it on `elf` (`objdump -d`, with
    /// `-l` when `with_lines`): the symbol table of the file (binutils reads the symbols of
    /// the separate debug file `debug` for a stripped binary when it reads its lines, as `-l`
    /// makes it), else the dynamic symbols, and the `@plt` entries; where several share an
    /// address, the one binutils' `compare_symbols` sorts first (functions, then objects,
    /// globals before locals, the bigger, then by name). Names as stored (mangled).
    pub fn objdump(
        elf: &ElfFile,
        debug: Option<&std::path::Path>,
        with_lines: bool,
    ) -> AddressNames {
        use object::{Object, ObjectSymbol};
        // (start, size, name, rank): the rank orders symbols at one address as binutils'
        // `compare_symbols` does: file-name symbols last, functions first, then data
        // objects, locals after the others, globals before weak ones, the bigger first,
        // names starting with '.' last (then by name).
        // (And the name of the symbol's section.)
        type Rank = (bool, bool, bool, bool, bool, std::cmp::Reverse<u64>, bool);
        type Ranked = (u64, u64, String, Rank, String, usize);
        fn ranked<'a, S: ObjectSymbol<'a>>(
            obj: &object::File<'a>,
            list: impl Iterator<Item = S>,
        ) -> Vec<Ranked> {
            use object::ObjectSection;
            // An indirect function (STT_GNU_IFUNC: glibc's `memcpy`, `strlen`) is a function
            // to objdump.
            let ifunc = |s: &S| {
                matches!(s.flags(), object::SymbolFlags::Elf { st_info, .. }
                    if st_info & 0xf == object::elf::STT_GNU_IFUNC)
            };
            list.filter(|s| {
                // (A thread-local symbol's value is its offset in the TLS block, and
                // objdump takes it for an address like any other; absolute ones, such as
                // a library's version names at 0, too.)
                matches!(
                    s.kind(),
                    object::SymbolKind::Data
                        | object::SymbolKind::Text
                        | object::SymbolKind::Tls
                        | object::SymbolKind::Unknown
                ) && (s.is_definition()
                    || (matches!(s.kind(), object::SymbolKind::Tls)
                        || ifunc(s)
                        || s.section() == object::SymbolSection::Absolute)
                        && !s.is_undefined()
                        && !s.is_common())
            })
            .filter_map(|s| {
                let name = s.name().ok().filter(|n| !n.is_empty())?.to_owned();
                let rank = (
                    name.len() > 2 && (name.ends_with(".o") || name.ends_with(".a")),
                    s.kind() != object::SymbolKind::Text && !ifunc(&s),
                    s.kind() != object::SymbolKind::Data,
                    s.is_local(),
                    s.is_weak(),
                    std::cmp::Reverse(s.size()),
                    name.starts_with('.'),
                );
                let section = s
                    .section_index()
                    .and_then(|i| obj.section_by_index(i).ok())
                    .and_then(|sec| sec.name().ok().map(str::to_owned))
                    .unwrap_or_default();
                Some((s.address(), s.size(), name, rank, section, s.index().0))
            })
            .collect()
        }
        let mut syms: Vec<Ranked> = Vec::new();
        // Whether the names are the dynamic symbols', which objdump prints with versions.
        let mut dynamic = false;
        let main = elf.data().and_then(|d| object::File::parse(d).ok());
        if let Some(obj) = &main {
            syms = ranked(obj, obj.symbols());
        }
        let debug_map = if syms.is_empty() && with_lines {
            debug
                .and_then(|p| crate::open_regular(p).ok())
                .and_then(|f| {
                    // SAFETY: read-only map of a regular file, read only while it is held.
                    unsafe { memmap2::Mmap::map(&f) }.ok()
                })
        } else {
            None
        };
        if let Some(obj) = debug_map
            .as_deref()
            .and_then(|d| object::File::parse(d).ok())
        {
            syms = ranked(&obj, obj.symbols());
        }
        if syms.is_empty() {
            if let Some(obj) = &main {
                syms = ranked(obj, obj.dynamic_symbols());
                dynamic = true;
            }
        }
        // objdump's synthetic PLT symbols.
        let plt = main
            .as_ref()
            .map(crate::elf::objdump_plt_symbols)
            .unwrap_or_default();
        for s in &plt {
            let rank = (
                false,
                false,
                true,
                false,
                false,
                std::cmp::Reverse(s.size),
                false,
            );
            syms.push((s.start, s.size, s.name.clone(), rank, String::new(), 0));
        }
        syms.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| a.3.cmp(&b.3))
                .then_with(|| a.2.cmp(&b.2))
        });
        // (Sorted by their plain names, the version printed after: a name's versions at
        // one address stay in the table's order.)
        syms.dedup_by(|later, first| later.0 == first.0);
        if dynamic {
            let versions = elf.data().map(dynamic_versions).unwrap_or_default();
            for s in &mut syms {
                if let Some(v) = versions.get(&s.5) {
                    s.2.push_str(v);
                }
            }
        }
        // Sections by name: where the nearest symbol lies in the section of the
        // instruction that refers to an address, objdump names the address by it.
        let mut section_ids: HashMap<String, u32> = HashMap::new();
        let mut id_of = |name: String| -> u32 {
            if name.is_empty() {
                return u32::MAX;
            }
            let next = section_ids.len() as u32;
            *section_ids.entry(name).or_insert(next)
        };
        let mut sections: Vec<(u64, u64, u32)> = Vec::new();
        if let Some(obj) = &main {
            use object::ObjectSection;
            for sec in obj.sections() {
                if let (Ok(name), true) = (sec.name(), sec.size() > 0) {
                    let id = id_of(name.to_owned());
                    sections.push((sec.address(), sec.address().saturating_add(sec.size()), id));
                }
            }
        }
        sections.sort_by_key(|s| s.0);
        let sym_sections = syms.iter().map(|s| id_of(s.4.clone())).collect();
        AddressNames {
            syms: syms.into_iter().map(|(a, sz, n, ..)| (a, sz, n)).collect(),
            relocs: elf.data().map(dynamic_reloc_names).unwrap_or_default(),
            sym_sections,
            sections,
        }
    }

    /// The name objdump gives `addr` in an operand of the instruction at `from` (binutils'
    /// `find_symbol_for_address`): the nearest symbol at or below it where that symbol lies
    /// in the instruction's section; otherwise, unless the nearest is a PLT entry, a
    /// dynamic relocation at the address names it by its symbol (no offset from an
    /// undefined one). (objdump means the relocation for addresses no symbol starts at, but
    /// compares a symbol's offset in its section with the address, so one wins even there.)
    /// An address below every symbol is named from the first one, `name-0xOFF`.
    pub fn name_from(&self, addr: u64, from: u64) -> Option<String> {
        let first = self.syms.first()?;
        let i = self.syms.partition_point(|s| s.0 <= addr).checked_sub(1);
        let sym_section = self.sym_sections.get(i.unwrap_or(0)).copied();
        let same_section =
            sym_section.is_some_and(|s| s != u32::MAX && Some(s) == self.section_of(from));
        let plt = i.is_some_and(|i| self.syms[i].2.ends_with("@plt"));
        if !same_section && !plt {
            if let Some((name, value)) = self.reloc_at(addr) {
                return Some(match *value {
                    Some(v) if v > addr => format!("{name}-{:#x}", v - addr),
                    Some(v) if v < addr => format!("{name}+{:#x}", addr - v),
                    _ => name.clone(),
                });
            }
        }
        match i {
            Some(_) => self.name(addr),
            None => Some(format!("{}-{:#x}", first.2, first.0 - addr)),
        }
    }

    /// The id of the name of the section holding `addr`.
    fn section_of(&self, addr: u64) -> Option<u32> {
        let i = self
            .sections
            .partition_point(|s| s.0 <= addr)
            .checked_sub(1)?;
        let (_, end, id) = self.sections[i];
        (addr < end).then_some(id)
    }

    /// The label objdump puts before the code at `addr`: the symbol that starts there, or
    /// the nearest one below with the offset.
    pub fn label(&self, addr: u64) -> Option<String> {
        self.at(addr).map(str::to_owned).or_else(|| self.name(addr))
    }

    /// The name objdump labels `addr` with, if a symbol starts there.
    pub fn at(&self, addr: u64) -> Option<&str> {
        let i = self.syms.partition_point(|s| s.0 < addr);
        self.syms
            .get(i)
            .filter(|s| s.0 == addr)
            .map(|s| s.2.as_str())
    }

    /// The first symbol starting after `addr` and before `end`, as
    /// (start, name): objdump's label for a section's start that no
    /// symbol covers, `<name-0xN>`.
    pub fn next_after(&self, addr: u64, end: u64) -> Option<(u64, &str)> {
        let i = self.syms.partition_point(|s| s.0 <= addr);
        self.syms
            .get(i)
            .filter(|s| s.0 < end)
            .map(|s| (s.0, s.2.as_str()))
    }

    /// From (start, size, name) triples in any order.
    pub fn new(mut syms: Vec<(u64, u64, String)>) -> AddressNames {
        // Where several symbols share an address, objdump prefers a global function name;
        // the first one listed (the ELF file's function table) stands in for that.
        syms.sort_by_key(|s| s.0);
        syms.dedup_by(|later, first| later.0 == first.0);
        AddressNames {
            syms,
            ..Default::default()
        }
    }

    /// The same names demangled, as `objdump -C` (perf annotate runs it so) prints
    /// branch targets and RIP-relative comments.
    pub fn demangled(mut self) -> AddressNames {
        let names = self.syms.iter_mut().map(|s| &mut s.2).chain(
            self.relocs
                .iter_mut()
                .filter_map(|r| r.1.as_mut().map(|n| &mut n.0)),
        );
        for n in names {
            if let Some(d) = crate::demangle_objdump(n) {
                *n = d;
            }
        }
        self
    }

    /// `name` or `name+0xOFF` for `addr`, from the nearest symbol at or below it.
    pub fn name(&self, addr: u64) -> Option<String> {
        let i = self.syms.partition_point(|s| s.0 <= addr).checked_sub(1)?;
        let (start, _, name) = &self.syms[i];
        let off = addr - start;
        Some(if off == 0 {
            name.clone()
        } else {
            format!("{name}+{off:#x}")
        })
    }
}

/// A dynamic relocation: the address it patches and, where it names a symbol that is not
/// absolute, that symbol (with its version) and its value where the file defines it.
type Reloc = (u64, Option<(String, Option<u64>)>);

impl AddressNames {
    /// The symbol of a relocation at `addr`, found as objdump finds it: its own binary search
    /// over every dynamic relocation in address order (one that stops early where the
    /// address falls between two relocations), then the first one at that address that
    /// names a symbol.
    fn reloc_at(&self, addr: u64) -> Option<&(String, Option<u64>)> {
        let r = &self.relocs;
        if r.first()?.0 > addr || r.last()?.0 < addr {
            return None;
        }
        let (mut low, mut high) = (0usize, r.len() - 1);
        while low <= high {
            let mid = low + (high - low) / 2;
            if r[mid].0 == addr {
                let first = r[..mid]
                    .iter()
                    .rposition(|x| x.0 != addr)
                    .map_or(0, |i| i + 1);
                return r[first..]
                    .iter()
                    .take_while(|x| x.0 == addr)
                    .find_map(|x| x.1.as_ref());
            }
            if addr < r[mid].0 {
                if high == mid {
                    return None;
                }
                high = mid;
            } else if r.get(mid + 1).is_some_and(|n| addr >= n.0) {
                low = mid + 1;
            } else {
                return None;
            }
        }
        None
    }
}

/// The version suffixes objdump prints after a 64-bit ELF file's dynamic symbols, by symbol
/// index (binutils' `objdump_print_symname`): `@@V` for a version the file defines, `@V`
/// for a hidden one, one it needs from another file, or any undefined symbol's; `Base` for
/// the base version; nothing where the file has no version tables.
fn dynamic_versions(data: &[u8]) -> HashMap<usize, String> {
    use object::read::elf::{ElfFile64, Sym};
    let mut out = HashMap::new();
    let Ok(file) = ElfFile64::<object::Endianness>::parse(data) else {
        return out;
    };
    let endian = file.endian();
    let sections = file.elf_section_table();
    let (Ok(Some(versions)), Ok(table)) = (
        sections.versions(endian, data),
        sections.symbols(endian, data, object::elf::SHT_DYNSYM),
    ) else {
        return out;
    };
    let defined = version_definitions(&file);
    for (i, sym) in table.enumerate() {
        let vi = versions.version_index(endian, i);
        let name = match vi.index() {
            0 => continue,
            1 => "Base",
            _ => match versions.version(vi) {
                Ok(Some(v)) => match std::str::from_utf8(v.name()) {
                    Ok(n) => n,
                    Err(_) => continue,
                },
                _ => continue,
            },
        };
        let own = vi.index() == 1 || defined.contains(&vi.index());
        let hidden = vi.is_hidden() || !own || sym.st_shndx(endian) == object::elf::SHN_UNDEF;
        out.insert(i.0, format!("{}{name}", if hidden { "@" } else { "@@" }));
    }
    out
}

/// A 64-bit ELF file's dynamic relocations in address order (ties in the file's order), for
/// objdump's names of the addresses they patch (a GOT slot, a vtable pointer). Those
/// without a symbol (RELATIVE, IRELATIVE) or against an absolute one name nothing.
fn dynamic_reloc_names(data: &[u8]) -> Vec<Reloc> {
    use object::read::elf::{ElfFile64, Sym};
    use object::Object;
    let mut out = Vec::new();
    let Ok(file) = ElfFile64::<object::Endianness>::parse(data) else {
        return out;
    };
    let Some(relocs) = file.dynamic_relocations() else {
        return out;
    };
    let endian = file.endian();
    let sections = file.elf_section_table();
    let Ok(table) = sections.symbols(endian, data, object::elf::SHT_DYNSYM) else {
        return out;
    };
    let versions = dynamic_versions(data);
    let named = |i: usize| -> Option<(String, Option<u64>)> {
        let sym = table.symbol(object::SymbolIndex(i)).ok()?;
        if sym.st_shndx(endian) == object::elf::SHN_ABS {
            return None;
        }
        let name = std::str::from_utf8(sym.name(endian, table.strings()).ok()?).ok()?;
        if name.is_empty() {
            return None;
        }
        let undefined = sym.st_shndx(endian) == object::elf::SHN_UNDEF;
        let mut name = name.to_owned();
        if let Some(v) = versions.get(&i) {
            name.push_str(v);
        }
        Some((name, (!undefined).then(|| sym.st_value(endian))))
    };
    for (addr, r) in relocs {
        out.push((
            addr,
            match r.target() {
                object::RelocationTarget::Symbol(i) => named(i.0),
                _ => None,
            },
        ));
        // (A hostile file's relocations are many; a real one's fit easily.)
        if out.len() >= 1 << 22 {
            break;
        }
    }
    out.sort_by_key(|r| r.0);
    out
}

/// The version indices a file defines (`.gnu.version_d`); the others it needs from other
/// files.
fn version_definitions(
    file: &object::read::elf::ElfFile64<'_, object::Endianness>,
) -> std::collections::HashSet<u16> {
    let endian = file.endian();
    let mut out = std::collections::HashSet::new();
    let Ok(Some((mut defs, _))) = file.elf_section_table().gnu_verdef(endian, file.data()) else {
        return out;
    };
    // (A hostile chain is cut short.)
    while let Ok(Some((def, _))) = defs.next() {
        out.insert(def.vd_ndx.get(endian));
        if out.len() > 1 << 16 {
            break;
        }
    }
    out
}

/// Reads the bytes of `[start, end)` from `elf` and disassembles them (x86-64 only).
pub fn disassemble_range(
    elf: &ElfFile,
    start: Svma,
    end: Svma,
    syntax: Syntax,
    names: &AddressNames,
) -> Result<Vec<Insn>, DisasmError> {
    if !elf.is_x86_64() {
        return Err(DisasmError::Unsupported(elf.architecture().to_owned()));
    }
    let len = end.0.checked_sub(start.0).ok_or(DisasmError::NoCode)?;
    let bytes = elf.bytes_at(start, len).map_err(DisasmError::Unreadable)?;
    Ok(disassemble(bytes, start.0, syntax, names))
}

/// A range's code as objdump disassembles it with start and stop
/// addresses: section by section (each code section overlapping the
/// range, its part of the range), as (section name, start, instructions).
/// A range no section header covers is one piece, named by the section at
/// its start (or `.text`).
pub fn disassemble_sections(
    elf: &ElfFile,
    start: Svma,
    end: Svma,
    syntax: Syntax,
    names: &AddressNames,
) -> Result<Vec<(String, u64, Vec<Insn>)>, DisasmError> {
    let sections = elf.code_sections(start, end);
    // (One piece where a single section holds the whole range, or where
    // the headers say nothing of it.)
    let whole = match sections.as_slice() {
        [] => true,
        [(_, lo, hi)] => *lo == start.0 && *hi == end.0,
        _ => false,
    };
    if whole {
        let name = elf.section_name_at(start).unwrap_or_else(|| ".text".into());
        let insns = disassemble_range(elf, start, end, syntax, names)?;
        return Ok(vec![(name, start.0, insns)]);
    }
    sections
        .into_iter()
        .map(|(name, lo, hi)| {
            let insns = disassemble_range(elf, Svma(lo), Svma(hi), syntax, names)?;
            Ok((name, lo, insns))
        })
        .collect()
}

/// Why a function could not be disassembled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisasmError {
    /// Not x86-64: the architecture's name.
    Unsupported(String),
    /// The function's bytes are not in the file (e.g. in `.bss`, or outside every
    /// loadable segment).
    Unreadable(Reason),
    /// An empty or inverted range.
    NoCode,
}

impl std::fmt::Display for DisasmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DisasmError::Unsupported(a) => {
                write!(
                    f,
                    "disassembly of {a} code is not supported yet (x86-64 only)"
                )
            }
            DisasmError::Unreadable(r) => write!(f, "the function's bytes cannot be read: {r}"),
            DisasmError::NoCode => f.write_str("the function has no code"),
        }
    }
}

impl std::error::Error for DisasmError {}

enum Fmt {
    Gas(Box<GasFormatter>),
    Intel(Box<IntelFormatter>),
}

/// The options both syntaxes share to print numbers and operands as
/// objdump does.
fn objdump_like(o: &mut iced_x86::FormatterOptions) {
    o.set_always_show_scale(true);
    o.set_show_zero_displacements(true);
    o.set_rip_relative_addresses(true);
    o.set_space_after_operand_separator(false);
    o.set_branch_leading_zeros(false);
    o.set_hex_prefix("0x");
    o.set_uppercase_hex(false);
    o.set_small_hex_numbers_in_decimal(false);
    o.set_signed_immediate_operands(false);
    o.set_show_useless_prefixes(true);
}

impl Fmt {
    fn new(syntax: Syntax) -> Fmt {
        match syntax {
            Syntax::Att => {
                let mut f = GasFormatter::new();
                let o = f.options_mut();
                objdump_like(o);
                o.set_gas_show_mnemonic_size_suffix(false);
                Fmt::Gas(Box::new(f))
            }
            Syntax::Intel => {
                let mut f = IntelFormatter::new();
                let o = f.options_mut();
                objdump_like(o);
                o.set_hex_suffix("");
                o.set_uppercase_keywords(true);
                o.set_memory_size_options(iced_x86::MemorySizeOptions::Always);
                Fmt::Intel(Box::new(f))
            }
        }
    }

    fn f(&mut self) -> &mut dyn Formatter {
        match self {
            Fmt::Gas(f) => f.as_mut(),
            Fmt::Intel(f) => f.as_mut(),
        }
    }
}

/// Disassembles `bytes` loaded at `addr`. Bytes that do not decode become one `(bad)`
/// instruction each, as objdump shows them, so the following instructions keep their
/// boundaries.
pub fn disassemble(bytes: &[u8], addr: u64, syntax: Syntax, names: &AddressNames) -> Vec<Insn> {
    let mut decoder = Decoder::with_ip(64, bytes, addr, DecoderOptions::NONE);
    let mut fmt = Fmt::new(syntax);
    let mut out = Vec::new();
    let mut instr = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut instr);
        let mut insn = format_insn(&instr, fmt.f(), syntax, names);
        // A 16-bit nop after more operand-size prefixes than it uses (padding, `66 66 2e 0f
        // 1f 84 ...`): objdump writes the extra ones as `data16`.
        if insn.is_nop && insn.mnemonic.ends_with("nopw") {
            let at = (instr.ip() - addr) as usize;
            let own = bytes.get(at..at + usize::from(insn.len)).unwrap_or(&[]);
            let sizes = own
                .iter()
                .take_while(|b| matches!(b, 0x66 | 0x67 | 0x2e | 0x36 | 0x3e | 0x26 | 0x64 | 0x65))
                .filter(|&&b| b == 0x66)
                .count();
            if sizes > 1 {
                insn.mnemonic = format!("{}{}", "data16 ".repeat(sizes - 1), insn.mnemonic);
            }
        }
        // REX.W decides the operand size, so operand-size prefixes before it go unused (the
        // TLS general-dynamic sequence pads `66 48 8d 3d` lea and `66 66 48 e8` call so), and
        // a near call or jump has no use for REX.W: objdump names the unused prefixes.
        if !insn.is_nop && !insn.invalid {
            let at = (instr.ip() - addr) as usize;
            let own = bytes.get(at..at + usize::from(insn.len)).unwrap_or(&[]);
            let legacy = own
                .iter()
                .take_while(|b| {
                    matches!(
                        b,
                        0x66 | 0x67 | 0x2e | 0x36 | 0x3e | 0x26 | 0x64 | 0x65 | 0xf2 | 0xf3
                    )
                })
                .count();
            if own.get(legacy).is_some_and(|b| b & 0xf8 == 0x48) {
                // (An SSE instruction's 66 is part of its opcode.)
                let mandatory =
                    instr.op_code().mandatory_prefix() == iced_x86::MandatoryPrefix::P66;
                let sizes = own[..legacy]
                    .iter()
                    .filter(|&&b| b == 0x66)
                    .count()
                    .saturating_sub(usize::from(mandatory));
                let mut unused = "data16 ".repeat(sizes);
                if matches!(own.get(legacy + 1), Some(0xe8 | 0xe9)) {
                    unused.push_str("rex.W ");
                }
                insn.mnemonic.insert_str(0, &unused);
            }
        }
        if insn.invalid {
            // objdump steps over one byte and tries again.
            insn.len = 1;
            let next = (instr.ip() - addr + 1) as usize;
            if decoder.set_position(next).is_err() {
                break;
            }
            decoder.set_ip(addr + next as u64);
        }
        out.push(insn);
    }
    out
}

fn format_insn(
    instr: &Instruction,
    f: &mut dyn Formatter,
    syntax: Syntax,
    names: &AddressNames,
) -> Insn {
    let addr = instr.ip();
    let len = instr.len() as u8;
    if instr.is_invalid() {
        return Insn {
            addr,
            len,
            mnemonic: "(bad)".to_owned(),
            operands: String::new(),
            target: None,
            is_nop: false,
            invalid: true,
        };
    }
    let mut mnemonic = String::new();
    f.format_mnemonic(instr, &mut mnemonic);
    // objdump (binutils 2.40) writes indirect `call *%rax` and `jmp *0x8(%rip)` without
    // iced's `q` suffix.
    if syntax == Syntax::Att
        && matches!(
            instr.flow_control(),
            FlowControl::IndirectBranch | FlowControl::IndirectCall
        )
    {
        if let Some(m) = mnemonic.strip_suffix('q') {
            mnemonic = m.to_owned();
        }
    }
    let direct = matches!(
        instr.flow_control(),
        FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch | FlowControl::Call
    ) && matches!(
        instr.op0_kind(),
        iced_x86::OpKind::NearBranch16
            | iced_x86::OpKind::NearBranch32
            | iced_x86::OpKind::NearBranch64
    );
    let mut operands = String::new();
    let mut target = None;
    if direct {
        let t = instr.near_branch_target();
        target = Some(t);
        operands = match names.name_from(t, addr) {
            Some(n) => format!("{t:x} <{n}>"),
            None => format!("{t:x}"),
        };
        // `loop`/`jrcxz` and the like carry a register operand after the target.
        if instr.op_count() > 1 {
            let mut rest = String::new();
            for i in 1..f.operand_count(instr) {
                rest.push(',');
                let _ = f.format_operand(instr, &mut rest, i);
            }
            operands.push_str(&rest);
        }
    } else {
        f.format_all_operands(instr, &mut operands);
        // With every scale shown, iced writes a base without index as `(%rax,)`.
        if operands.contains(",)") {
            operands = operands.replace(",)", ")");
        }
        // The shift-by-one encodings (D0/D1/D2/D3 /r) have no immediate: objdump writes
        // `sar %rsi`, not `sar $0x1,%rsi`.
        if syntax == Syntax::Att
            && instr.op_count() == 2
            && instr.op1_kind() == iced_x86::OpKind::Immediate8
            && instr.immediate8() == 1
            && format!("{:?}", instr.code()).ends_with("_1")
        {
            if let Some(rest) = operands.strip_prefix("$0x1,") {
                operands = rest.to_owned();
            }
        }
        if syntax == Syntax::Intel
            && instr.op_count() == 2
            && instr.op1_kind() == iced_x86::OpKind::Immediate8
            && instr.immediate8() == 1
            && format!("{:?}", instr.code()).ends_with("_1")
        {
            if let Some(rest) = operands.strip_suffix(",0x1") {
                operands = format!("{rest},1");
            }
        }
        if instr.is_ip_rel_memory_operand() {
            let a = instr.ip_rel_memory_address();
            operands.push_str(&match names.name_from(a, addr) {
                Some(n) => format!("        # {a:x} <{n}>"),
                None => format!("        # {a:x}"),
            });
        }
    }
    let is_nop = matches!(instr.mnemonic(), iced_x86::Mnemonic::Nop);
    objdump_quirks(instr, syntax, is_nop, &mut mnemonic, &mut operands);
    Insn {
        addr,
        len,
        mnemonic,
        operands,
        target,
        is_nop,
        invalid: false,
    }
}

/// Where iced's text and objdump's differ in form only, objdump's form.
fn objdump_quirks(
    instr: &Instruction,
    syntax: Syntax,
    is_nop: bool,
    mnemonic: &mut String,
    operands: &mut String,
) {
    use iced_x86::{Mnemonic, OpKind, Register};
    // A segment override on a nop is a padding prefix: `cs nopw 0x0(%rax,%rax,1)`.
    if is_nop && instr.segment_prefix() == Register::CS {
        let (att, intel) = ("%cs:", "cs:");
        for p in [att, intel] {
            if let Some(i) = operands.find(p) {
                operands.replace_range(i..i + p.len(), "");
                *mnemonic = format!("cs {mnemonic}");
                break;
            }
        }
    }
    let kinds: Vec<OpKind> = (0..instr.op_count()).map(|i| instr.op_kind(i)).collect();
    if syntax == Syntax::Att {
        // objdump names the string instructions' implicit segments: `%es:(%rdi)`, `%ds:(%rsi)`.
        if kinds.iter().any(|k| {
            matches!(
                k,
                OpKind::MemoryESRDI | OpKind::MemoryESEDI | OpKind::MemoryESDI
            )
        }) && !operands.contains("%es:")
        {
            for r in ["(%rdi)", "(%edi)"] {
                if operands.contains(r) {
                    *operands = operands.replace(r, &format!("%es:{r}"));
                }
            }
        }
        if kinds.contains(&OpKind::MemorySegRSI) && instr.segment_prefix() == Register::None {
            for r in ["(%rsi)", "(%esi)"] {
                if operands.contains(r) && !operands.contains(&format!(":{r}")) {
                    *operands = operands.replace(r, &format!("%ds:{r}"));
                }
            }
        }
        // `push`/`pop` of memory or immediates: no `q` suffix in 64-bit code.
        if matches!(instr.mnemonic(), Mnemonic::Push | Mnemonic::Pop) {
            if let Some(m) = mnemonic.strip_suffix('q') {
                *mnemonic = m.to_owned();
            }
        }
    }
    if syntax == Syntax::Intel {
        // A displacement-only operand with a segment: objdump writes `fs:0x28`.
        for seg in ["fs:[", "gs:["] {
            while let Some(i) = operands.find(seg) {
                let inner = i + seg.len();
                let Some(close) = operands[inner..].find(']') else {
                    break;
                };
                let body = &operands[inner..inner + close];
                if !body.starts_with("0x") || body.contains(['+', '-', '*']) {
                    break;
                }
                let body = body.to_owned();
                operands.replace_range(i..inner + close + 1, &format!("{}{body}", &seg[..3]));
            }
        }
        if instr.mnemonic() == Mnemonic::Mov && kinds.contains(&OpKind::Immediate64) {
            *mnemonic = "movabs".to_owned();
        }
    }
    // Three-operand `imul` with the same destination and source: objdump keeps both.
    if instr.mnemonic() == Mnemonic::Imul
        && instr.op_count() == 3
        && kinds[0] == OpKind::Register
        && kinds[1] == OpKind::Register
        && instr.op0_register() == instr.op1_register()
    {
        let parts: Vec<&str> = operands.split(',').collect();
        if parts.len() == 2 {
            *operands = match syntax {
                Syntax::Att => format!("{},{},{}", parts[0], parts[1], parts[1]),
                Syntax::Intel => format!("{},{},{}", parts[0], parts[0], parts[1]),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(bytes: &[u8], addr: u64, syntax: Syntax) -> String {
        let names = AddressNames::new(vec![
            (0x11d0, 0x63, "hot".into()),
            (0x1030, 0x10, "malloc@plt".into()),
            (0x4060, 0x800, "table".into()),
        ]);
        let v = disassemble(bytes, addr, syntax, &names);
        assert_eq!(v.len(), 1, "{v:?}");
        v[0].text()
    }

    #[test]
    fn att_forms_as_objdump() {
        let att = Syntax::Att;
        assert_eq!(one(&[0x49, 0x89, 0xf9], 0x11d0, att), "mov    %rdi,%r9");
        assert_eq!(one(&[0x4c, 0x63, 0xc6], 0x11d3, att), "movslq %esi,%r8");
        assert_eq!(
            one(&[0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0], 0x11d8, att),
            "nopl   0x0(%rax,%rax,1)"
        );
        assert_eq!(
            one(&[0x66, 0x0f, 0x1f, 0x44, 0, 0], 0x11e7, att),
            "nopw   0x0(%rax,%rax,1)"
        );
        assert_eq!(
            one(&[0x48, 0x83, 0xc0, 0x01], 0x1200, att),
            "add    $0x1,%rax"
        );
        assert_eq!(one(&[0xc3], 0x1221, att), "ret");
        // jle rel8 from 0x11e3 to 0x1222
        assert_eq!(one(&[0x7e, 0x3d], 0x11e3, att), "jle    1222 <hot+0x52>");
        // call rel32 to 0x1030
        let rel = (0x1030i64 - (0x1100 + 5)) as i32;
        let mut call = vec![0xe8];
        call.extend_from_slice(&rel.to_le_bytes());
        assert_eq!(one(&call, 0x1100, att), "call   1030 <malloc@plt>");
        // lea 0x2d70(%rip),%r8 at 0x12e9 (7 bytes) → 0x4060
        assert_eq!(
            one(&[0x4c, 0x8d, 0x05, 0x70, 0x2d, 0, 0], 0x12e9, att),
            "lea    0x2d70(%rip),%r8        # 4060 <table>"
        );
        assert_eq!(
            one(&[0xc5, 0xfe, 0x7f, 0x44, 0x17, 0xe0], 0x1534a0, att),
            "vmovdqu %ymm0,-0x20(%rdi,%rdx,1)"
        );
    }

    #[test]
    fn intel_forms_as_objdump() {
        let intel = Syntax::Intel;
        assert_eq!(one(&[0x49, 0x89, 0xf9], 0x11d0, intel), "mov    r9,rdi");
        assert_eq!(one(&[0x4c, 0x63, 0xc6], 0x11d3, intel), "movsxd r8,esi");
        assert_eq!(
            one(&[0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0], 0x11d8, intel),
            "nop    DWORD PTR [rax+rax*1+0x0]"
        );
        assert_eq!(one(&[0x7e, 0x3d], 0x11e3, intel), "jle    1222 <hot+0x52>");
    }

    #[test]
    fn bad_bytes_keep_going() {
        let names = AddressNames::default();
        // 0x06 is invalid in 64-bit mode; then a ret.
        let v = disassemble(&[0x06, 0xc3], 0x10, Syntax::Att, &names);
        assert_eq!(v.len(), 2);
        assert!(v[0].invalid);
        assert_eq!(v[1].addr, 0x11);
        assert_eq!(v[1].text(), "ret");
    }

    #[test]
    fn nops_are_marked() {
        let names = AddressNames::default();
        let v = disassemble(&[0x90, 0x0f, 0x1f, 0x40, 0x00], 0, Syntax::Att, &names);
        assert!(v.iter().all(|i| i.is_nop), "{v:?}");
    }

    #[test]
    fn names_pick_the_nearest_symbol_below() {
        let n = AddressNames::new(vec![(0x100, 0x10, "a".into()), (0x200, 0, "b".into())]);
        assert_eq!(n.name(0x100).as_deref(), Some("a"));
        assert_eq!(n.name(0x10f).as_deref(), Some("a+0xf"));
        assert_eq!(n.name(0x250).as_deref(), Some("b+0x50"));
        assert_eq!(n.name(0x50), None);
    }

    #[test]
    fn syntax_names() {
        assert_eq!(Syntax::parse("intel"), Some(Syntax::Intel));
        assert_eq!(Syntax::parse("att"), Some(Syntax::Att));
        assert_eq!(Syntax::parse("arm"), None);
    }
}
