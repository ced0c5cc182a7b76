//! `sear flame`: an interactive SVG flame graph (as flamegraph.pl draws it)
//! from folded stacks, or from `perf script` text folded on the way.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};
use profile::collapse::perf_script::{looks_like_perf_script, Collapser, Options};
use profile::collapse::{parse_folded, FoldedLine};
use render::flame::{write_svg, FlameOptions};

use super::InputKind;
use crate::cli::FlameArgs;

pub fn run(a: FlameArgs) -> Result<ExitCode> {
    let path = a.input.as_deref().or(a.file.as_deref());
    let mut input = super::open_text(path, "folded stacks or `perf script` text")?;
    if input.kind == InputKind::PerfData {
        // One graph per event will come from replaying the recording (`--event` picks).
        return Err(super::recording_not_supported_yet(&input.name, "flame"));
    }
    let mut bytes = Vec::new();
    input
        .reader
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {}", input.name))?;

    // Owned stacks when they come from perf script text; borrowed otherwise.
    let stacks: Vec<(String, u64)>;
    let text: Cow<'_, str>;
    let lines: Vec<FoldedLine<'_>> = if looks_like_perf_script(&bytes) {
        let mut c = Collapser::new(Options {
            annotate_kernel: true,
            annotate_jit: true,
            event_filter: a.event.clone(),
            ..Options::default()
        });
        c.read(&bytes[..])
            .with_context(|| format!("reading {}", input.name))?;
        let (folded, diag) = c.finish();
        crate::ui::print_diagnostics(input.name.as_ref(), &diag);
        stacks = folded
            .sorted()
            .into_iter()
            .map(|(s, n)| (String::from_utf8_lossy(s).into_owned(), n))
            .collect();
        stacks
            .iter()
            .map(|(s, n)| FoldedLine {
                stack: s,
                count: *n,
            })
            .collect()
    } else {
        if a.event.is_some() {
            log::warn!(
                "{}: folded stacks carry no event names; --event ignored",
                input.name
            );
        }
        text = String::from_utf8_lossy(&bytes);
        if let Cow::Owned(_) = text {
            log::warn!(
                "{}: input is not valid UTF-8; invalid bytes shown as \u{fffd}",
                input.name
            );
        }
        let (lines, diag) = parse_folded(&text);
        crate::ui::print_diagnostics(input.name.as_ref(), &diag);
        lines
    };
    if lines.is_empty() {
        log::warn!(
            "{}: no stacks to draw; writing an empty graph that says so",
            input.name
        );
    }

    let opts = FlameOptions {
        title: a.title.clone(),
        subtitle: a.subtitle.clone(),
        width: a.width.map(|w| w as usize),
        palette: a.colors.clone(),
        hash: a.hash,
        inverted: a.inverted,
        reverse: a.reverse,
        flame_chart: a.flamechart,
        min_width: a.minwidth,
        count_name: a.countname.clone(),
    };
    match &a.output {
        Some(p) if p.as_os_str() != "-" => {
            let f =
                std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?;
            let mut w = std::io::BufWriter::new(f);
            write_svg(&mut w, &lines, &opts).with_context(|| format!("writing {}", p.display()))?;
            w.flush()
                .with_context(|| format!("writing {}", p.display()))?;
        }
        _ => {
            let mut out = super::stdout();
            write_svg(&mut out, &lines, &opts).context("writing the SVG")?;
            super::finish(out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
