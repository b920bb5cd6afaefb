"""Workers for tests/test_dir_flock.py: each is its own process and so its
own host of the region.  They flock a directory, as programs that guard
a lock directory do (flock(2) on an O_RDONLY|O_DIRECTORY descriptor)."""

import struct
import time

from helpers import env

daxfs = env.daxfs

COUNTER_OFF = 100           # the shared counter in /counter


def dir_handle(r, path):
    """The lock handle of a directory: locks are keyed by inode number, and
    a directory is locked without being opened for I/O (Linux opens it
    read-only; nothing is published in the open set)."""
    return daxfs.File(r, r.stat(path).st_ino, path)


def count_under_dir_flock(idx, barrier, path, rounds):
    """Adds 1 to the counter in /counter rounds times under an exclusive
    flock of /lockdir: two holders at once would lose an increment."""
    with daxfs.Region(path) as r:
        d = dir_handle(r, "/lockdir")
        f = r.open("/counter")
        barrier.wait()
        for i in range(rounds):
            d.lock("w", kind="flock", wait=True)
            v = struct.unpack("<Q", f.pread(8, COUNTER_OFF))[0]
            if i % 3 == 0:
                time.sleep(0.0005)
            f.pwrite(struct.pack("<Q", v + 1), COUNTER_OFF)
            d.unlock(kind="flock")
        f.close()
    return True


def hold_dir_flock(path, ready, done):
    """Holds an exclusive flock of /lockdir until done is set."""
    with daxfs.Region(path) as r:
        d = dir_handle(r, "/lockdir")
        d.lock("w", kind="flock")
        ready.set()
        done.wait(60)
        d.unlock(kind="flock")
