//! `sear html`: one self-contained HTML report of a recording. The samples
//! are read and symbolized as for `sear export`, summed into a call tree
//! and source lines (`profile::summary`), the source text near the hottest
//! lines is read from disk where it still exists, and `render::html`
//! writes the page.

use std::io::BufRead;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use profile::summary::{Snippet, Summary};

use crate::cli::HtmlArgs;

/// Lines of context embedded around each hot source line.
const CONTEXT: u32 = 3;
/// Longer source lines are cut (minified code would bloat the page).
const MAX_LINE_CHARS: usize = 400;
/// Larger source files are not read.
const MAX_SOURCE_BYTES: u64 = 32 << 20;

pub fn run(a: HtmlArgs) -> Result<ExitCode> {
    let path = super::input_path(&a.input);
    let profile = super::export::load(&path, a.max_stack, a.names, &a.range)?;
    if profile.samples.is_empty() {
        log::warn!("{}: no samples; the report is empty", path.display());
    }
    crate::ui::log_memory("after the export model");
    let mut summary = profile::summary::build(&profile);
    drop(profile);
    crate::ui::log_memory("after the summary");
    let mut detail = String::new();
    let max_nodes = if a.max_nodes == 0 {
        usize::MAX
    } else {
        a.max_nodes
    };
    if let Some(p) = summary.prune(a.min_percent.max(0.0) / 100.0, max_nodes) {
        detail = format!(
            "{} call-tree nodes under {:.4}% of an event merged into their callers \
             (kept {}; see --max-nodes, --min-percent)",
            p.nodes,
            p.min_share * 100.0,
            p.kept
        );
        log::warn!("{}: {detail}", path.display());
    }
    if a.source_lines > 0 {
        read_sources(&mut summary, a.source_lines);
    }
    let name = path
        .file_name()
        .map_or_else(|| "perf.data".into(), |n| n.to_string_lossy().into_owned());
    let info = render::html::PageInfo { name, detail };
    let out = &a.output;
    super::write_output(Some(out), "the report", |w| {
        render::html::write_html(w, &summary, &info)
    })?;
    if out.as_os_str() != "-" {
        let size = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
        log::info!(
            "wrote {} ({:.1} MB); open it in a browser",
            out.display(),
            size as f64 / 1e6
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Fills `s.sources` with the text of the lines worth showing, from the
/// files that can still be read (a missing file is noted once, in the log).
fn read_sources(s: &mut Summary, budget: usize) {
    for (file, ranges) in s.wanted_lines(budget, CONTEXT) {
        let Some(p) = s.files.get(file as usize) else {
            continue;
        };
        let p = Path::new(p);
        let readable =
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= MAX_SOURCE_BYTES);
        if !readable {
            log::debug!(
                "{}: source not readable or too large; not embedded",
                p.display()
            );
            continue;
        }
        let Ok(f) = std::fs::File::open(p) else {
            continue;
        };
        let mut r = std::io::BufReader::new(f);
        let mut buf = Vec::new();
        let mut n = 0u32;
        let last = ranges.iter().map(|r| r.1).max().unwrap_or(0);
        let mut cur: Option<Snippet> = None;
        while n < last {
            buf.clear();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            n += 1;
            let wanted = ranges.iter().any(|&(a, b)| a <= n && n <= b);
            if !wanted {
                if let Some(sn) = cur.take() {
                    s.sources.push(sn);
                }
                continue;
            }
            let text = String::from_utf8_lossy(&buf);
            let text = text.trim_end_matches(['\n', '\r']);
            let text: String = match text.char_indices().nth(MAX_LINE_CHARS) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text.to_owned(),
            };
            let text = text.replace('\t', "    ");
            cur.get_or_insert_with(|| Snippet {
                file,
                first: n,
                text: Vec::new(),
            })
            .text
            .push(text);
        }
        if let Some(sn) = cur.take() {
            s.sources.push(sn);
        }
    }
}
