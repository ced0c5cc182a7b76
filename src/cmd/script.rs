//! `sear script`: every sample, in time order, as `perf script` prints it.
//!
//! Pass one replays the records and keeps each sample compactly (times,
//! ids, an interned stack id: about 48 bytes a sample); pass two symbolizes
//! each unique location once, on all cores; then each location's callchain
//! lines are formatted once and copied for every sample passing through it.

use std::process::ExitCode;

use anyhow::{Context, Result};
use perf_data::consts::*;
use render::script::{Fields, Frame, Header, Layout};

use crate::cli::ScriptArgs;

/// perf's defaults for an event, less what its samples do not carry.
fn default_fields(attr: &perf_data::attr::EventAttr, any_callchain: bool) -> Fields {
    let st = attr.sample_type;
    let has = |bit: u64| st & bit != 0;
    let tracepoint = attr.type_ == PERF_TYPE_TRACEPOINT;
    let ip = has(PERF_SAMPLE_IP) && (!tracepoint || any_callchain);
    Fields {
        comm: true,
        pid: false,
        tid: has(PERF_SAMPLE_TID),
        cpu: has(PERF_SAMPLE_CPU),
        time: has(PERF_SAMPLE_TIME),
        // Without PERIOD in the samples perf prints the attr's period.
        period: !tracepoint,
        event: true,
        ip,
        sym: ip,
        symoff: ip && !tracepoint,
        dso: ip,
        srcline: false,
    }
}

/// What each field needs in the samples, for the error perf gives.
fn check_available(f: &Fields, attr: &perf_data::attr::EventAttr, name: &str) -> Result<()> {
    let st = attr.sample_type;
    let needs = [
        (f.pid || f.tid, PERF_SAMPLE_TID, "TID", "pid/tid"),
        (f.cpu, PERF_SAMPLE_CPU, "CPU", "cpu"),
        (f.time, PERF_SAMPLE_TIME, "TIME", "time"),
        (f.ip || f.sym || f.dso, PERF_SAMPLE_IP, "IP", "ip/sym/dso"),
    ];
    for (wanted, bit, attr_name, field) in needs {
        if wanted && st & bit == 0 {
            anyhow::bail!(
                "samples for '{name}' event do not have {attr_name} attribute set; \
                 cannot print '{field}' field"
            );
        }
    }
    check_srcline(f)
}

/// perf prints a source line only after the location's address.
fn check_srcline(f: &Fields) -> Result<()> {
    if f.srcline && !f.ip {
        anyhow::bail!(
            "-F: `srcline` needs `ip`: the source line is looked up at the sample's address"
        );
    }
    Ok(())
}

/// Applies `-F` to an event's defaults: a list replaces them, `+f`/`-f`
/// items change them.
fn parse_fields(spec: &str, defaults: Fields) -> Result<(Fields, bool)> {
    // perf's `TYPE:` prefix selects an event type; sear applies the list
    // to every event.
    let spec = match spec.split_once(':') {
        Some((ty, rest)) if ["hw", "sw", "trace", "raw", "synth", "break"].contains(&ty) => rest,
        _ => spec,
    };
    let modify = spec.starts_with('+') || spec.starts_with('-');
    let mut f = if modify { defaults } else { Fields::default() };
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (on, name) = match item.as_bytes()[0] {
            b'+' => (true, &item[1..]),
            b'-' => (false, &item[1..]),
            _ if modify => {
                anyhow::bail!("-F {spec}: `{item}`: mix of +/- and plain fields; write +{item}")
            }
            _ => (true, item),
        };
        match f.flag(name) {
            Some(v) => *v = on,
            None => anyhow::bail!(
                "-F: `{name}` is not a field sear prints (yet); known: {}",
                Fields::NAMES.join(", ")
            ),
        }
    }
    Ok((f, !modify))
}

/// What is printed for each event.
struct Plan {
    fields: Vec<Fields>,
    event_names: Vec<String>,
    /// The longest event name.
    name_width: usize,
    /// Whether the event's samples print as call chains.
    chain_of_event: Vec<bool>,
}

impl Plan {
    fn new(meta: &perf_data::Meta, spec: Option<&str>) -> Result<Plan> {
        let any_callchain = meta
            .events
            .iter()
            .any(|e| e.attr.sample_type & PERF_SAMPLE_CALLCHAIN != 0);
        let mut fields = Vec::with_capacity(meta.events.len());
        for e in &meta.events {
            let d = default_fields(&e.attr, any_callchain);
            let f = match spec {
                None => d,
                Some(spec) => {
                    let (f, user_set) = parse_fields(spec, d)?;
                    if user_set {
                        check_available(&f, &e.attr, &e.name())?;
                    } else {
                        check_srcline(&f)?;
                    }
                    f
                }
            };
            fields.push(f);
        }
        let event_names: Vec<String> = meta.events.iter().map(|e| e.name()).collect();
        let name_width = event_names.iter().map(String::len).max().unwrap_or(0);
        let chain_of_event = meta
            .events
            .iter()
            .map(|e| e.attr.sample_type & PERF_SAMPLE_CALLCHAIN != 0)
            .collect();
        Ok(Plan {
            fields,
            event_names,
            name_width,
            chain_of_event,
        })
    }
}

/// `START,STOP` in seconds (as printed) to nanoseconds, both inclusive.
fn parse_time_range(s: &str) -> Result<(u64, u64)> {
    let (a, b) = s
        .split_once(',')
        .with_context(|| format!("--time {s}: expected START,STOP (either may be empty)"))?;
    let secs = |x: &str, empty: u64| -> Result<u64> {
        let x = x.trim();
        if x.is_empty() {
            return Ok(empty);
        }
        let (whole, frac) = x.split_once('.').unwrap_or((x, ""));
        let bad = || anyhow::anyhow!("--time {s}: `{x}` is not a time in seconds like 1234.567890");
        if frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        let whole: u64 = whole.parse().map_err(|_| bad())?;
        let frac: u64 = if frac.is_empty() {
            0
        } else {
            format!("{frac:0<9}").parse().map_err(|_| bad())?
        };
        whole
            .checked_mul(1_000_000_000)
            .and_then(|w| w.checked_add(frac))
            .ok_or_else(bad)
    };
    let (start, stop) = (secs(a, 0)?, secs(b, u64::MAX)?);
    if start > stop {
        anyhow::bail!("--time {s}: the start is after the stop");
    }
    Ok((start, stop))
}

pub fn run(a: ScriptArgs) -> Result<ExitCode> {
    use profile::resolve::{CollectOptions, Collector};
    use profile::symbolize::SymbolizeOptions;

    let path = super::input_path(&a.input);
    let reader = super::open(&path)?;
    let meta = reader.meta();
    // A pipe-mode stream names its events only in its records: then the
    // plan is made after pass one (and checked there).
    if !meta.events.is_empty() {
        Plan::new(meta, a.fields.as_deref())?;
    }
    let comms = super::name_list(&a.comms);
    let pids = super::id_list(&a.pid)?;
    let tids = super::id_list(&a.tid)?;
    let time = a.time.as_deref().map(parse_time_range).transpose()?;

    let mut out = super::paged_stdout();
    if a.header {
        let info = render::header::FileInfo {
            mtime: super::report::file_mtime(&path),
            show_info: false,
            utc_offset: super::report::local_utc_offset,
        };
        render::header::write_header(&mut out, meta, &info)?;
    }

    // Pass one.
    let (machine, kernel) = profile::session::start(meta);
    let collector = Collector::new(CollectOptions {
        max_stack: a.max_stack,
        // Samples without call chains just get empty stacks.
        callchains: true,
        adjust_returns: !a.raw_return_addresses,
        by_cpu: false,
    });
    let mut sink = profile::session::Timeline::new(
        collector,
        profile::session::SampleFilter {
            pids,
            tids,
            time,
            comms,
        },
    );
    let profile::session::Replay {
        machine, reader, ..
    } = profile::session::replay(reader, machine, &mut sink)
        .with_context(|| format!("reading records of {}", path.display()))?;
    let profile::session::Timeline {
        collector,
        samples: kept,
        ..
    } = sink;

    let Plan {
        fields,
        event_names,
        name_width,
        chain_of_event,
    } = Plan::new(reader.meta(), a.fields.as_deref())?;

    // Pass two.
    let syms = profile::symbolize::pass_two(
        &collector,
        &machine,
        kernel,
        &SymbolizeOptions {
            names: a.names.style(),
            inline: !a.no_inline,
            finder: symbols::DebugFinder::default(),
            srclines: fields.iter().any(|f| f.srcline),
        },
    );
    let locs = collector.interner.locs();
    // perf's script prints a sample's own DSO by its long name (kernel
    // modules by path) but callchain frames of kernel modules by their
    // short `[module]` names.
    let dso_names: Vec<&str> = machine.dsos().iter().map(|d| d.name.as_str()).collect();
    // Maps without a file behind them (JIT, heap, stack, SysV shared
    // memory) translate addresses as they are: perf prints process addresses.
    let identity_map: Vec<bool> = machine
        .dsos()
        .iter()
        .map(|d| {
            let n = d.name.as_str();
            profile::hist::dso_short_name(n).starts_with("[JIT]")
                || n.starts_with("[stack")
                || n == "[heap]"
                || n.starts_with("/SYSV")
                || n.starts_with("//anon")
        })
        .collect();
    // perf names an address without a source line by the DSO's short name.
    let short_dso_names: Vec<String> = machine
        .dsos()
        .iter()
        .map(|d| profile::hist::dso_short_name(&d.name))
        .collect();
    let chain_dso_names: Vec<String> = machine
        .dsos()
        .iter()
        .map(|d| {
            let short = profile::hist::dso_short_name(&d.name);
            let module =
                d.name.starts_with('/') && short.starts_with('[') && !short.starts_with("[JIT]");
            if module {
                short
            } else {
                d.name.clone()
            }
        })
        .collect();

    // Each location's text, made once per field set and use (callchain
    // lines, or the sample's own location on its header line).
    let mut field_sets: Vec<Fields> = Vec::new();
    let set_of_event: Vec<usize> = fields
        .iter()
        .map(|f| match field_sets.iter().position(|g| g == f) {
            Some(i) => i,
            None => {
                field_sets.push(*f);
                field_sets.len() - 1
            }
        })
        .collect();
    let mut arena: Vec<u8> = Vec::new();
    // Per (field set, chain?) and loc: the range in `arena`, once made.
    let mut cache: Vec<Vec<Option<(usize, usize)>>> =
        vec![vec![None; locs.len()]; field_sets.len() * 2];
    let mut text = |set: usize, chain: bool, loc: u32, arena: &mut Vec<u8>| -> (usize, usize) {
        let slot = &mut cache[set * 2 + usize::from(chain)][loc as usize];
        if let Some(r) = *slot {
            return r;
        }
        let start = arena.len();
        let l = &locs[loc as usize];
        let f = &field_sets[set];
        let dso = (l.dso != profile::resolve::NO_DSO).then(|| {
            if chain {
                chain_dso_names[l.dso as usize].as_str()
            } else {
                dso_names[l.dso as usize]
            }
        });
        let ls = &syms.per_loc[loc as usize];
        // No DSO: `rel` is the address itself.
        let identity = identity_map.get(l.dso as usize).copied().unwrap_or(true);
        let addr = if chain && !identity { l.rel } else { l.ip };
        let pos_text = |p: &profile::symbolize::SrcPos| {
            let file = syms.files.get(p.file as usize).map_or("??", String::as_str);
            format!("{file}:{}", p.line)
        };
        // The location's own source line, as perf's map__fprintf_srcline
        // prints it: none without a map; `??:0` (addr2line found the
        // symbol but no line) is left out; where addr2line has no answer,
        // the DSO's short name and the address in the binary's terms.
        let own_srcline: Option<String> = (f.srcline && l.dso != profile::resolve::NO_DSO)
            .then(|| match &ls.line {
                Some(p) => Some(pos_text(p)).filter(|t| !t.starts_with("??:0")),
                None => {
                    let at = ls.svma.unwrap_or(if identity { l.ip } else { l.rel });
                    let dso = short_dso_names
                        .get(l.dso as usize)
                        .map_or("", String::as_str);
                    Some(format!("{dso}[{at:x}]"))
                }
            })
            .flatten();
        let frame_of = |sym: Option<u32>| {
            let s = sym.map(|i| &syms.syms[i as usize]);
            Frame {
                addr,
                // The offset of the recorded address (one past the one
                // looked up for a return address looked up at address - 1);
                // inline frames keep their function's start.
                sym: s.map(|s| (s.name.as_str(), ls.sym_offset)),
                inlined: s.is_some_and(|s| s.inlined),
                dso,
                srcline: None,
            }
        };
        // Writing to a Vec cannot fail.
        if chain && !ls.frames.is_empty() {
            // Frames perf made from addr2line's inline records carry their
            // own positions, printed as they are (`??:0` too).
            let per_frame = f.srcline && ls.frame_lines.len() == ls.frames.len();
            for (i, &fid) in ls.frames.iter().enumerate() {
                let text = per_frame.then(|| pos_text(&ls.frame_lines[i]));
                let mut fr = frame_of(Some(fid));
                fr.srcline = if per_frame {
                    text.as_deref()
                } else {
                    own_srcline.as_deref()
                };
                let _ = render::script::write_frame(arena, &fr, f, true);
            }
        } else {
            let mut fr = frame_of(ls.sym);
            fr.srcline = own_srcline.as_deref();
            let _ = render::script::write_frame(arena, &fr, f, chain);
        }
        let r = (start, arena.len());
        *slot = Some(r);
        r
    };

    let mut stack = Vec::new();
    let comm_names = collector.comms();
    for k in &kept {
        let ev = k.event as usize;
        let set = set_of_event.get(ev).copied().unwrap_or(0);
        let Some(f) = field_sets.get(set) else {
            continue;
        };
        let chain = chain_of_event.get(ev).copied().unwrap_or(false);
        let h = Header {
            comm: &comm_names[k.comm as usize],
            pid: k.pid,
            tid: k.tid,
            cpu: k.cpu,
            time: k.time,
            period: k.period,
            event: event_names.get(ev).map_or("[unknown]", String::as_str),
        };
        let layout = Layout {
            name_width,
            callchain: chain,
            nanoseconds: a.ns,
        };
        render::script::write_header(&mut out, &h, f, &layout)?;
        if f.ip {
            render::script::write_location_start(&mut out, chain)?;
            if chain {
                collector.interner.stack(k.stack, &mut stack);
                for &loc in &stack {
                    let (s, e) = text(set, true, loc, &mut arena);
                    std::io::Write::write_all(&mut out, &arena[s..e])?;
                }
            } else {
                let (s, e) = text(set, false, k.leaf, &mut arena);
                std::io::Write::write_all(&mut out, &arena[s..e])?;
            }
        }
        render::script::write_end(&mut out)?;
    }
    super::finish(out)?;
    crate::ui::print_diagnostics(&path, reader.diagnostics());
    if collector.unwind_failures > 0 {
        log::info!(
            "{} samples could not be unwound past their first frame",
            collector.unwind_failures
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ranges() {
        assert_eq!(
            parse_time_range("1.5,2").unwrap(),
            (1_500_000_000, 2_000_000_000)
        );
        assert_eq!(
            parse_time_range(",3.000000001").unwrap(),
            (0, 3_000_000_001)
        );
        assert_eq!(parse_time_range("4,").unwrap().1, u64::MAX);
        assert!(parse_time_range("4").is_err());
        assert!(parse_time_range("x,1").is_err());
        assert!(parse_time_range("2,1").is_err());
        assert!(parse_time_range("1.0000000001,").is_err());
    }

    #[test]
    fn field_lists() {
        let d = Fields {
            comm: true,
            tid: true,
            ip: true,
            ..Default::default()
        };
        let (f, user) = parse_fields("comm,pid", d).unwrap();
        assert!(user && f.comm && f.pid && !f.tid && !f.ip);
        let (f, user) = parse_fields("-ip,+cpu", d).unwrap();
        assert!(!user && f.comm && f.tid && f.cpu && !f.ip);
        let (f, _) = parse_fields("sw:tid", d).unwrap();
        assert!(f.tid && !f.comm);
        assert!(parse_fields("+cpu,ip", d).is_err());
        assert!(parse_fields("nonsense", d).is_err());
    }
}
