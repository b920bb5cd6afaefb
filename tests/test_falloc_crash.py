"""A host that dies in the middle of a punch or a zeroing (docs/files.md
"fallocate", crash story): killed at the crash points of core/falloc.c
(the crash build, `make crash`), with the file's write gate closed.  A
survivor recovers it after its lease: the gate opens (a write of the file
goes through), every byte of the range is old or zero, the bytes outside
it and the size are untouched, and fsck is clean (no unwritten page
holds bytes).
"""
import subprocess

import pytest

from helpers import env

import crashlib as cl
import daxfs

LEASE_MS = 300
PAGE = 4096
SIZE = 48 * env.MiB
NPAGES = 16
OFF, LEN = 2 * PAGE + 100, 10 * PAGE     # partial ends, whole pages between

VICTIM = r'''
import os, sys
sys.path.insert(0, sys.argv[2])
import daxfs
with daxfs.Region(sys.argv[1]) as r:
    f = r.open("/f")
    f.fallocate(%d, %d, int(sys.argv[4]))
''' % (OFF, LEN)


def content():
    return cl.data("f", NPAGES * PAGE)


@pytest.mark.parametrize("point,mode", [
    ("falloc.punch_zeroed", daxfs.FALLOC_PUNCH_HOLE | daxfs.FALLOC_KEEP_SIZE),
    ("falloc.zero_filled", daxfs.FALLOC_ZERO_RANGE | daxfs.FALLOC_KEEP_SIZE),
    # a page zeroed, its word not yet unwritten (format 8): plain zeros,
    # and fsck (which checks that no unwritten page holds bytes) is clean
    ("falloc.zeroed_unmarked",
     daxfs.FALLOC_ZERO_RANGE | daxfs.FALLOC_KEEP_SIZE),
])
def test_dead_puncher_recovered(crash_build, region_path, point, mode):
    env.mkfs(region_path, SIZE, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        with r.open("/f", create=True) as f:
            f.pwrite_all(content(), 0)
        cl.victim_recovered(r, region_path, crash_build, point, VICTIM,
                            [str(mode)], LEASE_MS)
        with r.open("/f") as f:
            got = f.read_all()
            assert len(got) == NPAGES * PAGE
            old = content()
            assert got[:OFF] == old[:OFF]
            assert got[OFF + LEN:] == old[OFF + LEN:]
            assert all(b in (0, o) for b, o in zip(got[OFF:OFF + LEN],
                                                   old[OFF:OFF + LEN]))
            # the gate is open again: a write and a truncate go through
            f.pwrite_all(b"after", 0)
            f.truncate(NPAGES * PAGE - 1)
            # rerunning the call completes it
            f.fallocate(OFF, LEN, mode)
            got = f.read_all()
            assert got[OFF:OFF + LEN] == bytes(LEN)
            assert got[:5] == b"after"
    code = subprocess.run([env.tool("fsck.daxfs"), "-n", region_path],
                          capture_output=True, text=True)
    assert code.returncode == 0, code.stdout + code.stderr
