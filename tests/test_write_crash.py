"""A host killed in the middle of a many-page write (docs/files.md "Leaf
cursor", docs/alloc.md "Paths"): one write of 200 pages takes its new pages
from the host batch or the bump in steps of up to 64 (one CAS each), holds
each step's run in its lane, and publishes page after page through the
leaf cursor.  The victim (the crash build, `make crash`) is killed when it
has taken and held the k-th run, or has published the k-th page, across
the step boundaries.  A survivor recovers it after its lease: the size has
not moved (data first, size last), the bytes it rewrote in place are old
or new, a rewrite of the range by the survivor goes through, and fsck
finds nothing leaked.
"""
import subprocess

import pytest

from helpers import env

import crashlib as cl
import daxfs

LEASE_MS = 300
PAGE = 4096
SIZE = 48 * env.MiB
OLD = 8 * PAGE                      # the file before the write
OFF, LEN = 4 * PAGE, 200 * PAGE     # 4 pages in place, 196 new ones

VICTIM = r'''
import sys
sys.path.insert(0, sys.argv[2])
import daxfs
sys.path.insert(0, sys.argv[3])
import crashlib as cl
with daxfs.Region(sys.argv[1]) as r:
    with r.open("/f") as f:
        f.pwrite_all(cl.data("new", %d), %d)
''' % (LEN, OFF)


# the first three runs of 64 new pages and the last of 4; the pages
# around each step boundary; and the last page
@pytest.mark.parametrize("point", [
    "alloc.pages_held:1", "alloc.pages_held:2", "alloc.pages_held:4",
    "write.page_published:1", "write.page_published:64",
    "write.page_published:65", "write.page_published:129",
    "write.page_published:196",
])
def test_killed_writer(crash_build, region_path, point):
    env.mkfs(region_path, SIZE, lease_ms=LEASE_MS)
    old = cl.data("old", OLD)
    new = cl.data("new", LEN)
    with daxfs.Region(region_path) as r:
        with r.open("/f", create=True) as f:
            f.pwrite_all(old, 0)
        cl.victim_recovered(r, region_path, crash_build, point, VICTIM, [],
                            LEASE_MS)
        with r.open("/f") as f:
            got = f.read_all()
            assert len(got) == OLD
            assert got[:OFF] == old[:OFF]
            assert all(b in (o, n) for b, o, n in
                       zip(got[OFF:], old[OFF:], new[:OLD - OFF]))
            f.pwrite_all(new, OFF)
            assert f.read_all() == old[:OFF] + new
    code = subprocess.run([env.tool("fsck.daxfs"), "-n", region_path],
                          capture_output=True, text=True)
    assert code.returncode == 0, code.stdout + code.stderr
