//! `sear report -D`: every record raw and decoded, as perf's report dumps
//! them.

use std::process::ExitCode;

use anyhow::{Context, Result};

/// `-D`: every record raw and decoded, in the order perf delivers them,
/// then the record counts.
pub fn run(path: &std::path::Path, reader: perf_data::RecordReader) -> Result<ExitCode> {
    use profile::session::Step;
    let mut reader = perf_data::OrderedReader::new(reader, perf_data::Order::Time);
    let mut out = super::paged_stdout();
    let mut dumper = render::dump::Dumper::new(&path.display().to_string(), reader.meta());
    dumper.preamble(&mut out, reader.order() == perf_data::Order::File)?;
    let stats = profile::session::each_record(&mut reader, |step| -> Result<()> {
        match step {
            Step::Record(rec, site) => dumper.record(&mut out, rec, site.as_ref())?,
            Step::DroppedParent(d) => render::dump::removed_parent(&mut out, d)?,
        }
        Ok(())
    })
    .with_context(|| format!("reading records of {}", path.display()))?;
    let diag = reader.diagnostics().clone();
    // Records that cannot be framed end the data early; perf stops there
    // with an error and prints no totals, and so do we.
    let broken = diag.warnings.get("corrupt record").cloned();
    if broken.is_none() {
        dumper.write_totals(&mut out, stats, reader.meta())?;
    }
    super::finish(out)?;
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
    Ok(ExitCode::SUCCESS)
}
