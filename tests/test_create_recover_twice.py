"""A dead creator's (or linker's) roll-back, when its recoverer dies too
(docs/recovery.md, "A recoverer that dies").

A victim host dies in create("/x/new") after publishing the inode and
before naming it (`create.inode_published`).  A second host recovers it:
it rolls the create back (frees the inode, lowers /x's entry count) and
dies right after (`create.undone`), before the victim's lane is cleared.
A third host (this one) recovers both.

The roll-back used to carry no marks: the third host ran it again and
lowered /x's entry count a second time (a freed record could be freed
twice as well).  /x, which still holds `keep`, then counted no entry:
rmdir("/x") succeeded on a directory with a file in it.  Found by the
linearizability checker with crash points (docs/lincheck.md: a name left
naming a freed inode after a recoverer died).

The link roll-back had the same gap: a linker that died after raising
the count (`link.nlink_raised`), recovered twice, lost a second link: its
source, still named, was freed.
"""

import errno
import os
import subprocess
import sys
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

SIZE = 16 * env.MiB
LEASE_MS = 500

# the dead host's call, where it dies, where its recoverer dies
VICTIMS = {
    "create": ('r.write_file("/x/new", b"n" * 100)',
               "create.inode_published", "create.undone"),
    "link": ('r.link("/x/keep", "/x/new")', "link.nlink_raised",
             "link.undone"),
}

RECOVERER = cl.HOST_SCRIPT + r'''
for _ in range(200):    # until the creator is recovered (we die in it)
    r.reclaim()
    time.sleep(0.05)
'''


def run_victim(region, script, point):
    log = region + "." + point
    venv = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB, DAXFS_CRASH_AT=point,
                DAXFS_CRASH_LOG=log)
    v = subprocess.run([sys.executable, "-c", script, region,
                        os.path.join(cl.REPO, "python")], env=venv,
                       capture_output=True, text=True, timeout=120)
    died = open(log).read().split() if os.path.exists(log) else []
    if os.path.exists(log):
        os.unlink(log)
    assert v.returncode == -9, "%s: %s %s" % (point, v.returncode,
                                              v.stderr[-2000:])
    assert died and died[0] == point


def others_recovered(r):
    return all(h["state"] in ("recovered", "free")
               for h in r.info()["hosts"] if not h["self"])


@pytest.fixture
def region():
    yield from env.lease_region("crtwice", SIZE, LEASE_MS)


@pytest.mark.parametrize("victim", sorted(VICTIMS))
def test_rollback_after_recoverer_died(crash_build, region, victim):
    call, point, undone = VICTIMS[victim]
    with daxfs.Region(region) as r:
        r.mkdir("/x")
        r.write_file("/x/keep", b"k" * 100)
    run_victim(region, cl.HOST_SCRIPT + call + "\n", point)
    time.sleep(LEASE_MS / 1000 * 1.5)
    run_victim(region, RECOVERER, undone)
    with daxfs.Region(region) as r:
        for _ in range(600):
            r.reclaim()
            if others_recovered(r):
                break
            time.sleep(0.05)
        assert others_recovered(r), r.info()["hosts"]
        assert r.listdir("/x") == ["keep"]
        assert r.read_file("/x/keep") == b"k" * 100
        assert r.lstat("/x/keep").st_nlink == 1
        with pytest.raises(OSError) as e:
            r.rmdir("/x")
        assert e.value.errno == errno.ENOTEMPTY
    code, out = env.fsck(region, "-n")
    assert code == 0, out
