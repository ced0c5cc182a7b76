//! `stat record` files: a counting run written as perf's `stat record`
//! writes it (the counters' attrs and ids, then THREAD_MAP, CPU_MAP,
//! EVENT_UPDATE units and scales, STAT_CONFIG, one STAT per counter and
//! target, and a final STAT_ROUND), and read back into a run for `stat
//! report`. perf 6.1's `stat report` reads what this writes, and this reads
//! perf's.

use std::fs::File;

use perf_data::consts::*;
use perf_data::user_records::{decode, UserRecord};
use perf_data::writer::FileWriter;
use perf_data::{Endian, Event};

use crate::count::{stat_attr, CountOptions, CountRun, Counter};
use crate::event::EventSpec;
use crate::{header, Error, Result};

/// perf's STAT_CONFIG tags and the global aggregation mode.
const STAT_CONFIG_AGGR_MODE: u64 = 0;
const STAT_CONFIG_INTERVAL: u64 = 1;
const STAT_CONFIG_SCALE: u64 = 2;
const AGGR_GLOBAL: u64 = 1;
/// EVENT_UPDATE kinds.
const UPDATE_UNIT: u64 = 0;
const UPDATE_SCALE: u64 = 1;
/// STAT_ROUND kind of the last round.
const ROUND_FINAL: u64 = 1;

/// The unit and scale perf gives an event's counts (the clocks count
/// nanoseconds, shown in milliseconds).
fn unit_of(spec: &EventSpec) -> Option<(&'static str, f64)> {
    let clock = spec.type_ == PERF_TYPE_SOFTWARE && matches!(spec.config, 0 | 1);
    clock.then_some(("msec", 1e-6))
}

/// Writes `run` (one run of `opts`) to `file` as perf's `stat record` does.
pub fn write(
    file: File,
    run: &CountRun,
    opts: &CountOptions,
    cmdline: &[String],
    version: &str,
) -> Result<()> {
    let endian = Endian::native();
    let on_exec = !opts.command.is_empty() && !opts.attaches() && !opts.system_wide;
    let events: Vec<Event> = run
        .counters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut attr = stat_attr(&c.spec, true, on_exec, !opts.no_inherit);
            attr.sample_type = PERF_SAMPLE_IDENTIFIER;
            Event {
                attr,
                ids: vec![i as u64 + 1],
                name: Some(c.spec.name.clone()),
            }
        })
        .collect();
    let mut w = FileWriter::create(file, endian, &events)?;
    let u64s = |v: &[u64]| -> Vec<u8> { v.iter().flat_map(|x| endian.put_u64(*x)).collect() };
    for (i, c) in run.counters.iter().enumerate() {
        if let Some((unit, scale)) = unit_of(&c.spec) {
            let id = i as u64 + 1;
            let mut p = u64s(&[UPDATE_UNIT, id]);
            let mut text = unit.as_bytes().to_vec();
            text.resize(24, 0);
            p.extend(text);
            w.write_record(PERF_RECORD_EVENT_UPDATE, 0, &p, &[])?;
            let mut p = u64s(&[UPDATE_SCALE, id, scale.to_bits(), 0, 0]);
            p.truncate(40);
            w.write_record(PERF_RECORD_EVENT_UPDATE, 0, &p, &[])?;
        }
    }
    // The threads and CPUs the counters were opened on: the command's
    // process (any CPU), or the CPUs (any thread) system-wide.
    let (threads, cpus): (Vec<i32>, Vec<i32>) = if opts.system_wide {
        let mut cpus: Vec<i32> = run.targets.iter().map(|t| t.cpu).collect();
        cpus.dedup();
        (vec![-1], cpus)
    } else if run.targets.is_empty() {
        (vec![run.command_pid.unwrap_or(-1)], vec![-1])
    } else {
        (run.targets.iter().map(|t| t.tid).collect(), vec![-1])
    };
    let mut p = endian.put_u64(threads.len() as u64).to_vec();
    for &t in &threads {
        p.extend(endian.put_u64(t as i64 as u64));
        p.extend([0u8; 16]);
    }
    w.write_record(PERF_RECORD_THREAD_MAP, 0, &p, &[])?;
    // A list of CPUs (u16 each), padded to 8 bytes.
    let mut p = Vec::new();
    p.extend(endian.put_u16(0));
    p.extend(endian.put_u16(cpus.len() as u16));
    for &c in &cpus {
        p.extend(endian.put_u16(c as u16));
    }
    p.resize(p.len().next_multiple_of(8), 0);
    w.write_record(PERF_RECORD_CPU_MAP, 0, &p, &[])?;
    let p = u64s(&[
        3,
        STAT_CONFIG_AGGR_MODE,
        AGGR_GLOBAL,
        STAT_CONFIG_INTERVAL,
        opts.interval_ms.unwrap_or(0),
        STAT_CONFIG_SCALE,
        1,
    ]);
    w.write_record(PERF_RECORD_STAT_CONFIG, 0, &p, &[])?;
    for (i, c) in run.counters.iter().enumerate() {
        let id = i as u64 + 1;
        let mut stat = |cpu: i32, thread: u32, v: [u64; 3]| -> Result<()> {
            let mut p = endian.put_u64(id).to_vec();
            p.extend(endian.put_u32(cpu as u32));
            p.extend(endian.put_u32(thread));
            p.extend(u64s(&v));
            w.write_record(PERF_RECORD_STAT, 0, &p, &[])?;
            Ok(())
        };
        if c.parts.is_empty() {
            stat(cpus[0], 0, [c.value, c.enabled, c.running])?;
        } else {
            for part in &c.parts {
                let t = &run.targets[part.target];
                let thread = threads.iter().position(|&x| x == t.tid).unwrap_or(0) as u32;
                stat(t.cpu, thread, [part.value, part.enabled, part.running])?;
            }
        }
    }
    w.write_record(
        PERF_RECORD_STAT_ROUND,
        0,
        &u64s(&[ROUND_FINAL, run.wall_ns]),
        &[],
    )?;
    let mut feats = header::features(
        endian,
        &header::HeaderInput {
            events: &events,
            groups: &[],
            cmdline,
            version,
            sample_time: None,
            build_ids: Vec::new(),
            clock: None,
        },
    );
    feats.insert(feature::STAT, Vec::new());
    w.finish(&feats)?;
    Ok(())
}

/// A `stat record` file read back: its run (counters summed over CPUs and
/// threads, the final round's time as the wall time) and the command line
/// it was recorded with.
pub struct StatFile {
    pub run: CountRun,
    pub cmdline: Vec<String>,
    /// The STAT_CONFIG interval (ms; 0 without -I).
    pub interval_ms: u64,
}

/// Reads a `stat record` file (perf's or sear's).
pub fn read(path: &std::path::Path) -> Result<StatFile> {
    let mut reader = perf_data::RecordReader::open(path)
        .map_err(|e| Error::Options(format!("{}: {e}", path.display())))?;
    let meta = reader.meta().clone();
    let endian = meta.endian;
    if meta.features.get(feature::STAT).is_none() {
        return Err(Error::Options(format!(
            "{}: not a `stat record` file (it has no stat data); record one with `sear stat record`",
            path.display()
        )));
    }
    let mut counters: Vec<Counter> = meta
        .events
        .iter()
        .map(|e| Counter {
            cgroup: None,
            spec: EventSpec {
                name: e.name(),
                type_: e.attr.type_,
                config: e.attr.config,
                exclude_user: e.attr.flag(perf_data::attr::flag::EXCLUDE_USER),
                exclude_kernel: e.attr.flag(perf_data::attr::flag::EXCLUDE_KERNEL),
                exclude_hv: e.attr.flag(perf_data::attr::flag::EXCLUDE_HV),
                exclude_guest: e.attr.flag(perf_data::attr::flag::EXCLUDE_GUEST),
                exclude_host: e.attr.flag(perf_data::attr::flag::EXCLUDE_HOST),
                precise_ip: 0,
                filter: None,
                sample_read: false,
                pmu: Default::default(),
            },
            supported: true,
            value: 0,
            enabled: 0,
            running: 0,
            parts: Vec::new(),
        })
        .collect();
    let mut wall_ns = 0;
    let mut interval_ms = 0;
    let mut seen = vec![false; counters.len()];
    while let Some(rec) = reader
        .next_record()
        .map_err(|e| Error::Options(format!("{}: {e}", path.display())))?
    {
        match decode(rec.type_(), rec.raw.payload, endian) {
            Some(UserRecord::Stat {
                id,
                value,
                enabled,
                running,
                ..
            }) => {
                if let Some(i) = meta.event_of_id(Some(id)) {
                    let c = &mut counters[i];
                    c.value = c.value.wrapping_add(value);
                    c.enabled = c.enabled.wrapping_add(enabled);
                    c.running = c.running.wrapping_add(running);
                    seen[i] = true;
                }
            }
            Some(UserRecord::StatRound { kind, time }) if kind == ROUND_FINAL => wall_ns = time,
            Some(UserRecord::StatConfig { interval, .. }) => interval_ms = interval,
            _ => {}
        }
    }
    // A counter without a value was not counted (no such event here).
    for (c, s) in counters.iter_mut().zip(seen) {
        c.supported = s;
    }
    Ok(StatFile {
        run: CountRun {
            counters,
            targets: Vec::new(),
            wall_ns,
            user_secs: 0.0,
            sys_secs: 0.0,
            exit_status: None,
            signal: None,
            command_pid: None,
            every_thread: false,
        },
        cmdline: meta.features.cmdline().unwrap_or_default(),
        interval_ms,
    })
}

/// One event's counts by (cpu, thread index): (value, enabled, running).
type CountsAt = std::collections::HashMap<(i32, i32), (u64, u64, u64)>;

/// What `perf script` prints for a `stat record` file, written to `out`: at
/// each round, every event's latest counts per thread and CPU of its maps
/// (threads outer, CPUs inner), under one header line. (Written as it goes:
/// a file's maps may make the table long.)
pub fn write_script(path: &std::path::Path, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let bad = |e: perf_data::Error| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    };
    let mut reader = perf_data::RecordReader::open(path).map_err(bad)?;
    let meta = reader.meta().clone();
    let names: Vec<String> = meta.events.iter().map(|e| e.name()).collect();
    let mut threads: Vec<i32> = vec![-1];
    let mut cpus: Vec<i64> = vec![-1];
    // Per event: (cpu, thread index) → (value, enabled, running).
    let mut counts: Vec<CountsAt> = vec![Default::default(); meta.events.len()];
    let mut header = false;
    while let Some(rec) = reader.next_record().map_err(bad)? {
        match decode(rec.type_(), rec.raw.payload, meta.endian) {
            Some(UserRecord::ThreadMap(t)) if !t.is_empty() => threads = t,
            Some(UserRecord::CpuMap(c)) if !c.is_empty() => cpus = c,
            Some(UserRecord::Stat {
                id,
                cpu,
                thread,
                value,
                enabled,
                running,
            }) => {
                if let Some(i) = meta.event_of_id(Some(id)) {
                    counts[i].insert((cpu, thread), (value, enabled, running));
                }
            }
            Some(UserRecord::StatRound { time, .. }) => {
                if !header {
                    writeln!(
                        out,
                        "{:>3} {:>8} {:>15} {:>15} {:>15} {:>15} EVENT",
                        "CPU", "THREAD", "VAL", "ENA", "RUN", "TIME"
                    )?;
                    header = true;
                }
                for (i, name) in names.iter().enumerate() {
                    for (t, pid) in threads.iter().enumerate() {
                        for &cpu in &cpus {
                            let (v, e, r) = counts[i]
                                .get(&(cpu as i32, t as i32))
                                .copied()
                                .unwrap_or_default();
                            writeln!(out, "{cpu:3} {pid:8} {v:15} {e:15} {r:15} {time:15} {name}")?;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}
