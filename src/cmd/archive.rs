//! `sear archive`: perf archive's job. The binaries, debug files and kernel symbols a recording
//! needs, as perf's build-id cache holds them (`symbols::cache`), go into one `FILE.tar.bz2`
//! whose paths are relative to the cache, so on another machine `tar xf FILE.tar.bz2 -C
//! ~/.debug` (perf's instructions) or `sear archive --unpack FILE.tar.bz2` makes the recording
//! report there as here. Binaries the cache lacks are added first where the file at the
//! recorded path still has the recorded build id.
//!
//! The unpacker is sear's own and trusts nothing in the archive: only regular files and
//! directories under the cache, and `.build-id` links of the cache's form; absolute paths,
//! `..`, other links and device files are refused with a warning; sizes are bounded.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use symbols::cache::{self, Content};

use crate::cli::ArchiveArgs;

/// The most an unpacked archive may write.
const MAX_UNPACKED: u64 = 64 << 30;

pub fn run(a: ArchiveArgs) -> Result<ExitCode> {
    let root = symbols::buildid_dir().context("no build-id cache directory: HOME is not set")?;
    if let Some(arch) = &a.unpack {
        return unpack(arch, &root);
    }
    let data = a.file.clone().unwrap_or_else(|| PathBuf::from("perf.data"));
    let reader = super::open(&data)?;
    let ids = reader.meta().features.build_ids().unwrap_or_default();
    drop(reader);
    if ids.is_empty() {
        bail!(
            "{}: the recording lists no build ids (pipe mode, or recorded with -B): nothing to archive",
            data.display()
        );
    }
    let out = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.tar.bz2", data.display())));
    let mut entries: Vec<PathBuf> = Vec::new();
    let mut missing = 0;
    for e in &ids {
        let id: String = e.build_id.iter().map(|b| format!("{b:02x}")).collect();
        if id.len() < 4 {
            continue;
        }
        let link = Path::new(".build-id").join(&id[..2]).join(&id[2..]);
        if !root.join(&link).exists() {
            add_missing(&root, &e.filename, &e.build_id);
        }
        let Ok(target) = std::fs::read_link(root.join(&link)) else {
            log::warn!(
                "{} ({id}): not in the build-id cache and not on disk with that build id: left out",
                e.filename
            );
            missing += 1;
            continue;
        };
        // `../../NAME/ID` → NAME/ID, relative to the cache.
        let Some(dir) = target.strip_prefix("../..").ok().map(Path::to_path_buf) else {
            continue;
        };
        entries.push(link);
        entries.push(dir);
    }
    write_archive(&root, &entries, &out)?;
    println!(
        "Now please run:\n\n$ tar xvf {} -C ~/.debug\n\nwherever you need to run 'perf report' on \
         (or `sear archive --unpack {}`).",
        out.display(),
        out.display()
    );
    if missing > 0 {
        log::warn!("{missing} binaries of the recording could not be archived");
    }
    Ok(ExitCode::SUCCESS)
}

/// Adds a binary the cache lacks, from its recorded path, if the file there is the recorded one.
fn add_missing(root: &Path, name: &str, id: &[u8]) {
    if !name.starts_with('/') {
        return;
    }
    let p = symbols::on_disk(name);
    if symbols::read_build_id(&p).ok().flatten().as_deref() == Some(id) {
        if let Err(e) = cache::add(root, name, id, Content::File(&p), false) {
            log::warn!("{name}: could not add it to the build-id cache: {e}");
        }
    }
}

fn write_archive(root: &Path, entries: &[PathBuf], out: &Path) -> Result<()> {
    let f = std::fs::File::create(out).with_context(|| format!("creating {}", out.display()))?;
    let z = bzip2::write::BzEncoder::new(std::io::BufWriter::new(f), bzip2::Compression::default());
    let mut t = tar::Builder::new(z);
    t.follow_symlinks(false);
    for e in entries {
        let full = root.join(e);
        let meta = std::fs::symlink_metadata(&full)
            .with_context(|| format!("reading {}", full.display()))?;
        if meta.is_dir() {
            t.append_dir_all(e, &full)
                .with_context(|| format!("archiving {}", full.display()))?;
        } else {
            t.append_path_with_name(&full, e)
                .with_context(|| format!("archiving {}", full.display()))?;
        }
    }
    let z = t.into_inner().context("finishing the archive")?;
    let mut w = z.finish().context("finishing the archive")?;
    w.flush()?;
    Ok(())
}

/// An archive's entry path, if it is a plain relative path (no root, no `..`).
fn plain(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(x) => out.push(x),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// Whether a link is one of the cache's `.build-id/xx/rest -> ../../NAME/ID` links.
fn cache_link(path: &Path, target: &Path) -> bool {
    let in_build_id = path.components().count() == 3 && path.starts_with(".build-id");
    let rest = target.strip_prefix("../..").ok();
    in_build_id
        && rest.is_some_and(|r| plain(r).is_some_and(|p| p == r) && !r.starts_with(".build-id"))
}

fn unpack(arch: &Path, root: &Path) -> Result<ExitCode> {
    let f = std::fs::File::open(arch).with_context(|| format!("opening {}", arch.display()))?;
    let mut t = tar::Archive::new(bzip2::read::BzDecoder::new(std::io::BufReader::new(f)));
    let mut written: u64 = 0;
    let (mut files, mut refused) = (0u64, 0u64);
    let entries = t
        .entries()
        .with_context(|| format!("{}: not a tar.bz2 archive", arch.display()))?;
    for (n, entry) in entries.enumerate() {
        let mut entry =
            entry.with_context(|| format!("{}: entry {n} is damaged", arch.display()))?;
        let raw = entry.path().map(|p| p.into_owned()).unwrap_or_default();
        let refuse = |why: &str| {
            log::warn!("{}: {}: {why}; not unpacked", arch.display(), raw.display());
        };
        let Some(rel) = plain(&raw) else {
            refuse("an absolute path or one with `..`");
            refused += 1;
            continue;
        };
        let dest = root.join(&rel);
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            std::fs::create_dir_all(&dest)?;
        } else if kind.is_symlink() {
            let target = entry
                .link_name()
                .ok()
                .flatten()
                .map(|t| t.into_owned())
                .unwrap_or_default();
            if !cache_link(&rel, &target) {
                refuse("a link that is not one of the cache's");
                refused += 1;
                continue;
            }
            if let Some(p) = dest.parent() {
                std::fs::create_dir_all(p)?;
            }
            let _ = std::fs::remove_file(&dest);
            std::os::unix::fs::symlink(&target, &dest)
                .with_context(|| format!("linking {}", dest.display()))?;
        } else if kind.is_file() {
            let size = entry.header().size().unwrap_or(u64::MAX);
            if written.saturating_add(size) > MAX_UNPACKED {
                bail!(
                    "{}: more than {} GiB to unpack; stopped",
                    arch.display(),
                    MAX_UNPACKED >> 30
                );
            }
            // No file is written through a link: every directory on the way is a real one.
            if let Some(p) = dest.parent() {
                std::fs::create_dir_all(p)?;
                if has_link(root, p) {
                    refuse("its directory is a link");
                    refused += 1;
                    continue;
                }
            }
            let _ = std::fs::remove_file(&dest);
            let mut w = std::fs::File::create(&dest)
                .with_context(|| format!("writing {}", dest.display()))?;
            let n = std::io::copy(&mut (&mut entry).take(size), &mut w)
                .with_context(|| format!("{}: {} is cut short", arch.display(), raw.display()))?;
            written += n;
            files += 1;
        } else {
            refuse("not a regular file, directory or link");
            refused += 1;
        }
    }
    eprintln!(
        "unpacked {files} files of {} into {}{}",
        arch.display(),
        root.display(),
        if refused > 0 {
            format!(" ({refused} entries refused)")
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// Whether a directory between `root` and `dir` (inclusive) is a symbolic link.
fn has_link(root: &Path, dir: &Path) -> bool {
    let Ok(rel) = dir.strip_prefix(root) else {
        return true;
    };
    let mut at = root.to_path_buf();
    for c in rel.components() {
        at.push(c);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return true;
        }
    }
    false
}
