//! perf's `--control`: commands read from a descriptor or FIFO while
//! recording or counting (`enable`, `disable`, `stop`, `ping`, ...), each
//! acknowledged with `ack\n` on the second one, as `perf record` and
//! `perf stat` take them (tools/perf/util/evlist.c's ctlfd protocol).

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

use crate::error::{Error, Result};

/// A command received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `enable` (all events) or `enable NAME`.
    Enable(Option<String>),
    /// `disable` or `disable NAME`.
    Disable(Option<String>),
    /// `snapshot`: an AUX area snapshot (none here: only acknowledged).
    Snapshot,
    /// `evlist`: list the events on stderr.
    Evlist,
    /// `stop`: end as if the command had ended.
    Stop,
    /// `ping`: only acknowledged.
    Ping,
}

/// The control descriptors.
pub struct Control {
    ctl: File,
    ack: Option<File>,
    /// Whether `ctl` belongs to the caller (`fd:N`): then it is not closed.
    borrowed: bool,
    buf: Vec<u8>,
    /// The writer side closed (a pipe): nothing more to read.
    closed: bool,
}

impl Drop for Control {
    fn drop(&mut self) {
        if self.borrowed {
            // The caller's descriptors stay open.
            let ctl = std::mem::replace(&mut self.ctl, dev_null());
            std::mem::forget(ctl);
            if let Some(a) = self.ack.take() {
                std::mem::forget(a);
            }
        }
    }
}

fn dev_null() -> File {
    File::open("/dev/null").unwrap_or_else(|_| {
        // SAFETY: -1 is never a valid descriptor; File only closes it
        // (EBADF, ignored) when dropped.
        unsafe { File::from_raw_fd(-1) }
    })
}

fn bad(spec: &str, detail: impl Into<String>) -> Error {
    Error::BadOption {
        option: "--control",
        value: spec.to_owned(),
        detail: detail.into(),
    }
}

impl Control {
    /// `fd:CTL[,ACK]` (open descriptors) or `fifo:CTL[,ACK]` (paths of
    /// FIFOs, opened here).
    pub fn open(spec: &str) -> Result<Control> {
        let (kind, rest) = spec.split_once(':').ok_or_else(|| {
            bad(
                spec,
                "expected fd:ctl-fd[,ack-fd] or fifo:ctl-fifo[,ack-fifo]",
            )
        })?;
        let (ctl, ack) = match rest.split_once(',') {
            Some((c, a)) => (c, Some(a)),
            None => (rest, None),
        };
        let c = match kind {
            "fd" => {
                let fd = |s: &str| -> Result<RawFd> {
                    let n: RawFd = s
                        .parse()
                        .map_err(|_| bad(spec, format!("`{s}` is not a descriptor number")))?;
                    // SAFETY: F_GETFD only asks whether the descriptor is open.
                    if n < 0 || unsafe { libc::fcntl(n, libc::F_GETFD) } < 0 {
                        return Err(bad(spec, format!("descriptor {n} is not open")));
                    }
                    Ok(n)
                };
                let ctl_fd = fd(ctl)?;
                let ack_fd = ack.map(fd).transpose()?;
                Control {
                    // SAFETY: checked open above; `borrowed` keeps Drop
                    // from closing it.
                    ctl: unsafe { File::from_raw_fd(ctl_fd) },
                    // SAFETY: as above.
                    ack: ack_fd.map(|a| unsafe { File::from_raw_fd(a) }),
                    borrowed: true,
                    buf: Vec::new(),
                    closed: false,
                }
            }
            "fifo" => {
                // Read-write, as perf opens them: neither open waits for
                // the other end.
                let open = |p: &str| {
                    std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .custom_flags(libc::O_NONBLOCK)
                        .open(p)
                        .map_err(|e| bad(spec, format!("Failed to open '{p}': {e}")))
                };
                Control {
                    ctl: open(ctl)?,
                    ack: ack.map(open).transpose()?,
                    borrowed: false,
                    buf: Vec::new(),
                    closed: false,
                }
            }
            _ => {
                return Err(bad(
                    spec,
                    "expected fd:ctl-fd[,ack-fd] or fifo:ctl-fifo[,ack-fifo]",
                ))
            }
        };
        let fd = c.ctl.as_raw_fd();
        // SAFETY: fcntl on an open descriptor.
        unsafe {
            let fl = libc::fcntl(fd, libc::F_GETFL);
            if fl >= 0 {
                libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
            }
        }
        Ok(c)
    }

    /// The descriptor to poll for commands; None once its writer is gone.
    pub fn poll_fd(&self) -> Option<RawFd> {
        (!self.closed).then(|| self.ctl.as_raw_fd())
    }

    /// The commands that arrived (without waiting); unknown ones are
    /// reported on stderr and skipped, as perf does.
    pub fn commands(&mut self) -> Vec<Command> {
        let mut chunk = [0u8; 256];
        loop {
            match self.ctl.read(&mut chunk) {
                Ok(0) => {
                    self.closed = true;
                    break;
                }
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    // A writer that never ends its line cannot grow this
                    // without bound.
                    if self.buf.len() > 64 << 10 {
                        self.buf.clear();
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let mut out = Vec::new();
        while let Some(end) = self.buf.iter().position(|&b| b == b'\n' || b == 0) {
            let line: Vec<u8> = self.buf.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line[..line.len() - 1])
                .trim()
                .to_owned();
            if text.is_empty() {
                continue;
            }
            let (word, arg) = match text.split_once(' ') {
                Some((w, a)) => (w, Some(a.trim().to_owned())),
                None => (text.as_str(), None),
            };
            out.push(match word {
                "enable" => Command::Enable(arg),
                "disable" => Command::Disable(arg),
                "snapshot" => Command::Snapshot,
                "evlist" => Command::Evlist,
                "stop" => Command::Stop,
                "ping" => Command::Ping,
                _ => {
                    eprintln!("Unknown control command: {text}");
                    continue;
                }
            });
        }
        out
    }

    /// Acknowledges a command on the ack descriptor, if any: `ack\n` and
    /// its C string's NUL, the bytes perf writes.
    pub fn ack(&mut self) {
        if let Some(a) = &mut self.ack {
            let _ = a.write_all(b"ack\n\0");
        }
    }
}
