//! `perf stat`'s output from [`record::stat`]'s statistics: the table, CSV
//! (`-x`) and JSON (`--json`) lines as perf 6.1 lays them out
//! (tools/perf/util/stat-display.c), the per-interval lines of `-I`, and
//! the labelled lines of `-A`/`--per-*`.

use std::fmt::Write as _;

use record::stat::{Aggr, EventStats, SplitLine, Spread};

/// perf 6.1's METRIC_LEN: the width of the `# ratio unit` column.
const METRIC_LEN: usize = 35;

/// The output format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    Std,
    /// `-x SEP`.
    Csv(String),
    Json,
}

/// What was counted, for the table's first line.
#[derive(Debug, Clone)]
pub enum Counted {
    SystemWide,
    /// `-C` without `-a`: the list as typed.
    Cpus(String),
    Pid(String),
    /// `-t`: the thread ids as given.
    Tid(String),
    Command(Vec<String>),
}

impl Counted {
    /// What perf's header names, in its order: `-C` CPUs (without -a),
    /// system-wide, `-p` pids, `-t` tids, else the command.
    pub fn of(
        cpus: Option<&str>,
        system_wide: bool,
        pids: Option<&str>,
        tids: Option<&str>,
        command: &[std::ffi::OsString],
    ) -> Self {
        match (cpus, system_wide, pids, tids) {
            (Some(c), false, ..) => Counted::Cpus(c.to_owned()),
            (_, true, ..) => Counted::SystemWide,
            (_, _, Some(p), _) => Counted::Pid(p.to_owned()),
            (_, _, _, Some(t)) => Counted::Tid(t.to_owned()),
            _ => Counted::Command(
                command
                    .iter()
                    .map(|w| w.to_string_lossy().into_owned())
                    .collect(),
            ),
        }
    }
}

/// How perf stat writes numbers: perf stat applies the user's
/// `LC_NUMERIC`, so every number with a fraction has the locale's decimal
/// point, and the table's counts (printf's `%'` flag, perf's `big_num`,
/// on unless `--no-big-num`) its thousands separator. The default is the C
/// locale's (a point, no grouping).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numeric {
    pub decimal: String,
    pub thousands: String,
    /// The sizes of the digit groups from the right, as `localeconv`'s
    /// `grouping`: the last one repeats; 0 or 127 and above end grouping.
    pub grouping: Vec<u8>,
    /// perf's `big_num`: group the counts.
    pub big_num: bool,
}

impl Default for Numeric {
    fn default() -> Self {
        Numeric {
            decimal: ".".into(),
            thousands: String::new(),
            grouping: Vec::new(),
            big_num: true,
        }
    }
}

impl Numeric {
    /// printf's `%.{prec}f` in this locale.
    pub fn fixed(&self, v: f64, prec: usize) -> String {
        let s = format!("{v:.prec$}");
        if self.decimal == "." {
            s
        } else {
            s.replacen('.', &self.decimal, 1)
        }
    }

    /// printf's `%'.{prec}f` in this locale (the digits before the
    /// decimal point grouped), or `%.{prec}f` without `big_num`.
    pub fn grouped(&self, v: f64, prec: usize) -> String {
        let s = format!("{v:.prec$}");
        if !self.big_num || self.thousands.is_empty() || self.grouping.is_empty() {
            return self.fixed(v, prec);
        }
        let (int, frac) = match s.find('.') {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s.as_str(), None),
        };
        let (sign, digits) = match int.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("", int),
        };
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return self.fixed(v, prec);
        }
        // Groups from the right.
        let mut groups: Vec<&str> = Vec::new();
        let mut end = digits.len();
        let mut sizes = self.grouping.iter().copied();
        let mut size = sizes.next().unwrap_or(0);
        while end > 0 {
            if size == 0 || size >= 127 || end <= size as usize {
                groups.push(&digits[..end]);
                break;
            }
            groups.push(&digits[end - size as usize..end]);
            end -= size as usize;
            if let Some(next) = sizes.next() {
                size = next;
            }
        }
        groups.reverse();
        let mut out = format!("{sign}{}", groups.join(&self.thousands));
        if let Some(f) = frac {
            out.push_str(&self.decimal);
            out.push_str(f);
        }
        out
    }
}

thread_local! {
    static NUMERIC: std::cell::RefCell<Numeric> = std::cell::RefCell::new(Numeric::default());
}

/// Runs `f` (which renders) with numbers written as `n` says; outside it,
/// the C locale's way.
pub fn with_numeric<R>(n: &Numeric, f: impl FnOnce() -> R) -> R {
    let old = NUMERIC.with(|c| c.replace(n.clone()));
    let r = f();
    NUMERIC.with(|c| c.replace(old));
    r
}

/// `s` right-aligned in `width` bytes, as printf pads (a multibyte
/// separator counts its bytes).
fn lpad(s: &str, width: usize) -> String {
    format!("{}{s}", " ".repeat(width.saturating_sub(s.len())))
}

/// `%.{prec}f` as the current [`Numeric`] writes it.
fn fx(v: f64, prec: usize) -> String {
    NUMERIC.with(|c| c.borrow().fixed(v, prec))
}

/// `%'.{prec}f` as the current [`Numeric`] writes it.
fn gx(v: f64, prec: usize) -> String {
    NUMERIC.with(|c| c.borrow().grouped(v, prec))
}

/// perf's convert_unit_double: K, M, G for rates.
fn rate_unit(v: f64) -> (f64, &'static str) {
    if v >= 1e9 {
        (v / 1e9, "G/sec")
    } else if v >= 1e6 {
        (v / 1e6, "M/sec")
    } else if v >= 1e3 {
        (v / 1e3, "K/sec")
    } else {
        (v, "/sec")
    }
}

/// The `#` column of a row: (ratio, unit), or None when there is nothing
/// to compare with (no clock event counted).
fn metric(row: &EventStats, wall: &Spread, clock_ns: Option<f64>) -> Option<(f64, &'static str)> {
    if row.is_clock {
        let ratio = if wall.mean != 0.0 {
            row.value.mean / wall.mean
        } else {
            0.0
        };
        return Some((ratio, "CPUs utilized"));
    }
    let total = clock_ns?;
    let r = if total != 0.0 {
        1e9 * row.value.mean / total
    } else {
        0.0
    };
    Some(rate_unit(r))
}

fn unit_of(row: &EventStats) -> &'static str {
    if row.is_clock {
        "msec"
    } else {
        ""
    }
}

/// The printed count: msec for clocks (perf's scale 1e-6).
fn shown_value(row: &EventStats) -> f64 {
    if row.is_clock {
        row.value.mean / 1e6
    } else {
        row.value.mean
    }
}

fn pct_running(row: &EventStats) -> (u64, u64, f64) {
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

/// One event's line in `format`; `runs` over 1 adds the spread.
pub fn row(
    out: &mut String,
    format: &Format,
    row: &EventStats,
    wall: &Spread,
    clock_ns: Option<f64>,
    runs: u32,
) {
    match format {
        Format::Std => std_row(out, row, wall, clock_ns, runs),
        Format::Csv(sep) => csv_row(out, sep, row, wall, clock_ns, runs),
        Format::Json => json_row(out, row, wall, clock_ns, runs),
    }
}

fn std_row(out: &mut String, row: &EventStats, wall: &Spread, clock_ns: Option<f64>, runs: u32) {
    let (run, ena, pct) = pct_running(row);
    let unit = unit_of(row);
    if !row.supported || run == 0 || ena == 0 {
        let what = if row.supported {
            "<not counted>"
        } else {
            "<not supported>"
        };
        let _ = write!(out, "{what:>18} {unit:<4} {:<25}", row.name);
        if let Some(cg) = &row.cgroup {
            let _ = write!(out, " {cg}");
        }
        let _ = write!(out, "{:METRIC_LEN$}", "");
    } else {
        let v = shown_value(row);
        let shown = gx(v, if row.is_clock { 2 } else { 0 });
        let _ = write!(out, "{} ", lpad(&shown, 18));
        let _ = write!(out, "{unit:<4} {:<32}", row.name);
        if let Some(cg) = &row.cgroup {
            let _ = write!(out, " {cg}");
        }
        match metric(row, wall, clock_ns) {
            Some((r, u)) => {
                let num = lpad(&fx(r, 3), 8);
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
            let _ = write!(out, "  ( +-{}% )", lpad(&fx(p, 2), 6));
        }
    }
    if run != ena {
        let _ = write!(out, "  ({}%)", fx(pct, 2));
    }
    out.push('\n');
}

fn csv_row(
    out: &mut String,
    sep: &str,
    row: &EventStats,
    wall: &Spread,
    clock_ns: Option<f64>,
    runs: u32,
) {
    let (run, ena, pct) = pct_running(row);
    let unit = unit_of(row);
    let counted = row.supported && run != 0 && ena != 0;
    if counted {
        let v = shown_value(row);
        out.push_str(&fx(v, if row.is_clock { 2 } else { 0 }));
    } else if row.supported {
        out.push_str("<not counted>");
    } else {
        out.push_str("<not supported>");
    }
    let _ = write!(out, "{sep}{unit}{sep}{}", row.name);
    if let Some(cg) = &row.cgroup {
        let _ = write!(out, "{sep}{cg}");
    }
    if runs > 1 {
        let _ = write!(out, "{sep}{}%", fx(row.value.rel_pct(), 2));
    }
    let _ = write!(out, "{sep}{run}{sep}{}", fx(pct, 2));
    match counted.then(|| metric(row, wall, clock_ns)).flatten() {
        Some((r, u)) => {
            // perf cuts the number at its first character other than a
            // digit or a point (a locale's decimal comma included).
            let num = fx(r, 3);
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

/// A JSON string's contents (quotes and backslashes escaped, as
/// serde_json writes them).
fn json_str(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or("")
        .to_owned()
}

fn json_row(out: &mut String, row: &EventStats, wall: &Spread, clock_ns: Option<f64>, runs: u32) {
    let (run, ena, pct) = pct_running(row);
    let counted = row.supported && run != 0 && ena != 0;
    out.push('{');
    if counted {
        let _ = write!(out, "\"counter-value\" : \"{}\", ", fx(shown_value(row), 6));
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
    if let Some(cg) = &row.cgroup {
        let _ = write!(out, "\"cgroup\" : \"{}\", ", json_str(cg));
    }
    if runs > 1 {
        let _ = write!(out, "\"variance\" : {}, ", fx(row.value.rel_pct(), 2));
    }
    let _ = write!(
        out,
        "\"event-runtime\" : {run}, \"pcnt-running\" : {}, ",
        fx(pct, 2)
    );
    let (v, u) = if counted {
        // perf prints a NULL unit through printf.
        metric(row, wall, clock_ns).unwrap_or((0.0, "(null)"))
    } else {
        (0.0, "")
    };
    let _ = write!(
        out,
        "\"metric-value\" : {}, \"metric-unit\" : \"{u}\"}}",
        fx(v, 6)
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

/// The table's first lines.
pub fn header(counted: &Counted, runs: u32) -> String {
    let mut s = String::from("\n Performance counter stats for ");
    match counted {
        Counted::SystemWide => s.push_str("'system wide"),
        Counted::Cpus(list) => {
            let _ = write!(s, "'CPU(s) {list}");
        }
        Counted::Pid(p) => {
            let _ = write!(s, "process id '{p}");
        }
        Counted::Tid(t) => {
            let _ = write!(s, "thread id '{t}");
        }
        Counted::Command(words) => {
            s.push('\'');
            s.push_str(&words.join(" "));
        }
    }
    s.push('\'');
    if runs > 1 {
        let _ = write!(s, " ({runs} runs)");
    }
    s.push_str(":\n\n");
    s
}

/// The table's last lines: the elapsed time (with its spread over runs),
/// and the command's user and system time for a single run of one.
pub fn footer(
    out: &mut String,
    wall: &Spread,
    runs: u32,
    rusage: Option<(f64, f64)>,
    table: Option<&[u64]>,
) {
    // (A blank line after the rows; with no rows (-n), the header's.)
    if !out.ends_with("\n\n") {
        out.push('\n');
    }
    let avg = wall.mean / 1e9;
    if runs == 1 {
        let _ = write!(out, " {} seconds time elapsed", lpad(&fx(avg, 9), 17));
        if let Some((u, s)) = rusage {
            let _ = write!(
                out,
                "\n\n {} seconds user\n {} seconds sys\n",
                lpad(&fx(u, 9), 17),
                lpad(&fx(s, 9), 17)
            );
        }
    } else {
        let sd = wall.stderr() / 1e9;
        let p = precision(sd);
        if let Some(walls) = table {
            run_table(out, walls, avg, p);
        }
        let _ = write!(
            out,
            " {} +- {} seconds time elapsed",
            lpad(&fx(avg, p), 17),
            fx(sd, p)
        );
        let pct = if avg != 0.0 { 100.0 * sd / avg } else { 0.0 };
        if pct != 0.0 {
            let _ = write!(out, "  ( +-{}% )", lpad(&fx(pct, 2), 6));
        }
    }
    out.push_str("\n\n");
}

/// `--table`: each run's wall time, its difference from the mean and a bar
/// of one `#` per 5% of it (perf's `print_table`).
fn run_table(out: &mut String, walls: &[u64], avg: f64, p: usize) {
    let first = format!(" {}", lpad(&fx(avg, p), 17));
    let indent = first.len() - first.trim_start_matches(' ').len();
    let _ = writeln!(out, "{:indent$}# Table of individual measurements:", "");
    for &ns in walls {
        let run = ns as f64 / 1e9;
        // C: 1 + abs((int)(100.0 * (run - avg) / run) / 5).
        let pct = if run != 0.0 {
            (100.0 * (run - avg) / run) as i64
        } else {
            0
        };
        let bars = 1 + (pct / 5).unsigned_abs() as usize;
        let diff = run - avg;
        let signed = if diff.is_sign_negative() {
            fx(diff, p)
        } else {
            format!("+{}", fx(diff, p))
        };
        let _ = writeln!(
            out,
            " {} ({signed}) {}",
            lpad(&fx(run, p), 17),
            "#".repeat(bars)
        );
    }
    let _ = writeln!(out, "\n{:indent$}# Final result:", "");
}

/// One interval's lines (`-I`), stamped with the time since counting
/// started; `tick` is the interval's number (the table's column header
/// comes back every 25).
pub fn interval(
    format: &Format,
    t_ns: u64,
    tick: u64,
    rows: &[EventStats],
    interval_ns: f64,
) -> String {
    // perf's ratios are per nominal interval, not the measured one.
    let wall = Spread::of(interval_ns);
    let stamp = stamp_of(t_ns);
    let mut out = String::new();
    if *format == Format::Std && tick.is_multiple_of(25) {
        out.push_str(&interval_title(Aggr::Global, false));
    }
    for r in rows {
        let mut line = String::new();
        let clock_ns = record::stat::clock_ns_for(rows, r);
        row(&mut line, format, r, &wall, clock_ns, 1);
        match format {
            Format::Std => {
                let _ = write!(out, "{stamp} {line}");
            }
            Format::Csv(sep) => {
                let _ = write!(out, "{stamp}{sep}{line}");
            }
            Format::Json => {
                let rest = line.strip_prefix('{').unwrap_or(&line);
                let secs = t_ns as f64 / 1e9;
                let _ = write!(out, "{{\"interval\" : {secs:.9}, {rest}");
            }
        }
    }
    out
}

/// The lines of a split table (`-A`, `--per-*`), each with its label as
/// perf's aggr_printout writes it.
pub fn split(aggr: Aggr, format: &Format, lines: &[SplitLine], wall_ns: u64) -> String {
    split_lines(aggr, format, lines, wall_ns as f64, None)
}

/// One interval's split table (`-I` with `-A`/`--per-*`): [`split`]'s
/// lines, each after the interval's time stamp, the column titles first
/// as [`interval`] puts them. The ratios are per nominal interval.
pub fn interval_split(
    aggr: Aggr,
    format: &Format,
    t_ns: u64,
    tick: u64,
    lines: &[SplitLine],
    interval_ns: f64,
) -> String {
    let mut out = String::new();
    if *format == Format::Std && tick.is_multiple_of(25) {
        out.push_str(&interval_title(aggr, false));
    }
    out.push_str(&split_lines(aggr, format, lines, interval_ns, Some(t_ns)));
    out
}

/// perf 6.1's column titles of an interval table (`-I`), per split; with
/// `--metric-only` the metric titles follow instead of the counts'.
fn interval_title(aggr: Aggr, metric_only: bool) -> String {
    let (base, pad) = match aggr {
        Aggr::Global => ("#           time", "             "),
        Aggr::Cpu => ("#           time CPU    ", "                "),
        Aggr::Thread => (
            "#           time             comm-pid",
            "                  ",
        ),
        Aggr::Socket => ("#           time socket cpus", "             "),
        Aggr::Die => ("#           time die          cpus", "             "),
        Aggr::Core => ("#           time core            cpus", "             "),
        Aggr::Node => ("#           time node   cpus", "             "),
    };
    if metric_only {
        format!("{base} \n")
    } else {
        format!("{base}{pad}counts unit events\n")
    }
}

/// The time stamp perf puts before an interval's lines.
fn stamp_of(t_ns: u64) -> String {
    format!("{:6}.{:09}", t_ns / 1_000_000_000, t_ns % 1_000_000_000)
}

/// A split line's label as perf's aggr_printout writes it: plain (CSV),
/// padded (the table) and as JSON keys.
fn split_label(aggr: Aggr, l: &SplitLine) -> (String, String, String) {
    let (s, d, c, id) = l.key;
    let (nr, name) = (l.members, &l.name);
    match aggr {
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
        Aggr::Node => (
            format!("N{s}"),
            format!("N{s:<5} {nr:>4} "),
            format!("\"node\" : \"N{s}\", \"aggregate-number\" : {nr}, "),
        ),
        Aggr::Socket | Aggr::Global => (
            format!("S{s}"),
            format!("S{s:<5} {nr:>4} "),
            format!("\"socket\" : \"S{s}\", \"aggregate-number\" : {nr}, "),
        ),
    }
}

/// [`split`] (or, with an interval's time, [`interval_split`]) without
/// the titles.
fn split_lines(
    aggr: Aggr,
    format: &Format,
    lines: &[SplitLine],
    wall_ns: f64,
    stamp: Option<u64>,
) -> String {
    let wall = Spread::of(wall_ns);
    let sep = match format {
        Format::Csv(s) => s.as_str(),
        _ => "",
    };
    let mut out = String::new();
    for l in lines {
        let nr = l.members;
        let (text, std, json_key) = split_label(aggr, l);
        match (stamp, format) {
            (None, _) => {}
            (Some(t), Format::Std) => {
                let _ = write!(out, "{} ", stamp_of(t));
            }
            (Some(t), Format::Csv(_)) => {
                let _ = write!(out, "{}{sep}", stamp_of(t));
            }
            (Some(t), Format::Json) => {
                let _ = write!(out, "{{\"interval\" : {:.9}, ", t as f64 / 1e9);
            }
        }
        let mut text_row = String::new();
        row(&mut text_row, format, &l.stats, &wall, l.clock_ns, 1);
        match format {
            Format::Std => {
                let _ = write!(out, "{std}{text_row}");
            }
            Format::Csv(_) => {
                let label = match aggr {
                    Aggr::Cpu | Aggr::Thread => format!("{text}{sep}"),
                    _ => format!("{text}{sep}{nr}{sep}"),
                };
                let _ = write!(out, "{label}{text_row}");
            }
            Format::Json => {
                // (After an interval's opening, which holds the brace.)
                let open = if stamp.is_some() { "" } else { "{" };
                let rest = text_row.strip_prefix('{').unwrap_or(&text_row);
                let _ = write!(out, "{open}{json_key}{rest}");
            }
        }
    }
    out
}

/// How [`counts`] lays the totals out.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// How many runs were summed (over 1: means and spreads).
    pub runs: u32,
    /// The split of `-A`/`--per-*` (Global: totals).
    pub aggr: Aggr,
    /// Add the last run's user and system times (a command's, in the
    /// global view).
    pub rusage: bool,
    /// `--table`: each run's wall time before the result.
    pub table: bool,
    /// With -x: each line begins with perf's `summary` column (the totals
    /// after `-I ... --summary`, unless `--no-csv-summary`).
    pub summary_column: bool,
    /// `--metric-only`: the metrics alone (see [`metric_only`]).
    pub metric_only: bool,
}

impl Layout {
    /// One run's totals, nothing else.
    pub fn single() -> Self {
        Layout {
            runs: 1,
            aggr: Aggr::Global,
            rusage: false,
            table: false,
            summary_column: false,
            metric_only: false,
        }
    }
}

/// The whole of perf stat's output after `layout.runs` runs: the header,
/// the rows summed over the runs (or the last run split per
/// `layout.aggr`), the footer.
pub fn counts(
    format: &Format,
    counted: &Counted,
    all: &record::stat::Runs,
    layout: Layout,
) -> String {
    let Layout {
        runs,
        aggr,
        rusage,
        table,
        ..
    } = layout;
    let mut out = String::new();
    if *format == Format::Std {
        out.push_str(&header(counted, runs));
    }
    if layout.metric_only {
        match &all.last {
            Some(r) if aggr != Aggr::Global => {
                let lines = record::stat::split(aggr, r);
                let groups = metric_only_groups(&lines);
                out.push_str(&metric_only_split(aggr, format, &groups, None));
            }
            _ => out.push_str(&metric_only(format, &all.rows)),
        }
    } else {
        let mut body = String::new();
        match &all.last {
            Some(r) if aggr != Aggr::Global => {
                let lines = record::stat::split(aggr, r);
                body.push_str(&split(aggr, format, &lines, r.wall_ns));
            }
            _ if aggr != Aggr::Global => {}
            _ => {
                for r in &all.rows {
                    let clock_ns = record::stat::clock_ns_for(&all.rows, r);
                    row(&mut body, format, r, &all.wall, clock_ns, runs);
                }
            }
        }
        match format {
            Format::Csv(sep) if layout.summary_column => {
                for line in body.split_inclusive('\n') {
                    let _ = write!(out, "{:>16}{sep}{line}", "summary");
                }
            }
            _ => out.push_str(&body),
        }
    }
    if *format == Format::Std {
        let rusage = all
            .last
            .as_ref()
            .filter(|_| rusage && aggr == Aggr::Global)
            .map(|r| (r.user_secs, r.sys_secs));
        let walls = table.then_some(all.walls.as_slice());
        // (The metric-only body ends in its line's own newline: the
        // footer's blank line comes after it whatever that line holds.)
        let mut tail = String::new();
        footer(&mut tail, &all.wall, runs, rusage, walls);
        if !layout.metric_only && out.ends_with("\n\n") {
            tail.remove(0);
        }
        out.push_str(&tail);
    }
    out
}

/// perf 6.1's `--metric-only` table: a line of metric names, then one of
/// values. perf derives no metric from software events, and leaves an
/// empty column for each event it could not open (a hardware one here):
/// 21 spaces in the table, an empty field with -x, an empty
/// `metric-value` in JSON.
pub fn metric_only(format: &Format, rows: &[EventStats]) -> String {
    let empty = rows.iter().filter(|r| !r.supported).count();
    match format {
        Format::Std => format!("\n{}\n", " ".repeat(21 * empty)),
        Format::Csv(sep) => format!("\n{}\n", sep.repeat(empty)),
        Format::Json => format!("{{}}\n{}\n", "{\"metric-value\" : \"\"}".repeat(empty)),
    }
}

/// Whether perf prints an event as not counted (an empty metric column
/// with `--metric-only`): no such event here, or it never ran.
fn not_counted(r: &EventStats) -> bool {
    !r.supported || r.running.mean == 0.0 || r.enabled.mean == 0.0
}

/// perf 6.1's `--metric-only` table with `-I` and/or `-A`/`--per-*`
/// (software events: perf derives no metric from them, so each line is its
/// time stamp and split label, then an empty column per event not
/// counted). `groups`: one per split target in perf's order, each with its
/// label's line and its events' statistics. `stamp`: an interval's time
/// and number (the titles come back every 25). JSON is not done here (perf
/// 6.1 writes malformed JSON for these).
pub fn metric_only_split(
    aggr: Aggr,
    format: &Format,
    groups: &[(Option<&SplitLine>, Vec<&EventStats>)],
    stamp: Option<(u64, u64)>,
) -> String {
    let mut out = String::new();
    let csv_header = match aggr {
        Aggr::Global => "",
        Aggr::Cpu => "cpu,",
        Aggr::Thread => "comm-pid,",
        Aggr::Socket => "socket,cpus",
        Aggr::Die => "die,cpus",
        Aggr::Core => "core,cpus,",
        Aggr::Node => "node,",
    };
    let titles = match stamp {
        Some((_, tick)) => tick.is_multiple_of(25),
        None => true,
    };
    if titles {
        match (format, stamp) {
            (Format::Std, Some(_)) => out.push_str(&interval_title(aggr, true)),
            (Format::Std, None) => {
                let width = match aggr {
                    Aggr::Global => 0,
                    Aggr::Cpu | Aggr::Node => 6,
                    Aggr::Socket => 12,
                    Aggr::Die => 18,
                    Aggr::Core | Aggr::Thread => 24,
                };
                let _ = writeln!(out, "{}", " ".repeat(width));
            }
            (Format::Csv(_), Some(_)) => {
                let _ = writeln!(out, " time,{csv_header}");
            }
            (Format::Csv(_), None) => {
                let _ = writeln!(out, "{csv_header}");
            }
            (Format::Json, Some(_)) => out.push_str("{}\n"),
            (Format::Json, None) => {}
        }
    }
    for (line, events) in groups {
        let empty = events.iter().filter(|r| not_counted(r)).count();
        match format {
            Format::Std => {
                if let Some((t, _)) = stamp {
                    let _ = write!(out, "{} ", stamp_of(t));
                }
                if let Some(l) = line {
                    out.push_str(&split_label(aggr, l).1);
                }
                let _ = writeln!(out, "{}", " ".repeat(21 * empty));
            }
            Format::Csv(sep) => {
                if let Some((t, _)) = stamp {
                    let _ = write!(out, "{}{sep}", stamp_of(t));
                }
                if let Some(l) = line {
                    let text = split_label(aggr, l).0;
                    match aggr {
                        Aggr::Cpu | Aggr::Thread => {
                            let _ = write!(out, "{text}{sep}");
                        }
                        _ => {
                            let _ = write!(out, "{text}{sep}{}{sep}", l.members);
                        }
                    }
                }
                let _ = writeln!(out, "{}", sep.repeat(empty));
            }
            Format::Json => {
                if let Some((t, _)) = stamp {
                    let _ = write!(out, "{{\"interval\" : {:.9}}}", t as f64 / 1e9);
                }
                let _ = writeln!(out, "{}", "{\"metric-value\" : \"\"}".repeat(empty));
            }
        }
    }
    out
}

/// The groups of [`metric_only_split`] from a split table's lines (by
/// event then target for `-A`, by target then event otherwise): one per
/// target, in the order perf prints them.
pub fn metric_only_groups(lines: &[SplitLine]) -> Vec<(Option<&SplitLine>, Vec<&EventStats>)> {
    let mut groups: Vec<(Option<&SplitLine>, Vec<&EventStats>)> = Vec::new();
    for l in lines {
        match groups
            .iter_mut()
            .find(|(g, _)| g.is_some_and(|g| g.key == l.key))
        {
            Some((_, events)) => events.push(&l.stats),
            None => groups.push((Some(l), vec![&l.stats])),
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_and_units_as_perf() {
        assert_eq!(precision(0.0000288), 7);
        assert_eq!(precision(2.0), 2);
        assert_eq!(rate_unit(1234.0).1, "K/sec");
        assert_eq!(rate_unit(12.0).1, "/sec");
        assert_eq!(json_str("a\"b\\c"), "a\\\"b\\\\c");
    }
}

#[cfg(test)]
mod numeric_tests {
    use super::Numeric;

    fn locale(decimal: &str, thousands: &str, grouping: &[u8]) -> Numeric {
        Numeric {
            decimal: decimal.into(),
            thousands: thousands.into(),
            grouping: grouping.to_vec(),
            big_num: true,
        }
    }

    #[test]
    fn groups_as_printfs_quote_flag() {
        let en = locale(".", ",", &[3, 3]);
        assert_eq!(en.grouped(1234567.891, 2), "1,234,567.89");
        assert_eq!(en.grouped(999.0, 0), "999");
        assert_eq!(en.grouped(1000.0, 0), "1,000");
        assert_eq!(en.grouped(-1234.5, 1), "-1,234.5");
        let de = locale(",", ".", &[3, 3]);
        assert_eq!(de.grouped(1010.74, 2), "1.010,74");
        assert_eq!(de.fixed(0.913, 3), "0,913");
        // The last size repeats; 127 (CHAR_MAX) ends grouping.
        assert_eq!(locale(".", ",", &[3, 2]).grouped(1234567.0, 0), "12,34,567");
        assert_eq!(
            locale(".", ",", &[3, 127]).grouped(1234567.0, 0),
            "1234,567"
        );
        // The C locale, and --no-big-num.
        assert_eq!(Numeric::default().grouped(1234567.5, 1), "1234567.5");
        let no_big = Numeric {
            big_num: false,
            ..de.clone()
        };
        assert_eq!(no_big.grouped(1234.5, 1), "1234,5");
    }
}
