//! `sear buildid-list`: the build ids recorded for the binaries of a recording.
//!
//! Like perf: without `--with-hits` the list is the BUILD_ID header feature
//! (one line per binary, in the order recorded). With `--with-hits`, or when
//! the recording has no BUILD_ID feature (pipe mode, `record -z`, ...), the
//! records are replayed and only binaries a sample landed in are listed;
//! those without a known build id get a blank id column (profile::buildids).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::consts::feature;
use profile::buildids::BuildIds;

use crate::cli::BuildidListArgs;

pub fn run(a: BuildidListArgs) -> Result<ExitCode> {
    let mut out = super::stdout();
    if a.kernel {
        let id = symbols::KernelFinder::default()
            .running_build_id()
            .context("cannot read the running kernel's build id from /sys/kernel/notes")?;
        writeln!(out, "{}", hex(&id))?;
        super::finish(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if a.kernel_maps {
        kernel_maps(&mut out)?;
        super::finish(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let path = super::input_path(&a.input);
    let reader = super::open(&path)?;
    let meta = reader.meta();
    let has_feature = meta.features.has(feature::BUILD_ID);
    let mut with_hits = a.with_hits;
    // perf does not decode AUX area traces to find hits: it lists them all.
    if !meta.is_pipe() && meta.features.has(feature::AUXTRACE) {
        with_hits = false;
    }
    if !has_feature {
        with_hits = true;
    }
    let mut ids = BuildIds::from_features(meta);
    let path_s = path.display().to_string();
    if with_hits || meta.is_pipe() {
        let reader = ids
            .replay_hits(reader)
            .with_context(|| format!("reading records of {path_s}"))?;
        let diag = reader.diagnostics();
        // perf gives up on a stream it cannot frame and lists nothing.
        if let Some(w) = diag.warnings.get("corrupt record") {
            anyhow::bail!(
                "{path_s}: the data is corrupt at byte offset {}: {}",
                w.first_offset,
                w.message
            );
        }
        crate::ui::print_diagnostics(&path, diag);
    } else {
        crate::ui::print_diagnostics(&path, reader.diagnostics());
    }
    for (id, name) in ids.list(with_hits) {
        let id = id.map(hex).unwrap_or_default();
        writeln!(out, "{id:<40} {name}")?;
    }
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}

/// `-m`: the running kernel's map and its modules', as perf's
/// buildid__map_cb prints them: build id (blank where unknown), start and
/// end in hex at least 16 wide, name. The kernel's map runs from `_text`
/// (or `_stext`) to `_etext` in /proc/kallsyms, as perf's
/// machine__get_running_kernel_start takes it; a module's is its
/// /proc/modules range, named `[module]` (its build id from
/// /sys/module/NAME/notes).
fn kernel_maps(out: &mut dyn Write) -> Result<()> {
    let id = symbols::KernelFinder::default()
        .running_build_id()
        .map(|b| hex(&b))
        .unwrap_or_default();
    let kallsyms = std::fs::read_to_string("/proc/kallsyms")
        .context("reading /proc/kallsyms for the kernel's map")?;
    let (mut text, mut stext, mut etext) = (None, None, None);
    for l in kallsyms.lines() {
        let mut f = l.split_whitespace();
        let (Some(a), Some(_), Some(name)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let slot = match name {
            "_text" => &mut text,
            "_stext" => &mut stext,
            "_etext" => &mut etext,
            _ => continue,
        };
        if slot.is_none() {
            *slot = u64::from_str_radix(a, 16).ok();
        }
    }
    if let (Some(start), Some(end)) = (text.or(stext).filter(|&s| s != 0), etext) {
        writeln!(out, "{id} {start:16x} {end:16x} [kernel.kallsyms]")?;
    }
    let modules = std::fs::read_to_string("/proc/modules").unwrap_or_default();
    for l in modules.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let [name, size, .., addr] = f[..] else {
            continue;
        };
        let (Ok(size), Ok(start)) = (
            size.parse::<u64>(),
            u64::from_str_radix(addr.trim_start_matches("0x"), 16),
        ) else {
            continue;
        };
        let id = std::fs::read(format!("/sys/module/{name}/notes/.note.gnu.build-id"))
            .ok()
            .and_then(|b| symbols::build_id_from_notes(&b))
            .map(|b| hex(&b))
            .unwrap_or_default();
        writeln!(out, "{id} {start:16x} {:16x} [{name}]", start + size)?;
    }
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
