//! Terminal-facing helpers: logging setup, error and warning printing.
//! The only place besides cmd/ that writes to the terminal.

use std::io::{IsTerminal, Write};
use std::path::Path;

use perf_data::Diagnostics;

pub mod browser;
pub mod pager;
pub mod sigbus;

struct StderrLogger {
    level: log::LevelFilter,
}

impl log::Log for StderrLogger {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= self.level
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            let _ = writeln!(
                std::io::stderr(),
                "{}: {}",
                r.level().as_str().to_lowercase(),
                r.args()
            );
        }
    }
    fn flush(&self) {}
}

pub fn init_logging(verbose: u8, quiet: bool) {
    let level = if quiet {
        log::LevelFilter::Error
    } else {
        match verbose {
            0 => log::LevelFilter::Warn,
            1 => log::LevelFilter::Info,
            2 => log::LevelFilter::Debug,
            _ => log::LevelFilter::Trace,
        }
    };
    let logger = Box::leak(Box::new(StderrLogger { level }));
    if log::set_logger(logger).is_ok() {
        log::set_max_level(level);
    }
}

/// True if the error chain contains a broken pipe (the reader went away).
/// With `-vv`: the peak and current memory, at a named point (file pages
/// are mapped inputs and binaries).
pub fn log_memory(when: &str) {
    if !log::log_enabled!(log::Level::Debug) {
        return;
    }
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        let fields: Vec<String> = status
            .lines()
            .filter(|l| {
                ["VmHWM", "RssAnon", "RssFile"]
                    .iter()
                    .any(|k| l.starts_with(k))
            })
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        log::debug!("memory {when}: {}", fields.join(", ").replace(": ", " "));
    }
}

pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

pub fn print_error(e: &anyhow::Error) {
    let color = std::io::stderr().is_terminal();
    let mut s = std::io::stderr().lock();
    let head = if color {
        "\x1b[1;31merror\x1b[0m"
    } else {
        "error"
    };
    let _ = write!(s, "sear: {head}: {e}");
    for c in e.chain().skip(1) {
        let _ = write!(s, ": {c}");
    }
    let _ = writeln!(s);
}

/// Prints the reader's counted warnings, one line per kind.
pub fn print_diagnostics(path: &Path, d: &Diagnostics) {
    if d.is_empty() || log::max_level() < log::LevelFilter::Warn {
        return;
    }
    let mut s = std::io::stderr().lock();
    for (kind, w) in &d.warnings {
        let times = if w.count > 1 {
            format!(" ({} times; first)", w.count)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "sear: warning: {}: {kind}{times} at byte offset {}: {}",
            path.display(),
            w.first_offset,
            w.message
        );
    }
}

/// What the header printer needs of the host: the recording's modification
/// time and the local time zone (perf prints local time), with `-I`.
pub fn header_info(path: &Path, show_info: bool) -> render::header::FileInfo {
    use std::os::unix::fs::MetadataExt;
    // perf stats the descriptor it reads: for stdin that is the pipe itself.
    let path = if path == Path::new("-") {
        Path::new("/dev/stdin")
    } else {
        path
    };
    render::header::FileInfo {
        mtime: std::fs::metadata(path).ok().map(|m| m.mtime()),
        show_info,
        utc_offset: local_utc_offset,
    }
}

/// Seconds east of UTC of the local time zone at instant `t`, by the
/// system's rules (TZ, /etc/localtime).
pub fn local_utc_offset(t: i64) -> i64 {
    let Ok(ts) = jiff::Timestamp::from_second(t) else {
        return 0;
    };
    i64::from(jiff::tz::TimeZone::system().to_offset(ts).seconds())
}

/// Whether text output gets perf's colours: `--stdio-color` (always,
/// never, auto), else perf's config `color.ui` (the same words; a true
/// value means auto), else auto: stdout is a terminal whose TERM is not
/// `dumb`.
pub fn stdio_color(flag: Option<&str>) -> bool {
    match flag.or_else(|| crate::config::get().value("color.ui")) {
        Some("always") => true,
        Some(v) if v == "never" || crate::config::parse_bool(v) == Some(false) => false,
        _ => {
            std::io::stdout().is_terminal()
                && std::env::var("TERM").is_ok_and(|t| !t.is_empty() && t != "dumb")
        }
    }
}

/// How `sear stat` writes numbers: the user's `LC_NUMERIC` (from `LC_ALL`,
/// `LC_NUMERIC` or `LANG`, as setlocale(3) picks it), which perf stat
/// applies to its output; `big_num` is perf's `-B` (counts grouped).
/// The process's C library is put back to the C locale afterwards.
pub fn numeric_locale(big_num: bool) -> render::stat::Numeric {
    let mut n = render::stat::Numeric {
        big_num,
        ..Default::default()
    };
    // SAFETY: setlocale and localeconv are called with valid C strings;
    // localeconv's result is read before the locale changes again, and
    // sear's threads do not use the C library's locale-dependent
    // functions meanwhile (this runs before the counting starts).
    unsafe {
        if libc::setlocale(libc::LC_NUMERIC, c"".as_ptr()).is_null() {
            return n;
        }
        let lc = libc::localeconv();
        if !lc.is_null() {
            let text = |p: *const libc::c_char| {
                if p.is_null() {
                    String::new()
                } else {
                    std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            };
            let decimal = text((*lc).decimal_point);
            if !decimal.is_empty() {
                n.decimal = decimal;
            }
            n.thousands = text((*lc).thousands_sep);
            let g = (*lc).grouping;
            if !g.is_null() {
                n.grouping = std::ffi::CStr::from_ptr(g).to_bytes().to_vec();
            }
        }
        libc::setlocale(libc::LC_NUMERIC, c"C".as_ptr());
    }
    n
}
