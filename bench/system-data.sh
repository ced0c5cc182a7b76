#!/usr/bin/env bash
# Prepares whole-machine recordings for `SET=system bench/report.sh`: many processes, many
# binaries, many mmaps, recorded by perf 6.1 with DWARF call graphs.
#
#   bench/cppcheck-data.sh && bench/system-data.sh   # data in ${SEAR_BENCH_DIR:-~/.cache/sear-bench}
#
# Idempotent (a recording is skipped when it is there and complete). Needs root (system-wide
# recording), perf, g++ and make, CPython 3.11 (PYTHON, default: python3.11 on the PATH, else
# pyenv's 3.11) with its test package, and the cppcheck source tree bench/cppcheck-data.sh
# unpacks (the parallel build compiles files of it).
#
# Produces, in $SEAR_BENCH_DIR:
#   system-many.data     perf record -a --call-graph dwarf -F 4000: a shell loop starting Python
#                        60 times with coreutils in between (~2.5k short processes, ~100k mmaps)
#   system-build.data    perf record -a --call-graph dwarf -F 1000: make -j2 compiling cppcheck
#                        sources with g++ -O2 (cc1plus, as, make, sh: a parallel C++ build)
#   system-cpython.data  perf record --call-graph dwarf -F 4000 (one command, its children
#                        followed): CPython 3.11's regression tests of twelve modules, two workers
#   system-recordings.txt  how each file was made, its size, samples and processes
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${SEAR_BENCH_DIR:-$HOME/.cache/sear-bench}"
mkdir -p "$dir"
cd "$dir"
say() { echo "+ $*" >&2; }

PYTHON="${PYTHON:-$(command -v python3.11 || echo "$HOME/.pyenv/versions/3.11.7/bin/python3.11")}"
[ -x "$PYTHON" ] || { echo "needs CPython 3.11: set PYTHON" >&2; exit 1; }
"$PYTHON" -c 'import test.support' 2>/dev/null || { echo "$PYTHON has no test package" >&2; exit 1; }
src=$(ls -d "$dir"/cppcheck-[0-9]*/ 2>/dev/null | head -1 || true)
[ -n "$src" ] || { echo "no cppcheck source in $dir: run bench/cppcheck-data.sh first" >&2; exit 1; }
src="${src%/}"

record() {  # name, perf record options..., -- command...
  local name=$1; shift
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  [ -s "$dir/$name.data" ] && [ -f "$dir/$name.data.done" ] && return 0
  say "perf record ${opts[*]} -o $dir/$name.data -- $*"
  perf record "${opts[@]}" -o "$dir/$name.data" -- "$@" >"$dir/$name.log" 2>&1 ||
    { tail "$dir/$name.log" >&2; exit 1; }
  touch "$dir/$name.data.done"
}

# 1. Many short processes: each loop starts Python (interpreter start-up, imports of C
#    extension modules: dozens of mmaps each) and a dozen coreutils processes.
loop='for i in $(seq 60); do
  "$0" -c "import json, re, collections, decimal; print(sum(i * i for i in range(300000)))" >/dev/null
  ls /usr/lib >/dev/null; for j in 1 2 3 4 5 6 7 8 9 10; do cat /etc/hostname >/dev/null; done
  sh -c "basename /a/b; readlink -f /usr/bin" >/dev/null
done'
record system-many -a -e cpu-clock -F 4000 --call-graph dwarf -- sh -c "$loop" "$PYTHON"

# 2. A parallel C++ build: make -j2 compiling cppcheck sources into a scratch directory.
build="$dir/system-build.tmp"
rm -rf "$build"; mkdir -p "$build"
cat >"$build/Makefile" <<EOF
SRCS := \$(addprefix $src/lib/,token.cpp checkio.cpp checkbool.cpp checkstring.cpp checkother.cpp checktype.cpp)
OBJS := \$(notdir \$(SRCS:.cpp=.o))
all: \$(OBJS)
%.o: $src/lib/%.cpp
	g++ -std=c++11 -O2 -I$src/lib -I$src/externals/simplecpp -I$src/externals/tinyxml2 -I$src/externals/picojson -c \$< -o \$@
EOF
record system-build -a -e cpu-clock -F 1000 --call-graph dwarf -- make -C "$build" -j2 -s
rm -rf "$build"

# 3. CPython running part of its own test suite in two worker processes (-j2 starts them).
record system-cpython -e cpu-clock -F 4000 --call-graph dwarf -- \
  "$PYTHON" -m test -j2 test_json test_re test_textwrap test_statistics test_difflib test_fractions \
  test_decimal test_long test_unicode test_pickle test_set test_itertools

{
  for name in system-many system-build system-cpython; do
    f="$dir/$name.data"
    stats=$(perf report --stats -i "$f" 2>/dev/null)
    echo "$name.data: $(stat -c %s "$f") bytes," \
      "$(awk '/SAMPLE events/ {print $3; exit}' <<<"$stats") samples," \
      "$(awk '/COMM events/ {print $3; exit}' <<<"$stats") COMM," \
      "$(awk '/MMAP2 events/ {print $3; exit}' <<<"$stats") MMAP2 records;" \
      "$(perf report --header-only -i "$f" 2>/dev/null | sed -n 's/^# cmdline : //p' | cut -c1-200)"
  done
} >"$dir/system-recordings.txt"
cat "$dir/system-recordings.txt"
