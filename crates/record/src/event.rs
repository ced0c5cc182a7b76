//! perf's event names (`-e`): software and hardware events, modifiers and
//! groups, turned into (type, config, exclusions) before anything is opened.

use perf_data::{PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE};

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
    pub precise_ip: u8,
}

impl EventSpec {
    pub fn is_hardware(&self) -> bool {
        self.type_ == PERF_TYPE_HARDWARE
    }
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

/// The names `-e` accepts, for help texts and errors.
pub fn known_names() -> Vec<&'static str> {
    SOFTWARE
        .iter()
        .map(|s| s.0)
        .chain(HARDWARE.iter().map(|h| h.0))
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
            for one in inner.split(',') {
                let mut e = parse_one(one.trim())?;
                apply_modifiers(&mut e, mods, one)?;
                members.push(e);
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
            let end = rest.find(',').unwrap_or(rest.len());
            let one = rest[..end].trim();
            if !one.is_empty() {
                groups.push(Group {
                    members: vec![parse_one(one)?],
                });
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

/// One event name with optional `:modifiers`.
pub fn parse_one(spec: &str) -> Result<EventSpec> {
    let (base, mods) = match spec.split_once(':') {
        Some((b, m)) => (b, m),
        None => (spec, ""),
    };
    let lower = base.to_ascii_lowercase();
    let mut e = if let Some(&(_, config, name)) = SOFTWARE.iter().find(|s| s.0 == lower) {
        EventSpec {
            name: name.to_string(),
            type_: PERF_TYPE_SOFTWARE,
            config,
            exclude_user: false,
            exclude_kernel: false,
            exclude_hv: false,
            precise_ip: 0,
        }
    } else if let Some(&(name, config)) = HARDWARE.iter().find(|h| h.0 == lower) {
        EventSpec {
            name: name.to_string(),
            type_: PERF_TYPE_HARDWARE,
            config,
            exclude_user: false,
            exclude_kernel: false,
            exclude_hv: false,
            precise_ip: 0,
        }
    } else {
        return Err(Error::BadEvent {
            spec: spec.into(),
            detail: format!(
                "unknown event (known: {}; tracepoints, raw and cache events are not supported yet)",
                known_names().join(", ")
            ),
        });
    };
    apply_modifiers(&mut e, mods, spec)?;
    Ok(e)
}

/// perf's modifiers: u (user only), k (kernel only), h (hypervisor), p/pp/ppp
/// (precise), P (maximum precision); H and G (host/guest) are accepted.
fn apply_modifiers(e: &mut EventSpec, mods: &str, spec: &str) -> Result<()> {
    if mods.is_empty() {
        return Ok(());
    }
    let (mut u, mut k, mut h) = (false, false, false);
    for c in mods.chars() {
        match c {
            'u' => u = true,
            'k' => k = true,
            'h' => h = true,
            'p' => e.precise_ip = (e.precise_ip + 1).min(3),
            'P' => e.precise_ip = 3,
            'H' | 'G' => {}
            'S' => {
                return Err(Error::BadEvent {
                    spec: spec.into(),
                    detail: "leader sampling (:S) is not supported by sear record yet; \
                             record the events without :S"
                        .into(),
                })
            }
            other => {
                return Err(Error::BadEvent {
                    spec: spec.into(),
                    detail: format!("unknown modifier '{other}' (known: u, k, h, p, P, H, G)"),
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
        assert_eq!(g[1].members[0].name, "cs:u");
        assert!(g[1].members[1].exclude_kernel && !g[1].members[1].exclude_user);
        assert!(g[2].members[0].is_hardware());
        assert!(g[2].members[0].exclude_user && !g[2].members[0].exclude_kernel);
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
            "cpu-clock:S",
            "}",
            ":",
        ] {
            assert!(parse_list(bad).is_err(), "{bad:?}");
        }
    }
}
