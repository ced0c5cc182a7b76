//! `script -F` fields beyond the sample line's usual ones (misc, tod, addr,
//! data_src, weight, ins_lat, phys_addr, page sizes, iregs, uregs, insn,
//! insnlen, srccode, flags, brstack*): perf 6.1 and sear read the same
//! recordings and print the same bytes.
//!
//! The recording counts page faults (one sample per fault: what the
//! program does, not where a timer lands) with every sample field the
//! kernel gives a software event here: data address and source, weight,
//! physical address, page sizes, interrupt and user registers, call chains,
//! and CLOCK_DATA (`-k mono`) for the time of day.

mod common;

use std::path::Path;

use common::*;

/// Touches 1 MiB of fresh anonymous memory four times and a 1 MiB `.bss`
/// array once, a page at a time, through an inlined helper whose lines are
/// indented with tabs (srccode prints them as they are).
const FAULTS_C: &str = "#include <sys/mman.h>
static char table[1 << 20];
static inline __attribute__((always_inline)) void touch(char *p, long n) {
\tfor (long i = 0; i < n; i += 4096)
\t\tp[i] = 1;
}
int main(void) {
\tfor (int r = 0; r < 4; r++) {
\t\tchar *p = mmap(0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
\t\ttouch(p, 1 << 20);
\t\tmunmap(p, 1 << 20);
\t}
\ttouch(table, sizeof table);
\treturn 0;
}
";

/// perf script and sear script on `data` with `args`: (status, stdout).
fn both(data: &Path, args: &[&str]) -> ((bool, String), (bool, String)) {
    let p = perf()
        .arg("script")
        .arg("-i")
        .arg(data)
        .args(args)
        .output()
        .expect("run perf script");
    let s = sear()
        .args(["script", "--short-names", "--raw-return-addresses", "-i"])
        .arg(data)
        .args(args)
        .output()
        .expect("run sear script");
    (
        (
            p.status.success(),
            String::from_utf8_lossy(&p.stdout).into(),
        ),
        (
            s.status.success(),
            String::from_utf8_lossy(&s.stdout).into(),
        ),
    )
}

/// Fails listing, per row, the first line where sear's output differs
/// from perf's (outputs are thousands of lines).
fn assert_same(data: &Path, rows: &[Vec<&str>]) {
    let mut differ = Vec::new();
    for args in rows {
        let ((pok, p), (sok, s)) = both(data, args);
        assert!(pok, "perf script {args:?} failed");
        if !sok || p != s {
            let at = first_difference(&p, &s);
            let line = |t: &str| t.lines().nth(at).unwrap_or("<end>").to_owned();
            differ.push(format!(
                "{args:?} (sear ok: {sok}), line {}:\n  perf: {}\n  sear: {}",
                at + 1,
                line(&p),
                line(&s)
            ));
        }
        assert!(
            p.lines().count() > 10,
            "{args:?}: perf printed almost nothing"
        );
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn sample_fields_print_what_perf_prints() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_c(
        dir.path(),
        "faults",
        FAULTS_C,
        &["-O1", "-g", "-fno-omit-frame-pointer"],
    );
    let data = perf_record(
        dir.path(),
        "faults.data",
        &[
            "-e",
            "page-faults",
            "-c",
            "1",
            "-d",
            "-W",
            "--phys-data",
            "--data-page-size",
            "--code-page-size",
            "-I",
            "--user-regs=ax,bx,sp,ip",
            "-k",
            "mono",
            "-g",
        ],
        &[exe.display().to_string()],
    );
    let all = "comm,tid,misc,tod,time,event,addr,ip,sym,dso,symoff,weight,phys_addr,\
               data_page_size,code_page_size,iregs,uregs,data_src";
    let rows: Vec<Vec<&str>> = vec![
        vec!["-F", all],
        vec!["-F", all, "-G"],
        vec!["-F", all, "-G", "--ns"],
        vec!["-F", "+addr"],
        vec!["-F", "addr,sym"],
        vec!["-F", "ip,addr,dso,sym", "-G"],
        vec!["-F", "ip,sym,insn,insnlen"],
        vec!["-F", "ip,sym,insn,insnlen", "-G"],
        vec!["-F", "tid,ip,sym,srccode"],
        vec!["-F", "tid,ip,sym,srccode", "-G"],
        vec!["-F", "ip,srcline,srccode", "-G"],
        vec![
            "-F",
            "tid,ip,ins_lat,flags,ipc,callindent,machine_pid,vcpu,synth,metric",
            "-G",
        ],
        vec!["--show-mmap-events", "-F", "+misc"],
        vec!["--show-task-events", "-F", "+misc,+tod", "--ns"],
    ];
    assert_same(&data, &rows);
    // The samples really carry what the rows print: data addresses named
    // by the program's own symbols, anonymous pages, decoded instructions,
    // source text.
    let (_, (_, s)) = both(&data, &["-F", "addr,sym,dso"]);
    let own = format!("({})", exe.display());
    assert!(
        s.lines()
            .any(|l| l.ends_with(&own) && !l.contains("[unknown]")),
        "no fault named by a symbol of the program:\n{s}"
    );
    assert!(
        s.contains("[unknown] (//anon)"),
        "no fault in anonymous memory"
    );
    let (_, (_, s)) = both(&data, &["-F", "ip,insn,srccode", "-G"]);
    assert!(s.contains(" insn: "), "no instruction bytes");
    assert!(s.contains("\t\tp[i] = 1;"), "no source line with its tabs");
}

/// `sear record -k` gives its recording perf's clock data: perf prints
/// the time of day of its samples as sear does, and its header the clock.
#[test]
fn clock_data_of_sear_recordings_gives_the_time_of_day() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_c(dir.path(), "faults", FAULTS_C, &["-O1", "-g"]);
    let today = || {
        let out = std::process::Command::new("date")
            .arg("+%Y-%m-%d")
            .output()
            .expect("run date");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let before = today();
    let data = dir.path().join("k.data");
    run_ok(
        sear()
            .args([
                "record",
                "-q",
                "-k",
                "mono",
                "-e",
                "page-faults",
                "-c",
                "1",
                "-o",
            ])
            .arg(&data)
            .arg("--")
            .arg(&exe),
    );
    assert_same(
        &data,
        &[
            vec!["-F", "comm,tid,tod,time,event,ip,sym"],
            vec!["-F", "+tod", "--ns"],
        ],
    );
    let header = stdout_of(&run_ok(
        perf().args(["report", "--header-only", "-i"]).arg(&data),
    ));
    assert!(header.contains("# clockid: monotonic (1)"), "{header}");
    assert!(header.contains("(TOD) = "), "{header}");
    // The time of day is today's (the reference reading is the wall
    // clock; the day may turn during the test).
    let (_, (_, s)) = both(&data, &["-F", "tod"]);
    assert!(s.starts_with(&before) || s.starts_with(&today()), "{s}");
}

#[test]
fn fields_a_recording_lacks_are_refused_as_perf_refuses_them() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let data = two_process_recording(dir.path());
    for f in ["+tod", "+addr", "ip,weight", "ip,iregs", "ip,phys_addr"] {
        let ((pok, _), (sok, _)) = both(&data, &["-F", f]);
        assert!(!pok, "perf accepted -F {f}");
        assert!(
            !sok,
            "sear accepted -F {f}, which the recording cannot give"
        );
    }
}

#[test]
fn branch_stacks_print_what_perf_prints() {
    have_perf();
    let data = wild_dir().join("perf.data.branch-4.14");
    let rows: Vec<Vec<&str>> = vec![
        vec!["-F", "comm,tid,ip,brstack"],
        vec!["-F", "ip,brstack,dso"],
        vec!["-F", "ip,sym,dso,brstacksym"],
        vec!["-F", "ip,brstacksym"],
        vec!["-F", "ip,dso,brstackoff"],
        // Kernel branches only: perf reads no kernel code, so each
        // sample's blocks are a line break.
        vec!["-F", "ip,brstackinsn"],
    ];
    assert_same(&data, &rows);
    // A 3.4 recording with call chains and branch stacks into user space:
    // the same, but where perf names the recorded [vdso] from this
    // machine's vdso (another kernel's code, so sear leaves it unnamed).
    let data = wild_dir().join("perf.data.callgraph_and_branch-3.4");
    for f in ["ip,sym,dso,brstacksym", "ip,dso,brstackoff", "ip,brstack"] {
        let ((_, p), (sok, s)) = both(&data, &["-F", f]);
        assert!(sok, "sear failed on -F {f}");
        assert_eq!(p.lines().count(), s.lines().count(), "-F {f}");
        for (pl, sl) in p.lines().zip(s.lines()) {
            assert!(
                pl == sl || pl.contains("[vdso]"),
                "-F {f}: differs beyond the vdso:\n  perf: {pl}\n  sear: {sl}"
            );
        }
    }
}
