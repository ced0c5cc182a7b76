//! Two profiles compared, as `perf diff` compares them: each side's rows
//! (sort-key texts with their self period) as shares of that side's total,
//! matched by their key texts (so `dso,sym` rows match by the DSO's base
//! name and the symbol's name, whatever the addresses; a symbol column by
//! the name alone, whatever its level, and addresses no symbol covers as
//! one, as perf diff matches them), and the change of each share in
//! percentage points.
//!
//! ```
//! use profile::diff::{diff, Side};
//! let base = Side::from_rows([(vec!["a".to_string()], 50, 5), (vec!["b".to_string()], 50, 5)]);
//! let new = Side::from_rows([(vec!["a".to_string()], 75, 3), (vec!["b".to_string()], 25, 1)]);
//! let rows = diff(&base, &new);
//! assert_eq!(rows[0].keys, ["a"]);
//! assert!((rows[0].delta - 25.0).abs() < 1e-9);
//! ```

use rustc_hash::FxHashMap as HashMap;

/// What one row of one side adds up to.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Share {
    pub period: u64,
    pub samples: u64,
    /// `period` as a percentage of its side's total period.
    pub percent: f64,
}

/// One profile's rows by key texts, and its totals.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// (key texts, period, samples); rows with equal texts are summed.
    pub rows: Vec<(Vec<String>, u64, u64)>,
    /// What percentages are of: all the side's period (not only the rows').
    pub total_period: u64,
    pub total_samples: u64,
    /// Per key column, the width its values ask for, where it is not
    /// their text's: perf sizes a comm column by the comm each entry's
    /// thread has at the end (a longer comm is cut). Empty: the texts'.
    pub widths: Vec<usize>,
    /// Per row (empty: none), what perf's `-v` shows before each key's
    /// text (a symbol's address and where its symbols were read from);
    /// not compared.
    pub prefixes: Vec<Vec<String>>,
    /// Per row (empty: none), the keys it pairs with the other
    /// recordings' rows by, where a symbol column makes them not its texts
    /// (see [`merge_by_symbol`]).
    pub match_keys: Vec<Option<Vec<String>>>,
}

/// Widens `into` to `w`, column by column.
fn widen(into: &mut Vec<usize>, w: &[usize]) {
    if into.len() < w.len() {
        into.resize(w.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(w) {
        *a = (*a).max(*b);
    }
}

/// One recording's sides, one per event name (two events of one name are
/// one side), and the period of each event that has samples.
#[derive(Debug, Clone, Default)]
pub struct Sides {
    pub sections: Vec<(String, Side)>,
    pub samples: u64,
    pub events: Vec<(String, u64)>,
}

impl Sides {
    /// The rows of `report` (self periods) by their key texts.
    pub fn of(
        report: &crate::hist::Report,
        names: &crate::hist::Names<'_>,
        meta: &perf_data::Meta,
        relative: bool,
    ) -> Sides {
        let mut out = Sides::default();
        let empty = crate::hist::Hists::default();
        for (ev, e) in meta.events.iter().enumerate() {
            let h = report.hists.get(ev).unwrap_or(&empty);
            let name = e.name();
            let mut widths = Vec::new();
            let mut prefixes = Vec::new();
            // (Entries the filters' samples made are summed but not shown.)
            let rows: Vec<_> = h
                .entries
                .iter()
                .filter(|e| !e.filtered)
                .map(|e| {
                    let texts: Vec<String> =
                        e.keys.iter().map(|k| names.display(k, e.level)).collect();
                    let pre: Vec<String> = e
                        .keys
                        .iter()
                        .map(|k| names.verbose_prefix(k, &e.maker).unwrap_or_default())
                        .collect();
                    let w: Vec<usize> = e
                        .keys
                        .iter()
                        .zip(&texts)
                        .zip(&pre)
                        .map(|((k, t), p)| match k {
                            crate::hist::Key::Comm(_) => {
                                names.thread_comm(e.thread).chars().count()
                            }
                            _ => p.chars().count() + t.chars().count(),
                        })
                        .collect();
                    widen(&mut widths, &w);
                    if names.verbose {
                        prefixes.push(pre);
                    }
                    let m = sym_match(e, &texts, names);
                    (texts, e.period, e.samples, m)
                })
                .collect();
            let (rows, prefixes, match_keys) = merge_by_symbol(rows, prefixes);
            let (total_samples, total_period) = h.header_totals(relative);
            let side = Side {
                rows,
                total_period,
                total_samples,
                widths,
                prefixes,
                match_keys,
            };
            out.samples += h.all_samples;
            out.events.push((name.clone(), h.all_period));
            match out.sections.iter_mut().find(|(n, _)| *n == name) {
                Some((_, s)) => {
                    s.prefixes.extend(side.prefixes);
                    s.match_keys.extend(side.match_keys);
                    s.rows.extend(side.rows);
                    s.total_period += side.total_period;
                    s.total_samples += side.total_samples;
                    widen(&mut s.widths, &side.widths);
                }
                None => out.sections.push((name, side)),
            }
        }
        out
    }

    fn side(&self, event: &str) -> Side {
        self.sections
            .iter()
            .find(|(n, _)| n == event)
            .map_or_else(Side::default, |(_, s)| s.clone())
    }
}

/// One event's rows of every recording, and its columns' widths (see
/// [`Side::widths`]).
#[derive(Debug, Clone)]
pub struct EventDiff {
    pub event: String,
    pub rows: Vec<DiffRow>,
    pub widths: Vec<usize>,
    /// Each recording's total period (what shares are of), the baseline's
    /// first.
    pub totals: Vec<u64>,
}

/// The recordings' rows compared with the baseline's per event, events
/// matched by name: as perf, every event of the baseline in its order (one
/// without samples too), none only another recording has.
pub fn diff_events(base: &Sides, news: &[&Sides]) -> Vec<EventDiff> {
    let events: Vec<&str> = base.sections.iter().map(|(n, _)| n.as_str()).collect();
    events
        .into_iter()
        .map(|ev| {
            let b = base.side(ev);
            let mut ns: Vec<Side> = news.iter().map(|n| n.side(ev)).collect();
            pair_by_symbol(&b, &mut ns);
            let mut widths = b.widths.clone();
            for n in &ns {
                widen(&mut widths, &n.widths);
            }
            EventDiff {
                event: ev.to_owned(),
                rows: diff_many(&b, &ns),
                widths,
                totals: std::iter::once(&b)
                    .chain(&ns)
                    .map(|s| s.total_period)
                    .collect(),
            }
        })
        .collect()
}

/// How perf diff matches a row by its symbol column (see
/// [`merge_by_symbol`]): the column, the text it is matched by (the
/// symbol's name without its level, empty for an address no symbol
/// covers), and what orders rows that match (the DSO's name, the address).
struct SymMatch {
    col: usize,
    text: String,
    order: (String, u64),
}

fn sym_match(
    e: &crate::hist::HistEntry,
    texts: &[String],
    names: &crate::hist::Names<'_>,
) -> Option<SymMatch> {
    use crate::hist::{Key, SymRef};
    let (col, r) = e.keys.iter().enumerate().find_map(|(i, k)| match k {
        Key::Sym(r) => Some((i, *r)),
        _ => None,
    })?;
    let dso = (e.maker.dso != crate::collect::NO_DSO).then_some(e.maker.dso);
    let order = match r {
        // (Unresolved addresses come by address, whatever their DSO.)
        SymRef::Addr { ip, .. } => (String::new(), ip),
        SymRef::Sym(_) => (names.display(&Key::Dso(dso), e.level), e.maker.ip),
    };
    let text = match r {
        SymRef::Addr { .. } => String::new(),
        SymRef::Sym(_) => {
            let t = &texts[col];
            let name = match t.as_bytes() {
                [b'[', _, b']', b' ', ..] => &t[4..],
                _ => t,
            };
            name.to_owned()
        }
    };
    Some(SymMatch { col, text, order })
}

/// The keys a row is matched by: its texts, the symbol column's as
/// [`SymMatch`] gives it.
fn match_keys(texts: &[String], m: &SymMatch) -> Vec<String> {
    let mut g = texts.to_vec();
    g[m.col].clone_from(&m.text);
    g
}

/// perf diff matches symbol columns by the symbol's name alone (a kernel
/// `[k] strcmp` and the loader's `[.] strcmp` are one `-s sym` row), and
/// takes any two addresses no symbol covers for the same: `ls`'s samples at
/// four such addresses are one `ls 0x7f80` row, paired with the other
/// recording's row of `ls`'s unresolved addresses, whatever they are. Rows
/// that match are one, shown as the first of them by DSO name and then
/// address (the order of perf's tree, whose first entry takes the others
/// in). Rows stay in their order, each group where its first row was.
#[allow(clippy::type_complexity)]
fn merge_by_symbol(
    rows: Vec<(Vec<String>, u64, u64, Option<SymMatch>)>,
    prefixes: Vec<Vec<String>>,
) -> (
    Vec<(Vec<String>, u64, u64)>,
    Vec<Vec<String>>,
    Vec<Option<Vec<String>>>,
) {
    let mut out: Vec<(Vec<String>, u64, u64)> = Vec::with_capacity(rows.len());
    let mut keys = Vec::with_capacity(rows.len());
    let mut out_pre = Vec::with_capacity(prefixes.len());
    // Per matching key, its row and the order of the row shown.
    let mut groups: HashMap<Vec<String>, (usize, (String, u64))> = HashMap::default();
    let mut pre = prefixes.into_iter();
    for (texts, period, samples, m) in rows {
        let p = pre.next();
        let Some(m) = m else {
            out.push((texts, period, samples));
            keys.push(None);
            out_pre.extend(p);
            continue;
        };
        let key = match_keys(&texts, &m);
        match groups.entry(key.clone()) {
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let (i, first) = o.get_mut();
                let row = &mut out[*i];
                row.1 = row.1.saturating_add(period);
                row.2 = row.2.saturating_add(samples);
                if m.order < *first {
                    *first = m.order;
                    row.0 = texts;
                    if let (Some(p), Some(slot)) = (p, out_pre.get_mut(*i)) {
                        *slot = p;
                    }
                }
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((out.len(), m.order));
                out.push((texts, period, samples));
                keys.push(Some(key));
                out_pre.extend(p);
            }
        }
    }
    (out, out_pre, keys)
}

/// Gives the rows of `news` the texts of the first recording's (the
/// baseline's, then each in order) row they match (see
/// [`merge_by_symbol`]), so they pair as perf pairs them, under the first
/// one's name.
fn pair_by_symbol(base: &Side, news: &mut [Side]) {
    let mut first: HashMap<&[String], Vec<String>> = HashMap::default();
    for ((texts, _, _), key) in base.rows.iter().zip(&base.match_keys) {
        if let Some(k) = key {
            first.entry(k.as_slice()).or_insert_with(|| texts.clone());
        }
    }
    let mut later: HashMap<Vec<String>, Vec<String>> = HashMap::default();
    for side in news {
        for ((texts, _, _), key) in side.rows.iter_mut().zip(&side.match_keys) {
            let Some(k) = key else { continue };
            if let Some(t) = first.get(k.as_slice()) {
                texts.clone_from(t);
                continue;
            }
            match later.entry(k.clone()) {
                std::collections::hash_map::Entry::Occupied(o) => texts.clone_from(o.get()),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(texts.clone());
                }
            }
        }
    }
}

impl Side {
    /// A side whose totals are the sums of its rows.
    pub fn from_rows(rows: impl IntoIterator<Item = (Vec<String>, u64, u64)>) -> Self {
        let rows: Vec<_> = rows.into_iter().collect();
        Side {
            total_period: rows.iter().map(|r| r.1).fold(0u64, u64::saturating_add),
            total_samples: rows.iter().map(|r| r.2).fold(0u64, u64::saturating_add),
            rows,
            widths: Vec::new(),
            prefixes: Vec::new(),
            match_keys: Vec::new(),
        }
    }

    /// Each key's `-v` prefixes, its first row's.
    fn prefixes(&self) -> HashMap<&[String], &[String]> {
        let mut m: HashMap<&[String], &[String]> = HashMap::default();
        for ((k, _, _), p) in self.rows.iter().zip(&self.prefixes) {
            m.entry(k.as_slice()).or_insert(p.as_slice());
        }
        m
    }

    fn shares(&self) -> HashMap<&[String], Share> {
        let mut m: HashMap<&[String], Share> = HashMap::default();
        for (k, period, samples) in &self.rows {
            let s = m.entry(k.as_slice()).or_default();
            s.period = s.period.saturating_add(*period);
            s.samples = s.samples.saturating_add(*samples);
        }
        for s in m.values_mut() {
            s.percent = percent(s.period, self.total_period);
        }
        m
    }
}

fn percent(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * part as f64 / total as f64
    }
}

/// One key's share in each profile (None: no samples there) and the change.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffRow {
    pub keys: Vec<String>,
    pub base: Option<Share>,
    pub new: Option<Share>,
    /// New share minus base share, in percentage points (a missing side
    /// counts as 0%).
    pub delta: f64,
    /// The shares of the recordings after the second (perf diff's third
    /// and later data files), each compared with the baseline as `new` is,
    /// with its change as [`Self::delta`] is.
    pub more: Vec<(Option<Share>, f64)>,
    /// `-v`: what perf shows before each key's text (the baseline's entry's,
    /// else the first recording's that has the row); empty without.
    pub prefixes: Vec<String>,
}

fn pct(s: Option<Share>) -> f64 {
    s.map_or(0.0, |s| s.percent)
}

impl DiffRow {
    /// The largest of the shares (what `--percent-limit` compares).
    pub fn max_percent(&self) -> f64 {
        self.more
            .iter()
            .fold(pct(self.base).max(pct(self.new)), |m, s| m.max(pct(s.0)))
    }

    /// Data file `i`'s share (0 the baseline, 1 the new recording, then
    /// [`Self::more`]).
    pub fn share(&self, i: usize) -> Option<Share> {
        match i {
            0 => self.base,
            1 => self.new,
            _ => self.more.get(i - 2).and_then(|m| m.0),
        }
    }

    /// The row as the baseline and data file `i` alone make it (`i` ≥ 1).
    pub fn against(&self, i: usize) -> DiffRow {
        // (The changes as computed before `baseline_only` recounted the
        // baseline's shares.)
        let delta = match i {
            1 => self.delta,
            _ => self.more.get(i - 2).map_or(0.0, |m| m.1),
        };
        DiffRow {
            keys: Vec::new(),
            base: self.base,
            new: self.share(i),
            delta,
            more: Vec::new(),
            prefixes: Vec::new(),
        }
    }
}

/// Every key of either side, by decreasing absolute change; equal changes
/// by decreasing larger share, then by key texts.
pub fn diff(base: &Side, new: &Side) -> Vec<DiffRow> {
    diff_many(base, std::slice::from_ref(new))
}

/// [`diff`] of the baseline and several recordings: every key of any,
/// ordered by the first recording's change.
pub fn diff_many(base: &Side, news: &[Side]) -> Vec<DiffRow> {
    let b = base.shares();
    let ns: Vec<_> = news.iter().map(Side::shares).collect();
    let pre: Vec<_> = std::iter::once(base)
        .chain(news)
        .map(Side::prefixes)
        .collect();
    let mut keys: Vec<&[String]> = b
        .keys()
        .chain(ns.iter().flat_map(|n| n.keys()))
        .copied()
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut rows: Vec<DiffRow> = keys
        .into_iter()
        .map(|k| {
            let base = b.get(k).copied();
            let mut shares = ns.iter().map(|n| {
                let s = n.get(k).copied();
                (s, pct(s) - pct(base))
            });
            let (new, delta) = shares.next().unwrap_or((None, -pct(base)));
            DiffRow {
                keys: k.to_vec(),
                delta,
                base,
                new,
                more: shares.collect(),
                prefixes: pre
                    .iter()
                    .find_map(|p| p.get(k))
                    .map_or_else(Vec::new, |p| p.to_vec()),
            }
        })
        .collect();
    rows.sort_by(|x, y| {
        y.delta
            .abs()
            .total_cmp(&x.delta.abs())
            .then(y.max_percent().total_cmp(&x.max_percent()))
            .then_with(|| x.keys.cmp(&y.keys))
    });
    rows
}

/// perf diff's `-b`: only the rows the baseline and another recording have, each baseline
/// share now of those rows' baseline period (perf recounts its baseline
/// totals after dropping the others; the changes keep the full totals).
pub fn baseline_only(rows: &mut Vec<DiffRow>) {
    rows.retain(|r| r.base.is_some() && (r.new.is_some() || r.more.iter().any(|m| m.0.is_some())));
    let total = rows
        .iter()
        .filter_map(|r| r.base)
        .fold(0u64, |t, b| t.saturating_add(b.period));
    for r in rows.iter_mut() {
        if let Some(b) = &mut r.base {
            b.percent = percent(b.period, total);
        }
    }
}

/// What perf diff's `-c/--compute` shows for each row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Compute {
    /// The change of share, in percentage points (`delta`).
    Delta,
    /// The same, sorted by its absolute value (`delta-abs`, the default).
    DeltaAbs,
    /// New period over baseline period (`ratio`).
    Ratio,
    /// New period times the second weight minus baseline period times the
    /// first (`wdiff:W1,W2`).
    Wdiff(i64, i64),
}

impl Compute {
    /// `-c` as perf takes it.
    pub fn parse(s: &str) -> Result<Compute, crate::Error> {
        let bad = |why: &str| crate::Error::BadOption(format!("-c/--compute {s}: {why}"));
        match s {
            "delta" => Ok(Compute::Delta),
            "delta-abs" => Ok(Compute::DeltaAbs),
            "ratio" => Ok(Compute::Ratio),
            "cycles" => Err(bad(
                "cycles compares LBR branch cycles, which need hardware branch records",
            )),
            _ => {
                let w = s
                    .strip_prefix("wdiff:")
                    .ok_or_else(|| bad("expected delta, delta-abs, ratio or wdiff:W1,W2"))?;
                let (a, b) = w
                    .split_once(',')
                    .ok_or_else(|| bad("wdiff takes two weights: wdiff:W1,W2"))?;
                let n = |x: &str| {
                    x.trim()
                        .parse::<i64>()
                        .map_err(|_| bad("the weights are whole numbers"))
                };
                Ok(Compute::Wdiff(n(a)?, n(b)?))
            }
        }
    }

    /// The row's value: None where perf prints nothing (rows the new
    /// recording lacks) or `N/A` (ratios and weighted differences of rows
    /// only the new recording has).
    pub fn value(self, r: &DiffRow) -> Option<f64> {
        let new = r.new?;
        match self {
            Compute::Delta | Compute::DeltaAbs => Some(r.delta),
            Compute::Ratio => r.base.map(|b| new.period as f64 / b.period.max(1) as f64),
            Compute::Wdiff(w1, w2) => r
                .base
                .map(|b| (new.period as i64 * w2 - b.period as i64 * w1) as f64),
        }
    }
}

/// Puts `rows` in perf diff's order for `compute`: first the rows the new
/// recording has, by decreasing value (absolute for delta-abs; rows
/// without one, `N/A`, after them); then those only the baseline has.
/// Ties keep the baseline's order: by decreasing baseline period (rows
/// only the new recording has count 0), then by key texts, addresses no
/// symbol covers after the symbols (perf compares symbols by address
/// there; rows of equal change and baseline in one DSO may come in
/// another order).
pub fn perf_order(rows: &mut [DiffRow], compute: Compute) {
    perf_order_by(rows, compute, 1);
}

/// [`perf_order`] by data file `order`'s column (perf's `-o`: 1 the
/// default, the first recording after the baseline), or with `order` 0 the
/// baseline's order: by decreasing baseline period, a tie by the first
/// other recording's value (a delta by its size), rows without one after,
/// rows only the other recordings have last (by their periods).
pub fn perf_order_by(rows: &mut [DiffRow], compute: Compute, order: usize) {
    let base = |r: &DiffRow| r.base.map_or(0, |s| s.period);
    let more = |r: &DiffRow| -> Vec<u64> {
        std::iter::once(r.new)
            .chain(r.more.iter().map(|m| m.0))
            .map(|s| s.map_or(0, |s| s.period))
            .collect()
    };
    // (Symbols compare by name, without their `[.] ` level; an address no
    // symbol covers after every symbol, as perf's symbol comparison puts
    // an entry without a symbol after one with.)
    let name = |k: &String| -> (bool, String) {
        match k.as_bytes() {
            [b'[', _, b']', b' ', rest @ ..] => (rest.starts_with(b"0x"), k[4..].to_owned()),
            _ => (false, k.clone()),
        }
    };
    let keys = |r: &DiffRow| -> Vec<(bool, String)> { r.keys.iter().map(name).collect() };
    if order == 0 {
        // By the baseline; a tie by the first other recording's value,
        // greatest first (a delta by its size, as perf compares it there),
        // rows without one after.
        let value = |r: &DiffRow| -> Option<f64> {
            let r = r.against(1);
            r.new?;
            let v = compute.value(&r)?;
            Some(match compute {
                Compute::Delta | Compute::DeltaAbs => v.abs(),
                _ => v,
            })
        };
        rows.sort_by(|x, y| {
            base(y)
                .cmp(&base(x))
                .then_with(|| match (value(x), value(y)) {
                    (Some(a), Some(b)) => b.total_cmp(&a),
                    (a, b) => b.is_some().cmp(&a.is_some()),
                })
                .then_with(|| more(y).cmp(&more(x)))
                .then_with(|| keys(x).cmp(&keys(y)))
        });
        return;
    }
    rows.sort_by(|x, y| {
        base(y)
            .cmp(&base(x))
            .then_with(|| more(y).cmp(&more(x)))
            .then_with(|| keys(x).cmp(&keys(y)))
    });
    let rank = |r: &DiffRow| -> (u8, f64) {
        let r = &r.against(order);
        match (r.new.is_some(), compute.value(r)) {
            (true, Some(v)) if compute == Compute::DeltaAbs => (0, -v.abs()),
            (true, Some(v)) => (0, -v),
            // (`N/A` rows keep the order above: by the periods.)
            (true, None) => (1, 0.0),
            (false, _) => (2, 0.0),
        }
    };
    rows.sort_by(|x, y| {
        let (a, b) = (rank(x), rank(y));
        a.0.cmp(&b.0).then(a.1.total_cmp(&b.1))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_order_puts_paired_rows_first_by_change() {
        let base = Side::from_rows([
            (vec!["a".into()], 90, 9),
            (vec!["b".into()], 5, 1),
            (vec!["c".into()], 5, 1),
        ]);
        let new = Side::from_rows([
            (vec!["a".into()], 95, 19),
            (vec!["b".into()], 5, 1),
            (vec!["d".into()], 0, 0),
        ]);
        let mut rows = diff(&base, &new);
        perf_order(&mut rows, Compute::DeltaAbs);
        let names: Vec<&str> = rows.iter().map(|r| r.keys[0].as_str()).collect();
        // a +5 and d +0 (new only) and b 0: by change, ties by baseline;
        // c (gone) last.
        assert_eq!(names, ["a", "b", "d", "c"]);
    }

    /// Rows matched by symbol name (whatever the level) or as unresolved
    /// addresses are one, under the first by DSO name or by address; the
    /// other recording's rows take the baseline's texts and pair with them.
    #[test]
    fn symbol_rows_match_by_name_and_unresolved_addresses_as_one() {
        let row = |t: &[&str], n: u64, m: Option<(&str, &str, u64)>| {
            let texts: Vec<String> = t.iter().map(|s| s.to_string()).collect();
            let m = m.map(|(text, dso, ip)| SymMatch {
                col: 1,
                text: text.into(),
                order: (dso.into(), ip),
            });
            (texts, n, n, m)
        };
        let (rows, _, keys) = merge_by_symbol(
            vec![
                row(&["ls", "[.] 0x0000000000008000"], 1, Some(("", "", 0x8000))),
                row(&["x", "[.] strcmp"], 2, Some(("strcmp", "ld.so", 0x10))),
                row(&["ls", "[.] 0x0000000000004000"], 3, Some(("", "", 0x4000))),
                row(&["x", "[k] strcmp"], 4, Some(("strcmp", "[kernel]", 0x20))),
                row(&["x", "other"], 5, None),
            ],
            Vec::new(),
        );
        let got: Vec<(Vec<String>, u64)> = rows.iter().map(|r| (r.0.clone(), r.1)).collect();
        assert_eq!(
            got,
            [
                (k("ls,[.] 0x0000000000004000"), 4),
                (k("x,[k] strcmp"), 6),
                (k("x,other"), 5),
            ]
        );
        let base = Side {
            match_keys: keys,
            ..Side::from_rows(rows)
        };
        let (new_rows, _, new_keys) = merge_by_symbol(
            vec![
                row(&["ls", "[.] 0x0000000000009999"], 7, Some(("", "", 0x9999))),
                row(&["x", "[.] strcmp"], 8, Some(("strcmp", "ld.so", 0x10))),
            ],
            Vec::new(),
        );
        let mut news = [Side {
            match_keys: new_keys,
            ..Side::from_rows(new_rows)
        }];
        pair_by_symbol(&base, &mut news);
        let d = diff(&base, &news[0]);
        let paired: Vec<(&str, bool)> = d
            .iter()
            .map(|r| (r.keys[1].as_str(), r.base.is_some() && r.new.is_some()))
            .collect();
        assert!(
            paired.contains(&("[.] 0x0000000000004000", true)),
            "{paired:?}"
        );
        assert!(paired.contains(&("[k] strcmp", true)), "{paired:?}");
        assert_eq!(d.len(), 3);
    }

    /// `-o 0`: by the baseline, a tie by the size of the change (a ratio
    /// by its value), rows the other recording lacks last, then by name.
    #[test]
    fn baseline_order_breaks_ties_by_the_size_of_the_change() {
        let base = Side::from_rows([
            (vec!["a".into()], 10, 1),
            (vec!["b".into()], 10, 1),
            (vec!["c".into()], 10, 1),
            (vec!["d".into()], 10, 1),
            (vec!["e".into()], 60, 6),
        ]);
        // Shares 10% each in the baseline; new: a 4%, b 15%, c 7%, d none.
        let new = Side::from_rows([
            (vec!["a".into()], 4, 1),
            (vec!["b".into()], 15, 1),
            (vec!["c".into()], 7, 1),
            (vec!["e".into()], 74, 7),
        ]);
        let order = |c: Compute| -> Vec<String> {
            let mut rows = diff(&base, &new);
            perf_order_by(&mut rows, c, 0);
            rows.iter().map(|r| r.keys[0].clone()).collect()
        };
        // Changes -6, +5, -3: by size.
        assert_eq!(order(Compute::Delta), ["e", "a", "b", "c", "d"]);
        assert_eq!(order(Compute::DeltaAbs), ["e", "a", "b", "c", "d"]);
        // Ratios 0.4, 1.5, 0.7.
        assert_eq!(order(Compute::Ratio), ["e", "b", "c", "a", "d"]);
    }

    fn k(s: &str) -> Vec<String> {
        s.split(',').map(str::to_owned).collect()
    }

    #[test]
    fn shares_are_of_each_sides_total_and_missing_sides_count_as_zero() {
        let base = Side {
            rows: vec![
                (k("prog,a"), 30, 3),
                (k("prog,b"), 60, 6),
                (k("libc,c"), 10, 1),
            ],
            total_period: 100,
            total_samples: 10,
            widths: Vec::new(),
            prefixes: Vec::new(),
            match_keys: Vec::new(),
        };
        let new = Side {
            rows: vec![
                (k("prog,a"), 100, 10),
                (k("prog,b"), 80, 8),
                (k("kernel,d"), 20, 2),
            ],
            total_period: 200,
            total_samples: 20,
            widths: Vec::new(),
            prefixes: Vec::new(),
            match_keys: Vec::new(),
        };
        let rows = diff(&base, &new);
        let names: Vec<&str> = rows.iter().map(|r| r.keys[1].as_str()).collect();
        // a: 30 -> 50 (+20), b: 60 -> 40 (-20), c: 10 -> 0, d: 0 -> 10.
        assert_eq!(names, ["b", "a", "d", "c"]);
        assert!((rows[0].delta + 20.0).abs() < 1e-9);
        assert!((rows[1].delta - 20.0).abs() < 1e-9);
        assert!(rows[2].base.is_none());
        assert!(rows[3].new.is_none());
        assert!((rows[3].delta + 10.0).abs() < 1e-9);
    }

    #[test]
    fn equal_keys_are_summed_and_empty_sides_are_zero() {
        let base = Side::from_rows([(k("x"), 1, 1), (k("x"), 3, 1)]);
        let rows = diff(&base, &Side::default());
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].base.unwrap().period, 4);
        assert!((rows[0].delta + 100.0).abs() < 1e-9);
    }
}
