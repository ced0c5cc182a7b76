//! Reading and writing Linux `perf.data` files.
//!
//! What it does: parses the file-mode and pipe-mode formats of every perf
//! version (both byte orders, 32- and 64-bit producers): the header, event
//! attributes and ids, feature sections, and every record type, including
//! zstd-compressed records; hands records out in perf's time order; writes
//! files perf reads. Damaged input yields an [`Error`] naming a byte offset,
//! or a partial result whose problems are counted in [`Diagnostics`].
//!
//! What it does not: resolve symbols, unwind stacks or print anything.
//!
//! ```no_run
//! use perf_data::{OrderedReader, PERF_RECORD_SAMPLE};
//! let mut r = OrderedReader::open(std::path::Path::new("perf.data"))?;
//! let mut n = 0;
//! while let Some(rec) = r.next_record()? {
//!     if rec.type_() == PERF_RECORD_SAMPLE {
//!         let s = rec.sample()?;
//!         n += s.period.unwrap_or(1);
//!     }
//! }
//! println!("{n} period units");
//! # Ok::<(), perf_data::Error>(())
//! ```

pub mod attr;
pub mod bytes;
pub mod consts;
pub mod convert;
pub mod dir_format;
pub mod env;
mod error;
pub mod features;
pub mod header;
mod meta;
pub mod names;
mod order;
mod reader;
pub mod records;
pub mod sample;
pub mod stats;
pub mod tracing;
pub mod user_records;
pub mod writer;

pub use attr::{Event, EventAttr};
pub use bytes::Endian;
pub use consts::*;
pub use error::{Error, ParseError, Result};
pub use features::Features;
pub use header::{FileHeader, Kind, Section};
pub use meta::Meta;
pub use order::{Order, OrderedReader};
pub use reader::{
    Diagnostics, InputBytes, OpenOptions, Record, RecordReader, Warning, MAX_DECOMPRESSED,
};
pub use records::{KeptRecord, RawRecord, RecordData, SampleId};
pub use sample::Sample;
