"""A host killed at its Nth fence check, for N spread over a whole workload
(docs/recovery.md "Residual windows", docs/hosts.md "Fencing").

The named crash points of test_crash.py sit between protocol steps.  The
fence checks (core/internal.h daxfs_fenced, the crash build's point
"fence") sit right before every publishing CAS and store, inside every
step, and in the long loops (a file's data freed page by page, a trie
descent, an open set walked).  A kill there is a crash in the middle of a
step: where a host declared dead while stopped would stop too.

Killed at 30 fence checks spread over the 400-op workload of test_crash.py,
the victim's directory must be the model's (crashlib.check_victim), and
what fsck -n still finds after recovery must be one of the residual
windows docs/recovery.md names, each at its smallest: one object or page
leaked (an allocation not yet named), a count one too high (an increment
not yet marked; an unlink between its CAS and its mark), pages past EOF
of a dead write.  Then fsck -y repairs it and -n is clean.

What this kind of test found (2026-11-29), each fixed:
  * a host killed while freeing an unlinked file's data (a window as long
    as the file: the free claim, the ORPHAN mark, was taken) left the
    inode unnamed and never freed: recovery now finishes the free
    (daxfs_orphan_settle_dead); it was half of all these runs;
  * an rmdir killed inside the directory's free (its step 5, counted as
    done) left the record and trie: recovery at step 5 finishes the free;
  * a renamer killed after taking the rename claim and before its intent
    left the claim to fsck: recovery now releases it;
  * a renamer killed among its step-0 pins left the link counts high:
    each pin is marked, and recovery undoes the marked ones.
"""

import collections

import pytest

from helpers import env
import crashlib as cl
from test_shutdown import fsck_n, region  # noqa: F401 (a fixture)

daxfs = env.daxfs

LEASE_MS = 300
SIZE = 48 * env.MiB
NOPS = 400
SEED = 21
# the workload makes about 26,000 fence checks (25,944 on 2026-12-02;
# tests/test_shutdown.py)
FENCE_HITS = list(range(1, 22000, 733))

# residual codes and how far from right each may be (have - want)
RESIDUAL = {
    "leak": (1, 4096),		# bytes: one object or one page
    "beyond-eof": None,		# a dead write's pages past EOF
    "nlink": (1, 1),
    "dir-count": (1, 1),
    "blocks": (1, 1),		# a radix insert's CAS before its count
    # pages taken from the batch counted in use before the hold names
    # them (core/alloc.c batch_take_held): at most one take, 64 pages
    "used-bytes": (1, 64 * 4096),
}


def residual(p):
    """Is fsck problem p one of the residual windows, at its smallest?"""
    code, have, want = p["code"], p.get("have", 0), p.get("want", 0)
    if code == "orphan":
        # a name gone, its link not yet dropped (unlink step 1); never
        # an inode at nlink 0 left unfreed
        return have == 1 and want == 0
    if code not in RESIDUAL:
        return False
    bound = RESIDUAL[code]
    return bound is None or bound[0] <= have - want <= bound[1]


@pytest.fixture(scope="module")
def tally():
    seen = collections.Counter()
    yield seen
    print("\nresidual windows found: %s" % dict(seen))


@pytest.mark.parametrize("nth", FENCE_HITS)
def test_killed_at_fence(crash_build, region, tally, nth):
    env.mkfs(region, SIZE, lease_ms=LEASE_MS)
    ops = cl.gen_ops(SEED, NOPS, "/v")
    p = cl.spawn_victim(region, region + ".log", SEED, NOPS, "/v", "fence:%d" % nth,
                        crash_log=region + ".points")
    _, err = p.communicate(timeout=120)
    done, inflight, finished = cl.read_log(region + ".log")
    # FENCE_HITS is spread over the workload's count: a case past its end
    # means the workload shrank and the list must be spread again
    assert not finished, "the workload made fewer than %d fence checks" % nth
    assert p.returncode == -9, "victim: %s %s" % (p.returncode, err.decode()[-3000:])
    with daxfs.Region(region) as r:
        states = cl.wait_recovered(r, LEASE_MS)
        assert "recovered" in states and "alive" not in states, states
        cl.check_victim(r, ops, done, inflight)
    code, rep = fsck_n(region)
    bad = [q for q in rep["problems"] if not residual(q)]
    assert not bad, "killed at fence %d in op %r %r: %s" % (
        nth, inflight, ops[inflight] if inflight is not None else None, bad[:5])
    tally.update(q["code"] for q in rep["problems"])
    if code:
        assert env.fsck(region, "-y")[0] == 1
        assert env.fsck(region, "-n")[0] == 0
