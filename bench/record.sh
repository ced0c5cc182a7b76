#!/usr/bin/env bash
# Recording overhead: a CPU-bound C workload run alone, under `perf record` and under
# `sear record` at the same settings, and the size of -z recordings.
#
#   cargo build --release && bench/record.sh          # needs root (or perf_event_paranoid <= 1),
#                                                     # gcc and perf 6.1 (apt-get install linux-perf)
#
# Settings (as perf's defaults where perf has one): cpu-clock (the VMs we run on have no PMU),
#   fp:    -e cpu-clock -F 4000 -g
#   dwarf: -e cpu-clock -F 4000 --call-graph dwarf,8192
#   -z:    -e cpu-clock -F 4000 -g -z  (zstd level 1 for both) and -z=3 / --compression-level=3
# Each configuration runs RUNS times (default 5) alternating perf and sear; the median wall time
# of the whole command (recorder start to recorder exit) is compared with the median of the
# workload alone. Slowdown = median(recorded) / median(alone) - 1.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
SEAR="${SEAR:-$here/target/release/sear}"
PERF="${PERF:-/usr/bin/perf}"
RUNS="${RUNS:-5}"
ITER="${ITER:-6000000000}"  # about 3 s of CPU on the project VM
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export PERF_CONFIG=/dev/null

[ -x "$SEAR" ] || { echo "build sear first: cargo build --release" >&2; exit 1; }

cat >"$work/w.c" <<'EOF'
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) unsigned long leaf(unsigned long n) {
    unsigned long s = 0;
    for (unsigned long i = 0; i < n; i++) s += i * i ^ (s >> 3);
    return s;
}
__attribute__((noinline)) unsigned long mid(unsigned long n) { return leaf(n / 2) + leaf(n / 2); }
int main(int argc, char **argv) { sink = mid(strtoul(argv[1], 0, 10)); return 0; }
EOF
gcc -O2 -g -fno-omit-frame-pointer -o "$work/w" "$work/w.c"

now() { date +%s.%N; }
# Prints the wall time of one run of "$@" in seconds.
timed() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); echo "$t1 - $t0" | bc -l; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

alone=()
for _ in $(seq "$RUNS"); do alone+=("$(timed "$work/w" "$ITER")"); done
base=$(printf '%s\n' "${alone[@]}" | median)
printf 'workload alone: median %.3f s over %d runs\n\n' "$base" "$RUNS"

printf '| setting | perf record | sear record | perf slowdown | sear slowdown | perf file | sear file | perf samples | sear samples |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
samples() { "$PERF" report --stats -i "$1" 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}'; }
row() {
  local name="$1"; shift
  local p=() s=()
  for _ in $(seq "$RUNS"); do
    p+=("$(timed "$PERF" record -q -o "$work/p.data" "$@" -- "$work/w" "$ITER")")
    s+=("$(timed "$SEAR" record -q -o "$work/s.data" "$@" -- "$work/w" "$ITER")")
  done
  local pm sm
  pm=$(printf '%s\n' "${p[@]}" | median)
  sm=$(printf '%s\n' "${s[@]}" | median)
  printf '| %s | %.3f s | %.3f s | %.1f%% | %.1f%% | %s | %s | %s | %s |\n' "$name" "$pm" "$sm" \
    "$(echo "($pm / $base - 1) * 100" | bc -l)" "$(echo "($sm / $base - 1) * 100" | bc -l)" \
    "$(stat -c %s "$work/p.data")" "$(stat -c %s "$work/s.data")" \
    "$(samples "$work/p.data")" "$(samples "$work/s.data")"
}
row "fp, 4 kHz" -e cpu-clock -F 4000 -g
row "DWARF 8 KiB, 4 kHz" -e cpu-clock -F 4000 --call-graph dwarf,8192
row "fp, 4 kHz, -z (level 1)" -e cpu-clock -F 4000 -g -z
row "DWARF 8 KiB, 4 kHz, -z (level 1)" -e cpu-clock -F 4000 --call-graph dwarf,8192 -z

echo
echo "Compression (median over RUNS alternating runs of each recorder; ratio = bytes from the ring"
echo "buffers / bytes written as COMPRESSED records, from the closing lines; bytes/sample = file size"
echo "/ samples, since the two recorders' runs sample different places):"
echo
printf '| settings | perf ratio | sear ratio | perf bytes/sample | sear bytes/sample |\n'
printf '|---|---|---|---|---|\n'
ratio() { grep -o 'ratio is [0-9.]*' | awk '{print $3}' | head -1; }
per_sample() { echo "$(stat -c %s "$1") / $(samples "$1")" | bc -l; }
for args in "-g -z" "-g --compression-level=3" "--call-graph dwarf,8192 -z" "--call-graph dwarf,8192 --compression-level=3"; do
  pr=() sr=() pb=() sb=()
  for _ in $(seq "$RUNS"); do
    # shellcheck disable=SC2086
    pr+=("$("$PERF" record -o "$work/p.data" -e cpu-clock -F 4000 $args -- "$work/w" "$ITER" 2>&1 >/dev/null | ratio)")
    pb+=("$(per_sample "$work/p.data")")
    # shellcheck disable=SC2086
    sr+=("$("$SEAR" record -o "$work/s.data" -e cpu-clock -F 4000 $args -- "$work/w" "$ITER" 2>&1 >/dev/null | ratio)")
    sb+=("$(per_sample "$work/s.data")")
  done
  printf '| `%s` | %.1f | %.1f | %.2f | %.2f |\n' "$args" \
    "$(printf '%s\n' "${pr[@]}" | median)" "$(printf '%s\n' "${sr[@]}" | median)" \
    "$(printf '%s\n' "${pb[@]}" | median)" "$(printf '%s\n' "${sb[@]}" | median)"
done

echo
echo "Compression of the same records (one perf -z recording per row, decompressed with"
echo "\`sear inject\` and recompressed with \`sear inject -z LEVEL\`; bytes of COMPRESSED records"
echo "in each file, so both sides compress exactly the same record stream):"
echo
# Sums the sizes of a perf.data file's COMPRESSED records (type 81).
compressed_bytes() {
  python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
off, size = struct.unpack_from("<QQ", d, 40)
pos, total = off, 0
while pos + 8 <= off + size:
    t, _, s = struct.unpack_from("<IHH", d, pos)
    if s < 8:
        break
    if t == 81:
        total += s
    pos += s
print(total)
PY
}
printf '| settings | perf bytes | sear bytes | sear / perf |\n|---|---|---|---|\n'
for args in "-g -z" "-g --compression-level=3" "--call-graph dwarf,8192 -z" "--call-graph dwarf,8192 --compression-level=3"; do
  level=1
  case "$args" in *level=3) level=3 ;; esac
  # shellcheck disable=SC2086
  "$PERF" record -q -o "$work/p.data" -e cpu-clock -F 4000 $args -- "$work/w" "$ITER" >/dev/null 2>&1
  "$SEAR" inject -i "$work/p.data" -o "$work/d.data"
  "$SEAR" inject -i "$work/d.data" -o "$work/s.data" --compress="$level"
  pb=$(compressed_bytes "$work/p.data")
  sb=$(compressed_bytes "$work/s.data")
  printf '| `%s` | %s | %s | %.4f |\n' "$args" "$pb" "$sb" "$(echo "$sb / $pb" | bc -l)"
done
