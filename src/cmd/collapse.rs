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
        InputKind::PerfData => collapse_recording(input, &a),
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

/// Folding a recording directly: its samples replayed, unwound and
/// symbolized (perf's short names, which the folding rules would cut
/// parameter lists from anyway), then folded by the text rules.
fn collapse_recording(input: TextInput, a: &CollapseArgs) -> Result<ExitCode> {
    let name = input.name.clone();
    let (folded, diag) = fold_recording(
        input,
        &options(a),
        &RecordingOptions {
            mark_inline: a.inline,
            prune_below_percent: None,
            raw_return_addresses: a.raw_return_addresses,
            max_stack: a.max_stack,
        },
    )?;
    crate::ui::print_diagnostics(name.as_ref(), &diag);
    let mut out = super::stdout();
    render::folded::write_folded(&mut out, &folded)?;
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}

/// How a recording is replayed for folding.
pub struct RecordingOptions {
    pub mark_inline: bool,
    /// See [`profile::collapse::recording::Recording::prune_below_percent`].
    pub prune_below_percent: Option<f64>,
    pub raw_return_addresses: bool,
    pub max_stack: usize,
}

/// A recording's folded stacks (shared with `sear flame`).
pub fn fold_recording(
    input: TextInput,
    opts: &Options,
    r: &RecordingOptions,
) -> Result<(profile::collapse::Folded, perf_data::Diagnostics)> {
    let (path, reader) = match &input.path {
        Some(p) => (p.clone(), super::open(p)?),
        None => (
            std::path::PathBuf::from("-"),
            perf_data::RecordReader::from_stream(Box::new(input.reader))
                .context("reading perf.data from stdin")?,
        ),
    };
    let super::replay::Replayed {
        mut collector,
        machine,
        syms,
        reader,
        ..
    } = super::replay::replay(
        &path,
        reader,
        &super::replay::ReplayOptions {
            collect: profile::resolve::CollectOptions {
                max_stack: r.max_stack,
                callchains: true,
                adjust_returns: !r.raw_return_addresses,
                by_cpu: false,
            },
            names: profile::symbolize::NameStyle::Short,
            inline: true,
            srclines: false,
        },
    )?;
    crate::ui::print_diagnostics(&path, reader.diagnostics());
    let t0 = std::time::Instant::now();
    let event_names: Vec<String> = reader.meta().events.iter().map(|e| e.name()).collect();
    let sums = collector.take_sums_in_order();
    log::debug!("{} sums in order: {:?}", sums.len(), t0.elapsed());
    if let Some(asked) = &opts.event_filter {
        if !event_names
            .iter()
            .any(|e| profile::collapse::recording::event_matches(e, asked))
        {
            anyhow::bail!(
                "{}: no event {asked} in this recording (it has {})",
                input.name,
                event_names.join(", ")
            );
        }
    }
    let folded = profile::collapse::recording::fold(
        &profile::collapse::recording::Recording {
            collector: &collector,
            sums: &sums,
            syms: &syms,
            machine: &machine,
            event_names: &event_names,
            mark_inline: r.mark_inline,
            prune_below_percent: r.prune_below_percent,
        },
        opts,
    );
    log::debug!("folded: {:?}", t0.elapsed());
    Ok(folded)
}
