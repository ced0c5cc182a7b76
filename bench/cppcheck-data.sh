#!/usr/bin/env bash
# Prepares the data for bench/report.sh: a big C++ program (cppcheck, from Debian's source
# package) built with -O2 -g, and two perf 6.1 recordings of it.
#
#   bench/cppcheck-data.sh            # data goes to ${SEAR_BENCH_DIR:-$HOME/.cache/sear-bench}
#
# Idempotent: every step is skipped when its output is already there (delete a file to redo
# that step). Needs root (it enables deb-src in apt's sources, may apt-get install dpkg-dev,
# build-essential and linux-perf, and raises kernel.perf_event_max_sample_rate to 10000).
#
# Produces, in $SEAR_BENCH_DIR:
#   cppcheck-<version>/cppcheck   the binary, unstripped, -O2 -g (keep it: reports symbolize it)
#   cppcheck-dwarf.data           perf record -e cpu-clock -F 4000 --call-graph dwarf  (~30k samples)
#   cppcheck-fp.data              perf record -e cpu-clock -F 10000 -g                 (~270k samples)
#   recordings.txt                how each file was made, its size and sample count
#
# cppcheck runs single-threaded on copies of its own sources (lib/*.cpp), with --enable=all
# (checks are CPU-bound, the input stays in the page cache). DWARF_FILES / FP_FILES pick how many
# files of lib/ each run checks, sorted by name, to set the length of the run (the defaults give
# about 7.5 s and 27 s of CPU on the project's VM).
set -euo pipefail
dir="${SEAR_BENCH_DIR:-$HOME/.cache/sear-bench}"
JOBS="${JOBS:-2}"
mkdir -p "$dir"
cd "$dir"
say() { echo "+ $*" >&2; }
run() { say "$*"; "$@"; }

# 1. deb-src in apt's sources (Debian 12 deb822 file, or a one-line sources.list).
if ! apt-get source --print-uris cppcheck >/dev/null 2>&1; then
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    say "enabling deb-src in /etc/apt/sources.list.d/debian.sources"
    sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources
  elif [ -f /etc/apt/sources.list ]; then
    say "adding deb-src lines to /etc/apt/sources.list"
    grep -E '^deb (http|https)://' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
      >>/etc/apt/sources.list
  else
    echo "no apt sources found to add deb-src to" >&2; exit 1
  fi
  run apt-get update -q
fi

# 2. Tools: dpkg-dev (apt-get source), a C++ compiler, perf 6.1.
need=()
command -v dpkg-source >/dev/null || need+=(dpkg-dev)
command -v g++ >/dev/null && command -v make >/dev/null || need+=(build-essential)
command -v perf >/dev/null || need+=(linux-perf)
[ ${#need[@]} -eq 0 ] || run apt-get install -y -q "${need[@]}"

# 3. Source: apt-get source cppcheck (bookworm: 2.10-2), unpacked as cppcheck-<version>/.
src=$(ls -d cppcheck-[0-9]*/ 2>/dev/null | head -1 || true)
if [ -z "$src" ]; then
  run apt-get source -q cppcheck
  src=$(ls -d cppcheck-[0-9]*/ | head -1)
fi
src="$dir/${src%/}"
say "source: $src"

# 4. Build with upstream's Makefile (quicker than CMake + the Debian packaging): -O2 -g, not
#    stripped, upstream's other release flags kept (-DNDEBUG, no match compiler, no rules).
#    -fno-omit-frame-pointer so that the -g (frame-pointer) recording has real call chains
#    through cppcheck's code (libstdc++ and libc still have none, as on any Debian system).
#    `nice` because the machine is shared.
CXXFLAGS_BENCH="-std=c++0x -O2 -g -fno-omit-frame-pointer -DNDEBUG -Wall -Wno-sign-compare"
if [ ! -x "$src/cppcheck" ]; then
  (cd "$src" && run nice -n 10 make -j"$JOBS" cppcheck \
     CXXFLAGS="$CXXFLAGS_BENCH" MATCHCOMPILER=no HAVE_RULES=no >"$dir/build.log" 2>&1) || {
    tail -30 "$dir/build.log" >&2; exit 1; }
fi
file "$src/cppcheck" | grep -q 'with debug_info, not stripped' ||
  { echo "$src/cppcheck has no debug info" >&2; exit 1; }

# 5. Recordings. cpu-clock samples only on CPU time, so the counts hold on a loaded machine.
#    Inputs: files of cppcheck's own lib/, checked with --enable=all (about 6-7 s of CPU each
#    for the ones below, with this build; findings go to the .log files).
rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
if [ "$rate" -lt 10000 ]; then
  say "raising kernel.perf_event_max_sample_rate from $rate to 10000"
  echo 10000 >/proc/sys/kernel/perf_event_max_sample_rate
fi
# Sized for the issue's ~30k DWARF and ~270k frame-pointer samples on the project's VM as of
# 2026-11-24 (about 8 s and 21 s of CPU; an earlier, slower VM got them from checkassert.cpp
# and from checkboost, checkassert, checkpostfixoperator and vfvalue, which give 13k and 114k
# samples here).
DWARF_INPUT="${DWARF_INPUT:-lib/checkautovariables.cpp}"
FP_INPUT="${FP_INPUT:-lib/checkautovariables.cpp lib/checkbool.cpp lib/check64bit.cpp lib/checkexceptionsafety.cpp lib/checkboost.cpp}"
record() {  # name, perf record options..., --, input files
  local name=$1; shift
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  [ -s "$dir/$name.data" ] && [ -f "$dir/$name.data.done" ] && return 0
  (cd "$src" && say "cd $src && perf record ${opts[*]} -o $dir/$name.data -- ./cppcheck -q --enable=all $*" &&
    perf record "${opts[@]}" -o "$dir/$name.data" -- ./cppcheck -q --enable=all "$@" \
      >"$dir/$name.log" 2>&1) || { tail "$dir/$name.log" >&2; exit 1; }
  touch "$dir/$name.data.done"  # a complete recording (not one cut short by an interruption)
}
# shellcheck disable=SC2086
record cppcheck-dwarf -e cpu-clock -F 4000 --call-graph dwarf -- $DWARF_INPUT
# shellcheck disable=SC2086
record cppcheck-fp -e cpu-clock -F 10000 -g -- $FP_INPUT

# 6. What was made, for BENCHMARKS.md.
{
  echo "cppcheck: $("$src/cppcheck" --version), Debian source $(cd "$dir" && ls cppcheck_*.dsc)," \
    "built with $(g++ --version | head -1): CXXFLAGS=\"$CXXFLAGS_BENCH\""
  echo "binary: $src/cppcheck, $(stat -c %s "$src/cppcheck") bytes, $(file -b "$src/cppcheck" | sed 's/.*BuildID/BuildID/')"
  for name in cppcheck-dwarf cppcheck-fp; do
    f="$dir/$name.data"
    echo "$name.data: $(stat -c %s "$f") bytes," \
      "$(perf report --stats -i "$f" 2>/dev/null | awk '/SAMPLE events/ {print $3; exit}') samples;" \
      "$(perf report --header-only -i "$f" 2>/dev/null | sed -n 's/^# cmdline : //p')"
  done
} >"$dir/recordings.txt"
cat "$dir/recordings.txt"
