//! JIT code named from jitdump files, read directly: what `perf inject --jit` does to a
//! recording, done in the session model instead of in a new file.
//!
//! A runtime that writes a jitdump (`jit-PID.dump`) maps it executable once, so the
//! recording holds an MMAP of it (perf's marker). When the model meets that map, the dump
//! is read and each code load becomes a map of its own at the load's time, of a DSO named
//! as perf inject names the ELF file it writes for it (`DIR/jitted-PID-INDEX.so`, beside
//! the dump), with one symbol: the function. Moves map the same DSO at the new address. So
//! a report of the recording equals perf's report of the injected one, DSO names included,
//! and no file is written.
//!
//! Time: a dump's timestamps are CLOCK_MONOTONIC; a recording made with `-k mono`
//! (`--clockid`) has the same clock, and loads are placed at their times, so code that was
//! replaced at an address is named by what was there when sampled. Without it, the two
//! clocks are lined up where the runtime mapped the dump (the marker's time in the
//! recording's clock, the dump header's in its own, or its first record's where the header
//! has another clock: both count nanoseconds), and a warning says to record with `-k mono` for exact times; where
//! the dump counts the CPU's cycles instead, every load is placed when the marker is met,
//! in the dump's order (a later load at an address wins).

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use symbols::jitdump::{LineEntry, Unwinding};

/// Where perf inject's ELF files put the code (its `GEN_ELF_TEXT_OFFSET`): the maps it
/// writes start at this file offset, and the function's symbol there.
pub const TEXT_OFFSET: u64 = 0x80;

/// One function of a jitdump, as the DSO that shows it knows it.
#[derive(Debug, PartialEq, Eq)]
pub struct JitCode {
    pub name: String,
    pub size: u64,
    /// The process address the code was loaded at (its source lines are by address).
    pub load_addr: u64,
    pub lines: Vec<LineEntry>,
    pub unwind: Option<Arc<Unwinding>>,
    /// The dump and the file offset of the code bytes.
    pub dump: Arc<Path>,
    pub code_offset: u64,
}

/// A map to make when the session reaches `time`.
#[derive(Debug)]
pub struct Placement {
    pub time: u64,
    pub pid: i32,
    pub tid: i32,
    pub addr: u64,
    pub len: u64,
    pub dso: String,
    pub code: Arc<JitCode>,
}

/// The loads of the dumps met so far, not yet placed, oldest first.
#[derive(Debug, Default)]
pub(crate) struct JitPlacer {
    pub pending: VecDeque<Placement>,
    /// Dumps already read (a runtime may map its dump more than once).
    seen: HashMap<Arc<Path>, ()>,
    /// The recording's samples are stamped with CLOCK_MONOTONIC.
    pub monotonic: bool,
    warned_clock: bool,
}

impl JitPlacer {
    /// The placements of the dump at `path`, mapped by process `pid` at `now`; nothing if
    /// it was read before, or is no dump of `pid` (a warning says why it cannot be read).
    pub fn marker(&mut self, path: &str, pid: i32, now: Option<u64>) {
        if !is_marker(path, pid) {
            return;
        }
        let p: Arc<Path> = Arc::from(Path::new(symbols::on_disk(path).as_ref()));
        if self.seen.insert(p.clone(), ()).is_some() {
            return;
        }
        let out = placements(path, now, self.monotonic, &mut self.warned_clock);
        if self.pending.is_empty() {
            self.pending = out.into();
        } else {
            let mut all: Vec<Placement> = self.pending.drain(..).collect();
            all.extend(out);
            all.sort_by_key(|p| p.time);
            self.pending = all.into();
        }
    }
}

/// perf_event_attr's `use_clockid` flag bit.
const USE_CLOCKID_BIT: u32 = 25;

/// Whether every event of a recording is stamped with CLOCK_MONOTONIC
/// (`-k mono`), the clock of jitdumps.
pub fn monotonic(meta: &perf_data::Meta) -> bool {
    !meta.events.is_empty()
        && meta
            .events
            .iter()
            .all(|e| e.attr.flag(USE_CLOCKID_BIT) && e.attr.clockid == 1)
}

/// Whether an executable map of `path` by process `pid` is a jitdump's
/// marker (perf's rule: the file is named `jit-PID.dump` after the process
/// that maps it).
pub fn is_marker(path: &str, pid: i32) -> bool {
    symbols::jitdump_pid(path) == Some(pid as u32)
}

/// The maps a jitdump's marker makes: the dump at `path` (as recorded; read
/// under `--symfs` when set) read, each load and move a placement, in time
/// order (see the module's notes on time; `now` is the marker's time,
/// `monotonic` whether the recording's clock is the dump's). A dump that
/// cannot be read, or is damaged, is warned about.
pub fn placements(
    path: &str,
    now: Option<u64>,
    monotonic: bool,
    warned_clock: &mut bool,
) -> Vec<Placement> {
    let p: Arc<Path> = Arc::from(Path::new(symbols::on_disk(path).as_ref()));
    let pid = symbols::jitdump_pid(path).unwrap_or(0);
    let d = match symbols::JitDump::read(&p) {
        Ok(d) => d,
        Err(e) => {
            log::warn!("JIT code of process {pid} is not named: {e}");
            return Vec::new();
        }
    };
    if let Some((at, what)) = &d.damage {
        log::warn!(
            "{}: {what} at offset {at}: the JIT code of the {} loads before it is named, \
             the rest is not",
            p.display(),
            d.loads.len()
        );
    }
    let by_time = monotonic && !d.arch_timestamp;
    if !by_time && !*warned_clock && !d.loads.is_empty() {
        *warned_clock = true;
        log::warn!(
            "{}: the recording's clock is not the jitdump's; JIT code is placed by the \
             clocks lined up where the dump was mapped, not exactly (record with -k mono \
             for that)",
            p.display()
        );
    }
    // The dump's time t in the recording's clock: the marker's time is
    // the header's (where the header's clock is the records', which
    // Node's is not: it writes the time of day there), else the first
    // record's.
    let first = d
        .loads
        .iter()
        .map(|l| l.time)
        .chain(d.moves.iter().map(|m| m.time))
        .min();
    let anchor = match first {
        Some(f) if d.time <= f && f - d.time < 60_000_000_000 => Some(d.time),
        f => f,
    };
    let shift = match (now, anchor) {
        (Some(now), Some(a)) if !by_time && !d.arch_timestamp => {
            Some(i128::from(now) - i128::from(a))
        }
        _ => None,
    };
    // Named beside the dump as recorded (not under --symfs), as perf names them.
    let dir = Path::new(path).parent().unwrap_or(Path::new("."));
    let mut by_index: HashMap<u64, Arc<JitCode>> = HashMap::default();
    let mut out: Vec<Placement> = Vec::with_capacity(d.loads.len() + d.moves.len());
    let when = |t: u64| match shift {
        _ if by_time => t,
        Some(s) => u64::try_from((i128::from(t) + s).max(0)).unwrap_or(u64::MAX),
        None => now.unwrap_or(0),
    };
    for l in &d.loads {
        let code = Arc::new(JitCode {
            name: l.name.clone(),
            size: l.size,
            load_addr: l.addr,
            lines: l.lines.clone(),
            unwind: l.unwind.clone(),
            dump: p.clone(),
            code_offset: l.code_offset,
        });
        by_index.insert(l.index, code.clone());
        // perf maps the code and, after it (8-aligned), its unwinding tables.
        let len = match l.unwind.as_ref().map(|u| u.mapped_size) {
            Some(m) if m > 0 => l.size.next_multiple_of(8).saturating_add(m),
            _ => l.size,
        };
        out.push(Placement {
            time: when(l.time),
            pid: l.pid as i32,
            tid: l.tid as i32,
            addr: l.addr,
            len,
            dso: format!("{}/jitted-{}-{}.so", dir.display(), l.pid, l.index),
            code,
        });
    }
    for m in &d.moves {
        let Some(code) = by_index.get(&m.index) else {
            continue;
        };
        out.push(Placement {
            time: when(m.time),
            pid: m.pid as i32,
            tid: m.tid as i32,
            addr: m.new_addr,
            len: m.size,
            dso: format!("{}/jitted-{}-{}.so", dir.display(), m.pid, m.index),
            code: code.clone(),
        });
    }
    log::debug!(
        "{}: {} loads, {} moves; marker at {now:?}, dump header at {}, first load placed at {:?}",
        p.display(),
        d.loads.len(),
        d.moves.len(),
        d.time,
        out.first().map(|p| p.time)
    );
    // In time order (stable: file order among equals).
    out.sort_by_key(|p| p.time);
    out
}
