//! `sear diff BASE NEW`: each recording's self overhead by sort keys (as
//! `sear report --no-children` sums it), matched by the keys' texts, with
//! the change of every share.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use profile::collect::CollectOptions;
use profile::hist::{Filters, HistOptions, Names, SortKey};

use crate::cli::DiffArgs;

pub fn run(mut a: DiffArgs, verbose: bool) -> Result<ExitCode> {
    crate::config::diff_defaults(&mut a);
    // perf's data files: perf.data.old against the one given, or against
    // perf.data.
    let files: Vec<std::path::PathBuf> = match a.files.len() {
        0 => vec!["perf.data.old".into(), "perf.data".into()],
        1 => vec!["perf.data.old".into(), a.files[0].clone()],
        _ => a.files.clone(),
    };
    if a.new_column && files.len() > 2 {
        anyhow::bail!(
            "--new shows two recordings; with {} files, leave it out for perf's layout \
             (a column per recording against the baseline)",
            files.len()
        );
    }
    let order = a.order.unwrap_or(1) as usize;
    if order >= files.len() {
        anyhow::bail!(
            "-o/--order {order}: there are data files 0 to {} (0 the baseline)",
            files.len() - 1
        );
    }
    if a.cycles_hist && a.compute.as_deref() != Some("cycles") {
        anyhow::bail!("--cycles-hist goes with -c cycles (perf's usage)");
    }
    if a.stream {
        anyhow::bail!(
            "--stream compares hot branch streams, which need LBR branch stacks with cycles \
             (`record -b`); this machine's hardware has no branch recording"
        );
    }
    if a.dump_raw_trace {
        let mut out = super::stdout();
        for p in &files {
            let reader = super::open(p)?;
            super::dump::records(p, reader, &mut out, false)?;
        }
        std::io::Write::flush(&mut out)?;
    }
    let compute = profile::diff::Compute::parse(a.compute.as_deref().unwrap_or("delta-abs"))?;
    let keys: Vec<SortKey> = SortKey::parse_list(&a.sort)
        .map_err(|e| {
            anyhow::anyhow!(
                "--sort {}: {e} (known: {})",
                a.sort,
                profile::hist::SORT_KEY_NAMES
            )
        })?
        .into_iter()
        .filter(|k| *k != SortKey::IpcNull)
        .collect();
    let opts = LoadOptions {
        keys: &keys,
        names: a.names.style(),
        filters: Filters {
            comms: a.comms.clone().map(|n| n.0),
            dsos: a.dsos.clone().map(|n| n.0),
            symbols: a.symbols.clone().map(|n| n.0),
            pids: a.pid.clone().map(|n| n.0),
            tids: a.tid.clone().map(|n| n.0),
            cpus: a.cpu.clone().map(|n| n.0),
            ..Filters::default()
        },
        time: a.time.clone(),
        relative: a.percentage.as_deref() == Some("relative"),
        verbose,
    };
    let mut loaded = files
        .iter()
        .map(|f| load(f, &opts))
        .collect::<Result<Vec<Loaded>>>()?;
    let others: Vec<&profile::diff::Sides> = loaded[1..].iter().map(|l| &l.sides).collect();
    let mut rows = profile::diff::diff_events(&loaded[0].sides, &others);
    if a.baseline_only {
        for e in &mut rows {
            profile::diff::baseline_only(&mut e.rows);
            // (The columns fit the rows left.)
            e.widths.clear();
        }
    }
    // As perf, a key column that a filter holds to one value is left out
    // (unless that leaves none).
    let single = |f: &Option<crate::cli::NameList>| f.as_ref().is_some_and(|n| n.0.len() == 1);
    let mut hide: Vec<bool> = keys
        .iter()
        .map(|k| match k {
            SortKey::Dso => single(&a.dsos),
            SortKey::Sym => single(&a.symbols),
            SortKey::Comm => single(&a.comms),
            _ => false,
        })
        .collect();
    if hide.iter().all(|&h| h) {
        hide.iter_mut().for_each(|h| *h = false);
    }
    let shown = |i: usize| !hide[i];
    for e in &mut rows {
        for r in &mut e.rows {
            r.keys = std::mem::take(&mut r.keys)
                .into_iter()
                .enumerate()
                .filter(|(i, _)| shown(*i))
                .map(|(_, k)| k)
                .collect();
        }
        e.widths = e
            .widths
            .iter()
            .enumerate()
            .filter(|(i, _)| shown(*i))
            .map(|(_, w)| *w)
            .collect();
    }
    let keys: Vec<SortKey> = keys
        .iter()
        .enumerate()
        .filter(|(i, _)| shown(*i))
        .map(|(_, k)| *k)
        .collect();
    if !a.new_column {
        for e in &mut rows {
            profile::diff::perf_order_by(&mut e.rows, compute, order);
        }
    }
    let mut totals = loaded.drain(..).map(|l| l.totals);
    let (Some(base), Some(new)) = (totals.next(), totals.next()) else {
        anyhow::bail!("diff compares two recordings at least");
    };
    let table = render::diff::DiffTable {
        base,
        new,
        more: totals.collect(),
        list_files: verbose,
        headers: keys.iter().map(|k| k.header().trim()).collect(),
        sections: rows
            .iter()
            .map(|e| render::diff::DiffSection {
                event: &e.event,
                rows: &e.rows,
                widths: &e.widths,
                totals: &e.totals,
            })
            .collect(),
        percent_limit: a.percent_limit,
        with_new: a.new_column,
        pads: keys.iter().map(|k| k.pads_value()).collect(),
        rights: keys.iter().map(|k| k.right_aligned()).collect(),
        compute,
        show_period: a.period,
        show_formula: a.formula,
        field_sep: a.field_separator.clone(),
    };
    let mut out = super::paged_stdout();
    render::diff::write_diff(&mut out, &table)?;
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}

struct LoadOptions<'a> {
    keys: &'a [SortKey],
    names: profile::symbolize::NameStyle,
    filters: Filters,
    /// `--time`, parsed for each recording (percent slices of its own span).
    time: Option<String>,
    relative: bool,
    /// `-v`: perf's verbose columns (DSOs by path, symbols after their
    /// address and where their symbols were read from).
    verbose: bool,
}

/// One recording's rows per event, and its totals.
struct Loaded {
    sides: profile::diff::Sides,
    totals: render::diff::FileTotals,
}

fn load(path: &Path, o: &LoadOptions<'_>) -> Result<Loaded> {
    let reader = super::open(path)?;
    if o.filters.cpus.is_some() {
        profile::session::check_cpu_filter(reader.meta())
            .with_context(|| format!("{}", path.display()))?;
    }
    let time = crate::cli::time_ranges(o.time.as_deref(), reader.meta())
        .with_context(|| format!("{}", path.display()))?;
    let want_parent = o.keys.contains(&SortKey::Parent);
    let mut summed = profile::session::sum(
        reader,
        &profile::session::SumOptions {
            collect: CollectOptions {
                callchains: want_parent,
                by_cpu: o.keys.iter().any(|k| k.needs_cpu()) || o.filters.cpus.is_some(),
                ..CollectOptions::default()
            },
            names: o.names,
            inline: true,
            srclines: o.keys.iter().any(|k| k.needs_srclines()),
            time,
            cpus: None,
            thread_values: false,
            switch: None,
        },
    )
    .with_context(|| format!("reading records of {}", path.display()))?;
    crate::ui::print_diagnostics(path, summed.reader.diagnostics());
    let dso_names = profile::report::dso_short_names(&summed);
    let hopts = HistOptions {
        keys: o.keys.to_vec(),
        parent: if want_parent {
            Some(profile::report::parent_regex(None)?)
        } else {
            None
        },
        sockets: if o.keys.contains(&SortKey::Socket) {
            profile::report::socket_ids(summed.reader.meta())
        } else {
            Vec::new()
        },
        dsos_by_path: o.verbose,
        ..HistOptions::default()
    };
    let sums = summed.collector.take_sums_in_order();
    let s = &summed;
    let report = profile::hist::build(
        &s.collector,
        sums,
        &s.syms,
        &s.machine,
        &dso_names,
        &hopts,
        &o.filters,
    );
    let (shown_dsos, origins) = if o.verbose {
        profile::report::verbose_dso_names(s.parts())
    } else {
        (dso_names.clone(), Vec::new())
    };
    let names = Names {
        comms: s.collector.comms(),
        dso_names: &shown_dsos,
        verbose: o.verbose,
        origins: &origins,
        syms: &s.syms.syms,
        machine: &s.machine,
        strings: &report.strings,
    };
    let sides = profile::diff::Sides::of(&report, &names, s.reader.meta(), o.relative);
    Ok(Loaded {
        totals: render::diff::FileTotals {
            name: path.display().to_string(),
            samples: sides.samples,
            events: sides.events.clone(),
            span_ns: s.sample_times.map(|(lo, hi)| hi - lo),
        },
        sides,
    })
}
