//! Record framing and decoding of every non-sample record type.

use crate::attr::EventAttr;
use crate::bytes::{until_nul, Cursor, Endian, U64Array};
use crate::consts::*;
use crate::error::ParseError;
use crate::sample::ReadValues;

/// One record as framed in the file: its header fields and payload bytes.
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    pub type_: u32,
    pub misc: u16,
    /// The bytes after the 8-byte record header.
    pub payload: &'a [u8],
    /// Bytes that follow the record outside its header size (AUXTRACE data,
    /// pipe-mode TRACING_DATA); empty for all other records.
    pub trailing: &'a [u8],
    /// File (or stream) offset of the record header; for records that came out
    /// of a COMPRESSED record, the offset of that COMPRESSED record.
    pub offset: u64,
    /// True when the record came out of a COMPRESSED record.
    pub from_compressed: bool,
}

impl<'a> RawRecord<'a> {
    /// The record's size field (header included).
    pub fn size(&self) -> usize {
        self.payload.len() + 8
    }
}

/// A record kept after the reader has moved on: its header fields and where
/// its bytes are, either in the reader's input at the record's own offset
/// (records outside COMPRESSED records of a mapped or in-memory file, see
/// [`crate::RecordReader::input_bytes`]) or copied into a buffer of the
/// keeper's.
#[derive(Debug, Clone, Copy)]
pub struct KeptRecord {
    /// Where the payload starts: in the input (`in_input`) or in the buffer.
    pub start: usize,
    pub payload: usize,
    pub trailing: usize,
    pub type_: u32,
    pub misc: u16,
    pub in_input: bool,
    pub from_compressed: bool,
    pub offset: u64,
}

impl KeptRecord {
    /// Keeps `raw`: by its input offset when `random_access` (the input is a
    /// file) and it does not come from a COMPRESSED record, else by copying
    /// its bytes to the end of `buf`.
    pub fn keep(raw: &RawRecord<'_>, random_access: bool, buf: &mut Vec<u8>) -> Self {
        let in_input = random_access && !raw.from_compressed;
        let start = if in_input {
            raw.offset as usize + 8
        } else {
            let start = buf.len();
            buf.extend_from_slice(raw.payload);
            buf.extend_from_slice(raw.trailing);
            start
        };
        KeptRecord {
            start,
            payload: raw.payload.len(),
            trailing: raw.trailing.len(),
            type_: raw.type_,
            misc: raw.misc,
            in_input,
            from_compressed: raw.from_compressed,
            offset: raw.offset,
        }
    }

    /// Payload and trailing bytes.
    pub fn len(&self) -> usize {
        self.payload + self.trailing
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The record again, from the input's bytes or the buffer it was copied
    /// to; None if those are not the bytes it was kept with.
    pub fn get<'a>(&self, input: Option<&'a [u8]>, buf: &'a [u8]) -> Option<RawRecord<'a>> {
        let bytes = if self.in_input { input? } else { buf };
        let b = bytes.get(self.start..self.start.checked_add(self.len())?)?;
        let (payload, trailing) = b.split_at(self.payload);
        Some(RawRecord {
            type_: self.type_,
            misc: self.misc,
            payload,
            trailing,
            offset: self.offset,
            from_compressed: self.from_compressed,
        })
    }
}

/// The `sample_id_all` trailer of a non-sample kernel record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleId {
    pub pid: Option<u32>,
    pub tid: Option<u32>,
    pub time: Option<u64>,
    pub id: Option<u64>,
    pub stream_id: Option<u64>,
    pub cpu: Option<u32>,
}

impl SampleId {
    /// Parses the trailer at the end of `payload` for `attr`; returns the
    /// trailer and the payload without it.
    pub fn parse<'a>(
        payload: &'a [u8],
        attr: &EventAttr,
        endian: Endian,
    ) -> Result<(SampleId, &'a [u8]), ParseError> {
        let n = attr.trailer_size();
        if n == 0 {
            return Ok((SampleId::default(), payload));
        }
        if n > payload.len() {
            return Err(ParseError {
                what: "sample_id trailer",
                pos: 0,
            });
        }
        let (body, tail) = payload.split_at(payload.len() - n);
        let st = attr.sample_type;
        let mut c = Cursor::new(tail, endian);
        let mut s = SampleId::default();
        if st & PERF_SAMPLE_TID != 0 {
            s.pid = Some(c.u32("trailer pid")?);
            s.tid = Some(c.u32("trailer tid")?);
        }
        if st & PERF_SAMPLE_TIME != 0 {
            s.time = Some(c.u64("trailer time")?);
        }
        if st & PERF_SAMPLE_ID != 0 {
            s.id = Some(c.u64("trailer id")?);
        }
        if st & PERF_SAMPLE_STREAM_ID != 0 {
            s.stream_id = Some(c.u64("trailer stream_id")?);
        }
        if st & PERF_SAMPLE_CPU != 0 {
            s.cpu = Some(c.u32("trailer cpu")?);
            c.skip(4, "trailer cpu reserved")?;
        }
        if st & PERF_SAMPLE_IDENTIFIER != 0 {
            s.id = Some(c.u64("trailer identifier")?);
        }
        Ok((s, body))
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Mmap<'a> {
    pub pid: u32,
    pub tid: u32,
    pub addr: u64,
    pub len: u64,
    pub pgoff: u64,
    pub filename: &'a [u8],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mmap2Id<'a> {
    Inode {
        maj: u32,
        min: u32,
        ino: u64,
        ino_generation: u64,
    },
    BuildId(&'a [u8]),
}

#[derive(Debug, Clone, Copy)]
pub struct Mmap2<'a> {
    pub pid: u32,
    pub tid: u32,
    pub addr: u64,
    pub len: u64,
    pub pgoff: u64,
    pub id: Mmap2Id<'a>,
    pub prot: u32,
    pub flags: u32,
    pub filename: &'a [u8],
}

#[derive(Debug, Clone, Copy)]
pub struct Comm<'a> {
    pub pid: u32,
    pub tid: u32,
    pub comm: &'a [u8],
    /// Set when the comm changed because of exec().
    pub exec: bool,
}

/// FORK and EXIT records share one layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForkExit {
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    pub ptid: u32,
    pub time: u64,
}

#[derive(Debug, Clone, Copy)]
pub struct BuildIdRecord<'a> {
    pub pid: i32,
    pub build_id: &'a [u8],
    pub filename: &'a [u8],
    pub misc: u16,
}

/// A decoded record. `Other` keeps records whose body we do not interpret.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum RecordData<'a> {
    Mmap(Mmap<'a>),
    Mmap2(Mmap2<'a>),
    Comm(Comm<'a>),
    Fork(ForkExit),
    Exit(ForkExit),
    Lost {
        id: u64,
        lost: u64,
    },
    Throttle {
        time: u64,
        id: u64,
        stream_id: u64,
    },
    Unthrottle {
        time: u64,
        id: u64,
        stream_id: u64,
    },
    Read {
        pid: u32,
        tid: u32,
        values: ReadValues<'a>,
    },
    Aux {
        aux_offset: u64,
        aux_size: u64,
        flags: u64,
    },
    ItraceStart {
        pid: u32,
        tid: u32,
    },
    LostSamples {
        lost: u64,
    },
    Switch {
        out: bool,
        preempt: bool,
    },
    SwitchCpuWide {
        out: bool,
        preempt: bool,
        next_prev_pid: u32,
        next_prev_tid: u32,
    },
    Namespaces {
        pid: u32,
        tid: u32,
        namespaces: U64Array<'a>,
    },
    Ksymbol {
        addr: u64,
        len: u32,
        ksym_type: u16,
        flags: u16,
        name: &'a [u8],
    },
    BpfEvent {
        type_: u16,
        flags: u16,
        id: u32,
        tag: &'a [u8],
    },
    Cgroup {
        id: u64,
        path: &'a [u8],
    },
    TextPoke {
        addr: u64,
        old: &'a [u8],
        new: &'a [u8],
    },
    AuxOutputHwId {
        hw_id: u64,
    },
    HeaderEventType {
        event_id: u64,
        name: &'a [u8],
    },
    BuildId(BuildIdRecord<'a>),
    FinishedRound,
    FinishedInit,
    HeaderFeature {
        feat_id: u64,
        data: &'a [u8],
    },
    TracingData {
        size: u32,
    },
    Auxtrace {
        size: u64,
        offset: u64,
        reference: u64,
        idx: u32,
        tid: u32,
        cpu: u32,
    },
    /// Any record not decoded above (HEADER_ATTR, ID_INDEX, STAT*, ...).
    Other,
}

/// Decodes the body of a non-sample record (`payload` without its trailer).
pub fn parse_record<'a>(
    type_: u32,
    misc: u16,
    payload: &'a [u8],
    endian: Endian,
    read_format: u64,
) -> Result<RecordData<'a>, ParseError> {
    let mut c = Cursor::new(payload, endian);
    Ok(match type_ {
        PERF_RECORD_MMAP => RecordData::Mmap(Mmap {
            pid: c.u32("pid")?,
            tid: c.u32("tid")?,
            addr: c.u64("addr")?,
            len: c.u64("len")?,
            pgoff: c.u64("pgoff")?,
            filename: until_nul(c.rest()),
        }),
        PERF_RECORD_MMAP2 => {
            let pid = c.u32("pid")?;
            let tid = c.u32("tid")?;
            let addr = c.u64("addr")?;
            let len = c.u64("len")?;
            let pgoff = c.u64("pgoff")?;
            let id = if misc & PERF_RECORD_MISC_MMAP_BUILD_ID != 0 {
                let size = c.u8("build_id_size")? as usize;
                c.skip(3, "reserved")?;
                let bid = c.bytes(20, "build_id")?;
                Mmap2Id::BuildId(&bid[..size.min(20)])
            } else {
                Mmap2Id::Inode {
                    maj: c.u32("maj")?,
                    min: c.u32("min")?,
                    ino: c.u64("ino")?,
                    ino_generation: c.u64("ino_generation")?,
                }
            };
            RecordData::Mmap2(Mmap2 {
                pid,
                tid,
                addr,
                len,
                pgoff,
                id,
                prot: c.u32("prot")?,
                flags: c.u32("flags")?,
                filename: until_nul(c.rest()),
            })
        }
        PERF_RECORD_COMM => RecordData::Comm(Comm {
            pid: c.u32("pid")?,
            tid: c.u32("tid")?,
            comm: until_nul(c.rest()),
            exec: misc & PERF_RECORD_MISC_COMM_EXEC != 0,
        }),
        PERF_RECORD_FORK | PERF_RECORD_EXIT => {
            let fe = ForkExit {
                pid: c.u32("pid")?,
                ppid: c.u32("ppid")?,
                tid: c.u32("tid")?,
                ptid: c.u32("ptid")?,
                time: c.u64("time")?,
            };
            if type_ == PERF_RECORD_FORK {
                RecordData::Fork(fe)
            } else {
                RecordData::Exit(fe)
            }
        }
        PERF_RECORD_LOST => RecordData::Lost {
            id: c.u64("id")?,
            lost: c.u64("lost")?,
        },
        PERF_RECORD_THROTTLE | PERF_RECORD_UNTHROTTLE => {
            let (time, id, stream_id) = (c.u64("time")?, c.u64("id")?, c.u64("stream_id")?);
            if type_ == PERF_RECORD_THROTTLE {
                RecordData::Throttle {
                    time,
                    id,
                    stream_id,
                }
            } else {
                RecordData::Unthrottle {
                    time,
                    id,
                    stream_id,
                }
            }
        }
        PERF_RECORD_READ => RecordData::Read {
            pid: c.u32("pid")?,
            tid: c.u32("tid")?,
            values: ReadValues::parse(&mut c, read_format)?,
        },
        PERF_RECORD_AUX => RecordData::Aux {
            aux_offset: c.u64("aux_offset")?,
            aux_size: c.u64("aux_size")?,
            flags: c.u64("flags")?,
        },
        PERF_RECORD_ITRACE_START => RecordData::ItraceStart {
            pid: c.u32("pid")?,
            tid: c.u32("tid")?,
        },
        PERF_RECORD_LOST_SAMPLES => RecordData::LostSamples {
            lost: c.u64("lost")?,
        },
        PERF_RECORD_SWITCH => RecordData::Switch {
            out: misc & PERF_RECORD_MISC_SWITCH_OUT != 0,
            preempt: misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT != 0,
        },
        PERF_RECORD_SWITCH_CPU_WIDE => RecordData::SwitchCpuWide {
            out: misc & PERF_RECORD_MISC_SWITCH_OUT != 0,
            preempt: misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT != 0,
            next_prev_pid: c.u32("next_prev_pid")?,
            next_prev_tid: c.u32("next_prev_tid")?,
        },
        PERF_RECORD_NAMESPACES => {
            let pid = c.u32("pid")?;
            let tid = c.u32("tid")?;
            let nr = c.u64("nr_namespaces")?;
            let words = nr.checked_mul(2).ok_or(ParseError {
                what: "nr_namespaces",
                pos: 8,
            })?;
            RecordData::Namespaces {
                pid,
                tid,
                namespaces: c.u64_array(words, "namespaces")?,
            }
        }
        PERF_RECORD_KSYMBOL => RecordData::Ksymbol {
            addr: c.u64("addr")?,
            len: c.u32("len")?,
            ksym_type: c.u16("ksym_type")?,
            flags: c.u16("flags")?,
            name: until_nul(c.rest()),
        },
        PERF_RECORD_BPF_EVENT => RecordData::BpfEvent {
            type_: c.u16("type")?,
            flags: c.u16("flags")?,
            id: c.u32("id")?,
            tag: c.bytes(8, "tag")?,
        },
        PERF_RECORD_CGROUP => RecordData::Cgroup {
            id: c.u64("id")?,
            path: until_nul(c.rest()),
        },
        PERF_RECORD_TEXT_POKE => {
            let addr = c.u64("addr")?;
            let old_len = c.u16("old_len")? as usize;
            let new_len = c.u16("new_len")? as usize;
            RecordData::TextPoke {
                addr,
                old: c.bytes(old_len, "old bytes")?,
                new: c.bytes(new_len, "new bytes")?,
            }
        }
        PERF_RECORD_AUX_OUTPUT_HW_ID => RecordData::AuxOutputHwId {
            hw_id: c.u64("hw_id")?,
        },
        PERF_RECORD_HEADER_EVENT_TYPE => RecordData::HeaderEventType {
            event_id: c.u64("event_id")?,
            name: until_nul(c.rest()),
        },
        PERF_RECORD_HEADER_BUILD_ID => {
            let pid = c.u32("pid")? as i32;
            // Newer perf: build_id[20], size u8, reserved[3] when misc has
            // PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15); older: build_id[24].
            let raw = c.bytes(24, "build_id")?;
            let build_id = if misc & (1 << 15) != 0 {
                &raw[..(raw[20] as usize).min(20)]
            } else {
                &raw[..20]
            };
            RecordData::BuildId(BuildIdRecord {
                pid,
                build_id,
                filename: until_nul(c.rest()),
                misc,
            })
        }
        PERF_RECORD_FINISHED_ROUND => RecordData::FinishedRound,
        PERF_RECORD_FINISHED_INIT => RecordData::FinishedInit,
        PERF_RECORD_HEADER_FEATURE => RecordData::HeaderFeature {
            feat_id: c.u64("feat_id")?,
            data: c.rest(),
        },
        PERF_RECORD_HEADER_TRACING_DATA => RecordData::TracingData {
            size: c.u32("size")?,
        },
        PERF_RECORD_AUXTRACE => RecordData::Auxtrace {
            size: c.u64("size")?,
            offset: c.u64("offset")?,
            reference: c.u64("reference")?,
            idx: c.u32("idx")?,
            tid: c.u32("tid")?,
            cpu: c.u32("cpu")?,
        },
        _ => RecordData::Other,
    })
}

/// Whether records of this type carry a sample_id_all trailer when the
/// attr asks for one (kernel records other than SAMPLE do).
pub fn has_trailer(type_: u32) -> bool {
    type_ != PERF_RECORD_SAMPLE && type_ < PERF_RECORD_HEADER_ATTR
}
