//! `sear script`: every sample, in time order, as `perf script` prints it.
//!
//! Pass one replays the records and keeps each sample compactly (times,
//! ids, an interned stack id: about 48 bytes a sample); pass two symbolizes
//! each unique location once, on all cores; then each location's callchain
//! lines are formatted once and copied for every sample passing through it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use profile::session::{LeafFilter, ShownTime, TimeClock};
use render::script::{DataSrcColumn, EventKind, FieldPlan, FrameTexts, LineLayout, SampleHeader};

use crate::cli::ScriptArgs;

pub fn run(mut a: ScriptArgs) -> Result<ExitCode> {
    // (perf says these while it reads -F, before anything else.)
    for w in render::script::invalid_field_warnings(a.fields.as_deref().unwrap_or(""))? {
        eprintln!("{w}");
    }
    profile::symbolize::set_full_source_path(a.full_source_path);
    // perf's unsorted dump is its -D with the records in file order.
    a.dump_raw_trace |= a.dump_unsorted_raw_trace;
    // perf turns its ordering of records off for both.
    let order = if a.show.round || a.dump_unsorted_raw_trace {
        perf_data::Order::File
    } else {
        perf_data::Order::Time
    };
    refuse_unsupported(&a)?;
    if a.stitch_lbr {
        eprintln!(
            "Can't find LBR callchain. Switch off --stitch-lbr.\nPlease apply --call-graph lbr when recording."
        );
    }
    use profile::collect::{CollectOptions, Collector};
    use profile::symbolize::SymbolizeOptions;

    let path = super::input_path(&a.input);
    let reader = super::open(&path)?;
    let meta = reader.meta();
    // A `stat record` file: perf script's table of its counts per round.
    if meta
        .features
        .get(perf_data::consts::feature::STAT)
        .is_some()
        && !a.dump_raw_trace
    {
        let mut out = super::paged_stdout();
        let written = record::stat_file::write_script(&path, &mut out);
        super::finish(out)?;
        written?;
        return Ok(ExitCode::SUCCESS);
    }
    // A pipe-mode stream names its events only in its records: then the
    // plan is made after pass one (and checked there).
    if !meta.events.is_empty() {
        FieldPlan::new(meta, a.fields.as_deref(), a.hide_call_graph)?;
    }
    // Fields beyond the header and location need more of each sample kept.
    let asked = a
        .fields
        .as_deref()
        .and_then(|spec| render::script::parse_fields(spec, Default::default()).ok())
        .map(|(f, _)| f)
        .unwrap_or_default();
    let time = a
        .only
        .time_ranges(meta)
        .with_context(|| format!("{}", path.display()))?;
    let dsos = a.dsos.clone().map(|d| d.0);
    let symbols = a.only.symbols();

    let mut out = super::paged_stdout();
    if a.header || a.header_only {
        let info = crate::ui::header_info(&path, a.show_info);
        render::header::write_header(&mut out, meta, &info)?;
        if a.header_only {
            super::finish(out)?;
            return Ok(ExitCode::SUCCESS);
        }
    }

    // Pass one.
    let (machine, kernel) = profile::session::start(meta);
    let collector = Collector::new(CollectOptions {
        max_stack: a.stack.max_stack,
        // Samples without call chains just get empty stacks.
        callchains: true,
        adjust_returns: !a.stack.raw_return_addresses,
        ..CollectOptions::default()
    });
    let mut sink = profile::session::Timeline::new(
        collector,
        profile::session::SampleFilter {
            pids: a.only.pids(),
            tids: a.only.tids(),
            time,
            comms: a.only.comms(),
            cpus: a.only.cpus(),
            time_relative: a.reltime,
        },
    );
    sink.side_band = a.show.side_band();
    sink.switch = a.switch.evswitch(meta)?;
    // Tracepoint samples print their raw data's fields by default.
    let tracepoints = meta.events.iter().any(|e| {
        e.attr.type_ == perf_data::consts::PERF_TYPE_TRACEPOINT
            && e.attr.sample_type & perf_data::consts::PERF_SAMPLE_RAW != 0
    });
    // (A stream names its events as it goes: keep what a tracepoint needs.)
    sink.keep_extra = asked.needs_extra() || tracepoints || meta.is_pipe();
    if asked.addr {
        sink.locate_addr = meta
            .events
            .iter()
            .map(|e| render::script::EventKind::of(&e.attr).addr_correlates)
            .collect();
    }
    let profile::session::Replay {
        machine, reader, ..
    } = profile::session::replay_in(reader, machine, &mut sink, order)
        .with_context(|| format!("reading records of {}", path.display()))?;
    let profile::session::Timeline {
        mut collector,
        samples: kept,
        side,
        extras,
        ..
    } = sink;
    // (What only adding samples needs goes before the passes after it.)
    collector.finish();
    if a.debug_mode {
        // perf's --debug-mode: how many samples came before the one
        // delivered ahead of them (on stderr), and no other output.
        let misordered = kept.windows(2).filter(|w| w[1].time < w[0].time).count();
        eprintln!("Misordered timestamps: {misordered}");
        super::finish(out)?;
        return Ok(ExitCode::SUCCESS);
    }

    let FieldPlan {
        fields,
        event_names,
        name_width,
        chain_of_event,
    } = FieldPlan::new(reader.meta(), a.fields.as_deref(), a.hide_call_graph)?;

    // brstackinsn: the code between the branches read and decoded once
    // per distinct run, each instruction a location pass two names.
    let branch_code = fields.iter().any(|f| f.branch_insns()).then(|| {
        let opts = SymbolizeOptions {
            names: a.names.style(),
            inline: false,
            finder: symbols::DebugFinder::default(),
            srclines: false,
        };
        let dsos = machine.dsos();
        let mut planner = profile::brstackinsn::Planner::new(&mut collector.interner, dsos, &opts);
        let max_blocks = a.max_blocks.unwrap_or(0) as usize;
        for (k, e) in kept.iter().zip(&extras) {
            if let Some(branches) = e.branches.as_deref() {
                let ip = planner.ip_of(k.leaf);
                let s = profile::brstackinsn::SampleCode {
                    ip,
                    ip_loc: k.leaf,
                    branches,
                };
                planner.plan(&s, max_blocks);
            }
        }
        let code = planner.finish();
        let (runs, insns) = code.sizes();
        log::debug!("brstackinsn: {runs} distinct runs of code, {insns} instructions decoded");
        code
    });

    // Pass two.
    let syms = profile::symbolize::pass_two(
        &mut collector,
        &machine,
        kernel,
        &SymbolizeOptions {
            names: a.names.style(),
            inline: !a.no_inline,
            finder: symbols::DebugFinder::default(),
            srclines: fields.iter().any(|f| f.srcline || f.srccode),
        },
    );
    // perf reads the sampled instruction only where the recording's
    // machine is this one's kind (x86-64 here).
    let native = reader
        .meta()
        .features
        .arch()
        .is_none_or(|a| a == std::env::consts::ARCH);
    let insns = if native && fields.iter().any(|f| f.insn || f.insnlen) {
        let opts = SymbolizeOptions {
            names: a.names.style(),
            inline: false,
            finder: symbols::DebugFinder::default(),
            srclines: false,
        };
        let locs = collector.interner.locs();
        profile::symbolize::instruction_bytes(
            locs,
            kept.iter().map(|k| k.leaf),
            machine.dsos(),
            &opts,
        )
    } else {
        Default::default()
    };
    let mut texts = FrameTexts::new(collector.interner.locs(), &syms, machine.dsos(), &fields);
    let mut stack = Vec::new();
    let comm_names = collector.comms();
    let keep = LeafFilter::new(dsos, symbols, &collector, &machine, &syms);
    let mut shown_clock = TimeClock::new(ShownTime::of(a.reltime, a.deltatime));
    let meta = reader.meta();
    let layout_of = |ev: usize| LineLayout {
        name_width,
        callchain: chain_of_event.get(ev).copied().unwrap_or(false) && !a.hide_call_graph,
        nanoseconds: a.ns,
        latency: a.latency,
    };
    let kinds: Vec<EventKind> = meta.events.iter().map(|e| EventKind::of(&e.attr)).collect();
    let bpf_output: Vec<bool> = meta
        .events
        .iter()
        .map(|e| e.attr.type_ == perf_data::consts::PERF_TYPE_SOFTWARE && e.attr.config == 10)
        .collect();
    let arch = meta.features.arch().unwrap_or_default();
    let clock = meta.features.clock_data();
    let tod_of = |t: u64| {
        if fields.iter().any(|f| f.tod) {
            render::script::tod(clock, t, a.ns, crate::ui::local_utc_offset)
        } else {
            String::new()
        }
    };
    let mut tracer = trace_formatter(&path, meta, fields.iter().any(|f| f.trace));
    let mut data_src = DataSrcColumn::default();
    let mut code = SourceCode::default();
    let mut side = side.iter().peekable();
    // -D: each sample's lines are kept apart, to follow its record's dump.
    let mut buf: Vec<u8> = Vec::new();
    let mut chunks: Vec<(u64, i32, usize)> = Vec::new();
    let mut counted = Counting {
        inner: if a.dump_raw_trace { &mut buf } else { &mut out },
        written: 0,
    };
    let w: &mut Counting<'_> = &mut counted;
    // --per-event-dump: each event's sample lines into its own file.
    let mut ev_buf: Vec<u8> = Vec::new();
    // (As perf: a file per event, made at the start, samples or not.)
    let mut dumps: Vec<Option<EventDump>> = Vec::new();
    if a.per_event_dump {
        for name in &event_names {
            let mut p = path.as_os_str().to_owned();
            p.push(format!(".{name}.dump"));
            let p = std::path::PathBuf::from(p);
            let f = std::fs::File::create(&p)
                .with_context(|| format!("creating {} (--per-event-dump)", p.display()))?;
            dumps.push(Some((p, std::io::BufWriter::new(f), 0, 0)));
        }
    }
    for i in 0..=kept.len() {
        // The kernel records shown before this sample (after the last
        // sample, the rest).
        while let Some(r) = side.next_if(|r| r.at <= i) {
            if r.type_ == perf_data::PERF_RECORD_FINISHED_ROUND {
                render::script::write_finished_round(&mut *w)?;
                continue;
            }
            if let (Some((_, f)), Ok((data, sid))) = (
                texts.fields_of_event(r.event),
                meta.parse_other(r.type_, r.misc, &r.payload),
            ) {
                let tod = tod_of(r.time);
                let shown = (shown_clock.shown(r.time), tod.as_str());
                let rec = (meta, &data, &sid);
                render::script::write_side_band(&mut *w, r, shown, f, &layout_of(r.event), rec)?;
            }
        }
        let Some(k) = kept.get(i).filter(|k| keep.keeps(k.leaf)) else {
            continue;
        };
        let ev = k.event as usize;
        let Some((set, f)) = texts.fields_of_event(ev) else {
            continue;
        };
        let f = *f;
        // perf prints nothing for an event `-F` left no field to.
        if f == render::script::Fields::default() {
            continue;
        }
        let layout = layout_of(ev);
        let chain = layout.callchain;
        let extra = extras.get(i);
        let tod = tod_of(k.time);
        let h = SampleHeader {
            comm: &comm_names[k.comm as usize],
            pid: k.pid,
            tid: k.tid,
            cpu: k.cpu,
            time: shown_clock.shown(k.time),
            period: k.period,
            event: event_names.get(ev).map_or("[unknown]", String::as_str),
            misc: extra.map_or(0, |e| e.misc),
            record_type: perf_data::consts::PERF_RECORD_SAMPLE,
            tod: &tod,
        };
        let sw: &mut dyn Write = if a.per_event_dump {
            ev_buf.clear();
            &mut ev_buf
        } else {
            &mut *w
        };
        render::script::write_header(&mut *sw, &h, &f, &layout)?;
        if f.trace {
            let raw = extra.and_then(|e| e.raw.as_deref());
            if let (Some(t), Some(raw)) = (tracer.as_mut(), raw) {
                let id = meta.events.get(ev).map_or(0, |e| e.attr.config);
                if let Some(text) = t.format(id, k.cpu, raw) {
                    sw.write_all(text.as_bytes())?;
                }
            }
        }
        let kind = kinds.get(ev).copied().unwrap_or_default();
        render::script::write_before_location(
            &mut *sw,
            extra,
            &f,
            kind,
            (&mut texts, set),
            &mut data_src,
        )?;
        if f.ip {
            render::script::write_location_start(&mut *sw, chain)?;
            if chain {
                collector.interner.stack(k.stack, &mut stack);
                for &loc in &stack {
                    sw.write_all(texts.text(set, true, loc))?;
                    // --stop-bt: the chain ends at a frame of these.
                    if !a.stop_bt.is_empty() && texts.has_frame_named(loc, &a.stop_bt) {
                        break;
                    }
                }
            } else {
                sw.write_all(texts.text(set, false, k.leaf))?;
            }
        }
        let insn = insns.get(&k.leaf).map(Vec::as_slice);
        let branch_insns = branch_code
            .as_ref()
            .map(|code| render::script::BranchInsns {
                code,
                ip: collector.interner.locs()[k.leaf as usize].ip,
                ip_loc: k.leaf,
                max_blocks: a.max_blocks.unwrap_or(0) as usize,
            });
        render::script::write_after_location(
            &mut *sw,
            extra,
            &f,
            &arch,
            &texts,
            (insn, branch_insns),
        )?;
        if f.bpf_output && bpf_output.get(ev).copied().unwrap_or(false) {
            // (perf's dump of the event's data: empty in offcpu-time.)
            sw.write_all(b"\n")?;
        }
        render::script::write_end(&mut *sw)?;
        if f.srccode {
            let pos = syms.per_loc.get(k.leaf as usize).and_then(|l| l.line);
            code.write(&mut *sw, k.thread, pos, &syms.paths)?;
        }
        if a.per_event_dump {
            if dumps.len() <= ev {
                dumps.resize_with(ev + 1, || None);
            }
            if dumps[ev].is_none() {
                let name = event_names.get(ev).map_or("[unknown]", String::as_str);
                let mut p = path.as_os_str().to_owned();
                p.push(format!(".{name}.dump"));
                let p = std::path::PathBuf::from(p);
                let f = std::fs::File::create(&p)
                    .with_context(|| format!("creating {} (--per-event-dump)", p.display()))?;
                dumps[ev] = Some((p, std::io::BufWriter::new(f), 0, 0));
            }
            if let Some((_, f, bytes, n)) = dumps[ev].as_mut() {
                f.write_all(&ev_buf)?;
                *bytes += ev_buf.len() as u64;
                *n += 1;
            }
        }
        if a.dump_raw_trace {
            chunks.push((k.time, k.tid, w.written));
        }
    }
    if a.dump_raw_trace {
        dump_with_samples(&path, &mut out, &buf, &chunks, order)?;
    }
    for (p, mut f, bytes, n) in dumps.into_iter().flatten() {
        f.flush()
            .with_context(|| format!("writing {} (--per-event-dump)", p.display()))?;
        // perf states the size the file had on disk before its last
        // flush: whole 4 KiB buffers.
        let flushed = bytes - bytes % 4096;
        writeln!(
            out,
            "[ sear script: Wrote {:.3} MB {} ({n} samples) ]",
            flushed as f64 / 1024.0 / 1024.0,
            p.display()
        )?;
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

/// `--per-event-dump`: an event's file, the writer into it, and the bytes
/// and samples written.
type EventDump = (
    std::path::PathBuf,
    std::io::BufWriter<std::fs::File>,
    u64,
    u64,
);

/// perf script's `srccode`: the text of the sample's source line, as
/// `|LINE     text`, unless it is the line this thread showed last.
struct SourceCode {
    files: profile::annotate::SourceFiles,
    last: std::collections::HashMap<u32, profile::symbolize::SrcPos>,
}

impl Default for SourceCode {
    fn default() -> Self {
        SourceCode {
            files: profile::annotate::SourceFiles::raw(),
            last: Default::default(),
        }
    }
}

impl SourceCode {
    fn write(
        &mut self,
        out: &mut dyn Write,
        thread: u32,
        pos: Option<profile::symbolize::SrcPos>,
        names: &[String],
    ) -> std::io::Result<()> {
        let Some(p) = pos else { return Ok(()) };
        if self.last.get(&thread) == Some(&p) {
            return Ok(());
        }
        let Some(text) = names
            .get(p.file as usize)
            .and_then(|name| self.files.line(name, p.line))
        else {
            return Ok(());
        };
        writeln!(out, "|{:<8} {text}", p.line)?;
        self.last.insert(thread, p);
        Ok(())
    }
}

/// `script -D`: every record raw and decoded, as perf script dumps them,
/// each sample's script lines (`lines`, cut at `chunks`: the sample's time,
/// tid and end) after its record.
fn dump_with_samples(
    path: &std::path::Path,
    out: &mut dyn Write,
    lines: &[u8],
    chunks: &[(u64, i32, usize)],
    order: perf_data::Order,
) -> Result<()> {
    use profile::session::Step;
    if path == std::path::Path::new("-") {
        anyhow::bail!("script -D reads the recording twice: give it a file (-i FILE), not stdin");
    }
    let reader = super::open(path)?;
    // perf's warning is for its fallback, not for file order asked for.
    let fallback = reader
        .meta()
        .events
        .first()
        .is_some_and(|e| !e.attr.sample_id_all());
    let mut reader = perf_data::OrderedReader::new(reader, order);
    let mut dumper =
        render::dump::Dumper::new(&path.display().to_string(), reader.meta()).for_script();
    // (Also where perf falls back to file order: its round handler is then missing too.)
    if reader.order() == perf_data::Order::File {
        dumper = dumper.unordered();
    }
    dumper.script_preamble(out, fallback)?;
    let (mut next, mut start) = (0usize, 0usize);
    profile::session::each_record(&mut reader, |step| -> Result<()> {
        match step {
            Step::Record(rec, site) => {
                dumper.record(out, rec, site.as_ref())?;
                if rec.type_() == perf_data::PERF_RECORD_SAMPLE {
                    if let Ok(s) = rec.sample() {
                        let key = (s.time.unwrap_or(0), s.tid.map_or(-1, |t| t as i32));
                        while let Some(&(t, tid, end)) = chunks.get(next) {
                            if (t, tid) != key {
                                break;
                            }
                            out.write_all(&lines[start..end])?;
                            start = end;
                            next += 1;
                        }
                    }
                }
            }
            Step::DroppedParent(d) => render::dump::removed_parent(out, d)?,
        }
        Ok(())
    })
    .with_context(|| format!("reading records of {}", path.display()))?;
    // Lines of records the dump did not reach (side-band after the last
    // sample).
    out.write_all(&lines[start..])?;
    Ok(())
}

/// The recording's tracepoint formats, where a field shown needs them; what
/// cannot be read is said once and the fields are left out.
pub(super) fn trace_formatter(
    path: &std::path::Path,
    meta: &perf_data::Meta,
    wanted: bool,
) -> Option<traceevent::Formatter> {
    if !wanted {
        return None;
    }
    let Some(section) = meta.features.get(perf_data::consts::feature::TRACING_DATA) else {
        log::warn!(
            "{}: tracepoint samples without the recording's TRACING_DATA (the events' \
             formats): their fields are not printed",
            path.display()
        );
        return None;
    };
    match traceevent::Formatter::new(section) {
        Ok(mut f) => {
            // Kernel addresses in fields (`%pS`) by the recording's kernel
            // symbols, as perf resolves them with its kernel map.
            let kernel_id = meta
                .features
                .build_ids()
                .unwrap_or_default()
                .into_iter()
                .find(|e| e.filename == "[kernel.kallsyms]")
                .map(|e| e.build_id);
            match symbols::KernelFinder::default().for_recording(kernel_id.as_deref(), None) {
                Ok(k) => f.set_kernel_symbols(
                    k.iter()
                        .map(|(start, _, name, _)| (start, name.to_owned()))
                        .collect(),
                ),
                Err(r) => log::debug!("kernel symbols for tracepoint fields: {r:?}"),
            }
            for (system, first) in &f.refused {
                log::warn!(
                    "{}: libtraceevent cannot read the format of a {system} event ({first}): \
                     its samples' fields are not printed",
                    path.display()
                );
            }
            Some(f)
        }
        Err(e) => {
            log::warn!("{}: {e}: tracepoint fields are not printed", path.display());
            None
        }
    }
}

/// A writer that counts what goes through it.
struct Counting<'a> {
    inner: &'a mut dyn Write,
    written: usize,
}

impl Write for Counting<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(b)?;
        self.written += n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// perf script's options for what sear does not do: scripting (out of
/// scope), hardware traces, guests, a vmlinux, dlfilters and xed; each
/// refused saying why.
fn refuse_unsupported(a: &ScriptArgs) -> Result<()> {
    let u = &a.unsupported;
    if u.script.is_some() || u.gen_script.is_some() || u.list {
        anyhow::bail!(
            "Python and Perl scripts (-s/--script, -g/--gen-script, -l/--list) are out of sear's \
             scope: read `sear script` text (or `-F` fields) from your script instead, or use \
             `sear export` (pprof, Firefox Profiler, speedscope) for tools"
        );
    }
    if u.dlfilter.is_some() || u.dlarg.is_some() || u.list_dlfilters {
        anyhow::bail!(
            "dlfilters (--dlfilter, --dlarg, --list-dlfilters) load perf's C plugin API, which \
             sear does not provide; filter with --comms, --pid, --tid, --cpu, --time, -S or \
             --dsos"
        );
    }
    if u.itrace.is_some()
        || u.insn_trace
        || u.call_trace
        || u.call_ret_trace
        || u.graph_function.is_some()
        || u.addr_range.is_some()
    {
        anyhow::bail!(
            "--itrace, --insn-trace, --call-trace, --call-ret-trace, --graph-function and \
             --addr-range decode hardware instruction traces (Intel PT, Arm CoreSight), which \
             this recording cannot hold here: this machine has no such tracer"
        );
    }
    if u.xed {
        anyhow::bail!(
            "--xed pipes the output through Intel's xed disassembler, which sear does not run"
        );
    }
    if u.guestmount.is_some()
        || u.guestkallsyms.is_some()
        || u.guestmodules.is_some()
        || u.guestvmlinux.is_some()
        || u.guest_code
    {
        anyhow::bail!(
            "guest options (--guestmount, --guestkallsyms, --guestmodules, --guestvmlinux, \
             --guest-code) read virtual machines' samples (perf kvm), which sear does not record"
        );
    }
    super::refuse_vmlinux(u.vmlinux.as_deref())?;
    Ok(())
}
