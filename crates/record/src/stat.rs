//! The statistics `perf stat` prints from counts: each event's mean and
//! spread over runs (perf's Welford updates), counts scaled for
//! multiplexing, the time-normalized counts the ratio column needs, and the
//! splits of `-A`/`--per-*` with their CPU topology from sysfs. How they are
//! laid out is `render::stat`'s business.

use crate::count::{CountRun, Counter, Part, Target};

/// A running mean and spread (perf's `struct stats`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Spread {
    pub n: f64,
    pub mean: f64,
    m2: f64,
}

impl Spread {
    /// Welford's update, as perf's update_stats.
    pub fn add(&mut self, x: f64) {
        self.n += 1.0;
        let d = x - self.mean;
        self.mean += d / self.n;
        self.m2 += d * (x - self.mean);
    }

    /// The spread of one value.
    pub fn of(x: f64) -> Spread {
        let mut s = Spread::default();
        s.add(x);
        s
    }

    /// The standard error of the mean (perf's stddev_stats).
    pub fn stderr(&self) -> f64 {
        if self.n < 2.0 {
            return 0.0;
        }
        (self.m2 / (self.n - 1.0) / self.n).sqrt()
    }

    /// perf's rel_stddev_stats: the spread in percent of the mean.
    pub fn rel_pct(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            100.0 * self.stderr() / self.mean
        }
    }
}

/// The kernel's counts scaled up for the time an event did not run
/// (multiplexing), as perf_counts_values__scale.
pub fn scaled(value: u64, enabled: u64, running: u64) -> f64 {
    if running > 0 && running < enabled {
        value as f64 * enabled as f64 / running as f64
    } else {
        value as f64
    }
}

/// One event's counts over all runs (or one interval's, or one split's).
#[derive(Debug, Clone)]
pub struct EventStats {
    pub name: String,
    /// The cgroup counted in (`-G`), printed after the name.
    pub cgroup: Option<String>,
    /// A clock event (cpu-clock, task-clock): shown in msec, with the
    /// "CPUs utilized" ratio.
    pub is_clock: bool,
    /// False when the kernel has no such event here.
    pub supported: bool,
    pub value: Spread,
    pub enabled: Spread,
    pub running: Spread,
}

impl EventStats {
    /// The statistics of `c` with no runs added yet.
    pub fn empty(c: &Counter) -> EventStats {
        EventStats {
            name: c.spec.name.clone(),
            cgroup: c.cgroup.clone(),
            is_clock: c.spec.type_ == perf_data::PERF_TYPE_SOFTWARE && c.spec.config <= 1,
            supported: c.supported,
            value: Spread::default(),
            enabled: Spread::default(),
            running: Spread::default(),
        }
    }

    /// Adds one run's (or interval's, or target's) count of the event.
    pub fn add(&mut self, value: u64, enabled: u64, running: u64) {
        self.value.add(scaled(value, enabled, running));
        self.enabled.add(enabled as f64);
        self.running.add(running as f64);
    }

    /// The statistics of a single count of `c`.
    pub fn single(c: &Counter, value: u64, enabled: u64, running: u64) -> EventStats {
        let mut r = EventStats::empty(c);
        r.add(value, enabled, running);
        r
    }

    /// Whether the event was counted at all.
    pub fn counted(&self) -> bool {
        self.supported && self.running.mean > 0.0
    }
}

/// The nanoseconds the first counted clock event of `row`'s cgroup
/// counted, which rates are per (perf keeps its ratios per cgroup); None
/// without one.
pub fn clock_ns_for(events: &[EventStats], row: &EventStats) -> Option<f64> {
    events
        .iter()
        .find(|r| r.is_clock && r.counted() && r.cgroup == row.cgroup)
        .map(|r| r.value.mean)
}

/// `-I`: each interval's counts from the differences of running totals.
#[derive(Debug, Default)]
pub struct Intervals {
    prev: Vec<Counter>,
    /// Intervals taken so far.
    pub ticks: u64,
}

impl Intervals {
    /// The totals as of the last call to [`Self::next`].
    pub fn totals(&self) -> &[Counter] {
        &self.prev
    }

    /// The counts since the last call, from the totals so far.
    pub fn next(&mut self, totals: &[Counter]) -> Vec<EventStats> {
        self.next_counters(totals)
            .iter()
            .map(|c| EventStats::single(c, c.value, c.enabled, c.running))
            .collect()
    }

    /// [`Self::next`] as counters, each target's part too (what a split
    /// table of the interval is made from, see [`split`]).
    pub fn next_counters(&mut self, totals: &[Counter]) -> Vec<Counter> {
        let delta = totals
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = self.prev.get(i);
                let part_before = |t: usize| p.and_then(|p| p.parts.iter().find(|q| q.target == t));
                Counter {
                    value: c.value.saturating_sub(p.map_or(0, |p| p.value)),
                    enabled: c.enabled.saturating_sub(p.map_or(0, |p| p.enabled)),
                    running: c.running.saturating_sub(p.map_or(0, |p| p.running)),
                    parts: c
                        .parts
                        .iter()
                        .map(|q| {
                            let b = part_before(q.target);
                            Part {
                                target: q.target,
                                value: q.value.saturating_sub(b.map_or(0, |b| b.value)),
                                enabled: q.enabled.saturating_sub(b.map_or(0, |b| b.enabled)),
                                running: q.running.saturating_sub(b.map_or(0, |b| b.running)),
                            }
                        })
                        .collect(),
                    ..c.clone()
                }
            })
            .collect();
        self.prev = totals.to_vec();
        self.ticks += 1;
        delta
    }
}

/// How counts are split (`-A`, `--per-*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggr {
    Global,
    Cpu,
    Thread,
    Core,
    Die,
    Socket,
    Node,
}

impl Aggr {
    /// The split perf's flags ask for, in perf's order of precedence:
    /// `-A/--no-aggr`, `--per-thread`, `--per-core`, `--per-die`,
    /// `--per-socket`, `--per-node` (`[no_aggr, thread, core, die, socket,
    /// node]`).
    pub fn of_flags(flags: [bool; 6]) -> Self {
        let [no_aggr, thread, core, die, socket, node] = flags;
        [
            (no_aggr, Aggr::Cpu),
            (thread, Aggr::Thread),
            (core, Aggr::Core),
            (die, Aggr::Die),
            (socket, Aggr::Socket),
            (node, Aggr::Node),
        ]
        .into_iter()
        .find_map(|(on, a)| on.then_some(a))
        .unwrap_or(Aggr::Global)
    }

    /// Whether this split can be made of what `opts` counts (why not).
    pub fn check(self, opts: &crate::count::CountOptions) -> Result<(), String> {
        match self {
            Aggr::Global => Ok(()),
            Aggr::Thread if !opts.attaches() && !opts.system_wide => Err(
                "--per-thread needs -p PID, -t TID or -a: it splits the counts of running tasks \
                 (or of every thread of the system) by thread"
                    .into(),
            ),
            Aggr::Cpu | Aggr::Core | Aggr::Die | Aggr::Socket | Aggr::Node
                if !opts.system_wide =>
            {
                Err("-A and --per-core/--per-die/--per-socket/--per-node need -a: they split system-wide counts by CPU"
                    .into())
            }
            _ => Ok(()),
        }
    }
}

/// What `-r` runs add up to: each event's statistics over the runs, the
/// wall time's, and the last run (for its splits and the command's status).
#[derive(Debug, Default)]
pub struct Runs {
    pub rows: Vec<EventStats>,
    pub wall: Spread,
    /// Each run's wall time, nanoseconds (`--table`).
    pub walls: Vec<u64>,
    pub last: Option<CountRun>,
}

impl Runs {
    pub fn add(&mut self, r: CountRun) {
        if self.rows.is_empty() {
            self.rows = r.counters.iter().map(EventStats::empty).collect();
        }
        for (row, c) in self.rows.iter_mut().zip(&r.counters) {
            row.add(c.value, c.enabled, c.running);
        }
        self.wall.add(r.wall_ns as f64);
        self.walls.push(r.wall_ns);
        self.last = Some(r);
    }

    /// perf stat's exit status: the command's exit code, 0 when a signal
    /// ended it.
    pub fn exit_status(&self) -> u8 {
        self.last
            .as_ref()
            .filter(|r| r.signal.is_none())
            .and_then(|r| r.exit_status)
            .unwrap_or(0)
    }
}

/// A CPU's place: (socket, die, core) from sysfs, 0 where unknown.
pub fn topology(cpu: i32) -> (i64, i64, i64) {
    let read = |what: &str| -> i64 {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{what}"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    };
    (read("physical_package_id"), read("die_id"), read("core_id"))
}

/// The NUMA node of a CPU (its `nodeN` entry in sysfs), 0 where unknown.
pub fn numa_node(cpu: i32) -> i64 {
    std::fs::read_dir(format!("/sys/devices/system/cpu/cpu{cpu}"))
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .find_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        .unwrap_or(0)
}

/// A split's key: (socket, die, core, id) with id the CPU or tid (for
/// `--per-node`, the node comes first).
pub type SplitKey = (i64, i64, i64, i64);

/// One line of a split table.
#[derive(Debug, Clone)]
pub struct SplitLine {
    pub key: SplitKey,
    /// The first target's thread name (for `--per-thread`).
    pub name: String,
    /// How many targets the split holds.
    pub members: usize,
    pub stats: EventStats,
    /// The clock nanoseconds of the split, which its rates are per.
    pub clock_ns: Option<f64>,
}

/// The split table of `-A` and `--per-*` in perf's order: by event then
/// CPU or thread (threads busiest first), and by core, die or socket then
/// event.
pub fn split(aggr: Aggr, run: &CountRun) -> Vec<SplitLine> {
    split_counts(aggr, &run.counters, &run.targets, run.every_thread)
}

/// [`split`] of counters counted on `targets` (one interval's, say); with
/// `every_thread` (the targets are all the system's threads), a thread
/// that counted nothing has no line, as perf leaves "too many 0" out.
pub fn split_counts(
    aggr: Aggr,
    counters: &[Counter],
    targets: &[Target],
    every_thread: bool,
) -> Vec<SplitLine> {
    let keys: Vec<SplitKey> = targets
        .iter()
        .map(|t| {
            // sysfs is read only for the splits that group CPUs.
            let topo = || topology(t.cpu);
            match aggr {
                Aggr::Cpu => (0, 0, 0, i64::from(t.cpu)),
                Aggr::Thread => (0, 0, 0, i64::from(t.tid)),
                Aggr::Core => {
                    let (s, d, c) = topo();
                    (s, d, c, 0)
                }
                Aggr::Die => {
                    let (s, d, _) = topo();
                    (s, d, 0, 0)
                }
                Aggr::Socket | Aggr::Global => (topo().0, 0, 0, 0),
                Aggr::Node => (numa_node(t.cpu), 0, 0, 0),
            }
        })
        .collect();
    let mut groups: Vec<SplitKey> = keys.clone();
    groups.sort_unstable();
    groups.dedup();
    // Sum of each counter's parts per group.
    let sum = |c: &Counter, g: &SplitKey| -> Part {
        let mut p = Part::default();
        for part in c.parts.iter().filter(|p| keys.get(p.target) == Some(g)) {
            p.value += part.value;
            p.enabled += part.enabled;
            p.running += part.running;
        }
        p
    };
    let stats_of = |c: &Counter, g: &SplitKey| -> EventStats {
        let p = sum(c, g);
        EventStats::single(c, p.value, p.enabled, p.running)
    };
    let line = |g: &SplitKey, c: &Counter| {
        let all: Vec<EventStats> = counters.iter().map(|c| stats_of(c, g)).collect();
        SplitLine {
            key: *g,
            name: keys
                .iter()
                .position(|k| k == g)
                .map(|i| targets[i].comm.clone())
                .unwrap_or_default(),
            members: keys.iter().filter(|k| *k == g).count(),
            clock_ns: clock_ns_for(&all, &stats_of(c, g)),
            stats: stats_of(c, g),
        }
    };
    let mut out = Vec::new();
    match aggr {
        Aggr::Cpu | Aggr::Thread => {
            for c in counters {
                let mut gs = groups.clone();
                if aggr == Aggr::Thread {
                    // Busiest first, as perf sorts its per-thread lines.
                    gs.sort_by(|a, b| sum(c, b).value.cmp(&sum(c, a).value).then(a.cmp(b)));
                    if every_thread {
                        gs.retain(|g| sum(c, g).value != 0);
                    }
                }
                out.extend(gs.iter().map(|g| line(g, c)));
            }
        }
        _ => {
            for g in &groups {
                out.extend(counters.iter().map(|c| line(g, c)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_like_perf() {
        let mut s = Spread::default();
        for x in [10.0, 12.0, 14.0] {
            s.add(x);
        }
        assert!((s.mean - 12.0).abs() < 1e-9);
        // stddev 2, standard error 2/sqrt(3)
        assert!((s.stderr() - 2.0 / 3f64.sqrt()).abs() < 1e-9);
        assert!((s.rel_pct() - 100.0 * 2.0 / 3f64.sqrt() / 12.0).abs() < 1e-9);
    }

    #[test]
    fn multiplexed_counts_are_scaled_up() {
        assert_eq!(scaled(100, 4, 1), 400.0);
        assert_eq!(scaled(100, 4, 4), 100.0);
        assert_eq!(scaled(100, 4, 0), 100.0);
    }
}
