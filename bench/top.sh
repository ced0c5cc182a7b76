#!/usr/bin/env bash
# sear top against perf top: their own CPU time and peak memory while they
# sample the whole machine at -F 4000 (both printing a table every 2 s,
# --stdio, to /dev/null) under the same load: two programs spinning in a
# hot loop, one per core of this 2-core machine, plus a shell loop starting
# short processes (new binaries and addresses keep arriving).
#
# Usage: bench/top.sh [RUNS] [SECONDS]     (default 5 runs of 20 s, interleaved)
# SEAR picks the binary (default target/release/sear).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
secs=${2:-20}
sear=${SEAR:-target/release/sear}
[ -x "$sear" ] || cargo build --release -q
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cat > "$work/spin.c" <<'C'
volatile long x;
__attribute__((noinline)) void hotloop(long n) { for (long i = 0; i < n; i++) x += i; }
int main(void) { for (;;) hotloop(1000000); }
C
gcc -O1 -o "$work/spin" "$work/spin.c"
"$work/spin" & "$work/spin" &
( while :; do /bin/true; ls / >/dev/null; sleep 0.05; done ) &

measure() { # TOOL: prints "cpu_seconds peak_rss_kb"
  local out="$work/time.$1"
  case $1 in
    # (stdin an open pipe without data: perf top --stdio reads its keys
    # there, and spins on a closed one.)
    sear) sleep $((secs + 5)) | /usr/bin/time -f "%U %S %M" -o "$out" timeout -s INT "$secs" "$sear" top --stdio -F 4000 -d 2 >"$work/out.sear" 2>&1 || true ;;
    perf) sleep $((secs + 5)) | /usr/bin/time -f "%U %S %M" -o "$out" timeout -s INT "$secs" perf top --stdio -F 4000 -d 2 >"$work/out.perf" 2>&1 || true ;;
  esac
  # (Both must have shown the spinning function.)
  grep -q hotloop "$work/out.$1" || echo "warning: $1 top never showed hotloop" >&2
  awk 'END { printf "%.2f %d\n", $1 + $2, $3 }' "$out"
}

declare -a s_cpu p_cpu s_rss p_rss
for i in $(seq "$runs"); do
  read -r c m < <(measure perf); p_cpu+=("$c"); p_rss+=("$m")
  read -r c m < <(measure sear); s_cpu+=("$c"); s_rss+=("$m")
  echo "run $i: perf ${p_cpu[-1]} s CPU, ${p_rss[-1]} KB; sear ${s_cpu[-1]} s CPU, ${s_rss[-1]} KB" >&2
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
pc=$(median "${p_cpu[@]}"); sc=$(median "${s_cpu[@]}")
pm=$(median "${p_rss[@]}"); sm=$(median "${s_rss[@]}")
printf 'over %d s, medians of %d interleaved runs:\n' "$secs" "$runs"
printf '  perf top --stdio -F 4000 -d 2: %6.2f s CPU (%4.1f%% of a core), peak RSS %6d KB\n' "$pc" "$(echo "100*$pc/$secs" | bc -l)" "$pm"
printf '  sear top --stdio -F 4000 -d 2: %6.2f s CPU (%4.1f%% of a core), peak RSS %6d KB\n' "$sc" "$(echo "100*$sc/$secs" | bc -l)" "$sm"
printf '  perf/sear CPU: %.2fx\n' "$(echo "$pc/$sc" | bc -l)"
