//! Kernel, JIT and vdso symbols compared with what Linux perf 6.1 prints for the same
//! recordings: each test records a real program with `perf record -e cpu-clock`, runs
//! `perf script`, and looks every frame perf attributed to that source up again here.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use symbols::{find_vdso, DebugFinder, Kallsyms, KernelFinder, PerfMap, Reason, RefReloc};

const PERF: &str = "/usr/bin/perf";

fn perf() -> Command {
    assert!(
        Path::new(PERF).exists(),
        "Linux perf is required for these tests (apt-get install linux-perf)"
    );
    let mut c = Command::new(PERF);
    c.env("PERF_CONFIG", "/dev/null");
    c
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `perf record -N -e cpu-clock ARGS -o DATA -- CMD...`; -N keeps the test out of
/// ~/.debug, so what is found here is found without perf's own cache.
fn record(data: &Path, perf_args: &[&str], cmd: &[&str]) {
    // In the recording's directory: programs may leave files behind (node
    // writes isolate-*-v8.log logs).
    let mut c = perf();
    if let Some(d) = data.parent() {
        c.current_dir(d);
    }
    run(c
        .args(["record", "-N", "-e", "cpu-clock", "-o"])
        .arg(data)
        .args(perf_args)
        .arg("--")
        .args(cmd));
}

#[derive(Debug, Clone)]
struct Frame {
    pid: Option<u32>,
    ip: u64,
    /// `(name, offset)`, or `None` for `[unknown]`.
    sym: Option<(String, u64)>,
    dso: String,
}

/// Parses `perf script -F [pid,]ip,sym,symoff,dso` output, with or without callchains.
fn script_frames(data: &Path, fields: &str) -> Vec<Frame> {
    let text = run(perf().args(["script", "-F", fields, "-i"]).arg(data));
    let mut pid = None;
    let mut frames = Vec::new();
    let has_pid = fields.starts_with("pid,");
    for line in text.lines() {
        let mut t = line.trim();
        if t.is_empty() {
            continue;
        }
        // Callchain frames are indented with a tab; a sample line starts with the pid.
        if has_pid && !line.starts_with('\t') {
            let (p, rest) = t.split_once(' ').unwrap_or((t, ""));
            pid = p.parse().ok();
            t = rest.trim();
        }
        let Some(paren) = t.rfind(" (") else {
            continue;
        };
        let dso = t[paren + 2..].trim_end_matches(')').to_owned();
        let head = &t[..paren];
        let (ip, symoff) = head.split_once(' ').expect("ip and symbol");
        let ip = u64::from_str_radix(ip, 16).expect("hex ip");
        let sym = match symoff {
            "[unknown]" => None,
            s => Some(match s.rsplit_once("+0x") {
                Some((n, o)) => (n.to_owned(), u64::from_str_radix(o, 16).expect("hex")),
                None => (s.to_owned(), 0),
            }),
        };
        frames.push(Frame { pid, ip, sym, dso });
    }
    frames
}

fn build_id_of(data: &Path, dso: &str) -> Option<Vec<u8>> {
    let text = run(perf().args(["buildid-list", "-i"]).arg(data));
    text.lines().find_map(|l| {
        let (id, name) = l.split_once(' ')?;
        (name == dso).then(|| {
            (0..id.len() / 2)
                .map(|i| u8::from_str_radix(&id[2 * i..2 * i + 2], 16).expect("hex id"))
                .collect()
        })
    })
}

#[derive(Debug)]
struct Mmap {
    pid: i64,
    start: u64,
    pgoff: u64,
    name: String,
}

/// The MMAP/MMAP2 records, from `perf script --show-mmap-events`.
fn mmaps(data: &Path) -> Vec<Mmap> {
    let text = run(perf()
        .args(["script", "--show-mmap-events", "-F", "comm", "-i"])
        .arg(data));
    let mut out = Vec::new();
    for l in text.lines() {
        let Some(at) = l.find("PERF_RECORD_MMAP") else {
            continue;
        };
        // PERF_RECORD_MMAP2 27994/27994: [0x7f7fe894d000(0x2000) @ 0 00:00 0 0]: r-xp [vdso]
        let rest = &l[at..];
        let (_, rest) = rest.split_once(' ').unwrap();
        let (pids, rest) = rest.split_once(": [").unwrap();
        let pid = pids.split('/').next().unwrap().parse().unwrap();
        let (start, rest) = rest.split_once('(').unwrap();
        let (_len, rest) = rest.split_once(") @ ").unwrap();
        let pgoff = rest.split([' ', ']']).next().unwrap();
        let name = rest.split_once("]: ").unwrap().1;
        let name = name.split_once(' ').map_or(name, |(_, n)| n);
        let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
        out.push(Mmap {
            pid,
            start: hex(start),
            pgoff: hex(pgoff),
            name: name.to_owned(),
        });
    }
    out
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Compares our answer for every frame with perf's; returns (matches, total) and prints
/// the first mismatches.
fn tally(what: &str, pairs: &[(Frame, Option<(String, u64)>)]) -> (usize, usize) {
    let mut good = 0;
    let mut bad = Vec::new();
    for (f, ours) in pairs {
        if &f.sym == ours {
            good += 1;
        } else if bad.len() < 20 {
            bad.push(format!(
                "{:#x}: perf {:?} in {}, ours {:?}",
                f.ip, f.sym, f.dso, ours
            ));
        }
    }
    let unique: std::collections::HashSet<u64> = pairs.iter().map(|(f, _)| f.ip).collect();
    eprintln!(
        "{what}: {good}/{} frames ({} unique addresses) match perf ({:.3}%)",
        pairs.len(),
        unique.len(),
        100.0 * good as f64 / pairs.len().max(1) as f64
    );
    for b in &bad {
        eprintln!("  {b}");
    }
    (good, pairs.len())
}

/// The kernel test's symbolization, following perf's rules for the caller: a kernel
/// address is looked up as it is (perf's kernel map grows to its kallsyms symbols' range
/// once loaded, beyond the kernel MMAP record's length, so that record does not bound it),
/// and a module symbol counts only if the recording has a map for that module.
fn kernel_answer(k: &Kallsyms, ip: u64, modules: &[&Mmap]) -> Option<(String, u64)> {
    let hit = k.lookup(ip).ok()?;
    match hit.module {
        None => Some((hit.name.to_owned(), hit.offset)),
        Some(m) if modules.iter().any(|mm| mm.name == m) => Some((hit.name.to_owned(), hit.offset)),
        Some(_) => None,
    }
}

#[test]
fn kernel_symbols_match_perf_script() {
    let dir = tempdir();
    let data = dir.path().join("k.data");
    // Kernel-heavy and varied: copies, path walks, stat, pipes, page faults.
    record(
        &data,
        &["-a", "-g"],
        &[
            "sh",
            "-c",
            "dd if=/dev/zero of=/dev/null bs=4k count=300000 2>/dev/null; \
             ls -lR /usr/share >/dev/null 2>&1; cat /proc/kallsyms | wc -l >/dev/null; \
             find /usr/lib -name '*.so*' >/dev/null 2>&1",
        ],
    );
    let id = build_id_of(&data, "[kernel.kallsyms]").expect("kernel build id in perf.data");
    let maps = mmaps(&data);
    let kmap = maps
        .iter()
        .find(|m| m.pid == -1 && m.name.starts_with("[kernel.kallsyms]"))
        .expect("kernel MMAP record");
    let reloc = RefReloc {
        name: &kmap.name["[kernel.kallsyms]".len()..],
        addr: kmap.pgoff,
    };
    let modules: Vec<&Mmap> = maps
        .iter()
        .filter(|m| m.pid == -1 && !m.name.starts_with("[kernel.kallsyms]"))
        .collect();

    let finder = KernelFinder::default();
    let running = finder
        .running_build_id()
        .expect("/sys/kernel/notes has a build id");
    assert_eq!(running, id, "recorded on this kernel");
    let k = finder
        .for_recording(Some(&id), Some(reloc))
        .expect("the running kernel's kallsyms");
    // The copy perf record left in the build-id cache (the table as it was
    // then), else the running kernel's.
    let source = k.source().expect("a source").to_path_buf();
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    assert!(
        source == Path::new("/proc/kallsyms") || source.ends_with(format!("{hex}/kallsyms")),
        "{}",
        source.display()
    );
    assert_eq!(k.skipped_lines(), 0);

    // (Frames at the kernel text's first byte are left out: there
    // /proc/kallsyms lists four aliases (`srso_alias_untrain_ret`,
    // `_stext`, `_text`, `__pi__text`); perf 6.1 once printed no symbol
    // for a sample there where sear names the alias perf's rules keep.
    // Seen once in many system-wide runs; not yet understood.)
    // (Also left out: kernel addresses perf looked up in a process's maps,
    // `[unknown]` in `[unknown]`: a sample whose cpumode says user space
    // while its address is the kernel's, seen now and then system-wide.)
    let frames: Vec<Frame> = script_frames(&data, "ip,sym,symoff,dso")
        .into_iter()
        .filter(|f| f.ip >= 0xffff_8000_0000_0000 && f.ip != kmap.pgoff)
        .filter(|f| f.sym.is_some() || f.dso != "[unknown]")
        .collect();
    let resolved = frames.iter().filter(|f| f.sym.is_some()).count();
    assert!(
        resolved >= 200,
        "too few resolved kernel frames: {resolved}"
    );
    let pairs: Vec<_> = frames
        .iter()
        .map(|f| (f.clone(), kernel_answer(&k, f.ip, &modules)))
        .collect();
    let (good, total) = tally("kernel (/proc/kallsyms)", &pairs);
    assert_eq!(good, total, "every kernel frame as perf names it");

    // The same recording seen from "another kernel": the running kernel's kallsyms must
    // not be used; a build-id cache copy must be, and gives the same answers.
    let cache = dir.path().join("cache");
    let other_notes = dir.path().join("notes");
    let mut notes = Vec::new();
    notes.extend(4u32.to_ne_bytes());
    notes.extend(20u32.to_ne_bytes());
    notes.extend(3u32.to_ne_bytes());
    notes.extend(b"GNU\0");
    notes.extend([0x5a; 20]);
    std::fs::write(&other_notes, notes).unwrap();
    let elsewhere = KernelFinder {
        proc_kallsyms: PathBuf::from("/proc/kallsyms"),
        kernel_notes: other_notes,
        buildid_caches: vec![cache.clone()],
    };
    assert_eq!(
        elsewhere.for_recording(Some(&id), Some(reloc)).unwrap_err(),
        Reason::BuildIdMismatch
    );
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let slot = cache.join("[kernel.kallsyms]").join(&hex);
    std::fs::create_dir_all(&slot).unwrap();
    std::fs::write(
        slot.join("kallsyms"),
        std::fs::read("/proc/kallsyms").unwrap(),
    )
    .unwrap();
    let cached = elsewhere
        .for_recording(Some(&id), Some(reloc))
        .expect("build-id cache copy");
    assert_eq!(cached.source(), Some(slot.join("kallsyms").as_path()));
    let pairs: Vec<_> = frames
        .iter()
        .map(|f| (f.clone(), kernel_answer(&cached, f.ip, &modules)))
        .collect();
    let (good, total) = tally("kernel (build-id cache copy)", &pairs);
    assert_eq!(good, total);

    // A cached copy from another boot (KASLR put the kernel 16 MiB higher; modules are
    // placed apart from it): perf shifts it back by the kernel MMAP record's `_text`.
    let shift = 0x100_0000u64;
    let moved: String = std::fs::read_to_string("/proc/kallsyms")
        .unwrap()
        .lines()
        .map(|l| match l.split_once(' ') {
            Some((a, rest)) if !l.contains('\t') => {
                let a = u64::from_str_radix(a, 16).unwrap();
                format!("{:016x} {rest}\n", a.wrapping_add(shift))
            }
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(slot.join("kallsyms"), moved).unwrap();
    let unshifted = elsewhere.for_recording(Some(&id), None).unwrap();
    let first = frames.iter().find(|f| f.sym.is_some()).unwrap();
    assert_ne!(
        kernel_answer(&unshifted, first.ip, &modules),
        first.sym,
        "without the reference symbol the moved copy is wrong"
    );
    let relocated = elsewhere.for_recording(Some(&id), Some(reloc)).unwrap();
    let pairs: Vec<_> = frames
        .iter()
        .map(|f| (f.clone(), kernel_answer(&relocated, f.ip, &modules)))
        .collect();
    let (good, total) = tally("kernel (cache copy from another boot, relocated)", &pairs);
    assert_eq!(good, total);
}

const JS: &str = r#"
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function work() { let s = 0; for (let i = 0; i < 30; i++) s += fib(22); return s; }
class Shape { constructor(i) { this.i = i; this.s = 'x' + i; } area() { return this.i * 2; } }
function words(n) { const m = new Map(); for (let i = 0; i < n; i++) { const w = 'w' + (i % 97); m.set(w, (m.get(w) || 0) + 1); } return m.size; }
function sorter(n) { const a = []; for (let i = 0; i < n; i++) a.push((i * 7919) % n); a.sort((x, y) => x - y); return a[n >> 1]; }
function regex(n) { let c = 0; const r = /(\d+)-(\w+)/; for (let i = 0; i < n; i++) if (r.test(i + '-k' + i)) c++; return c; }
function closures(n) { const fs = []; for (let i = 0; i < n; i++) fs.push(() => i * 3); return fs.reduce((s, f) => s + f(), 0); }
const t = Date.now();
let acc = 0;
while (Date.now() - t < 1500) {
    acc += work();
    const a = [];
    for (let i = 0; i < 2000; i++) a.push(new Shape(i));
    acc += a.reduce((x, s) => x + s.area(), 0);
    acc += JSON.stringify(a.slice(0, 50)).length;
    acc += words(5000) + sorter(5000) + regex(2000) + closures(3000);
}
console.log(acc);
"#;

#[test]
fn jit_perf_map_symbols_match_perf_script() {
    let node = Command::new("node").arg("--version").output();
    assert!(node.is_ok_and(|o| o.status.success()), "node is required");
    let dir = tempdir();
    let js = dir.path().join("jit.js");
    std::fs::write(&js, JS).unwrap();
    let data = dir.path().join("j.data");
    record(
        &data,
        &["-g"],
        &["node", "--perf-basic-prof", js.to_str().unwrap()],
    );
    let frames = script_frames(&data, "pid,ip,sym,symoff,dso");
    let jit: Vec<Frame> = frames
        .into_iter()
        .filter(|f| f.dso.starts_with("/tmp/perf-") || f.dso.starts_with("[JIT] tid"))
        .collect();
    let mut maps: HashMap<u32, PerfMap> = HashMap::new();
    let mut files = Vec::new();
    for pid in jit.iter().filter_map(|f| f.pid) {
        maps.entry(pid).or_insert_with(|| {
            let path = PathBuf::from(format!("/tmp/perf-{pid}.map"));
            let m = PerfMap::load(&path).expect("node wrote its perf map");
            files.push(path);
            m
        });
    }
    let pairs: Vec<_> = jit
        .iter()
        .map(|f| {
            let m = &maps[&f.pid.expect("pid")];
            let ours = m.lookup(f.ip).ok().map(|h| (h.name.to_owned(), h.offset));
            (f.clone(), ours)
        })
        .collect();
    for f in files {
        let _ = std::fs::remove_file(f);
    }
    assert!(pairs.len() >= 1000, "too few JIT frames: {}", pairs.len());
    let (good, total) = tally("JIT perf-PID.map", &pairs);
    assert!(good * 1000 >= total * 999, "{good}/{total}");
}

const CLOCK_C: &str = r#"
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

int main(void) {
    struct timespec start, now;
    struct timeval tv;
    unsigned long n = 0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        clock_gettime(CLOCK_MONOTONIC, &now);
        gettimeofday(&tv, NULL);
        n++;
    } while (now.tv_sec - start.tv_sec < 2);
    printf("%lu\n", n);
    return 0;
}
"#;

#[test]
fn vdso_symbols_match_perf_script() {
    let dir = tempdir();
    let src = dir.path().join("clk.c");
    let bin = dir.path().join("clk");
    std::fs::write(&src, CLOCK_C).unwrap();
    run(Command::new("gcc")
        .args(["-O2", "-fno-omit-frame-pointer", "-o"])
        .arg(&bin)
        .arg(&src));
    let data = dir.path().join("v.data");
    // No -g: perf script prints callchain addresses relative to their map, but the
    // sampled ip as it was, which is what the caller has to turn into an Svma.
    record(&data, &[], &[bin.to_str().unwrap()]);
    let id = build_id_of(&data, "[vdso]").expect("vdso build id in perf.data");
    let maps = mmaps(&data);
    let vdso_maps: BTreeMap<i64, &Mmap> = maps
        .iter()
        .filter(|m| m.name == "[vdso]")
        .map(|m| (m.pid, m))
        .collect();

    // This process runs the same kernel, so its own vdso is the recorded one; perf's
    // cache is not needed (the recording was made with -N).
    let no_cache = DebugFinder::with_roots(Vec::new(), Vec::new());
    let vdso = find_vdso(&id, &no_cache).expect("the running vdso has the recorded build id");
    let frames: Vec<Frame> = script_frames(&data, "pid,ip,sym,symoff,dso")
        .into_iter()
        .filter(|f| f.dso == "[vdso]")
        .collect();
    let pairs: Vec<_> = frames
        .iter()
        .map(|f| {
            let m = vdso_maps[&i64::from(f.pid.expect("pid"))];
            let ours = vdso
                .avma_to_svma(f.ip, m.start, m.pgoff)
                .and_then(|a| vdso.lookup(a))
                .ok()
                .map(|h| (h.name(), h.offset));
            (f.clone(), ours)
        })
        .collect();
    assert!(pairs.len() >= 100, "too few vdso frames: {}", pairs.len());
    assert!(
        pairs.iter().any(|(f, _)| f
            .sym
            .as_ref()
            .is_some_and(|s| s.0.contains("clock_gettime"))),
        "perf saw clock_gettime in the vdso"
    );
    let (good, total) = tally("vdso", &pairs);
    assert_eq!(good, total);
}

/// Runs 64 KiB of NOPs in an anonymous executable mapping for a second, so samples land
/// all over a JIT-like region whose perf map the test writes itself.
const ANON_C: &str = r#"
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void done(int s) { (void)s; _exit(0); }

int main(void) {
    size_t n = 1 << 16;
    unsigned char *p = mmap(NULL, n + 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    memset(p, 0x90, n);
    int rel = -(int)(n + 5);
    p[n] = 0xe9;
    memcpy(p + n + 1, &rel, 4);
    signal(SIGALRM, done);
    alarm(1);
    ((void (*)(void))p)();
    return 0;
}
"#;

#[test]
fn overlapping_perf_map_entries_resolve_as_in_perf() {
    let dir = tempdir();
    let src = dir.path().join("anon.c");
    let bin = dir.path().join("anon");
    std::fs::write(&src, ANON_C).unwrap();
    run(Command::new("gcc").args(["-O1", "-o"]).arg(&bin).arg(&src));
    let data = dir.path().join("a.data");
    record(&data, &[], &[bin.to_str().unwrap()]);
    let maps = mmaps(&data);
    let region = maps
        .iter()
        .find(|m| m.name == "//anon" && m.pid > 0)
        .expect("MMAP record of the anonymous executable region");
    let pid = region.pid;
    let b = region.start;
    // Duplicates, nesting, zero sizes, `0x` prefixes and names with spaces, in an order
    // that makes perf's tree rotate.
    let entries = [
        (0x0, 0x8000, "outer_a"),
        (0x1000, 0x1000, "inner_b"),
        (0x0, 0x8000, "dup_of_outer_a"),
        (0x4000, 0x100, "inner_d"),
        (0x8000, 0x8000, "second_half"),
        (0x8000, 0x0, "zero_sized"),
        (0x9000, 0x2000, "inner_f with spaces"),
        (0xfff0, 0x20, "crosses_the_end"),
        (0x2000, 0x3000, "overlaps_b_and_d"),
        (0x6000, 0x10, "x"),
        (0xc000, 0x1000, "late_inner"),
    ];
    let mut text = String::new();
    for (i, (off, size, name)) in entries.iter().enumerate() {
        if i % 2 == 0 {
            text.push_str(&format!("{:x} {size:x} {name}\n", b + off));
        } else {
            text.push_str(&format!("0x{:x} 0x{size:x} {name}\n", b + off));
        }
    }
    let map_path = PathBuf::from(format!("/tmp/perf-{pid}.map"));
    std::fs::write(&map_path, &text).unwrap();
    let frames = script_frames(&data, "pid,ip,sym,symoff,dso");
    let _ = std::fs::remove_file(&map_path);
    let ours_map = PerfMap::parse(&text);
    assert_eq!(
        ours_map.len(),
        entries.len() - 1,
        "the 1-byte name is skipped"
    );
    let pairs: Vec<_> = frames
        .into_iter()
        .filter(|f| f.dso == map_path.to_str().unwrap())
        .map(|f| {
            let ours = ours_map
                .lookup(f.ip)
                .ok()
                .map(|h| (h.name.to_owned(), h.offset));
            (f, ours)
        })
        .collect();
    assert!(
        pairs.len() >= 200,
        "too few samples in the region: {}",
        pairs.len()
    );
    // A sample right at the start of the zero-sized entry: perf 6.1 names it
    // as sear does but prints a negative offset (`zero_sized+0xffff8...`);
    // sear's offset is 0, the distance from the entry's start. Rare (one
    // frame in a few thousand: CI had one).
    let pairs: Vec<_> = pairs
        .into_iter()
        .map(|(mut f, ours)| {
            if let (Some((pn, po)), Some((on, 0))) = (&f.sym, &ours) {
                if pn == on && *po >= 1 << 63 && f.ip == b + 0x8000 {
                    f.sym = ours.clone();
                }
            }
            (f, ours)
        })
        .collect();
    let names: std::collections::BTreeSet<&str> = pairs
        .iter()
        .filter_map(|(f, _)| f.sym.as_ref().map(|s| s.0.as_str()))
        .collect();
    eprintln!("perf named: {names:?}");
    assert!(names.len() >= 4, "samples spread over several entries");
    let (good, total) = tally("overlapping perf map", &pairs);
    assert_eq!(good, total);
}
