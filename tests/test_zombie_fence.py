"""A host stopped at its Nth fence check, declared dead and recovered while
it is stopped, its host slot joined by a new host that works there, and
then continued: a zombie (docs/hosts.md "Fencing").

test_crash_fence.py kills the host at the same checks; a kill ends it
there.  A host paused there (SIGSTOP, a VM paused, a long GC) runs on:
its check now finds the slot gone and the op must end at once with
ESTALE, and whatever it does on its way out (the op's undo, the library's
error path, its close) must touch nothing of what recovery settled or of
what the heir now owns in the slot: its lanes, its allocation batch, its
limbo chain, its pin column.  A store there shows as a double free, a
page in two files, or a claim nobody releases.

For N spread over the 400-op workload of test_crash.py: the heir's files
read back, the victim's directory is the model's (crashlib.check_victim:
the op in flight happened or not), and fsck -n finds only what a kill at
the same check leaves (test_crash_fence.residual).

What this kind of test is for: daxfs.ko's stale-unpin VM test found a
double free on the page stack (CI, 2026-11-30) and a cache claim left
PENDING by a resumed zombie (core/pcache.c fill_owned).
"""

import os
import signal
import time

import pytest

from helpers import env
import crashlib as cl
from test_crash_fence import NOPS, SEED, SIZE, residual
from test_shutdown import fsck_n, region  # noqa: F401 (a fixture)

daxfs = env.daxfs

# longer than test_crash_fence's 300 ms: the continued victim works on as
# a new host beside the heir and must not declare it dead when this
# process stalls on a loaded machine
LEASE_MS = 1000
# the workload makes about 26,000 fence checks (tests/test_shutdown.py),
# extra_ops() 4,901 (2026-12-02: a write looks at the fence per 64 KiB
# chunk of its copy, not per page; it was 5,883).  A case past the end
# fails: a workload that shrank must get its hits spread again, not lose
# them to skips.
FENCE_HITS = list(range(1, 22000, 1109))
FENCE_HITS_EXTRA = list(range(1, 4900, 122))
# the fence checks of a free, a retire and a hold of pages ("fence.*": about
# 700 in either workload): each says -ESTALE when fenced, and its caller
# must then store nothing more (a record it would touch next may be one
# recovery freed and the heir reuses)
# (DAXFS_ZOMBIE_STRIDE=1: every one, about 30 minutes per workload)
FREEING_HITS = list(range(1, 760,
                          int(os.environ.get("DAXFS_ZOMBIE_STRIDE", "18"))))
FREEING_POINTS = ("fence.free", "fence.retire", "fence.hold")
# the named points that extra_ops() reaches and gen_ops() does not
EXTRA_POINTS = {"alloc.run_carved", "alloc.run_held", "write.run_publishing", "write.run_published",
                "radix.run_splitting", "xattr.page", "xattr.built",
                "xattr.published", "xattr.retire", "tmpfile.published",
                "tmpfile.held", "tmpfile.orphan", "setflags.set",
                "falloc.punch_zeroed",
                "falloc.zero_filled", "falloc.zeroed_unmarked"}
HEIR_FILES = 24


def _stopped(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


def _wait_stopped(p, points):
    """True once p stopped itself at its point; False if it finished."""
    end = time.monotonic() + 120
    while time.monotonic() < end:
        if p.poll() is not None:
            return False
        if os.path.exists(points) and open(points).read().strip() and \
                _stopped(p.pid):
            return True
        time.sleep(0.01)
    raise AssertionError("victim neither stopped nor finished")


def _heir_body(i, gen):
    return (b"heir %d gen %d " % (i, gen)) * (300 * (i % 5) + 7)


def _heir_work(heir, gen):
    """Allocates and frees in the slot the victim held: new files (pages
    from the slot's batch), rewrites and unlinks (limbo), a reclaim."""
    for i in range(HEIR_FILES):
        heir.write_file("/heir/f%d" % i, _heir_body(i, gen))
    for i in range(0, HEIR_FILES, 3):
        heir.unlink("/heir/f%d" % i)
    heir.reclaim()
    for i in range(0, HEIR_FILES, 3):
        heir.write_file("/heir/f%d" % i, _heir_body(i, gen))


def _zombie(region, at, extra=False, must_reach=False):
    """The whole story for a victim stopped at crash point `at`; extra:
    the crashlib.extra_ops() workload, which no model replays (fsck and
    the heir check it); must_reach: the workload must get there (a fence
    check of a list spread over the workload's count), else it fails."""
    env.mkfs(region, SIZE, lease_ms=LEASE_MS)
    seed = -1 if extra else SEED
    ops = cl.extra_ops("/v") if extra else cl.gen_ops(SEED, NOPS, "/v")
    points = region + ".points"
    p = cl.spawn_victim(region, region + ".log", seed, NOPS, "/v", at,
                        crash_log=points, stop="1", role="zombie_victim")
    try:
        if not _wait_stopped(p, points):
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err.decode()[-3000:]
            assert not must_reach, (
                "the workload never reached %s: it makes fewer fence checks "
                "than this list assumes; spread the list over its count" % at)
            pytest.skip("the workload never reached %s" % at)
        with daxfs.Region(region) as r:
            slot = [h["slot"] for h in r.info()["hosts"] if not h["self"]]
            states = cl.wait_recovered(r, LEASE_MS)
            assert "recovered" in states and "alive" not in states, states
            with daxfs.Region(region) as heir:
                assert heir.info()["self_slot"] == slot[0], (slot, heir.info())
                heir.makedirs("/heir")
                _heir_work(heir, 1)
                os.kill(p.pid, signal.SIGCONT)
                _, err = p.communicate(timeout=120)
                assert p.returncode == 0, err.decode()[-3000:]
                _heir_work(heir, 2)
                for i in range(HEIR_FILES):
                    assert heir.read_file("/heir/f%d" % i) == _heir_body(i, 2), i
                mine = [h for h in heir.info()["hosts"] if h["self"]][0]
                assert mine["state"] == "alive", mine
            done, inflight, finished = cl.read_log(region + ".log")
            assert finished, "the victim did not close"
            if not extra:
                cl.check_victim(r, ops, done, inflight)
            r.reclaim()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    code, rep = fsck_n(region)
    bad = [q for q in rep["problems"] if not residual(q)]
    with open(points) as f:
        where = " ".join(f.read().split())
    assert not bad, "stopped at %s (%s) in op %r %r: %s" % (
        at, where, inflight, ops[inflight] if inflight is not None else None,
        bad[:5])
    if code:
        assert env.fsck(region, "-y")[0] == 1
        assert env.fsck(region, "-n")[0] == 0
    return where


@pytest.mark.parametrize("nth", FENCE_HITS)
def test_zombie_at_fence(crash_build, region, nth):
    _zombie(region, "fence:%d" % nth, must_reach=True)


@pytest.mark.parametrize("point", sorted(cl.core_points() - {"fence"}))
def test_zombie_at_point(crash_build, region, point):
    """Stopped between two steps of a protocol (the named points of
    test_crash.py): it runs on to its next fence check."""
    _zombie(region, point)


@pytest.mark.parametrize("nth", FENCE_HITS_EXTRA)
def test_zombie_extra_at_fence(crash_build, region, nth):
    """The protocols the 400-op workload leaves out (crashlib.extra_ops)."""
    _zombie(region, "fence:%d" % nth, extra=True, must_reach=True)


@pytest.mark.parametrize("point", sorted(EXTRA_POINTS))
def test_zombie_extra_at_point(crash_build, region, point):
    _zombie(region, point, extra=True)


@pytest.mark.parametrize("extra", [False, True], ids=["ops", "extra"])
@pytest.mark.parametrize("nth", FREEING_HITS)
def test_zombie_at_freeing(crash_build, region, nth, extra):
    """Stopped right before the fence check of its Nth free, retire or
    page hold, in either workload: the call says ESTALE and its caller
    stops (a caller that went on lowered a freed record's block count)."""
    where = _zombie(region, "fence.*:%d" % nth, extra=extra)
    assert where.split()[0] in FREEING_POINTS, where
