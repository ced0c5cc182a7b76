//! The one error type of this crate. Every message says what to do next.

use std::io;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An option's value that does not parse or cannot be honoured (the
    /// option, the value, and why).
    #[error("{option} {value}: {detail}")]
    BadOption {
        option: &'static str,
        value: String,
        detail: String,
    },

    /// An `-e` list or modifier we cannot parse or do not support.
    #[error("event '{spec}': {detail}")]
    BadEvent { spec: String, detail: String },

    /// A hardware event on a machine without a PMU for it.
    #[error(
        "event '{event}' is not supported here: this machine has no hardware performance \
         counters for it (a virtual machine without a virtual PMU?); sample a software event \
         instead, e.g. `-e cpu-clock` (see `sear record --help` for the list)"
    )]
    NoPmu { event: String },

    /// The first event of a group (`{a,b}`, `-g`) is one the kernel lacks
    /// here: perf stops, so does sear.
    #[error("the {0} event is not supported (it leads a group, so nothing of the group can be counted): remove it, or put another event first")]
    GroupLeaderUnsupported(String),

    /// perf_event_open refused for lack of privileges.
    #[error(
        "perf_event_open refused for '{event}' ({err}): kernel.perf_event_paranoid is \
         {paranoid}. Run sear as root (or give it CAP_PERFMON), or lower the setting: \
         `sysctl kernel.perf_event_paranoid=-1` (system-wide -a/-C needs <= 0, kernel \
         samples need <= 1); without those, only your own processes' user space can be \
         sampled (add `:u` to the event, e.g. -e cpu-clock:u, and do not use -a)"
    )]
    Permission {
        event: String,
        paranoid: String,
        err: io::Error,
    },

    /// perf_event_open failed for another reason.
    #[error("perf_event_open for '{event}' on {target} failed: {err}{hint}")]
    Open {
        event: String,
        target: String,
        hint: &'static str,
        err: io::Error,
    },

    /// The process or thread to attach to does not exist.
    #[error("no process or thread with id {0}: check the id (`ps -eLf`) and try again")]
    NoSuchTask(i32),

    /// The command could not be started.
    #[error("cannot run '{command}': {err}{hint}")]
    Exec {
        command: String,
        hint: &'static str,
        err: io::Error,
    },

    /// A system call the recorder needs failed.
    #[error("{what}: {err}")]
    Sys { what: String, err: io::Error },

    /// Options that do not fit together or are out of range.
    #[error("{0}")]
    Options(String),

    /// Writing the recording failed (disk full, broken pipe, ...).
    #[error("writing the recording: {0}")]
    Write(perf_data::Error),

    /// The output file is gone from disk although it was written.
    #[error("{0}")]
    OutputLost(String),
}

// Not a `#[from]`: the message already holds the cause, and a source would
// print it twice.
impl From<perf_data::Error> for Error {
    fn from(e: perf_data::Error) -> Self {
        Error::Write(e)
    }
}

impl Error {
    pub(crate) fn sys(what: impl Into<String>, source: io::Error) -> Self {
        Error::Sys {
            what: what.into(),
            err: source,
        }
    }

    /// The command `command` could not be started: `err`, with a hint at
    /// what to check.
    pub fn exec(command: &std::ffi::OsStr, err: io::Error) -> Self {
        let hint = match err.kind() {
            io::ErrorKind::NotFound => {
                "; check the name, or give its path (PATH is searched for names without a slash)"
            }
            io::ErrorKind::PermissionDenied => "; is it executable (chmod +x)?",
            _ => "",
        };
        Error::Exec {
            command: command.to_string_lossy().into_owned(),
            hint,
            err,
        }
    }

    /// Exit status a shell would give for this error, when there is one
    /// (127: command not found, 126: found but not executable).
    pub fn shell_status(&self) -> Option<u8> {
        match self {
            Error::Exec { err, .. } => Some(match err.kind() {
                io::ErrorKind::NotFound => 127,
                _ => 126,
            }),
            _ => None,
        }
    }
}
