//! `sear report`: perf's report modes.

use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::stats::Stats;

use crate::cli::ReportArgs;

pub fn run(a: ReportArgs) -> Result<ExitCode> {
    let path = super::input_path(&a.input);
    let mut reader = super::open(&path)?;
    if a.stats {
        let stats = Stats::collect(&mut reader, |_| {})
            .with_context(|| format!("reading records of {}", path.display()))?;
        let names = stats_names(reader.meta());
        let mut out = super::stdout();
        render::stats::write_stats(&mut out, &stats, &names)?;
        super::finish(out)?;
        crate::ui::print_diagnostics(&path, reader.diagnostics());
        return Ok(ExitCode::SUCCESS);
    }
    if a.header_only {
        let info = render::header::FileInfo {
            mtime: file_mtime(&path),
            show_info: a.show_info,
            utc_offset: local_utc_offset,
        };
        let mut out = super::paged_stdout();
        render::header::write_header(&mut out, reader.meta(), &info)?;
        if reader.meta().is_pipe() {
            // perf prints pipe-mode features as their records arrive, after
            // the header block, reading the whole stream.
            let mut printer = render::header::FeaturePrinter::new(&info);
            loop {
                let feat = match reader.next_raw() {
                    Ok(Some(raw)) if raw.type_ == perf_data::PERF_RECORD_HEADER_FEATURE => {
                        let p = raw.payload;
                        let id: Option<[u8; 8]> = p.get(..8).and_then(|b| b.try_into().ok());
                        id.map(|id| (id, p[8..].to_vec()))
                    }
                    Ok(Some(_)) => None,
                    Ok(None) => break,
                    Err(e) => {
                        // Like perf: keep what was printed, warn, succeed.
                        log::warn!("{}: stopped reading: {e:#}", path.display());
                        break;
                    }
                };
                if let Some((id, bytes)) = feat {
                    let id = match reader.meta().endian {
                        perf_data::Endian::Little => u64::from_le_bytes(id),
                        perf_data::Endian::Big => u64::from_be_bytes(id),
                    };
                    printer.pipe_feature(&mut out, reader.meta(), id, &bytes)?;
                }
            }
        }
        super::finish(out)?;
        crate::ui::print_diagnostics(&path, reader.diagnostics());
        return Ok(ExitCode::SUCCESS);
    }
    if a.dump_raw_trace {
        return dump(&path, reader);
    }
    hotspots(&a, &path, reader)
}

/// The hotspot table: pass one replays the records and sums samples by
/// (thread, comm, stack); pass two symbolizes each unique address once; then
/// the rows are built, sorted and printed.
fn hotspots(
    a: &ReportArgs,
    path: &std::path::Path,
    reader: perf_data::RecordReader,
) -> Result<ExitCode> {
    use profile::hist::{Filters, HistOptions, Names, SortKey};
    use profile::resolve::{CollectOptions, Collector};
    use profile::symbolize::{NameStyle, SymbolizeOptions};

    let sort = a.sort.as_deref().unwrap_or("comm,dso,sym");
    let keys: Vec<SortKey> = sort
        .split(',')
        .map(|k| {
            SortKey::parse(k.trim()).ok_or_else(|| {
                anyhow::anyhow!(
                    "--sort {k}: unknown or not yet supported sort key; \
                     sear knows comm, pid, dso and sym"
                )
            })
        })
        .collect::<Result<_>>()?;
    let meta = reader.meta();
    let has_callchains = meta
        .events
        .iter()
        .any(|e| e.attr.sample_type & perf_data::PERF_SAMPLE_CALLCHAIN != 0);
    use profile::callchain::{CallGraphParams, ChainOrder};
    let params = match a.call_graph.as_deref() {
        None => CallGraphParams::default(),
        Some(g) => {
            CallGraphParams::parse(g).map_err(|e| anyhow::anyhow!("-g/--call-graph {g}: {e}"))?
        }
    };
    let graphs_hidden = !params.enabled();
    let children = has_callchains && !a.no_children;
    let order = params.resolved_order(children);
    let branch = meta
        .events
        .iter()
        .any(|e| e.attr.sample_type & perf_data::PERF_SAMPLE_BRANCH_STACK != 0);
    if branch && !a.no_branch_stack {
        anyhow::bail!(
            "branch-stack mode of `sear report` is not implemented yet; add --no-branch-stack"
        );
    }
    if meta.events.len() > 1 && meta.features.has(perf_data::consts::feature::GROUP_DESC) {
        anyhow::bail!(
            "event groups in `sear report` are not implemented yet; try `--stats` or `-D`"
        );
    }
    let mut machine = profile::machine::Machine::new();
    let build_ids = meta.features.build_ids().unwrap_or_default();
    for e in &build_ids {
        machine.set_build_id(&e.filename, &e.build_id);
    }
    // Reading /proc/kallsyms takes a tenth of a second: do it on another
    // core during pass one when the file names its kernel up front.
    let kernel_id = build_ids
        .iter()
        .find(|e| e.filename == "[kernel.kallsyms]")
        .map(|e| e.build_id.clone());
    let wants_kernel = meta
        .events
        .iter()
        .any(|e| !e.attr.flag(perf_data::attr::flag::EXCLUDE_KERNEL));
    let kernel_prefetch = (kernel_id.is_some() && wants_kernel).then(|| {
        let id = kernel_id.clone();
        std::thread::spawn(move || {
            symbols::KernelFinder::default().load_for_recording(id.as_deref())
        })
    });
    let mut collector = Collector::new(CollectOptions {
        max_stack: a.max_stack,
        callchains: has_callchains && (children || !graphs_hidden),
        adjust_returns: !a.raw_return_addresses,
    });
    let mut reader = perf_data::Reader::new(reader, perf_data::Order::Time);
    let mut stats = Stats::default();
    while let Some(rec) = reader
        .next_record()
        .with_context(|| format!("reading records of {}", path.display()))?
    {
        stats.add(&rec);
        if rec.type_() == perf_data::PERF_RECORD_SAMPLE {
            let Ok(s) = rec.sample() else {
                continue; // counted by stats as undecodable
            };
            // Without PERIOD in the sample, perf counts the attr's period.
            let attr = &rec.meta.events[s.event].attr;
            let period = s.period.unwrap_or(attr.sample_period_or_freq);
            collector.add(&mut machine, &s, period);
        } else if rec.type_() < perf_data::PERF_RECORD_HEADER_ATTR {
            if let Ok((data, _)) = rec.decode() {
                machine.apply(rec.raw.misc, &data);
            }
        }
    }
    let names_style = if a.no_demangle {
        NameStyle::Raw
    } else if a.short_names {
        NameStyle::Short
    } else {
        NameStyle::Full
    };
    // The prefetched kernel symbols serve only if pass one kept the kernel's
    // build id the features named.
    let preloaded = kernel_prefetch.and_then(|h| h.join().ok()).filter(|_| {
        machine
            .dsos()
            .iter()
            .find(|d| d.name == "[kernel.kallsyms]")
            .is_none_or(|d| d.build_id == kernel_id)
    });
    let syms = profile::symbolize::symbolize_with_kernel(
        collector.interner.locs(),
        machine.dsos(),
        machine.kernel_reloc(),
        &SymbolizeOptions {
            names: names_style,
            inline: !a.no_inline,
            finder: symbols::DebugFinder::default(),
        },
        preloaded,
    );
    for (dso, reason) in &syms.misses {
        log::warn!("{dso}: no symbols ({reason})");
    }
    let dso_names: Vec<String> = machine
        .dsos()
        .iter()
        .map(|d| profile::hist::dso_short_name(&d.name))
        .collect();
    let list = |v: &Option<String>| {
        v.as_ref().map(|s| {
            s.split(',')
                .map(|x| x.trim().to_owned())
                .collect::<Vec<_>>()
        })
    };
    let ids = |v: &Option<String>| -> Result<Option<Vec<i32>>> {
        v.as_ref()
            .map(|s| {
                s.split(',')
                    .map(|x| {
                        x.trim()
                            .parse::<i32>()
                            .with_context(|| format!("`{x}` is not a process or thread id"))
                    })
                    .collect()
            })
            .transpose()
    };
    let filters = Filters {
        comms: list(&a.comms),
        dsos: list(&a.dsos),
        pids: ids(&a.pid)?,
        tids: ids(&a.tid)?,
        symbols: list(&a.symbols),
    };
    let hopts = HistOptions {
        keys: keys.clone(),
        children,
        callchains: has_callchains && !graphs_hidden,
        caller_order: order == ChainOrder::Caller,
    };
    log::debug!(
        "pass one: {} distinct samples, {} locations, {} stack nodes, {} symbols",
        collector.distinct_samples(),
        collector.interner.locs().len(),
        collector.interner.stack_nodes(),
        syms.syms.len()
    );
    let sums = collector.take_sums_in_order();
    let mut report = profile::hist::build(
        &collector, sums, &syms, &machine, &dso_names, &hopts, &filters,
    );
    let names = Names {
        comms: collector.comms(),
        dso_names,
        syms: &syms.syms,
        machine: &machine,
    };
    let meta = reader.meta();
    let event_names: Vec<String> = meta.events.iter().map(|e| e.name()).collect();
    report
        .hists
        .resize_with(event_names.len().max(report.hists.len()), Default::default);
    for h in &mut report.hists {
        h.sort(&names, children, hopts.caller_order);
    }
    let sections: Vec<render::report::Section<'_>> = report
        .hists
        .iter()
        .zip(&event_names)
        .map(|(h, n)| render::report::Section {
            event_name: n,
            hists: h,
        })
        .collect();
    let mut out = super::paged_stdout();
    let topts = render::report::TableOptions {
        keys: keys.clone(),
        children,
        percent_limit: a.percent_limit,
    };
    let hide_first_frame = keys.first() == Some(&SortKey::Sym);
    let show_graphs = has_callchains && !graphs_hidden;
    // Call graphs are built and formatted per entry on all cores, then
    // printed in order.
    let graphs: Vec<Vec<Vec<u8>>> = if show_graphs {
        report
            .hists
            .iter()
            .map(|h| {
                use rayon::prelude::*;
                h.entries
                    .par_iter()
                    .map(|e| {
                        let mut buf = Vec::new();
                        let _ = entry_graph(
                            &mut buf,
                            e,
                            h,
                            &report,
                            &syms.syms,
                            &names,
                            &params,
                            children,
                            hide_first_frame,
                            topts.percent_limit,
                        );
                        buf
                    })
                    .collect()
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut graph_writer =
        |out: &mut dyn std::io::Write, section: usize, row: usize| -> std::io::Result<()> {
            match graphs.get(section).and_then(|g| g.get(row)) {
                Some(b) => out.write_all(b),
                None => Ok(()),
            }
        };
    render::report::write_report(
        &mut out,
        &topts,
        stats.total_lost_samples,
        &sections,
        &names,
        &mut graph_writer,
    )?;
    super::finish(out)?;
    crate::ui::print_diagnostics(path, reader.diagnostics());
    if collector.unwind_failures > 0 {
        log::info!(
            "{} samples could not be unwound past their first frame",
            collector.unwind_failures
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Formats one entry's call graph (nothing for entries the table hides or
/// whose graph the threshold would empty).
#[allow(clippy::too_many_arguments)]
fn entry_graph(
    out: &mut dyn std::io::Write,
    e: &profile::hist::HistEntry,
    hists: &profile::hist::Hists,
    report: &profile::hist::Report,
    syms: &[profile::symbolize::SymInfo],
    names: &profile::hist::Names<'_>,
    params: &profile::callchain::CallGraphParams,
    children: bool,
    hide_first_frame: bool,
    percent_limit: f64,
) -> std::io::Result<()> {
    use profile::callchain::PrintType;
    let entry_period = if children { e.period_acc } else { e.period };
    let total = hists.total_period;
    if total > 0 && 100.0 * entry_period as f64 / (total as f64) < percent_limit {
        return Ok(());
    }
    // No node of the tree can weigh more than all its chains together:
    // the entry's accumulated period (its self period without children).
    let chains_period = e.period_acc;
    if params.print_type != PrintType::Fractal
        && chains_period < params.min_hit(hists.callchain_period)
    {
        return Ok(());
    }
    let tree = report.entry_call_tree(e);
    let order = |x: u32, y: u32| frame_order(report, syms, x, y);
    let sorted = tree.sort(params, hists.callchain_period, &order);
    let graph = render::callgraph::EntryGraph {
        tree: &tree,
        sorted: &sorted,
        entry_period,
        total_period: total,
    };
    let style = render::callgraph::Style {
        hide_first_frame,
        ..Default::default()
    };
    let name_of = |f: u32| {
        let (sref, _) = report.frames[f as usize];
        match sref {
            // Call graphs print unresolved addresses plainly (C's `%#llx`:
            // plain `0` for zero).
            profile::hist::SymRef::Addr { ip: 0, .. } => "0".to_owned(),
            profile::hist::SymRef::Addr { ip, .. } => format!("{ip:#x}"),
            s => names.sym_name(&s),
        }
    };
    render::callgraph::write_callgraph(out, &graph, params, &style, &name_of)
}

/// perf's order among sibling frames of equal weight (its `match_chain`):
/// by DSO, then symbol start (inlined frames by name), else by address.
fn frame_order(
    report: &profile::hist::Report,
    syms: &[profile::symbolize::SymInfo],
    x: u32,
    y: u32,
) -> std::cmp::Ordering {
    use profile::hist::SymRef;
    let key = |f: u32| match report.frames[f as usize].0 {
        SymRef::Sym(i) => {
            let s = &syms[i as usize];
            (s.dso, s.start, if s.inlined { s.name.as_str() } else { "" })
        }
        SymRef::Addr { ip, dso } => (dso, ip, ""),
    };
    key(x).cmp(&key(y))
}

/// Event names for the per-event stats blocks.
fn stats_names(meta: &perf_data::Meta) -> Vec<String> {
    // perf names events in pipe mode from their attrs here: its name cache
    // is filled before the EVENT_DESC feature record arrives.
    meta.events
        .iter()
        .map(|e| {
            if meta.is_pipe() {
                e.attr.default_name()
            } else {
                e.name()
            }
        })
        .collect()
}

/// `-D`: every record raw and decoded, in the order perf delivers them,
/// then the record counts.
fn dump(path: &std::path::Path, reader: perf_data::RecordReader) -> Result<ExitCode> {
    let mut reader = perf_data::Reader::new(reader, perf_data::Order::Time);
    let mut out = super::paged_stdout();
    let mut dumper = render::dump::Dumper::new(&path.display().to_string(), reader.meta());
    let mut stats = Stats::default();
    let meta = reader.meta();
    let user_stacks = meta
        .events
        .iter()
        .any(|e| e.attr.sample_type & perf_data::PERF_SAMPLE_STACK_USER != 0);
    dumper.set_branch_mode(
        meta.features.has(perf_data::consts::feature::BRANCH_STACK) && !user_stacks,
    );
    dumper.preamble(&mut out, reader.order() == perf_data::Order::File)?;
    while let Some(rec) = reader
        .next_record()
        .with_context(|| format!("reading records of {}", path.display()))?
    {
        stats.add(&rec);
        dumper.record(&mut out, &rec)?;
    }
    let diag = reader.diagnostics().clone();
    // Records that cannot be framed end the data early; perf stops there
    // with an error and prints no totals, and so do we.
    let broken = diag.warnings.get("corrupt record").cloned();
    if broken.is_none() {
        let meta = reader.meta();
        stats.cover(meta);
        // perf -D closes with its report's histogram counts per event,
        // under the names the whole stream gave the events.
        for (i, e) in stats.per_event.iter_mut().enumerate() {
            e.samples = dumper.hist_entries().get(i).copied().unwrap_or(0);
            e.lost_samples_records = 0;
        }
        let names: Vec<String> = meta.events.iter().map(|e| e.name()).collect();
        render::stats::write_stats(&mut out, &stats, &names)?;
    }
    super::finish(out)?;
    crate::ui::print_diagnostics(path, &diag);
    if let (n @ 1.., Some(at)) = dumper.undecodable() {
        log::warn!(
            "{}: {n} records could not be decoded (first at byte offset {at}); \
             they are dumped raw only",
            path.display()
        );
    }
    if let Some(w) = broken {
        anyhow::bail!(
            "{}: the data is corrupt at byte offset {}: {}; the dump stops there",
            path.display(),
            w.first_offset,
            w.message
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn file_mtime(path: &std::path::Path) -> Option<i64> {
    use std::os::unix::fs::MetadataExt;
    // perf stats the descriptor it reads: for stdin that is the pipe itself.
    let path = if path == std::path::Path::new("-") {
        std::path::Path::new("/dev/stdin")
    } else {
        path
    };
    std::fs::metadata(path).ok().map(|m| m.mtime())
}

/// Seconds east of UTC of the local time zone at instant `t`, by the
/// system's rules (TZ, /etc/localtime); perf prints local time.
pub(super) fn local_utc_offset(t: i64) -> i64 {
    let Ok(ts) = jiff::Timestamp::from_second(t) else {
        return 0;
    };
    i64::from(jiff::tz::TimeZone::system().to_offset(ts).seconds())
}
