//! perf's directory format (`perf record --threads`): a directory holding
//! `data`, a perf.data file whose header, attributes and features describe
//! the recording (its data section has what perf's main thread wrote: the
//! synthesized tasks and maps), and `data.0`, `data.1`, ... with the
//! records of each writer thread's ring buffers, headerless.
//!
//! The reader sees one perf.data: the `data` file with the records of
//! every part merged into its data section in time order (each part is in
//! time order already, as the kernel wrote its rings; a record without a
//! time keeps its place after its part's previous one), and the
//! DIR_FORMAT feature dropped, so that what is written from it (inject,
//! convert) is an ordinary perf.data. The whole is assembled in memory.

use std::path::Path;

use crate::bytes::Endian;
use crate::consts::feature;
use crate::error::{Error, Result};
use crate::header::{self, Kind};

/// Whether `path` is a directory-format recording (a directory with a
/// `data` file).
pub fn is_dir_format(path: &Path) -> bool {
    path.is_dir() && path.join("data").is_file()
}

/// The records of one part, as (offset, length) in its bytes, with the
/// time each sorts by.
struct Part {
    bytes: Vec<u8>,
    /// (sort time, start, len) of each record, in file order.
    records: Vec<(u64, usize, usize)>,
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        offset: 0,
        source: std::io::Error::new(e.kind(), format!("{}: {e}", path.display())),
    }
}

/// Splits `bytes` into records; a record that does not fit ends the part
/// (what comes after a torn record cannot be found).
fn split_records(
    bytes: &[u8],
    endian: Endian,
    meta: &crate::meta::Meta,
    what: &str,
    warnings: &mut Vec<String>,
) -> Vec<(u64, usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let mut last_time = 0u64;
    while pos + 8 <= bytes.len() {
        let type_ = endian.u32(bytes[pos..pos + 4].try_into().unwrap_or_default());
        let size = usize::from(endian.u16(bytes[pos + 6..pos + 8].try_into().unwrap_or_default()));
        if size < 8 || pos + size > bytes.len() {
            warnings.push(format!(
                "{what}: a record of {size} bytes at byte offset {pos} does not fit the file \
                 ({} bytes); the rest of the part is left out",
                bytes.len()
            ));
            break;
        }
        if let Some(t) = meta.record_time(type_, &bytes[pos + 8..pos + size]) {
            last_time = t;
        }
        out.push((last_time, pos, size));
        pos += size;
    }
    if pos < bytes.len() && pos + 8 > bytes.len() {
        warnings.push(format!(
            "{what}: {} bytes at byte offset {pos} are less than a record header and do not \
             fit the file; they are left out",
            bytes.len() - pos
        ));
    }
    out
}

/// Reads the directory recording at `dir` as one perf.data in memory,
/// with the warnings met (parts that end in a torn record).
pub fn assemble(dir: &Path) -> Result<(Vec<u8>, Vec<String>)> {
    let main_path = dir.join("data");
    let main = std::fs::read(&main_path).map_err(|e| io_err(&main_path, e))?;
    let (kind, endian) = header::detect(&main[..main.len().min(16)])?;
    if kind != Kind::File {
        return Err(Error::corrupt(
            "directory-format perf.data",
            0,
            format!(
                "{} is a pipe-mode stream, not a file header",
                main_path.display()
            ),
        ));
    }
    let h = header::parse_file_header(&main, endian)?;
    let len = main.len() as u64;
    if h.data.end() > len || h.data.offset < header::FILE_HEADER_SIZE_NO_FEATURES {
        return Err(Error::Truncated {
            what: "data section of the directory's data file",
            offset: h.data.offset,
            need: h.data.size,
            have: len.saturating_sub(h.data.offset),
        });
    }
    let mut diag = crate::reader::Diagnostics::default();
    let (meta, _) = crate::reader::read_file_meta(&main, endian, &mut diag)?;

    // The parts: the main file's data section, then data.0, data.1, ...
    let mut names: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| io_err(dir, e))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let n = name.to_str()?.strip_prefix("data.")?.parse::<u64>().ok()?;
            Some((n, e.path()))
        })
        .collect();
    names.sort();
    let mut warnings = Vec::new();
    let data = &main[h.data.offset as usize..h.data.end() as usize];
    let mut parts = vec![Part {
        records: split_records(data, endian, &meta, "data", &mut warnings),
        bytes: data.to_vec(),
    }];
    for (_, p) in &names {
        let bytes = std::fs::read(p).map_err(|e| io_err(p, e))?;
        let what = p
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        parts.push(Part {
            records: split_records(&bytes, endian, &meta, &what, &mut warnings),
            bytes,
        });
    }

    // Merged by time (ties: the earlier part first, then file order).
    let total: usize = parts
        .iter()
        .map(|p| p.records.iter().map(|r| r.2).sum::<usize>())
        .sum();
    let mut merged = Vec::with_capacity(total);
    let mut heads = vec![0usize; parts.len()];
    let mut heap = std::collections::BinaryHeap::new();
    for (i, p) in parts.iter().enumerate() {
        if let Some(r) = p.records.first() {
            heap.push(std::cmp::Reverse((r.0, i)));
        }
    }
    while let Some(std::cmp::Reverse((_, i))) = heap.pop() {
        let p = &parts[i];
        let (_, start, size) = p.records[heads[i]];
        merged.extend_from_slice(&p.bytes[start..start + size]);
        heads[i] += 1;
        if let Some(r) = p.records.get(heads[i]) {
            heap.push(std::cmp::Reverse((r.0, i)));
        }
    }
    drop(parts);

    // The new file: header and attributes as they are, the merged data,
    // the feature table without DIR_FORMAT, the features' bytes.
    let ids: Vec<u32> = h.feature_ids().collect();
    let table = h.data.end() as usize;
    let table_end = table + 16 * ids.len();
    if table_end > main.len() {
        return Err(Error::Truncated {
            what: "feature section table of the directory's data file",
            offset: table as u64,
            need: 16 * ids.len() as u64,
            have: (main.len() - table) as u64,
        });
    }
    let kept = ids.iter().filter(|&&id| id != feature::DIR_FORMAT).count();
    let new_table = h.data.offset as usize + merged.len();
    let new_contents = new_table + 16 * kept;
    let mut out = Vec::with_capacity(new_contents + (main.len() - table_end));
    out.extend_from_slice(&main[..h.data.offset as usize]);
    out.extend_from_slice(&merged);
    drop(merged);
    for (k, &id) in ids.iter().enumerate() {
        if id == feature::DIR_FORMAT {
            continue;
        }
        let at = table + 16 * k;
        let off = endian.u64(main[at..at + 8].try_into().unwrap_or_default());
        let size = endian.u64(main[at + 8..at + 16].try_into().unwrap_or_default());
        // Contents lie after the table; anything else is kept as it was
        // found (and the reader's checks judge it).
        let moved = if off >= table_end as u64 {
            off - table_end as u64 + new_contents as u64
        } else {
            off
        };
        out.extend_from_slice(&endian.put_u64(moved));
        out.extend_from_slice(&endian.put_u64(size));
    }
    out.extend_from_slice(&main[table_end..]);
    // Header: the data section's size, and the feature bit.
    let data_size = (new_table - h.data.offset as usize) as u64;
    out[48..56].copy_from_slice(&endian.put_u64(data_size));
    if h.has_feature(feature::DIR_FORMAT) && out.len() >= header::FILE_HEADER_SIZE as usize {
        let word = 72 + 8 * (feature::DIR_FORMAT / 64) as usize;
        let v = endian.u64(out[word..word + 8].try_into().unwrap_or_default())
            & !(1u64 << (feature::DIR_FORMAT % 64));
        out[word..word + 8].copy_from_slice(&endian.put_u64(v));
    }
    Ok((out, warnings))
}
