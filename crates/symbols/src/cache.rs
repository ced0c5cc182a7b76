//! perf's build-id cache (`~/.debug`, or `buildid.dir`), written and read in perf 6.1's layout
//! so perf and sear share it: a binary with build id `ID` at `/path/name` is kept as
//! `ROOT/path/name/ID/elf` (its debug file beside it as `debug`, when the system has one under
//! `/usr/lib/debug/.build-id`), the kernel's symbols as `ROOT/[kernel.kallsyms]/ID/kallsyms`,
//! the vdso as `ROOT/[vdso]/ID/vdso`, and each has a link `ROOT/.build-id/ID[..2]/ID[2..]`
//! to its directory (`../../path/name/ID`). Files are hard-linked where the cache and the
//! file share a file system, copied otherwise (as perf does).

use std::io;
use std::path::{Path, PathBuf};

/// What an entry holds.
#[derive(Debug, Clone, Copy)]
pub enum Content<'a> {
    /// A binary on disk (its name is its path).
    File(&'a Path),
    /// The running kernel's symbols (`/proc/kallsyms`), as `[kernel.kallsyms]`.
    Kallsyms,
    /// The vdso's image, as `[vdso]`.
    Vdso(&'a [u8]),
}

/// The name perf gives the kernel's entry.
pub const KALLSYMS: &str = "[kernel.kallsyms]";
/// The name perf gives the vdso's entry.
pub const VDSO: &str = "[vdso]";

fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// The entry's directory under `root`, and its `.build-id` link.
fn places(root: &Path, name: &str, id: &str) -> Option<(PathBuf, PathBuf)> {
    if id.len() < 3 || !id.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let rel = name.trim_start_matches('/');
    if rel.is_empty() || rel.split('/').any(|c| c == "..") {
        return None;
    }
    Some((
        root.join(rel).join(id),
        root.join(".build-id").join(&id[..2]).join(&id[2..]),
    ))
}

/// Hard-links `from` to `to`, else copies it.
fn link_or_copy(from: &Path, to: &Path) -> io::Result<()> {
    match std::fs::hard_link(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(_) => std::fs::copy(from, to).map(|_| ()),
    }
}

/// Adds an entry (`name` with build id `id`); false when it was there already. With
/// `replace` (perf's `--update`), an entry that is there is written again.
pub fn add(
    root: &Path,
    name: &str,
    id: &[u8],
    what: Content<'_>,
    replace: bool,
) -> io::Result<bool> {
    let sid = hex(id);
    let (dir, link) = places(root, name, &sid)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a cacheable name"))?;
    let file = dir.join(match what {
        Content::File(_) => "elf",
        Content::Kallsyms => "kallsyms",
        Content::Vdso(_) => "vdso",
    });
    let present = file.is_file();
    if present && !replace {
        return Ok(false);
    }
    std::fs::create_dir_all(&dir)?;
    if present {
        std::fs::remove_file(&file)?;
    }
    match what {
        Content::File(p) => {
            link_or_copy(p, &file)?;
            // The system's debug file for it, as perf keeps it.
            let debug = Path::new("/usr/lib/debug/.build-id")
                .join(&sid[..2])
                .join(format!("{}.debug", &sid[2..]));
            if debug.is_file() {
                let to = dir.join("debug");
                if !to.exists() {
                    let _ = link_or_copy(&debug, &to);
                }
            }
        }
        Content::Kallsyms => {
            std::fs::write(&file, std::fs::read("/proc/kallsyms")?)?;
        }
        Content::Vdso(b) => std::fs::write(&file, b)?,
    }
    if let Some(parent) = link.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let target = Path::new("../..")
        .join(name.trim_start_matches('/'))
        .join(&sid);
    match std::fs::read_link(&link) {
        Ok(t) if t == target => {}
        Ok(_) => {
            std::fs::remove_file(&link)?;
            std::os::unix::fs::symlink(&target, &link)?;
        }
        Err(_) => std::os::unix::fs::symlink(&target, &link)?,
    }
    Ok(true)
}

/// The entries under `root`: (build id, name) in build-id order, every link whose target
/// names a directory.
pub fn entries(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(top) = std::fs::read_dir(root.join(".build-id")) else {
        return out;
    };
    for d in top.flatten() {
        let head = d.file_name().to_string_lossy().into_owned();
        if head.len() != 2 {
            continue;
        }
        let Ok(links) = std::fs::read_dir(d.path()) else {
            continue;
        };
        for l in links.flatten() {
            let rest = l.file_name().to_string_lossy().into_owned();
            let Ok(target) = std::fs::read_link(l.path()) else {
                continue;
            };
            let id = format!("{head}{rest}");
            if let Some(name) = origin(&target, &id) {
                out.push((id, name));
            }
        }
    }
    out.sort();
    out
}

/// The name an entry's link target gives: `../../NAME/ID`.
fn origin(target: &Path, id: &str) -> Option<String> {
    let t = target.to_str()?;
    let inner = t
        .strip_prefix("../../")?
        .strip_suffix(id)?
        .strip_suffix('/')?;
    if inner.starts_with('[') {
        Some(inner.to_owned())
    } else {
        Some(format!("/{inner}"))
    }
}

/// perf's `buildid-cache --list`: the entries whose file is still there with that build id
/// (the running kernel's for `[kernel.kallsyms]`).
pub fn valid_entries(root: &Path) -> Vec<(String, String)> {
    let kernel = std::fs::read("/sys/kernel/notes")
        .ok()
        .and_then(|b| crate::build_id_from_notes(&b))
        .map(|id| hex(&id));
    entries(root)
        .into_iter()
        .filter(|(id, name)| {
            if name == KALLSYMS {
                kernel.as_deref() == Some(id.as_str())
            } else if name.starts_with('/') {
                crate::read_build_id(Path::new(name))
                    .ok()
                    .flatten()
                    .is_some_and(|b| hex(&b) == *id)
            } else {
                false
            }
        })
        .collect()
}

/// Removes the entry of `name` with build id `id`; false when there was none.
pub fn remove(root: &Path, name: &str, id: &[u8]) -> io::Result<bool> {
    let sid = hex(id);
    let Some((dir, link)) = places(root, name, &sid) else {
        return Ok(false);
    };
    let had_link = std::fs::symlink_metadata(&link).is_ok();
    if had_link {
        std::fs::remove_file(&link)?;
    }
    let had_dir = dir.is_dir();
    if had_dir {
        std::fs::remove_dir_all(&dir)?;
        // The file's directory goes when its last version does.
        if let Some(parent) = dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
    Ok(had_link || had_dir)
}

/// Removes every version of `name`; how many there were.
pub fn purge(root: &Path, name: &str) -> io::Result<usize> {
    let mut n = 0;
    for (id, entry) in entries(root) {
        if entry == name {
            let bytes: Vec<u8> = (0..id.len() / 2)
                .filter_map(|i| u8::from_str_radix(&id[2 * i..2 * i + 2], 16).ok())
                .collect();
            if remove(root, name, &bytes)? {
                n += 1;
            }
        }
    }
    Ok(n)
}

/// Removes every entry; how many there were.
pub fn purge_all(root: &Path) -> io::Result<usize> {
    let mut n = 0;
    for (_, name) in entries(root) {
        n += purge(root, &name)?;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_added_listed_and_removed_in_perfs_layout() {
        let root = tempfile::tempdir().unwrap();
        let src = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(src.path(), b"not really elf").unwrap();
        let id = [0xab, 0xcd, 0xef, 0x01];
        let name = src.path().to_str().unwrap();
        assert!(add(root.path(), name, &id, Content::File(src.path()), false).unwrap());
        assert!(!add(root.path(), name, &id, Content::File(src.path()), false).unwrap());
        let dir = root
            .path()
            .join(name.trim_start_matches('/'))
            .join("abcdef01");
        assert!(dir.join("elf").is_file());
        let link = root.path().join(".build-id/ab/cdef01");
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            Path::new("../..")
                .join(name.trim_start_matches('/'))
                .join("abcdef01")
        );
        assert!(link.join("elf").is_file(), "the link leads to the entry");
        assert_eq!(
            entries(root.path()),
            vec![("abcdef01".into(), name.to_owned())]
        );
        // Not an ELF file with that build id: not listed as valid.
        assert!(valid_entries(root.path()).is_empty());
        assert!(add(root.path(), VDSO, &[1, 2, 3], Content::Vdso(b"x"), false).unwrap());
        assert_eq!(entries(root.path()).len(), 2);
        assert_eq!(purge(root.path(), name).unwrap(), 1);
        assert!(!dir.exists() && std::fs::symlink_metadata(&link).is_err());
        assert_eq!(purge_all(root.path()).unwrap(), 1);
        assert!(entries(root.path()).is_empty());
        // Names that would leave the cache are refused.
        assert!(add(
            root.path(),
            "/a/../../x",
            &id,
            Content::File(src.path()),
            false
        )
        .is_err());
    }
}
