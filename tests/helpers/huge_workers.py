"""Workers and helpers for tests/test_hugepages.py: what a region's
mapping is made of, as /proc/PID/smaps tells it."""

import os

from helpers import env

daxfs = env.daxfs

MAP_ALIGN = 2 << 20


def region_mappings(path, smaps="/proc/self/smaps"):
    """The smaps entries of the mappings of path: a list of dicts with
    "start", "end" and the kB fields (KernelPageSize, ShmemPmdMapped...)."""
    real = os.path.realpath(path)
    out, cur = [], None
    with open(smaps) as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
                cur = None
                if len(head) >= 6 and head[5] == real:
                    start, end = (int(x, 16) for x in head[0].split("-"))
                    cur = {"start": start, "end": end}
                    out.append(cur)
            elif cur is not None and line.rstrip().endswith(" kB"):
                cur[head[0].rstrip(":")] = int(head[1])
    return out


def two_hosts(idx, barrier, path, size):
    """Host idx writes /h<idx>, then reads the other host's file; returns
    its mapping of the region (smaps) while it still holds it."""
    data = bytes((idx * 7 + i) & 0xff for i in range(size))
    with daxfs.Region(path) as r:
        barrier.wait()
        r.write_file("/h%d" % idx, data)
        barrier.wait()
        other = 1 - idx
        want = bytes((other * 7 + i) & 0xff for i in range(size))
        assert r.read_file("/h%d" % other) == want
        maps = region_mappings(path)
        barrier.wait()
    return maps
