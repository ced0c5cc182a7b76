//! `perf report --stdio` text: the header block and one table per event.

use std::collections::HashMap;
use std::io::{self, Write};

use profile::hist::{Hists, Key, Names, SortKey, SymRef};

/// One event's section of the report.
pub struct Section<'a> {
    pub event_name: &'a str,
    pub hists: &'a Hists,
}

/// How the table looks.
#[derive(Debug, Clone)]
pub struct TableOptions {
    pub keys: Vec<SortKey>,
    /// Show the Children column (perf's `--children`).
    pub children: bool,
    /// Hide rows below this percentage (perf's `--percent-limit`).
    pub percent_limit: f64,
    /// Hide rows without a parent symbol (perf's `-x/--exclude-other`).
    pub exclude_other: bool,
}

/// Writes the call graph under a row (nothing when it has none to show),
/// given the section's index in `sections` and the row's in its entries.
pub type GraphWriter<'a> = &'a mut dyn FnMut(&mut dyn Write, usize, usize) -> io::Result<()>;

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
    graph: GraphWriter<'_>,
) -> io::Result<()> {
    writeln!(
        out,
        "# To display the perf.data header info, please use --header/--header-only options.\n#\n#\n# Total Lost Samples: {total_lost_samples}\n#"
    )?;
    for (i, s) in sections.iter().enumerate() {
        if s.hists.nr_samples == 0 {
            continue;
        }
        write_section(out, opts, i, s, names, graph)?;
        write!(out, "\n\n")?;
    }
    writeln!(
        out,
        "#\n# (Tip: sear report --stats shows what a recording contains, record type by record type)\n#"
    )
}

/// perf prints unresolved addresses 16 hex digits wide.
const UNRESOLVED_WIDTH: usize = 16;

fn write_section(
    out: &mut dyn Write,
    opts: &TableOptions,
    section: usize,
    s: &Section<'_>,
    names: &Names<'_>,
    graph: GraphWriter<'_>,
) -> io::Result<()> {
    let (n, unit) = convert_unit(s.hists.nr_samples);
    writeln!(
        out,
        "# Samples: {n}{unit} of event '{}'\n# Event count (approx.): {}\n#",
        s.event_name, s.hists.total_period
    )?;
    let keys = &opts.keys;
    // perf's -x hides rows without a parent (the totals keep them).
    let hidden = |e: &profile::hist::HistEntry| {
        opts.exclude_other && !e.keys.iter().any(|k| matches!(k, Key::Parent(Some(_))))
    };
    // Each column is as wide as its header or its widest value, with
    // perf's extra rules for symbols and unresolved addresses.
    let mut widths: Vec<usize> = keys.iter().map(|k| k.header().len()).collect();
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
    let computed = |i: usize, e: &profile::hist::HistEntry| match &lazy[i] {
        Some(m) => {
            e.samples.max(e.samples_acc) >= 2
                || m.get(&e.keys[..i.min(e.keys.len())])
                    .is_some_and(|&n| n >= 2)
        }
        None => true,
    };
    for e in s.hists.entries.iter().filter(|e| !hidden(e)) {
        for (i, (k, sk)) in e.keys.iter().zip(keys).enumerate() {
            if sk.header_width_only() || !computed(i, e) {
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
            widths[i] = widths[i].max(w);
        }
    }
    if unresolved {
        for (k, w) in keys.iter().zip(widths.iter_mut()) {
            if *k == SortKey::Dso {
                *w = (*w).max(UNRESOLVED_WIDTH);
            }
        }
    }
    let mut head = String::new();
    let mut dots = String::new();
    if opts.children {
        head.push_str("# Children      Self");
        dots.push_str("# ........  ........");
    } else {
        head.push_str("# Overhead");
        dots.push_str("# ........");
    }
    for (k, w) in keys.iter().zip(&widths) {
        head.push_str(&format!("  {:<w$}", k.header()));
        dots.push_str(&format!("  {}", ".".repeat(*w)));
    }
    writeln!(out, "{head}\n{dots}\n#")?;
    let total = s.hists.total_period;
    let pct = |v: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * v as f64 / total as f64
        }
    };
    for (row, e) in s.hists.entries.iter().enumerate() {
        if hidden(e) {
            continue;
        }
        let shown = if opts.children {
            e.period_acc
        } else {
            e.period
        };
        if pct(shown) < opts.percent_limit {
            continue;
        }
        let mut line = if opts.children {
            format!("{:>9.2}%  {:>7.2}%", pct(e.period_acc), pct(e.period))
        } else {
            format!("{:>9.2}%", pct(e.period))
        };
        let last = e.keys.len().saturating_sub(1);
        for (i, ((k, sk), w)) in e.keys.iter().zip(keys).zip(&widths).enumerate() {
            let mut v = names.display(k, e.level);
            let cut = matches!(
                k,
                Key::Sym(..) | Key::SymOff(..) | Key::Srcline(_) | Key::Srcfile(_)
            );
            // (Not a symbol before another column: perf appends its
            // " (inlined)" after the cut name there.)
            let cut = cut && (i == last || !matches!(k, Key::Sym(..) | Key::SymOff(..)));
            if cut && v.chars().count() > *w {
                // perf cuts a symbol (with its " (inlined)") or source line
                // at the column width.
                v = v.chars().take(*w).collect();
            }
            line.push_str("  ");
            let pad = w.saturating_sub(v.chars().count());
            if sk.right_aligned() {
                line.push_str(&" ".repeat(pad));
                line.push_str(&v);
                continue;
            }
            line.push_str(&v);
            // Symbols and source lines are padded only when a column follows.
            if sk.pads_value() || i != last {
                line.push_str(&" ".repeat(pad));
            }
        }
        writeln!(out, "{line}")?;
        graph(out, section, row)?;
    }
    Ok(())
}
