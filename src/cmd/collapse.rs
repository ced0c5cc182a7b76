//! `sear collapse`: `perf script` text to folded stacks, as FlameGraph's
//! stackcollapse-perf.pl folds them (same flags, same output).

use std::process::ExitCode;

use anyhow::{Context, Result};
use profile::collapse::perf_script::{Collapser, Options, Weight};
pub use profile::collapse::recording::Replay;

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
        wall_clock: a.wall_clock,
        weight: if a.samples {
            Weight::Samples
        } else {
            Weight::Period
        },
    }
}

fn collapse_text(mut input: TextInput, a: &CollapseArgs) -> Result<ExitCode> {
    text_without_ranges(&input.name, &a.range)?;
    if a.wall_clock {
        anyhow::bail!(
            "{}: --wall-clock needs a recording (perf.data from `sear record --off-cpu`), \
             not text",
            input.name
        );
    }
    let mut c = Collapser::new(options(a));
    c.read(&mut input.reader)
        .with_context(|| format!("reading {}", input.name))?;
    let (folded, diag) = c.finish();
    crate::ui::print_diagnostics(input.name.as_ref(), &diag);
    write(&folded)
}

/// Folding a recording directly (see [`fold_recording`]).
fn collapse_recording(input: TextInput, a: &CollapseArgs) -> Result<ExitCode> {
    let name = input.name.clone();
    let (folded, diag) = fold_recording(
        input,
        &options(a),
        &Replay {
            mark_inline: a.inline,
            prune_below_percent: None,
            raw_return_addresses: a.stack.raw_return_addresses,
            max_stack: a.stack.max_stack,
            ..Replay::default()
        },
        &a.range,
    )?;
    crate::ui::print_diagnostics(name.as_ref(), &diag);
    write(&folded)
}

fn write(folded: &profile::collapse::Folded) -> Result<ExitCode> {
    let mut out = super::stdout();
    render::folded::write_folded(&mut out, folded)?;
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}

/// A recording's folded stacks (shared with `sear flame` and `export`),
/// from its file or from stdin.
pub fn fold_recording(
    input: TextInput,
    opts: &Options,
    r: &Replay,
    range: &crate::cli::RangeArgs,
) -> Result<(profile::collapse::Folded, perf_data::Diagnostics)> {
    let name = input.name.clone();
    let (path, reader) = input
        .recording()
        .with_context(|| format!("reading perf.data header of {name}"))?;
    let r = &Replay {
        time: range.for_recording(reader.meta(), &path)?,
        cpus: range.cpus(),
        ..r.clone()
    };
    let (folded, diag, reader) = profile::collapse::recording::fold_recording(reader, opts, r)
        .map_err(|e| match e {
            profile::Error::BadOption(why) => anyhow::anyhow!("{}: {why}", path.display()),
            e => anyhow::Error::new(e).context(format!("reading records of {}", path.display())),
        })?;
    crate::ui::print_diagnostics(&path, reader.diagnostics());
    Ok((folded, diag))
}

/// `--time` and `--cpu` select samples of a recording; text has none to
/// select (filter it where it is made: `perf script --time`, `-C`).
pub fn text_without_ranges(name: &str, range: &crate::cli::RangeArgs) -> Result<()> {
    if range.is_set() {
        anyhow::bail!(
            "{name}: --time and --cpu select samples of a recording (perf.data), and this \
             input is text: give the recording, or filter where the text is made \
             (`perf script --time RANGES -C CPUS`)"
        );
    }
    Ok(())
}
