"""Bytes stored past EOF through a mapping never become file data
(docs/files.md "Invariant: bytes beyond EOF", core/eoftail.c).

A process may store into the last page of a mapped file beyond EOF; the
bytes land in the region page.  xfstests generic/363 (fsx -e) does it
before every extension and expects zeros there once the file grows.  Here
a "mapping host" is the region file itself: the test stores into the EOF
page at the physical offset the file's extent map names, exactly where a
mapping's store lands, then grows the file every way a user can, and
reads.  Each case fails on a core that only moves the size.
"""
import os
import subprocess

import pytest

from helpers import env

import crashlib as cl
import daxfs

PAGE = 4096
SIZE = 16 * env.MiB
OLD = 5000                      # EOF inside the file's second page
JUNK = b"\xa5" * (2 * PAGE - OLD)


def pollute(region_path, f, size):
    """Stores junk from byte size to the end of its page, in place."""
    ext = [e for e in f.extents() if e.logical <= size < e.logical + e.length]
    assert ext, "the EOF page has no page"
    e = ext[0]
    fd = os.open(region_path, os.O_RDWR)
    try:
        n = PAGE - size % PAGE
        os.pwrite(fd, JUNK[:n], e.physical + size - e.logical)
    finally:
        os.close(fd)


def grow_truncate(f):
    f.truncate(3 * PAGE)
    return b""


def grow_write_past_gap(f):
    f.pwrite(b"far", 3 * PAGE)          # the gap spans the EOF page's tail
    return b"far"


def grow_write_same_page(f):
    f.pwrite(b"near", OLD + 100)        # the gap is 100 bytes of that tail
    return b"near"


def grow_fallocate(f):
    f.fallocate(0, 3 * PAGE)
    return b""


def grow_zero_range(f):
    f.fallocate(OLD + 10, PAGE, daxfs.FALLOC_ZERO_RANGE)
    return b""


GROW = [grow_truncate, grow_write_past_gap, grow_write_same_page,
        grow_fallocate, grow_zero_range]


@pytest.fixture
def fs(region_path):
    env.mkfs(region_path, SIZE, lease_ms=400)
    with daxfs.Region(region_path) as r:
        yield r


@pytest.mark.parametrize("grow", GROW, ids=lambda g: g.__name__)
def test_junk_past_eof_reads_as_zeros(fs, region_path, grow):
    old = cl.data("old", OLD)
    fs.write_file("/f", old)
    with fs.open("/f") as f:
        pollute(region_path, f, OLD)
        assert fs.read_file("/f") == old        # beyond EOF: not shown
        tail = grow(f)
    got = fs.read_file("/f")
    assert got[:OLD] == old
    end = len(got) - len(tail) if tail else len(got)
    assert got[OLD:end] == bytes(end - OLD), "junk from past EOF shows"
    assert got[end:] == tail


def test_write_at_eof_keeps_junk_hidden(fs, region_path):
    """A write right at EOF exposes nothing: the junk after its end stays
    beyond EOF (no gate closed), and the next extension clears it."""
    old = cl.data("old", OLD)
    fs.write_file("/f", old)
    with fs.open("/f") as f:
        pollute(region_path, f, OLD)
        f.pwrite(b"next", OLD)
        assert fs.read_file("/f") == old + b"next"
        f.truncate(2 * PAGE)
    assert fs.read_file("/f") == old + b"next" + bytes(2 * PAGE - OLD - 4)


def test_data_in_flight_is_kept(fs):
    """Non-zero bytes past EOF that a write put there are that write's:
    writes of consecutive chunks, out of order, each starting past EOF
    (the gate drains, nothing is zeroed under a finished write)."""
    chunks = [cl.data("c%d" % i, 700) for i in range(8)]
    with fs.open("/f", create=True) as f:
        for i in (0, 3, 1, 5, 2, 7, 4, 6):
            f.pwrite(chunks[i], 700 * i)
    assert fs.read_file("/f") == b"".join(chunks)


VICTIM = r'''
import os, sys
sys.path.insert(0, sys.argv[2])
import daxfs
with daxfs.Region(sys.argv[1]) as r:
    with r.open("/f") as f:
        f.truncate(int(sys.argv[4]))
'''


def test_dead_host_after_zeroing(crash_build, region_path):
    """Killed at eoftail.zeroed (crash build): the gate is still closed.
    Recovery opens it; the tail is zeros, writes go on, fsck is clean."""
    env.mkfs(region_path, SIZE, lease_ms=300)
    old = cl.data("old", OLD)
    with daxfs.Region(region_path) as r:
        r.write_file("/f", old)
        with r.open("/f") as f:
            pollute(region_path, f, OLD)
        cl.victim_recovered(r, region_path, crash_build, "eoftail.zeroed",
                            VICTIM, [str(3 * PAGE)], 300)
        assert r.read_file("/f") == old         # the size did not move
        with r.open("/f") as f:
            f.pwrite(b"after", 3 * PAGE)
        assert r.read_file("/f") == old + bytes(3 * PAGE - OLD) + b"after"
    code = subprocess.run([env.tool("fsck.daxfs"), "-n", region_path],
                          capture_output=True, text=True)
    assert code.returncode == 0, code.stdout + code.stderr
