//! perf's own record types (HEADER_ATTR and up) that carry session facts
//! rather than kernel events: ID_INDEX, THREAD_MAP, CPU_MAP, EVENT_UPDATE,
//! STAT_CONFIG, STAT, STAT_ROUND, TIME_CONV and AUXTRACE, decoded leniently
//! as `perf report -D` reads them: a field cut short reads as 0 (or ends
//! a list), never as an error.

use crate::bytes::{until_nul, Cursor, Endian};
use crate::consts::*;

/// One decoded user record (see [`decode`]).
#[derive(Debug, Clone, PartialEq)]
pub enum UserRecord<'a> {
    /// The count as recorded, and the (id, idx, cpu, tid) entries that fit.
    IdIndex {
        nr: u64,
        entries: Vec<(u64, u64, i64, i64)>,
    },
    /// The pids of the entries that fit.
    ThreadMap(Vec<i32>),
    /// The CPUs, in the map's order (-1: any CPU).
    CpuMap(Vec<i64>),
    EventUpdate {
        id: u64,
        update: EventUpdate<'a>,
    },
    StatConfig {
        aggr_mode: u64,
        interval: u64,
        scale: u64,
    },
    Stat {
        id: u64,
        cpu: i32,
        thread: i32,
        value: u64,
        enabled: u64,
        running: u64,
    },
    StatRound {
        /// 0: an interval's round, else the final one.
        kind: u64,
        time: u64,
    },
    TimeConv {
        shift: u64,
        mult: u64,
        zero: u64,
        /// (cycles, mask, cap_user_time_zero, cap_user_time_short) in
        /// records of 48 bytes or more.
        ext: Option<(u64, u64, u8, u8)>,
    },
    Auxtrace {
        size: u64,
        offset: u64,
        reference: u64,
        idx: u32,
        tid: i32,
        cpu: i32,
    },
}

/// What an EVENT_UPDATE record changes.
#[derive(Debug, Clone, PartialEq)]
pub enum EventUpdate<'a> {
    Unit(&'a [u8]),
    Scale(f64),
    Name(&'a [u8]),
    Cpus(Vec<i64>),
    Unknown,
}

/// Decodes a user record of type `type_` from its payload; None for the
/// types this module does not know.
pub fn decode(type_: u32, payload: &[u8], e: Endian) -> Option<UserRecord<'_>> {
    let mut c = Cursor::new(payload, e);
    let u64_or_0 = |c: &mut Cursor<'_>| c.u64("field").unwrap_or(0);
    Some(match type_ {
        PERF_RECORD_ID_INDEX => {
            let nr = c.u64("nr").unwrap_or(0);
            let mut entries = Vec::new();
            for _ in 0..nr {
                let (Ok(id), Ok(idx), Ok(cpu), Ok(tid)) =
                    (c.u64("id"), c.u64("idx"), c.u64("cpu"), c.u64("tid"))
                else {
                    break;
                };
                entries.push((id, idx, cpu as i64, tid as i64));
            }
            UserRecord::IdIndex { nr, entries }
        }
        PERF_RECORD_THREAD_MAP => {
            let nr = c.u64("nr").unwrap_or(0);
            let mut pids = Vec::new();
            for _ in 0..nr {
                let Ok(pid) = c.u64("pid") else { break };
                if c.skip(16, "comm").is_err() {
                    break;
                }
                pids.push(pid as i32);
            }
            UserRecord::ThreadMap(pids)
        }
        PERF_RECORD_CPU_MAP => UserRecord::CpuMap(cpu_map(payload, e)),
        PERF_RECORD_EVENT_UPDATE => {
            let kind = c.u64("type").unwrap_or(u64::MAX);
            let id = c.u64("id").unwrap_or(0);
            let rest = c.rest();
            let update = match kind {
                0 => EventUpdate::Unit(until_nul(rest)),
                1 => EventUpdate::Scale(c.u64("scale").map(f64::from_bits).unwrap_or(0.0)),
                2 => EventUpdate::Name(until_nul(rest)),
                3 => EventUpdate::Cpus(cpu_map(rest, e)),
                _ => EventUpdate::Unknown,
            };
            UserRecord::EventUpdate { id, update }
        }
        PERF_RECORD_STAT_CONFIG => {
            // nr (tag, value) pairs; perf reads its three settings.
            let nr = c.u64("nr").unwrap_or(0).min(payload.len() as u64 / 16);
            let (mut aggr_mode, mut interval, mut scale) = (0u64, 0u64, 0u64);
            for _ in 0..nr {
                let (Ok(tag), Ok(val)) = (c.u64("tag"), c.u64("val")) else {
                    break;
                };
                match tag {
                    0 => aggr_mode = val,
                    1 => interval = val,
                    2 => scale = val,
                    _ => {}
                }
            }
            UserRecord::StatConfig {
                aggr_mode,
                interval,
                scale,
            }
        }
        PERF_RECORD_STAT => {
            let id = c.u64("id").unwrap_or(0);
            let cpu = c.u32("cpu").unwrap_or(0) as i32;
            let thread = c.u32("thread").unwrap_or(0) as i32;
            let (value, enabled, running) = (u64_or_0(&mut c), u64_or_0(&mut c), u64_or_0(&mut c));
            UserRecord::Stat {
                id,
                cpu,
                thread,
                value,
                enabled,
                running,
            }
        }
        PERF_RECORD_STAT_ROUND => UserRecord::StatRound {
            kind: u64_or_0(&mut c),
            time: u64_or_0(&mut c),
        },
        PERF_RECORD_TIME_CONV => {
            let (shift, mult, zero) = (u64_or_0(&mut c), u64_or_0(&mut c), u64_or_0(&mut c));
            let ext = (payload.len() >= 48).then(|| {
                let (cycles, mask) = (u64_or_0(&mut c), u64_or_0(&mut c));
                let zero_cap = c.u8("cap").unwrap_or(0);
                let short_cap = c.u8("cap").unwrap_or(0);
                (cycles, mask, zero_cap, short_cap)
            });
            UserRecord::TimeConv {
                shift,
                mult,
                zero,
                ext,
            }
        }
        PERF_RECORD_AUXTRACE => {
            let (size, offset, reference) = (u64_or_0(&mut c), u64_or_0(&mut c), u64_or_0(&mut c));
            UserRecord::Auxtrace {
                size,
                offset,
                reference,
                idx: c.u32("idx").unwrap_or(0),
                tid: c.u32("tid").unwrap_or(0) as i32,
                cpu: c.u32("cpu").unwrap_or(0) as i32,
            }
        }
        _ => return None,
    })
}

/// A CPU map (perf's `perf_record_cpu_map_data`: a list, a mask of 32- or
/// 64-bit words, or a range), its CPUs in order (-1: any CPU).
pub fn cpu_map(b: &[u8], e: Endian) -> Vec<i64> {
    let mut c = Cursor::new(b, e);
    let mut cpus: Vec<i64> = Vec::new();
    match c.u16("cpu map type") {
        Ok(0) => {
            let nr = c.u16("nr").unwrap_or(0);
            for _ in 0..nr {
                match c.u16("cpu") {
                    Ok(v) => cpus.push(i64::from(v as i16)),
                    Err(_) => break,
                }
            }
        }
        Ok(1) => {
            let nr = c.u16("nr").unwrap_or(0) as usize;
            let long_size = c.u16("long_size").unwrap_or(0);
            let words: Vec<u64> = if long_size == 4 {
                (0..nr)
                    .map_while(|_| c.u32("mask").ok().map(u64::from))
                    .collect()
            } else {
                let _ = c.skip(4, "pad");
                (0..nr).map_while(|_| c.u64("mask").ok()).collect()
            };
            let bits = if long_size == 4 { 32 } else { 64 };
            for (w, v) in words.iter().enumerate() {
                for bit in 0..bits {
                    if v & (1u64 << bit) != 0 {
                        cpus.push((w * bits + bit) as i64);
                    }
                }
            }
        }
        Ok(2) => {
            let any = c.u8("any_cpu").unwrap_or(0);
            let _ = c.u8("pad");
            let start = c.u16("start").unwrap_or(0);
            let end = c.u16("end").unwrap_or(0);
            if any != 0 {
                cpus.push(-1);
            }
            cpus.extend((i64::from(start)..=i64::from(end)).take(1 << 16));
        }
        _ => {}
    }
    cpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_map_list_mask_and_range() {
        // type 0 (list): nr 4: cpus 0 1 2 5
        let b = [0u8, 0, 4, 0, 0, 0, 1, 0, 2, 0, 5, 0];
        assert_eq!(cpu_map(&b, Endian::Little), vec![0, 1, 2, 5]);
        // type 1 (mask), 1 word of 64 bits: cpus 1 and 3
        let mut b = vec![1u8, 0, 1, 0, 8, 0, 0, 0, 0, 0];
        b.extend_from_slice(&0b1010u64.to_le_bytes());
        assert_eq!(cpu_map(&b, Endian::Little), vec![1, 3]);
        // type 2 (range), any CPU, 4-6
        let b = [2u8, 0, 1, 0, 4, 0, 6, 0];
        assert_eq!(cpu_map(&b, Endian::Little), vec![-1, 4, 5, 6]);
    }

    #[test]
    fn short_records_read_as_zero() {
        let r = decode(PERF_RECORD_STAT_ROUND, &[1, 0, 0], Endian::Little);
        assert_eq!(r, Some(UserRecord::StatRound { kind: 0, time: 0 }));
        let b = 2u64.to_le_bytes();
        let r = decode(PERF_RECORD_ID_INDEX, &b, Endian::Little);
        assert_eq!(
            r,
            Some(UserRecord::IdIndex {
                nr: 2,
                entries: vec![]
            })
        );
    }
}
