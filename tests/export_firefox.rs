//! `sear export --format firefox`: the Firefox Profiler's processed format, by structural
//! checks of its tables against the recording's totals (as perf report counts them), and
//! against the format's type definitions at the version the file declares, kept as data in
//! tests/data/firefox-profile-v49.json (the project publishes no importer or JSON schema to
//! install).

mod common;

use std::path::Path;

use common::export::*;
use common::*;
use serde_json::{json, Value};

#[test]
fn firefox_profile_tables_are_consistent_with_the_recordings_totals() {
    let r = recording();
    let v = json(&export(r, "firefox"));
    let meta = &v["meta"];
    assert!(meta["preprocessedProfileVersion"].as_u64().is_some());
    assert!(meta["interval"].as_f64().unwrap() > 0.0);
    let start_ms = meta["startTime"].as_f64().unwrap();
    assert_during_recording(r, (start_ms * 1e6) as u64, "firefox startTime");
    let cats = meta["categories"].as_array().unwrap();
    let ncats = cats.len() as u64;
    let nlibs = v["libs"].as_array().unwrap().len() as i64;
    let mut n = 0u64;
    let mut kernel_frames = 0;
    for t in v["threads"].as_array().unwrap() {
        let len = |tab: &str| t[tab]["length"].as_u64().unwrap();
        let col = |tab: &str, c: &str| {
            t[tab][c]
                .as_array()
                .unwrap_or_else(|| panic!("{tab}.{c}"))
                .clone()
        };
        for (tab, cols) in [
            ("samples", &["stack", "time"][..]),
            (
                "stackTable",
                &["prefix", "frame", "category", "subcategory"][..],
            ),
            (
                "frameTable",
                &[
                    "address",
                    "inlineDepth",
                    "category",
                    "subcategory",
                    "func",
                    "line",
                ][..],
            ),
            (
                "funcTable",
                &["name", "isJS", "relevantForJS", "resource", "fileName"][..],
            ),
            ("resourceTable", &["lib", "name", "type"][..]),
        ] {
            for c in cols {
                assert_eq!(col(tab, c).len() as u64, len(tab), "{tab}.{c}");
            }
        }
        let strings = t["stringArray"].as_array().unwrap().len() as u64;
        let stacks = len("stackTable");
        let times = col("samples", "time");
        assert!(
            times.windows(2).all(|w| w[0].as_f64() <= w[1].as_f64()),
            "sample times in order"
        );
        for s in col("samples", "stack") {
            assert!(s.as_u64().unwrap() < stacks);
        }
        for (i, p) in col("stackTable", "prefix").iter().enumerate() {
            if let Some(p) = p.as_u64() {
                assert!(p < i as u64, "a prefix comes before its stack");
            }
        }
        for f in col("stackTable", "frame") {
            assert!(f.as_u64().unwrap() < len("frameTable"));
        }
        for c in col("stackTable", "category")
            .iter()
            .chain(&col("frameTable", "category"))
        {
            assert!(c.as_u64().unwrap() < ncats);
        }
        for (f, c) in col("frameTable", "func")
            .iter()
            .zip(col("frameTable", "category"))
        {
            assert!(f.as_u64().unwrap() < len("funcTable"));
            if cats[c.as_u64().unwrap() as usize]["name"] == "Kernel" {
                kernel_frames += 1;
            }
        }
        for s in col("funcTable", "name") {
            assert!(s.as_u64().unwrap() < strings);
        }
        for res in col("funcTable", "resource") {
            assert!(res.as_i64().unwrap() < len("resourceTable") as i64);
        }
        for l in col("resourceTable", "lib") {
            assert!((l.as_i64().unwrap()) < nlibs);
        }
        n += len("samples");
    }
    assert_eq!(n, r.samples);
    // The program's system calls are sampled in the kernel: their frames
    // are in the Kernel category.
    assert!(kernel_frames > 0);
}

// The type definitions themselves are data: tests/data/firefox-profile-v49.json (its
// `$comment` says how a type is written there).
// The processed profile format at `preprocessedProfileVersion` 49, as the
// Firefox Profiler's type definitions give it (firefox-devtools/profiler).
// No stored copy of src/types/profile.js from the v49 era itself could be
// found, so the shape is the one of the definitions read, taken back to
// v49 with the upgraders for 50 to 56:
//   [T]  src/types/profile.ts at 3bbfffa16085c66f3cb16d033cd163a62b1d5cac
//        (processed version 56: `shared.stringArray`, no stack categories);
//   [F]  a stored Flow src/types/profile.js of the v53-v55 era (same
//        fields; every object type there is exact, `{| |}`, so fields a
//        type does not declare are violations too);
//   [U]  src/profile-logic/processed-profile-versioning.ts at
//        3bbfffa16085c66f3cb16d033cd163a62b1d5cac, upgraders [50]-[56], and
//        docs-developer/CHANGELOG-formats.md at
//        aac2c134f47c2d4b9d7b5927132a8cd55c010f09, which undo to v49:
//        [50] `samples.time` was required (`timeDeltas` came in 50);
//        [51] marker schemas had no `isStackBased`;
//        [53] stackTable had `category` and `subcategory` columns;
//        [54] frameTable had `implementation`, meta could have
//             `doesNotUseFrameImplementation`, sampleUnits.time was 'ms' only;
//        [55] marker schemas had `data`, not `fields` / `description`;
//        [56] each thread had its own `stringArray` (no `profile.shared`);
//   [M]  src/types/markers.ts at 1812fea023eea9ed90af849035a461c8ebf4db0f
//        (MarkerSchema, before [51] and [55] are undone).
// ---------------------------------------------------------------------------

/// The v49 definitions (tests/data/firefox-profile-v49.json).
fn v49_schema() -> &'static Value {
    static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/firefox-profile-v49.json");
        serde_json::from_slice(&std::fs::read(&path).unwrap()).expect("the v49 definitions parse")
    })
}

/// Where `v` breaks the v49 definitions, each naming its JSON path.
fn v49_violations(v: &Value) -> Vec<String> {
    let schema = v49_schema();
    let mut out = Vec::new();
    check(v, &schema["root"], "profile", None, &mut out);
    out
}

/// A type of the definitions, references (`#NAME`) followed.
fn resolve(ty: &Value) -> &Value {
    match ty.as_str().and_then(|s| s.strip_prefix('#')) {
        Some(name) => {
            let t = &v49_schema()["types"][name];
            assert!(!t.is_null(), "the definitions have no type {name}");
            t
        }
        None => ty,
    }
}

/// `ty` in words, for messages.
fn describe(ty: &Value) -> String {
    let ty = resolve(ty);
    if let Some(p) = ty.as_str() {
        return match p {
            "number" | "string" | "boolean" | "string-index" => format!("a {p}").replace('-', " "),
            "null" => "null".into(),
            _ => "anything".into(),
        };
    }
    if let Some(words) = ty.get("enum") {
        return format!("one of {words}");
    }
    if let Some(alts) = ty.get("or").and_then(Value::as_array) {
        return alts.iter().map(describe).collect::<Vec<_>>().join(" | ");
    }
    if let Some(elem) = ty.get("array") {
        return format!("an array of {}", describe(elem));
    }
    "an object".into()
}

/// Checks `v` against `ty` at `path`; `strings` is the length of the
/// enclosing thread's `stringArray`, once inside a thread.
fn check(v: &Value, ty: &Value, path: &str, strings: Option<usize>, out: &mut Vec<String>) {
    let ty = resolve(ty);
    let expected = |want: &str| {
        let got = v.to_string();
        let short: String = got.chars().take(40).collect();
        let more = if short.len() < got.len() { "…" } else { "" };
        format!("{path}: expected {want}, found {short}{more}")
    };
    if let Some(p) = ty.as_str() {
        let ok = match p {
            "any" => true,
            "number" => v.is_number(),
            "string" => v.is_string(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "string-index" => match (v.as_u64(), strings) {
                (Some(i), Some(n)) if i as usize >= n => {
                    return out.push(expected(&format!("a string index (< stringArray's {n})")))
                }
                (Some(_), _) => true,
                (None, _) => false,
            },
            other => panic!("the definitions name an unknown type {other}"),
        };
        if !ok {
            out.push(expected(&describe(ty)));
        }
        return;
    }
    if let Some(words) = ty.get("enum").and_then(Value::as_array) {
        if !words.iter().any(|w| w == v) {
            out.push(expected(&describe(ty)));
        }
        return;
    }
    if let Some(alts) = ty.get("or").and_then(Value::as_array) {
        let fits = |t: &Value| {
            let mut e = Vec::new();
            check(v, t, path, strings, &mut e);
            e.is_empty()
        };
        if !alts.iter().any(fits) {
            out.push(expected(&describe(ty)));
        }
        return;
    }
    if let Some(elem) = ty.get("array") {
        match v.as_array() {
            Some(a) => {
                for (i, e) in a.iter().enumerate() {
                    check(e, elem, &format!("{path}[{i}]"), strings, out);
                }
            }
            None => out.push(expected("an array")),
        }
        return;
    }
    let (fields, table) = match (ty.get("object"), ty.get("table")) {
        (Some(f), _) => (f, false),
        (None, Some(f)) => (f, true),
        _ => panic!("the definitions hold a type sear cannot read: {ty}"),
    };
    let fields: Vec<(&str, bool, &Value)> = fields
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, t)| match k.strip_suffix('?') {
            Some(name) => (name, false, t),
            None => (k.as_str(), true, t),
        })
        .collect();
    let Some(o) = v.as_object() else {
        return out.push(expected("an object"));
    };
    let strings = o
        .get("stringArray")
        .and_then(Value::as_array)
        .map_or(strings, |a| Some(a.len()));
    for &(name, required, t) in &fields {
        match o.get(name) {
            Some(x) => check(x, t, &format!("{path}.{name}"), strings, out),
            None if required => out.push(format!("{path}.{name}: missing")),
            None => {}
        }
    }
    for k in o.keys().filter(|k| !fields.iter().any(|f| f.0 == *k)) {
        out.push(format!("{path}.{k}: not a field of this (exact) type"));
    }
    if let (true, Some(len)) = (table, o.get("length").and_then(Value::as_u64)) {
        for &(name, _, t) in &fields {
            if resolve(t).get("array").is_none() {
                continue;
            }
            if let Some(n) = o.get(name).and_then(Value::as_array).map(Vec::len) {
                if n as u64 != len {
                    out.push(format!("{path}.{name}: {n} entries, length is {len}"));
                }
            }
        }
    }
}

/// The export conforms to the processed profile format's type definitions
/// at the version it declares (49): every required field present, every
/// field (and column entry) of its declared type, no undeclared fields, and
/// every table column as long as the table.
#[test]
fn firefox_profile_conforms_to_the_v49_type_definitions() {
    let r = recording();
    let v = json(&export(r, "firefox"));
    assert_eq!(v["meta"]["preprocessedProfileVersion"], 49);
    let errors = v49_violations(&v);
    assert!(
        errors.is_empty(),
        "{} violations of the v49 definitions:\n{}",
        errors.len(),
        errors[..errors.len().min(30)].join("\n")
    );

    // The checker itself catches what it should, naming the path.
    let mut broken = v.clone();
    let t = &mut broken["threads"][0];
    t["samples"].as_object_mut().unwrap().remove("time");
    t["funcTable"]["name"][0] = json!(1_000_000_000);
    t["frameTable"]["line"][0] = json!("7");
    t["stackTable"]["frame"]
        .as_array_mut()
        .unwrap()
        .push(json!(0));
    t["extra"] = json!(1);
    broken["libs"][0]["arch"] = Value::Null;
    let errors = v49_violations(&broken);
    for want in [
        "profile.threads[0].samples.time: missing",
        "profile.threads[0].funcTable.name[0]: expected a string index",
        "profile.threads[0].frameTable.line[0]: expected",
        "profile.threads[0].stackTable.frame: ",
        "profile.threads[0].extra: not a field",
        "profile.libs[0].arch: expected a string",
    ] {
        assert!(
            errors.iter().any(|e| e.starts_with(want)),
            "{want} in {errors:#?}"
        );
    }
}

/// With two events, the Firefox profile has a track per thread and event,
/// named after both, and every sample of each event is in its tracks.
#[test]
fn firefox_profile_has_a_track_per_event() {
    let dir = tempfile::tempdir().unwrap();
    let data = two_events(dir.path());
    let want: Vec<(String, u64)> = perf_counts(&data)
        .into_iter()
        .map(|c| (c.event, c.samples))
        .collect();
    assert_eq!(want.len(), 2, "perf shows two events: {want:?}");
    let out = dir.path().join("two.json");
    run_ok(
        sear()
            .args(["export", "--format", "firefox", "-i"])
            .arg(&data)
            .arg("-o")
            .arg(&out),
    );
    let v = json(&out);
    for (ev, n) in &want {
        let got: u64 = v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"].as_str().unwrap().ends_with(&format!(" ({ev})")))
            .map(|t| t["samples"]["length"].as_u64().unwrap())
            .sum();
        assert_eq!(got, *n, "{ev}: samples in its tracks, and perf's");
    }
}
