//! Feeds arbitrary text to the JIT perf-map parser (`/tmp/perf-PID.map`, perf's
//! `dso__load_perf_map` rules) and looks up addresses it names and random ones. Skipped lines
//! are fine; panics, hangs and unbounded allocations are bugs.

#![no_main]

use libfuzzer_sys::fuzz_target;
use symbols::PerfMap;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let map = PerfMap::parse(&text);
    let _ = (map.len(), map.is_empty(), map.skipped_lines());
    let mut next = sear_fuzz::stream(data);
    let mut addrs: Vec<u64> = text
        .lines()
        .take(32)
        .filter_map(|l| {
            u64::from_str_radix(l.split_whitespace().next()?.trim_start_matches("0x"), 16).ok()
        })
        .collect();
    addrs.extend((0..8).map(|_| next()));
    for a in addrs {
        for probe in [a, a.wrapping_add(1), a.wrapping_sub(1)] {
            if let Ok(hit) = map.lookup(probe) {
                let _ = format!("{hit:?}");
            }
        }
    }
});
