//! What the folding commands read: a recording, the text `perf script`
//! prints, or folded stacks; told apart by their first bytes, from a file or
//! from stdin.

use std::borrow::Cow;
use std::io::{self, BufRead, Read};
use std::path::{Path, PathBuf};

use perf_data::Diagnostics;

use super::parse_folded;
use super::perf_script::{looks_like_perf_script, Collapser, Options};

/// What an input turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A recording (file or pipe mode, either byte order, or perf's old v1).
    PerfData,
    /// Anything else: `perf script` text, folded stacks.
    Text,
}

/// The input kind from the first bytes.
pub fn sniff(head: &[u8]) -> InputKind {
    match head.get(..8) {
        Some(b"PERFILE2" | b"2ELIFREP" | b"PERFFILE") => InputKind::PerfData,
        _ => InputKind::Text,
    }
}

/// An opened input: a file, or stdin.
pub struct Input {
    /// How messages name it: the path, or `stdin`.
    pub name: String,
    pub kind: InputKind,
    /// All of it, the sniffed bytes included.
    pub reader: Box<dyn BufRead + Send>,
    /// The file it came from (None: stdin).
    pub path: Option<PathBuf>,
}

impl Input {
    /// Opens `path` (stdin for `-` or `None`) and looks at its first bytes.
    pub fn open(path: Option<&Path>) -> io::Result<Input> {
        let path = path.filter(|p| *p != Path::new("-"));
        let (name, mut inner): (String, Box<dyn Read + Send>) = match path {
            None => ("stdin".into(), Box::new(io::stdin())),
            Some(p) => {
                let f = std::fs::File::open(p).map_err(|e| with_name(e, p))?;
                (p.display().to_string(), Box::new(f))
            }
        };
        let mut head = Vec::with_capacity(8);
        (&mut inner).take(8).read_to_end(&mut head)?;
        let kind = sniff(&head);
        let reader = Box::new(io::BufReader::with_capacity(
            1 << 16,
            io::Cursor::new(head).chain(inner),
        ));
        Ok(Input {
            name,
            kind,
            reader,
            path: path.map(Path::to_path_buf),
        })
    }

    /// The input as a recording: its file opened as one (with random
    /// access), or the stream read in pipe mode.
    pub fn recording(self) -> Result<(PathBuf, perf_data::RecordReader), perf_data::Error> {
        match self.path {
            Some(p) => perf_data::RecordReader::open(&p).map(|r| (p, r)),
            None => perf_data::RecordReader::from_stream(Box::new(self.reader))
                .map(|r| (PathBuf::from("-"), r)),
        }
    }
}

fn with_name(e: io::Error, p: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("opening {}: {e}", p.display()))
}

/// Stacks and their counts, sorted as folded output is.
pub type Stacks = Vec<(String, u64)>;

/// Which text [`stacks_from_text`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    PerfScript,
    Folded,
}

/// Stacks from text, sorted as folded output is: `perf script` output
/// folded with `opts`, or folded stacks taken as they are (invalid UTF-8
/// shown as U+FFFD, with a warning naming the input `name`).
pub fn stacks_from_text(
    name: &str,
    bytes: &[u8],
    opts: Options,
) -> io::Result<(Stacks, Diagnostics, TextKind)> {
    if looks_like_perf_script(bytes) {
        let mut c = Collapser::new(opts);
        c.read(bytes)?;
        let (folded, diag) = c.finish();
        return Ok((folded.sorted_text(), diag, TextKind::PerfScript));
    }
    let text = String::from_utf8_lossy(bytes);
    let (lines, diag) = parse_folded(&text);
    let stacks = lines
        .iter()
        .map(|l| (l.stack.to_owned(), l.count))
        .collect();
    if let Cow::Owned(_) = text {
        log::warn!("{name}: input is not valid UTF-8; invalid bytes shown as \u{fffd}");
    }
    Ok((stacks, diag, TextKind::Folded))
}
