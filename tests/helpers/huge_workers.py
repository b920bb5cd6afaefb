"""Workers and helpers for tests/test_hugepages.py: what a region's
mapping is made of, as /proc/PID/smaps tells it."""

import os
import subprocess
import time

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


def record(idx, k):
    """Host idx's k-th record: 4 KiB that name their writer and number."""
    head = b"host %d record %d " % (idx, k)
    return (head * (4096 // len(head) + 1))[:4096]


SLOTS = 1024     # files per host: 4 MiB, rewritten in turn


def last_record(k, slot):
    """The number of the record slot holds once records 0..k were
    written, record k into slot k % SLOTS."""
    return slot + SLOTS * ((k - slot) // SLOTS)


def live_during_collapse(idx, barrier, path, done):
    """Hosts 0 and 1 write records into files of their own (record k into
    file k % SLOTS), reading each back and an earlier file again, until
    the file done exists; process 2 runs `daxfs hugepages` on the region
    meanwhile and then makes done.  Returns the hosts' record counts and
    the command's (rc, stdout)."""
    if idx == 2:
        barrier.wait()
        res = subprocess.run([env.tool("daxfs"), "-r", path, "hugepages"],
                             capture_output=True, text=True, timeout=120)
        time.sleep(0.2)
        open(done, "w").close()
        return res.returncode, res.stdout
    k = 0
    with daxfs.Region(path) as r:
        barrier.wait()
        while not os.path.exists(done) or k < 64:
            name = "/w%d-%d" % (idx, k % SLOTS)
            r.write_file(name, record(idx, k))
            assert r.read_file(name) == record(idx, k), name
            j = (k * 7919) % min(k + 1, SLOTS)
            assert r.read_file("/w%d-%d" % (idx, j)) == \
                record(idx, last_record(k, j)), (k, j)
            k += 1
    return k
