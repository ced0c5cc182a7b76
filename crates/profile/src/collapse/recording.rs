//! Folding a replayed recording: each distinct summed sample of pass one
//! becomes the stack `perf script` would print for it, folded by the same
//! rules as text input ([`super::perf_script::Collapser`]), at a cost that
//! grows with distinct stacks and locations, not with samples.

use rustc_hash::FxHashMap as HashMap;

use perf_data::Diagnostics;

use super::perf_script::{Collapser, Options, Weight};
use super::Folded;
use crate::machine::Machine;
use crate::resolve::{Collector, SampleKey, SampleSum, NO_DSO};
use crate::symbolize::Symbols;

/// What [`fold`] needs besides the collapser's options.
pub struct Recording<'a> {
    pub collector: &'a Collector,
    pub sums: &'a [(SampleKey, SampleSum)],
    pub syms: &'a Symbols,
    pub machine: &'a Machine,
    /// Event names by event index, as the recording names them.
    pub event_names: &'a [String],
    /// Mark inline frames `_[i]` (they are always expanded where perf
    /// expands them; unmarked, as `perf script` text folds them, otherwise).
    pub mark_inline: bool,
}

/// Whether `asked` names `event`: exactly, or without perf's modifiers
/// (`cpu-clock` for `cpu-clock:ppp`).
pub fn event_matches(event: &str, asked: &str) -> bool {
    event == asked || event.split(':').next() == Some(asked)
}

/// Folds the samples of one event (the option's `event_filter`, else the
/// first event sampled); returns the stacks and the collapser's warnings.
pub fn fold(r: &Recording<'_>, opts: &Options) -> (Folded, Diagnostics) {
    let mut c = Collapser::new(Options {
        inline: false,
        ..opts.clone()
    });
    let mut diag = Diagnostics::default();
    let event = match &opts.event_filter {
        Some(asked) => r
            .event_names
            .iter()
            .position(|e| event_matches(e, asked))
            .map(|i| i as u32),
        None => r.sums.first().map(|(k, _)| k.event),
    };
    let other = r
        .sums
        .iter()
        .filter(|(k, _)| Some(k.event) != event)
        .count();
    if other > 0 {
        let which = event
            .and_then(|e| r.event_names.get(e as usize))
            .map_or("no event", |s| s.as_str());
        diag.warn("other event", 0, || {
            format!("samples of other events than {which} skipped (choose with --event-filter)")
        });
    }
    let locs = r.collector.interner.locs();
    let dsos = r.machine.dsos();
    let comms = r.collector.comms();
    // Folded names per (location, java comm), leaf first.
    let mut cache: HashMap<(u32, bool), Vec<Vec<u8>>> = HashMap::default();
    let mut stack = Vec::new();
    let mut key = Vec::new();
    let mut names: Vec<(u32, bool)> = Vec::new();
    for (k, sum) in r.sums {
        if Some(k.event) != event {
            continue;
        }
        let comm = comms.get(k.comm as usize).map_or("", |c| c.as_str());
        let java = comm == "java";
        let th = r.machine.thread_info(k.thread as usize);
        key.clear();
        key.extend(comm.bytes().map(|b| if b == b' ' { b'_' } else { b }));
        if opts.include_tid {
            key.extend_from_slice(format!("-{}/{}", th.pid, th.tid).as_bytes());
        } else if opts.include_pid {
            key.extend_from_slice(format!("-{}", th.pid).as_bytes());
        }
        r.collector.interner.stack(k.stack, &mut stack);
        if stack.is_empty() {
            stack.push(k.leaf);
        }
        names.clear();
        for &lid in &stack {
            let entry = cache.entry((lid, java)).or_insert_with(|| {
                let l = &locs[lid as usize];
                let pc = format!("{:x}", l.ip);
                let module = |dso: u32| -> &str {
                    if dso == NO_DSO {
                        "[unknown]"
                    } else {
                        dsos.get(dso as usize)
                            .map_or("[unknown]", |d| d.name.as_str())
                    }
                };
                let mut out = Vec::new();
                match r.syms.per_loc.get(lid as usize).filter(|s| s.sym.is_some()) {
                    Some(ls) => {
                        for &f in &ls.frames {
                            let s = &r.syms.syms[f as usize];
                            let m = if s.inlined { "inlined" } else { module(s.dso) };
                            for mut n in
                                c.frame_names(java, pc.as_bytes(), s.name.as_bytes(), m.as_bytes())
                            {
                                if s.inlined && r.mark_inline {
                                    n.extend_from_slice(b"_[i]");
                                }
                                out.push(n);
                            }
                        }
                    }
                    None => {
                        out.extend(c.frame_names(
                            java,
                            pc.as_bytes(),
                            b"[unknown]",
                            module(l.dso).as_bytes(),
                        ));
                    }
                }
                out
            });
            if !entry.is_empty() {
                names.push((lid, java));
            }
        }
        for id in names.iter().rev() {
            for n in cache[id].iter().rev() {
                key.push(b';');
                key.extend_from_slice(n);
            }
        }
        let count = match opts.weight {
            Weight::Samples => sum.samples,
            // As for text: a zero period counts as one per sample.
            Weight::Period if sum.period == 0 => sum.samples,
            Weight::Period => sum.period,
        };
        c.add_folded(&key, count);
    }
    let (folded, mut d) = c.finish();
    if d.warnings.remove("no samples").is_some() {
        diag.warn("no samples", 0, || {
            "the recording has no samples of that event".into()
        });
    }
    for (kind, w) in d.warnings {
        diag.warnings.entry(kind).or_insert(w);
    }
    (folded, diag)
}
