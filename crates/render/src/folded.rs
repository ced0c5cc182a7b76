//! Folded stacks as text: `root;...;leaf COUNT`, one line per stack, sorted bytewise.

use std::io::{self, Write};

use profile::collapse::Folded;

/// Writes `folded` sorted bytewise by stack (the order folded files use).
pub fn write_folded<W: Write>(mut out: W, folded: &Folded) -> io::Result<()> {
    folded.for_each_sorted(|stack, count| {
        out.write_all(stack)?;
        writeln!(out, " {count}")
    })
}
