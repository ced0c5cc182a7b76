//! `sear inject`: read a recording and write it back out (perf inject's plumbing).

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::InjectArgs;

pub fn run(a: InjectArgs) -> Result<ExitCode> {
    let _ = a;
    anyhow::bail!("sear inject is not implemented yet")
}
