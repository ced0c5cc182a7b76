//! From options to event attributes: the events, tasks and CPUs to open
//! (`plan`) and each event's `perf_event_attr` as perf sets it.

use super::*;

/// User registers perf asks for with `--call-graph dwarf` (all but the
/// segment registers on x86-64).
#[cfg(target_arch = "x86_64")]
pub(crate) const DWARF_REGS: u64 = 0xff0fff;
#[cfg(target_arch = "aarch64")]
pub(crate) const DWARF_REGS: u64 = (1 << 33) - 1;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) const DWARF_REGS: u64 = 0;

/// The registers a DWARF unwinder cannot do without (IP and SP), which
/// perf adds to a `--user-regs` subset.
#[cfg(target_arch = "x86_64")]
pub(crate) const DWARF_MINIMAL_REGS: u64 = (1 << 8) | (1 << 7);
#[cfg(target_arch = "aarch64")]
pub(crate) const DWARF_MINIMAL_REGS: u64 = (1 << 32) | (1 << 31);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) const DWARF_MINIMAL_REGS: u64 = 0;

/// The registers `-I` takes without a list, and the names `-I=` and
/// `--user-regs=` know (perf_regs numbering, perf's names).
#[cfg(target_arch = "x86_64")]
pub const REG_NAMES: &[(&str, u32)] = &[
    ("AX", 0),
    ("BX", 1),
    ("CX", 2),
    ("DX", 3),
    ("SI", 4),
    ("DI", 5),
    ("BP", 6),
    ("SP", 7),
    ("IP", 8),
    ("FLAGS", 9),
    ("CS", 10),
    ("SS", 11),
    ("R8", 16),
    ("R9", 17),
    ("R10", 18),
    ("R11", 19),
    ("R12", 20),
    ("R13", 21),
    ("R14", 22),
    ("R15", 23),
];
#[cfg(not(target_arch = "x86_64"))]
pub const REG_NAMES: &[(&str, u32)] = &[];

/// The mask of a `-I=`/`--user-regs=` list (perf's names, any case); an
/// empty list is every register perf knows here. `?` (or an unknown name)
/// is an error listing the names.
pub fn parse_regs(opt: &str, list: &str) -> Result<u64> {
    let known = || {
        REG_NAMES
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(" ")
    };
    if list.is_empty() {
        return Ok(REG_NAMES.iter().fold(0, |m, (_, b)| m | 1 << b));
    }
    let mut mask = 0u64;
    for name in list.split(',').map(str::trim) {
        match REG_NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            Some((_, b)) => mask |= 1 << b,
            None => {
                return Err(Error::Options(format!(
                    "{opt}={list}: available registers: {}",
                    known()
                )))
            }
        }
    }
    Ok(mask)
}

pub(crate) use perf_data::attr::id_trailer_size;

/// The checked plan: events with their attrs, the tasks and CPUs to open on.
pub(crate) struct Plan {
    pub(crate) groups: Vec<Group>,
    pub(crate) sample_type: u64,
    /// pid argument of each open (-1: any task on the CPU).
    pub(crate) tasks: Vec<i32>,
    pub(crate) cpus: Vec<i32>,
    pub(crate) default_event: bool,
    /// The event (in member order) that carries mmap, comm and task
    /// records: the first, or perf's dummy added after them system-wide.
    pub(crate) tracking: usize,
    /// `-G`: the cgroup of each event (member order); the tracking dummy
    /// has none.
    pub(crate) cgroups: Vec<Option<String>>,
    /// `--off-cpu`: the index (member order) of `offcpu-time`; the switch
    /// tracepoint that feeds it follows, last.
    pub(crate) offcpu: Option<usize>,
}

pub(crate) fn plan(opts: &Options, child: Option<i32>) -> Result<Plan> {
    let (mut groups, default_event) = if opts.events.is_empty() {
        (
            vec![Group {
                members: vec![EventSpec::default_cycles()],
            }],
            true,
        )
    } else {
        let mut g = Vec::new();
        for (j, e) in opts.events.iter().enumerate() {
            let mut groups = event::parse_list(e)?;
            if let Some(f) = opts.filters.get(j).cloned().flatten() {
                for m in groups.iter_mut().flat_map(|g| g.members.iter_mut()) {
                    if m.type_ != PERF_TYPE_TRACEPOINT {
                        return Err(Error::Options(format!(
                            "--filter option should follow a -e tracepoint option: {} is \
                             not a tracepoint",
                            m.name
                        )));
                    }
                    m.filter = Some(f.clone());
                }
            }
            g.extend(groups);
        }
        (g, false)
    };
    groups.retain(|g| !g.members.is_empty());
    if opts.group && groups.len() > 1 {
        let members = groups.drain(..).flat_map(|g| g.members).collect();
        groups.push(Group { members });
    }
    let system_wide = opts.system_wide || opts.cpus.is_some();
    // As perf: system-wide, or with the events started late (-D), the
    // tracking records come from a dummy event of their own, after the
    // others.
    let dummy = system_wide || opts.delay_ms.is_some() || opts.start_disabled;
    let tracking = if dummy {
        let i = groups.iter().map(|g| g.members.len()).sum();
        groups.push(Group {
            members: vec![EventSpec::tracking_dummy()],
        });
        i
    } else {
        0
    };
    let offcpu = if opts.off_cpu {
        let (out, switch) = crate::offcpu::events()?;
        let i = groups.iter().map(|g| g.members.len()).sum();
        groups.push(Group { members: vec![out] });
        groups.push(Group {
            members: vec![switch],
        });
        Some(i)
    } else {
        None
    };
    let n_events: usize = groups.iter().map(|g| g.members.len()).sum();
    // As perf: per-thread rings need no time to merge, unless -T asks.
    let per_thread = opts.per_thread && !system_wide;
    let mut st = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
    if !per_thread || opts.sample_time {
        st |= PERF_SAMPLE_TIME;
    }
    // As perf: the period in each sample when it varies (frequency mode)
    // or with -P; a fixed -c period is the attr's.
    if opts.period.is_none() || opts.record_period {
        st |= PERF_SAMPLE_PERIOD;
    }
    if opts.sample_address {
        st |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
    }
    st |= opts.extra_sample_type;
    if opts.all_cgroups {
        st |= PERF_SAMPLE_CGROUP;
    }
    if opts.regs_intr.is_some() {
        st |= PERF_SAMPLE_REGS_INTR;
    }
    if opts.regs_user.is_some() {
        st |= PERF_SAMPLE_REGS_USER;
    }
    if opts.all_user || opts.all_kernel {
        for m in groups.iter_mut().flat_map(|g| g.members.iter_mut()) {
            m.exclude_kernel = opts.all_user;
            m.exclude_user = opts.all_kernel;
            if m.is_dummy() {
                // (perf names its tracking dummy after its final bits.)
                m.rename_generated("dummy");
            }
        }
    }
    match opts.call_graph {
        CallGraph::None => {}
        CallGraph::Fp => st |= PERF_SAMPLE_CALLCHAIN,
        CallGraph::Dwarf(_) => {
            if DWARF_REGS == 0 {
                return Err(Error::Options(
                    "--call-graph dwarf is not supported on this architecture; use -g".into(),
                ));
            }
            st |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER
        }
    }
    if system_wide {
        st |= PERF_SAMPLE_CPU;
    }
    if n_events > 1 {
        // perf identifies samples at the front when the events' sample
        // types differ (the dummy's has no period, tracepoints have raw
        // data and CPUs).
        let tracepoints = groups
            .iter()
            .flat_map(|g| &g.members)
            .filter(|m| m.type_ == PERF_TYPE_TRACEPOINT)
            .count();
        let reads = groups
            .iter()
            .flat_map(|g| &g.members)
            .filter(|m| m.sample_read)
            .count();
        let differ = (tracepoints > 0 && tracepoints < n_events && st | TRACEPOINT_SAMPLE != st)
            || (reads > 0 && reads < n_events);
        // (off-CPU samples have a call chain and CPU the others may lack.)
        st |= if dummy || differ || offcpu.is_some() {
            PERF_SAMPLE_IDENTIFIER
        } else {
            PERF_SAMPLE_ID
        };
    }
    let tasks: Vec<i32> = if system_wide {
        vec![-1]
    } else if !opts.tids.is_empty() {
        opts.tids.clone()
    } else if !opts.pids.is_empty() {
        let mut t = Vec::new();
        for &p in &opts.pids {
            if !sys::task_exists(p) {
                // (-u lists processes that may end before they are
                // attached: those are skipped.)
                if opts.skip_ended {
                    continue;
                }
                return Err(Error::NoSuchTask(p));
            }
            t.extend(synth::threads_of(p));
        }
        t
    } else if let Some(c) = child {
        vec![c]
    } else {
        return Err(Error::Options(
            "nothing to record: give a command (`sear record -- COMMAND`), -p PID, -t TID or -a"
                .into(),
        ));
    };
    for &t in opts.tids.iter() {
        if !sys::task_exists(t) {
            return Err(Error::NoSuchTask(t));
        }
    }
    let online = synth::online_cpus();
    let cpus: Vec<i32> = match &opts.cpus {
        None if per_thread => vec![-1],
        Some(list) => {
            for c in list {
                if !online.contains(c) {
                    return Err(Error::Options(format!(
                        "CPU {c} is not online (online: {}); pick CPUs from /sys/devices/system/cpu/online",
                        online.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
                    )));
                }
            }
            list.iter().map(|&c| c as i32).collect()
        }
        None => online.iter().map(|&c| c as i32).collect(),
    };
    let mut cgroups = Vec::new();
    if !opts.cgroups.is_empty() {
        if !system_wide {
            return Err(Error::Options(
                "-G/--cgroup: cgroup monitoring only available in system-wide mode (add -a or -C)"
                    .into(),
            ));
        }
        // (The tracking dummy has none: perf adds it after the events.)
        let mut names = sys::cgroup_of_events(&opts.cgroups, n_events).into_iter();
        for i in 0..n_events {
            cgroups.push(if dummy && i == tracking {
                None
            } else {
                names.next().flatten()
            });
        }
    }
    Ok(Plan {
        groups,
        sample_type: st,
        tasks,
        cpus,
        default_event,
        tracking,
        cgroups,
        offcpu,
    })
}

/// Sampling rate: `-c` period, else `-F` (bounded by the kernel's limit).
pub(crate) fn period_or_freq(opts: &Options) -> Result<(bool, u64)> {
    if let Some(p) = opts.period {
        if p == 0 {
            return Err(Error::Options("-c 0: the period must be at least 1".into()));
        }
        return Ok((false, p));
    }
    let max = max_sample_rate();
    let f = match opts.freq {
        None => DEFAULT_FREQ,
        Some(Freq::Hz(0)) => {
            return Err(Error::Options(
                "-F 0: the frequency must be at least 1 Hz".into(),
            ))
        }
        Some(Freq::Hz(f)) => f,
        Some(Freq::Max) => max.unwrap_or(DEFAULT_FREQ),
    };
    match max {
        Some(m) if f > m && opts.strict_freq => Err(Error::Options(format!(
            "-F {f}: above the kernel's limit (/proc/sys/kernel/perf_event_max_sample_rate = \
             {m} Hz); use a lower frequency, raise the limit, or leave out --strict-freq"
        ))),
        Some(m) if f > m => {
            log::warn!(
                "the frequency {f} Hz is above the kernel's limit \
                 (/proc/sys/kernel/perf_event_max_sample_rate = {m}); sampling at {m} Hz \
                 (raise the limit to sample faster)"
            );
            Ok((true, m))
        }
        _ => Ok((true, f)),
    }
}

pub(crate) struct AttrCtx {
    pub(crate) sample_type: u64,
    pub(crate) freq: bool,
    pub(crate) rate: u64,
    pub(crate) call_graph: CallGraph,
    pub(crate) inherit: bool,
    pub(crate) enable_on_exec: bool,
    /// `-D`: the events other than the tracking dummy are enabled late.
    pub(crate) delayed: bool,
    pub(crate) switch_events: bool,
    pub(crate) user_only: bool,
    /// Record data mappings too (`-d`, and explicit `--call-graph dwarf`).
    pub(crate) sample_address: bool,
    /// Kernel features perf asks for where the kernel has them (cleared
    /// when an open fails with EINVAL): lost-sample counts in read values
    /// (6.0) and KSYMBOL/BPF_EVENT records (5.1).
    pub(crate) lost: bool,
    pub(crate) ksymbol: bool,
    /// BPF_EVENT records with KSYMBOL (not `--no-bpf-event`).
    pub(crate) bpf_event: bool,
    /// Enabled and running times in read values (`--running-time`, `-s`).
    pub(crate) running_time: bool,
    pub(crate) inherit_stat: bool,
    /// `-k/--clockid`: every event's clock.
    pub(crate) clockid: Option<i32>,
    /// `-I` and `--user-regs` masks (0: none asked).
    pub(crate) regs_intr: u64,
    pub(crate) regs_user: u64,
    pub(crate) exclude_callchain_kernel: bool,
    pub(crate) exclude_callchain_user: bool,
    /// `-n`: no sampling period or frequency.
    pub(crate) no_samples: bool,
    /// `--no-buffering`: a wakeup per record.
    pub(crate) no_buffering: bool,
    /// `--buildid-mmap`: build ids in MMAP2 records.
    pub(crate) build_id_mmap: bool,
    /// `--namespaces` / `--all-cgroups`: NAMESPACES and CGROUP records.
    pub(crate) namespaces: bool,
    pub(crate) cgroups: bool,
    /// `--overwrite`: the kernel writes the rings backward, over the oldest
    /// records (perf's flight recorder).
    pub(crate) overwrite: bool,
    /// `-F` or `-c` given: tracepoints sample at that rate too (else at
    /// every hit, as perf).
    pub(crate) user_rate: bool,
}

/// What perf's tracepoint events add to the sample type (`evsel__newtp`).
pub(crate) const TRACEPOINT_SAMPLE: u64 = PERF_SAMPLE_RAW | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

pub(crate) fn make_attr(c: &AttrCtx, e: &EventSpec, leader: bool, tracking: bool) -> EventAttr {
    let mut flags = 0u64;
    let mut set = |b: u32| flags |= 1 << b;
    // perf's tracking dummy: enabled from the start, every event (it
    // never samples), no period in its sample type.
    let dummy = tracking && e.is_dummy();
    if leader && !dummy {
        set(flag::DISABLED);
        if c.enable_on_exec && !c.delayed {
            set(flag::ENABLE_ON_EXEC);
        }
    }
    // With -D the dummy is what the command's exec enables.
    if dummy && c.delayed {
        set(flag::DISABLED);
        if c.enable_on_exec {
            set(flag::ENABLE_ON_EXEC);
        }
    }
    if c.inherit {
        set(flag::INHERIT);
    }
    if c.inherit_stat {
        set(flag::INHERIT_STAT);
    }
    let tracepoint = e.type_ == PERF_TYPE_TRACEPOINT;
    // (A tracepoint samples every hit unless -F or -c says otherwise.)
    if c.freq && !dummy && (!tracepoint || c.user_rate) {
        set(flag::FREQ);
    }
    set(flag::SAMPLE_ID_ALL);
    if c.overwrite {
        set(flag::WRITE_BACKWARD);
    }
    if c.clockid.is_some() {
        set(flag::USE_CLOCKID);
    }
    if e.exclude_user {
        set(flag::EXCLUDE_USER);
    }
    if e.exclude_kernel || c.user_only {
        set(flag::EXCLUDE_KERNEL);
    }
    if e.exclude_hv || c.user_only {
        set(flag::EXCLUDE_HV);
    }
    if e.exclude_guest {
        set(flag::EXCLUDE_GUEST);
    }
    if e.exclude_host {
        set(flag::EXCLUDE_HOST);
    }
    if tracking {
        for b in [
            flag::MMAP,
            flag::COMM,
            flag::TASK,
            flag::MMAP2,
            flag::COMM_EXEC,
        ] {
            set(b);
        }
        if c.switch_events {
            set(flag::CONTEXT_SWITCH);
        }
        if c.ksymbol {
            set(flag::KSYMBOL);
            if c.bpf_event {
                set(flag::BPF_EVENT);
            }
        }
        if c.sample_address {
            set(flag::MMAP_DATA);
        }
        if c.build_id_mmap {
            set(flag::BUILD_ID);
        }
        if c.namespaces {
            set(flag::NAMESPACES);
        }
        if c.cgroups {
            set(flag::CGROUP);
        }
    }
    let mut a = EventAttr {
        type_: e.type_,
        size: 128,
        config: e.config,
        sample_period_or_freq: match (dummy, c.no_samples) {
            (true, _) => 1,
            (false, true) => 0,
            (false, false) if tracepoint && !c.user_rate => 1,
            (false, false) => c.rate,
        },
        // perf's tracking dummy takes no registers.
        sample_type: if dummy {
            let regs = PERF_SAMPLE_REGS_INTR
                | if matches!(c.call_graph, CallGraph::Dwarf(_)) {
                    0
                } else {
                    PERF_SAMPLE_REGS_USER
                };
            c.sample_type & !PERF_SAMPLE_PERIOD & !regs
        } else if tracepoint {
            c.sample_type | TRACEPOINT_SAMPLE
        } else {
            c.sample_type
        },
        read_format: PERF_FORMAT_ID
            | if c.lost { PERF_FORMAT_LOST } else { 0 }
            | if c.running_time {
                PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING
            } else {
                0
            },
        clockid: c.clockid.unwrap_or(0),
        wakeup_events_or_watermark: u32::from(c.no_buffering),
        ..Default::default()
    };
    if !dummy {
        a.sample_regs_intr = c.regs_intr;
        a.sample_regs_user = c.regs_user;
    }
    if c.exclude_callchain_user {
        flags |= 1 << flag::EXCLUDE_CALLCHAIN_USER;
    }
    if c.exclude_callchain_kernel {
        flags |= 1 << flag::EXCLUDE_CALLCHAIN_KERNEL;
    }
    if let CallGraph::Dwarf(size) = c.call_graph {
        flags |= 1 << flag::EXCLUDE_CALLCHAIN_USER;
        // As perf: with --user-regs, those and the minimum an unwinder
        // needs (IP, SP); else all.
        a.sample_regs_user = if c.regs_user != 0 {
            c.regs_user | DWARF_MINIMAL_REGS
        } else {
            DWARF_REGS
        };
        a.sample_stack_user = size;
    }
    flags |= u64::from(e.precise_ip & 3) << flag::PRECISE_IP;
    // A PMU event's own terms (`pmu/config1=..,period=../`).
    a.config1 = e.pmu.config1;
    a.config2 = e.pmu.config2;
    if !dummy && !c.no_samples {
        if let Some(p) = e.pmu.period {
            a.sample_period_or_freq = p;
            flags &= !(1 << flag::FREQ);
            // (The period is the attr's: in the samples only with -P.)
            if c.freq {
                a.sample_type &= !PERF_SAMPLE_PERIOD;
            }
        } else if let Some(f) = e.pmu.freq {
            a.sample_period_or_freq = f;
            flags |= 1 << flag::FREQ;
            a.sample_type |= PERF_SAMPLE_PERIOD;
        }
    }
    a.flags = flags;
    a
}
