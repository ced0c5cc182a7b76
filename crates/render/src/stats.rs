//! `perf report --stats` text.

use std::io::{self, Write};

use perf_data::consts::{record_type_name, PERF_RECORD_LOST_SAMPLES, PERF_RECORD_SAMPLE};
use perf_data::stats::{Stats, NR_TYPES};

/// Types perf 6.1 prints in the aggregated table (it knows types up to FINISHED_INIT).
const PERF_RECORD_HEADER_MAX: usize = 83;

/// Writes the aggregated table and one block per event, as perf 6.1 does.
/// `event_names` gives each event's display name.
pub fn write_stats(out: &mut dyn Write, s: &Stats, event_names: &[String]) -> io::Result<()> {
    writeln!(out, "\nAggregated stats:")?;
    let total = s.nr_events[0];
    for (t, &n) in s
        .nr_events
        .iter()
        .enumerate()
        .take(PERF_RECORD_HEADER_MAX.min(NR_TYPES))
    {
        let name = record_type_name(t as u32);
        if name == "UNKNOWN" || (t != 0 && n == 0) {
            continue;
        }
        line(out, name, n, if t != 0 { Some(total) } else { None })?;
    }
    for (i, e) in s.per_event.iter().enumerate() {
        // perf skips events without samples (symbol_conf.skip_empty).
        if e.samples == 0 {
            continue;
        }
        let name = event_names.get(i).map(String::as_str).unwrap_or("unknown");
        writeln!(out, "{name} stats:")?;
        line(out, record_type_name(PERF_RECORD_SAMPLE), e.samples, None)?;
        if e.lost_samples_records > 0 {
            line(
                out,
                record_type_name(PERF_RECORD_LOST_SAMPLES),
                e.lost_samples_records,
                None,
            )?;
        }
    }
    Ok(())
}

fn line(out: &mut dyn Write, name: &str, n: u64, total: Option<u64>) -> io::Result<()> {
    match total {
        Some(t) if t > 0 => writeln!(
            out,
            "{name:>16} events: {n:>10}  ({:4.1}%)",
            100.0 * n as f64 / t as f64
        ),
        _ => writeln!(out, "{name:>16} events: {n:>10}"),
    }
}

/// Event names for the per-event stats blocks of `--stats`.
pub fn event_names(meta: &perf_data::Meta) -> Vec<String> {
    // perf names events in pipe mode from their attrs here: its name cache
    // is filled before the EVENT_DESC feature record arrives.
    meta.events
        .iter()
        .map(|e| {
            if meta.is_pipe() {
                e.attr.default_name()
            } else {
                e.name()
            }
        })
        .collect()
}
