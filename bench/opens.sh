#!/usr/bin/env bash
# How often a report opens each file: under strace, the openat calls of `sear report` (and of
# its threads) on a recording, counted per path. Work that belongs to a binary must not be
# redone per process or per sample, so no binary should be opened more than a few times
# however many processes map it.
#
#   bench/opens.sh [recording] [report options...]
#       (default: $SEAR_BENCH_DIR/system-many.data, default report; needs strace)
#
# Prints the syscall totals (strace -c), then the files opened most often with their counts.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${SEAR_BENCH_DIR:-$HOME/.cache/sear-bench}"
data="${1:-$dir/system-many.data}"
[ $# -gt 0 ] && shift
SEAR="${SEAR:-$root/target/release/sear}"
command -v strace >/dev/null || { echo "needs strace: apt-get install strace" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
strace -f -c -o "$log" "$SEAR" report -i "$data" --stdio "$@" >/dev/null 2>&1
grep -E 'openat|close|statx|fstat|total' "$log"
strace -f -e trace=openat -o "$log" "$SEAR" report -i "$data" --stdio "$@" >/dev/null 2>&1
echo
echo "openat calls: $(grep -c 'openat(' "$log"), distinct paths: $(grep -o 'openat([^"]*"[^"]*"' "$log" | sort -u | wc -l)"
echo "most opened:"
grep -o 'openat([^"]*"[^"]*"' "$log" | sed 's/.*"\(.*\)"/\1/' | sort | uniq -c | sort -rn | head -12
