//! `perf_event_attr`: what was measured and what each sample carries.

use crate::bytes::{Cursor, Endian};
use crate::consts::*;
use crate::error::ParseError;

pub const PERF_ATTR_SIZE_VER0: u32 = 64;
/// The largest attr layout we know (VER8, with config3).
pub const PERF_ATTR_SIZE_LATEST: u32 = 136;

/// Bit positions in the attr flags word.
pub mod flag {
    pub const DISABLED: u32 = 0;
    pub const INHERIT: u32 = 1;
    pub const PINNED: u32 = 2;
    pub const EXCLUSIVE: u32 = 3;
    pub const EXCLUDE_USER: u32 = 4;
    pub const EXCLUDE_KERNEL: u32 = 5;
    pub const EXCLUDE_HV: u32 = 6;
    pub const EXCLUDE_IDLE: u32 = 7;
    pub const MMAP: u32 = 8;
    pub const COMM: u32 = 9;
    pub const FREQ: u32 = 10;
    pub const INHERIT_STAT: u32 = 11;
    pub const ENABLE_ON_EXEC: u32 = 12;
    pub const TASK: u32 = 13;
    pub const WATERMARK: u32 = 14;
    /// Two bits: 15 and 16.
    pub const PRECISE_IP: u32 = 15;
    pub const MMAP_DATA: u32 = 17;
    pub const SAMPLE_ID_ALL: u32 = 18;
    pub const EXCLUDE_HOST: u32 = 19;
    pub const EXCLUDE_GUEST: u32 = 20;
    pub const EXCLUDE_CALLCHAIN_KERNEL: u32 = 21;
    pub const EXCLUDE_CALLCHAIN_USER: u32 = 22;
    pub const MMAP2: u32 = 23;
    pub const COMM_EXEC: u32 = 24;
    pub const USE_CLOCKID: u32 = 25;
    pub const CONTEXT_SWITCH: u32 = 26;
    pub const WRITE_BACKWARD: u32 = 27;
    pub const NAMESPACES: u32 = 28;
    pub const KSYMBOL: u32 = 29;
    pub const BPF_EVENT: u32 = 30;
    pub const AUX_OUTPUT: u32 = 31;
    pub const CGROUP: u32 = 32;
    pub const TEXT_POKE: u32 = 33;
    pub const BUILD_ID: u32 = 34;
    pub const INHERIT_THREAD: u32 = 35;
    pub const REMOVE_ON_EXEC: u32 = 36;
    pub const SIGTRAP: u32 = 37;

    /// Names of the one-bit flags in perf's print order (precise_ip is printed separately).
    pub const NAMES: &[(u32, &str)] = &[
        (DISABLED, "disabled"),
        (INHERIT, "inherit"),
        (PINNED, "pinned"),
        (EXCLUSIVE, "exclusive"),
        (EXCLUDE_USER, "exclude_user"),
        (EXCLUDE_KERNEL, "exclude_kernel"),
        (EXCLUDE_HV, "exclude_hv"),
        (EXCLUDE_IDLE, "exclude_idle"),
        (MMAP, "mmap"),
        (COMM, "comm"),
        (FREQ, "freq"),
        (INHERIT_STAT, "inherit_stat"),
        (ENABLE_ON_EXEC, "enable_on_exec"),
        (TASK, "task"),
        (WATERMARK, "watermark"),
    ];
}

/// A decoded `perf_event_attr`. Fields beyond the recorded `size` are zero.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    /// `sample_period`, or `sample_freq` when the FREQ flag is set.
    pub sample_period_or_freq: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    pub wakeup_events_or_watermark: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
    pub aux_sample_size: u32,
    pub reserved_3: u32,
    pub sig_data: u64,
    pub config3: u64,
}

impl EventAttr {
    /// Parses an attr from `data`; `data` may be longer than the attr (its
    /// `size` field decides, 0 meaning the first published layout).
    pub fn parse(data: &[u8], endian: Endian) -> Result<Self, ParseError> {
        let mut c = Cursor::new(data, endian);
        let mut a = EventAttr {
            type_: c.u32("attr.type")?,
            size: c.u32("attr.size")?,
            ..Default::default()
        };
        let size = if a.size == 0 {
            PERF_ATTR_SIZE_VER0
        } else {
            a.size
        };
        if size < PERF_ATTR_SIZE_VER0 {
            return Err(ParseError {
                what: "attr.size (smaller than the first attr layout)",
                pos: 4,
            });
        }
        // Only look at the bytes the producer said it wrote.
        let body = data.get(..size as usize).ok_or(ParseError {
            what: "attr (shorter than its size field)",
            pos: data.len(),
        })?;
        let mut c = Cursor::new(body, endian);
        c.skip(8, "attr header")?;
        a.config = c.u64("attr.config")?;
        a.sample_period_or_freq = c.u64("attr.sample_period")?;
        a.sample_type = c.u64("attr.sample_type")?;
        a.read_format = c.u64("attr.read_format")?;
        let fb: [u8; 8] = c.bytes(8, "attr flags")?.try_into().unwrap_or([0; 8]);
        // A big-endian producer lays bitfields out from the most significant
        // bit: reading the word big-endian and reversing its bits gives the
        // same numbering as on little-endian machines.
        a.flags = match endian {
            Endian::Little => u64::from_le_bytes(fb),
            Endian::Big => u64::from_be_bytes(fb).reverse_bits(),
        };
        a.wakeup_events_or_watermark = c.u32("attr.wakeup_events")?;
        a.bp_type = c.u32("attr.bp_type")?;
        a.config1 = c.u64("attr.config1")?;
        macro_rules! opt {
            ($field:ident, $m:ident) => {
                if c.remaining() > 0 {
                    a.$field = c.$m(stringify!($field))? as _;
                }
            };
        }
        opt!(config2, u64);
        opt!(branch_sample_type, u64);
        opt!(sample_regs_user, u64);
        opt!(sample_stack_user, u32);
        if c.remaining() > 0 {
            a.clockid = c.u32("clockid")? as i32;
        }
        opt!(sample_regs_intr, u64);
        opt!(aux_watermark, u32);
        opt!(sample_max_stack, u16);
        opt!(reserved_2, u16);
        opt!(aux_sample_size, u32);
        opt!(reserved_3, u32);
        opt!(sig_data, u64);
        opt!(config3, u64);
        Ok(a)
    }

    /// Encodes the attr in `endian` using `self.size` bytes (at least 64).
    pub fn encode(&self, endian: Endian) -> Vec<u8> {
        let mut full = Vec::with_capacity(PERF_ATTR_SIZE_LATEST as usize);
        full.extend_from_slice(&endian.put_u32(self.type_));
        full.extend_from_slice(&endian.put_u32(self.size));
        full.extend_from_slice(&endian.put_u64(self.config));
        full.extend_from_slice(&endian.put_u64(self.sample_period_or_freq));
        full.extend_from_slice(&endian.put_u64(self.sample_type));
        full.extend_from_slice(&endian.put_u64(self.read_format));
        let flags = match endian {
            Endian::Little => self.flags.to_le_bytes(),
            Endian::Big => self.flags.reverse_bits().to_be_bytes(),
        };
        full.extend_from_slice(&flags);
        full.extend_from_slice(&endian.put_u32(self.wakeup_events_or_watermark));
        full.extend_from_slice(&endian.put_u32(self.bp_type));
        full.extend_from_slice(&endian.put_u64(self.config1));
        full.extend_from_slice(&endian.put_u64(self.config2));
        full.extend_from_slice(&endian.put_u64(self.branch_sample_type));
        full.extend_from_slice(&endian.put_u64(self.sample_regs_user));
        full.extend_from_slice(&endian.put_u32(self.sample_stack_user));
        full.extend_from_slice(&endian.put_u32(self.clockid as u32));
        full.extend_from_slice(&endian.put_u64(self.sample_regs_intr));
        full.extend_from_slice(&endian.put_u32(self.aux_watermark));
        full.extend_from_slice(&endian.put_u16(self.sample_max_stack));
        full.extend_from_slice(&endian.put_u16(self.reserved_2));
        full.extend_from_slice(&endian.put_u32(self.aux_sample_size));
        full.extend_from_slice(&endian.put_u32(self.reserved_3));
        full.extend_from_slice(&endian.put_u64(self.sig_data));
        full.extend_from_slice(&endian.put_u64(self.config3));
        let size = if self.size == 0 {
            PERF_ATTR_SIZE_VER0
        } else {
            self.size
        } as usize;
        full.resize(size.max(PERF_ATTR_SIZE_VER0 as usize), 0);
        full
    }

    #[inline]
    pub fn flag(&self, bit: u32) -> bool {
        self.flags & (1u64 << bit) != 0
    }
    pub fn precise_ip(&self) -> u8 {
        ((self.flags >> flag::PRECISE_IP) & 3) as u8
    }
    pub fn sample_id_all(&self) -> bool {
        self.flag(flag::SAMPLE_ID_ALL)
    }
    pub fn freq(&self) -> bool {
        self.flag(flag::FREQ)
    }
    pub fn has(&self, sample_bit: u64) -> bool {
        self.sample_type & sample_bit != 0
    }

    /// Position (in u64 words from the start) of the sample id in SAMPLE
    /// records, as perf computes it; None if samples carry no id.
    pub fn sample_id_pos(&self) -> Option<usize> {
        let st = self.sample_type;
        if st & PERF_SAMPLE_IDENTIFIER != 0 {
            return Some(0);
        }
        if st & PERF_SAMPLE_ID == 0 {
            return None;
        }
        let mut idx = 0;
        for bit in [
            PERF_SAMPLE_IP,
            PERF_SAMPLE_TID,
            PERF_SAMPLE_TIME,
            PERF_SAMPLE_ADDR,
        ] {
            if st & bit != 0 {
                idx += 1;
            }
        }
        Some(idx)
    }

    /// Position (in u64 words counted back from the end) of the id in the
    /// sample_id_all trailer of non-sample records; None if there is none.
    pub fn trailer_id_pos(&self) -> Option<usize> {
        if !self.sample_id_all() {
            return None;
        }
        let st = self.sample_type;
        if st & PERF_SAMPLE_IDENTIFIER != 0 {
            return Some(1);
        }
        if st & PERF_SAMPLE_ID == 0 {
            return None;
        }
        let mut idx = 1;
        if st & PERF_SAMPLE_CPU != 0 {
            idx += 1;
        }
        if st & PERF_SAMPLE_STREAM_ID != 0 {
            idx += 1;
        }
        Some(idx)
    }

    /// Size in bytes of the sample_id_all trailer on non-sample records.
    pub fn trailer_size(&self) -> usize {
        if !self.sample_id_all() {
            return 0;
        }
        id_trailer_size(self.sample_type)
    }
}

/// One event of the recording: its attr, the sample ids that belong to it,
/// and its name (from EVENT_DESC, HEADER_EVENT_TYPE or derived from the attr).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Event {
    pub attr: EventAttr,
    pub ids: Vec<u64>,
    pub name: Option<String>,
}

impl Event {
    pub fn name(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => self.attr.default_name(),
        }
    }
}

/// Bytes of the sample_id trailer of non-sample records for a `sample_type`
/// (with sample_id_all set).
pub fn id_trailer_size(sample_type: u64) -> usize {
    [
        PERF_SAMPLE_TID,
        PERF_SAMPLE_TIME,
        PERF_SAMPLE_ID,
        PERF_SAMPLE_STREAM_ID,
        PERF_SAMPLE_CPU,
        PERF_SAMPLE_IDENTIFIER,
    ]
    .iter()
    .filter(|&&b| sample_type & b != 0)
    .count()
        * 8
}
