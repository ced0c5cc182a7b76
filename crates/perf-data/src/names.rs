//! perf's names for events given only their attr (used when a file has no EVENT_DESC).

use crate::attr::{flag, EventAttr};
use crate::consts::*;

const HW: &[&str] = &[
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
    "bus-cycles",
    "stalled-cycles-frontend",
    "stalled-cycles-backend",
    "ref-cycles",
];

const SW: &[&str] = &[
    "cpu-clock",
    "task-clock",
    "page-faults",
    "context-switches",
    "cpu-migrations",
    "minor-faults",
    "major-faults",
    "alignment-faults",
    "emulation-faults",
    "dummy",
    "bpf-output",
    "cgroup-switches",
];

const CACHE: &[&str] = &[
    "L1-dcache",
    "L1-icache",
    "LLC",
    "dTLB",
    "iTLB",
    "branch",
    "node",
];
const CACHE_OP: &[&str] = &["load", "store", "prefetch"];
const CACHE_RESULT: &[&str] = &["refs", "misses"];

/// The name perf derives for an event from its attr, with modifiers.
pub fn event_name(a: &EventAttr) -> String {
    let base = match a.type_ {
        PERF_TYPE_HARDWARE => HW
            .get(a.config as usize)
            .map(|s| s.to_string())
            .unwrap_or_else(|| format!("unknown-hardware:{}", a.config)),
        PERF_TYPE_SOFTWARE => SW
            .get(a.config as usize)
            .map(|s| s.to_string())
            .unwrap_or_else(|| format!("unknown-software:{}", a.config)),
        PERF_TYPE_TRACEPOINT => "unknown:unknown".to_string(),
        PERF_TYPE_HW_CACHE => {
            let (c, op, res) = (
                (a.config & 0xff) as usize,
                ((a.config >> 8) & 0xff) as usize,
                ((a.config >> 16) & 0xff) as usize,
            );
            match (CACHE.get(c), CACHE_OP.get(op), CACHE_RESULT.get(res)) {
                (Some(c), Some(op), Some(res)) => {
                    if *res == "refs" {
                        format!("{c}-{op}s")
                    } else {
                        format!("{c}-{op}-{res}")
                    }
                }
                _ => "unknown-ext-hardware-cache-type".to_string(),
            }
        }
        PERF_TYPE_RAW => format!("raw {:#x}", a.config),
        PERF_TYPE_BREAKPOINT => format!("mem:{:#x}", a.config1),
        t => format!("unknown attr type: {t}"),
    };
    base + &modifiers(a)
}

/// perf's modifier suffix (`:u`, `:k`, `:ppp`, `:uH`, ...) for an attr,
/// following perf's rules: excluded contexts, precision, then host/guest.
pub fn modifiers(a: &EventAttr) -> String {
    let mut m = String::new();
    let mut exclude_guest_default = false;
    let ek = a.flag(flag::EXCLUDE_KERNEL);
    let eu = a.flag(flag::EXCLUDE_USER);
    let eh = a.flag(flag::EXCLUDE_HV);
    if ek || eu || eh {
        if !ek {
            m.push('k');
        }
        if !eu {
            m.push('u');
        }
        if !eh {
            m.push('h');
        }
        exclude_guest_default = true;
    }
    if a.precise_ip() > 0 {
        for _ in 0..a.precise_ip().min(3) {
            m.push('p');
        }
        exclude_guest_default = true;
    }
    let ehost = a.flag(flag::EXCLUDE_HOST);
    let eguest = a.flag(flag::EXCLUDE_GUEST);
    if ehost || eguest == exclude_guest_default {
        if !ehost {
            m.push('H');
        }
        if !eguest {
            m.push('G');
        }
    }
    if m.is_empty() {
        m
    } else {
        format!(":{m}")
    }
}

impl EventAttr {
    /// A perf-style default name for the event when the file does not name it.
    pub fn default_name(&self) -> String {
        event_name(self)
    }
}
