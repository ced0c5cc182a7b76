//! Feeds arbitrary bytes to the text parsers behind `sear collapse` and
//! `sear flame`: the `perf script` collapser (with every option but
//! `--inline`, which reads binaries) and the folded-stack reader, whose lines
//! are then drawn as an SVG. Warnings are fine; panics, hangs and unbounded
//! allocations are bugs.

#![no_main]

use libfuzzer_sys::fuzz_target;
use profile::collapse::parse_folded;
use profile::collapse::perf_script::{Collapser, Options, Weight};
use render::flame::{write_svg, FlameOptions};

fuzz_target!(|data: &[u8]| {
    let flags = data.first().copied().unwrap_or(0);
    let opts = Options {
        include_pid: flags & 1 != 0,
        include_tid: flags & 2 != 0,
        annotate_kernel: flags & 4 != 0,
        annotate_jit: flags & 8 != 0,
        show_addrs: flags & 16 != 0,
        inline: false,
        event_filter: (flags & 32 != 0).then(|| "cycles".to_string()),
        weight: if flags & 64 != 0 {
            Weight::Samples
        } else {
            Weight::Period
        },
        wall_clock: false,
    };
    let mut c = Collapser::new(opts);
    let _ = c.read(data);
    let (folded, diag) = c.finish();
    std::hint::black_box((folded.sorted(), diag));

    let text = String::from_utf8_lossy(data);
    let (lines, diag) = parse_folded(&text);
    std::hint::black_box(&diag);
    let o = FlameOptions {
        inverted: flags & 1 != 0,
        reverse: flags & 2 != 0,
        flame_chart: flags & 4 != 0,
        ..FlameOptions::default()
    };
    let _ = write_svg(std::io::sink(), &lines, &o);
});
