//! `sear export --format speedscope`: speedscope's published JSON schema (the one its npm
//! package ships, checked with ajv), structural checks with the recording's totals, and
//! speedscope's own importer: the app its npm package ships, opened in headless Chromium as
//! its CLI opens a file, whose Sandwich view must show the times and shares the file holds.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::browser::Browser;
use common::chromium::Chromium;
use common::export::*;
use common::*;
use serde_json::{json, Value};

/// Where `npm install --prefix DIR speedscope@1.25.0 ajv@8` put speedscope's
/// schema and app, and ajv (.ci/run does it): `$SEAR_NPM`, else ~/.cache/sear-npm.
fn npm_dir() -> PathBuf {
    let dir = std::env::var_os("SEAR_NPM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/sear-npm")
        });
    let schema = dir.join("node_modules/speedscope/dist/release/file-format-schema.json");
    assert!(
        schema.exists() && dir.join("node_modules/ajv").exists(),
        "the speedscope tests use speedscope's own schema and app: \
         npm install --prefix {} speedscope@1.25.0 ajv@8 (.ci/run does)",
        dir.display()
    );
    dir
}

/// Validates a JSON file against speedscope's schema with ajv under node;
/// the errors on failure.
fn speedscope_schema_errors(file: &Path) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("validate.js");
    std::fs::write(
        &script,
        r#"
const path = require('path');
const dir = process.argv[2];
const Ajv = require(path.join(dir, 'node_modules/ajv'));
const schema = require(path.join(dir, 'node_modules/speedscope/dist/release/file-format-schema.json'));
const data = JSON.parse(require('fs').readFileSync(process.argv[3], 'utf8'));
const ajv = new Ajv({allErrors: true, strict: false});
if (!ajv.validate(schema, data)) {
  console.log(JSON.stringify(ajv.errors.slice(0, 10), null, 1));
  process.exit(1);
}
"#,
    )
    .unwrap();
    let out = Command::new("node")
        .arg(&script)
        .arg(npm_dir())
        .arg(file)
        .output()
        .expect("node (apt-get install nodejs npm)");
    (!out.status.success()).then(|| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn speedscope_profiles_are_well_formed_with_the_recordings_totals() {
    let r = recording();
    let path = export(r, "speedscope");
    if let Some(e) = speedscope_schema_errors(&path) {
        panic!(
            "{} is not valid by speedscope's schema:\n{e}",
            path.display()
        );
    }
    // The validator itself rejects what is not a speedscope file.
    let bad = r.dir.join("not-speedscope.json");
    std::fs::write(&bad, br#"{"profiles": [{"type": "sampled"}]}"#).unwrap();
    assert!(speedscope_schema_errors(&bad).is_some());
    let v = json(&path);
    assert_eq!(
        v["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    assert!(v["exporter"].as_str().unwrap().starts_with("sear "));
    let frames = v["shared"]["frames"].as_array().unwrap();
    assert!(frames.iter().all(|f| f["name"].is_string()));
    let profiles = v["profiles"].as_array().unwrap();
    assert!(!profiles.is_empty());
    assert!(v["activeProfileIndex"].as_u64().unwrap() < profiles.len() as u64);
    let (mut n, mut period) = (0u64, 0u64);
    for p in profiles {
        assert_eq!(p["type"], "sampled");
        assert_eq!(p["unit"], "nanoseconds");
        let samples = p["samples"].as_array().unwrap();
        let weights = p["weights"].as_array().unwrap();
        assert_eq!(samples.len(), weights.len());
        for st in samples {
            for f in st.as_array().unwrap() {
                assert!(f.as_u64().unwrap() < frames.len() as u64);
            }
        }
        let w: u64 = weights.iter().map(|w| w.as_u64().unwrap()).sum();
        assert_eq!(p["startValue"].as_u64(), Some(0));
        assert_eq!(p["endValue"].as_u64(), Some(w));
        n += samples.len() as u64;
        period += w;
    }
    assert_eq!((n, period), (r.samples, r.period));
    // Root first: work_a last, under its callers.
    let name = |i: &Value| {
        frames[i.as_u64().unwrap() as usize]["name"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let st = profiles[0]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_array().unwrap().iter().map(name).collect::<Vec<_>>())
        .find(|s| s.last().map(String::as_str) == Some("work_a"))
        .expect("a work_a sample");
    assert!(st.len() >= 2 && st[0] != "work_a", "{st:?}");
}

/// speedscope's page after an import, as the test reads it.
#[derive(Debug)]
struct SpeedscopePage {
    /// `NAME - speedscope` once a profile group named NAME is imported.
    title: String,
    /// The toolbar's centre: the profile shown, with `(I/N)` when there are several.
    toolbar: Option<String>,
    /// "Something went wrong": the importer threw.
    error: bool,
    /// What it said with `alert()` ("Unrecognized format!" and the like).
    alerts: Vec<String>,
}

/// The Sandwich view's tab in speedscope's toolbar (shown once a profile is loaded).
const SANDWICH_TAB: &str =
    "[...document.querySelectorAll('div')].find(d => d.children.length === 1 \
     && d.lastChild.nodeType === Node.TEXT_NODE && d.lastChild.textContent === 'Sandwich')";

/// Opens `file` in speedscope's own app, the bundled copy its npm package ships, as the
/// package's CLI does (`speedscope FILE`, bin/cli.mjs): it writes a script calling
/// `speedscope.loadFileFromBase64(NAME, BASE64)` and opens dist/release/index.html with
/// `#localProfilePath=` that script; the app adds it as a `<script src>`, which hands the bytes
/// to its importer. The script starts with one more line than the CLI's: `alert()` is
/// recorded in `window.searAlerts` instead of shown, since a headless page has nobody to
/// dismiss it and would stop. Returns once speedscope shows a profile, its error or an alert
/// (at most STEP).
fn open_in_speedscope(b: &mut impl Browser, file: &Path) -> SpeedscopePage {
    let name = file.file_name().unwrap().to_str().unwrap();
    let script = file.with_extension("speedscope.js");
    std::fs::write(
        &script,
        format!(
            "window.searAlerts = []; window.alert = m => window.searAlerts.push(String(m));\n\
             speedscope.loadFileFromBase64({}, {})",
            json!(name),
            json!(data_encoding::BASE64.encode(&std::fs::read(file).unwrap()))
        ),
    )
    .unwrap();
    let index = npm_dir().join("node_modules/speedscope/dist/release/index.html");
    // A new document each time: a URL that differs only in its #fragment would not reload the
    // app, which reads the fragment once.
    b.open_url("about:blank");
    b.open_url(&format!(
        "file://{}#localProfilePath={}",
        index.display(),
        script.display()
    ));
    b.wait_for(&format!(
        "(window.searAlerts ?? []).length > 0 \
         || document.body.innerText.includes('Something went wrong') || !!{SANDWICH_TAB}"
    ));
    let v = b.eval(&format!(
        "(() => {{ const tab = {SANDWICH_TAB}; const bar = tab?.parentElement.parentElement; \
         return {{ title: document.title, \
         toolbar: bar ? [...bar.childNodes].slice(1, -1).map(n => n.nodeType === Node.TEXT_NODE ? n.textContent : n.innerText).join('').trim() : null, \
         error: document.body.innerText.includes('Something went wrong'), \
         alerts: window.searAlerts ?? [] }}; }})()"
    ));
    SpeedscopePage {
        title: v["title"].as_str().unwrap_or_default().to_owned(),
        toolbar: v["toolbar"].as_str().map(str::to_owned),
        error: v["error"] == json!(true),
        alerts: v["alerts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect(),
    }
}

/// What speedscope's toolbar shows for a file: the active profile's name, and `(I/N)` when
/// the file has several profiles.
fn speedscope_toolbar(v: &Value) -> String {
    let profiles = v["profiles"].as_array().unwrap();
    let i = v["activeProfileIndex"].as_u64().unwrap_or(0) as usize;
    let name = profiles[i]["name"].as_str().unwrap();
    if profiles.len() == 1 {
        name.to_owned()
    } else {
        format!("{name} ({}/{})", i + 1, profiles.len())
    }
}

/// A duration as speedscope prints nanoseconds (`1:05`, `1.23s`, `430.75ms`, `250.00µs`,
/// `12.00ns`), as (value, half its last digit) in nanoseconds; minutes:seconds are whole
/// seconds rounded down.
fn speedscope_duration(s: &str) -> (f64, f64) {
    if let Some((m, sec)) = s.split_once(':') {
        let v = (m.parse::<f64>().unwrap() * 60.0 + sec.parse::<f64>().unwrap()) * 1e9;
        return (v + 0.5e9, 0.5e9);
    }
    let (num, scale) = [("ms", 1e6), ("µs", 1e3), ("ns", 1.0), ("s", 1e9)]
        .iter()
        .find_map(|(unit, scale)| Some((s.strip_suffix(unit)?, *scale)))
        .unwrap_or_else(|| panic!("not one of speedscope's durations: {s:?}"));
    (num.parse::<f64>().unwrap() * scale, 0.005 * scale)
}

/// Whether `pct` (a share in percent) prints as speedscope's `shown` (`67%`, `3.1%`, `0.04%`,
/// `<0.01%`, `>99%`, `100%`: fewer decimals the larger it is).
fn speedscope_percent_matches(shown: &str, pct: f64) -> bool {
    let n = shown
        .strip_suffix('%')
        .unwrap_or_else(|| panic!("{shown:?}"));
    if let Some(n) = n.strip_prefix('>') {
        return pct > n.parse::<f64>().unwrap();
    }
    if let Some(n) = n.strip_prefix('<') {
        return pct < n.parse::<f64>().unwrap();
    }
    let decimals = n.split_once('.').map_or(0, |(_, d)| d.len());
    (n.parse::<f64>().unwrap() - pct).abs() <= 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9
}

/// One row of speedscope's Sandwich table: (name, total, self), each value as printed
/// (`410.75ms (67%)`) and its bar's width (the unrounded percentage, `66.6261%`).
type SandwichRow = (String, (String, String), (String, String));

/// The Sandwich table's rows as drawn. speedscope draws only the rows in view: the heaviest
/// by self time, which are the ones the test looks for.
fn sandwich_rows(b: &mut impl Browser) -> Vec<SandwichRow> {
    let v = b.eval(
        "[...document.querySelectorAll('tr')].filter(r => r.cells.length === 3 && r.cells[0].tagName === 'TD')\
         .map(r => [...r.cells].map(c => [c.textContent, c.querySelector('div > div')?.style.width ?? '']))",
    );
    let s = |c: &Value| c.as_str().unwrap().to_owned();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                s(&r[2][0]),
                (s(&r[0][0]), s(&r[0][1])),
                (s(&r[1][0]), s(&r[1][1])),
            )
        })
        .collect()
}

/// The profile's total, self weight and non-idle total of frame `f` as speedscope counts
/// them: a sample's weight counts once towards each frame on its stack (recursion too),
/// towards the leaf's self, and towards the total unless its stack is empty.
fn speedscope_weights(profile: &Value, f: u64) -> (u64, u64, u64) {
    let (mut total, mut own, mut all) = (0, 0, 0);
    let weights = profile["weights"].as_array().unwrap();
    for (st, w) in profile["samples"].as_array().unwrap().iter().zip(weights) {
        let (st, w) = (st.as_array().unwrap(), w.as_u64().unwrap());
        if st.is_empty() {
            continue;
        }
        all += w;
        if st.iter().any(|x| x.as_u64() == Some(f)) {
            total += w;
        }
        if st.last().unwrap().as_u64() == Some(f) {
            own += w;
        }
    }
    (total, own, all)
}

/// speedscope's own importer reads the export: speedscope's app, from its npm package, opened
/// in headless Chromium as `speedscope FILE` opens it. It shows the profile (the toolbar names
/// it; a two-event recording's file shows `(1/N)`, N its number of profiles), and its
/// Sandwich view lists work_a above work_b with the total and self time and shares our JSON
/// gives them (an independent reading of the numbers: speedscope sums them itself). A file
/// that is not speedscope's is refused and a broken one gives speedscope's error, so these
/// checks can fail.
#[test]
fn speedscope_app_imports_the_export() {
    let r = recording();
    let path = export(r, "speedscope");
    let v = json(&path);
    let dir = tempfile::tempdir().unwrap();
    let mut b = Chromium::launch();

    let page = open_in_speedscope(&mut b, &path);
    assert!(
        !page.error && page.alerts.is_empty(),
        "speedscope did not import {}: {page:?}",
        path.display()
    );
    assert_eq!(
        page.title,
        format!("{} - speedscope", v["name"].as_str().unwrap())
    );
    assert_eq!(
        page.toolbar.as_deref(),
        Some(speedscope_toolbar(&v).as_str())
    );

    // The Sandwich view: a table of every function's total and self time, heaviest self first.
    let tab = b.eval(&format!(
        "(() => {{ const b = {SANDWICH_TAB}.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; }})()"
    ));
    b.click(tab[0].as_f64().unwrap(), tab[1].as_f64().unwrap());
    b.wait_for("[...document.querySelectorAll('th')].some(h => h.textContent === 'Symbol Name')");
    // The table's header can be drawn a frame before its rows: wait for a row.
    b.wait_for(
        "[...document.querySelectorAll('tr')].some(r => r.cells.length === 3 && r.cells[0].tagName === 'TD')",
    );
    let rows = sandwich_rows(&mut b);
    let profile = &v["profiles"][v["activeProfileIndex"].as_u64().unwrap() as usize];
    let frames = v["shared"]["frames"].as_array().unwrap();
    let mut at = Vec::new();
    for name in ["work_a", "work_b"] {
        let f: Vec<u64> = (0..frames.len() as u64)
            .filter(|&i| frames[i as usize]["name"] == name)
            .collect();
        assert_eq!(f.len(), 1, "one frame named {name}");
        let (total, own, all) = speedscope_weights(profile, f[0]);
        let i = rows
            .iter()
            .position(|r| r.0 == name)
            .unwrap_or_else(|| panic!("no {name} in speedscope's Sandwich view: {rows:?}"));
        at.push(i);
        for (what, want, (shown, bar)) in [("total", total, &rows[i].1), ("self", own, &rows[i].2)]
        {
            let msg = format!(
                "{name}'s {what}: speedscope shows {shown:?} (bar {bar}), our JSON has {want} ns of {all}"
            );
            let (time, pct) = shown
                .strip_suffix(')')
                .and_then(|s| s.split_once(" ("))
                .unwrap_or_else(|| panic!("{msg}"));
            let (t, tol) = speedscope_duration(time);
            assert!((t - want as f64).abs() <= tol + 1.0, "{msg}");
            let share = 100.0 * want as f64 / all as f64;
            assert!(speedscope_percent_matches(pct, share), "{msg}");
            let bar: f64 = bar.strip_suffix('%').unwrap().parse().unwrap();
            assert!((bar - share).abs() < 1e-3, "{msg}");
        }
    }
    assert!(at[0] < at[1], "work_a above work_b: {rows:?}");

    // Several profiles: the toolbar counts them.
    let two = dir.path().join("two.json");
    run_ok(
        sear()
            .args(["export", "--format", "speedscope", "-i"])
            .arg(two_events(dir.path()))
            .arg("-o")
            .arg(&two),
    );
    let v2 = json(&two);
    assert!(
        v2["profiles"].as_array().unwrap().len() >= 2,
        "a profile per event"
    );
    let page = open_in_speedscope(&mut b, &two);
    assert!(!page.error && page.alerts.is_empty(), "{page:?}");
    assert_eq!(
        page.toolbar.as_deref(),
        Some(speedscope_toolbar(&v2).as_str())
    );

    // The controls: a JSON file that is not speedscope's is not recognised, and one that says
    // it is but has a profile without its samples and weights makes the importer fail.
    let not_ours = dir.path().join("not-speedscope.json");
    std::fs::write(&not_ours, br#"{"profiles": [{"type": "sampled"}]}"#).unwrap();
    let page = open_in_speedscope(&mut b, &not_ours);
    assert_eq!(
        page.alerts,
        ["Unrecognized format! See documentation about supported formats."],
        "{page:?}"
    );
    assert_eq!(page.toolbar, None, "no profile shown: {page:?}");
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        br#"{"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": []}, "profiles": [{"type": "sampled"}]}"#,
    )
    .unwrap();
    let page = open_in_speedscope(&mut b, &broken);
    assert!(page.error && page.toolbar.is_none(), "{page:?}");
}
