//! The browser's sources: `sear report`'s (a recording's summed samples)
//! and the table model it shares with `sear top` (a live session's). The
//! rows are built once; a filter or zoom marks again which entries they
//! hide and sums the totals again (`Rows::apply_filters`, what the build
//! itself ends with), so it costs a pass over the entries, not a build.
//! Each section's table and each entry's call graph are rendered by the
//! same code as the text report, so the browser shows what `--stdio`
//! prints.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use profile::hist::{Filters, Key, SymRef};
use profile::report::{Parts, Plan, Rows};
use profile::session::Summed;

use crate::ui::browser::{Action, Annotation, Source, View};

/// What the table is made with: the report's plan and options.
pub struct TableSetup {
    pub plan: Plan,
    pub filters: Filters,
    pub group: bool,
    pub no_group: bool,
    pub topts: render::report::TableOptions,
    pub graph: profile::callchain::CallGraphParams,
    pub hide_first_frame: bool,
}

/// Zooms and the symbol filter in force.
#[derive(Debug, Clone, Default)]
struct Zoom {
    symbol: Option<String>,
    /// The thread's tid and how it is named.
    thread: Option<(i32, String)>,
    dso: Option<String>,
}

impl Zoom {
    fn any(&self) -> bool {
        self.symbol.is_some() || self.thread.is_some() || self.dso.is_some()
    }
}

/// The table the browser shows, built from a summing session's parts.
pub struct Table {
    pub s: TableSetup,
    rows: Option<Rows>,
    /// The sections with samples (indices into the report's sections) and
    /// the one shown.
    shown: Vec<usize>,
    section: usize,
    /// Each shown row's entry index, for the section shown.
    entries: Vec<usize>,
    pub view: View,
    zoom: Zoom,
    /// Lines the view's title starts with (top's rate line).
    pub head: Vec<String>,
    /// Shown rows at most (top's `-E`; 0: all).
    pub max_rows: usize,
}

impl Table {
    pub fn new(s: TableSetup) -> Self {
        Table {
            s,
            rows: None,
            shown: Vec::new(),
            section: 0,
            entries: Vec::new(),
            view: View::default(),
            zoom: Zoom::default(),
            head: Vec::new(),
            max_rows: 0,
        }
    }

    fn filters(&self) -> Filters {
        let mut f = self.s.filters.clone();
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

    /// Builds the rows from `sums` (with the zoom in force) and the table.
    pub fn build(
        &mut self,
        parts: Parts<'_>,
        sums: Vec<(profile::collect::SampleKey, profile::collect::SampleSum)>,
    ) -> Result<()> {
        let filters = self.filters();
        let rows = self
            .s
            .plan
            .rows_of(parts, sums, &filters, self.s.group, self.s.no_group);
        if let Some(b) = self.rows.replace(rows) {
            // Freed beside the view (a live view rebuilds for as long as it
            // runs: its old rows must not pile up, nor delay the redraw).
            std::thread::spawn(move || drop(b));
        }
        self.s.topts.single_filters = filters.single_values();
        self.tables(parts)
    }

    /// The rows with the zoom now in force, and the table.
    fn refilter(&mut self, parts: Parts<'_>) -> Result<()> {
        let filters = self.filters();
        if let Some(rows) = &mut self.rows {
            rows.apply_filters(parts, &filters);
        }
        self.s.topts.single_filters = filters.single_values();
        self.tables(parts)
    }

    /// The shown section's table, as the text report prints it.
    fn tables(&mut self, parts: Parts<'_>) -> Result<()> {
        let Some(rows) = &self.rows else {
            return Ok(());
        };
        let names = rows.names_of(parts);
        let sections = render::report::sections(
            &rows.report.hists,
            &rows.groups,
            &rows.section_events,
            &rows.section_names,
        );
        self.shown = (0..sections.len())
            .filter(|&s| sections[s].hists.all_samples > 0)
            .collect();
        let mut title = self.head.clone();
        if self.shown.is_empty() {
            title.push("No samples yet".into());
            self.view = View {
                title,
                ..View::default()
            };
            self.entries.clear();
            return Ok(());
        }
        self.section = self.section.min(self.shown.len() - 1);
        let at = self.shown[self.section];
        let mut t = render::report::section_table(&self.s.topts, at, &sections[at], &names)?;
        if self.max_rows > 0 {
            t.rows.truncate(self.max_rows);
        }
        title.push(if self.shown.len() > 1 {
            format!(
                "{}  [event {}/{}]",
                t.title,
                self.section + 1,
                self.shown.len()
            )
        } else {
            t.title
        });
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
        let rows = self.rows.as_ref()?;
        let sec = *self.shown.get(self.section)?;
        let ev = *rows.section_events.get(sec)?;
        rows.report
            .hists
            .get(ev)?
            .entries
            .get(*self.entries.get(row)?)
    }

    /// The row's symbol (as the report names it) and its DSO's short name.
    pub fn symbol_of(&self, parts: Parts<'_>, row: usize) -> Option<(String, Option<String>)> {
        self.symbol_and_dso(parts, row)
            .map(|(n, d)| (n, d.map(|d| d.0)))
    }

    /// The row's symbol and its DSO's short and full names (the full name
    /// picks one binary where several share a base name).
    pub fn symbol_and_dso(
        &self,
        parts: Parts<'_>,
        row: usize,
    ) -> Option<(String, Option<(String, String)>)> {
        let e = self.entry(row)?;
        let names = self.rows.as_ref()?.names_of(parts);
        let sym = e.keys.iter().find_map(|k| match k {
            Key::Sym(SymRef::Sym(id)) | Key::SymOff(SymRef::Sym(id), _) => Some(*id),
            _ => None,
        })?;
        let info = names.syms.get(sym as usize)?;
        let dso = names.dso_names.get(info.dso as usize).cloned().zip(
            parts
                .machine
                .dsos()
                .get(info.dso as usize)
                .map(|d| d.name.clone()),
        );
        Some((info.name.clone(), dso))
    }

    /// The call graphs under these rows, as the text report prints them
    /// (on all cores).
    pub fn graphs_of(&self, parts: Parts<'_>, rows: &[usize]) -> Vec<Vec<String>> {
        use rayon::prelude::*;
        let empty = || rows.iter().map(|_| Vec::new()).collect();
        let Some(r) = &self.rows else {
            return empty();
        };
        if !self.s.plan.show_graphs || self.shown.is_empty() {
            return empty();
        }
        let sec = self.shown[self.section];
        let ev = r.section_events[sec];
        let Some(h) = r.report.hists.get(ev) else {
            return empty();
        };
        let names = r.names_of(parts);
        let srclines = self.s.graph.key != profile::callchain::ChainKey::Function;
        let o = render::callgraph::EntryGraphOptions {
            params: &self.s.graph,
            children: self.s.plan.children,
            hide_first_frame: self.s.hide_first_frame,
            percent_limit: self.s.topts.percent_limit,
            relative: self.s.topts.relative,
            field_sep: None,
            srclines: srclines.then_some(parts.syms),
            srcline_key: self.s.graph.key == profile::callchain::ChainKey::Srcline,
            color: false,
        };
        let (report, syms) = (&r.report, &parts.syms.syms);
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
                    render::callgraph::write_entry_graph(&mut buf, e, ev, report, syms, &names, &o);
                let text = String::from_utf8_lossy(&buf);
                let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
                while lines.last().is_some_and(|l| l.trim().is_empty()) {
                    lines.pop();
                }
                lines
            })
            .collect()
    }

    /// Applies a key's action.
    pub fn act(&mut self, parts: Parts<'_>, a: Action) -> Result<(), String> {
        let before = (self.zoom.clone(), self.section);
        match a {
            Action::Filter(s) => self.zoom.symbol = s,
            Action::ZoomThread(row) => {
                if self.zoom.thread.take().is_none() {
                    let e = self.entry(row).ok_or("no entry selected")?;
                    let names = self.rows.as_ref().ok_or("no rows")?.names_of(parts);
                    let tid = parts.machine.thread_info(e.thread as usize).tid;
                    self.zoom.thread = Some((tid, names.thread_comm(e.thread)));
                }
            }
            Action::ZoomDso(row) => {
                if self.zoom.dso.take().is_none() {
                    let e = self.entry(row).ok_or("no entry selected")?;
                    let names = self.rows.as_ref().ok_or("no rows")?.names_of(parts);
                    let dso = e.keys.iter().find_map(|k| match k {
                        Key::Dso(Some(d)) => names.dso_names.get(*d as usize).cloned(),
                        _ => None,
                    });
                    let dso = dso
                        .or_else(|| self.symbol_of(parts, row).and_then(|s| s.1))
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
                return self.tables(parts).map_err(|e| format!("{e:#}"));
            }
        }
        if let Err(e) = self.refilter(parts) {
            (self.zoom, self.section) = before;
            return Err(format!("{e:#}"));
        }
        Ok(())
    }

    pub fn zoomed(&self) -> bool {
        self.zoom.any()
    }
}

/// What the report has made when it decides to browse.
pub struct Inputs {
    pub path: PathBuf,
    pub summed: Summed,
    pub setup: TableSetup,
    /// `sear annotate` options for the annotate view (the recording, names,
    /// ranges).
    pub annotate_args: Vec<OsString>,
}

struct Browser {
    path: PathBuf,
    summed: Summed,
    table: Table,
    annotate_args: Vec<OsString>,
}

pub fn run(mut i: Inputs) -> Result<ExitCode> {
    let sums = i.summed.collector.take_sums_in_order();
    let mut table = Table::new(i.setup);
    table.build(i.summed.parts(), sums)?;
    let mut b = Browser {
        path: i.path,
        summed: i.summed,
        table,
        annotate_args: i.annotate_args,
    };
    crate::ui::print_diagnostics(&b.path, b.summed.reader.diagnostics());
    crate::ui::browser::run(&mut b)?;
    super::discard(b);
    Ok(ExitCode::SUCCESS)
}

impl Source for Browser {
    fn view(&self) -> &View {
        &self.table.view
    }

    fn graphs(&mut self, rows: &[usize]) -> Vec<Vec<String>> {
        self.table.graphs_of(self.summed.parts(), rows)
    }

    fn act(&mut self, a: Action) -> Result<(), String> {
        self.table.act(self.summed.parts(), a)
    }

    fn annotate(&mut self, row: usize) -> Result<Annotation, String> {
        if self.path.as_os_str() == "-" {
            return Err("annotate needs the recording as a file (-i FILE), not stdin".into());
        }
        let (name, dso) = self
            .table
            .symbol_and_dso(self.summed.parts(), row)
            .ok_or("this entry has no symbol to annotate")?;
        let mut args: Vec<&std::ffi::OsStr> =
            self.annotate_args.iter().map(OsString::as_os_str).collect();
        let os = std::ffi::OsStr::new;
        args.extend([os("-s"), os(&name)]);
        if let Some((_, long)) = &dso {
            args.extend([os("-d"), os(long)]);
        }
        let text = super::annotate::text(&args).map_err(|e| format!("annotate {name}: {e:#}"))?;
        Ok(annotation(&name, dso.as_ref().map(|d| d.0.as_str()), &text))
    }

    fn zoomed(&self) -> bool {
        self.table.zoomed()
    }
}

/// The annotate view of `sear annotate`'s text for one symbol.
pub fn annotation(name: &str, dso: Option<&str>, text: &str) -> Annotation {
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    Annotation {
        title: format!(
            "Annotate {name}{}",
            dso.map(|d| format!(" ({d})")).unwrap_or_default()
        ),
        hot: hottest_line(&lines),
        lines,
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
