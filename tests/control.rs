//! `--control` (record and stat): with `-D -1` the events start disabled;
//! `enable` and `disable` sent on a FIFO while a program spins start and
//! stop them, each command acknowledged with `ack` on the other FIFO,
//! as perf 6.1 does with the same FIFOs and program.

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {p:?}"
    );
}

/// Opens a FIFO without waiting for its other end.
fn open_fifo(p: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(p)
        .unwrap()
}

/// Sends `cmd` and waits (at most 10 s) for its `ack`.
fn send(ctl: &mut std::fs::File, ack: &mut std::fs::File, cmd: &str) {
    ctl.write_all(format!("{cmd}\n").as_bytes()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut got = Vec::new();
    // (perf writes the C string with its NUL: "ack\n\0".)
    while !got.windows(4).any(|w| w == b"ack\n") {
        assert!(Instant::now() < deadline, "no ack for {cmd}");
        let mut b = [0u8; 16];
        match ack.read(&mut b) {
            Ok(n) => {
                got.extend_from_slice(&b[..n]);
                if got.ends_with(b"ack\n") || got.ends_with(b"ack\n\0") {
                    assert!(got.ends_with(b"ack\n\0"), "{cmd}: {got:?}, not perf's ack");
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Runs `tool` with `args` and the control FIFOs on a 1.5 s spin; enables
/// after 300 ms, disables 400 ms later, pings; its output.
fn controlled(tool: &mut Command, dir: &Path, args: &[&str], spin: &Path) -> std::process::Output {
    let (ctl_p, ack_p) = (dir.join("ctl"), dir.join("ack"));
    let _ = std::fs::remove_file(&ctl_p);
    let _ = std::fs::remove_file(&ack_p);
    mkfifo(&ctl_p);
    mkfifo(&ack_p);
    let (mut ctl, mut ack) = (open_fifo(&ctl_p), open_fifo(&ack_p));
    let spec = format!("fifo:{},{}", ctl_p.display(), ack_p.display());
    let child = tool
        .args(args)
        .args(["-D", "-1", "--control", &spec, "--"])
        .arg(spin)
        .arg("1500")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    send(&mut ctl, &mut ack, "enable");
    std::thread::sleep(Duration::from_millis(400));
    send(&mut ctl, &mut ack, "disable");
    send(&mut ctl, &mut ack, "ping");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn record_control_enables_and_disables_like_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let spin = build_c(dir.path(), "spin", SPIN_C, &["-O1"]);
    let mut evlists = Vec::new();
    for (name, tool) in [("perf", perf()), ("sear", sear())] {
        let mut tool = tool;
        let data = dir.path().join(format!("{name}.data"));
        let o = controlled(
            &mut tool,
            dir.path(),
            &["record", "-e", "cpu-clock", "-o", data.to_str().unwrap()],
            &spin,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        for line in ["Events disabled", "Events enabled"] {
            assert!(err.contains(line), "{name}: {err}");
        }
        let times: Vec<f64> = stdout_of(&run_ok(
            perf().args(["script", "-F", "time", "-i"]).arg(&data),
        ))
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(':').parse().ok())
        .collect();
        // Samples only while enabled: about 400 ms of the 1.5 s spin.
        assert!(times.len() > 100, "{name}: {} samples", times.len());
        let span = times.last().unwrap() - times.first().unwrap();
        assert!(span > 0.1 && span < 1.0, "{name}: samples span {span} s");
        evlists.push(stdout_of(&run_ok(
            perf().args(["evlist", "-v", "-i"]).arg(&data),
        )));
    }
    assert_eq!(evlists[0], evlists[1]);
}

#[test]
fn stat_control_counts_only_while_enabled_like_perf() {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let spin = build_c(dir.path(), "spin", SPIN_C, &["-O1"]);
    for (name, tool) in [("perf", perf()), ("sear", sear())] {
        let mut tool = tool;
        let o = controlled(
            &mut tool,
            dir.path(),
            &["stat", "-x,", "-e", "task-clock"],
            &spin,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        let msec: f64 = err
            .lines()
            .find(|l| l.contains("task-clock"))
            .and_then(|l| l.split(',').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name}: {err}"));
        // The spin on one CPU for the ~400 ms between enable and disable.
        assert!(msec > 100.0 && msec < 1000.0, "{name}: {msec} msec\n{err}");
    }
    // A control spec that cannot be opened is an error naming it.
    let o = sear()
        .args(["stat", "--control", "fifo:/nonexistent/ctl", "--", "true"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/ctl"));
}
