//! Where perf 6.1 takes a DSO's symbols from, as the one character `perf report -v`
//! prints before each symbol (`dso__symtab_origin`). sear finds its own files its own
//! way (see [`crate::DebugFinder`]); this only retraces perf's search so that the
//! verbose column says what perf's says.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, SectionKind};

use crate::elf::{build_id_dir, id_hex, map_file};

/// One of perf's binary types for user-space DSOs, in the order `dso__load` tries
/// them, with its origin character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Candidate {
    Debuglink,
    BuildIdCache,
    BuildIdCacheDebug,
    Fedora,
    Ubuntu,
    BuildIdDebuginfo,
    SystemPath,
    OpenEmbedded,
    MixedUpUbuntu,
}

impl Candidate {
    const ORDER: [Candidate; 9] = [
        Candidate::Debuglink,
        Candidate::BuildIdCache,
        Candidate::BuildIdCacheDebug,
        Candidate::Fedora,
        Candidate::Ubuntu,
        Candidate::BuildIdDebuginfo,
        Candidate::SystemPath,
        Candidate::OpenEmbedded,
        Candidate::MixedUpUbuntu,
    ];

    fn origin(self) -> char {
        match self {
            Candidate::Debuglink => 'l',
            Candidate::BuildIdCache => 'B',
            Candidate::BuildIdCacheDebug => 'D',
            Candidate::Fedora => 'f',
            Candidate::Ubuntu => 'u',
            Candidate::BuildIdDebuginfo => 'b',
            Candidate::SystemPath => 'd',
            Candidate::OpenEmbedded => 'o',
            Candidate::MixedUpUbuntu => 'x',
        }
    }
}

/// perf's origin character for the DSO recorded as `name` with `build_id`:
/// `k` for the kernel and its modules (symbols from kallsyms), `j` for a
/// `/tmp/perf-PID.map`, for a file the character of the first candidate perf
/// would take its `.symtab` from (else its dynamic symbols from), and `!` where
/// perf finds nothing (or the DSO is a map without a file).
pub fn perf_symtab_origin(name: &str, build_id: Option<&[u8]>) -> char {
    if name.starts_with("[guest.kernel") {
        return 'g';
    }
    if name.starts_with("[kernel") || is_module(name) {
        return 'k';
    }
    if name.starts_with("/tmp/perf-") && name.ends_with(".map") {
        return 'j';
    }
    // Without a recorded build id, perf reads the file's own.
    let read;
    let build_id = match build_id {
        Some(id) => Some(id),
        None => {
            read = crate::read_build_id(&crate::on_disk(name)).ok().flatten();
            read.as_deref()
        }
    };
    let mut runtime = None;
    for cand in Candidate::ORDER {
        let Some(path) = candidate_path(cand, name, build_id) else {
            continue;
        };
        let Some((symtab, dynsym)) = symbol_tables(&path, build_id) else {
            continue;
        };
        if symtab {
            return cand.origin();
        }
        if dynsym && runtime.is_none() {
            runtime = Some(cand);
        }
    }
    runtime.map_or('!', Candidate::origin)
}

/// A kernel module's DSO: a path ending in `.ko` (compressed or not), or `[name]` of
/// a module's characters that is none of the process's own special maps.
fn is_module(name: &str) -> bool {
    if name.starts_with('/') {
        return [".ko", ".ko.gz", ".ko.xz", ".ko.zst"]
            .iter()
            .any(|e| name.ends_with(e));
    }
    let Some(inner) = name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) else {
        return false;
    };
    !inner.is_empty()
        && inner
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !matches!(
            inner,
            "vdso" | "vsyscall" | "vvar" | "heap" | "stack" | "unknown" | "uprobes" | "vectors"
        )
}

/// The file perf's `dso__read_binary_type_filename` names for `cand`, if it names
/// one (the debuglink one only where it exists).
fn candidate_path(cand: Candidate, name: &str, build_id: Option<&[u8]>) -> Option<PathBuf> {
    let sysroot = |p: &str| -> PathBuf { crate::on_disk(p).into_owned() };
    let debug = |rest: &str| -> PathBuf { sysroot(&format!("/usr/lib/debug{rest}")) };
    match cand {
        Candidate::Debuglink => {
            let file = sysroot(name);
            let link = debuglink_name(&file)?;
            let dir = file.parent().unwrap_or(Path::new("/"));
            let dir_str = dir.to_string_lossy();
            [
                PathBuf::from(&link),
                dir.join(&link),
                dir.join(".debug").join(&link),
                PathBuf::from(format!("/usr/lib/debug{dir_str}/{link}")),
            ]
            .into_iter()
            .find(|p| p.is_file())
        }
        Candidate::BuildIdCache | Candidate::BuildIdCacheDebug => {
            let id = id_hex(build_id?)?;
            let link = build_id_dir(&crate::buildid_dir()?, &id);
            // An old-style cache keeps the file itself at the link.
            if link.is_file() {
                return Some(link);
            }
            let base = match cand {
                Candidate::BuildIdCacheDebug => "debug",
                _ if name == "[vdso]" => "vdso",
                _ => "elf",
            };
            Some(link.join(base))
        }
        Candidate::Fedora => Some(debug(&format!("{name}.debug"))),
        Candidate::Ubuntu => Some(debug(name)),
        Candidate::BuildIdDebuginfo => {
            let id = id_hex(build_id?)?;
            let dir = build_id_dir(&sysroot("/usr/lib/debug"), &id);
            Some(dir.with_extension("debug"))
        }
        Candidate::SystemPath => Some(sysroot(name)),
        Candidate::OpenEmbedded => {
            let (dir, base) = name.rsplit_once('/')?;
            Some(sysroot(&format!("{dir}/.debug/{base}")))
        }
        Candidate::MixedUpUbuntu => {
            let rest = name.strip_prefix("/usr/lib/debug")?;
            Some(sysroot(&format!("/usr/lib/debug/usr/lib/debug{rest}")))
        }
    }
}

/// The name `.gnu_debuglink` of the ELF file at `path` holds.
fn debuglink_name(path: &Path) -> Option<String> {
    let map = map_file(path).ok()?;
    let obj = object::File::parse(&map[..]).ok()?;
    let data = obj.section_by_name(".gnu_debuglink")?.data().ok()?;
    let end = data.iter().position(|&b| b == 0)?;
    let name = std::str::from_utf8(&data[..end]).ok()?;
    (!name.is_empty()).then(|| name.to_owned())
}

/// Whether the ELF file at `path` has a `.symtab` and whether it has dynamic symbols
/// (`.dynsym` or `.opd`), as perf's `symsrc__init` sees it: None where it is not a
/// regular ELF file or its build id is not `build_id` (perf rejects those).
fn symbol_tables(path: &Path, build_id: Option<&[u8]>) -> Option<(bool, bool)> {
    let map = map_file(path).ok()?;
    let obj = object::File::parse(&map[..]).ok()?;
    if obj.format() != object::BinaryFormat::Elf {
        return None;
    }
    if let Some(want) = build_id {
        if obj.build_id().ok().flatten() != Some(want) {
            return None;
        }
    }
    let symtab = obj
        .section_by_name(".symtab")
        .is_some_and(|s| s.kind() != SectionKind::UninitializedData);
    let dynsym = obj.section_by_name(".dynsym").is_some() || obj.section_by_name(".opd").is_some();
    Some((symtab, dynsym))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_of_files_perf_does_not_read() {
        assert_eq!(perf_symtab_origin("[kernel.kallsyms]", None), 'k');
        assert_eq!(perf_symtab_origin("[guest.kernel.kallsyms]", None), 'g');
        assert_eq!(perf_symtab_origin("[nf_tables]", None), 'k');
        assert_eq!(
            perf_symtab_origin("/lib/modules/6.1.0/kernel/fs/ext4/ext4.ko.xz", None),
            'k'
        );
        assert_eq!(perf_symtab_origin("/tmp/perf-1234.map", None), 'j');
        // Maps without a file, and a file that is not there.
        assert_eq!(perf_symtab_origin("[heap]", None), '!');
        assert_eq!(perf_symtab_origin("//anon", None), '!');
        assert_eq!(
            perf_symtab_origin("/nonexistent/libx.so", Some(&[1; 20])),
            '!'
        );
    }

    #[test]
    fn a_binary_with_a_symtab_is_read_where_it_lies() {
        // The test binary itself: not stripped, so its .symtab is at its
        // own path ('d'), unless perf's cache holds a copy ('B').
        let exe = std::env::current_exe().unwrap();
        let name = exe.to_str().unwrap();
        let id = crate::read_build_id(&exe).unwrap();
        let o = perf_symtab_origin(name, id.as_deref());
        assert!(o == 'd' || o == 'B', "{o}");
        // A build id the file does not have: perf rejects the file.
        assert_eq!(perf_symtab_origin(name, Some(&[7; 20])), '!');
    }
}
