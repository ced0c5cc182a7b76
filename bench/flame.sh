#!/usr/bin/env bash
# `sear flame` and `sear script` next to perf's way of doing the same, on the cppcheck
# recordings of bench/cppcheck-data.sh (the report benchmark's DWARF and frame-pointer files).
#
#   bench/cppcheck-data.sh && cargo install inferno --locked && bench/flame.sh
#
# Cases, each run the perf way and the sear way on the same file (outputs in $SEAR_BENCH_DIR/out/):
#   flame-fp           perf script -i cppcheck-fp.data | inferno-collapse-perf --all | inferno-flamegraph
#                      against  sear flame -i cppcheck-fp.data
#   flame-dwarf        the same on cppcheck-dwarf.data (perf script's default: inline frames,
#                      which perf 6.1 gets from binutils' addr2line; sear reads the DWARF itself)
#   script-fp          perf script -i cppcheck-fp.data  against  sear script -i cppcheck-fp.data
#   script-dwarf       the same on cppcheck-dwarf.data (inline frames)
#   script-dwarf-noinl the same with --no-inline
# `inferno-collapse-perf --all` marks kernel and JIT frames as `sear flame` does (`_[k]`, `_[j]`);
# sear's graph also marks inline frames `_[i]` (perf script shows them unmarked).
#
# Measuring as bench/report.sh does: every run goes through bench/treetime.c, which waits for
# the command and every process it starts (the pipeline's `sh`, its three stages, perf's
# addr2line helpers) and reports wall time to the exit of the last one, user+sys CPU of all of
# them, and the peak of the sum of their RSS. Wall: hyperfine over the treetime-wrapped command
# (RUNS runs after one warm-up, median); commands slower than SLOW seconds (perf script with
# inline frames on the DWARF file: minutes) run SLOW_RUNS times in all instead, median.
# CPU: median; peak RSS: largest. Not pinned: a pipeline's stages run on both cores.
# The machine's load average is printed before and after: on a shared machine prefer the CPU
# figures when it is high.
#
# Environment: SEAR (default target/release/sear, built if missing), SEAR_BENCH_DIR, RUNS (5),
# SLOW (20), SLOW_RUNS (2), ONLY (space-separated cases, default all), TOOLS ("perf sear").
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${SEAR_BENCH_DIR:-$HOME/.cache/sear-bench}"
RUNS="${RUNS:-5}"
SLOW="${SLOW:-20}"
SLOW_RUNS="${SLOW_RUNS:-2}"
ONLY="${ONLY:-flame-fp flame-dwarf script-fp script-dwarf script-dwarf-noinl}"
TOOLS="${TOOLS:-perf sear}"
out="$dir/out"
mkdir -p "$out"
dwarf="$dir/cppcheck-dwarf.data"
fp="$dir/cppcheck-fp.data"
for f in "$dwarf" "$fp"; do
  [ -f "$f" ] || { echo "$f missing: run bench/cppcheck-data.sh first (builds cppcheck, records both files)" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "needs hyperfine: apt-get install hyperfine" >&2; exit 1; }
PERF="${PERF:-perf}"
if [[ " $TOOLS " == *" perf "* && " $ONLY " == *" flame-"* ]]; then
  export PATH="$PATH:$HOME/.cargo/bin"
  for t in inferno-collapse-perf inferno-flamegraph; do
    command -v "$t" >/dev/null || {
      echo "needs $t (inferno's command-line tools): cargo install inferno --locked" >&2; exit 1; }
  done
fi
if [ -z "${SEAR:-}" ]; then
  SEAR="$root/target/release/sear"
  [ -x "$SEAR" ] || cargo build --release --manifest-path "$root/Cargo.toml" -q
fi
# shellcheck source=bench/measure.sh
source "$root/bench/measure.sh"
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n): $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB," \
  "$("$PERF" --version), sear $("$SEAR" --version 2>/dev/null | head -1 || echo '?') ($SEAR)," \
  "inferno $(cargo install --list 2>/dev/null | sed -n 's/^inferno v\([^:]*\):/\1/p' | head -1)," \
  "load average $(load)"
for f in "$dwarf" "$fp"; do
  echo "# $(basename "$f"): $(stat -c %s "$f") bytes"
  cat "$f" >/dev/null  # page cache warm for both alike
done

# set_cmd TOOL CASE -> CMD, the command as an array (pipelines through sh -c).
set_cmd() {
  local t=$1 c=$2 f
  case $c in *dwarf*) f=$dwarf ;; *) f=$fp ;; esac
  case "$t.$c" in
    perf.flame-*) CMD=(sh -c "$(printf '%q' "$PERF") script -i $(printf '%q' "$f") | inferno-collapse-perf --all | inferno-flamegraph") ;;
    sear.flame-*) CMD=("$SEAR" flame -i "$f") ;;
    perf.script-dwarf-noinl) CMD=("$PERF" script -i "$f" --no-inline) ;;
    sear.script-dwarf-noinl) CMD=("$SEAR" script -i "$f" --no-inline) ;;
    perf.script-*) CMD=("$PERF" script -i "$f") ;;
    sear.script-*) CMD=("$SEAR" script -i "$f") ;;
  esac
}

declare -A R  # R[tool.case.{wall,cpu,rss,fail,runs}]
for c in $ONLY; do
  for t in $TOOLS; do
    set_cmd "$t" "$c"
    measure "$t-$c" "${CMD[@]}"
    if [ -n "$M_FAIL" ]; then
      R[$t.$c.fail]="$M_FAIL"
      echo "$t: failed: $M_FAIL" >&2
    else
      R[$t.$c.wall]=$M_WALL R[$t.$c.cpu]=$M_CPU R[$t.$c.rss]=$M_RSS R[$t.$c.runs]=$M_RUNS
      echo "  wall ${M_WALL}s (median of $M_RUNS), CPU ${M_CPU}s, peak RSS ${M_RSS} kB; processes $M_PROCS" >&2
    fi
  done
  if [[ $c == flame-* && -s "$out/perf-$c.out" && -s "$out/sear-$c.out" ]]; then
    # What the two graphs hold: total samples (periods) and frames drawn.
    for t in perf sear; do
      echo "  $t graph: $(grep -o 'total_samples="[0-9]*"' "$out/$t-$c.out" | head -1)," \
        "$(grep -o '<g>' "$out/$t-$c.out" | wc -l) frames, $(stat -c %s "$out/$t-$c.out") bytes" >&2
    done
  fi
done

cell() {  # tool case -> "wall s  cpu s  rss MiB" or the failure
  local t=$1 c=$2
  if [ -n "${R[$t.$c.fail]:-}" ]; then
    printf '%-36s' "$t: failed: $(echo "${R[$t.$c.fail]}" | cut -c1-19)..."
  elif [ -n "${R[$t.$c.wall]:-}" ]; then
    printf '%8.2fs %8.2fs %9.1f MiB   ' "${R[$t.$c.wall]}" "${R[$t.$c.cpu]}" "$(awk -v k="${R[$t.$c.rss]}" 'BEGIN { print k / 1024 }')"
  else
    printf '%-36s' "(not run)"
  fi
}
ratio() {  # case key -> perf/sear
  local a="${R[perf.$1.$2]:-}" b="${R[sear.$1.$2]:-}"
  if [ -n "$a" ] && [ -n "$b" ]; then awk -v a="$a" -v b="$b" 'BEGIN { printf "%7.1fx", a / b }'
  else printf '%8s' "-"; fi
}
echo
printf '%-18s | %-36s | %-36s | %-8s %-8s %-8s\n' "case" "perf way: wall, CPU+children, peak RSS" \
  "sear: wall, CPU+children, peak RSS" "wall" "CPU" "RSS"
for c in $ONLY; do
  printf '%-18s | %s | %s | %s %s %s\n' "$c" "$(cell perf "$c")" "$(cell sear "$c")" \
    "$(ratio "$c" wall)" "$(ratio "$c" cpu)" "$(ratio "$c" rss)"
done
echo "(ratios are perf/sear; wall: median of $RUNS runs after a warm-up, or of $SLOW_RUNS runs for" \
  "commands over ${SLOW}s; CPU is user+sys of the command and all its descendants, median;"
echo " peak RSS is the largest sum of RSS of the command and its live descendants; page cache warm;" \
  "load average at the end $(load))"
echo "outputs: $out/{perf,sear}-CASE.out, stderr in .err, per-run figures in .time"
