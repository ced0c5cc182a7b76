//! perf script's `brstackinsn`: the instructions between a sample's
//! branch-stack entries, read from the binaries and decoded, walked as
//! perf 6.1's `perf_sample__fprintf_brstackinsn` walks them.
//!
//! One walk ([`walk`]) serves two uses: before pass two it runs over every
//! kept sample with a [`Planner`], which reads each distinct run of code
//! once (per start location and length), decodes it and interns a
//! location for each instruction, so pass two names them with the rest;
//! when printing it runs again over the finished [`BranchCode`], and a
//! [`Visitor`] (the renderer) prints what it meets. Cost grows with the
//! distinct runs of code, not with the samples.

use std::collections::HashMap;

use crate::collect::{Interner, Loc, Origin, NO_DSO};
use crate::machine::Dso;
use crate::session::KeptBranch;
use crate::symbolize::SymbolizeOptions;

/// perf's MAXBB: the most bytes of one block it reads.
const MAXBB: u64 = 16384;
/// perf's MAXINSN: the longest x86 instruction, read past a block's end.
const MAXINSN: u64 = 15;
/// The final block, when the last branch's target lies after the sample:
/// perf scans this many bytes for the next branch.
const SCAN: u64 = 128;

/// One decoded instruction of a run.
#[derive(Debug, Clone, Copy)]
pub struct Insn {
    /// Its address in the process.
    pub ip: u64,
    /// Its location (for its symbol and source line).
    pub loc: u32,
    /// Its length; 0 where the bytes hold no valid instruction (perf's
    /// `<bad>`), which ends the run.
    pub len: u8,
    /// Whether it transfers control (perf's `arch_is_branch`).
    pub branch: bool,
    bytes: [u8; 15],
}

impl Insn {
    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// One read of code: the instructions decoded from its start, one after
/// the other, until the bytes read end or one is not valid. Its
/// instructions are those of [`BranchCode`], decoded once per address.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    insns: &'a HashMap<Loc, Decoded>,
    /// Its start, located.
    base: Loc,
    /// The bytes read (perf's `len`).
    pub len: u64,
}

impl Run<'_> {
    /// The instruction at offset `off` from the start (one the walk
    /// reaches from there), cut to a `<bad>` one where it runs past the
    /// bytes read, as decoding only those gives.
    fn at(&self, off: u64) -> Option<Insn> {
        if off >= self.len {
            return None;
        }
        let here = located(&self.base, off);
        let d = self.insns.get(&here)?;
        let fits = off.saturating_add(u64::from(d.len)) <= self.len;
        Some(if fits {
            Insn {
                ip: here.ip,
                loc: d.loc,
                len: d.len,
                branch: d.branch,
                bytes: d.bytes,
            }
        } else {
            Insn {
                ip: here.ip,
                loc: d.loc,
                len: 0,
                branch: false,
                bytes: [0; 15],
            }
        })
    }
}

/// The location `off` bytes after `base` (in its map).
fn located(base: &Loc, off: u64) -> Loc {
    Loc {
        ip: base.ip.wrapping_add(off),
        rel: base.rel.wrapping_add(off),
        origin: Origin::Exact,
        ..*base
    }
}

/// An instruction decoded at an address, with up to [`MAXINSN`] bytes.
#[derive(Debug, Clone, Copy)]
struct Decoded {
    loc: u32,
    /// 0: no valid instruction starts there.
    len: u8,
    branch: bool,
    bytes: [u8; 15],
}

/// Where the walk reads runs of code: a location and the bytes wanted.
pub trait Code {
    /// perf's `grab_bb` after its checks: the code at location `loc`
    /// (address `start`), `len` bytes (fewer at the file's end); None
    /// where there is none to read.
    fn run(&mut self, loc: u32, start: u64, len: u64) -> Option<Run<'_>>;
}

/// What the walk meets, in perf's printing order.
pub trait Visitor {
    /// perf's `ip__fprintf_sym`: the symbol line if `loc`'s symbol is not
    /// the one named last.
    fn sym(&mut self, loc: u32);
    /// An instruction inside a block (or the final one).
    fn insn(&mut self, insn: &Insn);
    /// An instruction that starts after the bytes read or is not valid:
    /// perf's `<bad>` at `ip`.
    fn bad(&mut self, ip: u64);
    /// The branch at the end of a block: `insn` None where its bytes do not
    /// decode; `entry` the branch-stack entry; `insns` the instructions of
    /// the block with it (0: the first branch, whose block is unknown).
    fn jump(&mut self, ip: u64, insn: Option<&Insn>, entry: &KeptBranch, insns: u32);
    /// The block's instructions did not end on its branch.
    fn mismatch(&mut self);
    /// The final block met a branch before the sample's address.
    fn not_reaching(&mut self);
}

/// A sample as the walk needs it.
#[derive(Debug, Clone, Copy)]
pub struct SampleCode<'a> {
    /// The sample's address and its location.
    pub ip: u64,
    pub ip_loc: u32,
    /// The branch stack, newest first.
    pub branches: &'a [KeptBranch],
}

fn kernel_ip(ip: u64) -> bool {
    // perf's machine__kernel_ip on x86-64: the kernel starts at 2^63.
    ip >= 1 << 63
}

/// perf's `grab_bb`: Err(()) for a block that passes between kernel and
/// user space (perf's -ENXIO), Ok(None) for no code.
fn grab<C: Code>(code: &mut C, loc: u32, start: u64, end: u64) -> Result<Option<Run<'_>>, ()> {
    if start == 0 || end == 0 {
        return Ok(None);
    }
    if kernel_ip(start) != kernel_ip(end) {
        return Err(());
    }
    let span = end.wrapping_sub(start);
    if span > MAXBB - MAXINSN {
        return Ok(None);
    }
    Ok(code.run(loc, start, span + MAXINSN).filter(|r| r.len > 0))
}

/// Walks sample `s`'s branch stack as perf prints it with `brstackinsn`,
/// at most `max_blocks` blocks (perf's `--max-blocks`, 0 for all).
pub fn walk<C: Code, V: Visitor>(s: &SampleCode<'_>, max_blocks: usize, code: &mut C, v: &mut V) {
    let e = s.branches;
    if e.is_empty() {
        return;
    }
    let mut nr = e.len();
    if max_blocks > 0 && nr > max_blocks + 1 {
        nr = max_blocks + 1;
    }
    // The first branch, of which the block before is unknown.
    let first = &e[nr - 1];
    if let Ok(Some(run)) = grab(code, first.from_loc, first.from, first.from) {
        v.sym(first.from_loc);
        v.jump(
            first.from,
            run.at(0).filter(|i| i.len > 0).as_ref(),
            first,
            0,
        );
    }
    // Every block between two branches, oldest first.
    let mut i = nr as isize - 2;
    while i >= 0 {
        let mut at = i as usize;
        let (start, start_loc) = (e[at + 1].to, e[at + 1].to_loc);
        let mut end = e[at].from;
        let mut run = grab(code, start_loc, start, end);
        if run.is_err() && at > 0 {
            // A transfer through the kernel the ring filtered out: the
            // block goes on to the next branch.
            at -= 1;
            i -= 1;
            end = e[at].from;
            run = grab(code, start_loc, start, end);
        }
        i -= 1;
        let Ok(Some(run)) = run else { continue };
        let mut n = 0u32;
        let mut off = 0u64;
        while off < run.len {
            let ip = start.wrapping_add(off);
            let Some(insn) = run.at(off) else {
                // (No instruction starts there: the previous one was cut.)
                v.bad(ip);
                break;
            };
            v.sym(insn.loc);
            if ip == end {
                n += 1;
                v.jump(ip, (insn.len > 0).then_some(&insn), &e[at], n);
                break;
            }
            if insn.len == 0 {
                v.bad(ip);
                break;
            }
            v.insn(&insn);
            n += 1;
            off += u64::from(insn.len);
        }
        // (Ending on the branch leaves `off` at the block's length.)
        if off != end.wrapping_sub(start) {
            v.mismatch();
        }
    }
    // On the last branch's source, the sample's instruction has not run;
    // an aborted transaction has no final block.
    if e[0].from == s.ip || e[0].flags & 8 != 0 {
        return;
    }
    let (start, start_loc) = (e[0].to, e[0].to_loc);
    let mut end = s.ip;
    if end < start {
        // A branch missing from the stack: scan on for the next one.
        end = start.wrapping_add(SCAN);
    }
    let run = grab(code, start_loc, start, end).ok().flatten();
    v.sym(start_loc);
    let Some(run) = run else {
        // At least the sample's own instruction.
        if let Ok(Some(run)) = grab(code, s.ip_loc, s.ip, s.ip) {
            match run.at(0).filter(|i| i.len > 0) {
                Some(insn) => v.insn(&insn),
                None => v.bad(s.ip),
            }
        }
        return;
    };
    let span = end.wrapping_sub(start);
    let mut off = 0u64;
    while off <= span {
        let ip = start.wrapping_add(off);
        let Some(insn) = run.at(off).filter(|i| i.len > 0) else {
            v.bad(ip);
            break;
        };
        v.insn(&insn);
        if insn.branch && ip != s.ip {
            v.not_reaching();
            break;
        }
        off += u64::from(insn.len);
    }
}

/// The runs of code the samples' walks read, for printing: per distinct
/// run its start and the bytes read, and each instruction decoded once
/// per address, however many runs pass it (runs that start or end apart
/// share their code: memory grows with the code read, not with the runs
/// times their lengths).
#[derive(Debug, Default)]
pub struct BranchCode {
    runs: HashMap<(u32, u64), Option<(Loc, u64)>>,
    insns: HashMap<Loc, Decoded>,
}

impl BranchCode {
    fn run(&self, loc: u32, len: u64) -> Option<Run<'_>> {
        let &(base, len) = self.runs.get(&(loc, len))?.as_ref()?;
        Some(Run {
            insns: &self.insns,
            base,
            len,
        })
    }

    /// Distinct runs and instructions held (debug figures).
    pub fn sizes(&self) -> (usize, usize) {
        (self.runs.len(), self.insns.len())
    }
}

impl Code for &BranchCode {
    fn run(&mut self, loc: u32, _start: u64, len: u64) -> Option<Run<'_>> {
        BranchCode::run(self, loc, len)
    }
}

/// Reads and decodes runs of code while the samples are walked once
/// before pass two, interning a location per instruction.
pub struct Planner<'a> {
    interner: &'a mut Interner,
    dsos: &'a [Dso],
    opts: &'a SymbolizeOptions,
    /// Per DSO: its binary, if it could be opened (and its bitness).
    bins: HashMap<u32, Option<(symbols::Binary, u32)>>,
    code: BranchCode,
}

impl<'a> Planner<'a> {
    pub fn new(interner: &'a mut Interner, dsos: &'a [Dso], opts: &'a SymbolizeOptions) -> Self {
        Planner {
            interner,
            dsos,
            opts,
            bins: HashMap::new(),
            code: BranchCode::default(),
        }
    }

    /// Walks sample `s`, reading what it needs.
    pub fn plan(&mut self, s: &SampleCode<'_>, max_blocks: usize) {
        walk(s, max_blocks, self, &mut NoVisitor);
    }

    /// The process address of location `loc` (a sample's own).
    pub fn ip_of(&self, loc: u32) -> u64 {
        self.interner.locs().get(loc as usize).map_or(0, |l| l.ip)
    }

    pub fn finish(self) -> BranchCode {
        self.code
    }

    /// Reads run (`loc`, `len`): its start and the bytes there are;
    /// decodes each instruction of it not decoded before (interning its
    /// location, in the order the run meets them).
    fn read(&mut self, loc: u32, start: u64, len: u64) -> Option<(Loc, u64)> {
        let l = *self.interner.locs().get(loc as usize)?;
        // Kernel code is not read (perf reads it only from a vmlinux or
        // kcore of the running kernel).
        if l.dso == NO_DSO || l.level != b'.' || l.ip != start {
            return None;
        }
        let dsos = self.dsos;
        let opts = self.opts;
        let bin = self.bins.entry(l.dso).or_insert_with(|| {
            let d = dsos.get(l.dso as usize)?;
            if d.jit.is_some() {
                return None;
            }
            let bin = crate::symbolize::open_dso(d, opts).ok()?;
            let elf = bin.elf();
            let bits = if elf.is_x86_64() {
                64
            } else if elf.is_x86_32() {
                32
            } else {
                return None;
            };
            Some((bin, bits))
        });
        let (bin, bits) = bin.as_ref()?;
        let elf = bin.elf();
        let run_len = elf.file_bytes(l.rel, usize::try_from(len).ok()?)?.len() as u64;
        let mut off = 0u64;
        while off < run_len {
            let here = located(&l, off);
            let d = match self.code.insns.get(&here) {
                Some(d) => *d,
                None => {
                    let bytes = elf.file_bytes(here.rel, MAXINSN as usize).unwrap_or(&[]);
                    let (n, branch) =
                        symbols::disasm::instruction_branch(bytes, *bits).unwrap_or((0, false));
                    let mut d = Decoded {
                        loc: self.interner.loc_id(here),
                        len: n as u8,
                        branch,
                        bytes: [0; 15],
                    };
                    d.bytes[..n].copy_from_slice(&bytes[..n]);
                    self.code.insns.insert(here, d);
                    d
                }
            };
            if d.len == 0 || off + u64::from(d.len) > run_len {
                break;
            }
            off += u64::from(d.len);
        }
        Some((l, run_len))
    }
}

impl Code for Planner<'_> {
    fn run(&mut self, loc: u32, start: u64, len: u64) -> Option<Run<'_>> {
        if !self.code.runs.contains_key(&(loc, len)) {
            let run = self.read(loc, start, len);
            self.code.runs.insert((loc, len), run);
        }
        self.code.run(loc, len)
    }
}

struct NoVisitor;

impl Visitor for NoVisitor {
    fn sym(&mut self, _: u32) {}
    fn insn(&mut self, _: &Insn) {}
    fn bad(&mut self, _: u64) {}
    fn jump(&mut self, _: u64, _: Option<&Insn>, _: &KeptBranch, _: u32) {}
    fn mismatch(&mut self) {}
    fn not_reaching(&mut self) {}
}
