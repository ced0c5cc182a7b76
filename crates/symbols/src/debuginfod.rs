//! debuginfod, elfutils' protocol for fetching debug files and executables by build id over
//! HTTP(S): `GET URL/buildid/HEX/debuginfo` (or `/executable`), from each server in the
//! space-separated `DEBUGINFOD_URLS` in turn. Answers are kept in elfutils' client cache
//! (`$DEBUGINFOD_CACHE_PATH`, else `$XDG_CACHE_HOME/debuginfod_client`, else
//! `~/.cache/debuginfod_client`; `HEX/debuginfo`, `HEX/executable`), so gdb, perf and sear
//! share what any of them fetched; a miss is remembered there as an empty file for ten minutes,
//! as elfutils does. A server that does not answer (refused, unreachable, `DEBUGINFOD_TIMEOUT`
//! seconds without a response, default 90 as elfutils) is warned about once and not asked
//! again during the run, so a down server costs one timeout, not one per binary.
//!
//! What a server sends is kept only if it is an ELF file with the build id asked for, and
//! at most `DEBUGINFOD_MAXSIZE` bytes (elfutils' variable; default 4 GiB), streamed to disk:
//! a server that sends garbage or an endless body costs a warning, not the cache or memory.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

/// How long a miss is remembered (elfutils' `cache_miss_s` default).
const MISS_SECONDS: u64 = 600;
/// The largest file taken from a server unless `DEBUGINFOD_MAXSIZE` says otherwise.
const MAX_BYTES: u64 = 4 << 30;

/// The two kinds of file a server gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    DebugInfo,
    Executable,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::DebugInfo => "debuginfo",
            Kind::Executable => "executable",
        }
    }
}

pub struct Client {
    urls: Vec<String>,
    cache: PathBuf,
    agent: ureq::Agent,
    /// Servers that did not answer: not asked again.
    down: Mutex<HashSet<String>>,
    /// One progress bar per download, drawn only on a terminal.
    bars: indicatif::MultiProgress,
    /// The largest file taken (`DEBUGINFOD_MAXSIZE`).
    max_bytes: u64,
}

/// The client `DEBUGINFOD_URLS` configures (None without it).
pub fn client() -> Option<&'static Client> {
    static CLIENT: OnceLock<Option<Client>> = OnceLock::new();
    CLIENT.get_or_init(Client::from_env).as_ref()
}

fn cache_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("DEBUGINFOD_CACHE_PATH")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("debuginfod_client")))
        .or_else(|| var("HOME").map(|h| h.join(".cache/debuginfod_client")))
}

impl Client {
    fn from_env() -> Option<Client> {
        let urls: Vec<String> = std::env::var("DEBUGINFOD_URLS")
            .ok()?
            .split_whitespace()
            .map(|u| u.trim_end_matches('/').to_owned())
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
            .collect();
        if urls.is_empty() {
            return None;
        }
        let timeout = std::env::var("DEBUGINFOD_TIMEOUT")
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .filter(|&t| t > 0)
            .unwrap_or(90);
        let agent = ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(timeout)))
            .timeout_recv_response(Some(Duration::from_secs(timeout)))
            .timeout_recv_body(Some(Duration::from_secs(timeout.max(300))))
            .http_status_as_error(false)
            .user_agent(concat!("sear/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        let max_bytes = std::env::var("DEBUGINFOD_MAXSIZE")
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .filter(|&t| t > 0)
            .unwrap_or(MAX_BYTES);
        Some(Client {
            urls,
            max_bytes,
            cache: cache_dir()?,
            agent,
            down: Mutex::new(HashSet::new()),
            bars: indicatif::MultiProgress::with_draw_target(
                indicatif::ProgressDrawTarget::stderr(),
            ),
        })
    }

    /// The file of this kind for `build_id`: from the cache, else fetched (and cached).
    pub fn fetch(&self, build_id: &[u8], kind: Kind) -> Option<PathBuf> {
        let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
        if hex.len() < 4 {
            return None;
        }
        let dir = self.cache.join(&hex);
        let dest = dir.join(kind.name());
        if let Ok(m) = std::fs::metadata(&dest) {
            if m.len() > 0 {
                return Some(dest);
            }
            let fresh = m
                .modified()
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok())
                .is_some_and(|age| age.as_secs() < MISS_SECONDS);
            if fresh {
                return None; // a recent miss
            }
        }
        for url in &self.urls {
            if self.is_down(url) {
                continue;
            }
            let at = format!("{url}/buildid/{hex}/{}", kind.name());
            match self.get(
                &at,
                &dir,
                &dest,
                build_id,
                &format!("{} {hex}", kind.name()),
            ) {
                Ok(true) => {
                    log::info!("debuginfod: {} of {hex} from {url}", kind.name());
                    return Some(dest);
                }
                Ok(false) => {}
                Err(e) => {
                    log::warn!(
                        "debuginfod server {url} does not answer ({e}); not asking it again"
                    );
                    self.down
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(url.clone());
                }
            }
        }
        // Remembered as a miss, as elfutils remembers one.
        if std::fs::create_dir_all(&dir).is_ok() && !dest.exists() {
            let _ = std::fs::File::create(&dest);
        }
        None
    }

    fn is_down(&self, url: &str) -> bool {
        self.down
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(url)
    }

    /// Fetches `at` into `dest`: Ok(false) when the server has no such file (or sent one
    /// too big, or not an ELF file with `build_id`: warned about), Err when it did not
    /// answer.
    fn get(
        &self,
        at: &str,
        dir: &Path,
        dest: &Path,
        build_id: &[u8],
        what: &str,
    ) -> Result<bool, String> {
        let mut resp = self
            .agent
            .get(at)
            .header("X-DEBUGINFOD-MAXSIZE", self.max_bytes.to_string())
            .call()
            .map_err(|e| e.to_string())?;
        if resp.status() != 200 {
            return Ok(false);
        }
        let len = resp.body().content_length();
        let too_big = || {
            log::warn!(
                "debuginfod: {at} is larger than {} bytes (DEBUGINFOD_MAXSIZE): not taken",
                self.max_bytes
            );
            Ok(false)
        };
        if len.is_some_and(|n| n > self.max_bytes) {
            return too_big();
        }
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let tmp = dir.join(format!(".{}.tmp", std::process::id()));
        // (A bar per download, drawn only when stderr is a terminal.)
        let bar = self.bars.add(match len {
            Some(n) => indicatif::ProgressBar::new(n),
            None => indicatif::ProgressBar::new_spinner(),
        });
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "debuginfod {msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_message(what.to_owned());
        let mut body = bar.wrap_read(resp.body_mut().as_reader().take(self.max_bytes + 1));
        let n = {
            let mut f = std::fs::File::create(&tmp).map_err(|e| e.to_string())?;
            std::io::copy(&mut body, &mut f)
        };
        bar.finish_and_clear();
        self.bars.remove(&bar);
        match n {
            Ok(n) if n > self.max_bytes => {
                let _ = std::fs::remove_file(&tmp);
                too_big()
            }
            Ok(n) if n > 0 => {
                // Only the file asked for is kept.
                if crate::read_build_id(&tmp).ok().flatten().as_deref() != Some(build_id) {
                    let _ = std::fs::remove_file(&tmp);
                    log::warn!(
                        "debuginfod: {at} sent {n} bytes that are not an ELF file with that \
                         build id: not taken"
                    );
                    return Ok(false);
                }
                std::fs::rename(&tmp, dest).map_err(|e| e.to_string())?;
                Ok(true)
            }
            Ok(_) => {
                let _ = std::fs::remove_file(&tmp);
                Ok(false)
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e.to_string())
            }
        }
    }
}
