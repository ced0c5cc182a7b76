//! Every record, not only samples, in perf's delivery order, with the
//! session model as it stands before each (what `report -D` prints).

use perf_data::stats::Stats;
use perf_data::{OrderedReader, Record};

use crate::machine::Machine;

/// What [`each_record`] hands on.
pub enum Step<'r, 'a> {
    /// A record, before the model applies it.
    Record(&'r Record<'a>),
    /// The model dropped this thread (pid, tid) applying the record before:
    /// a FORK whose parent was known under another pid, as perf does.
    DroppedParent((i32, i32)),
}

/// Reads the rest of `reader` record by record: `each` sees every record
/// with the model before it, the model then applies it. Returns the counts
/// of the records read; stops at the first error of `each` or the reader.
pub fn each_record<E: From<crate::Error>>(
    reader: &mut OrderedReader,
    mut each: impl FnMut(Step<'_, '_>, &mut Machine) -> Result<(), E>,
) -> Result<Stats, E> {
    let mut machine = Machine::new();
    let mut stats = Stats::default();
    while let Some(rec) = reader.next_record().map_err(crate::Error::from)? {
        stats.add(&rec);
        each(Step::Record(&rec), &mut machine)?;
        if let Some(dropped) = machine.apply_record(&rec) {
            each(Step::DroppedParent(dropped), &mut machine)?;
        }
    }
    Ok(stats)
}
