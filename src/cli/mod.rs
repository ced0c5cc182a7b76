//! Command-line interface: perf-compatible subcommands and flags, turned
//! into plain option structs before any work starts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// `sear --version` and `sear version`: perf's form, then what sear reads
/// and writes.
/// (clap prints "sear " before it: perf's "perf version X" form.)
pub const VERSION: &str = concat!(
    "version ",
    env!("CARGO_PKG_VERSION"),
    "\n(sear: perf.data of every perf version, file and pipe mode; perf 6.1's output)"
);

#[derive(Debug, Parser)]
#[command(
    name = "sear",
    version = VERSION,
    about = "A fast, perf-compatible sampling profiler for Linux",
    long_about = "sear reads and writes perf.data (any perf version, file or pipe mode) and \
prints what perf prints, faster.\n\nTypical use:\n  sear record -g -- ./myprog     # sample a program\n  \
sear report --stats            # what the recording contains\n  sear report --header-only      # where and how it was recorded",
    propagate_version = true,
    // perf takes an option again with its last value winning (`-g none
    // --call-graph=none`, `--stdio --stdio`); so does sear (every
    // subcommand: clap propagates this).
    args_override_self = true,
    // perf takes any unambiguous prefix of a long option (`--comm` for
    // `--comms`); so does sear.
    infer_long_args = true
)]
pub struct Cli {
    /// More messages on stderr (-v, -vv for debug output); `report -v` also
    /// prints perf's verbose columns (DSOs by path, each symbol after its
    /// address and where its symbols were read from).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only errors on stderr; `report` also leaves out its `#` lines
    /// (header, column titles, tip), printing rows and call graphs only, as
    /// perf report -q does.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Never page output. On a terminal, reports otherwise go through
    /// $SEAR_PAGER, $PERF_PAGER, $PAGER or `less` (set one to `cat` or
    /// empty to turn paging off).
    #[arg(long, global = true)]
    pub no_pager: bool,
    /// Page the output of any command on a terminal (perf's -p/--paginate;
    /// before the command: `sear -p collapse -i perf.data`).
    #[arg(short = 'p', long = "paginate", conflicts_with = "no_pager")]
    pub paginate: bool,
    /// perf's debug settings: `verbose=N` is -v N times; the others
    /// (ordered-events, data-convert, stderr...) are perf's internals and
    /// are accepted without effect.
    #[arg(long = "debug", value_name = "VAR[=N]", global = true)]
    pub debug: Vec<String>,
    /// perf's build-id cache directory (default ~/.debug, or perf's config
    /// buildid.dir); sets $PERF_BUILDID_DIR as perf does.
    #[arg(long = "buildid-dir", value_name = "DIR", global = true)]
    pub buildid_dir: Option<std::path::PathBuf>,
    /// Look for binaries and their debug files under DIR, by the paths
    /// they were recorded at (a copy of another machine's or a
    /// container's root, as perf's --symfs); the build-id cache is still
    /// looked in first.
    #[arg(long = "symfs", value_name = "DIR", global = true)]
    pub symfs: Option<std::path::PathBuf>,
    /// Read the kernel's symbols from FILE (a /proc/kallsyms copy), whatever
    /// kernel the recording names (perf's --kallsyms).
    #[arg(long = "kallsyms", value_name = "FILE", global = true)]
    pub kallsyms: Option<std::path::PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

mod events;
pub use events::{RecordArgs, StatArgs, TopArgs};

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a command and sample it into perf.data (like `perf record`).
    #[command(
        long_about = "Run a command and sample it into perf.data (like `perf record`); perf and sear \
read the file.\n\nExamples:\n  sear record -- ./prog args          # cycles (cpu-clock without a PMU) at 4000 Hz\n  \
sear record -g -- ./prog            # with frame-pointer call graphs\n  \
sear record --call-graph dwarf -- ./prog   # call graphs of programs built without frame pointers\n  \
sear record -e cpu-clock,page-faults -F 999 -- ./prog\n  \
sear record -p 1234 -- sleep 5      # a running process, for 5 seconds (or until Ctrl-C)\n  \
sear record -a -z -o sys.data       # every CPU, compressed, until Ctrl-C\n\n\
Then: sear report (hotspots), sear script (samples), sear flame -i perf.data -o flame.svg.\n\n\
The command's exit status is sear's (128+N when a signal N ended it; 127 when it cannot be \
found). Ctrl-C or SIGTERM stop recording and leave a complete file."
    )]
    Record(Box<RecordArgs>),
    /// Run a command and count events while it runs (like `perf stat`).
    #[command(
        long_about = "Run a command and count events while it runs (like `perf stat`); prints perf \
stat's table on stderr.\n\nExamples:\n  sear stat -- ./prog args            # perf's default events\n  \
sear stat -e task-clock,page-faults -r 5 -- ./prog   # mean and spread of 5 runs\n  \
sear stat -x, -- ./prog              # CSV\n  sear stat --json -- ./prog\n  \
sear stat -p 1234 -- sleep 5          # a running process for 5 seconds\n  \
sear stat record -o counts.data -- ./prog   # count, and keep the counts (perf's stat record)\n  \
sear stat report -i counts.data      # print a `stat record` file (sear's or perf's)\n\n\
The command's exit status is sear's (127 when it cannot be found)."
    )]
    Stat(Box<StatArgs>),
    /// Read perf.data and show what it contains (like `perf report`).
    Report(Box<ReportArgs>),
    /// The hottest functions of the machine, live (like `perf top`).
    #[command(
        long_about = "The hottest functions of the machine, live (like `perf top`): samples every CPU (or -p/-t tasks, -C CPUs, or a command after `--`) and shows the hotspot table, refreshed every -d seconds; older samples fade by 7/8 a refresh (-z: each refresh from zero). On a terminal it is the report browser (unfold call graphs with Enter after -g, `/` filter, `t`/`d` zoom, `s` events, `?` keys, `q` quits); --stdio prints the table at each refresh.\n\nExamples:\n  sear top                     # the whole machine, cycles (cpu-clock without a PMU) at 4000 Hz\n  sear top -g                  # with call graphs\n  sear top -p 1234 -d 1        # one process, a refresh a second\n  sear top --stdio -E 10 -- ./prog   # a command's 10 hottest functions, printed until it exits"
    )]
    Top(Box<TopArgs>),
    /// Print every sample of a recording, in time order, with its call
    /// chain (like `perf script`).
    Script(Box<ScriptArgs>),
    /// Show where inside hot functions the samples fall: each instruction's
    /// share, with the source lines interleaved (like `perf annotate --stdio`).
    #[command(
        long_about = "Show where inside hot functions the samples fall (like `perf annotate --stdio`): \
the function's disassembly, each instruction with its share of the function's samples \
(percent of its period), and, where the binary has DWARF line info, the source lines that \
produced the instructions interleaved above them (read from the source files, `file:line` \
where a file is missing; `function():` marks where inlined code starts and ends).\n\n\
Examples:\n  sear annotate -i perf.data              # every sampled function, hottest first\n  \
sear annotate --symbol hot_loop          # one function (also: sear annotate hot_loop)\n  \
sear annotate hot_loop --no-source -M intel   # disassembly only, Intel syntax\n  \
sear annotate hot_loop -l                # with a summary of the hottest source lines\n  \
sear annotate --dsos libc.so.6 --percent-limit 5   # functions of libc with 5% or more\n\n\
Find the hot functions first with `sear report --no-children`. x86-64 code only; kernel \
functions are skipped (sear does not read vmlinux or /proc/kcore yet)."
    )]
    Annotate(AnnotateArgs),
    /// List the build ids of the binaries in a recording (like `perf buildid-list`).
    #[command(name = "buildid-list")]
    BuildidList(BuildidListArgs),
    /// Manage perf's build-id cache (like `perf buildid-cache`): add,
    /// remove, purge and list binaries kept by build id.
    #[command(
        name = "buildid-cache",
        long_about = "Manage perf's build-id cache (like `perf buildid-cache`), the directory \
(`~/.debug`, or perf's `buildid.dir` setting) where `sear record` and `perf record` keep a copy of \
each binary their samples hit, by build id, so that reports still name and unwind its frames \
after the binary is rebuilt or removed. sear and perf share it (perf 6.1's layout).\n\n\
Examples:\n  sear buildid-cache -a ./prog            # keep this build of prog\n  \
sear buildid-cache -l                    # the cached binaries still on disk as cached\n  \
sear buildid-cache -M perf.data          # the recording's binaries missing from the cache\n  \
sear buildid-cache -p ./prog             # forget every cached build of prog"
    )]
    BuildidCache(BuildidCacheArgs),
    /// Pack what a recording needs from the build-id cache into one file
    /// for another machine (like `perf archive`), or unpack one there.
    #[command(
        long_about = "Pack the binaries, debug files and kernel symbols a recording needs, as \
perf's build-id cache keeps them, into FILE.tar.bz2 (like `perf archive`), so the recording reports \
the same on another machine. Binaries the cache lacks are added first where the file at the \
recorded path still has the recorded build id.\n\n\
On the other machine: `sear archive --unpack FILE.tar.bz2` (or perf's `tar xvf FILE.tar.bz2 -C \
~/.debug`), then `sear report -i FILE` as here. The unpacker writes only into the cache: absolute \
paths, `..`, foreign links and device files in an archive are refused.\n\n\
Examples:\n  sear archive                     # perf.data -> perf.data.tar.bz2\n  \
sear archive run1.data -o run1.tar.bz2\n  \
sear archive --unpack perf.data.tar.bz2   # on the other machine"
    )]
    Archive(ArchiveArgs),
    /// List the events this machine can record (like `perf list`):
    /// hardware, software, cache and tracepoint events.
    #[command(
        long_about = "List the events this machine can record (like `perf list`): hardware, \
software, cache and tracepoint events, with `-e`'s names. Hardware and cache events this \
machine cannot count (no PMU, as in most VMs) are listed as such.\n\nExamples:\n  \
sear list                  # everything\n  \
sear list sched            # events whose name has `sched` in it\n  \
sear list 'sched:*'        # the sched system's tracepoints\n  \
sear list sw tracepoint    # only those kinds (hw, sw, cache, tracepoint)"
    )]
    List(ListArgs),
    /// List the events of a recording (like `perf evlist`): their names, with
    /// -v every attribute, -F the sampling rate, -g the groups,
    /// --trace-fields the tracepoints' fields.
    Evlist(EvlistArgs),
    /// Rewrite a recording (like `perf inject`): pipe to file mode, decompress, compress.
    ///
    /// Compressed input is written decompressed unless -z asks for compression.
    Inject(InjectArgs),
    /// Fold the stacks of a recording (`-i perf.data`) or of `perf script`
    /// text into `root;...;leaf COUNT` lines (like `perf script |
    /// stackcollapse-perf.pl`).
    Collapse(CollapseArgs),
    /// Draw an interactive SVG flame graph from a recording (`-i
    /// perf.data`), folded stacks or `perf script` text (like flamegraph.pl).
    Flame(FlameArgs),
    /// Compare two recordings: each symbol's share before and after, and
    /// the change (like `perf diff`).
    #[command(
        long_about = "Compare two recordings (like `perf diff`): for each symbol (or --sort key), its \
share of the baseline's samples, of the new recording's, and the change in percentage points, \
largest change first; above the table, each recording's samples, event counts and wall-clock \
length (first to last sample). Rows match by the keys' texts: the shared object's file name and \
the symbol's name, wherever they were loaded.\n\nExamples:\n  \
sear diff before.data after.data               # did my change help?\n  \
sear diff --sort sym --percent-limit 1 old.data new.data\n  \
sear diff --sort comm old.data new.data        # by command\n  \
sear flame --diff old.data new.data -o diff.svg   # the same as a differential flame graph"
    )]
    Diff(DiffArgs),
    /// Write a recording's samples in another tool's profile format: pprof,
    /// speedscope, Firefox Profiler, folded stacks or sear's JSON.
    #[command(
        long_about = "Write a recording's samples in another tool's profile format. Stacks are \
unwound and symbolized by sear (inline frames included) and every sample keeps its thread, \
event and period.\n\nFormats:\n  \
pprof       gzipped profile.proto: go tool pprof -top OUT, go tool pprof -http=: OUT\n  \
speedscope  speedscope's JSON: open it at speedscope.app or with `npx speedscope OUT`\n  \
firefox     Firefox Profiler's processed profile: load it at profiler.firefox.com\n  \
folded      folded stacks (root;...;leaf COUNT), as `sear collapse`\n  \
json        sear's own JSON: events, threads, stacks with samples and period\n\n\
Examples:\n  \
sear export --format pprof -i perf.data -o prof.pb.gz && go tool pprof -top prof.pb.gz\n  \
sear export --format speedscope -o prof.speedscope.json   # from ./perf.data\n  \
sear export --format firefox -i perf.data -o prof.json"
    )]
    Export(ExportArgs),
    /// Write one self-contained HTML report of a recording: timeline, flame
    /// graph, top symbols, per-thread filter and hot source lines.
    #[command(
        long_about = "Write one self-contained HTML file about a recording: open it in any browser, \
offline (no server, nothing fetched; all scripts, styles and data are inside the file, so it can \
be mailed or attached to a bug).\n\n\
What the page shows:\n  \
timeline      samples over time, a lane per event and per thread; drag across it to look at a \
time range (the flame graph, table, totals and source lines redraw for it; the URL's \
#time=START,STOP shares it and equals `sear report --time START,STOP`); click a thread's name \
to choose it, click a lane or Whole recording to go back\n  \
flame graph   click a frame to zoom into it (click `all` or Reset zoom to go back); type a regex \
in the search box to paint matching frames and see their share (Matched: X%)\n  \
top symbols   Children and Self shares (as `sear report --children`), self samples, symbol and \
shared object; click a header to sort, type in the filter box to narrow it\n  \
threads       pick a process or thread (with its sample count): the flame graph, table and \
totals show only its samples; with several events, pick the event too\n  \
source        click a function (a table row or a frame) to see its hottest source lines \
(file:line with samples) and the source text around them, where the file could be read when \
the report was written (only lines near hot lines are embedded)\n\n\
Shares are of the event's period, as perf report's. Stacks are unwound and symbolized by sear \
with inline frames.\n\n\
Examples:\n  \
sear record -g -- ./prog && sear html && xdg-open report.html\n  \
sear html -i perf.data -o /tmp/prof.html\n  \
perf record -g -- ./prog && sear html -o prog.html   # perf's recordings work the same"
    )]
    Html(HtmlArgs),
    /// Get and set perf's configuration (like `perf config`).
    #[command(
        long_about = "Get and set perf's configuration (like `perf config`). sear reads the \
files perf reads, as perf does: $PERF_CONFIG alone when it is set, else /etc/perfconfig then \
~/.perfconfig, later values winning. sear honours report.children, report.sort_order, \
report.percent-limit, report.group, call-graph.record-mode (and record.call-graph), \
call-graph.dump-size, call-graph.print-type, call-graph.order, call-graph.sort-key, \
call-graph.threshold, call-graph.print-limit, annotate.show_nr_samples, \
annotate.show_total_period, annotate.disassembler_style, annotate.hide_src_code, buildid.dir \
and pager.<command>.\n\n\
Examples:\n  \
sear config -l                                # every setting\n  \
sear config report.children                   # one setting\n  \
sear config report.children=false call-graph.record-mode=dwarf   # set in ~/.perfconfig"
    )]
    Config(ConfigArgs),
    /// Print sear's version (like `perf version`).
    Version(VersionArgs),
}

#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Also list what this build can do, as `perf version --build-options`.
    #[arg(long = "build-options")]
    pub build_options: bool,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// List every setting (section.key=value).
    #[arg(short = 'l', long = "list")]
    pub list: bool,
    /// Use the user's file (~/.perfconfig; the default for setting).
    #[arg(long = "user", conflicts_with = "system")]
    pub user: bool,
    /// Use the system's file (/etc/perfconfig).
    #[arg(long = "system")]
    pub system: bool,
    /// `section.key` to print, or `section.key=value` to set.
    #[arg(value_name = "KEY[=VALUE]")]
    pub items: Vec<String>,
}

#[derive(Debug, Args)]
pub struct HtmlArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the page here (`-` for stdout).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "report.html"
    )]
    pub output: PathBuf,
    #[command(flatten)]
    pub names: NameArgs,
    /// At most this many frames per stack, from the leaf (perf's --max-stack).
    #[arg(long, value_name = "N", default_value_t = 127)]
    pub max_stack: usize,
    /// Embed at most this many lines of source text (around the hottest
    /// lines; 0: none).
    #[arg(long, value_name = "N", default_value_t = 20000)]
    pub source_lines: usize,
    /// Keep at most N call-tree nodes in the page (0: all). Past that, the narrowest call
    /// paths merge into their callers, as a flame graph leaves out frames too narrow to
    /// draw: the symbol table and source lines stay exact, and the page says what it merged.
    /// Bounds the page whatever the number of unique stacks.
    #[arg(long, value_name = "N", default_value_t = 200_000)]
    pub max_nodes: usize,
    /// Also merge call paths holding less than this percentage of every event's samples
    /// (0: only the --max-nodes bound).
    #[arg(long, value_name = "PERCENT", default_value_t = 0.0)]
    pub min_percent: f64,
    #[command(flatten)]
    pub range: RangeArgs,
}

/// The formats of `sear export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Pprof,
    Speedscope,
    Firefox,
    Folded,
    Json,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The output format.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: ExportFormat,
    /// Write here (`-` for stdout).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    #[command(flatten)]
    pub names: NameArgs,
    /// At most this many frames per stack, from the leaf (perf's --max-stack).
    #[arg(long, value_name = "N", default_value_t = 127)]
    pub max_stack: usize,
    #[command(flatten)]
    pub range: RangeArgs,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Dump each recording's records (as `report -D`, without its
    /// preamble and counts) before the comparison, as perf diff -D.
    #[arg(short = 'D', long = "dump-raw-trace")]
    pub dump_raw_trace: bool,
    /// Load kernel module symbols (perf's `-m`): sear reads the kernel's
    /// symbols with its modules' from kallsyms anyway; accepted.
    #[arg(short = 'm', long = "modules")]
    pub modules: bool,
    /// perf's LBR cycle views (`--cycles-hist` with `-c cycles`,
    /// `--stream`): they need branch stacks with cycle counts, which this
    /// machine's hardware cannot record; refused saying so.
    #[arg(long = "cycles-hist", hide = true)]
    pub cycles_hist: bool,
    #[arg(long = "stream", hide = true)]
    pub stream: bool,
    /// The recordings, as perf diff takes them: the baseline (before the
    /// change) and the recording to compare with it (after); more than two
    /// compare each with the baseline, a column each (`[0] [1] [2]...`).
    /// One: perf.data.old against it; none: perf.data.old against
    /// perf.data.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Match and group samples by these keys, comma-separated: dso, sym,
    /// comm, pid, srcline, srcfile, symoff, parent, cpu, symbol_size,
    /// dso_size. Default: dso,sym (as perf diff).
    #[arg(
        short = 's',
        long = "sort",
        value_name = "KEYS",
        default_value = "dso,sym"
    )]
    pub sort: String,
    /// Leave out rows whose share is below PCT percent on both sides.
    #[arg(long = "percent-limit", value_name = "PCT", default_value_t = 0.0)]
    pub percent_limit: f64,
    /// Only samples of these commands, comma-separated.
    #[arg(short = 'C', long = "comms", value_name = "COMMS", value_parser = names)]
    pub comms: Option<NameList>,
    /// Only samples in these shared objects, comma-separated.
    #[arg(short = 'd', long = "dsos", value_name = "DSOS", value_parser = names)]
    pub dsos: Option<NameList>,
    /// Only samples in these symbols, comma-separated.
    #[arg(short = 'S', long = "symbols", value_name = "SYMBOLS", value_parser = names)]
    pub symbols: Option<NameList>,
    /// sear's layout: both recordings' totals first, and the new
    /// recording's share in a column of its own (perf diff prints only
    /// Baseline and Delta Abs).
    #[arg(long = "new")]
    pub new_column: bool,
    /// What the column after Baseline shows, as perf's -c: delta-abs (the
    /// default, or perf's config diff.compute: the change of share, rows by
    /// its absolute value), delta (by its signed value), ratio (new period
    /// / baseline period) or wdiff:W1,W2 (new period x W2 - baseline period
    /// x W1).
    #[arg(
        short = 'c',
        long = "compute",
        value_name = "delta|delta-abs|ratio|wdiff:W1,W2",
        conflicts_with = "new_column"
    )]
    pub compute: Option<String>,
    /// Which data file's column orders the rows, as perf's -o: 1 (the
    /// default) the first recording's computed column, 2 the next one's
    /// (with three or more files), 0 the baseline's shares.
    #[arg(
        short = 'o',
        long = "order",
        value_name = "N",
        conflicts_with = "new_column"
    )]
    pub order: Option<u32>,
    /// Add each row's periods: `Base period` after Baseline and `Period`
    /// (the new recording's) after the computed column.
    #[arg(short = 'p', long = "period", conflicts_with = "new_column")]
    pub period: bool,
    /// Add the formula behind each computed value (with both periods and
    /// totals), as perf's -F.
    #[arg(short = 'F', long = "formula", conflicts_with = "new_column")]
    pub formula: bool,
    /// Only samples of these process ids (comma-separated), in both recordings.
    #[arg(long = "pid", value_name = "PIDS", value_parser = ids)]
    pub pid: Option<IdList>,
    /// Only samples of these thread ids (comma-separated), in both recordings.
    #[arg(long = "tid", value_name = "TIDS", value_parser = ids)]
    pub tid: Option<IdList>,
    /// Only samples of these CPUs (a list like 0-3,6), in both recordings.
    #[arg(long = "cpu", value_name = "CPUS", value_parser = cpu_list)]
    pub cpu: Option<CpuList>,
    /// Only samples in this time range (START,STOP in seconds, either
    /// empty), in both recordings.
    #[arg(long = "time", value_name = "START,STOP")]
    pub time: Option<String>,
    /// With filters: shares of the samples they kept (`relative`) instead
    /// of all samples (`absolute`, perf's default).
    #[arg(long = "percentage", value_name = "relative|absolute", value_parser = ["relative", "absolute"])]
    pub percentage: Option<String>,
    /// Accepted for perf compatibility (sear reads files of any owner).
    #[arg(short = 'f', long = "force")]
    pub force: bool,
    /// Only rows both recordings have; Baseline is then each one's share
    /// of those rows (the computed column keeps the recordings' totals).
    #[arg(short = 'b', long = "baseline-only", conflicts_with = "new_column")]
    pub baseline_only: bool,
    /// Separate the columns with SEP (for scripts), as report's -t.
    #[arg(short = 't', long = "field-separator", value_name = "SEP", value_parser = field_separator, conflicts_with = "new_column")]
    pub field_separator: Option<String>,
    #[command(flatten)]
    pub names: NameArgs,
}

#[derive(Debug, Args)]
pub struct AnnotateArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The function to annotate (as --symbol).
    #[arg(value_name = "SYMBOL", conflicts_with = "symbol")]
    pub name: Option<String>,
    /// The function to annotate: its name as `sear report` shows it (C++:
    /// with or without the parameter list). Default: every function with
    /// samples, hottest first.
    #[arg(short = 's', long = "symbol", value_name = "NAME")]
    pub symbol: Option<String>,
    /// Only functions of these DSOs (comma-separated base or full names).
    #[arg(short = 'd', long = "dsos", value_name = "LIST", value_parser = names)]
    pub dsos: Option<NameList>,
    /// Text output (on a terminal sear annotate otherwise opens perf's
    /// annotate browser; perf's config `tui.annotate = false` also gives
    /// text).
    #[arg(long)]
    pub stdio: bool,
    /// perf's other text layout, its annotate browser's view printed: jump
    /// targets labelled by their offset, branches drawn as arrows (↓ ↑ within
    /// the function, → calls and jumps out, ← returns) with their targets by
    /// offset or function name, RIP-relative operands by symbol, lines without
    /// samples left blank.
    #[arg(long = "stdio2")]
    pub stdio2: bool,
    /// Disassembly only, without the interleaved source lines.
    #[arg(long = "no-source", overrides_with = "source")]
    pub no_source: bool,
    /// Source lines interleaved with the disassembly (the default).
    #[arg(long = "source", overrides_with = "no_source")]
    pub source: bool,
    /// What the percentages are of: local-period (the default: the
    /// function's period), local-hits (its samples), global-period or
    /// global-hits (the event's, of the samples the filters keep).
    #[arg(long = "percent-type", value_name = "TYPE")]
    pub percent_type: Option<String>,
    /// Leave out, without a word, functions whose code cannot be read
    /// (a missing or changed binary) instead of warning about them.
    #[arg(long = "skip-missing")]
    pub skip_missing: bool,
    /// Show each instruction's bytes, as `objdump -d` prints them (seven a
    /// line).
    #[arg(long = "asm-raw")]
    pub asm_raw: bool,
    /// Name the binary by its full path in each function's header.
    #[arg(short = 'P', long = "full-paths")]
    pub full_paths: bool,
    /// Read source files of absolute paths under this prefix (with
    /// --prefix-strip, objdump's options of those names).
    #[arg(long = "prefix", value_name = "PREFIX")]
    pub prefix: Option<String>,
    /// Directories to strip from the start of source paths before
    /// --prefix is added.
    #[arg(long = "prefix-strip", value_name = "N", requires = "prefix")]
    pub prefix_strip: Option<usize>,
    /// Only samples of these CPUs (a list like 0-3,6; the recording needs
    /// CPUs: `-a`, `-C` or `--sample-cpu`).
    #[arg(short = 'C', long = "cpu", value_name = "CPUS", value_parser = cpu_list)]
    pub cpu: Option<CpuList>,
    /// Only samples in these time ranges (perf's forms, as report's
    /// `--time`): START,STOP in seconds, several separated by spaces, or
    /// percent slices like `10%/2` and `0%-10%`.
    #[arg(long = "time", value_name = "RANGES")]
    pub time: Option<String>,
    /// Print every record raw and decoded (as `report -D`) instead.
    #[arg(short = 'D', long = "dump-raw-trace")]
    pub dump_raw_trace: bool,
    /// Print a summary of the hottest source lines first, and each hot
    /// instruction's `file:line` after it.
    #[arg(short = 'l', long = "print-line")]
    pub print_line: bool,
    /// Assembly syntax: `att` (default, as objdump) or `intel`.
    #[arg(short = 'M', long = "disassembler-style", value_name = "att|intel")]
    pub disassembler_style: Option<String>,
    /// Only functions with at least this percentage of the event's samples
    /// (by period).
    #[arg(long = "percent-limit", value_name = "PERCENT")]
    pub percent_limit: Option<f64>,
    /// First column: samples instead of percentages.
    #[arg(short = 'n', long = "show-nr-samples")]
    pub show_nr_samples: bool,
    /// First column: periods instead of percentages.
    #[arg(long = "show-total-period")]
    pub show_total_period: bool,
    /// Print names as stored in the binary (mangled).
    #[arg(long = "no-demangle")]
    pub no_demangle: bool,
    /// Colour as perf does (values by share, addresses and instructions):
    /// `always`, `never` or `auto` (on a terminal, the default; perf's
    /// `color.ui` config too).
    #[arg(long = "stdio-color", value_name = "always|never|auto", num_args = 0..=1,
          require_equals = true, default_missing_value = "always",
          value_parser = ["always", "never", "auto"])]
    pub stdio_color: Option<String>,
    /// Read the kernel's symbols from this vmlinux: not supported yet
    /// (use --kallsyms FILE), refused saying so.
    #[arg(short = 'k', long = "vmlinux", value_name = "FILE")]
    pub vmlinux: Option<PathBuf>,
    /// perf's annotate browser (the default on a terminal): one function
    /// at a time from the hottest, starting on its hottest instruction;
    /// Up/Down/PgUp/PgDn scroll, Right/Tab the next function, Left the
    /// previous, q or Esc quit.
    #[arg(long = "tui")]
    pub tui: bool,
    /// Accepted for perf's command lines, changing nothing here: names
    /// are demangled by default (`--demangle`; kernel names need none),
    /// `--group` shows group members only for recordings with groups,
    /// which sear's annotate does not split yet, sear never reads vmlinux
    /// or modules' files (`--ignore-vmlinux`, `-m`), and there are no
    /// hardware traces to decode (`--itrace`).
    #[arg(long = "demangle", hide = true)]
    pub demangle: bool,
    #[arg(long = "demangle-kernel", hide = true)]
    pub demangle_kernel: bool,
    #[arg(long = "group", hide = true)]
    pub group: bool,
    #[arg(long = "ignore-vmlinux", hide = true)]
    pub ignore_vmlinux: bool,
    #[arg(short = 'm', long = "modules", hide = true)]
    pub modules: bool,
    #[arg(long = "itrace", value_name = "OPTS", num_args = 0..=1, require_equals = true,
          default_missing_value = "", hide = true)]
    pub itrace: Option<String>,
    /// The objdump to run (perf's `--objdump`): sear disassembles by
    /// itself, so none is run; accepted for perf's command lines.
    #[arg(long = "objdump", value_name = "PATH", hide = true)]
    pub objdump: Option<String>,
}

#[derive(Debug, Args)]
pub struct CollapseArgs {
    /// A recording (perf.data, file or pipe mode) or `perf script` text;
    /// `-` or nothing reads stdin.
    #[arg(value_name = "FILE", conflicts_with = "input")]
    pub file: Option<PathBuf>,
    /// A recording to fold directly (perf.data): stacks unwound and
    /// symbolized by sear, inline frames included where perf shows them.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// First frame `comm-PID`.
    #[arg(long)]
    pub pid: bool,
    /// First frame `comm-PID/TID`.
    #[arg(long)]
    pub tid: bool,
    /// Mark kernel frames with `_[k]`.
    #[arg(long)]
    pub kernel: bool,
    /// Mark JIT frames (`/tmp/perf-PID.map`) with `_[j]`.
    #[arg(long)]
    pub jit: bool,
    /// Both --kernel and --jit.
    #[arg(long)]
    pub all: bool,
    /// Show the address of frames without a symbol: `[module <ADDR>]`.
    #[arg(long)]
    pub addrs: bool,
    /// Expand inline frames from the binaries' DWARF (the binaries named in the
    /// text, read from disk), marked `_[i]`.
    #[arg(long)]
    pub inline: bool,
    /// Fold only samples of this event (default: the first event in the input).
    #[arg(long = "event-filter", value_name = "EVENT")]
    pub event_filter: Option<String>,
    /// Wall-clock time from a `sear record --off-cpu` recording: on-CPU
    /// (cpu-clock or task-clock) and off-CPU nanoseconds summed per stack,
    /// each off-CPU stack ending in an `[off-cpu]` frame.
    #[arg(long = "wall-clock", conflicts_with_all = ["event_filter", "samples"])]
    pub wall_clock: bool,
    /// Count samples instead of summing their periods.
    #[arg(long)]
    pub samples: bool,
    /// Recordings: --max-stack and --raw-return-addresses.
    #[command(flatten)]
    pub stack: StackArgs,
    #[command(flatten)]
    pub range: RangeArgs,
}

#[derive(Debug, Args)]
pub struct FlameArgs {
    /// Folded stacks (or `perf script` text); `-` or nothing reads stdin.
    #[arg(value_name = "FILE", conflicts_with = "input")]
    pub file: Option<PathBuf>,
    /// Input file (folded stacks, `perf script` text or a recording).
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Write the SVG here instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Title at the top.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// Second line under the title.
    #[arg(long, value_name = "TEXT")]
    pub subtitle: Option<String>,
    /// Image width in pixels (default 1200; `-w` as flamegraph.pl takes it).
    #[arg(short = 'w', long, value_name = "PIXELS", value_parser = clap::value_parser!(u32).range(100..=1_000_000))]
    pub width: Option<u32>,
    /// Colour palette. Default: hot, or java when frames carry
    /// `_[k]`/`_[j]`/`_[i]` marks (kernel orange, JIT green, inline aqua).
    #[arg(long, value_name = "PALETTE", value_parser = clap::builder::PossibleValuesParser::new(render::flame::PALETTES))]
    pub colors: Option<String>,
    /// Colour by a hash of the function name (the same name, the same colour).
    #[arg(long)]
    pub hash: bool,
    /// Icicle graph: roots at the top, stacks grow downwards.
    #[arg(long)]
    pub inverted: bool,
    /// Reverse each stack (leaf first) before merging: a callee-rooted graph.
    #[arg(long)]
    pub reverse: bool,
    /// Flame chart: keep the input's order (time) on the x axis instead of sorting.
    #[arg(long)]
    pub flamechart: bool,
    /// Omit frames narrower than this: pixels, or a percentage of the total with `%`.
    #[arg(long, value_name = "PIXELS", default_value = "0.1")]
    pub minwidth: render::flame::MinWidth,
    /// What the counts are, in hover details (default: samples).
    #[arg(long, value_name = "NAME")]
    pub countname: Option<String>,
    /// With `perf script` text or a recording as input: graph this event
    /// (default: the first in the input). One graph per event.
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,
    /// Wall-clock time from a `sear record --off-cpu` recording: on-CPU
    /// (cpu-clock or task-clock) and off-CPU time on one graph, in
    /// nanoseconds; off-CPU stacks end in an `[off-cpu]` frame (blue).
    #[arg(long = "wall-clock", conflicts_with = "event")]
    pub wall_clock: bool,
    /// A differential flame graph of two profiles (recordings, folded
    /// stacks or `perf script` text): NEW's stacks, each frame red where it
    /// has more samples than in BASE (scaled to the same total), blue where
    /// fewer (difffolded.pl -n, then flamegraph.pl).
    /// Example: sear flame --diff before.data after.data -o diff.svg
    #[arg(long, num_args = 2, value_names = ["BASE", "NEW"], conflicts_with_all = ["file", "input"])]
    pub diff: Option<Vec<PathBuf>>,
    #[command(flatten)]
    pub range: RangeArgs,
}

#[derive(Debug, Args)]
pub struct InjectArgs {
    /// Input file, `-` for stdin (pipe mode).
    #[arg(short = 'i', long = "input", value_name = "FILE", default_value = "-")]
    pub input: PathBuf,
    /// Output file, `-` for stdout (pipe mode).
    #[arg(short = 'o', long = "output", value_name = "FILE", default_value = "-")]
    pub output: PathBuf,
    #[command(flatten)]
    pub compress: CompressArgs,
    /// Add a build-id record before the first sample in each binary (from
    /// the recording's build-id table, else read from the binary), as
    /// perf inject -b does.
    #[arg(short = 'b', long = "build-ids")]
    pub build_ids: bool,
    /// Add a build-id record before the first mapping of every binary,
    /// sampled or not.
    #[arg(long = "buildid-all")]
    pub buildid_all: bool,
    /// Build ids to use for these paths: BUILDID=PATH, comma-separated.
    #[arg(long = "known-build-ids", value_name = "BUILDID=PATH,...")]
    pub known_build_ids: Option<String>,
    /// Accepted for perf's command lines (sear never refuses files by owner).
    #[arg(short = 'f', long = "force")]
    pub force: bool,
    /// Accepted for perf's command lines: the kernel's build id comes from
    /// the recording or the running kernel.
    #[arg(long = "vmlinux", value_name = "FILE")]
    pub vmlinux: Option<PathBuf>,
    #[arg(long = "ignore-vmlinux", hide = true)]
    pub ignore_vmlinux: bool,
    /// perf's sched_stat merging, hardware-trace decoding and guest
    /// merging: refused, saying why.
    #[arg(short = 's', long = "sched-stat")]
    pub sched_stat: bool,
    /// Merge jitdump files (`jit-PID.dump`) into the recording as perf
    /// inject --jit does: an ELF file per JIT function beside the dump
    /// (`jitted-PID-N.so`) and a map of it at its load time, in place of
    /// the dump's map. sear reads jitdumps directly without this; it is
    /// for perf and other tools.
    #[arg(short = 'j', long = "jit")]
    pub jit: bool,
    #[arg(long = "itrace", value_name = "OPTS", num_args = 0..=1, require_equals = true,
          default_missing_value = "", hide = true)]
    pub itrace: Option<String>,
    #[arg(long = "strip", hide = true)]
    pub strip: bool,
    #[arg(long = "guest-data", value_name = "FILE,PID[,TIME]", hide = true)]
    pub guest_data: Option<String>,
    #[arg(long = "guestmount", value_name = "DIR", hide = true)]
    pub guestmount: Option<String>,
    #[arg(long = "vm-time-correlation", value_name = "OPTS", num_args = 0..=1,
          require_equals = true, default_missing_value = "", hide = true)]
    pub vm_time_correlation: Option<String>,
}

/// `--time-quantum`: perf's parse (a number, then s, ms, us or ns).
fn time_quantum(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("cannot parse time quantum `{s}' (e.g. 100ms, 1s, 500us)"))?;
    if n == 0 {
        return Err("time quantum cannot be 0".into());
    }
    let mult: u64 = match unit.trim() {
        "" | "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => {
            return Err(format!(
                "cannot parse time quantum `{s}' (use s, ms, us or ns)"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("time quantum `{s}' is too large"))
}

/// Where the recording comes from.
#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Input file; `-` reads a pipe-mode stream from stdin. Defaults to
    /// perf.data, or stdin when stdin is a pipe.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Accepted for perf compatibility (sear never refuses files by owner).
    #[arg(short = 'f', long = "force")]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub switch: SwitchArgs,
    /// Show source files by their whole path in srcline and srcfile (as
    /// the debug info names them), not their base name.
    #[arg(long = "full-source-path")]
    pub full_source_path: bool,
    /// Print event counts by record type, overall and per event, then stop.
    #[arg(long)]
    pub stats: bool,
    /// Print the recording's header (as --header-only does), then the report.
    #[arg(long = "header", conflicts_with = "header_only")]
    pub header: bool,
    /// After the report, each thread's counter values as the recording's
    /// READ records give them (record with -s/--stat), one column per
    /// event.
    #[arg(short = 'T', long = "threads")]
    pub threads: bool,
    /// List the recorded threads as a tree (pid, tid, parent, comm), each
    /// under the thread it forked from, and stop.
    #[arg(long = "tasks")]
    pub tasks: bool,
    /// As --tasks, with each thread's memory maps (address range,
    /// protection, file offset, inode, file).
    #[arg(long = "mmaps")]
    pub mmaps: bool,
    /// Print the recording's header (host, perf version, events, features) and stop.
    #[arg(long = "header-only")]
    pub header_only: bool,
    /// With --header-only: show every feature in full (perf's -I).
    #[arg(short = 'I', long = "show-info")]
    pub show_info: bool,
    /// Dump every record raw with its decoded fields (perf's -D).
    #[arg(short = 'D', long = "dump-raw-trace")]
    pub dump_raw_trace: bool,
    /// The text report, also on a terminal (where the interactive browser
    /// is the default, as perf's).
    #[arg(long, overrides_with = "tui")]
    pub stdio: bool,
    /// Sort and group samples by these keys, comma-separated: comm, pid
    /// (one entry per thread, shown as tid:comm; `tid` is the same key, as
    /// perf has none of that name), dso, sym, symoff (symbol+offset),
    /// srcline (file:line), srcfile, parent (see --parent), cpu, socket,
    /// addr, symbol_size, dso_size, cgroup_id, cgroup, time, trace,
    /// code_page_size, local_weight, weight, local_ins_lat, ins_lat,
    /// transaction (p_stage_cyc and local_p_stage_cyc are accepted and left
    /// out, as perf does outside powerpc). Default: comm,dso,sym (as perf).
    /// In the branch view
    /// (see -b) also dso_from, dso_to, symbol_from, symbol_to, addr_from,
    /// addr_to, srcline_from, srcline_to, mispredict, in_tx, abort and cycles, and the default is
    /// comm,dso_from,symbol_from,symbol_to,cycles (as perf).
    #[arg(short = 's', long = "sort", value_name = "KEYS")]
    pub sort: Option<String>,
    /// Regex (extended syntax) that picks each sample's parent: the first
    /// callchain symbol matching it, else `[other]`. Adds the parent key.
    /// Default: `^sys_|^do_page_fault` (as perf).
    #[arg(short = 'p', long = "parent", value_name = "REGEX")]
    pub parent: Option<String>,
    /// Regex of functions whose callees are left out: a sample whose call
    /// chain passes such a function is charged to it (the outermost one),
    /// its chain starting there. perf 6.1 does this in callee order; in
    /// caller order (its default with --children) it keeps the callees and
    /// drops the callers instead, which sear does not copy.
    #[arg(long = "ignore-callees", value_name = "REGEX")]
    pub ignore_callees: Option<String>,
    /// Only show entries with a parent symbol (the percentages still count
    /// all samples).
    #[arg(short = 'x', long = "exclude-other")]
    pub exclude_other: bool,
    /// The columns, comma-separated: value fields (overhead,
    /// overhead_children, overhead_sys, overhead_us, overhead_guest_sys,
    /// overhead_guest_us, sample, period) and sort keys. Sort keys not
    /// listed are appended; without --sort, rows are sorted by these
    /// columns in order. A list starting with `+` adds to the default columns.
    #[arg(short = 'F', long = "fields", value_name = "FIELDS")]
    pub fields: Option<String>,
    /// Add a Samples column (number of samples).
    #[arg(short = 'n', long = "show-nr-samples")]
    pub show_nr_samples: bool,
    /// Add a Period column (sum of the samples' periods).
    #[arg(long = "show-total-period")]
    pub show_total_period: bool,
    /// Add sys and usr columns (own overhead in kernel and user mode).
    #[arg(long = "show-cpu-utilization")]
    pub show_cpu_utilization: bool,
    /// Show the events of a group together, one column per member (the
    /// default for recordings with groups); without groups, all events
    /// form one.
    #[arg(long = "group", overrides_with = "no_group")]
    pub group: bool,
    /// Show each event of a group in its own section.
    #[arg(long = "no-group", overrides_with = "group")]
    pub no_group: bool,
    /// In a group's view, sort the rows by the values of the group's event N
    /// (0 the leader, perf's default; then by the other members' values);
    /// an N the group does not have sorts by the leader's alone.
    #[arg(
        long = "group-sort-idx",
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub group_sort_idx: Option<i64>,
    /// With filters: percentages of all samples (`absolute`, the default,
    /// as perf) or of the samples kept (`relative`).
    #[arg(long = "percentage", value_name = "relative|absolute", value_parser = ["relative", "absolute"])]
    pub percentage: Option<String>,
    /// The `time` sort key's buckets: a number of nanoseconds, or with s,
    /// ms, us or ns (perf's default: 100ms).
    #[arg(long = "time-quantum", value_name = "TIME", value_parser = time_quantum)]
    pub time_quantum: Option<u64>,
    /// Print the `time` key to the nanosecond.
    #[arg(long = "ns")]
    pub ns: bool,
    /// One level per sort key: a row per value of the first key, under it
    /// a row per value of the next among its samples, and so on, call
    /// graphs under the last level (perf's hierarchy view; implies
    /// --no-children, and cannot be combined with -F/--fields).
    #[arg(long = "hierarchy", conflicts_with = "fields")]
    pub hierarchy: bool,
    /// Show only each entry's own samples, not those of its callees (the
    /// default when there are no call graphs).
    #[arg(long = "no-children", overrides_with = "children")]
    pub no_children: bool,
    /// Accumulate callees' samples into their callers (perf's default with call graphs).
    #[arg(long = "children")]
    pub children: bool,
    /// Report a recording with branch stacks by its samples, not by its
    /// sampled branches (the branch view, see -b).
    #[arg(long = "no-branch-stack")]
    pub no_branch_stack: bool,
    /// The branch view, the default for a recording with branch stacks
    /// (`record -b`, which needs LBR hardware): each entry of each sample's
    /// branch stack counts once, rows by where the branch came from and went
    /// to (perf's branch mode). sym, dso and the other keys of the sample
    /// see the branch's target. Without branch stacks, perf's error and an
    /// empty report, as perf. perf's LBR IPC column (added to a --sort
    /// naming `symbol`) shows `?` for symbols where the branches carry cycle
    /// counts: sear does not count basic blocks' instructions yet.
    #[arg(short = 'b', long = "branch-stack", conflicts_with = "no_branch_stack")]
    pub branch_stack: bool,
    /// Only the entries of samples on this processor socket (perf's
    /// `--socket-filter`; samples need their CPU: `record -a`, `-C` or
    /// `--sample-cpu`). The header names the socket.
    #[arg(long = "socket-filter", value_name = "N")]
    pub socket_filter: Option<i32>,
    /// Add each sample's branches to its call graph (perf's
    /// `--branch-history`; needs a recording made with -b or -j): the
    /// samples' rows, sorted srcline,symbol,dso unless -s says otherwise,
    /// and in each graph the branches (each target, then its source; loops
    /// cut out; most recent first in callee order, oldest first in caller
    /// order, the default with children) next to the callers, every frame by
    /// address with what its branches said: `(cycles:N)` at a source,
    /// `(predicted:X%)` at a target mispredicted now and then,
    /// `(iter:N avg_cycles:M)` where loops were cut, `(calltrace)` at a
    /// recorded caller.
    #[arg(long = "branch-history", conflicts_with = "no_branch_stack")]
    pub branch_history: bool,
    /// perf's annotate settings for its browser (`--source`, `--asm-raw`,
    /// `--prefix`, `--prefix-strip`): the text report shows no
    /// annotation, so they change nothing there, as in perf; accepted.
    #[arg(long = "source", hide = true)]
    pub source: bool,
    #[arg(long = "asm-raw", hide = true)]
    pub asm_raw: bool,
    #[arg(long = "prefix", value_name = "PREFIX", hide = true)]
    pub prefix: Option<String>,
    #[arg(long = "prefix-strip", value_name = "N", hide = true)]
    pub prefix_strip: Option<u32>,
    /// Memory-access mode, perf's: each sample weighs its weight (1
    /// without one) and rows are data accesses, sorted by default by perf's
    /// `local_weight,mem,sym,dso,symbol_daddr,dso_daddr,snoop,tlb,locked,blocked,local_ins_lat`;
    /// the memory keys (mem, symbol_daddr, symbol_iaddr,
    /// dso_daddr, snoop, tlb, locked, blocked, data_page_size, phys_daddr, dcacheline)
    /// work only here. Record with `-d` (e.g. `record -e page-faults -d`,
    /// the software event that samples data addresses); without data
    /// sources, perf's error and an empty report.
    #[arg(long = "mem-mode")]
    pub mem_mode: bool,
    /// Stitch LBR call stacks (needs `record --call-graph lbr`, LBR
    /// hardware): without, perf's warning, then the report.
    #[arg(long = "stitch-lbr")]
    pub stitch_lbr: bool,
    /// Read the kernel's symbols from this vmlinux: not supported yet
    /// (use --kallsyms FILE), refused saying so.
    #[arg(short = 'k', long = "vmlinux", value_name = "FILE")]
    pub vmlinux: Option<PathBuf>,
    /// Colour the percentages (red from 5%, green from 0.5%, as perf):
    /// `always`, `never` or `auto` (on a terminal, the default).
    #[arg(long = "stdio-color", value_name = "always|never|auto", num_args = 0..=1,
          require_equals = true, default_missing_value = "always",
          value_parser = ["always", "never", "auto"])]
    pub stdio_color: Option<String>,
    /// The interactive browser (the default when stdout is a terminal and
    /// `TERM` is not dumb; perf's config `tui.report = false` turns that
    /// default off): the table with call graphs unfolding under each entry,
    /// `/` filters by symbol, `t`/`d` zoom into a thread or shared object,
    /// `a` annotates, `s` switches events, `?` lists every key.
    #[arg(long = "tui", overrides_with = "stdio")]
    pub tui: bool,
    /// Options that change nothing in perf's text report of recordings
    /// without the data they concern, or describe how perf reads (sear
    /// always orders by time and never reads vmlinux): `--total-cycles`,
    /// `--itrace`, `--raw-trace`, `--skip-empty`, `--disable-order`,
    /// `--pretty`, `--show-ref-call-graph`, `-m/--modules`,
    /// `--ignore-vmlinux`; accepted for perf's command lines.
    #[arg(long = "total-cycles", hide = true)]
    pub total_cycles: bool,
    #[arg(long = "itrace", value_name = "OPTS", num_args = 0..=1, require_equals = true,
          default_missing_value = "", hide = true)]
    pub itrace: Option<String>,
    #[arg(long = "raw-trace", hide = true)]
    pub raw_trace: bool,
    #[arg(long = "skip-empty", hide = true)]
    pub skip_empty: bool,
    #[arg(long = "disable-order", hide = true)]
    pub disable_order: bool,
    #[arg(long = "pretty", value_name = "KEY", hide = true)]
    pub pretty: Option<String>,
    #[arg(long = "show-ref-call-graph", hide = true)]
    pub show_ref_call_graph: bool,
    #[arg(short = 'm', long = "modules", hide = true)]
    pub modules: bool,
    #[arg(long = "ignore-vmlinux", hide = true)]
    pub ignore_vmlinux: bool,
    /// Call-graph display, as perf's -g: comma-separated print type
    /// (graph, fractal, flat, folded, none), order (caller, callee), key
    /// (function, address), value (percent, period, count), threshold
    /// percentage and print limit; `-g` alone is perf's
    /// graph,0.5,caller,function,percent. Without -g: graph, 0.5, caller
    /// order with children and callee order without, or what perf's
    /// config sets (call-graph.*).
    #[arg(
        short = 'g',
        long = "call-graph",
        value_name = "MODE",
        num_args = 0..=1,
        default_missing_value = "graph,0.5,caller,function,percent"
    )]
    pub call_graph: Option<String>,
    /// Do not expand inline frames in call chains (faster; as perf's --no-inline).
    #[arg(long = "no-inline", overrides_with = "inline")]
    pub no_inline: bool,
    /// Expand inline frames in DWARF-unwound call chains (the default).
    #[arg(long = "inline")]
    pub inline: bool,
    #[command(flatten)]
    pub stack: StackArgs,
    /// Hide rows below this percentage.
    #[arg(long = "percent-limit", value_name = "PERCENT")]
    pub percent_limit: Option<f64>,
    /// Call graphs in caller order (perf's alias for `-g caller`).
    #[arg(short = 'G', long = "inverted")]
    pub inverted: bool,
    /// Leave out samples whose address has no symbol.
    #[arg(short = 'U', long = "hide-unresolved")]
    pub hide_unresolved: bool,
    /// Show only symbols whose name contains this text (percentages stay
    /// of all samples).
    #[arg(long = "symbol-filter", value_name = "TEXT")]
    pub symbol_filter: Option<String>,
    /// A word after the options is a symbol filter too, as in perf
    /// (`sear report main` is `sear report --symbol-filter main`; it wins
    /// over --symbol-filter).
    #[arg(value_name = "SYMBOL")]
    pub symbol_filter_arg: Option<String>,
    /// Accepted for perf's command lines; they change only perf's
    /// interactive browser or its annotate view (`--samples N`,
    /// `-M/--disassembler-style`, `--objdump`, `--demangle`,
    /// `--demangle-kernel`, `--percent-type`).
    #[arg(long = "samples", value_name = "N", hide = true)]
    pub samples: Option<u32>,
    #[arg(
        short = 'M',
        long = "disassembler-style",
        value_name = "STYLE",
        hide = true
    )]
    pub disassembler_style: Option<String>,
    #[arg(long = "objdump", value_name = "PATH", hide = true)]
    pub objdump: Option<String>,
    #[arg(long = "percent-type", value_name = "TYPE", hide = true,
          value_parser = ["local-period", "global-period", "local-hits", "global-hits"])]
    pub percent_type: Option<String>,
    #[command(flatten)]
    pub only: SampleFilterArgs,
    /// Only samples in these shared objects (comma-separated short names).
    #[arg(short = 'd', long = "dsos", value_name = "DSOS", value_parser = names)]
    pub dsos: Option<NameList>,
    #[command(flatten)]
    pub names: NameArgs,
    /// Separate the columns with SEP instead of padding them apart, for
    /// scripts (`-t ,` or `-t ';'`): values print unpadded, no dotted line
    /// follows the header, SEP's first character in a name becomes `.`, and
    /// folded call graphs (`-g folded`) join frames with SEP. `.` itself is
    /// refused.
    #[arg(short = 't', long = "field-separator", value_name = "SEP", value_parser = field_separator)]
    pub field_separator: Option<String>,
    /// Column widths, comma-separated in column order (`-w 10,8,20`): a key
    /// column (comm, shared object, symbol...) becomes exactly that wide,
    /// its longer values cut; a value column at least that wide. 0 or an
    /// empty place keeps a column's own width; the list may stop early.
    #[arg(short = 'w', long = "column-widths", value_name = "WIDTHS", value_parser = column_widths)]
    pub column_widths: Option<ColumnWidths>,
}

/// `-w`'s list as perf reads it (`strtol` per place: a place that does
/// not start with a number is 0, and the list ends at the first place not
/// followed by a comma).
#[derive(Debug, Clone)]
pub struct ColumnWidths(pub Vec<usize>);

fn column_widths(s: &str) -> Result<ColumnWidths, String> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let t = rest.trim_start();
        let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        out.push(t[..digits].parse::<usize>().unwrap_or(0));
        match t[digits..].strip_prefix(',') {
            Some(r) => rest = r,
            None => break,
        }
    }
    Ok(ColumnWidths(out))
}

fn field_separator(s: &str) -> Result<String, String> {
    if s.starts_with('.') {
        return Err(
            "'.' is the only separator perf refuses (names use it in place of the separator)"
                .into(),
        );
    }
    if s.is_empty() {
        return Err("the separator is empty".into());
    }
    Ok(s.to_owned())
}

#[derive(Debug, Args)]
pub struct ScriptArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub unsupported: ScriptUnsupported,
    /// End each call chain after a frame of these functions
    /// (comma-separated names; perf's `--stop-bt`).
    #[arg(long = "stop-bt", value_name = "SYMBOLS", value_delimiter = ',')]
    pub stop_bt: Vec<String>,
    /// perf's `--all-cpus` (for `perf script record`) and
    /// `--show-kernel-path` (the kernel's DSO by its vmlinux path: sear
    /// reads no vmlinux, so `[kernel.kallsyms]` as perf prints it then):
    /// accepted for perf's command lines.
    #[arg(short = 'a', long = "all-cpus")]
    pub all_cpus: bool,
    #[arg(long = "show-kernel-path", hide = true)]
    pub show_kernel_path: bool,
    /// `-F brstackinsn`: print at most N blocks of each branch stack (the
    /// newest; 0 or unset: all).
    #[arg(long = "max-blocks", value_name = "N")]
    pub max_blocks: Option<u32>,
    /// Stitch LBR call stacks (needs `record --call-graph lbr`, LBR
    /// hardware): without, perf's warning, then the samples.
    #[arg(long = "stitch-lbr")]
    pub stitch_lbr: bool,
    /// Check that the samples come in time order, print how many do not
    /// (`Misordered timestamps: N`, on stderr) and nothing else, as perf's
    /// `--debug-mode`.
    #[arg(long = "debug-mode")]
    pub debug_mode: bool,
    #[command(flatten)]
    pub switch: SwitchArgs,
    /// Show source files by their whole path in srcline (as the debug
    /// info names them), not their base name.
    #[arg(long = "full-source-path")]
    pub full_source_path: bool,
    /// Write each event's sample lines to its own file, INPUT.EVENT.dump
    /// (side-band lines stay on stdout), and say what each got, as perf.
    #[arg(long = "per-event-dump")]
    pub per_event_dump: bool,
    /// Fields to print, comma-separated: comm, pid, tid, cpu, time, period,
    /// event, ip, sym, symoff, dso, srcline; misc (K/U mode letters), tod
    /// (time of day: record with -k), addr (data address, named for page
    /// faults), data_src, weight, ins_lat, phys_addr, data_page_size,
    /// code_page_size, iregs, uregs, brstack, brstacksym, brstackoff,
    /// brstackinsn (the instructions between the branch stack's entries,
    /// read from the binaries: needs `record -b`), brstackinsnlen (with
    /// their lengths), insn, insnlen (the sampled instruction's bytes),
    /// srccode (its source text), flags. A list replaces the defaults
    /// (comm,tid,cpu,time,period,event,ip,sym,symoff,dso, less what the
    /// recording lacks); `+field`/`-field` add to or remove from them, e.g.
    /// `-F -period,+pid`. perf's `TYPE:` prefix (`sw:comm,ip`) is accepted
    /// and applies the list to every event. Fields for data these samples
    /// cannot hold (ipc, callindent, bpf-output, synth, metric,
    /// machine_pid, vcpu) print nothing, as in perf; Python/Perl scripting
    /// (`-s`) is not supported.
    #[arg(
        short = 'F',
        long = "fields",
        value_name = "FIELDS",
        allow_hyphen_values = true
    )]
    pub fields: Option<String>,
    /// Print the recording's header (as `report --header-only`) before the samples.
    #[arg(long)]
    pub header: bool,
    /// Every record raw and decoded (as `report -D` prints them), each
    /// sample's lines after its own record (perf script's -D).
    #[arg(short = 'D', long = "dump-raw-trace")]
    pub dump_raw_trace: bool,
    /// As -D, with the records in file order rather than sorted by time
    /// (each sample's lines still after its record).
    #[arg(long = "dump-unsorted-raw-trace")]
    pub dump_unsorted_raw_trace: bool,
    /// Do not expand inline frames in call chains (as perf's --no-inline).
    #[arg(long = "no-inline", overrides_with = "inline")]
    pub no_inline: bool,
    /// Expand inline frames in DWARF-unwound call chains (the default).
    #[arg(long = "inline")]
    pub inline: bool,
    #[command(flatten)]
    pub only: SampleFilterArgs,
    /// Only samples in these shared objects (comma-separated short names).
    #[arg(long = "dsos", value_name = "DSOS", value_parser = names)]
    pub dsos: Option<NameList>,
    /// Print the sampled address and symbol on the sample's line, without
    /// its call chain.
    #[arg(short = 'G', long = "hide-call-graph")]
    pub hide_call_graph: bool,
    /// Times relative to the first sample printed.
    #[arg(long = "reltime", conflicts_with = "deltatime")]
    pub reltime: bool,
    /// Times since the sample printed before.
    #[arg(long = "deltatime")]
    pub deltatime: bool,
    /// Print the recording's header (as `sear report --header-only`) and
    /// nothing else.
    #[arg(long = "header-only")]
    pub header_only: bool,
    /// With --header/--header-only: the extra header information.
    #[arg(short = 'I', long = "show-info")]
    pub show_info: bool,
    /// Print times with nanoseconds.
    #[arg(long = "ns")]
    pub ns: bool,
    /// perf's latency layout: the comm cut to 8 columns, the CPU without
    /// brackets (perf 6.1 prints no irq/preemption flags there).
    #[arg(short = 'L', long = "Latency")]
    pub latency: bool,
    #[command(flatten)]
    pub show: ShowEventArgs,
    #[command(flatten)]
    pub stack: StackArgs,
    #[command(flatten)]
    pub names: NameArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Kinds (`hw`/`hardware`, `sw`/`software`, `cache`/`hwcache`,
    /// `tracepoint`), tracepoint globs (`sched:*`) or words a name must hold
    /// (`sched`: `*sched*`).
    #[arg(value_name = "FILTER")]
    pub filters: Vec<String>,
}

#[derive(Debug, Args)]
pub struct EvlistArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Show each event's sample frequency (or period).
    #[arg(short = 'F', long = "freq")]
    pub freq: bool,
    /// Show the event groups, `{leader,member}` (leaders only).
    #[arg(short = 'g', long = "group")]
    pub group: bool,
    /// Show the fields of tracepoint events.
    #[arg(long = "trace-fields")]
    pub trace_fields: bool,
}

#[derive(Debug, Args)]
pub struct BuildidListArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// List only binaries a sample landed in (replays the records).
    #[arg(short = 'H', long = "with-hits")]
    pub with_hits: bool,
    /// Print the running kernel's build id and stop.
    #[arg(short = 'k', long = "kernel")]
    pub kernel: bool,
    /// Print the running kernel's map (build id, start, end, name) and
    /// its modules' and stop (perf's `-m/--kernel-maps`).
    #[arg(short = 'm', long = "kernel-maps")]
    pub kernel_maps: bool,
}

#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// The recording (default perf.data).
    pub file: Option<PathBuf>,
    /// Where the archive goes (default FILE.tar.bz2).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Unpack this archive into the build-id cache instead.
    #[arg(long = "unpack", value_name = "ARCHIVE", conflicts_with_all = ["file", "output"])]
    pub unpack: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BuildidCacheArgs {
    /// Add these binaries (comma-separated paths) to the cache.
    #[arg(short = 'a', long = "add", value_name = "FILES", value_delimiter = ',')]
    pub add: Vec<PathBuf>,
    /// Remove these binaries' cached copies of their current build (comma-separated).
    #[arg(
        short = 'r',
        long = "remove",
        value_name = "FILES",
        value_delimiter = ','
    )]
    pub remove: Vec<PathBuf>,
    /// Remove every cached build of these paths (comma-separated).
    #[arg(
        short = 'p',
        long = "purge",
        value_name = "FILES",
        value_delimiter = ','
    )]
    pub purge: Vec<PathBuf>,
    /// Remove everything in the cache.
    #[arg(short = 'P', long = "purge-all")]
    pub purge_all: bool,
    /// Add these binaries again, replacing what the cache holds for their build id.
    #[arg(
        short = 'u',
        long = "update",
        value_name = "FILES",
        value_delimiter = ','
    )]
    pub update: Vec<PathBuf>,
    /// List the cached binaries whose file is still there with the cached build id (perf's
    /// `--list`: the running kernel's for [kernel.kallsyms]), by build id.
    #[arg(short = 'l', long = "list")]
    pub list: bool,
    /// Print the build ids of the binaries a recording names that the cache lacks.
    #[arg(short = 'M', long = "missing", value_name = "FILE")]
    pub missing: Option<PathBuf>,
    /// Accepted for perf's command lines (nothing here needs forcing).
    #[arg(short = 'f', long = "force")]
    pub force: bool,
    /// perf's kcore copies: refused (sear reads no kcore).
    #[arg(short = 'k', long = "kcore", value_name = "FILE")]
    pub kcore: Option<PathBuf>,
    /// perf's namespace target: refused (give the binary's path as the host sees it, e.g.
    /// /proc/PID/root/PATH).
    #[arg(long = "target-ns", value_name = "PID")]
    pub target_ns: Option<i32>,
}

impl Command {
    /// The subcommand's name, as perf's `pager.<name>` setting says it.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Record(_) => "record",
            Command::Report(_) => "report",
            Command::Top(_) => "top",
            Command::Script(_) => "script",
            Command::Annotate(_) => "annotate",
            Command::Stat(_) => "stat",
            Command::BuildidList(_) => "buildid-list",
            Command::BuildidCache(_) => "buildid-cache",
            Command::Archive(_) => "archive",
            Command::Evlist(_) => "evlist",
            Command::List(_) => "list",
            Command::Inject(_) => "inject",
            Command::Collapse(_) => "collapse",
            Command::Flame(_) => "flame",
            Command::Diff(_) => "diff",
            Command::Export(_) => "export",
            Command::Html(_) => "html",
            Command::Config(_) => "config",
            Command::Version(_) => "version",
        }
    }
}

/// A CPU list as perf takes it (`0-3,6`), and as it was typed.
#[derive(Debug, Clone)]
pub struct CpuList(pub Vec<u32>, pub String);

fn cpu_list(s: &str) -> Result<CpuList, String> {
    record::parse_cpu_list(s)
        .map(|l| CpuList(l, s.to_owned()))
        .ok_or_else(|| format!("`{s}` is not a CPU list like 0-3,6"))
}

/// A comma-separated list of names as typed (`--comms a,b`), trimmed.
#[derive(Debug, Clone)]
pub struct NameList(pub Vec<String>);

pub(crate) fn names(s: &str) -> Result<NameList, String> {
    Ok(NameList(
        s.split(',').map(|x| x.trim().to_owned()).collect(),
    ))
}

/// Process or thread ids, comma-separated (`--pid 1,2`), and the text as
/// typed.
#[derive(Debug, Clone)]
pub struct IdList(pub Vec<i32>, pub String);

fn ids(s: &str) -> Result<IdList, String> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse::<i32>()
                .map_err(|_| format!("`{x}` is not a process or thread id"))
        })
        .collect::<Result<_, _>>()
        .map(|v| IdList(v, s.to_owned()))
}

/// The processes or threads record and stat attach to (`-p`/`-t`):
/// positive ids, comma-separated (empty items are skipped).
pub(crate) fn targets(s: &str) -> Result<IdList, String> {
    s.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| {
            x.trim()
                .parse::<i32>()
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("`{x}`: expected positive numbers separated by commas"))
        })
        .collect::<Result<_, _>>()
        .map(|v| IdList(v, s.to_owned()))
}

/// perf script's options that sear refuses, each saying why (see
/// `cmd::script::refuse_unsupported`).
#[derive(Debug, Clone, Args)]
pub struct ScriptUnsupported {
    /// Python/Perl scripting (perf's `-s`, `-g`, `-l`): out of sear's scope.
    #[arg(short = 's', long = "script", value_name = "SCRIPT", hide = true)]
    pub script: Option<String>,
    #[arg(short = 'g', long = "gen-script", value_name = "LANG", hide = true)]
    pub gen_script: Option<String>,
    #[arg(short = 'l', long = "list", hide = true)]
    pub list: bool,
    #[arg(long = "dlfilter", value_name = "FILE", hide = true)]
    pub dlfilter: Option<String>,
    #[arg(long = "dlarg", value_name = "ARG", hide = true)]
    pub dlarg: Option<String>,
    #[arg(long = "list-dlfilters", hide = true)]
    pub list_dlfilters: bool,
    #[arg(long = "itrace", value_name = "OPTS", num_args = 0..=1, require_equals = true,
          default_missing_value = "", hide = true)]
    pub itrace: Option<String>,
    #[arg(long = "insn-trace", hide = true)]
    pub insn_trace: bool,
    #[arg(long = "call-trace", hide = true)]
    pub call_trace: bool,
    #[arg(long = "call-ret-trace", hide = true)]
    pub call_ret_trace: bool,
    #[arg(long = "graph-function", value_name = "SYMBOLS", hide = true)]
    pub graph_function: Option<String>,
    #[arg(long = "addr-range", value_name = "N", hide = true)]
    pub addr_range: Option<String>,
    #[arg(long = "xed", hide = true)]
    pub xed: bool,
    #[arg(long = "guestmount", value_name = "DIR", hide = true)]
    pub guestmount: Option<String>,
    #[arg(long = "guestkallsyms", value_name = "FILE", hide = true)]
    pub guestkallsyms: Option<String>,
    #[arg(long = "guestmodules", value_name = "FILE", hide = true)]
    pub guestmodules: Option<String>,
    #[arg(long = "guestvmlinux", value_name = "FILE", hide = true)]
    pub guestvmlinux: Option<String>,
    #[arg(long = "guest-code", hide = true)]
    pub guest_code: bool,
    #[arg(short = 'k', long = "vmlinux", value_name = "FILE", hide = true)]
    pub vmlinux: Option<std::path::PathBuf>,
}

/// perf's event switch for report and script.
#[derive(Debug, Clone, Args)]
pub struct SwitchArgs {
    /// Count samples only after a sample of this event (perf's
    /// `--switch-on`, with a recording of several events: e.g. a
    /// tracepoint or a software event marking a phase).
    #[arg(long = "switch-on", value_name = "EVENT")]
    pub switch_on: Option<String>,
    /// Stop counting at a sample of this event (until the next
    /// --switch-on event, if one is given).
    #[arg(long = "switch-off", value_name = "EVENT")]
    pub switch_off: Option<String>,
    /// Keep the --switch-on/--switch-off events' own samples.
    #[arg(long = "show-on-off-events")]
    pub show_on_off_events: bool,
}

impl SwitchArgs {
    /// The switch on `meta`'s events, if one was asked for.
    pub fn evswitch(
        &self,
        meta: &perf_data::Meta,
    ) -> anyhow::Result<Option<profile::session::EvSwitch>> {
        if self.switch_on.is_none() && self.switch_off.is_none() {
            return Ok(None);
        }
        profile::session::EvSwitch::by_names(
            meta,
            self.switch_on.as_deref(),
            self.switch_off.as_deref(),
            self.show_on_off_events,
        )
        .map(Some)
        .map_err(anyhow::Error::msg)
    }
}

/// Which samples report and script keep (perf's filters of the same names).
#[derive(Debug, Clone, Args)]
pub struct SampleFilterArgs {
    /// Only samples of these commands (comma-separated).
    #[arg(short = 'c', long = "comms", value_name = "COMMS", value_parser = names)]
    pub comms: Option<NameList>,
    /// Only samples of these process ids (comma-separated).
    #[arg(long = "pid", value_name = "PIDS", value_parser = ids)]
    pub pid: Option<IdList>,
    /// Only samples of these thread ids (comma-separated).
    #[arg(long = "tid", value_name = "TIDS", value_parser = ids)]
    pub tid: Option<IdList>,
    /// Only samples of these CPUs (a list like 0-3,6; the recording needs
    /// CPUs: `-a`, `-C` or `--sample-cpu`).
    #[arg(short = 'C', long = "cpu", value_name = "CPUS", value_parser = cpu_list)]
    pub cpu: Option<CpuList>,
    /// Only samples in these symbols (comma-separated names as printed).
    #[arg(short = 'S', long = "symbols", value_name = "SYMBOLS", value_parser = names)]
    pub symbols: Option<NameList>,
    /// Only samples in these time ranges (perf's forms): START,STOP in
    /// seconds as `sear script` prints times (either may be empty:
    /// `1234.5,` is from 1234.5 on), several separated by spaces
    /// (`"1234.5,1235 1236,"`), or slices of the recording in percent:
    /// `10%/2` (the second tenth), `25%` (the first quarter), `0%-10%`, and
    /// comma-separated lists of them (`10%/1,10%/3`, `0%-10%,30%-40%`).
    #[arg(long = "time", value_name = "RANGES")]
    pub time: Option<String>,
}

impl SampleFilterArgs {
    pub fn comms(&self) -> Option<Vec<String>> {
        self.comms.clone().map(|n| n.0)
    }
    pub fn pids(&self) -> Option<Vec<i32>> {
        self.pid.clone().map(|n| n.0)
    }
    pub fn tids(&self) -> Option<Vec<i32>> {
        self.tid.clone().map(|n| n.0)
    }
    pub fn cpus(&self) -> Option<Vec<u32>> {
        self.cpu.clone().map(|n| n.0)
    }
    pub fn symbols(&self) -> Option<Vec<String>> {
        self.symbols.clone().map(|n| n.0)
    }
    /// The `--time` ranges, parsed (percent slices of this recording's
    /// span).
    pub fn time_ranges(
        &self,
        meta: &perf_data::Meta,
    ) -> anyhow::Result<Option<profile::session::TimeRanges>> {
        time_ranges(self.time.as_deref(), meta)
    }
}

/// `--time` parsed for a recording (percent slices need its first and last
/// sample times).
pub fn time_ranges(
    time: Option<&str>,
    meta: &perf_data::Meta,
) -> anyhow::Result<Option<profile::session::TimeRanges>> {
    Ok(time
        .map(|t| profile::session::TimeRanges::parse(t, meta.features.sample_time()))
        .transpose()?)
}

/// `--time` and `-C/--cpu` of the commands that draw or export a whole
/// recording (collapse, flame, export, html), as report and script take
/// them.
#[derive(Debug, Clone, Default, Args)]
pub struct RangeArgs {
    /// Only samples in these time ranges (perf's forms): START,STOP in
    /// seconds as `sear script` prints times (either may be empty), several
    /// separated by spaces, or slices in percent: `10%/2` (the second
    /// tenth), `25%`, `0%-10%`, `10%/1,10%/3`. Recordings only.
    #[arg(long = "time", value_name = "RANGES")]
    pub time: Option<String>,
    /// Only samples of these CPUs (a list like 0-3,6; the recording needs
    /// CPUs: `-a`, `-C` or `--sample-cpu`). Recordings only.
    #[arg(short = 'C', long = "cpu", value_name = "CPUS", value_parser = cpu_list)]
    pub cpu: Option<CpuList>,
}

impl RangeArgs {
    pub fn is_set(&self) -> bool {
        self.time.is_some() || self.cpu.is_some()
    }
    pub fn cpus(&self) -> Option<Vec<u32>> {
        self.cpu.clone().map(|c| c.0)
    }
    /// The time ranges for this recording, its CPUs checked.
    pub fn for_recording(
        &self,
        meta: &perf_data::Meta,
        path: &std::path::Path,
    ) -> anyhow::Result<Option<profile::session::TimeRanges>> {
        use anyhow::Context;
        if self.cpu.is_some() {
            profile::session::check_cpu_filter(meta)
                .with_context(|| format!("{}", path.display()))?;
        }
        time_ranges(self.time.as_deref(), meta).with_context(|| format!("{}", path.display()))
    }
}

pub fn parse() -> Result<Cli, clap::Error> {
    Cli::try_parse()
}

/// The kernel records script shows beside the samples, as perf's flags
/// of the same names.
#[derive(Debug, Clone, Copy, Args)]
pub struct ShowEventArgs {
    /// Show COMM, FORK and EXIT records (process and thread lifetimes).
    #[arg(long = "show-task-events")]
    pub task: bool,
    /// Show MMAP and MMAP2 records (what was mapped where).
    #[arg(long = "show-mmap-events")]
    pub mmap: bool,
    /// Show context switches (SWITCH records; recorded with
    /// `record --switch-events`).
    #[arg(long = "show-switch-events")]
    pub switch: bool,
    /// Show NAMESPACES records.
    #[arg(long = "show-namespace-events")]
    pub namespace: bool,
    /// Show LOST records (events the kernel dropped from a full ring buffer).
    #[arg(long = "show-lost-events")]
    pub lost: bool,
    /// Show KSYMBOL and BPF_EVENT records.
    #[arg(long = "show-bpf-events")]
    pub bpf: bool,
    /// Show CGROUP records.
    #[arg(long = "show-cgroup-events")]
    pub cgroup: bool,
    /// Show TEXT_POKE records (kernel code modified).
    #[arg(long = "show-text-poke-events")]
    pub text_poke: bool,
    /// Show FINISHED_ROUND records (the recorder's flush marks) where the
    /// file has them: as perf, every record is then shown in file order,
    /// not sorted by time.
    #[arg(long = "show-round-events")]
    pub round: bool,
}

impl ShowEventArgs {
    pub fn side_band(self) -> profile::session::SideBand {
        profile::session::SideBand {
            task: self.task,
            mmap: self.mmap,
            switch: self.switch,
            namespace: self.namespace,
            lost: self.lost,
            bpf: self.bpf,
            cgroup: self.cgroup,
            text_poke: self.text_poke,
            round: self.round,
        }
    }
}

/// zstd compression of the records written (record, inject).
#[derive(Debug, Clone, Copy, Args)]
pub struct CompressArgs {
    /// Compress the records with zstd (perf's COMPRESSED records; perf 5.x+
    /// reads them). LEVEL 1-22, default 1.
    #[arg(
        short = 'z',
        long = "compression-level",
        alias = "compress",
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1",
        value_parser = clap::value_parser!(i32).range(1..=22)
    )]
    pub level: Option<i32>,
}

/// How call chains are read, for the commands that read them.
#[derive(Debug, Clone, Copy, Args)]
pub struct StackArgs {
    /// Use at most this many frames of each call chain, from the leaf.
    #[arg(long = "max-stack", value_name = "N", default_value_t = 127)]
    pub max_stack: usize,
    /// Look frame-pointer return addresses up as recorded, as perf 6.1 does,
    /// instead of at address - 1 (inside the call). Only calls that end a
    /// function and garbage frames differ.
    #[arg(long = "raw-return-addresses")]
    pub raw_return_addresses: bool,
}

/// How symbol names are printed, for the commands that print them.
#[derive(Debug, Clone, Copy, Args)]
pub struct NameArgs {
    /// Print C++ names as perf 6.1 does, without parameter lists and return
    /// types (sear prints full names by default).
    #[arg(long = "short-names")]
    pub short_names: bool,
    /// Print symbol names as stored in the binary (mangled).
    #[arg(long = "no-demangle", overrides_with = "demangle")]
    pub no_demangle: bool,
    /// Demangle names (the default; the last of --demangle and
    /// --no-demangle wins, as in perf).
    #[arg(long = "demangle", overrides_with = "no_demangle")]
    pub demangle: bool,
    /// Kernel names need no demangling: accepted for perf's command lines.
    #[arg(long = "demangle-kernel", hide = true)]
    pub demangle_kernel: bool,
}

impl NameArgs {
    /// The name style these flags ask for.
    pub fn style(self) -> profile::symbolize::NameStyle {
        use profile::symbolize::NameStyle;
        if self.no_demangle {
            NameStyle::Raw
        } else if self.short_names {
            NameStyle::Short
        } else {
            NameStyle::Full
        }
    }
}

#[cfg(test)]
mod tests {
    /// clap's own checks of every command's flags (names unique, short
    /// flags unclashed, conflicts and overrides naming real arguments).
    #[test]
    fn command_line_definition_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
