"""Rmdir racing a rename of the directory (docs/namespace.md).

A victim host's rmdir of /x/d looks d up and stops (crash point
`rmdir.found`, DAXFS_CRASH_STOP) before it marks the directory DEAD.
Another host renames /x/d to /x/c (a move, an exchange with another empty
directory, or a replace of an empty directory) and that rename completes.
The victim goes on: its DEAD mark succeeds (the rename's MOVING came and
went), on a directory now named c.  It must notice that its name d went
and look again: ENOENT (the rename came first), or, after an exchange,
it removes the directory that d names now.

Found by the linearizability checker with random crash points and links
(docs/lincheck.md, "Crash points with links"): the rmdir marked step 1 and
died; its recovery, finding the leaf of d gone, took that for its own
removal and freed the directory still named c (a name without its inode:
lstat said "directory", create(c/..) ENOENT, rename(c, ..) EUCLEAN, and
fsck found the name dangling).  The test kills the victim at `rmdir.dead`
if it gets there, so that the old code shows exactly that.
"""

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

SIZE = 16 * env.MiB
# short: the survivor waits out the killed victim's lease (old code only)
LEASE_MS = 500

VICTIM = cl.HOST_SCRIPT + r'''
try:
    r.rmdir("/x/d")
except OSError as e:
    sys.exit(e.errno)
sys.exit(0)
'''

# how /x/d is renamed while the rmdir is stopped: (flags, the directories
# made beside d first, the names in /x after the rename and then the
# rmdir, each with the name it had before, and how the victim ends: after
# an exchange, d names the other directory, which the rmdir then removes;
# it dies at that rmdir.dead, and its recovery finishes the removal)
CASES = {
    "move": (0, [], {"c": "d"}, errno.ENOENT),
    "exchange": (daxfs.RENAME_EXCHANGE, ["c"], {"c": "d"}, -signal.SIGKILL),
    "replace": (0, ["c"], {"c": "d"}, errno.ENOENT),
}


def points_of(path):
    if not os.path.exists(path):
        return []
    return open(path).read().split()[::2]


def wait_for(cond, what):
    for _ in range(1200):
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


@pytest.fixture
def region():
    yield from env.lease_region("rmdirmv", SIZE, LEASE_MS)


@pytest.mark.parametrize("case", sorted(CASES))
def test_rmdir_after_rename_of_its_dir(crash_build, region, case):
    flags, beside, expect, rc = CASES[case]
    points = region + ".points"
    with daxfs.Region(region) as r:
        r.mkdir("/x")
        r.mkdir("/x/d")
        d_ino = r.lstat("/x/d").st_ino
        for n in beside:
            r.mkdir("/x/" + n)
        venv = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB,
                    DAXFS_CRASH_AT="rmdir.found,rmdir.dead",
                    DAXFS_CRASH_LOG=points, DAXFS_CRASH_STOP="1")
        v = subprocess.Popen([sys.executable, "-c", VICTIM, region,
                              os.path.join(cl.REPO, "python")], env=venv,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        try:
            cl.wait_point(v, points, "rmdir.found")
            r.rename("/x/d", "/x/c", flags)
            os.kill(v.pid, signal.SIGCONT)
            # the fixed rmdir returns; the old one marks step 1 and stops
            # at rmdir.dead: it dies there
            wait_for(lambda: v.poll() is not None or
                     "rmdir.dead" in points_of(points), "the victim")
            if v.poll() is None:
                v.kill()
                v.wait()
                time.sleep(LEASE_MS / 1000 * 1.5)
                r.reclaim()     # recovers the dead victim
        finally:
            if v.poll() is None:
                v.kill()
                v.wait()
        # the rename came first, whole; the old d is c, alive and usable
        assert sorted(r.listdir("/x")) == sorted(expect)
        for name, was in expect.items():
            st = r.lstat("/x/" + name)
            assert (st.st_ino == d_ino) == (was == "d"), name
            r.mkdir("/x/%s/sub" % name)
            assert r.listdir("/x/" + name) == ["sub"]
        # and the rmdir came after
        assert v.returncode == rc, \
            "rmdir(d) after d was renamed: %s %s" % (v.returncode,
                                                     points_of(points))
    code, out = env.fsck(region, "-n")
    assert code == 0, out
