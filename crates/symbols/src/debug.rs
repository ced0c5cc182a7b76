//! Finding the file that holds a binary's DWARF: itself, a file named by its build id, or
//! one named by `.gnu_debuglink`; each candidate is checked to belong to the binary.

use std::path::{Path, PathBuf};

use object::Object;

use crate::crc::crc32;
use crate::elf::{build_id_dir, hex, id_hex, map_file};
use crate::{ElfFile, Reason};

/// Where to look for separate debug files.
#[derive(Debug, Clone)]
pub struct DebugFinder {
    /// Roots laid out like `/usr/lib/debug`: `ROOT/.build-id/xx/rest.debug` and
    /// `ROOT/<dir of binary>/<debuglink name>`.
    pub debug_roots: Vec<PathBuf>,
    /// Roots laid out like perf's build-id cache `~/.debug`: `ROOT/.build-id/xx/rest/debug`.
    pub buildid_caches: Vec<PathBuf>,
    /// Whether to look beside the binary and in its `.debug/` for the debuglink name.
    pub search_beside_binary: bool,
}

impl Default for DebugFinder {
    /// The system's places: `/usr/lib/debug` and `$HOME/.debug`.
    fn default() -> Self {
        let caches: Vec<PathBuf> = crate::buildid_dir().into_iter().collect();
        // With --symfs, the debug directory is the one under it.
        let debug_root = match crate::symfs() {
            Some(root) => root.join("usr/lib/debug"),
            None => PathBuf::from("/usr/lib/debug"),
        };
        DebugFinder {
            debug_roots: vec![debug_root],
            buildid_caches: caches,
            search_beside_binary: true,
        }
    }
}

impl DebugFinder {
    /// Looks only in the given roots (and beside the binary); for tests and sandboxes.
    pub fn with_roots(debug_roots: Vec<PathBuf>, buildid_caches: Vec<PathBuf>) -> Self {
        DebugFinder {
            debug_roots,
            buildid_caches,
            search_beside_binary: true,
        }
    }
}

/// How a debug file was tied to its binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugSource {
    /// The binary carries its own DWARF.
    Binary,
    BuildId,
    Debuglink,
}

/// A debug file that was verified to belong to a binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebugFile {
    pub path: PathBuf,
    pub source: DebugSource,
}

enum Check {
    Good,
    Mismatch,
    Unusable,
}

impl DebugFinder {
    /// The file holding `elf`'s DWARF. A candidate whose build id or CRC is not the
    /// binary's is never used; if nothing else is found that gives `BuildIdMismatch`.
    pub fn find(&self, elf: &ElfFile) -> Result<DebugFile, Reason> {
        if elf.has_dwarf() {
            return Ok(DebugFile {
                path: elf.path().to_owned(),
                source: DebugSource::Binary,
            });
        }
        let mut mismatch = false;
        if let Some(id) = elf.build_id_hex().filter(|h| h.len() > 2) {
            let by_root = self
                .debug_roots
                .iter()
                .map(|r| build_id_dir(r, &id).with_extension("debug"));
            // perf's cache keeps the binary as `elf` (with its DWARF, if it had any) and,
            // when it found one, the debug file as `debug`.
            let by_cache = self.buildid_caches.iter().flat_map(|r| {
                let dir = build_id_dir(r, &id);
                [dir.join("debug"), dir.join("elf")]
            });
            for cand in by_root.chain(by_cache) {
                match check_build_id(&cand, elf.build_id()) {
                    Check::Good => {
                        return Ok(DebugFile {
                            path: cand,
                            source: DebugSource::BuildId,
                        })
                    }
                    Check::Mismatch => {
                        log::warn!(
                            "{}: build id is not {id}, ignoring it for {}",
                            cand.display(),
                            elf.path().display()
                        );
                        mismatch = true;
                    }
                    Check::Unusable => {}
                }
            }
        }
        if let Some((name, crc)) = elf.debuglink() {
            for cand in self.debuglink_candidates(elf.path(), name) {
                if cand == elf.path() {
                    continue;
                }
                match check_debuglink(&cand, crc, elf.build_id()) {
                    Check::Good => {
                        return Ok(DebugFile {
                            path: cand,
                            source: DebugSource::Debuglink,
                        })
                    }
                    Check::Mismatch => {
                        log::warn!(
                            "{}: CRC or build id does not match {}",
                            cand.display(),
                            elf.path().display()
                        );
                        mismatch = true;
                    }
                    Check::Unusable => {}
                }
            }
        }
        // A debuginfod server, where DEBUGINFOD_URLS names one.
        if let Some(id) = elf.build_id() {
            if let Some(p) = crate::debuginfod::client()
                .and_then(|c| c.fetch(id, crate::debuginfod::Kind::DebugInfo))
            {
                match check_build_id(&p, Some(id)) {
                    Check::Good => {
                        return Ok(DebugFile {
                            path: p,
                            source: DebugSource::BuildId,
                        })
                    }
                    _ => log::warn!(
                        "{}: the debuginfod server's file is not {}'s debug info",
                        p.display(),
                        elf.path().display()
                    ),
                }
            }
        }
        Err(if mismatch {
            Reason::BuildIdMismatch
        } else {
            Reason::NoDebugInfo
        })
    }

    /// The binary with this build id from perf's cache, else from a debuginfod server
    /// (where DEBUGINFOD_URLS names one): for when the file at the recorded path is gone
    /// or was replaced.
    pub fn binary_by_build_id(&self, build_id: &[u8]) -> Option<PathBuf> {
        self.cached_binary(build_id).or_else(|| {
            let p = crate::debuginfod::client()?
                .fetch(build_id, crate::debuginfod::Kind::Executable)?;
            (crate::read_build_id(&p).ok().flatten().as_deref() == Some(build_id)).then_some(p)
        })
    }

    /// perf's cached copy of the binary with this build id (`ROOT/.build-id/xx/rest/elf`),
    /// for when the file at the recorded path is gone or was replaced.
    pub fn cached_binary(&self, build_id: &[u8]) -> Option<PathBuf> {
        let id = id_hex(build_id)?;
        self.buildid_caches
            .iter()
            .map(|r| build_id_dir(r, &id).join("elf"))
            .find(|p| crate::read_build_id(p).ok().flatten().as_deref() == Some(build_id))
    }

    fn debuglink_candidates(&self, binary: &Path, name: &str) -> Vec<PathBuf> {
        // A debuglink is a file name; anything with a separator is not one we follow.
        if name.is_empty() || name.contains('/') {
            return Vec::new();
        }
        let dir = binary.parent().unwrap_or(Path::new("/"));
        let mut out = Vec::new();
        if self.search_beside_binary {
            out.push(dir.join(name));
            out.push(dir.join(".debug").join(name));
        }
        let abs_dir = dir.canonicalize().unwrap_or_else(|_| dir.to_owned());
        let rel = abs_dir.strip_prefix("/").unwrap_or(&abs_dir);
        for root in &self.debug_roots {
            out.push(root.join(rel).join(name));
        }
        out
    }
}

fn has_dwarf(obj: &object::File<'_>) -> bool {
    use object::ObjectSection;
    obj.section_by_name(".debug_info")
        .is_some_and(|s| s.kind() != object::SectionKind::UninitializedData && s.size() > 0)
}

fn check_build_id(path: &Path, want: Option<&[u8]>) -> Check {
    let Ok(map) = map_file(path) else {
        return Check::Unusable;
    };
    let Ok(obj) = object::File::parse(&*map) else {
        return Check::Unusable;
    };
    match (obj.build_id().ok().flatten(), want) {
        (Some(have), Some(want)) if have != want => {
            log::debug!("{}: build id {}", path.display(), hex(have));
            Check::Mismatch
        }
        _ if has_dwarf(&obj) => Check::Good,
        _ => Check::Unusable,
    }
}

fn check_debuglink(path: &Path, crc: u32, want: Option<&[u8]>) -> Check {
    let Ok(map) = map_file(path) else {
        return Check::Unusable;
    };
    let Ok(obj) = object::File::parse(&*map) else {
        return Check::Unusable;
    };
    if let (Some(have), Some(want)) = (obj.build_id().ok().flatten(), want) {
        if have != want {
            return Check::Mismatch;
        }
    }
    if crc32(&map) != crc {
        return Check::Mismatch;
    }
    if has_dwarf(&obj) {
        Check::Good
    } else {
        Check::Unusable
    }
}
