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

pub(crate) use perf_data::attr::id_trailer_size;

/// The checked plan: events with their attrs, the tasks and CPUs to open on.
pub(crate) struct Plan {
    pub(crate) groups: Vec<Group>,
    pub(crate) sample_type: u64,
    /// pid argument of each open (-1: any task on the CPU).
    pub(crate) tasks: Vec<i32>,
    pub(crate) cpus: Vec<i32>,
    pub(crate) default_event: bool,
}

pub(crate) fn plan(opts: &Options, child: Option<i32>) -> Result<Plan> {
    let (mut groups, default_event) = if opts.events.is_empty() {
        (event::parse_list("cycles")?, true)
    } else {
        let mut g = Vec::new();
        for e in &opts.events {
            g.extend(event::parse_list(e)?);
        }
        (g, false)
    };
    if default_event && opts.system_wide {
        // Nothing to change: kept for symmetry with perf's defaults.
    }
    groups.retain(|g| !g.members.is_empty());
    let n_events: usize = groups.iter().map(|g| g.members.len()).sum();
    let system_wide = opts.system_wide || opts.cpus.is_some();
    let mut st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
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
        st |= if system_wide {
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
    Ok(Plan {
        groups,
        sample_type: st,
        tasks,
        cpus,
        default_event,
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
    pub(crate) switch_events: bool,
    pub(crate) user_only: bool,
}

pub(crate) fn make_attr(c: &AttrCtx, e: &EventSpec, leader: bool, tracking: bool) -> EventAttr {
    let mut flags = 0u64;
    let mut set = |b: u32| flags |= 1 << b;
    if leader {
        set(flag::DISABLED);
        if c.enable_on_exec {
            set(flag::ENABLE_ON_EXEC);
        }
    }
    if c.inherit {
        set(flag::INHERIT);
    }
    if c.freq {
        set(flag::FREQ);
    }
    set(flag::SAMPLE_ID_ALL);
    if e.exclude_user {
        set(flag::EXCLUDE_USER);
    }
    if e.exclude_kernel || c.user_only {
        set(flag::EXCLUDE_KERNEL);
    }
    if e.exclude_hv || c.user_only {
        set(flag::EXCLUDE_HV);
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
    }
    let mut a = EventAttr {
        type_: e.type_,
        size: 128,
        config: e.config,
        sample_period_or_freq: c.rate,
        sample_type: c.sample_type,
        read_format: PERF_FORMAT_ID,
        ..Default::default()
    };
    if let CallGraph::Dwarf(size) = c.call_graph {
        flags |= 1 << flag::EXCLUDE_CALLCHAIN_USER;
        if tracking {
            // Unwinders read .eh_frame_hdr through the maps: perf records
            // the non-executable segments too, and so do we.
            flags |= 1 << flag::MMAP_DATA;
        }
        a.sample_regs_user = DWARF_REGS;
        a.sample_stack_user = size;
    }
    if c.call_graph != CallGraph::None {
        a.sample_max_stack = 127;
    }
    flags |= u64::from(e.precise_ip & 3) << flag::PRECISE_IP;
    a.flags = flags;
    a
}
