//! The feature sections a recording carries, encoded as perf 6.1 writes them:
//! host, kernel, CPU and memory facts, the command line, event names and
//! groups, sample times and build ids.

use std::fs;

use perf_data::writer::FeatureMap;
use perf_data::{feature, Endian, Event};

/// perf's string: u32 length (text plus NUL, padded to 64), then the bytes.
pub fn string(endian: Endian, s: &str) -> Vec<u8> {
    let len = (s.len() + 1).div_ceil(64) * 64;
    let mut v = Vec::with_capacity(4 + len);
    v.extend_from_slice(&endian.put_u32(len as u32));
    v.extend_from_slice(s.as_bytes());
    v.resize(4 + len, 0);
    v
}

fn uname() -> (String, String, String) {
    let read = |p: &str| {
        fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let host = read("/proc/sys/kernel/hostname");
    let release = read("/proc/sys/kernel/osrelease");
    (host, release, std::env::consts::ARCH.to_string())
}

fn cpuinfo() -> (String, String) {
    let text = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |k: &str| {
        text.lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(k))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    let desc = field("model name");
    // perf's cpuid on x86: vendor,family,model,stepping.
    let cpuid = format!(
        "{},{},{},{}",
        field("vendor_id"),
        field("cpu family"),
        field("model"),
        field("stepping")
    );
    (desc, cpuid)
}

fn total_mem_kb() -> Option<u64> {
    let m = fs::read_to_string("/proc/meminfo").ok()?;
    m.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

fn cpu_count(path: &str) -> Option<u32> {
    let s = fs::read_to_string(path).ok()?;
    crate::synth::parse_cpu_list(&s).map(|v| v.last().map_or(0, |&l| l + 1))
}

/// What the features need from the recording.
pub struct HeaderInput<'a> {
    pub events: &'a [Event],
    /// (leader index, member count) of each group of more than one event.
    pub groups: &'a [(u32, u32)],
    pub cmdline: &'a [String],
    pub version: &'a str,
    pub sample_time: Option<(u64, u64)>,
    /// BUILD_ID entries, already encoded.
    pub build_ids: Vec<u8>,
    /// With `-k/--clockid`: the clock and a reference reading of it.
    pub clock: Option<ClockRef>,
}

/// The clock `-k` chose, its resolution, and one reading of it beside the
/// wall clock (perf's CLOCKID and CLOCK_DATA features), so the time of day
/// of any sample time can be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockRef {
    pub clockid: i32,
    pub res_ns: u64,
    pub tod_ns: u64,
    pub clockid_ns: u64,
}

impl ClockRef {
    /// Reads the wall clock and clock `clockid` now, as perf does when it
    /// starts recording.
    pub fn now(clockid: i32) -> ClockRef {
        let read = |id: libc::clockid_t| {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `ts` is a valid timespec to write.
            unsafe { libc::clock_gettime(id, &mut ts) };
            (ts.tv_sec as u64)
                .wrapping_mul(1_000_000_000)
                .wrapping_add(ts.tv_nsec as u64)
        };
        let mut res = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `res` is a valid timespec to write.
        let res_ns = if unsafe { libc::clock_getres(clockid, &mut res) } == 0 {
            res.tv_nsec as u64
        } else {
            0
        };
        // perf takes the time of day with gettimeofday: microseconds.
        let tod_ns = read(libc::CLOCK_REALTIME) / 1000 * 1000;
        ClockRef {
            clockid,
            res_ns,
            tod_ns,
            clockid_ns: read(clockid),
        }
    }
}

/// The feature sections: those perf 6.1 writes that reports use.
/// The CMDLINE feature: the count, then each argument as a perf string.
pub fn cmdline(endian: Endian, args: &[String]) -> Vec<u8> {
    let mut cl = endian.put_u32(args.len() as u32).to_vec();
    for a in args {
        cl.extend_from_slice(&string(endian, a));
    }
    cl
}

pub fn features(endian: Endian, h: &HeaderInput<'_>) -> FeatureMap {
    let mut f = FeatureMap::new();
    let (host, release, arch) = uname();
    f.insert(feature::HOSTNAME, string(endian, &host));
    f.insert(feature::OSRELEASE, string(endian, &release));
    f.insert(feature::VERSION, string(endian, h.version));
    f.insert(feature::ARCH, string(endian, &arch));
    let online = crate::synth::online_cpus().len() as u32;
    let avail = cpu_count("/sys/devices/system/cpu/present").unwrap_or(online);
    let mut nr = endian.put_u32(avail).to_vec();
    nr.extend_from_slice(&endian.put_u32(online));
    f.insert(feature::NRCPUS, nr);
    let (desc, cpuid) = cpuinfo();
    if !desc.is_empty() {
        f.insert(feature::CPUDESC, string(endian, &desc));
    }
    if cpuid != ",,," {
        f.insert(feature::CPUID, string(endian, &cpuid));
    }
    if let Some(m) = total_mem_kb() {
        f.insert(feature::TOTAL_MEM, endian.put_u64(m).to_vec());
    }
    f.insert(feature::CMDLINE, cmdline(endian, h.cmdline));
    if let Some(c) = h.clock {
        f.insert(feature::CLOCKID, endian.put_u64(c.res_ns).to_vec());
        let mut d = endian.put_u32(1).to_vec();
        d.extend_from_slice(&endian.put_u32(c.clockid as u32));
        d.extend_from_slice(&endian.put_u64(c.tod_ns));
        d.extend_from_slice(&endian.put_u64(c.clockid_ns));
        f.insert(feature::CLOCK_DATA, d);
    }
    f.insert(feature::EVENT_DESC, event_desc(endian, h.events));
    if !h.groups.is_empty() {
        let mut g = endian.put_u32(h.groups.len() as u32).to_vec();
        for &(leader, n) in h.groups {
            g.extend_from_slice(&string(endian, "{anon_group}"));
            g.extend_from_slice(&endian.put_u32(leader));
            g.extend_from_slice(&endian.put_u32(n));
        }
        f.insert(feature::GROUP_DESC, g);
    }
    if let Some((first, last)) = h.sample_time {
        let mut t = endian.put_u64(first).to_vec();
        t.extend_from_slice(&endian.put_u64(last));
        f.insert(feature::SAMPLE_TIME, t);
    }
    if !h.build_ids.is_empty() {
        f.insert(feature::BUILD_ID, h.build_ids.clone());
    }
    // Tracepoints: their formats from tracefs, to decode their raw data.
    let tracepoints: Vec<String> = h
        .events
        .iter()
        .filter(|e| e.attr.type_ == perf_data::PERF_TYPE_TRACEPOINT)
        .map(|e| e.name())
        .collect();
    if !tracepoints.is_empty() {
        if let Some(t) = crate::tracing::tracing_data(&tracepoints) {
            f.insert(feature::TRACING_DATA, t);
        }
    }
    f
}

/// EVENT_DESC: each event's attr, name and ids.
pub fn event_desc(endian: Endian, events: &[Event]) -> Vec<u8> {
    let size = events.iter().map(|e| e.attr.size).max().unwrap_or(128);
    let mut v = endian.put_u32(events.len() as u32).to_vec();
    v.extend_from_slice(&endian.put_u32(size));
    for e in events {
        let mut a = e.attr.clone();
        a.size = size;
        v.extend_from_slice(&a.encode(endian));
        v.extend_from_slice(&endian.put_u32(e.ids.len() as u32));
        v.extend_from_slice(&string(endian, e.name.as_deref().unwrap_or("")));
        for &id in &e.ids {
            v.extend_from_slice(&endian.put_u64(id));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use perf_data::{EventAttr, Features};

    #[test]
    fn features_read_back() {
        let ev = Event {
            attr: EventAttr {
                type_: 1,
                size: 128,
                ..Default::default()
            },
            ids: vec![3, 4],
            name: Some("cpu-clock".into()),
        };
        let f = features(
            Endian::Little,
            &HeaderInput {
                events: &[ev],
                groups: &[(0, 1)],
                cmdline: &["sear".into(), "record".into()],
                version: "0.1.0",
                sample_time: Some((5, 9)),
                build_ids: Vec::new(),
                clock: None,
            },
        );
        let mut feats = Features {
            endian: Endian::Little,
            ..Default::default()
        };
        for (id, b) in f {
            feats.sections.insert(
                id,
                perf_data::features::FeatureData {
                    offset: 0,
                    bytes: b,
                },
            );
        }
        assert_eq!(feats.perf_version().as_deref(), Some("0.1.0"));
        assert_eq!(feats.cmdline().unwrap(), vec!["sear", "record"]);
        assert_eq!(feats.sample_time(), Some((5, 9)));
        let d = feats.event_desc().unwrap();
        assert_eq!(
            (d[0].name.as_str(), d[0].ids.clone()),
            ("cpu-clock", vec![3, 4])
        );
        let g = perf_data::features::parse_group_desc(
            feats.get(feature::GROUP_DESC).unwrap(),
            Endian::Little,
        )
        .unwrap();
        assert_eq!((g[0].leader_idx, g[0].nr_members), (0, 1));
        assert!(feats.nr_cpus().unwrap().1 >= 1);
    }
}
