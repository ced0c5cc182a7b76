//! Records describing what existed before sampling started, read from /proc
//! as perf synthesises them: the kernel's map, and COMM and MMAP2 records
//! for processes already running (`-p`, `-t`, `-a`).

use std::fs;

use perf_data::{
    Endian, PERF_RECORD_CGROUP, PERF_RECORD_COMM, PERF_RECORD_MISC_KERNEL,
    PERF_RECORD_MISC_MMAP_BUILD_ID, PERF_RECORD_MISC_MMAP_DATA, PERF_RECORD_MISC_USER,
    PERF_RECORD_MMAP, PERF_RECORD_MMAP2, PERF_RECORD_NAMESPACES,
};

/// A record to write: type, misc, payload (without the 8-byte header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synth {
    pub type_: u32,
    pub misc: u16,
    pub payload: Vec<u8>,
}

/// Appends `s` NUL-terminated and padded to 8 bytes, as perf does.
fn put_name(v: &mut Vec<u8>, s: &[u8]) {
    v.extend_from_slice(s);
    let padded = (s.len() + 1).div_ceil(8) * 8;
    v.resize(v.len() + padded - s.len(), 0);
}

/// The kernel's text as an MMAP record (pid -1), named `[kernel.kallsyms]_text`
/// and spanning `_text` to `_etext` as perf 6.1 does. None when kallsyms
/// hides the addresses.
pub fn kernel_mmap(endian: Endian, trailer: usize) -> Option<Synth> {
    let ks = fs::read_to_string("/proc/kallsyms").ok()?;
    let (mut text, mut etext) = (None, None);
    for l in ks.lines() {
        let mut it = l.split_whitespace();
        let (Some(a), Some(_), Some(name)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        match name {
            "_text" => text = u64::from_str_radix(a, 16).ok(),
            "_etext" => etext = u64::from_str_radix(a, 16).ok(),
            _ => {}
        }
        if text.is_some() && etext.is_some() {
            break;
        }
    }
    let start = text.filter(|&s| s != 0)?;
    let end = etext.filter(|&e| e > start).unwrap_or(u64::MAX);
    let mut p = Vec::with_capacity(64);
    p.extend_from_slice(&endian.put_u32(u32::MAX));
    p.extend_from_slice(&endian.put_u32(0));
    p.extend_from_slice(&endian.put_u64(start));
    p.extend_from_slice(&endian.put_u64(end - start));
    p.extend_from_slice(&endian.put_u64(start));
    put_name(&mut p, b"[kernel.kallsyms]_text");
    p.resize(p.len() + trailer, 0);
    Some(Synth {
        type_: PERF_RECORD_MMAP,
        misc: PERF_RECORD_MISC_KERNEL,
        payload: p,
    })
}

pub fn comm(endian: Endian, trailer: usize, pid: i32, tid: i32, name: &str) -> Synth {
    let mut p = Vec::with_capacity(32);
    p.extend_from_slice(&endian.put_u32(pid as u32));
    p.extend_from_slice(&endian.put_u32(tid as u32));
    // The kernel's comm is at most 15 bytes.
    let n = name.as_bytes();
    put_name(&mut p, &n[..n.len().min(15)]);
    p.resize(p.len() + trailer, 0);
    Synth {
        type_: PERF_RECORD_COMM,
        misc: 0,
        payload: p,
    }
}

/// One line of /proc/PID/maps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapLine {
    pub start: u64,
    pub end: u64,
    pub perms: [u8; 4],
    pub pgoff: u64,
    pub maj: u32,
    pub min: u32,
    pub ino: u64,
    pub name: String,
}

/// Parses /proc/PID/maps text; malformed lines are skipped.
pub fn parse_maps(text: &str) -> Vec<MapLine> {
    let mut v = Vec::new();
    for l in text.lines() {
        let mut it = l.splitn(6, ' ');
        let (Some(range), Some(perms), Some(off), Some(dev), Some(ino)) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        else {
            continue;
        };
        let name = it.next().unwrap_or("").trim_start().to_string();
        let Some((a, b)) = range.split_once('-') else {
            continue;
        };
        let Some((maj, min)) = dev.split_once(':') else {
            continue;
        };
        let (Ok(start), Ok(end), Ok(pgoff), Ok(maj), Ok(min), Ok(ino)) = (
            u64::from_str_radix(a, 16),
            u64::from_str_radix(b, 16),
            u64::from_str_radix(off, 16),
            u32::from_str_radix(maj, 16),
            u32::from_str_radix(min, 16),
            ino.parse::<u64>(),
        ) else {
            continue;
        };
        let pb = perms.as_bytes();
        if pb.len() < 4 || end < start {
            continue;
        }
        v.push(MapLine {
            start,
            end,
            perms: [pb[0], pb[1], pb[2], pb[3]],
            pgoff,
            maj,
            min,
            ino,
            name,
        });
    }
    v
}

/// An MMAP2 record for one executable mapping of `pid`.
pub fn mmap2(endian: Endian, trailer: usize, pid: i32, m: &MapLine) -> Synth {
    let mut p = Vec::with_capacity(96);
    p.extend_from_slice(&endian.put_u32(pid as u32));
    p.extend_from_slice(&endian.put_u32(pid as u32));
    p.extend_from_slice(&endian.put_u64(m.start));
    p.extend_from_slice(&endian.put_u64(m.end - m.start));
    p.extend_from_slice(&endian.put_u64(m.pgoff));
    p.extend_from_slice(&endian.put_u32(m.maj));
    p.extend_from_slice(&endian.put_u32(m.min));
    p.extend_from_slice(&endian.put_u64(m.ino));
    p.extend_from_slice(&endian.put_u64(0));
    let mut prot = 0u32;
    if m.perms[0] == b'r' {
        prot |= libc::PROT_READ as u32;
    }
    if m.perms[1] == b'w' {
        prot |= libc::PROT_WRITE as u32;
    }
    if m.perms[2] == b'x' {
        prot |= libc::PROT_EXEC as u32;
    }
    let flags = if m.perms[3] == b's' {
        libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE
    } as u32;
    p.extend_from_slice(&endian.put_u32(prot));
    p.extend_from_slice(&endian.put_u32(flags));
    let name = if m.name.is_empty() { "//anon" } else { &m.name };
    put_name(&mut p, name.as_bytes());
    p.resize(p.len() + trailer, 0);
    Synth {
        type_: PERF_RECORD_MMAP2,
        misc: PERF_RECORD_MISC_USER,
        payload: p,
    }
}

/// `--buildid-mmap`: an MMAP2 record of a file with a build id carries it
/// in place of device and inode (perf's `PERF_RECORD_MISC_MMAP_BUILD_ID`
/// form, as the kernel writes it with `attr.build_id`). `ids`: the build
/// id of each file seen so far.
pub fn add_build_id(r: &mut Synth, ids: &mut std::collections::HashMap<String, Option<Vec<u8>>>) {
    if r.type_ != PERF_RECORD_MMAP2 || r.payload.len() < 64 {
        return;
    }
    let name_end = r.payload[64..]
        .iter()
        .position(|&b| b == 0)
        .map_or(r.payload.len(), |n| 64 + n);
    let name = String::from_utf8_lossy(&r.payload[64..name_end]).into_owned();
    if !name.starts_with('/') {
        return;
    }
    let id = ids
        .entry(name)
        .or_insert_with_key(|n| crate::buildid::build_id_of_file(n))
        .clone();
    let Some(id) = id.filter(|i| i.len() <= 20) else {
        return;
    };
    // pid, tid, start, len, pgoff; then size, 3 reserved bytes, 20 of id.
    let f = &mut r.payload[32..56];
    f.fill(0);
    f[0] = id.len() as u8;
    f[4..4 + id.len()].copy_from_slice(&id);
    r.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
}

/// `--buildid-mmap`: the kernel's MMAP record as perf writes it then, an
/// MMAP2 with the kernel's build id (from its notes), no protection bits,
/// private.
pub fn kernel_mmap2_with_build_id(endian: Endian, trailer: usize, k: &Synth) -> Synth {
    let id = std::fs::read("/sys/kernel/notes")
        .ok()
        .and_then(|b| crate::buildid::build_id_in_notes(&b))
        .filter(|i| i.len() <= 20);
    let body = &k.payload[..k.payload.len().saturating_sub(trailer)];
    if k.type_ != PERF_RECORD_MMAP || body.len() < 32 {
        return k.clone();
    }
    let mut p = Vec::with_capacity(body.len() + 32);
    p.extend_from_slice(&body[..32]);
    let mut f = [0u8; 24];
    if let Some(id) = &id {
        f[0] = id.len() as u8;
        f[4..4 + id.len()].copy_from_slice(id);
    }
    p.extend_from_slice(&f);
    p.extend_from_slice(&endian.put_u32(0));
    p.extend_from_slice(&endian.put_u32(libc::MAP_PRIVATE as u32));
    p.extend_from_slice(&body[32..]);
    p.resize(p.len() + trailer, 0);
    Synth {
        type_: PERF_RECORD_MMAP2,
        misc: k.misc
            | if id.is_some() {
                PERF_RECORD_MISC_MMAP_BUILD_ID
            } else {
                0
            },
        payload: p,
    }
}

/// perf's order of a NAMESPACES record's entries (the kernel's
/// `NET_NS_INDEX` ... `CGROUP_NS_INDEX`), by their /proc/PID/ns names.
const NAMESPACES: [&str; 7] = ["net", "uts", "ipc", "pid", "user", "mnt", "cgroup"];

/// `--namespaces`: a thread's namespaces (device and inode of each
/// /proc/PID/task/TID/ns link) as a NAMESPACES record; zeros for those it
/// cannot read, as perf writes them.
pub fn namespaces(endian: Endian, trailer: usize, pid: i32, tid: i32) -> Synth {
    use std::os::unix::fs::MetadataExt;
    let mut p = Vec::with_capacity(16 + 16 * NAMESPACES.len() + trailer);
    p.extend_from_slice(&endian.put_u32(pid as u32));
    p.extend_from_slice(&endian.put_u32(tid as u32));
    p.extend_from_slice(&endian.put_u64(NAMESPACES.len() as u64));
    for n in NAMESPACES {
        let (dev, ino) = fs::metadata(format!("/proc/{pid}/task/{tid}/ns/{n}"))
            .map(|m| (m.dev(), m.ino()))
            .unwrap_or((0, 0));
        p.extend_from_slice(&endian.put_u64(dev));
        p.extend_from_slice(&endian.put_u64(ino));
    }
    p.resize(p.len() + trailer, 0);
    Synth {
        type_: PERF_RECORD_NAMESPACES,
        misc: 0,
        payload: p,
    }
}

/// `--all-cgroups`: a CGROUP record for each cgroup of the cgroup2
/// hierarchy (its id, the directory's inode, which the kernel gives as the
/// cgroup id; its path from the root), walked depth first as perf walks it.
pub fn cgroups(endian: Endian, trailer: usize) -> Vec<Synth> {
    let mounts = fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let Some(root) = mounts.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (_, dir, kind) = (f.next()?, f.next()?, f.next()?);
        (kind == "cgroup2").then(|| dir.to_owned())
    }) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(&root)];
    while let Some(dir) = stack.pop() {
        use std::os::unix::fs::MetadataExt;
        let Ok(m) = fs::metadata(&dir) else {
            continue;
        };
        let rel = dir
            .strip_prefix(&root)
            .map(|r| format!("/{}", r.display()))
            .unwrap_or_else(|_| "/".into());
        let mut p = Vec::with_capacity(16 + rel.len() + trailer);
        p.extend_from_slice(&endian.put_u64(m.ino()));
        put_name(&mut p, rel.as_bytes());
        p.resize(p.len() + trailer, 0);
        out.push(Synth {
            type_: PERF_RECORD_CGROUP,
            misc: 0,
            payload: p,
        });
        if out.len() >= 100_000 {
            break;
        }
        let mut subdirs: Vec<_> = fs::read_dir(&dir)
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        subdirs.sort();
        stack.extend(subdirs.into_iter().rev());
    }
    out
}

/// The thread ids of a process (just `pid` if its task list cannot be read).
pub fn threads_of(pid: i32) -> Vec<i32> {
    let mut v = numbered_entries(&format!("/proc/{pid}/task"));
    if v.is_empty() {
        v.push(pid);
    }
    v
}

/// The entries of `dir` named by a number, sorted (none if it cannot be read).
fn numbered_entries(dir: &str) -> Vec<i32> {
    let mut v: Vec<i32> = fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// Every thread of the system now: each process's threads, by process id.
pub fn all_threads() -> Vec<i32> {
    all_pids().into_iter().flat_map(threads_of).collect()
}

/// The process (thread group) a thread belongs to.
pub fn tgid_of(tid: i32) -> Option<i32> {
    let s = fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Every process id in /proc.
pub fn all_pids() -> Vec<i32> {
    numbered_entries("/proc")
}

fn comm_of(pid: i32, tid: i32) -> Option<String> {
    let s = fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).ok()?;
    Some(s.trim_end_matches('\n').to_string())
}

/// COMM records for `tids` of process `pid` (all its threads when `tids` is
/// None), then MMAP2 records of its executable mappings. A process that
/// exits meanwhile yields what could be read.
pub fn process(
    endian: Endian,
    trailer: usize,
    pid: i32,
    tids: Option<&[i32]>,
    data_maps: bool,
) -> Vec<Synth> {
    let mut out = Vec::new();
    let all;
    let tids = match tids {
        Some(t) => t,
        None => {
            all = threads_of(pid);
            &all
        }
    };
    for &tid in tids {
        if let Some(c) = comm_of(pid, tid) {
            out.push(comm(endian, trailer, pid, tid, &c));
        }
    }
    if let Ok(maps) = fs::read_to_string(format!("/proc/{pid}/maps")) {
        for m in parse_maps(&maps) {
            if m.perms[2] == b'x' {
                out.push(mmap2(endian, trailer, pid, &m));
            } else if data_maps {
                let mut r = mmap2(endian, trailer, pid, &m);
                r.misc |= PERF_RECORD_MISC_MMAP_DATA;
                out.push(r);
            }
        }
    }
    out
}

/// Parses a CPU list as the kernel and perf write it: `0-3,8,10-11`.
pub fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 65536 {
                    return None;
                }
                v.extend(a..=b);
            }
            None => v.push(part.trim().parse().ok()?),
        }
    }
    v.sort_unstable();
    v.dedup();
    if v.is_empty() {
        None
    } else {
        Some(v)
    }
}

/// The online CPUs.
pub fn online_cpus() -> Vec<u32> {
    fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|s| parse_cpu_list(&s))
        .unwrap_or_else(|| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            (0..n as u32).collect()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_lines_parse_and_bad_ones_are_skipped() {
        let t =
            "55d4c0a00000-55d4c0a01000 r-xp 00001000 fe:00 10043819                   /tmp/a b\n\
                 7ffd1000-7ffd3000 r-xp 00000000 00:00 0                          [vdso]\n\
                 7f00-7f10 rw-p 00000000 00:00 0 \n\
                 garbage\n\
                 1-0 r-xp 0 0:0 0 x\n";
        let m = parse_maps(t);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].name, "/tmp/a b");
        assert_eq!((m[0].maj, m[0].ino, m[0].pgoff), (0xfe, 10043819, 0x1000));
        assert_eq!(m[1].name, "[vdso]");
        assert_eq!(m[2].name, "");
        let r = mmap2(Endian::Little, 16, 7, &m[2]);
        // 8 pid/tid + 3*8 + 2*4 + 2*8 + 2*4 = 64, "//anon\0" padded to 8, trailer.
        assert_eq!(r.payload.len(), 64 + 8 + 16);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-2,5\n"), Some(vec![0, 1, 2, 5]));
        assert_eq!(parse_cpu_list("3,1,1"), Some(vec![1, 3]));
        for bad in ["", "a", "2-1", "0-99999999", "-"] {
            assert_eq!(parse_cpu_list(bad), None, "{bad}");
        }
    }

    #[test]
    fn names_are_padded_to_eight_with_a_nul() {
        let c = comm(Endian::Little, 0, 1, 1, "12345678");
        assert_eq!(c.payload.len(), 8 + 16);
        let c = comm(Endian::Little, 0, 1, 1, "1234567");
        assert_eq!(c.payload.len(), 8 + 8);
    }
}
