//! `sear list`: the events `-e` takes on this machine, in `perf list`'s lines
//! (`  NAME  [KIND]`, each kind sorted by name): hardware, software and cache
//! events, the PMUs' named events (`msr/tsc/`), the raw-event forms, and
//! tracepoints. Hardware events this machine
//! cannot count are listed too, marked so (perf leaves them out); cache events
//! it cannot count are left out, as perf does, with a line saying why.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use crate::cli::ListArgs;

/// What the filters select: kinds, and globs on names (perf's rules: a
/// `sys:event` glob for tracepoints, else `*WORD*` against every name).
struct Selection {
    kinds: Vec<&'static str>,
    tracepoint_globs: Vec<(String, String)>,
    words: Vec<String>,
}

impl Selection {
    fn new(filters: &[String]) -> Selection {
        let mut s = Selection {
            kinds: Vec::new(),
            tracepoint_globs: Vec::new(),
            words: Vec::new(),
        };
        for f in filters {
            match f.as_str() {
                "hw" | "hardware" => s.kinds.push("Hardware event"),
                "sw" | "software" => s.kinds.push("Software event"),
                "cache" | "hwcache" => s.kinds.push("Hardware cache event"),
                "tracepoint" => s.kinds.push("Tracepoint event"),
                "pmu" => s.kinds.push("Kernel PMU event"),
                _ => match f.split_once(':') {
                    Some((sys, ev)) => s.tracepoint_globs.push((sys.into(), ev.into())),
                    None => s.words.push(format!("*{f}*")),
                },
            }
        }
        s
    }

    fn everything(&self) -> bool {
        self.kinds.is_empty() && self.tracepoint_globs.is_empty() && self.words.is_empty()
    }

    /// Whether an event of `kind` named `name` (any of its ` OR ` names) is shown.
    fn shows(&self, kind: &str, name: &str) -> bool {
        self.everything()
            || self.kinds.contains(&kind)
            || self
                .words
                .iter()
                .any(|w| name.split(" OR ").any(|n| record::event::glob_match(w, n)))
    }
}

pub fn run(a: ListArgs) -> Result<ExitCode> {
    let sel = Selection::new(&a.filters);
    let mut out = super::paged_stdout();
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        writeln!(out, "\nList of pre-defined events (to be used in -e):\n")?;
    }
    let mut cache_hidden = 0;
    for e in record::event::catalog() {
        if !sel.shows(e.kind, &e.names) {
            continue;
        }
        let supported = record::event_supported(e.type_, e.config);
        match (supported, e.kind) {
            (true, kind) => writeln!(out, "  {:<50} [{kind}]", e.names)?,
            (false, "Hardware event") => writeln!(
                out,
                "  {:<50} [Hardware event, not supported here: no PMU]",
                e.names
            )?,
            (false, "Hardware cache event") => cache_hidden += 1,
            (false, kind) => writeln!(out, "  {:<50} [{kind}, not supported here]", e.names)?,
        }
    }
    for name in record::event::pmu_events() {
        if sel.shows("Kernel PMU event", &name) {
            writeln!(out, "  {name:<50} [Kernel PMU event]")?;
        }
    }
    if sel.everything() {
        for d in ["rNNN", "cpu/t1=v1[,t2=v2,t3 ...]/modifier"] {
            writeln!(out, "  {d:<50} [Raw hardware event descriptor]")?;
        }
    }
    for (sys, ev) in record::event::tracepoint_names() {
        let name = format!("{sys}:{ev}");
        let by_glob = sel
            .tracepoint_globs
            .iter()
            .any(|(s, e)| record::event::glob_match(s, &sys) && record::event::glob_match(e, &ev));
        // (A word matches a tracepoint's event name, as perf's glob does.)
        let by_word = sel.words.iter().any(|w| record::event::glob_match(w, &ev));
        if sel.everything() || sel.kinds.contains(&"Tracepoint event") || by_glob || by_word {
            writeln!(out, "  {name:<50} [Tracepoint event]")?;
        }
    }
    super::finish(out)?;
    if cache_hidden > 0 {
        log::info!(
            "{cache_hidden} hardware cache events are not listed: this machine has no PMU to count them"
        );
    }
    Ok(ExitCode::SUCCESS)
}
