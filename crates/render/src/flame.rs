//! Folded stacks to an interactive SVG flame graph (flamegraph.pl's: hover
//! details, click to zoom, search with highlighted matches and "matched %",
//! reset zoom), drawn by the `inferno` crate.

use std::borrow::Cow;
use std::io::{self, Write};
use std::str::FromStr;

use inferno::flamegraph::{self, color::Palette, Direction};
use profile::collapse::FoldedLine;

/// The palettes `--colors` accepts.
pub const PALETTES: &[&str] = &[
    "hot", "mem", "io", "wakeup", "java", "js", "perl", "python", "rust", "red", "green", "blue",
    "aqua", "yellow", "purple", "orange",
];

/// How to draw the graph.
#[derive(Debug, Clone)]
pub struct FlameOptions {
    /// Default: "Flame Graph", or "Icicle Graph" when inverted.
    pub title: Option<String>,
    pub subtitle: Option<String>,
    /// Image width in pixels (default 1200).
    pub width: Option<usize>,
    /// One of [`PALETTES`]. Default: `hot`, or `java` when frames carry
    /// `_[k]`/`_[j]`/`_[i]` marks, which it colours apart (kernel orange,
    /// JIT green, inline aqua).
    pub palette: Option<String>,
    /// Colour by a hash of the name instead of at random (both are
    /// reproducible: the random colours are seeded).
    pub hash: bool,
    /// Icicle graph: roots at the top.
    pub inverted: bool,
    /// Merge stacks leaf first.
    pub reverse: bool,
    /// Keep the input's order on the x axis (time) instead of sorting.
    pub flame_chart: bool,
    /// Frames narrower than this are left out.
    pub min_width: MinWidth,
    /// What a count is ("samples").
    pub count_name: Option<String>,
}

impl Default for FlameOptions {
    fn default() -> Self {
        FlameOptions {
            title: None,
            subtitle: None,
            width: None,
            palette: None,
            hash: false,
            inverted: false,
            reverse: false,
            flame_chart: false,
            min_width: MinWidth::Pixels(0.1),
            count_name: None,
        }
    }
}

/// Pixels left and right of the frames (inferno's padding).
const XPAD: usize = 10;
/// Narrowest image drawn.
pub const MIN_IMAGE_WIDTH: usize = 100;
const DEFAULT_IMAGE_WIDTH: usize = 1200;

/// The narrowest frame drawn, as flamegraph.pl's `--minwidth` takes it:
/// pixels (`0.1`) or a percentage of the total (`0.5%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MinWidth {
    Pixels(f64),
    Percent(f64),
}

impl FromStr for MinWidth {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (num, pct) = match s.strip_suffix('%') {
            Some(n) => (n, true),
            None => (s, false),
        };
        match num.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(if pct {
                MinWidth::Percent(v)
            } else {
                MinWidth::Pixels(v)
            }),
            _ => Err(format!(
                "`{s}` is not a width: pixels (0.1) or a percentage (0.5%)"
            )),
        }
    }
}

/// The leaf frame of off-CPU stacks in a wall-clock graph.
pub const OFF_CPU_FRAME: &str = "[off-cpu]";

/// True if some frame ends with a `_[k]`, `_[j]` or `_[i]` mark.
pub fn has_annotations(lines: &[FoldedLine<'_>]) -> bool {
    lines.iter().any(|l| {
        l.stack
            .split(';')
            .any(|f| f.ends_with("_[k]") || f.ends_with("_[j]") || f.ends_with("_[i]"))
    })
}

/// `s` without the characters XML 1.0 forbids (control characters other than
/// tab and newlines, U+FFFE, U+FFFF), which would make the SVG unreadable;
/// each becomes U+FFFD.
fn xml_safe(s: &str) -> Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r'))
            || matches!(c, '\u{fffe}' | '\u{ffff}')
    };
    if s.chars().any(bad) {
        Cow::Owned(
            s.chars()
                .map(|c| if bad(c) { '\u{fffd}' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

impl FlameOptions {
    /// The narrowest frame drawn, in percent of all samples; None where the
    /// x axis is not sorted stacks (a flame chart, reversed stacks), so
    /// frames under it cannot be folded away before drawing.
    pub fn min_width_percent(&self) -> Option<f64> {
        if self.flame_chart || self.reverse {
            return None;
        }
        let width = self
            .width
            .unwrap_or(DEFAULT_IMAGE_WIDTH)
            .max(MIN_IMAGE_WIDTH);
        Some(min_width_percent(self.min_width, width))
    }
}

/// inferno takes a percentage of the frames' width.
fn min_width_percent(m: MinWidth, image_width: usize) -> f64 {
    match m {
        MinWidth::Percent(p) => p,
        MinWidth::Pixels(px) => px * 100.0 / (image_width - 2 * XPAD) as f64,
    }
}

/// inferno's options for `o`; `annotated`: frames carry `_[k]`-style marks.
fn inferno_options(o: &FlameOptions, annotated: bool) -> io::Result<flamegraph::Options<'static>> {
    let palette = match &o.palette {
        Some(p) => {
            Palette::from_str(p).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?
        }
        None if annotated => Palette::from_str("java").map_err(io::Error::other)?,
        None => Palette::from_str("hot").map_err(io::Error::other)?,
    };
    let mut opts = flamegraph::Options::default();
    opts.colors = palette;
    opts.hash = o.hash;
    opts.deterministic = true;
    opts.title = match &o.title {
        Some(t) => t.clone(),
        None if o.inverted => "Icicle Graph".into(),
        None => "Flame Graph".into(),
    };
    opts.subtitle = o.subtitle.clone();
    let width = o.width.unwrap_or(DEFAULT_IMAGE_WIDTH).max(MIN_IMAGE_WIDTH);
    opts.image_width = Some(width);
    if o.inverted {
        opts.direction = Direction::Inverted;
    }
    opts.reverse_stack_order = o.reverse;
    opts.flame_chart = o.flame_chart;
    opts.min_width = min_width_percent(o.min_width, width);
    if let Some(c) = &o.count_name {
        opts.count_name = c.clone();
    }
    Ok(opts)
}

/// Writes the SVG of `lines` to `out`. With no lines it writes flamegraph.pl's
/// "no valid input" placeholder SVG (the caller warns).
pub fn write_svg<W: Write>(out: W, lines: &[FoldedLine<'_>], o: &FlameOptions) -> io::Result<()> {
    let mut opts: flamegraph::Options<'_> = inferno_options(o, has_annotations(lines))?;
    // A wall-clock graph's off-CPU frames in blue (as flamegraph.pl's
    // off-CPU graphs), whatever the palette.
    let mut off_cpu = flamegraph::color::PaletteMap::default();
    if o.palette.is_none() && lines.iter().any(|l| l.stack.ends_with(OFF_CPU_FRAME)) {
        off_cpu.insert(
            OFF_CPU_FRAME,
            flamegraph::color::Color {
                r: 60,
                g: 110,
                b: 220,
            },
        );
        opts.palette_map = Some(&mut off_cpu);
    }
    let mut text: Vec<String> = lines
        .iter()
        .map(|l| format!("{} {}", xml_safe(l.stack), l.count))
        .collect();
    if o.flame_chart {
        // inferno draws a flame chart's lines right to left; flamegraph.pl
        // (and a timeline) puts the first line on the left.
        text.reverse();
    }
    match flamegraph::from_lines(&mut opts, text.iter().map(String::as_str), out) {
        Err(e) if lines.is_empty() && e.kind() == io::ErrorKind::InvalidData => Ok(()),
        r => r,
    }
}

/// Writes a differential flame graph (difffolded.pl -n, then
/// flamegraph.pl): the shape of `new`, each frame coloured by how its
/// samples changed from `base` once `base` is scaled to `new`'s total: red
/// more, blue fewer, the deeper the colour the larger the change; hover
/// details give the change in percent of all samples.
pub fn write_diff_svg<W: Write>(
    out: W,
    base: &[FoldedLine<'_>],
    new: &[FoldedLine<'_>],
    o: &FlameOptions,
) -> io::Result<()> {
    let folded = |lines: &[FoldedLine<'_>]| {
        let mut b = Vec::new();
        for l in lines {
            b.extend_from_slice(xml_safe(l.stack).as_bytes());
            b.extend_from_slice(format!(" {}\n", l.count).as_bytes());
        }
        b
    };
    let mut both = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options {
            normalize: true,
            strip_hex: false,
        },
        &folded(base)[..],
        &folded(new)[..],
        &mut both,
    )?;
    let text = String::from_utf8_lossy(&both);
    let mut lines: Vec<&str> = text.lines().collect();
    // (inferno writes them in hash order.)
    lines.sort_unstable();
    let annotated = has_annotations(base) || has_annotations(new);
    let mut opts = inferno_options(o, annotated)?;
    if o.title.is_none() {
        opts.title = "Differential Flame Graph".into();
    }
    if o.subtitle.is_none() {
        opts.subtitle = Some(
            "the new profile's stacks; red: more samples than the baseline (scaled to the \
             same total), blue: fewer"
                .into(),
        );
    }
    match flamegraph::from_lines(&mut opts, lines.iter().copied(), out) {
        Err(e) if lines.is_empty() && e.kind() == io::ErrorKind::InvalidData => Ok(()),
        r => r,
    }
}
