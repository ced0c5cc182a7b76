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
        let mut out = super::stdout();
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

/// The hotspot table (so far without symbols and call graphs).
fn hotspots(
    a: &ReportArgs,
    path: &std::path::Path,
    reader: perf_data::RecordReader,
) -> Result<ExitCode> {
    use profile::hist::{sample_keys, Hists, SortKey};
    let not_yet = "symbols and call graphs in `sear report` are not implemented yet; \
                   try `sear report --sort comm,dso --no-children -g none`, `--stats`, \
                   `--header-only` or `-D`";
    let Some(sort) = &a.sort else {
        anyhow::bail!("{not_yet}");
    };
    let keys: Vec<SortKey> = sort
        .split(',')
        .map(|k| SortKey::parse(k.trim()).ok_or_else(|| anyhow::anyhow!("--sort {k}: {not_yet}")))
        .collect::<Result<_>>()?;
    let has_callchains = reader
        .meta()
        .events
        .iter()
        .any(|e| e.attr.sample_type & perf_data::PERF_SAMPLE_CALLCHAIN != 0);
    let graphs_hidden = a.call_graph.as_deref() == Some("none");
    if has_callchains && (!a.no_children || !graphs_hidden) {
        anyhow::bail!("{not_yet}");
    }
    let branch = reader
        .meta()
        .events
        .iter()
        .any(|e| e.attr.sample_type & perf_data::PERF_SAMPLE_BRANCH_STACK != 0);
    if branch && !a.no_branch_stack {
        anyhow::bail!(
            "branch-stack mode of `sear report` is not implemented yet; add --no-branch-stack"
        );
    }
    if reader.meta().events.len() > 1
        && reader
            .meta()
            .features
            .has(perf_data::consts::feature::GROUP_DESC)
    {
        anyhow::bail!(
            "event groups in `sear report` are not implemented yet; try `--stats` or `-D`"
        );
    }
    let mut reader = perf_data::Reader::new(reader, perf_data::Order::Time);
    let mut machine = profile::machine::Machine::new();
    let mut hists: Vec<Hists> = Vec::new();
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
            if hists.len() <= s.event {
                hists.resize_with(s.event + 1, Hists::default);
            }
            let (comm, tid, landing) = machine.resolve(&s);
            let k = sample_keys(&keys, &machine, &comm, tid, landing);
            // Without PERIOD in the sample, perf counts the attr's period.
            let attr = &rec.meta.events[s.event].attr;
            hists[s.event].add(k, s.period.unwrap_or(attr.sample_period_or_freq));
        } else if rec.type_() < perf_data::PERF_RECORD_HEADER_ATTR {
            if let Ok((data, _)) = rec.decode() {
                machine.apply(rec.raw.misc, &data);
            }
        }
    }
    let meta = reader.meta();
    let names: Vec<String> = meta.events.iter().map(|e| e.name()).collect();
    hists.resize_with(names.len().max(hists.len()), Hists::default);
    for h in &mut hists {
        h.sort();
    }
    let sections: Vec<render::report::Section<'_>> = hists
        .iter()
        .zip(&names)
        .map(|(h, n)| render::report::Section {
            event_name: n,
            hists: h,
        })
        .collect();
    let mut out = super::stdout();
    let comm_of = |tid: i32| {
        machine
            .thread_comm(tid)
            .unwrap_or_else(|| format!(":{tid}"))
    };
    render::report::write_report(
        &mut out,
        &keys,
        stats.total_lost_samples,
        &sections,
        &comm_of,
    )?;
    super::finish(out)?;
    crate::ui::print_diagnostics(path, reader.diagnostics());
    Ok(ExitCode::SUCCESS)
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
    let mut out = super::stdout();
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

fn file_mtime(path: &std::path::Path) -> Option<i64> {
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
fn local_utc_offset(t: i64) -> i64 {
    let Ok(ts) = jiff::Timestamp::from_second(t) else {
        return 0;
    };
    i64::from(jiff::tz::TimeZone::system().to_offset(ts).seconds())
}
