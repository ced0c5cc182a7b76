//! perf's configuration files, read as perf reads them: `$PERF_CONFIG`
//! alone when set, else `/etc/perfconfig` (unless `$PERF_CONFIG_NOSYSTEM`)
//! then `~/.perfconfig` (unless `$PERF_CONFIG_NOGLOBAL`), later values
//! winning. The format is git's: `[section]` or `[section "sub"]` headers,
//! `key = value` lines, `#`/`;` comments, quoted values with `\` escapes.
//! A line that does not parse ends the file there, with perf's warning
//! (`bad config file line N in FILE`); what came before it stays.
//!
//! Written by hand: the INI crates disagree with git's rules on comments,
//! quoting and subsections, and a git-config crate (gix-config) would pull
//! in far more than these 150 lines; what perf accepts decides.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The settings of every file read, in reading order.
#[derive(Debug, Default, Clone)]
pub struct Config {
    /// (`section.key` with section and key in lower case, value).
    entries: Vec<(String, String)>,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The configuration of this run (read on first use).
pub fn get() -> &'static Config {
    CONFIG.get_or_init(|| {
        let mut c = Config::default();
        for f in files(Scope::Both) {
            c.read_file(&f);
        }
        c
    })
}

/// Which files `sear config` reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    System,
    User,
    Both,
}

/// perf's system file.
pub const SYSTEM_FILE: &str = "/etc/perfconfig";

/// The user's file: `~/.perfconfig`.
pub fn user_file() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".perfconfig"))
}

fn env_true(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| parse_bool(&v).unwrap_or(false))
}

/// The files perf would read for `scope`, in order.
pub fn files(scope: Scope) -> Vec<PathBuf> {
    if let Some(p) = std::env::var_os("PERF_CONFIG") {
        // Setting $PERF_CONFIG makes perf read only that file.
        return vec![PathBuf::from(p)];
    }
    let mut out = Vec::new();
    if scope != Scope::User && !env_true("PERF_CONFIG_NOSYSTEM") {
        out.push(PathBuf::from(SYSTEM_FILE));
    }
    if scope != Scope::System && !env_true("PERF_CONFIG_NOGLOBAL") {
        out.extend(user_file());
    }
    out
}

impl Config {
    /// Adds the settings of `path` (a missing file adds none). At most
    /// [`MAX_FILE_BYTES`] are read, and never waited for: a FIFO there
    /// adds nothing.
    pub fn read_file(&mut self, path: &Path) {
        let Some(text) = read_regular(path) else {
            return;
        };
        let text = String::from_utf8_lossy(&text);
        let (entries, bad) = parse(&text);
        self.entries.extend(entries);
        if let Some(line) = bad {
            log::warn!("bad config file line {line} in {}", path.display());
        }
    }

    /// Every setting, in reading order.
    pub fn entries(&self) -> &[(String, String)] {
        &self.entries
    }

    /// The last value of `key` (`section.key`, any case).
    pub fn value(&self, key: &str) -> Option<&str> {
        let key = normalize(key);
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The last value of any of `keys` (synonyms, as perf's
    /// `record.call-graph` for `call-graph.record-mode`).
    pub fn value_of_any(&self, keys: &[&str]) -> Option<&str> {
        let keys: Vec<String> = keys.iter().map(|k| normalize(k)).collect();
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| keys.contains(k))
            .map(|(_, v)| v.as_str())
    }

    /// A boolean setting; a value that is not one is warned about and
    /// ignored.
    pub fn bool(&self, key: &str) -> Option<bool> {
        let v = self.value(key)?;
        let b = parse_bool(v);
        if b.is_none() {
            log::warn!(
                "config {key}={v}: not a boolean (true/false, yes/no, on/off, 1/0); ignored"
            );
        }
        b
    }

    /// A number; a value that is not one is warned about and ignored.
    pub fn number<T: std::str::FromStr>(&self, key: &str) -> Option<T> {
        let v = self.value(key)?;
        let n = v.trim().trim_end_matches('%').parse().ok();
        if n.is_none() {
            log::warn!("config {key}={v}: not a number; ignored");
        }
        n
    }
}

/// The most of a configuration file sear reads (perf's are a few lines).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// perf's configuration where the flags leave a choice (report.*).
pub fn report_defaults(a: &mut crate::cli::ReportArgs) {
    let cfg = get();
    if !a.children && !a.no_children && cfg.bool("report.children") == Some(false) {
        a.no_children = true;
    }
    if a.sort.is_none() {
        a.sort = cfg.value("report.sort_order").map(str::to_owned);
    }
    if !a.group && !a.no_group && cfg.bool("report.group") == Some(true) {
        a.group = true;
    }
}

/// perf's configuration where diff's flags leave a choice (diff.compute,
/// diff.order).
pub fn diff_defaults(a: &mut crate::cli::DiffArgs) {
    let cfg = get();
    if a.compute.is_none() && !a.new_column {
        // (perf takes the plain method names only: no wdiff weights here.)
        match cfg.value("diff.compute") {
            Some(m @ ("delta" | "delta-abs" | "ratio")) => a.compute = Some(m.to_owned()),
            Some(m) => log::warn!(
                "config diff.compute={m}: perf takes delta, delta-abs or ratio here; ignored"
            ),
            None => {}
        }
    }
    if a.order.is_none() && !a.new_column {
        // (Checked against the number of files as -o is.)
        if let Some(n) = cfg.number::<u32>("diff.order") {
            a.order = Some(n);
        }
    }
}

/// perf's configuration where annotate's flags leave a choice
/// (annotate.show_nr_samples, show_total_period, disassembler_style: the
/// keys perf 6.1's stdio annotate honours).
pub fn annotate_defaults(a: &mut crate::cli::AnnotateArgs) {
    let cfg = get();
    if !a.show_nr_samples && cfg.bool("annotate.show_nr_samples") == Some(true) {
        a.show_nr_samples = true;
    }
    if !a.show_total_period && cfg.bool("annotate.show_total_period") == Some(true) {
        a.show_total_period = true;
    }
    if a.disassembler_style.is_none() {
        a.disassembler_style = cfg.value("annotate.disassembler_style").map(str::to_owned);
    }
}

/// perf's call-graph defaults as its configuration changes them
/// (call-graph.print-type, order, sort-key, threshold, print-limit; and
/// report.percent-limit, which is also the graphs' threshold), in the
/// order the settings come.
pub fn call_graph_params() -> profile::callchain::CallGraphParams {
    let cfg = get();
    let mut p = profile::callchain::CallGraphParams::default();
    for (k, v) in cfg.entries() {
        if let Some(key) = k.strip_prefix("call-graph.") {
            if let Err(e) = p.set_config(key, v) {
                log::warn!("perf config {k}: {e}");
            }
        } else if k == "report.percent-limit" {
            if let Some(limit) = cfg.number("report.percent-limit") {
                p.threshold = limit;
            }
        }
    }
    p
}

/// The call graphs `record -g` asks for: perf's configured mode (frame
/// pointers unless call-graph.record-mode says otherwise), with its dump
/// size.
pub fn record_call_graph() -> anyhow::Result<record::CallGraph> {
    use anyhow::Context;
    let cfg = get();
    let mode = cfg
        .value_of_any(&["call-graph.record-mode", "record.call-graph"])
        .unwrap_or("fp");
    let cg = record::CallGraph::parse(mode)
        .with_context(|| format!("perf config call-graph.record-mode={mode}"))?;
    Ok(match (cg, cfg.value("call-graph.dump-size")) {
        (record::CallGraph::Dwarf(_), Some(size)) if !mode.contains(',') => {
            record::CallGraph::parse(&format!("dwarf,{size}"))
                .with_context(|| format!("perf config call-graph.dump-size={size}"))?
        }
        (cg, _) => cg,
    })
}

fn read_regular(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO does not wait for a writer.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    // (A FIFO opened non-blocking reads nothing or fails at once; a device
    // such as /dev/null, what tests and scripts point PERF_CONFIG at, reads
    // as the empty file it is, any other at most the bound below.)
    if f.metadata().ok()?.is_dir() {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        log::warn!(
            "{}: larger than {} bytes; perf config ignored",
            path.display(),
            MAX_FILE_BYTES
        );
        return None;
    }
    Some(bytes)
}

/// `Section.Key` → `section.key`; a subsection keeps its case, as git's.
fn normalize(key: &str) -> String {
    match (key.find('.'), key.rfind('.')) {
        (Some(a), Some(b)) if a != b => format!(
            "{}{}{}",
            key[..a].to_ascii_lowercase(),
            &key[a..b],
            key[b..].to_ascii_lowercase()
        ),
        _ => key.to_ascii_lowercase(),
    }
}

/// git's and perf's booleans.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        other => other.parse::<i64>().ok().map(|n| n != 0),
    }
}

/// The settings of one file, and the number of the line that ended it
/// early (None: read to the end).
pub fn parse(text: &str) -> (Vec<(String, String)>, Option<usize>) {
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            match parse_header(rest) {
                Some(s) => section = Some(s),
                None => return (out, Some(i + 1)),
            }
            continue;
        }
        let Some(sec) = &section else {
            return (out, Some(i + 1));
        };
        let key_len = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(line.len());
        let (key, rest) = line.split_at(key_len);
        if key.is_empty() || !key.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return (out, Some(i + 1));
        }
        let rest = rest.trim_start();
        let value = if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
            // A key alone is true.
            Some(String::new())
        } else if let Some(v) = rest.strip_prefix('=') {
            parse_value(v)
        } else {
            None
        };
        match value {
            Some(v) => out.push((format!("{sec}.{}", key.to_ascii_lowercase()), v)),
            None => return (out, Some(i + 1)),
        }
    }
    (out, None)
}

/// `section]` or `section "sub"]` → `section` or `section.sub`.
fn parse_header(rest: &str) -> Option<String> {
    let end = rest.rfind(']')?;
    let after = rest[end + 1..].trim();
    if !(after.is_empty() || after.starts_with('#') || after.starts_with(';')) {
        return None;
    }
    let inner = rest[..end].trim();
    let (name, sub) = match inner.find(char::is_whitespace) {
        Some(i) => {
            let sub = inner[i..].trim();
            let sub = sub.strip_prefix('"')?.strip_suffix('"')?;
            (
                &inner[..i],
                Some(sub.replace("\\\"", "\"").replace("\\\\", "\\")),
            )
        }
        None => (inner, None),
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
    {
        return None;
    }
    let name = name.to_ascii_lowercase();
    Some(match sub {
        Some(s) => format!("{name}.{s}"),
        None => name,
    })
}

/// A value after `=`: trimmed, quotes joined, escapes read, a comment
/// outside quotes cut. None for a bad escape or an open quote.
fn parse_value(v: &str) -> Option<String> {
    let mut out = String::new();
    let mut quoted = false;
    // Spaces are kept only between words (not trailing).
    let mut pending_space = 0usize;
    let mut chars = v.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                continue;
            }
            '#' | ';' if !quoted => break,
            '\\' => {
                let e = match chars.next()? {
                    'n' => '\n',
                    't' => '\t',
                    'b' => '\u{8}',
                    '\\' => '\\',
                    '"' => '"',
                    _ => return None,
                };
                out.extend(std::iter::repeat_n(' ', pending_space));
                pending_space = 0;
                out.push(e);
                continue;
            }
            c if c.is_whitespace() && !quoted => {
                pending_space += 1;
                continue;
            }
            _ => {}
        }
        out.extend(std::iter::repeat_n(' ', pending_space));
        pending_space = 0;
        out.push(c);
    }
    (!quoted).then_some(out)
}

/// The text of a file holding `entries` as perf writes it.
pub fn write_text(entries: &[(String, String)]) -> String {
    let mut sections: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for (k, v) in entries {
        let (sec, key) = k.rsplit_once('.').unwrap_or((k.as_str(), ""));
        let i = match sections.iter().position(|(s, _)| s == sec) {
            Some(i) => i,
            None => {
                sections.push((sec.to_owned(), Vec::new()));
                sections.len() - 1
            }
        };
        let keys = &mut sections[i].1;
        match keys.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = v.clone(),
            None => keys.push((key.to_owned(), v.clone())),
        }
    }
    let mut out = String::from("# this file is auto-generated.\n");
    for (sec, keys) in sections {
        match sec.split_once('.') {
            Some((name, sub)) => out.push_str(&format!("[{name} \"{sub}\"]\n")),
            None => out.push_str(&format!("[{sec}]\n")),
        }
        for (k, v) in keys {
            out.push_str(&format!("\t{k} = {v}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_git_style_files() {
        let (e, bad) = parse(
            "# comment\n[Report]\n\tchildren = false\n  sort_order = dso,sym ; why\n\
             [call-graph]\nrecord-mode=\"dwarf\"\n[annotate]\nhide_src_code\n\
             [buildid \"sub\"]\ndir = \"/a b\" # x\n",
        );
        assert_eq!(bad, None);
        let e: Vec<(&str, &str)> = e.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            e,
            [
                ("report.children", "false"),
                ("report.sort_order", "dso,sym"),
                ("call-graph.record-mode", "dwarf"),
                ("annotate.hide_src_code", ""),
                ("buildid.sub.dir", "/a b"),
            ]
        );
    }

    #[test]
    fn a_bad_line_ends_the_file_there() {
        let (e, bad) = parse("[report]\n children = false\nbogus line\n[x]\ny = 1\n");
        assert_eq!(e.len(), 1);
        assert_eq!(bad, Some(3));
        assert_eq!(parse("key = 1\n").1, Some(1), "a key before any section");
        assert_eq!(parse("[a]\nk = \"open\n").1, Some(2));
    }

    #[test]
    fn later_values_win_and_keys_ignore_case() {
        let c = Config {
            entries: parse("[report]\nchildren = true\n[REPORT]\nChildren = no\n").0,
        };
        assert_eq!(c.bool("report.children"), Some(false));
        assert_eq!(c.bool("Report.Children"), Some(false));
        assert_eq!(c.value("report.other"), None);
    }

    #[test]
    fn fifos_and_huge_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let mut cfg = Config::default();
        cfg.read_file(&fifo); // returns at once
        let big = dir.path().join("big");
        let mut text = String::from("[report]\nchildren = false\n");
        text.push_str(&"# padding\n".repeat(120_000));
        std::fs::write(&big, text).unwrap();
        cfg.read_file(&big);
        assert!(cfg.entries().is_empty());
        cfg.read_file(&dir.path().join("missing"));
        cfg.read_file(Path::new("/dev/null"));
        cfg.read_file(Path::new("/dev/zero"));
        assert!(cfg.entries().is_empty());
    }

    #[test]
    fn written_as_perf_writes_it() {
        let e = vec![
            ("report.children".to_string(), "false".to_string()),
            ("call-graph.record-mode".to_string(), "dwarf".to_string()),
            ("report.sort_order".to_string(), "dso,sym".to_string()),
            ("report.children".to_string(), "true".to_string()),
        ];
        assert_eq!(
            write_text(&e),
            "# this file is auto-generated.\n[report]\n\tchildren = true\n\tsort_order = dso,sym\n\
             [call-graph]\n\trecord-mode = dwarf\n"
        );
        assert_eq!(parse(&write_text(&e)).0.len(), 3);
    }
}
