//! Symbols for sampled addresses: ELF symbol tables, DWARF lines with inline frames,
//! C++/Rust demangling and the search for separate debug files.
//!
//! What it does: [`ElfFile`] memory-maps one binary and gives its build id, a sorted table
//! of function symbols (from `.symtab`, `.dynsym`, MiniDebugInfo's `.gnu_debugdata` and
//! synthesised `name@plt` entries) and
//! the translation of a file offset (an MMAP record's `pgoff`) to the binary's own address
//! space ([`Svma`]). [`DebugFinder`] finds the file holding its DWARF (the binary itself,
//! a file named by build id, or one named by `.gnu_debuglink`) and verifies it belongs to
//! the binary. [`Binary`] ties these together and answers, once per address, the symbol
//! and the inline frames (innermost first), as `addr2line -f -i -C` prints them.
//! [`demangle`] turns Itanium C++ and Rust (legacy and v0) names into readable ones.
//! [`disasm`] disassembles x86-64 functions in `objdump -d`'s text form (iced-x86).
//!
//! Symbols that do not come from an ELF file on disk, each with perf 6.1's rules:
//! [`Kallsyms`] for the kernel and its modules (and [`KernelFinder::for_recording`] for
//! perf's decision whether the running kernel's or a cached kallsyms belongs to a
//! recording), [`PerfMap`] for JIT code listed in `/tmp/perf-PID.map`, and [`find_vdso`]
//! for the `[vdso]` image with a recorded build id.
//!
//! What it does not: it knows nothing about processes, maps over time or perf.data (the
//! caller turns an address in a process into an [`Svma`], and decides which source an
//! address belongs to: kernel, JIT map, vdso or file), and it does not unwind. A lookup
//! that finds nothing is not an error: it is a [`Reason`]. Errors are kept for I/O
//! failures the caller should hear about.
//!
//! How perf turns a sampled address into the lookup address: kernel and module samples
//! are looked up as they are ([`Kallsyms::lookup`]); JIT samples (anonymous executable
//! maps) as they are ([`PerfMap::lookup`]); `[vdso]` and file-backed samples at
//! `ip - map_start + pgoff`, turned into an [`Svma`] by [`ElfFile::avma_to_svma`].
//!
//! ```no_run
//! use symbols::{Binary, DebugFinder, Svma};
//!
//! let finder = DebugFinder::default();
//! let mut bin = Binary::open("/usr/bin/ls", &finder).expect("readable ELF");
//! match bin.symbol(Svma(0x4a10)) {
//!     Ok(hit) => println!("{}+{:#x}", hit.name(), hit.offset),
//!     Err(reason) => println!("[unknown]: {reason}"),
//! }
//! for frame in bin.frames(Svma(0x4a10)).unwrap_or(&[]) {
//!     println!("{} {}:{} inlined={}", frame.function_or_unknown(), frame.file_or_unknown(),
//!              frame.line.unwrap_or(0), frame.inlined);
//! }
//! ```

mod binary;
pub mod cache;
mod crc;
mod debug;
pub mod debuginfod;
mod demangle;
pub mod disasm;
mod dwarf;
mod elf;
pub mod jitdump;
mod kallsyms;
mod origin;
mod perfmap;
mod symtree;
mod vdso;

pub use binary::{Binary, SharedDwarf};
pub use debug::{DebugFile, DebugFinder, DebugSource};
pub use demangle::{demangle, demangle_full, demangle_objdump, demangle_short};
pub use dwarf::{DwarfInfo, DwarfSections, Frame, FrameDetail, FrameOrigin};
pub use elf::{read_build_id, ElfFile, LoadSegment, Symbol, SymbolHit, SymtabFile};
pub use jitdump::{jitdump_pid, JitDump};
pub use kallsyms::{build_id_from_notes, Kallsyms, KernelFinder, KernelHit, RefReloc};
pub use origin::perf_symtab_origin;
pub use perfmap::{JitHit, PerfMap};
pub use vdso::{find_vdso, read_own_vdso};

use std::fmt;
use std::path::PathBuf;

/// An address in the ELF file's own address space (as `nm` and `addr2line` use).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Svma(pub u64);

/// An offset into the file on disk (what an MMAP record's `pgoff` counts in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileOffset(pub u64);

/// Why a lookup found nothing. Misses are normal in profiling, so they are values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// The binary (or a debug file named for it) is not on disk.
    NoSuchFile,
    /// The file exists but is not an ELF file this crate can read.
    NotElf,
    /// No function symbol covers the address.
    NoSymbol,
    /// A debug file was found but its build id (or debuglink CRC) is not the binary's.
    BuildIdMismatch,
    /// The file at the recorded path has another build id than the recording gives (it was
    /// rebuilt or replaced since), and no copy with the recorded one was found.
    NotTheRecordedBinary,
    /// Neither the binary nor any debug file found for it has DWARF.
    NoDebugInfo,
    /// The DWARF has no line or function entry for the address.
    NoLineInfo,
    /// The file offset lies outside every PT_LOAD segment.
    NotMapped,
    /// The DWARF is present but could not be parsed.
    BadDebugInfo,
    /// The file exists but could not be read (permissions, I/O error).
    Unreadable,
    /// The path names a FIFO, device, socket or directory, not a file.
    NotRegularFile,
    /// The kernel hid its symbol addresses (all zero: `kptr_restrict`, or a reader
    /// without `CAP_SYSLOG`), so kernel symbols are unavailable.
    KernelAddressesHidden,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::NoSuchFile => "no such file",
            Reason::NotElf => "not an ELF file",
            Reason::NoSymbol => "no symbol covers the address",
            Reason::BuildIdMismatch => "debug file does not match the binary's build id",
            Reason::NotTheRecordedBinary => {
                "the file's build id is not the recorded one (rebuilt or replaced since the \
                 recording) and perf's build-id cache has no copy with it"
            }
            Reason::NoDebugInfo => "no debug info",
            Reason::NoLineInfo => "no line info for the address",
            Reason::NotMapped => "file offset outside every loadable segment",
            Reason::BadDebugInfo => "unreadable debug info",
            Reason::Unreadable => "file cannot be read",
            Reason::NotRegularFile => "not a regular file (a FIFO, device, socket or directory)",
            Reason::KernelAddressesHidden => "kernel symbol addresses are hidden (kptr_restrict)",
        })
    }
}

/// Failures worth reporting to the user (as opposed to a [`Reason`] for a miss).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("cannot read {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a readable ELF file: {message}")]
    NotElf { path: PathBuf, message: String },
}

impl Error {
    /// The miss this error amounts to, for callers that only count misses.
    pub fn reason(&self) -> Reason {
        match self {
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Reason::NoSuchFile
            }
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::InvalidInput => {
                Reason::NotRegularFile
            }
            Error::Io { .. } => Reason::Unreadable,
            Error::NotElf { .. } => Reason::NotElf,
        }
    }
}

static SYMFS: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
static KALLSYMS: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();

/// perf's `--symfs DIR`: binaries (and their debug files) are looked for
/// under DIR, by the path they were recorded at (a copy of another
/// machine's or a container's files). Set once, before any lookup.
pub fn set_symfs(dir: std::path::PathBuf) {
    let _ = SYMFS.set(dir);
}

/// The `--symfs` root, if one was set.
pub fn symfs() -> Option<&'static std::path::Path> {
    SYMFS.get().map(|p| p.as_path())
}

/// Where a binary recorded at `path` is read: under the `--symfs` root
/// when one is set, else at `path`.
pub fn on_disk(path: &str) -> std::borrow::Cow<'_, std::path::Path> {
    match symfs() {
        Some(root) => std::borrow::Cow::Owned(root.join(path.trim_start_matches('/'))),
        None => std::borrow::Cow::Borrowed(std::path::Path::new(path)),
    }
}

/// Opens `path` for reading only if it is a regular file: without blocking
/// (a FIFO's open would wait for a writer forever) and checked after the
/// open (a FIFO, device, socket or directory is an error saying so: a
/// symlink to /dev/zero would otherwise be read forever).
pub fn open_regular(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device, socket or directory)",
        ));
    }
    Ok(f)
}

/// perf's `--kallsyms FILE`: the kernel's symbols are read from FILE,
/// whatever kernel the recording names. Set once, before any lookup.
pub fn set_kallsyms(file: std::path::PathBuf) {
    let _ = KALLSYMS.set(file);
}

/// The `--kallsyms` file, if one was given.
pub fn kallsyms_file() -> Option<&'static std::path::Path> {
    KALLSYMS.get().map(|p| p.as_path())
}

/// perf's build-id cache directory: `$PERF_BUILDID_DIR` (which perf sets
/// from its `buildid.dir` setting and `--buildid-dir`), else `~/.debug`.
pub fn buildid_dir() -> Option<std::path::PathBuf> {
    match std::env::var_os("PERF_BUILDID_DIR") {
        Some(d) if !d.is_empty() => Some(d.into()),
        _ => std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".debug")),
    }
}
