//! sear: a fast, perf-compatible sampling profiler for Linux.

use std::process::ExitCode;

mod cli;
mod cmd;
mod config;
mod ui;

fn main() -> ExitCode {
    record::return_freed_memory();
    // A file cut short while mapped reads as zeros, with a warning, not a SIGBUS death.
    ui::sigbus::install();
    let cli = match cli::parse() {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout and usage errors to stderr.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // (perf's --debug verbose=N is -v N times, for messages and columns.)
    let mut cli = cli;
    cli.verbose = cli.verbose.max(debug_verbosity(&cli.debug));
    ui::init_logging(cli.verbose, cli.quiet);
    let cfg = config::get();
    if cli.paginate {
        ui::pager::force();
    } else if cli.no_pager || cfg.bool(&format!("pager.{}", cli.command.name())) == Some(false) {
        ui::pager::disable();
    }
    // As perf: the build-id cache directory reaches every reader through
    // $PERF_BUILDID_DIR (the flag first, then buildid.dir).
    let buildid_dir = cli
        .buildid_dir
        .as_ref()
        .map(|d| d.as_os_str().to_owned())
        .or_else(|| {
            (std::env::var_os("PERF_BUILDID_DIR").is_none())
                .then(|| cfg.value("buildid.dir").map(Into::into))
                .flatten()
        });
    if let Some(d) = buildid_dir {
        // (Before any thread starts.)
        std::env::set_var("PERF_BUILDID_DIR", d);
    }
    if let Some(d) = &cli.symfs {
        symbols::set_symfs(d.clone());
    }
    if let Some(f) = &cli.kallsyms {
        symbols::set_kallsyms(f.clone());
    }
    let code = cmd::run(cli);
    ui::sigbus::report();
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

/// The verbosity perf's `--debug verbose=N` (or bare `verbose`, 1) asks for.
fn debug_verbosity(vars: &[String]) -> u8 {
    vars.iter()
        .filter_map(|v| match v.split_once('=') {
            Some(("verbose", n)) => n.trim().parse::<u8>().ok(),
            None if v == "verbose" => Some(1),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}
