//! `script -F brstackinsn` (and `brstackinsnlen`, the branch-type
//! statistics of `report --branch-stack`) against perf 6.1. This machine
//! has no LBR, so the recording is written here: a program compiled by
//! the test, one map of it, and samples whose branch stacks are the
//! program's real branches (found with objdump), with the cases perf's
//! walk treats apart: a sample on its last branch, a block whose end is
//! not an instruction boundary, a block too long to dump, a transfer
//! through the kernel, a final block that meets another branch before
//! the sample, an aborted transaction, empty entries, and branch types
//! and cycle counts.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use perf_data::attr::{Event, EventAttr};
use perf_data::consts::*;
use perf_data::writer::{FeatureMap, FileWriter};
use perf_data::Endian;

const PROGRAM: &str = r#"
__attribute__((noinline)) long leaf(long x) { return x * 7 + (x >> 3); }
__attribute__((noinline)) long loop(long n) {
    long s = 0;
    for (long i = 0; i < n; i++)
        s += leaf(i) ^ s;
    return s;
}
int main(int argc, char **argv) { (void)argv; return (int)loop(argc * 1000); }
"#;

const BASE: u64 = 0x5555_5555_4000;
const PID: u32 = 4242;
/// perf_branch_entry flag bits.
const MISPRED: u64 = 1;
const PREDICTED: u64 = 2;
const ABORT: u64 = 8;
fn cycles(n: u64) -> u64 {
    n << 4
}
/// Branch types (perf's PERF_BR_*), in the flag word's bits 20-23.
fn br_type(t: u64) -> u64 {
    t << 20
}
const BR_COND: u64 = 1;
const BR_UNCOND: u64 = 2;
const BR_CALL: u64 = 4;
const BR_IND_CALL: u64 = 5;
const BR_RET: u64 = 6;

/// One instruction of objdump's listing: address, mnemonic.
#[derive(Debug, Clone)]
struct Insn {
    addr: u64,
    op: String,
}

/// The instructions of function `name` (file addresses) in objdump's
/// listing.
fn function(listing: &str, name: &str) -> Vec<Insn> {
    let head = format!("<{name}>:");
    let mut out = Vec::new();
    let mut inside = false;
    for line in listing.lines() {
        if line.ends_with(&head) {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if line.trim().is_empty() {
            break;
        }
        let mut parts = line.split('\t');
        let (Some(a), Some(op)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(a.trim().trim_end_matches(':'), 16) else {
            continue;
        };
        out.push(Insn {
            addr,
            op: op.trim().to_owned(),
        });
    }
    assert!(!out.is_empty(), "no {name} in the listing");
    out
}

fn find<'a>(f: &'a [Insn], pred: impl Fn(&Insn) -> bool, what: &str) -> &'a Insn {
    f.iter()
        .find(|i| pred(i))
        .unwrap_or_else(|| panic!("no {what} in {f:?}"))
}

fn put_str(p: &mut Vec<u8>, s: &str) {
    p.extend_from_slice(s.as_bytes());
    p.push(0);
    while !p.len().is_multiple_of(8) {
        p.push(0);
    }
}

/// A branch-stack entry: from, to, flag word.
type Entry = (u64, u64, u64);

/// A sample: ip, pid/tid, time, period, branch stack (newest first).
fn sample(ip: u64, time: u64, branches: &[Entry]) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&ip.to_le_bytes());
    p.extend_from_slice(&PID.to_le_bytes());
    p.extend_from_slice(&PID.to_le_bytes());
    p.extend_from_slice(&time.to_le_bytes());
    p.extend_from_slice(&100_000u64.to_le_bytes());
    p.extend_from_slice(&(branches.len() as u64).to_le_bytes());
    for &(from, to, flags) in branches {
        for v in [from, to, flags] {
            p.extend_from_slice(&v.to_le_bytes());
        }
    }
    p
}

/// Writes the recording of `exe` (mapped whole at BASE) into `dir`.
fn recording(dir: &Path, exe: &Path) -> PathBuf {
    let listing = stdout_of(&run_ok(
        Command::new("objdump")
            .args(["-d", "--no-show-raw-insn", "-M", "suffix"])
            .arg(exe),
    ));
    let main = function(&listing, "main");
    let lp = function(&listing, "loop");
    let leaf = function(&listing, "leaf");
    let a = |i: &Insn| BASE + i.addr;
    let call_loop = find(
        &main,
        |i| i.op.starts_with("call") || i.op.starts_with("jmp"),
        "call of loop",
    );
    let call_leaf = find(&lp, |i| i.op.starts_with("call"), "call of leaf");
    let after_call = &lp[lp.iter().position(|i| i.addr == call_leaf.addr).unwrap() + 1];
    // The loop's backward conditional jump and its target.
    let back = lp
        .iter()
        .find(|i| {
            i.op.starts_with('j')
                && !i.op.starts_with("jmp")
                && i.op
                    .split_whitespace()
                    .nth(1)
                    .and_then(|t| u64::from_str_radix(t, 16).ok())
                    .is_some_and(|t| t < i.addr)
        })
        .expect("the loop's backward jump");
    let back_to = u64::from_str_radix(back.op.split_whitespace().nth(1).unwrap(), 16).unwrap();
    let ret = find(&leaf, |i| i.op.starts_with("ret"), "leaf's ret");
    let leaf_mid = &leaf[1.min(leaf.len() - 1)];
    let loop_entry = lp[0].addr;
    let size = std::fs::metadata(exe).unwrap().len();

    let attr = EventAttr {
        type_: PERF_TYPE_HARDWARE,
        size: 128,
        config: 0,
        sample_period_or_freq: 100_000,
        sample_type: PERF_SAMPLE_IP
            | PERF_SAMPLE_TID
            | PERF_SAMPLE_TIME
            | PERF_SAMPLE_PERIOD
            | PERF_SAMPLE_BRANCH_STACK,
        flags: (1 << perf_data::attr::flag::EXCLUDE_KERNEL)
            | (1 << perf_data::attr::flag::EXCLUDE_HV),
        // ANY | TYPE_SAVE
        branch_sample_type: 8 | (1 << 16),
        ..Default::default()
    };
    let ev = Event {
        attr,
        ids: vec![],
        name: Some("cycles:u".into()),
    };
    let mut w = FileWriter::create(std::io::Cursor::new(Vec::new()), Endian::Little, &[]).unwrap();
    let misc_user = PERF_RECORD_MISC_USER;
    let mut rec = |t: u32, misc: u16, p: Vec<u8>| w.write_record(t, misc, &p, &[]).unwrap();
    let mut comm = Vec::new();
    comm.extend_from_slice(&PID.to_le_bytes());
    comm.extend_from_slice(&PID.to_le_bytes());
    put_str(&mut comm, "brprog");
    rec(PERF_RECORD_COMM, 0, comm);
    let mut m = Vec::new();
    for v in [PID, PID] {
        m.extend_from_slice(&v.to_le_bytes());
    }
    for v in [BASE, size.next_multiple_of(4096), 0] {
        m.extend_from_slice(&v.to_le_bytes());
    }
    m.extend_from_slice(&8u32.to_le_bytes());
    m.extend_from_slice(&1u32.to_le_bytes());
    m.extend_from_slice(&77u64.to_le_bytes());
    m.extend_from_slice(&0u64.to_le_bytes());
    m.extend_from_slice(&5u32.to_le_bytes());
    m.extend_from_slice(&2u32.to_le_bytes());
    put_str(&mut m, exe.to_str().unwrap());
    rec(PERF_RECORD_MMAP2, misc_user, m);
    let kernel = 0xffff_ffff_8100_0000u64;
    let stacks: Vec<(u64, Vec<Entry>)> = vec![
        // main -> loop -> leaf, back in loop, around, into leaf again;
        // the sample in leaf.
        (
            a(leaf_mid),
            vec![
                (
                    a(call_leaf),
                    BASE + leaf[0].addr,
                    PREDICTED | cycles(3) | br_type(BR_CALL),
                ),
                (
                    a(back),
                    BASE + back_to,
                    PREDICTED | cycles(9) | br_type(BR_COND),
                ),
                (
                    a(ret),
                    a(after_call),
                    MISPRED | cycles(14) | br_type(BR_RET),
                ),
                (
                    a(call_leaf),
                    BASE + leaf[0].addr,
                    PREDICTED | br_type(BR_CALL),
                ),
                (
                    a(call_loop),
                    BASE + loop_entry,
                    cycles(2) | br_type(BR_UNCOND),
                ),
            ],
        ),
        // The sample on the last branch's source: no final block.
        (
            a(back),
            vec![
                (
                    a(ret),
                    a(after_call),
                    PREDICTED | cycles(5) | br_type(BR_RET),
                ),
                (
                    a(call_leaf),
                    BASE + leaf[0].addr,
                    PREDICTED | br_type(BR_CALL),
                ),
            ],
        ),
        // A block whose end is not an instruction's start (a mismatch,
        // decoded on past it), one too long to dump, an empty entry.
        (
            a(after_call),
            vec![
                (a(ret), a(after_call), cycles(7)),
                (a(back) + 1, BASE + back_to, PREDICTED),
                (a(call_leaf), a(after_call), 0),
                (BASE + loop_entry + 20_000, BASE + loop_entry, 0),
                (0, 0, 0),
                (a(call_loop), BASE + loop_entry, br_type(BR_UNCOND)),
            ],
        ),
        // The entry into the kernel filtered out: the block from the
        // loop's start ends in kernel code, so it runs on to the next
        // user-space branch.
        (
            a(back),
            vec![
                (a(ret), a(after_call), MISPRED | cycles(4)),
                (a(call_leaf), BASE + leaf[0].addr, PREDICTED | cycles(6)),
                (kernel, kernel + 0x20, br_type(BR_UNCOND)),
                (a(call_loop), BASE + loop_entry, 0),
            ],
        ),
        // Through the kernel (a user block ending in kernel code, patched
        // with the next entry), then a final block that meets the loop's
        // call before reaching a sample behind it.
        (
            a(back),
            vec![
                (a(back), BASE + back_to, PREDICTED | br_type(BR_COND)),
                (kernel + 0x40, a(after_call), br_type(BR_RET)),
                (kernel, kernel + 0x20, br_type(BR_UNCOND)),
                (a(call_leaf), kernel, br_type(BR_CALL)),
                (a(call_loop), BASE + loop_entry, 0),
            ],
        ),
        // The final block: the last target after the sample (the walk
        // scans 128 bytes for a branch).
        (
            BASE + loop_entry,
            vec![(a(ret), a(after_call), MISPRED | br_type(BR_RET))],
        ),
        // An aborted transaction: no final block.
        (
            a(after_call),
            vec![
                (a(back), BASE + back_to, ABORT),
                (a(call_loop), BASE + loop_entry, 0),
            ],
        ),
        // A branch from an address outside every map.
        (
            a(leaf_mid),
            vec![
                (a(call_leaf), BASE + leaf[0].addr, br_type(BR_CALL)),
                (0x1000, a(after_call), 0),
            ],
        ),
        // For the statistics: a conditional branch forward across a 4 KiB
        // page (to code outside the map), an extended type (a data
        // fault), an indirect call.
        (
            a(leaf_mid),
            vec![
                (a(call_leaf), BASE + leaf[0].addr, br_type(BR_IND_CALL)),
                (a(back), a(back) + 0x8_0000, br_type(BR_COND)),
            ],
        ),
        (
            a(leaf_mid),
            vec![
                (
                    a(call_leaf),
                    BASE + leaf[0].addr,
                    br_type(BR_IND_CALL) | cycles(1),
                ),
                (a(ret), a(ret) + 0x9_0000, br_type(15) | (1 << 26)),
            ],
        ),
    ];
    let mut t = 1_000_000_000u64;
    for (ip, br) in &stacks {
        t += 1000;
        rec(PERF_RECORD_SAMPLE, misc_user, sample(*ip, t, br));
    }
    w.set_events(&[ev]);
    let bytes = w.finish(&FeatureMap::new()).unwrap().into_inner();
    let path = dir.join("branches.data");
    std::fs::write(&path, bytes).unwrap();
    path
}

fn fixture() -> (tempfile::TempDir, PathBuf) {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_c(dir.path(), "brprog", PROGRAM, &["-O1", "-g"]);
    let data = recording(dir.path(), &exe);
    (dir, data)
}

fn script(cmd: &mut Command, data: &Path, fields: &str) -> (bool, String, String) {
    // ("FIELDS --max-blocks N": the newest N blocks only.)
    let mut words = fields.split(' ');
    let out = cmd
        .arg("script")
        .arg("-i")
        .arg(data)
        .args(["-F", words.next().unwrap_or_default()])
        .args(words)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn brstackinsn_prints_what_perf_prints() {
    let (_dir, data) = fixture();
    for fields in [
        "ip,sym,brstackinsn",
        "comm,tid,ip,sym,dso,brstackinsn",
        "ip,brstackinsnlen",
        "ip,sym,brstackinsn,brstackinsnlen",
        "ip,brstack,brstackinsn",
        "ip,sym,brstackinsn --max-blocks 1",
        "ip,sym,srcline,brstackinsn --max-blocks 2",
    ] {
        let (pok, p, perr) = script(&mut perf(), &data, fields);
        assert!(pok, "perf script -F {fields}: {perr}");
        let (sok, s, serr) = script(&mut sear(), &data, fields);
        assert!(sok, "sear script -F {fields}: {serr}");
        assert!(
            p.lines().filter(|l| l.contains("insn:")).count() > 10,
            "perf printed almost no instructions:\n{p}"
        );
        if p != s {
            let at = first_difference(&p, &s);
            panic!("-F {fields}: line {}\nperf:\n{p}\nsear:\n{s}", at + 1);
        }
    }
}

/// perf's branch view of the same recording (`-b`: the file has no
/// BRANCH_STACK feature, so neither tool picks it by default) ends with
/// its branch statistics, each branch counted as the first branch of the
/// entry it lands in; without `-b` the usual report, no statistics. Also
/// the branch ends' source lines (`srcline_from`, `srcline_to`: one entry
/// per text). (perf 6.1 crashes on them beside `symbol_*` keys, and its
/// `mispredict` beside them shows the flags of whichever branch its
/// non-ordering comparison merged first: neither is compared.)
#[test]
fn branch_statistics_follow_the_branch_report_as_perf_prints_them() {
    let (_dir, data) = fixture();
    for args in [
        &["-b"][..],
        &["-b", "-q"],
        &["-b", "--sort", "dso_from,dso_to"],
        &["-b", "--sort", "cycles"],
        &["-b", "--sort", "sym"],
        &["-b", "--sort", "srcline_from,srcline_to"],
        &["-b", "--sort", "srcline_to"],
        &["-b", "--sort", "dso_to,srcline_from"],
        &["-b", "--sort", "srcline_from,sym", "-q"],
        &[],
    ] {
        let p = perf_report(&data, args);
        let s = sear_report(&data, args);
        assert_eq!(
            args.is_empty(),
            !p.contains("# Branch Statistics:"),
            "perf -b {args:?}:\n{p}"
        );
        assert_eq!(s, p, "report {args:?}");
    }
}
