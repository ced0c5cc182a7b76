//! Debug files and executables fetched by build id from a real debuginfod server (elfutils'
//! `debuginfod`, started by the test on a directory it indexes): a recording of a binary whose
//! debug info was split off and removed reports the same source lines and inline frames as
//! with the debug info in place, the files land in elfutils' client cache layout and serve the
//! next run without the server, a removed binary is fetched as an executable, and a server
//! that does not answer costs one warning, not one per lookup.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PROGRAM: &str = r#"
volatile long sink;
static inline long step(long x, long i) { return x + (i ^ (x >> 3)); }
__attribute__((noipa)) long inner(long n) {
    long x = 0;
    for (long i = 0; i < n; i++) x = step(x, i);
    return x;
}
__attribute__((noipa)) long outer(long n) { return inner(n) + 1; }
int main(void) {
    /* (noipa, and an argument that changes: gcc -O2 would otherwise find
       outer pure and call it once, leaving a sample or two to chance.) */
    for (int k = 0; k < 400; k++) sink += outer(1000000 + (k & 1));
    return 0;
}
"#;

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A debuginfod indexing `dir`, ready once it serves `id`'s debug info. (The
/// tests run at once and each picks a free port, which another may take
/// before its server binds it: a server that exits, failing to bind, is
/// started again on another port, and only an answer while ours runs
/// counts.)
fn serve(dir: &Path, db: &Path, id: &str) -> Server {
    let deadline = Instant::now() + Duration::from_secs(60);
    'start: loop {
        let port = free_port();
        let child = Command::new("debuginfod")
            .args(["-F", "-p", &port.to_string(), "-d"])
            .arg(db)
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("debuginfod (Debian's debuginfod package; .ci/run installs it)");
        let mut s = Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        loop {
            std::thread::sleep(Duration::from_millis(300));
            if s.child.try_wait().ok().flatten().is_some() {
                continue 'start;
            }
            if status(port, &format!("/buildid/{id}/debuginfo")) == Some(200)
                && s.child.try_wait().ok().flatten().is_none()
            {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "debuginfod did not index {dir:?} in 60 s"
            );
        }
    }
}

/// The HTTP status of `GET path` on the local port (None: no answer).
fn status(port: u16, path: &str) -> Option<u16> {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    c.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(c, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut head = [0u8; 12];
    c.read_exact(&mut head).ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

/// `sear report --sort sym,srcline` (and inline frames in the graph) with the environment.
fn report(data: &Path, env: &[(&str, &str)]) -> (String, String) {
    let mut c = sear();
    c.env_remove("DEBUGINFOD_URLS");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c
        .args([
            "report",
            "--stdio",
            "--no-children",
            "--sort",
            "sym,srcline",
            "-i",
        ])
        .arg(data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        stdout_of(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

struct Setup {
    _dir: tempfile::TempDir,
    bin: PathBuf,
    full: PathBuf,
    data: PathBuf,
    srv: PathBuf,
    id: String,
}

/// The program built with -g, its debug info split into the server's directory and stripped
/// from the binary that runs; `full` keeps an unstripped copy (the same build id).
fn setup() -> Setup {
    have_perf();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = build_c(d, "prog", PROGRAM, &["-O2", "-g"]);
    let full = d.join("prog.full");
    std::fs::copy(&bin, &full).unwrap();
    let srv = d.join("srv");
    std::fs::create_dir(&srv).unwrap();
    run_ok(
        Command::new("objcopy")
            .arg("--only-keep-debug")
            .arg(&bin)
            .arg(srv.join("prog.debug")),
    );
    run_ok(Command::new("strip").arg("--strip-debug").arg(&bin));
    let data = perf_record(
        d,
        "perf.data",
        &["-N", "-F", "1000", "-g"],
        &[bin.display().to_string()],
    );
    let id = stdout_of(&run_ok(perf().args(["buildid-list", "-i"]).arg(&bin)))
        .trim()
        .to_owned();
    Setup {
        bin,
        full,
        data,
        srv,
        id,
        _dir: dir,
    }
}

#[test]
fn debug_info_comes_from_the_server_and_its_cache() {
    let s = setup();
    let cache = s.srv.with_file_name("client-cache");
    let cache_s = cache.to_str().unwrap();
    // Without a server: no source lines for prog.
    let (without, _) = report(&s.data, &[("DEBUGINFOD_CACHE_PATH", cache_s)]);
    assert!(!without.contains("prog.c:"), "{without}");
    // The debug info in place (the unstripped binary) is what the server must give.
    std::fs::copy(&s.bin, s.bin.with_extension("stripped")).unwrap();
    std::fs::copy(&s.full, &s.bin).unwrap();
    let (want, _) = report(&s.data, &[("DEBUGINFOD_CACHE_PATH", cache_s)]);
    assert!(want.contains("prog.c:"), "{want}");
    std::fs::copy(s.bin.with_extension("stripped"), &s.bin).unwrap();

    let server = serve(&s.srv, &s.srv.with_file_name("db.sqlite"), &s.id);
    let url = server.url.clone();
    let env = [
        ("DEBUGINFOD_URLS", url.as_str()),
        ("DEBUGINFOD_CACHE_PATH", cache_s),
    ];
    let (got, _) = report(&s.data, &env);
    assert_eq!(
        got, want,
        "the fetched debug info gives the lines of the local one"
    );
    // elfutils' layout: CACHE/BUILDID/debuginfo, the server's file.
    let cached = cache.join(&s.id).join("debuginfo");
    assert_eq!(
        std::fs::read(&cached).unwrap(),
        std::fs::read(s.srv.join("prog.debug")).unwrap()
    );
    // The next run needs no server.
    drop(server);
    let (again, _) = report(&s.data, &env);
    assert_eq!(again, want, "from the cache");
}

#[test]
fn a_removed_binary_comes_from_the_server_as_an_executable() {
    let s = setup();
    // The server indexes the unstripped binary (an executable with its debug info).
    std::fs::copy(&s.full, s.srv.join("prog")).unwrap();
    std::fs::remove_file(s.srv.join("prog.debug")).unwrap();
    let cache = s.srv.with_file_name("client-cache");
    let (want, _) = report(
        &s.data,
        &[("DEBUGINFOD_CACHE_PATH", cache.to_str().unwrap())],
    );
    assert!(want.contains("inner"), "{want}");
    std::fs::remove_file(&s.bin).unwrap();
    let (gone, _) = report(
        &s.data,
        &[("DEBUGINFOD_CACHE_PATH", cache.to_str().unwrap())],
    );
    assert!(!gone.contains("] inner"), "no binary, no names: {gone}");
    let server = serve(&s.srv, &s.srv.with_file_name("db.sqlite"), &s.id);
    let env = [
        ("DEBUGINFOD_URLS", server.url.as_str()),
        ("DEBUGINFOD_CACHE_PATH", cache.to_str().unwrap()),
    ];
    let (got, _) = report(&s.data, &env);
    assert!(got.contains("] inner") && got.contains("prog.c:"), "{got}");
    assert!(cache.join(&s.id).join("executable").is_file());
}

#[test]
fn a_server_that_does_not_answer_costs_one_warning() {
    let s = setup();
    let cache = s.srv.with_file_name("client-cache");
    // A port nothing listens on (not a free one: another test's server may
    // take that meanwhile).
    let url = "http://127.0.0.1:1".to_owned();
    let t = Instant::now();
    let (out, err) = report(
        &s.data,
        &[
            ("DEBUGINFOD_URLS", url.as_str()),
            ("DEBUGINFOD_CACHE_PATH", cache.to_str().unwrap()),
        ],
    );
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert!(
        out.contains("] inner"),
        "the binary's own symbols still name it: {out}"
    );
    assert_eq!(
        err.matches("does not answer").count(),
        1,
        "one warning for the server: {err}"
    );
}

/// A hostile server (a few lines of Python's http.server): `garbage` answers every request
/// with 200 and random bytes, `endless` with 200 and zeros until the client hangs up.
fn hostile(mode: &str) -> Server {
    const SCRIPT: &str = r#"
import http.server, os, sys
mode = sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        if mode == "garbage":
            body = b"\x7fELF" + os.urandom(20000)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.end_headers()
        chunk = bytes(1 << 16)
        try:
            while True:
                self.wfile.write(chunk)
        except OSError:
            pass
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
print("ready", flush=True)
srv.serve_forever()
"#;
    // (The port is ours once the server says it is bound: another test may
    // take a free port first, and then this one tries another.)
    for _ in 0..20 {
        let port = free_port();
        let mut child = Command::new("python3")
            .args(["-c", SCRIPT, &port.to_string(), mode])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let out = child.stdout.take().unwrap();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line);
        let s = Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        if line.trim() == "ready" {
            return s;
        }
    }
    panic!("the test server found no free port");
}

#[test]
fn a_server_that_sends_garbage_or_no_end_costs_a_warning_and_nothing_kept() {
    let s = setup();
    for (mode, warning) in [
        ("garbage", "not an ELF file with that build id"),
        ("endless", "larger than 1000000 bytes"),
    ] {
        let srv = hostile(mode);
        let cache = s.srv.with_file_name(format!("cache-{mode}"));
        let t = Instant::now();
        let (out, err) = report(
            &s.data,
            &[
                ("DEBUGINFOD_URLS", srv.url.as_str()),
                ("DEBUGINFOD_CACHE_PATH", cache.to_str().unwrap()),
                ("DEBUGINFOD_MAXSIZE", "1000000"),
            ],
        );
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{mode}: {:?}",
            t.elapsed()
        );
        assert_eq!(err.matches(warning).count(), 1, "{mode}: {err}");
        // The binary's own symbols still name it; no line comes from the server.
        assert!(out.contains("] inner"), "{mode}: {out}");
        // Nothing the server sent is in the cache: the file asked for is an empty miss.
        let kept = cache.join(&s.id).join("debuginfo");
        assert_eq!(
            std::fs::metadata(&kept).map(|m| m.len()).unwrap_or(0),
            0,
            "{mode}"
        );
        let left: Vec<_> = std::fs::read_dir(cache.join(&s.id))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "debuginfo")
            .collect();
        assert!(left.is_empty(), "{mode}: {left:?}");
    }
}
