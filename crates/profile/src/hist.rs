//! Histograms of samples by sort keys (perf's `hists`), one per event.

use std::collections::HashMap;

use crate::machine::{Landing, Machine};

/// A column perf can sort and group samples by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortKey {
    Comm,
    /// perf's "pid" key is the thread: its tid and comm.
    Pid,
    Dso,
}

impl SortKey {
    /// Parses perf's `--sort` names.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "comm" => SortKey::Comm,
            "pid" => SortKey::Pid,
            "dso" => SortKey::Dso,
            _ => return None,
        })
    }
    /// The column header perf prints.
    pub fn header(self) -> &'static str {
        match self {
            SortKey::Comm => "Command",
            SortKey::Pid => "    Pid:Command",
            SortKey::Dso => "Shared Object",
        }
    }
}

/// The value of one sort key for a sample.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// The comm at sample time.
    Comm(String),
    /// A thread, shown with its last comm.
    Thread(i32),
    /// A DSO's short name; None where the address hit no map.
    Dso(Option<String>),
}

impl Key {
    /// perf's order among entries of equal period.
    fn cmp_for_sort(&self, other: &Key) -> std::cmp::Ordering {
        use std::cmp::Ordering::*;
        match (self, other) {
            (Key::Comm(a), Key::Comm(b)) => a.cmp(b),
            (Key::Thread(a), Key::Thread(b)) => a.cmp(b),
            // Entries without a DSO go after those with one.
            (Key::Dso(a), Key::Dso(b)) => match (a, b) {
                (Some(a), Some(b)) => a.cmp(b),
                (None, None) => Equal,
                (None, Some(_)) => Greater,
                (Some(_), None) => Less,
            },
            _ => Equal,
        }
    }

    /// The text perf prints; `comm_of` gives a thread's last comm.
    pub fn display(&self, comm_of: &dyn Fn(i32) -> String) -> String {
        match self {
            Key::Comm(c) => c.clone(),
            Key::Thread(tid) => format!("{tid:>7}:{}", comm_of(*tid)),
            Key::Dso(Some(d)) => d.clone(),
            Key::Dso(None) => "[unknown]".to_string(),
        }
    }
}

/// One row: the values of the sort keys and what fell into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistEntry {
    pub keys: Vec<Key>,
    pub period: u64,
    pub samples: u64,
}

/// The rows of one event.
#[derive(Debug, Clone, Default)]
pub struct Hists {
    index: HashMap<Vec<Key>, usize>,
    pub entries: Vec<HistEntry>,
    pub nr_samples: u64,
    pub total_period: u64,
}

impl Hists {
    pub fn add(&mut self, keys: Vec<Key>, period: u64) {
        self.nr_samples += 1;
        self.total_period = self.total_period.wrapping_add(period);
        match self.index.get(&keys) {
            Some(&i) => {
                let e = &mut self.entries[i];
                e.period = e.period.wrapping_add(period);
                e.samples += 1;
            }
            None => {
                self.index.insert(keys.clone(), self.entries.len());
                self.entries.push(HistEntry {
                    keys,
                    period,
                    samples: 1,
                });
            }
        }
    }

    /// Orders rows as perf prints them: by period, largest first; ties by
    /// the sort keys in order.
    pub fn sort(&mut self) {
        self.entries.sort_by(|a, b| {
            b.period.cmp(&a.period).then_with(|| {
                a.keys
                    .iter()
                    .zip(&b.keys)
                    .map(|(x, y)| x.cmp_for_sort(y))
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
        });
        self.index.clear();
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

/// The key values of one sample.
pub fn sample_keys(
    keys: &[SortKey],
    machine: &Machine,
    comm: &str,
    tid: i32,
    landing: Landing,
) -> Vec<Key> {
    keys.iter()
        .map(|k| match k {
            SortKey::Comm => Key::Comm(comm.to_string()),
            SortKey::Pid => Key::Thread(tid),
            SortKey::Dso => Key::Dso(match landing {
                Landing::Dso(d) => Some(dso_short_name(&machine.dsos()[d].name)),
                Landing::NotFound | Landing::Hypervisor => None,
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_follow_perf() {
        assert_eq!(dso_short_name("/usr/lib/libc.so.6"), "libc.so.6");
        assert_eq!(dso_short_name("/tmp/perf-2046.map"), "[JIT] tid 2046");
        assert_eq!(dso_short_name("/tmp/perf-x.map"), "perf-x.map");
        assert_eq!(
            dso_short_name("/lib/modules/3.4/kernel/net/mac80211/mac80211.ko"),
            "[mac80211]"
        );
        assert_eq!(
            dso_short_name("/lib/modules/x/snd-hda-intel.ko.xz"),
            "[snd_hda_intel]"
        );
        assert_eq!(dso_short_name("[kernel.kallsyms]"), "[kernel.kallsyms]");
    }
}
