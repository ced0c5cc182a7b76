//! `sear record`: perf record's flags into record::Options, the output file
//! (perf.data.old kept as perf does), and perf's closing lines.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

use crate::cli::RecordArgs;

pub(crate) fn options(a: &RecordArgs, quiet: bool) -> Result<record::Options> {
    let freq = a.freq.as_deref().map(record::Freq::parse).transpose()?;
    let cpus = a.cpu.clone().map(|c| c.0);
    let mut cmdline: Vec<String> = std::env::args().collect();
    if let (Some(first), Ok(exe)) = (cmdline.first_mut(), std::env::current_exe()) {
        *first = exe.display().to_string();
    }
    let call_graph = match &a.call_graph {
        Some(cg) => record::CallGraph::parse(cg)?,
        None if a.g => crate::config::record_call_graph()?,
        None => record::CallGraph::None,
    };
    let opts = record::Options {
        events: a.event.clone(),
        filters: Vec::new(),
        freq,
        period: a.count,
        call_graph,
        command: a.command.clone(),
        pids: a.tasks.pids(),
        tids: a.tasks.tids(),
        system_wide: a.all_cpus,
        cpus,
        mmap_pages: match &a.mmap_pages {
            Some(m) => record::parse_mmap_pages(m)?,
            None => record::DEFAULT_MMAP_PAGES,
        },
        switch_events: a.switch_events,
        switch_output_event: None,
        off_cpu: a.off_cpu,
        build_ids: !a.no_buildid,
        // As perf: -t samples only the threads named.
        inherit: !a.no_inherit && a.tasks.tid.is_none(),
        // perf records data addresses with -d, and with an explicit
        // --call-graph dwarf (not -g made dwarf by its config).
        sample_address: a.data
            || (a.call_graph.is_some() && matches!(call_graph, record::CallGraph::Dwarf(_))),
        record_period: a.period,
        extra_sample_type: [
            (a.sample_cpu, perf_data::PERF_SAMPLE_CPU),
            (a.weight, perf_data::PERF_SAMPLE_WEIGHT_STRUCT),
            (a.phys_data, perf_data::PERF_SAMPLE_PHYS_ADDR),
            (a.data_page_size, perf_data::PERF_SAMPLE_DATA_PAGE_SIZE),
            (a.code_page_size, perf_data::PERF_SAMPLE_CODE_PAGE_SIZE),
            (
                a.raw_samples,
                perf_data::PERF_SAMPLE_RAW | perf_data::PERF_SAMPLE_CPU,
            ),
            (a.sample_identifier, perf_data::PERF_SAMPLE_IDENTIFIER),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, bit)| acc | bit),
        all_user: a.all_user,
        all_kernel: a.all_kernel,
        running_time: a.running_time,
        inherit_stat: a.stat,
        bpf_event: !a.no_bpf_event,
        compress: a.compress.level,
        cmdline,
        version: format!("{} (sear)", env!("CARGO_PKG_VERSION")),
        delay_ms: a.delay.filter(|&d| d > 0).map(|d| d as u64),
        max_size: a.max_size,
        clockid: a.clockid,
        regs_intr: a
            .intr_regs
            .as_deref()
            .map(|r| record::parse_regs("-I", r))
            .transpose()?,
        regs_user: a
            .user_regs
            .as_deref()
            .map(|r| record::parse_regs("--user-regs", r))
            .transpose()?,
        exclude_callchain_kernel: a.user_callchains,
        exclude_callchain_user: a.kernel_callchains,
        group: a.group,
        no_samples: a.no_samples,
        strict_freq: a.strict_freq,
        switch_output: a
            .switch_output
            .as_deref()
            .map(parse_switch_output)
            .transpose()?,
        per_thread: a.per_thread,
        sample_time: a.timestamp,
        no_buffering: a.no_buffering,
        build_id_mmap: a.buildid_mmap,
        build_id_all: a.buildid_all,
        tail_synthesize: a.tail_synthesize,
        namespaces: a.namespaces,
        all_cgroups: a.all_cgroups,
        cgroups: a.cgroup.clone(),
        skip_ended: false,
        control: a.control.clone(),
        start_disabled: a.delay == Some(-1),
        synth: a.synth.unwrap_or_default(),
        overwrite: a.overwrite,
        quiet,
    };
    let mut opts = opts;
    if let Some(u) = &a.uid {
        opts.pids.extend(pids_of_user(u)?);
        opts.skip_ended = true;
    }
    if opts.switch_output.is_some() {
        // As perf: no build ids with --switch-output (each switch would
        // pay for them), unless asked for with --no-no-buildid.
        opts.build_ids = a.no_no_buildid;
    }
    opts.filters = event_filters(a.event.len(), !a.filter.is_empty() || a.exclude_perf)?;
    if let Some(e) = &a.switch_output_event {
        // As perf: the event switches as the signal does (and selects
        // --switch-output=signal when no other way is given).
        record::event::parse_list(e)
            .map_err(|err| anyhow::anyhow!("--switch-output-event: {err}"))?;
        opts.switch_output_event = Some(e.clone());
        let sw = opts.switch_output.get_or_insert_with(Default::default);
        sw.signal = true;
        opts.build_ids = a.no_no_buildid;
    }
    if a.debuginfod.is_some() && !quiet {
        eprintln!(
            "WARNING: --debuginfod: sear record does not fetch debug files (reports find them \
             by build id)"
        );
    }
    if let Some(v) = &a.vmlinux {
        if !v.is_file() {
            bail!("Invalid file: {} (--vmlinux)", v.display());
        }
    }
    if a.branch_any || a.branch_filter.is_some() {
        bail!(
            "-b/-j: branch stacks need a hardware PMU that records branches (Intel LBR, \
             AMD BRS, Arm BRBE); this machine has none (virtual machines rarely do). \
             Record without them, or on bare metal"
        );
    }
    if a.snapshot.is_some() || a.aux_sample.is_some() || a.kcore {
        bail!(
            "-S/--snapshot, --aux-sample and --kcore record AUX area traces (Intel PT, Arm \
             CoreSight): they need such a hardware tracer; this machine has none (virtual \
             machines rarely do)"
        );
    }
    if opts.command.is_empty()
        && opts.pids.is_empty()
        && opts.tids.is_empty()
        && !opts.system_wide
        && opts.cpus.is_none()
    {
        bail!("nothing to record: give a command (`sear record -- ./prog args`), -p PID, -t TID or -a");
    }
    Ok(opts)
}

/// `--switch-max-files N`: `p` joins the files kept; the oldest beyond N
/// are deleted (0: keep all).
fn keep_newest(p: PathBuf, kept: &mut std::collections::VecDeque<PathBuf>, max: usize) {
    if max == 0 {
        return;
    }
    kept.push_back(p);
    while kept.len() > max {
        if let Some(old) = kept.pop_front() {
            let _ = std::fs::remove_file(old);
        }
    }
}

/// `-u/--uid`: the processes of a user (a name or a number), as perf lists
/// them when it starts (sear itself left out).
fn pids_of_user(u: &str) -> Result<Vec<i32>> {
    let uid: u32 = match u.parse() {
        Ok(n) => n,
        Err(_) => {
            let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
            passwd
                .lines()
                .map(|l| l.split(':').collect::<Vec<_>>())
                .find(|f| f.first() == Some(&u))
                .and_then(|f| f.get(2)?.parse().ok())
                .ok_or_else(|| anyhow::anyhow!("-u {u}: no such user (not in /etc/passwd)"))?
        }
    };
    let me = std::process::id() as i32;
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc")
        .context("listing /proc")?
        .flatten()
    {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
        let real = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next()?.parse::<u32>().ok());
        if real == Some(uid) && pid != me {
            pids.push(pid);
        }
    }
    if pids.is_empty() {
        bail!("-u {u}: user {uid} runs no process");
    }
    pids.sort_unstable();
    Ok(pids)
}

/// `--switch-output`'s value as perf takes it: `signal` (SIGUSR2), a size
/// (a number with B, K, M or G) or a time (with s, m, h or d).
fn parse_switch_output(v: &str) -> Result<record::SwitchOutput> {
    let mut sw = record::SwitchOutput::default();
    if v == "signal" {
        sw.signal = true;
        return Ok(sw);
    }
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: Option<u64> = num.parse().ok();
    match (n, unit) {
        (Some(n), "B" | "K" | "M" | "G") if n > 0 => {
            let shift = match unit {
                "B" => 0,
                "K" => 10,
                "M" => 20,
                _ => 30,
            };
            sw.size = n.checked_mul(1 << shift);
        }
        (Some(n), "s" | "m" | "h" | "d") if n > 0 => {
            let secs = match unit {
                "s" => 1,
                "m" => 60,
                "h" => 3600,
                _ => 86400,
            };
            sw.time = n.checked_mul(secs).map(std::time::Duration::from_secs);
        }
        _ => {}
    }
    if sw.size.is_none() && sw.time.is_none() {
        bail!(
            "--switch-output={v}: expected `signal` (switch on SIGUSR2), a size (100M: B, K, M \
             or G) or a time (30s: s, m, h or d)"
        );
    }
    Ok(sw)
}

/// `PATH.YYYYMMDDhhmmsscc`: perf's --timestamp-filename name (local time,
/// to the hundredth of a second).
/// (A name already taken, by a switch in the same hundredth of a second,
/// waits for the next: no file is overwritten.)
fn timestamped(path: &Path) -> PathBuf {
    loop {
        let now = jiff::Zoned::now();
        let stamp = format!(
            "{}{:02}",
            now.strftime("%Y%m%d%H%M%S"),
            now.subsec_nanosecond() / 10_000_000
        );
        let mut to = path.as_os_str().to_owned();
        to.push(format!(".{stamp}"));
        let to = PathBuf::from(to);
        if !to.exists() {
            return to;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The output file, an existing non-empty regular file kept as FILE.old
/// (as perf does). Returns the file and the name it was moved to.
fn create_output(path: &Path) -> Result<(File, Option<PathBuf>)> {
    let mut old = None;
    if let Ok(m) = std::fs::metadata(path) {
        if m.is_file() && m.len() > 0 {
            let mut o = path.as_os_str().to_owned();
            o.push(".old");
            let o = PathBuf::from(o);
            std::fs::rename(path, &o).with_context(|| {
                format!(
                    "renaming the existing {} to {}",
                    path.display(),
                    o.display()
                )
            })?;
            old = Some(o);
        }
    }
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .with_context(|| format!("creating {} (choose another file with -o)", path.display()))?;
    Ok((f, old))
}

pub fn run(a: RecordArgs, quiet: bool) -> Result<ExitCode> {
    super::check_cgroups_follow_events(!a.cgroup.is_empty())?;
    let opts = options(&a, quiet)?;
    if let Some(prio) = a.realtime {
        set_realtime(prio)?;
    }
    if a.dry_run {
        record::check(&opts)?;
        return Ok(ExitCode::SUCCESS);
    }
    let pipe = a.output == Path::new("-");
    let (output, old) = if pipe {
        (record::Output::Pipe(Box::new(io::stdout())), None)
    } else {
        let (f, old) = create_output(&a.output)?;
        (record::Output::File(f), old)
    };
    let name = if pipe {
        "stdout".to_string()
    } else {
        a.output.display().to_string()
    };
    // --switch-output: each finished file gets its time in its name (as
    // with --timestamp-filename); --switch-max-files keeps the newest N.
    let switching = opts.switch_output.is_some() && !pipe;
    let mut kept: std::collections::VecDeque<PathBuf> = Default::default();
    let max_files = a.switch_max_files.unwrap_or(0);
    let mut next_file = || -> io::Result<File> {
        let to = timestamped(&a.output);
        std::fs::rename(&a.output, &to)?;
        if !quiet {
            eprintln!("[ sear record: Dump {} ]", to.display());
        }
        keep_newest(to, &mut kept, max_files);
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&a.output)
    };
    let switcher: Option<record::Switcher<'_>> = if switching {
        Some(&mut next_file)
    } else {
        None
    };
    let summary = match record::record_switching(&opts, output, switcher) {
        Ok(s) => s,
        Err(e) => {
            let status = e.shell_status();
            let empty = std::fs::metadata(&a.output).is_ok_and(|m| m.is_file() && m.len() == 0);
            if (status.is_some() || empty) && !pipe {
                // Nothing was recorded: put things back as they were.
                let _ = std::fs::remove_file(&a.output);
                if let Some(o) = &old {
                    let _ = std::fs::rename(o, &a.output);
                }
            }
            let disk_full = matches!(&e, record::Error::Write(perf_data::Error::Io { source, .. })
                if source.kind() == io::ErrorKind::StorageFull);
            let err = anyhow::Error::new(e);
            let err = if disk_full {
                err.context(format!(
                    "recording into {name}: the disk is full; what was recorded until then is in {name} \
                     (readable); free some space or record elsewhere with -o"
                ))
            } else {
                err.context(format!("recording into {name}"))
            };
            if let Some(s) = status {
                crate::ui::print_error(&err);
                return Ok(ExitCode::from(s));
            }
            return Err(err);
        }
    };
    if !a.no_buildid_cache {
        cache_build_ids(&summary.build_ids);
    }
    // --timestamp-filename: the file gets the time it was finished in its
    // name, as perf names it (local time, to the hundredth of a second).
    let dumped = if (a.timestamp_filename || switching) && !pipe {
        let to = timestamped(&a.output);
        std::fs::rename(&a.output, &to)
            .with_context(|| format!("renaming {} to {}", a.output.display(), to.display()))?;
        if switching {
            keep_newest(to.clone(), &mut kept, max_files);
        }
        Some(to.display().to_string())
    } else {
        None
    };
    if !quiet {
        let shown = match &dumped {
            Some(_) => format!("{name}.<timestamp>"),
            None => name.clone(),
        };
        let _ = render::record::write_summary(
            &mut io::stderr().lock(),
            &summary,
            &shown,
            dumped.as_deref(),
        );
    }
    Ok(ExitCode::from(summary.exit_status.unwrap_or(0)))
}

/// Adds the binaries samples hit to perf's build-id cache, as perf record
/// does (unless `-N`), so a later rebuild or removal does not change the
/// report, nor a container's end (its binaries, not the host's files at
/// their paths). A file whose build id changed since it was recorded is
/// left out; failures are warnings (the recording is made).
fn cache_build_ids(ids: &[(record::buildid::Hit, Vec<u8>)]) {
    use symbols::cache::{self, Content};
    let Some(root) = symbols::buildid_dir() else {
        return;
    };
    let vdso = symbols::read_own_vdso().ok();
    for (hit, id) in ids {
        let name = &hit.name;
        // (A container process's file is copied as it saw it, through the
        // file the recorder opened in its mount namespace.)
        let source = std::path::PathBuf::from(hit.source());
        let what = match name.as_str() {
            cache::KALLSYMS => Content::Kallsyms,
            cache::VDSO => match &vdso {
                Some(b) => Content::Vdso(b),
                None => continue,
            },
            n if n.starts_with('/') => {
                let have = symbols::read_build_id(&source).ok().flatten();
                if have.as_deref() != Some(id.as_slice()) {
                    continue;
                }
                Content::File(&source)
            }
            _ => continue,
        };
        if let Err(e) = cache::add(&root, name, id, what, false) {
            log::warn!(
                "{}: could not add {name} to the build-id cache: {e} (record with -N to skip it)",
                root.display()
            );
        }
    }
}

/// `-r PRIO`: this process (and the command it starts) under SCHED_FIFO.
fn set_realtime(prio: i32) -> Result<()> {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: `param` is a valid sched_param for the call's duration.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        bail!(
            "-r {prio}: could not switch to SCHED_FIFO priority {prio}: {} \
             (priorities run from 1 to 99, and need root or CAP_SYS_NICE)",
            io::Error::last_os_error()
        );
    }
    Ok(())
}

/// The tracepoint filter of each `-e` (perf applies `--filter F` and
/// `--exclude-perf` to the events of the `-e` before them, in command-line
/// order; several join as `(a) && (b)`).
fn event_filters(n_events: usize, any: bool) -> Result<Vec<Option<String>>> {
    let mut out = vec![None::<String>; n_events];
    if !any {
        return Ok(out);
    }
    let args: Vec<String> = std::env::args().skip(1).take_while(|a| a != "--").collect();
    let mut last: Option<usize> = None;
    let mut seen = 0usize;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let value = |long: &str, short: Option<&str>| -> Option<(Option<String>, usize)> {
            if a == long || short.is_some_and(|s| a == s) {
                return Some((args.get(i + 1).cloned(), 2));
            }
            if let Some(v) = a.strip_prefix(&format!("{long}=")) {
                return Some((Some(v.to_owned()), 1));
            }
            match short {
                Some(s) if a.starts_with(s) && !a.starts_with("--") && a.len() > s.len() => {
                    Some((Some(a[s.len()..].to_owned()), 1))
                }
                _ => None,
            }
        };
        let mut add = |f: String| -> Result<()> {
            let Some(j) = last.filter(|&j| j < n_events) else {
                bail!(
                    "{} option should follow a -e tracepoint option: it filters the \
                     tracepoints named before it (e.g. `-e sched:sched_switch --filter \
                     'prev_pid != 0'`)",
                    if a.starts_with("--filter") {
                        "--filter"
                    } else {
                        "--exclude-perf"
                    }
                );
            };
            out[j] = Some(match out[j].take() {
                None => f,
                Some(old) => format!("({old}) && ({f})"),
            });
            Ok(())
        };
        if let Some((_, step)) = value("--event", Some("-e")) {
            last = Some(seen);
            seen += 1;
            i += step;
        } else if let Some((v, step)) = value("--filter", None) {
            add(v.unwrap_or_default())?;
            i += step;
        } else if a == "--exclude-perf" {
            add(format!("common_pid != {}", std::process::id()))?;
            i += 1;
        } else {
            i += 1;
        }
    }
    Ok(out)
}
