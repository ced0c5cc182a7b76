//! An event's attributes as perf's `perf_event_attr` dump prints them
//! (`--header` with `-I`, EVENT_DESC).

use std::io::{self, Write};

use perf_data::bytes::Endian;
use perf_data::{features, EventAttr};

// sample_type bits in the order perf 6.1 names them (TRANSACTION is not
// among them: perf never prints it).
pub(super) const SAMPLE_BITS: &[(u32, &str)] = &[
    (0, "IP"),
    (1, "TID"),
    (2, "TIME"),
    (3, "ADDR"),
    (4, "READ"),
    (5, "CALLCHAIN"),
    (6, "ID"),
    (7, "CPU"),
    (8, "PERIOD"),
    (9, "STREAM_ID"),
    (10, "RAW"),
    (11, "BRANCH_STACK"),
    (12, "REGS_USER"),
    (13, "STACK_USER"),
    (16, "IDENTIFIER"),
    (18, "REGS_INTR"),
    (15, "DATA_SRC"),
    (14, "WEIGHT"),
    (19, "PHYS_ADDR"),
    (20, "AUX"),
    (21, "CGROUP"),
    (22, "DATA_PAGE_SIZE"),
    (23, "CODE_PAGE_SIZE"),
    (24, "WEIGHT_STRUCT"),
];

pub(super) const BRANCH_BITS: &[&str] = &[
    "USER",
    "KERNEL",
    "HV",
    "ANY",
    "ANY_CALL",
    "ANY_RETURN",
    "IND_CALL",
    "ABORT_TX",
    "IN_TX",
    "NO_TX",
    "COND",
    "CALL_STACK",
    "IND_JUMP",
    "CALL",
    "NO_FLAGS",
    "NO_CYCLES",
    "TYPE_SAVE",
    "HW_INDEX",
    "PRIV_SAVE",
];

pub(super) const READ_BITS: &[&str] = &[
    "TOTAL_TIME_ENABLED",
    "TOTAL_TIME_RUNNING",
    "ID",
    "GROUP",
    "LOST",
];

// Flag bits 0..=37 in perf's print order, which is bit order; precise_ip
// (two bits at 15) is printed as a number in its place.
pub(super) const FLAG_NAMES: &[&str] = &[
    "disabled",
    "inherit",
    "pinned",
    "exclusive",
    "exclude_user",
    "exclude_kernel",
    "exclude_hv",
    "exclude_idle",
    "mmap",
    "comm",
    "freq",
    "inherit_stat",
    "enable_on_exec",
    "task",
    "watermark",
    "precise_ip",
    "",
    "mmap_data",
    "sample_id_all",
    "exclude_host",
    "exclude_guest",
    "exclude_callchain_kernel",
    "exclude_callchain_user",
    "mmap2",
    "comm_exec",
    "use_clockid",
    "context_switch",
    "write_backward",
    "namespaces",
    "ksymbol",
    "bpf_event",
    "aux_output",
    "cgroup",
    "text_poke",
    "build_id",
    "inherit_thread",
    "remove_on_exec",
    "sigtrap",
];

pub(super) fn bit_names(value: u64, names: impl Iterator<Item = (u32, &'static str)>) -> String {
    let mut s = String::new();
    for (bit, name) in names {
        if value & (1u64 << bit) != 0 {
            if !s.is_empty() {
                s.push('|');
            }
            s.push_str(name);
        }
    }
    s
}

/// perf 6.1 refuses an EVENT_DESC whose attrs use bits it does not know.
pub(super) fn attr_known(a: &EventAttr) -> bool {
    const SAMPLE_MAX: u64 = 1 << 25;
    const FORMAT_MAX: u64 = 1 << 5;
    const BRANCH_MAX: u64 = 1 << 19;
    const BRANCH_STACK: u64 = 1 << 11;
    a.flags >> 38 == 0
        && a.reserved_2 == 0
        && a.reserved_3 == 0
        && a.sample_type & !(SAMPLE_MAX - 1) == 0
        && a.read_format & !(FORMAT_MAX - 1) == 0
        && (a.sample_type & BRANCH_STACK == 0 || a.branch_sample_type & !(BRANCH_MAX - 1) == 0)
}

pub(super) fn write_event_desc(out: &mut dyn Write, b: &[u8], endian: Endian) -> io::Result<()> {
    let events = features::parse_event_desc_raw(b, endian)
        .ok()
        .and_then(|v| {
            v.into_iter()
                .map(|e| e.attr(endian).map(|a| (e.desc, a)))
                .collect::<Option<Vec<_>>>()
        });
    let Some(events) = events.filter(|v| v.iter().all(|(_, a)| attr_known(a))) else {
        return writeln!(out, "# event desc: not available or unable to read");
    };
    for (d, a) in &events {
        // perf's list of events ends at the first attr of size 0.
        if a.size == 0 {
            break;
        }
        write!(out, "# event : name = {}, ", d.name)?;
        if !d.ids.is_empty() {
            write!(out, ", id = {{")?;
            for (j, id) in d.ids.iter().enumerate() {
                if j > 0 {
                    write!(out, ",")?;
                }
                write!(out, " {id}")?;
            }
            write!(out, " }}")?;
        }
        write_attr(out, a)?;
        writeln!(out)?;
    }
    Ok(())
}

/// perf_event_attr__fprintf of perf 6.1: ", name = value" for each non-zero field.
pub(super) fn write_attr(out: &mut dyn Write, a: &EventAttr) -> io::Result<()> {
    for (name, v) in attr_fields(a) {
        write!(out, ", {name} = {v}")?;
    }
    Ok(())
}

/// The fields perf_event_attr__fprintf prints (those not zero), in its order.
pub fn attr_fields(a: &EventAttr) -> Vec<(&'static str, String)> {
    let mut fields = Vec::new();
    let _ = fill_attr_fields(a, &mut |name: &'static str, v: String| {
        fields.push((name, v));
        Ok(())
    });
    fields
}

fn fill_attr_fields(
    a: &EventAttr,
    f: &mut dyn FnMut(&'static str, String) -> io::Result<()>,
) -> io::Result<()> {
    if a.type_ != 0 {
        f("type", a.type_.to_string())?;
    }
    if a.size != 0 {
        f("size", a.size.to_string())?;
    }
    if a.config != 0 {
        f("config", format!("{:#x}", a.config))?;
    }
    if a.sample_period_or_freq != 0 {
        f(
            "{ sample_period, sample_freq }",
            a.sample_period_or_freq.to_string(),
        )?;
    }
    if a.sample_type != 0 {
        f(
            "sample_type",
            bit_names(a.sample_type, SAMPLE_BITS.iter().copied()),
        )?;
    }
    if a.read_format != 0 {
        f(
            "read_format",
            bit_names(
                a.read_format,
                READ_BITS.iter().copied().zip(0..).map(|(n, b)| (b, n)),
            ),
        )?;
    }
    for (bit, name) in FLAG_NAMES.iter().enumerate() {
        match bit {
            15 => {
                if a.precise_ip() != 0 {
                    f("precise_ip", a.precise_ip().to_string())?;
                }
            }
            16 => {}
            _ => {
                if a.flags & (1u64 << bit) != 0 {
                    f(name, "1".into())?;
                }
            }
        }
    }
    if a.wakeup_events_or_watermark != 0 {
        f(
            "{ wakeup_events, wakeup_watermark }",
            a.wakeup_events_or_watermark.to_string(),
        )?;
    }
    if a.bp_type != 0 {
        f("bp_type", a.bp_type.to_string())?;
    }
    if a.config1 != 0 {
        f("{ bp_addr, config1 }", format!("{:#x}", a.config1))?;
    }
    if a.config2 != 0 {
        f("{ bp_len, config2 }", format!("{:#x}", a.config2))?;
    }
    if a.branch_sample_type != 0 {
        f(
            "branch_sample_type",
            bit_names(
                a.branch_sample_type,
                BRANCH_BITS.iter().copied().zip(0..).map(|(n, b)| (b, n)),
            ),
        )?;
    }
    if a.sample_regs_user != 0 {
        f("sample_regs_user", format!("{:#x}", a.sample_regs_user))?;
    }
    if a.sample_stack_user != 0 {
        f("sample_stack_user", a.sample_stack_user.to_string())?;
    }
    if a.clockid != 0 {
        f("clockid", a.clockid.to_string())?;
    }
    if a.sample_regs_intr != 0 {
        f("sample_regs_intr", format!("{:#x}", a.sample_regs_intr))?;
    }
    if a.aux_watermark != 0 {
        f("aux_watermark", a.aux_watermark.to_string())?;
    }
    if a.sample_max_stack != 0 {
        f("sample_max_stack", a.sample_max_stack.to_string())?;
    }
    if a.aux_sample_size != 0 {
        f("aux_sample_size", a.aux_sample_size.to_string())?;
    }
    if a.sig_data != 0 {
        f("sig_data", a.sig_data.to_string())?;
    }
    Ok(())
}
