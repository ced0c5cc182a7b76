#!/usr/bin/env bash
# Makes the seed corpora of the symbol-side fuzz targets (elf_dwarf, cfi_unwind, perf_map,
# jitdump) under fuzz/corpus/: small real binaries built here (C and C++, DWARF 4 and 5,
# inline frames, compressed sections, stripped), a real JIT perf map and real jitdump files
# (CPython 3.12+ `-X perf_jit` and Node's `--perf-prof` where they are installed).
#   bash fuzz/seeds.sh
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
E=corpus/elf_dwarf C=corpus/cfi_unwind P=corpus/perf_map J=corpus/jitdump
mkdir -p "$E" "$C" "$P" "$J"
cat > "$tmp/a.cc" <<'CC'
#include <vector>
#include <string>
#include <map>
template <typename T> static inline T twice(T x) { return x + x; }
static inline int leaf(int x) { return twice(x) ^ (x >> 3); }
struct Box { std::vector<int> v; int sum() const { int s = 0; for (int x : v) s += leaf(x); return s; } };
int main(int argc, char **argv) {
    std::map<std::string, Box> m;
    for (int i = 0; i < argc * 100; i++) m[std::to_string(i % 7)].v.push_back(i);
    int t = 0; for (auto &kv : m) t += kv.second.sum();
    return t & 1;
}
CC
cat > "$tmp/b.c" <<'C'
#include <stdio.h>
static int helper(int x) { return x * 3 + 1; }
int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += helper(i); return s; }
int main(void) { printf("%d\n", work(1000)); return 0; }
C
g++ -O2 -g -o "$tmp/cxx-dwarf5" "$tmp/a.cc"
g++ -O1 -g -gdwarf-4 -fno-omit-frame-pointer -o "$tmp/cxx-dwarf4" "$tmp/a.cc"
gcc -O0 -g -o "$tmp/c-O0" "$tmp/b.c"
gcc -O2 -g -gz=zlib -o "$tmp/c-gz" "$tmp/b.c"
gcc -O2 -g -o "$tmp/c-stripped" "$tmp/b.c" && strip "$tmp/c-stripped"
gcc -O2 -g -fasynchronous-unwind-tables -fno-dwarf2-cfi-asm -o "$tmp/c-debug-frame" "$tmp/b.c"
for f in cxx-dwarf5 cxx-dwarf4 c-O0 c-gz c-stripped c-debug-frame; do
  cp "$tmp/$f" "$E/$f"
  cp "$tmp/$f" "$C/$f"
done
printf '7f0000001000 40 LazyCompile:*work /tmp/w.js:1\n7f0000001040 20 Function:~<anonymous> :1\n7f0000002000 1000 stub\n' > "$P/node"
printf '0x1000 0x10 a\n2000 ffffffffffffffff big\n\n3000 10\nzz 10 bad\n' > "$P/odd"
if command -v node >/dev/null; then
  (cd "$tmp" && echo 'function w(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i);return s} for(let k=0;k<50;k++)w(1e5)' > w.js &&
    node --perf-basic-prof --perf-prof w.js >/dev/null 2>&1 || true)
  for f in /tmp/perf-*.map; do [ -f "$f" ] || continue; head -c 16384 "$f" > "$P/node-real"; break; done
  for f in "$tmp"/jit-*.dump; do [ -f "$f" ] || continue; head -c 65536 "$f" > "$J/node"; done
fi
for py in python3.13 python3.12; do
  command -v $py >/dev/null || continue
  (cd "$tmp" && $py -X perf_jit -c 'def f(n): return sum(i*i for i in range(n))
for _ in range(20): f(10000)' >/dev/null 2>&1 || true)
  for f in /tmp/jit-*.dump; do [ -f "$f" ] || continue; head -c 65536 "$f" > "$J/$py"; rm -f "$f"; done
  break
done
ls -la "$E" "$P" "$J"
