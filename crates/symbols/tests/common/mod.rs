//! Builds small programs at test time and runs binutils on them as the oracle.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const C_SRC: &str = r#"
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) unsigned mix(unsigned a, unsigned b) {
    return (a ^ (b << 5)) * 2654435761u;
}

static inline __attribute__((always_inline)) unsigned step(unsigned acc, unsigned x) {
    if (x & 1)
        return mix(acc, x) + 7;
    return mix(x, acc) ^ 3;
}

__attribute__((noinline)) unsigned hot_c(const unsigned *v, int n) {
    unsigned acc = 1;
    for (int i = 0; i < n; i++)
        acc = step(acc, v[i]);
    return acc;
}

static __attribute__((noinline)) unsigned local_helper(unsigned x) {
    unsigned r = 0;
    for (unsigned i = 0; i < x; i++)
        r += step(r, i);
    return r;
}

int main(int argc, char **argv) {
    int n = 1000 + argc;
    unsigned *v = malloc(n * sizeof *v);
    for (int i = 0; i < n; i++)
        v[i] = (unsigned)rand();
    unsigned r = hot_c(v, n) + local_helper((unsigned)n);
    printf("%u\n", r);
    free(v);
    return argv[0][0] == 'x';
}
"#;

pub const CXX_SRC: &str = r#"
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace outer {
namespace inner {
template <typename T> struct Acc {
    T sum{};
    __attribute__((always_inline)) inline void add(T x) { sum += x * 3 + (x >> 1); }
};

template <typename T> __attribute__((noinline)) T hot_loop(const std::vector<T> &v) {
    Acc<T> a;
    for (auto x : v)
        a.add(x);
    return a.sum;
}
} // namespace inner

namespace {
struct Widget {
    int w;
    __attribute__((noinline)) int grow(int by) const { return w * by + 1; }
};
} // namespace
} // namespace outer

static inline __attribute__((always_inline)) int mixer(int a, int b) { return (a ^ b) * 31 + (a >> 3); }

__attribute__((noinline)) int hot_lambda(std::vector<int> &v) {
    int s = 0;
    std::for_each(v.begin(), v.end(), [&](int x) { s += mixer(x, s); });
    std::sort(v.begin(), v.end(), [](int a, int b) { return a > b; });
    return s;
}

int main(int argc, char **argv) {
    std::vector<int> v(1000 + argc);
    for (size_t i = 0; i < v.size(); i++)
        v[i] = (int)(i * 7919 % 1000);
    std::vector<long> w(v.begin(), v.end());
    std::map<std::string, int> m;
    m[argv[0]] = hot_lambda(v);
    std::function<long(const std::vector<long> &)> f = outer::inner::hot_loop<long>;
    outer::Widget wd{argc};
    std::printf("%d %ld %d %zu\n", m.begin()->second, f(w) + outer::inner::hot_loop<int>(v),
                wd.grow(3), m.size());
    return 0;
}
"#;

pub fn tool(name: &str) -> Command {
    let probe = Command::new(name).arg("--version").output();
    if probe.is_err() {
        panic!("`{name}` is needed by this test: install it (binutils / gcc / g++)");
    }
    Command::new(name)
}

pub fn run(cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

pub fn run_stdin(cmd: &mut Command, input: &str) -> String {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer").expect("write stdin");
    assert!(out.status.success(), "{cmd:?} failed");
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Compiles `src` (C if `cxx` is false) with -O2 -g into `dir/name`.
pub fn compile(dir: &Path, name: &str, src: &str, cxx: bool, extra: &[&str]) -> PathBuf {
    let ext = if cxx { "cc" } else { "c" };
    let src_path = dir.join(format!("{name}.{ext}"));
    std::fs::write(&src_path, src).expect("write source");
    let bin = dir.join(name);
    run(tool(if cxx { "g++" } else { "gcc" })
        .args(["-O2", "-g", "-o"])
        .arg(&bin)
        .arg(&src_path)
        .args(extra));
    bin
}

/// Text symbols from `nm -S --defined-only` (raw names): start → (size, names).
pub fn nm_functions(bin: &Path) -> HashMap<u64, (u64, Vec<String>)> {
    let out = run(tool("nm").args(["-S", "--defined-only"]).arg(bin));
    let mut map: HashMap<u64, (u64, Vec<String>)> = HashMap::new();
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 4 || !matches!(f[2], "T" | "t" | "W" | "w" | "i") {
            continue;
        }
        let start = u64::from_str_radix(f[0], 16).expect("hex address");
        let size = u64::from_str_radix(f[1], 16).expect("hex size");
        let e = map.entry(start).or_insert((size, Vec::new()));
        e.0 = e.0.max(size);
        e.1.push(f[3].to_owned());
    }
    map
}

/// All symbol names of a binary (raw), as `nm` lists them, defined or not.
pub fn nm_names(bin: &Path, dynamic: bool) -> Vec<String> {
    let mut cmd = tool("nm");
    if dynamic {
        cmd.arg("-D");
    }
    let out = run(cmd.arg(bin));
    let mut names: Vec<String> = out
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(|n| n.split('@').next().unwrap_or(n).to_owned())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Every DW_AT_linkage_name in the binary's DWARF: the names inline frames show.
pub fn dwarf_linkage_names(bin: &Path) -> Vec<String> {
    let out = run(tool("readelf").arg("--debug-dump=info").arg(bin));
    let mut names: Vec<String> = out
        .lines()
        .filter(|l| l.contains("DW_AT_linkage_name"))
        .filter_map(|l| l.split_whitespace().last())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// One frame as addr2line prints it: (function, file, line).
pub type A2lFrame = (String, String, u32);

/// `addr2line -a -f -i -C -e bin` over `addrs`, frames innermost first.
pub fn addr2line(bin: &Path, addrs: &[u64]) -> HashMap<u64, Vec<A2lFrame>> {
    addr2line_with("addr2line", bin, addrs)
}

/// The same with another implementation of addr2line's interface (llvm-addr2line).
pub fn addr2line_with(name: &str, bin: &Path, addrs: &[u64]) -> HashMap<u64, Vec<A2lFrame>> {
    let input: String = addrs.iter().map(|a| format!("{a:#x}\n")).collect();
    let out = run_stdin(
        tool(name).args(["-a", "-f", "-i", "-C", "-e"]).arg(bin),
        &input,
    );
    let mut res: HashMap<u64, Vec<A2lFrame>> = HashMap::new();
    let mut cur = None;
    let mut lines = out.lines();
    while let Some(l) = lines.next() {
        if let Some(hex) = l.strip_prefix("0x") {
            let a = u64::from_str_radix(hex, 16).expect("address");
            res.insert(a, Vec::new());
            cur = Some(a);
            continue;
        }
        let func = l.to_owned();
        let loc = lines.next().expect("location line follows function");
        let loc = loc.split(" (discriminator").next().unwrap_or(loc);
        let (file, line) = loc.rsplit_once(':').expect("file:line");
        let line = line.parse().unwrap_or(0);
        res.get_mut(&cur.expect("address first"))
            .expect("entry")
            .push((func, file.to_owned(), line));
    }
    res
}
