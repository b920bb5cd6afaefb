"""flock on a directory across libdaxfs hosts (docs/locks.md): programs
that guard a lock directory flock the directory itself.  Every worker is
its own process and host of one region in /dev/shm."""

import multiprocessing as mp
import struct

import pytest

from helpers import env, procs
from helpers import dirlock_workers as W

daxfs = env.daxfs
CTX = mp.get_context("spawn")


def mkregion(path):
    env.mkfs(path, 32 * env.MiB, lease_ms=300)
    with daxfs.Region(path) as r:
        r.write_file("/counter", bytes(4096))
        r.mkdir("/lockdir")


def test_dir_flock_exclusion(region_path):
    """Three hosts add to one counter under an exclusive flock of a
    directory: no increment is lost, and no lock is left behind."""
    n, rounds = 3, 200
    mkregion(region_path)
    procs.run(W.count_under_dir_flock, [(region_path, rounds)] * n,
              timeout=120)
    with daxfs.Region(region_path) as r:
        data = r.read_file("/counter")
        assert struct.unpack_from("<Q", data, W.COUNTER_OFF)[0] == n * rounds
        assert r.locks() == []
    rc, out = env.fsck(region_path, "-n")
    assert rc == 0, out[-3000:]


def test_dir_flock_seen_by_other_host(region_path):
    """A directory flocked on one host: another host's LOCK_NB attempt
    fails (EWOULDBLOCK), its F_GETLK-style query names the holder, and
    the lock is its once the holder lets go."""
    mkregion(region_path)
    ready, done = CTX.Event(), CTX.Event()
    p = CTX.Process(target=W.hold_dir_flock, args=(region_path, ready, done))
    p.start()
    try:
        assert ready.wait(30)
        with daxfs.Region(region_path) as r:
            d = W.dir_handle(r, "/lockdir")
            with pytest.raises(BlockingIOError):
                d.lock("r", kind="flock")
            held = d.getlk("w", kind="flock")
            assert held is not None and (held.type, held.kind) == \
                ("w", "flock")
            assert held.host != r.info()["self_slot"]
            done.set()
            d.lock("w", kind="flock", wait=30)
            assert [i.kind for _, i, _ in r.locks("/lockdir")] == ["flock"]
            d.unlock(kind="flock")
            assert r.locks() == []
    finally:
        done.set()
        p.join(30)
    assert p.exitcode == 0
