//! `sear inject`: read a recording and write it back out (perf inject's
//! plumbing, perf_data::convert): a regular output file gets file mode,
//! `-o -` (or a FIFO) pipe mode; `-z` compresses.

use std::fs::File;
use std::io;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::convert::{to_file_mode, to_pipe_mode};

use crate::cli::InjectArgs;

pub fn run(a: InjectArgs) -> Result<ExitCode> {
    let mut reader = super::open(&a.input)?;
    let to_pipe = a.output == Path::new("-") || is_fifo(&a.output);
    let result = if to_pipe {
        if a.output == Path::new("-") {
            let out = io::stdout().lock();
            to_pipe_mode(&mut reader, out, a.compress.level)
        } else {
            let out = File::create(&a.output)
                .with_context(|| format!("creating {}", a.output.display()))?;
            to_pipe_mode(&mut reader, out, a.compress.level)
        }
    } else {
        let out =
            File::create(&a.output).with_context(|| format!("creating {}", a.output.display()))?;
        to_file_mode(&mut reader, out, a.compress.level)
    };
    crate::ui::print_diagnostics(&a.input, reader.diagnostics());
    result.with_context(|| format!("rewriting {} as {}", a.input.display(), a.output.display()))?;
    Ok(ExitCode::SUCCESS)
}

fn is_fifo(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p)
        .map(|m| m.file_type().is_fifo() || m.file_type().is_char_device())
        .unwrap_or(false)
}
