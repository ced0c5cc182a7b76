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
//! assert_eq!(folded.sorted(), vec![(b"prog;main"[..].into(), 5)]);
//! ```

pub mod input;
pub mod perf_script;
pub mod recording;

use std::borrow::Cow;
use std::cmp::Ordering;

use rustc_hash::FxHashMap as HashMap;

use perf_data::Diagnostics;

/// Counts per distinct stack. Keys are bytes: perf script text is not always
/// UTF-8, and the folded output keeps names as they came.
#[derive(Debug, Default, Clone)]
pub struct Folded {
    stacks: HashMap<Vec<u8>, u64>,
    /// Or the lines as the paths of a tree of names (a recording folded):
    /// each line's text is made as it is handed out, so millions of
    /// distinct stacks are not held as text beside the tree.
    tree: Option<Box<LineTree>>,
}

/// Folded lines as paths of a tree: a line's text is its nodes' names,
/// top-level node first, joined by `;`. No name may hold a `;` (a line
/// could then be two paths' text, and the order below would not hold).
#[derive(Debug, Default, Clone)]
pub(crate) struct LineTree {
    pub(crate) names: Vec<Vec<u8>>,
    /// Per node: its parent ([`u32::MAX`] for a top-level node) and its
    /// name (an index into `names`); a parent comes before its children.
    pub(crate) parent: Vec<u32>,
    pub(crate) name: Vec<u32>,
    /// The nodes where lines end, ascending, with their counts.
    pub(crate) lines: Vec<(u32, u64)>,
}

impl LineTree {
    /// Hands out the lines sorted bytewise by text, walking the tree:
    /// among the children of a node (or the top-level nodes), a child's
    /// own line sorts by its name and its subtree's lines by its name and
    /// `;` (every text there starts with that), and no two of these keys
    /// are one the other's prefix but a child's own line and its subtree
    /// (the line first, as the shorter text). Sorting those keys per node
    /// is sorting every text.
    fn for_each_sorted<E>(&self, mut f: impl FnMut(&[u8], u64) -> Result<(), E>) -> Result<(), E> {
        const NONE: u32 = u32::MAX;
        let n = self.parent.len();
        // Children by parent, the top-level nodes under `n`.
        let group = |p: u32| {
            if p == NONE || p as usize >= n {
                n
            } else {
                p as usize
            }
        };
        let mut start = vec![0u32; n + 2];
        for &p in &self.parent {
            start[group(p) + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut kids = vec![0u32; n];
        {
            let mut fill = start.clone();
            for (i, &p) in self.parent.iter().enumerate() {
                let g = group(p);
                kids[fill[g] as usize] = i as u32;
                fill[g] += 1;
            }
        }
        let count = |node: u32| -> Option<u64> {
            let i = self.lines.binary_search_by_key(&node, |l| l.0).ok()?;
            Some(self.lines[i].1)
        };
        let name = |node: u32| -> &[u8] {
            self.name
                .get(node as usize)
                .and_then(|&i| self.names.get(i as usize))
                .map_or(&[], |v| v.as_slice())
        };
        let children = |g: usize| &kids[start[g] as usize..start[g + 1] as usize];
        let key =
            |(node, sub): (u32, bool)| name(node).iter().chain(if sub { &b";"[..] } else { &[] });
        // (node, its subtree rather than its own line, depth)
        let mut work: Vec<(u32, bool, u32)> = Vec::new();
        let mut items: Vec<(u32, bool)> = Vec::new();
        let mut level = |g: usize, depth: u32, work: &mut Vec<(u32, bool, u32)>| {
            items.clear();
            for &c in children(g) {
                if count(c).is_some() {
                    items.push((c, false));
                }
                if !children(c as usize).is_empty() {
                    items.push((c, true));
                }
            }
            items.sort_unstable_by(|&a, &b| -> Ordering { key(a).cmp(key(b)) });
            work.extend(items.iter().rev().map(|&(c, sub)| (c, sub, depth)));
        };
        level(n, 0, &mut work);
        let mut text: Vec<u8> = Vec::new();
        // The text's length before each depth's name.
        let mut lens: Vec<usize> = vec![0];
        while let Some((node, sub, depth)) = work.pop() {
            let d = depth as usize;
            lens.truncate(d + 1);
            text.truncate(lens.get(d).copied().unwrap_or(0));
            text.extend_from_slice(name(node));
            if sub {
                text.push(b';');
                lens.push(text.len());
                level(node as usize, depth + 1, &mut work);
            } else if let Some(c) = count(node) {
                f(&text, c)?;
            }
        }
        Ok(())
    }
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

    /// The lines are those of `tree` (and no others: a folded made empty,
    /// as a collapser's is before a recording's lines are given it).
    pub(crate) fn set_tree(&mut self, tree: LineTree) {
        self.stacks = HashMap::default();
        self.tree = Some(Box::new(tree));
    }

    pub fn len(&self) -> usize {
        match &self.tree {
            Some(t) => t.lines.len(),
            None => self.stacks.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`Self::sorted`] as text (bytes that are not UTF-8 shown as U+FFFD).
    pub fn sorted_text(&self) -> Vec<(String, u64)> {
        let mut v = Vec::with_capacity(self.len());
        let _ = self.for_each_sorted(|s, n| -> Result<(), ()> {
            v.push((String::from_utf8_lossy(s).into_owned(), n));
            Ok(())
        });
        v
    }

    /// The stacks and their counts, sorted bytewise by stack (owned where
    /// the lines are kept as a tree: see [`Self::for_each_sorted`] to
    /// write them without holding them all).
    pub fn sorted(&self) -> Vec<(Cow<'_, [u8]>, u64)> {
        if self.tree.is_some() {
            let mut v = Vec::with_capacity(self.len());
            let _ = self.for_each_sorted(|s, n| -> Result<(), ()> {
                v.push((Cow::Owned(s.to_vec()), n));
                Ok(())
            });
            return v;
        }
        self.sorted_map()
            .into_iter()
            .map(|(s, n)| (Cow::Borrowed(s), n))
            .collect()
    }

    fn sorted_map(&self) -> Vec<(&[u8], u64)> {
        let mut v: Vec<(&[u8], u64)> = self
            .stacks
            .iter()
            .map(|(k, &c)| (k.as_slice(), c))
            .collect();
        v.sort_unstable_by(|a, b| a.0.cmp(b.0));
        v
    }

    /// Hands each stack and its count to `f`, sorted bytewise by stack,
    /// until `f` fails.
    pub fn for_each_sorted<E>(
        &self,
        mut f: impl FnMut(&[u8], u64) -> Result<(), E>,
    ) -> Result<(), E> {
        match &self.tree {
            Some(t) => t.for_each_sorted(f),
            None => {
                for (s, n) in self.sorted_map() {
                    f(s, n)?;
                }
                Ok(())
            }
        }
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

    /// The walk hands out what sorting the lines' texts gives, with names
    /// that are prefixes of one another and hold bytes below and above `;`.
    #[test]
    fn line_tree_walk_is_bytewise_order() {
        let names: Vec<Vec<u8>> = ["a", "a:b", "ab", "", "a(", "b", "a<", "\u{e9}", "a\t"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let mut t = LineTree {
            names,
            ..Default::default()
        };
        let mut kids: HashMap<(u32, u32), u32> = HashMap::default();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..3000 {
            // A path of up to 6 names, root first; a line at its end.
            let mut parent = u32::MAX;
            for _ in 0..=next(6) {
                let name = next(t.names.len() as u64) as u32;
                parent = *kids.entry((parent, name)).or_insert_with(|| {
                    t.parent.push(parent);
                    t.name.push(name);
                    (t.parent.len() - 1) as u32
                });
            }
            if let Err(i) = t.lines.binary_search_by_key(&parent, |l| l.0) {
                t.lines.insert(i, (parent, next(100) + 1));
            }
        }
        let text = |mut n: u32| {
            let mut parts = Vec::new();
            while n != u32::MAX {
                parts.push(t.names[t.name[n as usize] as usize].clone());
                n = t.parent[n as usize];
            }
            parts.reverse();
            parts.join(&b";"[..])
        };
        let mut want: Vec<(Vec<u8>, u64)> = t.lines.iter().map(|&(n, c)| (text(n), c)).collect();
        want.sort();
        let f = Folded {
            tree: Some(Box::new(t.clone())),
            ..Default::default()
        };
        let got: Vec<(Vec<u8>, u64)> = f
            .sorted()
            .into_iter()
            .map(|(s, c)| (s.into_owned(), c))
            .collect();
        assert!(want.len() > 500, "{}", want.len());
        assert_eq!(got, want);
        assert_eq!(f.len(), want.len());
    }

    #[test]
    fn folded_sum_saturates() {
        let mut f = Folded::new();
        let mut d = Diagnostics::default();
        f.add(b"a", u64::MAX, 0, &mut d);
        f.add(b"a", 1, 0, &mut d);
        assert_eq!(f.sorted(), vec![(b"a"[..].into(), u64::MAX)]);
        assert_eq!(d.warnings["count overflow"].count, 1);
    }
}
