//! Headless Firefox (Debian's `firefox-esr`) driven through WebDriver BiDi, the W3C protocol
//! Firefox's remote agent speaks over a WebSocket (`--remote-debugging-port 0`: Firefox picks
//! the port and prints it). Every wait has a time limit and Firefox's whole process group is
//! killed on drop, so a stuck browser fails a test instead of hanging it. Firefox is
//! required, never skipped: `apt-get install firefox-esr`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use serde_json::{json, Value};

use super::browser::{Browser, STEP};

type Socket = tungstenite::WebSocket<TcpStream>;

/// A headless Firefox with one tab, driven over WebDriver BiDi.
pub struct Firefox {
    child: Child,
    ws: Socket,
    next_id: u64,
    /// The tab's browsing context.
    context: String,
    dir: tempfile::TempDir,
}

impl Firefox {
    pub fn launch() -> Firefox {
        match Command::new("firefox-esr").arg("--version").output() {
            Ok(o) if o.status.success() => {}
            other => panic!(
                "this test needs Firefox (Debian's `firefox-esr`): apt-get install firefox-esr \
                 (.ci/run installs it); running `firefox-esr --version` gave {other:?}"
            ),
        }
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("profile");
        std::fs::create_dir(&profile).unwrap();
        // No first-run pages, no default-browser question, nothing fetched in the background.
        std::fs::write(
            profile.join("user.js"),
            [
                r#"user_pref("browser.shell.checkDefaultBrowser", false);"#,
                r#"user_pref("browser.startup.homepage_override.mstone", "ignore");"#,
                r#"user_pref("datareporting.policy.dataSubmissionEnabled", false);"#,
                r#"user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);"#,
                r#"user_pref("app.normandy.enabled", false);"#,
                r#"user_pref("messaging-system.rsexperimentloader.enabled", false);"#,
                "",
            ]
            .join("\n"),
        )
        .unwrap();
        let log = dir.path().join("firefox.log");
        let mut child = Command::new("firefox-esr")
            .args(["--headless", "--no-remote", "--remote-debugging-port", "0"])
            .arg("--window-size=1400,1000")
            .arg("--profile")
            .arg(&profile)
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group, so that Drop can kill its content processes too.
            .process_group(0)
            .spawn()
            .expect("starting firefox-esr");
        // Firefox prints where its BiDi server listens; the rest of its stderr goes to the log.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let log_path = log.clone();
        std::thread::spawn(move || {
            let mut out = std::fs::File::create(log_path).ok();
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                if let Some(url) = line.split("WebDriver BiDi listening on ").nth(1) {
                    let _ = tx.send(url.trim().to_string());
                }
                if let Some(f) = &mut out {
                    let _ = writeln!(f, "{line}");
                }
            }
        });
        let url = match rx.recv_timeout(STEP) {
            Ok(u) => u,
            Err(_) => {
                super::browser::kill_group(&mut child);
                panic!(
                    "Firefox did not start its WebDriver BiDi server within {STEP:?}; its log:\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
        };
        let addr = url
            .strip_prefix("ws://")
            .unwrap_or_else(|| panic!("unexpected BiDi address {url:?}"))
            .trim_end_matches('/')
            .to_string();
        let stream = TcpStream::connect(&addr).expect("connecting to Firefox's BiDi server");
        stream.set_read_timeout(Some(STEP)).unwrap();
        stream.set_write_timeout(Some(STEP)).unwrap();
        let (ws, _) = tungstenite::client(format!("ws://{addr}/session"), stream)
            .expect("WebSocket handshake with Firefox");
        let mut f = Firefox {
            child,
            ws,
            next_id: 0,
            context: String::new(),
            dir,
        };
        f.call("session.new", json!({ "capabilities": {} }));
        let tree = f.call("browsingContext.getTree", json!({}));
        f.context = tree["contexts"][0]["context"]
            .as_str()
            .unwrap_or_else(|| f.fail(&format!("no browsing context in {tree}")))
            .to_string();
        f
    }

    /// Fails the test with `what` and the end of Firefox's log.
    pub fn fail(&self, what: &str) -> ! {
        super::browser::fail_with_log("Firefox", &self.dir.path().join("firefox.log"), what)
    }

    /// Sends one BiDi command and waits (at most STEP) for its answer.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({ "id": id, "method": method, "params": params }).to_string();
        if let Err(e) = self.ws.send(tungstenite::Message::text(msg)) {
            self.fail(&format!("sending {method} to Firefox: {e}"));
        }
        let deadline = Instant::now() + STEP;
        loop {
            if Instant::now() > deadline {
                self.fail(&format!("Firefox did not answer {method} within {STEP:?}"));
            }
            let m = match self.ws.read() {
                Ok(tungstenite::Message::Text(t)) => t,
                Ok(_) => continue,
                Err(e) => self.fail(&format!("reading Firefox's answer to {method}: {e}")),
            };
            let m: Value = serde_json::from_str(&m).unwrap_or_else(|e| {
                self.fail(&format!("Firefox sent a message that is not JSON: {e}"))
            });
            if m["id"] != json!(id) {
                continue; // an event
            }
            if m["type"] == json!("error") {
                self.fail(&format!("{method} failed: {m}"));
            }
            return m["result"].clone();
        }
    }
}

/// A BiDi remote value as plain JSON (what the page's value would stringify to).
fn plain(v: &Value) -> Value {
    match v["type"].as_str() {
        Some("null" | "undefined") => Value::Null,
        Some("string" | "boolean") => v["value"].clone(),
        // Finite numbers come as numbers; NaN, ±Infinity and -0 as strings.
        Some("number") => match &v["value"] {
            Value::Number(n) => Value::Number(n.clone()),
            Value::String(s) if s == "-0" => json!(0.0),
            _ => Value::Null,
        },
        Some("array" | "set") => Value::Array(
            v["value"]
                .as_array()
                .map(|a| a.iter().map(plain).collect())
                .unwrap_or_default(),
        ),
        Some("object" | "map") => Value::Object(
            v["value"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|kv| Some((kv[0].as_str()?.to_string(), plain(&kv[1]))))
                        .collect()
                })
                .unwrap_or_default(),
        ),
        _ => v.clone(),
    }
}

impl Browser for Firefox {
    fn eval(&mut self, expr: &str) -> Value {
        let context = self.context.clone();
        let r = self.call(
            "script.evaluate",
            json!({
                "expression": expr,
                "target": { "context": context },
                "awaitPromise": true,
                "resultOwnership": "none",
            }),
        );
        if r["type"] != json!("success") {
            self.fail(&format!("evaluating `{expr}` threw: {r}"));
        }
        plain(&r["result"])
    }

    fn navigate(&mut self, url: &str) {
        let context = self.context.clone();
        self.call(
            "browsingContext.navigate",
            json!({ "context": context, "url": url, "wait": "complete" }),
        );
    }

    fn click(&mut self, x: f64, y: f64) {
        let context = self.context.clone();
        self.call(
            "input.performActions",
            json!({
                "context": context,
                "actions": [{
                    "type": "pointer",
                    "id": "mouse",
                    "parameters": { "pointerType": "mouse" },
                    "actions": [
                        { "type": "pointerMove", "x": x.round() as i64, "y": y.round() as i64 },
                        { "type": "pointerDown", "button": 0 },
                        { "type": "pointerUp", "button": 0 },
                    ],
                }],
            }),
        );
    }

    fn drag(&mut self, from: (f64, f64), to: (f64, f64)) {
        let context = self.context.clone();
        let at = |(x, y): (f64, f64)| (x.round() as i64, y.round() as i64);
        let mut steps = vec![
            json!({ "type": "pointerMove", "x": at(from).0, "y": at(from).1 }),
            json!({ "type": "pointerDown", "button": 0 }),
        ];
        for i in 1..=4 {
            let f = f64::from(i) / 4.0;
            let p = at((from.0 + (to.0 - from.0) * f, from.1 + (to.1 - from.1) * f));
            steps.push(json!({ "type": "pointerMove", "x": p.0, "y": p.1, "duration": 20 }));
        }
        steps.push(json!({ "type": "pointerUp", "button": 0 }));
        self.call(
            "input.performActions",
            json!({
                "context": context,
                "actions": [{
                    "type": "pointer",
                    "id": "mouse",
                    "parameters": { "pointerType": "mouse" },
                    "actions": steps,
                }],
            }),
        );
    }

    fn type_text(&mut self, text: &str) {
        let context = self.context.clone();
        let keys: Vec<Value> = text
            .chars()
            .flat_map(|c| {
                [
                    json!({ "type": "keyDown", "value": c.to_string() }),
                    json!({ "type": "keyUp", "value": c.to_string() }),
                ]
            })
            .collect();
        self.call(
            "input.performActions",
            json!({
                "context": context,
                "actions": [{ "type": "key", "id": "keyboard", "actions": keys }],
            }),
        );
    }

    fn fail(&self, what: &str) -> ! {
        Firefox::fail(self, what)
    }
}

impl Drop for Firefox {
    fn drop(&mut self) {
        let _ = self.ws.close(None);
        // The whole group: the browser and its content processes.
        super::browser::kill_group(&mut self.child);
    }
}
