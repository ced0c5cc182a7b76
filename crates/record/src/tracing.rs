//! The TRACING_DATA feature of a recording with tracepoints: what perf's
//! `tracing_data_get` copies from tracefs so that a reader can decode the
//! events' raw data (the layout is in `perf_data::tracing`). perf 6.1 writes the
//! same bytes: the page and event headers, the formats of the recorded events
//! (systems and events in the order tracefs lists them), an empty kallsyms,
//! the printk formats and the saved command lines.

use std::io::Read;
use std::path::Path;

/// tracefs files are not regular: their size is known only by reading them.
/// None of these comes near this (saved_cmdlines is the largest, ~100 KiB).
const MAX_FILE: u64 = 64 << 20;

/// Reads a tracefs file in large reads: some (the page and event headers)
/// give their whole text to the first read and nothing after, so the small
/// first read `read_to_end` makes of a file of size 0 would cut them.
fn read_all(p: &Path) -> Option<Vec<u8>> {
    let mut f = std::fs::File::open(p).ok()?;
    let mut v = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = f.read(&mut buf).ok()?;
        if n == 0 || v.len() as u64 + n as u64 > MAX_FILE {
            break;
        }
        v.extend_from_slice(&buf[..n]);
    }
    Some(v)
}

/// The formats of `sys`'s events whose names are among `names` (perf matches
/// the event name alone), counted: perf's `copy_event_system`.
fn event_system(out: &mut Vec<u8>, sys: &Path, names: &[&str]) {
    let mut formats = Vec::new();
    for n in crate::event::dir_names(sys) {
        if !names.contains(&n.as_str()) {
            continue;
        }
        if let Some(f) = read_all(&sys.join(&n).join("format")) {
            formats.push(f);
        }
    }
    out.extend_from_slice(&(formats.len() as u32).to_ne_bytes());
    for f in formats {
        out.extend_from_slice(&(f.len() as u64).to_ne_bytes());
        out.extend_from_slice(&f);
    }
}

/// TRACING_DATA for the tracepoints named `system:event` in `tracepoints`, read
/// from tracefs now (perf reads it when it writes the header); None without
/// tracefs.
pub fn tracing_data(tracepoints: &[String]) -> Option<Vec<u8>> {
    let events = crate::event::tracefs_events()?;
    let root = events.parent()?.to_path_buf();
    let tps: Vec<(&str, &str)> = tracepoints
        .iter()
        .filter_map(|t| t.split_once(':'))
        .map(|(s, n)| (s, n.split(':').next().unwrap_or(n)))
        .collect();
    let names: Vec<&str> = tps.iter().map(|t| t.1).collect();
    let mut out = b"\x17\x08\x44tracing".to_vec();
    out.extend_from_slice(b"0.6\0");
    out.push(u8::from(cfg!(target_endian = "big")));
    out.push(std::mem::size_of::<std::ffi::c_long>() as u8);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u32;
    out.extend_from_slice(&page.to_ne_bytes());
    for (name, file) in [
        ("header_page\0", "header_page"),
        ("header_event\0", "header_event"),
    ] {
        let b = read_all(&events.join(file)).unwrap_or_default();
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(b.len() as u64).to_ne_bytes());
        out.extend_from_slice(&b);
    }
    event_system(&mut out, &events.join("ftrace"), &names);
    let systems: Vec<String> = crate::event::dir_names(&events)
        .into_iter()
        .filter(|s| s != "ftrace" && tps.iter().any(|t| t.0 == s))
        .collect();
    out.extend_from_slice(&(systems.len() as u32).to_ne_bytes());
    for s in &systems {
        out.extend_from_slice(s.as_bytes());
        out.push(0);
        event_system(&mut out, &events.join(s), &names);
    }
    // perf 6.1 writes no kallsyms (readers resolve kernel addresses themselves).
    out.extend_from_slice(&0u32.to_ne_bytes());
    let printk = read_all(&root.join("printk_formats")).unwrap_or_default();
    out.extend_from_slice(&(printk.len() as u32).to_ne_bytes());
    out.extend_from_slice(&printk);
    let cmdlines = read_all(&root.join("saved_cmdlines")).unwrap_or_default();
    out.extend_from_slice(&(cmdlines.len() as u64).to_ne_bytes());
    out.extend_from_slice(&cmdlines);
    Some(out)
}
