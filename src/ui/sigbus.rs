//! Files that shrink while sear has them mapped. sear maps the recording, binaries and debug
//! files to read them; a file cut short meanwhile (rebuilt in place, truncated, on a network
//! file system that changed) makes every read of a page past its new end a SIGBUS, which kills
//! the process. The handler installed here instead maps a page of zeros over the faulting page
//! and lets the read go on: the parsers then see zeros where the data was, which they treat as
//! any damaged input (bounded, warnings). Each such page is remembered (the first
//! [`MAX_PAGES`]) and, at the end, named: the file whose mapping the page belonged to (the part
//! of the mapping before it, in /proc/self/maps) and the offset.
//!
//! Written by hand because no crate does this: it is a dozen lines of `sigaction` and `mmap`.
//! The handler does only async-signal-safe work (one `mmap`, atomic stores).

use std::sync::atomic::{AtomicUsize, Ordering};

/// Pages remembered for the warning.
const MAX_PAGES: usize = 64;

static PAGES: [AtomicUsize; MAX_PAGES] = [const { AtomicUsize::new(0) }; MAX_PAGES];
static FAULTS: AtomicUsize = AtomicUsize::new(0);
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);

/// Installs the handler (once, at start).
pub fn install() {
    // SAFETY: sysconf has no preconditions; sigaction is given a valid handler and a zeroed,
    // then filled, struct.
    unsafe {
        let ps = libc::sysconf(libc::_SC_PAGESIZE);
        if ps > 0 {
            PAGE_SIZE.store(ps as usize, Ordering::Relaxed);
        }
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}

extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers; mmap with MAP_FIXED
    // over the faulting page (which belongs to a file mapping of ours) replaces only that page.
    unsafe {
        let addr = if info.is_null() {
            0
        } else {
            (*info).si_addr() as usize
        };
        let ps = PAGE_SIZE.load(Ordering::Relaxed);
        let page = addr & !(ps - 1);
        let ok = page != 0
            && libc::mmap(
                page as *mut libc::c_void,
                ps,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            ) != libc::MAP_FAILED;
        if !ok {
            // Not a page we can stand in for: die of the signal as before.
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
            return;
        }
        let n = FAULTS.fetch_add(1, Ordering::Relaxed);
        if n < MAX_PAGES {
            PAGES[n].store(page, Ordering::Relaxed);
        }
    }
}

/// The files that were cut short while mapped: (path, offset of the first page read as zeros),
/// one per file, and how many pages were read as zeros in all.
pub fn cut_files() -> (Vec<(String, u64)>, usize) {
    let n = FAULTS.load(Ordering::Relaxed);
    if n == 0 {
        return (Vec::new(), 0);
    }
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    // (start, end, offset, path) of file mappings.
    let spans: Vec<(usize, usize, u64, &str)> = maps
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (a, b) = f.next()?.split_once('-')?;
            let _perms = f.next()?;
            let off = u64::from_str_radix(f.next()?, 16).ok()?;
            let _dev = f.next()?;
            let _inode = f.next()?;
            let path = f.next()?;
            path.starts_with('/').then_some((
                usize::from_str_radix(a, 16).ok()?,
                usize::from_str_radix(b, 16).ok()?,
                off,
                path,
            ))
        })
        .collect();
    let mut out: Vec<(String, u64)> = Vec::new();
    for p in PAGES.iter().take(n.min(MAX_PAGES)) {
        let page = p.load(Ordering::Relaxed);
        // The file's mapping goes on right before the page of zeros (the page split it).
        let Some(&(start, _, off, path)) = spans.iter().find(|s| s.1 == page) else {
            continue;
        };
        let at = off + (page - start) as u64;
        match out.iter_mut().find(|(q, _)| q == path) {
            Some(e) => e.1 = e.1.min(at),
            None => out.push((path.to_owned(), at)),
        }
    }
    (out, n)
}

/// Warns about files cut short while mapped (at the end of a command).
pub fn report() {
    let (files, pages) = cut_files();
    if pages == 0 {
        return;
    }
    for (path, at) in &files {
        log::warn!(
            "{path}: cut short while sear read it (from offset {at:#x}): what lay past the cut \
             read as zeros, so results from this file may be incomplete or wrong"
        );
    }
    if files.is_empty() {
        log::warn!(
            "{pages} pages of files sear had mapped were cut short while it read them (a file \
             changed during the run): results may be incomplete"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_cut_short_while_mapped_reads_as_zeros_and_is_named() {
        install();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        let ps = PAGE_SIZE.load(Ordering::Relaxed);
        f.write_all(&vec![7u8; ps * 4]).unwrap();
        f.flush().unwrap();
        let file = std::fs::File::open(f.path()).unwrap();
        // SAFETY: the map is only read; the truncation below is the point of the test.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        assert_eq!(map[ps * 3], 7);
        let cut = std::fs::OpenOptions::new()
            .write(true)
            .open(f.path())
            .unwrap();
        cut.set_len(ps as u64).unwrap();
        // Past the new end: a SIGBUS without the handler.
        let past = std::hint::black_box(&map[..])[ps * 2 + 5];
        assert_eq!(past, 0);
        assert_eq!(map[0], 7, "the part still in the file is read as it is");
        let (files, pages) = cut_files();
        assert!(pages >= 1);
        let name = f.path().display().to_string();
        let hit = files.iter().find(|(p, _)| *p == name);
        assert_eq!(hit.map(|h| h.1), Some((ps * 2) as u64), "{files:?}");
    }
}
