//! What the browser tests need from a browser, whichever protocol drives it: Chromium's
//! DevTools protocol ([`super::chromium`]) or WebDriver BiDi for Firefox ([`super::firefox`]).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The longest any one protocol command or wait may take (the browser's start-up included).
pub const STEP: Duration = Duration::from_secs(60);

/// Fails the test with `what` and the last lines of the browser's log at `log`.
pub fn fail_with_log(browser: &str, log: &Path, what: &str) -> ! {
    let log = std::fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(20).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    panic!("{what}\n{browser}'s log (last lines):\n{}", tail.join("\n"));
}

/// Kills a browser started in its own process group, with all its helper processes, and
/// reaps it.
pub fn kill_group(child: &mut std::process::Child) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

pub trait Browser {
    /// Evaluates JavaScript in the page (a promise is awaited); returns its value as JSON.
    fn eval(&mut self, expr: &str) -> Value;
    /// Starts loading `url` in the page.
    fn navigate(&mut self, url: &str);
    /// A left click at (x, y) in CSS pixels of the viewport, as the mouse makes it.
    fn click(&mut self, x: f64, y: f64);
    /// A left-button drag from `from` to `to` (CSS pixels of the viewport) in a few steps, as
    /// a hand makes it: press, moves, release.
    fn drag(&mut self, from: (f64, f64), to: (f64, f64));
    /// Types `text` into the focused element.
    fn type_text(&mut self, text: &str);
    /// Fails the test with `what` and the end of the browser's log.
    fn fail(&self, what: &str) -> !;

    /// Opens `url` and waits until it has loaded. A URL that differs from the page's only in
    /// its `#fragment` does not load the page again (the browser only scrolls): open another
    /// page first.
    fn open_url(&mut self, url: &str) {
        self.navigate(url);
        self.wait_for(&format!(
            "location.href === {} && document.readyState === 'complete'",
            serde_json::json!(url)
        ));
    }

    /// Opens `file` and waits until it has loaded.
    fn open(&mut self, file: &Path) {
        self.open_url(&format!("file://{}", file.display()));
    }

    /// Polls `expr` until it is true, at most STEP.
    fn wait_for(&mut self, expr: &str) {
        let deadline = Instant::now() + STEP;
        while self.eval(expr) != Value::Bool(true) {
            if Instant::now() > deadline {
                self.fail(&format!("`{expr}` did not become true within {STEP:?}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
