//! The file-mode header (`perf_file_header`) and the pipe-mode header.

use crate::bytes::{Cursor, Endian};
use crate::error::{Error, Result};

/// "PERFILE2" read as a little-endian u64.
pub const PERF_MAGIC2: u64 = 0x3245_4c49_4652_4550;
/// "PERFFILE": version 1 files (before 2011).
pub const PERF_MAGIC1: u64 = 0x454c_4946_4652_4550;
/// Size of `perf_file_header`.
pub const FILE_HEADER_SIZE: u64 = 104;
/// Size of the header before the feature bitmap was added (early 2010 perf).
pub const FILE_HEADER_SIZE_NO_FEATURES: u64 = 72;
/// Size of `perf_pipe_file_header`.
pub const PIPE_HEADER_SIZE: u64 = 16;

/// A (offset, size) pair pointing into the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Section {
    pub offset: u64,
    pub size: u64,
}

impl Section {
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.size)
    }
    pub(crate) fn read(c: &mut Cursor<'_>) -> std::result::Result<Self, crate::ParseError> {
        Ok(Section {
            offset: c.u64("section offset")?,
            size: c.u64("section size")?,
        })
    }
}

/// The header at the start of a file-mode perf.data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileHeader {
    pub size: u64,
    pub attr_size: u64,
    pub attrs: Section,
    pub data: Section,
    pub event_types: Section,
    /// The feature bitmap (256 bits).
    pub features: [u64; 4],
}

impl FileHeader {
    pub fn has_feature(&self, id: u32) -> bool {
        id < 256 && self.features[(id / 64) as usize] & (1u64 << (id % 64)) != 0
    }
    /// Feature ids set in the bitmap, ascending.
    pub fn feature_ids(&self) -> impl Iterator<Item = u32> + '_ {
        (0..256u32).filter(move |&i| self.has_feature(i))
    }
}

/// Which kind of stream the bytes hold, and its byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Pipe,
}

/// Reads magic and size from the first 16 bytes.
pub fn detect(first16: &[u8]) -> Result<(Kind, Endian)> {
    if first16.len() < 16 {
        return Err(Error::Truncated {
            what: "perf.data header",
            offset: 0,
            need: 16,
            have: first16.len() as u64,
        });
    }
    let magic_le = u64::from_le_bytes(first16[..8].try_into().unwrap_or([0; 8]));
    let magic_be = u64::from_be_bytes(first16[..8].try_into().unwrap_or([0; 8]));
    let endian = if magic_le == PERF_MAGIC2 {
        Endian::Little
    } else if magic_be == PERF_MAGIC2 {
        Endian::Big
    } else if magic_le == PERF_MAGIC1 || magic_be == PERF_MAGIC1 {
        return Err(Error::VersionOne);
    } else {
        return Err(Error::BadMagic { magic: magic_le });
    };
    let size = endian.u64(first16[8..16].try_into().unwrap_or([0; 8]));
    match size {
        PIPE_HEADER_SIZE => Ok((Kind::Pipe, endian)),
        // perf's reader accepts any header size of at least the one it knows
        // and ignores the tail; so do we.
        s if s >= FILE_HEADER_SIZE || s == FILE_HEADER_SIZE_NO_FEATURES => Ok((Kind::File, endian)),
        s => Err(Error::corrupt(
            "perf.data header",
            8,
            format!(
                "header size {s} is neither 16 (pipe mode) nor {FILE_HEADER_SIZE_NO_FEATURES} or \
                 at least {FILE_HEADER_SIZE} (file mode)"
            ),
        )),
    }
}

/// Parses the file-mode header from the start of the file.
pub fn parse_file_header(data: &[u8], endian: Endian) -> Result<FileHeader> {
    let declared = data
        .get(8..16)
        .and_then(|b| b.try_into().ok())
        .map(|b| endian.u64(b))
        .unwrap_or(FILE_HEADER_SIZE);
    // The oldest layout ends before the feature bitmap: no features.
    let need = if declared == FILE_HEADER_SIZE_NO_FEATURES {
        FILE_HEADER_SIZE_NO_FEATURES
    } else {
        FILE_HEADER_SIZE
    };
    if (data.len() as u64) < need {
        return Err(Error::Truncated {
            what: "perf.data file header",
            offset: 0,
            need,
            have: data.len() as u64,
        });
    }
    let mut c = Cursor::new(&data[..need as usize], endian);
    let e = |p: crate::ParseError| Error::corrupt("perf.data file header", p.pos as u64, p.what);
    c.skip(8, "magic").map_err(e)?;
    let size = c.u64("size").map_err(e)?;
    let attr_size = c.u64("attr_size").map_err(e)?;
    let attrs = Section::read(&mut c).map_err(e)?;
    let data_s = Section::read(&mut c).map_err(e)?;
    let event_types = Section::read(&mut c).map_err(e)?;
    let mut features = [0u64; 4];
    if need == FILE_HEADER_SIZE {
        for f in &mut features {
            *f = c.u64("features").map_err(e)?;
        }
    }
    Ok(FileHeader {
        size,
        attr_size,
        attrs,
        data: data_s,
        event_types,
        features,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_72_byte_header_has_no_features() {
        let mut b = Vec::new();
        b.extend_from_slice(b"PERFILE2");
        for v in [72u64, 80, 72, 80, 152, 400, 0, 0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(b.len(), 72);
        assert_eq!(detect(&b[..16]).unwrap(), (Kind::File, Endian::Little));
        let h = parse_file_header(&b, Endian::Little).unwrap();
        assert_eq!(
            h.data,
            Section {
                offset: 152,
                size: 400
            }
        );
        assert_eq!(h.features, [0; 4]);
        // A 104-byte header cut at 72 bytes is still truncated.
        let mut b2 = b.clone();
        b2[8..16].copy_from_slice(&104u64.to_le_bytes());
        assert!(matches!(
            parse_file_header(&b2, Endian::Little),
            Err(Error::Truncated { need: 104, .. })
        ));
    }
}
