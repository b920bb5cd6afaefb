"""A dead creator's roll-back, when its recoverer dies too
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

CREATOR = cl.HOST_SCRIPT + r'''
r.write_file("/x/new", b"n" * 100)
'''

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


def test_create_rollback_after_recoverer_died(crash_build, region):
    with daxfs.Region(region) as r:
        r.mkdir("/x")
        r.write_file("/x/keep", b"k" * 100)
    run_victim(region, CREATOR, "create.inode_published")
    time.sleep(LEASE_MS / 1000 * 1.5)
    run_victim(region, RECOVERER, "create.undone")
    with daxfs.Region(region) as r:
        for _ in range(600):
            r.reclaim()
            if others_recovered(r):
                break
            time.sleep(0.05)
        assert others_recovered(r), r.info()["hosts"]
        assert r.listdir("/x") == ["keep"]
        with pytest.raises(OSError) as e:
            r.rmdir("/x")
        assert e.value.errno == errno.ENOTEMPTY
        assert r.read_file("/x/keep") == b"k" * 100
    code, out = env.fsck(region, "-n")
    assert code == 0, out
