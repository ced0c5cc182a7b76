#!/usr/bin/env bash
# The demo: build the bundled workload, record it, and show what sear reads.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${DEMO_OUT:-$here/out}"
mkdir -p "$out"
SEAR="${SEAR:-$(command -v sear || echo "$here/../target/release/sear")}"
[ -x "$SEAR" ] || { echo "sear is not built: run 'cargo install --locked --path .' first" >&2; exit 1; }

echo "== building the demo workload ($here/hotspots.c)"
gcc -O2 -g -fno-omit-frame-pointer -o "$out/hotspots" "$here/hotspots.c"

echo "== recording it: sear record -e cpu-clock -F 2000 -g -o $out/perf.data"
"$SEAR" record -e cpu-clock -F 2000 -g -o "$out/perf.data" -- "$out/hotspots" 6000

echo "== sear report --stats"
"$SEAR" report --stats -i "$out/perf.data"
echo "== sear report --no-children -g none (the hottest symbols)"
"$SEAR" report --stdio --no-children -g none -i "$out/perf.data" | head -30
echo "== sear report (children and call graphs, first 60 lines)"
"$SEAR" report --stdio -i "$out/perf.data" | head -60
echo "== sear collapse -i perf.data (folded stacks, heaviest first)"
"$SEAR" collapse -i "$out/perf.data" | sort -t' ' -k2 -rn | head -5
"$SEAR" flame -i "$out/perf.data" -o "$out/flame.svg" --title "sear demo"
"$SEAR" html -i "$out/perf.data" -o "$out/report.html"
echo
echo "The recording is $out/perf.data, its flame graph $out/flame.svg and its report"
echo "$out/report.html (flame graph, top symbols, threads, source lines; open them in a browser);"
echo "try: $SEAR report -i $out/perf.data, $SEAR script -i $out/perf.data | less"
