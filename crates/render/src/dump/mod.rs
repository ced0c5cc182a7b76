//! `perf report -D` text: every record raw with its decoded fields.
//!
//! Records must be fed in the order perf delivers them (time order between
//! FINISHED_ROUND records, see `perf_data::OrderedReader`), because the
//! sample lines name the thread and DSO as known at that moment:
//! `profile::session::each_record` resolves each sample in the session model
//! as it stands before applying the record, and hands that answer
//! ([`SampleSite`]) with the record.
//!
//! Where the text still differs from perf 6.1 (checked byte for byte on the
//! wild conformance files and on fresh software-event recordings):
//! - `[vdso]` maps: perf names their DSO after a temporary copy of the vdso
//!   it writes at run time (`/tmp/perf-vdso.so-XXXXXX`); we print `[vdso]`.
//! - Register names are perf's x86 names whatever the recording's arch.
//! - LBR call stacks, guest machines, AUX/ITRACE/STAT/AUXTRACE records and
//!   big-endian recordings (dumped in file byte order) were not available
//!   to compare; their lines follow perf's formats but are unverified.

use std::io::{self, Write};

pub(crate) mod fmt;
use fmt::*;

use perf_data::consts::*;
use perf_data::records::{Mmap2Id, RecordData, SampleId};
use perf_data::sample::{ReadValues, Sample};
use perf_data::user_records::{self, EventUpdate, UserRecord};
use perf_data::{Meta, Record};
use profile::machine::Landing;
use profile::session::SampleSite;

/// perf's report switches to branch mode when the recording has the
/// BRANCH_STACK feature and no user stacks; samples then count once per
/// branch-stack entry.
fn branch_mode(meta: &Meta) -> bool {
    let user_stacks = meta
        .events
        .iter()
        .any(|e| e.attr.sample_type & PERF_SAMPLE_STACK_USER != 0);
    meta.features.has(perf_data::consts::feature::BRANCH_STACK) && !user_stacks
}

/// The line perf prints when a record drops a thread it had made up as
/// the parent of another (see `Machine::apply`).
pub fn removed_parent(out: &mut dyn Write, (pid, tid): (i32, i32)) -> io::Result<()> {
    writeln!(out, "removing erroneous parent thread {pid}/{tid}")
}

/// Writes records the way `perf report -D` prints them, one call per record.
#[derive(Debug)]
pub struct Dumper {
    /// What perf prints after the offset: the input path, or `pipe`.
    label: String,
    /// HEADER_ATTR records seen so far: in pipe mode perf dumps an ATTR
    /// before adding its event, so its line uses the events before it.
    attrs_seen: usize,
    undecodable: u64,
    first_undecodable: Option<u64>,
    /// Per event: the entries perf's report added to its histogram, which
    /// is what perf -D prints as each event's SAMPLE count.
    hist_entries: Vec<u64>,
    branch_mode: bool,
    /// perf script's dump: the records its tool handles (thread and CPU
    /// maps, stat records) are not marked `unhandled!`.
    script: bool,
    /// perf diff's dump: its tool has no handler for ID_INDEX and
    /// EVENT_UPDATE records.
    diff: bool,
    /// Records dumped in file order (`script --dump-unsorted-raw-trace`).
    unordered: bool,
}

impl Dumper {
    /// `path` is the input as the user named it; pipe-mode input is labelled `pipe`.
    pub fn new(path: &str, meta: &Meta) -> Self {
        let label = if meta.is_pipe() {
            "pipe".to_string()
        } else {
            path.to_string()
        };
        Dumper {
            label,
            attrs_seen: 0,
            undecodable: 0,
            first_undecodable: None,
            hist_entries: Vec::new(),
            branch_mode: branch_mode(meta),
            script: false,
            diff: false,
            unordered: false,
        }
    }

    /// The dump `perf diff -D` prints: ID_INDEX and EVENT_UPDATE records
    /// are `unhandled!` there.
    pub fn for_diff(mut self) -> Self {
        self.diff = true;
        self
    }

    /// The dump `perf script -D` prints: the records its tool handles are
    /// not marked `unhandled!` (see [`Dumper::script_preamble`] too).
    pub fn for_script(mut self) -> Self {
        self.script = true;
        self
    }

    /// The records come in file order, as perf's unordered processing hands
    /// them out (perf then leaves FINISHED_ROUND `unhandled!`).
    pub fn unordered(mut self) -> Self {
        self.unordered = true;
        self
    }

    /// What perf script prints before the first record: only the notice
    /// of unordered processing, if any.
    pub fn script_preamble(&self, out: &mut dyn Write, unordered: bool) -> io::Result<()> {
        if unordered {
            out.write_all(
                b"WARNING: No sample_id_all support, falling back to unordered processing\n",
            )?;
        }
        Ok(())
    }

    /// The two lines perf prints before the first record.
    /// `unordered`: the reader fell back to file order (no sample_id_all).
    pub fn preamble(&self, out: &mut dyn Write, unordered: bool) -> io::Result<()> {
        if unordered {
            out.write_all(
                b"WARNING: No sample_id_all support, falling back to unordered processing\n",
            )?;
        }
        out.write_all(
            b"# To display the perf.data header info, please use --header/--header-only options.\n#\n",
        )
    }

    /// Records whose body could not be decoded (count, first file offset).
    pub fn undecodable(&self) -> (u64, Option<u64>) {
        (self.undecodable, self.first_undecodable)
    }

    /// Per event (in the recording's order): the SAMPLE count perf -D prints
    /// in its closing stats. It differs from the number of SAMPLE records
    /// because perf counts histogram entries: one per branch-stack entry in
    /// branch mode (see [`Dumper::set_branch_mode`]) and one per group
    /// member for samples that read a group.
    pub fn hist_entries(&self) -> &[u64] {
        &self.hist_entries
    }

    /// perf -D's closing record counts: its report's histogram entries
    /// per event (see [`Dumper::hist_entries`]) under the names the whole
    /// stream gave the events.
    pub fn write_totals(
        &self,
        out: &mut dyn Write,
        mut stats: perf_data::stats::Stats,
        meta: &Meta,
    ) -> io::Result<()> {
        stats.cover(meta);
        for (i, e) in stats.per_event.iter_mut().enumerate() {
            e.samples = self.hist_entries.get(i).copied().unwrap_or(0);
            e.lost_samples_records = 0;
        }
        let names: Vec<String> = meta.events.iter().map(|e| e.name()).collect();
        crate::stats::write_stats(out, &stats, &names)
    }

    fn count_entry(&mut self, event: usize, n: u64) {
        if self.hist_entries.len() <= event {
            self.hist_entries.resize(event + 1, 0);
        }
        self.hist_entries[event] += n;
    }

    /// One record; a sample's thread and DSO lines say what `site` (the
    /// session model's answer for it, see `profile::session::each_record`)
    /// says.
    pub fn record(
        &mut self,
        out: &mut dyn Write,
        rec: &Record<'_>,
        site: Option<&SampleSite>,
    ) -> io::Result<()> {
        let raw = rec.raw;
        let meta = rec.meta;
        // perf hands COMPRESSED records to its decompressor without dumping
        // them; their contents follow as records of their own.
        if raw.type_ == PERF_RECORD_COMPRESSED || raw.type_ == PERF_RECORD_COMPRESSED2 {
            return Ok(());
        }
        // Pipe-mode offsets count from the end of the 16-byte stream header.
        let offset = if meta.is_pipe() {
            raw.offset.saturating_sub(16)
        } else {
            raw.offset
        };
        let size = raw.size();
        writeln!(
            out,
            "\n{}@{} [{:#x}]: event: {}",
            Hx(offset),
            self.label,
            size,
            raw.type_
        )?;
        let mut header = [0u8; 8];
        header[..4].copy_from_slice(&meta.endian.put_u32(raw.type_));
        header[4..6].copy_from_slice(&meta.endian.put_u16(raw.misc));
        header[6..].copy_from_slice(&meta.endian.put_u16(size as u16));
        hex_dump(out, &header, raw.payload)?;

        // The events perf knows when it prints this record.
        let known = if meta.is_pipe() {
            let n = if raw.type_ == PERF_RECORD_HEADER_ATTR {
                self.attrs_seen
            } else {
                self.attrs_seen.max(1)
            };
            &meta.events[..n.min(meta.events.len())]
        } else {
            &meta.events[..]
        };
        if raw.type_ == PERF_RECORD_HEADER_ATTR {
            self.attrs_seen += 1;
        }
        let combined = known.iter().fold(0, |a, e| a | e.attr.sample_type);
        let id_all = known.first().is_some_and(|e| e.attr.sample_id_all());

        if raw.type_ == PERF_RECORD_SAMPLE {
            let sample = match rec.sample() {
                Ok(s) => s,
                Err(_) => {
                    self.note_undecodable(raw.offset);
                    return write!(out, "{} [{:#x}]: PERF_RECORD_SAMPLE", Hx(offset), size);
                }
            };
            if combined & PERF_SAMPLE_CPU != 0 {
                write!(out, "{} ", sample.cpu.unwrap_or(u32::MAX))?;
            }
            if combined & PERF_SAMPLE_TIME != 0 {
                write!(out, "{} ", sample.time.unwrap_or(u64::MAX))?;
            }
            write!(out, "{} [{:#x}]: PERF_RECORD_SAMPLE", Hx(offset), size)?;
            return self.sample(out, meta, raw.payload, &sample, site);
        }

        // Non-sample records: the sample_id trailer gives cpu and time.
        if !id_all {
            out.write_all(b"-1 -1 ")?;
        } else {
            let (cpu, time) = if raw.type_ < PERF_RECORD_HEADER_ATTR {
                match rec.decode() {
                    Ok((_, sid)) => (sid.cpu.unwrap_or(u32::MAX), sid.time.unwrap_or(u64::MAX)),
                    Err(_) => (u32::MAX, u64::MAX),
                }
            } else {
                // perf's own records carry no sample fields: all zero.
                (0, 0)
            };
            if combined & PERF_SAMPLE_CPU != 0 {
                write!(out, "{cpu} ")?;
            }
            if combined & PERF_SAMPLE_TIME != 0 {
                write!(out, "{time} ")?;
            }
        }
        write!(out, "{} [{:#x}]: ", Hx(offset), size)?;
        if raw.type_ >= PERF_RECORD_HEADER_ATTR {
            write!(out, "PERF_RECORD_{}", record_type_name(raw.type_))?;
            return self.user_record(out, meta, raw.type_, raw.payload);
        }
        match rec.decode() {
            Ok((data, sid)) => write_event(out, meta, raw.type_, raw.misc, &data, &sid),
            Err(_) => {
                self.note_undecodable(raw.offset);
                writeln!(out, "PERF_RECORD_{}", record_type_name(raw.type_))
            }
        }
    }

    /// perf report's mark on a record its tool has no handler for (perf
    /// script's tool handles the thread and CPU maps and stat records).
    fn unhandled(&self, out: &mut dyn Write) -> io::Result<()> {
        if self.script {
            Ok(())
        } else {
            out.write_all(b": unhandled!\n")
        }
    }

    fn note_undecodable(&mut self, offset: u64) {
        self.undecodable += 1;
        self.first_undecodable.get_or_insert(offset);
    }

    /// perf's own record types (HEADER_ATTR and up).
    fn user_record(
        &mut self,
        out: &mut dyn Write,
        meta: &Meta,
        type_: u32,
        payload: &[u8],
    ) -> io::Result<()> {
        match type_ {
            // Nothing follows the name; the next record's leading newline
            // ends the line.
            PERF_RECORD_HEADER_ATTR
            | PERF_RECORD_HEADER_EVENT_TYPE
            | PERF_RECORD_HEADER_FEATURE
            | PERF_RECORD_HEADER_TRACING_DATA
            | PERF_RECORD_HEADER_BUILD_ID => return Ok(()),
            // Unordered, perf has no handler for the round marks.
            PERF_RECORD_FINISHED_ROUND if self.unordered => {
                return out.write_all(b": unhandled!\n");
            }
            PERF_RECORD_FINISHED_ROUND => return out.write_all(b"\n"),
            _ => {}
        }
        let Some(r) = user_records::decode(type_, payload, meta.endian) else {
            return out.write_all(b": unhandled!\n");
        };
        match r {
            UserRecord::IdIndex { .. } if self.diff => out.write_all(b": unhandled!\n"),
            UserRecord::IdIndex { nr, entries } => {
                writeln!(out, " nr: {nr}")?;
                for (id, idx, cpu, tid) in entries {
                    writeln!(out, " ... id: {id}  idx: {idx}  cpu: {cpu}  tid: {tid}")?;
                }
                Ok(())
            }
            UserRecord::ThreadMap(pids) => {
                write!(
                    out,
                    " nr: {} thread{}: ",
                    pids.len(),
                    if pids.len() > 1 { "s" } else { "" }
                )?;
                for (i, p) in pids.iter().enumerate() {
                    write!(out, "{}{p}", if i > 0 { ", " } else { "" })?;
                }
                out.write_all(b"\n")?;
                self.unhandled(out)
            }
            UserRecord::CpuMap(cpus) => {
                writeln!(out, ": {}", cpu_list(&cpus))?;
                self.unhandled(out)
            }
            UserRecord::EventUpdate { id, update } => {
                write!(out, "\n... id:    {id}\n")?;
                match update {
                    EventUpdate::Unit(u) => writeln!(out, "... unit:  {}", Lossy(u)),
                    EventUpdate::Scale(v) => writeln!(out, "... scale: {v:.6}"),
                    EventUpdate::Name(n) => writeln!(out, "... name:  {}", Lossy(n)),
                    EventUpdate::Cpus(cpus) => writeln!(out, "... {}", cpu_list(&cpus)),
                    EventUpdate::Unknown => writeln!(out, "... unknown type"),
                }?;
                // (perf diff's tool has no handler for it.)
                if self.diff {
                    out.write_all(b": unhandled!\n")?;
                }
                Ok(())
            }
            // perf script reads the config and the counts without printing
            // them (it prints a table at each round instead).
            UserRecord::StatConfig { .. } | UserRecord::Stat { .. } if self.script => Ok(()),
            UserRecord::StatConfig {
                aggr_mode,
                interval,
                scale,
            } => {
                write!(
                    out,
                    "\n... aggr_mode {}\n... scale     {}\n... interval  {}\n",
                    aggr_mode as i32, scale as i32, interval as u32
                )?;
                self.unhandled(out)
            }
            UserRecord::Stat {
                id,
                cpu,
                thread,
                value,
                enabled,
                running,
            } => {
                write!(
                    out,
                    "\n... id {id}, cpu {cpu}, thread {thread}\n... value {value}, enabled {enabled}, running {running}\n"
                )?;
                self.unhandled(out)
            }
            UserRecord::StatRound { kind, time } => {
                let kind = if kind == 0 { "INTERVAL" } else { "FINAL" };
                write!(out, "\n... time {time}, type {kind}\n")?;
                self.unhandled(out)
            }
            UserRecord::TimeConv {
                shift,
                mult,
                zero,
                ext,
            } => {
                write!(
                    out,
                    "\n... Time Shift      {shift}\n... Time Muliplier  {mult}\n... Time Zero       {zero}\n"
                )?;
                if let Some((cycles, mask, zero_cap, short_cap)) = ext {
                    write!(
                        out,
                        "... Time Cycles     {cycles}\n... Time Mask       {}\n... Cap Time Zero   {zero_cap}\n... Cap Time Short  {short_cap}\n",
                        Hx(mask)
                    )?;
                }
                out.write_all(b": unhandled!\n")
            }
            UserRecord::Auxtrace {
                size,
                offset,
                reference,
                idx,
                tid,
                cpu,
            } => writeln!(
                out,
                " size: {}  offset: {}  ref: {}  idx: {idx}  tid: {tid}  cpu: {cpu}",
                Hx(size),
                Hx(offset),
                Hx(reference)
            ),
        }
    }

    fn sample(
        &mut self,
        out: &mut dyn Write,
        meta: &Meta,
        payload: &[u8],
        s: &Sample<'_>,
        site: Option<&SampleSite>,
    ) -> io::Result<()> {
        let attr = &meta.events[s.event].attr;
        writeln!(
            out,
            "(IP, {:#x}): {}/{}: {} period: {} addr: {}",
            s.misc,
            s.pid.map_or(-1, |p| p as i32),
            s.tid.map_or(-1, |t| t as i32),
            Hx(s.ip.unwrap_or(0)),
            s.period.unwrap_or(attr.sample_period_or_freq),
            Hx(s.addr.unwrap_or(0))
        )?;
        if let Some(cc) = s.callchain {
            writeln!(out, "... FP chain: nr:{}", cc.len())?;
            for (i, ip) in cc.iter().enumerate() {
                writeln!(out, "..... {i:2}: {ip:016x}")?;
            }
        }
        if let Some(bs) = &s.branch_stack {
            writeln!(out, "... branch stack: nr:{}", bs.len())?;
            for (i, b) in bs.entries().enumerate() {
                let f = b.flags;
                let ty = ((f >> 20) & 0xf) as usize;
                writeln!(
                    out,
                    "..... {i:2}: {:016x} -> {:016x} {} cycles {}{}{}{} {:x} {}",
                    b.from,
                    b.to,
                    (f >> 4) & 0xffff,
                    if f & 1 != 0 { "M" } else { " " },
                    if f & 2 != 0 { "P" } else { " " },
                    if f & 8 != 0 { "A" } else { " " },
                    if f & 4 != 0 { "T" } else { " " },
                    f >> 33,
                    if ty != 0 {
                        BRANCH_TYPE_NAMES.get(ty).copied().unwrap_or("")
                    } else {
                        ""
                    }
                )?;
            }
        }
        if let Some(r) = &s.regs_user {
            regs(out, "user", r)?;
        }
        if let Some(r) = &s.regs_intr {
            regs(out, "intr", r)?;
        }
        if let Some(st) = &s.stack_user {
            // perf gives the offset of the stack's size field in the record.
            let data_at = st.data.as_ptr() as usize - payload.as_ptr() as usize;
            let size = if st.data.is_empty() { 0 } else { st.dyn_size };
            writeln!(out, "... ustack: size {size}, offset {:#x}", data_at)?;
        }
        if let Some(w) = s.weight {
            if attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT != 0 {
                writeln!(
                    out,
                    "... weight: {},{:#x},{:#x}",
                    w & 0xffff_ffff,
                    (w >> 32) & 0xffff,
                    (w >> 48) & 0xffff
                )?;
            } else {
                writeln!(out, "... weight: {w}")?;
            }
        }
        if let Some(d) = s.data_src {
            writeln!(out, " . data_src: {d:#x}")?;
        }
        if let Some(p) = s.phys_addr {
            writeln!(out, " .. phys_addr: {p:#x}")?;
        }
        if let Some(p) = s.data_page_size {
            writeln!(out, " .. data page size: {}", PageSize(p))?;
        }
        if let Some(p) = s.code_page_size {
            writeln!(out, " .. code page size: {}", PageSize(p))?;
        }
        if let Some(t) = s.transaction {
            writeln!(out, "... transaction: {t:x}")?;
        }
        // perf hands a sample that read counters to the report once per
        // value whose id it knows (as a sample of that value's event); each
        // pass prints the thread and dso lines.
        let mut targets = vec![s.event];
        if let Some(rv) = &s.read {
            sample_read(out, rv)?;
            targets = rv
                .values()
                .filter_map(|v| {
                    let id = v.id?;
                    meta.events.iter().position(|e| e.ids.contains(&id))
                })
                .collect();
        }
        let entries = match (&s.branch_stack, self.branch_mode) {
            (Some(bs), true) => bs.len() as u64,
            _ => 1,
        };
        for ev in targets {
            if let Some(site) = site {
                writeln!(out, " ... thread: {}:{}", site.comm, site.tid)?;
                match (&site.landing, &site.dso) {
                    (Landing::Dso(_), Some(name)) => writeln!(out, " ...... dso: {name}")?,
                    (Landing::Hypervisor, _) => out.write_all(b" ...... dso: [hypervisor]\n")?,
                    _ => out.write_all(b" ...... dso: <not found>\n")?,
                }
            }
            self.count_entry(ev, entries);
        }
        Ok(())
    }
}

/// A kernel record as perf prints it after its header (`perf_event__fprintf`):
/// `PERF_RECORD_MMAP2 pid/tid: [...]`, `PERF_RECORD_COMM exec: ...`, one line
/// (or more for NAMESPACES and READ). `report -D` and `script --show-*-events`
/// print it.
pub fn write_event(
    out: &mut dyn Write,
    meta: &Meta,
    type_: u32,
    misc: u16,
    data: &RecordData<'_>,
    sid: &SampleId,
) -> io::Result<()> {
    write!(out, "PERF_RECORD_{}", record_type_name(type_))?;
    match *data {
        RecordData::Mmap(mm) => {
            writeln!(
                out,
                " {}/{}: [{}({}) @ {}]: {} {}",
                mm.pid as i32,
                mm.tid as i32,
                Hx(mm.addr),
                Hx(mm.len),
                Hx(mm.pgoff),
                if misc & PERF_RECORD_MISC_MMAP_DATA != 0 {
                    'r'
                } else {
                    'x'
                },
                Lossy(mm.filename)
            )?;
        }
        RecordData::Mmap2(mm) => {
            write!(
                out,
                " {}/{}: [{}({}) @ {} ",
                mm.pid as i32,
                mm.tid as i32,
                Hx(mm.addr),
                Hx(mm.len),
                Hx(mm.pgoff),
            )?;
            match mm.id {
                Mmap2Id::Inode {
                    maj,
                    min,
                    ino,
                    ino_generation,
                } => write!(out, "{maj:02x}:{min:02x} {ino} {ino_generation}]")?,
                Mmap2Id::BuildId(b) => write!(out, "<{}>]", HexBytes(b))?,
            }
            writeln!(
                out,
                ": {}{}{}{} {}",
                if mm.prot & 1 != 0 { 'r' } else { '-' },
                if mm.prot & 2 != 0 { 'w' } else { '-' },
                if mm.prot & 4 != 0 { 'x' } else { '-' },
                if mm.flags & 1 != 0 { 's' } else { 'p' },
                Lossy(mm.filename)
            )?;
        }
        RecordData::Comm(c) => {
            writeln!(
                out,
                "{}: {}:{}/{}",
                if c.exec { " exec" } else { "" },
                Lossy(c.comm),
                c.pid as i32,
                c.tid as i32
            )?;
        }
        RecordData::Fork(f) | RecordData::Exit(f) => {
            writeln!(
                out,
                "({}:{}):({}:{})",
                f.pid as i32, f.tid as i32, f.ppid as i32, f.ptid as i32
            )?;
        }
        RecordData::Lost { id, lost } => writeln!(out, ": id:{id}: lost:{lost}")?,
        RecordData::LostSamples { lost } => writeln!(
            out,
            ": id:{}: lost samples :{lost}",
            sid.id.unwrap_or(u64::MAX)
        )?,
        RecordData::Read { pid, tid, values } => {
            let name = meta
                .event_of_id(sid.id)
                .map(|i| meta.events[i].name())
                .unwrap_or_else(|| "unknown".into());
            let v = values.values().next();
            writeln!(
                out,
                ": {} {} {} {}",
                pid as i32,
                tid as i32,
                name,
                v.map_or(0, |v| v.value)
            )?;
            if let Some(t) = values.time_enabled() {
                writeln!(out, "... time enabled : {t}")?;
            }
            if let Some(t) = values.time_running() {
                writeln!(out, "... time running : {t}")?;
            }
            if let Some(id) = v.and_then(|v| v.id) {
                writeln!(out, "... id           : {id}")?;
            }
            if let Some(l) = v.and_then(|v| v.lost) {
                writeln!(out, "... lost         : {l}")?;
            }
        }
        RecordData::Switch { out: o, preempt } => {
            writeln!(out, " {:<11}", switch_word(o, preempt))?;
        }
        RecordData::SwitchCpuWide {
            out: o,
            preempt,
            next_prev_pid,
            next_prev_tid,
        } => {
            writeln!(
                out,
                " {:<11}  {} pid/tid: {:>5}/{:<5}",
                switch_word(o, preempt),
                if o { "next" } else { "prev" },
                next_prev_pid as i32,
                next_prev_tid as i32
            )?;
        }
        RecordData::Namespaces {
            pid,
            tid,
            namespaces,
        } => {
            let n = namespaces.len() / 2;
            write!(
                out,
                " {}/{} - nr_namespaces: {n}\n\t\t[",
                pid as i32, tid as i32
            )?;
            for i in 0..n {
                let dev = namespaces.get(2 * i).unwrap_or(0);
                let ino = namespaces.get(2 * i + 1).unwrap_or(0);
                let name = NAMESPACE_NAMES.get(i).copied().unwrap_or("unknown");
                write!(out, "{i}/{name}: {dev}/{}", Hx(ino))?;
                if i + 1 == n {
                    out.write_all(b"]")?;
                } else if (i + 1) % 4 == 0 {
                    out.write_all(b", \n\t\t ")?;
                } else {
                    out.write_all(b", ")?;
                }
            }
            if n == 0 {
                out.write_all(b"]")?;
            }
            out.write_all(b"\n")?;
        }
        RecordData::Cgroup { id, path } => {
            writeln!(out, " cgroup: {id} {}", Lossy(path))?;
        }
        RecordData::Ksymbol {
            addr,
            len,
            ksym_type,
            flags,
            name,
        } => {
            writeln!(
                out,
                ": addr {} len {len} type {ksym_type} flags {:#x} name {}",
                Hx(addr),
                flags,
                Lossy(name)
            )?;
        }
        RecordData::BpfEvent {
            type_, flags, id, ..
        } => {
            writeln!(out, ": type {type_}, flags {flags}, id {id}")?;
        }
        RecordData::TextPoke { addr, old, new } => {
            writeln!(
                out,
                " addr {} old len {} new len {}",
                Hx(addr),
                old.len(),
                new.len()
            )?;
        }
        RecordData::Aux {
            aux_offset,
            aux_size,
            flags,
        } => {
            writeln!(
                out,
                " offset: {} size: {} flags: {} [{}{}{}]",
                Hx(aux_offset),
                Hx(aux_size),
                Hx(flags),
                if flags & 1 != 0 { "T" } else { "" },
                if flags & 2 != 0 { "O" } else { "" },
                if flags & 4 != 0 { "P" } else { "" },
            )?;
        }
        RecordData::ItraceStart { pid, tid } => {
            writeln!(out, " pid: {pid} tid: {tid}")?;
        }
        RecordData::AuxOutputHwId { hw_id } => {
            writeln!(out, " hw_id: {}", Hx(hw_id))?;
        }
        // THROTTLE, UNTHROTTLE and anything else `perf report` has no
        // handler for.
        _ => out.write_all(b": unhandled!\n")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_dump_pads_the_last_line() {
        let mut out = Vec::new();
        let header = [1, 0, 0, 0, 1, 0, 0x18, 0];
        hex_dump(&mut out, &header, b"abcdefghijklmnop").unwrap();
        let s = String::from_utf8(out).unwrap();
        assert_eq!(
            s,
            ".\n. ... raw event: size 24 bytes\n\
             .  0000:  01 00 00 00 01 00 18 00 61 62 63 64 65 66 67 68  ........abcdefgh\n\
             .  0010:  69 6a 6b 6c 6d 6e 6f 70                          ijklmnop        \n\n"
        );
    }

    #[test]
    fn c_style_hex_and_page_sizes() {
        assert_eq!(Hx(0).to_string(), "0");
        assert_eq!(Hx(0x4b8).to_string(), "0x4b8");
        assert_eq!(PageSize(0).to_string(), "N/A");
        assert_eq!(PageSize(4096).to_string(), "4K");
        assert_eq!(PageSize(2 << 20).to_string(), "2M");
    }

    #[test]
    fn cpu_ranges() {
        assert_eq!(cpu_list(&[0, 1, 2, 5]), "0-2,5");
        assert_eq!(cpu_list(&[-1, 4, 5, 6]), "-1,4-6");
    }
}
