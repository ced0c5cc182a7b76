//! One module per subcommand: parse options, call the libraries, write output.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::RecordReader;

use crate::cli::{Cli, Command, InputArgs};

mod annotate;
mod archive;
mod buildid_cache;
mod buildid_list;
pub mod collapse;
mod config;
mod diff;
mod dump;
mod evlist;
mod export;
mod flame;
mod html;
mod inject;
mod list;
mod record;
mod report;
mod report_browser;
mod script;
mod stat;
mod top;

pub fn run(cli: Cli) -> Result<ExitCode> {
    let quiet = cli.quiet;
    match cli.command {
        Command::Record(a) => record::run(*a, quiet),
        // (-v also gives perf's verbose columns.)
        Command::Report(a) => report::run(*a, quiet, cli.verbose > 0),
        Command::Top(a) => top::run(*a),
        Command::Script(a) => script::run(*a),
        Command::Annotate(a) => annotate::run(a),
        Command::Stat(a) => stat::run(*a, quiet),
        Command::BuildidList(a) => buildid_list::run(a),
        Command::BuildidCache(a) => buildid_cache::run(a),
        Command::Archive(a) => archive::run(a),
        // (perf evlist's -v is every attribute; sear's -v is global.)
        Command::Evlist(a) => evlist::run(a, cli.verbose > 0),
        Command::List(a) => list::run(a),
        Command::Inject(a) => inject::run(a),
        Command::Collapse(a) => collapse::run(a),
        Command::Flame(a) => flame::run(a),
        Command::Diff(a) => diff::run(a, cli.verbose > 0),
        Command::Export(a) => export::run(a),
        Command::Html(a) => html::run(a),
        Command::Config(a) => config::run(a),
        Command::Version(a) => version(a),
    }
}

/// `sear version`: perf's line, then sear's; with --build-options, perf's
/// feature lines for what this build has.
fn version(a: crate::cli::VersionArgs) -> Result<ExitCode> {
    let mut out = stdout();
    writeln!(out, "sear {}", crate::cli::VERSION)?;
    if a.build_options {
        for (name, on, what) in [
            (
                "dwarf",
                true,
                "DWARF unwinding and inline frames (gimli, framehop)",
            ),
            ("libiberty", true, "C++ names as perf demangles them"),
            ("zstd", true, "compressed records (-z)"),
            ("debuginfod", false, "fetching debug files"),
            (
                "libtraceevent",
                true,
                "tracepoint fields, as perf formats them",
            ),
        ] {
            let state = if on { "on " } else { "OFF" };
            writeln!(out, "{name:>22}: [ {state} ]  # {what}")?;
        }
    }
    finish(out)?;
    Ok(ExitCode::SUCCESS)
}

/// The input path as perf picks it: -i, else stdin when it is a pipe, else perf.data.
pub fn input_path(a: &InputArgs) -> PathBuf {
    match &a.input {
        Some(p) => p.clone(),
        None => {
            let stdin = io::stdin();
            if !stdin.is_terminal() && is_fifo_stdin() {
                PathBuf::from("-")
            } else {
                PathBuf::from("perf.data")
            }
        }
    }
}

fn is_fifo_stdin() -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata("/dev/stdin")
        .map(|m| m.file_type().is_fifo())
        .unwrap_or(false)
}

/// Opens a recording for reading, with an error that names the file.
pub fn open(path: &Path) -> Result<RecordReader> {
    if path == Path::new("-") {
        return RecordReader::from_stream(Box::new(io::stdin()))
            .context("reading perf.data from stdin");
    }
    if !path.exists() {
        anyhow::bail!(
            "{}: no such file; record one first (`sear record -- COMMAND` or `perf record -- COMMAND`) or pass -i FILE",
            path.display()
        );
    }
    RecordReader::open(path)
        .with_context(|| format!("reading perf.data header of {}", path.display()))
}

/// Buffered stdout (through the pager with `-p` on a terminal); a broken
/// pipe surfaces as an io::Error the caller maps to exit 0.
pub fn stdout() -> io::BufWriter<crate::ui::pager::Sink> {
    if crate::ui::pager::forced() {
        return paged_stdout();
    }
    io::BufWriter::with_capacity(1 << 16, crate::ui::pager::Sink::Stdout(io::stdout().lock()))
}

/// [`stdout`] through the pager on a terminal (see [`crate::ui::pager`]).
pub fn paged_stdout() -> io::BufWriter<crate::ui::pager::Sink> {
    io::BufWriter::with_capacity(1 << 16, crate::ui::pager::open())
}

/// Leaves a command's last big structures (the session model, the rows,
/// the symbols) to the process's exit, which is next: the kernel takes
/// their memory back at once, where freeing it allocation by allocation
/// took tens of milliseconds on a whole machine's recording.
pub fn discard<T>(x: T) {
    std::mem::forget(x);
}

/// Runs `write` on the file `path` names (created), or on stdout for `-`
/// or none; `what` names stdout's output in errors.
pub fn write_output(
    path: Option<&Path>,
    what: &str,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    match path.filter(|p| p.as_os_str() != "-") {
        Some(p) => {
            let f =
                std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?;
            let mut w = io::BufWriter::new(f);
            write(&mut w)
                .and_then(|()| w.flush())
                .with_context(|| format!("writing {}", p.display()))
        }
        None => {
            let mut out = stdout();
            write(&mut out).with_context(|| format!("writing {what}"))?;
            finish(out)
        }
    }
}

pub fn finish(mut out: impl Write) -> Result<()> {
    out.flush().context("writing output")
}

pub use profile::collapse::input::{Input as TextInput, InputKind};

/// Opens `path` (stdin for `-` or `None`, which must then not be a
/// terminal) and looks at its first bytes; `what` says what it should hold.
pub fn open_text(path: Option<&Path>, what: &str) -> Result<TextInput> {
    if path.is_none() && io::stdin().is_terminal() {
        anyhow::bail!("no input: give {what} as FILE or on stdin");
    }
    TextInput::open(path).context("reading the input")
}

/// `-k/--vmlinux`: refused, saying what to give instead (report, annotate).
pub fn refuse_vmlinux(v: Option<&Path>) -> Result<()> {
    if let Some(v) = v {
        anyhow::bail!(
            "-k/--vmlinux {}: reading the kernel's symbols from a vmlinux image is not supported yet; \
             give a copy of the machine's /proc/kallsyms with --kallsyms FILE",
            v.display()
        );
    }
    Ok(())
}

/// perf's rule for `-G/--cgroup` (record and stat): the events it applies
/// to come before it on the command line. Fails when the first -G has no
/// `-e` before it (clap keeps values, not their order, so the arguments
/// are looked at again; the command after `--` is not).
pub fn check_cgroups_follow_events(has_cgroups: bool) -> Result<()> {
    if !has_cgroups {
        return Ok(());
    }
    let args: Vec<String> = std::env::args().skip(1).take_while(|a| a != "--").collect();
    let is = |a: &str, short: &str, long: &str| {
        a == long
            || a.starts_with(&format!("{long}="))
            || (a.starts_with(short) && !a.starts_with("--"))
    };
    let first_g = args.iter().position(|a| is(a, "-G", "--cgroup"));
    let first_e = args.iter().position(|a| is(a, "-e", "--event"));
    match (first_g, first_e) {
        (Some(g), Some(e)) if e < g => Ok(()),
        _ => anyhow::bail!(
            "must define events before cgroups: -G NAMES applies to the -e events given before it \
             (e.g. `-e cpu-clock -G mygroup -a`)"
        ),
    }
}
