//! sear: a fast, perf-compatible sampling profiler for Linux.

use std::process::ExitCode;

mod cli;
mod cmd;
mod ui;

fn main() -> ExitCode {
    record::return_freed_memory();
    let cli = match cli::parse() {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout and usage errors to stderr.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    ui::init_logging(cli.verbose, cli.quiet);
    if cli.no_pager {
        ui::pager::disable();
    }
    let code = cmd::run(cli);
    ui::log_memory("at exit");
    match code {
        Ok(code) => code,
        Err(e) => {
            if ui::is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            ui::print_error(&e);
            ExitCode::from(1)
        }
    }
}
