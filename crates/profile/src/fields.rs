//! The report's columns (perf's output fields, `-F`) and the order its rows
//! are sorted in: value fields (overhead, samples, period, ...) beside the
//! sort keys of [`crate::hist`], combined as perf 6.1 combines `--fields`,
//! `--sort`, `--children`, `-n` and `--show-total-period`.
//!
//! ```
//! use profile::fields::{Column, Field, Layout, LayoutOptions};
//! use profile::hist::SortKey;
//! let l = Layout::new(&LayoutOptions { fields: Some("comm,overhead"), ..Default::default() })?;
//! assert_eq!(l.columns, [Column::Key(SortKey::Comm), Column::Field(Field::Overhead)]);
//! # Ok::<(), profile::Error>(())
//! ```

use std::cmp::Ordering;

use crate::hist::{HistEntry, Hists, Key, Names, RankedNames, SortKey, SymRef, SORT_KEY_NAMES};

/// A value column (perf's "hpp" fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// The entry's own period, in percent.
    Overhead,
    /// The period with callees' ("Children"), in percent.
    OverheadChildren,
    /// The own period of samples taken in kernel mode, in percent.
    OverheadSys,
    /// ... in user mode.
    OverheadUs,
    /// ... in guest kernel mode.
    OverheadGuestSys,
    /// ... in guest user mode.
    OverheadGuestUs,
    /// The number of the entry's own samples.
    Samples,
    /// The entry's own period.
    Period,
}

impl Field {
    /// Parses perf's field names.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "overhead" => Field::Overhead,
            "overhead_children" => Field::OverheadChildren,
            "overhead_sys" => Field::OverheadSys,
            "overhead_us" => Field::OverheadUs,
            "overhead_guest_sys" => Field::OverheadGuestSys,
            "overhead_guest_us" => Field::OverheadGuestUs,
            "sample" => Field::Samples,
            "period" => Field::Period,
            _ => return None,
        })
    }

    /// The header perf prints.
    pub fn header(self) -> &'static str {
        match self {
            Field::Overhead => "Overhead",
            Field::OverheadChildren => "Children",
            Field::OverheadSys => "sys",
            Field::OverheadUs => "usr",
            Field::OverheadGuestSys => "guest sys",
            Field::OverheadGuestUs => "guest usr",
            Field::Samples => "Samples",
            Field::Period => "Period",
        }
    }

    /// The width of one value (perf's `fmt->len`).
    pub fn value_width(self) -> usize {
        match self {
            Field::Samples | Field::Period => 12,
            Field::OverheadGuestSys | Field::OverheadGuestUs => 9,
            _ => 8,
        }
    }

    /// Printed as a percentage of the event's total period.
    pub fn is_percent(self) -> bool {
        !matches!(self, Field::Samples | Field::Period)
    }

    /// The value of `s` this column shows.
    pub fn value(self, s: &Stat) -> u64 {
        match self {
            Field::Overhead | Field::Period => s.period,
            Field::OverheadChildren => s.period_acc,
            Field::OverheadSys => s.modes[0],
            Field::OverheadUs => s.modes[1],
            Field::OverheadGuestSys => s.modes[2],
            Field::OverheadGuestUs => s.modes[3],
            Field::Samples => s.samples,
        }
    }
}

pub use crate::hist::Stat;

/// A report column: a value field or a sort key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Column {
    Field(Field),
    Key(SortKey),
}

impl Column {
    pub fn parse(s: &str) -> Option<Self> {
        Field::parse(s)
            .map(Column::Field)
            .or_else(|| SortKey::parse(s).map(Column::Key))
    }
}

/// The flags that decide the columns.
#[derive(Debug, Clone, Copy, Default)]
pub struct LayoutOptions<'a> {
    /// `-F`/`--fields`: a list replaces the default value columns; a list
    /// starting with `+` is added after them.
    pub fields: Option<&'a str>,
    /// `-s`/`--sort` (default comm,dso,sym unless `-F` is given).
    pub sort: Option<&'a str>,
    /// Children mode: the default columns start with Children.
    pub children: bool,
    /// `-n`/`--show-nr-samples`.
    pub show_nr_samples: bool,
    /// `--show-total-period`.
    pub show_total_period: bool,
    /// `--show-cpu-utilization`: sys and usr columns.
    pub show_cpu_utilization: bool,
    /// `-p`/`--parent`: perf adds the parent key to any sort order.
    pub parent: bool,
    /// `--group-sort-idx N`: in a group's view, rows sort by member N's
    /// values (0: the leader's, perf's default).
    pub group_sort_idx: usize,
    /// perf's branch mode (a recording with branch stacks, or `-b`): rows
    /// are sampled branches, sorted by perf's branch keys by default.
    pub branch: bool,
    /// perf's memory mode (`--mem-mode`): rows are data accesses, sorted
    /// by perf's memory keys by default.
    pub mem: bool,
}

/// The columns in print order, the order rows are sorted by, and what
/// identifies a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub columns: Vec<Column>,
    pub sort: Vec<Column>,
    /// perf calls the Overhead column "Self" next to a default Children one.
    pub overhead_is_self: bool,
    /// See [`LayoutOptions::group_sort_idx`].
    pub group_sort_idx: usize,
}

const DEFAULT_SORT: &str = "comm,dso,sym";

/// perf's default sort order in branch mode.
const DEFAULT_BRANCH_SORT: &str = "comm,dso_from,symbol_from,symbol_to,cycles";

/// perf's default sort order in memory mode (its `default_mem_sort_order`;
/// the pipeline-stage key is powerpc's and left out elsewhere).
pub const DEFAULT_MEM_SORT: &str = "local_weight,mem,sym,dso,symbol_daddr,dso_daddr,snoop,tlb,locked,blocked,local_ins_lat,local_p_stage_cyc";

impl Layout {
    /// perf 6.1's rules (`setup_sorting`): without a strict `-F`, the sort
    /// order is prefixed with overhead (and overhead_children in children
    /// mode) unless it names one; then sort keys missing from the columns
    /// are appended to them, and columns missing from the sort order are
    /// appended to it.
    pub fn new(o: &LayoutOptions<'_>) -> Result<Self, crate::Error> {
        let strict = o.fields.is_some_and(|f| !f.starts_with('+'));
        let parse = |list: &str, what: &str, out: &mut Vec<Column>| -> Result<(), crate::Error> {
            for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if SortKey::left_out(name) {
                    continue;
                }
                if matches!(name, "ipc_null" | "ipc_lbr") {
                    // perf 6.1 lists them but refuses them too (it prints
                    // its usage): they are the IPC column it adds itself.
                    return Err(crate::Error::Fields(format!(
                        "{what} {name}: an IPC column perf adds by itself after a symbol key \
                         in memory and branch modes, not a key to give (perf 6.1 refuses it \
                         too, printing its usage); leave it out"
                    )));
                }
                let c = Column::parse(name).ok_or_else(|| {
                    crate::Error::Fields(format!(
                        "{what} {name}: unknown or not yet supported key; sear knows the \
                         sort keys {SORT_KEY_NAMES} and the fields overhead, \
                         overhead_children, overhead_sys, overhead_us, overhead_guest_sys, \
                         overhead_guest_us, sample and period"
                    ))
                })?;
                if let Column::Key(k) = c {
                    if k.is_branch() && !o.branch {
                        return Err(crate::Error::Fields(format!(
                            "{what} {name}: a branch key; it needs branch mode, a recording \
                             with branch stacks (`record -b`, which needs LBR hardware)"
                        )));
                    }
                    if k.is_mem() && !o.mem {
                        return Err(crate::Error::Fields(format!(
                            "{what} {name}: a memory key; it needs `--mem-mode` and a \
                             recording with data addresses (`record -d`)"
                        )));
                    }
                }
                if !out.contains(&c) {
                    out.push(c);
                }
            }
            Ok(())
        };
        let mut sort = Vec::new();
        let default = if o.mem {
            DEFAULT_MEM_SORT
        } else if o.branch {
            DEFAULT_BRANCH_SORT
        } else {
            DEFAULT_SORT
        };
        // perf's `+key,...` appends to the default order.
        let sort_list = match o.sort {
            Some(s) => Some(match s.strip_prefix('+') {
                Some(rest) => format!("{default},{rest}"),
                None => s.to_owned(),
            }),
            None => (!strict).then(|| default.to_owned()),
        };
        if let Some(mut list) = sort_list {
            if !strict {
                // perf tests with strstr: any key containing "overhead" counts.
                if !list.contains("overhead") {
                    list = format!("overhead,{list}");
                }
                if o.children && !list.contains("overhead_children") {
                    list = format!("overhead_children,{list}");
                }
            }
            parse(&list, "--sort", &mut sort)?;
            // perf adds its IPC placeholder to a sort order naming `symbol`
            // anywhere (it looks for the substring); in branch mode its LBR
            // IPC column.
            let ipc = if o.branch {
                SortKey::IpcLbr
            } else {
                SortKey::IpcNull
            };
            // (Only to a sort order given: perf's default has none.)
            if o.sort.is_some_and(|s| s.contains("symbol")) && !sort.contains(&Column::Key(ipc)) {
                sort.push(Column::Key(ipc));
            }
        }
        if o.parent && !sort.contains(&Column::Key(SortKey::Parent)) {
            sort.push(Column::Key(SortKey::Parent));
        }
        let mut columns = Vec::new();
        if !strict {
            if o.children {
                columns.push(Column::Field(Field::OverheadChildren));
            }
            columns.push(Column::Field(Field::Overhead));
            if o.show_cpu_utilization {
                columns.push(Column::Field(Field::OverheadSys));
                columns.push(Column::Field(Field::OverheadUs));
            }
            if o.show_nr_samples {
                columns.push(Column::Field(Field::Samples));
            }
            if o.show_total_period {
                columns.push(Column::Field(Field::Period));
            }
        }
        if let Some(f) = o.fields {
            let list = f.strip_prefix('+').unwrap_or(f);
            if list.split(',').all(|x| x.trim().is_empty()) {
                return Err(crate::Error::Fields(format!(
                    "--fields {f:?}: no field named"
                )));
            }
            parse(list, "--fields", &mut columns)?;
        }
        for c in &sort {
            if !columns.contains(c) {
                columns.push(*c);
            }
        }
        for c in &columns {
            if !sort.contains(c) {
                sort.push(*c);
            }
        }
        Ok(Layout {
            columns,
            sort,
            overhead_is_self: !strict && o.children,
            group_sort_idx: o.group_sort_idx,
        })
    }

    /// The sort keys that identify an entry, in sort order.
    pub fn keys(&self) -> Vec<SortKey> {
        self.sort
            .iter()
            .filter_map(|c| match c {
                Column::Key(k) => Some(*k),
                Column::Field(_) => None,
            })
            .collect()
    }

    /// Whether a column needs per-cpumode periods.
    pub fn needs_cpumode(&self) -> bool {
        self.columns.iter().any(|c| {
            matches!(
                c,
                Column::Field(
                    Field::OverheadSys
                        | Field::OverheadUs
                        | Field::OverheadGuestSys
                        | Field::OverheadGuestUs
                )
            )
        })
    }

    /// The header of a column.
    pub fn header(&self, c: Column) -> &'static str {
        match c {
            Column::Field(Field::Overhead) if self.overhead_is_self => "Self",
            Column::Field(f) => f.header(),
            Column::Key(k) => k.header(),
        }
    }
}

impl Hists {
    /// Orders rows as perf prints them with sort order `order` (perf's
    /// `hist_entry__sort`): values descending, keys ascending. Values of
    /// group members break ties of the leader's; equal children periods put
    /// callers above callees (`caller_order`) or below.
    pub fn sort_by_columns(
        &mut self,
        names: &Names<'_>,
        order: &[Column],
        children: bool,
        caller_order: bool,
        group_sort_idx: usize,
    ) {
        let keys: Vec<usize> = {
            let mut n = 0;
            order
                .iter()
                .map(|c| {
                    let i = n;
                    if matches!(c, Column::Key(_)) {
                        n += 1;
                    }
                    i
                })
                .collect()
        };
        // (Names compared by their ranks: the same order, without the
        // string compares.)
        let names = &RankedNames::new(names);
        // perf's `hist_entry__sort`: the columns in order.
        let by_columns = |a: &HistEntry, b: &HistEntry| -> Ordering {
            for (c, &ki) in order.iter().zip(&keys) {
                let o = match c {
                    Column::Key(_) => match (a.keys.get(ki), b.keys.get(ki)) {
                        (Some(x), Some(y)) => names.cmp_for_sort(x, y),
                        _ => Ordering::Equal,
                    },
                    Column::Field(Field::OverheadChildren) => {
                        if !children {
                            Ordering::Equal
                        } else {
                            b.period_acc.cmp(&a.period_acc).then_with(|| {
                                // Within a thread only, as perf: across
                                // threads equal periods are a tie.
                                if a.thread != b.thread {
                                    return Ordering::Equal;
                                }
                                let o = b.max_depth.cmp(&a.max_depth);
                                if caller_order {
                                    o
                                } else {
                                    o.reverse()
                                }
                            })
                        }
                    }
                    Column::Field(f) => cmp_field(*f, a, b, group_sort_idx),
                };
                if o.is_ne() {
                    return o;
                }
            }
            Ordering::Equal
        };
        // perf keeps ties in the order of its collapsed entries, where
        // unresolved symbols are ordered by address.
        let collapsed = |a: &HistEntry, b: &HistEntry| -> Ordering {
            a.keys
                .iter()
                .zip(&b.keys)
                .map(|(x, y)| match (x, y) {
                    (
                        Key::Sym(SymRef::Addr { ip: p, .. }),
                        Key::Sym(SymRef::Addr { ip: q, .. }),
                    ) => (*p as i64).cmp(&(*q as i64)),
                    // (perf's `_sort__addr_cmp` takes the sign of the
                    // wrapped difference, which is no order: as signed
                    // numbers agrees with it on real addresses and sorts.)
                    (
                        Key::BranchSym(SymRef::Addr { .. }, p, _),
                        Key::BranchSym(SymRef::Addr { .. }, q, _),
                    ) => (*p as i64).cmp(&(*q as i64)),
                    _ => Ordering::Equal,
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        };
        // perf compares the chain depths of rows with equal children
        // periods only within a thread: where such ties cross threads, its
        // comparison is no order, and its rows come in the order its output
        // tree gives them, inserted in the order of its collapsed entries
        // (each key as perf collapses by it). Elsewhere that is the stable
        // sort below.
        let cross_thread_ties = children && {
            let mut acc: Vec<(u64, u32)> = self
                .entries
                .iter()
                .map(|e| (e.period_acc, e.thread))
                .collect();
            acc.sort_unstable();
            acc.dedup();
            acc.windows(2).any(|w| w[0].0 == w[1].0)
        };
        if cross_thread_ties {
            // Both trees built as perf builds them (its collapse comparison
            // is no total order either where unresolved addresses meet
            // symbols: a tree takes any comparison; a sort may not).
            let collapse = |a: &HistEntry, b: &HistEntry| {
                a.keys
                    .iter()
                    .zip(&b.keys)
                    .map(|(x, y)| names.cmp_collapsed(x, y))
                    .find(|o| o.is_ne())
                    .unwrap_or(Ordering::Equal)
            };
            self.reorder(|e, new, old| collapse(&e[new], &e[old]) == Ordering::Less);
            self.reorder(|e, new, old| by_columns(&e[new], &e[old]) == Ordering::Less);
        } else {
            self.entries
                .sort_by(|a, b| by_columns(a, b).then_with(|| collapsed(a, b)));
        }
        self.clear_index();
    }
}

impl Hists {
    /// The entries inserted in their order into a tree where a new entry
    /// goes left of an entry it `goes_left` of, listed in tree order (see
    /// [`crate::rbtree`]).
    fn reorder(&mut self, goes_left: impl Fn(&[HistEntry], usize, usize) -> bool) {
        let e = &self.entries;
        let at = crate::rbtree::insertion_order(e.len(), |new, old| goes_left(e, new, old));
        let mut slots: Vec<Option<HistEntry>> = std::mem::take(&mut self.entries)
            .into_iter()
            .map(Some)
            .collect();
        self.entries = at.into_iter().filter_map(|i| slots[i].take()).collect();
    }
}

/// Descending by the field, then by each group member's; with
/// `group_sort_idx` N (perf's `--group-sort-idx`), in a group of more than N
/// events by member N's, then by the other members' (the leader's not at
/// all, as perf), and in a smaller group by the leader's alone.
pub fn cmp_field(f: Field, a: &HistEntry, b: &HistEntry, group_sort_idx: usize) -> Ordering {
    let zero = Stat::default();
    let n = a.group.len().max(b.group.len());
    let member = |e: &HistEntry, i: usize| f.value(e.group.get(i).unwrap_or(&zero));
    let lead = f.value(&b.stat()).cmp(&f.value(&a.stat()));
    if group_sort_idx > 0 && n > 0 {
        if group_sort_idx > n {
            return lead;
        }
        let idx = group_sort_idx - 1;
        return std::iter::once(idx)
            .chain((0..n).filter(|&i| i != idx))
            .map(|i| member(b, i).cmp(&member(a, i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal);
    }
    if lead.is_ne() {
        return lead;
    }
    (0..n)
        .map(|i| member(b, i).cmp(&member(a, i)))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(fields: Option<&str>, sort: Option<&str>, children: bool) -> Layout {
        Layout::new(&LayoutOptions {
            fields,
            sort,
            children,
            ..Default::default()
        })
        .unwrap()
    }

    use Column::{Field as F, Key as K};

    #[test]
    fn ipc_columns_are_not_keys_to_give() {
        for name in ["ipc_null", "sym,ipc_lbr"] {
            let e = Layout::new(&LayoutOptions {
                sort: Some(name),
                children: false,
                ..Default::default()
            })
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
            assert!(
                e.contains("an IPC column perf adds by itself"),
                "{name}: {e}"
            );
        }
    }

    #[test]
    fn default_layout_is_perfs() {
        let l = layout(None, None, true);
        let cols = [
            F(Field::OverheadChildren),
            F(Field::Overhead),
            K(SortKey::Comm),
            K(SortKey::Dso),
            K(SortKey::Sym),
        ];
        assert_eq!(l.columns, cols);
        assert_eq!(l.sort, cols);
        assert!(l.overhead_is_self);
        assert_eq!(l.header(F(Field::Overhead)), "Self");
    }

    #[test]
    fn fields_and_sort_combine_as_in_perf() {
        // -F sym,overhead -s comm: columns sym, overhead, comm; sorted by
        // comm, then sym, then overhead.
        let l = layout(Some("sym,overhead"), Some("comm"), true);
        assert_eq!(
            l.columns,
            [K(SortKey::Sym), F(Field::Overhead), K(SortKey::Comm)]
        );
        assert_eq!(
            l.sort,
            [K(SortKey::Comm), K(SortKey::Sym), F(Field::Overhead)]
        );
        assert_eq!(l.keys(), [SortKey::Comm, SortKey::Sym]);
        assert!(!l.overhead_is_self);
        // A `+` list adds to the default columns.
        let l = layout(Some("+sample"), None, false);
        assert_eq!(
            l.columns,
            [
                F(Field::Overhead),
                F(Field::Samples),
                K(SortKey::Comm),
                K(SortKey::Dso),
                K(SortKey::Sym)
            ]
        );
        for bad in ["", "+", ",", " , "] {
            assert!(Layout::new(&LayoutOptions {
                fields: Some(bad),
                ..Default::default()
            })
            .is_err());
        }
        assert!(Layout::new(&LayoutOptions {
            fields: Some("nosuch"),
            ..Default::default()
        })
        .is_err());
    }
}
