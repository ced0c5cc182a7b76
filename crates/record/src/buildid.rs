//! Which binaries samples hit, followed while recording (no second pass over
//! the file as perf makes), and their build ids for the BUILD_ID feature.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::sync::Arc;

use perf_data::{
    Endian, PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_KERNEL, PERF_RECORD_MISC_USER,
};

#[derive(Debug, Clone, Copy)]
struct Map {
    start: u64,
    end: u64,
    file: u32,
}

/// The executable mappings of each process and the files samples landed in.
#[derive(Debug, Default)]
pub struct HitBinaries {
    maps: HashMap<u32, Vec<Map>>,
    files: Vec<String>,
    index: HashMap<String, u32>,
    hit: Vec<bool>,
    kernel: bool,
    /// Samples whose map was not known yet (it may sit in another CPU's
    /// buffer): retried at the end. Deduplicated by page.
    pending: HashSet<(u32, u64)>,
    /// `--buildid-all`: every mapped file (and the kernel) counts as hit.
    pub all: bool,
    /// This process's mount namespace (`/proc/self/ns/mnt`'s link).
    own_ns: Option<Option<std::path::PathBuf>>,
    /// Per process: whether it lives in another mount namespace (a
    /// container), where a path names another file than here.
    foreign: HashMap<u32, bool>,
    /// Per file: the file as a process in another mount namespace saw it,
    /// opened through `/proc/PID/root` when it was mapped (the open file
    /// stays readable after the process and its namespace are gone).
    opened: HashMap<u32, Arc<File>>,
}

/// At most this many files of other mount namespaces are held open.
const MAX_OPENED: usize = 4096;

/// A binary samples hit: its recorded name, and where a container process
/// mapped it, the file it saw (read its build id and copy it from there).
#[derive(Debug, Clone)]
pub struct Hit {
    pub name: String,
    pub opened: Option<Arc<File>>,
}

impl Hit {
    /// The path its contents are read from.
    pub fn source(&self) -> String {
        use std::os::fd::AsRawFd;
        match &self.opened {
            Some(f) => format!("/proc/self/fd/{}", f.as_raw_fd()),
            None => self.name.clone(),
        }
    }
}

/// Names that can have a build id: files and the vdso.
fn interesting(name: &str) -> bool {
    (name.starts_with('/') && !name.starts_with("//")) || name == "[vdso]"
}

impl HitBinaries {
    pub fn mmap(&mut self, pid: u32, start: u64, len: u64, name: &str) {
        if !interesting(name) || pid == u32::MAX {
            return;
        }
        let file = match self.index.get(name) {
            Some(&i) => i,
            None => {
                let i = self.files.len() as u32;
                self.files.push(name.to_string());
                self.hit.push(false);
                self.index.insert(name.to_string(), i);
                i
            }
        };
        self.maps.entry(pid).or_default().push(Map {
            start,
            end: start.saturating_add(len),
            file,
        });
        if name.starts_with('/')
            && !self.opened.contains_key(&file)
            && self.opened.len() < MAX_OPENED
            && self.is_foreign(pid)
        {
            if let Some(f) = open_in_root(pid, name) {
                self.opened.insert(file, Arc::new(f));
            }
        }
    }

    /// Whether `pid` lives in another mount namespace than this process.
    fn is_foreign(&mut self, pid: u32) -> bool {
        if let Some(&f) = self.foreign.get(&pid) {
            return f;
        }
        let own = self
            .own_ns
            .get_or_insert_with(|| std::fs::read_link("/proc/self/ns/mnt").ok())
            .clone();
        let theirs = std::fs::read_link(format!("/proc/{pid}/ns/mnt")).ok();
        let f = matches!((own, theirs), (Some(a), Some(b)) if a != b);
        self.foreign.insert(pid, f);
        f
    }

    /// A new process starts with its parent's mappings.
    pub fn fork(&mut self, pid: u32, ppid: u32) {
        if pid != ppid && !self.maps.contains_key(&pid) {
            if let Some(m) = self.maps.get(&ppid).cloned() {
                self.maps.insert(pid, m);
            }
        }
    }

    /// exec replaces the address space (and may enter a namespace).
    pub fn exec(&mut self, pid: u32) {
        self.maps.remove(&pid);
        self.foreign.remove(&pid);
    }

    /// The file a sample's address is in: `[kernel.kallsyms]` for a kernel
    /// sample, the mapped file for a user one (None where no map covers it).
    pub fn file_of(&self, misc: u16, pid: u32, ip: u64) -> Option<&str> {
        match misc & PERF_RECORD_MISC_CPUMODE_MASK {
            PERF_RECORD_MISC_KERNEL => Some("[kernel.kallsyms]"),
            PERF_RECORD_MISC_USER => self
                .find(pid, ip)
                .and_then(|f| self.files.get(f as usize))
                .map(String::as_str),
            _ => None,
        }
    }

    fn find(&self, pid: u32, ip: u64) -> Option<u32> {
        self.maps
            .get(&pid)?
            .iter()
            .rev()
            .find(|m| m.start <= ip && ip < m.end)
            .map(|m| m.file)
    }

    pub fn sample(&mut self, misc: u16, pid: u32, ip: u64) {
        match misc & PERF_RECORD_MISC_CPUMODE_MASK {
            PERF_RECORD_MISC_KERNEL => self.kernel = true,
            PERF_RECORD_MISC_USER => match self.find(pid, ip) {
                Some(f) => self.hit[f as usize] = true,
                None => {
                    if self.pending.len() < 1 << 20 {
                        self.pending.insert((pid, ip));
                    }
                }
            },
            _ => {}
        }
    }

    /// Files hit, after retrying samples that came before their mappings,
    /// and the vdso where a process mapped it.
    pub fn finish(&mut self) -> (bool, Vec<Hit>) {
        let pending = std::mem::take(&mut self.pending);
        for (pid, ip) in pending {
            if let Some(f) = self.find(pid, ip) {
                self.hit[f as usize] = true;
            }
        }
        let files = self
            .files
            .iter()
            .zip(&self.hit)
            .enumerate()
            // (perf writes the vdso's build id whether samples hit it or
            // not: its `machine__write_buildid_table`.)
            .filter(|(_, (f, &h))| h || self.all || *f == "[vdso]")
            .map(|(i, (f, _))| Hit {
                name: f.clone(),
                opened: self.opened.get(&(i as u32)).cloned(),
            })
            .collect();
        (self.kernel || self.all, files)
    }
}

/// `name` as process `pid` sees it (through `/proc/PID/root`), if it is a
/// regular file there. Opened without blocking (a FIFO must not hang the
/// recorder) and checked before use.
fn open_in_root(pid: u32, name: &str) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(format!("/proc/{pid}/root{name}"))
        .ok()?;
    f.metadata().ok().filter(|m| m.is_file())?;
    Some(f)
}

/// The GNU build id in ELF notes bytes (`/sys/kernel/notes` holds them raw).
pub fn build_id_in_notes(b: &[u8]) -> Option<Vec<u8>> {
    let mut pos = 0usize;
    let u32_at =
        |p: usize| -> Option<u32> { Some(u32::from_ne_bytes(b.get(p..p + 4)?.try_into().ok()?)) };
    while pos + 12 <= b.len() {
        let namesz = u32_at(pos)? as usize;
        let descsz = u32_at(pos + 4)? as usize;
        let ty = u32_at(pos + 8)?;
        let name_at = pos + 12;
        let desc_at = name_at.checked_add(namesz.checked_add(3)? & !3)?;
        let next = desc_at.checked_add(descsz.checked_add(3)? & !3)?;
        if ty == 3 && b.get(name_at..name_at + namesz) == Some(b"GNU\0") {
            return b.get(desc_at..desc_at + descsz).map(<[u8]>::to_vec);
        }
        pos = next;
    }
    None
}

/// The build id of an ELF file, read lazily (large binaries are not read whole).
pub fn build_id_of_file(path: &str) -> Option<Vec<u8>> {
    use object::Object;
    let f = std::fs::File::open(path).ok()?;
    let cache = object::ReadCache::new(f);
    let obj = object::File::parse(&cache).ok()?;
    obj.build_id().ok().flatten().map(<[u8]>::to_vec)
}

pub fn build_id_of_bytes(b: &[u8]) -> Option<Vec<u8>> {
    use object::Object;
    let obj = object::File::parse(b).ok()?;
    obj.build_id().ok().flatten().map(<[u8]>::to_vec)
}

/// One entry of the BUILD_ID feature (perf's `build_id_event`): header,
/// pid -1 (the host), 24 bytes of id with its size in byte 20, and the
/// name NUL-padded to 64.
pub fn build_id_entry(endian: Endian, kernel: bool, id: &[u8], name: &str) -> Vec<u8> {
    let name_len = (name.len() + 1).div_ceil(64) * 64;
    let size = 8 + 4 + 24 + name_len;
    let misc = if kernel {
        PERF_RECORD_MISC_KERNEL
    } else {
        PERF_RECORD_MISC_USER
    } | (1 << 15);
    let mut v = Vec::with_capacity(size);
    v.extend_from_slice(&endian.put_u32(0));
    v.extend_from_slice(&endian.put_u16(misc));
    v.extend_from_slice(&endian.put_u16(size.min(u16::MAX as usize) as u16));
    v.extend_from_slice(&endian.put_u32(u32::MAX));
    let mut raw = [0u8; 24];
    let n = id.len().min(20);
    raw[..n].copy_from_slice(&id[..n]);
    raw[20] = n as u8;
    v.extend_from_slice(&raw);
    v.extend_from_slice(name.as_bytes());
    v.resize(size, 0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_follow_fork_and_exec_and_late_maps() {
        let mut h = HitBinaries::default();
        h.mmap(10, 0x1000, 0x1000, "/bin/sh");
        h.fork(11, 10);
        h.sample(PERF_RECORD_MISC_USER, 11, 0x1800);
        h.exec(11);
        // Sample before its map (another CPU's buffer), then the map.
        h.sample(PERF_RECORD_MISC_USER, 11, 0x5000);
        h.mmap(11, 0x5000, 0x100, "/bin/loop");
        h.mmap(11, 0x9000, 0x100, "/lib/unused.so");
        h.mmap(11, 0x8000, 0x100, "//anon");
        h.sample(PERF_RECORD_MISC_KERNEL, 11, 0xffff_0000);
        let (k, files) = h.finish();
        assert!(k);
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, vec!["/bin/sh", "/bin/loop"]);
    }

    #[test]
    fn notes_parse_and_garbage_is_none() {
        let mut n = Vec::new();
        n.extend_from_slice(&4u32.to_ne_bytes());
        n.extend_from_slice(&2u32.to_ne_bytes());
        n.extend_from_slice(&1u32.to_ne_bytes());
        n.extend_from_slice(b"Xen\0\x01\x02\0\0");
        n.extend_from_slice(&4u32.to_ne_bytes());
        n.extend_from_slice(&3u32.to_ne_bytes());
        n.extend_from_slice(&3u32.to_ne_bytes());
        n.extend_from_slice(b"GNU\0\xaa\xbb\xcc\0");
        assert_eq!(build_id_in_notes(&n), Some(vec![0xaa, 0xbb, 0xcc]));
        assert_eq!(build_id_in_notes(&n[..20]), None);
        assert_eq!(build_id_in_notes(&[0xff; 40]), None);
    }

    #[test]
    fn entries_read_back() {
        let e = build_id_entry(Endian::Little, false, &[7; 20], "/bin/x");
        let got = perf_data::features::parse_build_ids(&e, Endian::Little);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].filename, "/bin/x");
        assert_eq!(got[0].build_id, vec![7; 20]);
        assert_eq!(got[0].pid, -1);
    }
}
