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
    anyhow::bail!("only --stats is implemented so far; try `sear report --stats`")
}
