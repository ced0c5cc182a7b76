//! The TRACING_DATA feature (and pipe mode's HEADER_TRACING_DATA payload): what a
//! recording of tracepoints carries to decode their fields, as perf's
//! `tracing_data_get` writes it from tracefs and `trace_report` reads it back.
//!
//! ```text
//! "\x17\x08\x44tracing"  version "0.6\0"  big-endian u8  long size u8  page size u32
//! "header_page\0"  u64 size  text           the ring buffer's page header format
//! "header_event\0" u64 size  text           (not used)
//! u32 count, then per ftrace event:  u64 size  format text
//! u32 count, then per system: "name\0"  u32 count, then per event: u64 size  format text
//! u32 size  /proc/kallsyms text
//! u32 size  printk formats text
//! u64 size  saved cmdlines text             (version 0.6 and later)
//! ```
//!
//! Numbers are in the recording host's byte order (the flag above). Every size is
//! checked against the bytes there are: a damaged section is an error naming its
//! offset within the feature, never a read past its end.

use crate::{Error, Result};

const MAGIC: &[u8] = b"\x17\x08\x44tracing";

/// The parts of a TRACING_DATA section, borrowed from it.
#[derive(Debug, Clone, Default)]
pub struct TracingData<'a> {
    pub version: String,
    pub big_endian: bool,
    pub long_size: u8,
    pub page_size: u32,
    pub header_page: &'a [u8],
    pub header_event: &'a [u8],
    /// The formats of the ftrace events (system `ftrace`).
    pub ftrace: Vec<&'a [u8]>,
    /// (system, format text) of every recorded tracepoint.
    pub events: Vec<(String, &'a [u8])>,
    pub kallsyms: &'a [u8],
    pub printk: &'a [u8],
    pub cmdlines: &'a [u8],
}

struct In<'a> {
    b: &'a [u8],
    at: usize,
    big: bool,
}

impl<'a> In<'a> {
    fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8]> {
        let have = self.b.len() - self.at;
        match usize::try_from(n) {
            Ok(n) if n <= have => {
                let s = &self.b[self.at..self.at + n];
                self.at += n;
                Ok(s)
            }
            _ => Err(Error::Truncated {
                what,
                offset: self.at as u64,
                need: n,
                have: have as u64,
            }),
        }
    }

    fn uint(&mut self, n: usize, what: &'static str) -> Result<u64> {
        let b = self.take(n as u64, what)?;
        let mut v: u64 = 0;
        for i in 0..n {
            let byte = if self.big { b[i] } else { b[n - 1 - i] };
            v = (v << 8) | u64::from(byte);
        }
        Ok(v)
    }

    fn cstr(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let rest = &self.b[self.at..];
        let end = rest.iter().position(|&c| c == 0).ok_or(Error::Truncated {
            what,
            offset: self.at as u64,
            need: rest.len() as u64 + 1,
            have: rest.len() as u64,
        })?;
        self.at += end + 1;
        Ok(&rest[..end])
    }

    fn expect(&mut self, name: &[u8], what: &'static str) -> Result<()> {
        let at = self.at;
        let got = self.take(name.len() as u64, what)?;
        if got != name {
            return Err(Error::corrupt(
                what,
                at as u64,
                format!("expected {:?}", String::from_utf8_lossy(name)),
            ));
        }
        Ok(())
    }
}

/// More entries than this in one list is not a recording but damage (perf's
/// tracefs has about 2,000 events in all).
const MAX_ENTRIES: u64 = 1 << 20;

/// Reads a TRACING_DATA section. Offsets in errors are within `b`.
pub fn parse(b: &[u8]) -> Result<TracingData<'_>> {
    let mut i = In {
        b,
        at: 0,
        big: false,
    };
    i.expect(MAGIC, "tracing data magic")?;
    let version = String::from_utf8_lossy(i.cstr("tracing data version")?).into_owned();
    i.big = i.take(1, "tracing data endianness")?[0] != 0;
    let long_size = i.take(1, "tracing data long size")?[0];
    let page_size = i.uint(4, "tracing data page size")? as u32;
    i.expect(b"header_page\0", "tracing data header_page")?;
    let n = i.uint(8, "header_page size")?;
    let header_page = i.take(n, "header_page")?;
    i.expect(b"header_event\0", "tracing data header_event")?;
    let n = i.uint(8, "header_event size")?;
    let header_event = i.take(n, "header_event")?;
    let count = |i: &mut In<'_>, what| -> Result<u64> {
        let at = i.at;
        let n = i.uint(4, what)?;
        if n > MAX_ENTRIES {
            return Err(Error::corrupt(what, at as u64, format!("{n} entries")));
        }
        Ok(n)
    };
    let mut ftrace = Vec::new();
    for _ in 0..count(&mut i, "ftrace format count")? {
        let n = i.uint(8, "ftrace format size")?;
        ftrace.push(i.take(n, "ftrace format")?);
    }
    let mut events = Vec::new();
    for _ in 0..count(&mut i, "event system count")? {
        let system = String::from_utf8_lossy(i.cstr("event system name")?).into_owned();
        for _ in 0..count(&mut i, "event format count")? {
            let n = i.uint(8, "event format size")?;
            events.push((system.clone(), i.take(n, "event format")?));
        }
    }
    let n = i.uint(4, "kallsyms size")?;
    let kallsyms = i.take(n, "kallsyms")?;
    let n = i.uint(4, "printk formats size")?;
    let printk = i.take(n, "printk formats")?;
    // perf writes saved cmdlines from version 0.6 on.
    let cmdlines = if version.parse::<f64>().is_ok_and(|v| v >= 0.6) {
        let n = i.uint(8, "saved cmdlines size")?;
        i.take(n, "saved cmdlines")?
    } else {
        &[]
    };
    Ok(TracingData {
        version,
        big_endian: i.big,
        long_size,
        page_size,
        header_page,
        header_event,
        ftrace,
        events,
        kallsyms,
        printk,
        cmdlines,
    })
}

/// An event's format text's id (`ID: N`) and the names of its own fields (not
/// the `common_` ones), in order: what `perf evlist --trace-fields` lists.
pub fn format_fields(text: &[u8]) -> Option<(u64, Vec<String>)> {
    let (id, fields) = field_specs(text)?;
    Some((id, fields.into_iter().map(|f| f.name).collect()))
}

/// One field of an event's format: `field:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:B;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    /// Without any `[N]`.
    pub name: String,
    /// The declared type, with the array part of the name (`char[16]`).
    pub type_: String,
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
    /// Declared with `[...]` (or `__data_loc`/`__rel_loc`: dynamic).
    pub array: bool,
}

impl FieldSpec {
    /// `__data_loc` (offset and length in a 32-bit word) or `__rel_loc`
    /// (the offset counted from the field's end).
    pub fn dynamic(&self) -> bool {
        self.type_.starts_with("__data_loc") || self.relative()
    }
    pub fn relative(&self) -> bool {
        self.type_.starts_with("__rel_loc")
    }
    /// A `char` array: printed as text where it is.
    pub fn string(&self) -> bool {
        self.array && (self.type_.contains("char") || self.type_.contains("u8"))
    }
    pub fn pointer(&self) -> bool {
        self.type_.trim_end().ends_with('*')
    }
    /// Any `long` type (libtraceevent's `field_is_long`).
    pub fn long(&self) -> bool {
        self.type_.contains("long")
    }
}

/// An event's format text's id and its own fields (not the `common_` ones)
/// with their places, in order.
pub fn field_specs(text: &[u8]) -> Option<(u64, Vec<FieldSpec>)> {
    let text = String::from_utf8_lossy(text);
    let mut id = None;
    let mut fields = Vec::new();
    let mut blocks = 0;
    let mut in_format = false;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("ID:") {
            id = v.trim().parse().ok();
        } else if line.starts_with("format:") {
            in_format = true;
        } else if in_format && line.trim().is_empty() {
            blocks += 1;
            if blocks == 2 {
                break;
            }
        } else if in_format && blocks == 1 {
            let mut parts = line.trim().split(';').map(str::trim);
            let Some(decl) = parts.next().and_then(|d| d.strip_prefix("field:")) else {
                continue;
            };
            let mut attrs = std::collections::HashMap::new();
            for p in parts {
                if let Some((k, v)) = p.split_once(':') {
                    attrs.insert(k.trim(), v.trim());
                }
            }
            let num = |k: &str| attrs.get(k).and_then(|v| v.parse::<usize>().ok());
            let Some(last) = decl.split_whitespace().last() else {
                continue;
            };
            let name = last.split('[').next().unwrap_or(last).to_owned();
            let head = decl[..decl.len() - last.len()].trim_end();
            let array_part = &last[name.len()..];
            let type_ = format!("{head}{array_part}");
            fields.push(FieldSpec {
                array: !array_part.is_empty()
                    || type_.contains("__data_loc")
                    || type_.contains("__rel_loc"),
                name,
                type_,
                offset: num("offset").unwrap_or(0),
                size: num("size").unwrap_or(0),
                signed: num("signed") == Some(1),
            });
        }
    }
    Some((id?, fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(b"0.6\0");
        b.push(0);
        b.push(8);
        b.extend_from_slice(&4096u32.to_le_bytes());
        b.extend_from_slice(b"header_page\0");
        b.extend_from_slice(&3u64.to_le_bytes());
        b.extend_from_slice(b"hp\n");
        b.extend_from_slice(b"header_event\0");
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(b"sched\0");
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&4u64.to_le_bytes());
        b.extend_from_slice(b"fmt\n");
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&5u64.to_le_bytes());
        b.extend_from_slice(b"1 a\n\0");
        b
    }

    #[test]
    fn fields_of_a_format() {
        let f = b"name: sched_switch\nID: 372\nformat:\n\tfield:unsigned short common_type;\toffset:0;\n\n\tfield:char prev_comm[16];\toffset:8;\n\tfield:__data_loc char[] name;\toffset:24;\n\nprint fmt: \"x\"\n";
        assert_eq!(
            format_fields(f),
            Some((372, vec!["prev_comm".to_owned(), "name".to_owned()]))
        );
        let (_, specs) = field_specs(f).unwrap();
        assert_eq!(specs[0].type_, "char[16]");
        assert!(specs[0].array && specs[0].string() && !specs[0].dynamic());
        assert_eq!(specs[0].offset, 8);
        assert!(specs[1].dynamic() && specs[1].string());
    }

    #[test]
    fn reads_every_part() {
        let b = sample();
        let t = parse(&b).unwrap();
        assert_eq!(t.version, "0.6");
        assert_eq!(t.page_size, 4096);
        assert_eq!(t.header_page, b"hp\n");
        assert_eq!(t.events, vec![("sched".to_owned(), &b"fmt\n"[..])]);
        assert_eq!(t.cmdlines, b"1 a\n\0");
    }

    #[test]
    fn damage_is_an_error_at_its_offset() {
        let b = sample();
        for cut in 0..b.len() {
            assert!(parse(&b[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = b.clone();
        // The event format's size, made huge.
        let at = b.windows(4).position(|w| w == b"fmt\n").unwrap() - 8;
        bad[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.offset(), Some(at as u64 + 8), "{e}");
    }
}
