//! `perf report --stdio` text: the header block and one table per event.

use std::collections::HashMap;
use std::io::{self, Write};

use profile::fields::{Column, Field, Layout, Stat};
use profile::hist::{HistEntry, Hists, Key, Names, SortKey, SymRef};

/// One event's section of the report (or one event group's, in perf's
/// group view).
pub struct Section<'a> {
    /// The event's name, or the group's description.
    pub event_name: &'a str,
    /// perf says "events" for a group leader (even outside group view).
    pub plural: bool,
    pub hists: &'a Hists,
    /// In group view, the other members' rows (their totals are the
    /// header's and their percentages' bases); empty otherwise.
    pub members: Vec<&'a Hists>,
}

/// How the table looks.
#[derive(Debug, Clone)]
pub struct TableOptions {
    /// The sort keys in the order of each entry's `keys`.
    pub keys: Vec<SortKey>,
    /// The columns (values and keys) in print order.
    pub layout: Layout,
    /// Children mode: `--percent-limit` looks at the children period.
    pub children: bool,
    /// Hide rows below this percentage (perf's `--percent-limit`).
    pub percent_limit: f64,
    /// Hide rows without a parent symbol (perf's `-x/--exclude-other`).
    pub exclude_other: bool,
    /// Percentages of the samples the filters kept (`--percentage
    /// relative`) instead of all samples (perf's default, `absolute`).
    pub relative: bool,
    /// Sort keys filtered to a single value (`--comms X`, `--dsos X`,
    /// `--symbols X`) with that value: perf hides their columns and names
    /// the value in the header instead.
    pub single_filters: Vec<(SortKey, String)>,
    /// `-q`: the rows and call graphs only, no `#` lines (perf's quiet
    /// report).
    pub quiet: bool,
    /// `--time` as given: perf adds it to each section's title.
    pub time_slices: Option<String>,
    /// `--socket-filter N`: perf's `# Processor Socket: N` header line.
    pub socket_filter: Option<i32>,
    /// `--header`: the recording's header was printed before the table
    /// (perf then leaves out its hint about it).
    pub after_header: bool,
    /// `-t`/`--field-separator`: columns are joined by this instead of
    /// two spaces, values print unpadded (` 12.34%`, then padded to the
    /// column), no dotted line follows the header, and the separator's
    /// first character becomes `.` inside key values, as in perf.
    pub field_sep: Option<String>,
    /// `-w`/`--column-widths`: per column of `layout.columns` (hidden ones
    /// count), a width; 0 or missing: perf's own. A key column is then
    /// exactly that wide (longer values are cut), a value column at least.
    pub user_widths: Vec<usize>,
    /// `-d`/`--dsos` was given: perf then leaves the shared-object column
    /// as narrow as its names even when some symbols are unresolved.
    pub dso_list: bool,
    /// `--hierarchy`: one level per sort key, each row indented under
    /// the row of its keys before (perf's hierarchy view).
    pub hierarchy: bool,
    /// Colour percentages as perf does on a terminal.
    pub color: bool,
    /// Memory mode (`--mem-mode`): the sort order perf names in the
    /// header, where it says `Total weight` for the event count.
    pub mem_sort_order: Option<String>,
}

impl TableOptions {
    fn single_filter(&self, c: Column) -> Option<&str> {
        match c {
            Column::Key(k) => self
                .single_filters
                .iter()
                .find(|(f, _)| *f == k)
                .map(|(_, v)| v.as_str()),
            Column::Field(_) => None,
        }
    }

    /// The columns shown: all but those of single-value filters, unless
    /// that would hide every key column.
    fn shown_columns(&self) -> Vec<Column> {
        let cols = &self.layout.columns;
        let all_hidden = cols
            .iter()
            .filter(|c| matches!(c, Column::Key(_)))
            .all(|c| self.single_filter(*c).is_some());
        cols.iter()
            .copied()
            .filter(|c| all_hidden || self.single_filter(*c).is_none())
            .collect()
    }
}

/// The call graph text under each row (empty or missing: none), by the
/// section's index in `sections` and the row's in its entries (as
/// [`crate::callgraph::entry_graphs`] formats them).
pub type Graphs = [Vec<Vec<u8>>];

/// perf abbreviates sample counts: 1548 → "1K", 207 → "207 ".
pub(crate) fn convert_unit(mut v: u64) -> (u64, char) {
    let mut unit = ' ';
    for u in ['K', 'M', 'G'] {
        if v > 1000 {
            v /= 1000;
            unit = u;
        }
    }
    (v, unit)
}

/// Writes the report for `sections` (events without samples are skipped).
pub fn write_report(
    out: &mut dyn Write,
    opts: &TableOptions,
    total_lost_samples: u64,
    sections: &[Section<'_>],
    names: &Names<'_>,
    graphs: &Graphs,
) -> io::Result<()> {
    // A filter on one value replaces its column with a line (also with -q).
    let filter_lines = |out: &mut dyn Write| -> io::Result<()> {
        for &c in &opts.layout.columns {
            if let Some(v) = opts.single_filter(c) {
                let what = match c {
                    Column::Key(SortKey::Comm) => "comm",
                    Column::Key(SortKey::Dso) => "dso",
                    _ => "symbol",
                };
                writeln!(out, "# {what}: {v}")?;
            }
        }
        Ok(())
    };
    if opts.quiet {
        filter_lines(out)?;
        for (i, s) in sections.iter().enumerate() {
            if s.hists.all_samples > 0 {
                write_section(out, opts, i, s, names, &mut RowOut::Print(graphs))?;
                write!(out, "\n\n")?;
            }
        }
        return Ok(());
    }
    if !opts.after_header {
        writeln!(
            out,
            "# To display the perf.data header info, please use --header/--header-only options.\n#"
        )?;
    }
    filter_lines(out)?;
    writeln!(out, "#\n# Total Lost Samples: {total_lost_samples}\n#")?;
    for (i, s) in sections.iter().enumerate() {
        // (perf looks at all samples, filtered or not, and at the
        // leader's only in group view.)
        if s.hists.all_samples == 0 {
            continue;
        }
        write_section(out, opts, i, s, names, &mut RowOut::Print(graphs))?;
        write!(out, "\n\n")?;
    }
    writeln!(
        out,
        "#\n# (Tip: sear report --stats shows what a recording contains, record type by record type)\n#"
    )
}

/// perf's branch statistics, after a branch-mode report (with `-q`
/// too): each kind counted, as a share of the branches of a known type,
/// and no final line break (perf prints none). Nothing without them.
pub fn write_branch_stats(
    out: &mut dyn Write,
    st: &profile::hist::BranchTypeStats,
) -> io::Result<()> {
    let total = st.total();
    if total == 0 {
        return Ok(());
    }
    write!(out, "\n#\n# Branch Statistics:\n#")?;
    let line = |out: &mut dyn Write, name: &str, n: u64| -> io::Result<()> {
        if n > 0 {
            write!(out, "\n{name:>8}: {:5.1}%", 100.0 * n as f64 / total as f64)?;
        }
        Ok(())
    };
    line(out, "COND_FWD", st.cond_fwd)?;
    line(out, "COND_BWD", st.cond_bwd)?;
    line(out, "CROSS_4K", st.cross_4k)?;
    line(out, "CROSS_2M", st.cross_2m)?;
    for (i, &n) in st.counts.iter().enumerate() {
        line(out, crate::dump::fmt::BRANCH_TYPE_NAMES[i], n)?;
    }
    for (i, &n) in st.new_counts.iter().enumerate() {
        let name = crate::dump::fmt::BRANCH_NEW_TYPE_NAMES
            .get(i)
            .copied()
            .unwrap_or("UNKNOWN");
        line(out, name, n)?;
    }
    Ok(())
}

/// perf prints unresolved addresses 16 hex digits wide.
const UNRESOLVED_WIDTH: usize = 16;

/// A column's width and, for a key column, the index of its key in an
/// entry's keys.
struct ColumnFormat {
    column: Column,
    width: usize,
    key: Option<usize>,
    /// The width `-w` gave it.
    user: Option<usize>,
}

/// Where a section's rows go: printed, each with its call graph (the text
/// report), or kept with their entries' indices (the browser).
enum RowOut<'g> {
    Print(&'g Graphs),
    Keep(Vec<(usize, String)>),
}

/// One section as the report browser shows it: the text report's title
/// (`Samples: 1K of event 'cpu-clock', Event count (approx.): N`), its
/// column header and each shown row's line, exactly as `--stdio` prints
/// them, with the index of the row's entry in the section's hists.
#[derive(Debug, Clone, Default)]
pub struct SectionTable {
    pub title: String,
    pub columns: String,
    pub rows: Vec<(usize, String)>,
}

/// The rows of one section as [`write_report`] prints them (without call
/// graphs); not for `--hierarchy` (an error says so).
pub fn section_table(
    opts: &TableOptions,
    section: usize,
    s: &Section<'_>,
    names: &Names<'_>,
) -> io::Result<SectionTable> {
    if opts.hierarchy {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the hierarchy view is text only",
        ));
    }
    let mut head = Vec::new();
    let mut rows = RowOut::Keep(Vec::new());
    let opts = TableOptions {
        quiet: false,
        field_sep: None,
        ..opts.clone()
    };
    write_section(&mut head, &opts, section, s, names, &mut rows)?;
    let head = String::from_utf8_lossy(&head);
    let mut title = Vec::new();
    let mut columns = String::new();
    for l in head.lines() {
        let l = l.strip_prefix('#').unwrap_or(l);
        if l.trim().is_empty() {
            continue;
        }
        if l.trim_start().starts_with('.') {
            break;
        }
        if l.starts_with(' ')
            && !l.trim_start().starts_with("Samples:")
            && !l.trim_start().starts_with("Event count")
            && !l.trim_start().starts_with("Processor Socket")
        {
            columns = l.to_string();
        } else {
            title.push(l.trim().to_string());
        }
    }
    let RowOut::Keep(rows) = rows else {
        unreachable!("kept above")
    };
    Ok(SectionTable {
        title: title.join(", "),
        columns,
        rows,
    })
}

fn write_section(
    out: &mut dyn Write,
    opts: &TableOptions,
    section: usize,
    s: &Section<'_>,
    names: &Names<'_>,
    rows_out: &mut RowOut<'_>,
) -> io::Result<()> {
    let (mut nr, mut period) = s.hists.header_totals(opts.relative);
    for m in &s.members {
        let (n, p) = m.header_totals(opts.relative);
        nr += n;
        period = period.wrapping_add(p);
    }
    let (n, unit) = convert_unit(nr);
    if !opts.quiet {
        writeln!(
            out,
            "# Samples: {n}{unit} of event{} '{}'{}\n{}\n{}#",
            if s.plural { "s" } else { "" },
            s.event_name,
            match &opts.time_slices {
                Some(t) => format!(" (time slices: {t})"),
                None => String::new(),
            },
            match &opts.mem_sort_order {
                Some(order) => format!("# Total weight : {period}\n# Sort order   : {order}"),
                None => format!("# Event count (approx.): {period}"),
            },
            match opts.socket_filter {
                Some(n) => format!("# Processor Socket: {n}\n"),
                None => String::new(),
            },
        )?;
    }
    let keys = &opts.keys;
    // perf's -x hides rows without a parent (the totals keep them).
    // Entries the filters' samples made are hidden too.
    let hidden = |e: &HistEntry| {
        e.filtered
            || opts.exclude_other && !e.keys.iter().any(|k| matches!(k, Key::Parent(Some(_))))
    };
    let nr_members = 1 + s.members.len();
    // Each key column is as wide as its header or its widest value, with
    // perf's extra rules for symbols and unresolved addresses; a value
    // column holds one value per group member.
    let sep = opts.field_sep.as_deref();
    let mut cols: Vec<ColumnFormat> = opts
        .shown_columns()
        .iter()
        .map(|&c| {
            let header = opts.layout.header(c).len();
            let user = opts
                .layout
                .columns
                .iter()
                .position(|x| *x == c)
                .and_then(|i| opts.user_widths.get(i))
                .copied()
                .filter(|&w| w > 0);
            match c {
                Column::Field(f) => ColumnFormat {
                    column: c,
                    width: header
                        .max(user.unwrap_or(f.value_width()))
                        .max(if nr_members > 1 {
                            f.value_width() * nr_members
                        } else {
                            0
                        }),
                    key: None,
                    user,
                },
                // (perf's fixed lengths come with the first entry: a
                // report without one has its headers' widths.)
                Column::Key(k) => ColumnFormat {
                    column: c,
                    width: user.unwrap_or(header),
                    key: keys.iter().position(|x| *x == k),
                    user,
                },
            }
        })
        .collect();
    let mut unresolved = false;
    // Memory mode: entries whose data address no symbol (0) or no map (1)
    // covers.
    let mut unres_data = [false; 3];
    // Entries whose branch source (0) or target (1) no symbol covers.
    let mut unres_branch = [false; 2];
    // perf computes an entry's srcline (and srcfile) text only when a
    // sample's tree insertion compares it with an entry equal in the keys
    // before it: a second sample merging into the entry, or another entry
    // with those keys (a binary tree search passes a neighbour). It sizes
    // the column by the texts computed by then and cuts the others.
    let lazy: Vec<Option<HashMap<&[Key], usize>>> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            // (The same for a tracepoint sample's text, the `trace` key.)
            matches!(k, SortKey::Srcline | SortKey::Srcfile | SortKey::Trace).then(|| {
                let mut m: HashMap<&[Key], usize> = HashMap::new();
                for e in &s.hists.entries {
                    *m.entry(&e.keys[..i.min(e.keys.len())]).or_default() += 1;
                }
                m
            })
        })
        .collect();
    let computed = |i: usize, e: &HistEntry| match &lazy[i] {
        Some(m) => {
            e.samples.max(e.samples_acc) >= 2
                || m.get(&e.keys[..i.min(e.keys.len())])
                    .is_some_and(|&n| n >= 2)
        }
        None => true,
    };
    for e in s.hists.entries.iter().filter(|e| !hidden(e)) {
        for col in &mut cols {
            if col.user.is_some() {
                continue;
            }
            let Some((i, k)) = col.key.and_then(|i| Some((i, e.keys.get(i)?))) else {
                continue;
            };
            col.width = col.width.max(keys[i].min_width());
            if keys[i].header_width_only() || !computed(i, e) {
                continue;
            }
            let w = match k {
                // (-v's address and origin: 21 more.)
                Key::Sym(SymRef::Sym(id)) => {
                    names.syms[*id as usize].name.chars().count() + 4 + 21 * names.verbose as usize
                }
                Key::Sym(SymRef::Addr { .. }) => {
                    unresolved = true;
                    UNRESOLVED_WIDTH + 6
                }
                // perf sizes the comm column by the comm the entry's
                // thread has at the end, not the one the entry shows.
                Key::Comm(_) => names.thread_comm(e.thread).chars().count(),
                Key::Parent(None) => 0,
                // perf sizes the address column for a 64-bit address.
                Key::Addr(_) => 18,
                // perf's time column: seconds and micro- (or nano)seconds.
                Key::Time(_, ns) => {
                    if *ns {
                        16
                    } else {
                        12
                    }
                }
                // (Samples without a cgroup do not widen it.)
                Key::Cgroup(0) => 0,
                // perf sizes the branch columns by the end the entry's
                // first branch had: a symbol's name, or an unresolved
                // address (which also widens that end's DSO column).
                Key::BranchSym(SymRef::Sym(id), ..) => {
                    names.syms[*id as usize].name.chars().count() + 4 + 21 * names.verbose as usize
                }
                Key::BranchSym(..) => {
                    unres_branch[branch_end(keys[i])] = true;
                    UNRESOLVED_WIDTH + 6
                }
                Key::BranchAddr(..) => {
                    if e.maker.branch_syms & (1 << branch_end(keys[i])) != 0 {
                        0
                    } else {
                        unres_branch[branch_end(keys[i])] = true;
                        UNRESOLVED_WIDTH + 6
                    }
                }
                Key::BranchDso(_) => {
                    if e.maker.branch_syms & (1 << branch_end(keys[i])) != 0 {
                        names.display(k, e.level).chars().count()
                    } else {
                        unres_branch[branch_end(keys[i])] = true;
                        0
                    }
                }
                // perf sizes the data symbol column for the symbol's name
                // and an address.
                Key::DataSym { sym, .. } => match names.syms.get(*sym as usize) {
                    Some(s) => s.name.chars().count() + 4 + UNRESOLVED_WIDTH + 2,
                    None => {
                        unres_data[if keys[i] == SortKey::SymIaddr { 2 } else { 0 }] = true;
                        0
                    }
                },
                Key::DsoDaddr(None) => {
                    unres_data[1] = true;
                    0
                }
                // (perf's data symbol width and one more; an unresolved
                // line's own.)
                Key::Dcacheline { text, .. } => {
                    match names
                        .strings
                        .get(*text as usize)
                        .and_then(|t| t.split_once('\0'))
                    {
                        Some((name, _)) => name.chars().count() + 4 + UNRESOLVED_WIDTH + 3,
                        None => UNRESOLVED_WIDTH + 6,
                    }
                }
                k => names.display(k, e.level).chars().count(),
            };
            col.width = col.width.max(w);
        }
    }
    // (Not with -t, -w or --dsos.)
    let plain_widths = sep.is_none() && opts.user_widths.is_empty() && !opts.dso_list;
    if unresolved && plain_widths {
        for col in &mut cols {
            if col.column == Column::Key(SortKey::Dso) {
                col.width = col.width.max(UNRESOLVED_WIDTH);
            }
        }
    }
    for (i, key) in [
        (0, SortKey::SymDaddr),
        (1, SortKey::DsoDaddr),
        (2, SortKey::SymIaddr),
    ] {
        if unres_data[i] && plain_widths {
            for col in &mut cols {
                if col.column == Column::Key(key) {
                    col.width = col.width.max(UNRESOLVED_WIDTH);
                }
            }
        }
    }
    for (end, dso) in [(0, SortKey::DsoFrom), (1, SortKey::DsoTo)] {
        if unres_branch[end] && plain_widths {
            for col in &mut cols {
                if col.column == Column::Key(dso) {
                    col.width = col.width.max(UNRESOLVED_WIDTH);
                }
            }
        }
    }
    if opts.hierarchy {
        let RowOut::Print(graphs) = rows_out else {
            return Ok(());
        };
        return write_hierarchy(out, opts, section, s, names, graphs, &cols, &hidden);
    }
    let mut head = String::from("#");
    let mut dots = String::from("#");
    for (i, col) in cols.iter().enumerate() {
        let between = if i == 0 { " " } else { sep.unwrap_or("  ") };
        let name = opts.layout.header(col.column);
        let w = col.width;
        match col.column {
            Column::Field(_) => head.push_str(&format!("{between}{name:>w$}")),
            // (A key's header is cut at a narrower -w width.)
            Column::Key(_) => head.push_str(&format!("{between}{name:<w$.w$}")),
        }
        dots.push_str(between);
        dots.push_str(&".".repeat(w));
    }
    if !opts.quiet {
        match sep {
            None => writeln!(out, "{head}\n{dots}\n#")?,
            Some(_) => writeln!(out, "{head}")?,
        }
    }
    // perf formats each row into a buffer as long as the columns' widths,
    // two characters between each, and 3 more (plus room for colour
    // codes, 28 for each of its 8 value formats, without a separator): the
    // last column gets what the columns before it left.
    let last_room = |width: usize| -> usize {
        let n = cols.len() as isize;
        let w = width as isize;
        let room = match sep {
            None => w + 3 + 8 * 28 - 2,
            Some(s) => w + 3 + (n - 1) * (2 - s.chars().count() as isize),
        };
        room.max(0) as usize
    };
    let (total, member_totals) = percent_bases(s, opts.relative);
    let zero = Stat::default();
    for (row, e) in s.hists.entries.iter().enumerate() {
        if hidden(e) {
            continue;
        }
        let shown = if opts.children {
            e.period_acc
        } else {
            e.period
        };
        if percent_of(shown, total) < opts.percent_limit {
            continue;
        }
        let mut line = String::new();
        let last = cols.len().saturating_sub(1);
        for (i, col) in cols.iter().enumerate() {
            match sep {
                None => line.push_str("  "),
                Some(s) if i > 0 => line.push_str(s),
                Some(_) => {}
            }
            let start = line.chars().count();
            match col.column {
                // Without children, perf has no children period to show.
                Column::Field(Field::OverheadChildren) if !opts.children => {
                    let len = col.user.unwrap_or(Field::OverheadChildren.value_width());
                    let w = len.saturating_sub(1);
                    line.push_str(&format!(" {:>w$}", "N/A"));
                }
                Column::Field(f) => {
                    // perf formats a value at the -w width (or its own),
                    // unpadded with a separator; the column pads it.
                    let len = match sep {
                        Some(_) => None,
                        None => Some(col.user.unwrap_or(f.value_width())),
                    };
                    let v = Values {
                        total,
                        member_totals: &member_totals,
                        zero: &zero,
                        pct: &percent_of,
                        color: opts.color,
                    };
                    v.write(&mut line, f, e, len);
                }
                Column::Key(sk) => {
                    let Some(k) = col.key.and_then(|i| e.keys.get(i)) else {
                        continue;
                    };
                    let mut v = summed_value(sk, k, e.samples)
                        .unwrap_or_else(|| key_text(k, e.level, &e.maker, col, names, sep));
                    // The line buffer ends the last column (see `last_room`).
                    if i == last && v.chars().count() > last_room(col.width) {
                        v = v.chars().take(last_room(col.width)).collect();
                    }
                    if sk.right_aligned() {
                        let pad = col.width.saturating_sub(v.chars().count());
                        line.push_str(&" ".repeat(pad));
                    }
                    line.push_str(&v);
                }
            }
            // perf pads every column to its width but the last, and key
            // columns other than symbols and source lines pad themselves.
            let self_padded = matches!(col.column, Column::Key(k) if k.pads_value());
            if i != last || self_padded {
                let printed = line.chars().count() - start;
                line.push_str(&" ".repeat(col.width.saturating_sub(printed)));
            }
        }
        match rows_out {
            RowOut::Print(graphs) => {
                writeln!(out, "{line}")?;
                if let Some(g) = graphs.get(section).and_then(|g| g.get(row)) {
                    out.write_all(g)?;
                }
            }
            RowOut::Keep(kept) => kept.push((row, line)),
        }
    }
    Ok(())
}

/// The totals percentages are of: the section's, and each group member's.
fn percent_bases(s: &Section<'_>, relative: bool) -> (u64, Vec<u64>) {
    let members = s.members.iter().map(|m| m.percent_base(relative)).collect();
    (s.hists.percent_base(relative), members)
}

/// `v` as a percentage of `total` (0 of nothing).
fn percent_of(v: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * v as f64 / total as f64
    }
}

/// A key's text in a column: a symbol as perf prints it (`[.] name`, cut
/// at the column's width, ` (inlined)` after), keys perf cuts at the
/// column's width cut, and the field separator's first character turned
/// into `.`.
/// Which end of a branch a branch key shows: 0 the source, 1 the target.
fn branch_end(k: SortKey) -> usize {
    match k {
        SortKey::DsoTo | SortKey::SymTo | SortKey::AddrTo => 1,
        _ => 0,
    }
}

/// perf's `weight` and `ins_lat` columns: the entry's samples' summed
/// value (its samples all have the one its key holds).
fn summed_value(sk: SortKey, k: &Key, samples: u64) -> Option<String> {
    match (sk, k) {
        (SortKey::Weight, Key::Weight(w)) | (SortKey::InsLat, Key::InsLat(w)) => {
            Some(w.wrapping_mul(samples).to_string())
        }
        _ => None,
    }
}

fn key_text(
    k: &Key,
    level: u8,
    maker: &profile::hist::Maker,
    col: &ColumnFormat,
    names: &Names<'_>,
    sep: Option<&str>,
) -> String {
    let mut v = match k {
        // perf prints a symbol's name with `%.*s` at the column's width
        // (less its `[.] `) and appends " (inlined)" after that.
        // (With -v, after the entry's address and origin, within the
        // same width.)
        Key::Sym(SymRef::Sym(id)) => {
            let sym = &names.syms[*id as usize];
            let mut t = names.verbose_prefix(k, maker).unwrap_or_default();
            t.push_str(&format!("[{}] ", level as char));
            let room = col.width.saturating_sub(t.chars().count());
            t.extend(sym.name.chars().take(room));
            if sym.inlined {
                t.push_str(" (inlined)");
            }
            t
        }
        Key::Sym(_) => {
            let mut t = names.verbose_prefix(k, maker).unwrap_or_default();
            t.push_str(&names.display(k, level));
            t
        }
        // A data object's name and offset in full; a function's name cut
        // to the column, as the symbol column's.
        Key::DataSym { sym, .. } => {
            let mut t = names.verbose_data_prefix(k).unwrap_or_default();
            match names.syms.get(*sym as usize) {
                Some(s) if !s.object => {
                    t.push_str(&format!("[{}] ", level as char));
                    let room = col.width.saturating_sub(t.chars().count());
                    t.extend(s.name.chars().take(room));
                }
                _ => t.push_str(&names.display(k, level)),
            }
            t
        }
        // A function's name cut to the column; a data object's with its
        // offset, and an unresolved line, in full.
        Key::Dcacheline {
            text, level: own, ..
        } => {
            let mut t = names.verbose_data_prefix(k).unwrap_or_default();
            let text = names.strings.get(*text as usize).map_or("", String::as_str);
            match text.split_once('\0') {
                Some((name, "")) => {
                    let level = if *own == 0 { level } else { *own };
                    t.push_str(&format!("[{}] ", level as char));
                    let room = col.width.saturating_sub(t.chars().count());
                    t.extend(name.chars().take(room));
                }
                _ => t.push_str(&names.display(k, level)),
            }
            t
        }
        // perf cuts the symbol's name to the column, then adds the offset.
        Key::BranchAddr(_, _, text) => {
            let text = names.strings.get(*text as usize).map_or("", String::as_str);
            let mut t = format!("[{}] ", level as char);
            match text.split_once('\0') {
                Some((name, off)) => {
                    t.extend(name.chars().take(col.width.saturating_sub(4)));
                    t.push_str(off);
                }
                None => t.push_str(text),
            }
            t
        }
        Key::BranchSym(s, _, l) => {
            let end = match col.column {
                Column::Key(k) => branch_end(k),
                Column::Field(_) => 0,
            };
            let mut t = names.verbose_branch_prefix(end, maker).unwrap_or_default();
            t.push_str(&format!("[{}] ", *l as char));
            match s {
                SymRef::Sym(id) => {
                    let sym = &names.syms[*id as usize];
                    let room = col.width.saturating_sub(t.chars().count());
                    t.extend(sym.name.chars().take(room));
                    if sym.inlined {
                        t.push_str(" (inlined)");
                    }
                }
                SymRef::Addr { .. } => t.push_str(&names.sym_name(s)),
            }
            t
        }
        _ => names.display(k, level),
    };
    // Keys perf prints with `%-*.*s` or `%.*s` at the column's width:
    // source lines and files, and comms (a comm's width comes from the comm
    // each entry's thread has at the end: a thread renamed since is cut);
    // with a -w width, every key but a symbol (cut above) or an unresolved
    // address (printed whole).
    let own_cut = match k {
        Key::Srcline(_)
        | Key::Srcfile(_)
        | Key::Comm(_)
        | Key::Time(..)
        | Key::Trace(_)
        | Key::BranchDso(_)
        | Key::Mispredict(_) => true,
        Key::Sym(_) | Key::BranchSym(..) => false,
        _ => col.user.is_some(),
    };
    if own_cut && v.chars().count() > col.width {
        v = v.chars().take(col.width).collect();
    }
    // perf writes keys through `repsep_snprintf`, which turns the
    // separator's first character into '.'.
    if let Some(c) = sep.and_then(|s| s.chars().next()) {
        v = v.replace(c, ".");
    }
    v
}

/// What a value column's text needs besides the entry.
struct Values<'a> {
    total: u64,
    member_totals: &'a [u64],
    zero: &'a Stat,
    pct: &'a dyn Fn(u64, u64) -> f64,
    color: bool,
}

impl Values<'_> {
    /// A value column's text: the entry's value, then each group
    /// member's, each `len` wide (None: as narrow as it goes, perf's form
    /// with a field separator).
    fn write(&self, line: &mut String, f: Field, e: &HistEntry, len: Option<usize>) {
        let paint = |pct: f64, t: String| {
            if self.color {
                crate::callgraph::colored(pct, &t)
            } else {
                t
            }
        };
        let mut one = |v: u64, total: u64| match (f.is_percent(), len) {
            (true, Some(len)) => {
                let w = len.saturating_sub(2);
                let p = (self.pct)(v, total);
                line.push_str(&paint(p, format!(" {p:>w$.2}%")));
            }
            (true, None) => {
                let p = (self.pct)(v, total);
                line.push_str(&paint(p, format!(" {p:.2}%")));
            }
            (false, Some(len)) => {
                let w = len.saturating_sub(1);
                line.push_str(&format!(" {v:>w$}"));
            }
            (false, None) => line.push_str(&format!(" {v}")),
        };
        one(f.value(&e.stat()), self.total);
        for (i, &t) in self.member_totals.iter().enumerate() {
            one(f.value(e.group.get(i).unwrap_or(self.zero)), t);
        }
    }
}

/// The sections of a report: one per event in `section_events` (see
/// `profile::groups::EventGroups::sections`), named `names`, with its
/// group's other members' rows in group view.
pub fn sections<'a>(
    hists: &'a [Hists],
    groups: &profile::groups::EventGroups,
    section_events: &[usize],
    names: &'a [String],
) -> Vec<Section<'a>> {
    section_events
        .iter()
        .zip(names)
        .filter_map(|(&ev, n)| {
            Some(Section {
                event_name: n,
                plural: !groups.members(ev).is_empty(),
                hists: hists.get(ev)?,
                members: if groups.view {
                    groups
                        .members(ev)
                        .iter()
                        .filter_map(|&m| hists.get(m))
                        .collect()
                } else {
                    Vec::new()
                },
            })
        })
        .collect()
}

/// perf report's `-T` table: per thread (in the order the READ records
/// first name them), the sum of each event's values (events in the order
/// they first come), columns as wide as their widest value.
pub fn write_thread_values(
    out: &mut dyn Write,
    values: &[profile::session::ThreadValue],
    event_names: &[String],
) -> io::Result<()> {
    let mut threads: Vec<(i32, i32)> = Vec::new();
    let mut events: Vec<usize> = Vec::new();
    let mut table: Vec<Vec<u64>> = Vec::new();
    for v in values {
        let t = match threads.iter().position(|&t| t == (v.pid, v.tid)) {
            Some(t) => t,
            None => {
                threads.push((v.pid, v.tid));
                table.push(vec![0; events.len()]);
                threads.len() - 1
            }
        };
        let c = match events.iter().position(|&e| e == v.event) {
            Some(c) => c,
            None => {
                events.push(v.event);
                for row in &mut table {
                    row.push(0);
                }
                events.len() - 1
            }
        };
        table[t][c] = table[t][c].wrapping_add(v.value);
    }
    let names: Vec<&str> = events
        .iter()
        .map(|&e| event_names.get(e).map_or("[unknown]", String::as_str))
        .collect();
    let digits = |n: i64| n.to_string().len();
    let pid_w = threads
        .iter()
        .map(|t| digits(t.0.into()))
        .fold(3, usize::max);
    let tid_w = threads
        .iter()
        .map(|t| digits(t.1.into()))
        .fold(3, usize::max);
    let col_w: Vec<usize> = names
        .iter()
        .enumerate()
        .map(|(c, n)| {
            table
                .iter()
                .map(|row| row[c].to_string().len())
                .fold(n.len(), usize::max)
        })
        .collect();
    write!(out, "# {:>pid_w$}  {:>tid_w$}", "PID", "TID")?;
    for (n, w) in names.iter().zip(&col_w) {
        write!(out, "  {n:>w$}")?;
    }
    writeln!(out)?;
    for ((pid, tid), row) in threads.iter().zip(&table) {
        write!(out, "  {pid:>pid_w$}  {tid:>tid_w$}")?;
        for (v, w) in row.iter().zip(&col_w) {
            write!(out, "  {v:>w$}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// perf indents each hierarchy level by this many columns.
const HIERARCHY_INDENT: usize = 3;

/// One row of the hierarchy view: the sums of the entries that share its
/// keys up to its level.
struct HNode {
    /// Sums (and the level's key at `keys[key]`), from the first entry.
    sum: HistEntry,
    /// The flat row of a leaf (its call graph's index).
    row: usize,
    children: Vec<HNode>,
    index: HashMap<Key, usize>,
}

impl HNode {
    fn new(e: &HistEntry, row: usize) -> Self {
        let mut sum = e.clone();
        sum.ends = Vec::new();
        sum.subtrees = Vec::new();
        HNode {
            sum,
            row,
            children: Vec::new(),
            index: HashMap::new(),
        }
    }

    fn add(&mut self, e: &HistEntry) {
        let s = &mut self.sum;
        s.period = s.period.wrapping_add(e.period);
        s.samples = s.samples.wrapping_add(e.samples);
        s.period_acc = s.period_acc.wrapping_add(e.period_acc);
        s.samples_acc = s.samples_acc.wrapping_add(e.samples_acc);
        for (m, x) in s.modes.iter_mut().zip(e.modes) {
            *m = m.wrapping_add(x);
        }
        if s.group.len() < e.group.len() {
            s.group.resize(e.group.len(), Stat::default());
        }
        for (g, x) in s.group.iter_mut().zip(&e.group) {
            g.period = g.period.wrapping_add(x.period);
            g.samples = g.samples.wrapping_add(x.samples);
            g.period_acc = g.period_acc.wrapping_add(x.period_acc);
            g.samples_acc = g.samples_acc.wrapping_add(x.samples_acc);
            for (m, y) in g.modes.iter_mut().zip(x.modes) {
                *m = m.wrapping_add(y);
            }
        }
    }
}

/// perf's `--hierarchy` table: a row per distinct value of the first sort
/// key, under it a row per value of the second among its samples, and so
/// on; call graphs under the last level's rows. Each level is sorted by
/// the value columns (descending), then by its key.
#[allow(clippy::too_many_arguments)]
fn write_hierarchy(
    out: &mut dyn Write,
    opts: &TableOptions,
    section: usize,
    s: &Section<'_>,
    names: &Names<'_>,
    graphs: &Graphs,
    cols: &[ColumnFormat],
    hidden: &dyn Fn(&HistEntry) -> bool,
) -> io::Result<()> {
    let sep = opts.field_sep.as_deref();
    let values: Vec<&ColumnFormat> = cols
        .iter()
        .filter(|c| matches!(c.column, Column::Field(_)))
        .collect();
    let levels: Vec<&ColumnFormat> = cols.iter().filter(|c| c.key.is_some()).collect();
    // perf's number of format nodes: the value columns' and one per level.
    let nodes = 1 + levels.len();
    let pad = nodes.saturating_sub(2) * HIERARCHY_INDENT;
    let mut root = HNode {
        sum: HistEntry {
            keys: Vec::new(),
            period: 0,
            samples: 0,
            period_acc: 0,
            samples_acc: 0,
            thread: 0,
            max_depth: 0,
            id: 0,
            ends: Vec::new(),
            subtrees: Vec::new(),
            level: b'.',
            modes: [0; 4],
            filtered: false,
            maker: Default::default(),
            chain_period: 0,
            group: Vec::new(),
        },
        row: 0,
        children: Vec::new(),
        index: HashMap::new(),
    };
    for (row, e) in s.hists.entries.iter().enumerate() {
        if hidden(e) {
            continue;
        }
        let mut node = &mut root;
        for l in &levels {
            let Some(k) = l.key.and_then(|i| e.keys.get(i)) else {
                break;
            };
            let i = match node.index.get(k) {
                Some(&i) => {
                    node.children[i].add(e);
                    i
                }
                None => {
                    node.children.push(HNode::new(e, row));
                    node.index.insert(*k, node.children.len() - 1);
                    node.children.len() - 1
                }
            };
            node = &mut node.children[i];
        }
    }
    // Each level in perf's order: the value columns descending, then the
    // level's key.
    let sort_fields: Vec<Field> = opts
        .layout
        .sort
        .iter()
        .filter_map(|c| match c {
            Column::Field(f) => Some(*f),
            Column::Key(_) => None,
        })
        .collect();
    fn sort(
        n: &mut HNode,
        depth: usize,
        fields: &[Field],
        levels: &[&ColumnFormat],
        names: &Names<'_>,
        group_sort_idx: usize,
    ) {
        let ki = levels.get(depth).and_then(|l| l.key).unwrap_or(0);
        n.children.sort_by(|a, b| {
            for f in fields {
                let o = profile::fields::cmp_field(*f, &a.sum, &b.sum, group_sort_idx);
                if o.is_ne() {
                    return o;
                }
            }
            match (a.sum.keys.get(ki), b.sum.keys.get(ki)) {
                // (perf's collapsed entries order unresolved symbols by
                // address.)
                (
                    Some(Key::Sym(SymRef::Addr { ip: p, .. })),
                    Some(Key::Sym(SymRef::Addr { ip: q, .. })),
                ) => (*p as i64).cmp(&(*q as i64)),
                (Some(x), Some(y)) => names.cmp_for_sort(x, y),
                _ => std::cmp::Ordering::Equal,
            }
        });
        for c in &mut n.children {
            sort(c, depth + 1, fields, levels, names, group_sort_idx);
        }
    }
    sort(
        &mut root,
        0,
        &sort_fields,
        &levels,
        names,
        opts.layout.group_sort_idx,
    );

    if !opts.quiet {
        // The header: the value columns' names after room for the deepest
        // indent, then the levels' names joined by " / "; dots under
        // each, the keys' as wide as the widest level with its indent.
        let mut head = String::from("# ");
        let mut dots = String::from("# ");
        if sep.is_none() && nodes >= 2 {
            head.push_str(&" ".repeat(pad));
            dots.push_str(&".".repeat(pad));
        }
        for (i, c) in values.iter().enumerate() {
            let w = c.width;
            head.push_str(&format!(
                "{:>w$}{}",
                opts.layout.header(c.column),
                sep.unwrap_or("  ")
            ));
            if i > 0 {
                dots.push_str(sep.unwrap_or(".."));
            }
            dots.push_str(&".".repeat(w));
        }
        let joined: Vec<String> = levels
            .iter()
            .map(|c| {
                let w = c.width;
                format!("{:<w$.w$}", opts.layout.header(c.column))
                    .trim()
                    .to_string()
            })
            .collect();
        let joined = joined.join(" / ");
        let widest = levels
            .iter()
            .enumerate()
            .map(|(d, c)| d * HIERARCHY_INDENT + c.width)
            .max()
            .unwrap_or(0);
        head.push_str(&joined);
        dots.push_str(sep.unwrap_or("  "));
        dots.push_str(&".".repeat(widest.max(joined.chars().count())));
        writeln!(out, "{head}\n{dots}\n#")?;
    }

    let (total, member_totals) = percent_bases(s, opts.relative);
    let zero = Stat::default();
    let v = Values {
        total,
        member_totals: &member_totals,
        zero: &zero,
        pct: &percent_of,
        color: opts.color,
    };
    // perf's overhead width, for "no entry" lines.
    let overhead_width: usize =
        values.iter().map(|c| c.width).sum::<usize>() + 2 * values.len().saturating_sub(1);
    struct Ctx<'a> {
        out: &'a mut dyn Write,
        opts: &'a TableOptions,
        names: &'a Names<'a>,
        values: &'a [&'a ColumnFormat],
        levels: &'a [&'a ColumnFormat],
        v: &'a Values<'a>,
        graph: Option<&'a Vec<Vec<u8>>>,
        pad: usize,
        nodes: usize,
        overhead_width: usize,
    }
    fn shown(c: &Ctx<'_>, n: &HNode) -> bool {
        (c.v.pct)(n.sum.period, c.v.total) >= c.opts.percent_limit
    }
    fn walk(c: &mut Ctx<'_>, n: &HNode, depth: usize) -> io::Result<()> {
        let sep = c.opts.field_sep.as_deref();
        for child in &n.children {
            if !shown(c, child) {
                continue;
            }
            let mut line = " ".repeat(depth * HIERARCHY_INDENT);
            for (i, col) in c.values.iter().enumerate() {
                match sep {
                    None => line.push_str("  "),
                    Some(s) if i > 0 => line.push_str(s),
                    Some(_) => {}
                }
                let start = line.chars().count();
                let Column::Field(f) = col.column else {
                    continue;
                };
                let len = match sep {
                    Some(_) => None,
                    None => Some(col.user.unwrap_or(f.value_width())),
                };
                c.v.write(&mut line, f, &child.sum, len);
                let printed = line.chars().count() - start;
                line.push_str(&" ".repeat(col.width.saturating_sub(printed)));
            }
            if sep.is_none() {
                line.push_str(&" ".repeat(c.pad));
            }
            let col = c.levels[depth];
            if let Some(k) = col.key.and_then(|i| child.sum.keys.get(i)) {
                let summed = match col.column {
                    Column::Key(sk) => summed_value(sk, k, child.sum.samples),
                    Column::Field(_) => None,
                };
                let mut t = summed.unwrap_or_else(|| {
                    key_text(k, child.sum.level, &child.sum.maker, col, c.names, sep)
                });
                if matches!(col.column, Column::Key(sk) if sk.pads_value()) {
                    let w = t.chars().count();
                    t.push_str(&" ".repeat(col.width.saturating_sub(w)));
                }
                line.push_str(sep.unwrap_or("  "));
                line.push_str(t.trim_start());
            }
            writeln!(c.out, "{line}")?;
            if depth + 1 == c.levels.len() {
                if let Some(g) = c.graph.and_then(|g| g.get(child.row)) {
                    c.out.write_all(g)?;
                }
                continue;
            }
            if !child.children.iter().any(|g| shown(c, g)) {
                let indent = match sep {
                    None => (c.nodes + depth + 1).saturating_sub(2) * HIERARCHY_INDENT,
                    Some(_) => 0,
                };
                writeln!(
                    c.out,
                    "{:indent$}{:w$}no entry >= {:.2}%",
                    "",
                    "",
                    c.opts.percent_limit,
                    w = c.overhead_width + 4
                )?;
            }
            walk(c, child, depth + 1)?;
        }
        Ok(())
    }
    if levels.is_empty() {
        return Ok(());
    }
    let mut c = Ctx {
        out,
        opts,
        names,
        values: &values,
        levels: &levels,
        v: &v,
        graph: graphs.get(section),
        pad,
        nodes,
        overhead_width,
    };
    walk(&mut c, &root, 0)
}
