#!/usr/bin/env python3
"""fio (sync engine, 4K rows of the DaxFS paper's Table 2) through
libdaxfs-preload.so (`daxfs run`) and on tmpfs, best of --runs (3) each; prints a
Markdown table of MiB/s and ratios (docs/benchmarks.md "Through the
preload").

With --meta N: create, stat and unlink of N files and N 4 KiB appends
instead (build/bench/preload_meta, `make bench`), best of --runs.

With --cpu: the 4K rows and an append row in CPU time per call of the
calling thread (build/bench/preload_io: user and kernel time, page faults
included, time waiting for a CPU excluded), each row a fresh process, best
of --runs; also the preload with its open-time pre-fault switched off.
On a loaded shared machine wall-clock bandwidth mostly measures the other
tenants; CPU time per call does not.

With --cpu --base TREE: the preload of this tree and of TREE (another
built checkout, e.g. the commit before a change) side by side, in turns
within each run, instead of the no-pre-fault column.

Usage: bench/preload_fio.py [--size 64m] [--runs 3] [--meta N] [--cpu]
                            [--base TREE]
Needs fio and a built tree (make).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(REPO, "build", "bin")

# (row, fio arguments); "first" writes a new file, the others reuse it.
ROWS = [
    ("seq write 4K first", ["--rw=write", "--create_on_open=1"]),
    ("seq write 4K rewrite", ["--rw=write"]),
    ("seq read 4K", ["--rw=read"]),
    ("rand read 4K, 1 job", ["--rw=randread"]),
    ("rand write 4K, 1 job", ["--rw=randwrite"]),
    ("rand read 4K, 4 jobs", ["--rw=randread", "--numjobs=4"]),
]


def fio(prefix, path, args, size):
    cmd = prefix + ["fio", "--name=j", "--filename=" + path, "--bs=4k",
                    "--size=" + size, "--ioengine=sync", "--group_reporting",
                    "--output-format=json"] + args
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if res.returncode:
        sys.exit("fio failed: %s\n%s" % (" ".join(cmd), res.stderr))
    job = json.loads(res.stdout[res.stdout.index("{"):])["jobs"][0]
    kb = job["read"]["bw"] + job["write"]["bw"]
    side = job["read"] if job["read"]["io_bytes"] else job["write"]
    p50 = side["clat_ns"]["percentile"]["50.000000"]
    return kb / 1024.0, p50


def best(prefix, path, args, size, runs):
    """Best bandwidth and best median latency of runs: on a shared
    machine the other tenants only ever make a run slower."""
    out = [fio(prefix, path, args, size) for _ in range(runs)]
    return max(o[0] for o in out), min(o[1] for o in out)


def meta(pre, region_dir, tmp_dir, n, runs):
    prog = os.path.join(REPO, "build", "bench", "preload_meta")
    if not os.path.exists(prog):
        sys.exit("build/bench/preload_meta is missing: make bench")

    def one(prefix, d):
        res = subprocess.run(prefix + [prog, d, str(n)], capture_output=True,
                             text=True, timeout=1200)
        if res.returncode:
            sys.exit("preload_meta failed: %s" % res.stderr)
        return dict((k, float(v)) for k, v in
                    (line.split() for line in res.stdout.splitlines()))

    best = [{}, {}]
    for _ in range(runs):
        for i, (prefix, d) in enumerate(((pre, region_dir), ([], tmp_dir))):
            for k, v in one(prefix, d).items():
                best[i][k] = max(best[i].get(k, 0), v)
    print("| %d files | preload ops/s | tmpfs ops/s | preload/tmpfs |" % n)
    print("|---|---|---|---|")
    for k in ("create", "stat", "unlink", "append"):
        print("| %s | %.0f | %.0f | %.2fx |" % (k, best[0][k], best[1][k],
                                              best[0][k] / best[1][k]))


CPU_ROWS = ["first", "rewrite", "read", "randread", "randwrite", "append"]


def cpu_rows(pre, tmp, size, runs, base=None, region=None):
    prog = os.path.join(REPO, "build", "bench", "preload_io")
    if not os.path.exists(prog):
        sys.exit("build/bench/preload_io is missing: make bench")
    mib = str(int(size.rstrip("mM")))
    second = (pre + [prog, "/daxfs/pio", mib],
              {"DAXFS_PRELOAD_PREFAULT": "0"})
    if base:
        bprog = os.path.join(base, "build", "bench", "preload_io")
        bpre = [os.path.join(base, "build", "bin", "daxfs"), "-r", region,
                "run", "--"]
        if not os.path.exists(bprog):
            sys.exit("%s is missing: make bench there" % bprog)
        second = (bpre + [bprog, "/daxfs/pio", mib], {})
    sides = [(pre + [prog, "/daxfs/pio", mib], {}), second,
             ([prog, os.path.join(tmp, "pio"), mib], {})]
    best = [dict() for _ in sides]
    for _ in range(runs):
        for i, (argv, extra) in enumerate(sides):
            e = dict(os.environ, **extra)
            for row in CPU_ROWS:
                res = subprocess.run(argv + [row], capture_output=True,
                                     text=True, timeout=600, env=e)
                if res.returncode:
                    sys.exit("preload_io failed: %s" % res.stderr)
                k, v = res.stdout.split()
                best[i][k] = min(best[i].get(k, 1e18), float(v))
    col = "preload, --base" if base else "preload, no pre-fault"
    print("| 4K row | preload ns/call | %s | tmpfs ns/call "
          "| tmpfs/preload |%s" % (col, " tmpfs/base |" if base else ""))
    print("|---|---|---|---|---|%s" % ("---|" if base else ""))
    for k in CPU_ROWS:
        extra = " %.2fx |" % (best[2][k] / best[1][k]) if base else ""
        print("| %s | %.0f | %.0f | %.0f | %.2fx |%s" % (
            k, best[0][k], best[1][k], best[2][k], best[2][k] / best[0][k],
            extra))


def scratch(prefix, runs, meta):
    """Parses --size, --runs, --meta, --cpu; makes a tmpfs directory and a
    2 GiB region beside it.  Returns (args, directory, region)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="64m")
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--meta", type=int, default=meta)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--base", default=None)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(dir="/dev/shm", prefix=prefix)
    region = tmp + ".region"
    subprocess.run([os.path.join(BIN, "mkfs.daxfs"), "-f", "-s", "2G",
                    region], check=True, capture_output=True)
    return a, tmp, region


def drop_scratch(tmp, region):
    """Removes what scratch() made."""
    shutil.rmtree(tmp, ignore_errors=True)
    if os.path.exists(region):
        os.unlink(region)


def main():
    a, tmp, region = scratch("plbench-", 3, 0)
    try:
        pre = [os.path.join(BIN, "daxfs"), "-r", region, "run", "--"]
        if a.meta:
            meta(pre, "/daxfs", tmp, a.meta, a.runs)
            return
        if a.cpu:
            cpu_rows(pre, tmp, a.size, a.runs, a.base, region)
            return
        print("| row | preload MiB/s | tmpfs MiB/s | preload/tmpfs | "
              "preload p50 ns | tmpfs p50 ns | latency tmpfs/preload |")
        print("|---|---|---|---|---|---|---|")
        for name, args in ROWS:
            if "first" in name:
                for p in (os.path.join(tmp, "f"),):
                    if os.path.exists(p):
                        os.unlink(p)
                subprocess.run(pre + ["rm", "-f", "/daxfs/f"], check=True)
            runs = 1 if "first" in name else a.runs
            d, dl = best(pre, "/daxfs/f", args, a.size, runs)
            t, tl = best([], os.path.join(tmp, "f"), args, a.size, runs)
            print("| %s | %.0f | %.0f | %.2fx | %d | %d | %.2fx |"
                  % (name, d, t, d / t, dl, tl, tl / max(dl, 1)))
    finally:
        drop_scratch(tmp, region)


if __name__ == "__main__":
    main()
