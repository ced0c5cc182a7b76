//! Folded stacks: one line per distinct stack, `root;...;leaf COUNT`, the
//! input of flame graphs.
//!
//! What it does: [`Folded`] sums counts per distinct stack (saturating, with a
//! counted warning) and hands them out sorted bytewise, as the folded format
//! wants. [`perf_script`] turns the text `perf script` prints into folded
//! stacks with the rules of the FlameGraph project's `stackcollapse-perf.pl`
//! (comm, optional pid/tid, kernel `_[k]`, JIT `_[j]` and inline `_[i]`
//! annotations, event filtering, periods).
//! What it does not: read perf.data (a collapser over replayed samples will
//! sit beside [`perf_script`] and fill the same [`Folded`]), or print.
//!
//! ```
//! use profile::collapse::perf_script::{Collapser, Options};
//! let text = b"prog 12 [000] 1.000: 5 cycles:\n\t  4005b1 main (/bin/prog)\n\n";
//! let mut c = Collapser::new(Options::default());
//! c.read(&text[..]).unwrap();
//! let (folded, _warnings) = c.finish();
//! assert_eq!(folded.sorted(), vec![(&b"prog;main"[..], 5)]);
//! ```

pub mod input;
pub mod perf_script;
pub mod recording;

use rustc_hash::FxHashMap as HashMap;

use perf_data::Diagnostics;

/// Counts per distinct stack. Keys are bytes: perf script text is not always
/// UTF-8, and the folded output keeps names as they came.
#[derive(Debug, Default, Clone)]
pub struct Folded {
    stacks: HashMap<Vec<u8>, u64>,
}

impl Folded {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `count` to `stack`. Saturates at `u64::MAX` and says so in `diag`.
    pub fn add(&mut self, stack: &[u8], count: u64, offset: u64, diag: &mut Diagnostics) {
        let slot = match self.stacks.get_mut(stack) {
            Some(s) => s,
            None => self.stacks.entry(stack.to_vec()).or_insert(0),
        };
        match slot.checked_add(count) {
            Some(v) => *slot = v,
            None => {
                *slot = u64::MAX;
                diag.warn("count overflow", offset, || {
                    format!(
                        "the count of stack {} exceeds {}; kept at that maximum",
                        String::from_utf8_lossy(stack),
                        u64::MAX
                    )
                });
            }
        }
    }

    pub fn len(&self) -> usize {
        self.stacks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    /// [`Self::sorted`] as text (bytes that are not UTF-8 shown as U+FFFD).
    pub fn sorted_text(&self) -> Vec<(String, u64)> {
        self.sorted()
            .into_iter()
            .map(|(s, n)| (String::from_utf8_lossy(s).into_owned(), n))
            .collect()
    }

    /// The stacks and their counts, sorted bytewise by stack.
    pub fn sorted(&self) -> Vec<(&[u8], u64)> {
        let mut v: Vec<(&[u8], u64)> = self
            .stacks
            .iter()
            .map(|(k, &c)| (k.as_slice(), c))
            .collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }
}

/// Longest folded line accepted by [`parse_folded`].
pub const MAX_FOLDED_LINE: usize = 1 << 20;

/// One line of folded text that [`parse_folded`] accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoldedLine<'a> {
    /// `root;...;leaf` (for differential input, with the first count after it).
    pub stack: &'a str,
    pub count: u64,
}

impl FoldedLine<'_> {
    /// Lines borrowing owned (stack, count) pairs.
    pub fn all_of(v: &[(String, u64)]) -> Vec<FoldedLine<'_>> {
        v.iter()
            .map(|(s, n)| FoldedLine {
                stack: s,
                count: *n,
            })
            .collect()
    }
}

/// Reads folded text, `root;...;leaf COUNT` a line, in input order. Comment
/// (`# `) and blank lines are skipped; lines without a count, with a count
/// over `u64::MAX`, that would make the total overflow `u64`, or over 1 MiB
/// are skipped with counted warnings (offsets are byte offsets). A fractional
/// count keeps its integer part.
pub fn parse_folded(text: &str) -> (Vec<FoldedLine<'_>>, Diagnostics) {
    let mut diag = Diagnostics::default();
    let mut lines = Vec::new();
    let mut total: u64 = 0;
    let mut offset = 0u64;
    for raw in text.split_inclusive('\n') {
        let at = offset;
        offset += raw.len() as u64;
        let line = raw.trim();
        if line.is_empty() || line.starts_with("# ") {
            continue;
        }
        if line.len() > MAX_FOLDED_LINE {
            diag.warn("line too long", at, || {
                format!("a line longer than {MAX_FOLDED_LINE} bytes; skipped")
            });
            continue;
        }
        let Some(sp) = line.rfind(' ') else {
            diag.warn("no count", at, || {
                format!("a line without a count: {:?}", short(line))
            });
            continue;
        };
        let (stack, num) = (line[..sp].trim_end(), &line[sp + 1..]);
        let int = num.split_once('.').map_or(num, |(i, _)| i);
        let frac_ok = num
            .split_once('.')
            .is_none_or(|(_, f)| f.bytes().all(|c| c.is_ascii_digit()));
        if stack.is_empty()
            || int.is_empty()
            || !frac_ok
            || !int.bytes().all(|c| c.is_ascii_digit())
        {
            diag.warn("no count", at, || {
                format!("a line without a stack and a count: {:?}", short(line))
            });
            continue;
        }
        let Ok(count) = int.parse::<u64>() else {
            diag.warn("count too large", at, || {
                format!("count {} exceeds {}; line skipped", short(num), u64::MAX)
            });
            continue;
        };
        match total.checked_add(count) {
            Some(t) => total = t,
            None => {
                diag.warn("total overflow", at, || {
                    format!("the counts add up to more than {}; line skipped", u64::MAX)
                });
                continue;
            }
        }
        lines.push(FoldedLine { stack, count });
    }
    (lines, diag)
}

fn short(s: &str) -> &str {
    match s.char_indices().nth(80) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_text_with_bad_lines() {
        let text = "# comment\n\na;b 3\n  a;c 2.5  \ngarbage\na;b 1180591620717411303424\n\
                    x 18446744073709551615\ny 1\n; 1\n";
        let (lines, d) = parse_folded(text);
        let got: Vec<(&str, u64)> = lines.iter().map(|l| (l.stack, l.count)).collect();
        assert_eq!(got, vec![("a;b", 3), ("a;c", 2), ("y", 1), (";", 1)]);
        assert_eq!(d.warnings["no count"].count, 1);
        assert_eq!(d.warnings["count too large"].count, 1);
        assert_eq!(d.warnings["total overflow"].count, 1);
    }

    #[test]
    fn folded_sum_saturates() {
        let mut f = Folded::new();
        let mut d = Diagnostics::default();
        f.add(b"a", u64::MAX, 0, &mut d);
        f.add(b"a", 1, 0, &mut d);
        assert_eq!(f.sorted(), vec![(&b"a"[..], u64::MAX)]);
        assert_eq!(d.warnings["count overflow"].count, 1);
    }
}
