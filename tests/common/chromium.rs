//! Headless Chromium (Debian's `chromium`) driven through its DevTools protocol over
//! `--remote-debugging-pipe` (fd 3 to Chromium, fd 4 from it, JSON messages ended by NUL):
//! no WebSocket, no port, only serde_json. Every wait has a time limit and Chromium's whole
//! process group is killed on drop, so a stuck browser fails a test instead of hanging it.
//! Chromium is required, never skipped: `apt-get install chromium`.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Instant;

use serde_json::{json, Value};

use super::browser::Browser;
pub use super::browser::STEP;
/// A headless Chromium with one page, driven over the DevTools pipe.
pub struct Chromium {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next_id: u64,
    /// The page's session (commands without one go to the browser).
    session: Option<String>,
    dir: tempfile::TempDir,
}

impl Chromium {
    pub fn launch() -> Chromium {
        match Command::new("chromium").arg("--version").output() {
            Ok(o) if o.status.success() => {}
            other => panic!(
                "this test needs Chromium (Debian's `chromium`): apt-get install chromium \
                 (.ci/run installs it); running `chromium --version` gave {other:?}"
            ),
        }
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("chromium.log");
        // The shell hands our pipes to Chromium as fds 3 and 4, which
        // --remote-debugging-pipe reads and writes.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"log="$1"; shift; exec "$@" 3<&0 4>&1 </dev/null >"$log" 2>&1"#)
            .arg("sh")
            .arg(&log)
            .arg("chromium")
            .args([
                "--headless",
                // Root in a container: no user namespaces for the sandbox.
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-pipe",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--window-size=1400,1000",
            ])
            .arg(format!(
                "--user-data-dir={}",
                dir.path().join("profile").display()
            ))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Its own process group, so that Drop can kill the renderers too.
            .process_group(0)
            .spawn()
            .expect("starting chromium");
        let to = child.stdin.take().unwrap();
        let from_chromium = child.stdout.take().unwrap();
        let (tx, from) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(from_chromium);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match r.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if buf.last() == Some(&0) {
                            buf.pop();
                        }
                        let v: Value = match serde_json::from_slice(&buf) {
                            Ok(v) => v,
                            Err(e) => json!({ "unparsable": e.to_string() }),
                        };
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut c = Chromium {
            child,
            to,
            from,
            next_id: 0,
            session: None,
            dir,
        };
        let target = c.call("Target.createTarget", json!({ "url": "about:blank" }));
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = c.call(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        );
        c.session = Some(attached["sessionId"].as_str().unwrap().to_string());
        c
    }

    /// Fails the test with `what` and the end of Chromium's log.
    pub fn fail(&self, what: &str) -> ! {
        super::browser::fail_with_log("Chromium", &self.dir.path().join("chromium.log"), what)
    }

    /// Sends one protocol command and waits (at most STEP) for its answer.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        if let Err(e) = self.to.write_all(&bytes).and_then(|()| self.to.flush()) {
            self.fail(&format!("sending {method} to Chromium: {e}"));
        }
        let deadline = Instant::now() + STEP;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(m) if m["id"] == json!(id) => {
                    if let Some(e) = m.get("error") {
                        self.fail(&format!("{method} failed: {e}"));
                    }
                    return m["result"].clone();
                }
                Ok(m) if m.get("unparsable").is_some() => {
                    self.fail(&format!("Chromium sent a message that is not JSON: {m}"))
                }
                Ok(_) => {} // an event
                Err(RecvTimeoutError::Timeout) => {
                    self.fail(&format!("Chromium did not answer {method} within {STEP:?}"))
                }
                Err(RecvTimeoutError::Disconnected) => self.fail(&format!(
                    "Chromium closed its DevTools pipe during {method}"
                )),
            }
        }
    }
}

impl Browser for Chromium {
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
        );
        if let Some(e) = r.get("exceptionDetails") {
            self.fail(&format!("evaluating `{expr}` threw: {e}"));
        }
        r["result"]["value"].clone()
    }

    fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
    }

    fn click(&mut self, x: f64, y: f64) {
        for t in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": t, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            );
        }
    }

    fn drag(&mut self, from: (f64, f64), to: (f64, f64)) {
        let mouse = |t: &str, (x, y): (f64, f64), buttons: u32| json!({ "type": t, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1 });
        self.call("Input.dispatchMouseEvent", mouse("mouseMoved", from, 0));
        self.call("Input.dispatchMouseEvent", mouse("mousePressed", from, 1));
        for i in 1..=4 {
            let f = f64::from(i) / 4.0;
            let at = (from.0 + (to.0 - from.0) * f, from.1 + (to.1 - from.1) * f);
            self.call("Input.dispatchMouseEvent", mouse("mouseMoved", at, 1));
        }
        self.call("Input.dispatchMouseEvent", mouse("mouseReleased", to, 0));
    }

    fn type_text(&mut self, text: &str) {
        self.call("Input.insertText", json!({ "text": text }));
    }

    fn fail(&self, what: &str) -> ! {
        Chromium::fail(self, what)
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        // The whole group: the browser, its zygotes and renderers.
        super::browser::kill_group(&mut self.child);
    }
}
