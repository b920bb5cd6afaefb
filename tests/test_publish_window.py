"""A creator or linker that dies between its "linking" mark and the CAS that
publishes its name, or just after that CAS (docs/recovery.md, "Namespace
protocols": create step 5, link step 3).

Recovery must tell the two apart.  Before, it could not: a leaf absent from
the directory might never have been published, or have been published and
taken out since by another host's unlink, so it did nothing and left the
counts one too high for fsck (the directory's entry count; for a link, the
inode's nlink too).  Every CAS that takes a leaf out of a directory marks
it REMOVED first, so recovery now asks daxfs_dir_published(): there, or
marked, means published (nothing to undo); neither means never published
(roll back).

Each case kills a victim host (the crash build) in create("/x/new") or
link("/x/keep", "/x/new") at a crash point of core/dir.c:

  * `dir.linking`: marked, not published: recovery rolls back, and fsck -n
    finds nothing at all (it found the counts high before);
  * `dir.linked`: published, not yet marked done; then this host unlinks
    /x/new before the victim is recovered: recovery must not roll back (a
    roll-back would lower the counts a second time and free a leaf twice).
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
LEASE_MS = 2000	# the unlink below comes well before the victim is declared dead

CALLS = {
    "create": 'r.write_file("/x/new", b"n" * 100)',
    "link": 'r.link("/x/keep", "/x/new")',
}


@pytest.fixture
def region():
    yield from env.lease_region("pubwin", SIZE, LEASE_MS)


def run_victim(region, call, point):
    log = region + ".points"
    env.remove(log)
    venv = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB, DAXFS_CRASH_AT=point + ":1",
                DAXFS_CRASH_LOG=log)
    v = subprocess.run([sys.executable, "-c", cl.HOST_SCRIPT + call + "\n", region,
                        os.path.join(cl.REPO, "python")], env=venv,
                       capture_output=True, text=True, timeout=120)
    died = open(log).read().split() if os.path.exists(log) else []
    env.remove(log)
    assert v.returncode == -9, "%s: %s %s" % (point, v.returncode, v.stderr[-2000:])
    assert died and died[0] == point


def recover(r):
    for _ in range(600):
        r.reclaim()
        if all(h["state"] in ("recovered", "free")
               for h in r.info()["hosts"] if not h["self"]):
            return
        time.sleep(0.05)
    raise AssertionError("victim not recovered: %s" % r.info()["hosts"])


def check_x(r, region):
    assert r.listdir("/x") == ["keep"]
    assert r.read_file("/x/keep") == b"k" * 100
    assert r.lstat("/x/keep").st_nlink == 1
    r.unlink("/x/keep")
    r.rmdir("/x")			# the entry count is exact: 0
    with pytest.raises(OSError) as e:
        r.lstat("/x")
    assert e.value.errno == errno.ENOENT


def run_case(region, call, point, unlink_first):
    """/x holds keep; the victim dies at point in CALLS[call]; this host
    unlinks /x/new first if asked, then recovers it; fsck -n finds
    nothing and /x holds keep alone, its counts exact."""
    with daxfs.Region(region) as r:
        r.mkdir("/x")
        r.write_file("/x/keep", b"k" * 100)
    run_victim(region, CALLS[call], point)
    if unlink_first:
        with daxfs.Region(region) as r:
            # another host takes the name out before the victim is recovered
            r.unlink("/x/new")
    time.sleep(LEASE_MS / 1000 * 1.5)
    with daxfs.Region(region) as r:
        recover(r)
    code, out = env.fsck(region, "-n")
    assert code == 0, out
    with daxfs.Region(region) as r:
        check_x(r, region)


@pytest.mark.parametrize("call", sorted(CALLS))
def test_dead_before_publish_rolls_back(crash_build, region, call):
    run_case(region, call, "dir.linking", False)


@pytest.mark.parametrize("call", sorted(CALLS))
def test_dead_after_publish_then_unlinked_is_kept(crash_build, region, call):
    run_case(region, call, "dir.linked", True)
