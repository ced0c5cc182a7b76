//! `sear report` in the browser: the report's summed samples kept, its rows
//! built again for each filter or zoom (from a copy of the sums, without
//! reading the recording again), each section's table and each entry's call
//! graph rendered by the same code as the text report, so the browser shows
//! what `--stdio` prints.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use profile::collect::{SampleKey, SampleSum};
use profile::hist::{Filters, Key, SymRef};
use profile::report::{Plan, Rows};
use profile::session::Summed;

use crate::ui::browser::{Action, Annotation, Source, View};

/// What the report has made when it decides to browse.
pub struct Inputs {
    pub path: PathBuf,
    pub summed: Summed,
    pub plan: Plan,
    pub filters: Filters,
    pub group: bool,
    pub no_group: bool,
    pub topts: render::report::TableOptions,
    pub graph: profile::callchain::CallGraphParams,
    pub hide_first_frame: bool,
    /// `sear annotate` options for the annotate view (the recording, names,
    /// ranges).
    pub annotate_args: Vec<OsString>,
}

/// Zooms and the symbol filter in force.
#[derive(Debug, Clone, Default)]
struct Zoom {
    symbol: Option<String>,
    /// The thread's tid and how it is named.
    thread: Option<(i32, String)>,
    dso: Option<String>,
}

struct Browser {
    i: Inputs,
    sums: Vec<(SampleKey, SampleSum)>,
    rows: Rows,
    /// While zoomed: the rows without zoom, for going back at once.
    unzoomed: Option<Rows>,
    /// The sections with samples (indices into the report's sections) and
    /// the one shown.
    shown: Vec<usize>,
    section: usize,
    /// Each shown row's entry index, for the section shown.
    entries: Vec<usize>,
    view: View,
    zoom: Zoom,
}

pub fn run(mut i: Inputs) -> Result<ExitCode> {
    let sums = i.summed.collector.take_sums_in_order();
    let rows = i
        .plan
        .rows_from(&i.summed, sums.clone(), &i.filters, i.group, i.no_group);
    let mut b = Browser {
        i,
        sums,
        rows,
        unzoomed: None,
        shown: Vec::new(),
        section: 0,
        entries: Vec::new(),
        view: View::default(),
        zoom: Zoom::default(),
    };
    b.tables()?;
    crate::ui::print_diagnostics(&b.i.path, b.i.summed.reader.diagnostics());
    crate::ui::browser::run(&mut b)?;
    super::discard(b);
    Ok(ExitCode::SUCCESS)
}

impl Browser {
    fn filters(&self) -> Filters {
        let mut f = self.i.filters.clone();
        if let Some(s) = &self.zoom.symbol {
            f.symbol_filter = Some(s.clone());
        }
        if let Some((tid, _)) = &self.zoom.thread {
            f.tids = Some(vec![*tid]);
        }
        if let Some(d) = &self.zoom.dso {
            f.dsos = Some(vec![d.clone()]);
        }
        f
    }

    fn rebuild(&mut self) -> Result<()> {
        let filters = self.filters();
        if !self.zoomed() {
            if let Some(r) = self.unzoomed.take() {
                self.rows = r;
            }
        } else {
            let rows = self.i.plan.rows_from(
                &self.i.summed,
                self.sums.clone(),
                &filters,
                self.i.group,
                self.i.no_group,
            );
            let before = std::mem::replace(&mut self.rows, rows);
            if self.unzoomed.is_none() {
                self.unzoomed = Some(before);
            } else {
                super::discard(before);
            }
        }
        self.i.topts.single_filters = filters.single_values();
        self.tables()
    }

    /// The shown section's table, as the text report prints it.
    fn tables(&mut self) -> Result<()> {
        let names = self.rows.names(&self.i.summed);
        let sections = render::report::sections(
            &self.rows.report.hists,
            &self.rows.groups,
            &self.rows.section_events,
            &self.rows.section_names,
        );
        self.shown = (0..sections.len())
            .filter(|&s| sections[s].hists.all_samples > 0)
            .collect();
        if self.shown.is_empty() {
            self.view = View {
                title: vec!["No samples".into()],
                ..View::default()
            };
            self.entries.clear();
            return Ok(());
        }
        self.section = self.section.min(self.shown.len() - 1);
        let at = self.shown[self.section];
        let t = render::report::section_table(&self.i.topts, at, &sections[at], &names)?;
        let mut title = vec![if self.shown.len() > 1 {
            format!(
                "{}  [event {}/{}]",
                t.title,
                self.section + 1,
                self.shown.len()
            )
        } else {
            t.title
        }];
        let mut zoom = Vec::new();
        if let Some((tid, name)) = &self.zoom.thread {
            zoom.push(format!("Thread: {name}({tid})"));
        }
        if let Some(d) = &self.zoom.dso {
            zoom.push(format!("DSO: {d}"));
        }
        if let Some(s) = &self.zoom.symbol {
            zoom.push(format!("Symbols containing: {s}"));
        }
        if !zoom.is_empty() {
            title.push(format!("{}  (Esc: all again)", zoom.join(", ")));
        }
        self.entries = t.rows.iter().map(|r| r.0).collect();
        self.view = View {
            title,
            columns: t.columns,
            rows: t.rows.into_iter().map(|r| r.1).collect(),
        };
        Ok(())
    }

    fn entry(&self, row: usize) -> Option<&profile::hist::HistEntry> {
        let sec = *self.shown.get(self.section)?;
        let ev = *self.rows.section_events.get(sec)?;
        self.rows
            .report
            .hists
            .get(ev)?
            .entries
            .get(*self.entries.get(row)?)
    }

    /// The row's symbol (as the report names it) and its DSO's short name.
    fn symbol_of(&self, row: usize) -> Option<(String, Option<String>)> {
        let e = self.entry(row)?;
        let names = self.rows.names(&self.i.summed);
        let sym = e.keys.iter().find_map(|k| match k {
            Key::Sym(SymRef::Sym(id)) | Key::SymOff(SymRef::Sym(id), _) => Some(*id),
            _ => None,
        })?;
        let info = names.syms.get(sym as usize)?;
        let dso = names.dso_names.get(info.dso as usize).cloned();
        Some((info.name.clone(), dso))
    }

    /// The call graphs under these rows, as the text report prints them
    /// (on all cores).
    fn graphs_of(&self, rows: &[usize]) -> Vec<Vec<String>> {
        use rayon::prelude::*;
        let empty = || rows.iter().map(|_| Vec::new()).collect();
        if !self.i.plan.show_graphs || self.shown.is_empty() {
            return empty();
        }
        let sec = self.shown[self.section];
        let ev = self.rows.section_events[sec];
        let Some(h) = self.rows.report.hists.get(ev) else {
            return empty();
        };
        let names = self.rows.names(&self.i.summed);
        let srclines = self.i.graph.key != profile::callchain::ChainKey::Function;
        let o = render::callgraph::EntryGraphOptions {
            params: &self.i.graph,
            children: self.i.plan.children,
            hide_first_frame: self.i.hide_first_frame,
            percent_limit: self.i.topts.percent_limit,
            relative: self.i.topts.relative,
            field_sep: None,
            srclines: srclines.then_some(&self.i.summed.syms),
            srcline_key: self.i.graph.key == profile::callchain::ChainKey::Srcline,
            color: false,
        };
        let (report, syms) = (&self.rows.report, &self.i.summed.syms.syms);
        let entries: Vec<Option<&profile::hist::HistEntry>> = rows
            .iter()
            .map(|&r| self.entries.get(r).and_then(|&i| h.entries.get(i)))
            .collect();
        entries
            .par_iter()
            .with_max_len(1)
            .map(|e| {
                let Some(e) = e else {
                    return Vec::new();
                };
                let mut buf = Vec::new();
                // (Writing to a Vec cannot fail.)
                let _ =
                    render::callgraph::write_entry_graph(&mut buf, e, h, report, syms, &names, &o);
                let text = String::from_utf8_lossy(&buf);
                let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
                while lines.last().is_some_and(|l| l.trim().is_empty()) {
                    lines.pop();
                }
                lines
            })
            .collect()
    }
}

impl Source for Browser {
    fn view(&self) -> &View {
        &self.view
    }

    fn graph(&mut self, row: usize) -> Vec<String> {
        self.graphs_of(&[row]).pop().unwrap_or_default()
    }

    fn graphs(&mut self, rows: &[usize]) -> Vec<Vec<String>> {
        self.graphs_of(rows)
    }

    fn act(&mut self, a: Action) -> Result<(), String> {
        let before = (self.zoom.clone(), self.section);
        match a {
            Action::Filter(s) => self.zoom.symbol = s,
            Action::ZoomThread(row) => {
                if self.zoom.thread.take().is_none() {
                    let e = self.entry(row).ok_or("no entry selected")?;
                    let names = self.rows.names(&self.i.summed);
                    let tid = self.i.summed.machine.thread_info(e.thread as usize).tid;
                    self.zoom.thread = Some((tid, names.thread_comm(e.thread)));
                }
            }
            Action::ZoomDso(row) => {
                if self.zoom.dso.take().is_none() {
                    let e = self.entry(row).ok_or("no entry selected")?;
                    let names = self.rows.names(&self.i.summed);
                    let dso = e.keys.iter().find_map(|k| match k {
                        Key::Dso(Some(d)) => names.dso_names.get(*d as usize).cloned(),
                        _ => None,
                    });
                    let dso = dso
                        .or_else(|| self.symbol_of(row).and_then(|s| s.1))
                        .ok_or("this entry has no shared object to zoom into")?;
                    self.zoom.dso = Some(dso);
                }
            }
            Action::Unzoom => self.zoom = Zoom::default(),
            Action::NextEvent | Action::PrevEvent => {
                let n = self.shown.len().max(1);
                self.section = if a == Action::NextEvent {
                    (self.section + 1) % n
                } else {
                    (self.section + n - 1) % n
                };
                return self.tables().map_err(|e| format!("{e:#}"));
            }
        }
        if let Err(e) = self.rebuild() {
            (self.zoom, self.section) = before;
            return Err(format!("{e:#}"));
        }
        Ok(())
    }

    fn annotate(&mut self, row: usize) -> Result<Annotation, String> {
        if self.i.path.as_os_str() == "-" {
            return Err("annotate needs the recording as a file (-i FILE), not stdin".into());
        }
        let (name, dso) = self
            .symbol_of(row)
            .ok_or("this entry has no symbol to annotate")?;
        let mut args: Vec<&std::ffi::OsStr> = self
            .i
            .annotate_args
            .iter()
            .map(OsString::as_os_str)
            .collect();
        let os = std::ffi::OsStr::new;
        args.extend([os("-s"), os(&name)]);
        if let Some(d) = &dso {
            args.extend([os("-d"), os(d)]);
        }
        let text = super::annotate::text(&args).map_err(|e| format!("annotate {name}: {e:#}"))?;
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        Ok(Annotation {
            title: format!(
                "Annotate {name}{}",
                dso.map(|d| format!(" ({d})")).unwrap_or_default()
            ),
            hot: hottest_line(&lines),
            lines,
        })
    }

    fn zoomed(&self) -> bool {
        self.zoom.symbol.is_some() || self.zoom.thread.is_some() || self.zoom.dso.is_some()
    }
}

/// The annotate line with the largest value in its first column (perf's
/// annotate browser starts on the hottest instruction).
fn hottest_line(lines: &[String]) -> usize {
    let mut best = (0usize, 0.0f64);
    for (i, l) in lines.iter().enumerate() {
        let Some((v, _)) = l.split_once(':') else {
            continue;
        };
        if let Ok(x) = v.trim().parse::<f64>() {
            if x > best.1 {
                best = (i, x);
            }
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn hottest_line_is_the_largest_value() {
        let lines: Vec<String> = [
            " Percent |\tSource code",
            "    0.00 :   401000:  push %rbp",
            "   62.50 :   401004:  add %eax,%ebx",
            "   37.50 :   401008:  jne 401004",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(super::hottest_line(&lines), 2);
    }
}
