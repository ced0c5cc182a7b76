//! The build ids a recording names, per machine (perf's host, and each
//! guest by the pid perf writes for it), and which binaries samples landed
//! in: what `buildid-list` lists.

use std::collections::BTreeMap;

use crate::machine::Machine;

/// The `pid` perf writes for build ids of the host (not a guest machine).
const HOST_PID: i32 = -1;

/// The host's and the guests' DSOs with their build ids.
pub struct BuildIds {
    pub host: Machine,
    pub guests: BTreeMap<i32, Machine>,
}

impl BuildIds {
    /// The build ids of the recording's BUILD_ID feature, filed by machine.
    pub fn from_features(meta: &perf_data::Meta) -> Self {
        let mut host = Machine::new();
        host.set_exit_removes_thread(true);
        let mut ids = BuildIds {
            host,
            guests: BTreeMap::new(),
        };
        for e in meta.features.build_ids().unwrap_or_default() {
            ids.add(e.pid, e.misc, &e.filename, &e.build_id);
        }
        ids
    }

    /// Files a build id with the host's DSO of that name, or with a guest
    /// machine's (by the pid perf writes for it).
    pub fn add(&mut self, pid: i32, misc: u16, name: &str, id: &[u8]) {
        add(&mut self.host, &mut self.guests, pid, misc, name, id);
    }

    /// Replays `reader`: each sample marks the DSO its address lands in;
    /// build ids that come as records (pipe mode) are filed. Returns the
    /// reader, for its diagnostics.
    pub fn replay_hits(
        &mut self,
        reader: perf_data::RecordReader,
    ) -> Result<perf_data::OrderedReader, crate::Error> {
        let host = std::mem::take(&mut self.host);
        let mut sink = Hits {
            guests: &mut self.guests,
        };
        let replay = crate::session::replay(reader, host, &mut sink)?;
        self.host = replay.machine;
        Ok(replay.reader)
    }

    /// (build id, name) of every DSO, host first, then guests by pid; only
    /// those a sample landed in with `hits_only`.
    pub fn list(&self, hits_only: bool) -> Vec<(Option<&[u8]>, &str)> {
        std::iter::once(&self.host)
            .chain(self.guests.values())
            .flat_map(|m| m.dsos())
            .filter(|d| !hits_only || d.hit)
            .map(|d| (d.build_id.as_deref(), d.name.as_str()))
            .collect()
    }
}

fn add(
    host: &mut Machine,
    guests: &mut BTreeMap<i32, Machine>,
    pid: i32,
    misc: u16,
    name: &str,
    id: &[u8],
) {
    // perf files build ids of kernel and user binaries only.
    let mode = misc & perf_data::PERF_RECORD_MISC_CPUMODE_MASK;
    if !matches!(mode, 1 | 2 | 4 | 5) {
        return;
    }
    let m = if pid == HOST_PID {
        host
    } else {
        guests.entry(pid).or_default()
    };
    m.set_build_id(name, id);
}

/// The replay of [`BuildIds::replay_hits`].
struct Hits<'a> {
    guests: &'a mut BTreeMap<i32, Machine>,
}

impl crate::session::Sink for Hits<'_> {
    fn sample(&mut self, machine: &mut Machine, s: &perf_data::Sample<'_>, _period: u64) {
        machine.resolve(s);
    }

    fn build_id(&mut self, machine: &mut Machine, b: &perf_data::records::BuildIdRecord<'_>) {
        let name = String::from_utf8_lossy(b.filename);
        add(machine, self.guests, b.pid, b.misc, &name, b.build_id);
    }
}
