//! `sear collapse`: `perf script` text to folded stacks, as FlameGraph's
//! stackcollapse-perf.pl folds them (same flags, same output).

use std::process::ExitCode;

use anyhow::{Context, Result};
use profile::collapse::perf_script::{Collapser, Options, Weight};

use super::{InputKind, TextInput};
use crate::cli::CollapseArgs;

pub fn run(a: CollapseArgs) -> Result<ExitCode> {
    let path = a.input.as_deref().or(a.file.as_deref());
    let input = super::open_text(path, "`perf script` text")?;
    match input.kind {
        InputKind::PerfData => collapse_recording(&input, &a),
        InputKind::Text => collapse_text(input, &a),
    }
}

pub fn options(a: &CollapseArgs) -> Options {
    Options {
        include_pid: a.pid,
        include_tid: a.tid,
        annotate_kernel: a.kernel || a.all,
        annotate_jit: a.jit || a.all,
        show_addrs: a.addrs,
        inline: a.inline,
        event_filter: a.event_filter.clone(),
        weight: if a.samples {
            Weight::Samples
        } else {
            Weight::Period
        },
    }
}

fn collapse_text(mut input: TextInput, a: &CollapseArgs) -> Result<ExitCode> {
    let mut c = Collapser::new(options(a));
    c.read(&mut input.reader)
        .with_context(|| format!("reading {}", input.name))?;
    let (folded, diag) = c.finish();
    crate::ui::print_diagnostics(input.name.as_ref(), &diag);
    let mut out = super::stdout();
    render::folded::write_folded(&mut out, &folded)?;
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}

/// Folding a recording directly: replaying its samples, unwinding and
/// symbolizing them (planned; `-i perf.data` lands here).
fn collapse_recording(input: &TextInput, _a: &CollapseArgs) -> Result<ExitCode> {
    Err(super::recording_not_supported_yet(&input.name, "collapse"))
}
