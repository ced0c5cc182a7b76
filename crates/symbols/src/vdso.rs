//! The vdso image for a recording's `[vdso]` samples, found by build id.
//!
//! What it does: [`find_vdso`] returns the [`ElfFile`] of the vdso with a given build id
//! (from the perf.data build-id table), from perf's build-id cache where `perf record`
//! stores it (`ROOT/.build-id/xx/rest/vdso`, `ROOT/[vdso]/<id>/vdso`), or else from this
//! process's own vdso when it has that build id (the same kernel's vdso, read through
//! `/proc/self/mem`). Its symbols are then looked up as for any ELF file.
//!
//! What it does not: 32-bit vdsos (`[vdso32]`, `[vdsox32]`) are not looked for, and no
//! vdso is written to the cache.
//!
//! perf's rule for the caller: a sample in the `[vdso]` map (MMAP record with that file
//! name, `pgoff` 0) is looked up at `ip - map_start + pgoff` turned into the ELF's own
//! address by its PT_LOAD segment, which is [`ElfFile::avma_to_svma`]; for the vdso the
//! file offset and the address coincide.
//!
//! ```no_run
//! use symbols::{find_vdso, DebugFinder};
//!
//! let build_id = [0u8; 20]; // from the perf.data build-id table entry for [vdso]
//! let vdso = find_vdso(&build_id, &DebugFinder::default()).expect("cached or running vdso");
//! let svma = vdso.avma_to_svma(0x7fff_1234_5a40, 0x7fff_1234_5000, 0).unwrap();
//! println!("{:?}", vdso.lookup(svma));
//! ```

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::elf::hex;
use crate::{DebugFinder, ElfFile, Error, Reason};

/// A vdso is one or two pages; anything larger in /proc/self/maps is not one we read.
const MAX_VDSO: u64 = 1 << 20;

/// The vdso with `build_id`: perf's cached copy, or this process's own one. A cached file
/// or own vdso with another build id is never used: that gives
/// [`Reason::BuildIdMismatch`] when nothing else is found.
pub fn find_vdso(build_id: &[u8], finder: &DebugFinder) -> Result<ElfFile, Reason> {
    let mut mismatch = false;
    for cand in cache_candidates(&finder.buildid_caches, build_id) {
        match ElfFile::open(&cand) {
            Ok(elf) if elf.build_id() == Some(build_id) => {
                log::debug!("vdso {} from {}", hex(build_id), cand.display());
                return Ok(elf);
            }
            Ok(_) => {
                log::warn!("{}: build id is not {}", cand.display(), hex(build_id));
                mismatch = true;
            }
            Err(e) if e.reason() == Reason::NoSuchFile => {}
            Err(e) => log::warn!("{e}"),
        }
    }
    match read_own_vdso() {
        Ok(image) => match ElfFile::from_bytes("[vdso]", &image) {
            Ok(elf) if elf.build_id() == Some(build_id) => {
                log::debug!("vdso {} from this process", hex(build_id));
                return Ok(elf);
            }
            Ok(_) => mismatch = true,
            Err(e) => log::warn!("{e}"),
        },
        Err(e) => log::debug!("{e}"),
    }
    Err(if mismatch {
        Reason::BuildIdMismatch
    } else {
        Reason::NoSuchFile
    })
}

/// Where perf's build-id caches would hold the vdso with this build id.
fn cache_candidates(roots: &[PathBuf], build_id: &[u8]) -> Vec<PathBuf> {
    let Some(id) = crate::elf::id_hex(build_id) else {
        return Vec::new();
    };
    roots
        .iter()
        .flat_map(|r| {
            [
                crate::elf::build_id_dir(r, &id).join("vdso"),
                r.join("[vdso]").join(&id).join("vdso"),
            ]
        })
        .collect()
}

/// The bytes of this process's vdso, as mapped (`[vdso]` in `/proc/self/maps`).
pub fn read_own_vdso() -> Result<Vec<u8>, Error> {
    read_vdso_of(Path::new("/proc/self"))
}

fn read_vdso_of(proc_dir: &Path) -> Result<Vec<u8>, Error> {
    let maps_path = proc_dir.join("maps");
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| Error::Io { path, source }
    };
    let maps = std::fs::read_to_string(&maps_path).map_err(io(&maps_path))?;
    let (start, end) = maps
        .lines()
        .filter(|l| l.trim_end().ends_with("[vdso]"))
        .find_map(|l| {
            let range = l.split_whitespace().next()?;
            let (a, b) = range.split_once('-')?;
            Some((
                u64::from_str_radix(a, 16).ok()?,
                u64::from_str_radix(b, 16).ok()?,
            ))
        })
        .filter(|(a, b)| b > a && b - a <= MAX_VDSO)
        .ok_or_else(|| {
            io(&maps_path)(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no [vdso] mapping",
            ))
        })?;
    let mem_path = proc_dir.join("mem");
    let mut mem = std::fs::File::open(&mem_path).map_err(io(&mem_path))?;
    mem.seek(SeekFrom::Start(start)).map_err(io(&mem_path))?;
    // Bounded above by MAX_VDSO, so the cast cannot truncate.
    let mut buf = vec![0u8; (end - start) as usize];
    mem.read_exact(&mut buf).map_err(io(&mem_path))?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_vdso_is_an_elf_with_clock_gettime() {
        let image = read_own_vdso().expect("this process has a vdso");
        let elf = ElfFile::from_bytes("[vdso]", &image).expect("vdso is ELF");
        assert!(elf.build_id().is_some());
        assert!(
            elf.symbols()
                .iter()
                .any(|s| s.name == "__vdso_clock_gettime"),
            "{:?}",
            elf.symbols()
        );
    }

    #[test]
    fn found_by_build_id_without_a_cache_and_refused_with_another() {
        let image = read_own_vdso().unwrap();
        let own = ElfFile::from_bytes("[vdso]", &image).unwrap();
        let id = own.build_id().unwrap().to_vec();
        let empty = DebugFinder::with_roots(Vec::new(), Vec::new());
        assert_eq!(find_vdso(&id, &empty).unwrap().build_id(), Some(&id[..]));
        let mut other = id.clone();
        other[0] ^= 0xff;
        assert_eq!(
            find_vdso(&other, &empty).unwrap_err(),
            Reason::BuildIdMismatch
        );
    }

    #[test]
    fn found_in_a_cache_and_a_wrong_cached_file_is_refused() {
        let image = read_own_vdso().unwrap();
        let own = ElfFile::from_bytes("[vdso]", &image).unwrap();
        let id = own.build_id().unwrap().to_vec();
        let dir = tempfile::tempdir().unwrap();
        let finder = DebugFinder::with_roots(Vec::new(), vec![dir.path().to_owned()]);
        // A cache entry under another build id's name holds our vdso: not that id's.
        let mut other = id.clone();
        other[1] ^= 0x55;
        let slot = dir.path().join("[vdso]").join(hex(&other));
        std::fs::create_dir_all(&slot).unwrap();
        std::fs::write(slot.join("vdso"), &image).unwrap();
        assert_eq!(
            find_vdso(&other, &finder).unwrap_err(),
            Reason::BuildIdMismatch
        );
        // Under its own id it is found in the cache.
        let slot = dir.path().join("[vdso]").join(hex(&id));
        std::fs::create_dir_all(&slot).unwrap();
        std::fs::write(slot.join("vdso"), &image).unwrap();
        let elf = find_vdso(&id, &finder).unwrap();
        assert_eq!(elf.path(), slot.join("vdso"));
    }

    #[test]
    fn no_vdso_in_maps_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("maps"),
            "00400000-00401000 r-xp 0 0:0 0 /bin/x\n",
        )
        .unwrap();
        assert!(read_vdso_of(dir.path()).is_err());
        std::fs::write(
            dir.path().join("maps"),
            "7fff00000000-7fffffffffff r-xp 0 0:0 0 [vdso]\n",
        )
        .unwrap();
        assert!(read_vdso_of(dir.path()).is_err(), "oversized range refused");
    }
}
