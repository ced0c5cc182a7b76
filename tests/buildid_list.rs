//! `sear buildid-list` against `perf buildid-list` (perf 6.1) on the same
//! files, with and without `--with-hits`, byte for byte. perf names a
//! `[vdso]` it finds no build id for after a temporary copy of the vdso
//! (`/tmp/perf-vdso.so-XXXXXX`, random each run); that name is mapped to
//! `[vdso]`, which sear prints.

mod common;
use common::{have_perf, PERF, WILD};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("running a command")
}

/// A shell loop of a few milliseconds (`tail` after it, if any).
fn shell_loop(tail: &str) -> [String; 4] {
    [
        "--".into(),
        "sh".into(),
        "-c".into(),
        format!("i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done{tail}"),
    ]
}

/// `TOOL record ARGS -o OUT WORKLOAD` (perf's or sear's), which must succeed.
fn record(tool: &str, args: &[&str], out: &Path, workload: &[String]) {
    let o = run(Command::new(tool)
        .arg("record")
        .args(args)
        .arg("-o")
        .arg(out)
        .args(workload));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn normalise_vdso(s: &str) -> String {
    const PREFIX: &str = "/tmp/perf-vdso.so-";
    let mut out = String::new();
    for line in s.lines() {
        match line.find(PREFIX) {
            Some(i) if line.len() == i + PREFIX.len() + 6 => {
                out.push_str(&line[..i]);
                out.push_str("[vdso]");
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

fn compare(file: &Path, flags: &[&str]) {
    let perf = run(Command::new(PERF)
        .arg("buildid-list")
        .args(flags)
        .arg("-i")
        .arg(file));
    let sear = run(Command::new(env!("CARGO_BIN_EXE_sear"))
        .arg("buildid-list")
        .args(flags)
        .arg("-i")
        .arg(file));
    assert!(
        sear.status.success(),
        "sear buildid-list {flags:?} {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&sear.stderr)
    );
    assert_eq!(
        normalise_vdso(&String::from_utf8_lossy(&perf.stdout)),
        String::from_utf8_lossy(&sear.stdout),
        "buildid-list {flags:?} of {}",
        file.display()
    );
}

fn wild_files() -> Vec<PathBuf> {
    let dir = std::fs::read_dir(WILD).unwrap_or_else(|e| panic!("{WILD}: {e}"));
    let mut v: Vec<PathBuf> = dir
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("perf.data.") && !n.contains("corrupted")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn wild_files_match_perf() {
    if !have_perf() {
        return;
    }
    let files = wild_files();
    for f in &files {
        compare(f, &[]);
        compare(f, &["--with-hits"]);
    }
    eprintln!("{} wild files identical to perf", files.len());
}

/// Short build ids are padded to 40 columns like full ones; the
/// `[kernel.kallsyms]` entry is listed under that name.
#[test]
fn listing_format() {
    let Some(f) = wild_files()
        .into_iter()
        .find(|p| p.ends_with("perf.data.callgraph-3.4"))
    else {
        return;
    };
    let o = run(Command::new(env!("CARGO_BIN_EXE_sear"))
        .args(["buildid-list", "-i"])
        .arg(&f));
    let s = String::from_utf8(o.stdout).unwrap();
    let first = s.lines().next().unwrap();
    assert_eq!(
        first,
        "cff4586f322eb113d59f54f6e0312767c6746524 [kernel.kallsyms]"
    );
    for l in s.lines() {
        assert_eq!(l.as_bytes()[40], b' ', "id column is 40 wide: {l:?}");
    }
}

#[test]
fn corrupted_pipe_fails_clearly() {
    let f = Path::new(WILD).join("perf.data.piped.corrupted.zero_size_sample-3.2");
    if !f.exists() {
        return;
    }
    let o = run(Command::new(env!("CARGO_BIN_EXE_sear"))
        .args(["buildid-list", "-i"])
        .arg(&f));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("corrupt") && !err.contains("panicked"),
        "{err}"
    );
    // perf lists nothing for it either.
    assert!(o.stdout.is_empty());
}

#[test]
fn fresh_recordings_match_perf() {
    if !have_perf() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let workload = shell_loop("; ls / >/dev/null");
    // File mode with build ids; -z (no BUILD_ID feature: hits only).
    for (name, extra) in [("fp.data", "-g"), ("z.data", "-z")] {
        let out = dir.path().join(name);
        record(PERF, &["-e", "cpu-clock", extra], &out, &workload);
        compare(&out, &[]);
        compare(&out, &["-H"]);
    }
    // Pipe mode: perf replays the stream and lists the binaries hit.
    let pipe = dir.path().join("pipe.data");
    let o = run(Command::new(PERF)
        .args(["record", "-e", "cpu-clock", "-o", "-"])
        .args(&workload)
        .stdout(std::fs::File::create(&pipe).unwrap()));
    assert!(o.status.success());
    compare(&pipe, &[]);
}

#[test]
fn running_kernel_build_id_matches_perf() {
    if !have_perf() || !Path::new("/sys/kernel/notes").exists() {
        return;
    }
    let perf = run(Command::new(PERF).args(["buildid-list", "-k"]));
    let sear = run(Command::new(env!("CARGO_BIN_EXE_sear")).args(["buildid-list", "-k"]));
    assert!(sear.status.success());
    assert_eq!(perf.stdout, sear.stdout);
    assert_eq!(sear.stdout.len(), 41, "40 hex digits and a newline");
}

/// `-m/--kernel-maps`: the running kernel's map (and its modules') as
/// perf prints it: build id, start and end, name.
#[test]
fn kernel_maps_match_perf() {
    if !have_perf() || !Path::new("/sys/kernel/notes").exists() {
        return;
    }
    for flag in ["-m", "--kernel-maps"] {
        let perf = run(Command::new(PERF).args(["buildid-list", flag]));
        let sear = run(Command::new(env!("CARGO_BIN_EXE_sear")).args(["buildid-list", flag]));
        assert!(sear.status.success());
        let text = String::from_utf8_lossy(&sear.stdout);
        assert!(text.contains("[kernel.kallsyms]"), "{text}");
        assert_eq!(String::from_utf8_lossy(&perf.stdout), text);
    }
}

/// `sear record` writes the build ids perf's `record` writes for the same
/// program: the binaries samples hit and the vdso, which perf lists
/// whether samples hit it or not (a program that never runs vdso code).
#[test]
fn recordings_list_what_perfs_list() {
    if !have_perf() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let workload = shell_loop("");
    let list = |tool: &str, out: &Path| -> String {
        record(
            tool,
            &["-q", "-e", "page-faults", "-c", "1"],
            out,
            &workload,
        );
        let l = run(Command::new(PERF).args(["buildid-list", "-i"]).arg(out));
        // Only the names: a page fault's binaries are the same each run,
        // but for the kernel's, listed where one of exec's faults came
        // after the event was enabled (which varies from run to run).
        String::from_utf8_lossy(&l.stdout)
            .lines()
            .map(|l| l.get(41..).unwrap_or(l))
            .filter(|n| *n != "[kernel.kallsyms]")
            .map(|n| format!("{n}\n"))
            .collect()
    };
    let theirs = list(PERF, &dir.path().join("perf.data"));
    let ours = list(env!("CARGO_BIN_EXE_sear"), &dir.path().join("sear.data"));
    assert!(theirs.contains("[vdso]\n"), "{theirs}");
    assert_eq!(theirs, ours);
}
