# Shared by the benchmark scripts (sourced): runs a command under bench/treetime.c and takes
# its figures. Needs $root, $out, RUNS, SLOW and SLOW_RUNS set; MEASURE_EXT (default "out")
# names the extension of the saved stdout.
tt="$out/treetime"
gcc -O2 -o "$tt" "$root/bench/treetime.c"

load() { cut -d' ' -f1-3 /proc/loadavg; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }

# measure LABEL CMD... -> sets M_WALL M_CPU M_RSS M_PROCS M_RUNS M_OUTLIVED (s, s, kB, -, -, s),
# or M_FAIL. stdout goes to $out/LABEL.$MEASURE_EXT, stderr to .err, per-run figures to .time.
# Wall: hyperfine over the wrapped command (RUNS runs after a warm-up, median), or SLOW_RUNS
# runs in all for commands over SLOW seconds; CPU: median; peak RSS: largest.
measure() {
  local label="$1"; shift
  local log="$out/$label.time" rc=0 stdout="$out/$label.${MEASURE_EXT:-out}"
  rm -f "$log"
  echo "+ $*  > $stdout  (load $(load))" >&2
  "$tt" -o "$stdout" -e "$out/$label.err" -j "$log" -- "$@" || rc=$?
  M_FAIL=""
  if [ "$rc" -ne 0 ]; then
    M_FAIL="$(grep -v '^\s*$' "$out/$label.err" | head -1 | sed -E 's/^(sear: )?([Ee]rror: )?//' | cut -c1-160)"
    M_FAIL="${M_FAIL:-exit status $rc}"
    return 0
  fi
  local first_wall
  first_wall=$(field wall <"$log")
  if awk -v w="$first_wall" -v s="$SLOW" 'BEGIN { exit !(w >= s) }'; then
    local i
    for ((i = 1; i < SLOW_RUNS; i++)); do
      "$tt" -o /dev/null -e /dev/null -j "$log" -- "$@"
    done
    M_WALL=$(field wall <"$log" | median)
    M_RUNS=$SLOW_RUNS
  else
    local json cmd
    json=$(mktemp)
    cmd="$(printf '%q ' "$tt" -o /dev/null -e /dev/null -j "$log" -- "$@")"
    hyperfine -N -w 1 -r "$RUNS" --export-json "$json" "$cmd" >/dev/null 2>&1
    M_WALL=$(python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["results"][0]["median"])' "$json")
    rm -f "$json"
    M_RUNS=$RUNS
  fi
  M_CPU=$(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } print v["user"] + v["sys"] }' "$log" | median)
  M_RSS=$(field peak_rss_kb <"$log" | sort -g | tail -1)
  M_PROCS=$(field procs <"$log" | tail -1)
  M_OUTLIVED=$(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } printf "%.3f\n", v["wall"] - v["main_wall"] }' "$log" | median)
}
