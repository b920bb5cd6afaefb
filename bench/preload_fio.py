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

--region-dir DIR (repeatable; default /dev/shm) puts the region file in
DIR; --cpu then measures one preload column per region, side by side,
rows alternated.  --huge (root) adds two: a region on a hugetlbfs
(vm.nr_hugepages raised for the run) and one on a tmpfs mounted
huge=advise, each mounted in a temporary directory; everything is put
back afterwards (docs/benchmarks.md "Huge pages for the region").
mkfs.daxfs gives a region on /dev/shm 2 MiB pages where the kernel can
(docs/libdaxfs.md "Huge pages"); --small adds a column for a region in
the first --region-dir made with --small-pages, as regions were before.

With --cpu --base TREE: the preload of this tree and of TREE (another
built checkout, e.g. the commit before a change) side by side, in turns
within each run, instead of the no-pre-fault column.

Without --cpu or --meta: fio's MiB/s and median latency (a column per
region, as with --cpu; the sides alternated in every run), every row but
the first writes time-based (--runtime, 2s; 0: once through the 64 MiB),
as Table 2's job file has them: a 64 MiB row once through takes a few
milliseconds, most of it the opening of the file.

Usage: bench/preload_fio.py [--size 64m] [--runs 3] [--runtime 2s]
       [--meta N] [--cpu]
       [--region-dir DIR]... [--region-size 2G] [--huge] [--small]
       [--base TREE]
Needs fio and a built tree (make).
"""

import argparse
import contextlib
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


def fio(prefix, path, args, size, runtime=None):
    """runtime (fio's syntax): a time-based row, as Table 2's job file
    runs every row but the first writes: the opening of the file (the
    preload maps and pre-faults the file's pages then) is not most of a
    64 MiB row's time."""
    more = ["--time_based", "--runtime=" + runtime] if runtime else []
    cmd = prefix + ["fio", "--name=j", "--filename=" + path, "--bs=4k",
                    "--size=" + size, "--ioengine=sync", "--group_reporting",
                    "--output-format=json"] + more + args
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if res.returncode:
        sys.exit("fio failed: %s\n%s" % (" ".join(cmd), res.stderr))
    job = json.loads(res.stdout[res.stdout.index("{"):])["jobs"][0]
    kb = job["read"]["bw"] + job["write"]["bw"]
    side = job["read"] if job["read"]["io_bytes"] else job["write"]
    p50 = side["clat_ns"]["percentile"]["50.000000"]
    return kb / 1024.0, p50


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


def cpu_rows(pres, tmp, size, runs, base=None):
    """pres: [(name, preload prefix)], the first also measured without
    the pre-fault (or, with base, with base's preload on the same
    region); one column each, rounds alternated."""
    prog = os.path.join(REPO, "build", "bench", "preload_io")
    if not os.path.exists(prog):
        sys.exit("build/bench/preload_io is missing: make bench")
    mib = str(int(size.rstrip("mM")))
    sides = [(pre + [prog, "/daxfs/pio", mib], {}) for _, pre in pres]
    second = (pres[0][1] + [prog, "/daxfs/pio", mib],
              {"DAXFS_PRELOAD_PREFAULT": "0"})
    if base:
        bprog = os.path.join(base, "build", "bench", "preload_io")
        if not os.path.exists(bprog):
            sys.exit("%s is missing: make bench there" % bprog)
        bpre = [os.path.join(base, "build", "bin", "daxfs")] + pres[0][1][1:]
        second = (bpre + [bprog, "/daxfs/pio", mib], {})
    sides.append(second)
    sides.append(([prog, os.path.join(tmp, "pio"), mib], {}))
    best = [dict() for _ in sides]
    for r in range(runs):
        # the sides' order flips every round: with one order, the side
        # that ran first came out up to 2x slower than the same tree
        # run second (docs/benchmarks.md "Writes without the fine
        # clock, and rewrites of a file the cache holds")
        order = list(enumerate(sides))
        for i, (argv, extra) in (order if r % 2 == 0 else order[::-1]):
            e = dict(os.environ, **extra)
            for row in CPU_ROWS:
                res = subprocess.run(argv + [row], capture_output=True,
                                     text=True, timeout=600, env=e)
                if res.returncode:
                    sys.exit("preload_io failed: %s" % res.stderr)
                k, v = res.stdout.split()
                best[i][k] = min(best[i].get(k, 1e18), float(v))
    names = [n for n, _ in pres]
    print("| 4K row | " + " | ".join("preload %s ns/call" % n for n in names)
          + " | %s, %s | tmpfs ns/call | "
          % (names[0], "--base" if base else "no pre-fault")
          + " | ".join("tmpfs/%s" % n for n in names)
          + (" | tmpfs/base" if base else "") + " |")
    print("|---" * (2 * len(names) + 3 + bool(base)) + "|")
    for k in CPU_ROWS:
        t = best[-1][k]
        print("| %s | " % k
              + " | ".join("%.0f" % b[k] for b in best[:-1])
              + " | %.0f | " % t
              + " | ".join("%.2fx" % (t / b[k]) for b in best[:len(names)])
              + (" | %.2fx" % (t / best[-2][k]) if base else "") + " |")


def write_sys(path, value):
    with open(path, "w") as f:
        f.write(value)


@contextlib.contextmanager
def huge_dirs(region_size):
    """A hugetlbfs with room for a region of region_size and a tmpfs
    mounted huge=advise, in a temporary directory; everything restored
    on exit."""
    nr = "/proc/sys/vm/nr_hugepages"
    base = tempfile.mkdtemp(prefix="plbench-mnt-")
    huge, thp = os.path.join(base, "hugetlbfs"), os.path.join(base, "thp")
    with open(nr) as f:
        old = int(f.read())
    mounted = []
    try:
        write_sys(nr, str(old + (region_size >> 21) + 1))
        for d, fs, opts in ((huge, "hugetlbfs", "pagesize=2M"),
                            (thp, "tmpfs", "huge=advise,size=%d"
                             % (region_size + (64 << 20)))):
            os.mkdir(d)
            subprocess.run(["mount", "-t", fs, "-o", opts, "none", d],
                           check=True)
            mounted.append(d)
        yield [huge, thp]
    finally:
        for d in mounted:
            subprocess.run(["umount", d])
        write_sys(nr, str(old))
        shutil.rmtree(base, ignore_errors=True)


def parse_size(text):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.lower()
    return int(t[:-1]) * mult[t[-1]] if t[-1] in mult else int(t)


def make_region(d, prefix, size, small=False):
    """A new region of size bytes in directory d (small: on the
    directory's own pages, --small-pages); returns its path."""
    region = tempfile.mktemp(dir=d, prefix=prefix, suffix=".region")
    subprocess.run([os.path.join(BIN, "mkfs.daxfs"), "-f", "-s",
                    "%dM" % (size >> 20), region]
                   + (["--small-pages"] if small else []), check=True,
                   capture_output=True)
    return region


def scratch(prefix, runs, meta):
    """Parses the options; makes a tmpfs directory and a region in the
    first --region-dir.  Returns (args, directory, region)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="64m")
    ap.add_argument("--runtime", default="2s",
                    help="time-based rows (all but the first writes) run "
                    "this long; 0: once through the file")
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--meta", type=int, default=meta)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--region-dir", action="append", default=[])
    ap.add_argument("--region-size", default="2G")
    ap.add_argument("--huge", action="store_true")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--base", default=None)
    a = ap.parse_args()
    a.region_dir = a.region_dir or ["/dev/shm"]
    a.region_bytes = parse_size(a.region_size)
    tmp = tempfile.mkdtemp(dir="/dev/shm", prefix=prefix)
    return a, tmp, make_region(a.region_dir[0], prefix, a.region_bytes)


def drop_scratch(tmp, region):
    """Removes what scratch() made."""
    shutil.rmtree(tmp, ignore_errors=True)
    if os.path.exists(region):
        os.unlink(region)


def main():
    a, tmp, region = scratch("plbench-", 3, 0)
    names, regions = [column(a.region_dir[0])], [region]
    try:
        with contextlib.ExitStack() as stack:
            more = a.region_dir[1:]
            if a.huge:
                more += stack.enter_context(huge_dirs(a.region_bytes))
            try:
                if a.small:
                    regions.append(make_region(a.region_dir[0], "plbench-",
                                               a.region_bytes, small=True))
                    names.append(names[0] + " 4K pages")
                for d in more:
                    regions.append(make_region(d, "plbench-", a.region_bytes))
                    names.append(column(d))
                run(a, tmp, names, regions)
            finally:
                for r in regions[1:]:
                    os.unlink(r)
    finally:
        drop_scratch(tmp, region)


def column(d):
    """A region directory's column name."""
    return os.path.basename(d.rstrip("/")) or d


def run(a, tmp, names, regions):
    pres = [(n, [os.path.join(BIN, "daxfs"), "-r", r, "run", "--"])
            for n, r in zip(names, regions)]
    pre = pres[0][1]
    if a.meta:
        meta(pre, "/daxfs", tmp, a.meta, a.runs)
        return
    if a.cpu:
        cpu_rows(pres, tmp, a.size, a.runs, a.base)
        return
    fio_rows(a, tmp, pres)


def fio_rows(a, tmp, pres):
    """fio's MiB/s and median latency per row, the best of the runs (on
    a shared machine the other tenants only ever make a run slower): one
    preload column per region, then tmpfs; the sides alternated in every
    run."""
    names = [n for n, _ in pres]
    sides = [(pre, "/daxfs/f") for _, pre in pres]
    sides.append(([], os.path.join(tmp, "f")))
    print("| row | " + " | ".join("%s MiB/s" % n for n in names)
          + " | tmpfs MiB/s | " + " | ".join("%s/tmpfs" % n for n in names)
          + " | " + " | ".join("%s p50 ns" % n for n in names)
          + " | tmpfs p50 ns |")
    print("|---" * (3 * len(names) + 3) + "|")
    for name, args in ROWS:
        first = "first" in name
        runs = 1 if first else a.runs
        rt = None if first or a.runtime == "0" else a.runtime
        bw, lat = [0.0] * len(sides), [float("inf")] * len(sides)
        for _ in range(runs):
            for i, (pre, path) in enumerate(sides):
                if first and pre:
                    subprocess.run(pre + ["rm", "-f", path], check=True)
                elif first and os.path.exists(path):
                    os.unlink(path)
                b, l = fio(pre, path, args, a.size, rt)
                bw[i], lat[i] = max(bw[i], b), min(lat[i], l)
        t = bw[-1]
        print("| %s | " % name + " | ".join("%.0f" % b for b in bw)
              + " | " + " | ".join("%.2fx" % (b / t) for b in bw[:-1])
              + " | " + " | ".join("%d" % x for x in lat) + " |")


if __name__ == "__main__":
    main()
