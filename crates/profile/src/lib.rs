//! From records to a profile: session replay now; unwinding, symbolization
//! and aggregation as they land.
//!
//! What it does: [`machine::Machine`] replays COMM/FORK/EXIT/MMAP/MMAP2
//! records into threads and address-space maps, so a sample can be attributed
//! to its thread and DSO as perf attributes it. [`callchain`] is perf's
//! call-graph tree: `-g` parsing, merging chains of interned frames,
//! sorting and thresholds, and which chain each `--children` entry gets.
//! [`collapse`] folds stacks (`root;...;leaf COUNT`), from `perf script`
//! text by the rules of `stackcollapse-perf.pl`.
//! [`hist`] sums samples into rows by sort keys, one histogram per event,
//! and pairs the rows of event groups; [`fields`] decides the columns
//! (`-F`, `--sort`, `-n`, ...) and the order of the rows. [`diff`] matches
//! the rows of two profiles and computes the change of each share;
//! [`export`] is the timed, symbolized sample list the pprof, speedscope
//! and Firefox Profiler exports are made from; [`summary`] sums it into
//! the call tree and source lines `sear html` embeds.
//! [`annotate`] lays a function's disassembly out with its source lines
//! interleaved (read from the source files) and spreads its samples over its
//! instructions (`perf annotate`).
//! What it does not: read files (it takes decoded records from
//! `perf-data`) or print.
//!
//! ```no_run
//! use perf_data::{RecordReader, PERF_RECORD_SAMPLE};
//! use profile::machine::Machine;
//! let mut r = RecordReader::open("perf.data".as_ref())?;
//! let mut m = Machine::new();
//! while let Some(rec) = r.next_record()? {
//!     if rec.type_() == PERF_RECORD_SAMPLE {
//!         let (comm, tid, _dso) = m.resolve(&rec.sample()?);
//!         println!("{comm} {tid}");
//!     } else if let Ok((data, _)) = rec.decode() {
//!         m.apply(rec.raw.misc, &data);
//!     }
//! }
//! # Ok::<(), perf_data::Error>(())
//! ```

pub mod annotate;
pub mod brstackinsn;
pub mod buildids;
pub mod callchain;
mod children;
pub mod collapse;
pub mod diff;
mod error;
pub use error::Error;
pub mod collect;
pub mod export;
pub mod fields;
pub mod groups;
pub mod hist;
pub mod jit;
pub mod machine;
mod rbtree;
pub mod report;
pub mod session;
pub mod summary;
pub mod symbolize;
