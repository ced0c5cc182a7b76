//! `sear config`: perf config's listing, getting and setting of
//! `section.key` values in perf's files.

use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::ConfigArgs;
use crate::config::{self, Config, Scope};

pub fn run(a: ConfigArgs) -> Result<ExitCode> {
    let scope = match (a.user, a.system) {
        (true, _) => Scope::User,
        (_, true) => Scope::System,
        _ => Scope::Both,
    };
    let mut cfg = Config::default();
    for f in config::files(scope) {
        cfg.read_file(&f);
    }
    if !a.list && a.items.is_empty() {
        anyhow::bail!("nothing to do: give -l/--list, KEY or KEY=VALUE (see `sear config --help`)");
    }
    let mut out = super::stdout();
    use std::io::Write;
    if a.list {
        for (k, v) in cfg.entries() {
            writeln!(out, "{k}={v}")?;
        }
    }
    let mut sets = Vec::new();
    for item in &a.items {
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (item.as_str(), None),
        };
        if !key.contains('.') {
            super::finish(out)?;
            eprintln!("The config variable does not contain a section name: {key}");
            return Ok(ExitCode::from(255));
        }
        match value {
            Some(v) => sets.push((key.to_ascii_lowercase(), v.to_owned())),
            None => {
                // (As perf: the stored names are lower case, and a name
                // asked for matches them exactly.)
                if let Some((_, v)) = cfg.entries().iter().rev().find(|(k, _)| k == key) {
                    writeln!(out, "{key}={v}")?;
                }
            }
        }
    }
    super::finish(out)?;
    if !sets.is_empty() {
        // perf writes to $PERF_CONFIG when set, else the system file with
        // --system, else the user's.
        let path = match std::env::var_os("PERF_CONFIG") {
            Some(p) => std::path::PathBuf::from(p),
            None if scope == Scope::System => config::SYSTEM_FILE.into(),
            None => config::user_file().context("HOME is not set: no ~/.perfconfig to write")?,
        };
        let mut file = Config::default();
        file.read_file(&path);
        let mut entries = file.entries().to_vec();
        entries.extend(sets);
        std::fs::write(&path, config::write_text(&entries))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
