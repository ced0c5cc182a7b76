//! `sear buildid-list`: the build ids recorded for the binaries of a recording.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::BuildidListArgs;

pub fn run(a: BuildidListArgs) -> Result<ExitCode> {
    let path = super::input_path(&a.input);
    let reader = super::open(&path)?;
    let mut out = super::stdout();
    use std::io::Write;
    if let Some(ids) = reader.meta().features.build_ids() {
        for b in ids {
            let hex: String = b.build_id.iter().map(|x| format!("{x:02x}")).collect();
            writeln!(out, "{hex} {}", b.filename)?;
        }
    }
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}
