//! Counting mode (`perf stat`): events opened without sampling, read once
//! when the command ends (or the attached processes end, or a signal asks
//! to stop).
//!
//! A command's events are opened for its pid before it execs, with inherit
//! (children and threads are counted; their counts fold into ours when they
//! exit) and enable_on_exec, so counting starts exactly at the command.
//! Each event carries TOTAL_TIME_ENABLED and TOTAL_TIME_RUNNING, which show
//! when the kernel multiplexed it (running < enabled).

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Instant;

use perf_data::attr::flag;
use perf_data::{EventAttr, PERF_FORMAT_TOTAL_TIME_ENABLED, PERF_FORMAT_TOTAL_TIME_RUNNING};

use crate::error::{Error, Result};
use crate::event::{self, EventSpec};
use crate::{control, open_error, synth, sys};

/// perf stat's default events on a machine like this one (the hardware
/// ones show as not supported where there is no PMU).
pub const DEFAULT_EVENTS: &str =
    "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses";

/// The events perf stat's `-d`, `-dd` and `-ddd` add, level by level.
pub const DETAILED_EVENTS: [&str; 3] = [
    "L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses",
    "L1-icache-loads,L1-icache-load-misses,dTLB-loads,dTLB-load-misses,iTLB-loads,iTLB-load-misses",
    "L1-dcache-prefetches,L1-dcache-prefetch-misses",
];

/// What to count.
#[derive(Debug, Clone, Default)]
pub struct CountOptions {
    /// `-e` values; empty: [`DEFAULT_EVENTS`].
    pub events: Vec<String>,
    /// `-d` repeated: the cache events of [`DETAILED_EVENTS`] up to this
    /// level, after the others.
    pub detail: u8,
    /// `-n/--null`: no counters at all, only the times.
    pub null: bool,
    /// With system-wide counting: only these CPUs (`-C`).
    pub cpus: Option<Vec<u32>>,
    /// Stop after this many milliseconds (`--timeout`): the command gets
    /// SIGTERM, as perf sends it.
    pub timeout_ms: Option<u64>,
    pub command: Vec<OsString>,
    /// Running processes to count (`-p`), all their threads.
    pub pids: Vec<i32>,
    /// Running threads to count (`-t`), each alone.
    pub tids: Vec<i32>,
    pub system_wide: bool,
    /// With `system_wide`: every thread of the system counted alone
    /// instead of every CPU (perf's `-a --per-thread`); threads started
    /// later are not counted, as in perf.
    pub every_thread: bool,
    /// Do not follow children and new threads (`--no-inherit`).
    pub no_inherit: bool,
    /// Read the counters every this many milliseconds (`-I`) and hand
    /// them to the caller's callback.
    pub interval_ms: Option<u64>,
    /// `-D/--delay`: the counters start this many milliseconds after the
    /// command (or, without one, after they are opened); perf's "Events
    /// disabled" and "Events enabled" go to stderr unless `quiet`.
    pub delay_ms: Option<u64>,
    pub quiet: bool,
    /// `--all-user` / `--all-kernel`: every counter counts only there.
    pub all_user: bool,
    pub all_kernel: bool,
    /// `-g/--group`: every event in one group (perf's `--group`).
    pub group: bool,
    /// `-G/--cgroup`: the cgroup of each event, in order (an empty name:
    /// none); a single name applies to every event, as perf's.
    pub cgroups: Vec<String>,
    /// `--for-each-cgroup`: every event once per cgroup, cgroup by cgroup.
    pub for_each_cgroup: Vec<String>,
    /// `--control`: commands read while counting (see [`control`]).
    pub control: Option<String>,
    /// `-D -1`: the counters start disabled (for `--control enable`).
    pub start_disabled: bool,
}

impl CountOptions {
    /// Whether the counting attaches to running tasks (`-p`, `-t`).
    pub fn attaches(&self) -> bool {
        !self.pids.is_empty() || !self.tids.is_empty()
    }

    /// Whether a task counting attached to still runs.
    fn attached_alive(&self) -> bool {
        self.pids
            .iter()
            .chain(&self.tids)
            .any(|&p| sys::task_exists(p))
    }
}

/// One event's totals (summed over the CPUs or threads it was opened on).
#[derive(Debug, Clone)]
pub struct Counter {
    pub spec: EventSpec,
    /// The cgroup it counts in (`-G`, `--for-each-cgroup`), by the name
    /// given.
    pub cgroup: Option<String>,
    /// False when the kernel has no such event here (no PMU).
    pub supported: bool,
    pub value: u64,
    pub enabled: u64,
    pub running: u64,
    /// The same by target (a CPU with -a, a thread with -p), in the order
    /// of [`CountRun::targets`]; empty for a command.
    pub parts: Vec<Part>,
}

/// One target's count of an event.
#[derive(Debug, Clone, Copy, Default)]
pub struct Part {
    /// Index into [`CountRun::targets`].
    pub target: usize,
    pub value: u64,
    pub enabled: u64,
    pub running: u64,
}

/// What an event was opened on: a thread (`cpu` -1) or a CPU (`tid` -1).
#[derive(Debug, Clone)]
pub struct Target {
    pub tid: i32,
    pub cpu: i32,
    /// The thread's name, for `--per-thread`.
    pub comm: String,
}

/// What one run counted.
#[derive(Debug, Clone)]
pub struct CountRun {
    pub counters: Vec<Counter>,
    pub targets: Vec<Target>,
    /// Wall-clock time from the command's start to its end, in ns.
    pub wall_ns: u64,
    /// CPU seconds of the command in user and system mode (wait4).
    pub user_secs: f64,
    pub sys_secs: f64,
    /// The command's exit status as a shell reports it.
    pub exit_status: Option<u8>,
    /// The signal that ended the command, if one did.
    pub signal: Option<i32>,
    /// The command's process id, where one was started.
    pub command_pid: Option<i32>,
    /// The targets are every thread of the system ([`CountOptions::every_thread`]).
    pub every_thread: bool,
}

/// The events of `opts`, parsed (an unknown name is an error).
pub fn events_of(opts: &CountOptions) -> Result<Vec<Vec<EventSpec>>> {
    let mut groups = Vec::new();
    if opts.null {
        return Ok(Vec::new());
    }
    if opts.events.is_empty() {
        // As perf: system-wide, CPU time is cpu-clock (task-clock counts
        // only the tasks it follows).
        let defaults = if opts.system_wide {
            DEFAULT_EVENTS.replacen("task-clock", "cpu-clock", 1)
        } else {
            DEFAULT_EVENTS.to_string()
        };
        groups.extend(event::parse_list(&defaults)?);
    } else {
        for e in &opts.events {
            groups.extend(event::parse_list(e)?);
        }
    }
    for level in DETAILED_EVENTS.iter().take(usize::from(opts.detail)) {
        groups.extend(event::parse_list(level)?);
    }
    for m in groups.iter_mut().flat_map(|g| g.members.iter_mut()) {
        if opts.all_user {
            m.exclude_kernel = true;
        }
        if opts.all_kernel {
            m.exclude_user = true;
        }
    }
    let groups: Vec<Vec<EventSpec>> = groups.into_iter().map(|g| g.members).collect();
    if opts.group {
        return Ok(vec![groups.into_iter().flatten().collect()]);
    }
    Ok(groups)
}

fn counting_attr(e: &EventSpec, leader: bool, enable_on_exec: bool, inherit: bool) -> EventAttr {
    let mut flags = 0u64;
    if leader {
        flags |= 1 << flag::DISABLED;
        if enable_on_exec {
            flags |= 1 << flag::ENABLE_ON_EXEC;
        }
    }
    if inherit {
        flags |= 1 << flag::INHERIT;
    }
    if e.exclude_user {
        flags |= 1 << flag::EXCLUDE_USER;
    }
    if e.exclude_kernel {
        flags |= 1 << flag::EXCLUDE_KERNEL;
    }
    if e.exclude_hv {
        flags |= 1 << flag::EXCLUDE_HV;
    }
    EventAttr {
        type_: e.type_,
        size: 128,
        config: e.config,
        read_format: PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
        flags,
        ..Default::default()
    }
}

fn not_supported(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV)
    )
}

/// Counts the events of `opts` once: runs the command (if any) to its end,
/// or until SIGINT/SIGTERM for processes and system-wide counting.
pub fn count(opts: &CountOptions) -> Result<CountRun> {
    count_with(opts, &mut |_, _, _| Ok(()))
}

/// What `count_with`'s callback gets: the time since counting started,
/// the totals so far, and the targets their parts were counted on.
pub type OnInterval<'a> = dyn FnMut(u64, &[Counter], &[Target]) -> io::Result<()> + 'a;

/// [`count`], calling `on_interval` with the running totals every
/// `opts.interval_ms` and once more at the end (the last, partial
/// interval). An error from the callback (say, a closed pipe) stops the
/// counting: the command is killed and the error returned.
pub fn count_with(opts: &CountOptions, on_interval: &mut OnInterval) -> Result<CountRun> {
    sys::install_signal_handlers().map_err(|e| Error::sys("installing signal handlers", e))?;
    let r = count_inner(opts, on_interval);
    sys::restore_signal_handlers();
    r
}

/// The totals of every counter now.
fn read_all(
    counters: &[Counter],
    fds: &[Vec<(usize, OwnedFd)>],
    by_target: bool,
) -> Result<Vec<Counter>> {
    let mut out = counters.to_vec();
    for (c, mine) in out.iter_mut().zip(fds) {
        c.value = 0;
        c.enabled = 0;
        c.running = 0;
        c.parts.clear();
        for (target, fd) in mine {
            let [v, en, run] =
                sys::read_count(fd).map_err(|e| Error::sys("reading a counter", e))?;
            c.value += v;
            c.enabled += en;
            c.running += run;
            if by_target {
                c.parts.push(Part {
                    target: *target,
                    value: v,
                    enabled: en,
                    running: run,
                });
            }
        }
    }
    Ok(out)
}

/// The groups of `opts` with each event's cgroup (`-G`,
/// `--for-each-cgroup`), and the cgroups' directory descriptors by name.
type CgroupEvents = (Vec<Vec<(EventSpec, Option<String>)>>, sys::CgroupDirs);

fn with_cgroups(opts: &CountOptions, groups: Vec<Vec<EventSpec>>) -> Result<CgroupEvents> {
    let plain = |groups: Vec<Vec<EventSpec>>| -> Vec<Vec<(EventSpec, Option<String>)>> {
        groups
            .into_iter()
            .map(|g| g.into_iter().map(|e| (e, None)).collect())
            .collect()
    };
    if opts.cgroups.is_empty() && opts.for_each_cgroup.is_empty() {
        let none = sys::CgroupDirs::open([]).map_err(Error::Options)?;
        return Ok((plain(groups), none));
    }
    if !opts.cgroups.is_empty() && !opts.for_each_cgroup.is_empty() {
        return Err(Error::Options(
            "--for-each-cgroup cannot be used with -G/--cgroup: use one of them".into(),
        ));
    }
    if !opts.system_wide {
        return Err(Error::Options(
            "both cgroup and no-aggregation modes only available in system-wide mode: add -a \
             (or -C CPUS) to count events in cgroups"
                .into(),
        ));
    }
    if !opts.cgroups.is_empty() && opts.events.is_empty() {
        return Err(Error::Options(
            "must define events before cgroups: give -e EVENTS before -G".into(),
        ));
    }
    let mut out: Vec<Vec<(EventSpec, Option<String>)>> = Vec::new();
    if opts.for_each_cgroup.is_empty() {
        let n: usize = groups.iter().map(Vec::len).sum();
        let mut names = sys::cgroup_of_events(&opts.cgroups, n).into_iter();
        for g in groups {
            out.push(g.into_iter().map(|e| (e, names.next().flatten())).collect());
        }
    } else {
        for name in &opts.for_each_cgroup {
            for g in &groups {
                out.push(g.iter().map(|e| (e.clone(), Some(name.clone()))).collect());
            }
        }
    }
    let fds = sys::CgroupDirs::open(out.iter().flatten().filter_map(|(_, c)| c.as_ref()))
        .map_err(Error::Options)?;
    Ok((out, fds))
}

fn count_inner(opts: &CountOptions, on_interval: &mut OnInterval) -> Result<CountRun> {
    let (groups, cgroup_fds) = with_cgroups(opts, events_of(opts)?)?;
    let mut control = opts
        .control
        .as_deref()
        .map(control::Control::open)
        .transpose()?;
    if opts.command.is_empty() && !opts.attaches() && !opts.system_wide {
        return Err(Error::Options(
            "nothing to count: give a command (`sear stat -- COMMAND`), -p PID, -t TID or -a"
                .into(),
        ));
    }
    // The system's threads as they are before the command starts (perf
    // makes its thread map first, so the command is not among them).
    let every_thread = opts.system_wide && opts.every_thread;
    let all_threads = every_thread.then(synth::all_threads);
    let mut child = crate::start_stopped(&opts.command)?;
    let command_pid = child.as_ref().map(|c| c.pid);
    // (pid, cpu) pairs to open every event on.
    let targets: Vec<(i32, i32)> = if let Some(all) = all_threads {
        all.into_iter().map(|t| (t, -1)).collect()
    } else if opts.system_wide {
        let online = synth::online_cpus();
        if let Some(c) = opts.cpus.iter().flatten().find(|c| !online.contains(c)) {
            return Err(Error::Options(format!("-C: CPU {c} is not online")));
        }
        online
            .into_iter()
            .filter(|c| opts.cpus.as_ref().is_none_or(|l| l.contains(c)))
            .map(|c| (-1, c as i32))
            .collect()
    } else if opts.attaches() {
        let mut t = Vec::new();
        for &p in opts.pids.iter().chain(&opts.tids) {
            if !sys::task_exists(p) {
                return Err(Error::NoSuchTask(p));
            }
        }
        for &p in &opts.pids {
            t.extend(synth::threads_of(p).into_iter().map(|tid| (tid, -1)));
        }
        t.extend(opts.tids.iter().map(|&tid| (tid, -1)));
        t
    } else {
        vec![(child.as_ref().map_or(-1, |c| c.pid), -1)]
    };
    let delayed = opts.delay_ms.filter(|&d| d > 0);
    let on_exec = child.is_some()
        && !opts.attaches()
        && !opts.system_wide
        && delayed.is_none()
        && !opts.start_disabled;
    let inherit = !opts.no_inherit;
    let by_target = !on_exec;
    let target_list: Vec<Target> = targets
        .iter()
        .map(|&(tid, cpu)| Target {
            tid,
            cpu,
            comm: if tid > 0 {
                std::fs::read_to_string(format!("/proc/{tid}/comm"))
                    .map(|c| c.trim_end().to_owned())
                    .unwrap_or_default()
            } else {
                String::new()
            },
        })
        .collect();

    let mut counters = Vec::new();
    let mut fds: Vec<Vec<(usize, OwnedFd)>> = Vec::new();
    let mut leaders: Vec<(usize, usize)> = Vec::new();
    let fail = |child: &mut Option<sys::Child>, e: Error| {
        if let Some(c) = child {
            c.kill(libc::SIGKILL);
        }
        e
    };
    for g in &groups {
        let first = counters.len();
        // Per target: the fd of the group's leader, once opened.
        let mut leader_fd: Vec<Option<i32>> = vec![None; targets.len()];
        for (i, (e, cgroup)) in g.iter().enumerate() {
            let mut mine = Vec::new();
            let mut supported = true;
            let cgroup_fd = cgroup_fds.fd(cgroup.as_ref());
            for (t, &(pid, cpu)) in targets.iter().enumerate() {
                let leader = i == 0 || leader_fd[t].is_none();
                let attr = counting_attr(e, leader, on_exec, inherit);
                let group = if leader {
                    -1
                } else {
                    leader_fd[t].unwrap_or(-1)
                };
                let opened = match cgroup_fd {
                    Some(cg) => {
                        sys::perf_event_open_flags(&attr, cg, cpu, group, sys::FLAG_PID_CGROUP)
                    }
                    None => sys::perf_event_open(&attr, pid, cpu, group),
                };
                match opened {
                    Ok(fd) => {
                        if leader {
                            leader_fd[t] = Some(fd.as_raw_fd());
                            leaders.push((fds.len(), mine.len()));
                        }
                        mine.push((t, fd));
                    }
                    Err(err) if not_supported(&err) => {
                        supported = false;
                        break;
                    }
                    // A thread of -p, or of the system, that ended meanwhile.
                    Err(err)
                        if err.raw_os_error() == Some(libc::ESRCH)
                            && (opts.attaches() || every_thread) => {}
                    Err(err) => return Err(fail(&mut child, open_error(e, pid, cpu, err, false))),
                }
            }
            if !supported {
                mine.clear();
                leaders.retain(|&(f, _)| f != fds.len());
            }
            counters.push(Counter {
                spec: e.clone(),
                cgroup: cgroup.clone(),
                supported,
                value: 0,
                enabled: 0,
                running: 0,
                parts: Vec::new(),
            });
            fds.push(mine);
        }
        // As perf: a group whose leader the kernel lacks is an error; one
        // that lacks a member counts none of the others (`<not counted>`).
        if g.len() > 1 && !counters[first].supported {
            return Err(fail(
                &mut child,
                Error::GroupLeaderUnsupported(counters[first].spec.name.clone()),
            ));
        }
        if counters[first..].iter().any(|c| !c.supported) {
            for f in fds.iter_mut().skip(first) {
                f.clear();
            }
            leaders.retain(|&(f, _)| f < first);
        }
    }

    // The leaders with their CPUs (-1 for a task's counter).
    let leader_fds = |fds: &[Vec<(usize, OwnedFd)>]| -> Vec<(i32, RawFd)> {
        leaders
            .iter()
            .filter_map(|&(f, k)| fds.get(f).and_then(|v| v.get(k)))
            .map(|(t, fd)| (targets[*t].1, fd.as_raw_fd()))
            .collect()
    };
    let enable = |fds: &[Vec<(usize, OwnedFd)>]| -> Result<()> {
        sys::on_their_cpus(&leader_fds(fds), sys::enable_raw)
            .map_err(|e| Error::sys("enabling the events", e))
    };
    if !on_exec && delayed.is_none() && !opts.start_disabled {
        enable(&fds)?;
    }
    if opts.start_disabled && !opts.quiet {
        eprintln!("Events disabled");
    }
    // --control: serves the commands that came; true on `stop`.
    // (Asked again before each wait: a control pipe whose writer closed
    // is polled no more.)
    let ctl_fds = |c: &Option<control::Control>| -> Vec<RawFd> {
        c.iter().filter_map(|c| c.poll_fd()).collect()
    };
    let no_command = child.is_none();
    let serve = |control: &mut Option<control::Control>| -> bool {
        let Some(c) = control.as_mut() else {
            return false;
        };
        let mut stop = false;
        for cmd in c.commands() {
            match &cmd {
                control::Command::Enable(_) | control::Command::Disable(_) => {
                    let on = matches!(cmd, control::Command::Enable(_));
                    let op = if on {
                        sys::enable_raw
                    } else {
                        sys::disable_raw
                    };
                    if let Err(e) = sys::on_their_cpus(&leader_fds(&fds), op) {
                        log::warn!("--control: {e}");
                    }
                    if !opts.quiet {
                        eprintln!("Events {}", if on { "enabled" } else { "disabled" });
                    }
                }
                control::Command::Evlist => {
                    for c in &counters {
                        eprintln!("{}", c.spec.name);
                    }
                }
                // (perf stat ends on `stop` only when it runs no command.)
                control::Command::Stop => stop = no_command,
                control::Command::Snapshot | control::Command::Ping => {}
            }
            c.ack();
        }
        stop
    };
    let mut start = Instant::now();
    if let Some(ms) = delayed {
        // As perf: the command runs, the counters wait (and the elapsed
        // time counts from when they start).
        if !opts.quiet {
            eprintln!("Events disabled");
        }
        if let Some(c) = &mut child {
            if let Err(e) = c.go() {
                return Err(Error::exec(&opts.command[0], e));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(ms));
        enable(&fds)?;
        start = Instant::now();
        if !opts.quiet {
            eprintln!("Events enabled");
        }
    }
    let mut exit_raw = None;
    let (mut user_secs, mut sys_secs) = (0.0, 0.0);
    if let Some(ms) = opts.interval_ms {
        if let Some(c) = &mut child {
            if let Err(e) = c.go() {
                return Err(Error::exec(&opts.command[0], e));
            }
        }
        let every = std::time::Duration::from_millis(ms.max(1));
        let mut next = start + every;
        let ended = |child: &mut Option<sys::Child>| -> Result<Option<(i32, f64, f64)>> {
            match child {
                Some(c) => c
                    .try_wait_rusage()
                    .map_err(|e| Error::sys("waiting for the command", e)),
                None => Ok((sys::stop_signal().is_some()
                    || (!opts.system_wide && !opts.attached_alive()))
                .then_some((0, 0.0, 0.0))),
            }
        };
        loop {
            if let Some((st, u, s)) = ended(&mut child)? {
                if child.is_some() {
                    exit_raw = Some(st);
                    user_secs = u;
                    sys_secs = s;
                }
                break;
            }
            let now = Instant::now();
            if now >= next {
                let totals = read_all(&counters, &fds, by_target)?;
                let t = now.duration_since(start).as_nanos() as u64;
                if let Err(e) = on_interval(t, &totals, &target_list) {
                    return Err(fail(&mut child, Error::sys("printing the counts", e)));
                }
                next += every;
                // Late by more than an interval (a stopped machine): skip.
                if next < now {
                    next = now + every;
                }
                continue;
            }
            // Short naps, so the command's end is seen within 10 ms.
            let nap = (next - now).min(std::time::Duration::from_millis(10));
            let _ = sys::poll(&ctl_fds(&control), nap.as_millis().max(1) as i32);
            if serve(&mut control) {
                break;
            }
        }
    } else if let Some(c) = &mut child {
        if let Err(e) = c.go() {
            return Err(Error::exec(&opts.command[0], e));
        }
        // SIGINT reaches the command too (same terminal): wait for it to end.
        let (st, u, s) = match opts.timeout_ms {
            None if control.is_none() => c
                .wait_rusage()
                .map_err(|e| Error::sys("waiting for the command", e))?,
            timeout => {
                let deadline = timeout.map(|ms| start + std::time::Duration::from_millis(ms));
                let mut termed = false;
                loop {
                    if let Some(r) = c
                        .try_wait_rusage()
                        .map_err(|e| Error::sys("waiting for the command", e))?
                    {
                        break r;
                    }
                    serve(&mut control);
                    if !termed && deadline.is_some_and(|d| Instant::now() >= d) {
                        c.kill(libc::SIGTERM);
                        termed = true;
                    }
                    let _ = sys::poll(&ctl_fds(&control), 5);
                }
            }
        };
        exit_raw = Some(st);
        user_secs = u;
        sys_secs = s;
    } else {
        let deadline = opts
            .timeout_ms
            .map(|ms| start + std::time::Duration::from_millis(ms));
        loop {
            let nap = deadline.map_or(100, |d| {
                d.saturating_duration_since(Instant::now())
                    .as_millis()
                    .clamp(1, 100) as i32
            });
            let _ = sys::poll(&ctl_fds(&control), nap);
            if serve(&mut control)
                || sys::stop_signal().is_some()
                || deadline.is_some_and(|d| Instant::now() >= d)
            {
                break;
            }
            if !opts.system_wide && !opts.attached_alive() {
                break;
            }
        }
    }
    let wall_ns = start.elapsed().as_nanos() as u64;
    let _ = sys::on_their_cpus(&leader_fds(&fds), sys::disable_raw);
    let counters = read_all(&counters, &fds, by_target)?;
    if opts.interval_ms.is_some() {
        on_interval(wall_ns, &counters, &target_list)
            .map_err(|e| Error::sys("printing the counts", e))?;
    }
    Ok(CountRun {
        counters,
        targets: target_list,
        wall_ns,
        user_secs,
        sys_secs,
        exit_status: exit_raw.map(sys::shell_status),
        signal: exit_raw.and_then(sys::term_signal),
        command_pid,
        every_thread,
    })
}

/// The attribute perf stat gives a counter of `e` (the first of its group
/// `leader`) when the command starts it (`on_exec`).
pub fn stat_attr(e: &EventSpec, leader: bool, on_exec: bool, inherit: bool) -> EventAttr {
    counting_attr(e, leader, on_exec, inherit)
}
