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

/// The recordings beside the repository (../shared/conformance), with the
/// one checked in.
fn recordings() -> Vec<PathBuf> {
    let wild =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/perfdata-wild");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&wild)
        .expect("../shared/conformance/perfdata-wild must exist beside the repository")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("perf.data") && !name.contains("corrupted")
        })
        .collect();
    files.sort();
    files.push(recording());
    files
}

#[test]
fn stacks_interned_on_their_own_thread_get_the_ids_one_thread_gives() {
    // `session::sum` interns a file's stacks on a second thread; a live
    // session interns them where it replays. Ids, sums and their order
    // must be the same, on every recording (callchains, branches, kernel
    // frames, several events, pipes), with and without callchains.
    let mut seen = 0;
    for file in recordings() {
        for callchains in [true, false] {
            let mut o = options();
            o.collect.callchains = callchains;
            let Ok(reader) = RecordReader::open(&file) else {
                continue;
            };
            let whole = session::sum(reader, &o).unwrap();
            let mut piped = whole.collector;
            let piped_sums = piped.take_sums_in_order();

            let reader = RecordReader::open(&file).unwrap();
            let (machine, _kernel) = session::start(reader.meta());
            let mut reader = OrderedReader::new(reader, Order::Time);
            let mut live = Live::new(machine, Summing::new(&o));
            while let Some(rec) = reader.next_record().unwrap() {
                live.push(&rec);
            }
            live.batch_done();
            let one = &live.sink.collector;
            assert_eq!(
                live.sink.sums_so_far(),
                piped_sums,
                "{}: the sums, in order",
                file.display()
            );
            assert_eq!(
                one.interner.locs().len(),
                piped.interner.locs().len(),
                "{}: the locations",
                file.display()
            );
            assert_eq!(
                one.interner.stack_nodes(),
                piped.interner.stack_nodes(),
                "{}: the stack nodes",
                file.display()
            );
            seen += samples_in(&piped_sums);
        }
    }
    assert!(seen > 10_000, "the recordings have samples ({seen})");
}
