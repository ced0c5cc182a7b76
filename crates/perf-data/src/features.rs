//! Header feature sections: stored raw, with decoders for what reports use.

use std::collections::BTreeMap;

use crate::bytes::{until_nul, Cursor, Endian};
use crate::consts::feature;
use crate::error::ParseError;

/// The raw bytes of one feature section and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureData {
    /// File offset of the section (file mode) or of the HEADER_FEATURE
    /// record (pipe mode).
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// All feature sections of a recording, by feature id.
#[derive(Debug, Clone, Default)]
pub struct Features {
    pub sections: BTreeMap<u32, FeatureData>,
    pub endian: Endian,
}

impl Features {
    pub fn get(&self, id: u32) -> Option<&[u8]> {
        self.sections.get(&id).map(|f| f.bytes.as_slice())
    }
    pub fn has(&self, id: u32) -> bool {
        self.sections.contains_key(&id)
    }
    fn cursor(&self, id: u32) -> Option<Cursor<'_>> {
        self.get(id).map(|b| Cursor::new(b, self.endian))
    }
    /// A perf string feature (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID).
    pub fn string(&self, id: u32) -> Option<String> {
        let mut c = self.cursor(id)?;
        read_string(&mut c).ok()
    }
    pub fn hostname(&self) -> Option<String> {
        self.string(feature::HOSTNAME)
    }
    pub fn os_release(&self) -> Option<String> {
        self.string(feature::OSRELEASE)
    }
    pub fn perf_version(&self) -> Option<String> {
        self.string(feature::VERSION)
    }
    pub fn arch(&self) -> Option<String> {
        self.string(feature::ARCH)
    }
    /// (online, available) CPU counts.
    pub fn nr_cpus(&self) -> Option<(u32, u32)> {
        let mut c = self.cursor(feature::NRCPUS)?;
        let avail = c.u32("nr_cpus_avail").ok()?;
        let online = c.u32("nr_cpus_online").ok()?;
        Some((online, avail))
    }
    /// Total memory in kB.
    pub fn total_mem(&self) -> Option<u64> {
        self.cursor(feature::TOTAL_MEM)?.u64("total_mem").ok()
    }
    pub fn cmdline(&self) -> Option<Vec<String>> {
        let mut c = self.cursor(feature::CMDLINE)?;
        let n = c.u32("nr").ok()?;
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(read_string(&mut c).ok()?);
        }
        Some(v)
    }
    /// (first, last) sample times in ns.
    pub fn sample_time(&self) -> Option<(u64, u64)> {
        let mut c = self.cursor(feature::SAMPLE_TIME)?;
        Some((c.u64("first").ok()?, c.u64("last").ok()?))
    }
    /// CLOCK_DATA (written by `perf record --clockid`): the sample clock
    /// and one reading of it beside the wall clock.
    pub fn clock_data(&self) -> Option<ClockData> {
        parse_clock_data(self.get(feature::CLOCK_DATA)?, self.endian).ok()
    }
    /// EVENT_DESC: (attr bytes, name, ids) per event.
    pub fn event_desc(&self) -> Option<Vec<EventDesc>> {
        let mut c = self.cursor(feature::EVENT_DESC)?;
        parse_event_desc(&mut c).ok()
    }
    /// BUILD_ID feature entries.
    pub fn build_ids(&self) -> Option<Vec<BuildIdEntry>> {
        let b = self.get(feature::BUILD_ID)?;
        Some(parse_build_ids(b, self.endian))
    }
    /// COMPRESSED feature: (version, type, level, ratio, mmap_len).
    pub fn compressed(&self) -> Option<(u32, u32, u32, u32, u32)> {
        let mut c = self.cursor(feature::COMPRESSED)?;
        Some((
            c.u32("ver").ok()?,
            c.u32("type").ok()?,
            c.u32("level").ok()?,
            c.u32("ratio").ok()?,
            c.u32("mmap_len").ok()?,
        ))
    }
}

/// One event of the EVENT_DESC feature.
#[derive(Debug, Clone)]
pub struct EventDesc {
    pub attr: Vec<u8>,
    pub name: String,
    pub ids: Vec<u64>,
}

/// perf's string encoding: u32 length (padded, with NUL), then bytes.
pub fn read_string(c: &mut Cursor<'_>) -> Result<String, ParseError> {
    let len = c.u32("string length")? as usize;
    let b = c.bytes(len, "string")?;
    Ok(String::from_utf8_lossy(until_nul(b)).into_owned())
}

fn parse_event_desc(c: &mut Cursor<'_>) -> Result<Vec<EventDesc>, ParseError> {
    let nr = c.u32("nr events")?;
    let attr_size = c.u32("attr size")? as usize;
    let mut v = Vec::new();
    for _ in 0..nr {
        let attr = c.bytes(attr_size, "event attr")?.to_vec();
        let nr_ids = c.u32("nr ids")?;
        let name = read_string(c)?;
        let ids = c.u64_array(u64::from(nr_ids), "ids")?.iter().collect();
        v.push(EventDesc { attr, name, ids });
    }
    Ok(v)
}

/// One entry of the BUILD_ID feature section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildIdEntry {
    pub pid: i32,
    pub misc: u16,
    pub build_id: Vec<u8>,
    pub filename: String,
}

/// Parses BUILD_ID feature bytes: a sequence of build_id_event records.
pub fn parse_build_ids(b: &[u8], endian: Endian) -> Vec<BuildIdEntry> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos + 8 <= b.len() {
        let mut c = Cursor::new(&b[pos..], endian);
        let (Ok(_type), Ok(misc), Ok(size)) = (c.u32("t"), c.u16("m"), c.u16("s")) else {
            break;
        };
        let size = size as usize;
        if size < 8 + 4 + 24 || pos + size > b.len() {
            break;
        }
        let rec = &b[pos + 8..pos + size];
        let mut c = Cursor::new(rec, endian);
        let pid = c.u32("pid").unwrap_or(0) as i32;
        let raw = c.bytes(24, "build_id").unwrap_or(&[0; 24]);
        let build_id = if misc & (1 << 15) != 0 {
            raw[..(raw[20] as usize).min(20)].to_vec()
        } else {
            raw[..20].to_vec()
        };
        out.push(BuildIdEntry {
            pid,
            misc,
            build_id,
            filename: String::from_utf8_lossy(until_nul(c.rest())).into_owned(),
        });
        pos += size;
    }
    out
}

// Decoders for the remaining feature sections. Each reads the section the
// way perf 6.1 does (same fields, same order, same validity checks), so a
// renderer can reproduce perf's view of a damaged section too; every count
// is bounded by the bytes left before anything is allocated.

/// Caps a count read from a file by how many items of at least `min_item`
/// bytes could still follow, so a corrupt count cannot force a huge allocation.
fn bounded(n: u64, c: &Cursor<'_>, min_item: usize) -> usize {
    let most = c.remaining() / min_item.max(1);
    usize::try_from(n).unwrap_or(usize::MAX).min(most)
}

/// Reads `n` perf strings (n bounded by the bytes left).
fn read_strings(c: &mut Cursor<'_>, n: u32) -> Result<Vec<String>, ParseError> {
    let mut v = Vec::with_capacity(bounded(u64::from(n), c, 4));
    for _ in 0..n {
        v.push(read_string(c)?);
    }
    Ok(v)
}

/// Bytes perf's writer uses for a string: u32 length plus the text and its
/// NUL padded to 64. perf's CPU_TOPOLOGY reader counts with this (from the
/// text, not the stored length) to decide which optional parts follow.
fn string_size(s: &str) -> u64 {
    (s.len() as u64 + 1).div_ceil(64) * 64 + 4
}

/// Core, die and socket of one CPU (CPU_TOPOLOGY).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuIds {
    pub core_id: u32,
    pub socket_id: u32,
    pub die_id: u32,
}

/// The CPU_TOPOLOGY feature as perf reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuTopology {
    pub sibling_cores: Vec<String>,
    pub sibling_dies: Vec<String>,
    pub sibling_threads: Vec<String>,
    /// Per-CPU ids; None when the section predates them.
    pub cpus: Option<Vec<CpuIds>>,
}

/// Decodes CPU_TOPOLOGY. `nr_cpus_avail` comes from NRCPUS (perf reads one
/// id pair per available CPU); `check_socket` rejects socket ids above the
/// CPU count as perf does except on s390 and aarch64.
pub fn parse_cpu_topology(
    b: &[u8],
    endian: Endian,
    nr_cpus_avail: u32,
    check_socket: bool,
) -> Result<CpuTopology, ParseError> {
    let mut c = Cursor::new(b, endian);
    let mut t = CpuTopology::default();
    let mut size = 0u64;
    let n = c.u32("nr sibling cores")?;
    size += 4;
    t.sibling_cores = read_strings(&mut c, n)?;
    size += t.sibling_cores.iter().map(|s| string_size(s)).sum::<u64>();
    let n = c.u32("nr sibling threads")?;
    size += 4;
    t.sibling_threads = read_strings(&mut c, n)?;
    size += t
        .sibling_threads
        .iter()
        .map(|s| string_size(s))
        .sum::<u64>();
    if b.len() as u64 <= size {
        return Ok(t);
    }
    let mut cpus = Vec::with_capacity(bounded(u64::from(nr_cpus_avail), &c, 8));
    for _ in 0..nr_cpus_avail {
        let core_id = c.u32("core id")?;
        let socket_id = c.u32("socket id")?;
        if check_socket && socket_id != u32::MAX && socket_id > nr_cpus_avail {
            return Err(ParseError {
                what: "socket id (larger than the CPU count)",
                pos: c.pos() - 4,
            });
        }
        cpus.push(CpuIds {
            core_id,
            socket_id,
            die_id: 0,
        });
        size += 8;
    }
    if b.len() as u64 <= size {
        t.cpus = Some(cpus);
        return Ok(t);
    }
    let n = c.u32("nr sibling dies")?;
    t.sibling_dies = read_strings(&mut c, n)?;
    for cpu in &mut cpus {
        cpu.die_id = c.u32("die id")?;
    }
    t.cpus = Some(cpus);
    Ok(t)
}

/// One node of NUMA_TOPOLOGY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumaNode {
    pub node: u32,
    pub mem_total: u64,
    pub mem_free: u64,
    /// CPU list as written ("0-7,16-23").
    pub cpus: String,
}

pub fn parse_numa_topology(b: &[u8], endian: Endian) -> Result<Vec<NumaNode>, ParseError> {
    let mut c = Cursor::new(b, endian);
    let n = c.u32("nr numa nodes")?;
    let mut v = Vec::with_capacity(bounded(u64::from(n), &c, 24));
    for _ in 0..n {
        v.push(NumaNode {
            node: c.u32("node")?,
            mem_total: c.u64("mem total")?,
            mem_free: c.u64("mem free")?,
            cpus: read_string(&mut c)?,
        });
    }
    Ok(v)
}

/// PMU_MAPPINGS: (type, name) pairs in file order.
pub fn parse_pmu_mappings(b: &[u8], endian: Endian) -> Result<Vec<(u32, String)>, ParseError> {
    let mut c = Cursor::new(b, endian);
    let n = c.u32("nr pmus")?;
    let mut v = Vec::with_capacity(bounded(u64::from(n), &c, 8));
    for _ in 0..n {
        let ty = c.u32("pmu type")?;
        v.push((ty, read_string(&mut c)?));
    }
    Ok(v)
}

/// One group of GROUP_DESC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDesc {
    pub name: String,
    pub leader_idx: u32,
    pub nr_members: u32,
}

pub fn parse_group_desc(b: &[u8], endian: Endian) -> Result<Vec<GroupDesc>, ParseError> {
    let mut c = Cursor::new(b, endian);
    let n = c.u32("nr groups")?;
    let mut v = Vec::with_capacity(bounded(u64::from(n), &c, 12));
    for _ in 0..n {
        v.push(GroupDesc {
            name: read_string(&mut c)?,
            leader_idx: c.u32("leader idx")?,
            nr_members: c.u32("nr members")?,
        });
    }
    Ok(v)
}

/// One cache of the CACHE feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheLevel {
    pub level: u32,
    pub line_size: u32,
    pub sets: u32,
    pub ways: u32,
    pub type_: String,
    pub size: String,
    pub map: String,
}

pub fn parse_cache(b: &[u8], endian: Endian) -> Result<Vec<CacheLevel>, ParseError> {
    let mut c = Cursor::new(b, endian);
    if c.u32("cache version")? != 1 {
        return Err(ParseError {
            what: "cache version (only 1 is defined)",
            pos: 0,
        });
    }
    let n = c.u32("nr caches")?;
    let mut v = Vec::with_capacity(bounded(u64::from(n), &c, 28));
    for _ in 0..n {
        v.push(CacheLevel {
            level: c.u32("level")?,
            line_size: c.u32("line size")?,
            sets: c.u32("sets")?,
            ways: c.u32("ways")?,
            type_: read_string(&mut c)?,
            size: read_string(&mut c)?,
            map: read_string(&mut c)?,
        });
    }
    Ok(v)
}

/// One node of MEM_TOPOLOGY: which memory blocks belong to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemNode {
    pub node: u64,
    /// Number of valid bits in `bitmap`.
    pub nbits: u64,
    pub bitmap: Vec<u64>,
}

/// MEM_TOPOLOGY: block size in bytes and the nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemTopology {
    pub block_size: u64,
    pub nodes: Vec<MemNode>,
}

pub fn parse_mem_topology(b: &[u8], endian: Endian) -> Result<MemTopology, ParseError> {
    let mut c = Cursor::new(b, endian);
    if c.u64("mem topology version")? != 1 {
        return Err(ParseError {
            what: "mem topology version (only 1 is defined)",
            pos: 0,
        });
    }
    let block_size = c.u64("block size")?;
    let n = c.u64("nr nodes")?;
    let mut nodes = Vec::with_capacity(bounded(n, &c, 24));
    for _ in 0..n {
        let node = c.u64("node")?;
        let _size = c.u64("node size")?;
        let nbits = c.u64("bitmap size")?;
        let words = nbits.div_ceil(64);
        let bitmap = c.u64_array(words, "bitmap")?.iter().collect();
        nodes.push(MemNode {
            node,
            nbits,
            bitmap,
        });
    }
    Ok(MemTopology { block_size, nodes })
}

/// CLOCK_DATA: the clock samples were taken with and a reference pair of
/// wall-clock and sample-clock times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockData {
    pub clockid: u32,
    pub tod_ns: u64,
    pub clockid_ns: u64,
}

pub fn parse_clock_data(b: &[u8], endian: Endian) -> Result<ClockData, ParseError> {
    let mut c = Cursor::new(b, endian);
    if c.u32("clock data version")? != 1 {
        return Err(ParseError {
            what: "clock data version (only 1 is defined)",
            pos: 0,
        });
    }
    Ok(ClockData {
        clockid: c.u32("clockid")?,
        tod_ns: c.u64("tod ns")?,
        clockid_ns: c.u64("clockid ns")?,
    })
}

/// A list of PMU capabilities as "name=value" strings.
fn read_caps(c: &mut Cursor<'_>) -> Result<Vec<String>, ParseError> {
    let n = c.u32("nr caps")?;
    let mut v = Vec::with_capacity(bounded(u64::from(n), c, 8));
    for _ in 0..n {
        let name = read_string(c)?;
        let value = read_string(c)?;
        v.push(format!("{name}={value}"));
    }
    Ok(v)
}

/// CPU_PMU_CAPS: the core PMU's capabilities as "name=value".
/// DIR_FORMAT's version (0 when the section is short).
pub fn parse_dir_version(b: &[u8], endian: Endian) -> u64 {
    Cursor::new(b, endian).u64("dir version").unwrap_or(0)
}

pub fn parse_cpu_pmu_caps(b: &[u8], endian: Endian) -> Result<Vec<String>, ParseError> {
    read_caps(&mut Cursor::new(b, endian))
}

/// PMU_CAPS: (pmu name, capabilities) for each PMU that has any.
pub fn parse_pmu_caps(b: &[u8], endian: Endian) -> Result<Vec<(String, Vec<String>)>, ParseError> {
    let mut c = Cursor::new(b, endian);
    let n = c.u32("nr pmus")?;
    let mut v = Vec::with_capacity(bounded(u64::from(n), &c, 8));
    for _ in 0..n {
        let caps = read_caps(&mut c)?;
        let name = read_string(&mut c)?;
        v.push((name, caps));
    }
    Ok(v)
}

/// HYBRID_TOPOLOGY: (pmu name, cpu list) per core type.
pub fn parse_hybrid_topology(
    b: &[u8],
    endian: Endian,
) -> Result<Vec<(String, String)>, ParseError> {
    let mut c = Cursor::new(b, endian);
    let n = c.u32("nr hybrid nodes")?;
    let mut v = Vec::with_capacity(bounded(u64::from(n), &c, 8));
    for _ in 0..n {
        let pmu = read_string(&mut c)?;
        v.push((pmu, read_string(&mut c)?));
    }
    Ok(v)
}

/// BPF_BTF: the ids of the BTF blobs (their data is skipped).
pub fn parse_bpf_btf_ids(b: &[u8], endian: Endian) -> Result<Vec<u32>, ParseError> {
    let mut c = Cursor::new(b, endian);
    let n = c.u32("nr btf")?;
    let mut v = Vec::with_capacity(bounded(u64::from(n), &c, 8));
    for _ in 0..n {
        let id = c.u32("btf id")?;
        let len = c.u32("btf size")?;
        c.skip(len as usize, "btf data")?;
        v.push(id);
    }
    Ok(v)
}

/// EVENT_DESC parsed as perf 6.1 does: the attr is what fits in perf's own
/// 128-byte struct (zero-filled when the file's is shorter).
#[derive(Debug, Clone)]
pub struct EventDescAttr {
    pub desc: EventDesc,
    /// The attr bytes as perf holds them (128 bytes, file byte order).
    pub attr128: Vec<u8>,
}

impl EventDescAttr {
    /// The attr decoded from perf's 128-byte view; its `size` is the file's.
    pub fn attr(&self, endian: Endian) -> Option<crate::EventAttr> {
        let mut buf = self.attr128.clone();
        buf.resize(128, 0);
        let size = endian.u32(buf.get(4..8)?.try_into().ok()?);
        buf[4..8].copy_from_slice(&endian.put_u32(128));
        let mut a = crate::EventAttr::parse(&buf, endian).ok()?;
        a.size = size;
        Some(a)
    }
}

/// Like [`Features::event_desc`] but keeps perf's 128-byte view of each attr
/// and fails as perf does when the section is cut short.
pub fn parse_event_desc_raw(b: &[u8], endian: Endian) -> Result<Vec<EventDescAttr>, ParseError> {
    let mut c = Cursor::new(b, endian);
    let nr = c.u32("nr events")?;
    let attr_size = c.u32("attr size")? as usize;
    let mut v = Vec::with_capacity(bounded(u64::from(nr), &c, attr_size.saturating_add(8)));
    for _ in 0..nr {
        let raw = c.bytes(attr_size, "event attr")?;
        let mut attr128 = vec![0u8; 128];
        let n = raw.len().min(128);
        attr128[..n].copy_from_slice(&raw[..n]);
        let nr_ids = c.u32("nr ids")?;
        let name = read_string(&mut c)?;
        let ids = c.u64_array(u64::from(nr_ids), "ids")?.iter().collect();
        v.push(EventDescAttr {
            desc: EventDesc {
                attr: raw.to_vec(),
                name,
                ids,
            },
            attr128,
        });
    }
    Ok(v)
}
