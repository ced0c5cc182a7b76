//! `sear buildid-list`: the build ids recorded for the binaries of a recording.
//!
//! Like perf: without `--with-hits` the list is the BUILD_ID header feature
//! (one line per binary, in the order recorded). With `--with-hits`, or when
//! the recording has no BUILD_ID feature (pipe mode, `record -z`, ...), the
//! records are replayed and only binaries a sample landed in are listed;
//! those without a known build id get a blank id column.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::consts::feature;
use profile::machine::Machine;

use crate::cli::BuildidListArgs;

/// The `pid` perf writes for build ids of the host (not a guest machine).
const HOST_PID: i32 = -1;

pub fn run(a: BuildidListArgs) -> Result<ExitCode> {
    let mut out = super::stdout();
    if a.kernel {
        let notes = std::fs::read("/sys/kernel/notes")
            .context("reading the running kernel's notes (/sys/kernel/notes)")?;
        let id = gnu_build_id(&notes).context("the running kernel's notes hold no GNU build id")?;
        writeln!(out, "{}", hex(id))?;
        super::finish(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let path = super::input_path(&a.input);
    let reader = super::open(&path)?;
    let meta = reader.meta();
    let has_feature = meta.features.has(feature::BUILD_ID);
    let mut with_hits = a.with_hits;
    // perf does not decode AUX area traces to find hits: it lists them all.
    if !meta.is_pipe() && meta.features.has(feature::AUXTRACE) {
        with_hits = false;
    }
    if !has_feature {
        with_hits = true;
    }

    let mut host = Machine::new();
    host.set_exit_removes_thread(true);
    let mut guests: BTreeMap<i32, Machine> = BTreeMap::new();
    for e in meta.features.build_ids().unwrap_or_default() {
        add_build_id(
            &mut host,
            &mut guests,
            e.pid,
            e.misc,
            &e.filename,
            &e.build_id,
        );
    }

    let path_s = path.display().to_string();
    if with_hits || meta.is_pipe() {
        let mut sink = Hits {
            guests: &mut guests,
        };
        let replay = profile::session::replay(reader, host, &mut sink)
            .with_context(|| format!("reading records of {path_s}"))?;
        host = replay.machine;
        let diag = replay.reader.diagnostics();
        // perf gives up on a stream it cannot frame and lists nothing.
        if let Some(w) = diag.warnings.get("corrupt record") {
            anyhow::bail!(
                "{path_s}: the data is corrupt at byte offset {}: {}",
                w.first_offset,
                w.message
            );
        }
        crate::ui::print_diagnostics(&path, diag);
    } else {
        crate::ui::print_diagnostics(&path, reader.diagnostics());
    }

    for m in std::iter::once(&host).chain(guests.values()) {
        for d in m.dsos() {
            if with_hits && !d.hit {
                continue;
            }
            let id = d.build_id.as_deref().map(hex).unwrap_or_default();
            writeln!(out, "{id:<40} {}", d.name)?;
        }
    }
    super::finish(out)?;
    Ok(ExitCode::SUCCESS)
}

/// Files a recorded build id with the host's DSO of that name, or with a
/// guest machine's (by the pid perf writes for it).
fn add_build_id(
    host: &mut Machine,
    guests: &mut BTreeMap<i32, Machine>,
    pid: i32,
    misc: u16,
    name: &str,
    id: &[u8],
) {
    // perf files build ids of kernel and user binaries only.
    let mode = misc & perf_data::PERF_RECORD_MISC_CPUMODE_MASK;
    if !matches!(mode, 1 | 2 | 4 | 5) {
        return;
    }
    let m = if pid == HOST_PID {
        host
    } else {
        guests.entry(pid).or_default()
    };
    m.set_build_id(name, id);
}

/// The replay of `--with-hits`: each sample marks the DSO its address
/// lands in; build ids that come as records (pipe mode) are filed.
struct Hits<'a> {
    guests: &'a mut BTreeMap<i32, Machine>,
}

impl profile::session::Sink for Hits<'_> {
    fn sample(&mut self, machine: &mut Machine, s: &perf_data::Sample<'_>, _period: u64) {
        machine.resolve(s);
    }

    fn build_id(&mut self, machine: &mut Machine, b: &perf_data::records::BuildIdRecord<'_>) {
        let name = String::from_utf8_lossy(b.filename);
        add_build_id(machine, self.guests, b.pid, b.misc, &name, b.build_id);
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The GNU build-id note (type 3, name "GNU") in a sequence of ELF notes.
fn gnu_build_id(notes: &[u8]) -> Option<&[u8]> {
    let align4 = |n: usize| n.checked_add(3).map(|v| v & !3);
    let mut at = 0usize;
    while at.checked_add(12)? <= notes.len() {
        let word = |i: usize| {
            let b = &notes[at + 4 * i..at + 4 * i + 4];
            u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize
        };
        let (namesz, descsz, kind) = (word(0), word(1), word(2));
        let name_at = at + 12;
        let desc_at = name_at.checked_add(align4(namesz)?)?;
        let next = desc_at.checked_add(align4(descsz)?)?;
        if desc_at.checked_add(descsz)? > notes.len() {
            return None;
        }
        if kind == 3 && notes.get(name_at..name_at + namesz) == Some(b"GNU\0".as_slice()) {
            return Some(&notes[desc_at..desc_at + descsz]);
        }
        at = next;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_gnu_note_after_others() {
        let mut n = Vec::new();
        // A "Xen" note first, then the build id.
        for (name, kind, desc) in [
            (&b"Xen\0"[..], 1u32, &[1u8, 2, 3][..]),
            (b"GNU\0", 3, &[0xab, 0xcd, 0xef, 0x01]),
        ] {
            n.extend_from_slice(&(name.len() as u32).to_ne_bytes());
            n.extend_from_slice(&(desc.len() as u32).to_ne_bytes());
            n.extend_from_slice(&kind.to_ne_bytes());
            n.extend_from_slice(name);
            n.extend_from_slice(desc);
            while n.len() % 4 != 0 {
                n.push(0);
            }
        }
        assert_eq!(gnu_build_id(&n), Some(&[0xab, 0xcd, 0xef, 0x01][..]));
        assert_eq!(gnu_build_id(&n[..20]), None);
    }
}
