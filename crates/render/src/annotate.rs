//! `perf annotate --stdio`'s layout of one annotated function, and `--print-line`'s sorted
//! summary of hot source lines.

use std::io::{self, Write};

use profile::annotate::{Annotated, Line};

/// What the first column shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Column {
    /// The instruction's share of the function's period (perf's "local period").
    #[default]
    Percent,
    /// Its samples (`--show-nr-samples`).
    Samples,
    /// Its period (`--show-total-period`).
    Period,
}

impl Column {
    fn width(self) -> usize {
        match self {
            Column::Period => 12,
            _ => 8,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Column::Percent => "Percent",
            Column::Samples => "Samples",
            Column::Period => "Period",
        }
    }
}

/// The header's facts.
#[derive(Debug, Clone, Copy)]
pub struct FunctionHeader<'a> {
    /// The DSO's base name (perf's `d_filename`).
    pub dso: &'a str,
    pub event: &'a str,
    /// The function's samples in this event.
    pub samples: u64,
}

/// What a percentage is of (perf's `--percent-type`): the function's
/// period or samples (local), or the event's (global).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PercentType {
    #[default]
    LocalPeriod,
    GlobalPeriod,
    LocalHits,
    GlobalHits,
}

impl PercentType {
    /// perf's spellings: `local-period`, `global-period`, `local-hits`,
    /// `global-hits` (either word order).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "local-period" | "period-local" => PercentType::LocalPeriod,
            "global-period" | "period-global" => PercentType::GlobalPeriod,
            "local-hits" | "hits-local" => PercentType::LocalHits,
            "global-hits" | "hits-global" => PercentType::GlobalHits,
            _ => return None,
        })
    }

    /// Of the event's totals, not the function's.
    pub fn global(self) -> bool {
        matches!(self, PercentType::GlobalPeriod | PercentType::GlobalHits)
    }

    /// Of sample counts, not periods.
    pub fn hits(self) -> bool {
        matches!(self, PercentType::LocalHits | PercentType::GlobalHits)
    }

    pub(crate) fn title(self) -> &'static str {
        match self {
            PercentType::LocalPeriod => "local period",
            PercentType::GlobalPeriod => "global period",
            PercentType::LocalHits => "local hits",
            PercentType::GlobalHits => "global hits",
        }
    }

    /// An instruction's (samples, period) in the unit this type counts.
    pub(crate) fn of(self, (samples, period): (u64, u64)) -> u64 {
        if self.hits() {
            samples
        } else {
            period
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub column: Column,
    /// `--print-line`: append ` // file.c:7` to instructions above 0.5%.
    pub print_line: bool,
    /// What percentages are of; the `base` [`write_function`] and
    /// [`write_summary`] take is that total.
    pub percent_type: PercentType,
    /// Colour as perf does on a terminal: each instruction's value by its
    /// share (red from 5%, green above 0.5%), its address magenta, its
    /// text blue.
    pub color: bool,
}

const MAGENTA: &str = "\x1b[35m";
const BLUE: &str = "\x1b[34m";
const RESET: &str = "\x1b[m";

/// perf's `MIN_GREEN`: source lines at or below this share stay out of `--print-line`.
const MIN_LINE_PERCENT: f64 = 0.5;

fn percent(period: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        period as f64 * 100.0 / total as f64
    }
}

/// Writes one function: the header, the rule and every line. `per_insn` holds (samples,
/// period) per instruction of `a`, in order; `base` is what percentages are of (the
/// function's period by default; see [`PercentType`]).
pub fn write_function(
    w: &mut dyn Write,
    a: &Annotated,
    per_insn: &[(u64, u64)],
    base: u64,
    h: &FunctionHeader<'_>,
    o: &Options,
) -> io::Result<()> {
    let width = o.column.width();
    let head = format!(
        " {:<width$.width$}|\tSource code & Disassembly of {} for {} ({} samples, percent: {})",
        o.column.label(),
        h.dso,
        h.event,
        h.samples,
        o.percent_type.title(),
    );
    writeln!(w, "{head}")?;
    // perf's rule is as long as the header it printed (with its newline) and four more.
    writeln!(w, "{}", "-".repeat(head.len() + 5))?;
    let addr_width = a.addrs.last().map_or(1, |&last| format!("{last:x}").len());
    let mut prev_srcline: Option<&str> = None;
    let mut insn = 0;
    // perf numbers objdump's lines: from N after each `file:N` mark, one up
    // per line (instructions too); it shows the number on lines that are
    // not instructions.
    let mut nr: u64 = 0;
    for line in &a.lines {
        let this = nr;
        nr += 1;
        match line {
            Line::Blank => writeln!(w, " {:width$}:", "")?,
            Line::Mark(n) => nr = u64::from(*n),
            Line::Text(t) if this == 0 => writeln!(w, " {:width$}: {:addr_width$} {t}", "", "")?,
            Line::Text(t) => writeln!(w, " {:width$}: {this:<addr_width$} {t}", "")?,
            Line::Source { text, .. } if text.is_empty() => writeln!(w, " {:width$}:", "")?,
            Line::Source { text, .. } => writeln!(w, " {:width$}: {this:<addr_width$} {text}", "")?,
            Line::MoreBytes { addr, text } => {
                let zero = match o.column {
                    Column::Percent => format!("{:7.2}", 0.0),
                    Column::Samples => format!("{:7}", 0),
                    Column::Period => format!("{:11}", 0),
                };
                let hex = format!("{addr:x}");
                let pad = 8 - (hex.len() + 1) % 8;
                if o.color {
                    writeln!(
                        w,
                        " {zero} : {MAGENTA}  {hex:>addr_width$}:{RESET}{BLUE}{:pad$}{text}{RESET}",
                        ""
                    )?
                } else {
                    writeln!(w, " {zero} :   {hex:>addr_width$}:{:pad$}{text}", "")?
                }
            }
            Line::Insn {
                addr,
                text,
                srcline,
                ..
            } => {
                let (samples, period) = per_insn.get(insn).copied().unwrap_or((0, 0));
                insn += 1;
                let share = percent(o.percent_type.of((samples, period)), base);
                let value = match o.column {
                    Column::Percent => format!(" {share:7.2}"),
                    Column::Samples => format!(" {samples:7}"),
                    Column::Period => format!(" {period:11}"),
                };
                let paint = |t: String| {
                    if o.color {
                        crate::callgraph::colored(share, &t)
                    } else {
                        t
                    }
                };
                write!(w, "{}", paint(value))?;
                // objdump's `addr:\tinsn` with the tab expanded from the address's start.
                let hex = format!("{addr:x}");
                let pad = 8 - (hex.len() + 1) % 8;
                if o.color {
                    write!(
                        w,
                        " : {MAGENTA}  {hex:>addr_width$}:{RESET}{BLUE}{:pad$}{text}{RESET}",
                        ""
                    )?;
                } else {
                    write!(w, " :   {hex:>addr_width$}:{:pad$}{text}", "")?;
                }
                if o.print_line && share > MIN_LINE_PERCENT {
                    if let Some(s) = srcline.as_deref() {
                        if prev_srcline != Some(s) {
                            write!(w, "{}", paint(format!(" // {s}")))?;
                            prev_srcline = Some(s);
                        }
                    }
                }
                writeln!(w)?;
            }
        }
    }
    Ok(())
}

/// `--print-line`'s summary: the source lines of instructions above 0.5%, by their summed
/// share (of `base`, in `percent_type`'s unit), for the file `long_name`.
pub fn write_summary(
    w: &mut dyn Write,
    long_name: &str,
    a: &Annotated,
    per_insn: &[(u64, u64)],
    base: u64,
    percent_type: PercentType,
    color: bool,
) -> io::Result<()> {
    let mut sums: Vec<(String, f64)> = Vec::new();
    let mut insn = 0;
    for line in &a.lines {
        let Line::Insn { srcline, .. } = line else {
            continue;
        };
        let hits = per_insn.get(insn).copied().unwrap_or((0, 0));
        insn += 1;
        let share = percent(percent_type.of(hits), base);
        if share <= MIN_LINE_PERCENT {
            continue;
        }
        let path = srcline.clone().unwrap_or_else(|| "??:0".to_owned());
        match sums.iter_mut().find(|(p, _)| *p == path) {
            Some(e) => e.1 += share,
            None => sums.push((path, share)),
        }
    }
    // perf keeps equal shares in its first tree's order: paths by strcmp,
    // descending (a greater path goes left there).
    sums.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    writeln!(w, "\nSorted summary for file {long_name}")?;
    writeln!(w, "----------------------------------------------\n")?;
    if sums.is_empty() {
        writeln!(w, " Nothing higher than {MIN_LINE_PERCENT:1.1}%")?;
    }
    for (path, share) in sums {
        // perf colours the share, then the path with its newline (the
        // reset opens the next line).
        match crate::callgraph::percent_color(share).filter(|_| color) {
            Some(c) => write!(w, "{c} {share:7.2}{RESET}{c} {path}\n{RESET}")?,
            None => writeln!(w, " {share:7.2} {path}")?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Annotated {
        Annotated {
            lines: vec![
                Line::Blank,
                Line::Blank,
                Line::Blank,
                Line::Text("Disassembly of section .text:".into()),
                Line::Blank,
                Line::Text("00000000000011d0 <hot>:".into()),
                Line::Text("hot():".into()),
                Line::Mark(7),
                Line::Source {
                    line: 7,
                    text: "s += a[i];".into(),
                },
                Line::Insn {
                    addr: 0x11fe,
                    text: "xor    %eax,%ecx".into(),
                    srcline: Some("hot.c:7".into()),
                    target: None,
                },
                Line::Insn {
                    addr: 0x1200,
                    text: "add    $0x1,%rax".into(),
                    srcline: Some("hot.c:6".into()),
                    target: None,
                },
                Line::Insn {
                    addr: 0x1204,
                    text: "ret".into(),
                    srcline: Some("hot.c:6".into()),
                    target: None,
                },
            ],
            addrs: vec![0x11fe, 0x1200, 0x1204],
            end: 0x1205,
        }
    }

    #[test]
    fn layout_as_perf() {
        let mut out = Vec::new();
        let h = FunctionHeader {
            dso: "hot",
            event: "cpu-clock",
            samples: 589,
        };
        let per = [(56, 56), (533, 533), (0, 0)];
        write_function(&mut out, &sample(), &per, 589, &h, &Options::default()).unwrap();
        let s = String::from_utf8(out).unwrap();
        let want = " Percent |\tSource code & Disassembly of hot for cpu-clock (589 samples, percent: local period)\n\
---------------------------------------------------------------------------------------------------\n\
\x20        :\n\
\x20        :\n\
\x20        :\n\
\x20        : 3    Disassembly of section .text:\n\
\x20        :\n\
\x20        : 5    00000000000011d0 <hot>:\n\
\x20        : 6    hot():\n\
\x20        : 7    s += a[i];\n\
\x20   9.51 :   11fe:   xor    %eax,%ecx\n\
\x20  90.49 :   1200:   add    $0x1,%rax\n\
\x20   0.00 :   1204:   ret\n";
        assert_eq!(s, want);
    }

    #[test]
    fn wide_addresses_and_print_line() {
        let mut a = sample();
        for l in &mut a.lines {
            if let Line::Insn { addr, .. } = l {
                *addr += 0x152000;
            }
        }
        a.addrs = a.addrs.iter().map(|x| x + 0x152000).collect();
        let mut out = Vec::new();
        let h = FunctionHeader {
            dso: "libc.so.6",
            event: "cpu-clock",
            samples: 3,
        };
        let o = Options {
            print_line: true,
            ..Default::default()
        };
        write_function(&mut out, &a, &[(1, 1), (1, 1), (1, 1)], 3, &h, &o).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(
            s.contains("   33.33 :   1531fe: xor    %eax,%ecx // hot.c:7\n"),
            "{s}"
        );
        assert!(
            s.contains("   33.33 :   153200: add    $0x1,%rax // hot.c:6\n"),
            "{s}"
        );
        // The same line again is not repeated.
        assert!(s.contains("   33.33 :   153204: ret\n"), "{s}");
        assert!(s.contains("         : 7      s += a[i];\n"), "{s}");
    }

    /// Hits count samples, not periods, of the base given; the title says which.
    #[test]
    fn percent_types_count_what_they_say() {
        let per = [(1, 10), (1, 30), (2, 60)];
        let h = FunctionHeader {
            dso: "hot",
            event: "cpu-clock",
            samples: 4,
        };
        let run = |t: PercentType, base: u64| {
            let mut out = Vec::new();
            let o = Options {
                percent_type: t,
                ..Default::default()
            };
            write_function(&mut out, &sample(), &per, base, &h, &o).unwrap();
            String::from_utf8(out).unwrap()
        };
        let hits = run(PercentType::LocalHits, 4);
        assert!(hits.contains("percent: local hits)"), "{hits}");
        assert!(hits.contains("   50.00 :   1204:"), "{hits}");
        let global = run(PercentType::GlobalPeriod, 200);
        assert!(global.contains("percent: global period)"), "{global}");
        assert!(global.contains("   30.00 :   1204:"), "{global}");
        assert_eq!(
            PercentType::parse("hits-global"),
            Some(PercentType::GlobalHits)
        );
        assert_eq!(PercentType::parse("bogus"), None);
    }

    #[test]
    fn summary_sorted_by_share() {
        let mut out = Vec::new();
        write_summary(
            &mut out,
            "/tmp/hot",
            &sample(),
            &[(1, 1), (6, 6), (3, 3)],
            10,
            PercentType::LocalPeriod,
            false,
        )
        .unwrap();
        let s = String::from_utf8(out).unwrap();
        assert_eq!(
            s,
            "\nSorted summary for file /tmp/hot\n----------------------------------------------\n\n   90.00 hot.c:6\n   10.00 hot.c:7\n"
        );
        // Equal shares: the greater path first, as perf 6.1 prints them
        // (seen on a recording where prog.c:16 and prog.c:13 had 50% each).
        let mut out = Vec::new();
        write_summary(
            &mut out,
            "/tmp/hot",
            &sample(),
            &[(5, 5), (0, 0), (5, 5)],
            10,
            PercentType::LocalPeriod,
            false,
        )
        .unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.ends_with("   50.00 hot.c:7\n   50.00 hot.c:6\n"), "{s}");
    }
}
