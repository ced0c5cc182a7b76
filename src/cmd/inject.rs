//! `sear inject`: read a recording and write it back out (perf inject's
//! plumbing, perf_data::convert): a regular output file gets file mode,
//! `-o -` (or a FIFO) pipe mode; `-z` compresses. `-b`/`--buildid-all`
//! add build-id records as perf inject does.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use perf_data::consts::*;
use perf_data::convert::{to_file_mode_with, to_pipe_mode_with, Extra, Inserter};
use perf_data::Record;

use crate::cli::InjectArgs;

pub fn run(a: InjectArgs) -> Result<ExitCode> {
    if a.sched_stat {
        bail!("-s/--sched-stat merges sched_stat and sched_switch tracepoint samples into off-CPU time (perf's old recipe); sear does not: record with `sear record --off-cpu` instead");
    }
    let builds = a.build_ids || a.buildid_all || a.known_build_ids.is_some();
    if a.jit && builds {
        bail!("-j/--jit with -b/--buildid-all/--known-build-ids: run sear inject twice, once for each");
    }
    if a.itrace.is_some() || a.strip {
        bail!("--itrace (and --strip, which needs it) decode hardware traces (Intel PT, Arm CoreSight); this recording cannot hold any from this machine");
    }
    if a.guest_data.is_some() || a.guestmount.is_some() || a.vm_time_correlation.is_some() {
        bail!("--guest-data, --guestmount and --vm-time-correlation merge a virtual machine guest's recording; sear reads host recordings only");
    }
    let mut reader = super::open(&a.input)?;
    let mut inserter = if a.build_ids || a.buildid_all || a.known_build_ids.is_some() {
        let mut known: HashMap<String, Vec<u8>> = reader
            .meta()
            .features
            .build_ids()
            .unwrap_or_default()
            .into_iter()
            .map(|e| (e.filename, e.build_id))
            .collect();
        for (path, id) in parse_known(a.known_build_ids.as_deref().unwrap_or(""))? {
            known.insert(path, id);
        }
        let order = reader
            .meta()
            .features
            .build_ids()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.filename)
            .collect();
        Some(BuildIdInserter {
            known,
            all: a.buildid_all,
            maps: Default::default(),
            done: HashSet::new(),
            order,
            ids: HashMap::new(),
        })
    } else {
        None
    };
    let mut jit = a.jit.then(JitInserter::default);
    let ins = match (inserter.as_mut(), jit.as_mut()) {
        (Some(i), _) => Some(i as &mut dyn Inserter),
        (None, Some(j)) => Some(j as &mut dyn Inserter),
        (None, None) => None,
    };
    let to_pipe = a.output == Path::new("-") || is_fifo(&a.output);
    let result = if to_pipe {
        if a.output == Path::new("-") {
            let out = io::stdout().lock();
            to_pipe_mode_with(&mut reader, out, a.compress.level, ins)
        } else {
            let out = File::create(&a.output)
                .with_context(|| format!("creating {}", a.output.display()))?;
            to_pipe_mode_with(&mut reader, out, a.compress.level, ins)
        }
    } else {
        let out =
            File::create(&a.output).with_context(|| format!("creating {}", a.output.display()))?;
        to_file_mode_with(&mut reader, out, a.compress.level, ins)
    };
    crate::ui::print_diagnostics(&a.input, reader.diagnostics());
    result.with_context(|| format!("rewriting {} as {}", a.input.display(), a.output.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// `--known-build-ids=BUILDID=PATH,...`.
fn parse_known(s: &str) -> Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    for item in s.split(',').filter(|i| !i.is_empty()) {
        let Some((id, path)) = item.split_once('=') else {
            bail!("--known-build-ids: `{item}` is not BUILDID=PATH");
        };
        let bytes = (0..id.len())
            .step_by(2)
            .map(|i| {
                id.get(i..i + 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            })
            .collect::<Option<Vec<u8>>>()
            .filter(|b| !b.is_empty() && b.len() <= 20 && id.len() % 2 == 0);
        let Some(bytes) = bytes else {
            bail!("--known-build-ids: `{id}` is not a build id (up to 40 hex digits)");
        };
        out.push((path.to_owned(), bytes));
    }
    Ok(out)
}

/// perf inject's `-b`: before the first sample in each binary, a
/// HEADER_BUILD_ID record with its build id (from the recording's build-id
/// table, else read from the file); with `--buildid-all`, before each
/// binary's first mapping instead.
struct BuildIdInserter {
    known: HashMap<String, Vec<u8>>,
    all: bool,
    maps: record::buildid::HitBinaries,
    /// Binaries hit (sampled, or mapped with --buildid-all).
    done: HashSet<String>,
    /// perf's DSOs in the order it made them: the recording's build-id
    /// table, then as records name them; with the build ids found.
    order: Vec<String>,
    ids: HashMap<String, Vec<u8>>,
}

impl BuildIdInserter {
    fn build_id_of(&self, name: &str) -> Option<Vec<u8>> {
        if let Some(id) = self.known.get(name) {
            return Some(id.clone());
        }
        if name == "[kernel.kallsyms]" {
            return std::fs::read("/sys/kernel/notes")
                .ok()
                .and_then(|b| record::buildid::build_id_in_notes(&b));
        }
        if name.starts_with('/') {
            return record::buildid::build_id_of_file(name);
        }
        None
    }

    fn seen(&mut self, name: &str) {
        if !self.order.iter().any(|n| n == name) {
            self.order.push(name.to_owned());
        }
    }

    fn inject(&mut self, name: &str, endian: perf_data::Endian, out: &mut Vec<Extra>) {
        if !self.done.insert(name.to_owned()) {
            return;
        }
        self.seen(name);
        let Some(id) = self.build_id_of(name).filter(|i| i.len() <= 20) else {
            return;
        };
        self.ids.insert(name.to_owned(), id.clone());
        let kernel = name == "[kernel.kallsyms]";
        let mut p = Vec::with_capacity(100);
        p.extend_from_slice(&endian.put_u32(u32::MAX));
        let mut bid = [0u8; 24];
        bid[..id.len()].copy_from_slice(&id);
        p.extend_from_slice(&bid);
        let name_len = (name.len() + 1).div_ceil(64) * 64;
        p.extend_from_slice(name.as_bytes());
        p.resize(4 + 24 + name_len, 0);
        out.push(Extra {
            type_: PERF_RECORD_HEADER_BUILD_ID,
            misc: if kernel {
                PERF_RECORD_MISC_KERNEL
            } else {
                PERF_RECORD_MISC_USER
            },
            payload: p,
        });
    }
}

impl Inserter for BuildIdInserter {
    /// perf inject -b reads the samples in time order (its queue flushed
    /// only at the end); --buildid-all does not.
    fn ordered(&self) -> bool {
        !self.all
    }

    fn features(&mut self, meta: &perf_data::Meta, features: &mut perf_data::writer::FeatureMap) {
        use perf_data::feature;
        // As perf: the output's command line is inject's, its build-id
        // table that of the binaries hit.
        let mut args: Vec<String> = std::env::args().collect();
        if let (Some(first), Ok(exe)) = (args.first_mut(), std::env::current_exe()) {
            *first = exe.display().to_string();
        }
        if features.contains_key(&feature::CMDLINE) {
            features.insert(
                feature::CMDLINE,
                record::header::cmdline(meta.endian, &args),
            );
        }
        let table = self.table(meta.endian);
        if table.is_empty() {
            features.remove(&feature::BUILD_ID);
        } else {
            features.insert(feature::BUILD_ID, table);
        }
    }

    fn before(&mut self, rec: &Record<'_>, out: &mut Vec<Extra>) {
        let endian = rec.meta.endian;
        let p = rec.raw.payload;
        let u32_at = |o: usize| {
            p.get(o..o + 4)
                .map_or(0, |b| endian.u32([b[0], b[1], b[2], b[3]]))
        };
        let u64_at = |o: usize| {
            p.get(o..o + 8).map_or(0, |b| {
                endian.u64([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
            })
        };
        let name_at = |o: usize| {
            let b = p.get(o..).unwrap_or(&[]);
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).into_owned()
        };
        match rec.raw.type_ {
            PERF_RECORD_MMAP | PERF_RECORD_MMAP2 => {
                let name = name_at(if rec.raw.type_ == PERF_RECORD_MMAP2 {
                    64
                } else {
                    32
                });
                let pid = u32_at(0);
                let file = name.starts_with('/') || name == "[vdso]";
                if file && pid != u32::MAX {
                    self.seen(&name);
                    if self.all {
                        self.inject(&name, endian, out);
                    }
                }
                self.maps.mmap(pid, u64_at(8), u64_at(16), &name);
            }
            PERF_RECORD_FORK => self.maps.fork(u32_at(0), u32_at(4)),
            PERF_RECORD_COMM if rec.raw.misc & PERF_RECORD_MISC_COMM_EXEC != 0 => {
                self.maps.exec(u32_at(0))
            }
            PERF_RECORD_SAMPLE if !self.all => {
                let Ok(s) = rec.sample() else {
                    return;
                };
                let (Some(pid), Some(ip)) = (s.pid, s.ip) else {
                    return;
                };
                if let Some(name) = self.maps.file_of(rec.raw.misc, pid, ip).map(str::to_owned) {
                    self.inject(&name, endian, out);
                }
            }
            _ => {}
        }
    }
}

impl BuildIdInserter {
    /// perf's table after inject: the build ids of the binaries hit (and
    /// the vdso's), in the order perf made its DSOs.
    fn table(&self, endian: perf_data::Endian) -> Vec<u8> {
        let mut b = Vec::new();
        for name in &self.order {
            let id = match self.ids.get(name) {
                Some(id) => Some(id.clone()),
                None if name == "[vdso]" => self.known.get(name).cloned(),
                None => None,
            };
            if let Some(id) = id {
                let kernel = name == "[kernel.kallsyms]";
                b.extend(record::buildid::build_id_entry(endian, kernel, &id, name));
            }
        }
        b
    }
}

fn is_fifo(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p)
        .map(|m| m.file_type().is_fifo() || m.file_type().is_char_device())
        .unwrap_or(false)
}

/// perf inject --jit: each jitdump's marker map is replaced by a map per
/// code load (and move), at its time, of an ELF file written beside the
/// dump as perf's genelf writes it (`symbols::jitdump::elf_image`); the
/// placements are the ones sear's own reading makes (`profile::jit`).
#[derive(Default)]
struct JitInserter {
    /// The recording's clock is the dumps' (decided at the first marker).
    monotonic: Option<bool>,
    warned_clock: bool,
    /// The ELF files written (or failed), by path.
    written: HashMap<String, Option<(u64, u64)>>,
    /// The record `before` saw was a marker: left out.
    drop_it: bool,
}

impl Inserter for JitInserter {
    fn before(&mut self, rec: &Record<'_>, out: &mut Vec<Extra>) {
        use perf_data::records::RecordData;
        let t = rec.type_();
        if t != PERF_RECORD_MMAP && t != PERF_RECORD_MMAP2 {
            return;
        }
        let Ok((data, sid)) = rec.decode() else {
            return;
        };
        let (pid, name, exec, fixed) = match data {
            RecordData::Mmap(m) => (
                m.pid,
                m.filename,
                rec.raw.misc & PERF_RECORD_MISC_MMAP_DATA == 0,
                40,
            ),
            RecordData::Mmap2(m) => (m.pid, m.filename, m.prot & 4 != 0, 64),
            _ => return,
        };
        let name = String::from_utf8_lossy(name).into_owned();
        if !exec || !profile::jit::is_marker(&name, pid as i32) {
            return;
        }
        self.drop_it = true;
        let endian = rec.meta.endian;
        // The marker's sample_id trailer, given each new map's pid, tid and time.
        let body = (fixed + name.len() + 1).next_multiple_of(8);
        let tail = rec.raw.payload.get(body..).unwrap_or_default();
        let mono = *self
            .monotonic
            .get_or_insert_with(|| profile::jit::monotonic(rec.meta));
        for p in profile::jit::placements(&name, sid.time, mono, &mut self.warned_clock) {
            let file = self
                .written
                .entry(p.dso.clone())
                .or_insert_with(|| write_jitted(&p))
                .to_owned();
            let Some((dev, ino)) = file else {
                continue;
            };
            let mut v = Vec::with_capacity(body + tail.len() + 64);
            v.extend(endian.put_u32(p.pid as u32));
            v.extend(endian.put_u32(p.tid as u32));
            v.extend(endian.put_u64(p.addr));
            v.extend(endian.put_u64(p.len));
            v.extend(endian.put_u64(symbols::jitdump::ELF_TEXT_OFFSET));
            // glibc's major() and minor() of the file's device.
            let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
            let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
            v.extend(endian.put_u32(major as u32));
            v.extend(endian.put_u32(minor as u32));
            v.extend(endian.put_u64(ino));
            v.extend(endian.put_u64(1)); // ino_generation, as perf writes it
            v.extend(endian.put_u32(4)); // PROT_EXEC
            v.extend(endian.put_u32(1)); // MAP_SHARED
            v.extend(p.dso.as_bytes());
            v.push(0);
            v.resize(v.len().next_multiple_of(8), 0);
            let mut t = tail.to_vec();
            let mut at = 0;
            if sid.pid.is_some() && t.len() >= 8 {
                t[..4].copy_from_slice(&endian.put_u32(p.pid as u32));
                t[4..8].copy_from_slice(&endian.put_u32(p.tid as u32));
                at = 8;
            }
            if sid.time.is_some() && t.len() >= at + 8 {
                t[at..at + 8].copy_from_slice(&endian.put_u64(p.time));
            }
            v.extend(t);
            out.push(Extra {
                type_: PERF_RECORD_MMAP2,
                misc: PERF_RECORD_MISC_USER,
                payload: v,
            });
        }
    }

    fn drops(&mut self, _rec: &Record<'_>) -> bool {
        std::mem::take(&mut self.drop_it)
    }
}

/// Writes the ELF file of a placement's code; its device and inode, or
/// None (and a warning) where it cannot be written.
fn write_jitted(p: &profile::jit::Placement) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let c = &p.code;
    let made = symbols::jitdump::read_code(&c.dump, c.code_offset, c.size)
        .map(|code| symbols::jitdump::elf_image(&c.name, &code, c.unwind.as_deref(), 62))
        .and_then(|img| std::fs::write(&p.dso, img))
        .and_then(|()| std::fs::metadata(&p.dso));
    match made {
        Ok(m) => Some((m.dev(), m.ino())),
        Err(e) => {
            log::warn!("{}: {e}: the JIT code of {} is left out", p.dso, c.name);
            None
        }
    }
}
