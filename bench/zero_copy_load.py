#!/usr/bin/env python3
"""bench/zero_copy_load.py - loading a weights file: a zero-copy map from
DaxFS (Region.map_file, docs/python.md "Zero copy") against read() from
tmpfs, as numpy arrays (docs/benchmarks.md "Zero-copy loads").

    python3 bench/zero_copy_load.py [--size 1G] [--repeat 5]

One file of --size random bytes goes into a fresh region in /dev/shm and
into a tmpfs file beside it.  Each way is timed --repeat times (median):
"load" until a numpy float16 array over the whole file exists, "+ touch"
until every byte has also been read once (a uint64 sum), and the private
memory the process gained (RssAnon) with the array alive.  Ways:
  daxfs map        Region.map_file + numpy.frombuffer (no copy)
  tmpfs read()     open(..., "rb").read() + numpy.frombuffer (one copy)
  tmpfs readinto   numpy.empty + readinto (one copy, no intermediate bytes)
  daxfs read()     Region.open_file(..., "rb").read() (one copy, libdaxfs)
Needs numpy and the package (python/ on sys.path, `make` run before, or
pip install ./python).
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import numpy as np  # noqa: E402

import daxfs  # noqa: E402

CHUNK = 64 << 20


def size_arg(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:].upper(), 1)
    return int(float(s.rstrip("kKmMgG")) * mult)


def rss():
    """Private (anonymous) memory of this process: what a copy costs."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) << 10
    return 0


def touch(a):
    return int(a.view(np.uint64).sum(dtype=np.uint64))


def timed(load, repeat):
    """Median seconds of load() and of load() + touch(), RSS gained."""
    loads, touched, gained = [], [], []
    for _ in range(repeat):
        r0 = rss()
        t0 = time.perf_counter()
        a, done = load()
        t1 = time.perf_counter()
        touch(a)
        t2 = time.perf_counter()
        gained.append(rss() - r0)
        del a
        done()
        loads.append(t1 - t0)
        touched.append(t2 - t0)
    return (statistics.median(loads), statistics.median(touched),
            statistics.median(gained))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=size_arg, default=1 << 30,
                    help="file size (K, M, G suffixes; default 1G)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default="/dev/shm", help="tmpfs directory")
    args = ap.parse_args()
    size = args.size // 8 * 8
    region = os.path.join(args.dir, "zc-region-%d" % os.getpid())
    plain = os.path.join(args.dir, "zc-plain-%d.bin" % os.getpid())
    rng = np.random.default_rng(1)
    daxfs.mkfs(region, size + size // 8 + (64 << 20))
    try:
        with daxfs.Region(region) as fs, open(plain, "wb") as out:
            with fs.open_file("/weights.bin", "wb") as f:
                for off in range(0, size, CHUNK):
                    chunk = rng.bytes(min(CHUNK, size - off))
                    f.write(chunk)
                    out.write(chunk)
            out.close()
            rows = run_all(fs, plain, args.repeat)
            print_table(size, rows, args.repeat)
    finally:
        for p in (region, plain):
            if os.path.exists(p):
                os.unlink(p)


def run_all(fs, plain, repeat):
    def dax_map():
        m = fs.map_file("/weights.bin")
        return np.frombuffer(m.buffer, dtype=np.float16), m.close

    def tmpfs_read():
        with open(plain, "rb") as f:
            return np.frombuffer(f.read(), dtype=np.float16), lambda: None

    def tmpfs_readinto():
        a = np.empty(os.path.getsize(plain) // 2, dtype=np.float16)
        with open(plain, "rb", buffering=0) as f:
            f.readinto(a)
        return a, lambda: None

    def dax_read():
        with fs.open_file("/weights.bin", "rb") as f:
            return np.frombuffer(f.read(), dtype=np.float16), lambda: None

    ways = [("daxfs map (zero copy)", dax_map), ("tmpfs read()", tmpfs_read),
            ("tmpfs readinto", tmpfs_readinto), ("daxfs read()", dax_read)]
    # the same bytes every way
    sums = {name: touch(fn()[0]) for name, fn in ways[1:2]}
    a, done = dax_map()
    assert touch(a) == sums["tmpfs read()"], "daxfs map differs"
    del a
    done()
    return [(name,) + timed(fn, repeat) for name, fn in ways]


def print_table(size, rows, repeat):
    print("%d MiB, median of %d" % (size >> 20, repeat))
    print("| way | load (ms) | load + touch (ms) | private memory (MiB) |")
    print("|---|---|---|---|")
    for name, load, touched, gained in rows:
        print("| %s | %.1f | %.1f | %.0f |" % (name, load * 1e3,
                                              touched * 1e3, gained / 2**20))


if __name__ == "__main__":
    main()
