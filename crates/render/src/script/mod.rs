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

mod extra;
mod frames;
mod plan;
pub use extra::{
    mem_info, page_size_name, reg_name, tod, write_after_location, write_before_location,
    write_misc, BranchInsns, DataSrcColumn, EventKind,
};
pub use frames::FrameTexts;
pub use plan::{invalid_field_warnings, parse_fields, FieldError, FieldPlan};

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
    /// A tracepoint sample's fields, formatted from the event's print format.
    pub trace: bool,
    pub ip: bool,
    pub sym: bool,
    pub symoff: bool,
    pub dso: bool,
    pub srcline: bool,
    /// The record's cpumode letters and kind marks (`K`, `U`, `S`, ...).
    pub misc: bool,
    /// Wall-clock time of day (from CLOCK_DATA; `disabled` without).
    pub tod: bool,
    /// The sample's data address (named by symbol for page faults).
    pub addr: bool,
    pub data_src: bool,
    pub weight: bool,
    pub ins_lat: bool,
    pub phys_addr: bool,
    pub data_page_size: bool,
    pub code_page_size: bool,
    pub iregs: bool,
    pub uregs: bool,
    pub brstack: bool,
    pub brstacksym: bool,
    pub brstackoff: bool,
    /// The instructions between the branch-stack entries (`brstackinsn`),
    /// with their lengths (`brstackinsnlen`, which implies it).
    pub brstackinsn: bool,
    pub brstackinsnlen: bool,
    /// Branch flags (Intel PT and the like): perf prints them empty for
    /// other samples.
    pub flags: bool,
    /// The length and bytes of the sampled instruction, decoded from the
    /// binary.
    pub insnlen: bool,
    pub insn: bool,
    /// The source line of the sample's address, its text read from the
    /// source file.
    pub srccode: bool,
    /// A bpf-output event's data (perf's `offcpu-time` has none: an empty
    /// line).
    pub bpf_output: bool,
    /// Fields of data these samples cannot carry (instruction-trace,
    /// BPF-output, synthesized, stat-metric and guest samples): accepted
    /// as perf accepts them, and print nothing, as perf does here.
    pub quiet: bool,
}

impl Fields {
    /// The field names `-F` knows, in perf's order.
    pub const NAMES: &'static [&'static str] = &[
        "comm",
        "tid",
        "pid",
        "time",
        "cpu",
        "event",
        "trace",
        "ip",
        "sym",
        "dso",
        "addr",
        "symoff",
        "srcline",
        "period",
        "iregs",
        "uregs",
        "brstack",
        "brstacksym",
        "flags",
        "bpf-output",
        "callindent",
        "insn",
        "insnlen",
        "synth",
        "phys_addr",
        "metric",
        "misc",
        "srccode",
        "ipc",
        "tod",
        "data_page_size",
        "code_page_size",
        "ins_lat",
        "machine_pid",
        "vcpu",
        "data_src",
        "weight",
        "brstackoff",
        "brstackinsn",
        "brstackinsnlen",
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
            "trace" => &mut self.trace,
            "ip" => &mut self.ip,
            "sym" => &mut self.sym,
            "symoff" => &mut self.symoff,
            "dso" => &mut self.dso,
            "srcline" => &mut self.srcline,
            "misc" => &mut self.misc,
            "tod" => &mut self.tod,
            "addr" => &mut self.addr,
            "data_src" => &mut self.data_src,
            "weight" => &mut self.weight,
            "ins_lat" => &mut self.ins_lat,
            "phys_addr" => &mut self.phys_addr,
            "data_page_size" => &mut self.data_page_size,
            "code_page_size" => &mut self.code_page_size,
            "iregs" => &mut self.iregs,
            "uregs" => &mut self.uregs,
            "brstack" => &mut self.brstack,
            "brstacksym" => &mut self.brstacksym,
            "brstackoff" => &mut self.brstackoff,
            "brstackinsn" => &mut self.brstackinsn,
            "brstackinsnlen" => &mut self.brstackinsnlen,
            "flags" => &mut self.flags,
            "insnlen" => &mut self.insnlen,
            "insn" => &mut self.insn,
            "srccode" => &mut self.srccode,
            "bpf-output" => &mut self.bpf_output,
            "callindent" | "synth" | "metric" | "ipc" | "machine_pid" | "vcpu" => &mut self.quiet,
            _ => return None,
        })
    }

    /// Whether a sample needs more than every view keeps
    /// ([`profile::session::SampleExtra`]).
    pub fn needs_extra(&self) -> bool {
        self.trace
            || self.misc
            || self.addr
            || self.data_src
            || self.weight
            || self.ins_lat
            || self.phys_addr
            || self.data_page_size
            || self.code_page_size
            || self.iregs
            || self.uregs
            || self.brstack
            || self.brstacksym
            || self.brstackoff
            || self.brstackinsn
            || self.brstackinsnlen
    }

    /// Whether the instructions of branch stacks are printed.
    pub fn branch_insns(&self) -> bool {
        self.brstackinsn || self.brstackinsnlen
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
    /// The record's misc bits and type (for `misc`).
    pub misc: u16,
    pub record_type: u32,
    /// The time of day (for `tod`).
    pub tod: &'a str,
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
    /// `-L`: the comm as `%8.8s`, the CPU as `%3d`.
    pub latency: bool,
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
        if layout.latency {
            let mut end = h.comm.len().min(8);
            while !h.comm.is_char_boundary(end) {
                end -= 1;
            }
            pad_left(out, &h.comm[..end], 8)?;
            out.write_all(b" ")?;
        } else if layout.callchain && f.ip {
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
    if f.cpu && layout.latency {
        write!(out, "{:3} ", h.cpu as i32)?;
    } else if f.cpu {
        write!(out, "[{:03}] ", h.cpu)?;
    }
    if f.misc {
        write_misc(out, h.misc, h.record_type)?;
    }
    if f.tod {
        write!(out, "{} ", h.tod)?;
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

/// perf's line for a FINISHED_ROUND record (`--show-round-events`).
pub fn write_finished_round(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"PERF_RECORD_FINISHED_ROUND\n")
}

/// A kernel record shown beside the samples (`--show-*-events`): the
/// sample line's start (comm, pid/tid, CPU and the `shown` time as `f`
/// asks; no period, no event name), then the record as perf prints it.
pub fn write_side_band(
    out: &mut dyn Write,
    r: &profile::session::TimedSide,
    (shown, tod): (u64, &str),
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
        misc: r.misc,
        record_type: r.type_,
        tod,
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

    /// The fields of a plain sample line, pid aside.
    fn all() -> Fields {
        let mut f = Fields::default();
        for n in [
            "comm", "tid", "cpu", "time", "period", "event", "ip", "sym", "symoff", "dso",
            "srcline",
        ] {
            *f.flag(n).unwrap() = true;
        }
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
            misc: 0,
            record_type: 0,
            tod: "",
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
