//! `--off-cpu` without BPF: how long each thread waited, and where.
//!
//! perf 6.1 measures off-CPU time with a BPF program (and Debian's perf is
//! built without it). sear gets the same numbers from two kernel sources:
//! a `sched:sched_switch` tracepoint, filtered in the kernel to threads
//! that go to sleep (state S or D; preempted threads are runnable, not
//! waiting, as in perf), samples the user stack at switch-out; and the
//! context-switch records of a `bpf-output` event named `offcpu-time` (the
//! event perf's `--off-cpu` adds, never fired by a program here) give the
//! time each thread is switched back in.
//!
//! The recorder pairs the two as the rings drain: for each switch-out
//! sample and the thread's next switch-in it writes one sample of
//! `offcpu-time` whose period is the nanoseconds the thread was off the
//! CPU, timed at the switch-in, with the user-space part of the stack as
//! perf writes it (the address the thread left from, misc USER). The
//! tracepoint's samples and the switch records are consumed: the file
//! holds `offcpu-time` as perf would write it, so perf and sear read it.

use std::collections::{HashMap, HashSet};

use super::*;

/// perf's name for the event.
pub(crate) const OFFCPU_EVENT: &str = "offcpu-time";
/// perf's bpf-output software event.
const BPF_OUTPUT: u64 = 10;
/// Sleeping (S) or uninterruptible (D) at switch-out: the kernel's
/// `prev_state` report bits.
const SLEEP_FILTER: &str = "prev_state == 1 || prev_state == 2";

/// The two events `--off-cpu` adds: `offcpu-time` and the switch tracepoint.
pub(crate) fn events() -> Result<(EventSpec, EventSpec)> {
    let out = EventSpec::plain(OFFCPU_EVENT.into(), PERF_TYPE_SOFTWARE, BPF_OUTPUT);
    let unavailable = |why: String| {
        Error::Options(format!(
            "--off-cpu needs the sched:sched_switch tracepoint: {why} (mount tracefs: \
             mount -t tracefs nodev /sys/kernel/tracing; as root)"
        ))
    };
    let dir = event::tracefs_events()
        .ok_or_else(|| unavailable("the tracing filesystem is not mounted".into()))?;
    let path = dir.join("sched/sched_switch/id");
    let id = std::fs::read_to_string(&path)
        .map_err(|e| unavailable(format!("{}: {e}", path.display())))?;
    let config = id
        .trim()
        .parse::<u64>()
        .map_err(|_| unavailable(format!("{}: not a number", path.display())))?;
    let mut switch = EventSpec::plain("sched:sched_switch".into(), PERF_TYPE_TRACEPOINT, config);
    switch.filter = Some(SLEEP_FILTER.into());
    Ok((out, switch))
}

/// The sample type of `offcpu-time`, from the recording's: perf's fields
/// (identifier, time, CPU, period, call chain) plus the user registers and
/// stack of a DWARF recording; no read values or branch stacks.
pub(crate) fn sample_type(st: u64, call_graph: CallGraph) -> u64 {
    let mut t = st
        | PERF_SAMPLE_IDENTIFIER
        | PERF_SAMPLE_IP
        | PERF_SAMPLE_TID
        | PERF_SAMPLE_TIME
        | PERF_SAMPLE_CPU
        | PERF_SAMPLE_PERIOD
        | PERF_SAMPLE_CALLCHAIN;
    t &= !(PERF_SAMPLE_READ
        | PERF_SAMPLE_BRANCH_STACK
        | PERF_SAMPLE_REGS_INTR
        | PERF_SAMPLE_ID
        | PERF_SAMPLE_STACK_USER
        | PERF_SAMPLE_REGS_USER);
    if matches!(call_graph, CallGraph::Dwarf(_)) {
        t |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    }
    t
}

/// Sets the attributes of the two events (made as any other first).
pub(crate) fn adjust_attrs(out: &mut EventAttr, switch: &mut EventAttr, st: u64) {
    out.sample_type = st;
    // As perf's: frequency 1 (the event never fires by itself).
    out.flags |= 1 << flag::FREQ | 1 << flag::CONTEXT_SWITCH;
    out.sample_period_or_freq = 1;
    switch.sample_type = st | PERF_SAMPLE_RAW;
    switch.flags &= !(1 << flag::FREQ);
    switch.flags |= 1 << flag::EXCLUDE_CALLCHAIN_KERNEL;
    switch.sample_period_or_freq = 1;
    if st & PERF_SAMPLE_REGS_USER == 0 {
        switch.sample_regs_user = 0;
        switch.sample_stack_user = 0;
        out.sample_regs_user = 0;
        out.sample_stack_user = 0;
    } else {
        out.sample_regs_user = switch.sample_regs_user;
        out.sample_stack_user = switch.sample_stack_user;
    }
}

/// What to do with a record from a ring.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not off-CPU's: write it.
    Pass,
    /// Consumed (kept for pairing, or of no use).
    Drop,
}

/// A switch-out (with its sample, no raw data) or a switch-in.
struct Switch {
    time: u64,
    tid: u32,
    out: Option<OutSample>,
}

/// A switch-out's sample made `offcpu-time`'s but for its time and
/// period (known at the switch-in), with where those two are.
struct OutSample {
    bytes: Vec<u8>,
    time_at: usize,
    period_at: usize,
}

impl OutSample {
    /// Identifier, time (the switch-in) and period (the wait).
    fn complete(&mut self, id: u64, t_out: u64, t_in: u64) {
        for (at, v) in [
            (0, id),
            (self.time_at, t_in),
            (self.period_at, t_in.saturating_sub(t_out)),
        ] {
            if let Some(b) = self.bytes.get_mut(at..at + 8) {
                b.copy_from_slice(&v.to_ne_bytes());
            }
        }
    }
}

/// Pairs switch-outs with switch-ins in time order.
///
/// Each CPU has its own ring, and a thread that sleeps on one CPU may wake
/// on another, so a drain can read the switch-in before the switch-out.
/// As perf orders events by rounds, switches are kept until every ring has
/// been read once more after the pass that saw the latest of them: by then
/// nothing older can still be unread.
pub(crate) struct Converter {
    st: u64,
    regs_user: u64,
    out_id: u64,
    out_ids: HashSet<u64>,
    switch_ids: HashSet<u64>,
    /// Switches not yet paired in time order.
    queue: Vec<Switch>,
    /// The latest time of the pass before this one: switches up to it are
    /// all read.
    horizon: u64,
    pass_max: u64,
    /// Per thread: its switch-out waiting for the switch-in.
    waiting: HashMap<u32, (u64, OutSample)>,
    /// Switch-outs whose switch-in never came (lost records).
    pub(crate) unpaired: u64,
    /// Switch-outs without a user stack (kernel threads, exiting tasks).
    pub(crate) no_user_stack: u64,
}

impl Converter {
    pub(crate) fn new(out: &Event, switch_ids: Vec<u64>) -> Converter {
        Converter {
            st: out.attr.sample_type,
            regs_user: out.attr.sample_regs_user,
            out_id: out.ids.first().copied().unwrap_or(0),
            out_ids: out.ids.iter().copied().collect(),
            switch_ids: switch_ids.into_iter().collect(),
            queue: Vec::new(),
            horizon: 0,
            pass_max: 0,
            waiting: HashMap::new(),
            unpaired: 0,
            no_user_stack: 0,
        }
    }

    /// Threads still off the CPU when the recording ended (not written: as
    /// perf, only completed waits count).
    pub(crate) fn still_waiting(&self) -> usize {
        self.waiting.len()
    }

    pub(crate) fn see(&mut self, type_: u32, misc: u16, p: &[u8]) -> Verdict {
        if type_ == PERF_RECORD_SAMPLE {
            // (The identifier leads every sample of an off-CPU recording.)
            if !self.switch_ids.contains(&u64_at(p, 0)) {
                return Verdict::Pass;
            }
            if let Some((tid, time, sample)) = self.without_raw(p) {
                self.push(Switch {
                    time,
                    tid,
                    out: Some(sample),
                });
            }
            return Verdict::Drop;
        }
        // Other kernel records end with their event's identifier.
        let id = p.len().checked_sub(8).map_or(0, |o| u64_at(p, o));
        if self.switch_ids.contains(&id) {
            return Verdict::Drop;
        }
        if !self.out_ids.contains(&id) {
            return Verdict::Pass;
        }
        if (type_ == PERF_RECORD_SWITCH || type_ == PERF_RECORD_SWITCH_CPU_WIDE)
            && misc & PERF_RECORD_MISC_SWITCH_OUT == 0
        {
            // The id trailer: pid, tid, time, CPU, identifier.
            if let Some(o) = p.len().checked_sub(32) {
                self.push(Switch {
                    time: u64_at(p, o + 8),
                    tid: u32_at(p, o + 4),
                    out: None,
                });
            }
        }
        Verdict::Drop
    }

    fn push(&mut self, s: Switch) {
        self.pass_max = self.pass_max.max(s.time);
        self.queue.push(s);
    }

    /// After a pass over every ring: pairs the switches that are surely
    /// all read, handing each `offcpu-time` sample to `emit`. Returns how
    /// many it emitted.
    pub(crate) fn end_pass<E>(
        &mut self,
        emit: impl FnMut(&[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<usize, E> {
        let n = self.pair_up_to(self.horizon, emit);
        self.horizon = self.pass_max;
        n
    }

    /// At the end of the recording: pairs everything left.
    pub(crate) fn finish<E>(
        &mut self,
        emit: impl FnMut(&[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<usize, E> {
        self.pair_up_to(u64::MAX, emit)
    }

    fn pair_up_to<E>(
        &mut self,
        limit: u64,
        mut emit: impl FnMut(&[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<usize, E> {
        // (Stable: a thread's switch-out and switch-in of one time stay in
        // the order read.)
        self.queue.sort_by_key(|s| s.time);
        let ready = self.queue.partition_point(|s| s.time <= limit);
        let mut n = 0;
        for s in self.queue.drain(..ready) {
            match s.out {
                Some(sample) => {
                    if self.waiting.insert(s.tid, (s.time, sample)).is_some() {
                        self.unpaired += 1;
                    }
                }
                None => {
                    let Some((t_out, mut sample)) = self.waiting.remove(&s.tid) else {
                        continue;
                    };
                    sample.complete(self.out_id, t_out, s.time);
                    emit(&sample.bytes)?;
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    /// The tracepoint sample without its raw data and with the user
    /// address as its IP; None without a user stack or when malformed.
    fn without_raw(&mut self, p: &[u8]) -> Option<(u32, u64, OutSample)> {
        let st = self.st;
        let mut o = 8; // identifier
        let mut ip_at = None;
        if st & PERF_SAMPLE_IP != 0 {
            ip_at = Some(o);
            o += 8;
        }
        let tid = u32_at(p, o + 4);
        o += 8;
        let time_at = o;
        let t = u64_at(p, o);
        o += 8;
        for bit in [PERF_SAMPLE_ADDR, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU] {
            if st & bit != 0 {
                o += 8;
            }
        }
        let period_at = o;
        o += 8;
        let nr = u64_at(p, o) as usize;
        let chain = o + 8;
        let raw = chain.checked_add(nr.checked_mul(8)?)?;
        let size = u32_at(p, raw) as usize;
        let end = raw.checked_add(4 + size)?;
        if end > p.len() {
            return None;
        }
        // The user address: the chain's first after its user mark, or the
        // user registers' IP (DWARF).
        let user_ip = if nr >= 2 && u64_at(p, chain) == PERF_CONTEXT_USER {
            Some(u64_at(p, chain + 8))
        } else if st & PERF_SAMPLE_REGS_USER != 0 {
            let abi = u64_at(p, end);
            let ip_bit = 8; // PERF_REG_X86_IP
            (abi != 0 && self.regs_user & (1 << ip_bit) != 0).then(|| {
                let before = (self.regs_user & ((1u64 << ip_bit) - 1)).count_ones() as usize;
                u64_at(p, end + 8 + before * 8)
            })
        } else {
            None
        };
        let Some(user_ip) = user_ip else {
            self.no_user_stack += 1;
            return None;
        };
        let mut s = Vec::with_capacity(p.len() - (end - raw));
        s.extend_from_slice(&p[..raw]);
        s.extend_from_slice(&p[end..]);
        if let Some(at) = ip_at {
            s[at..at + 8].copy_from_slice(&user_ip.to_ne_bytes());
        }
        let sample = OutSample {
            bytes: s,
            time_at,
            period_at,
        };
        Some((tid, t, sample))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(st: u64, id: u64, tid: u32, t: u64, chain: &[u64]) -> Vec<u8> {
        let mut s = Vec::new();
        s.extend(id.to_ne_bytes());
        s.extend(0xffff_ffff_8100_0000u64.to_ne_bytes()); // kernel ip
        s.extend(7u32.to_ne_bytes());
        s.extend(tid.to_ne_bytes());
        s.extend(t.to_ne_bytes());
        if st & PERF_SAMPLE_CPU != 0 {
            s.extend(1u64.to_ne_bytes());
        }
        s.extend(1u64.to_ne_bytes()); // period
        s.extend((chain.len() as u64).to_ne_bytes());
        for c in chain {
            s.extend(c.to_ne_bytes());
        }
        s.extend(12u32.to_ne_bytes());
        s.extend([0xaau8; 12]);
        s
    }

    fn switch_in(tid: u32, t: u64, id: u64) -> Vec<u8> {
        let mut s = Vec::new();
        s.extend(7u32.to_ne_bytes());
        s.extend(tid.to_ne_bytes());
        s.extend(t.to_ne_bytes());
        s.extend(1u64.to_ne_bytes());
        s.extend(id.to_ne_bytes());
        s
    }

    fn converter() -> (Converter, u64) {
        let st = sample_type(PERF_SAMPLE_IP | PERF_SAMPLE_TID, CallGraph::None);
        let out = Event {
            attr: EventAttr {
                sample_type: st,
                ..Default::default()
            },
            ids: vec![50, 51],
            name: None,
        };
        (Converter::new(&out, vec![60, 61]), st)
    }

    fn emitted(c: &mut Converter, end: bool) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let push = |s: &[u8]| -> Result<(), ()> {
            out.push(s.to_vec());
            Ok(())
        };
        if end {
            c.finish(push).unwrap();
        } else {
            c.end_pass(push).unwrap();
        }
        out
    }

    #[test]
    fn pairs_in_time_order_across_rings_and_passes() {
        let (mut c, st) = converter();
        let chain = [PERF_CONTEXT_USER, 0x401000, 0x402000];
        let see = |c: &mut Converter, t: u32, p: &[u8]| {
            assert_eq!(c.see(t, 0, p), Verdict::Drop);
        };
        // Pass 1: one CPU's ring has the switch-out at 1000 and a later
        // one at 5000; the other's the switch-ins at 4000 and 9000, read
        // after. Nothing is paired until a pass has read past them.
        let out1 = sample(st, 60, 9, 1_000, &chain);
        see(&mut c, PERF_RECORD_SAMPLE, &out1);
        see(
            &mut c,
            PERF_RECORD_SAMPLE,
            &sample(st, 61, 9, 5_000, &chain),
        );
        see(&mut c, PERF_RECORD_SWITCH, &switch_in(9, 4_000, 51));
        assert!(emitted(&mut c, false).is_empty());
        // Pass 2 (the last switch-in read late, from another ring).
        see(&mut c, PERF_RECORD_SWITCH, &switch_in(9, 9_000, 50));
        let got = emitted(&mut c, false);
        assert_eq!(got.len(), 1, "only what pass 1 saw is surely complete");
        let s = &got[0];
        assert_eq!(s.len(), out1.len() - 16, "no raw data");
        assert_eq!(u64_at(s, 0), 50, "offcpu-time's id");
        assert_eq!(u64_at(s, 8), 0x401000, "the user address");
        assert_eq!(u64_at(s, 24), 4_000, "timed at the switch-in");
        assert_eq!(u64_at(s, 40), 3_000, "the wait");
        let got = emitted(&mut c, false);
        assert_eq!(got.len(), 1);
        assert_eq!(u64_at(&got[0], 40), 4_000);
        // A switch-in with no switch-out before it (preempted, not asleep)
        // ends nothing; a last switch-out waits forever.
        see(&mut c, PERF_RECORD_SWITCH, &switch_in(9, 9_500, 50));
        see(
            &mut c,
            PERF_RECORD_SAMPLE,
            &sample(st, 60, 9, 10_000, &chain),
        );
        assert!(emitted(&mut c, true).is_empty());
        assert_eq!(c.still_waiting(), 1);
        // Other events' records pass.
        assert_eq!(
            c.see(PERF_RECORD_SAMPLE, 0, &sample(st, 1, 9, 1, &chain)),
            Verdict::Pass
        );
        assert_eq!(
            c.see(PERF_RECORD_SWITCH, 0, &switch_in(9, 1, 3)),
            Verdict::Pass
        );
    }

    #[test]
    fn kernel_threads_and_malformed_samples_are_dropped() {
        let (mut c, st) = converter();
        let s = sample(st, 60, 9, 1_000, &[]);
        assert_eq!(c.see(PERF_RECORD_SAMPLE, 0, &s), Verdict::Drop);
        assert_eq!(c.no_user_stack, 1);
        let chain = [PERF_CONTEXT_USER, 0x401000];
        let mut bad = sample(st, 60, 9, 1_000, &chain);
        bad.truncate(bad.len() - 4);
        assert_eq!(c.see(PERF_RECORD_SAMPLE, 0, &bad), Verdict::Drop);
        let mut huge = sample(st, 60, 9, 1_000, &chain);
        huge[48..56].copy_from_slice(&u64::MAX.to_ne_bytes());
        assert_eq!(c.see(PERF_RECORD_SAMPLE, 0, &huge), Verdict::Drop);
        assert!(emitted(&mut c, true).is_empty());
        assert_eq!(c.still_waiting(), 0);
    }
}
