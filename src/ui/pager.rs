//! Long reports go through a pager on a terminal, as perf's do: the
//! command in `SEAR_PAGER`, else `PERF_PAGER`, else `PAGER`, else `less`
//! (with `LESS=FRX` unless set: quit when the text fits one screen, keep
//! colours, leave the screen as it was). An empty command or `cat` means
//! none; `--no-pager` or output that is not a terminal never pages.

use std::io::{self, IsTerminal, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

static DISABLED: AtomicBool = AtomicBool::new(false);
static FORCED: AtomicBool = AtomicBool::new(false);

/// Pages every command's output on a terminal (`-p/--paginate`), not only
/// the reports'.
pub fn force() {
    FORCED.store(true, Ordering::Relaxed);
}

/// Whether `-p` asked for every command's output to be paged.
pub fn forced() -> bool {
    FORCED.load(Ordering::Relaxed)
}

/// `--no-pager`.
pub fn disable() {
    DISABLED.store(true, Ordering::Relaxed);
}

/// Where paged output goes: the pager's stdin, or stdout.
pub enum Sink {
    Stdout(io::StdoutLock<'static>),
    Pager {
        stdin: Option<ChildStdin>,
        child: Child,
    },
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(s) => s.write(buf),
            Sink::Pager { stdin: Some(p), .. } => p.write(buf),
            Sink::Pager { stdin: None, .. } => Err(io::ErrorKind::BrokenPipe.into()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(s) => s.flush(),
            Sink::Pager { stdin: Some(p), .. } => p.flush(),
            Sink::Pager { stdin: None, .. } => Ok(()),
        }
    }
}

impl Drop for Sink {
    /// The pager keeps the terminal until the user quits it.
    fn drop(&mut self) {
        if let Sink::Pager { stdin, child } = self {
            drop(stdin.take());
            let _ = child.wait();
        }
    }
}

/// The pager command to run, if output should be paged.
fn command() -> Option<String> {
    if DISABLED.load(Ordering::Relaxed) || !io::stdout().is_terminal() {
        return None;
    }
    let cmd = ["SEAR_PAGER", "PERF_PAGER", "PAGER"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .unwrap_or_else(|| "less".to_owned());
    let trimmed = cmd.trim();
    (!trimmed.is_empty() && trimmed != "cat").then(|| trimmed.to_owned())
}

/// Stdout, through the pager when [`command`] says so (and it starts).
pub fn open() -> Sink {
    if let Some(cmd) = command() {
        let mut c = Command::new("sh");
        c.arg("-c").arg(&cmd).stdin(Stdio::piped());
        if std::env::var_os("LESS").is_none() {
            c.env("LESS", "FRX");
        }
        match c.spawn() {
            Ok(mut child) => {
                return Sink::Pager {
                    stdin: child.stdin.take(),
                    child,
                }
            }
            Err(e) => log::warn!("pager `{cmd}` did not start ({e}); printing directly"),
        }
    }
    Sink::Stdout(io::stdout().lock())
}
