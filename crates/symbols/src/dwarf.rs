//! Inline-aware line lookup over one debug file's DWARF, with `addr2line`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use gimli::EndianArcSlice;
use gimli::{Reader as _, RunTimeEndian};
use object::{Object, ObjectSection};

use crate::elf::map_file;
use crate::{demangle, Reason, Svma};

type Reader = EndianArcSlice<RunTimeEndian>;

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

/// The DWARF of one debug file, parsed lazily unit by unit as addresses ask for it.
pub struct DwarfInfo {
    ctx: addr2line::Context<Reader>,
    /// Per unit (by offset): addr2line's file path → the path binutils prints.
    file_names: std::cell::RefCell<HashMap<usize, HashMap<String, String>>>,
}

impl std::fmt::Debug for DwarfInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DwarfInfo").finish_non_exhaustive()
    }
}

fn load_dwarf(obj: &object::File<'_>) -> Result<gimli::Dwarf<Reader>, gimli::Error> {
    let endian = if obj.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    // The sections are copied (and decompressed) once, so the context owns its bytes and
    // does not borrow the map; debug sections are read in full by lookups anyway.
    let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
        let data = obj
            .section_by_name(id.name())
            .filter(|s| plausible_size(s))
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or_default();
        Ok(EndianArcSlice::new(Arc::from(&*data), endian))
    };
    gimli::Dwarf::load(load)
}

/// zlib and zstd do not inflate beyond about 1000:1, so a compressed section claiming
/// more is corrupt or hostile and is not given the memory it asks for.
fn plausible_size(section: &object::Section<'_, '_>) -> bool {
    match section.compressed_data() {
        Ok(c) if c.format != object::CompressionFormat::None => {
            let limit = (c.data.len() as u64)
                .saturating_mul(1032)
                .saturating_add(1 << 20);
            let ok = c.uncompressed_size <= limit;
            if !ok {
                log::warn!(
                    "{}: claims {} bytes from {} compressed, ignored",
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
        let map = map_file(path).map_err(|e| e.reason())?;
        let obj = object::File::parse(&*map).map_err(|_| Reason::NotElf)?;
        let mut dwarf = load_dwarf(&obj).map_err(|e| {
            log::warn!("{}: {e}", path.display());
            Reason::BadDebugInfo
        })?;
        if let Ok(Some((sup_name, _))) = obj.gnu_debugaltlink() {
            let sup_name = String::from_utf8_lossy(sup_name);
            let dir = path.parent().unwrap_or(Path::new("/"));
            let sup_path = dir.join(&*sup_name);
            match map_file(&sup_path) {
                Ok(sup_map) => match object::File::parse(&*sup_map) {
                    Ok(sup_obj) => match load_dwarf(&sup_obj) {
                        Ok(sup) => dwarf.set_sup(sup),
                        Err(e) => log::warn!("{}: {e}", sup_path.display()),
                    },
                    Err(e) => log::warn!("{}: {e}", sup_path.display()),
                },
                Err(e) => log::warn!("{e}"),
            }
        }
        let ctx = addr2line::Context::from_dwarf(dwarf).map_err(|e| {
            log::warn!("{}: {e}", path.display());
            Reason::BadDebugInfo
        })?;
        Ok(DwarfInfo {
            ctx,
            file_names: Default::default(),
        })
    }

    /// The frames at `addr`, innermost (most deeply inlined) first.
    pub fn frames(&self, addr: Svma) -> Result<Vec<Frame>, Reason> {
        let mut iter = self
            .ctx
            .find_frames(addr.0)
            .skip_all_loads()
            .map_err(|_| Reason::BadDebugInfo)?;
        let mut out = Vec::new();
        while let Some(f) = iter.next().map_err(|_| Reason::BadDebugInfo)? {
            let raw_function = f
                .function
                .as_ref()
                .and_then(|n| n.raw_name().ok())
                .map(|n| n.into_owned());
            let function = raw_function.as_deref().map(demangle);
            let (file, line, column) = match f.location {
                Some(l) => (l.file.map(str::to_owned), l.line, l.column),
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
        match out.last_mut() {
            Some(outer) => outer.inlined = false,
            None => return Err(Reason::NoLineInfo),
        }
        self.binutils_file_names(addr, &mut out);
        Ok(out)
    }

    /// addr2line leaves out directory entry 0 (DWARF 5: the compilation directory), while
    /// binutils and LLVM join it to the compilation directory when it is relative, as in
    /// glibc's `./stdlib/./stdlib/strtod_l.c`. perf shows binutils' form, so we do too.
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
        let names = cache.entry(key).or_insert_with(|| file_name_map(unit));
        for f in frames {
            if let Some(fixed) = f.file.as_ref().and_then(|p| names.get(p)) {
                f.file = Some(fixed.clone());
            }
        }
    }
}
