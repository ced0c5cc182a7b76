//! Pure renderers: a model in, bytes to any `io::Write` out.
//!
//! What it does: formats what sear computed the way perf prints it
//! (`perf report --stats`, `--header-only`, `-D`, the call graphs under
//! report entries in [`callgraph`], `perf script`'s samples in [`script`], ...), folded stacks ([`folded`]) and
//! SVG flame graphs ([`flame`], drawn by inferno), `sear diff`'s table
//! ([`diff`]), and the exports of a recording's samples: [`pprof`]
//! (gzipped profile.proto), [`speedscope`], [`firefox`] (the Firefox
//! Profiler's processed format) and sear's own [`json`]; [`html`] is `sear html`'s
//! self-contained page. What it does not:
//! read files, compute anything, or decide where output goes.
//!
//! ```
//! let stats = perf_data::stats::Stats::default();
//! let mut out = Vec::new();
//! render::stats::write_stats(&mut out, &stats, &[]).unwrap();
//! assert!(String::from_utf8(out).unwrap().contains("TOTAL events:"));
//! ```

pub mod annotate;
pub mod annotate2;
pub mod callgraph;
pub mod diff;
pub mod dump;
pub mod firefox;
pub mod flame;
pub mod folded;
pub mod header;
pub mod html;
pub mod json;
pub mod pprof;
pub mod record;
pub mod report;
pub mod script;
pub mod speedscope;
pub mod stat;
pub mod stats;
pub mod tasks;
