//! `sear report`: perf's report modes.

use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::stats::Stats;

use crate::cli::ReportArgs;

pub fn run(mut a: ReportArgs, quiet: bool, verbose: bool) -> Result<ExitCode> {
    if a.branch_history {
        // perf's --branch-history: the samples' rows, each chain led by
        // the sample's branches, frames told apart by address, and its
        // own default sort.
        if a.sort.is_none() {
            a.sort = Some("srcline,symbol,dso".to_owned());
        }
    }
    // perf takes a word left after the options as the symbol filter.
    if let Some(s) = a.symbol_filter_arg.take() {
        a.symbol_filter = Some(s);
    }
    profile::symbolize::set_full_source_path(a.full_source_path);
    crate::config::report_defaults(&mut a);
    // perf turns accumulation off for its hierarchy view, after the
    // default call-graph order (caller with children) was decided.
    let mut hierarchy_caller = false;
    if a.hierarchy {
        hierarchy_caller = !a.no_children;
        a.no_children = true;
        a.children = false;
    }
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
        let info = crate::ui::header_info(path.as_ref(), a.show_info);
        let mut out = super::paged_stdout();
        render::header::write_header(&mut out, reader.meta(), &info)?;
        if reader.meta().is_pipe() {
            // perf prints pipe-mode features as their records arrive, after
            // the header block, reading the whole stream.
            let mut printer = render::header::FeaturePrinter::new(&info);
            let ended =
                reader.each_feature(|meta, id, b| printer.pipe_feature(&mut out, meta, id, b))?;
            if let Some(e) = ended {
                // Like perf: keep what was printed, warn, succeed.
                log::warn!("{}: stopped reading: {e:#}", path.display());
            }
        }
        super::finish(out)?;
        crate::ui::print_diagnostics(&path, reader.diagnostics());
        return Ok(ExitCode::SUCCESS);
    }
    if a.dump_raw_trace {
        return super::dump::run(&path, reader);
    }
    super::refuse_vmlinux(a.vmlinux.as_deref())?;
    // Modes whose data the recording lacks: perf's message and an empty
    // report, as perf.
    let sample_types = || reader.meta().events.iter().map(|e| e.attr.sample_type);
    let empty = if (a.branch_stack || a.branch_history)
        && !sample_types().any(|t| t & perf_data::PERF_SAMPLE_BRANCH_STACK != 0)
    {
        Some("Selected -b but no branch data. Did you call perf record without -b?")
    } else if a.mem_mode
        // (A pipe's attributes come as records, after this check.)
        && !reader.meta().is_pipe()
        && !sample_types().any(|t| t & perf_data::PERF_SAMPLE_DATA_SRC != 0)
    {
        Some("Selected --mem-mode but no mem data. Did you call perf record without -d?")
    } else if a
        .call_graph
        .as_deref()
        .is_some_and(|g| g.split(',').next() != Some("none"))
        && !reader.meta().is_pipe()
        && !a.branch_history
        && !sample_types().any(|t| t & perf_data::PERF_SAMPLE_CALLCHAIN != 0)
    {
        Some("Selected -g or --branch-history.\nBut no callchain or branch data.\nDid you call 'perf record' without -g or -b?")
    } else {
        None
    };
    if let Some(msg) = empty {
        return empty_report(msg, quiet);
    }
    if a.stitch_lbr {
        eprintln!("Warning:\nCan't find LBR callchain. Switch off --stitch-lbr.\nPlease apply --call-graph lbr when recording.");
    }
    if a.tasks || a.mmaps {
        let replay = profile::session::threads_only(reader)
            .with_context(|| format!("reading records of {}", path.display()))?;
        let tasks = replay.machine.tasks().map_err(|ppid| {
            anyhow::anyhow!(
                "{}: cannot list the tasks: thread {ppid}, the parent of a recorded thread, is not in the recording",
                path.display()
            )
        })?;
        let mut out = super::paged_stdout();
        render::tasks::write_tasks(&mut out, &tasks, a.mmaps)?;
        super::finish(out)?;
        crate::ui::print_diagnostics(&path, replay.reader.diagnostics());
        return Ok(ExitCode::SUCCESS);
    }
    hotspots(&a, &path, reader, quiet, hierarchy_caller, verbose)
}

/// perf's error `msg` and its empty report (the header hint alone, none
/// with -q).
fn empty_report(msg: &str, quiet: bool) -> Result<ExitCode> {
    eprintln!("Error:\n{msg}");
    let mut out = super::stdout();
    if !quiet {
        use std::io::Write;
        writeln!(
            out,
            "# To display the perf.data header info, please use --header/--header-only options.\n#"
        )?;
    }
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}

/// The hotspot table: pass one replays the records and sums samples by
/// (thread, comm, stack); pass two symbolizes each unique address once; then
/// the rows are built, sorted and printed.
fn hotspots(
    a: &ReportArgs,
    path: &std::path::Path,
    reader: perf_data::RecordReader,
    quiet: bool,
    hierarchy_caller: bool,
    verbose: bool,
) -> Result<ExitCode> {
    let browse = browser_wanted(a, quiet);
    use profile::hist::Filters;
    let mut graph = crate::config::call_graph_params();
    // As perf, --percent-limit is also the call graphs' threshold (and -g
    // may set its own).
    if let Some(limit) = a.percent_limit {
        graph.threshold = limit;
    }
    if let Some(g) = a.call_graph.as_deref() {
        graph = graph
            .parse_onto(g)
            .map_err(|e| anyhow::anyhow!("-g/--call-graph {g}: {e}"))?;
        // perf applies its options in command-line order: a
        // --percent-limit after -g sets the threshold again.
        let last = |names: &[&str]| {
            std::env::args().rposition(|t| {
                names
                    .iter()
                    .any(|n| t == *n || t.starts_with(&format!("{n}=")))
            })
        };
        if let (Some(limit), Some(p), Some(g)) = (
            a.percent_limit,
            last(&["--percent-limit"]),
            last(&["-g", "--call-graph"]),
        ) {
            if p > g {
                graph.threshold = limit;
            }
        }
    }
    if hierarchy_caller && graph.order.is_none() {
        graph.order = Some(profile::callchain::ChainOrder::Caller);
    }
    if a.inverted {
        graph.order = Some(profile::callchain::ChainOrder::Caller);
    }
    if a.branch_history {
        graph.key = profile::callchain::ChainKey::Address;
    }
    let branch = profile::report::branch_mode(
        reader.meta(),
        if a.branch_stack {
            Some(true)
        } else if a.no_branch_stack || a.branch_history {
            Some(false)
        } else {
            None
        },
    );
    if branch && a.mem_mode {
        anyhow::bail!(
            "branch and mem mode incompatible: {} samples branch stacks, which report shows \
             as branches; add --no-branch-stack to see its data accesses",
            path.display()
        );
    }
    let request = profile::report::Request {
        layout: profile::fields::LayoutOptions {
            fields: a.fields.as_deref(),
            sort: a.sort.as_deref(),
            children: !a.no_children,
            show_nr_samples: a.show_nr_samples,
            show_total_period: a.show_total_period,
            show_cpu_utilization: a.show_cpu_utilization,
            parent: a.parent.is_some(),
            // (A negative N is no member: the leader's values alone, as perf.)
            group_sort_idx: a
                .group_sort_idx
                .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            branch,
            mem: a.mem_mode,
        },
        parent: a.parent.as_deref(),
        ignore_callees: a.ignore_callees.as_deref(),
        graph,
        max_stack: a.stack.max_stack,
        adjust_returns: !a.stack.raw_return_addresses,
        time_quantum: a.time_quantum.unwrap_or(100_000_000),
        nanosecs: a.ns,
        verbose,
        branch_history: a.branch_history,
    };
    // What the events record is known only after all records in pipe
    // mode (their attrs come as records): the columns are checked now and
    // decided then.
    let early = request.early()?;
    let cpus = a.only.cpus();
    if cpus.is_some() {
        profile::session::check_cpu_filter(reader.meta())
            .with_context(|| format!("{}", path.display()))?;
    }
    let time = a
        .only
        .time_ranges(reader.meta())
        .with_context(|| format!("{}", path.display()))?;
    let switch = a.switch.evswitch(reader.meta())?;
    let mut collect = request.collect_options(&early);
    collect.max_stack_from_root =
        request.chains(reader.meta()).2 == profile::callchain::ChainOrder::Caller;
    // (-C and --socket-filter need each sample's CPU.)
    collect.by_cpu |= cpus.is_some() || a.socket_filter.is_some();
    let mut summed = profile::session::sum(
        reader,
        &profile::session::SumOptions {
            collect,
            names: a.names.style(),
            // (perf adds no inline frames for branches.)
            inline: !a.no_inline && !a.branch_history,
            // (-g ...,address and ...,srcline name each frame's source
            // line.)
            srclines: early.keys.iter().any(|k| k.needs_srclines())
                || request.graph.key != profile::callchain::ChainKey::Function,
            time,
            cpus: None,
            thread_values: a.threads,
            switch,
        },
    )
    .with_context(|| format!("reading records of {}", path.display()))?;
    crate::ui::log_memory("after symbolizing");
    let mut plan = request.plan(early, summed.reader.meta())?;
    if plan.keys.contains(&profile::hist::SortKey::Trace) {
        plan.hist.trace_texts = trace_texts(path, &summed, a.raw_trace);
    }
    let filters = Filters {
        comms: a.only.comms(),
        dsos: a.dsos.clone().map(|d| d.0),
        pids: a.only.pids(),
        tids: a.only.tids(),
        symbols: a.only.symbols(),
        symbol_filter: a.symbol_filter.clone(),
        cpus: cpus.clone(),
        hide_unresolved: a.hide_unresolved,
        socket: a
            .socket_filter
            .map(|n| (n, profile::report::socket_ids(summed.reader.meta()))),
    };
    // perf refuses to sort by a group member where there are no groups.
    if a.group_sort_idx.is_some_and(|n| n != 0)
        && !profile::groups::EventGroups::new(summed.reader.meta(), a.group, a.no_group).any()
    {
        anyhow::bail!(
            "--group-sort-idx sorts by one event of a group, and {} has no event groups: \
             record groups with `-e '{{a,b}}'`, or show its events as one group with --group",
            path.display()
        );
    }
    let relative = a.percentage.as_deref() == Some("relative");
    let topts = render::report::TableOptions {
        keys: plan.keys.clone(),
        layout: plan.layout.clone(),
        children: plan.children,
        percent_limit: a
            .percent_limit
            .or_else(|| crate::config::get().number("report.percent-limit"))
            .unwrap_or(0.0),
        exclude_other: a.exclude_other,
        relative,
        single_filters: filters.single_values(),
        quiet,
        time_slices: a.only.time.clone(),
        socket_filter: a.socket_filter,
        after_header: a.header && !quiet,
        field_sep: a.field_separator.clone(),
        user_widths: a.column_widths.clone().map(|w| w.0).unwrap_or_default(),
        dso_list: a.dsos.is_some(),
        hierarchy: a.hierarchy,
        color: crate::ui::stdio_color(a.stdio_color.as_deref()),
        // perf names the sort order as given (with its IPC column added
        // to one naming `symbol`), else its default.
        mem_sort_order: a.mem_mode.then(|| match a.sort.as_deref() {
            Some(s) => {
                let s = if s.contains("symbol") {
                    format!("{s},ipc_null")
                } else {
                    s.to_owned()
                };
                match s.strip_prefix('+') {
                    Some(rest) => format!("{},{rest}", profile::fields::DEFAULT_MEM_SORT),
                    None => s,
                }
            }
            None => profile::fields::DEFAULT_MEM_SORT.to_owned(),
        }),
    };
    if browse {
        return super::report_browser::run(super::report_browser::Inputs {
            path: path.to_path_buf(),
            summed,
            setup: super::report_browser::TableSetup {
                plan,
                filters,
                group: a.group,
                no_group: a.no_group,
                topts: render::report::TableOptions {
                    color: false,
                    ..topts
                },
                graph: request.graph.clone(),
                hide_first_frame: request.hides_entry_frame(),
            },
            annotate_args: annotate_args(a),
        });
    }
    let t0 = std::time::Instant::now();
    let rows = plan.rows(&mut summed, &filters, a.group, a.no_group);
    log::debug!("rows built and sorted: {:?}", t0.elapsed());
    crate::ui::log_memory("after building rows");
    let t0 = std::time::Instant::now();
    // No sample reached the rows (none recorded, or -U, -C or the time
    // filters left none): perf's message and an empty report.
    if rows.report.hists.iter().all(|h| h.all_samples == 0) && !a.header {
        crate::ui::print_diagnostics(path, summed.reader.diagnostics());
        return empty_report(
            &format!("The {} data has no samples!", path.display()),
            quiet,
        );
    }
    let names = rows.names(&summed);
    let sections = render::report::sections(
        &rows.report.hists,
        &rows.groups,
        &rows.section_events,
        &rows.section_names,
    );
    // Call graphs are built and formatted per entry on all cores, then
    // printed in order.
    let graphs = if plan.show_graphs {
        let graph_opts = render::callgraph::EntryGraphOptions {
            params: &request.graph,
            children: plan.children,
            hide_first_frame: request.hides_entry_frame(),
            percent_limit: topts.percent_limit,
            relative,
            field_sep: topts.field_sep.as_deref(),
            srclines: (request.graph.key != profile::callchain::ChainKey::Function)
                .then_some(&summed.syms),
            srcline_key: request.graph.key == profile::callchain::ChainKey::Srcline,
            color: topts.color,
        };
        render::callgraph::entry_graphs(
            &rows.report,
            &rows.section_events,
            &summed.syms.syms,
            &names,
            &graph_opts,
        )
    } else {
        Vec::new()
    };
    log::debug!("call graphs: {:?}", t0.elapsed());
    let mut out = super::paged_stdout();
    // (perf's -q leaves the header out too.)
    if a.header && !quiet {
        let info = crate::ui::header_info(path, a.show_info);
        render::header::write_header(&mut out, summed.reader.meta(), &info)?;
    }
    render::report::write_report(
        &mut out,
        &topts,
        summed.stats.total_lost_samples,
        &sections,
        &names,
        &graphs,
    )?;
    if a.threads {
        let meta = summed.reader.meta();
        let names: Vec<String> = meta.events.iter().map(|e| e.name()).collect();
        render::report::write_thread_values(&mut out, &summed.thread_values, &names)?;
    }
    if branch {
        render::report::write_branch_stats(&mut out, &rows.report.branch_types)?;
    }
    super::finish(out)?;
    crate::ui::print_diagnostics(path, summed.reader.diagnostics());
    if summed.unknown_read_ids > 0 {
        log::warn!(
            "{}: {} counter values read with samples name no known event; they are left out",
            path.display(),
            summed.unknown_read_ids
        );
    }
    if summed.collector.unwind_failures > 0 {
        log::info!(
            "{} samples could not be unwound past their first frame",
            summed.collector.unwind_failures
        );
    }
    super::discard(graphs);
    super::discard(sections);
    super::discard((rows, summed));
    Ok(ExitCode::SUCCESS)
}

/// The `trace` key's text of each distinct raw data pass one kept: a
/// tracepoint sample's fields as libtraceevent formats them (`--raw-trace`:
/// every field, raw), None for other events' samples.
fn trace_texts(
    path: &std::path::Path,
    summed: &profile::session::Summed,
    raw_trace: bool,
) -> Vec<Option<String>> {
    let meta = summed.reader.meta();
    let raws = summed.collector.trace_raws();
    let tracepoint = |e: u32| {
        meta.events
            .get(e as usize)
            .filter(|e| e.attr.type_ == perf_data::consts::PERF_TYPE_TRACEPOINT)
            .map(|e| e.attr.config)
    };
    let wanted = raws.iter().any(|r| tracepoint(r.0).is_some());
    let mut formatter = super::script::trace_formatter(path, meta, wanted);
    raws.iter()
        .map(|(event, cpu, raw)| {
            let id = tracepoint(*event)?;
            let f = formatter.as_mut()?;
            if raw_trace {
                f.format_fields(id, *cpu, raw)
            } else {
                f.format(id, *cpu, raw)
            }
        })
        .collect()
}

/// Whether the report opens in the browser: on a terminal unless `--stdio`
/// (or perf's `tui.report = false`), always with `--tui` where there is a
/// terminal; never with the options whose output is text by nature.
fn browser_wanted(a: &ReportArgs, quiet: bool) -> bool {
    let text_only = [
        (a.hierarchy, "--hierarchy"),
        (a.field_separator.is_some(), "-t/--field-separator"),
        (a.header, "--header"),
        (a.threads, "-T/--threads"),
        (quiet, "-q"),
    ];
    if a.stdio {
        return false;
    }
    if !crate::ui::browser::available() {
        if a.tui {
            log::warn!(
                "--tui: stdout is not a terminal (or TERM is dumb): printing the text report"
            );
        }
        return false;
    }
    if let Some((_, flag)) = text_only.iter().find(|(on, _)| *on) {
        if a.tui {
            log::warn!("--tui: {flag} is a text report's option: printing the text report");
        }
        return false;
    }
    a.tui || crate::config::get().bool("tui.report").unwrap_or(true)
}

/// The options `sear annotate` gets from the report for its view of one
/// symbol: the recording, its names, its time ranges and CPUs.
fn annotate_args(a: &ReportArgs) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = vec![
        "--stdio".into(),
        "--stdio-color=never".into(),
        "-i".into(),
        super::input_path(&a.input).into_os_string(),
    ];
    if a.names.no_demangle {
        v.push("--no-demangle".into());
    }
    if let Some(t) = &a.only.time {
        v.push("--time".into());
        v.push(t.into());
    }
    if let Some(c) = &a.only.cpu {
        v.push("--cpu".into());
        v.push(c.1.clone().into());
    }
    v
}
