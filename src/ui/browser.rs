//! The interactive browser of `sear report` (and of `sear top`): the
//! hotspot table on the terminal, perf's keys to unfold call graphs, filter,
//! zoom, annotate and switch events.
//!
//! The browser draws what a [`Source`] gives it (the rows exactly as the
//! text report prints them, each entry's call graph as its text lines) and
//! asks the source to rebuild for a filter or a zoom; it owns only the
//! screen state (selection, unfolded entries, the mode). ratatui draws,
//! crossterm reads keys. The terminal is restored however the browser
//! ends: `q`, Ctrl-C (a key in raw mode), an error, a panic, or SIGTERM,
//! SIGINT or SIGHUP from outside.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::time::{Duration, Instant};

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::{Frame, Terminal};

/// What the table shows now.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// Lines above the column header: the event, its samples and period,
    /// the zoom and filters in force, the time range.
    pub title: Vec<String>,
    /// The column header.
    pub columns: String,
    /// One line per entry, as the text report prints it.
    pub rows: Vec<String>,
}

/// What a key asks the source to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `/`: only symbols containing this text (None: all again).
    Filter(Option<String>),
    /// `t`: only the thread of this row (again: all threads).
    ZoomThread(usize),
    /// `d`: only the shared object of this row (again: all).
    ZoomDso(usize),
    /// Esc: every zoom and filter off.
    Unzoom,
    /// `s`/Tab, `S`/Shift-Tab: the next or previous event.
    NextEvent,
    PrevEvent,
}

/// A function's annotated instructions, for the annotate view.
#[derive(Debug, Clone, Default)]
pub struct Annotation {
    pub title: String,
    pub lines: Vec<String>,
    /// The line shown selected first: the hottest instruction.
    pub hot: usize,
}

/// The data behind the browser.
pub trait Source {
    fn view(&self) -> &View;
    /// The call graphs under these rows, as text lines (empty: none; a
    /// source may make them in parallel).
    fn graphs(&mut self, rows: &[usize]) -> Vec<Vec<String>>;
    /// The call graph under one row.
    fn graph(&mut self, row: usize) -> Vec<String> {
        self.graphs(&[row]).pop().unwrap_or_default()
    }
    /// Rebuilds for an action; an error is shown on the status line.
    fn act(&mut self, a: Action) -> Result<(), String>;
    /// The annotate view of the row's symbol.
    fn annotate(&mut self, row: usize) -> Result<Annotation, String>;
    /// Whether a zoom or filter is in force (Esc then undoes it).
    fn zoomed(&self) -> bool;
    /// A live view's refresh interval (None: the data never changes).
    fn refresh_every(&self) -> Option<Duration> {
        None
    }
    /// A live view takes in new data; true when the view changed.
    fn refresh(&mut self) -> bool {
        false
    }
    /// A line the status bar shows when there is no message (live views:
    /// sample rate, lost samples).
    fn status(&self) -> Option<String> {
        None
    }
}

/// Whether the browser can run here: stdout and stdin (or the controlling
/// terminal) are terminals and `TERM` is not `dumb`.
pub fn available() -> bool {
    use std::io::IsTerminal;
    io::stdout().is_terminal() && std::env::var("TERM").is_ok_and(|t| !t.is_empty() && t != "dumb")
}

/// Colour where the terminal has it: not with `NO_COLOR`, nor on a
/// terminal whose `TERM` names no colours.
fn colour_terminal() -> bool {
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    let term = std::env::var("TERM").unwrap_or_default();
    std::env::var_os("COLORTERM").is_some()
        || [
            "color", "xterm", "screen", "tmux", "rxvt", "linux", "vt220", "konsole",
        ]
        .iter()
        .any(|t| term.contains(t))
            && !term.contains("-mono")
            && !term.ends_with("-m")
}

mod restore {
    //! The terminal as it was, restored on every way out.
    use std::sync::OnceLock;

    static SAVED: OnceLock<libc::termios> = OnceLock::new();

    /// Leaves the alternate screen, shows the cursor and puts back the
    /// saved terminal modes. Only async-signal-safe calls: it runs from
    /// signal handlers too.
    pub fn now() {
        const LEAVE: &[u8] = b"\x1b[?1049l\x1b[?25h\x1b[0m";
        // SAFETY: write(2) and tcsetattr(3) on the standard descriptors
        // with valid buffers.
        unsafe {
            libc::write(1, LEAVE.as_ptr().cast(), LEAVE.len());
            if let Some(t) = SAVED.get() {
                libc::tcsetattr(1, libc::TCSANOW, t);
            }
        }
    }

    extern "C" fn on_signal(sig: libc::c_int) {
        now();
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(128 + sig) }
    }

    /// Saves the terminal's modes and makes panics and termination
    /// signals restore them.
    pub fn install() {
        // SAFETY: tcgetattr fills the struct it is given.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(1, &mut t) == 0 {
                let _ = SAVED.set(t);
            }
            for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
                libc::signal(sig, on_signal as *const () as libc::sighandler_t);
            }
        }
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            now();
            previous(info);
        }));
    }
}

/// The terminal in the browser's modes for as long as it lives.
struct Screen;

impl Screen {
    fn enter() -> io::Result<Screen> {
        restore::install();
        crossterm::terminal::enable_raw_mode()?;
        crossterm::execute!(
            io::stdout(),
            crossterm::terminal::EnterAlternateScreen,
            crossterm::cursor::Hide
        )?;
        Ok(Screen)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
        restore::now();
    }
}

enum Mode {
    List,
    Help,
    /// `/`: the text typed so far.
    Prompt(String),
    Annotate {
        ann: Annotation,
        sel: usize,
        top: usize,
    },
}

/// A line of the list: a row, or one line of its unfolded call graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ListLine {
    row: usize,
    graph: Option<usize>,
}

struct State {
    expanded: BTreeSet<usize>,
    graphs: HashMap<usize, Vec<String>>,
    lines: Vec<ListLine>,
    sel: usize,
    top: usize,
    mode: Mode,
    message: Option<String>,
    colour: bool,
    /// Lines of the list area at the last draw (for page keys).
    page: usize,
    /// The annotate browser alone (no table behind it).
    solo: bool,
}

#[derive(PartialEq, Eq)]
enum Flow {
    Go,
    Quit,
}

const HELP: &[(&str, &str)] = &[
    ("Up/Down, k/j", "move the selection"),
    ("PgUp/PgDn, Space", "a page up or down"),
    ("Home/End", "the first or last line"),
    (
        "Enter, +, e",
        "unfold or fold the selected entry's call graph",
    ),
    ("E", "unfold every entry's call graph"),
    ("c / C", "fold the selected entry's / every call graph"),
    ("/", "only symbols containing a text (empty: all)"),
    ("t", "zoom into the selected entry's thread (again: out)"),
    (
        "d",
        "zoom into the selected entry's shared object (again: out)",
    ),
    ("a", "annotate the selected symbol (q or Esc: back)"),
    ("s, Tab / S, Shift-Tab", "the next / previous event"),
    ("Esc", "undo zooms and filters; without any, quit"),
    ("h, ?", "this help (any key closes it)"),
    ("q, Ctrl-C", "quit"),
];

/// Runs the browser until the user quits.
pub fn run(src: &mut dyn Source) -> io::Result<()> {
    // (Log lines would scribble over the screen.)
    let level = log::max_level();
    log::set_max_level(log::LevelFilter::Off);
    let r = browse(src);
    log::set_max_level(level);
    r
}

/// perf annotate's browser: one function's annotation at a time, starting
/// on the first's hottest instruction; Right/Tab the next function,
/// Left/Shift-Tab the previous, q, Esc or Ctrl-C quit.
pub fn run_annotations(anns: &[Annotation]) -> io::Result<()> {
    let level = log::max_level();
    log::set_max_level(log::LevelFilter::Off);
    let r = browse_annotations(anns);
    log::set_max_level(level);
    r
}

/// A source without rows (the annotate browser's).
struct NoRows(View);

impl Source for NoRows {
    fn view(&self) -> &View {
        &self.0
    }
    fn graphs(&mut self, rows: &[usize]) -> Vec<Vec<String>> {
        rows.iter().map(|_| Vec::new()).collect()
    }
    fn act(&mut self, _: Action) -> Result<(), String> {
        Ok(())
    }
    fn annotate(&mut self, _: usize) -> Result<Annotation, String> {
        Err("nothing to annotate".into())
    }
    fn zoomed(&self) -> bool {
        false
    }
}

fn browse_annotations(anns: &[Annotation]) -> io::Result<()> {
    if anns.is_empty() {
        return Ok(());
    }
    let screen = Screen::enter()?;
    let mut term = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    let mut src = NoRows(View::default());
    let mut st = State::new(Mode::List);
    st.solo = true;
    let show = |i: usize| {
        let mut ann = anns[i].clone();
        if anns.len() > 1 {
            ann.title = format!("{}  [{}/{}]", ann.title, i + 1, anns.len());
        }
        Mode::Annotate {
            sel: ann.hot,
            ann,
            top: 0,
        }
    };
    let mut at = 0;
    st.mode = show(0);
    loop {
        term.draw(|f| st.draw(f, &src))?;
        let Event::Key(k) = event::read()? else {
            continue;
        };
        if k.kind == KeyEventKind::Release {
            continue;
        }
        let ctrl_c = k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
        match k.code {
            _ if ctrl_c => break,
            KeyCode::Char('q') | KeyCode::Esc => break,
            KeyCode::Right | KeyCode::Tab => {
                at = (at + 1) % anns.len();
                st.mode = show(at);
            }
            KeyCode::Left | KeyCode::BackTab => {
                at = (at + anns.len() - 1) % anns.len();
                st.mode = show(at);
            }
            _ => {
                st.key(k, &mut src);
            }
        }
    }
    drop(term);
    drop(screen);
    Ok(())
}

fn browse(src: &mut dyn Source) -> io::Result<()> {
    let screen = Screen::enter()?;
    let mut term = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    let mut st = State::new(Mode::List);
    st.relayout(src);
    let mut last_refresh = Instant::now();
    loop {
        term.draw(|f| st.draw(f, src))?;
        let wait = match src.refresh_every() {
            Some(every) => every.saturating_sub(last_refresh.elapsed()),
            None => Duration::from_secs(3600),
        };
        // (A resize, or any other event, redraws at the loop's top.)
        if event::poll(wait)? {
            if let Event::Key(k) = event::read()? {
                if k.kind != KeyEventKind::Release && st.key(k, src) == Flow::Quit {
                    break;
                }
            }
        }
        if src
            .refresh_every()
            .is_some_and(|every| last_refresh.elapsed() >= every)
        {
            last_refresh = Instant::now();
            if src.refresh() {
                st.graphs.clear();
                st.relayout(src);
            }
        }
    }
    drop(term);
    drop(screen);
    Ok(())
}

impl State {
    fn new(mode: Mode) -> State {
        State {
            expanded: BTreeSet::new(),
            graphs: HashMap::new(),
            lines: Vec::new(),
            sel: 0,
            top: 0,
            mode,
            message: None,
            colour: colour_terminal(),
            page: 10,
            solo: false,
        }
    }

    /// The list's lines from the rows and the unfolded graphs; the
    /// selection stays on its row.
    fn relayout(&mut self, src: &mut dyn Source) {
        let sel_row = self.lines.get(self.sel).map(|l| l.row);
        let rows = src.view().rows.len();
        self.expanded.retain(|&r| r < rows);
        let mut lines = Vec::with_capacity(rows);
        for row in 0..rows {
            lines.push(ListLine { row, graph: None });
            if self.expanded.contains(&row) {
                let g = self.graphs.entry(row).or_insert_with(|| src.graph(row));
                lines.extend((0..g.len()).map(|i| ListLine {
                    row,
                    graph: Some(i),
                }));
            }
        }
        self.lines = lines;
        self.sel = match sel_row {
            Some(r) => self
                .lines
                .iter()
                .position(|l| l.row == r.min(rows.saturating_sub(1)) && l.graph.is_none())
                .unwrap_or(0),
            None => 0,
        };
    }

    /// After a rebuild: nothing unfolded, the first row selected.
    fn reset(&mut self, src: &mut dyn Source) {
        self.expanded.clear();
        self.graphs.clear();
        self.lines.clear();
        self.sel = 0;
        self.top = 0;
        self.relayout(src);
    }

    fn selected_row(&self) -> Option<usize> {
        self.lines.get(self.sel).map(|l| l.row)
    }

    fn toggle(&mut self, src: &mut dyn Source, unfold: Option<bool>) {
        let Some(row) = self.selected_row() else {
            return;
        };
        let open = unfold.unwrap_or(!self.expanded.contains(&row));
        if open {
            let g = self.graphs.entry(row).or_insert_with(|| src.graph(row));
            if g.is_empty() {
                self.message = Some("no call graph for this entry".into());
                return;
            }
            self.expanded.insert(row);
        } else {
            self.expanded.remove(&row);
        }
        self.relayout(src);
        // The row itself stays selected.
        if let Some(i) = self
            .lines
            .iter()
            .position(|l| l.row == row && l.graph.is_none())
        {
            self.sel = i;
        }
    }

    fn act(&mut self, src: &mut dyn Source, a: Action) {
        match src.act(a) {
            Ok(()) => self.reset(src),
            Err(m) => self.message = Some(m),
        }
    }

    fn key(&mut self, k: KeyEvent, src: &mut dyn Source) -> Flow {
        let ctrl_c = k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl_c {
            return Flow::Quit;
        }
        self.message = None;
        match &mut self.mode {
            Mode::Help => {
                self.mode = Mode::List;
                return Flow::Go;
            }
            Mode::Prompt(text) => {
                match k.code {
                    KeyCode::Esc => self.mode = Mode::List,
                    KeyCode::Enter => {
                        let t = std::mem::take(text);
                        self.mode = Mode::List;
                        let t = t.trim().to_owned();
                        self.act(src, Action::Filter((!t.is_empty()).then_some(t)));
                    }
                    KeyCode::Backspace => {
                        text.pop();
                    }
                    KeyCode::Char(c) => text.push(c),
                    _ => {}
                }
                return Flow::Go;
            }
            Mode::Annotate { ann, sel, top: _ } => {
                let n = ann.lines.len();
                match k.code {
                    KeyCode::Char('q') | KeyCode::Esc | KeyCode::Left => self.mode = Mode::List,
                    KeyCode::Up | KeyCode::Char('k') => *sel = sel.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => {
                        *sel = (*sel + 1).min(n.saturating_sub(1))
                    }
                    KeyCode::PageUp => *sel = sel.saturating_sub(self.page),
                    KeyCode::PageDown | KeyCode::Char(' ') => {
                        *sel = (*sel + self.page).min(n.saturating_sub(1))
                    }
                    KeyCode::Home => *sel = 0,
                    KeyCode::End => *sel = n.saturating_sub(1),
                    KeyCode::Char('h') | KeyCode::Char('?') => {}
                    _ => {}
                }
                return Flow::Go;
            }
            Mode::List => {}
        }
        let n = self.lines.len();
        match k.code {
            KeyCode::Char('q') => return Flow::Quit,
            KeyCode::Esc => {
                if src.zoomed() {
                    self.act(src, Action::Unzoom);
                } else {
                    return Flow::Quit;
                }
            }
            KeyCode::Up | KeyCode::Char('k') => self.sel = self.sel.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.sel = (self.sel + 1).min(n.saturating_sub(1))
            }
            KeyCode::PageUp => self.sel = self.sel.saturating_sub(self.page),
            KeyCode::PageDown | KeyCode::Char(' ') => {
                self.sel = (self.sel + self.page).min(n.saturating_sub(1))
            }
            KeyCode::Home => self.sel = 0,
            KeyCode::End => self.sel = n.saturating_sub(1),
            KeyCode::Enter | KeyCode::Char('+') | KeyCode::Char('e') => self.toggle(src, None),
            KeyCode::Char('c') => self.toggle(src, Some(false)),
            KeyCode::Char('E') => {
                let rows = src.view().rows.len();
                let missing: Vec<usize> =
                    (0..rows).filter(|r| !self.graphs.contains_key(r)).collect();
                for (row, g) in missing.iter().zip(src.graphs(&missing)) {
                    self.graphs.insert(*row, g);
                }
                for row in 0..rows {
                    if self.graphs.get(&row).is_some_and(|g| !g.is_empty()) {
                        self.expanded.insert(row);
                    }
                }
                self.relayout(src);
            }
            KeyCode::Char('C') => {
                self.expanded.clear();
                self.relayout(src);
            }
            KeyCode::Char('/') => self.mode = Mode::Prompt(String::new()),
            KeyCode::Char('t') => {
                if let Some(r) = self.selected_row() {
                    self.act(src, Action::ZoomThread(r));
                }
            }
            KeyCode::Char('d') => {
                if let Some(r) = self.selected_row() {
                    self.act(src, Action::ZoomDso(r));
                }
            }
            KeyCode::Char('a') => {
                if let Some(r) = self.selected_row() {
                    match src.annotate(r) {
                        Ok(ann) => {
                            let sel = ann.hot;
                            self.mode = Mode::Annotate { ann, sel, top: 0 };
                        }
                        Err(m) => self.message = Some(m),
                    }
                }
            }
            KeyCode::Char('s') | KeyCode::Tab => self.act(src, Action::NextEvent),
            KeyCode::Char('S') | KeyCode::BackTab => self.act(src, Action::PrevEvent),
            KeyCode::Char('h') | KeyCode::Char('?') => self.mode = Mode::Help,
            _ => {}
        }
        Flow::Go
    }

    fn draw(&mut self, f: &mut Frame<'_>, src: &dyn Source) {
        let area = f.area();
        if area.height < 4 || area.width < 10 {
            return;
        }
        let bar = Style::default().add_modifier(Modifier::REVERSED);
        let status_text = match (&self.mode, &self.message) {
            (Mode::Prompt(t), _) => format!("Symbol filter: {t}_"),
            (_, Some(m)) => m.clone(),
            (Mode::Annotate { .. }, None) if self.solo => {
                "Up/Down/PgUp/PgDn move, Right/Tab next function, Left previous, q or Esc quit"
                    .into()
            }
            (Mode::Annotate { .. }, None) => {
                "Annotate: Up/Down/PgUp/PgDn move, q or Esc back".into()
            }
            (_, None) => src
                .status()
                .unwrap_or_else(|| "Press '?' for help on key bindings".into()),
        };
        let status = Rect::new(area.x, area.y + area.height - 1, area.width, 1);
        if let Mode::Annotate { ann, sel, top } = &mut self.mode {
            let title = Rect::new(area.x, area.y, area.width, 1);
            f.render_widget(Paragraph::new(ann.title.clone()).style(bar), title);
            let body_h = (area.height - 2) as usize;
            self.page = body_h.max(1);
            keep_visible(sel, top, body_h, ann.lines.len());
            let lines: Vec<Line<'_>> = ann
                .lines
                .iter()
                .enumerate()
                .skip(*top)
                .take(body_h)
                .map(|(i, l)| {
                    let line = Line::from(expand_tabs(l));
                    if i == *sel {
                        line.style(bar)
                    } else {
                        line
                    }
                })
                .collect();
            let body = Rect::new(area.x, area.y + 1, area.width, body_h as u16);
            f.render_widget(Paragraph::new(lines), body);
            f.render_widget(Paragraph::new(status_text).style(bar), status);
            return;
        }
        let view = src.view();
        let head_h = (view.title.len() as u16 + 1).min(area.height - 2);
        let head: Vec<Line<'_>> = view
            .title
            .iter()
            .map(|t| Line::from(t.as_str()).style(bar))
            .chain(std::iter::once(
                Line::from(view.columns.as_str())
                    .style(Style::default().add_modifier(Modifier::BOLD)),
            ))
            .collect();
        f.render_widget(
            Paragraph::new(head),
            Rect::new(area.x, area.y, area.width, head_h),
        );
        let body_h = (area.height - head_h - 1) as usize;
        self.page = body_h.max(1);
        keep_visible(&mut self.sel, &mut self.top, body_h, self.lines.len());
        let mut shown = Vec::with_capacity(body_h);
        for (i, l) in self.lines.iter().enumerate().skip(self.top).take(body_h) {
            let mut line = match l.graph {
                None => {
                    let text = view.rows.get(l.row).map_or("", String::as_str);
                    self.row_line(text)
                }
                Some(g) => Line::from(
                    self.graphs
                        .get(&l.row)
                        .and_then(|v| v.get(g))
                        .cloned()
                        .unwrap_or_default(),
                ),
            };
            if i == self.sel {
                line = line.style(bar);
            }
            shown.push(line);
        }
        if self.lines.is_empty() {
            shown.push(Line::from("  (no samples to show)"));
        }
        f.render_widget(
            Paragraph::new(shown),
            Rect::new(area.x, area.y + head_h, area.width, body_h as u16),
        );
        f.render_widget(Paragraph::new(status_text).style(bar), status);
        if matches!(self.mode, Mode::Help) {
            draw_help(f, area);
        }
    }

    /// A row with its percentages coloured as perf colours them (red from
    /// 5%, green above 0.5%) on a colour terminal.
    fn row_line<'a>(&self, text: &'a str) -> Line<'a> {
        if !self.colour {
            return Line::from(text);
        }
        let mut spans = Vec::new();
        let mut rest = text;
        loop {
            let lead = rest.len() - rest.trim_start().len();
            let token_end = rest[lead..].find(' ').map_or(rest.len(), |i| lead + i);
            let token = &rest[lead..token_end];
            let Some(v) = token.strip_suffix('%').and_then(|v| v.parse::<f64>().ok()) else {
                break;
            };
            spans.push(Span::raw(&rest[..lead]));
            let style = if v >= 5.0 {
                Style::default().fg(Color::Red)
            } else if v > 0.5 {
                Style::default().fg(Color::Green)
            } else {
                Style::default()
            };
            spans.push(Span::styled(token, style));
            rest = &rest[token_end..];
        }
        spans.push(Span::raw(rest));
        Line::from(spans)
    }
}

/// Scrolls so that the selection is on screen.
fn keep_visible(sel: &mut usize, top: &mut usize, height: usize, len: usize) {
    *sel = (*sel).min(len.saturating_sub(1));
    if *sel < *top {
        *top = *sel;
    }
    if height > 0 && *sel >= *top + height {
        *top = *sel + 1 - height;
    }
    if *top + height > len {
        *top = len.saturating_sub(height);
    }
}

/// Tabs to spaces (the annotate text has them; a terminal cell holds one
/// character).
fn expand_tabs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut col = 0;
    for c in s.chars() {
        if c == '\t' {
            let n = 8 - col % 8;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push(c);
            col += 1;
        }
    }
    out
}

fn draw_help(f: &mut Frame<'_>, area: Rect) {
    let keys_w = HELP.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let lines: Vec<Line<'_>> = HELP
        .iter()
        .map(|(k, what)| Line::from(format!(" {k:<keys_w$}  {what} ")))
        .collect();
    let w = (lines.iter().map(|l| l.width()).max().unwrap_or(0) as u16 + 2).min(area.width);
    let h = (lines.len() as u16 + 2).min(area.height);
    let r = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(" Help: keys ")),
        r,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_stays_on_screen() {
        let (mut sel, mut top) = (30, 0);
        keep_visible(&mut sel, &mut top, 10, 100);
        assert_eq!((sel, top), (30, 21));
        sel = 5;
        keep_visible(&mut sel, &mut top, 10, 100);
        assert_eq!((sel, top), (5, 5));
        sel = 500;
        keep_visible(&mut sel, &mut top, 10, 100);
        assert_eq!((sel, top), (99, 90));
    }

    #[test]
    fn tabs_expand_to_eight_columns() {
        assert_eq!(expand_tabs("a\tb"), "a       b");
        assert_eq!(expand_tabs("\t"), "        ");
    }
}
