//! `report --mem-mode`, perf's memory-access view, against perf 6.1 on the
//! same recordings: page faults sampled with their data addresses
//! (`record -e page-faults -d`, the software event that records them here)
//! of a program that touches a global table, a static one, a zeroed one and
//! a heap block page by page.

mod common;

use common::*;

const PROG: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
char table[8 << 20] = {1};
static char local_tab[2 << 20] = {2};
char bss_obj[4 << 20];
__attribute__((noinline)) void touch(char *p, size_t n) {
    for (size_t i = 0; i < n; i += 4096) p[i]++;
}
__attribute__((noinline)) void work(void) {
    touch(table, sizeof table);
    touch(local_tab, sizeof local_tab);
    touch(bss_obj, sizeof bss_obj);
    char *h = malloc(16 << 20);
    touch(h, 16 << 20);
    free(h);
}
int main(void) {
    work();
    /* A shared file mapping (dcacheline's [s]) and a second process's
       private anonymous memory (its lines told apart by process). */
    FILE *f = tmpfile();
    if (f && ftruncate(fileno(f), 1 << 20) == 0) {
        char *s = mmap(0, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
        if (s != MAP_FAILED) touch(s, 1 << 20);
    }
    pid_t p = fork();
    if (p == 0) {
        char *h = malloc(4 << 20);
        touch(h, 4 << 20);
        _exit(0);
    }
    waitpid(p, 0, 0);
    return 0;
}
"#;

#[test]
fn mem_mode_equals_perf() {
    if !have_perf() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pie = build_c(dir.path(), "mem_pie", PROG, &["-O1", "-g"]);
    let nopie = build_c(
        dir.path(),
        "mem_nopie",
        PROG,
        &["-O1", "-g", "-no-pie", "-fno-pie"],
    );
    let run = |p: &std::path::Path| vec![p.display().to_string()];
    let plain = perf_record(
        dir.path(),
        "mem.data",
        &["-e", "page-faults", "-c", "1", "-d"],
        &run(&nopie),
    );
    let graph = perf_record(
        dir.path(),
        "mem_g.data",
        &["-e", "page-faults", "-c", "1", "-d", "-g"],
        &run(&pie),
    );
    // With physical addresses (0 for page faults: the page is not there yet).
    let phys = perf_record(
        dir.path(),
        "mem_phys.data",
        &["-e", "page-faults", "-c", "1", "-d", "--phys-data"],
        &run(&nopie),
    );
    // In pipe mode.
    let pipe = perf_record(
        dir.path(),
        "mem_pipe.data",
        &["-e", "page-faults", "-c", "1", "-d", "-o-"],
        &run(&nopie),
    );
    // sear's own recording of the same.
    let ours = dir.path().join("mem_sear.data");
    run_ok(
        sear()
            .args(["record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o"])
            .arg(&ours)
            .arg("--")
            .arg(&pie),
    );
    let sets: Vec<Vec<&str>> = vec![
        vec!["--mem-mode"],
        vec!["--mem-mode", "-n"],
        vec!["--mem-mode", "-q"],
        vec!["--mem-mode", "-v"],
        vec![
            "--mem-mode",
            "--sort",
            "mem,symbol_daddr,dso_daddr,tlb,snoop,locked,blocked,data_page_size",
        ],
        vec!["--mem-mode", "--sort", "dso_daddr,symbol_daddr"],
        vec!["--mem-mode", "--sort", "symbol_daddr", "-w", "12"],
        vec!["--mem-mode", "--sort", "+dso_daddr"],
        vec!["--mem-mode", "--sort", "sym"],
        vec!["--mem-mode", "-F", "overhead,sample,mem"],
        vec!["--mem-mode", "--sort", "sym,mem", "-t", ";"],
        vec!["--mem-mode", "-g", "caller"],
        vec!["--mem-mode", "--children"],
        vec!["--mem-mode", "--dsos", "mem_pie"],
        vec!["--mem-mode", "--sort", "phys_daddr,sym"],
        vec!["--mem-mode", "--sort", "dcacheline"],
        vec!["--mem-mode", "--sort", "dcacheline,pid", "-v"],
        vec!["--mem-mode", "--sort", "symbol_daddr,dcacheline", "-n"],
        vec!["--mem-mode", "--sort", "dcacheline,sym", "-w", "20"],
        vec!["--mem-mode", "--sort", "symbol_iaddr"],
        vec!["--mem-mode", "--sort", "symbol_iaddr,symbol_daddr", "-v"],
        vec!["--mem-mode", "--sort", "sym,symbol_iaddr,dso", "-n"],
    ];
    let mut failures = Vec::new();
    for f in [&plain, &graph, &phys, &pipe, &ours] {
        for args in &sets {
            // (A pipe names no copy of the vdso: perf's -v names it by a
            // temporary file of its own.)
            if f == &pipe && args.contains(&"-v") {
                continue;
            }
            let theirs = perf_report(f, args);
            let mine = sear_report(f, args);
            let label = format!("{} {args:?}", f.display());
            failures.extend(difference(&label, &theirs, &mine));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Not vacuous: the view shows the data objects by name and offset, the
    // heap as anonymous memory, and counts weights.
    let text = sear_report(&plain, &["--mem-mode"]);
    for want in [
        "# Total weight : ",
        "[.] table+0x",
        "local_tab+0x",
        "anon  ",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
    // Cache lines: of the shared file mapping, of addresses no map of the
    // sample's mode holds, and of data objects (perf's offset from the
    // line in the map's terms to the object in the process's).
    let lines = sear_report(&plain, &["--mem-mode", "--sort", "dcacheline"]);
    for want in ["[s] ", "[X] 0x", "[.] local_tab+0xffff"] {
        assert!(lines.contains(want), "no {want:?} in:\n{lines}");
    }
}

#[test]
fn memory_keys_need_mem_mode() {
    if !have_perf() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let f = perf_record(
        dir.path(),
        "mem.data",
        &["-e", "page-faults", "-d"],
        &["true".to_owned()],
    );
    for key in ["symbol_daddr", "symbol_iaddr"] {
        let out = sear()
            .args(["report", "--stdio", "--sort", key, "-i"])
            .arg(&f)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--mem-mode"), "{err}");
    }
    // A recording without data addresses: perf's message and no rows.
    let plain = perf_record(
        dir.path(),
        "plain.data",
        &["-e", "page-faults"],
        &["true".to_owned()],
    );
    let out = run_ok(
        sear()
            .args(["report", "--stdio", "--mem-mode", "-i"])
            .arg(&plain),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("Did you call perf record without -d?"));
}

/// Two programs built alike but for their table's name, so their data
/// lies at the same addresses: perf tells `symbol_daddr` entries apart by
/// the data address and the symbol's name, not by the map, so the loader's
/// reads of `_DYNAMIC` or the ELF header in both are one entry each, while
/// `alpha+0x0` and `beta+0x0` stay two.
#[test]
fn symbol_daddr_entries_are_one_per_address_and_name_as_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    const TWIN: &str = r#"
#include <stddef.h>
char NAME[4 << 20] = {1};
__attribute__((noinline)) void touch(char *p, size_t n) { for (size_t i = 0; i < n; i += 4096) p[i]++; }
int main(void) { touch(NAME, sizeof NAME); return 0; }
"#;
    let flags = ["-O1", "-g", "-no-pie", "-fno-pie"];
    let a = build_c(
        dir.path(),
        "alpha",
        TWIN,
        &[&flags[..], &["-DNAME=alpha"]].concat(),
    );
    let b = build_c(
        dir.path(),
        "beta",
        TWIN,
        &[&flags[..], &["-DNAME=beta"]].concat(),
    );
    let data = perf_record(
        dir.path(),
        "twins.data",
        &["-e", "page-faults", "-c", "1", "-d"],
        &[
            "sh".into(),
            "-c".into(),
            format!("{}; {}", a.display(), b.display()),
        ],
    );
    let mut failures = Vec::new();
    for sort in ["symbol_daddr", "sym,symbol_daddr", "symbol_daddr,dso_daddr"] {
        let args = ["--mem-mode", "--sort", sort];
        let theirs = perf_report(&data, &args);
        let mine = sear_report(&data, &args);
        failures.extend(difference(sort, &theirs, &mine));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let text = sear_report(&data, &["--mem-mode", "--sort", "symbol_daddr"]);
    assert!(
        text.contains("[.] alpha+0x0 ") && text.contains("[.] beta+0x0 "),
        "{text}"
    );
}
