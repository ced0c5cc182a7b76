//! perf's event names (`-e`): software and hardware events, modifiers and
//! groups, turned into (type, config, exclusions) before anything is opened.

use perf_data::consts::PERF_TYPE_RAW;
use perf_data::{PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE, PERF_TYPE_SOFTWARE, PERF_TYPE_TRACEPOINT};

use crate::error::{Error, Result};

/// One event as the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSpec {
    /// The name as it will be shown: perf's canonical name plus modifiers.
    pub name: String,
    pub type_: u32,
    pub config: u64,
    pub exclude_user: bool,
    pub exclude_kernel: bool,
    pub exclude_hv: bool,
    /// perf sets these by its modifier rules (see [`apply_modifiers`]).
    pub exclude_guest: bool,
    pub exclude_host: bool,
    pub precise_ip: u8,
    /// A tracepoint's filter (`--filter`), set once it is opened.
    pub filter: Option<String>,
    /// `:S`: leader sampling (the group's leader samples and reads every
    /// member's count with each sample; the members do not sample).
    pub sample_read: bool,
    /// What a PMU event's terms set besides `config` (`pmu/.../`).
    pub pmu: PmuTerms,
}

/// A PMU event's terms beyond its config: the other config words and a
/// sampling period or frequency of its own (perf's `period=`, `freq=`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PmuTerms {
    pub config1: u64,
    pub config2: u64,
    pub period: Option<u64>,
    pub freq: Option<u64>,
}

impl EventSpec {
    /// An event as named, before modifiers: all contexts counted but guests
    /// (perf's `event_attr_init`: guests excluded unless a modifier says
    /// otherwise).
    pub fn plain(name: String, type_: u32, config: u64) -> EventSpec {
        EventSpec {
            name,
            type_,
            config,
            exclude_user: false,
            exclude_kernel: false,
            exclude_hv: false,
            exclude_guest: true,
            exclude_host: false,
            precise_ip: 0,
            filter: None,
            sample_read: false,
            pmu: PmuTerms::default(),
        }
    }

    /// An event of the CPU's PMU (generic hardware, cache or raw events).
    pub fn is_hardware(&self) -> bool {
        matches!(
            self.type_,
            PERF_TYPE_HARDWARE | PERF_TYPE_HW_CACHE | PERF_TYPE_RAW
        )
    }

    /// The hardware cycles event, which perf replaces by cpu-clock where
    /// the machine has no PMU.
    pub fn is_cycles(&self) -> bool {
        self.type_ == PERF_TYPE_HARDWARE && self.config == 0
    }

    /// perf's default event: `cycles:P` (the most precise sampling), not
    /// excluding guests on AMD (perf's `arch_evsel__fixup_new_cycles`:
    /// AMD's precise sampling cannot filter them).
    pub fn default_cycles() -> EventSpec {
        EventSpec {
            name: "cycles:P".into(),
            type_: PERF_TYPE_HARDWARE,
            config: 0,
            exclude_user: false,
            exclude_kernel: false,
            exclude_hv: false,
            exclude_guest: !cpu_is_amd(),
            exclude_host: false,
            precise_ip: 3,
            filter: None,
            sample_read: false,
            pmu: PmuTerms::default(),
        }
    }

    /// perf's tracking event of system-wide recordings (`dummy:HG`): it
    /// never samples and carries the mmap, comm and task records.
    pub fn tracking_dummy() -> EventSpec {
        let mut e = EventSpec {
            name: String::new(),
            type_: PERF_TYPE_SOFTWARE,
            config: 9,
            exclude_user: false,
            exclude_kernel: false,
            exclude_hv: false,
            exclude_guest: false,
            exclude_host: false,
            precise_ip: 0,
            filter: None,
            sample_read: false,
            pmu: PmuTerms::default(),
        };
        e.rename_generated("dummy");
        e
    }

    /// Names the event as perf names an event it made itself: `base` and
    /// the modifiers its bits say.
    pub fn rename_generated(&mut self, base: &str) {
        self.name = format!("{base}{}", self.modifier_suffix());
    }

    /// The dummy software event.
    pub fn is_dummy(&self) -> bool {
        self.type_ == PERF_TYPE_SOFTWARE && self.config == 9
    }

    /// perf's fallback of cycles to the cpu-clock software event: the same
    /// modifiers, the name made again from them (perf's
    /// `evsel__add_modifiers`: `cycles:uk` becomes `cpu-clock:kuH`).
    pub fn cycles_to_cpu_clock(&mut self) {
        self.type_ = PERF_TYPE_SOFTWARE;
        self.config = 0;
        self.rename_generated("cpu-clock");
    }

    /// The modifiers perf prints after a generated event name.
    fn modifier_suffix(&self) -> String {
        let mut m = String::new();
        let mut guest_default = false;
        if self.exclude_kernel || self.exclude_user || self.exclude_hv {
            for (excluded, c) in [
                (self.exclude_kernel, 'k'),
                (self.exclude_user, 'u'),
                (self.exclude_hv, 'h'),
            ] {
                if !excluded {
                    m.push(c);
                }
            }
            guest_default = true;
        }
        if self.precise_ip > 0 {
            m.push_str(&"ppp"[..usize::from(self.precise_ip.min(3))]);
            guest_default = true;
        }
        if self.exclude_host || self.exclude_guest == guest_default {
            if !self.exclude_host {
                m.push('H');
            }
            if !self.exclude_guest {
                m.push('G');
            }
        }
        if m.is_empty() {
            m
        } else {
            format!(":{m}")
        }
    }
}

/// Whether the CPU is AMD's (from /proc/cpuinfo, as perf's cpuid).
fn cpu_is_amd() -> bool {
    std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|c| {
        c.lines()
            .find(|l| l.starts_with("vendor_id"))
            .is_some_and(|l| l.contains("AuthenticAMD"))
    })
}

/// Events opened together (`{a,b}`); a lone event is a group of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub members: Vec<EventSpec>,
}

/// Software events by perf's names (aliases first-class).
const SOFTWARE: &[(&str, u64, &str)] = &[
    ("cpu-clock", 0, "cpu-clock"),
    ("task-clock", 1, "task-clock"),
    ("page-faults", 2, "page-faults"),
    ("faults", 2, "faults"),
    ("context-switches", 3, "context-switches"),
    ("cs", 3, "cs"),
    ("cpu-migrations", 4, "cpu-migrations"),
    ("migrations", 4, "migrations"),
    ("minor-faults", 5, "minor-faults"),
    ("major-faults", 6, "major-faults"),
    ("alignment-faults", 7, "alignment-faults"),
    ("emulation-faults", 8, "emulation-faults"),
    ("dummy", 9, "dummy"),
    ("bpf-output", 10, "bpf-output"),
    ("cgroup-switches", 11, "cgroup-switches"),
];

/// Hardware events by perf's names.
const HARDWARE: &[(&str, u64)] = &[
    ("cpu-cycles", 0),
    ("cycles", 0),
    ("instructions", 1),
    ("cache-references", 2),
    ("cache-misses", 3),
    ("branch-instructions", 4),
    ("branches", 4),
    ("branch-misses", 5),
    ("bus-cycles", 6),
    ("stalled-cycles-frontend", 7),
    ("idle-cycles-frontend", 7),
    ("stalled-cycles-backend", 8),
    ("idle-cycles-backend", 8),
    ("ref-cycles", 9),
];

/// perf's generic hardware cache events (type HW_CACHE): cache, then the
/// operation and result names perf joins to it (`L1-dcache-load-misses`).
const CACHES: &[(&str, u64)] = &[
    ("L1-dcache", 0),
    ("L1-icache", 1),
    ("LLC", 2),
    ("dTLB", 3),
    ("iTLB", 4),
    ("branch", 5),
    ("node", 6),
];
const CACHE_OPS: &[(&str, &str, u64)] = &[
    ("loads", "load-misses", 0),
    ("stores", "store-misses", 1),
    ("prefetches", "prefetch-misses", 2),
];

/// A cache event by perf's name: `CACHE-OP` (accesses) or `CACHE-OP-misses`.
fn cache_event(name: &str) -> Option<(String, u64)> {
    for &(cache, c) in CACHES {
        let Some(rest) = name
            .strip_prefix(&cache.to_ascii_lowercase())
            .and_then(|r| r.strip_prefix('-'))
        else {
            continue;
        };
        for &(access, miss, op) in CACHE_OPS {
            if rest == access {
                return Some((format!("{cache}-{access}"), c | op << 8));
            }
            if rest == miss {
                return Some((format!("{cache}-{miss}"), c | op << 8 | 1 << 16));
            }
        }
    }
    None
}

/// One line of `sear list`: the name (with perf's `OR alias`), the kind as
/// perf says it, and the event to try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub names: String,
    pub kind: &'static str,
    pub type_: u32,
    pub config: u64,
}

/// perf list's software and hardware events (aliases joined with ` OR `) and
/// its generic cache events, each kind sorted by name as perf sorts them.
pub fn catalog() -> Vec<Listed> {
    let mut out = Vec::new();
    let mut push = |table: Vec<(&str, u64)>, kind: &'static str, type_: u32| {
        let mut rows: Vec<Listed> = Vec::new();
        for (name, config) in table {
            match rows.last_mut() {
                Some(last) if last.config == config => {
                    last.names = format!("{} OR {name}", last.names);
                }
                _ => rows.push(Listed {
                    names: name.to_owned(),
                    kind,
                    type_,
                    config,
                }),
            }
        }
        rows.sort_by(|a, b| a.names.cmp(&b.names));
        out.extend(rows);
    };
    push(HARDWARE.to_vec(), "Hardware event", PERF_TYPE_HARDWARE);
    push(
        SOFTWARE.iter().map(|s| (s.0, s.1)).collect(),
        "Software event",
        PERF_TYPE_SOFTWARE,
    );
    let mut cache = Vec::new();
    for &(c, cid) in CACHES {
        for &(access, miss, op) in CACHE_OPS {
            cache.push((format!("{c}-{access}"), cid | op << 8));
            cache.push((format!("{c}-{miss}"), cid | op << 8 | 1 << 16));
        }
    }
    cache.sort();
    out.extend(cache.into_iter().map(|(names, config)| Listed {
        names,
        kind: "Hardware cache event",
        type_: PERF_TYPE_HW_CACHE,
        config,
    }));
    out
}

/// The tracepoints tracefs lists, `system:event`, sorted as perf sorts them
/// (those without an id left out, as perf does).
pub fn tracepoint_names() -> Vec<(String, String)> {
    let Some(events) = tracefs_events() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for s in dir_names(&events) {
        for n in dir_names(&events.join(&s)) {
            if events.join(&s).join(&n).join("id").is_file() {
                out.push((s.clone(), n));
            }
        }
    }
    out.sort_by(|a, b| format!("{}:{}", a.0, a.1).cmp(&format!("{}:{}", b.0, b.1)));
    out
}

/// The names `-e` accepts, for help texts and errors.
pub fn known_names() -> Vec<&'static str> {
    SOFTWARE
        .iter()
        .map(|s| s.0)
        .chain(HARDWARE.iter().map(|h| h.0))
        .chain([
            "L1-dcache-loads",
            "LLC-load-misses",
            "dTLB-loads (and perf's other cache events)",
        ])
        .collect()
}

/// Parses a comma-separated `-e` list with groups: `cpu-clock,{cycles,instructions}:u`.
pub fn parse_list(list: &str) -> Result<Vec<Group>> {
    let mut groups = Vec::new();
    let mut rest = list.trim();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('{') {
            let close = after.find('}').ok_or_else(|| Error::BadEvent {
                spec: list.into(),
                detail: "a group opened with '{' is not closed with '}'".into(),
            })?;
            let inner = &after[..close];
            let mut tail = &after[close + 1..];
            let mut mods = "";
            if let Some(m) = tail.strip_prefix(':') {
                let end = m.find(',').unwrap_or(m.len());
                mods = &m[..end];
                tail = &m[end..];
            }
            let mut members = Vec::new();
            for one in split_events(inner) {
                for mut e in parse_many(one.trim())? {
                    // (As perf: a group's modifiers change its events'
                    // bits, not their names.)
                    let name = e.name.clone();
                    apply_modifiers(&mut e, mods, one, true)?;
                    e.name = name;
                    members.push(e);
                }
            }
            if members.is_empty() {
                return Err(Error::BadEvent {
                    spec: list.into(),
                    detail: "empty group".into(),
                });
            }
            groups.push(Group { members });
            rest = tail.trim_start_matches(',').trim();
        } else {
            let end = top_level_comma(rest).unwrap_or(rest.len());
            let one = rest[..end].trim();
            if !one.is_empty() {
                for e in parse_many(one)? {
                    groups.push(Group { members: vec![e] });
                }
            }
            rest = rest[end..].trim_start_matches(',').trim();
        }
    }
    if groups.is_empty() {
        return Err(Error::BadEvent {
            spec: list.into(),
            detail: "no event named".into(),
        });
    }
    Ok(groups)
}

/// The first comma of `s` outside a PMU event's `/.../` terms.
fn top_level_comma(s: &str) -> Option<usize> {
    let mut inside = false;
    for (i, c) in s.char_indices() {
        match c {
            '/' => inside = !inside,
            ',' if !inside => return Some(i),
            _ => {}
        }
    }
    None
}

/// A group's events, split at commas outside PMU terms.
fn split_events(mut s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    while let Some(i) = top_level_comma(s) {
        out.push(&s[..i]);
        s = &s[i + 1..];
    }
    out.push(s);
    out
}

/// Where the kernel lists its PMUs.
const PMU_DIR: &str = "/sys/bus/event_source/devices";

/// The PMUs this machine has (perf's `NAME/.../` event prefixes).
pub fn pmu_names() -> Vec<String> {
    // (Symbolic links to the devices.)
    dir_files(std::path::Path::new(PMU_DIR))
}

/// The named events of the PMUs here (`PMU/EVENT/`, perf list's "Kernel
/// PMU event" lines), PMUs and their events in name order; the unit, scale
/// and other side files of an event are not events.
pub fn pmu_events() -> Vec<String> {
    let mut out = Vec::new();
    for pmu in pmu_names() {
        let dir = std::path::Path::new(PMU_DIR).join(&pmu).join("events");
        for ev in dir_files(&dir) {
            if !ev.contains('.') {
                out.push(format!("{pmu}/{ev}/"));
            }
        }
    }
    out
}

/// A number as perf's event terms take it: decimal, or hex after `0x`.
fn term_number(v: &str) -> Option<u64> {
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// `rNNNN`: a raw event of the CPU's PMU, its config in hex.
fn raw_event(base: &str) -> Option<u64> {
    let hex = base.strip_prefix('r')?;
    (!hex.is_empty() && hex.len() <= 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u64::from_str_radix(hex, 16).ok())
        .flatten()
}

/// `PMU/TERMS/[MODS]` (perf's event syntax for any PMU): the PMU's type
/// from sysfs, `config`, `config1`, `config2`, `period`, `freq` and `name`
/// terms, the PMU's own format fields (`event=0x3c`, placed in the config
/// bits its `format/` file names) and event aliases (`events/`). None
/// where `spec` is not of that form.
fn pmu_event(spec: &str) -> Result<Option<EventSpec>> {
    let Some((pmu, rest)) = spec.split_once('/') else {
        return Ok(None);
    };
    let Some((terms, mods)) = rest.rsplit_once('/') else {
        return Ok(None);
    };
    let bad = |detail: String| Error::BadEvent {
        spec: spec.into(),
        detail,
    };
    let dir = std::path::Path::new(PMU_DIR).join(pmu);
    let type_ = std::fs::read_to_string(dir.join("type"))
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .ok_or_else(|| {
            bad(format!(
                "this machine has no PMU named '{pmu}' (it has: {}; a virtual machine without \
                 a virtual PMU has no `cpu` PMU)",
                pmu_names().join(", ")
            ))
        })?;
    let mut e = EventSpec::plain(spec.to_owned(), type_, 0);
    let mut name = None;
    let mut pending: Vec<(String, Option<String>)> = terms
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| match t.split_once('=') {
            Some((k, v)) => (k.trim().to_owned(), Some(v.trim().to_owned())),
            None => (t.to_owned(), None),
        })
        .rev()
        .collect();
    let mut aliases = 0;
    while let Some((key, value)) = pending.pop() {
        let number = || -> Result<u64> {
            match value.as_deref() {
                None => Ok(1),
                Some(v) => term_number(v).ok_or_else(|| bad(format!("'{key}={v}': not a number"))),
            }
        };
        match key.as_str() {
            "config" => e.config = number()?,
            "config1" => e.pmu.config1 = number()?,
            "config2" => e.pmu.config2 = number()?,
            "period" => e.pmu.period = Some(number()?),
            "freq" => e.pmu.freq = Some(number()?),
            "name" => name = value.clone(),
            _ => {
                let format = std::fs::read_to_string(dir.join("format").join(&key)).ok();
                let alias = std::fs::read_to_string(dir.join("events").join(&key)).ok();
                if let Some(f) = format {
                    place_bits(&mut e, f.trim(), number()?)
                        .map_err(|d| bad(format!("'{key}': {d}")))?;
                } else if let (Some(a), None) = (alias, &value) {
                    // An alias's own terms, in its place (bounded: an
                    // alias naming an alias is not followed far).
                    aliases += 1;
                    if aliases > 16 {
                        return Err(bad(format!("'{key}': aliases nest too deep")));
                    }
                    for t in a.trim().split(',').rev() {
                        pending.push(match t.split_once('=') {
                            Some((k, v)) => (k.trim().to_owned(), Some(v.trim().to_owned())),
                            None => (t.trim().to_owned(), None),
                        });
                    }
                } else {
                    let mut known = vec!["config", "config1", "config2", "period", "freq", "name"]
                        .into_iter()
                        .map(str::to_owned)
                        .collect::<Vec<_>>();
                    known.extend(dir_files(&dir.join("format")));
                    known.extend(dir_files(&dir.join("events")));
                    return Err(bad(format!(
                        "unknown term '{key}' for pmu '{pmu}' (valid terms: {})",
                        known.join(",")
                    )));
                }
            }
        }
    }
    apply_modifiers(&mut e, mods.strip_prefix(':').unwrap_or(mods), spec, false)?;
    // (perf names the event as written, unless a name term names it.)
    e.name = name.unwrap_or_else(|| spec.to_owned());
    Ok(Some(e))
}

/// Puts `value` in the bits a PMU format file names (`config:0-7`,
/// `config1:0-63`, `config:0-7,32-35`; a single bit `config:21`).
fn place_bits(e: &mut EventSpec, format: &str, value: u64) -> std::result::Result<(), String> {
    let (word, ranges) = format
        .split_once(':')
        .ok_or_else(|| format!("format '{format}' not understood"))?;
    let target = match word {
        "config" => &mut e.config,
        "config1" => &mut e.pmu.config1,
        "config2" => &mut e.pmu.config2,
        _ => return Err(format!("format '{format}': no such config word")),
    };
    let mut v = value;
    for r in ranges.split(',') {
        let (lo, hi) = match r.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>(), b.trim().parse::<u32>()),
            None => (r.trim().parse::<u32>(), r.trim().parse::<u32>()),
        };
        let (Ok(lo), Ok(hi)) = (lo, hi) else {
            return Err(format!("format '{format}' not understood"));
        };
        if lo > hi || hi > 63 {
            return Err(format!("format '{format}' not understood"));
        }
        let width = hi - lo + 1;
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        *target = (*target & !(mask << lo)) | ((v & mask) << lo);
        v = if width == 64 { 0 } else { v >> width };
    }
    if v != 0 {
        return Err(format!("value {value:#x} too big for format '{format}'"));
    }
    Ok(())
}

/// The files of a directory, sorted.
fn dir_files(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// One event name, or a tracepoint pattern naming several (`sched:*`).
pub fn parse_many(spec: &str) -> Result<Vec<EventSpec>> {
    match tracepoints(spec)? {
        Some(v) => Ok(v),
        None => Ok(vec![parse_one(spec)?]),
    }
}

/// The tracing filesystem's `events` directory (tracefs, or under debugfs).
pub fn tracefs_events() -> Option<std::path::PathBuf> {
    let found = || {
        [
            "/sys/kernel/tracing/events",
            "/sys/kernel/debug/tracing/events",
        ]
        .iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.join("header_page").is_file())
    };
    found().or_else(|| {
        mount_tracefs();
        found()
    })
}

/// Mounts tracefs at its usual place when no mount of it is found, as perf
/// does (its `tracefs__mount`; a machine may boot without one): once per
/// run, and only where the kernel has the mount point and we may mount.
fn mount_tracefs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if !std::path::Path::new("/sys/kernel/tracing").is_dir() {
            return;
        }
        // SAFETY: the strings are NUL-terminated constants; a null source
        // and data are what mount(2) takes for tracefs.
        let r = unsafe {
            libc::mount(
                std::ptr::null(),
                c"/sys/kernel/tracing".as_ptr(),
                c"tracefs".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if r == 0 {
            log::debug!("tracefs was not mounted: mounted it at /sys/kernel/tracing, as perf does");
        } else {
            log::debug!(
                "tracefs is not mounted and mounting it failed: {}",
                std::io::Error::last_os_error()
            );
        }
    });
}

/// `*` and `?` as the shell (and perf) match event names.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

/// Subdirectories of a directory in the order the kernel lists them (perf's
/// readdir).
pub(crate) fn dir_names(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// `SYS:NAME` (with `*`/`?` in either part, and perf's modifiers after another
/// `:`): the tracepoints it names, in tracefs order; None where `spec` is not
/// a tracepoint's form.
fn tracepoints(spec: &str) -> Result<Option<Vec<EventSpec>>> {
    let mut parts = spec.splitn(3, ':');
    let (Some(sys), Some(name)) = (parts.next(), parts.next()) else {
        return Ok(None);
    };
    let mods = parts.next().unwrap_or("");
    let lower = sys.to_ascii_lowercase();
    let is_other = SOFTWARE.iter().any(|s| s.0 == lower)
        || HARDWARE.iter().any(|h| h.0 == lower)
        || cache_event(&lower).is_some();
    if is_other || sys.is_empty() || name.is_empty() || sys.contains('/') || name.contains('/') {
        return Ok(None);
    }
    let Some(events) = tracefs_events() else {
        return Err(Error::BadEvent {
            spec: spec.into(),
            detail: "tracepoints need the tracing filesystem, which is not mounted here or \
                     not readable (mount -t tracefs nodev /sys/kernel/tracing; as root)"
                .into(),
        });
    };
    let mut out = Vec::new();
    for s in dir_names(&events)
        .into_iter()
        .filter(|s| glob_match(sys, s))
    {
        for n in dir_names(&events.join(&s))
            .into_iter()
            .filter(|n| glob_match(name, n))
        {
            let Ok(id) = std::fs::read_to_string(events.join(&s).join(&n).join("id")) else {
                continue;
            };
            let Ok(config) = id.trim().parse::<u64>() else {
                continue;
            };
            let mut e = EventSpec::plain(format!("{s}:{n}"), PERF_TYPE_TRACEPOINT, config);
            apply_modifiers(&mut e, mods, spec, false)?;
            out.push(e);
        }
    }
    if out.is_empty() {
        let systems = dir_names(&events);
        let hint = if systems.iter().any(|s| glob_match(sys, s)) {
            format!(
                "`sear list '{sys}:*'` lists that system's events ({}/{sys})",
                events.display()
            )
        } else {
            format!("`sear list tracepoint` lists them ({})", events.display())
        };
        return Err(Error::BadEvent {
            spec: spec.into(),
            detail: format!("no such tracepoint ({hint})"),
        });
    }
    Ok(Some(out))
}

/// One event name with optional `:modifiers`.
pub fn parse_one(spec: &str) -> Result<EventSpec> {
    if let Some(e) = pmu_event(spec)? {
        return Ok(e);
    }
    let (base, mods) = match spec.split_once(':') {
        Some((b, m)) => (b, m),
        None => (spec, ""),
    };
    let lower = base.to_ascii_lowercase();
    let (name, type_, config) =
        if let Some(&(_, config, name)) = SOFTWARE.iter().find(|s| s.0 == lower) {
            (name.to_string(), PERF_TYPE_SOFTWARE, config)
        } else if let Some(&(name, config)) = HARDWARE.iter().find(|h| h.0 == lower) {
            (name.to_string(), PERF_TYPE_HARDWARE, config)
        } else if let Some((name, config)) = cache_event(&lower) {
            (name, PERF_TYPE_HW_CACHE, config)
        } else if let Some(config) = raw_event(base) {
            (base.to_owned(), PERF_TYPE_RAW, config)
        } else {
            return Err(Error::BadEvent {
                spec: spec.into(),
                detail: format!(
                    "unknown event (`sear list` shows the events this machine has: {}, \
                     perf's cache events, tracepoints `SYSTEM:EVENT`, raw events `rNNNN` and \
                     PMU events `PMU/TERMS/` of the PMUs here: {})",
                    known_names().join(", "),
                    pmu_names().join(", ")
                ),
            });
        };
    let mut e = EventSpec::plain(name, type_, config);
    apply_modifiers(&mut e, mods, spec, false)?;
    Ok(e)
}

/// perf's modifiers: u (user only), k (kernel only), h (hypervisor), p/pp/ppp
/// (precise), P (maximum precision), G/H (guest or host only), with perf's
/// rules for the guest/host bits (`get_event_modifier`): with any modifier
/// the guest is excluded only by `u`, `p` or `H`.
fn apply_modifiers(e: &mut EventSpec, mods: &str, spec: &str, group: bool) -> Result<()> {
    // `S` (leader sampling): on a group, not a modifier the guest rules
    // see; on one event, one (and part of its name), as in perf 6.1.
    if mods.contains('S') {
        e.sample_read = true;
    }
    let stripped = if group {
        mods.replace('S', "")
    } else {
        mods.to_owned()
    };
    let mods = stripped.as_str();
    if mods.is_empty() {
        return Ok(());
    }
    let (mut u, mut k, mut h) = (false, false, false);
    let (mut e_guest, mut e_host, mut gh) = (false, false, false);
    for c in mods.chars() {
        match c {
            'u' => {
                u = true;
                if !gh {
                    e_guest = true;
                }
            }
            'k' => k = true,
            'h' => h = true,
            'p' => {
                e.precise_ip = (e.precise_ip + 1).min(3);
                if !gh {
                    e_guest = true;
                }
            }
            'P' => e.precise_ip = 3,
            'S' => {}
            'G' | 'H' => {
                if !gh {
                    gh = true;
                    e_guest = true;
                    e_host = true;
                }
                if c == 'G' {
                    e_guest = false;
                } else {
                    e_host = false;
                }
            }
            other => {
                return Err(Error::BadEvent {
                    spec: spec.into(),
                    detail: format!("unknown modifier '{other}' (known: u, k, h, p, P, H, G, S)"),
                })
            }
        }
    }
    if u || k || h {
        // As perf: naming some privilege levels excludes the others.
        e.exclude_user = !u;
        e.exclude_kernel = !k;
        e.exclude_hv = !h;
    }
    e.exclude_guest = e_guest;
    e.exclude_host = e_host;
    e.name = format!("{}:{}", e.name, mods);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_groups_and_modifiers() {
        let g = parse_list("cpu-clock,{cs,faults}:u,cycles:k").unwrap();
        assert_eq!(g.len(), 3);
        assert_eq!(g[0].members[0].config, 0);
        assert_eq!(g[1].members.len(), 2);
        // (perf names a group's events without the group's modifiers.)
        assert_eq!(g[1].members[0].name, "cs");
        assert!(g[1].members[1].exclude_kernel && !g[1].members[1].exclude_user);
        assert!(g[2].members[0].is_hardware());
        assert!(g[2].members[0].exclude_user && !g[2].members[0].exclude_kernel);
    }

    #[test]
    fn pmu_terms_and_raw_events() {
        let mut e = EventSpec::plain("x".into(), 8, 0);
        place_bits(&mut e, "config:0-7", 0x3c).unwrap();
        place_bits(&mut e, "config:8-15", 0x1).unwrap();
        place_bits(&mut e, "config:21", 1).unwrap();
        assert_eq!(e.config, 0x20013c);
        place_bits(&mut e, "config1:0-3,8-11", 0xab).unwrap();
        assert_eq!(e.pmu.config1, 0xa0b);
        assert!(place_bits(&mut e, "config:0-3", 0x10).is_err());
        assert!(place_bits(&mut e, "config:9-3", 1).is_err());
        assert!(place_bits(&mut e, "config3:0-3", 1).is_err());
        assert_eq!(raw_event("r003c"), Some(0x3c));
        assert_eq!(raw_event("rxyz"), None);
        assert_eq!(raw_event("r"), None);
        // Commas inside a PMU event's terms do not split the list.
        assert_eq!(
            split_events("software/config=0,period=9/,cs"),
            ["software/config=0,period=9/", "cs"]
        );
        let g = parse_list("software/config=2,period=1/u,cs").unwrap();
        assert_eq!(g.len(), 2);
        let e = &g[0].members[0];
        assert_eq!((e.type_, e.config, e.pmu.period), (1, 2, Some(1)));
        assert!(e.exclude_kernel && !e.exclude_user);
        assert_eq!(e.name, "software/config=2,period=1/u");
        assert!(parse_list("nosuch/config=1/").is_err());
        assert!(parse_list("software/config=zz/").is_err());
    }

    #[test]
    fn leader_sampling_marks_the_group() {
        let g = parse_list("{cpu-clock,faults}:S,cs").unwrap();
        assert!(g[0].members.iter().all(|m| m.sample_read));
        assert!(!g[1].members[0].sample_read);
        assert_eq!(g[0].members[0].name, "cpu-clock");
        assert_eq!(
            parse_list("cpu-clock:S").unwrap()[0].members[0].name,
            "cpu-clock:S"
        );
    }

    #[test]
    fn guest_and_host_bits_and_fallback_names_as_perf() {
        // (perf 6.1's `perf evlist -v` of each.)
        let bits = |s: &str| {
            let e = parse_one(s).unwrap();
            (e.exclude_guest, e.exclude_host)
        };
        assert_eq!(bits("cpu-clock"), (true, false));
        assert_eq!(bits("cpu-clock:u"), (true, false));
        assert_eq!(bits("cpu-clock:k"), (false, false));
        assert_eq!(bits("cpu-clock:H"), (true, false));
        assert_eq!(bits("cpu-clock:G"), (false, true));
        assert_eq!(bits("cpu-clock:p"), (true, false));
        assert_eq!(bits("task-clock:uk"), (true, false));
        let mut e = parse_one("cycles:uk").unwrap();
        e.cycles_to_cpu_clock();
        assert_eq!(e.name, "cpu-clock:kuH");
        assert!(e.exclude_hv && !e.exclude_user && !e.exclude_kernel);
        let mut d = EventSpec::default_cycles();
        d.exclude_guest = false;
        d.cycles_to_cpu_clock();
        assert_eq!(d.name, "cpu-clock:ppp");
        d.exclude_guest = true;
        d.cycles_to_cpu_clock();
        assert_eq!(d.name, "cpu-clock:pppH");
    }

    #[test]
    fn cache_events_by_perfs_names() {
        let e = parse_one("L1-dcache-load-misses").unwrap();
        assert_eq!((e.type_, e.config), (PERF_TYPE_HW_CACHE, 0x10000));
        let e = parse_one("llc-loads").unwrap();
        assert_eq!((e.name.as_str(), e.config), ("LLC-loads", 2));
        let e = parse_one("dTLB-prefetch-misses:u").unwrap();
        assert_eq!(e.config, 3 | 2 << 8 | 1 << 16);
        assert!(e.is_hardware() && e.exclude_kernel);
        assert!(parse_one("L1-dcache-misses").is_err());
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        for bad in [
            "",
            ",",
            "{",
            "{}",
            "nosuch",
            "cpu-clock:z",
            "{a,b",
            "}",
            ":",
        ] {
            assert!(parse_list(bad).is_err(), "{bad:?}");
        }
    }
}
