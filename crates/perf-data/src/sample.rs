//! SAMPLE records: every `sample_type` field, borrowed from the record bytes.

use crate::attr::EventAttr;
use crate::bytes::{Cursor, U64Array};
use crate::consts::*;
use crate::error::ParseError;

/// Values of a PERF_SAMPLE_READ (or READ record) body, decoded on demand.
#[derive(Debug, Clone, Copy)]
pub struct ReadValues<'a> {
    pub read_format: u64,
    words: U64Array<'a>,
}

/// One counter value in a READ body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadValue {
    pub value: u64,
    pub id: Option<u64>,
    pub lost: Option<u64>,
}

impl<'a> ReadValues<'a> {
    pub(crate) fn parse(c: &mut Cursor<'a>, read_format: u64) -> Result<Self, ParseError> {
        let has = |b: u64| (read_format & b != 0) as u64;
        let times = has(PERF_FORMAT_TOTAL_TIME_ENABLED) + has(PERF_FORMAT_TOTAL_TIME_RUNNING);
        let per = 1 + has(PERF_FORMAT_ID) + has(PERF_FORMAT_LOST);
        let n = if read_format & PERF_FORMAT_GROUP != 0 {
            let mut peek = c.clone();
            let nr = peek.u64("read nr")?;
            nr.checked_mul(per)
                .and_then(|v| v.checked_add(1 + times))
                .ok_or(ParseError {
                    what: "read group nr",
                    pos: c.pos(),
                })?
        } else {
            1 + times + per - 1
        };
        Ok(ReadValues {
            read_format,
            words: c.u64_array(n, "read values")?,
        })
    }

    fn has(&self, b: u64) -> bool {
        self.read_format & b != 0
    }
    pub fn is_group(&self) -> bool {
        self.has(PERF_FORMAT_GROUP)
    }
    fn times_at(&self) -> usize {
        usize::from(self.is_group()) + usize::from(!self.is_group())
    }
    pub fn time_enabled(&self) -> Option<u64> {
        if self.has(PERF_FORMAT_TOTAL_TIME_ENABLED) {
            self.words.get(self.times_at())
        } else {
            None
        }
    }
    pub fn time_running(&self) -> Option<u64> {
        if self.has(PERF_FORMAT_TOTAL_TIME_RUNNING) {
            self.words
                .get(self.times_at() + usize::from(self.has(PERF_FORMAT_TOTAL_TIME_ENABLED)))
        } else {
            None
        }
    }
    /// The counter values (one unless the format is GROUP).
    pub fn values(&self) -> impl Iterator<Item = ReadValue> + '_ {
        let id = self.has(PERF_FORMAT_ID);
        let lost = self.has(PERF_FORMAT_LOST);
        let times = usize::from(self.has(PERF_FORMAT_TOTAL_TIME_ENABLED))
            + usize::from(self.has(PERF_FORMAT_TOTAL_TIME_RUNNING));
        let (first, nr, stride, extra_at) = if self.is_group() {
            let nr = self.words.get(0).unwrap_or(0) as usize;
            (1 + times, nr, 1 + usize::from(id) + usize::from(lost), 1)
        } else {
            // value, [enabled], [running], [id], [lost]
            (0, 1, 0, 1 + times)
        };
        (0..nr).map(move |i| {
            let base = first + i * stride;
            let value = self.words.get(base).unwrap_or(0);
            let mut at = if self.is_group() {
                base + extra_at
            } else {
                extra_at
            };
            let idv = if id {
                let v = self.words.get(at);
                at += 1;
                v
            } else {
                None
            };
            let lostv = if lost { self.words.get(at) } else { None };
            ReadValue {
                value,
                id: idv,
                lost: lostv,
            }
        })
    }
    pub fn words(&self) -> U64Array<'a> {
        self.words
    }
}

/// One branch-stack entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchEntry {
    pub from: u64,
    pub to: u64,
    pub flags: u64,
}

/// A PERF_SAMPLE_BRANCH_STACK body.
#[derive(Debug, Clone, Copy)]
pub struct BranchStack<'a> {
    pub hw_idx: Option<u64>,
    entries: U64Array<'a>,
}

impl BranchStack<'_> {
    pub fn len(&self) -> usize {
        self.entries.len() / 3
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn entries(&self) -> impl Iterator<Item = BranchEntry> + '_ {
        (0..self.len()).map(move |i| BranchEntry {
            from: self.entries.get(3 * i).unwrap_or(0),
            to: self.entries.get(3 * i + 1).unwrap_or(0),
            flags: self.entries.get(3 * i + 2).unwrap_or(0),
        })
    }
}

/// Registers captured with the sample (REGS_USER or REGS_INTR).
#[derive(Debug, Clone, Copy)]
pub struct Regs<'a> {
    /// PERF_SAMPLE_REGS_ABI_*: 0 none, 1 32-bit, 2 64-bit.
    pub abi: u64,
    /// Bitmask of which registers are present (from the attr).
    pub mask: u64,
    pub values: U64Array<'a>,
}

impl Regs<'_> {
    /// The value of register number `reg` (perf_regs numbering), if captured.
    pub fn get(&self, reg: u32) -> Option<u64> {
        if reg >= 64 || self.mask & (1u64 << reg) == 0 {
            return None;
        }
        let idx = (self.mask & ((1u64 << reg) - 1)).count_ones() as usize;
        self.values.get(idx)
    }
}

/// A copy of the user stack taken at sample time (STACK_USER).
#[derive(Debug, Clone, Copy)]
pub struct StackUser<'a> {
    /// The bytes the kernel reserved (attr.sample_stack_user).
    pub data: &'a [u8],
    /// How many of those bytes are valid.
    pub dyn_size: u64,
}

impl<'a> StackUser<'a> {
    pub fn valid(&self) -> &'a [u8] {
        let n = (self.dyn_size as usize).min(self.data.len());
        &self.data[..n]
    }
}

/// A decoded SAMPLE record. Fields not in the event's sample_type are None.
#[derive(Debug, Clone, Default)]
pub struct Sample<'a> {
    /// Index of the event (in the file's event list) that produced it.
    pub event: usize,
    pub misc: u16,
    pub id: Option<u64>,
    pub ip: Option<u64>,
    pub pid: Option<u32>,
    pub tid: Option<u32>,
    pub time: Option<u64>,
    pub addr: Option<u64>,
    pub stream_id: Option<u64>,
    pub cpu: Option<u32>,
    pub period: Option<u64>,
    pub read: Option<ReadValues<'a>>,
    pub callchain: Option<U64Array<'a>>,
    pub raw: Option<&'a [u8]>,
    pub branch_stack: Option<BranchStack<'a>>,
    pub regs_user: Option<Regs<'a>>,
    pub stack_user: Option<StackUser<'a>>,
    pub weight: Option<u64>,
    /// Whether `weight` is perf's weight struct (`PERF_SAMPLE_WEIGHT_STRUCT`:
    /// the weight in bits 0-31, the instruction latency in 32-47, pipeline
    /// stage cycles in 48-63), not one number.
    pub weight_struct: bool,
    pub data_src: Option<u64>,
    pub transaction: Option<u64>,
    pub regs_intr: Option<Regs<'a>>,
    pub phys_addr: Option<u64>,
    pub aux: Option<&'a [u8]>,
    pub cgroup: Option<u64>,
    pub data_page_size: Option<u64>,
    pub code_page_size: Option<u64>,
}

impl<'a> Sample<'a> {
    /// Decodes a SAMPLE payload (the bytes after the record header) for `attr`.
    pub fn parse(
        payload: &'a [u8],
        misc: u16,
        attr: &EventAttr,
        event: usize,
        endian: crate::Endian,
    ) -> Result<Self, ParseError> {
        Self::parse_inline(payload, misc, attr, event, endian)
    }

    /// Checks that a SAMPLE payload decodes and returns only its period.
    /// Shares the decoder with [`Sample::parse`]; inlining lets the compiler
    /// drop the work for fields nobody reads.
    pub fn check_period(
        payload: &'a [u8],
        attr: &EventAttr,
        endian: crate::Endian,
    ) -> Result<Option<u64>, ParseError> {
        Self::parse_inline(payload, 0, attr, 0, endian).map(|s| s.period)
    }

    #[inline(always)]
    fn parse_inline(
        payload: &'a [u8],
        misc: u16,
        attr: &EventAttr,
        event: usize,
        endian: crate::Endian,
    ) -> Result<Self, ParseError> {
        let st = attr.sample_type;
        let mut c = Cursor::new(payload, endian);
        let mut s = Sample {
            event,
            misc,
            ..Default::default()
        };
        s.id = opt_u64(&mut c, st & PERF_SAMPLE_IDENTIFIER != 0, "identifier")?.or(s.id);
        s.ip = opt_u64(&mut c, st & PERF_SAMPLE_IP != 0, "ip")?;
        if st & PERF_SAMPLE_TID != 0 {
            s.pid = Some(c.u32("pid")?);
            s.tid = Some(c.u32("tid")?);
        }
        s.time = opt_u64(&mut c, st & PERF_SAMPLE_TIME != 0, "time")?;
        s.addr = opt_u64(&mut c, st & PERF_SAMPLE_ADDR != 0, "addr")?;
        s.id = opt_u64(&mut c, st & PERF_SAMPLE_ID != 0, "id")?.or(s.id);
        s.stream_id = opt_u64(&mut c, st & PERF_SAMPLE_STREAM_ID != 0, "stream_id")?;
        if st & PERF_SAMPLE_CPU != 0 {
            s.cpu = Some(c.u32("cpu")?);
            c.skip(4, "cpu reserved")?;
        }
        s.period = opt_u64(&mut c, st & PERF_SAMPLE_PERIOD != 0, "period")?;
        if st & PERF_SAMPLE_READ != 0 {
            s.read = Some(ReadValues::parse(&mut c, attr.read_format)?);
        }
        if st & PERF_SAMPLE_CALLCHAIN != 0 {
            let nr = c.u64("callchain nr")?;
            s.callchain = Some(c.u64_array(nr, "callchain")?);
        }
        if st & PERF_SAMPLE_RAW != 0 {
            let size = c.u32("raw size")?;
            s.raw = Some(c.bytes(size as usize, "raw data")?);
            // The u32 size plus data are padded to a multiple of 8 by the kernel
            // (the size already includes the padding), so nothing to skip here.
        }
        if st & PERF_SAMPLE_BRANCH_STACK != 0 {
            let nr = c.u64("branch nr")?;
            let hw_idx = if attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX != 0 {
                Some(c.u64("branch hw_idx")?)
            } else {
                None
            };
            let words = nr.checked_mul(3).ok_or(ParseError {
                what: "branch nr",
                pos: c.pos(),
            })?;
            s.branch_stack = Some(BranchStack {
                hw_idx,
                entries: c.u64_array(words, "branch entries")?,
            });
        }
        if st & PERF_SAMPLE_REGS_USER != 0 {
            s.regs_user = Some(parse_regs(&mut c, attr.sample_regs_user, "user regs")?);
        }
        if st & PERF_SAMPLE_STACK_USER != 0 {
            let size = c.u64("stack size")?;
            let size = usize::try_from(size).map_err(|_| ParseError {
                what: "stack size",
                pos: c.pos(),
            })?;
            let data = c.bytes(size, "user stack")?;
            let dyn_size = if size != 0 {
                c.u64("stack dyn_size")?
            } else {
                0
            };
            s.stack_user = Some(StackUser { data, dyn_size });
        }
        s.weight = opt_u64(
            &mut c,
            st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT) != 0,
            "weight",
        )?;
        s.weight_struct = st & PERF_SAMPLE_WEIGHT_STRUCT != 0;
        s.data_src = opt_u64(&mut c, st & PERF_SAMPLE_DATA_SRC != 0, "data_src")?;
        s.transaction = opt_u64(&mut c, st & PERF_SAMPLE_TRANSACTION != 0, "transaction")?;
        if st & PERF_SAMPLE_REGS_INTR != 0 {
            s.regs_intr = Some(parse_regs(&mut c, attr.sample_regs_intr, "intr regs")?);
        }
        s.phys_addr = opt_u64(&mut c, st & PERF_SAMPLE_PHYS_ADDR != 0, "phys_addr")?;
        s.cgroup = opt_u64(&mut c, st & PERF_SAMPLE_CGROUP != 0, "cgroup")?;
        s.data_page_size = opt_u64(
            &mut c,
            st & PERF_SAMPLE_DATA_PAGE_SIZE != 0,
            "data_page_size",
        )?;
        s.code_page_size = opt_u64(
            &mut c,
            st & PERF_SAMPLE_CODE_PAGE_SIZE != 0,
            "code_page_size",
        )?;
        if st & PERF_SAMPLE_AUX != 0 {
            let size = c.u64("aux size")?;
            let size = usize::try_from(size).map_err(|_| ParseError {
                what: "aux size",
                pos: c.pos(),
            })?;
            s.aux = Some(c.bytes(size, "aux data")?);
        }
        Ok(s)
    }

    /// The CPU mode bits of the record (PERF_RECORD_MISC_KERNEL, _USER, ...).
    pub fn cpumode(&self) -> u16 {
        self.misc & PERF_RECORD_MISC_CPUMODE_MASK
    }
}

/// The next u64 of `c` if the sample type has the field (`on`).
#[inline(always)]
fn opt_u64(c: &mut Cursor<'_>, on: bool, what: &'static str) -> Result<Option<u64>, ParseError> {
    if on {
        c.u64(what).map(Some)
    } else {
        Ok(None)
    }
}

/// The period of a SAMPLE payload without decoding the rest: its fields
/// before READ have fixed sizes. None if the event does not record it.
#[inline]
pub fn period_of(payload: &[u8], attr: &EventAttr, endian: crate::Endian) -> Option<u64> {
    let st = attr.sample_type;
    if st & PERF_SAMPLE_PERIOD == 0 {
        return None;
    }
    let before = st
        & (PERF_SAMPLE_IDENTIFIER
            | PERF_SAMPLE_IP
            | PERF_SAMPLE_TID
            | PERF_SAMPLE_TIME
            | PERF_SAMPLE_ADDR
            | PERF_SAMPLE_ID
            | PERF_SAMPLE_STREAM_ID
            | PERF_SAMPLE_CPU);
    let at = 8 * before.count_ones() as usize;
    let b = payload.get(at..at + 8)?;
    Some(endian.u64(b.try_into().ok()?))
}

fn parse_regs<'a>(
    c: &mut Cursor<'a>,
    mask: u64,
    what: &'static str,
) -> Result<Regs<'a>, ParseError> {
    let abi = c.u64(what)?;
    let values = if abi != 0 {
        c.u64_array(u64::from(mask.count_ones()), what)?
    } else {
        U64Array::empty()
    };
    Ok(Regs { abi, mask, values })
}
