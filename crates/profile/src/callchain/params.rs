//! `perf report -g`'s argument: print type, order, key, value, threshold
//! and print limit, parsed as perf 6.1 reads it, and what a threshold
//! prunes.

use super::cnum::{c_double_to_u64, c_strtod, c_strtoul};

/// What `perf report -g` prints (perf's `enum chain_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrintType {
    /// `graph`: a tree, percentages of the event's total (`CHAIN_GRAPH_ABS`).
    Graph,
    /// `fractal`: a tree, percentages of the parent (`CHAIN_GRAPH_REL`).
    Fractal,
    /// `flat`: one chain per block.
    Flat,
    /// `folded`: one `value a;b;c` line per chain.
    Folded,
    /// `none`: no call graph.
    None,
}

/// Which end of a chain comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainOrder {
    /// Callers first: the chain starts at the outermost frame.
    Caller,
    /// Callees first: the chain starts at the sampled frame.
    Callee,
}

/// What makes two frames equal (`-g ...,function|address|srcline`). The
/// caller interns frames accordingly; this crate only carries the choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainKey {
    Function,
    Address,
    Srcline,
}

/// What is printed for a node (`-g ...,percent|period|count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainValue {
    Percent,
    Period,
    Count,
}

/// The argument of `perf report -g`, parsed as perf 6.1 does.
#[derive(Debug, Clone, PartialEq)]
pub struct CallGraphParams {
    pub print_type: PrintType,
    /// `min_percent`: nodes below this percentage are not shown (of the
    /// event's total for graph/flat/folded, of the parent for fractal).
    pub threshold: f64,
    /// Most children printed per node (graph) or chains per entry
    /// (flat/folded); 0 means unlimited. perf keeps it in a `u32`.
    pub print_limit: u32,
    /// The order if one was given; `None` lets the mode decide (see
    /// [`CallGraphParams::resolved_order`]).
    pub order: Option<ChainOrder>,
    pub key: ChainKey,
    /// `branch`: add LBR branch info to chains (only meaningful with LBR).
    pub branch: bool,
    pub value: ChainValue,
}

impl Default for CallGraphParams {
    /// perf's state when `-g` is not given: graph, 0.5, no print limit,
    /// order left to the mode, function, percent.
    fn default() -> Self {
        CallGraphParams {
            print_type: PrintType::Graph,
            threshold: 0.5,
            print_limit: 0,
            order: None,
            key: ChainKey::Function,
            branch: false,
            value: ChainValue::Percent,
        }
    }
}

/// What a bare `-g` stands for in `perf report` (it sets the order too, so
/// `-g --no-children` prints callers first while no `-g` prints callees).
pub const REPORT_DEFAULT_OPT: &str = "graph,0.5,caller,function,percent";

const VALID: &str = "expected print_type (graph|flat|fractal|folded|none), \
threshold, print_limit, order (caller|callee), sort_key (function|address|srcline), \
branch or value (percent|period|count), separated by commas";

/// Applies `tok` if it abbreviates a keyword. perf tries the groups in
/// this order (mode, order, sort key, value), so "f" is flat, "c" is
/// caller, "calle" is still caller and "p"/"per" are percent.
fn apply_keyword(p: &mut CallGraphParams, tok: &str) -> bool {
    let is = |word| abbrev_of(tok, word);
    if is("graph") {
        p.print_type = PrintType::Graph;
    } else if is("flat") {
        p.print_type = PrintType::Flat;
    } else if is("fractal") {
        p.print_type = PrintType::Fractal;
    } else if is("folded") {
        p.print_type = PrintType::Folded;
    } else if is("caller") {
        p.order = Some(ChainOrder::Caller);
    } else if is("callee") {
        p.order = Some(ChainOrder::Callee);
    } else if is("function") {
        p.key = ChainKey::Function;
    } else if is("address") {
        p.key = ChainKey::Address;
    } else if is("srcline") {
        p.key = ChainKey::Srcline;
    } else if is("branch") {
        p.branch = true;
    } else if is("percent") {
        p.value = ChainValue::Percent;
    } else if is("period") {
        p.value = ChainValue::Period;
    } else if is("count") {
        p.value = ChainValue::Count;
    } else {
        return false;
    }
    true
}

/// perf matches a token against a word with `strncmp(tok, word,
/// strlen(tok))`: any non-empty prefix of the word selects it.
fn abbrev_of(tok: &str, word: &str) -> bool {
    !tok.is_empty() && word.as_bytes().starts_with(tok.as_bytes())
}

impl std::fmt::Display for CallGraphParams {
    /// The canonical `-g` argument, which [`CallGraphParams::parse`] (and
    /// perf) read back as the same params: `graph,0.5,0,caller,function,percent`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match self.print_type {
            PrintType::Graph => "graph",
            PrintType::Fractal => "fractal",
            PrintType::Flat => "flat",
            PrintType::Folded => "folded",
            PrintType::None => return f.write_str("none"),
        };
        // f64's Display is the shortest text that reads back to the same
        // value ("inf", "NaN" included, which strtod accepts).
        write!(f, "{mode},{},{}", self.threshold, self.print_limit)?;
        match self.order {
            Some(ChainOrder::Caller) => f.write_str(",caller")?,
            Some(ChainOrder::Callee) => f.write_str(",callee")?,
            None => {}
        }
        f.write_str(match self.key {
            ChainKey::Function => ",function",
            ChainKey::Address => ",address",
            ChainKey::Srcline => ",srcline",
        })?;
        if self.branch {
            f.write_str(",branch")?;
        }
        f.write_str(match self.value {
            ChainValue::Percent => ",percent",
            ChainValue::Period => ",period",
            ChainValue::Count => ",count",
        })
    }
}

impl CallGraphParams {
    /// Parses `-g`'s argument like perf's `__parse_callchain_report_opt`:
    /// comma-separated tokens in any order (empty ones skipped), each an
    /// abbreviation of a keyword, else the threshold (first number, read
    /// by `strtod`) and then the print limit (later numbers, `strtoul`,
    /// the last one wins). `none` anywhere turns call graphs off at once.
    pub fn parse(arg: &str) -> Result<CallGraphParams, crate::Error> {
        CallGraphParams::default().parse_onto(arg)
    }

    /// [`CallGraphParams::parse`] starting from `self` (perf's defaults as
    /// the configuration changed them) rather than from perf's defaults.
    pub fn parse_onto(self, arg: &str) -> Result<CallGraphParams, crate::Error> {
        let mut p = self;
        let mut threshold_set = false;
        for tok in arg.split(',').filter(|t| !t.is_empty()) {
            if abbrev_of(tok, "none") {
                p.print_type = PrintType::None;
                return Ok(p);
            }
            if apply_keyword(&mut p, tok) {
                // A keyword; nothing else to do.
            } else if !threshold_set {
                p.threshold = c_strtod(tok).ok_or_else(|| {
                    crate::Error::CallGraph(format!(
                        "invalid call-graph option '{tok}' in '{arg}': {VALID}"
                    ))
                })?;
                threshold_set = true;
            } else {
                // perf stores strtoul's unsigned long in a u32: truncation
                // is its behaviour (so "-1" means 4294967295).
                p.print_limit = c_strtoul(tok).ok_or_else(|| {
                    crate::Error::CallGraph(format!(
                        "invalid call-graph print limit '{tok}' in '{arg}': {VALID}"
                    ))
                })? as u32;
            }
        }
        Ok(p)
    }

    /// One `call-graph.KEY = value` setting of perf's configuration, as
    /// perf's `perf_callchain_config` reads it (`print-type`, `order`,
    /// `sort-key`, `threshold`, `print-limit`; other keys are not report's).
    pub fn set_config(&mut self, key: &str, value: &str) -> Result<(), crate::Error> {
        let bad =
            |what: &str| crate::Error::CallGraph(format!("invalid callchain {what}: {value}"));
        let word = |words: &[&str]| words.iter().any(|w| abbrev_of(value, w));
        match key {
            "print-type" if word(&["graph", "flat", "fractal", "folded"]) => {
                apply_keyword(self, value);
            }
            "print-type" => return Err(bad("mode")),
            "order" if word(&["caller", "callee"]) => {
                apply_keyword(self, value);
            }
            "order" => return Err(bad("order")),
            "sort-key" if word(&["function", "address"]) => {
                apply_keyword(self, value);
            }
            "sort-key" => return Err(bad("sort key")),
            "threshold" => self.threshold = c_strtod(value).ok_or_else(|| bad("threshold"))?,
            "print-limit" => {
                self.print_limit =
                    c_double_to_u64(c_strtod(value).ok_or_else(|| bad("print limit"))?) as u32
            }
            _ => {}
        }
        Ok(())
    }

    /// The order in effect: the one given, else perf report's default,
    /// caller order with `--children` and callee order without.
    pub fn resolved_order(&self, children: bool) -> ChainOrder {
        self.order.unwrap_or(if children {
            ChainOrder::Caller
        } else {
            ChainOrder::Callee
        })
    }

    /// Whether call graphs are printed at all.
    pub fn enabled(&self) -> bool {
        self.print_type != PrintType::None
    }

    /// The smallest cumulated period a node needs in graph, flat and folded
    /// modes, computed like perf: `total * (threshold / 100)` in double,
    /// converted to `u64` as gcc does on x86-64 (so a negative or NaN
    /// threshold hides everything and an infinite one hides nothing).
    pub fn min_hit(&self, total: u64) -> u64 {
        c_double_to_u64(total as f64 * (self.threshold / 100.0))
    }

    /// Which nodes [`CallTree::sort`] keeps with these params, for trees
    /// built only as far as they are printed.
    pub fn prune(&self, callchain_total: u64) -> Prune {
        match self.print_type {
            PrintType::Fractal => Prune::Fractal(self.threshold / 100.0),
            PrintType::None => Prune::All,
            _ => Prune::Above(self.min_hit(callchain_total)),
        }
    }
}

/// Which children of a node a sorted tree keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prune {
    /// Every node.
    All,
    /// Nodes whose cumulated period is at least this (graph, flat and
    /// folded: a chain end below it is never printed either).
    Above(u64),
    /// Nodes weighing at least this fraction of their parent's children
    /// (fractal), rounded up.
    Fractal(f64),
}

impl Prune {
    /// Whether a node of cumulated period `cum`, under a parent whose
    /// children weigh `parent_children`, is kept.
    pub fn keeps(&self, cum: u64, parent_children: u64) -> bool {
        match *self {
            Prune::All => true,
            Prune::Above(min) => cum >= min,
            Prune::Fractal(pct) => cum >= c_double_to_u64((parent_children as f64 * pct).ceil()),
        }
    }
}
