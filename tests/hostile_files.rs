//! Files beside the recording that are not what they claim: a FIFO where a recorded binary
//! was (its open would block forever), and a JIT perf map that is a FIFO or a link to
//! /dev/zero (read forever). Every command finishes, exits 0, names the file and says it is
//! not a regular file, and still names the other frames.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

const PROGRAM: &str = r#"
volatile long sink;
__attribute__((noinline)) long inner(long n) {
    long x = sink;
    for (long i = 0; i < n; i++) x += i ^ (x >> 3);
    return x;
}
int main(void) {
    for (int k = 0; k < 300; k++) sink += inner(1000000);
    return 0;
}
"#;

/// Each command over `data` with `HOME` at `home` (no build-id cache to rescue the file),
/// killed after 60 s if it hangs: every one ends on its own, exits 0 and warns once about
/// `bad` not being a regular file.
fn every_command_survives(data: &Path, home: &Path, bad: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("p.html");
    let svg = dir.path().join("f.svg");
    let json = dir.path().join("e.json");
    let cases: Vec<Vec<String>> = vec![
        vec!["report".into(), "--stdio".into()],
        vec![
            "report".into(),
            "--stdio".into(),
            "--sort".into(),
            "srcline".into(),
        ],
        vec!["script".into()],
        vec!["annotate".into(), "--stdio".into()],
        vec!["collapse".into()],
        vec!["flame".into(), "-o".into(), svg.display().to_string()],
        vec!["html".into(), "-o".into(), page.display().to_string()],
        vec![
            "export".into(),
            "--format".into(),
            "json".into(),
            "-o".into(),
            json.display().to_string(),
        ],
    ];
    for args in cases {
        let out = Command::new("timeout")
            .args(["-s", "KILL", "60"])
            .arg(env!("CARGO_BIN_EXE_sear"))
            .env("PERF_CONFIG", "/dev/null")
            .env("HOME", home)
            .env_remove("DEBUGINFOD_URLS")
            .args(&args)
            .arg("-i")
            .arg(data)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?} (137: killed, it hung): {err}"
        );
        let named = err
            .lines()
            .filter(|l| l.contains(&bad.display().to_string()) && l.contains("not a regular file"))
            .count();
        assert_eq!(
            named,
            1,
            "{args:?}: one warning naming {}: {err}",
            bad.display()
        );
    }
}

/// The peak memory `sear -vv` logs at exit (`memory at exit: VmHWM N kB`), in kB.
fn peak_kb(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| {
            l.split("VmHWM ")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .expect("sear -vv prints its peak memory")
}

#[test]
fn a_fifo_where_the_binary_was() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for (name, opts) in [
        ("fp", &["-g"][..]),
        ("dwarf", &["--call-graph", "dwarf"][..]),
    ] {
        let bin = build_c(dir.path(), name, PROGRAM, &["-O2", "-g"]);
        let mut o = vec!["-N"];
        o.extend_from_slice(opts);
        let data = perf_record(
            dir.path(),
            &format!("{name}.data"),
            &o,
            &[bin.display().to_string()],
        );
        std::fs::remove_file(&bin).unwrap();
        run_ok(Command::new("mkfifo").arg(&bin));
        every_command_survives(&data, home.path(), &bin);
        // The other frames are still named (the kernel's, libc's).
        let report = stdout_of(&run_ok(
            sear()
                .env("HOME", home.path())
                .args(["report", "--stdio", "--no-children", "--sort", "dso", "-i"])
                .arg(&data),
        ));
        assert!(report.contains("%"), "{report}");
    }
}

#[test]
fn a_perf_map_that_is_a_fifo_or_dev_zero() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = dir.path().join("w.js");
    std::fs::write(
        &script,
        "function work(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i); return s; }\n\
         let t = 0; for (let k = 0; k < 100; k++) t += work(200000); if (t === 1) console.log(t);\n",
    )
    .unwrap();
    let data = dir.path().join("js.data");
    run_ok(
        sear()
            .env("HOME", home.path())
            .args(["record", "-q", "-N", "-g", "-o"])
            .arg(&data)
            .args(["--", "node", "--perf-basic-prof"])
            .arg(&script),
    );
    let pid = stdout_of(&run_ok(
        sear().args(["script", "-F", "pid", "-i"]).arg(&data),
    ))
    .lines()
    .next()
    .unwrap()
    .trim()
    .to_owned();
    let map = std::path::PathBuf::from(format!("/tmp/perf-{pid}.map"));
    let real = std::fs::read(&map).expect("node wrote its perf map");
    let _ = std::fs::remove_file(&map);
    run_ok(Command::new("mkfifo").arg(&map));
    every_command_survives(&data, home.path(), &map);
    std::fs::remove_file(&map).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &map).unwrap();
    every_command_survives(&data, home.path(), &map);
    std::fs::remove_file(&map).unwrap();
    // A 100 MB line of garbage before the real lines: skipped, the rest still names the
    // function, in bounded memory.
    let mut text = vec![b'x'; 100 << 20];
    text.push(b'\n');
    text.extend_from_slice(&real);
    std::fs::write(&map, &text).unwrap();
    drop(text);
    let out = sear()
        .env("HOME", home.path())
        .args([
            "-vv",
            "report",
            "--stdio",
            "--no-children",
            "--sort",
            "sym",
            "-i",
        ])
        .arg(&data)
        .output()
        .unwrap();
    std::fs::remove_file(&map).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let report = stdout_of(&out);
    assert!(
        report
            .lines()
            .any(|l| l.contains("JS:") && l.contains("work ")),
        "the function is named from the rest: {report}"
    );
    let hwm = peak_kb(&err);
    assert!(hwm < 96 * 1024, "peak {hwm} kB with a 100 MB line");
}

/// A decompression bomb: a `.debug_info` of 256 MB of zeros, zlib-compressed to a few hundred
/// KB (a real 1000:1). sear refuses to inflate it (more than 64:1 is no DWARF), says so naming
/// the file, and stays small, where it used to take the 256 MB.
#[test]
fn a_compressed_debug_section_bomb_is_refused() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let plain = build_c(dir.path(), "plain", PROGRAM, &["-O2", "-g"]);
    let zeros = dir.path().join("zeros");
    std::fs::write(&zeros, vec![0u8; 256 << 20]).unwrap();
    let big = dir.path().join("big");
    run_ok(
        Command::new("objcopy")
            .args(["--remove-section", ".debug_info", "--add-section"])
            .arg(format!(".debug_info={}", zeros.display()))
            .arg(&plain)
            .arg(&big),
    );
    std::fs::remove_file(&zeros).unwrap();
    let bin = dir.path().join("bomb");
    run_ok(
        Command::new("objcopy")
            .arg("--compress-debug-sections=zlib")
            .arg(&big)
            .arg(&bin),
    );
    std::fs::remove_file(&big).unwrap();
    assert!(std::fs::metadata(&bin).unwrap().len() < 8 << 20);
    let data = perf_record(
        dir.path(),
        "bomb.data",
        &["-N", "-g"],
        &[bin.display().to_string()],
    );
    for args in [
        &["report", "--stdio", "--sort", "srcline"][..],
        &["annotate", "--stdio"],
    ] {
        let out = sear()
            .env("HOME", home.path())
            .arg("-vv")
            .args(args)
            .arg("-i")
            .arg(&data)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(
            err.lines().any(|l| l.contains(&bin.display().to_string())
                && l.contains("decompression bomb")),
            "{args:?}: a warning names the file: {err}"
        );
        let hwm = peak_kb(&err);
        assert!(hwm < 128 * 1024, "{args:?}: peak {hwm} kB");
    }
}

/// A program whose function `evil` carries crafted call-frame information (`.cfi_escape`
/// bytes placed in its FDE by the assembler), with `good` beside it doing the same work.
fn crafted_cfi(escape: &str) -> String {
    format!(
        r#"
volatile long sink;
__attribute__((noinline)) void evil(long n) {{
    __asm__ volatile(".cfi_escape {escape}");
    for (long i = 0; i < n; i++) sink += i;
}}
__attribute__((noinline)) void good(long n) {{ for (long i = 0; i < n; i++) sink += i; }}
int main(void) {{
    for (int k = 0; k < 30; k++) {{ evil(10000000); good(10000000); }}
    return 0;
}}
"#
    )
}

/// Unwind rules that never end or never move, met with `--call-graph dwarf`: every command
/// finishes in seconds with at most twice the memory the healthy program's recording costs,
/// and the rest of the recording is still named.
#[test]
fn crafted_unwind_rules_cost_bounded_time_and_memory() {
    have_perf();
    let remember = vec!["0x0a"; 20000].join(", ");
    let cases: Vec<(&str, String)> = vec![
        ("healthy", "0x00".into()),
        // DW_CFA_def_cfa_expression { DW_OP_skip -3 }: an endless loop.
        ("cfa_skip_loop", "0x0f, 0x03, 0x2f, 0xfd, 0xff".into()),
        // { DW_OP_lit1; DW_OP_lit1; DW_OP_bra -5 }: a loop that grows the stack.
        (
            "cfa_bra_loop",
            "0x0f, 0x05, 0x31, 0x31, 0x28, 0xfb, 0xff".into(),
        ),
        // DW_CFA_expression for the return address { DW_OP_skip -3 }.
        ("ra_skip_loop", "0x10, 0x10, 0x03, 0x2f, 0xfd, 0xff".into()),
        // CFA = RSP + 0 with the return address at the CFA: no progress.
        ("no_progress", "0x0c, 0x07, 0x00, 0x90, 0x00".into()),
        // 20,000 DW_CFA_remember_state.
        ("remember_20000", remember),
    ];
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut healthy_peak = 0;
    for (name, escape) in &cases {
        let bin = build_c(dir.path(), name, &crafted_cfi(escape), &["-O1", "-g"]);
        let data = dir.path().join(format!("{name}.data"));
        run_ok(
            sear()
                .env("HOME", home.path())
                .args([
                    "record",
                    "-q",
                    "-N",
                    "--call-graph",
                    "dwarf",
                    "-F",
                    "500",
                    "-o",
                ])
                .arg(&data)
                .arg(&bin),
        );
        let svg = dir.path().join("f.svg");
        let page = dir.path().join("p.html");
        let pb = dir.path().join("p.pb.gz");
        let runs: Vec<Vec<String>> = vec![
            vec!["report".into(), "--stdio".into(), "--children".into()],
            vec!["script".into()],
            vec!["collapse".into()],
            vec!["flame".into(), "-o".into(), svg.display().to_string()],
            vec!["annotate".into(), "--stdio".into(), "good".into()],
            vec!["html".into(), "-o".into(), page.display().to_string()],
            vec![
                "export".into(),
                "--format".into(),
                "pprof".into(),
                "-o".into(),
                pb.display().to_string(),
            ],
        ];
        let mut peak = 0;
        for args in &runs {
            let t = std::time::Instant::now();
            let out = Command::new("timeout")
                .args(["-s", "KILL", "60"])
                .arg(env!("CARGO_BIN_EXE_sear"))
                .env("PERF_CONFIG", "/dev/null")
                .env("HOME", home.path())
                .env_remove("DEBUGINFOD_URLS")
                .arg("-vv")
                .args(args)
                .arg("-i")
                .arg(&data)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name} {args:?} (137: killed, it hung): {err}"
            );
            assert!(
                t.elapsed() < std::time::Duration::from_secs(20),
                "{name} {args:?}: {:?}",
                t.elapsed()
            );
            peak = peak.max(peak_kb(&err));
            if args[0] == "report" {
                let text = stdout_of(&out);
                assert!(
                    text.lines().any(|l| l.ends_with("[.] good")),
                    "{name}: the healthy function is still named: {text}"
                );
            }
        }
        if *name == "healthy" {
            healthy_peak = peak;
        } else {
            assert!(
                peak <= 2 * healthy_peak,
                "{name}: peak {peak} kB, the healthy program's {healthy_peak} kB"
            );
        }
    }
}

/// The code of the crafted-DWARF programs: `main` calls `top`, a hot loop, 40 times.
const TOP_AND_MAIN: &str = r#".text
.globl top
.type top, @function
top:
.Ltop_begin:
    movq $0, %rax
1:  addq %rdi, %rax
    decq %rdi
    jnz 1b
    ret
.Ltop_end:
.size top, .-top
.globl main
.type main, @function
main:
    pushq %rbx
    movl $40, %ebx
2:  movq $50000000, %rdi
    call top
    decl %ebx
    jnz 2b
    xorl %eax, %eax
    popq %rbx
    ret
.size main, .-main
.section .note.GNU-stack,"",@progbits
"#;

/// Assembles `TOP_AND_MAIN` followed by `dwarf` (the debug sections, written in assembly:
/// no compiler makes such things cheaply) into the program `dir/name`.
fn assemble(dir: &Path, name: &str, dwarf: &str) -> std::path::PathBuf {
    let src = dir.join(format!("{name}.s"));
    std::fs::write(&src, format!("{TOP_AND_MAIN}{dwarf}")).unwrap();
    let bin = dir.join(name);
    run_ok(Command::new("gcc").arg("-o").arg(&bin).arg(&src));
    bin
}

/// A program whose function `top` has debug info nesting `depth` inlined subroutines.
fn deep_inlines(dir: &Path, depth: usize) -> std::path::PathBuf {
    let mut s = String::from(
        r#".section .debug_abbrev,"",@progbits
.Labbrev:
    .uleb128 1
    .uleb128 0x11
    .byte 1
    .uleb128 0x3
    .uleb128 0x8
    .uleb128 0x11
    .uleb128 0x1
    .uleb128 0x12
    .uleb128 0x7
    .uleb128 0
    .uleb128 0
    .uleb128 2
    .uleb128 0x2e
    .byte 1
    .uleb128 0x3
    .uleb128 0x8
    .uleb128 0x11
    .uleb128 0x1
    .uleb128 0x12
    .uleb128 0x7
    .uleb128 0
    .uleb128 0
    .uleb128 3
    .uleb128 0x1d
    .byte 1
    .uleb128 0x3
    .uleb128 0x8
    .uleb128 0x11
    .uleb128 0x1
    .uleb128 0x12
    .uleb128 0x7
    .uleb128 0
    .uleb128 0
    .uleb128 0
.section .debug_info,"",@progbits
.Linfo:
    .long .Linfo_end - .Linfo - 4
    .value 4
    .long .Labbrev
    .byte 8
    .uleb128 1
    .asciz "deep.c"
    .quad .Ltop_begin
    .quad .Ltop_end - .Ltop_begin
    .uleb128 2
    .asciz "top"
    .quad .Ltop_begin
    .quad .Ltop_end - .Ltop_begin
"#,
    );
    for i in 0..depth {
        s.push_str(&format!(
            "    .uleb128 3\n    .asciz \"f{i}\"\n    .quad .Ltop_begin\n    .quad .Ltop_end - .Ltop_begin\n"
        ));
    }
    for _ in 0..depth + 2 {
        s.push_str("    .byte 0\n");
    }
    s.push_str(".Linfo_end:\n");
    assemble(dir, &format!("deep{depth}"), &s)
}

/// DWARF nesting 10,000 inlined subroutines (addr2line parsed them by recursion: a thread's
/// stack overflowed): every command ends, names `top`, keeps the first 256 levels and
/// warns once naming the file; 100 levels are read as they are, inline frames included.
#[test]
fn deeply_nested_inline_frames_are_cut_with_a_warning() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for depth in [100, 10_000] {
        let bin = deep_inlines(dir.path(), depth);
        let data = dir.path().join(format!("deep{depth}.data"));
        run_ok(
            sear()
                .env("HOME", home.path())
                .args([
                    "record",
                    "-q",
                    "-N",
                    "--call-graph",
                    "dwarf",
                    "-F",
                    "500",
                    "-o",
                ])
                .arg(&data)
                .arg(&bin),
        );
        for args in [
            &["report", "--stdio", "--children"][..],
            &["report", "--stdio", "--sort", "sym,srcline"],
            &["script"],
            &["collapse"],
            &["annotate", "--stdio", "top"],
        ] {
            let out = Command::new("timeout")
                .args(["-s", "KILL", "60"])
                .arg(env!("CARGO_BIN_EXE_sear"))
                .env("PERF_CONFIG", "/dev/null")
                .env("HOME", home.path())
                .args(args)
                .arg("-i")
                .arg(&data)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{depth} {args:?}: {err}");
            let text = stdout_of(&out);
            let warned = err
                .lines()
                .filter(|l| l.contains(&bin.display().to_string()) && l.contains("nests"))
                .count();
            if depth == 100 {
                assert_eq!(warned, 0, "{args:?}: {err}");
                if args[0] == "collapse" {
                    assert!(
                        text.contains("top;f0;f1;f2") && text.contains("f98;f99"),
                        "inline frames read: {text}"
                    );
                }
            } else {
                assert_eq!(warned, 1, "{args:?}: {err}");
                assert!(text.contains("top"), "{args:?}: {text}");
                if args[0] == "collapse" {
                    assert!(
                        text.contains("top;f0;f1;f2")
                            && text.contains(";f255 ")
                            && !text.contains(";f256"),
                        "the first 256 levels kept: {}",
                        &text[..text.len().min(2000)]
                    );
                }
            }
        }
    }
}

/// A program whose `top` has DWARF that loops and a line program that jumps: its
/// subprogram's `DW_AT_specification` leads into a cycle of `DW_AT_abstract_origin` and
/// `DW_AT_specification`, an inlined subroutine is its own abstract origin (called from line
/// 2^48), and, if `wild`, the line program advances the line and address registers by values
/// near 2^63 before its sane sequence.
fn cyclic_origins_and_wild_lines(dir: &Path, wild: bool) -> std::path::PathBuf {
    let dwarf = r#".section .debug_abbrev,"",@progbits
.Labbrev:
    .uleb128 1
    .uleb128 0x11
    .byte 1
    .uleb128 0x3
    .uleb128 0x8
    .uleb128 0x11
    .uleb128 0x1
    .uleb128 0x12
    .uleb128 0x7
    .uleb128 0x10
    .uleb128 0x17
    .uleb128 0
    .uleb128 0
    .uleb128 2
    .uleb128 0x2e
    .byte 1
    .uleb128 0x47
    .uleb128 0x13
    .uleb128 0x11
    .uleb128 0x1
    .uleb128 0x12
    .uleb128 0x7
    .uleb128 0
    .uleb128 0
    .uleb128 3
    .uleb128 0x2e
    .byte 0
    .uleb128 0x31
    .uleb128 0x13
    .uleb128 0
    .uleb128 0
    .uleb128 4
    .uleb128 0x2e
    .byte 0
    .uleb128 0x47
    .uleb128 0x13
    .uleb128 0
    .uleb128 0
    .uleb128 5
    .uleb128 0x1d
    .byte 0
    .uleb128 0x31
    .uleb128 0x13
    .uleb128 0x11
    .uleb128 0x1
    .uleb128 0x12
    .uleb128 0x7
    .uleb128 0x58
    .uleb128 0xb
    .uleb128 0x59
    .uleb128 0xf
    .uleb128 0
    .uleb128 0
    .uleb128 0
.section .debug_info,"",@progbits
.Linfo:
    .long .Linfo_end - .Linfo - 4
    .value 4
    .long .Labbrev
    .byte 8
    .uleb128 1
    .asciz "wild.c"
    .quad .Ltop_begin
    .quad .Ltop_end - .Ltop_begin
    .long .Lline
.Ldie_a:
    .uleb128 3
    .long .Ldie_b - .Linfo
.Ldie_b:
    .uleb128 4
    .long .Ldie_a - .Linfo
    .uleb128 2
    .long .Ldie_a - .Linfo
    .quad .Ltop_begin
    .quad .Ltop_end - .Ltop_begin
.Ldie_self:
    .uleb128 5
    .long .Ldie_self - .Linfo
    .quad .Ltop_begin
    .quad .Ltop_end - .Ltop_begin
    .byte 1
    .uleb128 0xffffffffffff
    .byte 0
    .byte 0
.Linfo_end:
.section .debug_line,"",@progbits
.Lline:
    .long .Lline_end - .Lline - 4
    .value 4
    .long .Lline_header_end - .Lline_header
.Lline_header:
    .byte 1
    .byte 1
    .byte 1
    .byte -5
    .byte 14
    .byte 13
    .byte 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1
    .byte 0
    .asciz "wild.c"
    .uleb128 0
    .uleb128 0
    .uleb128 0
    .byte 0
.Lline_header_end:
WILD_SEQUENCE    .byte 0
    .uleb128 9
    .byte 2
    .quad .Ltop_begin
    .byte 3
    .sleb128 -1000
    .byte 1
    .byte 2
    .uleb128 0x10000
    .byte 0
    .uleb128 1
    .byte 1
.Lline_end:
"#;
    let wild_sequence = r#"    .byte 0
    .uleb128 9
    .byte 2
    .quad .Ltop_begin
    .byte 3
    .sleb128 0x3fffffffffffffff
    .byte 1
    .byte 2
    .uleb128 0xffffffffffffff00
    .byte 1
    .byte 3
    .sleb128 -0x7fffffffffffffff
    .byte 2
    .uleb128 0x7fffffffffffffff
    .byte 1
    .byte 0
    .uleb128 1
    .byte 1
"#;
    match wild {
        true => assemble(dir, "wild", &dwarf.replace("WILD_SEQUENCE", wild_sequence)),
        false => assemble(dir, "cyclic", &dwarf.replace("WILD_SEQUENCE", "")),
    }
}

/// Cyclic origins, without and with a wild line program (`cyclic_origins_and_wild_lines`):
/// every command ends within seconds, exits 0 and still names `top`; with the wild line
/// program (gimli refuses the overflowing address) the names come from the symbol table and
/// the file is named once.
#[test]
fn cyclic_origins_and_wild_line_programs_end() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for wild in [false, true] {
        let bin = cyclic_origins_and_wild_lines(dir.path(), wild);
        let data = dir.path().join(format!("{wild}.data"));
        run_ok(
            sear()
                .env("HOME", home.path())
                .args([
                    "record",
                    "-q",
                    "-N",
                    "--call-graph",
                    "dwarf",
                    "-F",
                    "500",
                    "-o",
                ])
                .arg(&data)
                .arg(&bin),
        );
        for args in [
            &["report", "--stdio"][..],
            &["report", "--stdio", "--sort", "sym,srcline"],
            &["script", "-F", "+srcline"],
            &["collapse"],
            &["annotate", "--stdio", "top"],
        ] {
            let started = std::time::Instant::now();
            let out = Command::new("timeout")
                .args(["-s", "KILL", "60"])
                .arg(env!("CARGO_BIN_EXE_sear"))
                .env("PERF_CONFIG", "/dev/null")
                .env("HOME", home.path())
                .args(args)
                .arg("-i")
                .arg(&data)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{args:?} (137: hung): {err}");
            assert!(
                started.elapsed() < std::time::Duration::from_secs(20),
                "{args:?} took {:?}",
                started.elapsed()
            );
            let text = stdout_of(&out);
            assert!(text.contains("top"), "{args:?}: {text}");
            // gimli refuses the overflowing address advance: the unit's frames come from the
            // symbol table, and the file is named once (annotate reads no inline frames).
            let warned = err
                .lines()
                .filter(|l| {
                    l.contains(&bin.display().to_string()) && l.contains("DWARF unreadable")
                })
                .count();
            let want = match (wild, args[0]) {
                (false, _) => 0..=0,
                (true, "annotate") => 0..=1,
                (true, _) => 1..=1,
            };
            assert!(want.contains(&warned), "{args:?}: {err}");
            if !wild && args[0] == "collapse" {
                // The self-originated inline frame has no name (perf prints `??` too).
                assert!(text.contains("main;top;?? "), "{text}");
            }
        }
    }
}
