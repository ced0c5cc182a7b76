use std::io;

/// Everything that can go wrong while reading or writing a perf.data stream.
///
/// Offsets are byte offsets in the file (or pipe stream) where the problem
/// was found, so a user can look at the bytes with `xxd -s OFFSET`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("I/O error at byte offset {offset}: {source}")]
    Io {
        offset: u64,
        #[source]
        source: io::Error,
    },
    #[error(
        "not a perf.data file: bad magic {magic:#018x} at byte offset 0 (expected \"PERFILE2\")"
    )]
    BadMagic { magic: u64 },
    #[error("perf.data version 1 (\"PERFFILE\" magic, perf before 2011) is not supported; re-record with a newer perf")]
    VersionOne,
    #[error("truncated {what} at byte offset {offset}: need {need} bytes, only {have} available")]
    Truncated {
        what: &'static str,
        offset: u64,
        need: u64,
        have: u64,
    },
    #[error("corrupt {what} at byte offset {offset}: {detail}")]
    Corrupt {
        what: &'static str,
        offset: u64,
        detail: String,
    },
    #[error(
        "zstd decompression failed for the COMPRESSED record at byte offset {offset}: {detail}"
    )]
    Decompress { offset: u64, detail: String },
    /// The writer was asked for something the format cannot hold.
    #[error("cannot write {what}: {detail}")]
    Unwritable { what: &'static str, detail: String },
}

impl Error {
    pub(crate) fn corrupt(what: &'static str, offset: u64, detail: impl Into<String>) -> Self {
        Error::Corrupt {
            what,
            offset,
            detail: detail.into(),
        }
    }
    /// The byte offset the error refers to, if any.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Io { offset, .. }
            | Error::Truncated { offset, .. }
            | Error::Corrupt { offset, .. }
            | Error::Decompress { offset, .. } => Some(*offset),
            Error::BadMagic { .. } => Some(0),
            Error::VersionOne => Some(0),
            Error::Unwritable { .. } => None,
        }
    }
}

/// A parse failure inside one record's payload; the reader adds the record's offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseError {
    /// What field or structure was being read.
    pub what: &'static str,
    /// Position inside the record payload (after the 8-byte record header).
    pub pos: usize,
}

impl ParseError {
    pub fn at_record(self, record_offset: u64, record_type: u32) -> Error {
        Error::corrupt(
            "record",
            record_offset,
            format!(
                "{} record: {} does not fit (payload byte {})",
                crate::consts::record_type_name(record_type),
                self.what,
                self.pos
            ),
        )
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} does not fit (byte {})", self.what, self.pos)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
