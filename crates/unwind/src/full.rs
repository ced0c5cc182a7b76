//! A DWARF CFI walker that tracks every general register, for the frames
//! framehop's fast rules do not cover.
//!
//! framehop keeps only IP, SP and BP, which is what almost every frame
//! needs and what makes it fast. Some code computes its CFA from another
//! register: ld.so's lazy-binding resolver (`_dl_runtime_resolve_*`) saves
//! SP in RBX, realigns the stack and says `CFA = RBX + 16`; signal
//! trampolines (`__restore_rt`) give the CFA and every register as DWARF
//! expressions over the saved `ucontext`. Walking through those needs the
//! values of all registers in every frame, which this walker carries: the
//! sampled ones for the leaf, then each frame's register rules applied in
//! turn. It parses CFI on every step and caches nothing, so the unwinder
//! only calls it for the samples framehop could not finish.

use std::collections::HashMap;
use std::ops::Range;

use framehop::ExplicitModuleSectionInfo;
use gimli::{
    BaseAddresses, CallFrameInstruction, CfaRule, CieOrFde, DebugFrame, EhFrame, EhFrameHdr,
    Encoding, Evaluation, EvaluationResult, Format, LittleEndian, Location, Register, RegisterRule,
    UnwindContext, UnwindSection, UnwindTableRow, Value,
};

use crate::{Binary, SectionBytes};

/// x86-64 registers in DWARF numbering: RAX, RDX, RCX, RBX, RSI, RDI, RBP,
/// RSP, R8–R15, then the return address (16). `None` where unknown.
pub(crate) type Regs = [Option<u64>; 17];

pub(crate) const RBP: usize = 6;
pub(crate) const RSP: usize = 7;
pub(crate) const RA: usize = 16;
/// Registers a callee must preserve (System V x86-64 ABI): RBX, RBP,
/// R12–R15. Without a rule they keep their value in the caller; the others
/// are unknown there.
const CALLEE_SAVED: [usize; 6] = [3, 6, 12, 13, 14, 15];

type R<'a> = gimli::EndianSlice<'a, LittleEndian>;

const ENCODING: Encoding = Encoding {
    format: Format::Dwarf32,
    version: 1,
    address_size: 8,
};

/// One frame's step: the caller's registers, and whether the frame is a
/// signal trampoline (so the caller's IP is exact, not a return address).
struct Step {
    caller: Regs,
    signal: bool,
}

/// Where the walker looks for the binary covering an address: the binary
/// and the process address of its address 0.
pub(crate) trait Modules {
    fn find(&self, avma: u64) -> Option<(&Binary, u64)>;
}

/// What a walk found: the leaf IP and return addresses, and, where it
/// stopped because it had `stop` frames, the registers of the last frame
/// and whether its address is exact (it follows a signal frame) rather
/// than a return address.
pub(crate) struct Walk {
    pub frames: Vec<u64>,
    pub state: Option<(Regs, bool)>,
}

/// Walks from `regs` (the leaf's registers) and returns the leaf IP and the
/// return addresses found, at most `max_frames`, stopping with the state
/// at `stop` frames. `read` reads a word of the copied stack. Stops where a
/// rule cannot be evaluated, the stack copy ends, the return address is
/// undefined (the outermost frame) or the stack pointer would move
/// backwards.
pub(crate) fn unwind(
    modules: &(impl Modules + ?Sized),
    mut regs: Regs,
    read: &mut dyn FnMut(u64) -> Option<u64>,
    max_frames: usize,
    stop: usize,
) -> Walk {
    let mut frames = Vec::new();
    let mut ctx = UnwindContext::new();
    let mut exact = true;
    while frames.len() < max_frames {
        let Some(ip) = regs[RA] else { break };
        if ip == 0 {
            break;
        }
        frames.push(ip);
        if frames.len() == stop {
            return Walk {
                frames,
                state: Some((regs, exact)),
            };
        }
        let first = frames.len() == 1;
        let lookup = if exact { ip } else { ip.wrapping_sub(1) };
        let step = match modules.find(lookup) {
            Some((bin, base)) => match cfi_step(bin, base, lookup, &regs, read, &mut ctx) {
                Some(Ok(step)) => step,
                // A rule says this is the outermost frame.
                Some(Err(End)) => break,
                None => match fp_step(&regs, first, read) {
                    Some(s) => s,
                    None => break,
                },
            },
            None => match fp_step(&regs, first, read) {
                Some(s) => s,
                None => break,
            },
        };
        let (Some(new_sp), Some(sp)) = (step.caller[RSP], regs[RSP]) else {
            break;
        };
        if step.caller[RA] == Some(ip) && new_sp == sp {
            break;
        }
        if !first && new_sp < sp {
            break;
        }
        exact = step.signal;
        regs = step.caller;
    }
    Walk {
        frames,
        state: None,
    }
}

/// The outermost frame: its return address is undefined.
struct End;

/// Without CFI: the leaf may not have pushed anything yet (return address
/// at SP), other frames are taken to keep a frame pointer.
fn fp_step(regs: &Regs, first: bool, read: &mut dyn FnMut(u64) -> Option<u64>) -> Option<Step> {
    let mut caller = callee_saved(regs);
    if first {
        let sp = regs[RSP]?;
        caller[RA] = Some(read(sp)?);
        caller[RSP] = Some(sp.checked_add(8)?);
    } else {
        let bp = regs[RBP]?;
        caller[RA] = Some(read(bp.checked_add(8)?)?);
        caller[RBP] = Some(read(bp)?);
        caller[RSP] = Some(bp.checked_add(16)?);
    }
    Some(Step {
        caller,
        signal: false,
    })
}

fn callee_saved(regs: &Regs) -> Regs {
    let mut out = [None; 17];
    for r in CALLEE_SAVED {
        out[r] = regs[r];
    }
    out
}

/// One step by the CFI covering `avma`; None where the binary has none for
/// it or a rule cannot be evaluated.
fn cfi_step(
    bin: &Binary,
    base: u64,
    avma: u64,
    regs: &Regs,
    read: &mut dyn FnMut(u64) -> Option<u64>,
    ctx: &mut UnwindContext<usize>,
) -> Option<Result<Step, End>> {
    let s = &bin.sections;
    let svma = avma.wrapping_sub(base);
    let bases = bases_of(s);
    if let Some(bytes) = &s.eh_frame {
        let eh = EhFrame::new(bytes, LittleEndian);
        let fde = match &s.eh_frame_hdr {
            Some(hdr) => {
                let parsed = EhFrameHdr::new(hdr, LittleEndian).parse(&bases, 8).ok();
                match parsed.as_ref().and_then(|p| p.table()) {
                    Some(t) => t.fde_for_address(&eh, &bases, svma, EhFrame::cie_from_offset),
                    None => eh.fde_for_address(&bases, svma, EhFrame::cie_from_offset),
                }
            }
            _ => eh.fde_for_address(&bases, svma, EhFrame::cie_from_offset),
        };
        if let Ok(fde) = fde {
            let signal = fde.is_signal_trampoline();
            let row = fde.unwind_info_for_address(&eh, &bases, ctx, svma).ok()?;
            return apply(&eh, row, regs, read, signal);
        }
    }
    if let Some(bytes) = &s.debug_frame {
        let df = DebugFrame::new(bytes, LittleEndian);
        let fde = df
            .fde_for_address(&bases, svma, DebugFrame::cie_from_offset)
            .ok()?;
        let signal = fde.is_signal_trampoline();
        let row = fde.unwind_info_for_address(&df, &bases, ctx, svma).ok()?;
        return apply(&df, row, regs, read, signal);
    }
    None
}

fn bases_of(s: &ExplicitModuleSectionInfo<SectionBytes>) -> BaseAddresses {
    let mut bases = BaseAddresses::default();
    if let Some(r) = &s.text_svma {
        bases = bases.set_text(r.start);
    }
    if let Some(r) = &s.got_svma {
        bases = bases.set_got(r.start);
    }
    if let Some(r) = &s.eh_frame_svma {
        bases = bases.set_eh_frame(r.start);
    }
    if let Some(r) = &s.eh_frame_hdr_svma {
        bases = bases.set_eh_frame_hdr(r.start);
    }
    bases
}

/// The address ranges (the binary's own addresses) of the functions whose
/// CFI framehop's rules do not cover, so it would unwind them by frame
/// pointer: a CFA from a register other than SP and BP or from an
/// expression, a BP-based CFA other than the usual `BP + 16`, a return
/// address or BP given by anything but a plain stack slot. Found by
/// reading the CFI instructions once per binary, without evaluating rows;
/// usually a handful of functions (ld.so's resolvers, signal trampolines).
pub(crate) fn hard_ranges(s: &ExplicitModuleSectionInfo<SectionBytes>) -> Vec<Range<u64>> {
    let bases = bases_of(s);
    let mut out = Vec::new();
    if let Some(bytes) = &s.eh_frame {
        scan(&EhFrame::new(bytes, LittleEndian), &bases, &mut out);
    } else if let Some(bytes) = &s.debug_frame {
        scan(&DebugFrame::new(bytes, LittleEndian), &bases, &mut out);
    }
    out.sort_by_key(|r| r.start);
    // Overlaps merged, so one binary search finds an address's range.
    let mut merged: Vec<Range<u64>> = Vec::with_capacity(out.len());
    for r in out {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

fn scan<'a, S: UnwindSection<R<'a>>>(
    section: &S,
    bases: &BaseAddresses,
    out: &mut Vec<Range<u64>>,
) {
    let mut cie_state: HashMap<usize, Option<CfaState>> = HashMap::new();
    let mut entries = section.entries(bases);
    // A corrupt entry ends the scan: what was found so far stands.
    while let Ok(Some(entry)) = entries.next() {
        let CieOrFde::Fde(partial) = entry else {
            continue;
        };
        let Ok(fde) = partial.parse(S::cie_from_offset) else {
            continue;
        };
        let cie = fde.cie();
        let daf = cie.data_alignment_factor();
        let start = *cie_state.entry(cie.offset()).or_insert_with(|| {
            let mut st = CfaState::default();
            let mut it = cie.instructions(section, bases);
            let ok = std::iter::from_fn(|| it.next().ok().flatten()).all(|i| st.step(&i, daf));
            ok.then_some(st)
        });
        let hard = match start {
            None => true,
            Some(mut st) => {
                let mut it = fde.instructions(section, bases);
                let mut saved = Vec::new();
                !std::iter::from_fn(|| it.next().ok().flatten()).all(|i| match i {
                    CallFrameInstruction::RememberState => {
                        // Bounded: a hostile FDE cannot grow it past its
                        // own length.
                        saved.push(st);
                        true
                    }
                    CallFrameInstruction::RestoreState => {
                        st = saved.pop().unwrap_or(st);
                        true
                    }
                    _ => st.step(&i, daf),
                })
            }
        };
        if hard {
            let begin = fde.initial_address();
            out.push(begin..begin.saturating_add(fde.len()));
        }
    }
}

/// The CFA register and offset as CFI instructions set them, to tell a
/// plain frame-pointer CFA from an unusual one.
#[derive(Clone, Copy, Default)]
struct CfaState {
    register: u16,
    offset: i64,
}

impl CfaState {
    /// Applies one instruction; false where it makes a rule framehop does
    /// not cover.
    fn step(&mut self, i: &CallFrameInstruction<usize>, daf: i64) -> bool {
        use CallFrameInstruction as I;
        const BP: u16 = RBP as u16;
        const SP: u16 = RSP as u16;
        const RA16: u16 = RA as u16;
        let cfa_ok = |st: &CfaState| match st.register {
            SP => true,
            BP => st.offset == 16,
            _ => false,
        };
        match i {
            I::DefCfa { register, offset } => {
                self.register = register.0;
                self.offset = i64::try_from(*offset).unwrap_or(i64::MAX);
                cfa_ok(self)
            }
            I::DefCfaSf {
                register,
                factored_offset,
            } => {
                self.register = register.0;
                self.offset = factored_offset.saturating_mul(daf);
                cfa_ok(self)
            }
            I::DefCfaRegister { register } => {
                self.register = register.0;
                cfa_ok(self)
            }
            I::DefCfaOffset { offset } => {
                self.offset = i64::try_from(*offset).unwrap_or(i64::MAX);
                cfa_ok(self)
            }
            I::DefCfaOffsetSf { factored_offset } => {
                self.offset = factored_offset.saturating_mul(daf);
                cfa_ok(self)
            }
            I::DefCfaExpression { .. } => false,
            I::Offset {
                register,
                factored_offset,
            } if register.0 == RA16 => {
                i64::try_from(*factored_offset).is_ok_and(|f| f.saturating_mul(daf) == -8)
            }
            I::OffsetExtendedSf {
                register,
                factored_offset,
            } if register.0 == RA16 => factored_offset.saturating_mul(daf) == -8,
            I::ValOffset { register, .. }
            | I::ValOffsetSf { register, .. }
            | I::Expression { register, .. }
            | I::ValExpression { register, .. }
            | I::Register {
                dest_register: register,
                ..
            } => register.0 != BP && register.0 != RA16,
            _ => true,
        }
    }
}

/// Applies one row of CFI to the callee's registers.
fn apply<'a, S: UnwindSection<R<'a>>>(
    section: &S,
    row: &UnwindTableRow<usize>,
    regs: &Regs,
    read: &mut dyn FnMut(u64) -> Option<u64>,
    signal: bool,
) -> Option<Result<Step, End>> {
    let cfa = match row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } => {
            let v = *regs.get(usize::from(register.0))?;
            v?.checked_add_signed(*offset)?
        }
        CfaRule::Expression(e) => {
            let expr = e.get(section).ok()?;
            eval(expr.0, regs, None, read)?
        }
    };
    let mut caller = callee_saved(regs);
    caller[RSP] = Some(cfa);
    // Without a rule for it the return address is the word below the CFA.
    caller[RA] = read(cfa.checked_sub(8)?);
    for (reg, rule) in row.registers() {
        let i = usize::from(reg.0);
        if i >= caller.len() {
            continue;
        }
        let value = match rule {
            RegisterRule::Undefined => {
                if i == RA {
                    return Some(Err(End));
                }
                None
            }
            RegisterRule::SameValue => regs[i],
            RegisterRule::Offset(o) => read(cfa.checked_add_signed(*o)?),
            RegisterRule::ValOffset(o) => cfa.checked_add_signed(*o),
            RegisterRule::Register(r) => regs.get(usize::from(r.0)).copied().flatten(),
            RegisterRule::Expression(e) => {
                let at = eval(e.get(section).ok()?.0, regs, Some(cfa), read);
                at.and_then(&mut *read)
            }
            RegisterRule::ValExpression(e) => eval(e.get(section).ok()?.0, regs, Some(cfa), read),
            RegisterRule::Constant(c) => Some(*c),
            _ => None,
        };
        caller[i] = value;
    }
    Some(Ok(Step { caller, signal }))
}

/// Evaluates a CFI expression: registers are the callee's, memory is the
/// stack copy, `cfa` is pushed first for register rules (DWARF 6.4.2.3).
fn eval(
    bytecode: R<'_>,
    regs: &Regs,
    cfa: Option<u64>,
    read: &mut dyn FnMut(u64) -> Option<u64>,
) -> Option<u64> {
    let mut ev = Evaluation::new(bytecode, ENCODING);
    // A hostile expression may branch back forever (DW_OP_skip); real CFI
    // expressions are a handful of operations.
    ev.set_max_iterations(1000);
    if let Some(c) = cfa {
        ev.set_initial_value(c);
    }
    let mut state = ev.evaluate().ok()?;
    // Each resume consumes an operation; a hostile expression with more
    // requests than this is refused rather than walked forever.
    for _ in 0..64 {
        state = match state {
            EvaluationResult::Complete => {
                return match ev.as_result().last()?.location {
                    Location::Address { address } => Some(address),
                    Location::Value { value } => value.to_u64(u64::MAX).ok(),
                    _ => None,
                };
            }
            EvaluationResult::RequiresRegister { register, .. } => {
                let v = register_value(regs, register)?;
                ev.resume_with_register(Value::Generic(v)).ok()?
            }
            EvaluationResult::RequiresMemory { address, size, .. } => {
                let word = read(address)?;
                let v = match size {
                    1..=7 => word & ((1u64 << (8 * u32::from(size))) - 1),
                    _ => word,
                };
                ev.resume_with_memory(Value::Generic(v)).ok()?
            }
            EvaluationResult::RequiresCallFrameCfa => ev.resume_with_call_frame_cfa(cfa?).ok()?,
            _ => return None,
        };
    }
    None
}

fn register_value(regs: &Regs, r: Register) -> Option<u64> {
    *regs.get(usize::from(r.0))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(code: &[u8], regs: &Regs, cfa: Option<u64>) -> Option<u64> {
        let mut stack = |a: u64| (a == 0x1000).then_some(0xabcd);
        eval(
            gimli::EndianSlice::new(code, LittleEndian),
            regs,
            cfa,
            &mut stack,
        )
    }

    #[test]
    fn expressions_read_registers_memory_and_the_cfa() {
        let mut regs = [None; 17];
        regs[RSP] = Some(0xff8);
        // DW_OP_breg7 (rsp) +8; DW_OP_deref: the word at rsp + 8.
        assert_eq!(run(&[0x77, 0x08, 0x06], &regs, None), Some(0xabcd));
        // A register rule's expression starts with the CFA pushed:
        // DW_OP_lit8, DW_OP_plus.
        assert_eq!(run(&[0x38, 0x22], &regs, Some(0x100)), Some(0x108));
        // An unknown register or unreadable memory: no value.
        assert_eq!(run(&[0x73, 0x00], &regs, None), None);
        assert_eq!(run(&[0x77, 0x10, 0x06], &regs, None), None);
    }

    #[test]
    fn an_expression_that_loops_is_refused() {
        // DW_OP_skip -3: jumps back to itself.
        assert_eq!(run(&[0x2f, 0xfd, 0xff], &[None; 17], None), None);
    }
}
