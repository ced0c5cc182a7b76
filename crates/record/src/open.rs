//! Opening the planned events on every task and CPU, with the errors that
//! say what to do next.

use super::*;

/// Open events: one entry per recorded event with its fds and ids.
pub(crate) struct Opened {
    pub(crate) events: Vec<Event>,
    /// (leader index, members) of groups of more than one event.
    pub(crate) group_desc: Vec<(u32, u32)>,
    pub(crate) fds: Vec<OwnedFd>,
    /// Indices in `fds` of group leaders (to enable and disable).
    pub(crate) leaders: Vec<usize>,
    /// Which of `leaders` are the tracking dummy's (enabled first with -D).
    pub(crate) dummy_leaders: Vec<usize>,
    /// One ring per CPU.
    pub(crate) rings: Vec<(RawFd, sys::Ring)>,
    pub(crate) sample_type: u64,
    /// The index in `events` of each of `fds`.
    pub(crate) fd_events: Vec<usize>,
    /// `--off-cpu`: the index of `offcpu-time` in `events` and the ids of
    /// the switch tracepoint (opened, not in `events`: its samples become
    /// `offcpu-time`'s).
    pub(crate) offcpu: Option<(usize, Vec<u64>)>,
}

impl Opened {
    /// The index in `events` of the event `fds[fd]` is one of.
    /// (The switch tracepoint of `--off-cpu` counts as `offcpu-time`.)
    pub(crate) fn event_of_fd(&self, fd: usize) -> Option<usize> {
        let e = self.fd_events.get(fd).copied()?;
        match self.offcpu {
            Some((i, _)) if e >= self.events.len() => Some(i),
            _ => Some(e),
        }
    }
}

pub(crate) fn open_error(
    e: &EventSpec,
    task: i32,
    cpu: i32,
    err: io::Error,
    hardware_default: bool,
) -> Error {
    let target = match (task, cpu) {
        (-1, c) => format!("CPU {c}"),
        (t, c) => format!("task {t} on CPU {c}"),
    };
    match err.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => Error::Permission {
            event: e.name.clone(),
            paranoid: paranoid(),
            err,
        },
        Some(libc::ESRCH) => Error::NoSuchTask(task),
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV)
            if e.is_hardware() && !hardware_default =>
        {
            Error::NoPmu {
                event: e.name.clone(),
            }
        }
        Some(libc::EMFILE) => Error::Open {
            event: e.name.clone(),
            target,
            hint: "; too many open files: raise the limit (`ulimit -n 65536`) or record fewer CPUs (-C) or threads",
            err,
        },
        // A PMU of its own type (`pmu/.../`) whose events only count.
        Some(libc::EINVAL) | Some(libc::EOPNOTSUPP) if e.type_ > PERF_TYPE_BREAKPOINT => {
            Error::Open {
                event: e.name.clone(),
                target,
                hint: "; this PMU's events may only count, not sample: count it with `sear stat -e EVENT`, or sample another event",
                err,
            }
        }
        Some(libc::EINVAL) => Error::Open {
            event: e.name.clone(),
            target,
            hint: "; the kernel refused these settings (try a lower -F, a smaller --call-graph dwarf size, or another event)",
            err,
        },
        _ => Error::Open {
            event: e.name.clone(),
            target,
            hint: "",
            err,
        },
    }
}

/// `:S`, as perf 6.1 sets it: every event's sample reads the group's
/// counts (by id); in a group of several the read is the group's (and
/// nothing is inherited: the kernel cannot read a group across tasks); the
/// members count without sampling.
fn leader_sampling(a: &mut EventAttr, leader: bool, members: usize) {
    a.sample_type |= PERF_SAMPLE_READ;
    if a.sample_type & PERF_SAMPLE_IDENTIFIER == 0 {
        a.sample_type |= PERF_SAMPLE_ID;
    }
    if members > 1 {
        a.read_format |= PERF_FORMAT_GROUP;
        a.flags &= !(1 << flag::INHERIT);
    }
    if !leader {
        a.sample_period_or_freq = 0;
        a.flags &= !(1 << flag::FREQ);
    }
}

/// What to change before opening the events again.
pub(crate) enum Retry {
    /// The kernel's paranoia refuses kernel samples: user space only.
    UserOnly,
    /// No PMU for cycles: cpu-clock instead, as perf.
    Cycles,
    /// The kernel does not know an attr bit perf sets where it can.
    MissingFeature,
}

pub(crate) fn open_all(
    p: &Plan,
    ctx: &AttrCtx,
    pages: usize,
) -> Result<Opened, (Error, Option<Retry>)> {
    let mut attrs: Vec<(EventAttr, &EventSpec, bool)> = Vec::new();
    let mut group_desc = Vec::new();
    for g in &p.groups {
        if g.members.len() > 1 {
            group_desc.push((attrs.len() as u32, g.members.len() as u32));
        }
        for (i, e) in g.members.iter().enumerate() {
            let mut a = make_attr(ctx, e, i == 0, attrs.len() == p.tracking);
            if g.members[0].sample_read {
                leader_sampling(&mut a, i == 0, g.members.len());
            }
            attrs.push((a, e, i == 0));
        }
    }
    if let Some(i) = p.offcpu {
        let st = crate::offcpu::sample_type(p.sample_type, ctx.call_graph);
        if let [(out, ..), (switch, ..)] = &mut attrs[i..] {
            crate::offcpu::adjust_attrs(out, switch, st);
        }
    }
    // -G: each cgroup's directory, opened once.
    let cgroup_dirs = sys::CgroupDirs::open(p.cgroups.iter().flatten())
        .map_err(|e| (Error::Options(format!("-G: {e}")), None))?;
    let cgroup_of = |i: usize| cgroup_dirs.fd(p.cgroups.get(i).and_then(Option::as_ref));
    let mut ids: Vec<Vec<u64>> = vec![Vec::new(); attrs.len()];
    let mut fds = Vec::new();
    let mut fd_events = Vec::new();
    let mut leaders = Vec::new();
    let mut dummy_leaders = Vec::new();
    let mut rings = Vec::new();
    for &cpu in &p.cpus {
        let mut ring_owner: Option<usize> = None;
        for &task in &p.tasks {
            // (A task's events on any CPU cannot share another task's
            // ring: --per-thread gives each its own.)
            if cpu == -1 {
                ring_owner = None;
            }
            let mut leader_fd: RawFd = -1;
            for (i, (a, e, is_leader)) in attrs.iter().enumerate() {
                let group_fd = if *is_leader { -1 } else { leader_fd };
                let opened = match cgroup_of(i) {
                    Some(cg) => {
                        sys::perf_event_open_flags(a, cg, cpu, group_fd, sys::FLAG_PID_CGROUP)
                    }
                    None => sys::perf_event_open(a, task, cpu, group_fd),
                };
                let fd = match opened {
                    Ok(fd) => fd,
                    Err(err) => {
                        // A process or thread that ended since we listed it.
                        if err.raw_os_error() == Some(libc::ESRCH) && p.tasks.len() > 1 {
                            log::debug!("task {task} ended before it could be attached");
                            break;
                        }
                        let hw_missing = e.is_hardware()
                            && matches!(
                                err.raw_os_error(),
                                Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV)
                            );
                        let perm =
                            matches!(err.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM));
                        let retry = if hw_missing && e.is_cycles() {
                            Some(Retry::Cycles)
                        } else if perm && !ctx.user_only && !e.exclude_kernel {
                            Some(Retry::UserOnly)
                        } else if err.raw_os_error() == Some(libc::EINVAL)
                            && (ctx.lost || ctx.ksymbol)
                        {
                            Some(Retry::MissingFeature)
                        } else {
                            None
                        };
                        return Err((open_error(e, task, cpu, err, p.default_event), retry));
                    }
                };
                if let Some(f) = &e.filter {
                    sys::set_filter(&fd, f).map_err(|err| {
                        (
                            Error::Options(format!(
                                "failed to set filter \"{f}\" on event {}: {err} (the kernel's \
                                 filter language: `FIELD OP VALUE` joined with && and ||, fields \
                                 from the event's format file under tracefs)",
                                e.name
                            )),
                            None,
                        )
                    })?;
                }
                let id =
                    sys::event_id(&fd).map_err(|e| (Error::sys("reading an event id", e), None))?;
                ids[i].push(id);
                if *is_leader {
                    leader_fd = fd.as_raw_fd();
                    if i == p.tracking && e.is_dummy() {
                        dummy_leaders.push(fds.len());
                    }
                    leaders.push(fds.len());
                }
                match ring_owner {
                    None => {
                        let ring = sys::Ring::new(&fd, pages, ctx.overwrite).map_err(|e| {
                            (
                                Error::sys(
                                    format!(
                                        "mmapping a {} KiB ring buffer (lower -m, or raise /proc/sys/kernel/perf_event_mlock_kb)",
                                        pages * sys::page_size() / 1024
                                    ),
                                    e,
                                ),
                                None,
                            )
                        })?;
                        rings.push((fd.as_raw_fd(), ring));
                        ring_owner = Some(fds.len());
                    }
                    Some(o) => sys::set_output(&fd, &fds[o]).map_err(|e| {
                        (
                            Error::sys("sharing a ring buffer (PERF_EVENT_IOC_SET_OUTPUT)", e),
                            None,
                        )
                    })?,
                }
                fds.push(fd);
                fd_events.push(i);
            }
        }
    }
    if fds.is_empty() {
        return Err((
            Error::Options(
                "no event could be opened: the processes to attach to have all ended".into(),
            ),
            None,
        ));
    }
    let mut events: Vec<Event> = attrs
        .into_iter()
        .zip(ids)
        .map(|((attr, e, _), ids)| Event {
            attr,
            ids,
            name: Some(e.name.clone()),
        })
        .collect();
    let offcpu = p.offcpu.and_then(|i| Some((i, events.pop()?.ids)));
    Ok(Opened {
        events,
        group_desc,
        fds,
        leaders,
        dummy_leaders,
        rings,
        sample_type: p.sample_type,
        fd_events,
        offcpu,
    })
}
