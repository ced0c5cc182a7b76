//! `sear stat`: count events while a command runs (record::count) and print
//! perf stat's table, CSV (`-x`) or JSON (`--json`) on stderr, as perf 6.1
//! lays them out (tools/perf/util/stat-display.c).

use std::fmt::Write as _;
use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};
use record::count::{CountOptions, CountRun, Counter, Part};

use crate::cli::StatArgs;

/// perf 6.1's METRIC_LEN: the width of the `# ratio unit` column.
const METRIC_LEN: usize = 35;

#[derive(Default, Clone, Copy)]
struct Stats {
    n: f64,
    mean: f64,
    m2: f64,
}

impl Stats {
    /// Welford's update, as perf's update_stats.
    fn add(&mut self, x: f64) {
        self.n += 1.0;
        let d = x - self.mean;
        self.mean += d / self.n;
        self.m2 += d * (x - self.mean);
    }

    /// The standard error of the mean (perf's stddev_stats).
    fn stderr(&self) -> f64 {
        if self.n < 2.0 {
            return 0.0;
        }
        (self.m2 / (self.n - 1.0) / self.n).sqrt()
    }

    /// perf's rel_stddev_stats: the spread in percent of the mean.
    fn rel_pct(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            100.0 * self.stderr() / self.mean
        }
    }
}

/// One event over all runs.
struct Row {
    name: String,
    is_clock: bool,
    supported: bool,
    value: Stats,
    enabled: Stats,
    running: Stats,
}

enum Format {
    Std,
    Csv(String),
    Json,
}

/// The kernel's counts scaled up for the time an event did not run
/// (multiplexing), as perf_counts_values__scale.
fn scaled(value: u64, enabled: u64, running: u64) -> f64 {
    if running > 0 && running < enabled {
        value as f64 * enabled as f64 / running as f64
    } else {
        value as f64
    }
}

impl Row {
    /// The row of `c` with no runs added yet.
    fn empty(c: &Counter) -> Row {
        Row {
            name: c.spec.name.clone(),
            is_clock: c.spec.type_ == perf_data::PERF_TYPE_SOFTWARE && c.spec.config <= 1,
            supported: c.supported,
            value: Stats::default(),
            enabled: Stats::default(),
            running: Stats::default(),
        }
    }

    /// Adds one run's (or interval's, or target's) count of the event.
    fn add(&mut self, value: u64, enabled: u64, running: u64) {
        self.value.add(scaled(value, enabled, running));
        self.enabled.add(enabled as f64);
        self.running.add(running as f64);
    }

    /// The row of a single count of `c`.
    fn single(c: &Counter, value: u64, enabled: u64, running: u64) -> Row {
        let mut r = Row::empty(c);
        r.add(value, enabled, running);
        r
    }
}

/// perf's convert_unit_double: K, M, G for rates.
fn rate_unit(v: f64) -> (f64, String) {
    if v >= 1e9 {
        (v / 1e9, "G/sec".into())
    } else if v >= 1e6 {
        (v / 1e6, "M/sec".into())
    } else if v >= 1e3 {
        (v / 1e3, "K/sec".into())
    } else {
        (v, "/sec".into())
    }
}

/// The `#` column of a row: (ratio, unit), or None when there is nothing
/// to compare with (no clock event counted).
fn metric(row: &Row, wall: &Stats, nsecs: Option<f64>) -> Option<(f64, String)> {
    if row.is_clock {
        let ratio = if wall.mean != 0.0 {
            row.value.mean / wall.mean
        } else {
            0.0
        };
        return Some((ratio, "CPUs utilized".into()));
    }
    let total = nsecs?;
    let r = if total != 0.0 {
        1e9 * row.value.mean / total
    } else {
        0.0
    };
    Some(rate_unit(r))
}

fn unit_of(row: &Row) -> &'static str {
    if row.is_clock {
        "msec"
    } else {
        ""
    }
}

/// The printed count: msec for clocks (perf's scale 1e-6).
fn shown_value(row: &Row) -> f64 {
    if row.is_clock {
        row.value.mean / 1e6
    } else {
        row.value.mean
    }
}

fn pct_running(row: &Row) -> (u64, u64, f64) {
    let run = row.running.mean as u64;
    let ena = row.enabled.mean as u64;
    // Integer arithmetic, as perf's print_running.
    let pct = if run != ena && ena > 0 {
        (100 * run / ena) as f64
    } else {
        100.0
    };
    (run, ena, pct)
}

fn std_row(out: &mut String, row: &Row, wall: &Stats, nsecs: Option<f64>, runs: u32) {
    let (run, ena, pct) = pct_running(row);
    let unit = unit_of(row);
    if !row.supported || run == 0 || ena == 0 {
        let what = if row.supported {
            "<not counted>"
        } else {
            "<not supported>"
        };
        let _ = write!(out, "{what:>18} {unit:<4} {:<25}", row.name);
        let _ = write!(out, "{:METRIC_LEN$}", "");
    } else {
        let v = shown_value(row);
        if row.is_clock {
            let _ = write!(out, "{v:18.2} ");
        } else {
            let _ = write!(out, "{v:18.0} ");
        }
        let _ = write!(out, "{unit:<4} {:<32}", row.name);
        match metric(row, wall, nsecs) {
            Some((r, u)) => {
                let num = format!("{r:8.3}");
                let n = 3 + num.len();
                let w = METRIC_LEN.saturating_sub(n + 1);
                let _ = write!(out, " # {num} {u:<w$}");
            }
            None => {
                let _ = write!(out, "{:METRIC_LEN$}", "");
            }
        }
    }
    if runs > 1 {
        let p = row.value.rel_pct();
        if p != 0.0 {
            let _ = write!(out, "  ( +-{p:6.2}% )");
        }
    }
    if run != ena {
        let _ = write!(out, "  ({pct:.2}%)");
    }
    out.push('\n');
}

fn csv_row(out: &mut String, sep: &str, row: &Row, wall: &Stats, nsecs: Option<f64>, runs: u32) {
    let (run, ena, pct) = pct_running(row);
    let unit = unit_of(row);
    let counted = row.supported && run != 0 && ena != 0;
    if counted {
        let v = shown_value(row);
        if row.is_clock {
            let _ = write!(out, "{v:.2}");
        } else {
            let _ = write!(out, "{v:.0}");
        }
    } else if row.supported {
        out.push_str("<not counted>");
    } else {
        out.push_str("<not supported>");
    }
    let _ = write!(out, "{sep}{unit}{sep}{}", row.name);
    if runs > 1 {
        let _ = write!(out, "{sep}{:.2}%", row.value.rel_pct());
    }
    let _ = write!(out, "{sep}{run}{sep}{pct:.2}");
    match counted.then(|| metric(row, wall, nsecs)).flatten() {
        Some((r, u)) => {
            let num = format!("{r:8.3}");
            let num: String = num
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let _ = write!(out, "{sep}{num}{sep}{}", u.trim_start());
        }
        None => {
            let _ = write!(out, "{sep}{sep}");
        }
    }
    out.push('\n');
}

/// JSON string contents (event names are plain, but be safe).
fn json_str(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

fn json_row(out: &mut String, row: &Row, wall: &Stats, nsecs: Option<f64>, runs: u32) {
    let (run, ena, pct) = pct_running(row);
    let counted = row.supported && run != 0 && ena != 0;
    out.push('{');
    if counted {
        let _ = write!(out, "\"counter-value\" : \"{:.6}\", ", shown_value(row));
    } else {
        let what = if row.supported {
            "<not counted>"
        } else {
            "<not supported>"
        };
        let _ = write!(out, "\"counter-value\" : \"{what}\", ");
    }
    let _ = write!(
        out,
        "\"unit\" : \"{}\", \"event\" : \"{}\", ",
        unit_of(row),
        json_str(&row.name)
    );
    if runs > 1 {
        let _ = write!(out, "\"variance\" : {:.2}, ", row.value.rel_pct());
    }
    let _ = write!(
        out,
        "\"event-runtime\" : {run}, \"pcnt-running\" : {pct:.2}, "
    );
    let (v, u) = if counted {
        match metric(row, wall, nsecs) {
            Some((r, u)) => (r, u),
            // perf prints a NULL unit through printf.
            None => (0.0, "(null)".into()),
        }
    } else {
        (0.0, String::new())
    };
    let _ = write!(
        out,
        "\"metric-value\" : {v:.6}, \"metric-unit\" : \"{u}\"}}"
    );
    out.push('\n');
}

/// perf's get_precision: two digits more than the spread's first.
fn precision(sd: f64) -> usize {
    if sd > 1.0 || sd <= 0.0 || !sd.is_finite() {
        return 2;
    }
    (-sd.log10()).ceil().max(0.0) as usize + 2
}

fn header(a: &StatArgs, runs: u32) -> String {
    let mut s = String::from("\n Performance counter stats for ");
    if a.all_cpus {
        s.push_str("'system wide");
    } else if let Some(p) = &a.pid {
        let _ = write!(s, "process id '{p}");
    } else {
        s.push('\'');
        let words: Vec<String> = a
            .command
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        s.push_str(&words.join(" "));
    }
    s.push('\'');
    if runs > 1 {
        let _ = write!(s, " ({runs} runs)");
    }
    s.push_str(":\n\n");
    s
}

fn footer(out: &mut String, wall: &Stats, runs: u32, rusage: Option<(f64, f64)>) {
    out.push('\n');
    let avg = wall.mean / 1e9;
    if runs == 1 {
        let _ = write!(out, " {avg:17.9} seconds time elapsed");
        if let Some((u, s)) = rusage {
            let _ = write!(out, "\n\n {u:17.9} seconds user\n {s:17.9} seconds sys\n");
        }
    } else {
        let sd = wall.stderr() / 1e9;
        let p = precision(sd);
        let _ = write!(out, " {avg:17.p$} +- {sd:.p$} seconds time elapsed");
        let pct = if avg != 0.0 { 100.0 * sd / avg } else { 0.0 };
        if pct != 0.0 {
            let _ = write!(out, "  ( +-{pct:6.2}% )");
        }
    }
    out.push_str("\n\n");
}

/// How counts are split (`-A`, `--per-*`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Aggr {
    Global,
    Cpu,
    Thread,
    Core,
    Die,
    Socket,
}

impl Aggr {
    fn of(a: &StatArgs) -> Aggr {
        if a.no_aggr {
            Aggr::Cpu
        } else if a.per_thread {
            Aggr::Thread
        } else if a.per_core {
            Aggr::Core
        } else if a.per_die {
            Aggr::Die
        } else if a.per_socket {
            Aggr::Socket
        } else {
            Aggr::Global
        }
    }
}

/// A CPU's place: (socket, die, core) from sysfs, 0 where unknown.
fn topology(cpu: i32) -> (i64, i64, i64) {
    let read = |what: &str| -> i64 {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{what}"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    };
    (read("physical_package_id"), read("die_id"), read("core_id"))
}

/// One line's label in the three layouts, as perf's aggr_printout.
struct Label {
    std: String,
    csv: String,
    json: String,
}

fn label(aggr: Aggr, key: &(i64, i64, i64, i64), name: &str, nr: usize, sep: &str) -> Label {
    let (s, d, c, id) = *key;
    let (text, std, json_key) = match aggr {
        Aggr::Cpu => (
            format!("CPU{id}"),
            format!("CPU{id:<7} "),
            format!("\"cpu\" : \"{id}\", "),
        ),
        Aggr::Thread => (
            format!("{name}-{id}"),
            format!("{name:>16}-{id:<8} "),
            format!("\"thread\" : \"{}-{id}\", ", json_str(name)),
        ),
        Aggr::Core => (
            format!("S{s}-D{d}-C{c}"),
            format!("S{s}-D{d}-C{c:<8} {nr:>4} "),
            format!("\"core\" : \"S{s}-D{d}-C{c}\", \"aggregate-number\" : {nr}, "),
        ),
        Aggr::Die => (
            format!("S{s}-D{d}"),
            format!("S{s}-D{d:<8} {nr:>4} "),
            format!("\"die\" : \"S{s}-D{d}\", \"aggregate-number\" : {nr}, "),
        ),
        Aggr::Socket | Aggr::Global => (
            format!("S{s}"),
            format!("S{s:<5} {nr:>4} "),
            format!("\"socket\" : \"S{s}\", \"aggregate-number\" : {nr}, "),
        ),
    };
    let csv = match aggr {
        Aggr::Cpu | Aggr::Thread => format!("{text}{sep}"),
        _ => format!("{text}{sep}{nr}{sep}"),
    };
    Label {
        std,
        csv,
        json: json_key,
    }
}

/// The split table of `-A` and `--per-*`: perf prints by event then CPU
/// or thread (threads busiest first), and by core, die or socket then
/// event.
fn aggregated(aggr: Aggr, format: &Format, run: &CountRun) -> String {
    // Each target's key: (socket, die, core, id) with id the CPU or tid.
    let keys: Vec<(i64, i64, i64, i64)> = run
        .targets
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
            }
        })
        .collect();
    let mut groups: Vec<(i64, i64, i64, i64)> = keys.clone();
    groups.sort_unstable();
    groups.dedup();
    let members = |g: &(i64, i64, i64, i64)| keys.iter().filter(|k| *k == g).count();
    let name_of = |g: &(i64, i64, i64, i64)| -> String {
        keys.iter()
            .position(|k| k == g)
            .map(|i| run.targets[i].comm.clone())
            .unwrap_or_default()
    };
    // Sum of each counter's parts per group.
    let sum = |c: &Counter, g: &(i64, i64, i64, i64)| -> Part {
        let mut p = Part::default();
        for part in c.parts.iter().filter(|p| keys.get(p.target) == Some(g)) {
            p.value += part.value;
            p.enabled += part.enabled;
            p.running += part.running;
        }
        p
    };
    let row_of = |c: &Counter, g: &(i64, i64, i64, i64)| -> Row {
        let p = sum(c, g);
        Row::single(c, p.value, p.enabled, p.running)
    };
    let mut wall = Stats::default();
    wall.add(run.wall_ns as f64);
    let nsecs_of = |g: &(i64, i64, i64, i64)| -> Option<f64> {
        run.counters
            .iter()
            .map(|c| row_of(c, g))
            .find(|r| r.is_clock && r.supported && r.running.mean > 0.0)
            .map(|r| r.value.mean)
    };
    let sep = match format {
        Format::Csv(s) => s.as_str(),
        _ => "",
    };
    let mut out = String::new();
    let mut line = |g: &(i64, i64, i64, i64), c: &Counter| {
        let row = row_of(c, g);
        let nsecs = nsecs_of(g);
        let l = label(aggr, g, &name_of(g), members(g), sep);
        let mut text = String::new();
        match format {
            Format::Std => {
                std_row(&mut text, &row, &wall, nsecs, 1);
                let _ = write!(out, "{}{text}", l.std);
            }
            Format::Csv(_) => {
                csv_row(&mut text, sep, &row, &wall, nsecs, 1);
                let _ = write!(out, "{}{text}", l.csv);
            }
            Format::Json => {
                json_row(&mut text, &row, &wall, nsecs, 1);
                let rest = text.strip_prefix('{').unwrap_or(&text);
                let _ = write!(out, "{{{}{rest}", l.json);
            }
        }
    };
    match aggr {
        Aggr::Cpu | Aggr::Thread => {
            for c in &run.counters {
                let mut gs = groups.clone();
                if aggr == Aggr::Thread {
                    // Busiest first, as perf sorts its per-thread lines.
                    gs.sort_by(|a, b| sum(c, b).value.cmp(&sum(c, a).value).then(a.cmp(b)));
                }
                for g in &gs {
                    line(g, c);
                }
            }
        }
        _ => {
            for g in &groups {
                for c in &run.counters {
                    line(g, c);
                }
            }
        }
    }
    out
}

/// Where the counts go: stderr, or `-o FILE`.
fn open_output(a: &StatArgs) -> Result<Box<dyn Write>> {
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

/// `-I`: one block of lines per interval, from the differences of the
/// running totals, laid out as perf's print_interval.
struct Ticker<'a> {
    format: &'a Format,
    interval_ns: f64,
    prev: Vec<Counter>,
    ticks: u64,
}

impl Ticker<'_> {
    fn lines(&mut self, t_ns: u64, totals: &[Counter]) -> String {
        let rows: Vec<Row> = totals
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = self.prev.get(i);
                Row::single(
                    c,
                    c.value.saturating_sub(p.map_or(0, |p| p.value)),
                    c.enabled.saturating_sub(p.map_or(0, |p| p.enabled)),
                    c.running.saturating_sub(p.map_or(0, |p| p.running)),
                )
            })
            .collect();
        self.prev = totals.to_vec();
        let nsecs = rows
            .iter()
            .find(|r| r.is_clock && r.supported && r.running.mean > 0.0)
            .map(|r| r.value.mean);
        // perf's ratios are per nominal interval, not the measured one.
        let mut wall = Stats::default();
        wall.add(self.interval_ns);
        let stamp = format!("{:6}.{:09}", t_ns / 1_000_000_000, t_ns % 1_000_000_000);
        let mut out = String::new();
        if matches!(self.format, Format::Std) && self.ticks % 25 == 0 {
            out.push_str("#           time             counts unit events\n");
        }
        self.ticks += 1;
        for row in &rows {
            let mut line = String::new();
            match self.format {
                Format::Std => {
                    std_row(&mut line, row, &wall, nsecs, 1);
                    let _ = write!(out, "{stamp} {line}");
                }
                Format::Csv(sep) => {
                    csv_row(&mut line, sep, row, &wall, nsecs, 1);
                    let _ = write!(out, "{stamp}{sep}{line}");
                }
                Format::Json => {
                    json_row(&mut line, row, &wall, nsecs, 1);
                    let rest = line.strip_prefix('{').unwrap_or(&line);
                    let secs = t_ns as f64 / 1e9;
                    let _ = write!(out, "{{\"interval\" : {secs:.9}, {rest}");
                }
            }
        }
        out
    }
}

pub fn run(a: StatArgs) -> Result<ExitCode> {
    let format = match (&a.field_separator, a.json) {
        (_, true) => Format::Json,
        (Some(s), false) => Format::Csv(s.clone()),
        (None, false) => Format::Std,
    };
    let opts = CountOptions {
        events: a.event.clone(),
        command: a.command.clone(),
        pids: a
            .pid
            .as_deref()
            .map(|p| super::positive_ids("-p", p))
            .transpose()?
            .unwrap_or_default(),
        system_wide: a.all_cpus,
        no_inherit: a.no_inherit,
        interval_ms: a.interval_print,
    };
    if let Err(e) = record::count::events_of(&opts) {
        // As perf: the error, then where to find the valid names.
        crate::ui::print_error(&anyhow::Error::new(e));
        eprintln!("Run 'sear stat --help' for a list of valid events");
        return Ok(ExitCode::from(2));
    }
    if opts.command.is_empty() && opts.pids.is_empty() && !opts.system_wide {
        anyhow::bail!(
            "nothing to count: give a command (`sear stat -- ./prog args`), -p PID or -a"
        );
    }
    let aggr = Aggr::of(&a);
    match aggr {
        Aggr::Global => {}
        Aggr::Thread if opts.pids.is_empty() => anyhow::bail!(
            "--per-thread needs -p PID: it splits the counts of running processes by thread"
        ),
        Aggr::Thread => {}
        _ if !opts.system_wide => anyhow::bail!(
            "-A and --per-core/--per-die/--per-socket need -a: they split system-wide counts by CPU"
        ),
        _ => {}
    }
    if aggr != Aggr::Global && a.interval_print.is_some() {
        anyhow::bail!("-I with -A or --per-* is not supported yet: use one of them");
    }
    let runs = if opts.command.is_empty() { 1 } else { a.repeat };
    let mut sink = open_output(&a)?;
    let mut rows: Vec<Row> = Vec::new();
    let mut wall = Stats::default();
    let mut last: Option<CountRun> = None;
    for _ in 0..runs {
        let mut ticker = Ticker {
            format: &format,
            interval_ns: a.interval_print.unwrap_or(0) as f64 * 1e6,
            prev: Vec::new(),
            ticks: 0,
        };
        let mut on_interval = |t: u64, totals: &[Counter]| -> io::Result<()> {
            sink.write_all(ticker.lines(t, totals).as_bytes())?;
            sink.flush()
        };
        let r = match record::count::count_with(&opts, &mut on_interval) {
            Ok(r) => r,
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
        if rows.is_empty() {
            rows = r.counters.iter().map(Row::empty).collect();
        }
        for (row, c) in rows.iter_mut().zip(&r.counters) {
            row.add(c.value, c.enabled, c.running);
        }
        wall.add(r.wall_ns as f64);
        last = Some(r);
    }
    let status = last.as_ref().and_then(|r| r.exit_status).unwrap_or(0);
    if a.interval_print.is_some() {
        // The intervals were the output (perf prints no totals with -I).
        return Ok(ExitCode::from(status));
    }
    let nsecs = rows
        .iter()
        .find(|r| r.is_clock && r.supported && r.running.mean > 0.0)
        .map(|r| r.value.mean);
    let mut out = String::new();
    match &format {
        Format::Std if aggr != Aggr::Global => {
            out.push_str(&header(&a, runs));
            if let Some(r) = &last {
                out.push_str(&aggregated(aggr, &format, r));
            }
            footer(&mut out, &wall, runs, None);
        }
        _ if aggr != Aggr::Global => {
            if let Some(r) = &last {
                out.push_str(&aggregated(aggr, &format, r));
            }
        }
        Format::Std => {
            out.push_str(&header(&a, runs));
            for row in &rows {
                std_row(&mut out, row, &wall, nsecs, runs);
            }
            let rusage = last
                .as_ref()
                .filter(|_| !a.command.is_empty() && opts.pids.is_empty() && !a.all_cpus)
                .map(|r| (r.user_secs, r.sys_secs));
            footer(&mut out, &wall, runs, rusage);
        }
        Format::Csv(sep) => {
            for row in &rows {
                csv_row(&mut out, sep, row, &wall, nsecs, runs);
            }
        }
        Format::Json => {
            for row in &rows {
                json_row(&mut out, row, &wall, nsecs, runs);
            }
        }
    }
    // A closed stderr is no reason to fail the command's status.
    if let Err(e) = sink.write_all(out.as_bytes()).and_then(|_| sink.flush()) {
        if a.output.is_some() {
            return Err(e).context("writing the counts");
        }
    }
    Ok(ExitCode::from(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_like_perf() {
        let mut s = Stats::default();
        for x in [10.0, 12.0, 14.0] {
            s.add(x);
        }
        assert!((s.mean - 12.0).abs() < 1e-9);
        // stddev 2, standard error 2/sqrt(3)
        assert!((s.stderr() - 2.0 / 3f64.sqrt()).abs() < 1e-9);
        assert_eq!(precision(0.0000288), 7);
        assert_eq!(rate_unit(1234.0).1, "K/sec");
    }
}
