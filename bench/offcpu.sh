#!/usr/bin/env bash
# The cost of off-CPU recording on a context-switch-heavy workload: two threads
# ping-ponging one byte over a pair of pipes (every round trip is two sleeps and two
# wake-ups; pinned to one CPU). Interleaved runs of: the program alone; `sear record` (the default event);
# `sear record --off-cpu`; `perf record -e sched:sched_switch -g` (perf 6.1's nearest
# equivalent: Debian's perf has no BPF --off-cpu); each with -g. Prints, per way, the
# median wall time of the workload, the recorder's CPU time (user+sys of the whole run,
# children included, less the program's own), the output size and the samples.
#
#   bench/offcpu.sh [RUNS] [ROUND_TRIPS]     (defaults 5 and 200000)
set -uo pipefail
runs=${1:-5} trips=${2:-200000}
sear=${SEAR:-$(dirname "$0")/../target/release/sear}
perf=${PERF:-/usr/bin/perf}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat > "$d/pingpong.c" <<'C'
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
static int a[2], b[2];
static long n;
__attribute__((noinline)) static void ping(void) {
    char c = 0;
    for (long i = 0; i < n; i++) {
        if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1) exit(1);
    }
}
static void *pong(void *x) {
    char c;
    for (long i = 0; i < n; i++) {
        if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1) exit(1);
    }
    return x;
}
int main(int argc, char **argv) {
    n = argc > 1 ? atol(argv[1]) : 100000;
    if (pipe(a) || pipe(b)) return 1;
    pthread_t t;
    pthread_create(&t, NULL, pong, NULL);
    ping();
    pthread_join(t, NULL);
    return 0;
}
C
gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$d/pingpong" "$d/pingpong.c" || exit 1
# (Both threads on one CPU: every round trip is two context switches, and
# the run does not depend on where the scheduler puts the threads.)
w="taskset -c 0 $d/pingpong $trips"
declare -A ways=(
  [alone]="$w"
  [sear]="$sear record -g -q -o $d/sear.data -- $w"
  [sear-off-cpu]="$sear record -g --off-cpu -q -o $d/sear-off.data -- $w"
  [perf-sched_switch]="$perf record -e sched:sched_switch -g -q -o $d/perf.data -- $w"
)
order=(alone sear sear-off-cpu perf-sched_switch)
declare -A wall cpu
for _ in $(seq "$runs"); do
  for k in "${order[@]}"; do
    # shellcheck disable=SC2086 # a word list on purpose
    /usr/bin/time -o "$d/t" -f "%e %U %S" ${ways[$k]} > /dev/null 2>&1
    read -r e u s < "$d/t"
    wall[$k]+="$e "
    cpu[$k]+="$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}') "
  done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${cpu[alone]}" | median)
printf '%-18s %10s %12s %12s %10s\n' way "wall (s)" "CPU (s)" "over alone" "file"
for k in "${order[@]}"; do
  wm=$(echo "${wall[$k]}" | median)
  cm=$(echo "${cpu[$k]}" | median)
  f=""
  case $k in
    sear) f=$d/sear.data ;;
    sear-off-cpu) f=$d/sear-off.data ;;
    perf-sched_switch) f=$d/perf.data ;;
  esac
  size=""
  [ -n "$f" ] && size="$(du -m "$f" | cut -f1) MB"
  printf '%-18s %10s %12s %12s %10s\n' "$k" "$wm" "$cm" \
    "$(awk -v c="$cm" -v b="$base" 'BEGIN {printf "+%.2f s", c - b}')" "$size"
done
echo "sear --off-cpu: $("$sear" report -i "$d/sear-off.data" --stats 2>/dev/null | grep -A1 'offcpu-time stats' | tail -1 | tr -s ' ') (offcpu-time)"
echo "perf sched_switch: $("$perf" report -i "$d/perf.data" --stats 2>/dev/null | grep -m1 'SAMPLE events' | tr -s ' ')"
