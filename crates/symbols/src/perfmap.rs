//! JIT symbols from `/tmp/perf-PID.map` files, looked up the way perf 6.1 does.
//!
//! What it does: [`PerfMap::parse`] reads lines `START SIZE NAME` (hex, with or without
//! `0x`; the name runs to the end of the line and may hold spaces), as written by Node
//! (`--perf-basic-prof`), the JVM agents, LuaJIT and others, and [`PerfMap::lookup`]
//! answers with the name and offset perf prints for an address in the process.
//!
//! What it does not: it does not read jitdump files (see [`crate::jitdump`]), and it does not
//! know which addresses perf sends here: perf consults the map only for samples in
//! anonymous executable mappings of the process (MMAP records of `//anon`), and then with
//! the sampled address itself (the map is an identity map).
//!
//! perf's rules (`dso__load_perf_map` in tools/perf/util/symbol.c), kept here because JIT
//! maps overlap and repeat addresses as code is moved and replaced:
//! - each line loses its last byte (the newline; a last line without one loses a real
//!   character); the start and the size are read by `strtoull(.., 16)` (leading blanks,
//!   sign and `0x` accepted, overflow saturates), each followed by one separator byte of
//!   any kind; a line whose name would be shorter than 3 bytes is skipped;
//! - a symbol covers `[start, start + size)` (wrapping as u64 arithmetic does), and a
//!   zero size covers `start` alone: perf does not stretch JIT symbols to the next one;
//! - there is no de-duplication: every entry goes into perf's red-black tree in file order
//!   (equal starts to the right), and a lookup walks down from the root, returning the
//!   first node whose range holds the address. Which of several overlapping entries wins
//!   therefore depends on the tree's shape; this module builds the same tree, so it gives
//!   the same answer.
//!
//! ```
//! use symbols::PerfMap;
//!
//! let map = PerfMap::parse("3f1c0 40 LazyCompile:~main /app/x.js:1:1\n");
//! let hit = map.lookup(0x3f1c8).unwrap();
//! assert_eq!((hit.name, hit.offset), ("LazyCompile:~main /app/x.js:1:1", 8));
//! ```

use std::io::{BufRead, Read};
use std::path::Path;

use crate::symtree::RbTree;
use crate::{Error, Reason};

/// Lines longer than this are not symbols (V8 and JVM names stay far below it).
const MAX_LINE: usize = 64 << 10;

/// The symbols of one perf-PID.map file, in perf's lookup structure.
#[derive(Debug, Clone, Default)]
pub struct PerfMap {
    /// Entries by start, in perf's tree; each one's item indexes `spans`.
    tree: RbTree,
    /// Each entry's name, as a range of `names`.
    spans: Vec<(u32, u32)>,
    names: String,
    skipped: usize,
}

/// The JIT symbol covering an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JitHit<'a> {
    pub name: &'a str,
    /// Bytes from the symbol's start to the address.
    pub offset: u64,
    /// The symbol's size as the map gives it.
    pub size: u64,
}

impl PerfMap {
    /// Parses perf-map text; lines perf would skip are counted, never an error.
    pub fn parse(text: &str) -> PerfMap {
        let mut map = PerfMap::default();
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            let (line, next) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..=i], &rest[i + 1..]),
                None => (rest, &rest[rest.len()..]),
            };
            map.add_line(line);
            rest = next;
        }
        map
    }

    /// Reads a perf-map file line by line; a line longer than 64 KiB is skipped.
    pub fn load(path: impl AsRef<Path>) -> Result<PerfMap, Error> {
        let path = path.as_ref();
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let file = crate::open_regular(path).map_err(io)?;
        let mut reader = std::io::BufReader::new(file);
        let mut map = PerfMap::default();
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = (&mut reader)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .map_err(io)?;
            if n == 0 {
                break;
            }
            if line.len() > MAX_LINE {
                // Drop the rest of the overlong line without holding it.
                map.skipped += 1;
                if line.last() != Some(&b'\n') {
                    let mut sink = Vec::new();
                    loop {
                        sink.clear();
                        let m = (&mut reader)
                            .take(MAX_LINE as u64)
                            .read_until(b'\n', &mut sink)
                            .map_err(io)?;
                        if m == 0 || sink.last() == Some(&b'\n') {
                            break;
                        }
                    }
                }
                continue;
            }
            map.add_line(&line);
        }
        if map.skipped > 0 {
            log::debug!("{}: skipped {} lines", path.display(), map.skipped);
        }
        Ok(map)
    }

    /// Number of entries (all of them, overlapping or not).
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Lines perf would skip.
    pub fn skipped_lines(&self) -> usize {
        self.skipped
    }

    /// The entry perf finds for `addr`, the sampled address in the process.
    pub fn lookup(&self, addr: u64) -> Result<JitHit<'_>, Reason> {
        let f = self.tree.find_node(addr).ok_or(Reason::NoSymbol)?;
        let (a, b) = self.spans[f.item as usize];
        Ok(JitHit {
            name: &self.names[a as usize..b as usize],
            offset: addr - f.start,
            size: f.end.wrapping_sub(f.start),
        })
    }

    fn add_line(&mut self, line: &[u8]) {
        if line.len() > MAX_LINE || self.spans.len() >= u32::MAX as usize - 1 {
            self.skipped += 1;
            return;
        }
        // C string semantics: nothing after a NUL byte exists for perf.
        let line = match line.iter().position(|&b| b == 0) {
            Some(i) => &line[..i],
            None => line,
        };
        // `line[--line_len] = '\0'` on what getline returned.
        let Some((_, line)) = line.split_last() else {
            self.skipped += 1;
            return;
        };
        let (start, used) = strtoull_hex(line);
        let mut len = used + 1;
        if len + 2 >= line.len() {
            self.skipped += 1;
            return;
        }
        let (size, used) = strtoull_hex(&line[len..]);
        len += used + 1;
        if len + 2 >= line.len() {
            self.skipped += 1;
            return;
        }
        let name = String::from_utf8_lossy(&line[len..]);
        let a = self.names.len();
        self.names.push_str(&name);
        // Offsets fit: the node count is bounded by u32 and each name by MAX_LINE, but a
        // huge input could still pass 4 GiB of names; stop there instead of wrapping.
        let (Ok(a), Ok(b)) = (u32::try_from(a), u32::try_from(self.names.len())) else {
            self.names.truncate(a);
            self.skipped += 1;
            return;
        };
        let end = if size == 0 {
            start
        } else {
            start.wrapping_add(size)
        };
        self.tree.insert(start, end, self.spans.len() as u32);
        self.spans.push((a, b));
    }
}

/// glibc's `strtoull(s, &end, 16)` on bytes: the value (saturating at `u64::MAX`) and how
/// many bytes it consumed (0 when there are no digits).
fn strtoull_hex(s: &[u8]) -> (u64, usize) {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') {
        i += 1;
    }
    let mut negative = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        negative = s[i] == b'-';
        i += 1;
    }
    // "0x" counts only when a hex digit follows; otherwise the "0" alone is the number.
    if s.get(i) == Some(&b'0')
        && matches!(s.get(i + 1), Some(b'x' | b'X'))
        && s.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        i += 2;
    }
    let digits_at = i;
    let mut value: u64 = 0;
    let mut overflow = false;
    while let Some(d) = s.get(i).and_then(|c| (*c as char).to_digit(16)) {
        match value
            .checked_mul(16)
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        i += 1;
    }
    if i == digits_at {
        return (0, 0);
    }
    if overflow {
        return (u64::MAX, i);
    }
    (
        if negative {
            value.wrapping_neg()
        } else {
            value
        },
        i,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(m: &PerfMap, a: u64) -> Option<&str> {
        m.lookup(a).ok().map(|h| h.name)
    }

    #[test]
    fn lines_with_and_without_0x_and_spaces_in_names() {
        let m =
            PerfMap::parse("0x1000 0x10 LazyCompile:~foo /a b.js:1:2\n2000 20 Function: bar baz\n");
        assert_eq!(m.len(), 2);
        assert_eq!(
            m.lookup(0x100f),
            Ok(JitHit {
                name: "LazyCompile:~foo /a b.js:1:2",
                offset: 0xf,
                size: 0x10
            })
        );
        assert_eq!(name(&m, 0x1010), None);
        assert_eq!(name(&m, 0x2000), Some("Function: bar baz"));
        assert_eq!(name(&m, 0x0fff), None);
    }

    #[test]
    fn perf_quirks_short_names_last_line_and_separators() {
        // Names of fewer than 3 bytes are skipped; the last line without a newline loses
        // its last byte; any byte separates the fields.
        let m = PerfMap::parse("1000 10 ab\n2000 10 abc\n3000\t10\tx y\n4000 10 tail");
        assert_eq!(name(&m, 0x1000), None);
        assert_eq!(name(&m, 0x2000), Some("abc"));
        assert_eq!(name(&m, 0x3000), Some("x y"));
        assert_eq!(name(&m, 0x4000), Some("tai"));
        assert_eq!(m.skipped_lines(), 1);
    }

    #[test]
    fn malformed_lines_are_skipped_and_counted() {
        let m = PerfMap::parse("\n\nnonsense\n1000\n1000 10\nzz yy name_here\n5000 10 ok_name\n");
        assert_eq!(name(&m, 0x5004), Some("ok_name"));
        // "nonsense" and "zz yy name_here" have no digits, so start = size = 0 and the
        // name starts two bytes in: perf keeps them as symbols at 0, and so do we.
        assert_eq!(m.len(), 3);
        // Both sit at 0; the second became the tree's root, so perf finds it first.
        assert_eq!(name(&m, 0), Some(" yy name_here"));
        assert_eq!(m.skipped_lines(), 4);
    }

    #[test]
    fn empty_map() {
        let m = PerfMap::parse("");
        assert!(m.is_empty());
        assert_eq!(m.lookup(0), Err(Reason::NoSymbol));
    }

    #[test]
    fn huge_and_overflowing_sizes_do_not_panic() {
        let m = PerfMap::parse(
            "ffffffffffffff00 1000 wraps_around\nffffffffffffffffffff 10 saturated\n\
             1000 ffffffffffffffffffffff big_size\n",
        );
        assert_eq!(m.len(), 3);
        // start + size wraps below start (strtoull saturates at u64::MAX, and perf adds
        // without a check), so perf's walk passes these entries by; so does ours.
        assert_eq!(name(&m, 0xffffffffffffff10), None);
        assert_eq!(name(&m, u64::MAX), None);
        assert_eq!(name(&m, 0x1000_0000), None);
    }

    #[test]
    fn zero_size_covers_its_start_only() {
        let m = PerfMap::parse("1000 0 empty_one\n2000 10 next_one\n");
        assert_eq!(name(&m, 0x1000), Some("empty_one"));
        assert_eq!(name(&m, 0x1001), None);
    }

    #[test]
    fn duplicates_and_overlaps_resolve_through_the_tree() {
        // Root is the first entry; an identical later entry sits in its right subtree and
        // is never reached for addresses the root covers.
        let m = PerfMap::parse("1000 100 old_code\n1000 100 new_code\n");
        assert_eq!(name(&m, 0x1050), Some("old_code"));
        // With a third entry the tree rotates: the middle one becomes the root.
        let m = PerfMap::parse("1000 100 first\n1000 100 second\n1000 100 third\n");
        assert_eq!(name(&m, 0x1050), Some("second"));
        // A wide entry hides a narrow one inside it when it is nearer the root.
        let m = PerfMap::parse("1000 1000 wide\n1800 10 narrow\n");
        assert_eq!(name(&m, 0x1804), Some("wide"));
    }

    #[test]
    fn tree_stays_balanced_and_finds_everything() {
        let mut text = String::new();
        for i in 0..5000u64 {
            // Out of order on purpose.
            let s = (i * 7919) % 5000;
            text.push_str(&format!("{:x} 10 sym_{s}\n", 0x10000 + s * 0x10));
        }
        let m = PerfMap::parse(&text);
        for s in 0..5000u64 {
            assert_eq!(
                m.lookup(0x10000 + s * 0x10 + 3).unwrap().name,
                format!("sym_{s}")
            );
        }
        // (Red-black: a black height of 13 or less for 5,000 nodes.)
        assert!(m.tree.check() <= 14);
    }

    #[test]
    fn strtoull_matches_glibc() {
        assert_eq!(strtoull_hex(b"0x1f rest"), (0x1f, 4));
        assert_eq!(strtoull_hex(b"  1F"), (0x1f, 4));
        assert_eq!(strtoull_hex(b"0xg"), (0, 1));
        assert_eq!(strtoull_hex(b"-1"), (u64::MAX, 2));
        assert_eq!(strtoull_hex(b"x"), (0, 0));
        assert_eq!(strtoull_hex(b""), (0, 0));
        assert_eq!(strtoull_hex(b"1ffffffffffffffff"), (u64::MAX, 17));
    }

    #[test]
    fn load_skips_overlong_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("perf-1.map");
        let long = "x".repeat(MAX_LINE * 2);
        std::fs::write(
            &p,
            format!("1000 10 first_one\n2000 10 {long}\n3000 10 third_one\n"),
        )
        .unwrap();
        let m = PerfMap::load(&p).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m.skipped_lines(), 1);
        assert_eq!(name(&m, 0x3000), Some("third_one"));
    }
}
