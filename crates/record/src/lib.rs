//! Sampling with Linux `perf_event_open`, written as `perf.data` that perf
//! and sear read.
//!
//! What it does: turns perf-style options (events, frequency or period,
//! call graphs, targets) into event attributes; starts the command stopped
//! so that sampling begins at its exec; opens one event per CPU (and per
//! thread for `-p`/`-t`), sharing one mmapped ring buffer per CPU; describes
//! processes that already run from /proc (COMM and MMAP2 records, as perf);
//! drains the buffers into a [`perf_data::writer::FileWriter`] or
//! [`perf_data::writer::PipeWriter`] (optionally zstd-compressed) with
//! FINISHED_ROUND records between drains; stops on the command's exit, on
//! SIGINT/SIGTERM or on a write error, always leaving a readable file; and
//! writes the features perf writes (build ids of the binaries samples hit,
//! host, events, sample times).
//!
//! What it does not: print (it logs through `log`), parse command lines, or
//! read recordings back. All of sear's `unsafe` code lives here, in `sys`.
//!
//! ```no_run
//! use record::{record, Options, Output};
//! let opts = Options {
//!     command: vec!["sleep".into(), "1".into()],
//!     ..Options::default()
//! };
//! let file = std::fs::File::create("perf.data")?;
//! let summary = record(&opts, Output::File(file))?;
//! eprintln!("{} samples", summary.samples);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use perf_data::attr::flag;
use perf_data::writer::{FileWriter, PipeWriter};
use perf_data::*;

mod attrs;
pub mod buildid;
pub mod control;
pub mod count;
mod options;
pub use attrs::parse_regs;
pub use options::{parse_mmap_pages, parse_size};
mod error;
pub mod event;
pub mod header;
mod offcpu;
mod open;
mod sink;
pub mod stat;
pub mod stat_file;
mod synth;
mod sys;
mod tracing;

use attrs::*;
use open::*;
use sink::*;

pub use error::{Error, Result};
pub use event::{EventSpec, Group};
pub use synth::parse_cpu_list;
pub use sys::{return_freed_memory, signal_text};

/// How often to sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freq {
    /// Samples per second.
    Hz(u64),
    /// The kernel's limit, /proc/sys/kernel/perf_event_max_sample_rate.
    Max,
}

/// Call-graph recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallGraph {
    #[default]
    None,
    /// Kernel-walked frame pointers (`-g`).
    Fp,
    /// A copy of the user stack of this many bytes plus the user registers,
    /// for DWARF unwinding after the fact.
    Dwarf(u32),
}

/// perf's default user stack copy for `--call-graph dwarf`.
pub const DEFAULT_DWARF_STACK: u32 = 8192;
/// perf's default sampling frequency.
pub const DEFAULT_FREQ: u64 = 4000;
/// Data pages per ring buffer by default (512 KiB with 4 KiB pages, as perf).
pub const DEFAULT_MMAP_PAGES: usize = 128;

/// What to record and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// `-e` values (each a comma-separated list, groups in braces); empty:
    /// cycles, or cpu-clock where there is no hardware PMU.
    pub events: Vec<String>,
    /// Per `-e` value: the tracepoint filter for its events (`--filter`,
    /// `--exclude-perf`).
    pub filters: Vec<Option<String>>,
    pub freq: Option<Freq>,
    /// A fixed period (`-c`); wins over `freq`.
    pub period: Option<u64>,
    pub call_graph: CallGraph,
    /// The command to run and sample (may be empty with pids, tids or system-wide).
    pub command: Vec<OsString>,
    pub pids: Vec<i32>,
    pub tids: Vec<i32>,
    pub system_wide: bool,
    /// Only these CPUs (implies system-wide sampling on them).
    pub cpus: Option<Vec<u32>>,
    /// Data pages per ring buffer (a power of two).
    pub mmap_pages: usize,
    pub switch_events: bool,
    /// `--off-cpu`: an `offcpu-time` event whose samples are the times
    /// threads waited off the CPU, with their stacks (see `offcpu`).
    pub off_cpu: bool,
    pub build_ids: bool,
    /// Follow children and new threads (perf's default; `--no-inherit` turns it off).
    pub inherit: bool,
    /// Record sample addresses and data mappings (`-d`; perf also turns it
    /// on with an explicit `--call-graph dwarf`).
    pub sample_address: bool,
    /// The period in every sample also with a fixed `-c` period (`-P`).
    pub record_period: bool,
    /// More sample fields perf's flags ask for (`--sample-cpu`,
    /// `--phys-data`, `-W`, `-R`, `--data-page-size`, `--code-page-size`,
    /// `--sample-identifier`): PERF_SAMPLE_* bits.
    pub extra_sample_type: u64,
    /// `--all-user` / `--all-kernel`: every event counts only there.
    pub all_user: bool,
    pub all_kernel: bool,
    /// `--running-time` (and `-s`): enabled and running times in read values.
    pub running_time: bool,
    /// `-s/--stat`: per-thread counts at exit (inherit_stat).
    pub inherit_stat: bool,
    /// `--no-bpf-event`: no BPF_EVENT records (KSYMBOL stays).
    pub bpf_event: bool,
    /// zstd level for COMPRESSED records.
    pub compress: Option<i32>,
    /// The command line stored in the CMDLINE feature.
    pub cmdline: Vec<String>,
    /// Stored in the VERSION feature.
    pub version: String,
    /// `-D/--delay`: the events start this many milliseconds after the
    /// command (the tracking records from the start, on a dummy event).
    pub delay_ms: Option<u64>,
    /// No progress notes on stderr ("Events disabled", "Events enabled").
    pub quiet: bool,
    /// `--max-size`: stop (and end the command, as perf does) once the
    /// output holds this many bytes.
    pub max_size: Option<u64>,
    /// `-k/--clockid`: the clock every event's times come from (a
    /// `clock_gettime` id); the file then carries CLOCKID and CLOCK_DATA.
    pub clockid: Option<i32>,
    /// `-I/--intr-regs`: the registers (perf_regs mask) taken at the
    /// interrupt with each sample.
    pub regs_intr: Option<u64>,
    /// `--user-regs`: the user-space registers taken with each sample.
    pub regs_user: Option<u64>,
    /// `--user-callchains` / `--kernel-callchains`: call chains of the
    /// other space left out.
    pub exclude_callchain_kernel: bool,
    pub exclude_callchain_user: bool,
    /// `--group`: every event in one group, led by the first.
    pub group: bool,
    /// `-n/--no-samples`: the events count but do not sample.
    pub no_samples: bool,
    /// `--strict-freq`: a frequency above the kernel's limit is an error
    /// (not lowered to it).
    pub strict_freq: bool,
    /// `--switch-output`: when to close the output file and go on in a
    /// new one (the [`Switcher`] given to [`record_switching`] names them).
    pub switch_output: Option<SwitchOutput>,
    /// `--switch-output-event`: events (perf's `-e` syntax) that, when
    /// they fire, switch the output file as the signal does; watched on
    /// rings of their own, not recorded.
    pub switch_output_event: Option<String>,
    /// `--per-thread`: per-thread rings (one per task, any CPU) instead of
    /// per-CPU ones; as perf, threads are not followed and samples carry no
    /// time unless `-T` asks (`sample_time`).
    pub per_thread: bool,
    /// `-T/--timestamp`: sample times also where perf would leave them out.
    pub sample_time: bool,
    /// `--no-buffering`: the kernel wakes the reader at every record.
    pub no_buffering: bool,
    /// `--buildid-mmap`: MMAP2 records carry their file's build id (the
    /// kernel's and the synthesized ones); no BUILD_ID feature then.
    pub build_id_mmap: bool,
    /// `--buildid-all`: build ids of every mapped binary, hit or not.
    pub build_id_all: bool,
    /// `--tail-synthesize`: describe the processes that existed before at
    /// the end of the recording instead of its start.
    pub tail_synthesize: bool,
    /// `--namespaces`: NAMESPACES records (the kernel's, and one per thread
    /// described at the start).
    pub namespaces: bool,
    /// `--all-cgroups`: each sample's cgroup id, CGROUP records for new
    /// cgroups and for those that exist at the start.
    pub all_cgroups: bool,
    /// `-p` processes that end before they are attached are skipped, not
    /// an error (the processes of `-u`, listed a moment before).
    pub skip_ended: bool,
    /// `--control fd:N[,M]|fifo:CTL[,ACK]`: commands (enable, disable,
    /// stop, ...) read while recording.
    pub control: Option<String>,
    /// `-D -1`: the events start disabled (for `--control enable`).
    pub start_disabled: bool,
    /// `--overwrite`: perf's flight recorder: the rings are written
    /// backward over their oldest records and read once, at the end, so the
    /// file holds the last of what happened (each ring's size: `-m`).
    pub overwrite: bool,
    /// `--synth`: what is described of what runs at the start (perf's
    /// task, mmap, cgroup; all by default).
    pub synth: Synth,
    /// `-G/--cgroup`: each event's cgroup, in order (empty: none; a single
    /// name applies to every event); system-wide only.
    pub cgroups: Vec<String>,
}

/// perf's `--synth` choices: which records describe what runs when
/// recording starts (the kernel's map is always written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Synth {
    /// COMM (and FORK) records of the processes and threads.
    pub task: bool,
    /// Their MMAP2 records (only with `task`).
    pub mmap: bool,
    /// CGROUP records (with `--all-cgroups`).
    pub cgroup: bool,
}

impl Default for Synth {
    fn default() -> Self {
        Synth {
            task: true,
            mmap: true,
            cgroup: true,
        }
    }
}

impl Synth {
    /// perf's `--synth` values: `no`, `all`, or a comma list of `task`,
    /// `mmap`, `cgroup`.
    pub fn parse(s: &str) -> std::result::Result<Synth, String> {
        let mut out = Synth {
            task: false,
            mmap: false,
            cgroup: false,
        };
        for w in s.split(',') {
            match w.trim() {
                "no" => {}
                "all" => out = Synth::default(),
                "task" => out.task = true,
                "mmap" => {
                    out.task = true;
                    out.mmap = true;
                }
                "cgroup" => out.cgroup = true,
                other => {
                    return Err(format!(
                        "unknown --synth value `{other}`: use no, all, task, mmap or cgroup"
                    ))
                }
            }
        }
        Ok(out)
    }
}

/// perf's `--switch-output` triggers: SIGUSR2, an output size, a time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SwitchOutput {
    pub signal: bool,
    pub size: Option<u64>,
    pub time: Option<std::time::Duration>,
}

/// With `--switch-output`: called when the output file is to be closed;
/// it moves the file away (it is finished after the call, through the
/// open handle) and returns the new output file.
pub type Switcher<'a> = &'a mut dyn FnMut() -> io::Result<File>;

impl Default for Options {
    fn default() -> Self {
        Options {
            events: Vec::new(),
            filters: Vec::new(),
            freq: None,
            period: None,
            call_graph: CallGraph::None,
            command: Vec::new(),
            pids: Vec::new(),
            tids: Vec::new(),
            system_wide: false,
            cpus: None,
            mmap_pages: DEFAULT_MMAP_PAGES,
            switch_events: false,
            switch_output_event: None,
            off_cpu: false,
            build_ids: true,
            inherit: true,
            sample_address: false,
            record_period: false,
            extra_sample_type: 0,
            all_user: false,
            all_kernel: false,
            running_time: false,
            inherit_stat: false,
            bpf_event: true,
            compress: None,
            cmdline: Vec::new(),
            version: concat!(env!("CARGO_PKG_VERSION"), " (sear)").to_string(),
            delay_ms: None,
            quiet: false,
            max_size: None,
            clockid: None,
            regs_intr: None,
            regs_user: None,
            exclude_callchain_kernel: false,
            exclude_callchain_user: false,
            group: false,
            no_samples: false,
            strict_freq: false,
            switch_output: None,
            per_thread: false,
            sample_time: false,
            no_buffering: false,
            build_id_mmap: false,
            build_id_all: false,
            tail_synthesize: false,
            namespaces: false,
            all_cgroups: false,
            cgroups: Vec::new(),
            skip_ended: false,
            control: None,
            start_disabled: false,
            overwrite: false,
            synth: Synth::default(),
        }
    }
}

/// Where the recording goes.
pub enum Output {
    /// A perf.data file (file mode, seekable).
    File(File),
    /// A pipe-mode stream (`-o -`).
    Pipe(Box<dyn Write + Send>),
}

/// What happened, for the closing lines.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    pub samples: u64,
    /// Events the kernel dropped (LOST records) and in how many records.
    pub lost: u64,
    pub lost_chunks: u64,
    pub wakeups: u64,
    /// Bytes written to the output.
    pub bytes_written: u64,
    /// Bytes copied out of the ring buffers.
    pub bytes_transferred: u64,
    /// (uncompressed, compressed) bytes of COMPRESSED records with `-z`.
    pub compressed: Option<(u64, u64)>,
    /// The command's exit status as a shell reports it (128+N: signal N).
    pub exit_status: Option<u8>,
    /// The signal (SIGINT, SIGTERM) that stopped the recording.
    pub stopped_by: Option<i32>,
    /// Event names as recorded (after any fallback).
    pub events: Vec<String>,
    /// The binaries samples hit, with the build ids the file records
    /// (`[kernel.kallsyms]` and `[vdso]` by those names): what perf adds
    /// to its build-id cache.
    pub build_ids: Vec<(buildid::Hit, Vec<u8>)>,
}

/// The kernel's sampling-rate limit.
/// Whether this machine can count the event (perf list's
/// `is_event_supported`: opened disabled on this process, kernel excluded
/// where the kernel may not be counted).
pub fn event_supported(type_: u32, config: u64) -> bool {
    let mut attr = perf_data::EventAttr {
        type_,
        size: 128,
        config,
        flags: 1 << perf_data::attr::flag::DISABLED,
        ..Default::default()
    };
    if sys::perf_event_open(&attr, 0, -1, -1).is_ok() {
        return true;
    }
    attr.flags |= 1 << perf_data::attr::flag::EXCLUDE_KERNEL;
    sys::perf_event_open(&attr, 0, -1, -1).is_ok()
}

pub fn max_sample_rate() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn paranoid() -> String {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Checks what can be checked without opening anything: the events, the
/// ring size and the rate (`--dry-run`).
pub fn check(opts: &Options) -> Result<()> {
    for e in &opts.events {
        event::parse_list(e)?;
    }
    if !opts.mmap_pages.is_power_of_two() {
        return Err(Error::Options(format!(
            "-m {}: the number of ring-buffer pages must be a power of two",
            opts.mmap_pages
        )));
    }
    if opts.off_cpu && opts.overwrite {
        return Err(Error::Options(
            "--off-cpu pairs switch-outs with switch-ins as the rings drain: it cannot be used \
             with --overwrite"
                .into(),
        ));
    }
    period_or_freq(opts).map(|_| ())
}

/// Asks a recording running on another thread to stop, as SIGTERM does
/// (`sear top` when the user quits). The recording notices when its poll
/// next wakes: send the recording thread SIGCHLD to wake it at once.
pub fn request_stop() {
    sys::request_stop();
}

/// Records `opts` into `out` until the command ends (or the targets do, or
/// SIGINT/SIGTERM arrives). On a write error the output is left readable
/// (cut back to its last complete round) and the error returned.
pub fn record(opts: &Options, out: Output) -> Result<Recorded> {
    record_switching(opts, out, None)
}

/// [`record`], going on in a new file from `switcher` whenever
/// `opts.switch_output` says so (file output only).
pub fn record_switching(
    opts: &Options,
    out: Output,
    switcher: Option<Switcher<'_>>,
) -> Result<Recorded> {
    if !opts.command.is_empty() && (!opts.pids.is_empty() || !opts.tids.is_empty()) {
        log::info!("-p/-t given with a command: sampling the processes, the command only sets the duration");
    }
    if !opts.mmap_pages.is_power_of_two() {
        return Err(Error::Options(format!(
            "-m {}: the number of ring-buffer pages must be a power of two",
            opts.mmap_pages
        )));
    }
    let (freq, rate) = period_or_freq(opts)?;
    sys::raise_open_file_limit();
    sys::install_signal_handlers().map_err(|e| Error::sys("installing signal handlers", e))?;
    if opts.switch_output.is_some_and(|s| s.signal) {
        sys::install_switch_handler().map_err(|e| Error::sys("installing signal handlers", e))?;
    }
    let r = record_inner(opts, out, freq, rate, switcher);
    sys::restore_signal_handlers();
    r
}

/// The command to measure, started stopped before its exec (None without one).
fn start_stopped(command: &[OsString]) -> Result<Option<sys::Child>> {
    if command.is_empty() {
        return Ok(None);
    }
    sys::Child::spawn_stopped(command)
        .map(Some)
        .map_err(|e| Error::sys("starting the command (fork)", e))
}

/// `--switch-output-event`'s events, opened on the recording's tasks and
/// CPUs with a one-page ring each that wakes the reader at every record.
fn open_trigger(spec: &str, p: &Plan, ctx: &AttrCtx) -> Result<Vec<(OwnedFd, sys::Ring)>> {
    let mut out = Vec::new();
    for g in event::parse_list(spec)? {
        for e in &g.members {
            let mut a = EventAttr {
                type_: e.type_,
                size: 128,
                config: e.config,
                sample_period_or_freq: 1,
                sample_type: PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
                wakeup_events_or_watermark: 1,
                ..Default::default()
            };
            a.flags = 1 << flag::SAMPLE_ID_ALL
                | u64::from(ctx.inherit) << flag::INHERIT
                | u64::from(e.exclude_user) << flag::EXCLUDE_USER
                | u64::from(e.exclude_kernel) << flag::EXCLUDE_KERNEL;
            for &cpu in &p.cpus {
                for &task in &p.tasks {
                    let fd = sys::perf_event_open(&a, task, cpu, -1)
                        .map_err(|err| open_error(e, task, cpu, err, false))?;
                    if let Some(f) = &e.filter {
                        sys::set_filter(&fd, f).map_err(|err| {
                            Error::Options(format!(
                                "--switch-output-event: failed to set filter \"{f}\": {err}"
                            ))
                        })?;
                    }
                    let ring = sys::Ring::new(&fd, 1, false)
                        .map_err(|e| Error::sys("mmapping a --switch-output-event ring", e))?;
                    out.push((fd, ring));
                }
            }
        }
    }
    Ok(out)
}

/// The flight recorder's rings (`--overwrite`): paused, read newest first
/// from their heads back to the last read, written oldest first; resumed
/// after when the recording goes on (a `--switch-output` snapshot).
/// Whether there was anything.
fn snapshot(
    o: &mut Opened,
    sink: &mut Sink,
    tally: &mut Tally,
    st: u64,
    resume: bool,
) -> perf_data::Result<bool> {
    let mut recs: Vec<Vec<u8>> = Vec::new();
    for (fd, ring) in o.rings.iter_mut() {
        if let Err(e) = sys::pause_output(*fd, true) {
            log::warn!("pausing an overwritten ring: {e}");
        }
        let mut mine = Vec::new();
        ring.read_backward(|r| mine.push(r.to_vec()));
        mine.reverse();
        recs.extend(mine);
        if resume {
            if let Err(e) = sys::pause_output(*fd, false) {
                log::warn!("resuming an overwritten ring: {e}");
            }
        }
    }
    for rec in &recs {
        let type_ = u32_at(rec, 0);
        let misc = u16::from_ne_bytes([rec[4], rec[5]]);
        tally.see(st, type_, misc, &rec[8..]);
        sink.write(type_, misc, &rec[8..])?;
    }
    sink.round()?;
    Ok(!recs.is_empty())
}

/// Writes an `offcpu-time` sample (as perf's: user space).
fn write_offcpu(sink: &mut Sink, tally: &mut Tally, st: u64, s: &[u8]) -> perf_data::Result<()> {
    tally.see(st, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, s);
    sink.write(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, s)
}

fn record_inner(
    opts: &Options,
    out: Output,
    freq: bool,
    rate: u64,
    mut switcher: Option<Switcher<'_>>,
) -> Result<Recorded> {
    let mut control = opts
        .control
        .as_deref()
        .map(control::Control::open)
        .transpose()?;
    let mut child = start_stopped(&opts.command)?;
    let mut p = plan(opts, child.as_ref().map(|c| c.pid))?;
    let system_wide = opts.system_wide || opts.cpus.is_some();
    let attach = opts.pids.is_empty() && opts.tids.is_empty() && !system_wide;
    let mut ctx = AttrCtx {
        sample_type: p.sample_type,
        freq,
        rate,
        call_graph: opts.call_graph,
        // (The kernel maps no ring of an inherited per-task event.)
        inherit: opts.inherit && (system_wide || !opts.per_thread),
        enable_on_exec: attach && child.is_some(),
        delayed: opts.delay_ms.is_some() || opts.start_disabled,
        switch_events: opts.switch_events,
        user_only: false,
        sample_address: opts.sample_address,
        lost: true,
        ksymbol: true,
        bpf_event: opts.bpf_event,
        running_time: opts.running_time || opts.inherit_stat,
        inherit_stat: opts.inherit_stat,
        clockid: opts.clockid,
        regs_intr: opts.regs_intr.unwrap_or(0),
        regs_user: opts.regs_user.unwrap_or(0),
        exclude_callchain_kernel: opts.exclude_callchain_kernel,
        exclude_callchain_user: opts.exclude_callchain_user,
        no_samples: opts.no_samples,
        no_buffering: opts.no_buffering,
        build_id_mmap: opts.build_id_mmap,
        namespaces: opts.namespaces,
        cgroups: opts.all_cgroups,
        overwrite: opts.overwrite,
        user_rate: opts.freq.is_some() || opts.period.is_some(),
    };
    // perf's reference pair for the time of day, taken as it starts.
    let clock = opts.clockid.map(header::ClockRef::now);
    let mut opened = None;
    for _ in 0..6 {
        match open_all(&p, &ctx, opts.mmap_pages) {
            Ok(o) => {
                opened = Some(o);
                break;
            }
            Err((_, Some(Retry::UserOnly))) if !system_wide => {
                log::warn!(
                    "kernel.perf_event_paranoid={} does not allow kernel samples: recording user space only (as `:u`)",
                    paranoid()
                );
                ctx.user_only = true;
            }
            Err((_, Some(Retry::Cycles))) => {
                log::warn!(
                    "the cycles event is not supported here (no hardware PMU, as in most VMs): falling back to cpu-clock, as perf does"
                );
                for m in p.groups.iter_mut().flat_map(|g| g.members.iter_mut()) {
                    if m.is_cycles() {
                        m.cycles_to_cpu_clock();
                    }
                }
            }
            Err((e, Some(Retry::MissingFeature))) => {
                log::debug!("retrying without a newer kernel feature after: {e}");
                if ctx.lost {
                    ctx.lost = false;
                } else {
                    ctx.ksymbol = false;
                }
            }
            Err((e, _)) => {
                if let Some(c) = &mut child {
                    c.kill(libc::SIGKILL);
                }
                return Err(e);
            }
        }
    }
    let mut o = opened.ok_or_else(|| Error::Options("could not open the events".into()))?;
    let endian = Endian::native();
    // Synthesized records carry zeros for their sample id, which readers
    // (perf's and sear's) lay out by the first event's sample type.
    let trailer = id_trailer_size(
        o.events
            .first()
            .map_or(o.sample_type, |e| e.attr.sample_type),
    );

    let mut sink = match out {
        Output::File(f) => {
            let file = f.try_clone().ok();
            let w = FileWriter::create(f, endian, &o.events)?;
            Sink::File {
                data_offset: w.position(),
                w,
                file,
                round_ends: Vec::new(),
            }
        }
        Output::Pipe(w) => {
            let n = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
            let mut pw = PipeWriter::new(
                Counted {
                    inner: w,
                    n: n.clone(),
                },
                endian,
            )?;
            for e in &o.events {
                pw.write_attr(e)?;
            }
            let feats = header::features(
                endian,
                &header::HeaderInput {
                    events: &o.events,
                    groups: &o.group_desc,
                    cmdline: &opts.cmdline,
                    version: &opts.version,
                    sample_time: None,
                    build_ids: Vec::new(),
                    clock,
                },
            );
            for (id, b) in &feats {
                pw.write_feature(*id, b)?;
            }
            if let Some(l) = opts.compress {
                pw.set_compression(l)?;
            }
            pw.write_features_end()?;
            Sink::Pipe(pw, n)
        }
    };
    if let (Some(l), Sink::File { w, .. }) = (opts.compress, &mut sink) {
        w.set_compression(l)?;
    }
    let mut tally = Tally {
        hits: (opts.build_ids && !opts.build_id_mmap && matches!(sink, Sink::File { .. })).then(
            || {
                let mut h = buildid::HitBinaries::default();
                h.all = opts.build_id_all;
                h
            },
        ),
        ..Default::default()
    };

    // What existed before: the kernel, and processes we attach to.
    // (As perf: data mappings with sample addresses.)
    let data_maps = opts.sample_address;
    // The records of what exists already; `workload`: the command's
    // process, described again in each new file of --switch-output (its
    // exec described it in the first).
    // (The kernel's text does not move: read from kallsyms once.)
    let kernel = synth::kernel_mmap(endian, trailer).map(|k| {
        if opts.build_id_mmap {
            synth::kernel_mmap2_with_build_id(endian, trailer, &k)
        } else {
            k
        }
    });
    let mut ids_of = std::collections::HashMap::new();
    let mut synthesize = |workload: Option<i32>| {
        let mut out = Vec::new();
        out.extend(kernel.clone());
        if opts.all_cgroups && opts.synth.cgroup {
            out.extend(synth::cgroups(endian, trailer));
        }
        let kernel_only = out.len();
        if system_wide {
            for pid in synth::all_pids() {
                out.extend(synth::process(endian, trailer, pid, None, data_maps));
            }
        } else if !opts.tids.is_empty() {
            let mut seen = std::collections::HashSet::new();
            for &t in &opts.tids {
                let pid = synth::tgid_of(t).unwrap_or(t);
                let only_comm = !seen.insert(pid);
                for r in synth::process(endian, trailer, pid, Some(&[t]), data_maps) {
                    if !(only_comm && r.type_ == PERF_RECORD_MMAP2) {
                        out.push(r);
                    }
                }
            }
        } else if !opts.pids.is_empty() {
            for &pid in &opts.pids {
                out.extend(synth::process(endian, trailer, pid, None, data_maps));
            }
        } else if let Some(pid) = workload {
            out.extend(synth::process(endian, trailer, pid, None, data_maps));
        }
        if !opts.synth.task {
            out.truncate(kernel_only);
        } else if !opts.synth.mmap {
            let mut k = 0;
            out.retain(|r| {
                k += 1;
                k <= kernel_only || r.type_ != PERF_RECORD_MMAP2
            });
        }
        if opts.build_id_mmap {
            for r in &mut out {
                synth::add_build_id(r, &mut ids_of);
            }
        }
        if opts.namespaces {
            // As perf: each thread's namespaces after its COMM; the
            // command's before its exec.
            let mut with = Vec::with_capacity(out.len() + 8);
            for r in out {
                let comm = (r.type_ == PERF_RECORD_COMM).then(|| {
                    let at = |o: usize| {
                        r.payload
                            .get(o..o + 4)
                            .map_or(0, |b| endian.u32([b[0], b[1], b[2], b[3]]) as i32)
                    };
                    (at(0), at(4))
                });
                with.push(r);
                if let Some((pid, tid)) = comm {
                    with.push(synth::namespaces(endian, trailer, pid, tid));
                }
            }
            out = with;
        }
        out
    };
    // (As perf: the flight recorder describes what runs at its end.)
    let mut synth_records = if opts.tail_synthesize || opts.overwrite {
        Vec::new()
    } else {
        synthesize(None)
    };
    if let (true, Some(c), true) = (opts.namespaces, &child, attach) {
        // The command before its exec, named as it is then (perf's
        // "perf-exec"), then its namespaces.
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", c.pid)).unwrap_or_default();
        synth_records.push(synth::comm(endian, trailer, c.pid, c.pid, comm.trim_end()));
        synth_records.push(synth::namespaces(endian, trailer, c.pid, c.pid));
    }
    let write_result = (|| -> perf_data::Result<()> {
        for r in &synth_records {
            tally.see(o.sample_type, r.type_, r.misc, &r.payload);
            sink.write(r.type_, r.misc, &r.payload)?;
        }
        sink.round()
    })();
    if let Err(e) = write_result {
        if let Some(c) = &mut child {
            c.kill(libc::SIGKILL);
        }
        sink.salvage();
        return Err(e.into());
    }

    // Start: the command's exec enables its events; others are enabled now.
    // With -D only the tracking dummy starts; the rest after the delay.
    let late: Vec<usize> = if ctx.delayed {
        o.leaders
            .iter()
            .copied()
            .filter(|l| !o.dummy_leaders.contains(l))
            .collect()
    } else {
        Vec::new()
    };
    if !ctx.enable_on_exec {
        for l in o.leaders.iter().filter(|l| !late.contains(l)) {
            sys::enable(&o.fds[*l]).map_err(|e| Error::sys("enabling the events", e))?;
        }
    }
    if ctx.delayed && !opts.quiet {
        eprintln!("Events disabled");
    }
    if let Some(c) = &mut child {
        if let Err(e) = c.go() {
            return Err(Error::exec(&opts.command[0], e));
        }
    }
    let mut enable_at = opts
        .delay_ms
        .filter(|_| !opts.start_disabled)
        .map(|d| std::time::Instant::now() + std::time::Duration::from_millis(d));

    // --switch-output-event: its events on rings of their own (one page
    // each, a wakeup per record), read only to see that they fired.
    let mut trigger = match &opts.switch_output_event {
        Some(spec) => open_trigger(spec, &p, &ctx)?,
        None => Vec::new(),
    };
    let mut ring_fds: Vec<RawFd> = o.rings.iter().map(|r| r.0).collect();
    ring_fds.extend(trigger.iter().map(|(fd, _)| fd.as_raw_fd()));
    // The events --control enables and disables: all but the tracking
    // dummy (which runs throughout, as perf's).
    let controlled: Vec<usize> = o
        .leaders
        .iter()
        .copied()
        .filter(|l| !o.dummy_leaders.contains(l))
        .collect();
    let mut scratch = Vec::new();
    let mut scratch_trigger = Vec::new();
    let mut offcpu = o
        .offcpu
        .as_ref()
        .and_then(|(i, ids)| Some(offcpu::Converter::new(o.events.get(*i)?, ids.clone())));
    let mut wakeups = 0u64;
    let mut stopped_by = None;
    let mut exit_raw: Option<i32> = None;
    let st = o.sample_type;
    let mut failure: Option<perf_data::Error> = None;
    let mut drain =
        |o: &mut Opened, sink: &mut Sink, tally: &mut Tally| -> perf_data::Result<bool> {
            let mut any = false;
            for (_, ring) in o.rings.iter_mut() {
                let n = ring.drain(&mut scratch, |rec| {
                    let type_ = u32_at(rec, 0);
                    let misc = u16::from_ne_bytes([rec[4], rec[5]]);
                    let payload = &rec[8..];
                    if let Some(c) = offcpu.as_mut() {
                        if c.see(type_, misc, payload) == offcpu::Verdict::Drop {
                            return Ok(());
                        }
                    }
                    tally.see(st, type_, misc, payload);
                    sink.write(type_, misc, payload)
                })?;
                any |= n > 0;
            }
            if let Some(c) = offcpu.as_mut() {
                any |= c.end_pass(|s| write_offcpu(sink, tally, st, s))? > 0;
            }
            if any {
                sink.round()?;
            }
            Ok(any)
        };
    // Drained when the kernel says a ring is past its wakeup watermark
    // (half full, as for perf), or every tenth of a second: a process's
    // maps are seen while it runs (a container's binaries are read through
    // /proc/PID/root then). With -z once a second: each drain ends a round,
    // and each round flushes the compressor, which costs ratio.
    // The poll's timeout is for noticing the command's exit and signals.
    let drain_every =
        std::time::Duration::from_millis(if opts.compress.is_some() { 1000 } else { 100 });
    let mut last_drain = std::time::Instant::now();
    let mut file_started = std::time::Instant::now();
    loop {
        let timeout = enable_at.map_or(100, |t| {
            t.saturating_duration_since(std::time::Instant::now())
                .as_millis()
                .min(100) as i32
        });
        let ctl_fd = control.as_ref().and_then(|c| c.poll_fd());
        // (--overwrite: the rings are read at the end only.)
        let rings_polled: &[RawFd] = if opts.overwrite { &[] } else { &ring_fds };
        let polled: Vec<RawFd> = rings_polled.iter().copied().chain(ctl_fd).collect();
        let ready = match sys::poll(&polled, timeout) {
            Ok(p) => {
                // A ring whose tasks are gone still holds their last
                // records (drained below), but reports hang-up at once
                // forever: polling it would spin.
                ring_fds.retain(|fd| !p.hung.contains(fd));
                p.ready > 0
            }
            Err(e) => {
                log::warn!("poll: {e}");
                true
            }
        };
        if enable_at.is_some_and(|t| std::time::Instant::now() >= t) {
            enable_at = None;
            for &l in &late {
                sys::enable(&o.fds[l]).map_err(|e| Error::sys("enabling the events", e))?;
            }
            if !opts.quiet {
                eprintln!("Events enabled");
            }
        }
        if !opts.overwrite && (ready || last_drain.elapsed() >= drain_every) {
            last_drain = std::time::Instant::now();
            match drain(&mut o, &mut sink, &mut tally) {
                Ok(true) => wakeups += 1,
                Ok(false) => {}
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        if let Some(s) = sys::stop_signal() {
            stopped_by = Some(s);
            break;
        }
        if let Some(c) = control.as_mut() {
            let mut stop = false;
            for cmd in c.commands() {
                let on = matches!(cmd, control::Command::Enable(_));
                match cmd {
                    control::Command::Enable(name) | control::Command::Disable(name) => {
                        for &l in &controlled {
                            let named = name.as_deref().is_none_or(|n| {
                                o.event_of_fd(l).and_then(|e| o.events[e].name.as_deref())
                                    == Some(n)
                            });
                            if named {
                                let r = if on {
                                    sys::enable(&o.fds[l])
                                } else {
                                    sys::disable(&o.fds[l])
                                };
                                if let Err(e) = r {
                                    log::warn!("--control: {e}");
                                }
                            }
                        }
                        if on {
                            enable_at = None;
                        }
                        if !opts.quiet {
                            eprintln!("Events {}", if on { "enabled" } else { "disabled" });
                        }
                    }
                    control::Command::Evlist => {
                        for e in &o.events {
                            eprintln!("{}", e.name.as_deref().unwrap_or("?"));
                        }
                    }
                    control::Command::Stop => stop = true,
                    control::Command::Snapshot | control::Command::Ping => {}
                }
                c.ack();
            }
            if stop {
                break;
            }
        }
        let mut fired = false;
        for (_, ring) in trigger.iter_mut() {
            let _ = ring.drain(&mut scratch_trigger, |rec| -> std::result::Result<(), ()> {
                fired |= u32_at(rec, 0) == PERF_RECORD_SAMPLE;
                Ok(())
            });
        }
        if let (Some(sw), Some(next)) = (opts.switch_output, switcher.as_mut()) {
            let due = (sw.signal && (sys::take_switch_signal() || fired))
                || sw.size.is_some_and(|m| sink.written() >= m)
                || sw.time.is_some_and(|t| file_started.elapsed() >= t);
            if due && matches!(sink, Sink::File { .. }) {
                file_started = std::time::Instant::now();
                // (--overwrite: a snapshot of the rings, then the
                // processes as they are, as at the end.)
                let read = if opts.overwrite {
                    snapshot(&mut o, &mut sink, &mut tally, st, true)
                } else {
                    drain(&mut o, &mut sink, &mut tally)
                };
                let read = read.and_then(|_| {
                    if opts.overwrite || opts.tail_synthesize {
                        for r in synthesize(child.as_ref().map(|c| c.pid)) {
                            tally.see(st, r.type_, r.misc, &r.payload);
                            sink.write(r.type_, r.misc, &r.payload)?;
                        }
                        sink.round()?;
                    }
                    Ok(())
                });
                let switched = read.and_then(|_| {
                    let f = next().map_err(|source| perf_data::Error::Io {
                        offset: sink.written(),
                        source,
                    })?;
                    let file = f.try_clone().ok();
                    let mut w = FileWriter::create(f, endian, &o.events)?;
                    if let Some(l) = opts.compress {
                        w.set_compression(l)?;
                    }
                    let new = Sink::File {
                        data_offset: w.position(),
                        w,
                        file,
                        round_ends: Vec::new(),
                    };
                    let old = std::mem::replace(&mut sink, new);
                    // The file just closed: its own first and last times,
                    // no build ids (perf leaves them out with
                    // --switch-output, to switch fast).
                    if let Sink::File { w, .. } = old {
                        let feats = header::features(
                            endian,
                            &header::HeaderInput {
                                events: &o.events,
                                groups: &o.group_desc,
                                cmdline: &opts.cmdline,
                                version: &opts.version,
                                sample_time: tally.first_time.map(|f| (f, tally.last_time)),
                                build_ids: Vec::new(),
                                clock,
                            },
                        );
                        w.finish(&feats)?;
                    }
                    tally.first_time = None;
                    // (Described at the end instead, with --overwrite and
                    // --tail-synthesize.)
                    if !opts.overwrite && !opts.tail_synthesize {
                        for r in synthesize(child.as_ref().map(|c| c.pid)) {
                            tally.see(st, r.type_, r.misc, &r.payload);
                            sink.write(r.type_, r.misc, &r.payload)?;
                        }
                    }
                    sink.round()
                });
                if let Err(e) = switched {
                    failure = Some(e);
                    break;
                }
            }
        }
        if opts.max_size.is_some_and(|m| sink.written() >= m) {
            if !opts.quiet {
                eprintln!(
                    "[ sear record: size limit reached ({} KB), stopping session ]",
                    sink.written() >> 10
                );
            }
            break;
        }
        if let Some(c) = &mut child {
            if let Some(st) = c.try_wait() {
                exit_raw = Some(st);
                break;
            }
        } else if !system_wide {
            let targets = if opts.tids.is_empty() {
                &opts.pids
            } else {
                &opts.tids
            };
            if !targets.iter().any(|&t| sys::task_exists(t)) {
                break;
            }
        }
    }
    // Stop sampling, then take what is left.
    for &l in &o.leaders {
        let _ = sys::disable(&o.fds[l]);
    }
    if failure.is_none() && !opts.overwrite {
        if let Err(e) = drain(&mut o, &mut sink, &mut tally) {
            failure = Some(e);
        }
    }
    if let (Some(c), None) = (offcpu.as_mut(), &failure) {
        let written = c
            .finish(|s| write_offcpu(&mut sink, &mut tally, st, s))
            .and_then(|n| if n > 0 { sink.round() } else { Ok(()) });
        if let Err(e) = written {
            failure = Some(e);
        }
    }
    if let Some(c) = &offcpu {
        log::debug!(
            "off-CPU: {} threads still waiting at the end (not counted), {} switch-outs without \
             their switch-in, {} without a user stack",
            c.still_waiting(),
            c.unpaired,
            c.no_user_stack
        );
    }
    if failure.is_none() && opts.overwrite {
        match snapshot(&mut o, &mut sink, &mut tally, st, false) {
            Err(e) => failure = Some(e),
            Ok(true) => wakeups += 1,
            Ok(false) => {}
        }
    }
    if (opts.tail_synthesize || opts.overwrite) && failure.is_none() {
        let tail = synthesize(child.as_ref().map(|c| c.pid));
        let written = (|| -> perf_data::Result<()> {
            for r in &tail {
                tally.see(st, r.type_, r.misc, &r.payload);
                sink.write(r.type_, r.misc, &r.payload)?;
            }
            sink.round()
        })();
        if let Err(e) = written {
            failure = Some(e);
        }
    }
    if let Some(c) = &mut child {
        if exit_raw.is_none() {
            // Stopped by a signal or an error: end the command as perf does.
            c.kill(libc::SIGTERM);
            exit_raw = c.wait().ok();
        }
    }
    let bytes_transferred: u64 = o.rings.iter().map(|r| r.1.bytes).sum();
    let group_desc = std::mem::take(&mut o.group_desc);
    let events = std::mem::take(&mut o.events);
    drop(o);
    if let Some(e) = failure {
        sink.salvage();
        return Err(e.into());
    }
    let compressed = sink.compression();
    let (kernel_hit, files) = tally.hits.as_mut().map(|h| h.finish()).unwrap_or_default();
    let mut build_ids = Vec::new();
    let mut hit_ids = Vec::new();
    if kernel_hit {
        if let Some(id) = std::fs::read("/sys/kernel/notes")
            .ok()
            .and_then(|b| buildid::build_id_in_notes(&b))
        {
            build_ids.extend(buildid::build_id_entry(
                endian,
                true,
                &id,
                "[kernel.kallsyms]",
            ));
            let hit = buildid::Hit {
                name: "[kernel.kallsyms]".to_owned(),
                opened: None,
            };
            hit_ids.push((hit, id));
        }
    }
    for f in files {
        // (A container's file is read as its process saw it.)
        let id = if f.name == "[vdso]" {
            sys::own_vdso().and_then(|b| buildid::build_id_of_bytes(&b))
        } else {
            buildid::build_id_of_file(&f.source())
        };
        if let Some(id) = id {
            build_ids.extend(buildid::build_id_entry(endian, false, &id, &f.name));
            hit_ids.push((f, id));
        }
    }
    let mut summary = Recorded {
        samples: tally.samples,
        lost: tally.lost,
        lost_chunks: tally.lost_chunks,
        wakeups,
        bytes_transferred,
        compressed,
        exit_status: exit_raw.map(sys::shell_status),
        stopped_by,
        events: Vec::new(),
        bytes_written: 0,
        build_ids: hit_ids,
    };
    summary.events = events.iter().filter_map(|e| e.name.clone()).collect();
    let result = match sink {
        Sink::File { w, .. } => {
            let feats = header::features(
                endian,
                &header::HeaderInput {
                    events: &events,
                    groups: &group_desc,
                    cmdline: &opts.cmdline,
                    version: &opts.version,
                    sample_time: tally.first_time.map(|f| (f, tally.last_time)),
                    build_ids,
                    clock,
                },
            );
            match w.finish(&feats) {
                Ok(f) => {
                    use std::os::unix::fs::MetadataExt;
                    let meta = f.metadata();
                    summary.bytes_written = meta.as_ref().map(|m| m.len()).unwrap_or(0);
                    // Deleted (or its directory removed) while recording: the
                    // writes went to a file no name reaches.
                    if meta.is_ok_and(|m| m.nlink() == 0) {
                        return Err(Error::OutputLost(
                            "the output file was deleted (or its directory removed) during the \
                             recording: nothing of it is left on disk; record again"
                                .into(),
                        ));
                    }
                    Ok(())
                }
                Err(e) => Err(Error::from(e)),
            }
        }
        Sink::Pipe(w, n) => w
            .finish()
            .map(|_| {
                summary.bytes_written = n.load(std::sync::atomic::Ordering::Relaxed);
            })
            .map_err(Error::from),
    };
    result?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailer_sizes() {
        assert_eq!(
            id_trailer_size(
                PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD
            ),
            16
        );
        assert_eq!(
            id_trailer_size(PERF_SAMPLE_TID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER),
            24
        );
    }

    #[test]
    fn attrs_like_perf() {
        let e = event::parse_one("cpu-clock").unwrap();
        let c = AttrCtx {
            sample_type: PERF_SAMPLE_IP,
            freq: true,
            rate: 4000,
            call_graph: CallGraph::Dwarf(8192),
            inherit: true,
            enable_on_exec: true,
            delayed: false,
            switch_events: false,
            user_only: false,
            sample_address: true,
            lost: true,
            ksymbol: true,
            bpf_event: true,
            running_time: false,
            inherit_stat: false,
            clockid: None,
            regs_intr: 0,
            regs_user: 0,
            exclude_callchain_kernel: false,
            exclude_callchain_user: false,
            no_samples: false,
            no_buffering: false,
            build_id_mmap: false,
            namespaces: false,
            cgroups: false,
            overwrite: false,
            user_rate: false,
        };
        let a = make_attr(&c, &e, true, true);
        for b in [
            flag::DISABLED,
            flag::INHERIT,
            flag::FREQ,
            flag::ENABLE_ON_EXEC,
            flag::MMAP2,
            flag::COMM_EXEC,
            flag::SAMPLE_ID_ALL,
            flag::EXCLUDE_CALLCHAIN_USER,
            flag::EXCLUDE_GUEST,
            flag::MMAP_DATA,
            flag::KSYMBOL,
            flag::BPF_EVENT,
        ] {
            assert!(a.flag(b), "flag {b}");
        }
        assert_eq!(a.sample_stack_user, 8192);
        assert_eq!(a.read_format, PERF_FORMAT_ID | PERF_FORMAT_LOST);
        let m = make_attr(&c, &e, false, false);
        assert!(!m.flag(flag::DISABLED) && !m.flag(flag::MMAP) && !m.flag(flag::KSYMBOL));
        // perf's system-wide tracking dummy: enabled, every event, no period.
        let d = make_attr(&c, &event::EventSpec::tracking_dummy(), true, true);
        assert!(!d.flag(flag::DISABLED) && !d.flag(flag::FREQ) && d.flag(flag::MMAP));
        assert_eq!(d.sample_period_or_freq, 1);
    }
}
