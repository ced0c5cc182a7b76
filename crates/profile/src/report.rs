//! What `report` decides from its flags and from the recording: the keys
//! pass one keeps apart, then (the events' attributes known, which for a
//! pipe is only after its last record) the columns, children, the chain
//! order, and the rows built, split into sections and sorted.

use perf_data::Meta;

use crate::callchain::{CallGraphParams, ChainOrder};
use crate::collect::CollectOptions;
use crate::fields::{Layout, LayoutOptions};
use crate::groups::EventGroups;
use crate::hist::{Filters, HistOptions, Names, Report, SortKey};
use crate::session::Summed;
use crate::Error;

/// perf's `-p/--parent` default.
pub const DEFAULT_PARENT: &str = "^sys_|^do_page_fault";

/// The regex of `--sort parent`: `-p/--parent PATTERN`, or perf's default.
pub fn parent_regex(pattern: Option<&str>) -> Result<regex_lite::Regex, Error> {
    let pattern = pattern.unwrap_or(DEFAULT_PARENT);
    regex_lite::Regex::new(pattern)
        .map_err(|_| Error::BadOption(format!("-p/--parent {pattern}: not a valid regex")))
}

/// Whether `report` shows perf's branch view: asked for (`-b`: true,
/// `--no-branch-stack`: false), or by default where the recording says it
/// sampled branch stacks, as perf decides: by the header's BRANCH_STACK
/// feature (which `record -b` sets), not by the events' sample types
/// (never by default for a pipe, whose features come too late for perf
/// to decide on them).
pub fn branch_mode(meta: &Meta, asked: Option<bool>) -> bool {
    asked.unwrap_or_else(|| {
        !meta.is_pipe() && meta.features.has(perf_data::consts::feature::BRANCH_STACK)
    })
}

/// perf's short name of every DSO of the session.
pub fn dso_short_names(summed: &Summed) -> Vec<String> {
    dso_short_names_of(&summed.machine)
}

/// What rows are built from: a summing session's collector, model and
/// symbols and the recording's metadata ([`Summed::parts`], or a live
/// session's).
#[derive(Clone, Copy)]
pub struct Parts<'a> {
    pub collector: &'a crate::collect::Collector,
    pub machine: &'a crate::machine::Machine,
    pub syms: &'a crate::symbolize::SymbolTable,
    pub meta: &'a Meta,
}

impl Summed {
    pub fn parts(&self) -> Parts<'_> {
        Parts {
            collector: &self.collector,
            machine: &self.machine,
            syms: &self.syms,
            meta: self.reader.meta(),
        }
    }
}

/// perf's short name of each DSO of the machine.
pub fn dso_short_names_of(machine: &crate::machine::Machine) -> Vec<String> {
    machine
        .dsos()
        .iter()
        .map(|d| crate::hist::dso_short_name(&d.name))
        .collect()
}

/// report's flags that decide what is summed and how rows are laid out.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The columns; its `children` is what was asked (not `--no-children`).
    pub layout: LayoutOptions<'a>,
    /// `-p/--parent`.
    pub parent: Option<&'a str>,
    /// `--ignore-callees`: a sample whose chain passes a function matching
    /// it is charged to that function, its callees left out.
    pub ignore_callees: Option<&'a str>,
    /// `-g` (disabled by `-g none`).
    pub graph: CallGraphParams,
    /// `--max-stack`.
    pub max_stack: usize,
    /// Look return addresses up inside the call (not `--raw-return-addresses`).
    pub adjust_returns: bool,
    /// `--time-quantum` in nanoseconds (the `time` key's buckets; perf's
    /// default is 100 ms).
    pub time_quantum: u64,
    /// `--ns`: the time key to the nanosecond.
    pub nanosecs: bool,
    /// `-v`: perf's verbose columns (DSOs by path; each symbol after its
    /// entry's address and where perf read the DSO's symbols from).
    pub verbose: bool,
    /// `--branch-history`: each sample's branch stack in its call chain
    /// (see [`crate::collect::Position`]).
    pub branch_history: bool,
}

/// What is known before the records: the sort keys.
#[derive(Debug, Clone)]
pub struct Early {
    pub keys: Vec<SortKey>,
    pub want_parent: bool,
    parent: regex_lite::Regex,
    ignore_callees: Option<regex_lite::Regex>,
}

impl Request<'_> {
    /// Whether an entry's call graph leaves out the entry's own frame (it
    /// shows as the row): perf does only when the `--sort` text starts
    /// with "sym" and no `-F` is given.
    pub fn hides_entry_frame(&self) -> bool {
        self.layout.fields.is_none() && self.layout.sort.is_some_and(|s| s.starts_with("sym"))
    }

    /// The sort keys (they do not depend on children) and the parent regex,
    /// checked before any record is read.
    pub fn early(&self) -> Result<Early, Error> {
        let parent = parent_regex(self.parent)?;
        let ignore_callees = self
            .ignore_callees
            .map(|p| {
                regex_lite::Regex::new(p).map_err(|_| {
                    Error::BadOption(format!("--ignore-callees {p}: not a valid regex"))
                })
            })
            .transpose()?;
        let keys = Layout::new(&self.layout)?.keys();
        Ok(Early {
            want_parent: keys.contains(&SortKey::Parent),
            keys,
            parent,
            ignore_callees,
        })
    }

    /// What pass one keeps.
    pub fn collect_options(&self, early: &Early) -> CollectOptions {
        CollectOptions {
            max_stack: self.max_stack,
            // (Branch mode counts branches; perf adds no chains to them.)
            callchains: !self.layout.branch
                && (self.layout.children
                    || self.graph.enabled()
                    || early.want_parent
                    || early.ignore_callees.is_some()),
            adjust_returns: self.adjust_returns,
            by_cpu: early.keys.iter().any(|k| k.needs_cpu()),
            max_stack_from_root: false,
            time_quantum: early
                .keys
                .contains(&SortKey::Time)
                .then_some(self.time_quantum),
            by_cgroup: early.keys.contains(&SortKey::Cgroup),
            by_trace: early.keys.contains(&SortKey::Trace),
            by_code_page: early.keys.contains(&SortKey::CodePageSize),
            by_weight: early.keys.iter().any(|k| k.needs_weight()),
            mem: self.layout.mem,
            branches: self.layout.branch,
            branch_history: self.branch_history,
        }
    }

    /// Whether the events record call chains, whether the report has
    /// children, and the order perf resolves chains in, for `meta` (known
    /// before the records but for a pipe). perf decides on children before
    /// it sees the attrs of a pipe: never children there, but the graph
    /// order children would have had. --max-stack keeps the root end in
    /// caller order.
    pub fn chains(&self, meta: &Meta) -> (bool, bool, ChainOrder) {
        let has_callchains = meta
            .events
            .iter()
            .any(|e| e.attr.sample_type & perf_data::PERF_SAMPLE_CALLCHAIN != 0);
        let pipe = meta.is_pipe();
        // (perf's memory mode turns accumulation off.)
        let children = has_callchains
            && self.layout.children
            && !pipe
            && !self.layout.branch
            && !self.layout.mem;
        // (perf orders branch-history chains as children would have, also
        // where the recording's lack of callers turned children off.)
        let order = self.graph.resolved_order(if pipe || self.branch_history {
            self.layout.children
        } else {
            children
        });
        (has_callchains, children, order)
    }

    /// The layout once the events' attributes are known.
    pub fn plan(&self, early: Early, meta: &Meta) -> Result<Plan, Error> {
        let (has_callchains, children, order) = self.chains(meta);
        let layout = Layout::new(&LayoutOptions {
            children,
            ..self.layout
        })?;
        let keys = layout.keys();
        if early.want_parent && !has_callchains {
            return Err(Error::Unsupported(
                "selected --sort parent, but the recording has no callchains (record with -g)"
                    .into(),
            ));
        }
        let hist = HistOptions {
            keys: keys.clone(),
            children,
            // (Branch history makes chains of the branches alone where
            // the events record no callers.)
            callchains: (has_callchains || self.branch_history)
                && self.graph.enabled()
                && !self.layout.branch,
            caller_order: order == ChainOrder::Caller,
            parent: early.want_parent.then_some(early.parent),
            ignore_callees: early.ignore_callees,
            cpumode: layout.needs_cpumode(),
            sockets: if keys.contains(&SortKey::Socket) {
                socket_ids(meta)
            } else {
                Vec::new()
            },
            frames_by_address: self.graph.key == crate::callchain::ChainKey::Address,
            frames_by_srcline: self.graph.key == crate::callchain::ChainKey::Srcline,
            nanosecs: self.nanosecs,
            trace_texts: Vec::new(),
            dsos_by_path: self.verbose,
        };
        Ok(Plan {
            show_graphs: hist.callchains,
            layout,
            keys,
            children,
            hist,
        })
    }
}

/// The layout of a report.
#[derive(Debug, Clone)]
pub struct Plan {
    pub layout: Layout,
    pub keys: Vec<SortKey>,
    pub children: bool,
    /// The recording has call chains and `-g` is not `none`.
    pub show_graphs: bool,
    pub hist: HistOptions,
}

/// The rows of a report, sorted, by section (one per event, or per group
/// in group view), with the texts they refer to.
pub struct Rows {
    pub report: Report,
    /// Texts of srcline, srcfile and parent keys (out of `report`).
    pub strings: Vec<String>,
    /// Each DSO's name as the dso column shows it: perf's short name, or
    /// with `-v` its path.
    pub dso_names: Vec<String>,
    /// With `-v`, each DSO's origin character (see
    /// [`symbols::perf_symtab_origin`]); empty otherwise.
    pub origins: Vec<char>,
    /// `-v`: perf's verbose symbol column.
    pub verbose: bool,
    pub groups: EventGroups,
    /// The event of each section.
    pub section_events: Vec<usize>,
    pub section_names: Vec<String>,
}

impl Plan {
    /// Builds the rows from pass one's sums (taking them), splits them into
    /// sections and sorts them as perf does.
    pub fn rows(
        &self,
        summed: &mut Summed,
        filters: &Filters,
        group: bool,
        no_group: bool,
    ) -> Rows {
        let sums = summed.collector.take_sums_in_order();
        self.rows_from(summed, sums, filters, group, no_group)
    }

    /// [`Plan::rows`] from sums taken before (a view that builds its rows
    /// again with other filters keeps them and passes a copy each time).
    pub fn rows_from(
        &self,
        summed: &Summed,
        sums: Vec<(crate::collect::SampleKey, crate::collect::SampleSum)>,
        filters: &Filters,
        group: bool,
        no_group: bool,
    ) -> Rows {
        self.rows_of(summed.parts(), sums, filters, group, no_group)
    }

    /// [`Plan::rows_from`] from the parts of a summing session (a live
    /// view's, which has no reader).
    pub fn rows_of(
        &self,
        parts: Parts<'_>,
        sums: Vec<(crate::collect::SampleKey, crate::collect::SampleSum)>,
        filters: &Filters,
        group: bool,
        no_group: bool,
    ) -> Rows {
        let dso_names = dso_short_names_of(parts.machine);
        let mut report = crate::hist::build(
            parts.collector,
            sums,
            parts.syms,
            parts.machine,
            &dso_names,
            &self.hist,
            filters,
        );
        let strings = std::mem::take(&mut report.strings);
        let meta = parts.meta;
        // (After all records: in pipe mode, GROUP_DESC comes as one.)
        let groups = EventGroups::new(meta, group, no_group);
        let nr_events = meta.events.len();
        report
            .hists
            .resize_with(nr_events.max(report.hists.len()), Default::default);
        let section_events = groups.sections(&mut report);
        let (dso_names, origins) = if self.hist.dsos_by_path {
            verbose_dso_names(parts)
        } else {
            (dso_names, Vec::new())
        };
        let mut rows = Rows {
            report,
            strings,
            dso_names,
            origins,
            verbose: self.hist.dsos_by_path,
            section_names: section_events
                .iter()
                .map(|&ev| groups.section_name(meta, ev))
                .collect(),
            groups,
            section_events,
        };
        let mut hists = std::mem::take(&mut rows.report.hists);
        {
            let names = rows.names_of(parts);
            for h in &mut hists {
                h.sort_by_columns(
                    &names,
                    &self.layout.sort,
                    self.children,
                    self.hist.caller_order,
                    self.layout.group_sort_idx,
                );
            }
        }
        rows.report.hists = hists;
        rows
    }
}

impl Rows {
    /// Applies `filters` again to the built rows (see
    /// [`crate::hist::Report::apply_filters`]): the rows `rows_of` would
    /// build with them, but for the samples `-C` and `-U` leave out, which
    /// stay as they were built.
    pub fn apply_filters(&mut self, parts: Parts<'_>, filters: &Filters) {
        self.report.apply_filters(
            parts.collector,
            parts.syms,
            parts.machine,
            &self.dso_names,
            filters,
        );
    }

    /// The texts of the rows' keys.
    pub fn names<'a>(&'a self, summed: &'a Summed) -> Names<'a> {
        self.names_of(summed.parts())
    }

    /// [`Rows::names`] from a summing session's parts.
    pub fn names_of<'a>(&'a self, parts: Parts<'a>) -> Names<'a> {
        Names {
            comms: parts.collector.comms(),
            dso_names: &self.dso_names,
            verbose: self.verbose,
            origins: &self.origins,
            syms: &parts.syms.syms,
            machine: parts.machine,
            strings: &self.strings,
        }
    }
}

/// perf's verbose DSO names (`-v`): each DSO by its path, and where its
/// symbols were read from (perf's origin character, `!` where none were).
pub fn verbose_dso_names(parts: Parts<'_>) -> (Vec<String>, Vec<char>) {
    let dsos = parts.machine.dsos();
    // (Once per file: a many-process recording names a library
    // once per process that maps it.)
    let mut seen: std::collections::HashMap<(&str, Option<&[u8]>), char> =
        std::collections::HashMap::new();
    let mut origins = Vec::with_capacity(dsos.len());
    // A kernel whose symbols could not be read (no kallsyms or
    // vmlinux with its build id), or a perf map not there, keeps
    // perf's "not found".
    let mut has_syms = vec![false; dsos.len()];
    for s in &parts.syms.syms {
        if let Some(h) = has_syms.get_mut(s.dso as usize) {
            *h = true;
        }
    }
    for (i, d) in dsos.iter().enumerate() {
        let id = d.build_id.as_deref();
        let o = *seen
            .entry((d.name.as_str(), id))
            .or_insert_with(|| symbols::perf_symtab_origin(&d.name, id));
        let loaded = matches!(o, 'k' | 'g' | 'j');
        origins.push(if loaded && !has_syms[i] { '!' } else { o });
    }
    (dsos.iter().map(|d| d.name.clone()).collect(), origins)
}

/// The socket of each CPU, from the recording's CPU topology (empty where
/// it has no per-CPU ids: perf's socket is then -1).
pub fn socket_ids(meta: &Meta) -> Vec<i32> {
    use perf_data::consts::feature;
    let mut env = perf_data::env::Env::default();
    for id in [feature::ARCH, feature::NRCPUS, feature::CPU_TOPOLOGY] {
        if let Some(b) = meta.features.get(id) {
            let _ = env.decode(meta, id, b);
        }
    }
    env.topology
        .cpus
        .map(|v| v.iter().map(|c| c.socket_id as i32).collect())
        .unwrap_or_default()
}
