//! `sear annotate`: perf annotate's per-instruction view of hot functions.
//!
//! Pass one sums each sample's own location (the leaf, its exact address); pass two
//! symbolizes the locations; then each function's samples are spread over its
//! instructions, and the function is disassembled from its binary (found as report finds
//! it: the recorded path with a matching build id, else the build-id cache).

use std::collections::HashMap;
use std::process::ExitCode;

use anyhow::{Context, Result};
use profile::annotate::{AnnotateOptions, Annotated, Hits, SourceFiles};
use profile::resolve::CollectOptions;
use render::annotate::{Column, Header, Options};
use symbols::disasm::{AddressNames, Syntax};
use symbols::{Binary, Svma};

use crate::cli::AnnotateArgs;

/// One function's samples in one event.
struct Entry {
    event: usize,
    sym: u32,
    hits: Hits,
}

pub fn run(a: AnnotateArgs) -> Result<ExitCode> {
    let syntax = match a.disassembler_style.as_deref() {
        None => Syntax::Att,
        Some(s) => Syntax::parse(s).with_context(|| {
            format!("-M/--disassembler-style {s}: not a syntax sear knows (att or intel)")
        })?,
    };
    let wanted = a.symbol.clone().or_else(|| a.name.clone());
    let path = super::input_path(&a.input);
    let reader = super::open(&path)?;
    let names = crate::cli::NameArgs {
        no_demangle: a.no_demangle,
        short_names: false,
    }
    .style();
    let super::replay::Replayed {
        mut collector,
        machine,
        syms,
        reader,
        ..
    } = super::replay::replay(
        &path,
        reader,
        &super::replay::ReplayOptions {
            collect: CollectOptions {
                callchains: false,
                ..Default::default()
            },
            names,
            inline: false,
            srclines: false,
        },
    )?;
    let meta = reader.meta();
    let dsos = machine.dsos();
    let dso_filter = super::name_list(&a.dsos);
    let dso_ok = |d: u32| -> bool {
        let Some(list) = &dso_filter else {
            return true;
        };
        let Some(dso) = dsos.get(d as usize) else {
            return false;
        };
        let short = profile::hist::dso_short_name(&dso.name);
        list.iter().any(|x| *x == dso.name || *x == short)
    };
    let sym_ok = |name: &str| -> bool {
        match &wanted {
            None => true,
            // A C++ name matches with or without its parameter list.
            Some(w) => name == w || name.split_once('(').is_some_and(|(head, _)| head == w),
        }
    };

    // Every sample's own location, summed per (event, function, address).
    let mut entries: Vec<Entry> = Vec::new();
    let mut index: HashMap<(usize, u32), usize> = HashMap::new();
    let mut event_totals = vec![0u64; meta.events.len()];
    for (key, sum) in collector.take_sums_in_order() {
        let ev = key.event as usize;
        if let Some(t) = event_totals.get_mut(ev) {
            *t = t.wrapping_add(sum.period);
        }
        let Some(loc) = syms.per_loc.get(key.leaf as usize) else {
            continue;
        };
        let Some(sym_id) = loc.sym else {
            continue;
        };
        let sym = &syms.syms[sym_id as usize];
        if !dso_ok(sym.dso) || !sym_ok(&sym.name) {
            continue;
        }
        let i = *index.entry((ev, sym_id)).or_insert_with(|| {
            entries.push(Entry {
                event: ev,
                sym: sym_id,
                hits: Hits::default(),
            });
            entries.len() - 1
        });
        let addr = sym.start.wrapping_add(loc.sym_offset);
        entries[i].hits.add(addr, sum.samples, sum.period);
    }
    if let Some(w) = &wanted {
        if entries.is_empty() {
            // Functions of binaries that could not be read have no names: say which.
            let unread: Vec<String> = syms
                .misses
                .iter()
                .filter(|(d, _)| d.starts_with('/'))
                .map(|(d, r)| {
                    let id = dsos
                        .iter()
                        .find(|x| &x.name == d)
                        .and_then(|x| x.build_id.as_deref());
                    format!("{d}: {r}{}", missing_hint(*r, id))
                })
                .collect();
            let also = if unread.is_empty() {
                String::new()
            } else {
                format!(
                    "; the functions of these recorded binaries are unknown because they cannot be read: {}",
                    unread.join("; ")
                )
            };
            anyhow::bail!(
                "symbol `{w}` has no samples in {}{}: `sear report --no-children --sort dso,sym` lists the functions that do{also}",
                path.display(),
                match &a.dsos {
                    Some(d) => format!(" (in the DSOs {d})"),
                    None => String::new(),
                }
            );
        }
    }
    // Per event, hottest first (ties by name, then address).
    entries.sort_by(|x, y| {
        let (sx, sy) = (&syms.syms[x.sym as usize], &syms.syms[y.sym as usize]);
        x.event
            .cmp(&y.event)
            .then(y.hits.period.cmp(&x.hits.period))
            .then_with(|| sx.name.cmp(&sy.name))
            .then(sx.start.cmp(&sy.start))
    });
    if let Some(limit) = a.percent_limit {
        entries.retain(|e| {
            let total = event_totals.get(e.event).copied().unwrap_or(0);
            total > 0 && e.hits.period as f64 * 100.0 / total as f64 >= limit
        });
    }

    let opts = AnnotateOptions {
        syntax,
        source: !a.no_source,
    };
    let ropts = Options {
        column: if a.show_total_period {
            Column::Period
        } else if a.show_nr_samples {
            Column::Samples
        } else {
            Column::Percent
        },
        print_line: a.print_line,
    };
    let finder = symbols::DebugFinder::default();
    let mut binaries: HashMap<u32, Result<(Binary, AddressNames), String>> = HashMap::new();
    let mut annotations: HashMap<u32, Result<Annotated, String>> = HashMap::new();
    let mut sources = SourceFiles::default();
    let mut out = super::paged_stdout();
    let mut warned = std::collections::HashSet::new();
    // Functions whose code cannot be disassembled, said once each after the output: as
    // warnings beside what was printed, or as the error when nothing was.
    let mut func_failures: Vec<String> = Vec::new();
    // Per DSO that cannot be read: (functions skipped, why, the first one's name).
    let mut dso_failures: HashMap<u32, (usize, String, Option<String>)> = HashMap::new();
    let mut printed = 0usize;
    for e in &entries {
        let sym = &syms.syms[e.sym as usize];
        let Some(dso) = dsos.get(sym.dso as usize) else {
            continue;
        };
        let bin = binaries
            .entry(sym.dso)
            .or_insert_with(|| open(&dso.name, dso.build_id.as_deref(), &finder));
        let (bin, names) = match bin {
            Ok(b) => b,
            Err(msg) => {
                // One message per DSO, with how many functions it kept from view.
                let n = dso_failures
                    .entry(sym.dso)
                    .or_insert((0, msg.clone(), None));
                n.0 += 1;
                n.2.get_or_insert_with(|| sym.name.clone());
                continue;
            }
        };
        let ann = annotations.entry(e.sym).or_insert_with(|| {
            profile::annotate::annotate_function(
                bin,
                names,
                &mut sources,
                &sym.name,
                Svma(sym.start),
                Svma(sym.start.wrapping_add(sym.size.max(1))),
                &opts,
            )
            .map_err(|err| format!("{}: {err}", dso.name))
        });
        let ann = match ann {
            Ok(a) => a,
            Err(msg) => {
                // Said once per function, not once per event.
                if warned.insert(e.sym) {
                    func_failures.push(format!("cannot annotate {}: {msg}", sym.name));
                }
                continue;
            }
        };
        let per_insn = e.hits.per_insn(ann);
        if a.print_line {
            render::annotate::write_summary(&mut out, &dso.name, ann, &per_insn, e.hits.period)?;
        }
        let event = meta
            .events
            .get(e.event)
            .map(|ev| ev.name())
            .unwrap_or_default();
        let dso_base = dso.name.rsplit('/').next().unwrap_or(&dso.name);
        let header = Header {
            dso: dso_base,
            event: &event,
            samples: e.hits.samples,
        };
        render::annotate::write_function(&mut out, ann, &per_insn, e.hits.period, &header, &ropts)?;
        printed += 1;
    }
    super::finish(out)?;
    crate::ui::print_diagnostics(&path, reader.diagnostics());
    let mut failures: Vec<_> = dso_failures.into_values().collect();
    failures.sort_by(|x, y| y.0.cmp(&x.0).then_with(|| x.1.cmp(&y.1)));
    for (n, msg, first) in &failures {
        let what = match (n, first) {
            (1, Some(name)) => name.clone(),
            _ => format!("{n} functions of"),
        };
        let sep = if what.ends_with(" of") { " " } else { ": " };
        func_failures.push(format!("cannot annotate {what}{sep}{msg}"));
    }
    // With nothing printed, the last failure is the error and the others are warnings.
    let last_error = if printed == 0 {
        func_failures.pop()
    } else {
        None
    };
    for m in &func_failures {
        log::warn!("{m}");
    }
    if let Some(m) = last_error {
        anyhow::bail!("{m}");
    }
    if printed == 0 && entries.is_empty() {
        log::warn!("{}: no samples to annotate", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The binary of a DSO and the names of its addresses, or what to tell the user.
fn open(
    name: &str,
    build_id: Option<&[u8]>,
    finder: &symbols::DebugFinder,
) -> Result<(Binary, AddressNames), String> {
    if name.starts_with("[kernel.kallsyms]") || name.ends_with(".ko") || name.contains(".ko.") {
        return Err(format!(
            "{name}: kernel code is not annotated yet (sear does not read vmlinux or /proc/kcore)"
        ));
    }
    if !name.starts_with('/') {
        return Err(format!("{name}: no file holds this code"));
    }
    match profile::symbolize::open_binary(name, build_id, finder) {
        Ok(bin) => {
            let names = AddressNames::from_elf(bin.elf());
            Ok((bin, names))
        }
        Err(reason) => Err(format!(
            "{name}: {reason}{}",
            missing_hint(reason, build_id)
        )),
    }
}

/// What to do about a binary that cannot be read.
fn missing_hint(reason: symbols::Reason, build_id: Option<&[u8]>) -> String {
    let id = build_id.map(|b| b.iter().map(|x| format!("{x:02x}")).collect::<String>());
    match (reason, id) {
        (symbols::Reason::NoSuchFile, Some(id)) => format!(
            " (put the binary back at that path, or add it to the build-id cache with `perf buildid-cache -a FILE`; its build id is {id})"
        ),
        (symbols::Reason::NoSuchFile, None) => " (put the binary back at that path)".to_owned(),
        (symbols::Reason::BuildIdMismatch, Some(id)) => format!(
            " (the file there was rebuilt after the recording: add the recorded one, build id {id}, with `perf buildid-cache -a FILE`)"
        ),
        _ => String::new(),
    }
}
