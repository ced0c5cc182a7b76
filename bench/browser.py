#!/usr/bin/env python3
"""The report browser's speed on a big recording: how long `sear report`
takes to show its first screen on a pseudo-terminal, against `sear report
--stdio` printing the whole text report, and how long each key takes to be
answered (from the key to the end of the screen update it causes).

Usage: bench/browser.py SEAR FILE [RUNS]   (medians of RUNS, default 5)
"""
import os, pty, select, statistics, subprocess, sys, time, fcntl, termios, struct

sear, data = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
READY = b"help on key bindings"


def spawn():
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.execv(sear, [sear, "report", "-i", data])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    return pid, fd


def read_until(fd, pred, timeout=120.0):
    buf = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            buf += chunk
            if pred(buf):
                return buf
    raise SystemExit(f"timed out; got {buf[-400:]!r}")


def burst(fd, quiet=0.03):
    """Reads one burst of output; returns when nothing came for `quiet` s.
    The time returned is that of the burst's last byte."""
    last = None
    while True:
        r, _, _ = select.select([fd], [], [], quiet if last else 10.0)
        if not r:
            return last
        try:
            os.read(fd, 1 << 16)
        except OSError:
            return last
        last = time.monotonic()


def first_screen():
    t0 = time.monotonic()
    pid, fd = spawn()
    read_until(fd, lambda b: READY in b)
    t = time.monotonic() - t0
    return t, pid, fd


def stdio():
    t0 = time.monotonic()
    subprocess.run([sear, "report", "--stdio", "-i", data], stdout=subprocess.DEVNULL, check=True)
    return time.monotonic() - t0


keys = [("Down", b"j"), ("PgDn", b"\x1b[6~"), ("Up", b"k"), ("unfold", b"\r"), ("fold", b"\r"),
        ("unfold all (E)", b"E"), ("fold all (C)", b"C"), ("zoom thread (t)", b"t"), ("unzoom (t)", b"t"),
        ("zoom dso (d)", b"d"), ("unzoom (Esc)", b"\x1b"), ("type /cpp", b"/cpp"), ("filter (Enter)", b"\r"),
        ("unfilter (Esc)", b"\x1b"), ("help (?)", b"?"), ("close help", b"x")]
opened, printed = [], []
per_key = {k: [] for k, _ in keys}
for _ in range(runs):
    printed.append(stdio())
    t, pid, fd = first_screen()
    opened.append(t)
    burst(fd)
    for name, k in keys:
        t0 = time.monotonic()
        os.write(fd, k)
        end = burst(fd)
        per_key[name].append((end or t0) - t0)
    os.write(fd, b"q")
    os.waitpid(pid, 0)
    os.close(fd)
med = statistics.median
print(f"{data}: medians of {runs} runs")
print(f"  report --stdio (whole text):   {med(printed):.3f} s")
print(f"  browser, first screen shown:   {med(opened):.3f} s")
for name, _ in keys:
    print(f"  key {name:<22} {1000 * med(per_key[name]):7.1f} ms  (max {1000 * max(per_key[name]):.1f})")
