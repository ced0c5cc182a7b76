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
pub use attr::attr_fields;
mod time;
use attr::*;
use time::*;

use perf_data::consts::feature;
use perf_data::env::{parse_cpu_ranges, Env};
use perf_data::features::MemTopology;
use perf_data::Meta;

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
/// `YYYY-MM-DD HH:MM:SS` of `t` seconds since the epoch, in the time zone
/// whose offset from UTC at an instant `utc_offset` gives.
pub fn local_date_time(t: i64, utc_offset: fn(i64) -> i64) -> String {
    time::date_time(t, utc_offset)
}

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
        let ok = self.env.decode(meta, id, b).is_ok();
        if !ok {
            self.stopped = true;
        }
        ok
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
                    let cpus = parse_cpu_ranges(&n.cpus).unwrap_or_default();
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
                let v = perf_data::features::parse_dir_version(b, meta.features.endian);
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
            format_cpu_map(&parse_cpu_ranges("0-7,16-23").unwrap()),
            "0-7,16-23"
        );
        assert_eq!(format_cpu_map(&parse_cpu_ranges("3,1,2").unwrap()), "1-3");
        assert_eq!(format_cpu_map(&parse_cpu_ranges("").unwrap()), "-1");
        assert!(parse_cpu_ranges("1,1").is_none());
        assert!(parse_cpu_ranges("5-2").is_none());
        assert!(parse_cpu_ranges("0-4000000000").is_none());
        assert!(parse_cpu_ranges("0-5,3").is_none());
        assert_eq!(
            format_cpu_map(&parse_cpu_ranges("0-2000000000").unwrap()),
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
