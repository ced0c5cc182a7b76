//! The one error type of this crate.

/// Why a replay stopped or an option did not parse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The recording could not be read further.
    #[error(transparent)]
    Read(#[from] perf_data::Error),
    #[error("cannot start a thread: {0}")]
    Thread(std::io::Error),
    #[error("the thread reading the records failed")]
    ReaderFailed,
    /// A `--sort` key sear does not know (the key as given).
    #[error("unknown key `{0}`")]
    UnknownSortKey(String),
    /// A `-g`/`--call-graph` argument that does not parse (why).
    #[error("{0}")]
    CallGraph(String),
    /// An output field or sort list that does not parse (why).
    #[error("{0}")]
    Fields(String),
    /// An option's value that does not parse (why).
    #[error("{0}")]
    BadOption(String),
    /// What the recording asks for that sear cannot do yet (what to do).
    #[error("{0}")]
    Unsupported(String),
    /// A `--time` range that does not parse (why).
    #[error("{0}")]
    TimeRange(String),
}
