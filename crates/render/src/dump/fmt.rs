//! Pieces of `-D` output: register names and values, read values, CPU maps,
//! hex dumps, and the number formats perf prints them in.

use super::*;

pub(super) fn switch_word(out: bool, preempt: bool) -> &'static str {
    match (out, preempt) {
        (true, true) => "OUT preempt",
        (true, false) => "OUT",
        (false, _) => "IN",
    }
}

pub(super) const NAMESPACE_NAMES: &[&str] = &["net", "uts", "ipc", "pid", "user", "mnt", "cgroup"];

pub(crate) const BRANCH_TYPE_NAMES: &[&str] = &[
    "N/A",
    "COND",
    "UNCOND",
    "IND",
    "CALL",
    "IND_CALL",
    "RET",
    "SYSCALL",
    "SYSRET",
    "COND_CALL",
    "COND_RET",
    "ERET",
    "IRQ",
    "SERROR",
    "NO_TX",
    "EXTENDED",
];

/// perf's names of the extended branch types (`PERF_BR_EXTEND_ABI`'s
/// `new_type`).
pub(crate) const BRANCH_NEW_TYPE_NAMES: &[&str] = &[
    "FAULT_ALGN",
    "FAULT_DATA",
    "FAULT_INST",
    "ARCH_1",
    "ARCH_2",
    "ARCH_3",
    "ARCH_4",
    "ARCH_5",
];

/// x86 register names by perf_regs bit number.
pub(crate) const X86_REGS: &[&str] = &[
    "AX", "BX", "CX", "DX", "SI", "DI", "BP", "SP", "IP", "FLAGS", "CS", "SS", "DS", "ES", "FS",
    "GS", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15",
];

pub(super) fn reg_name(bit: u32) -> String {
    match bit {
        0..=23 => X86_REGS[bit as usize].to_string(),
        32..=63 if bit.is_multiple_of(2) => format!("XMM{}", (bit - 32) / 2),
        _ => "unknown".to_string(),
    }
}

pub(super) fn regs(
    out: &mut dyn Write,
    which: &str,
    r: &perf_data::sample::Regs<'_>,
) -> io::Result<()> {
    // With ABI "none" the kernel stored no values and perf prints nothing.
    if r.abi == 0 {
        return Ok(());
    }
    let abi = match r.abi {
        1 => "32-bit",
        2 => "64-bit",
        _ => "unknown",
    };
    writeln!(out, "... {which} regs: mask {:#x} ABI {abi}", r.mask)?;
    let mut i = 0;
    for bit in 0..64u32 {
        if r.mask & (1u64 << bit) == 0 {
            continue;
        }
        let v = r.values.get(i).unwrap_or(0);
        i += 1;
        writeln!(out, ".... {:<5} {v:#018x}", reg_name(bit))?;
    }
    Ok(())
}

pub(super) fn sample_read(out: &mut dyn Write, rv: &ReadValues<'_>) -> io::Result<()> {
    out.write_all(b"... sample_read:\n")?;
    if let Some(t) = rv.time_enabled() {
        writeln!(out, "...... time enabled {t:016x}")?;
    }
    if let Some(t) = rv.time_running() {
        writeln!(out, "...... time running {t:016x}")?;
    }
    if rv.is_group() {
        writeln!(out, ".... group nr {}", rv.words().get(0).unwrap_or(0))?;
    }
    for v in rv.values() {
        write!(
            out,
            "..... id {:016x}, value {:016x}",
            v.id.unwrap_or(0),
            v.value
        )?;
        if let Some(l) = v.lost {
            write!(out, ", lost {l}")?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// CPUs as perf lists a CPU map: runs joined by commas (`0-3,8`).
pub(super) fn cpu_list(cpus: &[i64]) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        if !s.is_empty() {
            s.push(',');
        }
        if j > i {
            s.push_str(&format!("{}-{}", cpus[i], cpus[j]));
        } else {
            s.push_str(&cpus[i].to_string());
        }
        i = j + 1;
    }
    s
}

/// The raw bytes block: header, then 16 bytes a line with their ASCII.
pub(super) fn hex_dump(out: &mut dyn Write, header: &[u8; 8], payload: &[u8]) -> io::Result<()> {
    let n = 8 + payload.len();
    write!(out, ".\n. ... raw event: size {n} bytes\n")?;
    let byte = |i: usize| if i < 8 { header[i] } else { payload[i - 8] };
    let mut line = String::with_capacity(80);
    let mut at = 0;
    while at < n {
        let len = (n - at).min(16);
        line.clear();
        line.push_str(&format!(".  {at:04x}:  "));
        for i in 0..16 {
            if i < len {
                line.push_str(&format!("{:02x} ", byte(at + i)));
            } else {
                line.push_str("   ");
            }
        }
        line.push(' ');
        for i in 0..16 {
            if i < len {
                let b = byte(at + i);
                line.push(if (0x20..0x7f).contains(&b) {
                    b as char
                } else {
                    '.'
                });
            } else {
                line.push(' ');
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
        at += 16;
    }
    out.write_all(b"\n")
}

/// C's `%#x`: `0` for zero, `0x...` otherwise.
pub(super) struct Hx(pub(super) u64);

impl std::fmt::Display for Hx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 == 0 {
            f.write_str("0")
        } else {
            write!(f, "{:#x}", self.0)
        }
    }
}

pub(super) struct Lossy<'a>(pub(super) &'a [u8]);

impl std::fmt::Display for Lossy<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.0))
    }
}

pub(super) struct HexBytes<'a>(pub(super) &'a [u8]);

impl std::fmt::Display for HexBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// A page size the way perf names it (`4K`, `2M`), `N/A` when unknown.
pub(super) struct PageSize(pub(super) u64);

impl std::fmt::Display for PageSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 == 0 {
            return f.write_str("N/A");
        }
        let units = b"BKMGTPEZY";
        let (mut n, mut i) = (self.0, 0);
        while n / 1024 != 0 && i < units.len() - 1 {
            n /= 1024;
            i += 1;
        }
        write!(f, "{n}{}", units[i] as char)
    }
}
