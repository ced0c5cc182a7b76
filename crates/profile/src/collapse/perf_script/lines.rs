//! The lines of `perf script` text: sample headers, event names, callchain
//! frames, and the name tidying stackcollapse-perf.pl does.

use super::*;

/// Generic name clean-up: no `;` (the folded separator), no quotes, no
/// argument lists (but Go's `pkg.(*T).M` keeps its parentheses); Java
/// `Lpkg/Class` without the `L`.
pub(super) fn tidy(name: &mut Vec<u8>, java: bool) {
    for b in name.iter_mut() {
        if *b == b';' {
            *b = b':';
        }
    }
    if !is_go_method(name) {
        if let Some(i) = name.iter().position(|&c| c == b'(') {
            name.truncate(i);
        }
    }
    name.retain(|&c| c != b'"' && c != b'\'');
    if java && name.first() == Some(&b'L') && name.contains(&b'/') {
        name.remove(0);
    }
}

/// `.(` followed later by `).`, as in `net/http.(*Client).Do`.
pub(super) fn is_go_method(name: &[u8]) -> bool {
    match find_first(name, b".(") {
        Some(i) => find_first(&name[i + 2..], b").").is_some(),
        None => false,
    }
}

/// Kernel modules: `[kernel.kallsyms]`, `[vdso]`, `[nf_conntrack]`, a `vmlinux` path.
pub(super) fn is_kernel(module: &[u8]) -> bool {
    (module.starts_with(b"[") || module.ends_with(b"vmlinux"))
        && find_first(module, b"unknown").is_none()
}

/// A JIT symbol map: `/tmp/perf-PID.map`.
pub(super) fn is_jit_map(module: &[u8]) -> bool {
    const PREFIX: &[u8] = b"/tmp/perf-";
    let mut rest = module;
    while let Some(i) = find_first(rest, PREFIX) {
        let after = &rest[i + PREFIX.len()..];
        let digits = after.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && after[digits..].starts_with(b".map") {
            return true;
        }
        rest = &rest[i + 1..];
    }
    false
}

pub(super) fn find_first(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

pub(super) fn find_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

pub(super) fn parse_u64(digits: &[u8]) -> Option<u64> {
    std::str::from_utf8(digits).ok()?.parse().ok()
}

pub(super) fn is_ws(c: u8) -> bool {
    c.is_ascii_whitespace() || c == 0x0b
}

pub(super) struct Header<'a> {
    pub(super) comm: &'a [u8],
    pub(super) pid: &'a [u8],
    pub(super) tid: Option<&'a [u8]>,
}

/// `COMM PID[/TID] ...`: the shortest comm after which whitespace, digits,
/// optionally `/` and digits, and whitespace follow. (Comms may hold spaces:
/// `V8 WorkerThread 24636/25607 [000] ...`.)
pub(super) fn parse_header(line: &[u8]) -> Option<Header<'_>> {
    if line.first().is_none_or(|&c| is_ws(c)) {
        return None;
    }
    let n = line.len();
    for i in 1..n {
        if !is_ws(line[i]) {
            continue;
        }
        let mut j = i;
        while j < n && is_ws(line[j]) {
            j += 1;
        }
        let d0 = j;
        while j < n && line[j].is_ascii_digit() {
            j += 1;
        }
        if j == d0 {
            continue;
        }
        let pid = &line[d0..j];
        while j < n && line[j] == b'/' {
            j += 1;
        }
        let t0 = j;
        while j < n && line[j].is_ascii_digit() {
            j += 1;
        }
        if j < n && is_ws(line[j]) {
            return Some(Header {
                comm: &line[..i],
                pid,
                tid: (j > t0).then(|| &line[t0..j]),
            });
        }
    }
    None
}

/// The end of a header: `: [PERIOD] EVENT:` (period optional), as
/// `... 666709.771979:   10101010 cpu-clock:` or `... 1410597.984841: instructions:`.
pub(super) fn parse_event(line: &[u8]) -> Option<(Option<&[u8]>, &[u8])> {
    let mut end = line.len();
    while end > 0 && is_ws(line[end - 1]) {
        end -= 1;
    }
    let body = line[..end].strip_suffix(b":")?;
    let ev_start = body.iter().rposition(|&c| is_ws(c))? + 1;
    let event = &body[ev_start..];
    if event.is_empty() {
        return None;
    }
    let mut k = ev_start;
    while k > 0 && is_ws(body[k - 1]) {
        k -= 1;
    }
    let digits_end = k;
    while k > 0 && body[k - 1].is_ascii_digit() {
        k -= 1;
    }
    let period = (k < digits_end).then(|| &body[k..digits_end]);
    while k > 0 && is_ws(body[k - 1]) {
        k -= 1;
    }
    if k == 0 || body[k - 1] != b':' {
        return None;
    }
    Some((period, event))
}

pub(super) struct Frame<'a> {
    pub(super) pc: &'a [u8],
    pub(super) func: &'a [u8],
    pub(super) module: &'a [u8],
}

/// `ADDR SYMBOL (MODULE)`: the address is a word, the module the last
/// ` (...)` of the line; the symbol is what lies between (it may hold spaces
/// and parentheses of its own). As in the reference's pattern, the symbol is
/// never empty: with nothing between address and module it is taken from the
/// blanks before the module (`ADDR  (MODULE)` gives the symbol ` `).
pub(super) fn parse_frame(line: &[u8]) -> Option<Frame<'_>> {
    let start = line.iter().position(|&c| !is_ws(c))?;
    let s = &line[start..];
    let w = s
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    if w == 0 {
        return None;
    }
    let blanks = s[w..].iter().take_while(|&&c| is_ws(c)).count();
    // The rightmost ` (` followed by a run of non-blanks holding a `)`.
    let n = s.len();
    let (p, module) = (1..n.saturating_sub(1)).rev().find_map(|p| {
        if s[p] != b' ' || s[p + 1] != b'(' {
            return None;
        }
        let m0 = p + 2;
        let m1 = m0 + s[m0..].iter().take_while(|&&c| !is_ws(c)).count();
        let q = s[m0..m1].iter().rposition(|&c| c == b')')?;
        Some((p, &s[m0..m0 + q]))
    })?;
    // The symbol starts after the address and its blanks, or earlier when
    // that leaves it empty (the regex backtracking into them).
    let r = (w + blanks).min(p - 1);
    if r == 0 {
        return None;
    }
    Some(Frame {
        pc: &s[..r.min(w)],
        func: &s[r..p],
        module,
    })
}

/// Reads one line into `line` (without its newline), keeping at most `max`
/// bytes. Returns the bytes consumed and whether the line was cut, or `None`
/// at the end of input.
pub(super) fn next_line<R: BufRead>(
    r: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<(usize, bool)>> {
    line.clear();
    let mut total = 0;
    let mut too_long = false;
    loop {
        let avail = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok((total > 0).then_some((total, too_long)));
        }
        let newline = avail.iter().position(|&c| c == b'\n');
        let chunk = &avail[..newline.unwrap_or(avail.len())];
        let room = max.saturating_sub(line.len());
        if chunk.len() > room {
            too_long = true;
            line.extend_from_slice(&chunk[..room]);
        } else {
            line.extend_from_slice(chunk);
        }
        let used = newline.map_or(avail.len(), |i| i + 1);
        total += used;
        r.consume(used);
        if newline.is_some() {
            return Ok(Some((total, too_long)));
        }
    }
}
