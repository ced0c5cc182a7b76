//! `sear diff BASE NEW`: each recording's self overhead by sort keys (as
//! `sear report --no-children` sums it), matched by the keys' texts, with
//! the change of every share.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use profile::diff::Side;
use profile::hist::{Filters, HistOptions, Names, SortKey};
use profile::resolve::CollectOptions;

use crate::cli::DiffArgs;

pub fn run(a: DiffArgs) -> Result<ExitCode> {
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
            comms: super::name_list(&a.comms),
            dsos: super::name_list(&a.dsos),
            symbols: super::name_list(&a.symbols),
            pids: None,
            tids: None,
        },
    };
    let base = load(&a.base, &opts)?;
    let new = load(&a.new, &opts)?;
    // Events match by name: the new recording's order, then events only
    // the baseline has.
    let mut events: Vec<&str> = new.sections.iter().map(|(n, _)| n.as_str()).collect();
    for (n, _) in &base.sections {
        if !events.contains(&n.as_str()) {
            events.push(n);
        }
    }
    let empty = Side::default();
    let side = |l: &'_ Loaded, ev: &str| -> Side {
        l.sections
            .iter()
            .find(|(n, _)| n == ev)
            .map_or_else(|| empty.clone(), |(_, s)| s.clone())
    };
    let rows: Vec<Vec<profile::diff::DiffRow>> = events
        .iter()
        .map(|ev| profile::diff::diff(&side(&base, ev), &side(&new, ev)))
        .collect();
    let table = render::diff::DiffTable {
        base: base.totals,
        new: new.totals,
        headers: keys.iter().map(|k| k.header().trim()).collect(),
        sections: events
            .iter()
            .zip(&rows)
            .map(|(ev, rows)| render::diff::DiffSection { event: ev, rows })
            .collect(),
        percent_limit: a.percent_limit,
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
}

/// One recording's rows per event, and its totals.
struct Loaded {
    sections: Vec<(String, Side)>,
    totals: render::diff::FileTotals,
}

fn load(path: &Path, o: &LoadOptions<'_>) -> Result<Loaded> {
    let reader = super::open(path)?;
    let want_parent = o.keys.contains(&SortKey::Parent);
    let super::replay::Replayed {
        mut collector,
        machine,
        syms,
        reader,
        sample_times,
        ..
    } = super::replay::replay(
        path,
        reader,
        &super::replay::ReplayOptions {
            collect: CollectOptions {
                callchains: want_parent,
                by_cpu: o.keys.contains(&SortKey::Cpu),
                ..CollectOptions::default()
            },
            names: o.names,
            inline: true,
            srclines: o.keys.iter().any(|k| k.needs_srclines()),
        },
    )
    .with_context(|| format!("reading {}", path.display()))?;
    crate::ui::print_diagnostics(path, reader.diagnostics());
    let dso_names: Vec<String> = machine
        .dsos()
        .iter()
        .map(|d| profile::hist::dso_short_name(&d.name))
        .collect();
    let hopts = HistOptions {
        keys: o.keys.to_vec(),
        children: false,
        callchains: false,
        caller_order: false,
        parent: if want_parent {
            Some(super::parent_regex(None)?)
        } else {
            None
        },
        cpumode: false,
    };
    let sums = collector.take_sums_in_order();
    let report = profile::hist::build(
        &collector, sums, &syms, &machine, &dso_names, &hopts, &o.filters,
    );
    let names = Names {
        comms: collector.comms(),
        dso_names,
        syms: &syms.syms,
        machine: &machine,
        strings: &report.strings,
    };
    let meta = reader.meta();
    let mut sections: Vec<(String, Side)> = Vec::new();
    let mut events = Vec::new();
    let mut samples = 0u64;
    for (ev, h) in report.hists.iter().enumerate() {
        let Some(e) = meta.events.get(ev) else {
            continue;
        };
        if h.all_samples == 0 {
            continue;
        }
        let name = e.name();
        let side = Side {
            rows: h
                .entries
                .iter()
                .map(|e| {
                    let texts = e.keys.iter().map(|k| names.display(k, e.level)).collect();
                    (texts, e.period, e.samples)
                })
                .collect(),
            total_period: h.all_period,
            total_samples: h.all_samples,
        };
        samples += h.all_samples;
        events.push((name.clone(), h.all_period));
        // Two events of one name (rare) are one section.
        match sections.iter_mut().find(|(n, _)| *n == name) {
            Some((_, s)) => {
                s.rows.extend(side.rows);
                s.total_period += side.total_period;
                s.total_samples += side.total_samples;
            }
            None => sections.push((name, side)),
        }
    }
    Ok(Loaded {
        sections,
        totals: render::diff::FileTotals {
            name: path.display().to_string(),
            samples,
            events,
            span_ns: sample_times.map(|(lo, hi)| hi - lo),
        },
    })
}
