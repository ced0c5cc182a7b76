//! jitdump files (`jit-PID.dump`): what a JIT runtime writes about the code it makes, for
//! perf (the format of perf's `tools/perf/Documentation/jitdump-specification.txt`,
//! version 1), as CPython 3.13 `-X perf_jit`, Node `--perf-prof`, the JVM's perf agents and
//! others write it.
//!
//! What it does: [`JitDump::read`] streams a file's records: code loads (name, address,
//! size, index, and where the code bytes lie in the file), code moves, the source lines a
//! load's code maps to (`JIT_CODE_DEBUG_INFO`, which comes before its load) and unwinding
//! tables (`JIT_CODE_UNWINDING_INFO`: `.eh_frame` and `.eh_frame_hdr` bytes, before the
//! load they describe), in either byte order. The code bytes themselves are left in the
//! file ([`JitDump::code`] reads one load's).
//!
//! A damaged file never panics, hangs or allocates what its counts claim: every size is
//! checked against the record it is in and the record against the file; a bad record ends
//! the reading with what came before it kept and a warning naming the file and offset
//! ([`JitDump::damage`]). A runtime killed while writing leaves a last record cut short:
//! that is damage too, reported the same way.

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MAGIC: u32 = 0x4A69_5444; // "JiTD"
const HEADER_MIN: u32 = 40;
const CODE_LOAD: u32 = 0;
const CODE_MOVE: u32 = 1;
const CODE_DEBUG_INFO: u32 = 2;
const CODE_CLOSE: u32 = 3;
const CODE_UNWINDING_INFO: u32 = 4;
/// Records bigger than this are damage (V8's biggest functions are a few MB of code).
const MAX_RECORD: u64 = 256 << 20;

/// One function's code as the runtime made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeLoad {
    /// The record's timestamp (CLOCK_MONOTONIC nanoseconds, or the CPU's counter where
    /// [`JitDump::arch_timestamp`]).
    pub time: u64,
    pub pid: u32,
    pub tid: u32,
    pub vma: u64,
    /// Where the code lies in the process, and its size in bytes.
    pub addr: u64,
    pub size: u64,
    /// The runtime's number for the code (perf names its ELF file after it).
    pub index: u64,
    pub name: String,
    /// The file offset of the code bytes.
    pub code_offset: u64,
    /// Source lines of the code, from the debug-info record before the load.
    pub lines: Vec<LineEntry>,
    /// Unwinding tables for the code, from the unwinding-info record before the load.
    pub unwind: Option<Arc<Unwinding>>,
}

/// Code moved from one address to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeMove {
    pub time: u64,
    pub pid: u32,
    pub tid: u32,
    pub vma: u64,
    pub old_addr: u64,
    pub new_addr: u64,
    pub size: u64,
    pub index: u64,
}

/// A source position of the code from `addr` on (V8 puts the column in `discrim`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineEntry {
    pub addr: u64,
    pub line: u32,
    pub discrim: u32,
    pub file: Arc<str>,
}

/// `.eh_frame` and `.eh_frame_hdr` bytes for the code of the next load; perf places them
/// right after the code, and their PC-relative pointers assume it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwinding {
    pub eh_frame: Vec<u8>,
    pub eh_frame_hdr: Vec<u8>,
    pub mapped_size: u64,
}

/// What a jitdump file holds, in file order.
#[derive(Debug, Clone, Default)]
pub struct JitDump {
    pub path: PathBuf,
    pub pid: u32,
    /// The ELF machine of the code (62: x86-64).
    pub elf_mach: u32,
    /// The header's timestamp.
    pub time: u64,
    /// Timestamps are the CPU's own counter (`JITDUMP_FLAGS_ARCH_TIMESTAMP`).
    pub arch_timestamp: bool,
    pub loads: Vec<CodeLoad>,
    pub moves: Vec<CodeMove>,
    /// The first damage met: where, and what; the records before it are kept.
    pub damage: Option<(u64, String)>,
    big_endian: bool,
}

/// Why a jitdump cannot be read at all.
#[derive(Debug)]
pub enum JitDumpError {
    Io(PathBuf, std::io::Error),
    /// Not a jitdump: the file and what is wrong with its header.
    Format(PathBuf, String),
}

impl std::fmt::Display for JitDumpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JitDumpError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            JitDumpError::Format(p, e) => write!(f, "{}: not a jitdump file: {e}", p.display()),
        }
    }
}

impl std::error::Error for JitDumpError {}

/// Reads little- or big-endian numbers from a record's bytes, failing past its end.
struct Fields<'a> {
    b: &'a [u8],
    at: usize,
    big: bool,
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    fn u32(&mut self) -> Option<u32> {
        let a: [u8; 4] = self.take(4)?.try_into().ok()?;
        Some(if self.big {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        })
    }

    fn u64(&mut self) -> Option<u64> {
        let a: [u8; 8] = self.take(8)?.try_into().ok()?;
        Some(if self.big {
            u64::from_be_bytes(a)
        } else {
            u64::from_le_bytes(a)
        })
    }

    /// A NUL-terminated string (the rest of the record if it lacks the NUL).
    fn cstr(&mut self) -> Option<&'a [u8]> {
        let rest = self.b.get(self.at..)?;
        let n = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
        self.at += (n + 1).min(rest.len());
        Some(&rest[..n])
    }
}

impl JitDump {
    /// Reads the jitdump at `path` (a regular file only: a FIFO or device is refused
    /// without blocking).
    pub fn read(path: &Path) -> Result<JitDump, JitDumpError> {
        let io = |e| JitDumpError::Io(path.to_owned(), e);
        let f = crate::open_regular(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        Self::from_reader(path, BufReader::new(f), len)
    }

    /// Reads a jitdump of `len` bytes from `r`, named `path` in messages.
    pub fn from_reader(path: &Path, mut r: impl Read, len: u64) -> Result<JitDump, JitDumpError> {
        let bad = |m: &str| JitDumpError::Format(path.to_owned(), m.to_owned());
        let mut head = [0u8; HEADER_MIN as usize];
        r.read_exact(&mut head)
            .map_err(|_| bad("shorter than its 40-byte header"))?;
        let big = match u32::from_le_bytes(head[..4].try_into().unwrap_or_default()) {
            MAGIC => false,
            m if m.swap_bytes() == MAGIC => true,
            m => return Err(bad(&format!("magic {m:#010x}, not JiTD"))),
        };
        let mut h = Fields {
            b: &head,
            at: 4,
            big,
        };
        let version = h.u32().unwrap_or(0);
        let total = h.u32().unwrap_or(0);
        let elf_mach = h.u32().unwrap_or(0);
        let _pad = h.u32();
        let pid = h.u32().unwrap_or(0);
        let time = h.u64().unwrap_or(0);
        let flags = h.u64().unwrap_or(0);
        if version != 1 {
            return Err(bad(&format!("version {version} (sear reads version 1)")));
        }
        if total < HEADER_MIN || u64::from(total) > len {
            return Err(bad(&format!("header size {total}")));
        }
        // A longer header: its extra bytes are skipped.
        std::io::copy(
            &mut (&mut r).take(u64::from(total - HEADER_MIN)),
            &mut std::io::sink(),
        )
        .map_err(|e| JitDumpError::Io(path.to_owned(), e))?;
        let mut d = JitDump {
            path: path.to_owned(),
            pid,
            elf_mach,
            time,
            arch_timestamp: flags & 1 != 0,
            big_endian: big,
            ..JitDump::default()
        };
        let mut at = u64::from(total);
        let mut buf = Vec::new();
        let mut lines: Vec<LineEntry> = Vec::new();
        let mut unwind: Option<Arc<Unwinding>> = None;
        while at < len {
            let mut prefix = [0u8; 16];
            if len - at < 16 || r.read_exact(&mut prefix).is_err() {
                d.damage = Some((at, "a record cut short".into()));
                break;
            }
            let mut p = Fields {
                b: &prefix,
                at: 0,
                big,
            };
            let id = p.u32().unwrap_or(u32::MAX);
            let size = u64::from(p.u32().unwrap_or(0));
            let rtime = p.u64().unwrap_or(0);
            if size < 16 || size > len - at || size > MAX_RECORD {
                d.damage = Some((at, format!("a record of {size} bytes")));
                break;
            }
            let body = (size - 16) as usize;
            buf.clear();
            if (&mut r).take(body as u64).read_to_end(&mut buf).is_err() || buf.len() != body {
                d.damage = Some((at, "a record cut short".into()));
                break;
            }
            let mut f = Fields {
                b: &buf,
                at: 0,
                big,
            };
            let ok = match id {
                CODE_LOAD => (|| {
                    let (pid, tid) = (f.u32()?, f.u32()?);
                    let (vma, addr, csize, index) = (f.u64()?, f.u64()?, f.u64()?, f.u64()?);
                    let name = String::from_utf8_lossy(f.cstr()?).into_owned();
                    let code_offset = at + 16 + f.at as u64;
                    if csize > (body - f.at) as u64 {
                        return None;
                    }
                    // Source positions inside the code, by address. Node 20's V8
                    // writes some entries' file names from freed memory (garbage of
                    // the name's length): those take the script the load's name
                    // gives (V8's `JS:*f PATH:LINE:COL`), or are left out.
                    let script: Option<Arc<str>> = v8_script(&name).map(Arc::from);
                    for e in lines.iter_mut().filter(|e| e.file.is_empty()) {
                        if let Some(s) = &script {
                            e.file = s.clone();
                        }
                    }
                    lines
                        .retain(|e| e.addr.wrapping_sub(addr) < csize.max(1) && !e.file.is_empty());
                    lines.sort_by_key(|e| e.addr);
                    d.loads.push(CodeLoad {
                        time: rtime,
                        pid,
                        tid,
                        vma,
                        addr,
                        size: csize,
                        index,
                        name,
                        code_offset,
                        lines: std::mem::take(&mut lines),
                        unwind: unwind.take(),
                    });
                    Some(())
                })(),
                CODE_MOVE => (|| {
                    d.moves.push(CodeMove {
                        time: rtime,
                        pid: f.u32()?,
                        tid: f.u32()?,
                        vma: f.u64()?,
                        old_addr: f.u64()?,
                        new_addr: f.u64()?,
                        size: f.u64()?,
                        index: f.u64()?,
                    });
                    Some(())
                })(),
                CODE_DEBUG_INFO => (|| {
                    let code_addr = f.u64()?;
                    let n = f.u64()?;
                    // Each entry takes at least 18 bytes: a count beyond the record is
                    // damage, not an allocation.
                    if n > (body as u64) / 18 {
                        return None;
                    }
                    lines.clear();
                    let mut prev: Arc<str> = Arc::from("");
                    for k in 0..n {
                        let (addr, line, discrim) = (f.u64()?, f.u32()?, f.u32()?);
                        let rest = f.b.get(f.at..)?;
                        let len = name_len(rest, k + 1 < n, code_addr, big);
                        let name = &rest[..len];
                        f.at += (len + 1).min(rest.len());
                        // "\xff": the same file as the entry before; a name that is
                        // not text is no name.
                        if name != b"\xff" {
                            prev = Arc::from(
                                std::str::from_utf8(name)
                                    .ok()
                                    .filter(|t| !t.bytes().any(|c| c < 0x20))
                                    .unwrap_or(""),
                            );
                        }
                        lines.push(LineEntry {
                            addr,
                            line,
                            discrim,
                            file: prev.clone(),
                        });
                    }
                    Some(())
                })(),
                CODE_UNWINDING_INFO => (|| {
                    let (usize_, hdr, mapped) = (f.u64()?, f.u64()?, f.u64()?);
                    let data = f.b.get(f.at..)?;
                    if usize_ > data.len() as u64 || hdr > usize_ {
                        return None;
                    }
                    let (frame, rest) = data[..usize_ as usize].split_at((usize_ - hdr) as usize);
                    unwind = Some(Arc::new(Unwinding {
                        eh_frame: frame.to_vec(),
                        eh_frame_hdr: rest.to_vec(),
                        mapped_size: mapped,
                    }));
                    Some(())
                })(),
                CODE_CLOSE => Some(()),
                // Records of later versions: skipped, as perf skips them.
                _ => Some(()),
            };
            if ok.is_none() {
                d.damage = Some((at, format!("a damaged record (type {id})")));
                break;
            }
            at += size;
        }
        Ok(d)
    }

    /// The code bytes of `load`, read from the file.
    pub fn code(&self, load: &CodeLoad) -> std::io::Result<Vec<u8>> {
        read_code(&self.path, load.code_offset, load.size)
    }

    /// Whether the file's numbers are big-endian.
    pub fn big_endian(&self) -> bool {
        self.big_endian
    }
}

/// Where perf inject's ELF files put the code (its `GEN_ELF_TEXT_OFFSET`).
pub const ELF_TEXT_OFFSET: u64 = 0x80;

/// The ELF file `perf inject --jit` writes for one code load (perf's `genelf` layout): an
/// ELF64 shared object with the code at file offset and address [`ELF_TEXT_OFFSET`] in one
/// loadable segment, the unwinding tables after it (`.eh_frame` 8-aligned after the code,
/// `.eh_frame_hdr` right after it, where the runtime's PC-relative pointers expect them),
/// one function symbol over the code, and a GNU build id made from the code and the name.
///
/// Written by hand: the layout is perf's, fixed and small, and the object crate's writer
/// (which would need more crates than this build has) would not lay it out this way.
pub fn elf_image(name: &str, code: &[u8], unwind: Option<&Unwinding>, machine: u16) -> Vec<u8> {
    fn align(v: &mut Vec<u8>, to: usize) {
        while !v.len().is_multiple_of(to) {
            v.push(0);
        }
    }
    let u16le = |v: &mut Vec<u8>, x: u16| v.extend(x.to_le_bytes());
    let u32le = |v: &mut Vec<u8>, x: u32| v.extend(x.to_le_bytes());
    let u64le = |v: &mut Vec<u8>, x: u64| v.extend(x.to_le_bytes());
    let text = ELF_TEXT_OFFSET as usize;
    /// A section header: (name, type, flags, addr, offset, size, link, info, align,
    /// entsize).
    type Shdr<'a> = (&'a str, u32, u64, u64, u64, u64, u32, u32, u64, u64);
    let mut sections: Vec<Shdr> = Vec::new();
    let mut out = vec![0u8; text];
    out.extend_from_slice(code);
    sections.push((
        ".text",
        1,
        6,
        text as u64,
        text as u64,
        code.len() as u64,
        0,
        0,
        16,
        0,
    ));
    if let Some(u) = unwind.filter(|u| !u.eh_frame.is_empty()) {
        align(&mut out, 8);
        let at = out.len() as u64;
        out.extend_from_slice(&u.eh_frame);
        sections.push((
            ".eh_frame",
            1,
            2,
            at,
            at,
            u.eh_frame.len() as u64,
            0,
            0,
            8,
            0,
        ));
        if !u.eh_frame_hdr.is_empty() {
            let at = out.len() as u64;
            out.extend_from_slice(&u.eh_frame_hdr);
            sections.push((
                ".eh_frame_hdr",
                1,
                2,
                at,
                at,
                u.eh_frame_hdr.len() as u64,
                0,
                0,
                4,
                0,
            ));
        }
    }
    // The section names (.shstrtab is the next section).
    let shstrtab_index = sections.len() + 1;
    let names = [
        ".text",
        ".eh_frame",
        ".eh_frame_hdr",
        ".shstrtab",
        ".symtab",
        ".strtab",
        ".note.gnu.build-id",
    ];
    let mut shstr = vec![0u8];
    let mut name_at = std::collections::HashMap::new();
    for n in names {
        name_at.insert(n, shstr.len() as u32);
        shstr.extend_from_slice(n.as_bytes());
        shstr.push(0);
    }
    let at = out.len() as u64;
    out.extend_from_slice(&shstr);
    sections.push((".shstrtab", 3, 0, 0, at, shstr.len() as u64, 0, 0, 1, 0));
    // Two symbols: the null one and the function (local, as perf writes it).
    let strtab_index = shstrtab_index + 2;
    align(&mut out, 8);
    let at = out.len() as u64;
    out.extend([0u8; 24]);
    u32le(&mut out, 1);
    out.push(0x02); // STB_LOCAL, STT_FUNC
    out.push(0);
    u16le(&mut out, 1); // .text
    u64le(&mut out, text as u64);
    u64le(&mut out, code.len() as u64);
    sections.push((".symtab", 2, 0, 0, at, 48, strtab_index as u32, 2, 8, 24));
    let at = out.len() as u64;
    out.push(0);
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    sections.push((".strtab", 3, 0, 0, at, name.len() as u64 + 2, 0, 0, 1, 0));
    // The build id: a hash of the code and the name (20 bytes, as SHA-1 ids are).
    align(&mut out, 4);
    let at = out.len() as u64;
    let mut id = Vec::with_capacity(20);
    for seed in [0u64, 1, 2] {
        use std::hash::Hasher;
        let mut h = std::hash::DefaultHasher::new();
        h.write_u64(seed);
        h.write(code);
        h.write(name.as_bytes());
        id.extend(h.finish().to_le_bytes());
    }
    id.truncate(20);
    u32le(&mut out, 4);
    u32le(&mut out, 20);
    u32le(&mut out, 3); // NT_GNU_BUILD_ID
    out.extend_from_slice(b"GNU\0");
    out.extend_from_slice(&id);
    sections.push((".note.gnu.build-id", 7, 2, 0, at, 36, 0, 0, 4, 0));
    // The section headers.
    align(&mut out, 8);
    let shoff = out.len() as u64;
    out.extend([0u8; 64]);
    for &(n, ty, flags, addr, off, size, link, info, al, entsize) in &sections {
        u32le(&mut out, name_at[n]);
        u32le(&mut out, ty);
        u64le(&mut out, flags);
        u64le(&mut out, addr);
        u64le(&mut out, off);
        u64le(&mut out, size);
        u32le(&mut out, link);
        u32le(&mut out, info);
        u64le(&mut out, al);
        u64le(&mut out, entsize);
    }
    // The ELF header and the one program header.
    let mut h = Vec::with_capacity(text);
    h.extend_from_slice(b"\x7fELF\x02\x01\x01");
    h.resize(16, 0);
    u16le(&mut h, 3); // ET_DYN
    u16le(&mut h, machine);
    u32le(&mut h, 1);
    u64le(&mut h, text as u64); // entry
    u64le(&mut h, 64); // phoff
    u64le(&mut h, shoff);
    u32le(&mut h, 0);
    u16le(&mut h, 64);
    u16le(&mut h, 56);
    u16le(&mut h, 1);
    u16le(&mut h, 64);
    u16le(&mut h, sections.len() as u16 + 1);
    u16le(&mut h, shstrtab_index as u16);
    u32le(&mut h, 1); // PT_LOAD
    u32le(&mut h, 5); // R+X
    for v in [
        text as u64,
        text as u64,
        text as u64,
        code.len() as u64,
        code.len() as u64,
        8,
    ] {
        u64le(&mut h, v);
    }
    out[..h.len()].copy_from_slice(&h);
    out
}

/// The length of a debug entry's file name at the start of `rest`: up to its NUL, or,
/// where more entries follow and that NUL is not followed by an address near `code_addr`
/// (V8's garbage names hold NULs of their own), up to the first NUL that is.
fn name_len(rest: &[u8], more: bool, code_addr: u64, big: bool) -> usize {
    let first = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
    if !more {
        return first;
    }
    let near = |p: usize| {
        rest.get(p + 1..p + 9)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(|a| {
                if big {
                    u64::from_be_bytes(a)
                } else {
                    u64::from_le_bytes(a)
                }
            })
            .is_some_and(|a| a.wrapping_sub(code_addr) < 1 << 24)
    };
    if near(first) {
        return first;
    }
    rest.iter()
        .enumerate()
        .filter(|&(_, &c)| c == 0)
        .take(256)
        .map(|(p, _)| p)
        .find(|&p| near(p))
        .unwrap_or(first)
}

/// The script a V8 load's name ends with (`JS:*work /app/x.js:3:10` → `/app/x.js`).
fn v8_script(name: &str) -> Option<&str> {
    let last = name.strip_prefix("JS:")?.rsplit(' ').next()?;
    let mut parts = last.rsplitn(3, ':');
    let (col, line, path) = (parts.next()?, parts.next()?, parts.next()?);
    let numeric = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
    (numeric(col) && numeric(line) && !path.is_empty()).then_some(path)
}

/// `size` code bytes at `offset` of the jitdump at `path` (see [`CodeLoad::code_offset`]).
pub fn read_code(path: &Path, offset: u64, size: u64) -> std::io::Result<Vec<u8>> {
    let mut f = crate::open_regular(path)?;
    f.seek(SeekFrom::Start(offset))?;
    let mut v = Vec::new();
    f.take(size).read_to_end(&mut v)?;
    if v.len() as u64 != size {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the code is cut short",
        ));
    }
    Ok(v)
}

/// The process id in a jitdump's file name (`jit-PID.dump`), which is how perf knows an
/// mmap of it for what it is.
pub fn jitdump_pid(path: &str) -> Option<u32> {
    let name = path.rsplit('/').next()?;
    let digits = name.strip_prefix("jit-")?.strip_suffix(".dump")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A jitdump's bytes, little-endian.
    pub(crate) struct Writer(pub Vec<u8>);

    impl Writer {
        fn new(pid: u32) -> Self {
            let mut v = Vec::new();
            v.extend(MAGIC.to_le_bytes());
            v.extend(1u32.to_le_bytes());
            v.extend(40u32.to_le_bytes());
            v.extend(62u32.to_le_bytes());
            v.extend(0u32.to_le_bytes());
            v.extend(pid.to_le_bytes());
            v.extend(7u64.to_le_bytes());
            v.extend(0u64.to_le_bytes());
            Writer(v)
        }

        fn record(&mut self, id: u32, time: u64, body: &[u8]) {
            self.0.extend(id.to_le_bytes());
            self.0.extend((16 + body.len() as u32).to_le_bytes());
            self.0.extend(time.to_le_bytes());
            self.0.extend(body);
        }

        fn load(&mut self, time: u64, addr: u64, index: u64, name: &str, code: &[u8]) {
            let mut b = Vec::new();
            b.extend(9u32.to_le_bytes());
            b.extend(10u32.to_le_bytes());
            b.extend(addr.to_le_bytes());
            b.extend(addr.to_le_bytes());
            b.extend((code.len() as u64).to_le_bytes());
            b.extend(index.to_le_bytes());
            b.extend(name.as_bytes());
            b.push(0);
            b.extend(code);
            self.record(CODE_LOAD, time, &b);
        }
    }

    fn parse(b: &[u8]) -> Result<JitDump, JitDumpError> {
        JitDump::from_reader(Path::new("t.dump"), b, b.len() as u64)
    }

    #[test]
    fn loads_lines_moves_and_unwinding_are_read() {
        let mut w = Writer::new(9);
        let mut dbg = Vec::new();
        dbg.extend(0x1000u64.to_le_bytes());
        dbg.extend(2u64.to_le_bytes());
        for (a, l, f) in [(0x1000u64, 3u32, &b"a.js"[..]), (0x1004, 4, b"\xff")] {
            dbg.extend(a.to_le_bytes());
            dbg.extend(l.to_le_bytes());
            dbg.extend(0u32.to_le_bytes());
            dbg.extend(f);
            dbg.push(0);
        }
        w.record(CODE_DEBUG_INFO, 1, &dbg);
        let mut uw = Vec::new();
        uw.extend(6u64.to_le_bytes());
        uw.extend(2u64.to_le_bytes());
        uw.extend(6u64.to_le_bytes());
        uw.extend([1, 2, 3, 4, 5, 6]);
        w.record(CODE_UNWINDING_INFO, 2, &uw);
        w.load(
            3,
            0x1000,
            5,
            "work",
            &[0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3],
        );
        let mut mv = Vec::new();
        for x in [9u32, 10] {
            mv.extend(x.to_le_bytes());
        }
        for x in [0u64, 0x1000, 0x2000, 2, 5] {
            mv.extend(x.to_le_bytes());
        }
        w.record(CODE_MOVE, 4, &mv);
        w.record(CODE_CLOSE, 5, &[]);
        let d = parse(&w.0).unwrap();
        assert_eq!(d.pid, 9);
        assert!(d.damage.is_none());
        let l = &d.loads[0];
        assert_eq!(
            (l.addr, l.size, l.index, l.name.as_str()),
            (0x1000, 8, 5, "work")
        );
        assert_eq!(l.lines.len(), 2);
        assert_eq!(&*l.lines[1].file, "a.js");
        assert_eq!(l.lines[1].line, 4);
        let u = l.unwind.as_ref().unwrap();
        assert_eq!(
            (u.eh_frame.as_slice(), u.eh_frame_hdr.as_slice()),
            (&[1, 2, 3, 4][..], &[5, 6][..])
        );
        assert_eq!(d.moves[0].new_addr, 0x2000);
        // The code bytes are where the load says.
        let at = l.code_offset as usize;
        assert_eq!(&w.0[at + 6..at + 8], &[0x90, 0xc3]);
    }

    #[test]
    fn damage_keeps_what_came_before_and_says_where() {
        let mut w = Writer::new(1);
        w.load(1, 0x1000, 1, "a", &[0xc3]);
        let good = w.0.len();
        w.load(2, 0x2000, 2, "b", &[0xc3; 8]);
        // Cut short.
        let d = parse(&w.0[..w.0.len() - 3]).unwrap();
        assert_eq!(d.loads.len(), 1);
        assert_eq!(d.damage.as_ref().unwrap().0, good as u64);
        // A code size beyond the record.
        let mut b = w.0.clone();
        let at = good + 16 + 24;
        b[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let d = parse(&b).unwrap();
        assert_eq!(d.loads.len(), 1, "{:?}", d.damage);
        assert!(d.damage.is_some());
        let mut b = w.0.clone();
        b[good + 4..good + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse(&b).unwrap().damage.is_some());
        let mut dbg = Vec::new();
        dbg.extend(0u64.to_le_bytes());
        dbg.extend(u64::MAX.to_le_bytes());
        let mut w2 = Writer::new(1);
        w2.record(CODE_DEBUG_INFO, 1, &dbg);
        assert!(parse(&w2.0).unwrap().damage.is_some());
        // Not a jitdump at all.
        assert!(parse(b"hello").is_err());
        let mut b = w.0.clone();
        b[0] = 0;
        assert!(parse(&b).is_err());
    }

    #[test]
    fn big_endian_files_are_read() {
        let mut v = Vec::new();
        v.extend(MAGIC.to_be_bytes());
        v.extend(1u32.to_be_bytes());
        v.extend(40u32.to_be_bytes());
        v.extend(21u32.to_be_bytes());
        v.extend(0u32.to_be_bytes());
        v.extend(77u32.to_be_bytes());
        v.extend(0u64.to_be_bytes());
        v.extend(0u64.to_be_bytes());
        let d = parse(&v).unwrap();
        assert!(d.big_endian());
        assert_eq!((d.pid, d.elf_mach), (77, 21));
    }

    #[test]
    fn jitdump_names_give_the_pid() {
        assert_eq!(jitdump_pid("/tmp/jit-123.dump"), Some(123));
        assert_eq!(
            jitdump_pid("/home/u/.debug/jit/java-jit-x/jit-9.dump"),
            Some(9)
        );
        assert_eq!(jitdump_pid("/tmp/jit-.dump"), None);
        assert_eq!(jitdump_pid("/tmp/jit-12a.dump"), None);
        assert_eq!(jitdump_pid("/tmp/perf-12.map"), None);
    }

    #[test]
    fn elf_images_read_back_with_their_symbol_and_tables() {
        let u = Unwinding {
            eh_frame: vec![7; 48],
            eh_frame_hdr: vec![9; 20],
            mapped_size: 80,
        };
        let img = elf_image(
            "py::work:/w.py",
            &[0x55, 0x48, 0x89, 0xe5, 0xc3],
            Some(&u),
            62,
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("jitted-1-1.so");
        std::fs::write(&p, &img).unwrap();
        let elf = crate::ElfFile::open(&p).unwrap();
        let hit = elf.lookup(crate::Svma(0x82)).unwrap();
        assert_eq!((hit.raw_name, hit.offset), ("py::work:/w.py", 2));
        use object::{Object, ObjectSection};
        let o = object::File::parse(&img[..]).unwrap();
        let eh = o.section_by_name(".eh_frame").unwrap();
        assert_eq!((eh.address(), eh.size()), (0x88, 48));
        assert_eq!(
            o.section_by_name(".eh_frame_hdr").unwrap().address(),
            0x88 + 48
        );
        assert_eq!(
            o.section_by_name(".text").unwrap().data().unwrap(),
            &[0x55, 0x48, 0x89, 0xe5, 0xc3]
        );
        assert_eq!(crate::read_build_id(&p).unwrap().unwrap().len(), 20);
    }

    #[test]
    fn v8_garbage_file_names_are_skipped_and_named_by_the_script() {
        assert_eq!(v8_script("JS:*work_a /tmp/m.js:1:16"), Some("/tmp/m.js"));
        assert_eq!(
            v8_script("JS:^ node:internal/x:161:40"),
            Some("node:internal/x")
        );
        assert_eq!(v8_script("Builtin:Abort"), None);
        // Two entries whose names are 14 bytes of garbage holding a NUL of their own.
        let mut w = Writer::new(1);
        let garbage = b"\x96{\x03\0\0\0\0\0z)\x12\x1cv\0";
        let mut dbg = Vec::new();
        dbg.extend(0x1000u64.to_le_bytes());
        dbg.extend(2u64.to_le_bytes());
        for (a, l) in [(0x1010u64, 3u32), (0x1020, 4)] {
            dbg.extend(a.to_le_bytes());
            dbg.extend(l.to_le_bytes());
            dbg.extend(7u32.to_le_bytes());
            dbg.extend(garbage);
        }
        w.record(CODE_DEBUG_INFO, 1, &dbg);
        w.load(2, 0x1000, 1, "JS:*work /app/m.js:2:5", &[0x90; 0x40]);
        let d = parse(&w.0).unwrap();
        assert!(d.damage.is_none(), "{:?}", d.damage);
        let lines: Vec<_> = d.loads[0]
            .lines
            .iter()
            .map(|e| (e.addr, e.line, e.file.to_string()))
            .collect();
        assert_eq!(
            lines,
            [
                (0x1010, 3, "/app/m.js".to_string()),
                (0x1020, 4, "/app/m.js".to_string())
            ]
        );
    }
}
