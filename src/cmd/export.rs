//! `sear export`: a recording's samples in another tool's format. Pass one
//! keeps every sample (time, thread, event, period, interned stack); pass
//! two symbolizes each unique location once; then one renderer writes.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use profile::collect::{CollectOptions, Collector};
use profile::export::ExportProfile;
use profile::symbolize::SymbolizeOptions;

use crate::cli::{ExportArgs, ExportFormat};

pub fn run(a: ExportArgs) -> Result<ExitCode> {
    let path = super::input_path(&a.input);
    if a.format == ExportFormat::Folded {
        return folded(&a, &path);
    }
    let profile = load(&path, a.max_stack, a.names, &a.range)?;
    if profile.samples.is_empty() {
        log::warn!("{}: no samples; the export is empty", path.display());
    }
    let name = path
        .file_name()
        .map_or_else(|| "perf.data".into(), |n| n.to_string_lossy().into_owned());
    write_to(&a, |w| match a.format {
        ExportFormat::Pprof => render::pprof::write_pprof(w, &profile),
        ExportFormat::Speedscope => render::speedscope::write_speedscope(w, &profile, &name),
        ExportFormat::Firefox => render::firefox::write_firefox(w, &profile, &name),
        ExportFormat::Json => render::json::write_json(w, &profile),
        ExportFormat::Folded => unreachable!("handled above"),
    })
}

/// Reads the recording at `path` into a symbolized [`ExportProfile`] (with
/// source lines and inline frames).
pub fn load(
    path: &std::path::Path,
    max_stack: usize,
    names: crate::cli::NameArgs,
    range: &crate::cli::RangeArgs,
) -> Result<ExportProfile> {
    let reader = super::open(path)?;
    let time = range.for_recording(reader.meta(), path)?;
    let (machine, kernel) = profile::session::start(reader.meta());
    let mut sink = profile::session::Timeline::new(
        Collector::new(CollectOptions {
            max_stack,
            ..CollectOptions::default()
        }),
        profile::session::SampleFilter {
            time,
            cpus: range.cpus(),
            ..Default::default()
        },
    );
    let profile::session::Replay {
        machine, reader, ..
    } = profile::session::replay(reader, machine, &mut sink)
        .with_context(|| format!("reading records of {}", path.display()))?;
    let profile::session::Timeline {
        mut collector,
        samples,
        ..
    } = sink;
    crate::ui::print_diagnostics(path, reader.diagnostics());
    // (What only adding samples needs goes before the passes after it.)
    collector.finish();
    crate::ui::log_memory("after pass one");
    let syms = profile::symbolize::pass_two(
        &mut collector,
        &machine,
        kernel,
        &SymbolizeOptions {
            names: names.style(),
            inline: true,
            finder: symbols::DebugFinder::default(),
            srclines: true,
        },
    );
    crate::ui::log_memory("after symbolizing");
    let event_names: Vec<String> = reader.meta().events.iter().map(|e| e.name()).collect();
    let mut profile = profile::export::build(&profile::export::Inputs {
        collector: &collector,
        machine: &machine,
        syms: &syms,
        samples: &samples,
        event_names: &event_names,
    });
    let mtime_ns = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| u64::try_from(d.as_nanos()).ok());
    profile.wall_start_ns = profile::export::wall_start(
        reader.meta().features.clock_data(),
        mtime_ns,
        profile.time_range,
    );
    Ok(profile)
}

/// Folded stacks, as `sear collapse -i FILE` writes them.
fn folded(a: &ExportArgs, path: &std::path::Path) -> Result<ExitCode> {
    let input = super::open_text(Some(path), "a recording")?;
    if input.kind != super::InputKind::PerfData {
        anyhow::bail!("{}: not a perf.data recording", path.display());
    }
    let (folded, diag) = super::collapse::fold_recording(
        input,
        &profile::collapse::perf_script::Options::default(),
        &super::collapse::Replay {
            mark_inline: false,
            prune_below_percent: None,
            raw_return_addresses: false,
            max_stack: a.max_stack,
            ..Default::default()
        },
        &a.range,
    )?;
    crate::ui::print_diagnostics(path, &diag);
    write_to(a, |w| render::folded::write_folded(w, &folded))
}

/// Writes where `-o` says (stdout by default).
fn write_to(
    a: &ExportArgs,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<ExitCode> {
    super::write_output(Some(&a.output), "the export", write)?;
    Ok(ExitCode::SUCCESS)
}
