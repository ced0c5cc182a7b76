#!/usr/bin/env bash
# Interleaved A/B runs of sear builds on the same arguments: each round runs every build once,
# in turn, so a slow or busy window hits them alike. Prints each build's median wall time and
# median peak RSS (GNU time's %e and %M) and its individual times.
#
#   bench/ab.sh RUNS "ARGS" SEAR_A SEAR_B [SEAR_C...]
#   e.g. bench/ab.sh 7 "report -i cppcheck-dwarf.data --stdio" /tmp/sear-old target/release/sear
#
# Runs in ${SEAR_BENCH_DIR:-~/.cache/sear-bench}, so recordings can be named by file name.
set -uo pipefail
[ $# -ge 3 ] || { sed -n '2,8p' "$0" >&2; exit 2; }
runs=$1 args=$2
shift 2
cd "${SEAR_BENCH_DIR:-$HOME/.cache/sear-bench}" || exit 1
t=$(mktemp)
trap 'rm -f "$t"' EXIT
declare -A wall rss
for _ in $(seq "$runs"); do
  for b in "$@"; do
    # shellcheck disable=SC2086 # ARGS is a word list on purpose
    /usr/bin/time -o "$t" -f "%e %M" "$b" $args >/dev/null 2>&1
    o=$(tail -1 "$t")
    wall[$b]+="${o% *} "
    rss[$b]+="${o#* } "
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for b in "$@"; do
  w=$(echo "${wall[$b]}" | median)
  m=$(echo "${rss[$b]}" | median)
  echo "$b: median ${w}s, median peak RSS $(awk -v k="$m" 'BEGIN {printf "%.1f", k / 1024}') MB  [${wall[$b]% }]"
done
