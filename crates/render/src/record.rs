//! `sear record`'s closing lines on stderr, in perf record's words.

use std::io::{self, Write};

/// perf's "Woken up", "lost" and "Captured and wrote" lines for a finished
/// recording written to `name`; `dumped`: the name it was renamed to
/// (`--timestamp-filename`), said in perf's "Dump" line.
pub fn write_summary(
    out: &mut dyn Write,
    s: &record::Recorded,
    name: &str,
    dumped: Option<&str>,
) -> io::Result<()> {
    writeln!(
        out,
        "[ sear record: Woken up {} times to write data ]",
        s.wakeups
    )?;
    if let Some(d) = dumped {
        writeln!(out, "[ sear record: Dump {d} ]")?;
    }
    if s.lost > 0 {
        writeln!(
            out,
            "[ sear record: lost {} events in {} chunks: the ring buffers filled up; raise -m or lower -F ]",
            s.lost, s.lost_chunks
        )?;
    }
    let mb = |b: u64| b as f64 / 1024.0 / 1024.0;
    write!(
        out,
        "[ sear record: Captured and wrote {:.3} MB {} ({} samples)",
        mb(s.bytes_written),
        name,
        s.samples
    )?;
    if let Some((raw, packed)) = s.compressed {
        let ratio = if packed > 0 {
            s.bytes_transferred as f64 / packed as f64
        } else {
            0.0
        };
        write!(
            out,
            ", compressed (original {:.3} MB, ratio is {:.3})",
            mb(s.bytes_transferred.max(raw)),
            ratio
        )?;
    }
    writeln!(out, " ]")
}
