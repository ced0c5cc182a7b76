//! `perf script`'s per-sample text: a header line (comm, pid/tid, cpu,
//! time, period, event) and the sample's location, either on the same line
//! or as one callchain line per frame (`\t  addr sym+0xoff (dso)`), each
//! location followed by its source line on a line of its own (`  file:line`)
//! when `srcline` is selected.
//!
//! The caller resolves everything; frames are formatted once per unique
//! location with [`write_frame`] and the bytes reused for every sample that
//! passes through it.

use std::io::{self, Write};

mod frames;
mod plan;
pub use frames::FrameTexts;
pub use plan::{parse_fields, FieldError, FieldPlan};

/// Which fields are printed (perf's `-F`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Fields {
    pub comm: bool,
    pub pid: bool,
    pub tid: bool,
    pub cpu: bool,
    pub time: bool,
    pub period: bool,
    pub event: bool,
    pub ip: bool,
    pub sym: bool,
    pub symoff: bool,
    pub dso: bool,
    pub srcline: bool,
}

impl Fields {
    /// The field names `-F` knows, in perf's order.
    pub const NAMES: &'static [&'static str] = &[
        "comm", "pid", "tid", "cpu", "time", "period", "event", "ip", "sym", "symoff", "dso",
        "srcline",
    ];

    /// The flag of field `name`, if it is one of [`Self::NAMES`].
    pub fn flag(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "comm" => &mut self.comm,
            "pid" => &mut self.pid,
            "tid" => &mut self.tid,
            "cpu" => &mut self.cpu,
            "time" => &mut self.time,
            "period" => &mut self.period,
            "event" => &mut self.event,
            "ip" => &mut self.ip,
            "sym" => &mut self.sym,
            "symoff" => &mut self.symoff,
            "dso" => &mut self.dso,
            "srcline" => &mut self.srcline,
            _ => return None,
        })
    }
}

/// The sample-wide values of the header line.
#[derive(Debug, Clone, Copy)]
pub struct SampleHeader<'a> {
    pub comm: &'a str,
    pub pid: i32,
    pub tid: i32,
    pub cpu: u32,
    /// Nanoseconds.
    pub time: u64,
    pub period: u64,
    pub event: &'a str,
}

/// How the header is laid out.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineLayout {
    /// The width event names are right-aligned to (the longest name of
    /// the file's events).
    pub name_width: usize,
    /// The sample's location follows as callchain lines: perf then prints
    /// the comm unpadded.
    pub callchain: bool,
    /// Times with nanoseconds (`--ns`) instead of microseconds.
    pub nanoseconds: bool,
}

/// One resolved frame: an address and what it belongs to.
#[derive(Debug, Clone, Copy)]
pub struct PrintedFrame<'a> {
    /// The address as printed (perf prints callchain addresses in the DSO's
    /// terms, a sample's own address as in the process).
    pub addr: u64,
    /// Symbol name and the offset of the address into it.
    pub sym: Option<(&'a str, u64)>,
    /// An inlined function's frame: printed `(inlined)` instead of the DSO.
    pub inlined: bool,
    /// The DSO's name (`[unknown]` when None).
    pub dso: Option<&'a str>,
    /// The source line text perf prints for the frame (`file:line`, or
    /// `dso[address]` where it has none), if it prints one.
    pub srcline: Option<&'a str>,
}

/// C's `%Ns`: right-aligned by bytes.
fn pad_left(out: &mut dyn Write, s: &str, width: usize) -> io::Result<()> {
    for _ in s.len()..width {
        out.write_all(b" ")?;
    }
    out.write_all(s.as_bytes())
}

/// The header line up to where the location starts (no newline).
pub fn write_header(
    out: &mut dyn Write,
    h: &SampleHeader<'_>,
    f: &Fields,
    layout: &LineLayout,
) -> io::Result<()> {
    if f.comm {
        if layout.callchain && f.ip {
            write!(out, "{} ", h.comm)?;
        } else {
            pad_left(out, h.comm, 16)?;
            out.write_all(b" ")?;
        }
    }
    if f.pid && f.tid {
        write!(out, "{:5}/{:<5} ", h.pid, h.tid)?;
    } else if f.pid {
        write!(out, "{:5} ", h.pid)?;
    } else if f.tid {
        write!(out, "{:5} ", h.tid)?;
    }
    if f.cpu {
        write!(out, "[{:03}] ", h.cpu)?;
    }
    if f.time {
        let secs = h.time / 1_000_000_000;
        if layout.nanoseconds {
            write!(out, "{secs:5}.{:09}: ", h.time % 1_000_000_000)?;
        } else {
            // perf truncates to microseconds and right-aligns in 12.
            let t = format!("{secs}.{:06}", h.time % 1_000_000_000 / 1000);
            write!(out, "{t:>12}: ")?;
        }
    }
    if f.period {
        write!(out, "{:10} ", h.period)?;
    }
    if f.event {
        pad_left(out, h.event, layout.name_width)?;
        out.write_all(b": ")?;
    }
    Ok(())
}

/// A kernel record shown beside the samples (`--show-*-events`): the
/// sample line's start (comm, pid/tid, CPU and the `shown` time as `f`
/// asks; no period, no event name), then the record as perf prints it.
pub fn write_side_band(
    out: &mut dyn Write,
    r: &profile::session::TimedSide,
    shown: u64,
    f: &Fields,
    layout: &LineLayout,
    (meta, data, sid): (
        &perf_data::Meta,
        &perf_data::records::RecordData<'_>,
        &perf_data::records::SampleId,
    ),
) -> io::Result<()> {
    let h = SampleHeader {
        comm: &r.comm,
        pid: r.pid,
        tid: r.tid,
        cpu: r.cpu,
        time: shown,
        period: 0,
        event: "",
    };
    let start = Fields {
        period: false,
        event: false,
        ..*f
    };
    write_header(out, &h, &start, layout)?;
    crate::dump::write_event(out, meta, r.type_, r.misc, data, sid)
}

/// One frame: as a callchain line (`chain`: tab before, newline after) or
/// as the sample's own location on the header line.
pub fn write_frame(
    out: &mut dyn Write,
    fr: &PrintedFrame<'_>,
    f: &Fields,
    chain: bool,
) -> io::Result<()> {
    if chain {
        out.write_all(b"\t")?;
    }
    if f.ip {
        write!(out, "{:16x}", fr.addr)?;
    }
    if f.sym {
        match fr.sym {
            Some((name, off)) if f.symoff => write!(out, " {name}+{off:#x}")?,
            Some((name, _)) => write!(out, " {name}")?,
            None => out.write_all(b" [unknown]")?,
        }
    }
    if f.dso && !(chain && fr.inlined) {
        write!(out, " ({})", fr.dso.unwrap_or("[unknown]"))?;
    }
    // perf puts the source line before an inlined frame's mark.
    if let (true, Some(s)) = (f.srcline, fr.srcline) {
        write!(out, "\n  {s}")?;
    }
    if chain && fr.inlined {
        out.write_all(b" (inlined)")?;
    }
    if chain {
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// What comes between the header and the location: a newline before
/// callchain lines, a space before a location on the header line.
pub fn write_location_start(out: &mut dyn Write, callchain: bool) -> io::Result<()> {
    out.write_all(if callchain { b"\n" } else { b" " })
}

/// Ends a sample (after callchain lines, this leaves a blank line).
pub fn write_end(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Fields {
        let mut f = Fields::default();
        for n in Fields::NAMES {
            *f.flag(n).unwrap() = true;
        }
        f.pid = false;
        f
    }

    #[test]
    fn header_like_perf() {
        let h = SampleHeader {
            comm: "perf",
            pid: 14388,
            tid: 14388,
            cpu: 0,
            time: 14_675_792_212_345,
            period: 1,
            event: "page-faults",
        };
        let mut out = Vec::new();
        let layout = LineLayout {
            name_width: 11,
            ..Default::default()
        };
        write_header(&mut out, &h, &all(), &layout).unwrap();
        write_location_start(&mut out, false).unwrap();
        let fr = PrintedFrame {
            addr: 0x7efd76ab6109,
            sym: Some(("_int_malloc", 0xda9)),
            inlined: false,
            dso: Some("/usr/lib/x86_64-linux-gnu/libc.so.6"),
            srcline: None,
        };
        write_frame(&mut out, &fr, &all(), false).unwrap();
        write_end(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "            perf 14388 [000] 14675.792212:          1 page-faults:      \
             7efd76ab6109 _int_malloc+0xda9 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
        );
    }

    /// An inline frame `mix+0x23` at 0x1203 in /tmp/x.
    fn inlined_mix(srcline: Option<&'static str>) -> PrintedFrame<'static> {
        PrintedFrame {
            addr: 0x1203,
            sym: Some(("mix", 0x23)),
            inlined: true,
            dso: Some("/tmp/x"),
            srcline,
        }
    }

    #[test]
    fn chain_lines() {
        let f = all();
        let mut out = Vec::new();
        let inl = inlined_mix(None);
        write_frame(&mut out, &inl, &f, true).unwrap();
        let unk = PrintedFrame {
            addr: 0x10,
            sym: None,
            inlined: false,
            dso: None,
            srcline: None,
        };
        write_frame(&mut out, &unk, &f, true).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\t            1203 mix+0x23 (inlined)\n\t              10 [unknown] ([unknown])\n"
        );
    }

    #[test]
    fn srclines_like_perf() {
        let f = Fields {
            ip: true,
            sym: true,
            srcline: true,
            ..Default::default()
        };
        let mut out = Vec::new();
        let inl = inlined_mix(Some("x.c:3"));
        write_frame(&mut out, &inl, &f, true).unwrap();
        let real = PrintedFrame {
            sym: Some(("leaf", 0x23)),
            inlined: false,
            srcline: Some("x.c:4"),
            ..inl
        };
        write_frame(&mut out, &real, &f, true).unwrap();
        let none = PrintedFrame {
            srcline: None,
            ..real
        };
        write_frame(&mut out, &none, &f, true).unwrap();
        // The sample's own location: the source line on the next line.
        write_frame(&mut out, &real, &f, false).unwrap();
        write_end(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\t            1203 mix\n  x.c:3 (inlined)\n\t            1203 leaf\n  x.c:4\n\
             \t            1203 leaf\n            1203 leaf\n  x.c:4\n"
        );
    }
}
