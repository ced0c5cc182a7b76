//! Tracepoint fields as `perf script` prints them: the recording's TRACING_DATA (the
//! events' format texts from tracefs) parsed by libtraceevent, and each sample's raw
//! data printed by it, as perf does (`event_format__fprintf`: the event's print format,
//! `TEP_PRINT_INFO`).
//!
//! libtraceevent is the library perf formats these fields with (perf 6.1 carries a copy
//! of it in its tree; Debian's libtraceevent 1.7 is its continuation), so linking it is
//! how the output comes out the same, `__print_symbolic`, `__print_flags`, arrays,
//! strings and all. Only the few calls perf makes are bound here, by hand.
//!
//! The library trusts the raw data's sizes less than one would like: each sample's
//! bytes are copied into a buffer with room after them, so that a field that claims
//! to reach past the record reads zeros, not someone else's memory.

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_ulonglong, c_void, CString};

#[repr(C)]
struct TepHandle {
    _opaque: [u8; 0],
}

#[repr(C)]
struct TepEvent {
    _opaque: [u8; 0],
}

/// `struct tep_record` (event-parse.h, without DEBUG_RECORD).
#[repr(C)]
struct TepRecord {
    ts: c_ulonglong,
    offset: c_ulonglong,
    missed_events: i64,
    record_size: c_int,
    size: c_int,
    data: *mut c_void,
    cpu: c_int,
    ref_count: c_int,
    locked: c_int,
    private: *mut c_void,
}

/// `struct trace_seq` (trace-seq.h).
#[repr(C)]
struct TraceSeq {
    buffer: *mut c_char,
    buffer_size: c_uint,
    len: c_uint,
    readpos: c_uint,
    state: c_int,
}

type FuncResolver =
    unsafe extern "C" fn(*mut c_void, *mut c_ulonglong, *mut *mut c_char) -> *mut c_char;

#[link(name = "traceevent")]
extern "C" {
    fn tep_alloc() -> *mut TepHandle;
    fn tep_free(tep: *mut TepHandle);
    fn tep_set_flag(tep: *mut TepHandle, flag: c_int);
    fn tep_set_file_bigendian(tep: *mut TepHandle, endian: c_int);
    fn tep_set_local_bigendian(tep: *mut TepHandle, endian: c_int);
    fn tep_set_long_size(tep: *mut TepHandle, long_size: c_int);
    fn tep_set_page_size(tep: *mut TepHandle, page_size: c_int);
    fn tep_parse_header_page(
        tep: *mut TepHandle,
        buf: *mut c_char,
        size: c_ulong,
        long_size: c_int,
    ) -> c_int;
    fn tep_parse_event(
        tep: *mut TepHandle,
        buf: *const c_char,
        size: c_ulong,
        sys: *const c_char,
    ) -> c_int;
    fn tep_parse_printk_formats(tep: *mut TepHandle, buf: *const c_char) -> c_int;
    fn tep_parse_saved_cmdlines(tep: *mut TepHandle, buf: *const c_char) -> c_int;
    fn tep_find_event(tep: *mut TepHandle, id: c_int) -> *mut TepEvent;
    fn tep_set_function_resolver(
        tep: *mut TepHandle,
        func: FuncResolver,
        private: *mut c_void,
    ) -> c_int;
    fn tep_print_event(
        tep: *mut TepHandle,
        s: *mut TraceSeq,
        record: *mut TepRecord,
        fmt: *const c_char,
        ...
    );
    fn trace_seq_init(s: *mut TraceSeq);
    fn trace_seq_reset(s: *mut TraceSeq);
    fn trace_seq_destroy(s: *mut TraceSeq);
}

/// `TEP_NSEC_OUTPUT`, which perf sets.
const TEP_NSEC_OUTPUT: c_int = 1;

/// Zero bytes after each sample's copy (a `__data_loc` field can point 64 KiB on).
const SLACK: usize = 64 << 10;

/// Kernel addresses to names, for fields printed with `%pS` and the like (perf
/// resolves them with its own kernel symbols; so does the caller of
/// [`Formatter::set_kernel_symbols`]). Entries: (start, name), sorted by start.
struct Resolver {
    syms: Vec<(u64, CString)>,
}

unsafe extern "C" fn resolve(
    private: *mut c_void,
    addrp: *mut c_ulonglong,
    modp: *mut *mut c_char,
) -> *mut c_char {
    // SAFETY: `private` is the Resolver the Formatter owns and outlives this call;
    // `addrp` is libtraceevent's address to resolve.
    let r = &*(private as *const Resolver);
    let addr = *addrp;
    let i = r.syms.partition_point(|s| s.0 <= addr);
    let Some((start, name)) = i.checked_sub(1).and_then(|i| r.syms.get(i)) else {
        return std::ptr::null_mut();
    };
    *addrp = *start;
    if !modp.is_null() {
        *modp = std::ptr::null_mut();
    }
    // libtraceevent copies the name and never writes it.
    name.as_ptr() as *mut c_char
}

/// A recording's tracepoint formats, ready to print samples' raw data.
pub struct Formatter {
    tep: *mut TepHandle,
    resolver: Option<Box<Resolver>>,
    buf: Vec<u8>,
    /// Format texts libtraceevent refused: (system, first line).
    pub refused: Vec<(String, String)>,
    /// Each event's own fields (for [`Formatter::format_fields`]).
    fields: std::collections::HashMap<u64, Vec<perf_data::tracing::FieldSpec>>,
    big_endian: bool,
}

impl Drop for Formatter {
    fn drop(&mut self) {
        // SAFETY: `tep` came from tep_alloc and is freed once.
        unsafe { tep_free(self.tep) }
    }
}

/// Why a recording's tracepoints cannot be printed.
#[derive(Debug)]
pub enum Error {
    /// The TRACING_DATA section is damaged.
    Data(perf_data::Error),
    /// libtraceevent could not allocate.
    Alloc,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Data(e) => write!(f, "tracing data: {e}"),
            Error::Alloc => f.write_str("libtraceevent could not allocate its handle"),
        }
    }
}

impl std::error::Error for Error {}

/// `text` with a NUL after it, for the C side.
fn c_text(text: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(text.len() + 1);
    // (A NUL inside would end the text early on the C side: keep what is before it.)
    v.extend_from_slice(text.split(|&c| c == 0).next().unwrap_or(&[]));
    v.push(0);
    v
}

impl Formatter {
    /// Parses a TRACING_DATA section as perf's `trace_report` does.
    pub fn new(section: &[u8]) -> Result<Formatter, Error> {
        let t = perf_data::tracing::parse(section).map_err(Error::Data)?;
        // SAFETY: plain allocation; checked for NULL.
        let tep = unsafe { tep_alloc() };
        if tep.is_null() {
            return Err(Error::Alloc);
        }
        let mut f = Formatter {
            tep,
            resolver: None,
            buf: Vec::new(),
            refused: Vec::new(),
            fields: t
                .events
                .iter()
                .filter_map(|(_, text)| perf_data::tracing::field_specs(text))
                .collect(),
            big_endian: t.big_endian,
        };
        // SAFETY: `tep` is valid; every buffer handed over is NUL-terminated and
        // lives across the call (libtraceevent copies what it keeps).
        unsafe {
            tep_set_flag(tep, TEP_NSEC_OUTPUT);
            tep_set_file_bigendian(tep, c_int::from(t.big_endian));
            tep_set_local_bigendian(tep, c_int::from(cfg!(target_endian = "big")));
            tep_set_long_size(tep, c_int::from(t.long_size));
            tep_set_page_size(tep, t.page_size.min(i32::MAX as u32) as c_int);
            let mut hp = c_text(t.header_page);
            tep_parse_header_page(
                tep,
                hp.as_mut_ptr().cast(),
                (hp.len() - 1) as c_ulong,
                c_int::from(t.long_size),
            );
            let ftrace = c"ftrace";
            let formats = t
                .ftrace
                .iter()
                .map(|b| ("ftrace".to_owned(), *b))
                .chain(t.events.iter().cloned());
            for (system, text) in formats {
                let body = c_text(text);
                let sys = CString::new(system.replace('\0', "")).unwrap_or_default();
                let sys_ptr = if system == "ftrace" {
                    ftrace.as_ptr()
                } else {
                    sys.as_ptr()
                };
                let r = tep_parse_event(
                    tep,
                    body.as_ptr().cast(),
                    (body.len() - 1) as c_ulong,
                    sys_ptr,
                );
                if r != 0 {
                    let first = String::from_utf8_lossy(text)
                        .lines()
                        .next()
                        .unwrap_or("")
                        .to_owned();
                    f.refused.push((system.clone(), first));
                }
            }
            if !t.printk.is_empty() {
                let p = c_text(t.printk);
                tep_parse_printk_formats(tep, p.as_ptr().cast());
            }
            if !t.cmdlines.is_empty() {
                let c = c_text(t.cmdlines);
                tep_parse_saved_cmdlines(tep, c.as_ptr().cast());
            }
        }
        Ok(f)
    }

    /// Names kernel addresses in fields (`%pS`) by these symbols ((start, name)
    /// pairs, any order), as perf does with its kernel map.
    pub fn set_kernel_symbols(&mut self, mut syms: Vec<(u64, String)>) {
        syms.sort_by_key(|s| s.0);
        let syms = syms
            .into_iter()
            .filter_map(|(a, n)| Some((a, CString::new(n).ok()?)))
            .collect();
        let r = Box::new(Resolver { syms });
        let p = &*r as *const Resolver as *mut c_void;
        // SAFETY: the Resolver is boxed (its address stays put) and kept as long as
        // the handle; `resolve` matches the resolver type.
        unsafe {
            tep_set_function_resolver(self.tep, resolve, p);
        }
        self.resolver = Some(r);
    }

    /// Whether the recording describes the event of this tracepoint id.
    pub fn knows(&self, id: u64) -> bool {
        let Ok(id) = c_int::try_from(id) else {
            return false;
        };
        // SAFETY: lookup on a valid handle.
        unsafe { !tep_find_event(self.tep, id).is_null() }
    }

    /// The fields of one sample of tracepoint `id` (its attr's config), recorded on
    /// `cpu`, as perf script prints them; None where the recording has no format for
    /// the event.
    pub fn format(&mut self, id: u64, cpu: u32, raw: &[u8]) -> Option<String> {
        self.print(id, cpu, raw)
    }

    /// Every field of one sample as ` name=value`, as perf 6.1 prints them
    /// with `--raw-trace` (its libtraceevent's `tep_print_fields`: numbers by
    /// their declared type, not by the print format: newer libtraceevents
    /// print them by the format, so this is written here); None for an
    /// event without a format.
    pub fn format_fields(&mut self, id: u64, _cpu: u32, raw: &[u8]) -> Option<String> {
        use std::fmt::Write;
        let specs = self.fields.get(&id)?;
        let read = |at: usize, size: usize| -> u64 {
            let Some(b) = at.checked_add(size).and_then(|end| raw.get(at..end)) else {
                return 0;
            };
            let mut v = [0u8; 8];
            match (size, self.big_endian) {
                (1 | 2 | 4 | 8, false) => {
                    v[..size].copy_from_slice(b);
                    u64::from_le_bytes(v)
                }
                (1 | 2 | 4 | 8, true) => {
                    v[8 - size..].copy_from_slice(b);
                    u64::from_be_bytes(v)
                }
                _ => 0,
            }
        };
        let mut out = String::new();
        for f in specs {
            let _ = write!(out, " {}=", f.name);
            if f.array {
                let (mut at, mut len) = (f.offset, f.size);
                if f.dynamic() {
                    let v = read(f.offset, f.size);
                    at = (v & 0xffff) as usize;
                    len = ((v >> 16) & 0xffff) as usize;
                    if f.relative() {
                        at += f.offset + f.size;
                    }
                }
                let bytes = raw
                    .get(at..at.saturating_add(len).min(raw.len()))
                    .unwrap_or(&[]);
                let text_end = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
                let printable = bytes[..text_end]
                    .iter()
                    .all(|&c| c.is_ascii_graphic() || c == b' ' || (b'\t'..=b'\r').contains(&c));
                if f.string() && printable {
                    out.push_str(&String::from_utf8_lossy(&bytes[..text_end]));
                } else {
                    out.push_str("ARRAY[");
                    for (i, b) in bytes.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        let _ = write!(out, "{b:02x}");
                    }
                    out.push(']');
                }
                continue;
            }
            let v = read(f.offset, f.size);
            let _ = if f.pointer() {
                write!(out, "{v:#x}")
            } else if f.signed {
                match f.size {
                    4 if f.long() => write!(out, "{:#x}", v as u32),
                    4 => write!(out, "{}", v as u32 as i32),
                    2 => write!(out, "{:2}", v as u16 as i16),
                    1 => write!(out, "{}", v as u8 as i8),
                    _ => write!(out, "{}", v as i64),
                }
            } else if f.long() {
                write!(out, "{v:#x}")
            } else {
                write!(out, "{v}")
            };
        }
        Some(out)
    }

    fn print(&mut self, id: u64, cpu: u32, raw: &[u8]) -> Option<String> {
        if !self.knows(id) {
            return None;
        }
        // The buffer stays zero between calls: only the sample's bytes are
        // written, and cleared again after.
        if self.buf.len() < raw.len() + SLACK {
            self.buf.resize(raw.len() + SLACK, 0);
        }
        self.buf[..raw.len()].copy_from_slice(raw);
        let mut record = TepRecord {
            ts: 0,
            offset: 0,
            missed_events: 0,
            record_size: 0,
            size: c_int::try_from(raw.len()).ok()?,
            data: self.buf.as_mut_ptr().cast(),
            cpu: cpu as c_int,
            ref_count: 0,
            locked: 0,
            private: std::ptr::null_mut(),
        };
        let mut s = TraceSeq {
            buffer: std::ptr::null_mut(),
            buffer_size: 0,
            len: 0,
            readpos: 0,
            state: 0,
        };
        // SAFETY: `s` is initialised by trace_seq_init and destroyed below; the
        // record's data is our buffer, valid for its size and the slack after it;
        // the format and its argument are NUL-terminated strings.
        unsafe {
            trace_seq_init(&mut s);
            trace_seq_reset(&mut s);
            tep_print_event(
                self.tep,
                &mut s,
                &mut record,
                c"%s".as_ptr(),
                c"INFO".as_ptr(),
            );
            let text = if s.buffer.is_null() {
                String::new()
            } else {
                let bytes = std::slice::from_raw_parts(s.buffer as *const u8, s.len as usize);
                String::from_utf8_lossy(bytes).into_owned()
            };
            trace_seq_destroy(&mut s);
            self.buf[..raw.len()].fill(0);
            Some(text)
        }
    }
}
