#!/usr/bin/env bash
# Parse throughput of sear's perf.data reader next to perf's, on the same files.
#
#   bench/parse.sh [WORKDIR]
#
# Records two files with perf 6.1 from the bundled demo workload (a DWARF one
# with big records and a frame-pointer one with many small records), then runs
# `sear report --stats` and `perf report --stats` on each, pinned to one core,
# RUNS times each, and prints the median wall time, GB/s and peak RSS.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-/tmp/sear-bench}"
RUNS="${RUNS:-7}"
mkdir -p "$work"
cargo build --release --manifest-path "$root/Cargo.toml" -q
SEAR="$root/target/release/sear"
gcc -O2 -g -fno-omit-frame-pointer -o "$work/hotspots" "$root/demo/hotspots.c"

[ -f "$work/dwarf.data" ] || perf record -q -e cpu-clock -F 4000 --call-graph dwarf \
  -o "$work/dwarf.data" -- "$work/hotspots" 20000 >/dev/null
[ -f "$work/fp.data" ] || perf record -q -e cpu-clock -F 20000 -g \
  -o "$work/fp.data" -- "$work/hotspots" 60000 >/dev/null

command -v hyperfine >/dev/null || { echo "needs hyperfine: apt-get install hyperfine" >&2; exit 1; }

# Prints "median_seconds max_rss_kb": wall time from hyperfine (RUNS runs
# after 2 warm-ups, pinned to one core), peak RSS of the process and its
# children from GNU time.
measure() {
  local json rss
  json=$(mktemp)
  hyperfine -N -w 2 -r "$RUNS" --export-json "$json" "taskset -c 0 $*" >/dev/null 2>&1
  /usr/bin/time -o "$json.rss" -f "%M" "$@" >/dev/null 2>&1
  rss=$(tail -1 "$json.rss")
  python3 -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["results"][0]["median"])' "$json" | tr '\n' ' '
  echo "$rss"
  rm -f "$json" "$json.rss"
}

printf '%-10s %9s %10s | %-28s | %-28s | %s\n' file size samples "sear --stats (s, GB/s, RSS)" "perf --stats (s, GB/s, RSS)" "perf/sear"
for f in dwarf fp; do
  file="$work/$f.data"
  bytes=$(stat -c %s "$file")
  samples=$("$SEAR" report --stats -i "$file" | awk '/SAMPLE events/ {print $3; exit}')
  cat "$file" >/dev/null  # warm the page cache for both tools alike
  read -r st sr < <(measure "$SEAR" report --stats -i "$file")
  read -r pt pr < <(measure perf report --stats -i "$file")
  gbs() { awk -v b="$bytes" -v t="$1" 'BEGIN { printf "%.2f", b / t / 1e9 }'; }
  ratio=$(awk -v a="$pt" -v b="$st" 'BEGIN { printf "%.1fx", a / b }')
  printf '%-10s %8.1fM %10s | %6ss %6s GB/s %7s KB | %6ss %6s GB/s %7s KB | %s\n' \
    "$f" "$(awk -v b="$bytes" 'BEGIN{print b/1e6}')" "$samples" \
    "$st" "$(gbs "$st")" "$sr" "$pt" "$(gbs "$pt")" "$pr" "$ratio"
done
echo "(median of $RUNS runs each after 2 warm-ups, pinned to one core, page cache warm; times include process start-up)"
