//! A sink keeping samples in time order (script, export), and the time
//! ranges that select them.

use perf_data::records::{RecordData, SampleId};
use perf_data::Sample;

use super::Sink;
use crate::machine::Machine;

/// One sample as a [`Timeline`] keeps it (see
/// [`crate::collect::Collector::key`]).
#[derive(Debug, Clone, Copy)]
pub struct TimedSample {
    /// perf's sample time (0 without one).
    pub time: u64,
    pub period: u64,
    pub event: u32,
    /// Thread index in the machine.
    pub thread: u32,
    /// The recorded process and thread ids (-1 where the sample has none).
    pub pid: i32,
    pub tid: i32,
    /// The recorded CPU (0 without one).
    pub cpu: u32,
    /// Comm id in the collector.
    pub comm: u32,
    pub leaf: u32,
    pub stack: u32,
}

/// Registers a sample carries (REGS_USER or REGS_INTR), kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeptRegs {
    /// PERF_SAMPLE_REGS_ABI_* (0: none were taken).
    pub abi: u64,
    /// Which registers (perf_regs numbering), one value per bit.
    pub mask: u64,
    pub values: Box<[u64]>,
}

impl KeptRegs {
    fn of(r: &perf_data::sample::Regs<'_>) -> Self {
        KeptRegs {
            abi: r.abi,
            mask: r.mask,
            values: r.values.iter().collect(),
        }
    }
}

/// One branch-stack entry, kept with the locations of its ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptBranch {
    pub from: u64,
    pub to: u64,
    /// perf_branch_entry's flag word (mispred, predicted, in_tx, abort,
    /// cycles, type, ...).
    pub flags: u64,
    /// Location ids of `from` and `to` in the collector's interner.
    pub from_loc: u32,
    pub to_loc: u32,
    /// Their offsets into their maps (see
    /// [`crate::collect::Collector::address_loc`]).
    pub from_offset: u64,
    pub to_offset: u64,
}

/// What a sample carries besides what every view needs, kept for printers
/// that show it (script's `-F misc,addr,weight,iregs,brstack,...`). Values
/// the event does not record are None.
#[derive(Debug, Clone, Default)]
pub struct SampleExtra {
    /// The record header's misc bits.
    pub misc: u16,
    pub addr: Option<u64>,
    /// The location of `addr`, where the event's addresses are code or
    /// data a symbol can name (page faults): see [`Timeline::locate_addr`].
    pub addr_loc: Option<u32>,
    /// The WEIGHT or WEIGHT_STRUCT word as recorded.
    pub weight: Option<u64>,
    pub data_src: Option<u64>,
    pub phys_addr: Option<u64>,
    pub data_page_size: Option<u64>,
    pub code_page_size: Option<u64>,
    pub cgroup: Option<u64>,
    pub regs_user: Option<KeptRegs>,
    pub regs_intr: Option<KeptRegs>,
    pub branches: Option<Box<[KeptBranch]>>,
    /// A tracepoint sample's raw data (its fields, for libtraceevent to print).
    pub raw: Option<Box<[u8]>>,
}

/// Which samples a [`Timeline`] keeps (script's `--pid`, `--tid`, `--time`
/// and `--comms`); `None` keeps all.
#[derive(Debug, Clone, Default)]
pub struct SampleFilter {
    pub pids: Option<Vec<i32>>,
    pub tids: Option<Vec<i32>>,
    /// perf's `--time` ranges.
    pub time: Option<super::TimeRanges>,
    pub comms: Option<Vec<String>>,
    /// `-C/--cpu`: only samples of these CPUs.
    pub cpus: Option<Vec<u32>>,
    /// `time` counts from the first sample (script's `--reltime`).
    pub time_relative: bool,
}

/// Which kernel records besides samples script shows (perf's
/// `--show-task-events`, `--show-mmap-events` and the like).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SideBand {
    /// COMM, FORK, EXIT.
    pub task: bool,
    /// MMAP, MMAP2.
    pub mmap: bool,
    /// SWITCH, SWITCH_CPU_WIDE.
    pub switch: bool,
    pub namespace: bool,
    /// LOST (perf script shows no LOST_SAMPLES).
    pub lost: bool,
    /// KSYMBOL, BPF_EVENT.
    pub bpf: bool,
    pub cgroup: bool,
    pub text_poke: bool,
    /// FINISHED_ROUND (shown where the file has them: the records are then
    /// replayed in file order).
    pub round: bool,
}

impl SideBand {
    /// Whether records of `type_` are shown.
    fn shows(&self, type_: u32) -> bool {
        use perf_data::consts::*;
        match type_ {
            PERF_RECORD_COMM | PERF_RECORD_FORK | PERF_RECORD_EXIT => self.task,
            PERF_RECORD_MMAP | PERF_RECORD_MMAP2 => self.mmap,
            PERF_RECORD_SWITCH | PERF_RECORD_SWITCH_CPU_WIDE => self.switch,
            PERF_RECORD_NAMESPACES => self.namespace,
            PERF_RECORD_LOST => self.lost,
            PERF_RECORD_KSYMBOL | PERF_RECORD_BPF_EVENT => self.bpf,
            PERF_RECORD_CGROUP => self.cgroup,
            PERF_RECORD_TEXT_POKE => self.text_poke,
            _ => false,
        }
    }
}

/// A kernel record a [`Timeline`] keeps to show beside the samples, with
/// what perf prints before it.
#[derive(Debug, Clone)]
pub struct TimedSide {
    /// How many kept samples come before it.
    pub at: usize,
    /// Time, pid, tid and CPU as perf prints them: the record's sample_id
    /// fields (0 where it has none).
    pub time: u64,
    pub pid: i32,
    pub tid: i32,
    pub cpu: u32,
    /// The comm of the thread perf names the record by.
    pub comm: String,
    /// The event whose fields lay out the line.
    pub event: usize,
    pub type_: u32,
    pub misc: u16,
    /// The record's payload (decode with `Meta::parse_other`).
    pub payload: Vec<u8>,
}

/// A sink keeping every sample the filter passes, in time order, with its
/// stack interned by `collector` (script, export).
pub struct Timeline {
    pub collector: crate::collect::Collector,
    pub samples: Vec<TimedSample>,
    pub filter: SampleFilter,
    /// `--switch-on`/`--switch-off`.
    pub switch: Option<super::EvSwitch>,
    /// The kernel records shown beside the samples, and which kinds.
    pub side: Vec<TimedSide>,
    pub side_band: SideBand,
    /// The time of the first sample, kept or not.
    first_time: Option<u64>,
    /// Keep each sample's [`SampleExtra`] in `extras` (one per sample).
    pub keep_extra: bool,
    pub extras: Vec<SampleExtra>,
    /// Per event: whether a sample's `addr` is looked up in the maps (and
    /// later named by symbol), as perf does for page-fault events.
    pub locate_addr: Vec<bool>,
}

impl Timeline {
    pub fn new(collector: crate::collect::Collector, filter: SampleFilter) -> Self {
        Timeline {
            collector,
            switch: None,
            samples: Vec::new(),
            filter,
            side: Vec::new(),
            side_band: SideBand::default(),
            first_time: None,
            keep_extra: false,
            extras: Vec::new(),
            locate_addr: Vec::new(),
        }
    }
}

impl Timeline {
    fn extra_of(&mut self, machine: &mut Machine, s: &Sample<'_>) -> SampleExtra {
        let locate = self.locate_addr.get(s.event).copied().unwrap_or(false);
        let c = &mut self.collector;
        let branches = s.branch_stack.map(|b| {
            b.entries()
                .map(|e| {
                    let (from_loc, from_offset) = c.address_loc(machine, s, e.from);
                    let (to_loc, to_offset) = c.address_loc(machine, s, e.to);
                    KeptBranch {
                        from: e.from,
                        to: e.to,
                        flags: e.flags,
                        from_loc,
                        to_loc,
                        from_offset,
                        to_offset,
                    }
                })
                .collect()
        });
        SampleExtra {
            misc: s.misc,
            addr: s.addr,
            addr_loc: s
                .addr
                .filter(|_| locate)
                .map(|a| c.address_loc(machine, s, a).0),
            weight: s.weight,
            data_src: s.data_src,
            phys_addr: s.phys_addr,
            data_page_size: s.data_page_size,
            code_page_size: s.code_page_size,
            cgroup: s.cgroup,
            regs_user: s.regs_user.as_ref().map(KeptRegs::of),
            regs_intr: s.regs_intr.as_ref().map(KeptRegs::of),
            branches,
            raw: s.raw.map(Box::from),
        }
    }
}

impl Sink for Timeline {
    fn sample(&mut self, machine: &mut Machine, s: &Sample<'_>, period: u64) {
        let pid = s.pid.map_or(-1, |p| p as i32);
        let tid = s.tid.map_or(-1, |t| t as i32);
        let t = s.time.unwrap_or(0);
        let first = *self.first_time.get_or_insert(t);
        let f = &self.filter;
        let rel = if f.time_relative { first } else { 0 };
        if f.pids.as_ref().is_some_and(|v| !v.contains(&pid))
            || f.tids.as_ref().is_some_and(|v| !v.contains(&tid))
            || f.time.as_ref().is_some_and(|r| !r.keeps_from(t, rel))
            || f.cpus
                .as_ref()
                .is_some_and(|c| !c.contains(&s.cpu.unwrap_or(u32::MAX)))
        {
            return;
        }
        let key = self.collector.key(machine, s);
        if let Some(c) = &f.comms {
            let name = &self.collector.comms()[key.comm as usize];
            if !c.iter().any(|x| x == name) {
                return;
            }
        }
        // (perf script applies its evswitch after every other filter.)
        if self.switch.as_mut().is_some_and(|w| w.discard(s.event)) {
            return;
        }
        self.samples.push(TimedSample {
            time: t,
            period,
            event: key.event,
            thread: key.thread,
            pid,
            tid,
            cpu: s.cpu.unwrap_or(0),
            comm: key.comm,
            leaf: key.leaf,
            stack: key.stack,
        });
        if self.keep_extra {
            let extra = self.extra_of(machine, s);
            self.extras.push(extra);
        }
    }

    fn process_exited(&mut self, machine: &Machine, pid: i32) {
        self.collector.process_exited(machine, pid);
    }

    fn finished_round(&mut self) {
        if self.side_band.round {
            self.side.push(TimedSide {
                at: self.samples.len(),
                time: 0,
                pid: -1,
                tid: -1,
                cpu: 0,
                comm: String::new(),
                event: 0,
                type_: perf_data::PERF_RECORD_FINISHED_ROUND,
                misc: 0,
                payload: Vec::new(),
            });
        }
    }

    fn side_band(
        &mut self,
        machine: &mut Machine,
        rec: &perf_data::Record<'_>,
        data: &RecordData<'_>,
        sid: &SampleId,
        applied: bool,
    ) {
        if !self.side_band.shows(rec.type_()) {
            return;
        }
        // perf names a record by the thread it is about, after applying it
        // (an EXIT before), or for records about no thread by the one its
        // sample_id names.
        let about = match *data {
            RecordData::Comm(c) => Some((c.pid, c.tid, true)),
            RecordData::Fork(f) => Some((f.pid, f.tid, true)),
            RecordData::Exit(f) => Some((f.pid, f.tid, false)),
            RecordData::Mmap(m) => Some((m.pid, m.tid, true)),
            RecordData::Mmap2(m) => Some((m.pid, m.tid, true)),
            RecordData::Namespaces { pid, tid, .. } => Some((pid, tid, true)),
            _ => None,
        };
        let wanted_after = about.is_none_or(|(_, _, after)| after);
        if applied != wanted_after {
            return;
        }
        let id_all = rec
            .meta
            .events
            .first()
            .is_some_and(|e| e.attr.sample_id_all());
        let (pid, tid) = match (id_all, about) {
            (true, _) => (
                sid.pid.map_or(-1, |p| p as i32),
                sid.tid.map_or(-1, |t| t as i32),
            ),
            (false, Some((p, t, _))) => (p as i32, t as i32),
            (false, None) => (-1, -1),
        };
        let cpu = if id_all { sid.cpu.unwrap_or(0) } else { 0 };
        if self.filter.cpus.as_ref().is_some_and(|c| !c.contains(&cpu)) {
            return;
        }
        let comm = match about {
            Some((p, t, _)) => machine.findnew_comm(p as i32, t as i32),
            None => machine.findnew_comm(pid, tid),
        };
        let raw = rec.raw;
        self.side.push(TimedSide {
            at: self.samples.len(),
            time: if id_all { sid.time.unwrap_or(0) } else { 0 },
            pid,
            tid,
            cpu,
            comm,
            event: rec.meta.event_of_id(sid.id).unwrap_or(0),
            type_: raw.type_,
            misc: raw.misc,
            payload: raw.payload.to_vec(),
        });
    }
}

/// Script's `--dsos` and `-S` on kept samples: the sample's own address
/// decides, as perf's filters do (its DSO's short name, its symbol's name).
pub struct LeafFilter<'a> {
    dsos: Option<Vec<String>>,
    symbols: Option<Vec<String>>,
    locs: &'a [crate::collect::Loc],
    syms: &'a crate::symbolize::SymbolTable,
    dso_names: Vec<String>,
}

impl<'a> LeafFilter<'a> {
    pub fn new(
        dsos: Option<Vec<String>>,
        symbols: Option<Vec<String>>,
        collector: &'a crate::collect::Collector,
        machine: &Machine,
        syms: &'a crate::symbolize::SymbolTable,
    ) -> Self {
        LeafFilter {
            dso_names: machine
                .dsos()
                .iter()
                .map(|d| crate::hist::dso_short_name(&d.name))
                .collect(),
            dsos,
            symbols,
            locs: collector.interner.locs(),
            syms,
        }
    }

    /// Whether a sample whose own location is `leaf` passes.
    pub fn keeps(&self, leaf: u32) -> bool {
        let Some(loc) = self.locs.get(leaf as usize) else {
            return false;
        };
        let dso_ok = self.dsos.as_ref().is_none_or(|list| {
            self.dso_names
                .get(loc.dso as usize)
                .is_some_and(|n| list.contains(n))
        });
        let sym_ok = self.symbols.as_ref().is_none_or(|list| {
            self.syms
                .per_loc
                .get(leaf as usize)
                .and_then(|l| l.sym)
                .is_some_and(|s| list.contains(&self.syms.syms[s as usize].name))
        });
        dso_ok && sym_ok
    }
}

/// The times script prints: as recorded, since the first sample printed
/// (`--reltime`) or since the one before (`--deltatime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShownTime {
    Absolute,
    Relative,
    Delta,
}

impl ShownTime {
    /// The mode script's `--reltime` and `--deltatime` ask for.
    pub fn of(reltime: bool, deltatime: bool) -> Self {
        match (reltime, deltatime) {
            (true, _) => ShownTime::Relative,
            (false, true) => ShownTime::Delta,
            _ => ShownTime::Absolute,
        }
    }
}

/// [`ShownTime`] over the lines printed, in order. As perf, a time of 0
/// (a record without one) counts as no time: the first and previous times
/// are the first nonzero ones.
#[derive(Debug, Clone)]
pub struct TimeClock {
    mode: ShownTime,
    first: u64,
    previous: u64,
}

impl TimeClock {
    pub fn new(mode: ShownTime) -> Self {
        TimeClock {
            mode,
            first: 0,
            previous: 0,
        }
    }

    /// The time to print for the next printed line, recorded at `t`.
    pub fn shown(&mut self, t: u64) -> u64 {
        match self.mode {
            ShownTime::Absolute => t,
            ShownTime::Relative => {
                if self.first == 0 {
                    self.first = t;
                }
                t.wrapping_sub(self.first)
            }
            ShownTime::Delta => {
                let d = if self.previous == 0 {
                    0
                } else {
                    t.wrapping_sub(self.previous)
                };
                self.previous = t;
                d
            }
        }
    }
}
