//! The session model perf replays from a recording's records: processes,
//! threads, their comms and address-space maps over time, and the DSOs the
//! maps show. Follows perf's rules (fork copies or shares the map set, exec
//! replaces it, anonymous executable memory is a JIT map, ...).

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use perf_data::consts::*;
use perf_data::records::RecordData;
use perf_data::sample::Sample;

const PROT_EXEC: u32 = 4;

/// One mapping: its end, the file offset its start shows and the DSO it
/// shows (an index into `Machine::dsos`).
#[derive(Debug, Clone)]
struct Map {
    end: u64,
    pgoff: u64,
    dso: u32,
    /// Protection and sharing as `--mmaps` prints them (`MODE_*` bits).
    mode: u8,
}

const MODE_READ: u8 = 1;
const MODE_WRITE: u8 = 2;
const MODE_EXEC: u8 = 4;
const MODE_SHARED: u8 = 8;
/// Memory without a file behind it (anonymous, huge pages, heap, stack,
/// SysV shared memory): perf's `identity__map_ip`, addresses as they are.
const MODE_IDENTITY: u8 = 16;

/// mmap(2)'s flag for huge pages (memory perf counts as anonymous).
const MAP_HUGETLB: u32 = 0x40000;

/// A map's `MODE_*` bits from an mmap's protection and flags.
fn map_mode(prot: u32, flags: u32) -> u8 {
    const PROT_READ: u32 = 1;
    const PROT_WRITE: u32 = 2;
    const MAP_SHARED: u32 = 1;
    let mut m = 0;
    for (bit, on) in [
        (MODE_READ, prot & PROT_READ != 0),
        (MODE_WRITE, prot & PROT_WRITE != 0),
        (MODE_EXEC, prot & PROT_EXEC != 0),
        (MODE_SHARED, flags & MAP_SHARED != 0),
    ] {
        if on {
            m |= bit;
        }
    }
    m
}

/// A user-space mapping as an unwinder needs it: where it lies in the
/// process, which file offset its start shows, and the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapInfo<'a> {
    pub start: u64,
    pub end: u64,
    pub pgoff: u64,
    pub filename: &'a str,
    /// The DSO the map shows (an index into [`Machine::dsos`]).
    pub dso: usize,
}

/// Non-overlapping maps by start address.
#[derive(Debug, Clone, Default)]
struct Maps {
    /// Shared with the address space it was copied from at a fork until
    /// either changes (most forked processes exec or exit first; perf keeps
    /// a process's maps after its exit, so copies would add up).
    by_start: Arc<BTreeMap<u64, Map>>,
    /// Bumped by every change, so caches built from the maps (an
    /// unwinder's module set) know when they are stale.
    generation: u64,
    /// The start addresses each change touched (a map added, removed or
    /// trimmed there), with the generation it made: a cache built at an
    /// older generation catches up by looking at those starts only.
    log: Vec<(u64, u64)>,
    /// Changes up to this generation are no longer in `log`.
    log_floor: u64,
    /// For a fork's copy of its parent's maps: the parent's address space,
    /// its generation when copied, and this one's generation then (see
    /// [`Machine::maps_copied_from`]).
    copied_from: Option<(usize, u64, u64)>,
}

/// Kept changes per address space, at least (the log is cut when it grows
/// past this and twice the maps).
const MIN_LOG: usize = 256;

impl Maps {
    /// Inserts a map, trimming or splitting the maps it overlaps, as a new
    /// mmap() over old ones does.
    fn insert(&mut self, start: u64, end: u64, pgoff: u64, dso: usize, mode: u8) {
        let dso = dso as u32;
        self.generation += 1;
        if self.log.len() >= MIN_LOG.max(2 * self.by_start.len()) {
            self.log.clear();
            self.log_floor = self.generation - 1;
        }
        let overlapping: Vec<u64> = self
            .by_start
            .range(..end.max(start.saturating_add(1)))
            .rev()
            .take_while(|(_, m)| m.end > start)
            .map(|(s, _)| *s)
            .collect();
        let by_start = Arc::make_mut(&mut self.by_start);
        for s in overlapping {
            let Some(old) = by_start.remove(&s) else {
                continue;
            };
            self.log.push((self.generation, s));
            if s < start {
                by_start.insert(
                    s,
                    Map {
                        end: start,
                        pgoff: old.pgoff,
                        dso: old.dso,
                        mode: old.mode,
                    },
                );
            }
            if old.end > end {
                self.log.push((self.generation, end));
                by_start.insert(
                    end,
                    Map {
                        end: old.end,
                        // The right remainder starts further into the file.
                        pgoff: old.pgoff.wrapping_add(end.wrapping_sub(s)),
                        dso: old.dso,
                        mode: old.mode,
                    },
                );
            }
        }
        self.log.push((self.generation, start));
        by_start.insert(
            start,
            Map {
                end,
                pgoff,
                dso,
                mode,
            },
        );
    }

    /// The starts changed after generation `since`, or None when the log
    /// no longer reaches back that far.
    fn changed_since(&self, since: u64) -> Option<impl Iterator<Item = u64> + '_> {
        (since >= self.log_floor && since <= self.generation).then(|| {
            let i = self.log.partition_point(|&(g, _)| g <= since);
            self.log[i..].iter().map(|&(_, s)| s)
        })
    }

    fn find(&self, addr: u64) -> Option<&Map> {
        self.find_with_start(addr).map(|(_, m)| m)
    }

    fn find_with_start(&self, addr: u64) -> Option<(u64, &Map)> {
        let (&s, m) = self.by_start.range(..=addr).next_back()?;
        (addr < m.end).then_some((s, m))
    }
}

/// The map an address falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapHit {
    pub dso: usize,
    pub start: u64,
    pub end: u64,
    pub pgoff: u64,
    /// The map translates addresses as they are (see [`Self::map_ip`]).
    pub identity: bool,
    /// Mapped `MAP_SHARED`, and executable (`PROT_EXEC`).
    pub shared: bool,
    pub exec: bool,
}

/// A file's identity as an MMAP2 record gives it: device major and minor
/// numbers, inode and inode generation (all 0 for memory without a file,
/// or where the record carries a build id instead).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DsoId {
    pub maj: u32,
    pub min: u32,
    pub ino: u64,
    pub ino_generation: u64,
}

impl DsoId {
    pub fn is_empty(&self) -> bool {
        *self == DsoId::default()
    }
}

impl MapHit {
    /// perf's `map__map_ip`: the address as the DSO sees it. The kernel's
    /// map, BPF programs' and maps of memory without a file (anonymous
    /// memory, JIT code, heap, stack) keep addresses as they are; a kernel
    /// module's map and a file's map give offsets.
    pub fn map_ip(&self, addr: u64) -> u64 {
        if self.identity {
            addr
        } else {
            addr.wrapping_sub(self.start).wrapping_add(self.pgoff)
        }
    }
}

/// A thread as `report --tasks` shows it (see [`Machine::tasks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub pid: i32,
    pub tid: i32,
    pub ppid: i32,
    pub comm: String,
    /// How many ancestors are listed above it.
    pub depth: usize,
    /// Its process's user-space maps by address (`--mmaps`).
    pub maps: Vec<TaskMap>,
}

/// One map as `report --mmaps` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskMap {
    pub start: u64,
    pub end: u64,
    pub read: bool,
    pub write: bool,
    pub exec: bool,
    pub shared: bool,
    pub pgoff: u64,
    /// The inode of the first MMAP2 naming its file (0 when unknown).
    pub ino: u64,
    pub name: String,
}

/// A thread as the resolver needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Index of the thread in this machine (stable for the whole replay).
    pub index: usize,
    pub pid: i32,
    pub tid: i32,
    /// The address space the thread uses (shared by the process's threads).
    pub maps: usize,
}

#[derive(Debug)]
struct Thread {
    pid: i32,
    tid: i32,
    /// None until a COMM record (or a fork from a named parent) sets it.
    comm: Option<String>,
    /// Index into `Machine::maps`; threads of one process share it.
    maps: usize,
    /// The tid of the thread it forked from (-1: none seen).
    ppid: i32,
    /// Its cgroup namespace (device, inode) from NAMESPACES records;
    /// zeros before one.
    cgroup_ns: (u64, u64),
}

/// A binary perf knows by name, in the order perf first met it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dso {
    pub name: String,
    pub build_id: Option<Vec<u8>>,
    /// A sample's address fell into one of its maps.
    pub hit: bool,
    /// A function of a jitdump (see [`crate::jit`]): the DSO has no file.
    pub jit: Option<std::sync::Arc<crate::jit::JitCode>>,
}

impl Dso {
    /// Whether the DSO's addresses are the process's own, as perf prints
    /// them: maps without a file behind them (JIT code, heap, stack, SysV
    /// shared memory, anonymous memory) translate addresses as they are.
    pub fn maps_identity(&self) -> bool {
        let n = self.name.as_str();
        dso_short_name(n).starts_with("[JIT]")
            || n.starts_with("[stack")
            || n == "[heap]"
            || n.starts_with("/SYSV")
            || n.starts_with("//anon")
    }

    /// The name `perf script` prints for a callchain frame in this DSO:
    /// kernel modules by their short `[module]` names, the others by their
    /// long names (a sample's own location prints the long name always).
    pub fn chain_name(&self) -> String {
        let short = dso_short_name(&self.name);
        let module =
            self.name.starts_with('/') && short.starts_with('[') && !short.starts_with("[JIT]");
        if module {
            short
        } else {
            self.name.clone()
        }
    }
}

/// Where a sample's address landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Landing {
    Dso(usize),
    /// perf looked and found no map.
    NotFound,
    /// The cpu mode is neither host kernel nor host user.
    Hypervisor,
}

/// The threads, maps and DSOs perf's report tracks while it replays a
/// recording, reduced to what `-D` and `buildid-list` show: which thread
/// (and comm) a sample belongs to and which DSO its address falls in.
/// Feed it the records in perf's delivery order.
#[derive(Debug)]
pub struct Machine {
    threads: Vec<Thread>,
    by_tid: HashMap<i32, usize>,
    maps: Vec<Maps>,
    kernel: Maps,
    dsos: Vec<Dso>,
    dso_by_name: HashMap<String, usize>,
    /// Per DSO: the file identity of the MMAP2 that named it (`--mmaps`,
    /// the `dcacheline` key).
    dso_ids: Vec<DsoId>,
    exit_removes_thread: bool,
    kernel_reloc: Option<(String, u64)>,
    /// Cgroup paths by id (CGROUP records).
    cgroups: HashMap<u64, String>,
    /// JIT code of jitdumps, to be mapped when the session reaches it.
    jit: crate::jit::JitPlacer,
    /// The time of the last record [`Machine::advance`] saw.
    now: Option<u64>,
}

impl Default for Machine {
    fn default() -> Self {
        Self::new()
    }
}

impl Machine {
    pub fn new() -> Self {
        let mut m = Machine {
            threads: Vec::new(),
            by_tid: HashMap::default(),
            maps: Vec::new(),
            kernel: Maps::default(),
            dsos: Vec::new(),
            dso_by_name: HashMap::default(),
            dso_ids: Vec::new(),
            exit_removes_thread: false,
            kernel_reloc: None,
            cgroups: HashMap::default(),
            jit: Default::default(),
            now: None,
        };
        // perf registers the idle task before reading any record.
        let t = m.findnew(0, 0);
        m.threads[t].comm = Some("swapper".into());
        m
    }

    /// perf's report keeps exited threads; `buildid-list` forgets them.
    pub fn set_exit_removes_thread(&mut self, on: bool) {
        self.exit_removes_thread = on;
    }

    pub fn dsos(&self) -> &[Dso] {
        &self.dsos
    }

    /// Whether the recording's samples are stamped with CLOCK_MONOTONIC
    /// (`-k mono`), the clock of jitdumps: JIT code is then placed by time.
    pub fn set_monotonic_clock(&mut self, on: bool) {
        self.jit.monotonic = on;
    }

    /// Whether JIT code waits to be placed: the session then calls
    /// [`Machine::advance`] with each record's time.
    pub fn jit_pending(&self) -> bool {
        !self.jit.pending.is_empty()
    }

    /// Moves the model to time `t`: the JIT code loaded by then is mapped.
    pub fn advance(&mut self, t: u64) {
        self.now = Some(t);
        self.place_jit(t);
    }

    fn place_jit(&mut self, t: u64) {
        while self.jit.pending.front().is_some_and(|p| p.time <= t) {
            let Some(p) = self.jit.pending.pop_front() else {
                break;
            };
            let d = self.findnew_dso(&p.dso);
            self.dsos[d].jit = Some(p.code);
            let th = self.findnew(p.pid, p.tid);
            let maps = self.threads[th].maps;
            let end = p.addr.wrapping_add(p.len);
            self.maps[maps].insert(
                p.addr,
                end,
                crate::jit::TEXT_OFFSET,
                d,
                MODE_EXEC | MODE_SHARED,
            );
        }
    }

    /// The DSO named `name`, created if new.
    pub fn findnew_dso(&mut self, name: &str) -> usize {
        if let Some(&i) = self.dso_by_name.get(name) {
            return i;
        }
        self.dsos.push(Dso {
            name: name.to_string(),
            build_id: None,
            hit: false,
            jit: None,
        });
        self.dso_by_name
            .insert(name.to_string(), self.dsos.len() - 1);
        self.dsos.len() - 1
    }

    pub fn set_build_id(&mut self, name: &str, build_id: &[u8]) {
        let d = self.findnew_dso(name);
        self.dsos[d].build_id = Some(build_id.to_vec());
    }

    fn new_maps(&mut self) -> usize {
        self.maps.push(Maps::default());
        self.maps.len() - 1
    }

    /// The thread `tid`, adopting `pid` if it is known now, without creating it.
    fn find(&mut self, pid: i32, tid: i32) -> Option<usize> {
        let t = *self.by_tid.get(&tid)?;
        if pid != -1 && self.threads[t].pid != pid {
            self.threads[t].pid = pid;
            if pid != tid {
                let leader = self.findnew(pid, pid);
                self.threads[t].maps = self.threads[leader].maps;
            }
        }
        Some(t)
    }

    fn findnew(&mut self, pid: i32, tid: i32) -> usize {
        if let Some(t) = self.find(pid, tid) {
            return t;
        }
        let maps = if pid == -1 || pid == tid {
            self.new_maps()
        } else {
            let leader = self.findnew(pid, pid);
            self.threads[leader].maps
        };
        self.threads.push(Thread {
            pid,
            tid,
            comm: None,
            maps,
            ppid: -1,
            cgroup_ns: (0, 0),
        });
        let t = self.threads.len() - 1;
        self.by_tid.insert(tid, t);
        t
    }

    fn remove(&mut self, t: usize) {
        let tid = self.threads[t].tid;
        if self.by_tid.get(&tid) == Some(&t) {
            self.by_tid.remove(&tid);
        }
    }

    /// Applies `rec` if it is a record that changes the model (COMM, FORK,
    /// EXIT, MMAP, ...; see [`Machine::apply`]).
    pub fn apply_record(&mut self, rec: &perf_data::Record<'_>) -> Option<(i32, i32)> {
        let t = rec.type_();
        if t == perf_data::PERF_RECORD_SAMPLE || t >= perf_data::PERF_RECORD_HEADER_ATTR {
            return None;
        }
        let (data, _) = rec.decode().ok()?;
        self.apply(rec.raw.misc, &data)
    }

    /// Applies a record that changes threads or maps. For a FORK whose
    /// parent was known under another pid, returns that thread's old
    /// pid/tid (perf drops it and says so in `-D` output).
    pub fn apply(&mut self, misc: u16, data: &RecordData<'_>) -> Option<(i32, i32)> {
        match *data {
            RecordData::Mmap(mm) => {
                let prot = if misc & PERF_RECORD_MISC_MMAP_DATA != 0 {
                    0
                } else {
                    PROT_EXEC
                };
                let (pid, tid) = (mm.pid as i32, mm.tid as i32);
                let how = (prot, 0, DsoId::default());
                self.mmap(misc, pid, tid, mm.addr, mm.len, mm.pgoff, how, mm.filename);
            }
            RecordData::Mmap2(mm) => {
                let (pid, tid) = (mm.pid as i32, mm.tid as i32);
                let id = match mm.id {
                    perf_data::records::Mmap2Id::Inode {
                        maj,
                        min,
                        ino,
                        ino_generation,
                    } => DsoId {
                        maj,
                        min,
                        ino,
                        ino_generation,
                    },
                    perf_data::records::Mmap2Id::BuildId(_) => DsoId::default(),
                };
                let how = (mm.prot, mm.flags, id);
                self.mmap(misc, pid, tid, mm.addr, mm.len, mm.pgoff, how, mm.filename);
            }
            RecordData::Comm(c) => {
                let t = self.findnew(c.pid as i32, c.tid as i32);
                self.threads[t].comm = Some(String::from_utf8_lossy(c.comm).into_owned());
            }
            RecordData::Fork(f) => return self.fork(misc, &f),
            RecordData::Cgroup { id, path } => {
                self.cgroups
                    .insert(id, String::from_utf8_lossy(path).into_owned());
            }
            RecordData::Namespaces {
                pid,
                tid,
                namespaces,
            } => {
                // (dev, ino) pairs in the kernel's order; cgroup is the 7th.
                const CGROUP_NS_INDEX: usize = 6;
                let t = self.findnew(pid as i32, tid as i32);
                if let (Some(dev), Some(ino)) = (
                    namespaces.get(2 * CGROUP_NS_INDEX),
                    namespaces.get(2 * CGROUP_NS_INDEX + 1),
                ) {
                    self.threads[t].cgroup_ns = (dev, ino);
                }
            }
            RecordData::Exit(f) => {
                // Looking a thread up adopts the pid the record gives.
                if let Some(t) = self.find(f.pid as i32, f.tid as i32) {
                    if self.exit_removes_thread {
                        self.remove(t);
                    }
                }
            }
            RecordData::Ksymbol {
                addr,
                len,
                flags,
                name,
                ..
            } => self.ksymbol(addr, len, flags, name),
            _ => {}
        }
        None
    }

    fn fork(&mut self, misc: u16, f: &perf_data::records::ForkExit) -> Option<(i32, i32)> {
        let (pid, tid, ppid, ptid) = (f.pid as i32, f.tid as i32, f.ppid as i32, f.ptid as i32);
        let existing = self.find(pid, tid);
        let mut parent = self.findnew(ppid, ptid);
        let mut dropped = None;
        if self.threads[parent].pid != ppid {
            dropped = Some((self.threads[parent].pid, self.threads[parent].tid));
            self.remove(parent);
            parent = self.findnew(ppid, ptid);
        }
        if let Some(t) = existing {
            self.remove(t);
        }
        let child = self.findnew(pid, tid);
        self.threads[child].ppid = self.threads[parent].tid;
        if let Some(c) = self.threads[parent].comm.clone() {
            self.threads[child].comm = Some(c);
        }
        // A new process gets a copy of its parent's maps, except for forks
        // perf synthesized from /proc (marked with the exec bit), whose maps
        // follow as MMAP records.
        let (cm, pm) = (self.threads[child].maps, self.threads[parent].maps);
        if self.threads[child].pid != self.threads[parent].pid
            && cm != pm
            && misc & PERF_RECORD_MISC_FORK_EXEC == 0
        {
            // Caches keyed by (maps, generation) must see the change, and
            // cannot catch up from the parent's log (not copied).
            let parent_generation = self.maps[pm].generation;
            let generation = parent_generation.max(self.maps[cm].generation) + 1;
            self.maps[cm] = Maps {
                by_start: self.maps[pm].by_start.clone(),
                generation,
                log: Vec::new(),
                log_floor: generation,
                copied_from: Some((pm, parent_generation, generation)),
            };
        }
        dropped
    }

    #[allow(clippy::too_many_arguments)]
    fn mmap(
        &mut self,
        misc: u16,
        pid: i32,
        tid: i32,
        addr: u64,
        len: u64,
        pgoff: u64,
        (prot, flags, id): (u32, u32, DsoId),
        name: &[u8],
    ) {
        let end = addr.wrapping_add(len);
        let name = String::from_utf8_lossy(name);
        if misc & PERF_RECORD_MISC_CPUMODE_MASK == PERF_RECORD_MISC_KERNEL {
            if let Some(suffix) = name.strip_prefix("[kernel.kallsyms]") {
                if self.kernel_reloc.is_none() && !suffix.is_empty() {
                    self.kernel_reloc = Some((suffix.to_owned(), pgoff));
                }
                let end = if addr == 0 && len == 0 { u64::MAX } else { end };
                let d = self.findnew_dso("[kernel.kallsyms]");
                self.kernel.insert(addr, end, pgoff, d, MODE_IDENTITY);
            } else {
                // A module: perf's map__map_ip (its unresolved addresses are
                // offsets into the module's map).
                let d = self.findnew_dso(&name);
                self.kernel.insert(addr, end, pgoff, d, 0);
            }
            return;
        }
        if prot & PROT_EXEC != 0 && name.ends_with(".dump") {
            // A jitdump's marker: its code is mapped as its time comes
            // (at once where it cannot be placed by time).
            self.jit.marker(&name, pid, self.now);
            let now = self.now.unwrap_or(u64::MAX);
            self.place_jit(now);
        }
        let t = self.findnew(pid, tid);
        let anon = name.starts_with("//anon")
            || name.starts_with("/dev/zero")
            || name.starts_with("/anon_hugepage")
            || flags & MAP_HUGETLB != 0;
        let no_dso = name.starts_with("[stack") || name.starts_with("/SYSV") || name == "[heap]";
        // Executable anonymous memory is JIT code perf looks up in perf-PID.map.
        let d = if (anon || no_dso) && prot & PROT_EXEC != 0 {
            self.findnew_dso(&format!("/tmp/perf-{pid}.map"))
        } else {
            self.findnew_dso(&name)
        };
        // perf maps the vdso from offset 0 whatever the record says (old
        // kernels gave its address there).
        let pgoff = if &*name == "[vdso]" { 0 } else { pgoff };
        let maps = self.threads[t].maps;
        let identity = if anon || no_dso { MODE_IDENTITY } else { 0 };
        self.maps[maps].insert(addr, end, pgoff, d, map_mode(prot, flags) | identity);
        if !id.is_empty() {
            if self.dso_ids.len() <= d {
                self.dso_ids.resize(d + 1, DsoId::default());
            }
            // perf's DSO keeps the identity of the first map that gave it
            // one.
            if self.dso_ids[d].is_empty() {
                self.dso_ids[d] = id;
            }
        }
    }

    fn ksymbol(&mut self, addr: u64, len: u32, flags: u16, name: &[u8]) {
        if flags & 1 != 0 {
            if Arc::make_mut(&mut self.kernel.by_start)
                .remove(&addr)
                .is_some()
            {
                self.kernel.generation += 1;
            }
        } else if self.kernel.find(addr).is_none() {
            let end = addr.wrapping_add(u64::from(len));
            let d = self.findnew_dso(&String::from_utf8_lossy(name));
            self.kernel.insert(addr, end, 0, d, MODE_IDENTITY);
        }
    }

    /// The user-space maps of thread `tid` (of process `pid`, -1 if
    /// unknown) as they stand now, by start address; empty for a thread
    /// never seen. An unwinder builds its module set from these.
    pub fn user_maps(&self, pid: i32, tid: i32) -> Vec<MapInfo<'_>> {
        let t = match self.by_tid.get(&tid) {
            Some(&t) => t,
            None if pid != -1 => match self.by_tid.get(&pid) {
                Some(&t) => t,
                None => return Vec::new(),
            },
            None => return Vec::new(),
        };
        self.iter_maps(self.threads[t].maps).collect()
    }

    /// The thread (comm, tid) and landing of a sample's address, marking
    /// the DSO hit. A thread without a comm shows as `:tid`, like perf.
    /// The current comm of thread `tid` (perf shows a thread by its last comm).
    pub fn thread_comm(&self, tid: i32) -> Option<String> {
        let th = &self.threads[*self.by_tid.get(&tid)?];
        Some(th.comm.clone().unwrap_or_else(|| format!(":{}", th.tid)))
    }

    /// The thread of a sample, created if new, as perf does.
    pub fn sample_thread(&mut self, s: &Sample<'_>) -> ThreadInfo {
        let pid = s.pid.map_or(-1, |p| p as i32);
        let tid = s.tid.map_or(-1, |t| t as i32);
        let t = self.findnew(pid, tid);
        self.thread_info(t)
    }

    pub fn thread_info(&self, t: usize) -> ThreadInfo {
        let th = &self.threads[t];
        ThreadInfo {
            index: t,
            pid: th.pid,
            tid: th.tid,
            maps: th.maps,
        }
    }

    /// The comm of thread (pid, tid), the thread made if it is new (as
    /// perf's `machine__findnew_thread`): `:tid` before a COMM named it.
    pub fn findnew_comm(&mut self, pid: i32, tid: i32) -> String {
        let t = self.findnew(pid, tid);
        let th = &self.threads[t];
        th.comm.clone().unwrap_or_else(|| format!(":{}", th.tid))
    }

    /// A cgroup's path from CGROUP records.
    pub fn cgroup_name(&self, id: u64) -> Option<&str> {
        self.cgroups.get(&id).map(String::as_str)
    }

    /// How many threads the machine has made (indices `0..n`).
    pub fn nr_threads(&self) -> usize {
        self.threads.len()
    }

    /// A thread's cgroup namespace (device, inode): zeros where no
    /// NAMESPACES record named it (perf's `cgroup_id` key).
    pub fn cgroup_ns_of(&self, t: usize) -> (u64, u64) {
        self.threads.get(t).map_or((0, 0), |th| th.cgroup_ns)
    }

    /// A thread's comm now; None before any COMM record named it.
    pub fn comm_of(&self, t: usize) -> Option<&str> {
        self.threads[t].comm.as_deref()
    }

    /// The map `addr` falls in, in the kernel's maps or in the address
    /// space `maps` (from [`ThreadInfo::maps`]).
    pub fn find_map(&self, maps: usize, kernel: bool, addr: u64) -> Option<MapHit> {
        let m = if kernel {
            &self.kernel
        } else {
            self.maps.get(maps)?
        };
        m.find_with_start(addr).map(|(start, m)| MapHit {
            dso: m.dso as usize,
            start,
            end: m.end,
            pgoff: m.pgoff,
            identity: m.mode & MODE_IDENTITY != 0,
            shared: m.mode & MODE_SHARED != 0,
            exec: m.mode & MODE_EXEC != 0,
        })
    }

    /// The file identity of DSO `d` (see [`DsoId`]; empty where unknown).
    pub fn dso_id(&self, d: usize) -> DsoId {
        self.dso_ids.get(d).copied().unwrap_or_default()
    }

    /// The address space of process `pid`, if the process is known.
    pub fn process_maps(&self, pid: i32) -> Option<usize> {
        let t = *self.by_tid.get(&pid)?;
        (self.threads[t].pid == pid).then(|| self.threads[t].maps)
    }

    /// Changes whenever the address space `maps` changes.
    pub fn maps_generation(&self, maps: usize) -> u64 {
        self.maps.get(maps).map_or(0, |m| m.generation)
    }

    /// Where address space `maps` came from, if it is a fork's copy of its
    /// parent's: (the parent's address space, the parent's generation when
    /// copied, this one's generation then). A cache of the parent's maps at
    /// that generation is a cache of these at theirs, and catches up from
    /// there with [`Machine::maps_changed_since`] (while the log reaches
    /// back that far).
    pub fn maps_copied_from(&self, maps: usize) -> Option<(usize, u64, u64)> {
        self.maps.get(maps)?.copied_from
    }

    /// Changes whenever the kernel's maps change.
    pub fn kernel_generation(&self) -> u64 {
        self.kernel.generation
    }

    fn map_info(&self, start: u64, m: &Map) -> MapInfo<'_> {
        MapInfo {
            start,
            end: m.end,
            pgoff: m.pgoff,
            filename: &self.dsos[m.dso as usize].name,
            dso: m.dso as usize,
        }
    }

    /// What changed in address space `maps` after generation `since` (see
    /// [`Machine::maps_generation`]): each start address a change touched,
    /// with the map that starts there now, if any. None when the changes
    /// are no longer kept (the caller then takes all maps anew).
    pub fn maps_changed_since(
        &self,
        maps: usize,
        since: u64,
    ) -> Option<impl Iterator<Item = (u64, Option<MapInfo<'_>>)>> {
        let m = self.maps.get(maps)?;
        let starts = m.changed_since(since)?;
        Some(starts.map(move |start| {
            let now = m.by_start.get(&start).map(|x| self.map_info(start, x));
            (start, now)
        }))
    }

    /// The threads as `perf report --tasks` lists them: each thread after
    /// its parent, one level deeper, children in the order perf meets them
    /// (its 256 thread tables: tid modulo 256, then by tid). Err: a thread's
    /// parent is not known (perf then refuses to list them).
    pub fn tasks(&self) -> Result<Vec<Task>, i32> {
        // (A thread perf made for samples without a thread id, -1, it
        // does not list.)
        let mut order: Vec<usize> = self
            .by_tid
            .iter()
            .filter(|(&tid, _)| tid != -1)
            .map(|(_, &t)| t)
            .collect();
        order.sort_by_key(|&t| {
            let tid = self.threads[t].tid;
            ((tid as u32) % 256, tid)
        });
        let mut listed = vec![false; self.threads.len()];
        let mut children: HashMap<usize, Vec<usize>> = HashMap::default();
        let mut roots = Vec::new();
        for &first in &order {
            let mut t = first;
            // Link each thread under its parent up to one already listed
            // or a root.
            loop {
                if listed[t] {
                    break;
                }
                let ppid = self.threads[t].ppid;
                if ppid == -1 {
                    listed[t] = true;
                    roots.push(t);
                    break;
                }
                let Some(&parent) = self.by_tid.get(&ppid) else {
                    return Err(ppid);
                };
                listed[t] = true;
                children.entry(parent).or_default().push(t);
                t = parent;
            }
        }
        let mut out = Vec::new();
        let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&r| (r, 0)).collect();
        while let Some((t, depth)) = stack.pop() {
            let th = &self.threads[t];
            out.push(Task {
                pid: th.pid,
                tid: th.tid,
                ppid: th.ppid,
                comm: th.comm.clone().unwrap_or_else(|| format!(":{}", th.tid)),
                depth,
                maps: self.maps[th.maps]
                    .by_start
                    .iter()
                    .map(|(&start, m)| TaskMap {
                        start,
                        end: m.end,
                        read: m.mode & MODE_READ != 0,
                        write: m.mode & MODE_WRITE != 0,
                        exec: m.mode & MODE_EXEC != 0,
                        shared: m.mode & MODE_SHARED != 0,
                        pgoff: m.pgoff,
                        ino: self.dso_id(m.dso as usize).ino,
                        name: self.dsos[m.dso as usize].name.clone(),
                    })
                    .collect(),
            });
            if let Some(kids) = children.get(&t) {
                stack.extend(kids.iter().rev().map(|&k| (k, depth + 1)));
            }
        }
        Ok(out)
    }

    /// The user-space maps of an address space, by start address, without
    /// collecting them.
    pub fn iter_maps(&self, maps: usize) -> impl Iterator<Item = MapInfo<'_>> {
        self.maps
            .get(maps)
            .into_iter()
            .flat_map(|m| m.by_start.iter())
            .map(|(&start, m)| self.map_info(start, m))
    }

    /// The kernel MMAP record's reference symbol (`_text`) and its address
    /// at record time, for relocating kallsyms taken at another boot.
    pub fn kernel_reloc(&self) -> Option<(&str, u64)> {
        self.kernel_reloc.as_ref().map(|(n, a)| (n.as_str(), *a))
    }

    pub fn mark_hit(&mut self, dso: usize) {
        if let Some(d) = self.dsos.get_mut(dso) {
            d.hit = true;
        }
    }

    pub fn resolve(&mut self, s: &Sample<'_>) -> (String, i32, Landing) {
        let pid = s.pid.map_or(-1, |p| p as i32);
        let tid = s.tid.map_or(-1, |t| t as i32);
        let t = self.findnew(pid, tid);
        let th = &self.threads[t];
        let comm = th.comm.clone().unwrap_or_else(|| format!(":{}", th.tid));
        let ip = s.ip.unwrap_or(0);
        let map = match s.cpumode() {
            PERF_RECORD_MISC_KERNEL => self.kernel.find(ip),
            PERF_RECORD_MISC_USER => self.maps[th.maps].find(ip),
            _ => return (comm, th.tid, Landing::Hypervisor),
        };
        let landing = match map {
            Some(m) => Landing::Dso(m.dso as usize),
            None => Landing::NotFound,
        };
        let tid = th.tid;
        if let Landing::Dso(d) = landing {
            self.dsos[d].hit = true;
        }
        (comm, tid, landing)
    }
}

/// perf's short name for a DSO: `[JIT] tid N` for a perf-N.map, `[mod_name]`
/// for a kernel module, the file name of other paths, other names as they are.
pub fn dso_short_name(name: &str) -> String {
    if !name.starts_with('/') {
        return name.to_string();
    }
    let base = name.rsplit('/').next().unwrap_or(name);
    if let Some(pid) = name
        .strip_prefix("/tmp/perf-")
        .and_then(|r| r.strip_suffix(".map"))
        .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        return format!("[JIT] tid {pid}");
    }
    for ext in [".ko", ".ko.gz", ".ko.xz", ".ko.zst"] {
        if let Some(m) = base.strip_suffix(ext) {
            return format!("[{}]", m.replace('-', "_"));
        }
    }
    base.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever mmaps come, a copy of the maps taken at some generation
    /// becomes the maps of now by looking only at the starts the log names
    /// (what an unwinder does to catch up), until the log is cut.
    #[test]
    fn the_change_log_names_every_start_that_changed() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut m = Maps::default();
        let mut caught_up = 0;
        for round in 0..200 {
            // Shared as a fork shares it: the changes below must not reach it.
            let (since, old) = (m.generation, Arc::clone(&m.by_start));
            for _ in 0..(next() % 12) {
                let start = (next() % 64) * 0x1000;
                let len = (1 + next() % 8) * 0x1000;
                m.insert(
                    start,
                    start + len,
                    next() % 4 * 0x1000,
                    (next() % 5) as usize,
                    0,
                );
            }
            let Some(changed) = m.changed_since(since) else {
                assert!(m.log_floor > since, "round {round}: log lost without a cut");
                continue;
            };
            let mut copy = (*old).clone();
            for s in changed.collect::<Vec<_>>() {
                copy.remove(&s);
                if let Some(now) = m.by_start.get(&s) {
                    copy.insert(s, now.clone());
                }
            }
            let flat = |b: &BTreeMap<u64, Map>| {
                b.iter()
                    .map(|(&s, m)| (s, m.end, m.pgoff, m.dso))
                    .collect::<Vec<_>>()
            };
            assert_eq!(flat(&copy), flat(&m.by_start), "round {round}");
            caught_up += 1;
        }
        assert!(caught_up > 100, "{caught_up}");
        // A generation from the future or before the cut is not served.
        assert!(m.changed_since(m.generation + 1).is_none());
    }

    #[test]
    fn new_map_splits_the_one_it_covers() {
        let mut m = Maps::default();
        m.insert(0x1000, 0x5000, 0, 1, 0);
        m.insert(0x2000, 0x3000, 0x7000, 2, 0);
        assert_eq!(m.find(0x1fff).unwrap().dso, 1);
        assert_eq!(m.find(0x2000).unwrap().dso, 2);
        assert_eq!(m.find(0x3000).unwrap().dso, 1);
        assert!(m.find(0x5000).is_none());
        // The remainder right of the new map shows the file further on.
        assert_eq!(m.find(0x3000).unwrap().pgoff, 0x2000);
        assert_eq!(m.find(0x1000).unwrap().pgoff, 0);
    }
}
