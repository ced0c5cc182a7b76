//! `sear annotate`: perf annotate's per-instruction view of hot functions.
//!
//! Pass one sums each sample's own location (the leaf, its exact address); pass two
//! symbolizes the locations; then each function's samples are spread over its
//! instructions (profile::annotate), and the function is disassembled from its binary
//! (found as report finds it: the recorded path with a matching build id, else the
//! build-id cache) and printed (render::annotate).

use std::process::ExitCode;

use anyhow::{Context, Result};
use profile::annotate::{AnnotateOptions, Annotator, FunctionFilter};
use profile::collect::CollectOptions;
use render::annotate::{Column, FunctionHeader, Options, PercentType};
use symbols::disasm::Syntax;

use crate::cli::AnnotateArgs;

pub fn run(mut a: AnnotateArgs) -> Result<ExitCode> {
    if !viewer_wanted(&a) {
        return annotate(a, None);
    }
    // (The browser draws plain text.)
    a.stdio_color = Some("never".into());
    let mut buf = Vec::new();
    let code = annotate(a, Some(&mut buf))?;
    let anns = annotations(&String::from_utf8_lossy(&buf));
    if anns.is_empty() {
        eprintln!("sear annotate: no samples in functions that can be annotated");
        return Ok(code);
    }
    crate::ui::browser::run_annotations(&anns)?;
    Ok(code)
}

/// Whether annotate opens perf's annotate browser: on a terminal unless
/// `--stdio` (or perf's `tui.annotate = false`), always with `--tui` where
/// there is a terminal; never with the text-only layouts and dumps.
fn viewer_wanted(a: &AnnotateArgs) -> bool {
    let text_only = [
        (a.stdio2, "--stdio2"),
        (a.print_line, "-l/--print-line"),
        (a.dump_raw_trace, "-D/--dump-raw-trace"),
    ];
    if a.stdio {
        return false;
    }
    if !crate::ui::browser::available() {
        if a.tui {
            log::warn!("--tui: stdout is not a terminal (or TERM is dumb): printing the text");
        }
        return false;
    }
    if let Some((_, flag)) = text_only.iter().find(|(on, _)| *on) {
        if a.tui {
            log::warn!("--tui: {flag} is a text option: printing the text");
        }
        return false;
    }
    a.tui || crate::config::get().bool("tui.annotate").unwrap_or(true)
}

/// The annotate browser's pages: one per function of annotate's text (each
/// starts at a ` Percent |` header), titled with the function, its DSO,
/// the event and its samples.
fn annotations(text: &str) -> Vec<crate::ui::browser::Annotation> {
    let mut parts: Vec<Vec<&str>> = Vec::new();
    for l in text.lines() {
        if l.starts_with(" Percent |") {
            parts.push(Vec::new());
        }
        if let Some(p) = parts.last_mut() {
            p.push(l);
        }
    }
    parts
        .into_iter()
        .map(|lines| {
            // ` Percent |\tSource code & Disassembly of DSO for EVENT (N samples, ...)`
            let head = lines[0];
            let about = head
                .split_once("Disassembly of ")
                .map(|(_, r)| r.split(", percent").next().unwrap_or(r).to_owned())
                .unwrap_or_default();
            let name = lines
                .iter()
                .find_map(|l| {
                    let l = l.trim_end();
                    let inner = l.strip_suffix(">:")?;
                    Some(inner.rsplit_once('<')?.1.to_owned())
                })
                .unwrap_or_default();
            let mut ann = super::report_browser::annotation(&name, None, &lines.join("\n"));
            if !about.is_empty() {
                ann.title = format!("{}: {}", ann.title, about.trim_end_matches(')'));
                ann.title.push(')');
            }
            ann
        })
        .collect()
}

/// The text `sear annotate ARGS` prints, into `buf` (the report browser's
/// annotate view); warnings are left to the log.
pub fn text(args: &[&std::ffi::OsStr]) -> Result<String> {
    let mut buf = Vec::new();
    annotate(parse_args(args)?, Some(&mut buf))?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `sear annotate ARGS`'s options, parsed as the command line parses them.
pub fn parse_args(args: &[&std::ffi::OsStr]) -> Result<AnnotateArgs> {
    use clap::Parser;
    let cli = crate::cli::Cli::try_parse_from(
        [
            std::ffi::OsStr::new("sear"),
            std::ffi::OsStr::new("annotate"),
        ]
        .into_iter()
        .chain(args.iter().copied()),
    )?;
    let crate::cli::Command::Annotate(mut a) = cli.command else {
        anyhow::bail!("not an annotate command line");
    };
    crate::config::annotate_defaults(&mut a);
    Ok(a)
}

fn annotate(mut a: AnnotateArgs, buf: Option<&mut Vec<u8>>) -> Result<ExitCode> {
    crate::config::annotate_defaults(&mut a);
    super::refuse_vmlinux(a.vmlinux.as_deref())?;
    let syntax = match a.disassembler_style.as_deref() {
        None => Syntax::Att,
        Some(s) => Syntax::parse(s).with_context(|| {
            format!("-M/--disassembler-style {s}: not a syntax sear knows (att or intel)")
        })?,
    };
    let path = super::input_path(&a.input);
    let reader = super::open(&path)?;
    if a.dump_raw_trace {
        return super::dump::run(&path, reader);
    }
    let cpus = a.cpu.clone().map(|c| c.0);
    if cpus.is_some() {
        profile::session::check_cpu_filter(reader.meta())
            .with_context(|| format!("{}", path.display()))?;
    }
    let time = crate::cli::time_ranges(a.time.as_deref(), reader.meta())
        .with_context(|| format!("{}", path.display()))?;
    let names = crate::cli::NameArgs {
        no_demangle: a.no_demangle,
        short_names: false,
        demangle: a.demangle,
        demangle_kernel: a.demangle_kernel,
    }
    .style();
    let profile::session::Summed {
        mut collector,
        machine,
        syms,
        reader,
        ..
    } = profile::session::sum(
        reader,
        &profile::session::SumOptions {
            collect: CollectOptions {
                callchains: false,
                by_cpu: cpus.is_some(),
                ..Default::default()
            },
            names,
            inline: false,
            srclines: false,
            time,
            cpus: None,
            thread_values: false,
            switch: None,
        },
    )
    .with_context(|| format!("reading records of {}", path.display()))?;
    let name = path.display().to_string();
    let code = write_annotations(
        &a,
        &Inputs {
            sums: collector.take_sums_in_order(),
            syms: &syms,
            dsos: machine.dsos(),
            meta: reader.meta(),
            source: &name,
            syntax,
            names,
            cpus,
        },
        buf,
    );
    crate::ui::print_diagnostics(&path, reader.diagnostics());
    code
}

/// What annotations are made from: summed samples (their own locations),
/// their symbols and binaries, and where they come from (for messages).
pub struct Inputs<'a> {
    pub sums: Vec<(profile::collect::SampleKey, profile::collect::SampleSum)>,
    pub syms: &'a profile::symbolize::SymbolTable,
    pub dsos: &'a [profile::machine::Dso],
    pub meta: &'a perf_data::Meta,
    /// The recording's name, or what stands for it (`sear top`'s session).
    pub source: &'a str,
    pub syntax: Syntax,
    pub names: profile::symbolize::NameStyle,
    pub cpus: Option<Vec<u32>>,
}

/// Annotates the functions `a` asks for from `i`'s sums, printed (paged) or
/// into `buf`.
pub fn write_annotations(
    a: &AnnotateArgs,
    i: &Inputs<'_>,
    buf: Option<&mut Vec<u8>>,
) -> Result<ExitCode> {
    let (syms, dsos, meta, names, syntax) = (i.syms, i.dsos, i.meta, i.names, i.syntax);
    let wanted = a.symbol.clone().or_else(|| a.name.clone());
    let mut hot = profile::annotate::hot_functions(
        i.sums.clone(),
        syms,
        dsos,
        meta.events.len(),
        &FunctionFilter {
            symbol: wanted.clone(),
            dsos: a.dsos.clone().map(|n| n.0),
            cpus: i.cpus.clone(),
        },
    );
    if let Some(w) = &wanted {
        if hot.entries.is_empty() {
            let unread = profile::annotate::unread_binaries(syms, dsos);
            let also = if unread.is_empty() {
                String::new()
            } else {
                format!(
                    "; the functions of these recorded binaries are unknown because they cannot be read: {}",
                    unread.join("; ")
                )
            };
            anyhow::bail!(
                "symbol `{w}` has no samples in {}{}: `sear report --no-children --sort dso,sym` lists the functions that do{also}",
                i.source,
                match &a.dsos {
                    Some(d) => format!(" (in the DSOs {})", d.0.join(",")),
                    None => String::new(),
                }
            );
        }
    }
    if let Some(limit) = a.percent_limit {
        hot.retain_above(limit);
    }
    let percent_type = match a.percent_type.as_deref() {
        None => PercentType::LocalPeriod,
        Some(t) => PercentType::parse(t).with_context(|| {
            format!("--percent-type {t}: expected local-period, global-period, local-hits or global-hits")
        })?,
    };
    let shown_totals = std::mem::take(&mut hot.shown_totals);
    let entries = std::mem::take(&mut hot.entries);
    let opts = AnnotateOptions {
        syntax,
        source: !a.no_source,
        raw_bytes: a.asm_raw,
        prefix: a.prefix.clone().map(|p| (p, a.prefix_strip.unwrap_or(0))),
        names,
    };
    let ropts = Options {
        column: if a.show_total_period {
            Column::Period
        } else if a.show_nr_samples {
            Column::Samples
        } else {
            Column::Percent
        },
        print_line: a.print_line,
        percent_type,
        color: crate::ui::stdio_color(a.stdio_color.as_deref()),
    };
    // Events that lead a group of several (perf's title says "events" for them).
    let group_leaders: Vec<usize> = meta
        .features
        .get(perf_data::consts::feature::GROUP_DESC)
        .and_then(|b| perf_data::features::parse_group_desc(b, meta.endian).ok())
        .unwrap_or_default()
        .iter()
        .filter(|d| d.nr_members > 1)
        .map(|d| d.leader_idx as usize)
        .collect();
    let mut annotator = Annotator::new(syms, dsos, opts);
    annotator.forget(std::mem::take(&mut hot.forgotten));
    let mut paged = None;
    let out: &mut dyn std::io::Write = match buf {
        Some(b) => b,
        None => paged.insert(super::paged_stdout()),
    };
    let mut printed = 0usize;
    for e in &entries {
        let Some((ann, dso)) = annotator.function(e.sym) else {
            continue;
        };
        let per_insn = e.hits.per_insn(ann);
        let base = match percent_type {
            PercentType::LocalPeriod => e.hits.period,
            PercentType::LocalHits => e.hits.samples,
            PercentType::GlobalPeriod => shown_totals.get(e.event).map_or(0, |t| t.1),
            PercentType::GlobalHits => shown_totals.get(e.event).map_or(0, |t| t.0),
        };
        if a.print_line {
            let name = &dso.name;
            render::annotate::write_summary(
                out,
                name,
                ann,
                &per_insn,
                base,
                percent_type,
                ropts.color,
            )?;
        }
        let event = meta
            .events
            .get(e.event)
            .map(|ev| ev.name())
            .unwrap_or_default();
        let dso_base = if a.full_paths {
            dso.name.as_str()
        } else {
            dso.name.rsplit('/').next().unwrap_or(&dso.name)
        };
        if a.stdio2 {
            let s = &syms.syms[e.sym as usize];
            let totals = shown_totals.get(e.event).copied().unwrap_or((0, 0));
            let title = render::annotate2::Title {
                event: &event,
                group_leader: group_leaders.contains(&e.event),
                freq: meta
                    .events
                    .get(e.event)
                    .map_or(0, |ev| ev.attr.sample_period_or_freq),
                samples: totals.0,
                period: totals.1,
                long_name: &dso.name,
            };
            let function = render::annotate2::Function {
                start: s.start,
                size: s.size,
                name: &s.name,
            };
            let opts2 = render::annotate2::Options {
                column: ropts.column,
                percent_type,
            };
            render::annotate2::write_function(
                out, ann, &per_insn, base, &function, &title, &opts2,
            )?;
            printed += 1;
            continue;
        }
        let header = FunctionHeader {
            dso: dso_base,
            event: &event,
            samples: e.hits.samples,
        };
        render::annotate::write_function(out, ann, &per_insn, base, &header, &ropts)?;
        printed += 1;
    }
    out.flush().context("writing output")?;
    // (The pager ends before the warnings.)
    drop(paged);
    let only_kernel = annotator.only_kernel_failed();
    let mut func_failures = annotator.failures();
    if a.skip_missing {
        func_failures.clear();
    }
    // With nothing printed, the last failure is the error and the others are warnings
    // (unless all of them are kernel code, which is not annotated yet: warnings only).
    let last_error = if printed == 0 && !only_kernel {
        func_failures.pop()
    } else {
        None
    };
    for m in &func_failures {
        log::warn!("{m}");
    }
    if let Some(m) = last_error {
        anyhow::bail!("{m}");
    }
    if printed == 0 && entries.is_empty() {
        log::warn!("{}: no samples to annotate", i.source);
    }
    Ok(ExitCode::SUCCESS)
}
