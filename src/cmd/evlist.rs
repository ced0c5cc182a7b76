//! `sear evlist`: a recording's events as `perf evlist` lists them (perf's
//! `evsel__fprintf`): the name, then `: ` and each detail asked for, joined
//! with `,`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use crate::cli::EvlistArgs;

pub fn run(a: EvlistArgs, verbose: bool) -> Result<ExitCode> {
    let path = super::input_path(&a.input);
    let mut reader = super::open(&path)?;
    // A stream names its events in its records: read them all first.
    if reader.meta().is_pipe() {
        while let Ok(Some(_)) = reader.next_record() {}
    }
    let meta = reader.meta();
    // Tracepoint ids to their fields, from the recording's formats.
    let fields: std::collections::HashMap<u64, Vec<String>> = if a.trace_fields {
        meta.features
            .get(perf_data::consts::feature::TRACING_DATA)
            .and_then(|b| perf_data::tracing::parse(b).ok())
            .map(|t| {
                t.events
                    .iter()
                    .filter_map(|(_, text)| perf_data::tracing::format_fields(text))
                    .collect()
            })
            .unwrap_or_default()
    } else {
        Default::default()
    };
    let groups = profile::groups::EventGroups::new(meta, false, false);
    let mut out = super::paged_stdout();
    let mut tracepoints = false;
    for (i, e) in meta.events.iter().enumerate() {
        let tracepoint = e.attr.type_ == perf_data::consts::PERF_TYPE_TRACEPOINT;
        tracepoints |= tracepoint;
        let mut line = String::new();
        let mut first = true;
        let mut detail = |line: &mut String, text: &str| {
            line.push(if first { ':' } else { ',' });
            first = false;
            line.push_str(text);
        };
        if a.group {
            if !groups.leads(i) {
                continue;
            }
            let members = groups.members(i);
            let mut names = vec![e.name()];
            names.extend(
                members
                    .iter()
                    .filter_map(|&m| meta.events.get(m))
                    .map(|m| m.name()),
            );
            if members.is_empty() {
                line.push_str(&names.join(","));
            } else {
                let name = groups.group_name(i).unwrap_or_default();
                line.push_str(&format!("{name}{{{}}}", names.join(",")));
            }
            writeln!(out, "{line}")?;
            continue;
        }
        line.push_str(&e.name());
        if verbose {
            for (name, value) in render::header::attr_fields(&e.attr) {
                detail(&mut line, &format!(" {name}: {value}"));
            }
        } else if a.freq {
            let term = if e.attr.freq() {
                "sample_freq"
            } else {
                "sample_period"
            };
            detail(
                &mut line,
                &format!(" {term}={}", e.attr.sample_period_or_freq),
            );
        }
        if a.trace_fields {
            match (tracepoint, fields.get(&e.attr.config)) {
                (false, _) => detail(&mut line, " (not a tracepoint)"),
                (true, None) => detail(&mut line, " (no trace field)"),
                (true, Some(f)) if f.is_empty() => detail(&mut line, " (no trace field)"),
                (true, Some(f)) => {
                    detail(&mut line, &format!(" trace_fields: {}", f[0]));
                    for name in &f[1..] {
                        detail(&mut line, name);
                    }
                }
            }
        }
        writeln!(out, "{line}")?;
    }
    if tracepoints && !a.trace_fields {
        writeln!(
            out,
            "# Tip: use 'perf evlist --trace-fields' to show fields for tracepoint events"
        )?;
    }
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}
