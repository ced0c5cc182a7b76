#!/usr/bin/env bash
# `sear report` next to `perf report` on recordings of a big C++ program (cppcheck, -O2 -g),
# made by bench/cppcheck-data.sh.
#
#   bench/cppcheck-data.sh && bench/report.sh
#   bench/system-data.sh && SET=system bench/report.sh     # whole-machine recordings
#
# Cases, each run by perf and by sear on the same file (outputs go to $SEAR_BENCH_DIR/out/):
#   dwarf        report -i cppcheck-dwarf.data --stdio                (default: inline frames)
#   dwarf-noinl  report -i cppcheck-dwarf.data --stdio --no-inline
#   fp-children  report -i cppcheck-fp.data --stdio --children
#   fp-self      report -i cppcheck-fp.data --stdio --no-children
# With SET=system, the recordings of bench/system-data.sh instead (many-process, parallel build,
# CPython), each as default report (inline frames) and --no-inline:
#   many many-noinl build build-noinl cpython cpython-noinl
#
# Every run goes through bench/treetime.c, which waits for the command *and every process it
# starts*, including helpers that outlive it (perf's addr2line), and reports wall time to the
# exit of the last one, user+sys CPU of all of them, and the peak of the sum of their RSS.
# Wall time: hyperfine over the treetime-wrapped command (RUNS runs after one warm-up run,
# median); commands that take longer than SLOW seconds (perf's default on the DWARF file,
# ~100 s) are run SLOW_RUNS times in all instead, median. CPU: median; peak RSS: largest.
# Not pinned to a core: perf's addr2line helpers run beside it on the other core.
#
# Environment: SEAR (sear binary; default target/release/sear, built if missing),
# SEAR_BENCH_DIR, RUNS (default 5), SLOW (20), SLOW_RUNS (2), ONLY (space-separated case names
# to run, default all), TOOLS (default "perf sear"; "sear" alone reuses no perf figures).
# A sear command that fails (e.g. "not implemented yet" today) is shown as "sear: failed:
# <message>" and left out of the ratios, so the script runs now for perf's figures.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${SEAR_BENCH_DIR:-$HOME/.cache/sear-bench}"
RUNS="${RUNS:-5}"
SLOW="${SLOW:-20}"
SLOW_RUNS="${SLOW_RUNS:-2}"
SET="${SET:-cppcheck}"
TOOLS="${TOOLS:-perf sear}"
out="$dir/out"
mkdir -p "$out"
declare -A args
case "$SET" in
  cppcheck)
    dwarf="$dir/cppcheck-dwarf.data"
    fp="$dir/cppcheck-fp.data"
    files=("$dwarf" "$fp")
    args=(
      [dwarf]="-i $dwarf --stdio"
      [dwarf-noinl]="-i $dwarf --stdio --no-inline"
      [fp-children]="-i $fp --stdio --children"
      [fp-self]="-i $fp --stdio --no-children"
    )
    ONLY="${ONLY:-dwarf dwarf-noinl fp-children fp-self}"
    data_script=bench/cppcheck-data.sh
    ;;
  system)
    files=()
    for n in many build cpython; do
      f="$dir/system-$n.data"
      files+=("$f")
      args[$n]="-i $f --stdio"
      args[$n-noinl]="-i $f --stdio --no-inline"
    done
    ONLY="${ONLY:-many many-noinl build build-noinl cpython cpython-noinl}"
    data_script=bench/system-data.sh
    ;;
  *) echo "SET is cppcheck or system" >&2; exit 1 ;;
esac
for f in "${files[@]}"; do
  [ -f "$f" ] || { echo "$f missing: run $data_script first" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "needs hyperfine: apt-get install hyperfine" >&2; exit 1; }
if [ -z "${SEAR:-}" ]; then
  SEAR="$root/target/release/sear"
  [ -x "$SEAR" ] || cargo build --release --manifest-path "$root/Cargo.toml" -q
fi
PERF="${PERF:-perf}"
MEASURE_EXT=txt
# shellcheck source=bench/measure.sh
source "$root/bench/measure.sh"

echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n): $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB," \
  "$("$PERF" --version), sear $("$SEAR" --version 2>/dev/null | head -1 || echo '?') ($SEAR)," \
  "load average $(load)"
for f in "${files[@]}"; do
  echo "# $(basename "$f"): $(stat -c %s "$f") bytes," \
    "$("$PERF" report --stats -i "$f" 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}') samples"
  cat "$f" >/dev/null  # page cache warm for both tools alike
done

declare -A R  # R[tool.case.{wall,cpu,rss,fail,procs}]
for c in $ONLY; do
  for t in $TOOLS; do
    bin="$PERF"; [ "$t" = sear ] && bin="$SEAR"
    # shellcheck disable=SC2086 # args are space-separated on purpose
    measure "$t-$c" "$bin" report ${args[$c]}
    if [ -n "$M_FAIL" ]; then
      R[$t.$c.fail]="$M_FAIL"
      echo "$t: failed: $M_FAIL" >&2
    else
      R[$t.$c.wall]=$M_WALL R[$t.$c.cpu]=$M_CPU R[$t.$c.rss]=$M_RSS R[$t.$c.procs]=$M_PROCS
      echo "  wall ${M_WALL}s, CPU ${M_CPU}s, peak RSS ${M_RSS} kB; processes $M_PROCS; the last exited ${M_OUTLIVED}s after the command" >&2
    fi
  done
done

cell() {  # tool case -> "wall s  cpu s  rss MB" or the failure
  local t=$1 c=$2
  if [ -n "${R[$t.$c.fail]:-}" ]; then
    printf '%-36s' "$t: failed: $(echo "${R[$t.$c.fail]}" | cut -c1-19)..."
  elif [ -n "${R[$t.$c.wall]:-}" ]; then
    printf '%8.2fs %8.2fs %9.1f MiB   ' "${R[$t.$c.wall]}" "${R[$t.$c.cpu]}" "$(awk -v k="${R[$t.$c.rss]}" 'BEGIN { print k / 1024 }')"
  else
    printf '%-36s' "(not run)"
  fi
}
ratio() {  # perf-case sear-case key -> perf/sear
  local a="${R[perf.$1.$3]:-}" b="${R[sear.$2.$3]:-}"
  if [ -n "$a" ] && [ -n "$b" ]; then awk -v a="$a" -v b="$b" 'BEGIN { printf "%7.1fx", a / b }'
  else printf '%8s' "-"; fi
}
echo
printf '%-12s | %-36s | %-36s | %-8s %-8s %-8s\n' "case" "perf: wall, CPU+children, peak RSS" \
  "sear: wall, CPU+children, peak RSS" "wall" "CPU" "RSS"
for c in $ONLY; do
  printf '%-12s | %s | %s | %s %s %s\n' "$c" "$(cell perf "$c")" "$(cell sear "$c")" \
    "$(ratio "$c" "$c" wall)" "$(ratio "$c" "$c" cpu)" "$(ratio "$c" "$c" rss)"
done
if [[ " $ONLY " == *" dwarf "* && " $ONLY " == *" dwarf-noinl "* ]]; then
  printf '%-12s | %-36s | %-36s | %s %s %s\n' "(dwarf)" "perf --no-inline" "sear default (inline frames)" \
    "$(ratio dwarf-noinl dwarf wall)" "$(ratio dwarf-noinl dwarf cpu)" "$(ratio dwarf-noinl dwarf rss)"
fi
echo "(ratios are perf/sear; wall: median of $RUNS runs after a warm-up, or of $SLOW_RUNS runs" \
  "for commands over ${SLOW}s; CPU is user+sys of the command and all its descendants, median;"
echo " peak RSS is the largest sum of RSS of the command and its live descendants; page cache warm)"
echo "outputs: $out/{perf,sear}-CASE.txt (diff them), stderr in .err, per-run figures in .time"
