//! `sear top`: perf top's live hotspot table.
//!
//! Three threads: the recorder (`record::record`, the same code as `sear
//! record`, writing a pipe-mode stream into an in-process pipe), the reader
//! (that stream read by perf_data and pushed record by record into a
//! `profile::session::Live` summing session, the model and sums behind a
//! lock) and this one, which at each refresh looks up the symbols of the
//! addresses new since the last refresh (`symbolize::Incremental`: a binary
//! is read when its first sample arrives), decays the older samples (by
//! 7/8, as perf top; `-z` starts from zero) and builds the table with the
//! report's code (`report_browser::Table`), shown in the browser or printed
//! (`--stdio`).

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use profile::collect::{SampleKey, SampleSum};
use profile::report::Parts;
use profile::session::{Live, SumOptions, Summing};

use super::report_browser::{Table, TableSetup};
use crate::cli::TopArgs;
use crate::ui::browser::{Action, Annotation, Source, View};

/// The live session, filled by the reader thread.
struct Feed {
    live: Live<Summing>,
    /// The stream's metadata (events arrive as records in pipe mode).
    meta: perf_data::Meta,
}

#[derive(Default)]
struct Shared {
    feed: Option<Feed>,
    /// Why the stream ended (the command exited, an error), once it has.
    ended: Option<String>,
}

type Locked = Arc<Mutex<Shared>>;

fn lock(s: &Locked) -> std::sync::MutexGuard<'_, Shared> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// `sear record`'s options for what top samples: the same parser, so the
/// flags mean what they mean there.
fn record_options(a: &TopArgs) -> Result<record::Options> {
    let mut argv: Vec<std::ffi::OsString> =
        vec!["sear".into(), "record".into(), "-o".into(), "-".into()];
    let mut push = |flag: &str, v: Option<String>| {
        argv.push(flag.into());
        if let Some(v) = v {
            argv.push(v.into());
        }
    };
    for e in &a.event {
        push("-e", Some(e.clone()));
    }
    if let Some(f) = &a.freq {
        push("-F", Some(f.clone()));
    }
    if let Some(c) = a.count {
        push("-c", Some(c.to_string()));
    }
    if a.g {
        push("-g", None);
    }
    if let Some(cg) = &a.call_graph {
        push("--call-graph", Some(cg.clone()));
    }
    if let Some(p) = &a.tasks.pid {
        push(
            "-p",
            Some(
                p.0.iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
        );
    }
    if let Some(t) = &a.tasks.tid {
        push(
            "-t",
            Some(
                t.0.iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
        );
    }
    let targets = a.tasks.pid.is_some() || a.tasks.tid.is_some() || !a.command.is_empty();
    if a.all_cpus || !targets || a.cpu.is_some() {
        push("-a", None);
    }
    if let Some(c) = &a.cpu {
        push("-C", Some(c.1.clone()));
    }
    if let Some(m) = &a.mmap_pages {
        push("-m", Some(m.clone()));
    }
    if !a.command.is_empty() {
        argv.push("--".into());
        argv.extend(a.command.iter().cloned());
    }
    use clap::Parser;
    let cli = crate::cli::Cli::try_parse_from(argv)?;
    let crate::cli::Command::Record(ra) = cli.command else {
        anyhow::bail!("not a record command line");
    };
    super::record::options(&ra, true)
}

pub fn run(a: TopArgs) -> Result<ExitCode> {
    if !(a.delay.is_finite() && a.delay > 0.0) {
        anyhow::bail!(
            "-d/--delay {}: the refresh interval is a positive number of seconds",
            a.delay
        );
    }
    let opts = record_options(&a)?;
    record::check(&opts)?;
    let graphs = a.g || a.call_graph.is_some();
    // (The request lives as long as top does.)
    let sort: &'static str = Box::leak(
        a.sort
            .clone()
            .unwrap_or_else(|| "dso,sym".into())
            .into_boxed_str(),
    );
    let request = profile::report::Request {
        layout: profile::fields::LayoutOptions {
            fields: None,
            sort: Some(sort),
            children: graphs && !a.no_children,
            show_nr_samples: a.show_nr_samples,
            show_total_period: false,
            show_cpu_utilization: false,
            parent: false,
            group_sort_idx: 0,
            branch: false,
            mem: false,
        },
        parent: None,
        ignore_callees: None,
        graph: crate::config::call_graph_params(),
        max_stack: 127,
        adjust_returns: true,
        time_quantum: 100_000_000,
        nanosecs: false,
        verbose: false,
        branch_history: false,
    };
    let early = request.early()?;
    let sum_opts = SumOptions {
        collect: request.collect_options(&early),
        names: crate::cli::NameArgs {
            no_demangle: false,
            short_names: false,
            demangle: false,
            demangle_kernel: false,
        }
        .style(),
        // (Names only: no inline frames or source lines in top's table.)
        ..SumOptions::default()
    };

    // The recorder writes a pipe-mode stream into a pipe; the reader
    // thread sums it.
    let (rx, tx) = std::io::pipe().context("making a pipe for the recording")?;
    let recorder = std::thread::Builder::new()
        .name("sear-top-record".into())
        .spawn(move || record::record(&opts, record::Output::Pipe(Box::new(tx))))?;
    let shared: Locked = Arc::default();
    {
        let shared = shared.clone();
        let so = sum_opts.clone();
        std::thread::Builder::new()
            .name("sear-top-read".into())
            .spawn(move || read_stream(rx, &shared, &so))?;
    }
    let mut top = Top {
        shared,
        request,
        early: Some(early),
        table: None,
        syms: profile::symbolize::Incremental::new(profile::symbolize::SymbolizeOptions {
            names: sum_opts.names,
            ..Default::default()
        }),
        names: sum_opts.names,
        decayed: Vec::new(),
        index: HashMap::new(),
        zero: a.zero,
        hide_kernel: a.hide_kernel,
        hide_user: a.hide_user,
        percent_limit: a.percent_limit.unwrap_or(0.0),
        entries: a.entries.unwrap_or(0),
        delay: Duration::from_secs_f64(a.delay),
        last: Instant::now(),
        target: if !a.command.is_empty() || a.tasks.pid.is_some() || a.tasks.tid.is_some() {
            "tasks".into()
        } else {
            match &a.cpu {
                Some(c) => format!("CPU {}", c.1),
                None => "all".into(),
            }
        },
        freq: a.freq.clone(),
        view: View::default(),
        samples_seen: 0,
        rate: 0.0,
        kernel_share: 0.0,
        ended: None,
    };
    let browse = !a.stdio && crate::ui::browser::available() && keys_readable();
    if a.tui && !browse {
        log::warn!("--tui: stdout is not a terminal (or TERM is dumb): printing the table");
    }
    let r = if browse {
        top.refresh();
        crate::ui::browser::run(&mut top).map_err(anyhow::Error::from)
    } else {
        print_loop(&mut top)
    };
    record::request_stop();
    wake(&recorder);
    // The recording ends and, with it, a command top started; a stream
    // that will not end is not waited for.
    let end = Instant::now() + Duration::from_secs(3);
    while !recorder.is_finished() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    r?;
    Ok(ExitCode::SUCCESS)
}

/// Wakes the recorder's poll (SIGCHLD has a handler without SA_RESTART).
fn wake<T>(t: &std::thread::JoinHandle<T>) {
    use std::os::unix::thread::JoinHandleExt;
    if !t.is_finished() {
        // SAFETY: the thread is alive (checked just above; a race ends in
        // ESRCH, which is ignored).
        unsafe { libc::pthread_kill(t.as_pthread_t() as libc::pthread_t, libc::SIGCHLD) };
    }
}

/// Whether keys can be read: stdin is a terminal, or there is a
/// controlling terminal (crossterm reads keys from /dev/tty then).
fn keys_readable() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() || std::fs::File::open("/dev/tty").is_ok()
}

/// The reader thread: the stream's records into the live session.
fn read_stream(rx: std::io::PipeReader, shared: &Locked, so: &SumOptions) {
    let reader = match perf_data::RecordReader::from_stream(Box::new(rx)) {
        Ok(r) => r,
        Err(e) => {
            lock(shared).ended = Some(format!("the recording could not start: {e}"));
            return;
        }
    };
    let (machine, _kernel) = profile::session::start(reader.meta());
    lock(shared).feed = Some(Feed {
        live: Live::new(machine, Summing::new(so)),
        meta: as_whole(reader.meta()),
    });
    let mut reader = perf_data::OrderedReader::new(reader, perf_data::Order::Time);
    loop {
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => {
                lock(shared).ended = Some("the recording ended".into());
                return;
            }
            Err(e) => {
                lock(shared).ended = Some(format!("the recording stopped: {e}"));
                return;
            }
        };
        // (pipe mode: attrs and the like come as records of perf's own
        // types, from 64 on, and change the metadata.)
        let meta_changed = rec.type_() >= 64;
        let mut g = lock(shared);
        let Some(f) = g.feed.as_mut() else {
            return;
        };
        f.live.push(&rec);
        if meta_changed {
            f.meta = as_whole(reader.meta());
        }
    }
}

/// The stream's metadata, for the table: the live session is summed as a
/// whole recording is (perf report's pipe-mode rule, no children
/// accumulation, is not top's).
fn as_whole(m: &perf_data::Meta) -> perf_data::Meta {
    let mut m = m.clone();
    m.kind = perf_data::Kind::File;
    m
}

struct Top {
    shared: Locked,
    request: profile::report::Request<'static>,
    early: Option<profile::report::Early>,
    table: Option<Table>,
    syms: profile::symbolize::Incremental,
    names: profile::symbolize::NameStyle,
    /// The decayed sums shown, in the order their keys came.
    decayed: Vec<(SampleKey, SampleSum)>,
    index: HashMap<SampleKey, usize>,
    zero: bool,
    hide_kernel: bool,
    hide_user: bool,
    percent_limit: f64,
    entries: usize,
    delay: Duration,
    last: Instant,
    target: String,
    freq: Option<String>,
    view: View,
    samples_seen: u64,
    rate: f64,
    kernel_share: f64,
    ended: Option<String>,
}

impl Top {
    /// Takes in what the session summed since the last refresh and builds
    /// the table again.
    fn refresh(&mut self) -> bool {
        let shared = self.shared.clone();
        let mut g = lock(&shared);
        self.ended = g.ended.clone();
        let Some(f) = g.feed.as_mut() else {
            self.view = View {
                title: vec!["sear top: starting...".into()],
                ..View::default()
            };
            return true;
        };
        if f.meta.events.is_empty() {
            return false;
        }
        self.syms
            .update(&mut f.live.sink.collector, &f.live.machine);
        let elapsed = self.last.elapsed().as_secs_f64().max(1e-3);
        self.last = Instant::now();
        // Older samples fade (or go, with -z); the new ones add.
        for (_, s) in &mut self.decayed {
            if self.zero {
                *s = SampleSum {
                    period: 0,
                    samples: 0,
                };
            } else {
                s.period = s.period * 7 / 8;
                s.samples = s.samples * 7 / 8;
            }
        }
        let (mut new, mut kernel) = (0u64, 0u64);
        // (The collector starts from empty after each take: what it gives
        // is what came since the last refresh.)
        for (k, d) in f.live.sink.collector.take_sums_in_order() {
            if d.samples == 0 && d.period == 0 {
                continue;
            }
            new += d.samples;
            let in_kernel = f
                .live
                .sink
                .collector
                .interner
                .locs()
                .get(k.leaf as usize)
                .is_some_and(|l| l.level != b'.');
            if in_kernel {
                kernel += d.samples;
            }
            if in_kernel && self.hide_kernel || !in_kernel && self.hide_user {
                continue;
            }
            match self.index.get(&k) {
                Some(&i) => {
                    let e = &mut self.decayed[i].1;
                    e.period += d.period;
                    e.samples += d.samples;
                }
                None => {
                    self.index.insert(k, self.decayed.len());
                    self.decayed.push((k, d));
                }
            }
        }
        if self
            .decayed
            .iter()
            .any(|(_, s)| s.samples == 0 && s.period == 0)
        {
            self.decayed.retain(|(_, s)| s.samples > 0 || s.period > 0);
            self.index = self
                .decayed
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (*k, i))
                .collect();
        }
        self.samples_seen += new;
        self.rate = new as f64 / elapsed;
        self.kernel_share = if new > 0 {
            100.0 * kernel as f64 / new as f64
        } else {
            0.0
        };
        let parts = Parts {
            collector: &f.live.sink.collector,
            machine: &f.live.machine,
            syms: self.syms.table(),
            meta: &f.meta,
        };
        if self.table.is_none() {
            let Some(early) = self.early.take() else {
                return false;
            };
            let plan = match self.request.plan(early, &f.meta) {
                Ok(p) => p,
                Err(e) => {
                    self.ended = Some(format!("{e}"));
                    return true;
                }
            };
            let topts = render::report::TableOptions {
                mem_sort_order: None,
                keys: plan.keys.clone(),
                layout: plan.layout.clone(),
                children: plan.children,
                percent_limit: self.percent_limit,
                exclude_other: false,
                relative: false,
                single_filters: Vec::new(),
                quiet: false,
                time_slices: None,
                socket_filter: None,
                after_header: false,
                field_sep: None,
                user_widths: Vec::new(),
                dso_list: false,
                hierarchy: false,
                color: false,
            };
            let mut t = Table::new(TableSetup {
                plan,
                filters: Default::default(),
                group: false,
                no_group: false,
                topts,
                graph: self.request.graph.clone(),
                hide_first_frame: self.request.hides_entry_frame(),
            });
            t.max_rows = self.entries;
            self.table = Some(t);
        }
        let lost = f.live.stats.total_lost_samples;
        let event = f.meta.events.first().map(|e| e.name()).unwrap_or_default();
        let freq = self.freq.clone().unwrap_or_else(|| "4000".into());
        let head = format!(
            "   PerfTop: {:8.0} irqs/sec  kernel:{:4.1}%  lost: {lost}  [{freq}Hz {event}],  ({}, {} CPUs){}",
            self.rate,
            self.kernel_share,
            self.target,
            // SAFETY: sysconf has no preconditions.
            unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) },
            match &self.ended {
                Some(e) => format!("  ({e})"),
                None => String::new(),
            }
        );
        let t = self.table.as_mut().expect("made above");
        t.head = vec![head];
        if let Err(e) = t.build(parts, self.decayed.clone()) {
            self.ended = Some(format!("{e:#}"));
        }
        self.view = t.view.clone();
        true
    }

    fn with_parts<R>(&mut self, f: impl FnOnce(&mut Option<Table>, Parts<'_>) -> R) -> Option<R> {
        let shared = self.shared.clone();
        let g = lock(&shared);
        let feed = g.feed.as_ref()?;
        let parts = Parts {
            collector: &feed.live.sink.collector,
            machine: &feed.live.machine,
            syms: self.syms.table(),
            meta: &feed.meta,
        };
        Some(f(&mut self.table, parts))
    }
}

impl Source for Top {
    fn view(&self) -> &View {
        &self.view
    }

    fn graphs(&mut self, rows: &[usize]) -> Vec<Vec<String>> {
        self.with_parts(|t, parts| t.as_ref().map(|t| t.graphs_of(parts, rows)))
            .flatten()
            .unwrap_or_else(|| rows.iter().map(|_| Vec::new()).collect())
    }

    fn act(&mut self, a: Action) -> Result<(), String> {
        let r = self
            .with_parts(|t, parts| match t {
                Some(t) => t.act(parts, a),
                None => Err("no samples yet".to_string()),
            })
            .unwrap_or_else(|| Err("no samples yet".into()));
        if r.is_ok() {
            if let Some(t) = &self.table {
                self.view = t.view.clone();
            }
        }
        r
    }

    fn annotate(&mut self, row: usize) -> Result<Annotation, String> {
        let shared = self.shared.clone();
        let g = lock(&shared);
        let feed = g.feed.as_ref().ok_or("no samples yet")?;
        let parts = Parts {
            collector: &feed.live.sink.collector,
            machine: &feed.live.machine,
            syms: self.syms.table(),
            meta: &feed.meta,
        };
        let table = self.table.as_ref().ok_or("no samples yet")?;
        let (name, dso) = table
            .symbol_and_dso(parts, row)
            .ok_or("this entry has no symbol to annotate")?;
        let os = std::ffi::OsStr::new;
        let mut args = vec![
            os("--stdio"),
            os("--stdio-color=never"),
            os("-s"),
            os(&name),
        ];
        if let Some((_, long)) = &dso {
            args.extend([os("-d"), os(long)]);
        }
        let a = super::annotate::parse_args(&args).map_err(|e| format!("{e:#}"))?;
        // The samples the table shows now (decayed as it shows them).
        let inputs = super::annotate::Inputs {
            sums: self.decayed.clone(),
            syms: self.syms.table(),
            dsos: feed.live.machine.dsos(),
            meta: &feed.meta,
            source: "this session",
            syntax: symbols::disasm::Syntax::Att,
            names: self.names,
            cpus: None,
        };
        let mut buf = Vec::new();
        super::annotate::write_annotations(&a, &inputs, Some(&mut buf))
            .map_err(|e| format!("annotate {name}: {e:#}"))?;
        let text = String::from_utf8_lossy(&buf);
        Ok(super::report_browser::annotation(
            &name,
            dso.as_ref().map(|d| d.0.as_str()),
            &text,
        ))
    }

    fn zoomed(&self) -> bool {
        self.table.as_ref().is_some_and(Table::zoomed)
    }

    fn refresh_every(&self) -> Option<Duration> {
        Some(self.delay)
    }

    fn refresh(&mut self) -> bool {
        Top::refresh(self)
    }
}

/// `--stdio`: the table printed at each refresh, until the stream ends
/// (Ctrl-C, or the command top started exits).
fn print_loop(top: &mut Top) -> Result<()> {
    use std::io::IsTerminal;
    let tty = std::io::stdout().is_terminal();
    let mut out = std::io::stdout().lock();
    loop {
        let deadline = Instant::now() + top.delay;
        while Instant::now() < deadline && lock(&top.shared).ended.is_none() {
            std::thread::sleep(Duration::from_millis(20).min(top.delay));
        }
        let ended = lock(&top.shared).ended.is_some();
        top.refresh();
        // With -g, each entry's call graph under it, as perf top --stdio
        // prints them (and as report's text does).
        let rows: Vec<usize> = (0..top.view.rows.len()).collect();
        let graphs = top.graphs(&rows);
        let v = &top.view;
        let mut text = String::new();
        if tty {
            // (perf top --stdio clears the terminal at each refresh.)
            text.push_str("\x1b[H\x1b[2J");
        }
        for t in &v.title {
            text.push_str(t);
            text.push('\n');
        }
        text.push_str(&"-".repeat(80));
        text.push('\n');
        if !v.columns.is_empty() {
            text.push('#');
            text.push_str(&v.columns);
            text.push('\n');
        }
        for (i, r) in v.rows.iter().enumerate() {
            text.push_str(r);
            text.push('\n');
            if let Some(g) = graphs.get(i).filter(|g| !g.is_empty()) {
                for l in g {
                    text.push_str(l);
                    text.push('\n');
                }
                text.push('\n');
            }
        }
        text.push('\n');
        match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        if ended {
            return Ok(());
        }
    }
}
