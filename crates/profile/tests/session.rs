//! The session driver fed record by record (as a live view is) agrees with
//! the whole-file replay, and its sums can be read at any point without
//! disturbing them. Runs on a recording checked into the repository.

use std::path::PathBuf;

use perf_data::{Order, OrderedReader, RecordReader, PERF_RECORD_SAMPLE};
use profile::collect::{SampleKey, SampleSum};
use profile::session::{self, Live, SumOptions, Summing};

fn recording() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/two-processes.data")
}

fn options() -> SumOptions {
    SumOptions::default()
}

fn samples_in(sums: &[(SampleKey, SampleSum)]) -> u64 {
    sums.iter().map(|(_, s)| s.samples).sum()
}

#[test]
fn pushed_records_sum_as_a_replay_does_and_can_be_read_midway() {
    let whole = session::sum(RecordReader::open(&recording()).unwrap(), &options()).unwrap();
    let mut collector = whole.collector;
    let expected = collector.take_sums_in_order();
    assert!(samples_in(&expected) > 10, "the recording has samples");

    let reader = RecordReader::open(&recording()).unwrap();
    let (machine, _kernel) = session::start(reader.meta());
    let mut reader = OrderedReader::new(reader, Order::Time);
    let mut live = Live::new(machine, Summing::new(&options()));
    let mut pushed = 0u64;
    let mut midway = Vec::new();
    while let Some(rec) = reader.next_record().unwrap() {
        live.push(&rec);
        if rec.type_() == PERF_RECORD_SAMPLE {
            pushed += 1;
            // The state so far counts exactly the samples pushed so far.
            let now = live.sink.sums_so_far();
            assert_eq!(samples_in(&now), pushed);
            if pushed == 10 {
                midway = now;
            }
        }
    }
    live.batch_done();
    let end = live.sink.sums_so_far();
    assert_eq!(end, expected, "pushing gives the replay's sums, in order");
    // What was read midway is a prefix of the end state, each sum no larger.
    assert!(!midway.is_empty());
    for (i, (key, sum)) in midway.iter().enumerate() {
        assert_eq!(&end[i].0, key);
        assert!(end[i].1.samples >= sum.samples);
    }
    let counted: u64 = live.stats.per_event.iter().map(|e| e.samples).sum();
    assert_eq!(counted, pushed);
}
