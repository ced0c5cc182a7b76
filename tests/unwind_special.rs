//! DWARF unwinding through frames whose CFI needs more than SP and BP:
//! a function that saves SP in RBX and realigns the stack (as ld.so's
//! lazy-binding resolver does), a signal handler's trampoline
//! (`__restore_rt`, whose CFI reads the saved `ucontext`), and ld.so's
//! resolver itself, run on every call with `LD_BIND_NOT=1`. perf 6.1's
//! libdw unwinds all of them: `sear collapse -i` must fold exactly what
//! `perf script | sear collapse` folds, on recordings of perf and of sear.

mod common;
use common::*;
use std::path::Path;

const PROGRAM: &str = r#"
#include <signal.h>
#include <stdio.h>
volatile long sink;
__attribute__((noinline)) long spin(long n) { long s = 0; for (long i = 0; i < n; i++) s += i ^ (s >> 3); return s; }
extern long realigned(long n);
/* SP saved in RBX, the stack realigned to 64 bytes, CFA = RBX + 16. */
__asm__(".text\n.globl realigned\n.type realigned,@function\nrealigned:\n.cfi_startproc\n"
        "push %rbx\n.cfi_adjust_cfa_offset 8\n.cfi_rel_offset %rbx, 0\n"
        "mov %rsp, %rbx\n.cfi_def_cfa_register %rbx\n"
        "and $-64, %rsp\nsub $64, %rsp\ncall spin\n"
        "mov %rbx, %rsp\n.cfi_def_cfa_register %rsp\npop %rbx\n.cfi_adjust_cfa_offset -8\n"
        ".cfi_restore %rbx\nret\n.cfi_endproc\n.size realigned, .-realigned\n");
static void on_signal(int sig) { (void)sig; sink += spin(3000000); }
__attribute__((noinline)) long via_realigned(long n) { return realigned(n) + 1; }
__attribute__((noinline)) void via_signal(void) { raise(SIGUSR1); }
int main(void) {
    signal(SIGUSR1, on_signal);
    for (int k = 0; k < 60; k++) { sink += via_realigned(3000000); via_signal(); }
    printf("%ld\n", sink);
    return 0;
}
"#;

/// Calls through the PLT in a loop: with `LD_BIND_NOT=1` every call runs
/// ld.so's resolver.
const PLT_PROGRAM: &str = r#"
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
volatile long sink;
__attribute__((noinline)) long calls(int n) {
    long s = 0; char b[8] = "abc";
    for (int i = 0; i < n; i++) { b[0] = 'a' + (i & 7); s += strlen(b) + labs(-i); }
    return s;
}
int main(void) { for (int k = 0; k < 60; k++) sink += calls(20000); printf("%ld\n", sink); return 0; }
"#;

/// `perf script -i f | sear collapse`.
fn via_perf_script(f: &Path) -> String {
    let text = run_ok(perf().arg("script").arg("-i").arg(f));
    stdout_with_stdin(sear().arg("collapse"), &text.stdout)
}

fn sear_folded(f: &Path) -> String {
    stdout_of(&run_ok(
        sear()
            .args(["collapse", "--raw-return-addresses", "-i"])
            .arg(f),
    ))
}

/// The folded lines through `main` (what the programs surely run), the
/// weight of the others and of all. The others are ticks that land by
/// chance in the loader, `_init` or exit code, where perf's libdw gives up
/// on some stacks sear walks on (a fresh-clone run had one sample in
/// `_init`: perf `p;_init`, sear `p;_start;__libc_start_main_impl;
/// call_init;_init`), so they are not compared line for line.
fn through_main(folded: &str) -> (String, u64, u64) {
    let mut lines = String::new();
    let (mut rest, mut all) = (0, 0);
    for l in folded.lines() {
        let w: u64 = l.rsplit(' ').next().unwrap().parse().unwrap();
        all += w;
        if l.contains(";main;") {
            lines.push_str(l);
            lines.push('\n');
        } else {
            rest += w;
        }
    }
    (lines, rest, all)
}

/// The weight of the folded lines that contain `frame`, and of those among
/// them whose stack also has `through` (walked from `main`).
fn weights(folded: &str, frame: &str, through: &str) -> (u64, u64) {
    let mut all = 0;
    let mut walked = 0;
    for l in folded.lines().filter(|l| l.contains(frame)) {
        let w: u64 = l.rsplit(' ').next().unwrap().parse().unwrap();
        all += w;
        if l.contains(through) {
            walked += w;
        }
    }
    (all, walked)
}

#[test]
fn realigned_signal_and_resolver_frames_unwind_like_perf() {
    assert!(have_perf());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let prog = build_c(d, "p", PROGRAM, &["-O2", "-g"]);
    let plt = build_c(d, "plt", PLT_PROGRAM, &["-O2", "-g", "-fno-builtin"]);
    let dwarf = ["-e", "cpu-clock", "-F", "2000", "--call-graph", "dwarf"];
    let p_rec = perf_record(d, "p.data", &dwarf, &[prog.display().to_string()]);
    // perf itself runs with LD_BIND_NOT too: through `env`, an exec inside
    // the recording, perf 6.1's libdw unwinds none of plt's stacks.
    let plt_rec = d.join("plt.data");
    run_ok(
        perf()
            .env("LD_BIND_NOT", "1")
            .args(["record", "-q"])
            .args(dwarf)
            .arg("-o")
            .arg(&plt_rec)
            .arg("--")
            .arg(&plt),
    );
    let sear_rec = d.join("sear.data");
    run_ok(
        sear()
            .args(["record", "-q", "-e", "cpu-clock", "-F", "2000"])
            .args(["--call-graph", "dwarf", "-o"])
            .arg(&sear_rec)
            .arg("--")
            .arg(&prog),
    );

    for f in [&p_rec, &sear_rec, &plt_rec] {
        let (want, want_rest, want_all) = through_main(&via_perf_script(f));
        let (got, got_rest, got_all) = through_main(&sear_folded(f));
        assert_eq!(
            got,
            want,
            "{}: sear collapse -i differs from perf script",
            f.display()
        );
        // (The rest are ticks that landed in start-up or exit code.)
        for (rest, all) in [(want_rest, want_all), (got_rest, got_all)] {
            assert!(
                rest * 100 <= all * 5,
                "{}: {rest} of {all} outside main",
                f.display()
            );
        }
    }

    // The stacks do go through the special frames to main (≥95% of their
    // samples): the test would pass vacuously if both tools stopped at them.
    for f in [&p_rec, &sear_rec] {
        let folded = sear_folded(f);
        for (frame, through) in [
            (";realigned;spin", ";main;via_realigned;realigned;spin"),
            (";on_signal;spin", ";main;"),
        ] {
            let (all, walked) = weights(&folded, frame, through);
            assert!(all > 0, "{}: no samples in {frame}:\n{folded}", f.display());
            assert!(
                walked * 100 >= all * 95,
                "{}: {frame} not walked:\n{folded}",
                f.display()
            );
        }
    }
    let folded = sear_folded(&plt_rec);
    let (all, walked) = weights(
        &folded,
        ";_dl_runtime_resolve",
        ";main;calls;_dl_runtime_resolve",
    );
    let period = 500_000; // ns per sample at 2000 Hz
    assert!(
        all >= 20 * period,
        "too few samples in the resolver:\n{folded}"
    );
    // perf's libdw too stops on a sample now and then (one in a few
    // hundred, in _dl_fixup); sear stops on the same ones.
    assert!(
        walked * 100 >= all * 95,
        "resolver frames not walked:\n{folded}"
    );
}
