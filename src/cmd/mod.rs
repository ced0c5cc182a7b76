//! One module per subcommand: parse options, call the libraries, write output.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::RecordReader;

use crate::cli::{Cli, Command, InputArgs};

mod buildid_list;
mod inject;
mod report;

pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Report(a) => report::run(*a),
        Command::BuildidList(a) => buildid_list::run(a),
        Command::Inject(a) => inject::run(a),
    }
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

/// Buffered stdout; a broken pipe surfaces as an io::Error the caller maps to exit 0.
pub fn stdout() -> io::BufWriter<io::StdoutLock<'static>> {
    io::BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

pub fn finish(mut out: impl Write) -> Result<()> {
    out.flush().context("writing output")
}
