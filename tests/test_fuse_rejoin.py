"""A FUSE mount declared dead while alive (docs/fuse.md, "A host").

daxfs-fuse is stopped for longer than its lease: another host declares it
dead and recovers it, which drops its open files.  That host then removes
a file the mount had open, and the file's inode number may come back as
another file.  When the mount goes on it is a new host: its files opened
before give ESTALE, never the other file's data, and writes through them
never reach the other file.  Files opened after the rejoin work and are
held open (an unlink on another host keeps them) as before.
"""
import errno
import os
import signal
import time

import pytest

from helpers import env
from helpers import fuse as hf

import daxfs

pytestmark = pytest.mark.skipif(hf.skip_reason() is not None,
                                reason=str(hf.skip_reason()))

LEASE_MS = 300
TIMEOUT = 0.5                   # -o timeout=: poll_ms is half of it
BOUND = 2 * TIMEOUT + 1.0       # as in test_fuse_hosts.py


def _alive(r, pid):
    return [h for h in r.info()["hosts"] if h["pid"] == pid and h["state"] == "alive"]


def _declare_dead(r, proc):
    """Stops proc until this survivor has recovered its host."""
    old = _alive(r, proc.pid)[0]
    os.kill(proc.pid, signal.SIGSTOP)
    deadline = time.monotonic() + 30
    while True:
        r.reclaim()             # declares expired hosts dead, recovers them
        slot = [h for h in r.info()["hosts"] if h["slot"] == old["slot"]][0]
        if (slot["state"], slot["gen"]) != ("alive", old["gen"]):
            break
        assert time.monotonic() < deadline, slot
        time.sleep(0.03)


def _errno(fn):
    try:
        return fn()
    except OSError as e:
        return e.errno


@pytest.fixture
def mnt(region_path):
    env.mkfs(region_path, 64 * env.MiB, lease_ms=LEASE_MS)
    m = hf.Mount(region_path, opts=["timeout=%g" % TIMEOUT])
    r = daxfs.Region(region_path)
    yield m, r
    if m.proc.poll() is None:
        os.kill(m.proc.pid, signal.SIGCONT)
    r.close()
    m.close()


def test_files_open_before_a_rejoin_are_stale(mnt):
    m, r = mnt
    with open(m.path("f"), "wb") as f:
        f.write(b"mine" * 4096)
    fd = os.open(m.path("f"), os.O_RDWR)
    try:
        assert os.pread(fd, 4, 0) == b"mine"
        _declare_dead(r, m.proc)
        # f's open-set entry is gone: the unlink frees it
        r.unlink("/f")
        r.reclaim()
        r.write_file("/g", b"OTHER FILE " * 400)
        os.kill(m.proc.pid, signal.SIGCONT)
        # pages the kernel kept of f are f's data until the poller drops
        # them; after that every read reaches the server: ESTALE
        deadline = time.monotonic() + BOUND
        while True:
            got = _errno(lambda: os.pread(fd, 4, 0))
            assert got in (b"mine", errno.ESTALE), got
            if got == errno.ESTALE or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert got == errno.ESTALE
        assert _errno(lambda: os.pwrite(fd, b"LOST", 0)) == errno.ESTALE
        assert _errno(lambda: os.posix_fallocate(fd, 0, 1 << 20)) == errno.ESTALE
        assert _errno(lambda: os.lseek(fd, 0, os.SEEK_DATA)) == errno.ESTALE
        assert r.read_file("/g") == b"OTHER FILE " * 400
    finally:
        os.close(fd)


def test_files_opened_after_a_rejoin_work_and_are_held(mnt):
    m, r = mnt
    with open(m.path("f"), "wb") as f:
        f.write(b"mine")
    old = os.open(m.path("f"), os.O_RDWR)
    try:
        _declare_dead(r, m.proc)
        os.kill(m.proc.pid, signal.SIGCONT)
        # opened again after the rejoin, while the stale open still is
        fd = os.open(m.path("f"), os.O_RDWR)
        try:
            assert os.pread(fd, 4, 0) == b"mine"
            os.pwrite(fd, b"MINE", 0)
            assert _errno(lambda: os.pwrite(old, b"LOST", 0)) == errno.ESTALE
            # held: another host's unlink leaves it readable here
            r.unlink("/f")
            r.reclaim()
            assert os.pread(fd, 4, 0) == b"MINE"
        finally:
            os.close(fd)
    finally:
        os.close(old)
    # no open files left on the host once both are closed (the kernel
    # sends release after close(2) returns)
    deadline = time.monotonic() + 10
    while _alive(r, m.proc.pid)[0]["open_files"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(r, m.proc.pid)[0]["open_files"] == 0
