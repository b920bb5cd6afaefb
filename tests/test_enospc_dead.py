"""A dead host must not cause ENOSPC (docs/reclaim.md "When the pool is
empty"), even after it was recovered.

A victim host (the crash build of libdaxfs) SIGKILLs itself inside an
operation, so its lane holds the global epoch back until its lease runs
out.  Meanwhile a live host A writes and deletes files: everything it
deletes waits in limbo on A's own chain.  Then A goes idle (alive, its
heartbeat running, no operations), the victim's lease runs out, and a
host B needs more than the free space.  The space A's garbage holds is
reclaimable as soon as the victim is recovered; B must get it, not
ENOSPC.  (tests/test_kill.py hits this at random: a worker fills the
pool behind a killed one while another is descheduled on a loaded
machine.)
"""

import os
import time

import pytest

from helpers import env
import crashlib as cl
from test_enospc_wait import kill_victim_mid_op

daxfs = env.daxfs

LEASE_MS = 8000  # A's churn ends well within it, even on a loaded machine
HANG_S = 120  # far above a lease: only catches a hang
SIZE = 16 * env.MiB
CHUNK = 1 * env.MiB


@pytest.fixture
def region():
    for path in env.lease_region("enospc-dead", SIZE, LEASE_MS):
        yield path
        env.remove(path + ".log")  # the victim's (kill_victim_mid_op)


def wait_expired(r):
    """Until r's host has timed the victim's lease out (info() observes)."""
    t0 = time.monotonic()
    while not any(h["expired"] for h in r.info()["hosts"]
                  if h["pid"] != os.getpid()):
        assert time.monotonic() - t0 < HANG_S, r.info()["hosts"]
        time.sleep(0.1)


def test_idle_host_garbage_behind_dead_host(crash_build, region):
    kill_victim_mid_op(region)
    with daxfs.Region(region) as a, daxfs.Region(region) as b:
        # b times the victim's silence from now on (docs/hosts.md)
        free0 = a.statfs()["free_bytes"]
        churn = free0 // CHUNK - 4  # garbage: all but 4 MiB of the room
        for i in range(churn):
            a.write_file("/churn", cl.data("c%d" % i, CHUNK))
            a.unlink("/churn")
        held = free0 - a.statfs()["free_bytes"]
        # the dead victim holds A's deletes in limbo: nothing came back
        assert held >= (churn - 1) * CHUNK, (held, churn)
        # a is idle from here on; wait out the victim's lease on b's clock
        wait_expired(b)
        want = b.statfs()["free_bytes"] + 4 * CHUNK
        body = cl.data("big", want)
        b.write_file("/big", body)
        assert b.read_file("/big") == body
        assert a.read_file("/big") == body
        victim = [h for h in b.info()["hosts"] if h["pid"] != os.getpid()]
        assert all(h["state"] != "alive" for h in victim), victim
    code, out = env.fsck(region, "-n")
    assert code == 0, out
