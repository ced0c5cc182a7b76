//! Every record, not only samples, in perf's delivery order, with the
//! session model as it stands before each (what `report -D` prints).

use perf_data::stats::Stats;
use perf_data::{OrderedReader, Record};

use crate::machine::{Landing, Machine};

/// Where the session model puts a sample: its thread and the DSO its
/// address falls in, as perf's report resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleSite {
    pub comm: String,
    pub tid: i32,
    /// The DSO's name; None where perf found no map (`NotFound`) or the
    /// sample is not of the host (`hypervisor`).
    pub dso: Option<String>,
    pub landing: Landing,
}

/// What [`each_record`] hands on.
pub enum Step<'r, 'a> {
    /// A record, before the model applies it; for a sample that decodes,
    /// where the model puts it.
    Record(&'r Record<'a>, Option<SampleSite>),
    /// The model dropped this thread (pid, tid) applying the record before:
    /// a FORK whose parent was known under another pid, as perf does.
    DroppedParent((i32, i32)),
}

/// Reads the rest of `reader` record by record: `each` sees every record
/// (a sample with where the model as it stands puts it), then the model
/// applies the record. Returns the counts
/// of the records read; stops at the first error of `each` or the reader.
pub fn each_record<E: From<crate::Error>>(
    reader: &mut OrderedReader,
    mut each: impl FnMut(Step<'_, '_>) -> Result<(), E>,
) -> Result<Stats, E> {
    let mut machine = Machine::new();
    let mut stats = Stats::default();
    while let Some(rec) = reader.next_record().map_err(crate::Error::from)? {
        stats.add(&rec);
        let site = (rec.type_() == perf_data::PERF_RECORD_SAMPLE)
            .then(|| rec.sample().ok())
            .flatten()
            // perf resolves a sample once it delivers it: one that read
            // counters only when some value's id names a known event.
            .filter(|s| {
                s.read.as_ref().is_none_or(|rv| {
                    rv.values().any(|v| {
                        v.id.is_some_and(|id| rec.meta.events.iter().any(|e| e.ids.contains(&id)))
                    })
                })
            })
            .map(|s| {
                let (comm, tid, landing) = machine.resolve(&s);
                let dso = match landing {
                    Landing::Dso(d) => machine.dsos().get(d).map(|d| d.name.clone()),
                    _ => None,
                };
                SampleSite {
                    comm,
                    tid,
                    dso,
                    landing,
                }
            });
        each(Step::Record(&rec, site))?;
        if let Some(dropped) = machine.apply_record(&rec) {
            each(Step::DroppedParent(dropped))?;
        }
    }
    Ok(stats)
}
