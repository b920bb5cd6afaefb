"""A rename waiting for a half-done rmdir (docs/namespace.md, "Waiting for
an rmdir").

A victim host's rmdir of /x/d marked the directory DEAD and has not
removed its name yet: its thread waits at the crash point `rmdir.dead`
(DAXFS_CRASH_STOP=thread) while the host's heartbeat goes on, so its lease
never runs out -- a live host that is merely slow, as on a loaded machine.
Another host renames /x/d (the source) or renames an empty /x/e over it
(the target).  The rename must wait for that rmdir: it answers only once
the name is gone (source: ENOENT; target: success, e is now d), whenever
that is.  The victim's thread is held eight leases, then it either goes on
(it finishes its rmdir) or its whole process is killed (the rename's host
sees its lease run out and recovers it, which rolls the rmdir forward).

Before the fix the rename gave up after four leases of its own clock with
EAGAIN, an answer no serial order gives (the rmdir either happened or not):
the threaded crash-point round 6059 of the checker (docs/lincheck.md).
"""

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

SIZE = 16 * env.MiB
# the renamer's old bound was four leases; the victim is held for eight
LEASE_MS = 400
HOLD_S = 8 * LEASE_MS / 1000

VICTIM = cl.HOST_SCRIPT + r'''
import json
try:
    r.rmdir("/x/d")
    res = 0
except OSError as e:
    res = e.errno
print(json.dumps({"rmdir": res}))
r.close()
'''

# (what the survivor does, its answer once the rmdir is done, the names
# left in /x)
OPS = {
    "source": (lambda r: r.rename("/x/d", "/x/e"), errno.ENOENT, []),
    "target": (lambda r: r.rename("/x/e", "/x/d"), 0, ["d"]),
}


@pytest.mark.parametrize("end", ["resume", "kill"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_rename_waits_for_rmdir(crash_build, op, end):
    fn, answer, left = OPS[op]
    gen = env.lease_region("rnwait", SIZE, LEASE_MS)
    path = next(gen)
    points = path + ".points"
    victim = None
    try:
        with daxfs.Region(path) as r:
            r.mkdir("/x")
            r.mkdir("/x/d")
            if op == "target":
                r.mkdir("/x/e")
        venv = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB,
                    DAXFS_CRASH_AT="rmdir.dead", DAXFS_CRASH_STOP="thread",
                    DAXFS_CRASH_LOG=points)
        victim = subprocess.Popen([sys.executable, "-c", VICTIM, path,
                                   os.path.join(cl.REPO, "python")],
                                  env=venv, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        cl.wait_point(victim, points, "rmdir.dead")
        with daxfs.Region(path) as r:
            assert r.lstat("/x/d")      # DEAD, still named
            res = {}

            def call():
                try:
                    fn(r)
                    res["err"] = 0
                except OSError as e:
                    res["err"] = e.errno

            t = threading.Thread(target=call)
            t0 = time.monotonic()
            t.start()
            t.join(HOLD_S)
            if not t.is_alive():
                # only if the victim was declared dead meanwhile (its
                # heartbeat starved past a lease) and recovered: then the
                # rmdir is done and the answer is the one after it
                assert res["err"] == answer, (res, time.monotonic() - t0)
            if end == "resume":
                os.kill(victim.pid, signal.SIGUSR1)
            else:
                victim.kill()
            t.join(60)
            assert not t.is_alive()
            assert res["err"] == answer, res
            out, err = victim.communicate(timeout=60)
            if end == "resume":
                assert victim.returncode == 0, err[-2000:]
                # its rmdir took effect (or, declared dead while held,
                # was rolled forward by recovery: ESTALE)
                assert json.loads(out)["rmdir"] in (0, errno.ESTALE), out
            else:
                assert victim.returncode == -signal.SIGKILL
            victim = None
            assert sorted(r.listdir("/x")) == left
        code, out = env.fsck(path, "-n")
        assert code == 0, out
    finally:
        if victim is not None and victim.poll() is None:
            victim.kill()
            victim.wait()
        next(gen, None)


# One host, two threads: the rmdir's thread waits at rmdir.dead, another
# thread of the same host renames /x/d.  Its owner is ours and alive.
SAME_HOST = cl.HOST_SCRIPT + cl.THREADS_SCRIPT + r'''
td = threading.Thread(target=call, args=("rmdir", r.rmdir, "/x/d"))
td.start()
res["point"] = first_point()
tr = threading.Thread(target=call, args=("rename", r.rename, "/x/d", "/x/e"))
tr.start()
tr.join(float(sys.argv[3]))
res["early"] = res.get("rename")        # answered while the rmdir waits
resume(td, tr)                          # the rmdir goes on
res["final"] = sorted(r.listdir("/x"))
done()
'''


def test_rename_waits_for_rmdir_same_host(crash_build):
    gen = env.lease_region("rnwaitsh", SIZE, LEASE_MS)
    path = next(gen)
    try:
        with daxfs.Region(path) as r:
            r.mkdir("/x")
            r.mkdir("/x/d")
        res = cl.run_threads(SAME_HOST, path, "rmdir.dead", HOLD_S)
        assert res["early"] is None, res    # it waited for the rmdir
        assert res["rmdir"] == 0 and res["rename"] == errno.ENOENT, res
        assert res["final"] == [], res
        code, out = env.fsck(path, "-n")
        assert code == 0, out
    finally:
        next(gen, None)


# A rename of /s over /t stops in its copy-up of the base directory /s
# (ov_insert.value: after it checked that /t is a writable directory, before
# it marks /t MOVING); meanwhile an rmdir of /t runs to its end and frees it.
TARGET_FREED = cl.HOST_SCRIPT + cl.THREADS_SCRIPT + r'''
t = threading.Thread(target=call, args=("rename", r.rename, "/s", "/t"))
t.start()
res["point"] = first_point()
call("rmdir", r.rmdir, "/t")
resume(t)
res["final"] = sorted(r.listdir("/"))
done()
'''


def test_rename_target_freed_meanwhile(crash_build, tmp_path):
    """A rename's target directory removed and freed between the rename's
    look at it and its MOVING mark: the rename must move the source there
    (the target is gone: a serial order with the rmdir first), not answer
    ENOENT for a source that was there all along (the threaded crash-point
    round 17163 of seed 228, docs/lincheck.md; ENOENT before the fix)."""
    (tmp_path / "tree" / "s").mkdir(parents=True)
    path = env.region_path("rntfreed")
    try:
        subprocess.run([env.tool("mkfs.daxfs"), "-q", "-f", "-s", str(SIZE), "--lease-ms",
                        "1500", "--source", str(tmp_path / "tree"), path], check=True)
        with daxfs.Region(path) as r:
            r.mkdir("/t")
        res = cl.run_threads(TARGET_FREED, path, "ov_insert.value")
        assert res["rmdir"] == 0 and res["rename"] == 0, res
        assert res["final"] == ["t"], res
        code, out = env.fsck(path, "-n")
        assert code == 0, out
    finally:
        for p in (path, path + ".points"):
            env.remove(p)
