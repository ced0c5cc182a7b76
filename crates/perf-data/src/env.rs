//! perf's "environment": what the feature sections say about the machine and
//! the session, decoded as perf decodes them (in feature-id order; later
//! decoders read what earlier ones found, as CPU_TOPOLOGY reads NRCPUS's
//! count). The header printer prints from it.

use crate::bytes::{Cursor, Endian};
use crate::consts::feature;
use crate::features::{self, CacheLevel, ClockData, CpuTopology, GroupDesc, MemTopology, NumaNode};
use crate::{Meta, ParseError};

/// What perf knows after decoding the feature sections it has seen.
#[derive(Debug, Default, Clone)]
pub struct Env {
    pub hostname: Option<String>,
    pub os_release: Option<String>,
    pub version: Option<String>,
    pub arch: Option<String>,
    pub cpu_desc: Option<String>,
    pub cpuid: Option<String>,
    pub nr_cpus_avail: u32,
    pub nr_cpus_online: u32,
    pub total_mem: u64,
    pub cmdline: Vec<String>,
    pub topology: CpuTopology,
    pub numa: Vec<NumaNode>,
    pub pmu_mappings: Vec<(u32, String)>,
    /// Per event index: (group name, number of members) for group leaders.
    pub groups: Vec<Option<(String, u32)>>,
    pub caches: Vec<CacheLevel>,
    pub sample_time: (u64, u64),
    pub mem: MemTopology,
    pub clockid_res_ns: u64,
    pub clock: Option<ClockData>,
    pub compressed: (u32, u32, u32),
    pub cpu_pmu_caps: Vec<String>,
    pub pmu_caps: Vec<(String, Vec<String>)>,
    pub hybrid: Vec<(String, String)>,
    pub btf_ids: Vec<u32>,
}

impl Env {
    /// Decodes feature `id` (its section's bytes `b`) into the environment,
    /// as perf's `process` callbacks do; an error leaves what was there.
    pub fn decode(&mut self, meta: &Meta, id: u32, b: &[u8]) -> Result<(), ParseError> {
        let endian = meta.features.endian;
        let e = self;
        let mut c = Cursor::new(b, endian);
        match id {
            feature::HOSTNAME => e.hostname = Some(features::read_string(&mut c)?),
            feature::OSRELEASE => e.os_release = Some(features::read_string(&mut c)?),
            feature::VERSION => e.version = Some(features::read_string(&mut c)?),
            feature::ARCH => e.arch = Some(features::read_string(&mut c)?),
            feature::CPUDESC => e.cpu_desc = Some(features::read_string(&mut c)?),
            feature::CPUID => e.cpuid = Some(features::read_string(&mut c)?),
            feature::NRCPUS => {
                e.nr_cpus_avail = c.u32("nr_cpus_avail")?;
                e.nr_cpus_online = c.u32("nr_cpus_online")?;
            }
            feature::TOTAL_MEM => e.total_mem = c.u64("total_mem")?,
            feature::CMDLINE => {
                let n = c.u32("nr")?;
                let mut v = Vec::new();
                for _ in 0..n {
                    v.push(features::read_string(&mut c)?);
                }
                e.cmdline = v;
            }
            feature::CPU_TOPOLOGY => {
                let arch = e.arch.as_deref().unwrap_or("");
                let check = !(arch.starts_with("s390") || arch.starts_with("aarch64"));
                e.topology = features::parse_cpu_topology(b, endian, e.nr_cpus_avail, check)?;
            }
            feature::NUMA_TOPOLOGY => {
                let nodes = features::parse_numa_topology(b, endian)?;
                if nodes.iter().any(|n| parse_cpu_ranges(&n.cpus).is_none()) {
                    return Err(ParseError {
                        what: "numa node cpu list",
                        pos: 0,
                    });
                }
                e.numa = nodes;
            }
            feature::PMU_MAPPINGS => e.pmu_mappings = features::parse_pmu_mappings(b, endian)?,
            feature::GROUP_DESC => {
                let descs = features::parse_group_desc(b, endian)?;
                e.groups = rebuild_groups(meta.events.len(), &descs).ok_or(ParseError {
                    what: "group desc (does not match the events)",
                    pos: 0,
                })?;
            }
            feature::CACHE => e.caches = features::parse_cache(b, endian)?,
            feature::SAMPLE_TIME => {
                e.sample_time = (c.u64("first")?, c.u64("last")?);
            }
            feature::MEM_TOPOLOGY => e.mem = features::parse_mem_topology(b, endian)?,
            feature::CLOCKID => e.clockid_res_ns = c.u64("clockid res")?,
            feature::CLOCK_DATA => e.clock = Some(features::parse_clock_data(b, endian)?),
            feature::COMPRESSED => {
                let _ver = c.u32("ver")?;
                let ty = c.u32("type")?;
                let level = c.u32("level")?;
                let ratio = c.u32("ratio")?;
                let _mmap_len = c.u32("mmap_len")?;
                e.compressed = (ty, level, ratio);
            }
            feature::CPU_PMU_CAPS => e.cpu_pmu_caps = features::parse_cpu_pmu_caps(b, endian)?,
            feature::PMU_CAPS => e.pmu_caps = features::parse_pmu_caps(b, endian)?,
            feature::HYBRID_TOPOLOGY => e.hybrid = features::parse_hybrid_topology(b, endian)?,
            // perf does not interpret BTF from the other byte order.
            feature::BPF_BTF if endian == Endian::native() => {
                let mut ids = features::parse_bpf_btf_ids(b, endian)?;
                ids.sort_unstable();
                ids.dedup();
                e.btf_ids = ids;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Parses a CPU list ("0-7,16-23") as perf's cpu map parser does: sorted,
/// an empty list is the "any CPU" map (-1), malformed lists and CPUs listed
/// twice fail. Kept as sorted inclusive ranges so a list like "0-2000000000"
/// costs nothing.
pub fn parse_cpu_ranges(s: &str) -> Option<Vec<(i64, i64)>> {
    let b = s.as_bytes();
    let mut ranges: Vec<(i64, i64)> = Vec::new();
    let mut i = 0;
    let num = |i: &mut usize| -> Option<u64> {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        s[start..*i].parse::<u64>().ok()
    };
    while i < b.len() && b[i].is_ascii_digit() {
        let start = num(&mut i)?;
        if start >= i32::MAX as u64 || (i < b.len() && !matches!(b[i], b',' | b'-')) {
            return None;
        }
        let end = if i < b.len() && b[i] == b'-' {
            i += 1;
            let end = num(&mut i)?;
            if end >= i32::MAX as u64 || (i < b.len() && b[i] != b',') || end < start {
                return None;
            }
            end
        } else {
            start
        };
        ranges.push((start as i64, end as i64));
        if i < b.len() {
            i += 1;
        }
    }
    ranges.sort_unstable();
    if ranges.windows(2).any(|w| w[1].0 <= w[0].1) {
        return None;
    }
    if ranges.is_empty() {
        if i < b.len() {
            return None;
        }
        return Some(vec![(-1, -1)]);
    }
    Some(ranges)
}

/// Re-derives group leaders from GROUP_DESC as perf does; None when the
/// description does not fit the event list.
pub fn rebuild_groups(nr_events: usize, descs: &[GroupDesc]) -> Option<Vec<Option<(String, u32)>>> {
    let mut groups = vec![None; nr_events];
    if descs.is_empty() {
        return Some(groups);
    }
    let (mut i, mut nr) = (0usize, 0u32);
    for (idx, g) in groups.iter_mut().enumerate() {
        match descs.get(i) {
            Some(d) if d.leader_idx as usize == idx => {
                if nr > 0 {
                    return None;
                }
                let name = if d.name == "{anon_group}" {
                    String::new()
                } else {
                    d.name.clone()
                };
                *g = Some((name, d.nr_members));
                nr = d.nr_members.wrapping_sub(1);
                i += 1;
            }
            _ if nr > 0 => nr -= 1,
            _ => {}
        }
    }
    if i != descs.len() || nr != 0 {
        return None;
    }
    Some(groups)
}
