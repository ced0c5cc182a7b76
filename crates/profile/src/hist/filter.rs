//! The samples `--comms`, `--dsos`, `--pid`, `--tid`, `--symbols`,
//! `--symbol-filter`, `-C` and `-U` keep, and perf's short DSO names they
//! match.

use super::*;

/// Samples kept by the filters.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub comms: Option<Vec<String>>,
    pub dsos: Option<Vec<String>>,
    pub pids: Option<Vec<i32>>,
    pub tids: Option<Vec<i32>>,
    pub symbols: Option<Vec<String>>,
    /// `--symbol-filter`: entries whose symbol name contains this text.
    pub symbol_filter: Option<String>,
    /// `-C/--cpu`: samples of other CPUs are left out altogether (needs
    /// the sums kept by CPU, [`crate::collect::CollectOptions::by_cpu`]).
    pub cpus: Option<Vec<u32>>,
    /// `-U/--hide-unresolved`: samples whose own address has no symbol
    /// are left out altogether.
    pub hide_unresolved: bool,
    /// `--socket-filter N`: entries of samples on other sockets are
    /// hidden (the socket of each CPU, from the recording's topology);
    /// samples without a CPU are on none.
    pub socket: Option<(i32, Vec<i32>)>,
}

impl Filters {
    /// The sort keys filtered to a single value (`--comms X`, `--dsos X`,
    /// `--symbols X`) with that value: perf hides their columns and names
    /// the value in the header instead.
    pub fn single_values(&self) -> Vec<(super::SortKey, String)> {
        use super::SortKey;
        [
            (SortKey::Comm, &self.comms),
            (SortKey::Dso, &self.dsos),
            (SortKey::Sym, &self.symbols),
        ]
        .into_iter()
        .filter_map(|(k, list)| match list.as_deref() {
            Some([one]) => Some((k, one.clone())),
            _ => None,
        })
        .collect()
    }
}

pub use crate::machine::dso_short_name;

impl Filters {
    /// Whether `--symbol-filter` hides the entry of `s` (an entry's own
    /// property: the samples behind it still count in the totals).
    pub(super) fn hides_symbol(&self, syms: &SymbolTable, s: &SymRef) -> bool {
        self.symbol_filter.as_deref().is_some_and(|text| match s {
            SymRef::Sym(i) => !syms.syms[*i as usize].name.contains(text),
            SymRef::Addr { .. } => true,
        })
    }

    /// Whether a sample is left out before it counts anywhere (perf skips
    /// such samples in its sample handler): `-C` and `-U`.
    pub(super) fn skips(&self, cpu: u32, sym: &SymRef) -> bool {
        if let Some(cpus) = &self.cpus {
            if !cpus.contains(&cpu) {
                return true;
            }
        }
        self.hide_unresolved && matches!(sym, SymRef::Addr { .. })
    }

    /// `--socket-filter`: whether a sample on `cpu` is on the socket.
    pub(super) fn keep_socket(&self, cpu: u32) -> bool {
        self.socket
            .as_ref()
            .is_none_or(|(want, sockets)| sockets.get(cpu as usize).is_some_and(|s| s == want))
    }

    pub(super) fn keep_thread(&self, comms: &[String], comm: u32, pid: i32, tid: i32) -> bool {
        if let Some(list) = &self.comms {
            match comms.get(comm as usize) {
                Some(c) if list.iter().any(|x| x == c) => {}
                _ => return false,
            }
        }
        if let Some(p) = &self.pids {
            if !p.contains(&pid) {
                return false;
            }
        }
        if let Some(t) = &self.tids {
            if !t.contains(&tid) {
                return false;
            }
        }
        true
    }

    pub(super) fn keep_sample(
        &self,
        dso_names: &[String],
        syms: &SymbolTable,
        l: &Loc,
        s: &SymRef,
    ) -> bool {
        if let Some(list) = &self.dsos {
            // (perf matches a DSO's short name or its path; the names here
            // are paths with `-v`.)
            let name = dso_names.get(l.dso as usize);
            let listed = |n: &String| {
                list.iter()
                    .any(|x| x == n || (n.starts_with('/') && *x == dso_short_name(n)))
            };
            if !name.is_some_and(listed) {
                return false;
            }
        }
        if let Some(list) = &self.symbols {
            match s {
                SymRef::Sym(i) => {
                    if !list.iter().any(|x| *x == syms.syms[*i as usize].name) {
                        return false;
                    }
                }
                SymRef::Addr { .. } => return false,
            }
        }
        true
    }
}
