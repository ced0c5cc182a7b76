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
    if log::log_enabled!(log::Level::Debug) {
        // Where the memory went (file pages are mapped inputs and binaries).
        if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
            let fields: Vec<String> = status
                .lines()
                .filter(|l| {
                    ["VmHWM", "RssAnon", "RssFile"]
                        .iter()
                        .any(|k| l.starts_with(k))
                })
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect();
            log::debug!("memory: {}", fields.join(", ").replace(": ", " "));
        }
    }
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
