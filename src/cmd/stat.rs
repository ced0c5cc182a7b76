//! `sear stat`: count events while a command runs (record::count), sum
//! the runs (record::stat) and print perf stat's table, CSV (`-x`) or JSON
//! (`--json`) on stderr (render::stat).

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};
use record::count::{CountOptions, Counter, Target};
use record::stat::{Aggr, Intervals, Runs};
use render::stat::{Counted, Format, Layout};

use crate::cli::StatArgs;

/// Where the counts go: stderr, `--log-fd N`, or `-o FILE`.
fn open_output(a: &StatArgs) -> Result<Box<dyn Write>> {
    if let Some(fd) = a.log_fd {
        use std::os::fd::{FromRawFd, OwnedFd};
        // SAFETY: fcntl(F_GETFD) only asks whether the descriptor is open.
        if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            anyhow::bail!("--log-fd {fd}: no such open file descriptor");
        }
        // A duplicate, so the process's own descriptor stays open.
        // SAFETY: dup of a descriptor checked open above.
        let dup = unsafe { libc::dup(fd) };
        if dup < 0 {
            return Err(io::Error::last_os_error()).context(format!("--log-fd {fd}"));
        }
        // SAFETY: `dup` is a new descriptor owned by nothing else.
        let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(dup) });
        return Ok(Box::new(io::LineWriter::new(file)));
    }
    let Some(path) = &a.output else {
        return Ok(Box::new(io::stderr()));
    };
    let f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(a.append)
        .truncate(!a.append)
        .open(path)
        .with_context(|| format!("opening {} for the counts (-o)", path.display()))?;
    let mut w: Box<dyn Write> = Box::new(io::BufWriter::new(f));
    // perf's first line: when counting started, as ctime(3) prints it.
    let now = jiff::Zoned::now();
    writeln!(w, "# started on {}\n", now.strftime("%a %b %e %H:%M:%S %Y"))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(w)
}

/// `sear stat record [OPTIONS] -- COMMAND`: the counting options of
/// `stat`, `-o` naming the file written (perf.data).
#[derive(Debug, clap::Parser)]
#[command(name = "sear stat record")]
struct RecordCli {
    #[command(flatten)]
    stat: StatArgs,
}

/// `sear stat report [-i FILE]`.
#[derive(Debug, clap::Parser)]
#[command(name = "sear stat report")]
struct ReportCli {
    /// The `stat record` file to read.
    #[arg(
        short = 'i',
        long = "input",
        value_name = "FILE",
        default_value = "perf.data"
    )]
    input: std::path::PathBuf,
}

pub fn run(a: StatArgs, quiet: bool) -> Result<ExitCode> {
    // perf's `stat record` and `stat report` come where the command would.
    match a.command.first().and_then(|c| c.to_str()) {
        Some("record") => {
            let args =
                std::iter::once("sear stat record".into()).chain(a.command[1..].iter().cloned());
            let r = <RecordCli as clap::Parser>::try_parse_from(args).unwrap_or_else(|e| e.exit());
            let mut stat = r.stat;
            let file = stat.output.take().unwrap_or_else(|| "perf.data".into());
            count(stat, quiet, Some(&file))
        }
        Some("report") => {
            let args =
                std::iter::once("sear stat report".into()).chain(a.command[1..].iter().cloned());
            let r = <ReportCli as clap::Parser>::try_parse_from(args).unwrap_or_else(|e| e.exit());
            report(&r.input)
        }
        _ => count(a, quiet, None),
    }
}

/// `stat report`: a `stat record` file's counts as perf prints them.
fn report(path: &std::path::Path) -> Result<ExitCode> {
    let f = record::stat_file::read(path)?;
    let mut all = Runs::default();
    all.add(f.run);
    let counted = Counted::Command(f.cmdline);
    let numeric = crate::ui::numeric_locale(true);
    let out = render::stat::with_numeric(&numeric, || {
        render::stat::counts(&Format::Std, &counted, &all, Layout::single())
    });
    let mut err = io::stderr();
    let _ = err.write_all(out.as_bytes()).and_then(|_| err.flush());
    Ok(ExitCode::SUCCESS)
}

/// Counts (and with `record_to`, writes the last run there as perf's
/// `stat record` does).
fn count(a: StatArgs, quiet: bool, record_to: Option<&std::path::Path>) -> Result<ExitCode> {
    let numeric = crate::ui::numeric_locale(!a.no_big_num);
    let format = match (&a.field_separator, a.json) {
        (_, true) => Format::Json,
        (Some(s), false) => Format::Csv(s.clone()),
        (None, false) => Format::Std,
    };
    let opts = CountOptions {
        events: a.event.clone(),
        command: a.command.clone(),
        pids: a.tasks.pids(),
        tids: a.tasks.tids(),
        // (-C counts system-wide on those CPUs, as perf.)
        system_wide: a.all_cpus || a.cpu.is_some(),
        every_thread: a.per_thread && (a.all_cpus || a.cpu.is_some()),
        no_inherit: a.no_inherit,
        interval_ms: a.interval_print,
        detail: a.detailed,
        null: a.null,
        cpus: a.cpu.clone().map(|c| c.0),
        timeout_ms: a.timeout,
        delay_ms: a.delay.filter(|&d| d > 0).map(|d| d as u64),
        quiet,
        all_user: a.all_user,
        all_kernel: a.all_kernel,
        group: a.group,
        cgroups: a.cgroup.clone(),
        for_each_cgroup: a.for_each_cgroup.clone(),
        control: a.control.clone(),
        start_disabled: a.delay == Some(-1),
    };
    refuse_hardware_options(&a)?;
    super::check_cgroups_follow_events(!a.cgroup.is_empty())?;
    if a.topdown {
        anyhow::bail!(if opts.system_wide {
            "--topdown: the system does not support top-down analysis (it needs a PMU with \
             top-down events, which virtual machines lack)"
        } else {
            "--topdown: top-down event configuration requires system-wide mode (-a)"
        });
    }
    if let Some(m) = &a.metrics {
        // As perf: no such metric here, and the default events instead.
        eprintln!("Cannot find metric or group `{m}'");
    }
    if let Err(e) = record::count::events_of(&opts) {
        // As perf: the error, then where to find the valid names.
        crate::ui::print_error(&anyhow::Error::new(e));
        eprintln!("Run 'sear stat --help' for a list of valid events");
        return Ok(ExitCode::from(2));
    }
    if opts.command.is_empty() && !opts.attaches() && !opts.system_wide {
        anyhow::bail!(
            "nothing to count: give a command (`sear stat -- ./prog args`), -p PID, -t TID or -a"
        );
    }
    let aggr = Aggr::of_flags([
        a.no_aggr,
        a.per_thread,
        a.per_core,
        a.per_die,
        a.per_socket,
        a.per_node,
    ]);
    aggr.check(&opts).map_err(anyhow::Error::msg)?;
    // Over hardware events perf titles the columns of the metrics it derives from them
    // (GHz, insn per cycle, ...), or would derive, as its runtime statistics happen to
    // allow; sear's metric-only tables are those of the other events (no metric).
    let hardware = record::count::events_of(&opts).is_ok_and(|groups| {
        groups.iter().flatten().any(|e| {
            matches!(
                e.type_,
                perf_data::PERF_TYPE_HARDWARE
                    | perf_data::PERF_TYPE_HW_CACHE
                    | perf_data::PERF_TYPE_RAW
            )
        })
    });
    if a.metric_only && aggr != Aggr::Global && hardware {
        anyhow::bail!(
            "--metric-only with -A or --per-* counts only software and tracepoint events in \
             sear: perf 6.1 titles hardware events' metric columns as its statistics allow \
             (and this machine has no hardware events); give the events with -e"
        );
    }
    if opts.command.is_empty() && a.repeat > 1 {
        // perf 6.1 counts its first repeat to Ctrl-C and the others not at all, and
        // averages them (a spinning process's task-clock came out 0.01 msec
        // +- 2438108%).
        log::warn!(
            "-r {} repeats a command; without one, counting runs once",
            a.repeat
        );
    }
    let runs = if opts.command.is_empty() { 1 } else { a.repeat };
    let mut sink = open_output(&a)?;
    let mut all = Runs::default();
    let interval_ns = a.interval_print.unwrap_or(0) as f64 * 1e6;
    for _ in 0..runs {
        if a.sync {
            // SAFETY: sync(2) takes no arguments and cannot fail.
            unsafe { libc::sync() };
        }
        if let Some(pre) = &a.pre {
            let s = shell(pre)?;
            if s != 0 {
                return Ok(ExitCode::from(s));
            }
        }
        let mut intervals = Intervals::default();
        // With --interval-count, the totals as of the last interval printed.
        let mut cut: Option<Vec<Counter>> = None;
        let mut on_interval = |t: u64, totals: &[Counter], targets: &[Target]| -> io::Result<()> {
            let tick = intervals.ticks;
            if a.interval_count.is_some_and(|n| tick >= n) {
                cut.get_or_insert_with(|| intervals.totals().to_vec());
                return Ok(());
            }
            // --interval-clear: perf puts(3)s the terminal's clear on
            // stdout and prints the column titles each time.
            let shown_tick = if a.interval_clear {
                let mut out = io::stdout();
                let _ = out.write_all(b"\x1b[H\x1b[2J\n").and_then(|_| out.flush());
                0
            } else {
                tick
            };
            let text = render::stat::with_numeric(&numeric, || {
                if aggr == Aggr::Global {
                    let rows = intervals.next(totals);
                    if a.metric_only {
                        let all: Vec<&_> = rows.iter().collect();
                        render::stat::metric_only_split(
                            aggr,
                            &format,
                            &[(None, all)],
                            Some((t, shown_tick)),
                        )
                    } else {
                        render::stat::interval(&format, t, shown_tick, &rows, interval_ns)
                    }
                } else {
                    let counters = intervals.next_counters(totals);
                    let lines =
                        record::stat::split_counts(aggr, &counters, targets, opts.every_thread);
                    if a.metric_only {
                        let groups = render::stat::metric_only_groups(&lines);
                        render::stat::metric_only_split(
                            aggr,
                            &format,
                            &groups,
                            Some((t, shown_tick)),
                        )
                    } else {
                        render::stat::interval_split(
                            aggr,
                            &format,
                            t,
                            shown_tick,
                            &lines,
                            interval_ns,
                        )
                    }
                }
            });
            sink.write_all(text.as_bytes())?;
            sink.flush()
        };
        let r = match record::count::count_with(&opts, &mut on_interval) {
            Ok(mut r) => {
                if let Some(c) = cut {
                    r.counters = c;
                }
                r
            }
            Err(e) => {
                let status = e.shell_status();
                let err = anyhow::Error::new(e).context("counting events");
                if let Some(s) = status {
                    crate::ui::print_error(&err);
                    return Ok(ExitCode::from(s));
                }
                return Err(err);
            }
        };
        // As perf (psignal): a command killed by a signal is named with it.
        if let (Some(sig), Some(cmd)) = (r.signal, a.command.first()) {
            eprintln!("{}: {}", cmd.to_string_lossy(), record::signal_text(sig));
        }
        all.add(r);
        if let Some(post) = &a.post {
            let s = shell(post)?;
            if s != 0 {
                return Ok(ExitCode::from(s));
            }
        }
    }
    let status = all.exit_status();
    if let (Some(path), Some(last)) = (record_to, &all.last) {
        let file = std::fs::File::create(path).with_context(|| {
            format!("creating {} (choose another file with -o)", path.display())
        })?;
        let mut cmdline: Vec<String> = std::env::args().collect();
        if let (Some(first), Ok(exe)) = (cmdline.first_mut(), std::env::current_exe()) {
            *first = exe.display().to_string();
        }
        let version = format!("{} (sear)", env!("CARGO_PKG_VERSION"));
        record::stat_file::write(file, last, &opts, &cmdline, &version)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if a.interval_print.is_some() && !a.summary {
        // The intervals were the output (perf prints no totals with -I
        // unless --summary asks).
        return Ok(ExitCode::from(status));
    }
    // (-C alone counts those CPUs; with -a, perf names the whole system.)
    let counted = Counted::of(
        a.cpu.as_ref().map(|c| c.1.as_str()),
        a.all_cpus,
        a.tasks.pid.as_ref().map(|p| p.1.as_str()),
        a.tasks.tid.as_ref().map(|t| t.1.as_str()),
        &a.command,
    );
    let rusage = !a.command.is_empty() && !opts.attaches() && !opts.system_wide;
    let layout = Layout {
        runs,
        aggr,
        rusage,
        table: a.table,
        summary_column: a.interval_print.is_some() && !a.no_csv_summary,
        metric_only: a.metric_only,
    };
    let out = render::stat::with_numeric(&numeric, || {
        render::stat::counts(&format, &counted, &all, layout)
    });
    // A closed stderr is no reason to fail the command's status.
    if let Err(e) = sink.write_all(out.as_bytes()).and_then(|_| sink.flush()) {
        if a.output.is_some() {
            return Err(e).context("writing the counts");
        }
    }
    Ok(ExitCode::from(status))
}

/// perf's options that need hardware (or a tracepoint) this machine lacks,
/// refused with perf's words and what they need; and the combinations
/// perf refuses.
fn refuse_hardware_options(a: &StatArgs) -> Result<()> {
    if a.transaction {
        anyhow::bail!(
            "Cannot set up transaction events: -T/--transaction counts Intel TSX events \
             (cpu/cycles-t/, cpu/tx-start/, ...), which need the CPU's PMU; this machine has none"
        );
    }
    if a.smi_cost {
        anyhow::bail!(
            "freeze_on_smi is not supported: --smi-cost needs an Intel PMU with the \
             freeze_on_smi control and the msr/smi/ event"
        );
    }
    if a.iostat.is_some() {
        anyhow::bail!(
            "Unsupported uncore pmu configuration: --iostat reads the I/O uncore PMUs of \
             Intel Xeon processors, which this machine does not have"
        );
    }
    if let Some(t) = &a.cputype {
        anyhow::bail!(
            "--cputype {t} is not supported! It chooses the core type of a hybrid CPU \
             (core or atom), and this machine's CPUs are all of one type"
        );
    }
    if a.filter.is_some() {
        anyhow::bail!(if a.event.is_empty() {
            "--filter option should follow a -e tracepoint or HW tracer option"
        } else {
            "This CPU does not support address filtering: --filter applies to tracepoints \
             and hardware tracers (Intel PT, CoreSight), not to the events counted here"
        });
    }
    if a.metric_only {
        if a.repeat > 1 {
            anyhow::bail!("--metric-only is not supported with -r");
        }
        if a.per_thread {
            anyhow::bail!("--metric-only is not supported with --per-thread");
        }
        let split = a.no_aggr || a.per_core || a.per_die || a.per_socket || a.per_node;
        if a.json && split {
            anyhow::bail!(
                "--metric-only -j with -A or --per-*: perf 6.1 writes malformed JSON for \
                 these (unclosed lines, titles of metrics it does not print); use -x or the table"
            );
        }
    }
    if a.interval_clear {
        let tty = match (&a.output, a.log_fd) {
            (Some(_), _) => false,
            // SAFETY: isatty only inspects the descriptor.
            (None, Some(fd)) => unsafe { libc::isatty(fd) == 1 },
            (None, None) => std::io::IsTerminal::is_terminal(&io::stderr()),
        };
        if !tty {
            anyhow::bail!(
                "--interval-clear does not work with output (it clears a terminal; the counts \
                 go to a file or pipe here)"
            );
        }
    }
    Ok(())
}

/// `--pre`/`--post`: runs `command` with the shell, as perf's system(3)
/// does; its exit status.
fn shell(command: &str) -> Result<u8> {
    let status = std::process::Command::new("/bin/sh")
        .args(["-c", command])
        .status()
        .with_context(|| format!("running `{command}`"))?;
    Ok(status.code().map_or(1, |c| c as u8))
}
