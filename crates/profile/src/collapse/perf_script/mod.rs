//! `perf script` text to folded stacks, by the rules of `stackcollapse-perf.pl`.
//!
//! The text is a sequence of samples, each a header line, its callchain (one
//! frame a line, leaf first) and a blank line:
//!
//! ```text
//! dd 29776 666709.771979:   10101010 cpu-clock:
//!           414b3b fsnotify (/lib/modules/4.1.0-virtual/build/vmlinux)
//!            e5f70 read+0x10 (/lib/x86_64-linux-gnu/libc-2.15.so)
//!
//! ```
//!
//! The rules, as the reference collapser applies them:
//! - The header gives the comm (spaces become `_`), the pid and tid
//!   (`PID/TID`; with one number it is the tid and the pid is `?`), and at
//!   its end the period and the event (`... PERIOD EVENT:`). The first frame
//!   of each stack is `comm`, `comm-PID` (`--pid`) or `comm-PID/TID` (`--tid`).
//! - Stacks are weighted by the period when the header has one, else 1.
//! - Only samples of one event are folded: the one asked for, else the first
//!   seen; other samples are skipped (and counted).
//! - A frame is `ADDR SYMBOL (MODULE)`; `+0x..` offsets are cut off; names
//!   get `;` turned into `:`, lose `"` and `'`, and lose everything from the
//!   first `(` (argument lists) unless they look like Go methods
//!   (`pkg.(*T).M`); in `java` processes `Lcom/...` loses its `L`. A frame
//!   whose name starts with `(` is skipped.
//! - An `[unknown]` symbol in a known module is shown as `[module]`;
//!   `--addrs` adds the address: `[module <ADDR>]`.
//! - `--kernel` marks frames of `[...]` modules and `vmlinux` with `_[k]`,
//!   `--jit` frames of `/tmp/perf-PID.map` with `_[j]`; `--inline` expands
//!   inline frames from the binary's DWARF and marks them `_[i]`.
//! - A sample counts only once its blank line is read: a last sample without
//!   one (cut-off text) is dropped, with a warning.
//!
//! Lines that fit none of these shapes, lines over 1 MiB, frames past 65536
//! (or 16 MiB of names) in one sample and periods over `u64::MAX` are skipped
//! with counted warnings.

use std::collections::hash_map::Entry;
use std::ffi::OsStr;
use std::io::{self, BufRead};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use perf_data::Diagnostics;
use rustc_hash::FxHashMap as HashMap;
use symbols::{Binary, DebugFinder, FileOffset, Svma};

use super::Folded;

mod inline;
mod lines;
use inline::*;
use lines::*;

/// Longest line read; the rest of a longer line is skipped.
pub const MAX_LINE: usize = 1 << 20;
/// Most frames kept of one sample (perf's own limit is far lower).
pub const MAX_FRAMES: usize = 1 << 16;
/// Most bytes of frame names kept of one sample.
pub const MAX_STACK_BYTES: usize = 16 << 20;

/// What a stack counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Weight {
    /// The sample's period where the header gives one, else 1 (the reference
    /// collapser's behaviour).
    #[default]
    Period,
    /// 1 per sample.
    Samples,
}

/// The collapser's options (the flags of `stackcollapse-perf.pl`).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// First frame `comm-PID`.
    pub include_pid: bool,
    /// First frame `comm-PID/TID`.
    pub include_tid: bool,
    /// Mark kernel frames `_[k]`.
    pub annotate_kernel: bool,
    /// Mark JIT frames `_[j]`.
    pub annotate_jit: bool,
    /// Show `[unknown]` frames with their address.
    pub show_addrs: bool,
    /// Expand inline frames from the binaries' DWARF (marked `_[i]`).
    pub inline: bool,
    /// Fold only samples of this event (default: the first event seen).
    pub event_filter: Option<String>,
    pub weight: Weight,
    /// Wall-clock time (recordings only): the on-CPU samples of a time
    /// event (cpu-clock, task-clock) and `offcpu-time`'s, both in
    /// nanoseconds, off-CPU stacks ending in an `[off-cpu]` frame.
    pub wall_clock: bool,
}

/// The sample being read.
struct Sample {
    /// The stack's first frame (comm, with pid/tid as asked).
    pname: Vec<u8>,
    count: u64,
    /// Filtered out (other event) or unusable (bad period): frames are ignored.
    skip: bool,
    java: bool,
    offset: u64,
}

/// Reads `perf script` text and folds its stacks.
pub struct Collapser {
    opts: Options,
    folded: Folded,
    diag: Diagnostics,
    event: Option<Vec<u8>>,
    event_defaulted: bool,
    sample: Option<Sample>,
    /// Frame names of the current sample, leaf first, end to end in `names`.
    names: Vec<u8>,
    ends: Vec<usize>,
    /// Byte offset of the line being handled.
    offset: u64,
    inliner: Option<Inliner>,
    samples: u64,
}

impl Collapser {
    pub fn new(opts: Options) -> Self {
        let event = opts.event_filter.as_ref().map(|e| e.as_bytes().to_vec());
        let inliner = opts.inline.then(Inliner::new);
        Collapser {
            opts,
            folded: Folded::new(),
            diag: Diagnostics::default(),
            event,
            event_defaulted: false,
            sample: None,
            names: Vec::new(),
            ends: Vec::new(),
            offset: 0,
            inliner,
            samples: 0,
        }
    }

    /// Reads all lines of `r`. Only I/O errors are errors; bad lines are warnings.
    pub fn read<R: BufRead>(&mut self, mut r: R) -> io::Result<()> {
        let mut line = Vec::new();
        while let Some((len, too_long)) = next_line(&mut r, &mut line, MAX_LINE)? {
            if too_long {
                self.diag.warn("line too long", self.offset, || {
                    format!("a line longer than {MAX_LINE} bytes; skipped")
                });
            } else {
                self.line(&line);
            }
            self.offset += len as u64;
        }
        Ok(())
    }

    /// Handles one line (without its newline). Use this or [`Collapser::read`].
    pub fn line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if std::str::from_utf8(line).is_err() {
            self.diag.warn("not UTF-8", self.offset, || {
                "a line that is not valid UTF-8; its bytes are kept as they are".into()
            });
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            self.end_sample();
            return;
        }
        if line[0] == b'#' {
            return;
        }
        if let Some(h) = parse_header(line) {
            self.start_sample(line, h);
            return;
        }
        match parse_frame(line) {
            Some(f) => self.frame(f),
            None => self.diag.warn("unrecognised line", self.offset, || {
                format!(
                    "neither a sample header nor a frame: {:?}",
                    String::from_utf8_lossy(&line[..line.len().min(80)])
                )
            }),
        }
    }

    /// The folded stacks and the warnings. A sample still open (no blank line
    /// after it) is dropped: the text was cut off inside it.
    pub fn finish(mut self) -> (Folded, Diagnostics) {
        if let Some(s) = self.sample.take() {
            self.diag.warn("unterminated sample", s.offset, || {
                "the last sample has no blank line after it (cut-off text?); dropped, as stackcollapse-perf.pl does".into()
            });
        }
        if self.samples == 0 {
            self.diag.warn("no samples", self.offset, || {
                "no sample headers found: is this `perf script` output?".into()
            });
        }
        (self.folded, self.diag)
    }

    fn start_sample(&mut self, line: &[u8], h: Header<'_>) {
        if self.sample.is_some() {
            // perf script prints a blank line after every sample; without one
            // (no callchains recorded) each header ends the previous sample.
            self.end_sample();
        }
        self.samples += 1;
        let (pid, tid): (&[u8], &[u8]) = match h.tid {
            Some(t) if t != b"0" => (h.pid, t),
            _ => (b"?", h.pid),
        };
        let mut pname = h.comm.to_vec();
        if self.opts.include_tid {
            pname.push(b'-');
            pname.extend_from_slice(pid);
            pname.push(b'/');
            pname.extend_from_slice(tid);
        } else if self.opts.include_pid {
            pname.push(b'-');
            pname.extend_from_slice(pid);
        }
        for b in &mut pname {
            if *b == b' ' {
                *b = b'_';
            }
        }
        let mut skip = false;
        let mut count = 1;
        if let Some((period, event)) = parse_event(line) {
            match &self.event {
                None => {
                    self.event = Some(event.to_vec());
                    self.event_defaulted = true;
                }
                Some(e) if e.as_slice() != event => {
                    skip = true;
                    let (defaulted, first) = (self.event_defaulted, e.clone());
                    self.diag.warn("other event", self.offset, || {
                        let how = if defaulted {
                            "the first event seen; choose with --event-filter"
                        } else {
                            "as asked"
                        };
                        format!(
                            "samples of {} skipped: only {} is folded ({how})",
                            String::from_utf8_lossy(event),
                            String::from_utf8_lossy(&first)
                        )
                    });
                }
                Some(_) => {}
            }
            if let Some(p) = period {
                match parse_u64(p) {
                    // Like the reference: a zero period counts as 1.
                    Some(0) => {}
                    Some(v) => count = v,
                    None => {
                        skip = true;
                        self.diag.warn("period too large", self.offset, || {
                            format!(
                                "period {} exceeds {}; sample skipped",
                                String::from_utf8_lossy(p),
                                u64::MAX
                            )
                        });
                    }
                }
            }
        }
        if self.opts.weight == Weight::Samples {
            count = 1;
        }
        self.sample = Some(Sample {
            java: pname == b"java",
            pname,
            count,
            skip,
            offset: self.offset,
        });
    }

    fn end_sample(&mut self) {
        let Some(s) = self.sample.take() else {
            return;
        };
        if !s.skip {
            let mut key = s.pname;
            for i in (0..self.ends.len()).rev() {
                let start = if i == 0 { 0 } else { self.ends[i - 1] };
                key.push(b';');
                key.extend_from_slice(&self.names[start..self.ends[i]]);
            }
            self.folded.add(&key, s.count, s.offset, &mut self.diag);
        }
        self.names.clear();
        self.ends.clear();
    }

    fn frame(&mut self, f: Frame<'_>) {
        let Some(sample) = &self.sample else {
            self.diag.warn("frame outside a sample", self.offset, || {
                "a frame line before any sample header; skipped".into()
            });
            return;
        };
        if sample.skip {
            return;
        }
        let java = sample.java;
        let sample_offset = sample.offset;
        let mut func = f.func;
        if let Some(i) = find_last(func, b"+0x") {
            let hex = &func[i + 3..];
            if !hex.is_empty() && hex.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
                func = &func[..i];
            }
        }
        if func.starts_with(b"(") {
            return;
        }
        let leaf = self.ends.is_empty();
        let kernel = is_kernel(f.module);
        let jit = is_jit_map(f.module);
        let inlined = match &mut self.inliner {
            Some(inl) if !kernel && !jit && !f.module.starts_with(b"[") => {
                inl.frames(f.module, f.pc, leaf, &mut self.diag, self.offset)
            }
            _ => None,
        };
        let mut name = Vec::new();
        match inlined {
            Some(frames) => {
                for (fname, is_inlined) in frames {
                    name.clear();
                    name.extend_from_slice(fname.as_bytes());
                    self.push_name(&mut name, java, is_inlined, f.module, sample_offset);
                }
            }
            None => {
                if func == b"[unknown]" {
                    if f.module != b"[unknown]" {
                        let base = match f.module.iter().rposition(|&c| c == b'/') {
                            Some(i) => &f.module[i + 1..],
                            None => f.module,
                        };
                        name.push(b'[');
                        name.extend_from_slice(base);
                        name.push(b']');
                    } else {
                        name.extend_from_slice(func);
                    }
                    if self.opts.show_addrs {
                        name.pop();
                        name.extend_from_slice(b" <");
                        name.extend_from_slice(f.pc);
                        name.extend_from_slice(b">]");
                    }
                } else {
                    name.extend_from_slice(func);
                }
                self.push_name(&mut name, java, false, f.module, sample_offset);
            }
        }
    }

    /// The folded names (leaf first) one frame line would add to a sample
    /// of a `java` comm or another: `ADDR FUNC (MODULE)` as `perf script`
    /// prints it, FUNC without its `+0x` offset. Lets a recording be folded
    /// by exactly the rules of text input.
    pub fn frame_names(
        &mut self,
        java: bool,
        pc: &[u8],
        func: &[u8],
        module: &[u8],
    ) -> Vec<Vec<u8>> {
        let saved = self.sample.take();
        let names = std::mem::take(&mut self.names);
        let ends = std::mem::take(&mut self.ends);
        self.sample = Some(Sample {
            pname: Vec::new(),
            count: 0,
            skip: false,
            java,
            offset: 0,
        });
        self.frame(Frame { pc, func, module });
        let mut out = Vec::with_capacity(self.ends.len());
        let mut start = 0;
        for &e in &self.ends {
            out.push(self.names[start..e].to_vec());
            start = e;
        }
        self.sample = saved;
        self.names = names;
        self.ends = ends;
        out
    }

    /// Adds a stack folded elsewhere (`root;...;leaf`) with its count.
    pub fn add_folded(&mut self, stack: &[u8], count: u64) {
        self.samples += 1;
        self.folded.add(stack, count, 0, &mut self.diag);
    }

    /// Tidies and annotates one frame name and adds it to the sample.
    fn push_name(
        &mut self,
        name: &mut Vec<u8>,
        java: bool,
        inlined: bool,
        module: &[u8],
        sample_offset: u64,
    ) {
        if self.ends.len() >= MAX_FRAMES {
            self.diag.warn("stack too deep", sample_offset, || {
                format!(
                    "a sample with more than {MAX_FRAMES} frames; frames nearest the root dropped"
                )
            });
            return;
        }
        tidy(name, java);
        if inlined {
            name.extend_from_slice(b"_[i]");
        } else if self.opts.annotate_kernel && is_kernel(module) {
            name.extend_from_slice(b"_[k]");
        } else if self.opts.annotate_jit && is_jit_map(module) {
            name.extend_from_slice(b"_[j]");
        }
        self.names.extend_from_slice(name);
        self.ends.push(self.names.len());
    }
}

/// True if `text` looks like `perf script` output rather than folded stacks:
/// its first line that is not blank or a comment is a sample header (ends
/// with `EVENT:`) or a frame (starts with whitespace). Folded lines end with
/// a count.
pub fn looks_like_perf_script(text: &[u8]) -> bool {
    for line in text.split(|&c| c == b'\n') {
        if line.iter().all(|&c| is_ws(c)) || line.starts_with(b"#") {
            continue;
        }
        if is_ws(line[0]) {
            return true;
        }
        let end = line.iter().rposition(|&c| !is_ws(c)).map_or(0, |i| i + 1);
        return line[..end].ends_with(b":") && parse_header(line).is_some();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collapse(text: &str, opts: Options) -> (Vec<(String, u64)>, Diagnostics) {
        let mut c = Collapser::new(opts);
        c.read(text.as_bytes()).unwrap();
        let (f, d) = c.finish();
        let v = f
            .sorted()
            .into_iter()
            .map(|(k, n)| (String::from_utf8(k.to_vec()).unwrap(), n))
            .collect();
        (v, d)
    }

    #[test]
    fn header_shapes() {
        let h =
            parse_header(b"V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:").unwrap();
        assert_eq!(h.comm, b"V8 WorkerThread");
        assert_eq!(h.pid, b"24636");
        assert_eq!(h.tid, Some(&b"25607"[..]));
        let h = parse_header(b"swapper     0 [001]  1333.768770: cpu-clock: ").unwrap();
        assert_eq!((h.comm, h.pid, h.tid), (&b"swapper"[..], &b"0"[..], None));
        assert!(parse_header(b"\t  4005b1 main (/bin/x)").is_none());
        assert!(parse_header(b"nodigits here").is_none());
    }

    #[test]
    fn event_shapes() {
        assert_eq!(
            parse_event(b"dd 29776 666709.771979:   10101010 cpu-clock: "),
            Some((Some(&b"10101010"[..]), &b"cpu-clock"[..]))
        );
        assert_eq!(
            parse_event(b"noploop 21796 [001] 1410597.984841: instructions: "),
            Some((None, &b"instructions"[..]))
        );
        assert_eq!(
            parse_event(b"a 1 [0] 1.0: 7 cycles:ppp:"),
            Some((Some(&b"7"[..]), &b"cycles:ppp"[..]))
        );
        // No timestamp: no event (and no filtering), as the reference.
        assert_eq!(parse_event(b"func_ab 15294 cpu-clock: "), None);
    }

    #[test]
    fn frame_shapes() {
        let f = parse_frame(b"\t     7dbd0b v8::Invoke(bool, int) (/tmp/node-v011)").unwrap();
        assert_eq!(f.pc, b"7dbd0b");
        assert_eq!(f.func, b"v8::Invoke(bool, int)");
        assert_eq!(f.module, b"/tmp/node-v011");
        let f = parse_frame(b"  13a80b608e0a RegExp:[&<>\\\"\\'] (/tmp/perf-7539.map)").unwrap();
        assert_eq!(f.func, b"RegExp:[&<>\\\"\\']");
        assert!(parse_frame(b"\t garbage without module").is_none());
        assert!(parse_frame(b"\t (x)").is_none());
        // No symbol: the reference's pattern takes one of the blanks as the name.
        let f = parse_frame(b"\t    7f1e2215d058  (/lib/libc.so)").unwrap();
        assert_eq!(
            (f.pc, f.func, f.module),
            (&b"7f1e2215d058"[..], &b" "[..], &b"/lib/libc.so"[..])
        );
        let f = parse_frame(b"  abc (x)").unwrap();
        assert_eq!((f.pc, f.func, f.module), (&b"ab"[..], &b"c"[..], &b"x"[..]));
    }

    #[test]
    fn folds_with_rules() {
        let text = "java 12/13 [000] 1.0: 3 cycles:\n\
            \tffffffff81 do_sys+0x1d ([kernel.kallsyms])\n\
            \t7f00 Lorg/Foo;.bar(I)V (/tmp/perf-12.map)\n\
            \t31ef [unknown] (/bin/dd)\n\
            \t0 [unknown] ([unknown])\n\
            \n\
            java 12/13 [000] 1.1: 2 cycles:\n\
            \tffffffff81 do_sys+0x10 ([kernel.kallsyms])\n\
            \t7f00 Lorg/Foo;.bar(I)V (/tmp/perf-12.map)\n\
            \t31ef [unknown] (/bin/dd)\n\
            \t0 [unknown] ([unknown])\n\
            \n";
        let (v, d) = collapse(text, Options::default());
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(
            v,
            vec![("java;[unknown];[dd];org/Foo:.bar;do_sys".into(), 5)]
        );
        let opts = Options {
            include_tid: true,
            annotate_kernel: true,
            annotate_jit: true,
            show_addrs: true,
            weight: Weight::Samples,
            ..Options::default()
        };
        let (v, _) = collapse(text, opts);
        // Not "java": the Java tidy-up of `L` is not applied.
        assert_eq!(
            v,
            vec![(
                "java-12/13;[unknown <0>];[dd <31ef>];Lorg/Foo:.bar_[j];do_sys_[k]".into(),
                2
            )]
        );
    }

    #[test]
    fn go_methods_keep_parentheses() {
        let mut n = b"net/http.(*Client).Do".to_vec();
        tidy(&mut n, false);
        assert_eq!(n, b"net/http.(*Client).Do");
        let mut n = b"std::vector<int>::push_back(int const&)".to_vec();
        tidy(&mut n, false);
        assert_eq!(n, b"std::vector<int>::push_back");
    }

    #[test]
    fn first_event_wins_and_others_are_counted() {
        let text = "a 1 [0] 1.0: cycles:\n\tf main (/a)\n\n\
                    a 1 [0] 1.1: instructions:\n\tf other (/a)\n\n\
                    a 1 [0] 1.2: cycles:\n\tf main (/a)\n\n";
        let (v, d) = collapse(text, Options::default());
        assert_eq!(v, vec![("a;main".into(), 2)]);
        assert_eq!(d.warnings["other event"].count, 1);
        let opts = Options {
            event_filter: Some("instructions".into()),
            ..Options::default()
        };
        let (v, _) = collapse(text, opts);
        assert_eq!(v, vec![("a;other".into(), 1)]);
    }

    #[test]
    fn bad_input_is_counted_not_fatal() {
        let mut text =
            b"garbage line\n\xff\xfe 1 [0] 1.0: 1 cycles:\n\tf ma\xffin (/a)\n\n".to_vec();
        text.extend_from_slice(b"a 1 [0] 1.0: 1180591620717411303424 cycles:\n\tf main (/a)\n\n");
        text.extend_from_slice(b"b 1 [0] 1.0: 18446744073709551615 cycles:\n\tf main (/a)\n\n");
        text.extend_from_slice(b"b 1 [0] 1.0: 18446744073709551615 cycles:\n\tf main (/a)\n\n");
        text.extend_from_slice(b"c 1 [0] 1.0: 1 cycles:\n\tf main (/a)\n");
        let mut c = Collapser::new(Options::default());
        c.read(&text[..]).unwrap();
        let (f, d) = c.finish();
        let v = f.sorted();
        assert_eq!(v.len(), 2);
        // Bytewise order: 0xff sorts last.
        assert_eq!(v[0], (b"b;main"[..].into(), u64::MAX));
        assert_eq!(v[1], (b"\xff\xfe;ma\xffin"[..].into(), 1));
        for kind in [
            "unrecognised line",
            "not UTF-8",
            "period too large",
            "count overflow",
            "unterminated sample",
        ] {
            assert!(d.warnings.contains_key(kind), "{kind}: {d:?}");
        }
    }

    #[test]
    fn empty_and_overlong_input() {
        let (v, d) = collapse("", Options::default());
        assert!(v.is_empty());
        assert!(d.warnings.contains_key("no samples"));
        let long = format!(
            "a 1 [0] 1.0: 1 cycles:\n\tf {} (/a)\n\tf main (/a)\n\n",
            "x".repeat(MAX_LINE + 5)
        );
        let (v, d) = collapse(&long, Options::default());
        assert_eq!(v, vec![("a;main".into(), 1)]);
        assert_eq!(d.warnings["line too long"].count, 1);
    }
}
