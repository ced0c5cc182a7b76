//! Kernel symbols from `/proc/kallsyms` text, with perf 6.1's rules for which lines count
//! and where each symbol ends, and perf's decision whether a recording may use them.
//!
//! What it does: [`Kallsyms::parse`] reads kallsyms text (`ADDR TYPE NAME[\t[module]]`)
//! into a sorted table and answers [`Kallsyms::lookup`] with the name and offset perf
//! prints. [`KernelFinder::for_recording`] picks the kallsyms file perf would use for a
//! recording's `[kernel.kallsyms]` build id: the running kernel's when the build ids match,
//! otherwise a copy in perf's build-id cache, otherwise none ([`Reason::BuildIdMismatch`],
//! and perf then prints bare addresses).
//!
//! What it does not: it does not read vmlinux or `/proc/kcore` (perf prefers a vmlinux with
//! the right build id when it finds one, and on a host with a readable `/proc/kcore` it
//! clips symbol ends at kcore segment ends), and it does not read `.ko` files for modules.
//! It knows nothing of the recording's maps: the caller decides whether an address is in
//! the kernel map at all, and whether the recording has a map for a module (see
//! [`KernelHit::module`]).
//!
//! perf's rules, as implemented here (tools/perf/util/symbol.c and tools/lib/symbol/kallsyms.c):
//! - a line is `HEX SP TYPE SP NAME`; a line that does not start that way is skipped;
//! - only types `T W D B` (either case) are kept, and names starting with `$`
//!   (ARM mapping symbols) are dropped;
//! - symbols are sorted by address, keeping file order among equal addresses; each
//!   symbol ends where the next one starts, except that the last symbol before a change
//!   between kernel and module (any `[` in the line's name) ends at the next 4 KiB
//!   boundary after `start + 4096`, and the very last one at `roundup(start, 4096) + 4096`;
//! - of several symbols at one address, only one survives, chosen in order: non-zero
//!   length, not weak (`W`), global (upper case type), fewer leading underscores, longer
//!   name, not a `SyS`/`compat_SyS` alias, and then the first one. Since ends are computed
//!   first, every duplicate but the last in file order has zero length, so in practice
//!   the last one wins;
//! - `__entry_SYSCALL_64_trampoline` symbols are dropped (x86-64);
//! - an address matches a symbol when `start <= addr < end`.
//!
//! ```no_run
//! use symbols::{Kallsyms, KernelFinder};
//!
//! let recorded_build_id: Option<&[u8]> = None; // from the perf.data build-id table
//! match KernelFinder::default().for_recording(recorded_build_id, None) {
//!     Ok(kallsyms) => match kallsyms.lookup(0xffffffff816df592) {
//!         Ok(hit) => println!("{}+{:#x} ({})", hit.name, hit.offset, hit.dso()),
//!         Err(reason) => println!("[unknown]: {reason}"),
//!     },
//!     Err(reason) => println!("no kernel symbols: {reason}"),
//! }
//! ```

use std::path::{Path, PathBuf};

use crate::elf::hex;
use crate::{Error, Reason};

/// perf's `KSYM_NAME_LEN` in 6.1: longer names are not kernel symbols.
const MAX_NAME: usize = 512;

/// kallsyms files are a few MiB (10 MiB with every module); refuse more than this.
const MAX_FILE: u64 = 256 << 20;

/// The names perf records as the kernel's reference symbol (in the kernel MMAP record's
/// file name `[kernel.kallsyms]_text`, with its address as `pgoff`).
const REF_RELOC_NAMES: [&str; 2] = ["_text", "_stext"];

/// What the kernel MMAP record says about where the kernel was when recording: perf uses
/// it to shift kallsyms taken at another boot (another KASLR offset) of the same kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefReloc<'a> {
    /// The part of the kernel MMAP record's file name after `[kernel.kallsyms]`
    /// (`_text` or `_stext`).
    pub name: &'a str,
    /// The record's `pgoff`: that symbol's address in the recorded kernel.
    pub addr: u64,
}

#[derive(Debug, Clone)]
struct KSym {
    start: u64,
    end: u64,
    /// Where the name starts in `Kallsyms::names`.
    name_at: u32,
    /// The name's length (names are at most [`MAX_NAME`] bytes).
    name_len: u16,
    /// Index into `Kallsyms::modules` for symbols of a module, [`NO_MODULE`]
    /// for the kernel image's (24 bytes a symbol, not 32: a kernel has
    /// ~120k of them).
    module: u16,
}

const NO_MODULE: u16 = u16::MAX;

impl KSym {
    fn module(&self) -> Option<u16> {
        (self.module != NO_MODULE).then_some(self.module)
    }
}

/// A symbol table parsed from kallsyms text. See the module docs for perf's rules.
#[derive(Debug, Clone, Default)]
pub struct Kallsyms {
    syms: Vec<KSym>,
    names: String,
    modules: Vec<String>,
    skipped: usize,
    restricted: bool,
    /// First address of each of [`REF_RELOC_NAMES`] with a function type, as perf's
    /// `kallsyms__get_function_start` finds it.
    ref_addrs: [Option<u64>; 2],
    source: Option<PathBuf>,
}

/// The kernel symbol covering an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelHit<'a> {
    pub name: &'a str,
    /// Bytes from the symbol's start to the address.
    pub offset: u64,
    /// The symbol's size: up to the next symbol, as perf fixes up kallsyms ends.
    pub size: u64,
    /// The module as kallsyms and perf name it, brackets included (`[ext4]`); `None` for
    /// the kernel image. perf keeps a module's kallsyms symbols only when the recording
    /// has a map for that module (from `/proc/modules` at record time), so pseudo-modules
    /// such as `[__builtin__ftrace]` or `[bpf]` resolve to nothing in perf: the caller
    /// must check.
    pub module: Option<&'a str>,
}

impl KernelHit<'_> {
    /// The dso name perf prints for the hit: `[kernel.kallsyms]` or the module's `[name]`.
    pub fn dso(&self) -> &str {
        self.module.unwrap_or("[kernel.kallsyms]")
    }
}

/// One parsed line before the table is fixed up.
struct Raw {
    start: u64,
    name: (u32, u32),
    module: Option<u32>,
    /// perf decides kernel/module boundaries by any `[` in the name it read (which
    /// includes the `\t[module]` part).
    bracket: bool,
    weak: bool,
    global: bool,
}

impl Kallsyms {
    /// Parses kallsyms text. Malformed lines are skipped and counted
    /// ([`Kallsyms::skipped_lines`]); never fails. A table whose every address is zero
    /// (`kptr_restrict`) is kept but answers [`Reason::KernelAddressesHidden`].
    pub fn parse(text: &str) -> Kallsyms {
        let mut k = Kallsyms::default();
        // Names are about half of the text; reserving that once (and
        // shrinking after) avoids growing by doubling to twice the size.
        k.names.reserve(text.len() * 5 / 8);
        let mut raw: Vec<Raw> = Vec::new();
        let mut any_line = false;
        let mut any_nonzero = false;
        let mut module_ids = std::collections::HashMap::new();
        let bytes = text.as_bytes();
        let mut pos = 0;
        while pos < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i);
            // ('\n' is one byte of its own in UTF-8: both ends are boundaries.)
            let line = &text[pos..end];
            pos = end + 1;
            if line.is_empty() {
                continue;
            }
            let Some((start, ty, full)) = split_line(line) else {
                k.skipped += 1;
                continue;
            };
            any_line = true;
            any_nonzero |= start != 0;
            if matches!(ty.to_ascii_uppercase(), b'T' | b'W' | b'A') {
                if let Some(i) = REF_RELOC_NAMES.iter().position(|n| *n == full) {
                    k.ref_addrs[i].get_or_insert(start);
                }
            }
            if !matches!(ty.to_ascii_uppercase(), b'T' | b'W' | b'D' | b'B')
                || full.starts_with('$')
            {
                continue;
            }
            let (name, module) = match memchr::memchr(b'\t', full.as_bytes()) {
                Some(i) => (&full[..i], Some(&full[i + 1..])),
                None => (full, None),
            };
            // Offsets into the name arena are u32: text past 4 GiB of names is refused
            // line by line rather than wrapped (load() bounds files far below that).
            if k.names.len() + name.len() > u32::MAX as usize
                || k.modules.len() >= NO_MODULE as usize
            {
                k.skipped += 1;
                continue;
            }
            let module = module.map(|m| k.intern_module(m, &mut module_ids));
            let name = k.push_name(name);
            raw.push(Raw {
                start,
                name,
                module,
                bracket: memchr::memchr(b'[', full.as_bytes()).is_some(),
                weak: ty == b'W',
                global: ty.is_ascii_uppercase(),
            });
        }
        k.restricted = any_line && !any_nonzero;
        if k.skipped > 0 {
            log::debug!("kallsyms: skipped {} malformed lines", k.skipped);
        }
        k.build(raw);
        k
    }

    /// Reads and parses a kallsyms file (`/proc/kallsyms` or a build-id cache copy).
    pub fn load(path: impl AsRef<Path>) -> Result<Kallsyms, Error> {
        let path = path.as_ref();
        let text = read_bounded(path, MAX_FILE)?;
        let mut k = Kallsyms::parse(&String::from_utf8_lossy(&text));
        k.source = Some(path.to_owned());
        Ok(k)
    }

    /// The file this table was loaded from, if any.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// Number of symbols kept.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// Lines that were not `HEX TYPE NAME`.
    pub fn skipped_lines(&self) -> usize {
        self.skipped
    }

    /// Whether every address was zero: the kernel hid them (`kptr_restrict`, or a reader
    /// without `CAP_SYSLOG`).
    pub fn is_restricted(&self) -> bool {
        self.restricted
    }

    /// Shifts the kernel image's symbols (not modules') so that `reloc.name` lands at
    /// `reloc.addr`, as perf does when the kallsyms come from another boot of the
    /// recorded kernel. Fails with [`Reason::NoSymbol`] when the reference symbol is not
    /// in the text, as perf then refuses the file.
    pub fn relocate(&mut self, reloc: RefReloc<'_>) -> Result<(), Reason> {
        let have = REF_RELOC_NAMES
            .iter()
            .position(|n| *n == reloc.name)
            .and_then(|i| self.ref_addrs[i])
            .ok_or(Reason::NoSymbol)?;
        let delta = have.wrapping_sub(reloc.addr);
        if delta == 0 {
            return Ok(());
        }
        for s in self.syms.iter_mut().filter(|s| s.module().is_none()) {
            s.start = s.start.wrapping_sub(delta);
            s.end = s.end.wrapping_sub(delta);
        }
        // Modules were not moved, so the kernel symbols may now sort differently.
        self.syms.sort_by_key(|s| s.start);
        Ok(())
    }

    /// The symbol covering `addr` (a kernel address exactly as sampled: the kernel map is
    /// an identity map).
    pub fn lookup(&self, addr: u64) -> Result<KernelHit<'_>, Reason> {
        if self.restricted {
            return Err(Reason::KernelAddressesHidden);
        }
        let idx = self.syms.partition_point(|s| s.start <= addr);
        let sym = idx
            .checked_sub(1)
            .map(|i| &self.syms[i])
            .ok_or(Reason::NoSymbol)?;
        // perf's symbols__find: [start, end), or exactly start for an empty symbol.
        if addr >= sym.end && !(addr == sym.start && sym.end == sym.start) {
            return Err(Reason::NoSymbol);
        }
        Ok(KernelHit {
            name: self.name(sym),
            offset: addr - sym.start,
            size: sym.end.saturating_sub(sym.start),
            module: sym.module().map(|m| self.modules[m as usize].as_str()),
        })
    }

    /// Where the kernel image's own symbols (not modules') start and end:
    /// perf fits the kernel map to them after loading kallsyms.
    pub fn kernel_extent(&self) -> Option<(u64, u64)> {
        let mut core = self.syms.iter().filter(|s| s.module().is_none());
        let first = core.next()?;
        let end = core.map(|s| s.end).fold(first.end, u64::max);
        Some((first.start, end))
    }

    /// The symbols as `(start, end, name, module)`, sorted by start.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64, &str, Option<&str>)> + '_ {
        self.syms.iter().map(|s| {
            (
                s.start,
                s.end,
                self.name(s),
                s.module().map(|m| self.modules[m as usize].as_str()),
            )
        })
    }

    fn push_name(&mut self, name: &str) -> (u32, u32) {
        // parse() checked that the arena stays below u32::MAX bytes.
        let a = self.names.len() as u32;
        self.names.push_str(name);
        (a, self.names.len() as u32)
    }

    fn intern_module(&mut self, m: &str, ids: &mut std::collections::HashMap<String, u32>) -> u32 {
        if let Some(&i) = ids.get(m) {
            return i;
        }
        let i = self.modules.len() as u32;
        self.modules.push(m.to_owned());
        ids.insert(m.to_owned(), i);
        i
    }

    fn name(&self, s: &KSym) -> &str {
        let a = s.name_at as usize;
        &self.names[a..a + s.name_len as usize]
    }

    fn name_of(&self, r: &Raw) -> &str {
        &self.names[r.name.0 as usize..r.name.1 as usize]
    }

    fn build(&mut self, mut raw: Vec<Raw>) {
        // Stable, as perf's rb-tree keeps insertion order among equal addresses.
        raw.sort_by_key(|r| r.start);
        let mut ends: Vec<u64> = raw.iter().map(|r| r.start).collect();
        // symbols__fixup_end(is_kallsyms = true): every kallsyms symbol starts empty.
        for i in 1..raw.len() {
            let (prev, curr) = (&raw[i - 1], &raw[i]);
            ends[i - 1] = if prev.bracket != curr.bracket {
                round_up_page(prev.start.wrapping_add(4096))
            } else {
                curr.start
            };
        }
        if let Some(last) = raw.last() {
            let i = raw.len() - 1;
            ends[i] = round_up_page(last.start).wrapping_add(4096);
        }
        // symbols__fixup_duplicate.
        let mut out: Vec<KSym> = Vec::with_capacity(raw.len());
        let mut cur: Option<usize> = None;
        for i in 0..raw.len() {
            cur = match cur {
                Some(c) if raw[c].start == raw[i].start => {
                    if self.a_wins(&raw[c], ends[c], &raw[i], ends[i]) {
                        Some(c)
                    } else {
                        Some(i)
                    }
                }
                Some(c) => {
                    self.keep(&mut out, &raw[c], ends[c]);
                    Some(i)
                }
                None => Some(i),
            };
        }
        if let Some(c) = cur {
            self.keep(&mut out, &raw[c], ends[c]);
        }
        self.syms = out;
        self.names.shrink_to_fit();
    }

    fn keep(&self, out: &mut Vec<KSym>, r: &Raw, end: u64) {
        // maps__split_kallsyms drops these on x86-64: the entry trampoline maps refer to
        // the kernel text's own symbols instead.
        if r.module.is_none() && self.name_of(r) == "__entry_SYSCALL_64_trampoline" {
            return;
        }
        out.push(KSym {
            start: r.start,
            end,
            name_at: r.name.0,
            name_len: (r.name.1 - r.name.0) as u16,
            module: r.module.map_or(NO_MODULE, |m| m as u16),
        });
    }

    /// perf's choose_best_symbol: true when `a` is kept over `b` (both at one address).
    fn a_wins(&self, a: &Raw, a_end: u64, b: &Raw, b_end: u64) -> bool {
        let (la, lb) = (a_end.wrapping_sub(a.start), b_end.wrapping_sub(b.start));
        if lb == 0 && la > 0 {
            return true;
        }
        if la == 0 && lb > 0 {
            return false;
        }
        if a.weak != b.weak {
            return b.weak;
        }
        if a.global != b.global {
            return a.global;
        }
        // The full name as perf holds it at this point still carries "\t[module]".
        let (na, nb) = (self.full_len(a), self.full_len(b));
        let (ua, ub) = (
            self.name_of(a).bytes().take_while(|&c| c == b'_').count(),
            self.name_of(b).bytes().take_while(|&c| c == b'_').count(),
        );
        if ua != ub {
            return ub > ua;
        }
        if na != nb {
            return na > nb;
        }
        let an = self.name_of(a);
        !(an.starts_with("SyS") || an.starts_with("compat_SyS"))
    }

    fn full_len(&self, r: &Raw) -> usize {
        let n = (r.name.1 - r.name.0) as usize;
        match r.module {
            Some(m) => n + 1 + self.modules[m as usize].len(),
            None => n,
        }
    }
}

/// perf's `roundup(x, 4096)`, wrapping as its C arithmetic does.
fn round_up_page(x: u64) -> u64 {
    x.wrapping_add(4095) & !4095
}

/// `HEX SP TYPE SP NAME` as perf's kallsyms__parse reads it: hex digits without a prefix
/// (at most 16, where perf would silently wrap), one space, one type byte, one space, and
/// the rest of the line (at most `KSYM_NAME_LEN` bytes) as the name.
fn split_line(line: &str) -> Option<(u64, u8, &str)> {
    let mut start = 0u64;
    let mut digits = 0;
    for &b in line.as_bytes() {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => break,
        };
        if digits == 16 {
            return None;
        }
        start = start << 4 | u64::from(d);
        digits += 1;
    }
    if digits == 0 {
        return None;
    }
    let rest = &line.as_bytes()[digits..];
    if rest.len() < 3 || rest[0] != b' ' || rest[2] != b' ' {
        return None;
    }
    let ty = rest[1];
    if !ty.is_ascii() {
        return None;
    }
    let name = &line[digits + 3..];
    // The name, a tab and a bracketed module name (at most 56 bytes in the kernel).
    if name.len() > MAX_NAME + 1 + 64 {
        return None;
    }
    Some((start, ty, name.strip_suffix('\r').unwrap_or(name)))
}

fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let file = crate::open_regular(path).map_err(io)?;
    // A cached copy's size is known: read into one buffer of that size
    // rather than a growing one. /proc files report size 0, so the bound is
    // on what is read, not on metadata.
    let size = file.metadata().map_or(0, |m| m.len()).min(limit);
    let mut buf = Vec::with_capacity(size as usize + 1);
    file.take(limit + 1).read_to_end(&mut buf).map_err(io)?;
    if buf.len() as u64 > limit {
        return Err(io(std::io::Error::other(format!(
            "larger than {limit} bytes"
        ))));
    }
    Ok(buf)
}

/// The GNU build id in an ELF notes blob such as `/sys/kernel/notes`: the first
/// `NT_GNU_BUILD_ID` note named `GNU`, as perf's `sysfs__read_build_id` finds it.
pub fn build_id_from_notes(notes: &[u8]) -> Option<Vec<u8>> {
    const NT_GNU_BUILD_ID: u32 = 3;
    let word = |at: usize| -> Option<u32> {
        let b = notes.get(at..at.checked_add(4)?)?;
        Some(u32::from_ne_bytes(b.try_into().ok()?))
    };
    let align4 = |n: usize| n.checked_add(3).map(|v| v & !3);
    let mut at = 0usize;
    while at + 12 <= notes.len() {
        let namesz = word(at)? as usize;
        let descsz = word(at + 4)? as usize;
        let ty = word(at + 8)?;
        let name_at = at + 12;
        let desc_at = name_at.checked_add(align4(namesz)?)?;
        let next = desc_at.checked_add(align4(descsz)?)?;
        if next > notes.len() {
            return None;
        }
        let name = &notes[name_at..name_at + namesz];
        if ty == NT_GNU_BUILD_ID && name == b"GNU\0" {
            return Some(notes[desc_at..desc_at + descsz].to_vec());
        }
        at = next;
    }
    None
}

/// Where perf looks for the kernel's symbols when it has no vmlinux.
#[derive(Debug, Clone)]
pub struct KernelFinder {
    /// The running kernel's symbols (`/proc/kallsyms`).
    pub proc_kallsyms: PathBuf,
    /// The running kernel's notes, holding its build id (`/sys/kernel/notes`).
    pub kernel_notes: PathBuf,
    /// perf build-id caches (`~/.debug`): `ROOT/[kernel.kallsyms]/<build id>/kallsyms`.
    pub buildid_caches: Vec<PathBuf>,
}

impl Default for KernelFinder {
    /// The system's places and `$HOME/.debug`.
    fn default() -> Self {
        let caches: Vec<PathBuf> = crate::buildid_dir().into_iter().collect();
        // With --symfs, the running kernel is the one under it (as perf).
        let under = |p: &str| match crate::symfs() {
            Some(root) => root.join(p.trim_start_matches('/')),
            None => PathBuf::from(p),
        };
        KernelFinder {
            proc_kallsyms: under("/proc/kallsyms"),
            kernel_notes: under("/sys/kernel/notes"),
            buildid_caches: caches,
        }
    }
}

impl KernelFinder {
    /// The running kernel's build id, if its notes can be read.
    pub fn running_build_id(&self) -> Option<Vec<u8>> {
        let notes = read_bounded(&self.kernel_notes, 1 << 20).ok()?;
        build_id_from_notes(&notes)
    }

    /// The kallsyms perf would use for a recording whose `[kernel.kallsyms]` has
    /// `build_id` (from the perf.data build-id table), shifted by `reloc` (from the
    /// kernel MMAP record) when given:
    /// - no build id recorded: the running kernel's, as perf's last resort;
    /// - the running kernel's build id: the running kernel's;
    /// - otherwise the build-id cache's copy, `ROOT/[kernel.kallsyms]/<id>/kallsyms`
    ///   (or the same file through `ROOT/.build-id/xx/rest/kallsyms`);
    /// - otherwise [`Reason::BuildIdMismatch`] (perf prints addresses), or
    ///   [`Reason::NoSuchFile`] when the running kernel's build id cannot be read.
    ///
    /// A file whose addresses are all zero gives [`Reason::KernelAddressesHidden`].
    pub fn for_recording(
        &self,
        build_id: Option<&[u8]>,
        reloc: Option<RefReloc<'_>>,
    ) -> Result<Kallsyms, Reason> {
        let k = self.load_for_recording(build_id)?;
        Self::relocate_for_recording(k, reloc)
    }

    /// The first half of [`Self::for_recording`]: the symbols for a kernel
    /// build id, before relocation (reading `/proc/kallsyms` is slow, so
    /// callers may start this early, on another thread).
    pub fn load_for_recording(&self, build_id: Option<&[u8]>) -> Result<Kallsyms, Reason> {
        // --kallsyms FILE: that file, whatever the recording names.
        if let Some(f) = crate::kallsyms_file() {
            return Kallsyms::load(f).map_err(|e| e.reason());
        }
        let running = self.running_build_id();
        let path = match build_id {
            None => self.proc_kallsyms.clone(),
            // The running kernel's: the copy perf record left in the
            // build-id cache is the symbol table as it was then (modules
            // loaded since do not show), and a plain file reads in a
            // fraction of the time /proc/kallsyms takes to print.
            Some(id) if running.as_deref() == Some(id) => self
                .cached_kallsyms(id)
                .unwrap_or_else(|| self.proc_kallsyms.clone()),
            Some(id) => match self.cached_kallsyms(id) {
                Some(p) => p,
                None if running.is_some() => {
                    log::info!(
                        "kernel build id {} is not the running kernel's and is not in the \
                         build-id cache",
                        hex(id)
                    );
                    return Err(Reason::BuildIdMismatch);
                }
                None => return Err(Reason::NoSuchFile),
            },
        };
        let t0 = std::time::Instant::now();
        let k = Kallsyms::load(&path).map_err(|e| {
            log::warn!("{e}");
            e.reason()
        })?;
        log::debug!(
            "{} kernel symbols from {} in {:?}",
            k.len(),
            path.display(),
            t0.elapsed()
        );
        if k.is_restricted() {
            log::warn!(
                "{}: all addresses are zero (kptr_restrict); kernel symbols unavailable",
                path.display()
            );
            return Err(Reason::KernelAddressesHidden);
        }
        Ok(k)
    }

    /// The second half of [`Self::for_recording`]: KASLR relocation by the
    /// kernel MMAP record's reference symbol.
    pub fn relocate_for_recording(
        mut k: Kallsyms,
        reloc: Option<RefReloc<'_>>,
    ) -> Result<Kallsyms, Reason> {
        if let Some(r) = reloc {
            k.relocate(r).inspect_err(|_| {
                log::warn!("kernel symbols: no {} symbol to relocate by", r.name)
            })?;
        }
        Ok(k)
    }

    fn cached_kallsyms(&self, build_id: &[u8]) -> Option<PathBuf> {
        let id = crate::elf::id_hex(build_id)?;
        self.buildid_caches
            .iter()
            .flat_map(|r| {
                [
                    r.join("[kernel.kallsyms]").join(&id).join("kallsyms"),
                    crate::elf::build_id_dir(r, &id).join("kallsyms"),
                ]
            })
            .find(|p| p.is_file())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(k: &Kallsyms) -> Vec<(u64, u64, String)> {
        k.iter().map(|(s, e, n, _)| (s, e, n.to_owned())).collect()
    }

    #[test]
    fn ends_reach_the_next_symbol_and_the_last_one_a_page() {
        let k =
            Kallsyms::parse("ffffffff81000100 T b\nffffffff81000000 T a\nffffffff81000200 t c\n");
        assert_eq!(
            names(&k),
            vec![
                (0xffffffff81000000, 0xffffffff81000100, "a".into()),
                (0xffffffff81000100, 0xffffffff81000200, "b".into()),
                (0xffffffff81000200, 0xffffffff81002000, "c".into()),
            ]
        );
        let hit = k.lookup(0xffffffff81000150).unwrap();
        assert_eq!((hit.name, hit.offset, hit.module), ("b", 0x50, None));
        assert_eq!(hit.dso(), "[kernel.kallsyms]");
        assert_eq!(k.lookup(0xffffffff80ffffff), Err(Reason::NoSymbol));
        assert_eq!(k.lookup(0xffffffff81002000), Err(Reason::NoSymbol));
        assert!(k.lookup(0xffffffff81001fff).is_ok());
    }

    #[test]
    fn types_and_mapping_symbols_are_filtered() {
        let k = Kallsyms::parse(
            "1000 T t1\n1100 r rodata\n1200 D data\n1300 b bss\n1400 A abs\n1500 W weak\n\
             1600 t $x\n1700 U undef\n1800 w weak2\n",
        );
        let n: Vec<_> = k.iter().map(|s| s.2).collect();
        assert_eq!(n, ["t1", "data", "bss", "weak", "weak2"]);
        // The rodata symbol does not cut t1 short.
        assert_eq!(k.lookup(0x11ff).unwrap().name, "t1");
    }

    #[test]
    fn modules_keep_their_bracketed_name_and_do_not_fill_the_gap() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T _text\nffffffff81000800 T last_kernel\n\
             ffffffffc0200000 t mod_a\t[ext4]\nffffffffc0200040 T mod_b\t[ext4]\n\
             ffffffffc0300000 t other\t[xfs]\n",
        );
        let last = k.lookup(0xffffffff81001fff).unwrap();
        assert_eq!(last.name, "last_kernel");
        // roundup(start + 4096, 4096): not all the way to the module.
        assert_eq!(k.lookup(0xffffffff81002000), Err(Reason::NoSymbol));
        let m = k.lookup(0xffffffffc0200044).unwrap();
        assert_eq!((m.name, m.offset, m.module), ("mod_b", 4, Some("[ext4]")));
        assert_eq!(m.dso(), "[ext4]");
        // Between two modules perf does fill the gap (both names have a '[').
        assert_eq!(k.lookup(0xffffffffc02fffff).unwrap().name, "mod_b");
        assert_eq!(k.lookup(0xffffffffc0300010).unwrap().module, Some("[xfs]"));
    }

    #[test]
    fn duplicates_keep_the_last_in_file_order() {
        // Ends are computed before duplicates go, so all but the last have length 0.
        let k = Kallsyms::parse(
            "ffffffff81000000 T srso_alias_untrain_ret\nffffffff81000000 T _stext\n\
             ffffffff81000000 T _text\nffffffff81000000 T __pi__text\n\
             ffffffff81000010 T __entry_text_start\n",
        );
        assert_eq!(k.len(), 2);
        assert_eq!(k.lookup(0xffffffff81000004).unwrap().name, "__pi__text");
    }

    #[test]
    fn duplicate_tie_breaks_follow_perf() {
        // At a kernel/module boundary both duplicates get a length (the first one up to
        // the next page), so the later rules decide: global beats local.
        let t = Kallsyms::parse("1000 t local_mod\t[m]\n1000 T global_kernel\n2000 T foo\n");
        assert_eq!(t.lookup(0x1000).unwrap().name, "global_kernel");
        let t = Kallsyms::parse("1000 T global_kernel\n1000 t local_mod\t[m]\n3000 T foo\n");
        assert_eq!(t.lookup(0x1000).unwrap().name, "global_kernel");
        // Otherwise the last one is the only one with a length, weak or not.
        let t = Kallsyms::parse("1000 T strong\n1000 W weak_one\n2000 T foo\n");
        assert_eq!(t.lookup(0x1000).unwrap().name, "weak_one");
    }

    #[test]
    fn malformed_lines_are_skipped_and_counted() {
        let text = "zzzz T bad\nffffffff81000000 T good\n  ffff T lead\nffffffff81000100T glued\n\
                    ffffffff81000200 T\n11112222333344445555 T too_long_hex\n\
                    ffffffff81000300 T after\n";
        let k = Kallsyms::parse(text);
        assert_eq!(k.skipped_lines(), 5);
        let n: Vec<_> = k.iter().map(|s| s.2).collect();
        assert_eq!(n, ["good", "after"]);
    }

    #[test]
    fn empty_and_blank_text() {
        for t in ["", "\n\n", "garbage"] {
            let k = Kallsyms::parse(t);
            assert!(k.is_empty());
            assert!(!k.is_restricted());
            assert_eq!(k.lookup(0xffffffff81000000), Err(Reason::NoSymbol));
        }
    }

    #[test]
    fn all_zero_addresses_mean_restricted() {
        let k = Kallsyms::parse("0000000000000000 T _text\n0000000000000000 t foo\n");
        assert!(k.is_restricted());
        assert_eq!(k.lookup(0), Err(Reason::KernelAddressesHidden));
        // One real address is enough for a usable table (per-cpu symbols sit at zero).
        let k = Kallsyms::parse("0000000000000000 D __per_cpu_start\nffffffff81000000 T _text\n");
        assert!(!k.is_restricted());
    }

    #[test]
    fn top_of_address_space_does_not_overflow() {
        let k = Kallsyms::parse("ffffffffffffff00 T top\nfffffffffffffff0 T top2\n");
        assert_eq!(k.lookup(0xffffffffffffff05).unwrap().offset, 5);
        // The last symbol's end wraps past zero in perf, which then never finds it.
        assert_eq!(k.lookup(0xfffffffffffffff0), Err(Reason::NoSymbol));
    }

    #[test]
    fn entry_trampoline_is_dropped() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T a\nffffffff81000100 T __entry_SYSCALL_64_trampoline\n\
             ffffffff81000200 T b\n",
        );
        assert_eq!(k.lookup(0xffffffff81000000).unwrap().name, "a");
        // perf drops it after fixing ends, so the range is nobody's.
        assert_eq!(k.lookup(0xffffffff81000150), Err(Reason::NoSymbol));
    }

    #[test]
    fn relocation_shifts_kernel_symbols_only() {
        let mut k = Kallsyms::parse(
            "ffffffff82000000 T _text\nffffffff82000100 T f\nffffffffc0000000 t m\t[mod]\n",
        );
        k.relocate(RefReloc {
            name: "_text",
            addr: 0xffffffff81000000,
        })
        .unwrap();
        assert_eq!(k.lookup(0xffffffff81000104).unwrap().name, "f");
        assert_eq!(k.lookup(0xffffffffc0000004).unwrap().name, "m");
        assert_eq!(
            k.relocate(RefReloc {
                name: "nope",
                addr: 0
            }),
            Err(Reason::NoSymbol)
        );
    }

    #[test]
    fn notes_give_the_gnu_build_id() {
        let mut notes = Vec::new();
        // A non-GNU note first, then the build id.
        for (name, ty, desc) in [
            (&b"Linux\0"[..], 6u32, &[1u8, 2, 3, 4][..]),
            (&b"GNU\0"[..], 3, &[0xaa; 20][..]),
        ] {
            notes.extend((name.len() as u32).to_ne_bytes());
            notes.extend((desc.len() as u32).to_ne_bytes());
            notes.extend(ty.to_ne_bytes());
            notes.extend(name);
            notes.resize(notes.len().next_multiple_of(4), 0);
            notes.extend(desc);
            notes.resize(notes.len().next_multiple_of(4), 0);
        }
        assert_eq!(build_id_from_notes(&notes), Some(vec![0xaa; 20]));
        assert_eq!(build_id_from_notes(&notes[..30]), None);
        // A size that points past the end must not be trusted.
        let mut bad = notes.clone();
        bad[0..4].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert_eq!(build_id_from_notes(&bad), None);
    }

    fn finder(dir: &Path, notes_id: &[u8]) -> KernelFinder {
        let mut notes = Vec::new();
        notes.extend(4u32.to_ne_bytes());
        notes.extend((notes_id.len() as u32).to_ne_bytes());
        notes.extend(3u32.to_ne_bytes());
        notes.extend(b"GNU\0");
        notes.extend(notes_id);
        std::fs::write(dir.join("notes"), notes).unwrap();
        std::fs::write(dir.join("kallsyms"), "ffffffff81000000 T running_kernel\n").unwrap();
        KernelFinder {
            proc_kallsyms: dir.join("kallsyms"),
            kernel_notes: dir.join("notes"),
            buildid_caches: vec![dir.join("cache")],
        }
    }

    #[test]
    fn for_recording_decides_like_perf() {
        let dir = tempfile::tempdir().unwrap();
        let f = finder(dir.path(), &[1; 20]);
        let name = |r: Result<Kallsyms, Reason>| {
            r.map(|k| k.lookup(0xffffffff81000000).unwrap().name.to_owned())
        };
        assert_eq!(
            name(f.for_recording(Some(&[1; 20]), None)).unwrap(),
            "running_kernel"
        );
        assert_eq!(name(f.for_recording(None, None)).unwrap(), "running_kernel");
        assert_eq!(
            name(f.for_recording(Some(&[2; 20]), None)),
            Err(Reason::BuildIdMismatch)
        );
        let cached = dir
            .path()
            .join("cache/[kernel.kallsyms]")
            .join(hex(&[2; 20]));
        std::fs::create_dir_all(&cached).unwrap();
        std::fs::write(
            cached.join("kallsyms"),
            "ffffffff81000000 T cached_kernel\n",
        )
        .unwrap();
        assert_eq!(
            name(f.for_recording(Some(&[2; 20]), None)).unwrap(),
            "cached_kernel"
        );
        // kptr_restrict on the running kernel.
        std::fs::write(
            dir.path().join("kallsyms"),
            "0000000000000000 T running_kernel\n",
        )
        .unwrap();
        assert_eq!(
            name(f.for_recording(Some(&[1; 20]), None)),
            Err(Reason::KernelAddressesHidden)
        );
    }
}
