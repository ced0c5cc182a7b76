//! `perf report --stdio` text: the header block and one table per event.

use std::collections::HashMap;
use std::io::{self, Write};

use profile::fields::{Column, Field, Layout, Stat};
use profile::hist::{HistEntry, Hists, Key, Names, SortKey, SymRef};

/// One event's section of the report (or one event group's, in perf's
/// group view).
pub struct Section<'a> {
    /// The event's name, or the group's description.
    pub event_name: &'a str,
    /// perf says "events" for a group leader (even outside group view).
    pub plural: bool,
    pub hists: &'a Hists,
    /// In group view, the other members' rows (their totals are the
    /// header's and their percentages' bases); empty otherwise.
    pub members: Vec<&'a Hists>,
}

/// How the table looks.
#[derive(Debug, Clone)]
pub struct TableOptions {
    /// The sort keys in the order of each entry's `keys`.
    pub keys: Vec<SortKey>,
    /// The columns (values and keys) in print order.
    pub layout: Layout,
    /// Children mode: `--percent-limit` looks at the children period.
    pub children: bool,
    /// Hide rows below this percentage (perf's `--percent-limit`).
    pub percent_limit: f64,
    /// Hide rows without a parent symbol (perf's `-x/--exclude-other`).
    pub exclude_other: bool,
    /// Percentages of the samples the filters kept (`--percentage
    /// relative`) instead of all samples (perf's default, `absolute`).
    pub relative: bool,
    /// Sort keys filtered to a single value (`--comms X`, `--dsos X`,
    /// `--symbols X`) with that value: perf hides their columns and names
    /// the value in the header instead.
    pub single_filters: Vec<(SortKey, String)>,
    /// `-q`: the rows and call graphs only, no `#` lines (perf's quiet
    /// report).
    pub quiet: bool,
    /// `--time` as given: perf adds it to each section's title.
    pub time_slices: Option<String>,
    /// `--header`: the recording's header was printed before the table
    /// (perf then leaves out its hint about it).
    pub after_header: bool,
}

impl TableOptions {
    fn single_filter(&self, c: Column) -> Option<&str> {
        match c {
            Column::Key(k) => self
                .single_filters
                .iter()
                .find(|(f, _)| *f == k)
                .map(|(_, v)| v.as_str()),
            Column::Field(_) => None,
        }
    }

    /// The columns shown: all but those of single-value filters, unless
    /// that would hide every key column.
    fn shown_columns(&self) -> Vec<Column> {
        let cols = &self.layout.columns;
        let all_hidden = cols
            .iter()
            .filter(|c| matches!(c, Column::Key(_)))
            .all(|c| self.single_filter(*c).is_some());
        cols.iter()
            .copied()
            .filter(|c| all_hidden || self.single_filter(*c).is_none())
            .collect()
    }
}

/// The call graph text under each row (empty or missing: none), by the
/// section's index in `sections` and the row's in its entries (as
/// [`crate::callgraph::entry_graphs`] formats them).
pub type Graphs = [Vec<Vec<u8>>];

/// perf abbreviates sample counts: 1548 → "1K", 207 → "207 ".
fn convert_unit(mut v: u64) -> (u64, char) {
    let mut unit = ' ';
    for u in ['K', 'M', 'G'] {
        if v > 1000 {
            v /= 1000;
            unit = u;
        }
    }
    (v, unit)
}

/// Writes the report for `sections` (events without samples are skipped).
pub fn write_report(
    out: &mut dyn Write,
    opts: &TableOptions,
    total_lost_samples: u64,
    sections: &[Section<'_>],
    names: &Names<'_>,
    graphs: &Graphs,
) -> io::Result<()> {
    if opts.quiet {
        for (i, s) in sections.iter().enumerate() {
            if s.hists.all_samples > 0 {
                write_section(out, opts, i, s, names, graphs)?;
                write!(out, "\n\n")?;
            }
        }
        return Ok(());
    }
    if !opts.after_header {
        writeln!(
            out,
            "# To display the perf.data header info, please use --header/--header-only options.\n#"
        )?;
    }
    for &c in &opts.layout.columns {
        if let Some(v) = opts.single_filter(c) {
            let what = match c {
                Column::Key(SortKey::Comm) => "comm",
                Column::Key(SortKey::Dso) => "dso",
                _ => "symbol",
            };
            writeln!(out, "# {what}: {v}")?;
        }
    }
    writeln!(out, "#\n# Total Lost Samples: {total_lost_samples}\n#")?;
    for (i, s) in sections.iter().enumerate() {
        // (perf looks at all samples, filtered or not, and at the
        // leader's only in group view.)
        if s.hists.all_samples == 0 {
            continue;
        }
        write_section(out, opts, i, s, names, graphs)?;
        write!(out, "\n\n")?;
    }
    writeln!(
        out,
        "#\n# (Tip: sear report --stats shows what a recording contains, record type by record type)\n#"
    )
}

/// perf prints unresolved addresses 16 hex digits wide.
const UNRESOLVED_WIDTH: usize = 16;

/// A column's width and, for a key column, the index of its key in an
/// entry's keys.
struct ColumnFormat {
    column: Column,
    width: usize,
    key: Option<usize>,
}

fn write_section(
    out: &mut dyn Write,
    opts: &TableOptions,
    section: usize,
    s: &Section<'_>,
    names: &Names<'_>,
    graphs: &Graphs,
) -> io::Result<()> {
    let (mut nr, mut period) = s.hists.header_totals(opts.relative);
    for m in &s.members {
        let (n, p) = m.header_totals(opts.relative);
        nr += n;
        period = period.wrapping_add(p);
    }
    let (n, unit) = convert_unit(nr);
    if !opts.quiet {
        writeln!(
            out,
            "# Samples: {n}{unit} of event{} '{}'{}\n# Event count (approx.): {period}\n#",
            if s.plural { "s" } else { "" },
            s.event_name,
            match &opts.time_slices {
                Some(t) => format!(" (time slices: {t})"),
                None => String::new(),
            },
        )?;
    }
    let keys = &opts.keys;
    // perf's -x hides rows without a parent (the totals keep them).
    // Entries the filters' samples made are hidden too.
    let hidden = |e: &HistEntry| {
        e.filtered
            || opts.exclude_other && !e.keys.iter().any(|k| matches!(k, Key::Parent(Some(_))))
    };
    let nr_members = 1 + s.members.len();
    // Each key column is as wide as its header or its widest value, with
    // perf's extra rules for symbols and unresolved addresses; a value
    // column holds one value per group member.
    let mut cols: Vec<ColumnFormat> = opts
        .shown_columns()
        .iter()
        .map(|&c| {
            let header = opts.layout.header(c).len();
            match c {
                Column::Field(f) => ColumnFormat {
                    column: c,
                    width: header.max(f.value_width() * nr_members),
                    key: None,
                },
                Column::Key(k) => ColumnFormat {
                    column: c,
                    width: header,
                    key: keys.iter().position(|x| *x == k),
                },
            }
        })
        .collect();
    let mut unresolved = false;
    // perf computes an entry's srcline (and srcfile) text only when a
    // sample's tree insertion compares it with an entry equal in the keys
    // before it: a second sample merging into the entry, or another entry
    // with those keys (a binary tree search passes a neighbour). It sizes
    // the column by the texts computed by then and cuts the others.
    let lazy: Vec<Option<HashMap<&[Key], usize>>> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            k.needs_srclines().then(|| {
                let mut m: HashMap<&[Key], usize> = HashMap::new();
                for e in &s.hists.entries {
                    *m.entry(&e.keys[..i.min(e.keys.len())]).or_default() += 1;
                }
                m
            })
        })
        .collect();
    let computed = |i: usize, e: &HistEntry| match &lazy[i] {
        Some(m) => {
            e.samples.max(e.samples_acc) >= 2
                || m.get(&e.keys[..i.min(e.keys.len())])
                    .is_some_and(|&n| n >= 2)
        }
        None => true,
    };
    for e in s.hists.entries.iter().filter(|e| !hidden(e)) {
        for col in &mut cols {
            let Some((i, k)) = col.key.and_then(|i| Some((i, e.keys.get(i)?))) else {
                continue;
            };
            if keys[i].header_width_only() || !computed(i, e) {
                continue;
            }
            let w = match k {
                Key::Sym(SymRef::Sym(id)) => names.syms[*id as usize].name.chars().count() + 4,
                Key::Sym(SymRef::Addr { .. }) => {
                    unresolved = true;
                    UNRESOLVED_WIDTH + 6
                }
                // perf sizes the comm column by the comm the entry's
                // thread has at the end, not the one the entry shows.
                Key::Comm(_) => names.thread_comm(e.thread).chars().count(),
                Key::Parent(None) => 0,
                k => names.display(k, e.level).chars().count(),
            };
            col.width = col.width.max(w);
        }
    }
    if unresolved {
        for col in &mut cols {
            if col.column == Column::Key(SortKey::Dso) {
                col.width = col.width.max(UNRESOLVED_WIDTH);
            }
        }
    }
    let mut head = String::from("#");
    let mut dots = String::from("#");
    for (i, col) in cols.iter().enumerate() {
        let sep = if i == 0 { " " } else { "  " };
        let name = opts.layout.header(col.column);
        let w = col.width;
        match col.column {
            Column::Field(_) => head.push_str(&format!("{sep}{name:>w$}")),
            Column::Key(_) => head.push_str(&format!("{sep}{name:<w$}")),
        }
        dots.push_str(sep);
        dots.push_str(&".".repeat(w));
    }
    if !opts.quiet {
        writeln!(out, "{head}\n{dots}\n#")?;
    }
    let total = s.hists.percent_base(opts.relative);
    let member_totals: Vec<u64> = s
        .members
        .iter()
        .map(|m| m.percent_base(opts.relative))
        .collect();
    let pct = |v: u64, total: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * v as f64 / total as f64
        }
    };
    let zero = Stat::default();
    for (row, e) in s.hists.entries.iter().enumerate() {
        if hidden(e) {
            continue;
        }
        let shown = if opts.children {
            e.period_acc
        } else {
            e.period
        };
        if pct(shown, total) < opts.percent_limit {
            continue;
        }
        let mut line = String::new();
        let last = cols.len().saturating_sub(1);
        for (i, col) in cols.iter().enumerate() {
            line.push_str("  ");
            let start = line.chars().count();
            match col.column {
                // Without children, perf has no children period to show.
                Column::Field(Field::OverheadChildren) if !opts.children => {
                    let w = Field::OverheadChildren.value_width() - 1;
                    line.push_str(&format!(" {:>w$}", "N/A"));
                }
                Column::Field(f) => {
                    write_values(&mut line, f, e, total, &member_totals, &zero, &pct);
                }
                Column::Key(sk) => {
                    let Some(k) = col.key.and_then(|i| e.keys.get(i)) else {
                        continue;
                    };
                    let mut v = names.display(k, e.level);
                    let cut = matches!(
                        k,
                        Key::Sym(..) | Key::SymOff(..) | Key::Srcline(_) | Key::Srcfile(_)
                    );
                    // (Not a symbol before another column: perf appends its
                    // " (inlined)" after the cut name there.)
                    let cut = cut && (i == last || !matches!(k, Key::Sym(..) | Key::SymOff(..)));
                    // perf prints a comm with `%-*.*s` at the column's
                    // width, which comes from the comm each entry's thread
                    // has at the end: a thread renamed since is cut.
                    let cut = cut || matches!(k, Key::Comm(_));
                    if cut && v.chars().count() > col.width {
                        // perf cuts a symbol (with its " (inlined)") or source
                        // line at the column width.
                        v = v.chars().take(col.width).collect();
                    }
                    if sk.right_aligned() {
                        let pad = col.width.saturating_sub(v.chars().count());
                        line.push_str(&" ".repeat(pad));
                    }
                    line.push_str(&v);
                }
            }
            // perf pads every column to its width but the last, and key
            // columns other than symbols and source lines pad themselves.
            let self_padded = matches!(col.column, Column::Key(k) if k.pads_value());
            if i != last || self_padded {
                let printed = line.chars().count() - start;
                line.push_str(&" ".repeat(col.width.saturating_sub(printed)));
            }
        }
        writeln!(out, "{line}")?;
        if let Some(g) = graphs.get(section).and_then(|g| g.get(row)) {
            out.write_all(g)?;
        }
    }
    Ok(())
}

/// A value column's text: the entry's value, then each group member's.
fn write_values(
    line: &mut String,
    f: Field,
    e: &HistEntry,
    total: u64,
    member_totals: &[u64],
    zero: &Stat,
    pct: &dyn Fn(u64, u64) -> f64,
) {
    let len = f.value_width();
    let mut one = |v: u64, total: u64| {
        if f.is_percent() {
            let w = len - 2;
            line.push_str(&format!(" {:>w$.2}%", pct(v, total)));
        } else {
            let w = len - 1;
            line.push_str(&format!(" {v:>w$}"));
        }
    };
    one(f.value(&e.stat()), total);
    for (i, &t) in member_totals.iter().enumerate() {
        one(f.value(e.group.get(i).unwrap_or(zero)), t);
    }
}

/// The sections of a report: one per event in `section_events` (see
/// `profile::groups::EventGroups::sections`), named `names`, with its
/// group's other members' rows in group view.
pub fn sections<'a>(
    hists: &'a [Hists],
    groups: &profile::groups::EventGroups,
    section_events: &[usize],
    names: &'a [String],
) -> Vec<Section<'a>> {
    section_events
        .iter()
        .zip(names)
        .filter_map(|(&ev, n)| {
            Some(Section {
                event_name: n,
                plural: !groups.members(ev).is_empty(),
                hists: hists.get(ev)?,
                members: if groups.view {
                    groups
                        .members(ev)
                        .iter()
                        .filter_map(|&m| hists.get(m))
                        .collect()
                } else {
                    Vec::new()
                },
            })
        })
        .collect()
}
