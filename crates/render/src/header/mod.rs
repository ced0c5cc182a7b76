//! `perf report --header-only` text (and `-I`, every feature in full).
//!
//! perf first decodes every feature section into its "environment", in
//! feature-id order, stopping at the first section it cannot decode, and then
//! prints each feature from that environment. Later decoders depend on
//! earlier ones (CPU_TOPOLOGY reads one entry per CPU counted by NRCPUS), and
//! a feature whose decoding never ran prints its empty state ("(null)", 0).
//! [`FeaturePrinter`] keeps that environment so pipe-mode streams, whose
//! features arrive one record at a time, print the same way.

use std::io::{self, Write};

mod attr;
mod time;
use attr::*;
use time::*;

use perf_data::bytes::{Cursor, Endian};
use perf_data::consts::feature;
use perf_data::features::{self, CacheLevel, ClockData, CpuTopology, MemTopology, NumaNode};
use perf_data::{Meta, ParseError};

/// Facts about the input file that are not in the recording itself.
#[derive(Debug, Clone)]
pub struct FileInfo {
    /// Modification time of the file, seconds since the epoch (perf prints
    /// it as "captured on").
    pub mtime: Option<i64>,
    /// Show every feature in full (perf's -I) instead of "use -I to display".
    pub show_info: bool,
    /// Offset of local time from UTC in seconds at a given instant (seconds
    /// since the epoch); the binary supplies the system's time zone rules.
    pub utc_offset: fn(i64) -> i64,
}

impl Default for FileInfo {
    fn default() -> Self {
        FileInfo {
            mtime: None,
            show_info: false,
            utc_offset: |_| 0,
        }
    }
}

/// Writes the header block as `perf report --header-only` prints it.
///
/// For a pipe-mode recording this writes only the part perf prints before
/// reading the stream; feed each HEADER_FEATURE record to a
/// [`FeaturePrinter`] afterwards.
pub fn write_header(out: &mut dyn Write, meta: &Meta, info: &FileInfo) -> io::Result<()> {
    writeln!(out, "# ========")?;
    match info.mtime {
        Some(t) => write!(out, "# captured on    : {}", ctime(t, info.utc_offset))?,
        None => writeln!(out, "# captured on    : ?")?,
    }
    let (data_offset, data_size) = match &meta.header {
        Some(h) => (h.data.offset, h.data.size),
        None => (0, 0),
    };
    writeln!(out, "# header version : 1")?;
    writeln!(out, "# data offset    : {data_offset}")?;
    writeln!(out, "# data size      : {data_size}")?;
    writeln!(
        out,
        "# feat offset    : {}",
        data_offset.wrapping_add(data_size)
    )?;
    if let Some(h) = &meta.header {
        let ids: Vec<u32> = h.feature_ids().collect();
        let mut p = FeaturePrinter::new(info);
        // Decode everything first, as perf does when it opens the file.
        for &id in &ids {
            let bytes = meta.features.get(id).unwrap_or(&[]);
            p.process(meta, id, bytes);
        }
        for &id in &ids {
            if id >= feature::LAST_FEATURE {
                continue;
            }
            let bytes = meta.features.get(id).unwrap_or(&[]);
            p.print(out, meta, id, bytes)?;
        }
        write!(out, "# missing features: ")?;
        for id in 1..feature::LAST_FEATURE {
            if !h.has_feature(id) {
                write!(out, "{} ", feature::name(id).unwrap_or("?"))?;
            }
        }
        writeln!(out)?;
    }
    writeln!(out, "# ========")?;
    writeln!(out, "#")?;
    Ok(())
}

/// What perf knows after decoding the feature sections it has seen.
#[derive(Debug, Default)]
struct Env {
    hostname: Option<String>,
    os_release: Option<String>,
    version: Option<String>,
    arch: Option<String>,
    cpu_desc: Option<String>,
    cpuid: Option<String>,
    nr_cpus_avail: u32,
    nr_cpus_online: u32,
    total_mem: u64,
    cmdline: Vec<String>,
    topology: CpuTopology,
    numa: Vec<NumaNode>,
    pmu_mappings: Vec<(u32, String)>,
    /// Per event index: (group name, number of members) for group leaders.
    groups: Vec<Option<(String, u32)>>,
    caches: Vec<CacheLevel>,
    sample_time: (u64, u64),
    mem: MemTopology,
    clockid_res_ns: u64,
    clock: Option<ClockData>,
    compressed: (u32, u32, u32),
    cpu_pmu_caps: Vec<String>,
    pmu_caps: Vec<(String, Vec<String>)>,
    hybrid: Vec<(String, String)>,
    btf_ids: Vec<u32>,
}

/// Decodes and prints feature sections with perf's rules; keeps state across
/// calls so pipe-mode features can be fed one at a time.
pub struct FeaturePrinter {
    env: Env,
    full: bool,
    utc_offset: fn(i64) -> i64,
    /// perf stops decoding file-mode sections at the first failure.
    stopped: bool,
}

impl FeaturePrinter {
    pub fn new(info: &FileInfo) -> Self {
        FeaturePrinter {
            env: Env::default(),
            full: info.show_info,
            utc_offset: info.utc_offset,
            stopped: false,
        }
    }

    /// Handles one HEADER_FEATURE record of a pipe-mode stream: decodes and
    /// prints it as perf does while it reads the stream.
    pub fn pipe_feature(
        &mut self,
        out: &mut dyn Write,
        meta: &Meta,
        id: u64,
        bytes: &[u8],
    ) -> io::Result<()> {
        let Ok(id) = u32::try_from(id) else {
            return Ok(());
        };
        if id == feature::RESERVED || id >= feature::LAST_FEATURE {
            return Ok(());
        }
        // Features without a decoder in perf are ignored in pipe mode.
        if matches!(id, feature::BRANCH_STACK | feature::STAT) {
            return Ok(());
        }
        self.stopped = false;
        if !self.process(meta, id, bytes) {
            return Ok(());
        }
        self.print(out, meta, id, bytes)
    }

    /// Decodes one feature into the environment; false if it failed.
    fn process(&mut self, meta: &Meta, id: u32, b: &[u8]) -> bool {
        if self.stopped {
            return false;
        }
        let ok = self.decode(meta, id, b).is_ok();
        if !ok {
            self.stopped = true;
        }
        ok
    }

    fn decode(&mut self, meta: &Meta, id: u32, b: &[u8]) -> Result<(), ParseError> {
        let endian = meta.features.endian;
        let e = &mut self.env;
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
                if nodes.iter().any(|n| parse_cpu_list(&n.cpus).is_none()) {
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

    /// Prints one feature (or its "use -I" line for the long ones).
    fn print(&self, out: &mut dyn Write, meta: &Meta, id: u32, b: &[u8]) -> io::Result<()> {
        let e = &self.env;
        let full_only = matches!(
            id,
            feature::CPU_TOPOLOGY
                | feature::NUMA_TOPOLOGY
                | feature::CACHE
                | feature::MEM_TOPOLOGY
                | feature::HYBRID_TOPOLOGY
        );
        // TRACING_DATA and BUILD_ID have no printer in perf.
        if matches!(id, feature::TRACING_DATA | feature::BUILD_ID) {
            return Ok(());
        }
        if full_only && !self.full {
            return writeln!(
                out,
                "# {} info available, use -I to display",
                feature::name(id).unwrap_or("?")
            );
        }
        let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "(null)".into());
        match id {
            feature::HOSTNAME => writeln!(out, "# hostname : {}", s(&e.hostname)),
            feature::OSRELEASE => writeln!(out, "# os release : {}", s(&e.os_release)),
            feature::VERSION => writeln!(out, "# perf version : {}", s(&e.version)),
            feature::ARCH => writeln!(out, "# arch : {}", s(&e.arch)),
            feature::NRCPUS => {
                writeln!(out, "# nrcpus online : {}", e.nr_cpus_online)?;
                writeln!(out, "# nrcpus avail : {}", e.nr_cpus_avail)
            }
            feature::CPUDESC => writeln!(out, "# cpudesc : {}", s(&e.cpu_desc)),
            feature::CPUID => writeln!(out, "# cpuid : {}", s(&e.cpuid)),
            feature::TOTAL_MEM => writeln!(out, "# total memory : {} kB", e.total_mem),
            feature::CMDLINE => {
                write!(out, "# cmdline : ")?;
                for a in &e.cmdline {
                    write!(out, "{} ", a.replace('\'', "\\'"))?;
                }
                writeln!(out)
            }
            feature::EVENT_DESC => write_event_desc(out, b, meta.features.endian),
            feature::CPU_TOPOLOGY => write_cpu_topology(out, e),
            feature::NUMA_TOPOLOGY => {
                for n in &e.numa {
                    writeln!(
                        out,
                        "# node{} meminfo  : total = {} kB, free = {} kB",
                        n.node, n.mem_total, n.mem_free
                    )?;
                    let cpus = parse_cpu_list(&n.cpus).unwrap_or_default();
                    writeln!(out, "# node{} cpu list : {}", n.node, format_cpu_map(&cpus))?;
                }
                Ok(())
            }
            feature::BRANCH_STACK => writeln!(out, "# contains samples with branch stack"),
            feature::PMU_MAPPINGS => {
                if e.pmu_mappings.is_empty() {
                    return writeln!(out, "# pmu mappings: not available");
                }
                let mut delim = "# pmu mappings: ";
                for (ty, name) in &e.pmu_mappings {
                    write!(out, "{delim}{name} = {ty}")?;
                    delim = ", ";
                }
                writeln!(out)
            }
            feature::GROUP_DESC => write_groups(out, meta, &e.groups),
            feature::AUXTRACE => {
                writeln!(out, "# contains AUX area data (e.g. instruction trace)")
            }
            feature::STAT => writeln!(out, "# contains stat data"),
            feature::CACHE => {
                writeln!(out, "# CPU cache info:")?;
                for c in &e.caches {
                    writeln!(
                        out,
                        "#  L{} {:<15} {:>8} [{}]",
                        c.level as i32, c.type_, c.size, c.map
                    )?;
                }
                Ok(())
            }
            feature::SAMPLE_TIME => {
                let (first, last) = e.sample_time;
                writeln!(out, "# time of first sample : {}", usec_stamp(first))?;
                writeln!(out, "# time of last sample : {}", usec_stamp(last))?;
                let d = last.wrapping_sub(first) as f64 / 1e6;
                writeln!(out, "# sample duration : {d:10.3} ms")
            }
            feature::MEM_TOPOLOGY => write_mem_topology(out, &e.mem),
            feature::CLOCKID => writeln!(
                out,
                "# clockid frequency: {} MHz",
                e.clockid_res_ns.wrapping_mul(1000)
            ),
            feature::DIR_FORMAT => {
                let v = Cursor::new(b, meta.features.endian)
                    .u64("dir version")
                    .unwrap_or(0);
                writeln!(out, "# directory data version : {v}")
            }
            feature::BPF_PROG_INFO => Ok(()),
            feature::BPF_BTF => {
                for id in &e.btf_ids {
                    writeln!(out, "# btf info of id {id}")?;
                }
                Ok(())
            }
            feature::COMPRESSED => {
                let (ty, level, ratio) = e.compressed;
                writeln!(
                    out,
                    "# compressed : {}, level = {}, ratio = {}",
                    if ty == 1 { "Zstd" } else { "Unknown" },
                    level as i32,
                    ratio as i32
                )
            }
            feature::CPU_PMU_CAPS => write_pmu_caps(out, "cpu", &e.cpu_pmu_caps),
            feature::CLOCK_DATA => self.write_clock_data(out),
            feature::HYBRID_TOPOLOGY => {
                writeln!(out, "# hybrid cpu system:")?;
                for (pmu, cpus) in &e.hybrid {
                    writeln!(out, "# {pmu} cpu list : {cpus}")?;
                }
                Ok(())
            }
            feature::PMU_CAPS => {
                for (pmu, caps) in &e.pmu_caps {
                    write_pmu_caps(out, pmu, caps)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn write_clock_data(&self, out: &mut dyn Write) -> io::Result<()> {
        let Some(c) = self.env.clock else {
            return writeln!(out, "# reference time disabled");
        };
        let tod_sec = (c.tod_ns / 1_000_000_000) as i64;
        let tod_usec = (c.tod_ns % 1_000_000_000) / 1000;
        let clk_sec = (c.clockid_ns / 1_000_000_000) as i64;
        let clk_nsec = c.clockid_ns % 1_000_000_000;
        let local = tod_sec.saturating_add((self.utc_offset)(tod_sec));
        let tm = civil(local);
        let name = clockid_name(c.clockid);
        writeln!(out, "# clockid: {name} ({})", c.clockid)?;
        writeln!(
            out,
            "# reference time: {:04}-{:02}-{:02} {:02}:{:02}:{:02}.{tod_usec:06} = {tod_sec}.{tod_usec:06} (TOD) = {clk_sec}.{clk_nsec:09} ({name})",
            tm.year, tm.month, tm.day, tm.hour, tm.min, tm.sec
        )
    }
}

fn clockid_name(id: u32) -> &'static str {
    match id {
        0 => "realtime",
        1 => "monotonic",
        4 => "monotonic_raw",
        7 => "boottime",
        11 => "tai",
        _ => "(not found)",
    }
}

fn write_pmu_caps(out: &mut dyn Write, pmu: &str, caps: &[String]) -> io::Result<()> {
    if caps.is_empty() {
        return writeln!(out, "# {pmu} pmu capabilities: not available");
    }
    writeln!(out, "# {pmu} pmu capabilities: {}", caps.join(", "))
}

fn write_cpu_topology(out: &mut dyn Write, e: &Env) -> io::Result<()> {
    let t = &e.topology;
    for s in &t.sibling_cores {
        writeln!(out, "# sibling sockets : {s}")?;
    }
    for s in &t.sibling_dies {
        writeln!(out, "# sibling dies    : {s}")?;
    }
    for s in &t.sibling_threads {
        writeln!(out, "# sibling threads : {s}")?;
    }
    let with_dies = !t.sibling_dies.is_empty();
    match &t.cpus {
        Some(cpus) => {
            for (i, c) in cpus.iter().enumerate() {
                if with_dies {
                    writeln!(
                        out,
                        "# CPU {i}: Core ID {}, Die ID {}, Socket ID {}",
                        c.core_id as i32, c.die_id as i32, c.socket_id as i32
                    )?;
                } else {
                    writeln!(
                        out,
                        "# CPU {i}: Core ID {}, Socket ID {}",
                        c.core_id as i32, c.socket_id as i32
                    )?;
                }
            }
            Ok(())
        }
        None if with_dies => writeln!(
            out,
            "# Core ID, Die ID and Socket ID information is not available"
        ),
        None => writeln!(out, "# Core ID and Socket ID information is not available"),
    }
}

fn write_mem_topology(out: &mut dyn Write, m: &MemTopology) -> io::Result<()> {
    writeln!(
        out,
        "# memory nodes (nr {}, block size {:#x}):",
        m.nodes.len() as i32,
        m.block_size
    )?;
    for n in &m.nodes {
        let (count, mut map) = bitmap_summary(&n.bitmap, n.nbits);
        let size = m.block_size.wrapping_mul(count);
        // perf formats the map into a 100-byte buffer.
        truncate_bytes(&mut map, 99);
        writeln!(out, "#  {:>3} [{}]: {}", n.node, unit_number(size), map)?;
    }
    Ok(())
}

/// Number of set bits among the first `nbits` of a bitmap, and their
/// ranges ("0-23,32-199"); the text stops growing past perf's buffer size.
fn bitmap_summary(words: &[u64], nbits: u64) -> (u64, String) {
    let mut count = 0u64;
    let mut text = String::new();
    let mut run: Option<(u64, u64)> = None;
    let flush = |text: &mut String, (a, b): (u64, u64)| {
        if text.len() > 100 {
            return;
        }
        if !text.is_empty() {
            text.push(',');
        }
        if a == b {
            text.push_str(&a.to_string());
        } else {
            text.push_str(&format!("{a}-{b}"));
        }
    };
    for (wi, &w) in words.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            let bit = wi as u64 * 64 + u64::from(w.trailing_zeros());
            w &= w - 1;
            if bit >= nbits {
                continue;
            }
            count += 1;
            run = match run {
                Some((a, b)) if b + 1 == bit => Some((a, bit)),
                Some(r) => {
                    flush(&mut text, r);
                    Some((bit, bit))
                }
                None => Some((bit, bit)),
            };
        }
    }
    if let Some(r) = run {
        flush(&mut text, r);
    }
    (count, text)
}

fn truncate_bytes(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

/// perf's unit_number__scnprintf: divides by 1024 while the quotient stays
/// above 1, up to G.
fn unit_number(mut n: u64) -> String {
    let units = ['B', 'K', 'M', 'G'];
    let mut i = 0;
    while n / 1024 > 1 && i < 3 {
        n /= 1024;
        i += 1;
    }
    format!("{n}{}", units[i])
}

/// Parses a CPU list ("0-7,16-23") as perf's cpu map parser does: sorted,
/// an empty list is the "any CPU" map (-1), malformed lists and CPUs listed
/// twice fail. Kept as sorted inclusive ranges so a list like "0-2000000000"
/// costs nothing.
fn parse_cpu_list(s: &str) -> Option<Vec<(i64, i64)>> {
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

/// perf's cpu map printing: runs of consecutive CPUs as ranges, into a
/// 1024-byte buffer.
fn format_cpu_map(ranges: &[(i64, i64)]) -> String {
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for &(a, b) in ranges {
        match merged.last_mut() {
            Some(last) if last.1 + 1 == a => last.1 = b,
            _ => merged.push((a, b)),
        }
    }
    let mut s = String::new();
    for (a, b) in merged {
        if !s.is_empty() {
            s.push(',');
        }
        if a == b {
            s.push_str(&a.to_string());
        } else {
            s.push_str(&format!("{a}-{b}"));
        }
        if s.len() > 1023 {
            break;
        }
    }
    truncate_bytes(&mut s, 1023);
    s
}

/// Re-derives group leaders from GROUP_DESC as perf does; None when the
/// description does not fit the event list.
fn rebuild_groups(
    nr_events: usize,
    descs: &[features::GroupDesc],
) -> Option<Vec<Option<(String, u32)>>> {
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

fn write_groups(
    out: &mut dyn Write,
    meta: &Meta,
    groups: &[Option<(String, u32)>],
) -> io::Result<()> {
    let mut nr = 0u32;
    for (idx, ev) in meta.events.iter().enumerate() {
        match groups.get(idx).and_then(|g| g.as_ref()) {
            Some((name, members)) if *members > 1 => {
                write!(out, "# group: {name}{{{}", ev.name())?;
                nr = members - 1;
            }
            _ if nr > 0 => {
                write!(out, ",{}", ev.name())?;
                nr -= 1;
                if nr == 0 {
                    writeln!(out, "}}")?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// "sec.usec" as perf prints sample times.
fn usec_stamp(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, (ns % 1_000_000_000) / 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_matches_libc_format() {
        assert_eq!(ctime(0, |_| 0), "Thu Jan  1 00:00:00 1970\n");
        assert_eq!(ctime(1_795_259_161, |_| 0), "Sat Nov 21 11:06:01 2026\n");
        assert_eq!(
            ctime(1_795_259_161, |_| -5 * 3600),
            "Sat Nov 21 06:06:01 2026\n"
        );
    }

    #[test]
    fn cpu_lists_parse_and_print_like_perf() {
        assert_eq!(
            format_cpu_map(&parse_cpu_list("0-7,16-23").unwrap()),
            "0-7,16-23"
        );
        assert_eq!(format_cpu_map(&parse_cpu_list("3,1,2").unwrap()), "1-3");
        assert_eq!(format_cpu_map(&parse_cpu_list("").unwrap()), "-1");
        assert!(parse_cpu_list("1,1").is_none());
        assert!(parse_cpu_list("5-2").is_none());
        assert!(parse_cpu_list("0-4000000000").is_none());
        assert!(parse_cpu_list("0-5,3").is_none());
        assert_eq!(
            format_cpu_map(&parse_cpu_list("0-2000000000").unwrap()),
            "0-2000000000"
        );
    }

    #[test]
    fn units_and_ranges() {
        assert_eq!(unit_number(1024), "1024B");
        assert_eq!(unit_number(2048), "2K");
        assert_eq!(unit_number(24 << 30), "24G");
        assert_eq!(
            bitmap_summary(&[0b1_1010_0111, 1], 65),
            (7, "0-2,5,7-8,64".to_string())
        );
        assert_eq!(bitmap_summary(&[u64::MAX], 10), (10, "0-9".to_string()));
    }
}
