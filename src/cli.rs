//! Command-line interface: perf-compatible subcommands and flags, turned
//! into plain option structs before any work starts.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "sear",
    version,
    about = "A fast, perf-compatible sampling profiler for Linux",
    long_about = "sear reads and writes perf.data (any perf version, file or pipe mode) and \
prints what perf prints, faster.\n\nTypical use:\n  sear record -g -- ./myprog     # sample a program\n  \
sear report --stats            # what the recording contains\n  sear report --header-only      # where and how it was recorded",
    propagate_version = true
)]
pub struct Cli {
    /// More messages on stderr (-v, -vv for debug output).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read perf.data and show what it contains (like `perf report`).
    Report(ReportArgs),
    /// List the build ids of the binaries in a recording (like `perf buildid-list`).
    #[command(name = "buildid-list")]
    BuildidList(BuildidListArgs),
    /// Rewrite a recording (like `perf inject`): pipe to file mode, decompress, compress.
    Inject(InjectArgs),
}

#[derive(Debug, Args)]
pub struct InjectArgs {
    /// Input file, `-` for stdin (pipe mode).
    #[arg(short = 'i', long = "input", value_name = "FILE", default_value = "-")]
    pub input: PathBuf,
    /// Output file, `-` for stdout (pipe mode).
    #[arg(short = 'o', long = "output", value_name = "FILE", default_value = "-")]
    pub output: PathBuf,
    /// Write kernel records zstd-compressed (like `perf record -z`); LEVEL 1-22, default 1.
    /// Without it, compressed input is written decompressed.
    #[arg(
        short = 'z',
        long = "compress",
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1",
        value_parser = clap::value_parser!(i32).range(1..=22)
    )]
    pub compress: Option<i32>,
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
    /// Print event counts by record type, overall and per event, then stop.
    #[arg(long)]
    pub stats: bool,
    /// Print the recording's header (host, perf version, events, features) and stop.
    #[arg(long = "header-only")]
    pub header_only: bool,
    /// With --header-only: show every feature in full (perf's -I).
    #[arg(short = 'I', long = "show-info")]
    pub show_info: bool,
    /// Dump every record raw with its decoded fields (perf's -D).
    #[arg(short = 'D', long = "dump-raw-trace")]
    pub dump_raw_trace: bool,
    /// Plain text output (the only mode; accepted for perf compatibility).
    #[arg(long)]
    pub stdio: bool,
    /// Sort and group samples by these keys, comma-separated: comm, pid
    /// (one entry per thread, shown as tid:comm; `tid` is the same key, as
    /// perf has none of that name), dso, sym, symoff (symbol+offset),
    /// srcline (file:line), srcfile, parent (see --parent), cpu,
    /// symbol_size, dso_size. Default: comm,dso,sym (as perf).
    #[arg(short = 's', long = "sort", value_name = "KEYS")]
    pub sort: Option<String>,
    /// Regex (extended syntax) that picks each sample's parent: the first
    /// callchain symbol matching it, else `[other]`. Adds the parent key.
    /// Default: `^sys_|^do_page_fault` (as perf).
    #[arg(short = 'p', long = "parent", value_name = "REGEX")]
    pub parent: Option<String>,
    /// Only show entries with a parent symbol (the percentages still count
    /// all samples).
    #[arg(short = 'x', long = "exclude-other")]
    pub exclude_other: bool,
    /// Show only each entry's own samples, not those of its callees (the
    /// default when there are no call graphs).
    #[arg(long = "no-children", overrides_with = "children")]
    pub no_children: bool,
    /// Accumulate callees' samples into their callers (perf's default with call graphs).
    #[arg(long = "children")]
    pub children: bool,
    /// Treat samples with branch stacks as plain samples (perf otherwise reports branches).
    #[arg(long = "no-branch-stack")]
    pub no_branch_stack: bool,
    /// Call-graph display, as perf: `graph` (default) or `none`.
    #[arg(short = 'g', long = "call-graph", value_name = "MODE")]
    pub call_graph: Option<String>,
    /// Do not expand inline frames in call chains (faster; as perf's --no-inline).
    #[arg(long = "no-inline", overrides_with = "inline")]
    pub no_inline: bool,
    /// Expand inline frames in DWARF-unwound call chains (the default).
    #[arg(long = "inline")]
    pub inline: bool,
    /// Use at most this many frames of each call chain.
    #[arg(long = "max-stack", value_name = "N", default_value_t = 127)]
    pub max_stack: usize,
    /// Hide rows below this percentage.
    #[arg(long = "percent-limit", value_name = "PERCENT", default_value_t = 0.0)]
    pub percent_limit: f64,
    /// Only samples of these commands (comma-separated).
    #[arg(long = "comms", value_name = "COMMS")]
    pub comms: Option<String>,
    /// Only samples in these shared objects (comma-separated short names).
    #[arg(short = 'd', long = "dsos", value_name = "DSOS")]
    pub dsos: Option<String>,
    /// Only samples of these process ids (comma-separated).
    #[arg(long = "pid", value_name = "PIDS")]
    pub pid: Option<String>,
    /// Only samples of these thread ids (comma-separated).
    #[arg(long = "tid", value_name = "TIDS")]
    pub tid: Option<String>,
    /// Only samples in these symbols (comma-separated names as printed).
    #[arg(short = 'S', long = "symbols", value_name = "SYMBOLS")]
    pub symbols: Option<String>,
    /// Print C++ names as perf 6.1 does, without parameter lists and return
    /// types (sear prints full names by default).
    #[arg(long = "short-names")]
    pub short_names: bool,
    /// Look frame-pointer return addresses up as recorded, as perf 6.1 does,
    /// instead of at address - 1 (inside the call). Only calls that end a
    /// function and garbage frames differ.
    #[arg(long = "raw-return-addresses")]
    pub raw_return_addresses: bool,
    /// Print symbol names as stored in the binary (mangled).
    #[arg(long = "no-demangle")]
    pub no_demangle: bool,
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
}

pub fn parse() -> Result<Cli, clap::Error> {
    Cli::try_parse()
}
