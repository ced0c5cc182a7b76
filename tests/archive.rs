//! `sear archive`: a recording's binaries packed from the build-id cache on one "machine" (a
//! home directory) and unpacked on another (a clean home, the binary gone), where the report
//! equals the one made before, also when unpacked with perf's `tar xvf ... -C ~/.debug`. The
//! unpacker writes nothing outside the cache, whatever the archive holds.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

const PROGRAM: &str = r#"
volatile long sink;
__attribute__((noinline)) long inner(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) x += i ^ (x >> 3);
    return x;
}
__attribute__((noinline)) long outer(long n) { long r = inner(n); sink += r; return r * 3; }
int main(void) {
    for (int k = 0; k < 300; k++) sink += outer(1000000);
    return 0;
}
"#;

fn report(home: &Path, data: &Path) -> String {
    stdout_of(&run_ok(
        sear()
            .env("HOME", home)
            .args(["report", "--stdio", "--children", "--sort", "dso,sym", "-i"])
            .arg(data),
    ))
}

#[test]
fn an_archive_reports_the_same_on_another_machine() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let here = tempfile::tempdir().unwrap();
    let bin = build_c(dir.path(), "prog", PROGRAM, &["-O2", "-g"]);
    let data = dir.path().join("perf.data");
    // Recorded without filling the cache: archive adds what it lacks.
    run_ok(
        sear()
            .env("HOME", here.path())
            .args([
                "record",
                "-q",
                "-N",
                "--call-graph",
                "dwarf",
                "-F",
                "1000",
                "-o",
            ])
            .arg(&data)
            .arg(&bin),
    );
    let before = report(here.path(), &data);
    assert!(
        before.contains("] inner") && before.contains("] main"),
        "{before}"
    );
    let arch = dir.path().join("perf.data.tar.bz2");
    let out = run_ok(sear().env("HOME", here.path()).args(["archive"]).arg(&data));
    assert!(stdout_of(&out).contains("tar xvf"), "perf's instructions");
    assert!(arch.is_file());
    let listed = stdout_of(&run_ok(Command::new("tar").arg("tjf").arg(&arch)));
    assert!(
        listed.lines().any(|l| l.starts_with(".build-id/")),
        "{listed}"
    );

    std::fs::remove_file(&bin).unwrap();
    // sear's unpacker.
    let there = tempfile::tempdir().unwrap();
    run_ok(
        sear()
            .env("HOME", there.path())
            .args(["archive", "--unpack"])
            .arg(&arch),
    );
    assert_eq!(report(there.path(), &data), before);
    // perf's way: tar into ~/.debug.
    let there2 = tempfile::tempdir().unwrap();
    std::fs::create_dir(there2.path().join(".debug")).unwrap();
    run_ok(
        Command::new("tar")
            .arg("xjf")
            .arg(&arch)
            .arg("-C")
            .arg(there2.path().join(".debug")),
    );
    assert_eq!(report(there2.path(), &data), before);
}

#[test]
fn unpacking_writes_nothing_outside_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let arch = dir.path().join("evil.tar.bz2");
    // An archive with a `..` path, an absolute path, a link out of the cache with a file
    // written through it, a device file, and one good entry.
    let script = format!(
        r#"
import tarfile, io
t = tarfile.open({arch:?}, "w:bz2")
def add(name, data=b"x", kind=tarfile.REGTYPE, link=""):
    i = tarfile.TarInfo(name); i.type = kind; i.linkname = link; i.size = len(data) if kind == tarfile.REGTYPE else 0
    t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
add("../escaped")
add("/tmp/absolute-{tag}")
add(".build-id/aa/bbbb", kind=tarfile.SYMTYPE, link="/tmp")
add(".build-id/aa/bbbb/through-{tag}")
add("usr", kind=tarfile.SYMTYPE, link="/tmp")
add("usr/via-link-{tag}")
add("dev0", kind=tarfile.CHRTYPE)
add("good/abcd/elf", b"fine")
t.close()
"#,
        arch = arch.display().to_string(),
        tag = std::process::id()
    );
    run_ok(Command::new("python3").arg("-c").arg(&script));
    let out = sear()
        .env("HOME", home.path())
        .args(["archive", "--unpack"])
        .arg(&arch)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    let tag = std::process::id();
    for p in [
        dir.path().join("escaped"),
        home.path().join("escaped"),
        format!("/tmp/absolute-{tag}").into(),
        format!("/tmp/through-{tag}").into(),
        format!("/tmp/via-link-{tag}").into(),
    ] {
        assert!(!p.exists(), "{} was written: {err}", p.display());
    }
    assert_eq!(
        std::fs::read(home.path().join(".debug/good/abcd/elf")).unwrap(),
        b"fine"
    );
    assert!(!home.path().join(".debug/dev0").exists());
    assert!(err.contains("not unpacked"), "{err}");
}
