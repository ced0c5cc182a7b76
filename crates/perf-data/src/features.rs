//! Header feature sections: stored raw, with decoders for what reports use.

use std::collections::BTreeMap;

use crate::bytes::{until_nul, Cursor, Endian};
use crate::consts::feature;
use crate::error::ParseError;

/// The raw bytes of one feature section and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureData {
    /// File offset of the section (file mode) or of the HEADER_FEATURE
    /// record (pipe mode).
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// All feature sections of a recording, by feature id.
#[derive(Debug, Clone, Default)]
pub struct Features {
    pub sections: BTreeMap<u32, FeatureData>,
    pub endian: Endian,
}

impl Features {
    pub fn get(&self, id: u32) -> Option<&[u8]> {
        self.sections.get(&id).map(|f| f.bytes.as_slice())
    }
    pub fn has(&self, id: u32) -> bool {
        self.sections.contains_key(&id)
    }
    fn cursor(&self, id: u32) -> Option<Cursor<'_>> {
        self.get(id).map(|b| Cursor::new(b, self.endian))
    }
    /// A perf string feature (HOSTNAME, OSRELEASE, VERSION, ARCH, CPUDESC, CPUID).
    pub fn string(&self, id: u32) -> Option<String> {
        let mut c = self.cursor(id)?;
        read_string(&mut c).ok()
    }
    pub fn hostname(&self) -> Option<String> {
        self.string(feature::HOSTNAME)
    }
    pub fn os_release(&self) -> Option<String> {
        self.string(feature::OSRELEASE)
    }
    pub fn perf_version(&self) -> Option<String> {
        self.string(feature::VERSION)
    }
    pub fn arch(&self) -> Option<String> {
        self.string(feature::ARCH)
    }
    /// (online, available) CPU counts.
    pub fn nr_cpus(&self) -> Option<(u32, u32)> {
        let mut c = self.cursor(feature::NRCPUS)?;
        let avail = c.u32("nr_cpus_avail").ok()?;
        let online = c.u32("nr_cpus_online").ok()?;
        Some((online, avail))
    }
    /// Total memory in kB.
    pub fn total_mem(&self) -> Option<u64> {
        self.cursor(feature::TOTAL_MEM)?.u64("total_mem").ok()
    }
    pub fn cmdline(&self) -> Option<Vec<String>> {
        let mut c = self.cursor(feature::CMDLINE)?;
        let n = c.u32("nr").ok()?;
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(read_string(&mut c).ok()?);
        }
        Some(v)
    }
    /// (first, last) sample times in ns.
    pub fn sample_time(&self) -> Option<(u64, u64)> {
        let mut c = self.cursor(feature::SAMPLE_TIME)?;
        Some((c.u64("first").ok()?, c.u64("last").ok()?))
    }
    /// EVENT_DESC: (attr bytes, name, ids) per event.
    pub fn event_desc(&self) -> Option<Vec<EventDesc>> {
        let mut c = self.cursor(feature::EVENT_DESC)?;
        parse_event_desc(&mut c).ok()
    }
    /// BUILD_ID feature entries.
    pub fn build_ids(&self) -> Option<Vec<BuildIdEntry>> {
        let b = self.get(feature::BUILD_ID)?;
        Some(parse_build_ids(b, self.endian))
    }
    /// COMPRESSED feature: (version, type, level, ratio, mmap_len).
    pub fn compressed(&self) -> Option<(u32, u32, u32, u32, u32)> {
        let mut c = self.cursor(feature::COMPRESSED)?;
        Some((
            c.u32("ver").ok()?,
            c.u32("type").ok()?,
            c.u32("level").ok()?,
            c.u32("ratio").ok()?,
            c.u32("mmap_len").ok()?,
        ))
    }
}

/// One event of the EVENT_DESC feature.
#[derive(Debug, Clone)]
pub struct EventDesc {
    pub attr: Vec<u8>,
    pub name: String,
    pub ids: Vec<u64>,
}

/// perf's string encoding: u32 length (padded, with NUL), then bytes.
pub fn read_string(c: &mut Cursor<'_>) -> Result<String, ParseError> {
    let len = c.u32("string length")? as usize;
    let b = c.bytes(len, "string")?;
    Ok(String::from_utf8_lossy(until_nul(b)).into_owned())
}

fn parse_event_desc(c: &mut Cursor<'_>) -> Result<Vec<EventDesc>, ParseError> {
    let nr = c.u32("nr events")?;
    let attr_size = c.u32("attr size")? as usize;
    let mut v = Vec::new();
    for _ in 0..nr {
        let attr = c.bytes(attr_size, "event attr")?.to_vec();
        let nr_ids = c.u32("nr ids")?;
        let name = read_string(c)?;
        let ids = c.u64_array(u64::from(nr_ids), "ids")?.iter().collect();
        v.push(EventDesc { attr, name, ids });
    }
    Ok(v)
}

/// One entry of the BUILD_ID feature section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildIdEntry {
    pub pid: i32,
    pub misc: u16,
    pub build_id: Vec<u8>,
    pub filename: String,
}

/// Parses BUILD_ID feature bytes: a sequence of build_id_event records.
pub fn parse_build_ids(b: &[u8], endian: Endian) -> Vec<BuildIdEntry> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos + 8 <= b.len() {
        let mut c = Cursor::new(&b[pos..], endian);
        let (Ok(_type), Ok(misc), Ok(size)) = (c.u32("t"), c.u16("m"), c.u16("s")) else {
            break;
        };
        let size = size as usize;
        if size < 8 + 4 + 24 || pos + size > b.len() {
            break;
        }
        let rec = &b[pos + 8..pos + size];
        let mut c = Cursor::new(rec, endian);
        let pid = c.u32("pid").unwrap_or(0) as i32;
        let raw = c.bytes(24, "build_id").unwrap_or(&[0; 24]);
        let build_id = if misc & (1 << 15) != 0 {
            raw[..(raw[20] as usize).min(20)].to_vec()
        } else {
            raw[..20].to_vec()
        };
        out.push(BuildIdEntry {
            pid,
            misc,
            build_id,
            filename: String::from_utf8_lossy(until_nul(c.rest())).into_owned(),
        });
        pos += size;
    }
    out
}
