#!/usr/bin/env python3
"""bench/fuse_requests.py - FUSE requests per operation on `daxfs mount`.

A FUSE request that misses the page cache costs a round trip through
/dev/fuse, and on a loaded machine the time of a round trip is mostly
scheduling.  So this counts requests (daxfs-fuse -o debug prints each one)
instead of timing them: the count does not depend on the load.  Each
configuration mounts a fresh region and runs the same small workload with
dd; the output is one markdown table (docs/benchmarks.md, docs/fuse.md
"Speed").  Usage: bench/fuse_requests.py [N] (N 4 KiB blocks, default 1024).
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from fuse_bench import TOOLS as BIN, _mounted

# name -> (daxfs-fuse -o options, extra dd flags for the data)
CONFIGS = [
    ("default", [], []),
    ("noxattr", ["noxattr"], []),
    ("writeback_cache", ["writeback_cache"], []),
    ("O_DIRECT", [], ["oflag=direct", "iflag=direct"]),
]


def _dd(mp, args, flags):
    # dd takes iflag/oflag only where they apply: keep the one that does
    side = "of=" if any(a.startswith("of=" + mp) for a in args) else "if="
    keep = [f for f in flags if f.startswith("oflag" if side == "of=" else "iflag")]
    subprocess.run(["dd", "status=none"] + args + keep, check=True)


def workloads(n):
    """(label, function of (mount point, dd flags)) in order."""
    def first(mp, fl):
        _dd(mp, ["if=/dev/zero", "of=%s/f" % mp, "bs=4k", "count=%d" % n], fl)

    def rewrite(mp, fl):
        _dd(mp, ["if=/dev/zero", "of=%s/f" % mp, "bs=4k", "count=%d" % n,
                 "conv=notrunc"], fl)

    def read(mp, fl):
        _dd(mp, ["if=%s/f" % mp, "of=/dev/null", "bs=4k"], fl)

    def big(mp, fl):
        _dd(mp, ["if=/dev/zero", "of=%s/g" % mp, "bs=1M", "count=%d" % (n // 256)], fl)

    return [("%d x 4 KiB write, new file" % n, first),
            ("%d x 4 KiB rewrite" % n, rewrite),
            ("%d x 4 KiB read (fresh open)" % n, read),
            ("%d x 1 MiB write, new file" % (n // 256), big)]


def _counts(log):
    log.seek(0)
    return collections.Counter(re.findall(rb"opcode: ([A-Z_]+) ", log.read()))


def run_config(region, opts, flags, loads):
    """Requests by opcode of each workload, run in order on a fresh mount."""
    subprocess.run([os.path.join(BIN, "mkfs.daxfs"), "-f", "-s", "256M", region],
                   check=True, capture_output=True)
    mp = tempfile.mkdtemp(prefix="daxfs-fuse-req-")
    log = tempfile.TemporaryFile()
    cmd = [os.path.join(BIN, "daxfs-fuse"), "-f", "-o", ",".join(["debug"] + opts),
           "-r", region, mp]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    out = []
    try:
        while not _mounted(mp):
            if p.poll() is not None:
                raise RuntimeError("daxfs-fuse did not mount")
            time.sleep(0.02)
        for _, fn in loads:
            before = _counts(log)
            fn(mp, flags)
            time.sleep(0.5)     # the kernel sends release after close(2)
            out.append(_counts(log) - before)
    finally:
        subprocess.run(["fusermount3", "-u", mp], check=False)
        p.wait(timeout=60)
        shutil.rmtree(mp, ignore_errors=True)
        os.unlink(region)
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    region = "/dev/shm/daxfs-fuse-req-%d" % os.getpid()
    loads = workloads(n)
    res = [run_config(region, opts, flags, loads) for _, opts, flags in CONFIGS]
    print("| workload | " + " | ".join(c[0] for c in CONFIGS) + " |")
    print("|---" * (len(CONFIGS) + 1) + "|")
    for i, (label, _) in enumerate(loads):
        cells = ["%d (%d data, %d getxattr)" %
                 (sum(r[i].values()), r[i][b"WRITE"] + r[i][b"READ"], r[i][b"GETXATTR"])
                 for r in res]
        print("| %s | %s |" % (label, " | ".join(cells)))


if __name__ == "__main__":
    main()
