//! `sear report`: perf's report modes.

use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::stats::Stats;

use crate::cli::ReportArgs;

pub fn run(a: ReportArgs) -> Result<ExitCode> {
    let path = super::input_path(&a.input);
    let mut reader = super::open(&path)?;
    if a.stats {
        let stats = Stats::collect(&mut reader, |_| {})
            .with_context(|| format!("reading records of {}", path.display()))?;
        // perf names events in pipe mode from their attrs here: its name cache
        // is filled before the EVENT_DESC feature record arrives.
        let meta = reader.meta();
        let names: Vec<String> = meta
            .events
            .iter()
            .map(|e| {
                if meta.is_pipe() {
                    e.attr.default_name()
                } else {
                    e.name()
                }
            })
            .collect();
        let mut out = super::stdout();
        render::stats::write_stats(&mut out, &stats, &names)?;
        super::finish(out)?;
        crate::ui::print_diagnostics(&path, reader.diagnostics());
        return Ok(ExitCode::SUCCESS);
    }
    if a.header_only {
        let info = render::header::FileInfo {
            mtime: file_mtime(&path),
            show_info: a.show_info,
        };
        let mut out = super::stdout();
        render::header::write_header(&mut out, reader.meta(), &info)?;
        super::finish(out)?;
        crate::ui::print_diagnostics(&path, reader.diagnostics());
        return Ok(ExitCode::SUCCESS);
    }
    if a.dump_raw_trace {
        let mut out = super::stdout();
        let mut dumper = render::dump::Dumper::new();
        while let Some(rec) = reader
            .next_record()
            .with_context(|| format!("reading records of {}", path.display()))?
        {
            dumper.record(&mut out, &rec)?;
        }
        super::finish(out)?;
        crate::ui::print_diagnostics(&path, reader.diagnostics());
        return Ok(ExitCode::SUCCESS);
    }
    anyhow::bail!(
        "the hotspot report is not implemented yet; use `sear report --stats`, \
         `--header-only` or `-D`"
    )
}

fn file_mtime(path: &std::path::Path) -> Option<i64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.mtime())
}
