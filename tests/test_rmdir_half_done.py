"""Meeting a half-done rmdir (docs/namespace.md): a host's rmdir marked the
directory DEAD and has not removed its name yet, because it died there
(the crash point `rmdir.dead`, SIGKILL) or is merely slow (stopped there,
DAXFS_CRASH_STOP).  Found by the linearizability checker with random crash
points (docs/lincheck.md): rename(d, ...) said ENOENT (the directory is
DEAD) while mkdir(d) then said EEXIST (the name is there), and no point for
the rmdir explains both.

Until the name is gone the directory is still there for everyone: an
operation that would fail because of the DEAD mark waits for the rmdir to
finish (a dead host's is rolled forward by its recovery), so that when it
answers ENOENT, the name is gone too and mkdir(d) succeeds.
"""

import errno
import os
import signal
import subprocess
import sys
import threading

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

SIZE = 16 * env.MiB
# dead: short enough that the survivor's wait (until it declares the victim
# dead and recovers it) stays short, long enough that without the fix the
# survivor's three calls all come before the victim expires.
DEAD_LEASE_MS = 2000
# stopped: far longer than the test, nobody declares the victim dead
STOPPED_LEASE_MS = 60000
# how long the survivor's call gets to return while the victim is stopped
# (only the old code returns; the fixed code waits for the rmdir)
STOPPED_SECONDS = 1.5

VICTIM = r'''
import sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
r.rmdir("/x/d")
r.close()
'''

# what the survivor does to the half-removed /x/d; each must fail ENOENT
OPS = {
    "rename": lambda r: r.rename("/x/d", "/x/e"),
    "rmdir": lambda r: r.rmdir("/x/d"),
    "mkdir-inside": lambda r: r.mkdir("/x/d/sub"),
}


@pytest.fixture(params=["dead", "stopped"])
def half_done(request, crash_build):
    """A region where a victim host's rmdir of /x/d stopped at rmdir.dead:
    yields (region path, victim process or None when it died)."""
    mode = request.param
    lease = DEAD_LEASE_MS if mode == "dead" else STOPPED_LEASE_MS
    gen = env.lease_region("rmdirhalf", SIZE, lease)
    path = next(gen)
    points = path + ".points"
    with daxfs.Region(path) as r:
        r.mkdir("/x")
        r.mkdir("/x/d")
    venv = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB, DAXFS_CRASH_AT="rmdir.dead",
                DAXFS_CRASH_LOG=points)
    if mode == "stopped":
        venv["DAXFS_CRASH_STOP"] = "1"
    v = subprocess.Popen([sys.executable, "-c", VICTIM, path,
                          os.path.join(cl.REPO, "python")], env=venv,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    cl.wait_point(v, points, "rmdir.dead")
    if mode == "dead":
        assert v.wait(timeout=60) == -signal.SIGKILL
        v = None
    try:
        yield path, v
    finally:
        if v is not None and v.poll() is None:
            v.kill()
            v.wait()
        next(gen, None)


def expect_enoent(fn, r):
    with pytest.raises(OSError) as e:
        fn(r)
    assert e.value.errno == errno.ENOENT, e.value


@pytest.mark.parametrize("op", sorted(OPS))
def test_half_done_rmdir(half_done, op):
    path, victim = half_done
    with daxfs.Region(path) as r:
        assert r.lstat("/x/d")      # DEAD, still named
        if victim is None:
            # the victim died: the call waits for its recovery
            expect_enoent(OPS[op], r)
        else:
            res = {}

            def call():
                try:
                    OPS[op](r)
                    res["err"] = 0
                except OSError as e:
                    res["err"] = e.errno

            t = threading.Thread(target=call)
            t.start()
            t.join(STOPPED_SECONDS)
            if not t.is_alive():
                # answered while the rmdir was still half done: then the
                # name must be gone already (it is not: the victim is
                # stopped before removing it)
                assert res["err"] == errno.ENOENT, res
                expect_enoent(lambda r: r.lstat("/x/d"), r)
            os.kill(victim.pid, signal.SIGCONT)
            t.join(120)
            assert not t.is_alive()
            assert res["err"] == errno.ENOENT, res
            assert victim.wait(timeout=120) == 0, victim.communicate()
        # the rmdir took effect, whole: the name is gone, and free
        expect_enoent(lambda r: r.lstat("/x/d"), r)
        assert r.listdir("/x") == []
        r.mkdir("/x/d")
        assert r.listdir("/x") == ["d"]
    code, out = env.fsck(path, "-n")
    assert code == 0, out
