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
        // perf names events in pipe mode from their attrs here: its name cache
        // is filled before the EVENT_DESC feature record arrives.
        let meta = reader.meta();
        let names: Vec<String> = meta
            .events
            .iter()
            .map(|e| {
                if meta.is_pipe() {
                    e.attr.default_name()
                } else {
                    e.name()
                }
            })
            .collect();
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
        let mut out = super::stdout();
        let mut dumper = render::dump::Dumper::new();
        while let Some(rec) = reader
            .next_record()
            .with_context(|| format!("reading records of {}", path.display()))?
        {
            dumper.record(&mut out, &rec)?;
        }
        super::finish(out)?;
        crate::ui::print_diagnostics(&path, reader.diagnostics());
        return Ok(ExitCode::SUCCESS);
    }
    anyhow::bail!(
        "the hotspot report is not implemented yet; use `sear report --stats`, \
         `--header-only` or `-D`"
    )
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
