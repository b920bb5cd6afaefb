"""Locks through two FUSE mounts of one region, two hosts (docs/fuse.md
"Locks"): fcntl record locks and flock taken through one mount exclude
those asked for through the other, F_GETLK through the other shows the
holder, a close releases them, F_SETLKW waits for them, and a mount
killed with SIGKILL gives its locks back once the other host recovers it.
"""
import errno
import fcntl
import os
import struct
import subprocess
import sys
import threading
import time

import pytest

from helpers import env
from helpers import fuse as hf

pytestmark = pytest.mark.skipif(hf.skip_reason() is not None,
                                reason=str(hf.skip_reason()))

# Opens argv[1], takes a POSIX write lock on bytes 0..9 and an exclusive
# flock, says so, and closes the file when told (a line on stdin).
HOLDER = r'''
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"x" * 100)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 0)
fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("held", os.getpid(), flush=True)
sys.stdin.readline()
os.close(fd)
print("released", flush=True)
sys.stdin.read()
'''


class Holder:
    def __init__(self, path):
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, path],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        line = self.proc.stdout.readline().decode()
        assert line.startswith("held "), self.proc.stderr.read()
        self.pid = int(line.split()[1])

    def release(self):
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == b"released\n"

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=60)


def try_lock(fd, how, length=0, start=0):
    """'granted' or the errno's name: one F_SETLK (lockf) or flock."""
    try:
        if how == "flock":
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        else:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, length, start)
            fcntl.lockf(fd, fcntl.LOCK_UN, length, start)
        return "granted"
    except OSError as e:
        return errno.errorcode[e.errno]


def eventually(fn, want):
    """fn() until it returns want (at most 30 s): the kernel sends
    FUSE's release, which drops flock and OFD locks, after close(2) has
    returned."""
    deadline = time.monotonic() + 30
    got = fn()
    while got != want and time.monotonic() < deadline:
        time.sleep(0.01)
        got = fn()
    return got


def getlk(fd, start, length):
    """F_GETLK for a write lock: (type, start, len, pid)."""
    got = fcntl.fcntl(fd, fcntl.F_GETLK,
                      struct.pack("hhqqi", fcntl.F_WRLCK, 0, start, length, 0))
    t, _, s, n, pid = struct.unpack("hhqqi", got)
    return t, s, n, pid


@pytest.fixture
def two(region):
    a = hf.Mount(region)
    b = hf.Mount(region)
    yield a, b
    a.close()
    b.close()


def test_locks_exclude_across_mounts(two):
    a, b = two
    h = Holder(a.path("f"))
    fd = os.open(b.path("f"), os.O_RDWR)
    try:
        assert try_lock(fd, "posix", 10, 5) == "EAGAIN"
        assert try_lock(fd, "posix", 10, 50) == "granted"
        assert try_lock(fd, "flock") == "EAGAIN"
        assert getlk(fd, 5, 10) == (fcntl.F_WRLCK, 0, 10, h.pid)
        assert getlk(fd, 50, 10)[0] == fcntl.F_UNLCK
        h.release()
        assert try_lock(fd, "posix", 10, 5) == "granted"   # flush: at close
        assert eventually(lambda: try_lock(fd, "flock"), "granted") == "granted"
        assert getlk(fd, 0, 0)[0] == fcntl.F_UNLCK
    finally:
        os.close(fd)
        h.close()


def test_setlkw_through_the_other_mount_waits(two):
    a, b = two
    h = Holder(a.path("f"))
    fd = os.open(b.path("f"), os.O_RDWR)
    got = []

    def waiter():
        fcntl.lockf(fd, fcntl.LOCK_EX, 10, 0)
        got.append("posix")
        fcntl.flock(fd, fcntl.LOCK_EX)
        got.append("flock")

    t = threading.Thread(target=waiter, daemon=True)
    try:
        t.start()
        assert got == []        # the holder on the other host has them
        h.release()
        t.join(timeout=60)
        assert got == ["posix", "flock"]
    finally:
        os.close(fd)
        h.close()


def test_setlkw_is_interrupted_by_a_signal(two):
    """A process blocked in F_SETLKW for another host's lock gets back
    from the call when a signal comes, as on any Linux filesystem (its
    handler raises: Python would retry an EINTR otherwise)."""
    a, b = two
    h = Holder(a.path("f"))
    code = r'''
import fcntl, os, signal, sys
class Alarm(Exception):
    pass
def alarm(*a):
    raise Alarm()
signal.signal(signal.SIGALRM, alarm)
fd = os.open(sys.argv[1], os.O_RDWR)
signal.setitimer(signal.ITIMER_REAL, 0.5)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX, 10, 0)
    print("granted")
except Alarm:
    print("interrupted")
'''
    try:
        res = subprocess.run([sys.executable, "-c", code, b.path("f")],
                             capture_output=True, timeout=60)
        assert res.stdout == b"interrupted\n", res.stderr
    finally:
        h.close()


def test_killed_mount_gives_its_locks_back(region_path):
    env.mkfs(region_path, 64 * env.MiB, lease_ms=1000)
    a = hf.Mount(region_path)
    b = hf.Mount(region_path)
    h = None
    fd = -1
    try:
        h = Holder(a.path("f"))
        fd = os.open(b.path("f"), os.O_RDWR)
        assert try_lock(fd, "posix", 10, 0) == "EAGAIN"
        a.kill()
        # b recovers a once a's lease ran out; until then a's locks hold
        deadline = time.monotonic() + 60
        while try_lock(fd, "posix", 10, 0) != "granted":
            assert time.monotonic() < deadline, "a's lock outlived its host"
            time.sleep(0.1)
        assert try_lock(fd, "flock") == "granted"
    finally:
        if fd >= 0:
            os.close(fd)
        if h:
            h.close()
        a.close()
        b.close()


F_OFD_SETLK = getattr(fcntl, "F_OFD_SETLK", 37)


def ofd_lock(fd, typ):
    """'granted' or the errno's name: one F_OFD_SETLK of bytes 0..9."""
    try:
        fcntl.fcntl(fd, F_OFD_SETLK, struct.pack("hhqqi", typ, 0, 0, 10, 0))
        return "granted"
    except OSError as e:
        return errno.errorcode[e.errno]


def test_ofd_locks_go_with_the_last_close(two):
    """An OFD lock through one mount holds against the other mount while
    any descriptor of its open file is open (a dup too), and goes at the
    last close, though the kernel names no owner then."""
    a, b = two
    fa = os.open(a.path("f"), os.O_CREAT | os.O_RDWR, 0o644)
    fb = os.open(b.path("f"), os.O_RDWR)
    try:
        assert ofd_lock(fa, fcntl.F_WRLCK) == "granted"
        dup = os.dup(fa)
        os.close(fa)
        fa = -1
        assert ofd_lock(fb, fcntl.F_WRLCK) == "EAGAIN"
        os.close(dup)
        assert eventually(lambda: ofd_lock(fb, fcntl.F_WRLCK),
                          "granted") == "granted"
    finally:
        if fa >= 0:
            os.close(fa)
        os.close(fb)
