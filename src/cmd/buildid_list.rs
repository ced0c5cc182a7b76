//! `sear buildid-list`: the build ids recorded for the binaries of a recording.
//!
//! Like perf: without `--with-hits` the list is the BUILD_ID header feature
//! (one line per binary, in the order recorded). With `--with-hits`, or when
//! the recording has no BUILD_ID feature (pipe mode, `record -z`, ...), the
//! records are replayed and only binaries a sample landed in are listed;
//! those without a known build id get a blank id column (profile::buildids).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::consts::feature;
use profile::buildids::BuildIds;

use crate::cli::BuildidListArgs;

pub fn run(a: BuildidListArgs) -> Result<ExitCode> {
    let mut out = super::stdout();
    if a.kernel {
        let id = symbols::KernelFinder::default()
            .running_build_id()
            .context("cannot read the running kernel's build id from /sys/kernel/notes")?;
        writeln!(out, "{}", hex(&id))?;
        super::finish(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let path = super::input_path(&a.input);
    let reader = super::open(&path)?;
    let meta = reader.meta();
    let has_feature = meta.features.has(feature::BUILD_ID);
    let mut with_hits = a.with_hits;
    // perf does not decode AUX area traces to find hits: it lists them all.
    if !meta.is_pipe() && meta.features.has(feature::AUXTRACE) {
        with_hits = false;
    }
    if !has_feature {
        with_hits = true;
    }
    let mut ids = BuildIds::from_features(meta);
    let path_s = path.display().to_string();
    if with_hits || meta.is_pipe() {
        let reader = ids
            .replay_hits(reader)
            .with_context(|| format!("reading records of {path_s}"))?;
        let diag = reader.diagnostics();
        // perf gives up on a stream it cannot frame and lists nothing.
        if let Some(w) = diag.warnings.get("corrupt record") {
            anyhow::bail!(
                "{path_s}: the data is corrupt at byte offset {}: {}",
                w.first_offset,
                w.message
            );
        }
        crate::ui::print_diagnostics(&path, diag);
    } else {
        crate::ui::print_diagnostics(&path, reader.diagnostics());
    }
    for (id, name) in ids.list(with_hits) {
        let id = id.map(hex).unwrap_or_default();
        writeln!(out, "{id:<40} {name}")?;
    }
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
