"""A host shut down in the middle of its work leaves nothing for fsck
(docs/kernel.md "Shutdown", docs/recovery.md "Shutdown: whole ops only").

FS_IOC_SHUTDOWN (daxfs.ko) and daxfs_region_shutdown (libdaxfs) stop a host
as if it had crashed: its slot is recovered by the next host.  Unlike a
crash, the host is still running, so the ops in flight run to their end
and only whole ops are left behind.  xfstests' generic/388 (50 shutdowns
under fsstress) found the opposite: a shutdown stopped each op in flight
at its next fence check, as if declared dead there, which left the
residual windows of a real crash (a directory node allocated and not yet
linked, an inode whose nlink was marked and not yet dropped) for fsck.

Each run here shuts a victim host (tests/crashlib.py `shut_victim`, the
crash build with DAXFS_CRASH_STOP=shutdown) down at one place: a named
protocol point, or the Nth fence check of its workload.  The victim's
first call that then fails (EIO) ends its workload, and its close gives
the slot up DEAD.  Then this process joins, recovers the slot, and checks:

  * the victim's directory is the model after the ops logged complete, or
    (the one in flight) after that one too, as in test_crash.py;
  * `fsck.daxfs -n` is clean with nothing to repair: no leak, no count
    high, the pool used exactly by what is reachable.
"""

import json
import subprocess

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

LEASE_MS = 300
SIZE = 48 * env.MiB
NOPS = 400
# Fence checks of the seed-21 workload to shut down at, spread over its
# whole length: it makes about 24,000 (the 23,000th comes in op 350 or so;
# each run asserts that its check came).
FENCE_HITS = [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597,
              2584, 4181, 6765, 10946, 17711, 20000, 23000]


@pytest.fixture
def region():
    path = env.region_path("shutdown")
    yield path
    for suffix in ("", ".log", ".points"):
        env.remove(path + suffix)


def fsck_n(path):
    res = subprocess.run([env.tool("fsck.daxfs"), "-n", "--json", path],
                         capture_output=True, text=True, timeout=120)
    return res.returncode, json.loads(res.stdout)


def read_shut_log(logpath):
    """read_log(), and the op whose call failed after the shutdown."""
    done, inflight, finished = cl.read_log(logpath)
    failed = None
    with open(logpath) as f:
        for ln in f.read().split("\n"):
            if ln.startswith("S "):
                failed = int(ln[2:])
    return done, inflight, finished, failed


def shut_run(path, at, seed=21):
    """One victim shut down at `at`; returns where it stopped (None: the
    point never came and the workload ended whole)."""
    env.mkfs(path, SIZE, lease_ms=LEASE_MS)
    ops = cl.gen_ops(seed, NOPS, "/v")
    for suffix in (".log", ".points"):
        env.remove(path + suffix)
    p = cl.spawn_victim(path, path + ".log", seed, NOPS, "/v", at,
                        crash_log=path + ".points", stop="shutdown")
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, "victim: %s %s" % (p.returncode, err.decode()[-3000:])
    done, inflight, finished, failed = read_shut_log(path + ".log")
    assert finished, "the victim did not close its region"
    try:
        with open(path + ".points") as f:
            reached = f.read().split()
    except FileNotFoundError:
        reached = []
    if not reached:
        assert failed is None and done == NOPS
        return None
    # the shutdown refuses every later op: the workload ends early, unless
    # it came after the last op (in the final reclaim, or in the close)
    if failed is None:
        assert done == NOPS, "no call failed after the shutdown at %s" % at
    else:
        assert inflight == failed
    with daxfs.Region(path) as r:
        r.reclaim()
        states = [h["state"] for h in r.info()["hosts"] if not h["self"]]
        assert "alive" not in states, states
        cl.check_victim(r, ops, done, inflight)
    code, rep = fsck_n(path)
    assert code == 0, "fsck -n after a shutdown at %s (op %r failed): %s" % (
        at, failed, rep["problems"][:5])
    s = rep["summary"]
    assert s["leaked_bytes"] == 0, s
    assert s["used_bytes"] == s["reachable_bytes"] + s["limbo_bytes"] + s["batch_bytes"], s
    return reached[0]


@pytest.mark.parametrize("point", cl.POINTS)
def test_shutdown_at_point(crash_build, region, point):
    """Shut down at a protocol step: the op in flight completes."""
    assert shut_run(region, point + ":1") == point, "point %s never reached" % point


@pytest.mark.parametrize("nth", FENCE_HITS)
def test_shutdown_at_fence(crash_build, region, nth):
    """Shut down just before the nth fence check: the op goes through it."""
    assert shut_run(region, "fence:%d" % nth) == "fence"

