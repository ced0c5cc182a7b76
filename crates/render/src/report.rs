//! `perf report --stdio` text: the header block and one table per event.

use std::io::{self, Write};

use profile::hist::{Hists, SortKey};

/// One event's section of the report.
pub struct Section<'a> {
    pub event_name: &'a str,
    pub hists: &'a Hists,
}

/// Gives a thread's comm as it is at the end of the recording.
pub type CommOf<'a> = &'a dyn Fn(i32) -> String;

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
    keys: &[SortKey],
    total_lost_samples: u64,
    sections: &[Section<'_>],
    comm_of: CommOf<'_>,
) -> io::Result<()> {
    writeln!(
        out,
        "# To display the perf.data header info, please use --header/--header-only options.\n#\n#\n# Total Lost Samples: {total_lost_samples}\n#"
    )?;
    for s in sections.iter().filter(|s| s.hists.nr_samples > 0) {
        write_section(out, keys, s, comm_of)?;
        write!(out, "\n\n")?;
    }
    writeln!(
        out,
        "#\n# (Tip: sear report --stats shows what a recording contains, record type by record type)\n#"
    )
}

fn write_section(
    out: &mut dyn Write,
    keys: &[SortKey],
    s: &Section<'_>,
    comm_of: CommOf<'_>,
) -> io::Result<()> {
    let (n, unit) = convert_unit(s.hists.nr_samples);
    writeln!(
        out,
        "# Samples: {n}{unit} of event '{}'\n# Event count (approx.): {}\n#",
        s.event_name, s.hists.total_period
    )?;
    let rows: Vec<Vec<String>> = s
        .hists
        .entries
        .iter()
        .map(|e| e.keys.iter().map(|k| k.display(comm_of)).collect())
        .collect();
    // Each column is as wide as its header or its widest value.
    let widths: Vec<usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
                .max(k.header().len())
        })
        .collect();
    let mut head = String::from("# Overhead");
    let mut dots = String::from("# ........");
    for (k, w) in keys.iter().zip(&widths) {
        head.push_str(&format!("  {:<w$}", k.header()));
        dots.push_str(&format!("  {}", ".".repeat(*w)));
    }
    writeln!(out, "{head}\n{dots}\n#")?;
    let total = s.hists.total_period;
    for (e, row) in s.hists.entries.iter().zip(&rows) {
        let pct = if total == 0 {
            0.0
        } else {
            100.0 * e.period as f64 / total as f64
        };
        let mut line = format!("{pct:>9.2}%");
        for (v, w) in row.iter().zip(&widths) {
            let pad = w.saturating_sub(v.chars().count());
            line.push_str("  ");
            line.push_str(v);
            line.push_str(&" ".repeat(pad));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}
