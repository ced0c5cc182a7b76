//! The arguments of the commands that open events: record and stat.

use std::path::PathBuf;

use clap::Args;

use super::{cpu_list, CpuList};

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Events to sample, comma-separated, as perf names them: software
    /// (cpu-clock, task-clock, page-faults/faults, minor-faults,
    /// major-faults, context-switches/cs, cpu-migrations, alignment-faults,
    /// emulation-faults) and hardware (cycles, instructions,
    /// cache-references, cache-misses, branches, branch-misses, bus-cycles,
    /// ref-cycles, stalled-cycles-frontend/-backend) and tracepoints
    /// `SYSTEM:EVENT` (`sched:sched_switch`, `syscalls:sys_enter_*`: sampled
    /// at every hit, their fields printed by `sear script`); `sear list` shows
    /// them all. `{a,b}` opens a group; modifiers `:u` (user space only), `:k`
    /// (kernel only), `:p`. Repeatable. Default: cycles, or cpu-clock on
    /// machines without a hardware PMU (VMs).
    #[arg(short = 'e', long = "event", value_name = "EVENTS")]
    pub event: Vec<String>,
    /// Samples per second per event (default 4000), or `max` for the kernel's
    /// limit (/proc/sys/kernel/perf_event_max_sample_rate).
    #[arg(short = 'F', long = "freq", value_name = "HZ|max")]
    pub freq: Option<String>,
    /// Sample every PERIOD events instead (e.g. every 100000 page faults or
    /// ns of cpu-clock).
    #[arg(
        short = 'c',
        long = "count",
        value_name = "PERIOD",
        conflicts_with = "freq"
    )]
    pub count: Option<u64>,
    /// Record call graphs by frame pointers (as `--call-graph fp`), or in
    /// the mode perf's config sets (call-graph.record-mode).
    #[arg(short = 'g')]
    pub g: bool,
    /// Record each sample's data address (perf's -d/--data; for
    /// software events it is 0) and data mappings.
    #[arg(short = 'd', long = "data")]
    pub data: bool,
    /// Record the period in every sample also with a fixed -c period.
    #[arg(short = 'P', long = "period")]
    pub period: bool,
    /// Call graphs: `fp` (frame pointers: cheap, needs code built with
    /// -fno-omit-frame-pointer) or `dwarf[,SIZE]` (copies SIZE bytes of user
    /// stack per sample, default 8192, unwound later with the binaries'
    /// DWARF: works without frame pointers, bigger files).
    #[arg(long = "call-graph", value_name = "fp|dwarf[,SIZE]")]
    pub call_graph: Option<String>,
    #[command(flatten)]
    pub tasks: TaskArgs,
    /// Sample every process on every CPU (system-wide). With a command,
    /// until it exits; without, until Ctrl-C.
    #[arg(short = 'a', long = "all-cpus")]
    pub all_cpus: bool,
    /// Sample only these CPUs (`0-3,6`); system-wide on them.
    #[arg(short = 'C', long = "cpu", value_name = "CPUS", value_parser = cpu_list)]
    pub cpu: Option<CpuList>,
    /// Output file; `-` writes a pipe-mode stream to stdout (e.g. `| sear
    /// report`). An existing file is renamed FILE.old first.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "perf.data"
    )]
    pub output: PathBuf,
    /// Ring-buffer size per CPU: pages (a power of two) or a size with
    /// K/M/G (rounded up to a power of two of pages). Default 128 pages
    /// (512 KiB); raise it when the closing line reports lost events.
    #[arg(short = 'm', long = "mmap-pages", value_name = "PAGES|SIZE")]
    pub mmap_pages: Option<String>,
    #[command(flatten)]
    pub compress: super::CompressArgs,
    /// Also record context switches (SWITCH records).
    #[arg(long = "switch-events")]
    pub switch_events: bool,
    /// Also record off-CPU time (perf's --off-cpu): an `offcpu-time` event
    /// whose samples are the nanoseconds each thread waited (asleep or in
    /// uninterruptible I/O, not preempted) with the user stack it left
    /// from. Needs no BPF: sear pairs the sched:sched_switch tracepoint with
    /// context-switch records. View it with `sear report` (its own
    /// section), `flame --event offcpu-time`, or on-CPU and off-CPU
    /// together with `flame --wall-clock`.
    #[arg(long = "off-cpu")]
    pub off_cpu: bool,
    /// Start sampling MSECS milliseconds after the command starts (perf's
    /// -D/--delay); what the command maps and runs before is recorded.
    /// -1: start with the events disabled, for `--control enable`.
    #[arg(short = 'D', long = "delay", value_name = "MSECS", allow_negative_numbers = true,
          value_parser = clap::value_parser!(i64).range(-1..))]
    pub delay: Option<i64>,
    /// Listen for commands while recording (perf's `--control`):
    /// `fd:CTL[,ACK]` (open descriptors) or `fifo:CTL[,ACK]` (FIFO paths).
    /// Commands, one per line: `enable` and `disable` (all events, or
    /// `enable NAME`), `stop`, `ping`, `evlist`, `snapshot`; each is
    /// answered `ack` on ACK. With `-D -1` the events start disabled.
    #[arg(long = "control", value_name = "fd:CTL[,ACK]|fifo:CTL[,ACK]")]
    pub control: Option<String>,
    /// Stop once the output holds this much (bytes, or with B, K, M or
    /// G: `--max-size 100M`); the command is ended as on Ctrl-C.
    #[arg(long = "max-size", value_name = "SIZE", value_parser = max_size)]
    pub max_size: Option<u64>,
    /// Do not collect build ids of the binaries samples hit.
    #[arg(short = 'B', long = "no-buildid")]
    pub no_buildid: bool,
    /// Do not follow the command's children and new threads.
    #[arg(short = 'i', long = "no-inherit")]
    pub no_inherit: bool,
    /// Record the CPU of each sample.
    #[arg(long = "sample-cpu")]
    pub sample_cpu: bool,
    /// Record sample timestamps (they always are; accepted for perf's
    /// command lines).
    #[arg(short = 'T', long = "timestamp")]
    pub timestamp: bool,
    /// Count in user space only (every event, as `:u` without excluding
    /// the hypervisor).
    #[arg(long = "all-user", conflicts_with = "all_kernel")]
    pub all_user: bool,
    /// Count in the kernel only.
    #[arg(long = "all-kernel")]
    pub all_kernel: bool,
    /// The clock every event's times come from, as clock_gettime(2) names
    /// it: monotonic (mono), monotonic_raw (raw), realtime (real),
    /// boottime (boot), tai, a `CLOCK_` name, or a number. The file then
    /// records a reference reading beside the wall clock, so `script -F
    /// tod` prints each sample's time of day.
    #[arg(short = 'k', long = "clockid", value_name = "CLOCKID", value_parser = clockid)]
    pub clockid: Option<i32>,
    /// When recording ends, rename the output to FILE.YYYYMMDDhhmmsscc (the
    /// local time, to the hundredth of a second), as perf does.
    #[arg(long = "timestamp-filename")]
    pub timestamp_filename: bool,
    /// Take the registers at the interrupt with each sample: all perf
    /// knows, or `-I=ax,sp,...` (`-I=?` lists them). `script -F iregs`
    /// prints them.
    #[arg(short = 'I', long = "intr-regs", value_name = "REGS", num_args = 0..=1,
          require_equals = true, default_missing_value = "")]
    pub intr_regs: Option<String>,
    /// Take these user-space registers with each sample (all without a
    /// list; `--user-regs=?` lists them). With `--call-graph dwarf` IP and
    /// SP are added, as perf adds them.
    #[arg(long = "user-regs", value_name = "REGS", num_args = 0..=1,
          require_equals = true, default_missing_value = "")]
    pub user_regs: Option<String>,
    /// Call chains of user space only (no kernel frames).
    #[arg(long = "user-callchains")]
    pub user_callchains: bool,
    /// Call chains of the kernel only (no user frames).
    #[arg(long = "kernel-callchains")]
    pub kernel_callchains: bool,
    /// Put all events in one group, led by the first (as `{a,b}`).
    #[arg(long = "group")]
    pub group: bool,
    /// Count but do not sample (no sampling period or frequency).
    #[arg(short = 'n', long = "no-samples")]
    pub no_samples: bool,
    /// With -F above the kernel's limit, fail instead of lowering it.
    #[arg(long = "strict-freq")]
    pub strict_freq: bool,
    /// Run sear (and the command it starts) with this SCHED_FIFO priority.
    #[arg(short = 'r', long = "realtime", value_name = "PRIO")]
    pub realtime: Option<i32>,
    /// Branch stacks (LBR) of any taken branch: needs a hardware PMU with
    /// branch records (not virtual machines); refused with that reason.
    #[arg(short = 'b', long = "branch-any")]
    pub branch_any: bool,
    /// Branch stacks of the given branch types: see -b.
    #[arg(short = 'j', long = "branch-filter", value_name = "TYPES")]
    pub branch_filter: Option<String>,
    /// How perf batches its writes and which CPU reads which buffer
    /// (`--mmap-flush`, `--aio`, `--affinity`, `--num-thread-synthesize`):
    /// accepted for perf's command lines; sear's writer decides these
    /// itself and the recording is the same.
    #[arg(long = "mmap-flush", value_name = "SIZE")]
    pub mmap_flush: Option<String>,
    #[arg(long = "aio", value_name = "N", num_args = 0..=1, require_equals = true,
          default_missing_value = "1", hide = true)]
    pub aio: Option<u32>,
    #[arg(long = "affinity", value_name = "node|cpu", hide = true,
          value_parser = ["node", "cpu"])]
    pub affinity: Option<String>,
    #[arg(long = "num-thread-synthesize", value_name = "N", hide = true)]
    pub num_thread_synthesize: Option<u32>,
    /// Record each sample's weight (memory latency events set it).
    #[arg(short = 'W', long = "weight")]
    pub weight: bool,
    /// Record each sample's physical data address.
    #[arg(long = "phys-data")]
    pub phys_data: bool,
    /// Record the page size of each sample's data address.
    #[arg(long = "data-page-size")]
    pub data_page_size: bool,
    /// Record the page size of each sample's code address.
    #[arg(long = "code-page-size")]
    pub code_page_size: bool,
    /// Record raw sample data (tracepoint fields) and CPUs.
    #[arg(short = 'R', long = "raw-samples")]
    pub raw_samples: bool,
    /// Record PERF_SAMPLE_IDENTIFIER in every sample.
    #[arg(long = "sample-identifier")]
    pub sample_identifier: bool,
    /// Record enabled and running times with counter values.
    #[arg(long = "running-time")]
    pub running_time: bool,
    /// Per-thread counts when threads exit (perf's -s/--stat).
    #[arg(short = 's', long = "stat")]
    pub stat: bool,
    /// No BPF program load/unload records (kernel symbol records stay).
    #[arg(long = "no-bpf-event")]
    pub no_bpf_event: bool,
    /// Do not add the binaries samples hit to perf's build-id cache
    /// (`~/.debug`, or perf's `buildid.dir`), where sear record otherwise
    /// puts them, as perf does, so that reports of this recording still
    /// find them after a rebuild.
    #[arg(short = 'N', long = "no-buildid-cache")]
    pub no_buildid_cache: bool,
    /// Close the output and go on in a new file: on SIGUSR2 (`signal`, the
    /// default), once it holds SIZE (B, K, M, G: `100M`) or every TIME
    /// (s, m, h, d: `30s`). Each closed file is named FILE.<timestamp>, as
    /// with --timestamp-filename; no build ids are collected (as perf).
    #[arg(long = "switch-output", value_name = "signal|SIZE|TIME", num_args = 0..=1,
          require_equals = true, default_missing_value = "signal")]
    pub switch_output: Option<String>,
    /// With --switch-output: keep only the newest N files.
    #[arg(
        long = "switch-max-files",
        value_name = "N",
        requires = "switch_output"
    )]
    pub switch_max_files: Option<usize>,
    /// Record NAMESPACES records: each new task's namespaces (net, uts,
    /// ipc, pid, user, mnt, cgroup), and those of the threads running at
    /// the start (`script --show-namespace-events` prints them).
    #[arg(long = "namespaces")]
    pub namespaces: bool,
    /// Record each sample's cgroup id, and CGROUP records naming the
    /// cgroups (the cgroup2 hierarchy's at the start, new ones as made).
    #[arg(long = "all-cgroups")]
    pub all_cgroups: bool,
    /// With -a: sample the events only while tasks of these cgroups run
    /// (names under the cgroup file system, comma-separated, mapped to the
    /// events given before it, in order; one name applies to all; perf's
    /// `-G`).
    #[arg(
        short = 'G',
        long = "cgroup",
        value_name = "NAMES",
        value_delimiter = ','
    )]
    pub cgroup: Vec<String>,
    /// Per-thread ring buffers (one per thread, any CPU) instead of
    /// per-CPU ones; as perf, new threads are not followed and samples
    /// carry no time unless -T asks.
    #[arg(long = "per-thread")]
    pub per_thread: bool,
    /// Sample the processes of this user (a name or uid) running when the
    /// recording starts.
    #[arg(short = 'u', long = "uid", value_name = "USER")]
    pub uid: Option<String>,
    /// The kernel wakes sear at every record (no batching).
    #[arg(long = "no-buffering")]
    pub no_buffering: bool,
    /// Each MMAP2 record carries its binary's build id (kernel 5.12+);
    /// the file then has no separate build-id list (as perf).
    #[arg(long = "buildid-mmap")]
    pub buildid_mmap: bool,
    /// Build ids of every mapped binary, not only those samples hit.
    #[arg(long = "buildid-all")]
    pub buildid_all: bool,
    /// perf's flight recorder: the kernel writes each ring buffer backward
    /// over its oldest records and sear reads them once, at the end, so the
    /// file holds the last `-m` pages' worth per CPU of what happened; the
    /// processes are described as they are at the end (--tail-synthesize).
    #[arg(long = "overwrite")]
    pub overwrite: bool,
    /// Describe the processes that existed before the recording at its end
    /// instead of its start.
    #[arg(long = "tail-synthesize")]
    pub tail_synthesize: bool,
    /// What to describe of what runs at the start (perf's `--synth`): `no`,
    /// `all` (the default), or a comma list of `task` (COMM records),
    /// `mmap` (tasks and their maps), `cgroup` (with --all-cgroups).
    #[arg(long = "synth", value_name = "no|all|task|mmap|cgroup",
          value_parser = record::Synth::parse)]
    pub synth: Option<record::Synth>,
    /// perf's parallel streaming (`--threads[=cpu|core|package|numa|MASKS]`:
    /// a writer thread per group of rings, and a directory for output).
    /// sear drains every ring from one thread, which keeps up with the
    /// rates it allows, and writes one file; the spec is checked and the
    /// recording made as without it. sear reads perf's directories.
    #[arg(long = "threads", value_name = "SPEC", num_args = 0..=1, require_equals = true,
          default_missing_value = "cpu", value_parser = threads_spec)]
    pub threads: Option<String>,
    /// Leave the recorder's own hits out of the tracepoints of the `-e`
    /// before it (a `common_pid != PID` filter, as perf's).
    #[arg(long = "exclude-perf")]
    pub exclude_perf: bool,
    /// A tracepoint filter for the events of the `-e` before it, in the
    /// kernel's filter language (`--filter 'prev_pid == 1'`,
    /// `'common_pid != 0 && next_comm ~ "py*"'`); several join with `&&`.
    #[arg(long = "filter", value_name = "FILTER")]
    pub filter: Vec<String>,
    /// perf's side-band trigger for --switch-output: not implemented in
    /// sear yet (refused; `--switch-output=signal` with SIGUSR2 from the
    /// trigger does the same).
    #[arg(long = "switch-output-event", value_name = "EVENT")]
    pub switch_output_event: Option<String>,
    /// Fetch debug files by build id while recording (perf's
    /// `--debuginfod[=URLS]`): sear record does not fetch; accepted with
    /// a warning, as Debian's perf (built without debuginfod) prints one.
    #[arg(long = "debuginfod", value_name = "URLS", num_args = 0..=1, require_equals = true,
          default_missing_value = "")]
    pub debuginfod: Option<String>,
    /// perf's clang options for BPF events written in C (`-e prog.c`),
    /// which sear does not take: accepted without effect.
    #[arg(long = "clang-path", value_name = "PATH", hide = true)]
    pub clang_path: Option<String>,
    #[arg(long = "clang-opt", value_name = "OPTS", hide = true)]
    pub clang_opt: Option<String>,
    /// A vmlinux image (perf's `--vmlinux`): recording needs none; the
    /// file must exist, as perf checks.
    #[arg(long = "vmlinux", value_name = "FILE")]
    pub vmlinux: Option<PathBuf>,
    /// The recording always stores its first and last sample times (perf's
    /// --timestamp-boundary): accepted for perf's command lines.
    #[arg(long = "timestamp-boundary")]
    pub timestamp_boundary: bool,
    /// How long perf may read a process's /proc maps: sear reads them
    /// whole, so accepted for perf's command lines.
    #[arg(long = "proc-map-timeout", value_name = "MSECS")]
    pub proc_map_timeout: Option<u64>,
    /// Sample hardware transaction flags: the kernel has none for software
    /// events (perf then sets nothing either); accepted.
    #[arg(long = "transaction")]
    pub transaction: bool,
    /// AUX area snapshots, samples and kcore copies: they need a hardware
    /// tracer (Intel PT, Arm CoreSight); refused with that reason.
    #[arg(short = 'S', long = "snapshot", value_name = "OPTS", num_args = 0..=1,
          require_equals = true, default_missing_value = "")]
    pub snapshot: Option<String>,
    #[arg(long = "aux-sample", value_name = "OPTS", num_args = 0..=1,
          require_equals = true, default_missing_value = "", hide = true)]
    pub aux_sample: Option<String>,
    #[arg(long = "kcore", hide = true)]
    pub kcore: bool,
    /// Collect build ids even with --switch-output.
    #[arg(long = "no-no-buildid", hide = true)]
    pub no_no_buildid: bool,
    /// Check the options, open nothing, exit.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// The command to run and its arguments (after `--`).
    // No allow_hyphen_values: with it, an unknown option would be run as
    // the command; the command's own options follow its name.
    #[arg(value_name = "COMMAND", trailing_var_arg = true)]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
pub struct StatArgs {
    /// Events to count, comma-separated, as perf names them (the names of
    /// `sear record -e`: task-clock, cpu-clock, page-faults, minor-faults,
    /// major-faults, context-switches/cs, cpu-migrations, cycles,
    /// instructions, branches, branch-misses, ...). Repeatable. Default:
    /// perf's (task-clock, context-switches, cpu-migrations, page-faults,
    /// cycles, instructions, branches, branch-misses).
    #[arg(short = 'e', long = "event", value_name = "EVENTS")]
    pub event: Vec<String>,
    /// Run the command N times; print means and their relative spread.
    #[arg(short = 'r', long = "repeat", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Start counting MSECS milliseconds after the command starts (what it
    /// does before is not counted); -1: start with the counters disabled,
    /// for `--control enable`.
    #[arg(short = 'D', long = "delay", value_name = "MSECS", allow_negative_numbers = true,
          value_parser = clap::value_parser!(i64).range(-1..))]
    pub delay: Option<i64>,
    /// Listen for commands while counting (perf's `--control`):
    /// `fd:CTL[,ACK]` or `fifo:CTL[,ACK]`; `enable`, `disable`, `stop`,
    /// `ping`, `evlist`, each answered `ack` on ACK.
    #[arg(long = "control", value_name = "fd:CTL[,ACK]|fifo:CTL[,ACK]")]
    pub control: Option<String>,
    /// With -r: a table of each run's wall time, its difference from the
    /// mean and a bar per 5% of it, before the final result.
    #[arg(long = "table")]
    pub table: bool,
    #[command(flatten)]
    pub tasks: TaskArgs,
    /// Count on every CPU (system-wide).
    #[arg(short = 'a', long = "all-cpus")]
    pub all_cpus: bool,
    /// CSV output with this field separator (as perf's `-x`).
    #[arg(short = 'x', long = "field-separator", value_name = "SEP")]
    pub field_separator: Option<String>,
    /// JSON output, one object per line (perf 6.1's `-j/--json-output`;
    /// `--json` as later perfs spell it).
    #[arg(
        short = 'j',
        long = "json-output",
        visible_alias = "json",
        conflicts_with = "field_separator"
    )]
    pub json: bool,
    /// With -a: count the events only while tasks of these cgroups run
    /// (names under the cgroup file system, comma-separated, mapped to the
    /// events in order; one name applies to all; perf's `-G`). The
    /// cgroup shows after each event's name.
    #[arg(
        short = 'G',
        long = "cgroup",
        value_name = "NAMES",
        value_delimiter = ','
    )]
    pub cgroup: Vec<String>,
    /// With -a: count every event once per cgroup of this list.
    #[arg(long = "for-each-cgroup", value_name = "NAMES", value_delimiter = ',')]
    pub for_each_cgroup: Vec<String>,
    /// With -x and --summary: leave out the `summary` column perf puts
    /// before each line of the totals.
    #[arg(long = "no-csv-summary")]
    pub no_csv_summary: bool,
    /// Put all events into one counter group (perf's `-g/--group`): they
    /// count together, and a group with an event the machine lacks counts
    /// none of its others (`<not counted>`), as perf.
    #[arg(short = 'g', long = "group")]
    pub group: bool,
    /// Write the counts to this open file descriptor instead of stderr
    /// (`--log-fd 1`: stdout).
    #[arg(long = "log-fd", value_name = "N", conflicts_with = "output")]
    pub log_fd: Option<i32>,
    /// With -I on a terminal: clear the screen before each interval.
    #[arg(long = "interval-clear")]
    pub interval_clear: bool,
    /// Print only the derived metrics, no counts. perf 6.1 derives none
    /// from software events, so here the table has empty lines where they
    /// would be, as perf prints it. Not with -r.
    #[arg(long = "metric-only")]
    pub metric_only: bool,
    /// perf's counter scaling for multiplexed events (`--no-scale` turns
    /// it off): software counters are never multiplexed, so the counts
    /// are the same either way; accepted for perf's command lines.
    #[arg(long = "scale", overrides_with = "no_scale")]
    pub scale: bool,
    #[arg(long = "no-scale", hide = true)]
    pub no_scale: bool,
    /// perf's metric and hybrid-CPU tuning (`--metric-no-group`,
    /// `--metric-no-merge`, `--hybrid-merge`, `--percore-show-thread`,
    /// `--td-level N`): they change nothing without metrics or a hybrid
    /// PMU, as here; accepted for perf's command lines.
    #[arg(long = "metric-no-group")]
    pub metric_no_group: bool,
    #[arg(long = "metric-no-merge", hide = true)]
    pub metric_no_merge: bool,
    #[arg(long = "hybrid-merge", hide = true)]
    pub hybrid_merge: bool,
    #[arg(long = "percore-show-thread", hide = true)]
    pub percore_show_thread: bool,
    #[arg(long = "td-level", value_name = "N", hide = true)]
    pub td_level: Option<u32>,
    /// Options that need hardware this machine lacks, refused with perf's
    /// words: `-T/--transaction` (TSX events), `--smi-cost`
    /// (freeze_on_smi), `--iostat` (uncore I/O PMUs), `--cputype`
    /// (hybrid CPUs), `--filter` (tracepoints or address filters).
    #[arg(short = 'T', long = "transaction")]
    pub transaction: bool,
    #[arg(long = "smi-cost", hide = true)]
    pub smi_cost: bool,
    #[arg(long = "iostat", value_name = "CONFIG", num_args = 0..=1, default_missing_value = "default",
          require_equals = true, hide = true)]
    pub iostat: Option<String>,
    #[arg(long = "cputype", value_name = "TYPE", hide = true)]
    pub cputype: Option<String>,
    #[arg(long = "filter", value_name = "FILTER", hide = true)]
    pub filter: Option<String>,
    /// Do not count the command's children and new threads.
    #[arg(long = "no-inherit")]
    pub no_inherit: bool,
    /// Print the counts of every MSECS milliseconds as they go (perf's
    /// `-I`): one line per event and interval, time first; no totals.
    #[arg(short = 'I', long = "interval-print", value_name = "MSECS",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub interval_print: Option<u64>,
    /// With -I: print only the first N intervals (the command still runs
    /// to its end).
    #[arg(long = "interval-count", value_name = "N", requires = "interval_print",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub interval_count: Option<u64>,
    /// With -I: after the intervals, print the totals as without -I (of
    /// the intervals printed, with --interval-count).
    #[arg(long = "summary")]
    pub summary: bool,
    /// Write the counts to FILE instead of stderr, after a `# started on`
    /// line (as perf's `-o`).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With -o: append to FILE instead of replacing it.
    #[arg(long = "append", requires = "output")]
    pub append: bool,
    /// With -a: a line per CPU and event instead of totals.
    #[arg(short = 'A', long = "no-aggr", group = "aggr")]
    pub no_aggr: bool,
    /// With -p: a line per thread and event, busiest first; with -a, every
    /// thread of the system (as they are when counting starts; those that
    /// counted nothing are left out).
    #[arg(long = "per-thread", group = "aggr")]
    pub per_thread: bool,
    /// With -a: totals per core (S<socket>-D<die>-C<core>, then how many CPUs).
    #[arg(long = "per-core", group = "aggr")]
    pub per_core: bool,
    /// With -a: totals per die.
    #[arg(long = "per-die", group = "aggr")]
    pub per_die: bool,
    /// With -a: totals per socket.
    #[arg(long = "per-socket", group = "aggr")]
    pub per_socket: bool,
    /// With -a: one line per NUMA node and event, summing its CPUs.
    #[arg(long = "per-node", group = "aggr")]
    pub per_node: bool,
    /// The command to run and its arguments (after `--`).
    /// More events: -d adds perf's L1-dcache and LLC events, -dd the
    /// L1-icache and TLB ones, -ddd the prefetch ones (`<not supported>`
    /// where there is no PMU, as perf prints them).
    #[arg(short = 'd', long = "detailed", action = clap::ArgAction::Count)]
    pub detailed: u8,
    /// No counters: only the elapsed, user and system times.
    #[arg(short = 'n', long = "null")]
    pub null: bool,
    /// Print the counts with the locale's thousands separator (`LC_NUMERIC`,
    /// e.g. 1,234,567 in en_US.UTF-8; the C locale has none): perf's
    /// default.
    #[arg(short = 'B', long = "big-num", overrides_with = "no_big_num")]
    pub big_num: bool,
    /// Print the counts without the locale's thousands separator.
    #[arg(long = "no-big-num", overrides_with = "big_num")]
    pub no_big_num: bool,
    /// With -a: only these CPUs (a list like 0-3,6).
    #[arg(short = 'C', long = "cpu", value_name = "CPUS", value_parser = cpu_list)]
    pub cpu: Option<CpuList>,
    /// Stop after this many milliseconds (the command gets SIGTERM) and
    /// print the counts.
    #[arg(long = "timeout", value_name = "MSECS", conflicts_with = "interval_print",
          value_parser = clap::value_parser!(u64).range(10..))]
    pub timeout: Option<u64>,
    /// Count in user space only (every event; names unchanged, as perf).
    #[arg(long = "all-user", conflicts_with = "all_kernel")]
    pub all_user: bool,
    /// Count in the kernel only.
    #[arg(long = "all-kernel")]
    pub all_kernel: bool,
    /// A shell command to run before each run of the counted command (a
    /// failing one stops there, with its status).
    #[arg(long = "pre", value_name = "COMMAND")]
    pub pre: Option<String>,
    /// A shell command to run after each run.
    #[arg(long = "post", value_name = "COMMAND")]
    pub post: Option<String>,
    /// Flush the file systems (sync) before each run.
    #[arg(short = 'S', long = "sync")]
    pub sync: bool,
    /// Metrics or metric groups (`-M IPC`): perf defines them per CPU model
    /// over hardware events, which this machine lacks; named, perf says it
    /// cannot find them and counts the default events, and so does sear.
    #[arg(short = 'M', long = "metrics", value_name = "METRICS")]
    pub metrics: Option<String>,
    /// Top-down analysis: needs -a and a PMU with top-down events (none
    /// here); refused as perf refuses it.
    #[arg(long = "topdown")]
    pub topdown: bool,
    /// Do not merge counts of events of the same name from several PMUs
    /// (there is one here: accepted for perf's command lines).
    #[arg(long = "no-merge")]
    pub no_merge: bool,
    // No allow_hyphen_values: with it, clap takes `-x,` for the command.
    #[arg(value_name = "COMMAND", trailing_var_arg = true)]
    pub command: Vec<std::ffi::OsString>,
}

/// The running tasks record and stat attach to (perf's `-p`, `-t`).
#[derive(Debug, Clone, Args)]
pub struct TaskArgs {
    /// Attach to these running processes (comma-separated pids), all their
    /// threads.
    #[arg(short = 'p', long = "pid", value_name = "PIDS", value_parser = super::targets)]
    pub pid: Option<super::IdList>,
    /// Attach to these running threads only (comma-separated tids).
    #[arg(short = 't', long = "tid", value_name = "TIDS", value_parser = super::targets)]
    pub tid: Option<super::IdList>,
}

impl TaskArgs {
    pub fn pids(&self) -> Vec<i32> {
        self.pid.clone().map(|p| p.0).unwrap_or_default()
    }
    pub fn tids(&self) -> Vec<i32> {
        self.tid.clone().map(|t| t.0).unwrap_or_default()
    }
}

/// perf's `-k` values: clock names (case-insensitive, `CLOCK_` prefix
/// allowed, short forms) or a clock number.
fn clockid(s: &str) -> Result<i32, String> {
    if let Ok(n) = s.parse::<i32>() {
        return Ok(n);
    }
    let lower = s.to_ascii_lowercase();
    let name = lower.strip_prefix("clock_").unwrap_or(&lower);
    Ok(match name {
        "monotonic" | "mono" => libc::CLOCK_MONOTONIC,
        "monotonic_raw" | "raw" => libc::CLOCK_MONOTONIC_RAW,
        "realtime" | "real" => libc::CLOCK_REALTIME,
        "boottime" | "boot" => libc::CLOCK_BOOTTIME,
        "tai" => libc::CLOCK_TAI,
        _ => {
            return Err(format!(
                "unknown clock `{s}`: use monotonic (mono), monotonic_raw (raw), realtime \
                 (real), boottime (boot), tai or a clock number"
            ))
        }
    })
}

/// perf's `--threads` specs: cpu, core, package, numa, or masks
/// `MAPS/AFFINITY[:MAPS/AFFINITY...]` of CPU lists.
fn threads_spec(s: &str) -> Result<String, String> {
    if matches!(s, "cpu" | "core" | "package" | "numa") {
        return Ok(s.to_owned());
    }
    let list_ok = |l: &str| {
        !l.is_empty()
            && l.split(',').all(|r| {
                let mut ends = r.splitn(2, '-');
                ends.all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
    };
    let ok = s.split(':').all(|spec| match spec.split_once('/') {
        Some((maps, aff)) => list_ok(maps) && list_ok(aff),
        None => false,
    });
    if ok {
        Ok(s.to_owned())
    } else {
        Err(format!(
            "`{s}`: use cpu, core, package, numa, or CPU lists as MAPS/AFFINITY[:MAPS/AFFINITY...]"
        ))
    }
}

fn max_size(s: &str) -> Result<u64, String> {
    record::parse_size("--max-size", s).map_err(|e| e.to_string())
}

/// `sear top`'s options: perf top's.
#[derive(Debug, Args)]
pub struct TopArgs {
    /// Events to sample, as `sear record -e` takes them (default: cycles,
    /// cpu-clock on a machine without a PMU, as perf top falls back).
    #[arg(short = 'e', long = "event", value_name = "EVENTS")]
    pub event: Vec<String>,
    /// Samples per second per CPU (default 4000, as perf top), or `max`.
    #[arg(short = 'F', long = "freq", value_name = "HZ|max")]
    pub freq: Option<String>,
    /// A sample every N events instead of a frequency.
    #[arg(short = 'c', long = "count", value_name = "N")]
    pub count: Option<u64>,
    /// Record call chains (frame pointers): the table then shows the
    /// children column and each entry's call graph unfolds.
    #[arg(short = 'g')]
    pub g: bool,
    /// How call chains are recorded: fp, or dwarf[,SIZE].
    #[arg(long = "call-graph", value_name = "fp|dwarf[,SIZE]")]
    pub call_graph: Option<String>,
    #[command(flatten)]
    pub tasks: TaskArgs,
    /// Every CPU (the default without -p, -t or a command).
    #[arg(short = 'a', long = "all-cpus")]
    pub all_cpus: bool,
    /// Only these CPUs (a list like 0-3,6).
    #[arg(short = 'C', long = "cpu", value_name = "CPUS", value_parser = cpu_list)]
    pub cpu: Option<CpuList>,
    /// Ring-buffer size per CPU, in pages (a power of two) or with a unit.
    #[arg(short = 'm', long = "mmap-pages", value_name = "PAGES|SIZE")]
    pub mmap_pages: Option<String>,
    /// Seconds between refreshes (perf top's default: 2).
    #[arg(
        short = 'd',
        long = "delay",
        value_name = "SECS",
        default_value_t = 2.0
    )]
    pub delay: f64,
    /// Show at most N entries.
    #[arg(short = 'E', long = "entries", value_name = "N")]
    pub entries: Option<usize>,
    /// Start each refresh from zero instead of decaying the older samples
    /// (by 7/8 a refresh, as perf top).
    #[arg(short = 'z', long = "zero")]
    pub zero: bool,
    /// Print the table at each refresh instead of the browser.
    #[arg(long = "stdio", overrides_with = "tui")]
    pub stdio: bool,
    /// The browser (the default on a terminal).
    #[arg(long = "tui", overrides_with = "stdio")]
    pub tui: bool,
    /// Leave out samples in the kernel.
    #[arg(short = 'K', long = "hide_kernel_symbols")]
    pub hide_kernel: bool,
    /// Leave out samples in user space.
    #[arg(short = 'U', long = "hide_user_symbols")]
    pub hide_user: bool,
    /// Sort keys, as report's (default: dso,sym, as perf top).
    #[arg(short = 's', long = "sort", value_name = "KEYS")]
    pub sort: Option<String>,
    /// A column with each entry's sample count.
    #[arg(short = 'n', long = "show-nr-samples")]
    pub show_nr_samples: bool,
    /// Hide entries below this percentage.
    #[arg(long = "percent-limit", value_name = "PERCENT")]
    pub percent_limit: Option<f64>,
    /// With call chains, the children column (perf top's default with -g).
    #[arg(long = "children", overrides_with = "no_children")]
    pub children: bool,
    #[arg(long = "no-children", overrides_with = "children")]
    pub no_children: bool,
    /// A command to start and sample until it exits (instead of the whole
    /// machine, after `--`).
    #[arg(value_name = "COMMAND", trailing_var_arg = true)]
    pub command: Vec<std::ffi::OsString>,
}
