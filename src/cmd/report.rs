//! `sear report`: perf's report modes.

use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::stats::Stats;

use crate::cli::ReportArgs;

pub fn run(a: ReportArgs, quiet: bool) -> Result<ExitCode> {
    let path = super::input_path(&a.input);
    let mut reader = super::open(&path)?;
    if a.stats {
        let stats = Stats::collect(&mut reader, |_| {})
            .with_context(|| format!("reading records of {}", path.display()))?;
        let names = render::stats::event_names(reader.meta());
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
                match reader.next_feature() {
                    Ok(Some((id, bytes))) => {
                        printer.pipe_feature(&mut out, reader.meta(), id, &bytes)?;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        // Like perf: keep what was printed, warn, succeed.
                        log::warn!("{}: stopped reading: {e:#}", path.display());
                        break;
                    }
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
    hotspots(&a, &path, reader, quiet)
}

/// The hotspot table: pass one replays the records and sums samples by
/// (thread, comm, stack); pass two symbolizes each unique address once; then
/// the rows are built, sorted and printed.
fn hotspots(
    a: &ReportArgs,
    path: &std::path::Path,
    reader: perf_data::RecordReader,
    quiet: bool,
) -> Result<ExitCode> {
    use profile::fields::{Layout, LayoutOptions};
    use profile::hist::{Filters, HistOptions, Names, SortKey};
    use profile::resolve::CollectOptions;

    let parent_regex = super::parent_regex(a.parent.as_deref())?;
    use profile::callchain::{CallGraphParams, ChainOrder};
    let params = match a.call_graph.as_deref() {
        None => CallGraphParams::default(),
        Some(g) => {
            CallGraphParams::parse(g).map_err(|e| anyhow::anyhow!("-g/--call-graph {g}: {e}"))?
        }
    };
    let graphs_hidden = !params.enabled();
    // What the events record is known only after all records in pipe
    // mode (their attrs come as records): the columns are checked now and
    // decided then.
    let layout_options = |children| LayoutOptions {
        fields: a.fields.as_deref(),
        sort: a.sort.as_deref(),
        children,
        show_nr_samples: a.show_nr_samples,
        show_total_period: a.show_total_period,
        show_cpu_utilization: a.show_cpu_utilization,
        parent: a.parent.is_some(),
    };
    // The sort keys do not depend on children: pass one learns from them
    // what to keep.
    let early_keys = Layout::new(&layout_options(!a.no_children))?.keys();
    let want_parent = early_keys.contains(&SortKey::Parent);
    let relative = a.percentage.as_deref() == Some("relative");
    let meta = reader.meta();
    let check_branch_mode = |meta: &perf_data::Meta| -> Result<()> {
        let branch = meta
            .events
            .iter()
            .any(|e| e.attr.sample_type & perf_data::PERF_SAMPLE_BRANCH_STACK != 0);
        if branch && !a.no_branch_stack {
            anyhow::bail!(
                "branch-stack mode of `sear report` is not implemented yet; add --no-branch-stack"
            );
        }
        Ok(())
    };
    // (Again after the records, for pipes.)
    check_branch_mode(meta)?;
    let names_style = a.names.style();
    let t0 = std::time::Instant::now();
    let super::replay::Replayed {
        mut collector,
        machine,
        syms,
        stats,
        reader,
        unknown_read_ids,
        ..
    } = super::replay::replay(
        path,
        reader,
        &super::replay::ReplayOptions {
            collect: CollectOptions {
                max_stack: a.max_stack,
                callchains: !a.no_children || !graphs_hidden || want_parent,
                adjust_returns: !a.raw_return_addresses,
                by_cpu: early_keys.contains(&SortKey::Cpu),
            },
            names: names_style,
            inline: !a.no_inline,
            srclines: early_keys.iter().any(|k| k.needs_srclines()),
        },
    )?;
    let meta = reader.meta();
    let has_callchains = meta
        .events
        .iter()
        .any(|e| e.attr.sample_type & perf_data::PERF_SAMPLE_CALLCHAIN != 0);
    // perf decides on children before it sees the attrs of a pipe: never
    // children there, but the graph order children would have had.
    let pipe = meta.is_pipe();
    let children = has_callchains && !a.no_children && !pipe;
    let layout = Layout::new(&layout_options(children))?;
    let keys: Vec<SortKey> = layout.keys();
    if want_parent && !has_callchains {
        anyhow::bail!(
            "selected --sort parent, but the recording has no callchains (record with -g)"
        );
    }
    let order = params.resolved_order(if pipe { !a.no_children } else { children });
    check_branch_mode(meta)?;
    let dso_names: Vec<String> = machine
        .dsos()
        .iter()
        .map(|d| profile::hist::dso_short_name(&d.name))
        .collect();
    use super::{id_list as ids, name_list as list};
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
        parent: want_parent.then_some(parent_regex),
        cpumode: layout.needs_cpumode(),
    };
    log::debug!(
        "pass one: {} distinct samples, {} locations, {} stack nodes, {} symbols",
        collector.distinct_samples(),
        collector.interner.locs().len(),
        collector.interner.stack_nodes(),
        syms.syms.len()
    );
    log::debug!("passes one and two: {:?}", t0.elapsed());
    let t0 = std::time::Instant::now();
    let sums = collector.take_sums_in_order();
    let mut report = profile::hist::build(
        &collector, sums, &syms, &machine, &dso_names, &hopts, &filters,
    );
    log::debug!("rows built: {:?}", t0.elapsed());
    crate::ui::log_memory("after building rows");
    let t0 = std::time::Instant::now();
    // (Taken out of the report, which is changed while names are in use.)
    let strings = std::mem::take(&mut report.strings);
    let names = Names {
        comms: collector.comms(),
        dso_names,
        syms: &syms.syms,
        machine: &machine,
        strings: &strings,
    };
    let meta = reader.meta();
    // (After all records: in pipe mode, GROUP_DESC comes as one.)
    let groups = profile::groups::EventGroups::new(meta, a.group, a.no_group);
    let nr_events = meta.events.len();
    report
        .hists
        .resize_with(nr_events.max(report.hists.len()), Default::default);
    // One section per event, or per group in group view.
    let section_events = groups.sections(&mut report);
    for h in &mut report.hists {
        h.sort_by_columns(&names, &layout.sort, children, hopts.caller_order);
    }
    log::debug!("rows sorted: {:?}", t0.elapsed());
    let t0 = std::time::Instant::now();
    let section_names: Vec<String> = section_events
        .iter()
        .map(|&ev| groups.section_name(meta, ev))
        .collect();
    let sections =
        render::report::sections(&report.hists, &groups, &section_events, &section_names);
    let mut out = super::paged_stdout();
    let topts = render::report::TableOptions {
        keys: keys.clone(),
        layout: layout.clone(),
        children,
        percent_limit: a.percent_limit,
        exclude_other: a.exclude_other,
        relative,
        single_filters: [
            (SortKey::Comm, &filters.comms),
            (SortKey::Dso, &filters.dsos),
            (SortKey::Sym, &filters.symbols),
        ]
        .into_iter()
        .filter_map(|(k, list)| match list.as_deref() {
            Some([one]) => Some((k, one.clone())),
            _ => None,
        })
        .collect(),
        quiet,
    };
    // perf omits the entry's own frame (it shows as the row) only when
    // the --sort text starts with "sym" and no -F is given.
    let hide_first_frame =
        a.fields.is_none() && a.sort.as_deref().is_some_and(|s| s.starts_with("sym"));
    let show_graphs = has_callchains && !graphs_hidden;
    let graph_opts = render::callgraph::EntryGraphOptions {
        params: &params,
        children,
        hide_first_frame,
        percent_limit: topts.percent_limit,
        relative,
    };
    // Call graphs are built and formatted per entry on all cores, then
    // printed in order.
    let graphs = if show_graphs {
        render::callgraph::entry_graphs(&report, &section_events, &syms.syms, &names, &graph_opts)
    } else {
        Vec::new()
    };
    log::debug!("call graphs: {:?}", t0.elapsed());
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
    if unknown_read_ids > 0 {
        log::warn!(
            "{}: {unknown_read_ids} counter values read with samples name no known event; \
             they are left out",
            path.display()
        );
    }
    if collector.unwind_failures > 0 {
        log::info!(
            "{} samples could not be unwound past their first frame",
            collector.unwind_failures
        );
    }
    super::discard(graphs);
    super::discard(sections);
    super::discard((report, syms, machine, collector, reader));
    Ok(ExitCode::SUCCESS)
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
