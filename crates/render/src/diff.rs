//! `sear diff`'s text: perf diff's table per event (`Baseline`, `Delta
//! Abs`, the sort keys), or with `--new` the two recordings' totals first
//! and the new share as a column of its own.

use std::io::{self, Write};

use profile::diff::{Compute, DiffRow};

/// One recording's totals.
#[derive(Debug, Clone)]
pub struct FileTotals {
    pub name: String,
    pub samples: u64,
    /// (event name, summed period) per event.
    pub events: Vec<(String, u64)>,
    /// Nanoseconds from the first to the last sample (None: no sample times).
    pub span_ns: Option<u64>,
}

/// One event's rows.
#[derive(Debug, Clone)]
pub struct DiffSection<'a> {
    pub event: &'a str,
    pub rows: &'a [DiffRow],
    /// Per key column, the width its values ask for beyond their texts
    /// (perf's comm column: the threads' final comms).
    pub widths: &'a [usize],
    /// Each recording's total period, the baseline's first (what shares
    /// are of; `-F` shows them).
    pub totals: &'a [u64],
}

/// Everything `sear diff` prints.
#[derive(Debug, Clone)]
pub struct DiffTable<'a> {
    pub base: FileTotals,
    pub new: FileTotals,
    /// The recordings after the second (perf diff's third and later data
    /// files), each compared with the baseline: columns of their own.
    pub more: Vec<FileTotals>,
    /// `-v`: the data files listed above each table (as with more than two).
    pub list_files: bool,
    /// The sort keys' column headers.
    pub headers: Vec<&'a str>,
    pub sections: Vec<DiffSection<'a>>,
    /// Rows whose larger share is below this many percent are left out.
    pub percent_limit: f64,
    /// sear's layout: the totals, and a column with the new share.
    pub with_new: bool,
    /// Per key column: perf pads its values even as the last column (all
    /// but symbols and source lines).
    pub pads: Vec<bool>,
    /// Per key column: numbers perf right-aligns (cpu, socket, sizes).
    pub rights: Vec<bool>,
    /// perf's `-c`: the column after Baseline.
    pub compute: Compute,
    /// `-p`: `Base period` and `Period` columns.
    pub show_period: bool,
    /// `-F`: a `Formula` column after the computed one.
    pub show_formula: bool,
    /// `-t`: columns joined by this, values unpadded then padded on the
    /// right, no dotted line (as perf).
    pub field_sep: Option<String>,
}

/// What a value column of perf diff's table shows.
#[derive(Debug, Clone, Copy)]
enum Cell {
    /// The baseline's share.
    Share,
    /// A data file's period.
    Period,
    /// The `-c` value of a data file against the baseline.
    Computed,
    /// `-F`: how that value is computed.
    Formula,
}

/// perf's widths of the period and formula columns.
const PERIOD_WIDTH: usize = 14;
const FORMULA_WIDTH: usize = 70;

/// perf's plain (uncoloured) printer, the one a field separator selects,
/// leaves a ratio of 0 and a weighted difference of 0 blank.
fn blank_when_plain(compute: Compute, v: f64) -> bool {
    match compute {
        Compute::Ratio => v <= 0.0,
        Compute::Wdiff(..) => v == 0.0,
        Compute::Delta | Compute::DeltaAbs => false,
    }
}

/// What perf's `-F` shows for a row the new recording has.
fn formula(r: &DiffRow, compute: Compute, (base_total, new_total): (u64, u64)) -> String {
    let (Some(new), base) = (r.new, r.base.map_or(0, |b| b.period)) else {
        return String::new();
    };
    match compute {
        Compute::Delta | Compute::DeltaAbs => format!(
            "({} * 100 / {new_total}) - ({base} * 100 / {base_total})",
            new.period
        ),
        Compute::Ratio => format!("{} / {base}", new.period),
        Compute::Wdiff(w1, w2) => format!("({} * {w2}) - ({base} * {w1})", new.period),
    }
}

fn change(new: f64, base: f64) -> String {
    if base == 0.0 {
        String::new()
    } else {
        format!(" ({:+.1}%)", 100.0 * (new - base) / base)
    }
}

fn totals_line(out: &mut dyn Write, t: &FileTotals, base: Option<&FileTotals>) -> io::Result<()> {
    let b = |f: fn(&FileTotals) -> f64| base.map_or(String::new(), |b| change(f(t), f(b)));
    write!(out, "{} samples{}", t.samples, b(|t| t.samples as f64))?;
    for (name, period) in &t.events {
        let was = base.and_then(|b| b.events.iter().find(|(n, _)| n == name));
        let ch = was.map_or(String::new(), |(_, p)| change(*period as f64, *p as f64));
        write!(out, ", {period} {name} events{ch}")?;
    }
    match t.span_ns {
        Some(ns) => {
            let ch = base
                .and_then(|b| b.span_ns)
                .map_or(String::new(), |b| change(ns as f64, b as f64));
            writeln!(
                out,
                ", {:.3} s from first to last sample{ch}",
                ns as f64 / 1e9
            )
        }
        None => writeln!(out, ", no sample times"),
    }
}

/// Writes one table per event (and, with `with_new`, the totals first).
pub fn write_diff(out: &mut dyn Write, t: &DiffTable<'_>) -> io::Result<()> {
    if !t.with_new {
        return write_perf(out, t);
    }
    writeln!(out, "# Data files:")?;
    write!(out, "#  [0] {} (Baseline): ", t.base.name)?;
    totals_line(out, &t.base, None)?;
    write!(out, "#  [1] {}: ", t.new.name)?;
    totals_line(out, &t.new, Some(&t.base))?;
    writeln!(out, "#")?;
    for s in &t.sections {
        let (rows, widths) = shown(t, s);
        writeln!(out, "# Event '{}'", s.event)?;
        writeln!(out, "#")?;
        write!(out, "# Baseline        New  Delta Abs")?;
        let last = widths.len().saturating_sub(1);
        for (i, (h, w)) in t.headers.iter().zip(&widths).enumerate() {
            if i == last {
                write!(out, "  {h}")?;
            } else {
                write!(out, "  {h:<w$}")?;
            }
        }
        writeln!(out)?;
        write!(out, "# ........  .........  .........")?;
        for w in &widths {
            write!(out, "  {}", ".".repeat(*w))?;
        }
        writeln!(out)?;
        writeln!(out, "#")?;
        for r in rows {
            let pct = |s: &Option<profile::diff::Share>, w: usize| match s {
                Some(s) => format!("{:>w$.2}%", s.percent, w = w - 1),
                None => " ".repeat(w),
            };
            write!(
                out,
                "{}  {}  {:>+8.2}%",
                pct(&r.base, 10),
                pct(&r.new, 9),
                r.delta
            )?;
            for (i, (k, w)) in shown_keys(r).iter().zip(&widths).enumerate() {
                if i == last {
                    write!(out, "  {k}")?;
                } else {
                    write!(out, "  {k:<w$}")?;
                }
            }
            writeln!(out)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// A row's key texts as printed: with `-v`, each after its prefix.
fn shown_keys(r: &DiffRow) -> Vec<String> {
    r.keys
        .iter()
        .enumerate()
        .map(|(i, k)| match r.prefixes.get(i) {
            Some(p) if !p.is_empty() => format!("{p}{k}"),
            _ => k.clone(),
        })
        .collect()
}

/// A section's rows above the percent limit, and each key column's width
/// (its widest text or header).
fn shown<'a>(t: &DiffTable<'_>, s: &DiffSection<'a>) -> (Vec<&'a DiffRow>, Vec<usize>) {
    let rows: Vec<&DiffRow> = s
        .rows
        .iter()
        .filter(|r| r.max_percent() >= t.percent_limit)
        .collect();
    let mut widths: Vec<usize> = t.headers.iter().map(|h| h.chars().count()).collect();
    for (i, w) in widths.iter_mut().enumerate() {
        match s.widths.get(i) {
            Some(&asked) => *w = (*w).max(asked),
            None => {
                for r in &rows {
                    *w = (*w).max(shown_keys(r).get(i).map_or(0, |k| k.chars().count()));
                }
            }
        }
    }
    (rows, widths)
}

/// perf diff's own layout: per event, `Baseline` (blank for rows only the
/// new recording has) and `Delta Abs` (blank for rows it lacks), the key
/// columns as wide as their widest text, sections apart by a blank line.
fn write_perf(out: &mut dyn Write, t: &DiffTable<'_>) -> io::Result<()> {
    for (n, s) in t.sections.iter().enumerate() {
        let (rows, widths) = shown(t, s);
        if n > 0 {
            writeln!(out)?;
        }
        let (title, cw) = match t.compute {
            Compute::Delta => ("Delta", 7),
            Compute::DeltaAbs => ("Delta Abs", 9),
            Compute::Ratio => ("Ratio", 14),
            Compute::Wdiff(..) => ("Weighted diff", 14),
        };
        writeln!(out, "# Event '{}'\n#", s.event)?;
        let files = 2 + t.more.len();
        if t.list_files || files > 2 {
            writeln!(out, "# Data files:")?;
            for (i, f) in std::iter::once(&t.base)
                .chain(std::iter::once(&t.new))
                .chain(&t.more)
                .enumerate()
            {
                let what = if i == 0 { "(Baseline)" } else { "" };
                writeln!(out, "#  [{i}] {} {what}", f.name)?;
            }
            writeln!(out, "#")?;
        }
        // The value columns in perf's order: (title, width, data file,
        // what), each titled with its file's index past two files and as
        // wide as its title then.
        let mut values: Vec<(String, usize, usize, Cell)> =
            vec![("Baseline".into(), 8, 0, Cell::Share)];
        if t.show_period {
            values.push(("Base period".into(), PERIOD_WIDTH, 0, Cell::Period));
        }
        for f in 1..files {
            values.push((title.into(), cw, f, Cell::Computed));
            if t.show_formula {
                values.push(("Formula".into(), FORMULA_WIDTH, f, Cell::Formula));
            }
            if t.show_period {
                values.push(("Period".into(), PERIOD_WIDTH, f, Cell::Period));
            }
        }
        if files > 2 {
            for (h, w, f, _) in &mut values {
                *h = format!("{h}/{f}");
                *w = (*w).max(h.chars().count());
            }
        }
        let sep = t.field_sep.as_deref();
        let between = sep.unwrap_or("  ");
        write!(out, "#")?;
        for (i, (h, w, _, _)) in values.iter().enumerate() {
            let gap = if i == 0 { " " } else { between };
            write!(out, "{gap}{h:>w$}")?;
        }
        for (h, w) in t.headers.iter().zip(&widths) {
            write!(out, "{between}{h:<w$.w$}")?;
        }
        writeln!(out)?;
        // (With a separator perf prints no dotted line.)
        if sep.is_none() {
            write!(out, "#")?;
            for (i, (_, w, _, _)) in values.iter().enumerate() {
                let gap = if i == 0 { " " } else { "  " };
                write!(out, "{gap}{}", ".".repeat(*w))?;
            }
            for w in &widths {
                write!(out, "  {}", ".".repeat(*w))?;
            }
            writeln!(out, "\n#")?;
        }
        let last = widths.len().saturating_sub(1);
        for r in rows {
            // Each value column's text, None where perf leaves it blank.
            let pairs: Vec<DiffRow> = (1..files).map(|f| r.against(f)).collect();
            let cells: Vec<Option<String>> = values
                .iter()
                .map(|&(_, _, f, what)| match (what, f) {
                    (Cell::Share, _) => r.base.map(|b| match sep {
                        // (perf's `%.2f` with a separator, `%6.2f%%` without.)
                        Some(_) => format!("{:.2}", b.percent),
                        None => format!("{:.2}%", b.percent),
                    }),
                    // (A row only other recordings have: perf's baseline
                    // entry is a placeholder of period 0.)
                    (Cell::Period, 0) => Some(r.base.map_or(0, |b| b.period).to_string()),
                    (Cell::Period, f) => pairs[f - 1].new.map(|n| n.period.to_string()),
                    (Cell::Computed, f) => {
                        let p = &pairs[f - 1];
                        match (t.compute.value(p), p.new.is_some()) {
                            (Some(v), _) if sep.is_some() && blank_when_plain(t.compute, v) => None,
                            (Some(v), _) => Some(match t.compute {
                                Compute::Delta | Compute::DeltaAbs => format!("{v:+.2}%"),
                                // (These formats have their widths: `%14.6F`, `%14ld`.)
                                Compute::Ratio => format!("{v:14.6}"),
                                Compute::Wdiff(..) => format!("{v:14.0}"),
                            }),
                            (None, true) => Some("N/A".to_owned()),
                            (None, false) => None,
                        }
                    }
                    (Cell::Formula, f) => {
                        let totals = (
                            s.totals.first().copied().unwrap_or(0),
                            s.totals.get(f).copied().unwrap_or(0),
                        );
                        Some(formula(&pairs[f - 1], t.compute, totals)).filter(|x| !x.is_empty())
                    }
                })
                .collect();
            for (i, (cell, (_, w, _, what))) in cells.iter().zip(&values).enumerate() {
                match sep {
                    // Unpadded, then padded to the column on the right; a
                    // blank is one space.
                    Some(s) => {
                        let gap = if i == 0 { "" } else { s };
                        let text = cell.as_deref().unwrap_or(" ");
                        write!(out, "{gap}{text:<w$}")?;
                    }
                    // (perf prints a weighted difference `%14ld` whatever
                    // its column's width: a wider column pads it on the
                    // right.)
                    None if matches!(what, Cell::Computed)
                        && matches!(t.compute, Compute::Wdiff(..))
                        && cell.as_deref().is_some_and(|c| c != "N/A") =>
                    {
                        let text = cell.as_deref().unwrap_or("");
                        write!(out, "  {text:<w$}")?;
                    }
                    None => {
                        let text = cell.as_deref().unwrap_or("");
                        write!(out, "  {text:>w$}")?;
                    }
                }
            }
            for (i, (k, w)) in shown_keys(r).iter().zip(&widths).enumerate() {
                // perf writes keys through `repsep_snprintf`: the
                // separator's first character becomes '.'.
                let k = match sep.and_then(|s| s.chars().next()) {
                    Some(c) => k.replace(c, "."),
                    None => k.clone(),
                };
                if t.rights.get(i).copied().unwrap_or(false) {
                    write!(out, "{between}{k:>w$}")?;
                } else if i == last && !t.pads.get(i).copied().unwrap_or(false) {
                    write!(out, "{between}{k}")?;
                } else {
                    // (`%-*.*s`: a comm longer than its column is cut.)
                    let k: String = k.chars().take(*w).collect();
                    write!(out, "{between}{k:<w$}")?;
                }
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use profile::diff::{diff, Side};

    #[test]
    fn table_has_perfs_columns_and_the_new_share() {
        let k = |a: &str, b: &str| vec![a.to_owned(), b.to_owned()];
        let base = Side::from_rows([(k("prog", "[.] a"), 50, 5), (k("prog", "[.] b"), 50, 5)]);
        let new = Side::from_rows([
            (k("prog", "[.] a"), 150, 15),
            (k("libc.so.6", "[.] c"), 50, 5),
        ]);
        let rows = diff(&base, &new);
        let t = DiffTable {
            base: FileTotals {
                name: "base.data".into(),
                samples: 10,
                events: vec![("cpu-clock".into(), 100)],
                span_ns: Some(1_000_000_000),
            },
            new: FileTotals {
                name: "new.data".into(),
                samples: 20,
                events: vec![("cpu-clock".into(), 200)],
                span_ns: Some(2_000_000_000),
            },
            more: Vec::new(),
            list_files: false,
            headers: vec!["Shared Object", "Symbol"],
            sections: vec![DiffSection {
                event: "cpu-clock",
                rows: &rows,
                widths: &[],
                totals: &[100, 200],
            }],
            percent_limit: 0.0,
            with_new: true,
            pads: vec![true, false],
            rights: vec![false, false],
            compute: Compute::DeltaAbs,
            show_period: false,
            show_formula: false,
            field_sep: None,
        };
        let mut out = Vec::new();
        write_diff(&mut out, &t).unwrap();
        let text = String::from_utf8(out).unwrap();
        let expected = "\
# Data files:
#  [0] base.data (Baseline): 10 samples, 100 cpu-clock events, 1.000 s from first to last sample
#  [1] new.data: 20 samples (+100.0%), 200 cpu-clock events (+100.0%), 2.000 s from first to last sample (+100.0%)
#
# Event 'cpu-clock'
#
# Baseline        New  Delta Abs  Shared Object  Symbol
# ........  .........  .........  .............  ......
#
    50.00%               -50.00%  prog           [.] b
    50.00%     75.00%    +25.00%  prog           [.] a
               25.00%    +25.00%  libc.so.6      [.] c

";
        assert_eq!(text, expected);
    }
}
