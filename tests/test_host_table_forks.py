"""Host slots of processes that ended without leaving (docs/hosts.md
"Processes gone").

A fork child that uses a region is a host of its own; one that ends with
_exit() (Python's multiprocessing ends its workers so) or is killed keeps
its slot until its lease runs out.  Before session 55, 64 such children
within a lease filled the host table, and every join on every machine
failed with EBUSY until the leases ran out (237 of 300 children here).  A
joiner that finds the table full now declares dead at once the slots of
this machine's processes that have ended, and recovers them; a slot whose
process still runs is never taken.
"""
import errno
import os
import signal
import subprocess
import sys

import pytest

from helpers import env

daxfs = env.daxfs

FORKS = r"""
import os, sys
import daxfs
r = daxfs.Region(sys.argv[1])
r.write_file("/parent", b"p")
failed = 0
for i in range(int(sys.argv[2])):
    pid = os.fork()
    if pid == 0:
        try:
            r.write_file("/c%d" % (i % 10), b"child %d" % i)
            os._exit(0)
        except OSError:
            os._exit(7)
    failed += os.waitpid(pid, 0)[1] != 0
print("failed", failed)
"""

HOLDER = r"""
import sys, time
import daxfs
r = daxfs.Region(sys.argv[1])
r.write_file("/held%s" % sys.argv[2], b"x")
print("joined", flush=True)
time.sleep(120)
"""


def run_py(prog, *args, environ=None, **kw):
    return subprocess.run([sys.executable, "-c", prog, *args],
                          capture_output=True, text=True, timeout=120,
                          env=environ or dict(os.environ,
                                              PYTHONPATH=env.PYDIR),
                          **kw)


def test_fork_children_that_exit_do_not_fill_the_table(region_path):
    env.mkfs(region_path, 64 * env.MiB, max_hosts=16)
    res = run_py(FORKS, region_path, "100")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "failed 0", res.stdout
    rc, out = env.fsck(region_path, "-y")      # recovers the last ones
    assert rc in (0, 1), out
    rc, out = env.fsck(region_path, "-n")
    assert rc == 0, out
    with daxfs.Region(region_path) as r:
        assert r.read_file("/c9") == b"child 99"


def test_live_processes_keep_their_slots(region_path):
    """A full table of live processes: a join fails with EBUSY (nothing of
    theirs is taken); once one of them is killed, the next join gets its
    slot at once, with its 60 s lease far from run out."""
    env.mkfs(region_path, 64 * env.MiB, max_hosts=4, lease_ms=60000)
    holders = [subprocess.Popen([sys.executable, "-c", HOLDER, region_path,
                                 str(i)], stdout=subprocess.PIPE, text=True,
                                env=dict(os.environ, PYTHONPATH=env.PYDIR))
               for i in range(4)]
    try:
        for p in holders:
            assert p.stdout.readline().strip() == "joined"
        with pytest.raises(OSError) as e:
            daxfs.Region(region_path).close()
        assert e.value.errno == errno.EBUSY, e.value
        for p in holders:
            assert p.poll() is None         # none of them was fenced
        holders[0].send_signal(signal.SIGKILL)
        holders[0].wait()
        with daxfs.Region(region_path) as r:
            assert r.read_file("/held1") == b"x"
    finally:
        for p in holders:
            p.kill()
            p.wait()


def test_hosts_killed_inside_their_join(region_path, crash_build):
    """Hosts killed inside their join, before they stored their process
    identity: no process check can judge their slots, only their leases,
    and a fresh process has watched none.  One that finds the table full
    of them watches it for a lease and a half and gets a slot (the join
    recovers the expired ones).  Before session 60 it failed with EBUSY at
    once, every time, however long they had been dead: lincheck workers
    killed at random stores filled 62 of 64 slots so, and the respawned
    ones never got back in."""
    import crashlib as cl
    env.mkfs(region_path, 64 * env.MiB, max_hosts=4, lease_ms=300)
    for _ in range(4):
        res = run_py("import sys, daxfs; daxfs.Region(sys.argv[1])",
                     region_path,
                     environ=dict(os.environ, PYTHONPATH=env.PYDIR,
                              DAXFS_LIB=cl.CRASH_LIB,
                              DAXFS_CRASH_AT="join.unnamed"))
        assert res.returncode == -signal.SIGKILL, res.stderr
    res = run_py(JOIN_ONCE, region_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "joined", res.stdout
    with daxfs.Region(region_path) as r:
        assert r.read_file("/after") == b"in"
    rc, out = env.fsck(region_path, "-y")      # recovers the other three
    assert rc in (0, 1), out
    rc, out = env.fsck(region_path, "-n")
    assert rc == 0, out


JOIN_ONCE = r"""
import sys
import daxfs
with daxfs.Region(sys.argv[1]) as r:
    r.write_file("/after", b"in")
print("joined")
"""


DAEMON = r"""
import fcntl, os, sys
fd = os.open("/daxfs/pid", os.O_CREAT | os.O_RDWR, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
if os.fork() == 0:
    print("daemon", os.getpid(), flush=True)
    sys.stdin.readline()
    os._exit(0)
os._exit(0)
"""

SECOND = r"""
import fcntl, os
fd = os.open("/daxfs/pid", os.O_RDWR)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("got it")
except BlockingIOError:
    print("refused")
"""


def test_full_table_keeps_the_slot_of_an_ended_lock_carrier(region_path):
    """Under `daxfs run` a daemon's parent takes a flock, forks and ends:
    its slot stays, holding the lock for the daemon, whose heartbeat takes
    it over within a quarter of a lease (docs/locks.md "Descriptions
    shared across hosts").  A joiner that finds the table full meanwhile
    must not declare that slot dead although its process has ended: the
    lock would go.  Before, the joiner declared it dead and a second
    instance got the daemon's lock (60 s lease: the daemon had not looked
    yet)."""
    from helpers import preload as pl
    env.mkfs(region_path, 64 * env.MiB, max_hosts=4, lease_ms=60000)
    d = pl.popen(region_path, [sys.executable, "-c", DAEMON],
                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    holders = []
    try:
        assert d.stdout.readline().startswith("daemon"), "no daemon"
        assert d.wait(timeout=60) == 0      # the parent ended (reaped)
        # parent's slot, the daemon's, and two more: the table is full
        holders = [subprocess.Popen([sys.executable, "-c", HOLDER,
                                     region_path, str(i)],
                                    stdout=subprocess.PIPE, text=True,
                                    env=dict(os.environ,
                                             PYTHONPATH=env.PYDIR))
                   for i in range(2)]
        for p in holders:
            assert p.stdout.readline().strip() == "joined"
        with pytest.raises(OSError) as e:
            daxfs.Region(region_path).close()
        assert e.value.errno == errno.EBUSY, e.value
        holders[1].kill()           # a slot the next join may take
        holders[1].wait()
        res = pl.run(region_path, [sys.executable, "-c", SECOND])
        assert res.returncode == 0, res.stderr
        assert res.stdout.strip() == b"refused", res.stdout
    finally:
        d.stdin.close()             # the daemon ends
        for p in holders:
            p.kill()
            p.wait()
