"""Advisory locks across hosts (docs/locks.md): every worker is its own
process and host of one region in /dev/shm, meeting only through the
lock table in the region."""

import multiprocessing as mp
import os
import signal
import struct
import subprocess
import time

import pytest

from helpers import env, lock_workers as W, procs

daxfs = env.daxfs
CTX = mp.get_context("spawn")
LEASE_MS = 300


def mkregion(path):
    env.mkfs(path, 32 * env.MiB, lease_ms=LEASE_MS)
    with daxfs.Region(path) as r:
        for name in ("/counter", "/a", "/b", "/f"):
            r.write_file(name, bytes(4096))


def fsck_clean(path):
    rc, out = env.fsck(path, "-n")
    assert rc == 0, out[-3000:]


@pytest.mark.parametrize("kind", ["posix", "ofd", "flock"])
def test_exclusion_counter(region_path, kind):
    """Three hosts add to one counter under a write lock: no increment is
    lost, so no two ever held overlapping write locks at once."""
    n, rounds = 3, 300
    mkregion(region_path)
    procs.run(W.count_under_lock, [(region_path, rounds, kind)] * n,
              timeout=120)
    with daxfs.Region(region_path) as r:
        data = r.read_file("/counter")
        assert struct.unpack_from("<Q", data, W.COUNTER_OFF)[0] == n * rounds
        assert r.locks() == []
    fsck_clean(region_path)


def test_close_drops_posix_locks_of_the_process(region_path):
    """daxfs_file_close drops the process's POSIX locks on the file, as
    close(2) does, also through another open of the same file; a process
    that never locked skips that work (lib/posix-locks.h), which must not
    make a locker's close skip it.  OFD locks stay with their open file."""
    mkregion(region_path)
    with daxfs.Region(region_path) as r, daxfs.Region(region_path) as other:
        probe = other.open("/f")
        f, g = r.open("/f"), r.open("/f")
        f.lock("w", 0, 10)
        g.lock("w", 20, 10, kind="ofd")
        assert probe.getlk("w", 0, 10) is not None
        h = r.open("/f")
        h.close()               # any close of the file, as in POSIX
        assert probe.getlk("w", 0, 10) is None
        assert probe.getlk("w", 20, 10) is not None     # g's OFD lock
        g.close()
        assert probe.getlk("w", 20, 10) is not None     # not a POSIX one
        f.close()
        probe.close()
    # the handle closed (its host left): every lock of it went
    with daxfs.Region(region_path) as r:
        assert r.locks() == []
    fsck_clean(region_path)


def test_getlk_shows_other_host(region_path):
    """F_GETLK on one host reports the lock of another host: its type,
    range, host slot and process id; a non-conflicting request is free."""
    mkregion(region_path)
    ready, done = CTX.Event(), CTX.Event()
    p = CTX.Process(target=W.hold_and_report,
                    args=(region_path, "/f", ready, done))
    p.start()
    try:
        assert ready.wait(30)
        with daxfs.Region(region_path) as r:
            f = r.open("/f")
            got = f.getlk("w", 0, 0)
            assert got is not None
            assert (got.type, got.kind, got.start, got.end) == \
                ("r", "posix", 10, 19)
            assert got.pid == p.pid
            assert got.host != r.info()["self_slot"]
            assert f.getlk("r", 0, 0) is None         # readers share
            assert f.getlk("w", 20, 5) is None        # outside the range
            with pytest.raises(BlockingIOError):
                f.lock("w", 15, 1)
            f.lock("w", 20, 0)                        # beside it: fine
            out = subprocess.run([env.tool("daxfs"), "-r", region_path, "locks",
                                  "/f"], capture_output=True, text=True,
                                 check=True).stdout.split("\n")
            assert out[0].split()[:3] == ["INODE", "KIND", "TYPE"], out
            rows = sorted(line.split()[1:7] for line in out[1:] if line)
            assert rows == sorted([
                ["POSIX", "READ", "10", "19", str(got.host), str(p.pid)],
                ["POSIX", "WRITE", "20", "EOF", str(r.info()["self_slot"]),
                 str(os.getpid())]]), out
            f.close()
    finally:
        done.set()
        p.join(30)
    assert p.exitcode == 0


def test_sigkill_holder_releases(region_path):
    """A host killed while holding a lock: the lock stands while its
    lease runs, and goes when a survivor recovers the dead host."""
    mkregion(region_path)
    ready = CTX.Event()
    p = CTX.Process(target=W.hold_until_killed,
                    args=(region_path, "/f", ready))
    p.start()
    try:
        assert ready.wait(30)
        with daxfs.Region(region_path) as r:
            f = r.open("/f")
            with pytest.raises(BlockingIOError):
                f.lock("r", 0, 1)
            os.kill(p.pid, signal.SIGKILL)
            p.join(10)
            f.lock("w", 0, 0, wait=30)     # recovery of the dead holder
            assert [i.pid for _, i, _ in r.locks("/f")] == [os.getpid()]
            f.close()
            assert r.locks() == []
    finally:
        if p.is_alive():
            p.kill()
    fsck_clean(region_path)


def test_edeadlk_across_hosts(region_path):
    """Host A holds /a and waits for /b; host B holds /b and asks to wait
    for /a: B gets EDEADLK, and A gets /b once B lets it go."""
    mkregion(region_path)
    ev = [CTX.Event() for _ in range(3)]
    result = CTX.Queue()
    pa = CTX.Process(target=W.deadlock_a, args=(region_path, *ev, result))
    pb = CTX.Process(target=W.deadlock_b, args=(region_path, *ev, result))
    pa.start()
    pb.start()
    got = dict(result.get(timeout=60) for _ in range(2))
    pa.join(30)
    pb.join(30)
    assert got == {"b": os.strerror(35), "a": "got b"}
    assert pa.exitcode == 0 and pb.exitcode == 0


def test_fsck_repairs_dead_hosts_locks(region_path):
    """A host dies holding locks and nobody recovers it: fsck -n reports
    the locks of a host that is not alive, -y clears them, and the next
    fsck is clean; then any host can take the lock."""
    mkregion(region_path)
    ready = CTX.Event()
    p = CTX.Process(target=W.hold_until_killed,
                    args=(region_path, "/f", ready))
    p.start()
    assert ready.wait(30)
    os.kill(p.pid, signal.SIGKILL)
    p.join(10)
    time.sleep(3 * LEASE_MS / 1000)
    rc, out = env.fsck(region_path, "-n")
    assert rc != 0 and "lock held by a host that is not alive" in out, out
    rc, out = env.fsck(region_path, "-y")
    assert rc in (0, 1), out
    fsck_clean(region_path)
    with daxfs.Region(region_path) as r:
        assert r.locks() == []
        f = r.open("/f")
        f.lock("w")
        f.close()
