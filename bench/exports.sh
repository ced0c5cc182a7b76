#!/usr/bin/env bash
# Wall time and peak RSS of `html` and every export format, two sear builds interleaved (one
# run each per recording and command): the figures of BENCHMARKS.md's export tables.
#
#   bench/exports.sh OLD_SEAR NEW_SEAR RECORDING...
#
# Prints one line per run: recording | command | build | wall | peak RSS (GNU time's %M).
set -uo pipefail
[ $# -ge 3 ] || { sed -n '2,7p' "$0" >&2; exit 2; }
old=$1 new=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for f in "$@"; do
  for c in "html" "export --format pprof" "export --format firefox" \
           "export --format speedscope" "export --format json"; do
    read -ra a <<<"$c"
    for b in "$old" "$new"; do
      /usr/bin/time -f "$(basename "$f") | $c | $b | %e s | %M KB" \
        "$b" "${a[@]}" -i "$f" -o "$out" 2>&1 >/dev/null | tail -1
    done
  done
done
