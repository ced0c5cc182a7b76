//! `sear flame`: an interactive SVG flame graph (as flamegraph.pl draws it)
//! from folded stacks, or from `perf script` text folded on the way.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use profile::collapse::input::{stacks_from_text, TextKind};
use profile::collapse::perf_script::Options;
use profile::collapse::FoldedLine;

use render::flame::{write_diff_svg, write_svg, FlameOptions};

use super::InputKind;
use crate::cli::FlameArgs;

pub fn run(a: FlameArgs) -> Result<ExitCode> {
    if let Some([base, new]) = a.diff.as_deref() {
        return draw_diff(&a, base, new);
    }
    let path = a.input.as_deref().or(a.file.as_deref());
    let input = super::open_text(path, "a recording, folded stacks or `perf script` text")?;
    let name = input.name.clone();
    let t0 = std::time::Instant::now();
    // Stacks under frames too narrow to draw come as one line.
    let stacks = stacks_of(input, &a, flame_options(&a).min_width_percent())?;
    log::debug!("{} stacks folded: {:?}", stacks.len(), t0.elapsed());
    let r = draw(&a, &name, &FoldedLine::all_of(&stacks));
    log::debug!("drawn: {:?}", t0.elapsed());
    r
}

/// Any input's stacks: a recording folded (one event's: `--event` picks,
/// the first sampled by default; kernel, JIT and inline frames marked for
/// their colours; stacks under `prune_below_percent` of the total as one
/// line), `perf script` text folded, or folded stacks as they are.
fn stacks_of(
    mut input: super::TextInput,
    a: &FlameArgs,
    prune_below_percent: Option<f64>,
) -> Result<Vec<(String, u64)>> {
    let opts = Options {
        annotate_kernel: true,
        annotate_jit: true,
        event_filter: a.event.clone(),
        wall_clock: a.wall_clock,
        ..Options::default()
    };
    let name = input.name.clone();
    if input.kind == InputKind::PerfData {
        let (folded, diag) = super::collapse::fold_recording(
            input,
            &opts,
            &super::collapse::Replay {
                mark_inline: true,
                prune_below_percent,
                raw_return_addresses: false,
                max_stack: 127,
                ..Default::default()
            },
            &a.range,
        )?;
        crate::ui::print_diagnostics(name.as_ref(), &diag);
        return Ok(folded.sorted_text());
    }
    super::collapse::text_without_ranges(&name, &a.range)?;
    if a.wall_clock {
        anyhow::bail!(
            "{name}: --wall-clock needs a recording (perf.data from `sear record --off-cpu`), \
             not text"
        );
    }
    let mut bytes = Vec::new();
    input
        .reader
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {name}"))?;
    let (stacks, diag, kind) =
        stacks_from_text(&name, &bytes, opts).with_context(|| format!("reading {name}"))?;
    if kind == TextKind::Folded && a.event.is_some() {
        log::warn!("{name}: folded stacks carry no event names; --event ignored");
    }
    crate::ui::print_diagnostics(name.as_ref(), &diag);
    Ok(stacks)
}

/// `--diff BASE NEW`: the differential graph where `-o` says.
fn draw_diff(a: &FlameArgs, base: &Path, new: &Path) -> Result<ExitCode> {
    let what = "a recording, folded stacks or `perf script` text";
    // A differential graph compares whole profiles.
    let base_stacks = stacks_of(super::open_text(Some(base), what)?, a, None)?;
    let new_stacks = stacks_of(super::open_text(Some(new), what)?, a, None)?;
    let (base_lines, new_lines) = (
        FoldedLine::all_of(&base_stacks),
        FoldedLine::all_of(&new_stacks),
    );
    for (p, l) in [(base, &base_lines), (new, &new_lines)] {
        if l.is_empty() {
            log::warn!("{}: no stacks", p.display());
        }
    }
    let opts = flame_options(a);
    write_to(a, |w| write_diff_svg(w, &base_lines, &new_lines, &opts))
}

/// The graph options the flags give.
fn flame_options(a: &FlameArgs) -> FlameOptions {
    FlameOptions {
        title: a.title.clone(),
        subtitle: a.subtitle.clone(),
        width: a.width.map(|w| w as usize),
        palette: a.colors.clone(),
        hash: a.hash,
        inverted: a.inverted,
        reverse: a.reverse,
        flame_chart: a.flamechart,
        min_width: a.minwidth,
        // (A wall-clock graph counts nanoseconds.)
        count_name: a
            .countname
            .clone()
            .or_else(|| a.wall_clock.then(|| "ns".to_string())),
    }
}

/// Runs `write` on the file `-o` names, or on stdout.
fn write_to(
    a: &FlameArgs,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<ExitCode> {
    super::write_output(a.output.as_deref(), "the SVG", write)?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the SVG of `lines` where `-o` says.
fn draw(a: &FlameArgs, name: &str, lines: &[FoldedLine<'_>]) -> Result<ExitCode> {
    if lines.is_empty() {
        log::warn!("{name}: no stacks to draw; writing an empty graph that says so");
    }

    let opts = flame_options(a);
    write_to(a, |w| write_svg(w, lines, &opts))
}
