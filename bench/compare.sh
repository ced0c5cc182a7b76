#!/usr/bin/env bash
# Runs two sear builds on the same recordings with the same arguments and reports every
# output that differs: the check that a change (a speed-up, a refactoring) leaves what
# sear prints unchanged.
#
#   bench/compare.sh OLD_SEAR NEW_SEAR [recording...]
#
# Without recordings: the bench recordings that exist in ${SEAR_BENCH_DIR:-~/.cache/sear-bench}
# and the perf.data files of ../shared/conformance. Each recording is run through every case
# below (report modes, script, collapse, flame); a case both builds refuse the same way counts
# as the same. Exit status: 0 when all outputs are equal, 1 otherwise.
# Environment: CASES (newline-separated argument lists to use instead of the built-in ones).
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
old=$1 new=$2
shift 2
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${SEAR_BENCH_DIR:-$HOME/.cache/sear-bench}"
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  for f in "$dir"/*.data "$root"/../shared/conformance/*/perf.data*; do
    [ -f "$f" ] && files+=("$f")
  done
fi
default_cases='report --stdio
report --stdio --no-inline
report --stdio --no-children
report --stdio -g caller
report --stdio -g callee,0.5,caller
report --stdio --children -g folded
report --stdio --sort dso,sym
report --stdio --sort pid,sym
report --stdio --sort comm,dso
report --stdio --sort sym,srcline --no-children
report --stdio --percent-limit 5 --comms sh,python3.11,cppcheck
report --stdio -G
report --stdio --stats
script
script --no-inline
collapse
flame'
cases="${CASES:-$default_cases}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=0 diffs=0
for f in "${files[@]}"; do
  while IFS= read -r c; do
    [ -n "$c" ] || continue
    read -ra a <<<"$c"
    "$old" "${a[@]}" -i "$f" >"$tmp/old" 2>"$tmp/old.err"; ro=$?
    "$new" "${a[@]}" -i "$f" >"$tmp/new" 2>"$tmp/new.err"; rn=$?
    runs=$((runs + 1))
    if [ $ro -ne $rn ] || ! cmp -s "$tmp/old" "$tmp/new"; then
      diffs=$((diffs + 1))
      echo "DIFFERS: sear $c -i $f (exit $ro / $rn)"
      diff "$tmp/old" "$tmp/new" | head -10
    fi
  done <<<"$cases"
done
echo "$runs runs, $diffs differ"
[ $diffs -eq 0 ]
