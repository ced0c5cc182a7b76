//! `sear buildid-cache`: perf's build-id cache managed as `perf buildid-cache` manages it
//! (`symbols::cache` holds the layout both tools share). The actions run in perf's order:
//! add, remove, purge, purge-all, missing, update; then the list.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use symbols::cache::{self, Content};

use crate::cli::BuildidCacheArgs;

pub fn run(a: BuildidCacheArgs) -> Result<ExitCode> {
    if a.kcore.is_some() {
        bail!("--kcore: sear reads no kcore copies; kernel symbols come from kallsyms (cached by record)");
    }
    if a.target_ns.is_some() {
        bail!(
            "--target-ns: give the binary's path as this namespace sees it (/proc/PID/root/PATH)"
        );
    }
    let root = symbols::buildid_dir().context("no build-id cache directory: HOME is not set")?;
    // (-v, the global flag: say what was done for each file.)
    let verbose = log::max_level() >= log::LevelFilter::Info;
    for f in &a.add {
        add(&root, f, false, verbose);
    }
    for f in &a.remove {
        let r = build_id(f)
            .and_then(|id| cache::remove(&root, &name_of(f), &id).map_err(|e| e.to_string()));
        report(verbose, "Removing", f, r.map(|_| ()));
    }
    for f in &a.purge {
        let r = cache::purge(&root, &name_of(f)).map_err(|e| e.to_string());
        report(verbose, "Removing", f, r.map(|_| ()));
    }
    if a.purge_all {
        let n = cache::purge_all(&root)
            .with_context(|| format!("purging the build-id cache {}", root.display()))?;
        if verbose {
            eprintln!("Removed {n} entries from {}", root.display());
        }
    }
    let mut out = super::stdout();
    if let Some(data) = &a.missing {
        for (id, name) in recorded_ids(data)? {
            let link = root.join(".build-id").join(&id[..2]).join(&id[2..]);
            if !link.exists() {
                writeln!(out, "{id} {name}")?;
            }
        }
    }
    for f in &a.update {
        add(&root, f, true, verbose);
    }
    if a.list {
        for (id, name) in cache::valid_entries(&root) {
            writeln!(out, "{id} {name}")?;
        }
    }
    super::finish(out)?;
    // (perf exits 0 when a file could not be handled: its line says so.)
    Ok(ExitCode::SUCCESS)
}

/// The name a file is cached under: its absolute path.
fn name_of(f: &Path) -> String {
    std::path::absolute(f)
        .unwrap_or_else(|_| f.to_owned())
        .display()
        .to_string()
}

/// The file's build id; perf's line where there is none to read.
fn build_id(f: &Path) -> Result<Vec<u8>, String> {
    let r = match symbols::read_build_id(f) {
        Ok(Some(id)) => return Ok(id),
        Ok(None) => "it has no build id".to_owned(),
        Err(_) if !f.exists() => "No such file or directory".to_owned(),
        Err(e) => e.to_string(),
    };
    eprintln!("Couldn't read a build-id in {}", f.display());
    Err(r)
}

fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

fn add(root: &Path, f: &Path, replace: bool, verbose: bool) {
    let doing = if replace { "Updating" } else { "Adding" };
    let r = build_id(f).and_then(|id| {
        cache::add(root, &name_of(f), &id, Content::File(f), replace)
            .map(|_| hex(&id))
            .map_err(|e| e.to_string())
    });
    // (perf's verbose line names the build id.)
    let doing = match &r {
        Ok(id) => format!("{doing} {id}"),
        Err(_) => doing.to_owned(),
    };
    report(verbose, &doing, f, r.map(|_| ()));
}

/// perf's lines: `Adding FILE: Ok` with -v; `Couldn't add FILE: WHY` always.
fn report(verbose: bool, doing: &str, f: &Path, r: Result<(), String>) {
    match r {
        Ok(()) if verbose => eprintln!("{doing} {}: Ok", f.display()),
        Ok(()) => {}
        Err(e) => {
            let verb = match doing.split(' ').next() {
                Some("Adding") => "add",
                Some("Updating") => "update",
                _ => "remove",
            };
            eprintln!("Couldn't {verb} {}: {e}", f.display());
        }
    }
}

/// The recording's build ids (hex) and binaries, as its BUILD_ID feature lists them.
fn recorded_ids(data: &Path) -> Result<Vec<(String, String)>> {
    let reader = super::open(data)?;
    let ids = reader.meta().features.build_ids().unwrap_or_default();
    Ok(ids
        .into_iter()
        .map(|e| {
            let id: String = e.build_id.iter().map(|b| format!("{b:02x}")).collect();
            (id, e.filename)
        })
        .filter(|(id, _)| id.len() > 2)
        .collect())
}
