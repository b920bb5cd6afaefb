"""A strict writer killed in the middle of an overwrite (docs/modes.md
"Strict overwrites out of place", crash story): killed at the crash points
of core/redo.c (the crash build, `make crash`) while it overwrites a file
over more than DAXFS_REDO_PAGES blocks (two redo records) and on beyond
its end.  A survivor recovers it after its lease: the file holds all of
the write (killed after the commit: recovery replays it) or none of it
(killed before), never part; the gate is open again and fsck is clean.
Before format 7 the write was stored in place and a kill left it torn.
"""
import json
import os
import subprocess
import sys

import pytest

from helpers import env

import crashlib as cl
import daxfs

LEASE_MS = 300
PAGE = 4096
SIZE = 48 * env.MiB
OLD_LEN = 520 * PAGE + 300
OFF, LEN = 100, 530 * PAGE      # over the whole file and beyond its end

# a strict pwrite of data("new", len) at off into the file named
VICTIM_SRC = r'''
import sys
sys.path.insert(0, sys.argv[2])
import daxfs
sys.path.insert(0, sys.argv[3])
import crashlib as cl
with daxfs.Region(sys.argv[1], strict=True) as r:
    with r.open("%s") as f:
        f.pwrite(cl.data("new", %d), %d)
'''
VICTIM = VICTIM_SRC % ("/f", LEN, OFF)


@pytest.mark.parametrize("point,whole", [
    ("strict.logged", False),
    ("strict.committed", True),
    ("strict.applied", True),
    # format 6 stored the write in place, then published the pages beyond
    # EOF: a kill there left the file torn (a new prefix, the old size).
    # The out-of-place write passes no such point: the victim finishes.
    ("write.page_published", None),
])
def test_dead_strict_writer(crash_build, region_path, point, whole):
    env.mkfs(region_path, SIZE, lease_ms=LEASE_MS)
    old = cl.data("old", OLD_LEN)
    new = old[:OFF] + cl.data("new", LEN)
    with daxfs.Region(region_path) as r:
        with r.open("/f", create=True) as f:
            f.pwrite_all(old, 0)
        venv = dict(os.environ, DAXFS_LIB=crash_build, DAXFS_CRASH_AT=point)
        p = subprocess.run([sys.executable, "-c", VICTIM, region_path,
                            os.path.join(cl.REPO, "python"), env.TESTS],
                           env=venv, capture_output=True, timeout=120)
        if whole is None and p.returncode == 0:
            whole = True
        else:
            assert p.returncode == -9, p.stderr[-2000:]
            states = cl.wait_recovered(r, LEASE_MS)
            assert "recovered" in states and "alive" not in states, states
        with r.open("/f") as f:
            got = f.read_all()
            # never torn: exactly the old file or exactly the new one
            assert got in ((new,) if whole else (old,) if whole is False
                           else (old, new)), \
                "torn: %d bytes, %d differ from old, %d from new" % (
                    len(got), sum(a != b for a, b in zip(got, old)),
                    sum(a != b for a, b in zip(got, new)))
            # the gate is open again: a write and a truncate go through
            f.pwrite_all(b"after", 0)
            f.truncate(PAGE)
    code = subprocess.run([env.tool("fsck.daxfs"), "-n", region_path],
                          capture_output=True, text=True)
    assert code.returncode == 0, code.stdout + code.stderr


HOLEY_PAGES = 48
HOLEY_OFF, HOLEY_LEN = 100, HOLEY_PAGES * PAGE - 200

HOLEY_VICTIM = VICTIM_SRC % ("/h", HOLEY_LEN, HOLEY_OFF)


def fsck_json(path):
    res = subprocess.run([env.tool("fsck.daxfs"), "-n", "--json", path],
                         capture_output=True, text=True, timeout=120)
    return res.returncode, json.loads(res.stdout)


@pytest.mark.parametrize("point,nth,whole", [
    # step 1 of the strict write gives each hole a page: killed while
    # one is being published (intent a[4] / a[5]), before any record
    ("write.page_publishing", 1, False),
    ("write.page_publishing", 2, False),
    ("write.page_publishing", 17, False),
    # later steps: a[6] names the record while a[4] still holds the last
    # published page's word (a[5] = 0): each record read from its words
    ("strict.logged", 1, False),
    ("strict.committed", 1, True),
    ("strict.applied", 1, True),
])
def test_dead_strict_writer_over_holes(crash_build, region_path, point, nth,
                                       whole):
    """A strict overwrite of a sparse file is killed while it publishes
    pages for the holes, or after, with its redo record named in the
    same FILE_WRITE intent: the file is exactly old or new, no page
    leaks, fsck is clean."""
    env.mkfs(region_path, SIZE, lease_ms=LEASE_MS)
    size = HOLEY_PAGES * PAGE
    with daxfs.Region(region_path) as r:
        with r.open("/h", create=True) as f:
            f.truncate(size)
            for i in range(0, HOLEY_PAGES, 2):       # every other page
                f.pwrite_all(cl.data("old%d" % i, PAGE), i * PAGE)
            old = f.read_all()
        new = old[:HOLEY_OFF] + cl.data("new", HOLEY_LEN) + \
            old[HOLEY_OFF + HOLEY_LEN:]
        cl.victim_recovered(r, region_path, crash_build,
                            "%s:%d" % (point, nth), HOLEY_VICTIM, [],
                            LEASE_MS)
        with r.open("/h") as f:
            got = f.read_all()
            assert got == (new if whole else old), \
                "%d bytes, %d differ from old, %d from new" % (
                    len(got), sum(a != b for a, b in zip(got, old)),
                    sum(a != b for a, b in zip(got, new)))
    code, rep = fsck_json(region_path)
    assert code == 0, rep["problems"][:5]
    s = rep["summary"]
    assert s["leaked_bytes"] == 0, s
    assert s["used_bytes"] == (s["reachable_bytes"] + s["limbo_bytes"] +
                               s["batch_bytes"]), s
