//! `sear report -D`: every record raw and decoded, as perf's report dumps
//! them.

use std::process::ExitCode;

use anyhow::{Context, Result};

/// `-D`: every record raw and decoded, in the order perf delivers them,
/// then the record counts.
pub fn run(path: &std::path::Path, reader: perf_data::RecordReader) -> Result<ExitCode> {
    let mut out = super::paged_stdout();
    records(path, reader, &mut out, true)?;
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}

/// The records of `path` dumped to `out`; with `whole`, perf report's
/// preamble before them and the record counts after; without, as perf
/// diff's `-D` dumps each recording (no preamble or counts, its tool's
/// `unhandled!` marks).
pub fn records(
    path: &std::path::Path,
    reader: perf_data::RecordReader,
    out: &mut dyn std::io::Write,
    whole: bool,
) -> Result<()> {
    use profile::session::Step;
    let mut reader = perf_data::OrderedReader::new(reader, perf_data::Order::Time);
    let mut dumper = render::dump::Dumper::new(&path.display().to_string(), reader.meta());
    if !whole {
        dumper = dumper.for_diff();
    }
    if reader.order() == perf_data::Order::File {
        dumper = dumper.unordered();
    }
    if whole {
        dumper.preamble(out, reader.order() == perf_data::Order::File)?;
    }
    let stats = profile::session::each_record(&mut reader, |step| -> Result<()> {
        match step {
            Step::Record(rec, site) => dumper.record(out, rec, site.as_ref())?,
            Step::DroppedParent(d) => render::dump::removed_parent(out, d)?,
        }
        Ok(())
    })
    .with_context(|| format!("reading records of {}", path.display()))?;
    let diag = reader.diagnostics().clone();
    // Records that cannot be framed end the data early; perf stops there
    // with an error and prints no totals, and so do we.
    let broken = diag.warnings.get("corrupt record").cloned();
    if broken.is_none() && whole {
        dumper.write_totals(out, stats, reader.meta())?;
    }
    crate::ui::print_diagnostics(path, &diag);
    if let (n @ 1.., Some(at)) = dumper.undecodable() {
        log::warn!(
            "{}: {n} records could not be decoded (first at byte offset {at}); \
             they are dumped raw only",
            path.display()
        );
    }
    if let Some(w) = broken {
        anyhow::bail!(
            "{}: the data is corrupt at byte offset {}: {}; the dump stops there",
            path.display(),
            w.first_offset,
            w.message
        );
    }
    Ok(())
}
