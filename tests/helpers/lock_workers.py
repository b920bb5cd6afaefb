"""Workers for tests/test_locks.py: each is its own process and so its
own host of the region (a daxfs.Region of its own)."""

import os
import random
import struct
import time

from helpers import env

daxfs = env.daxfs

COUNTER_OFF = 100           # the shared counter: 8 bytes at this offset


def count_under_lock(idx, barrier, path, rounds, kind):
    """Adds 1 to the counter in /counter rounds times, each time under a
    write lock that covers it (a random range for record locks), read and
    written back with a pause between, so that two holders at once would
    lose an increment."""
    rng = random.Random(idx)
    with daxfs.Region(path) as r:
        f = r.open("/counter")
        barrier.wait()
        for _ in range(rounds):
            start = rng.randrange(0, COUNTER_OFF + 1)
            length = rng.choice([0, COUNTER_OFF + 8 - start + rng.randrange(50)])
            f.lock("w", start, length, kind=kind, wait=True)
            v = struct.unpack("<Q", f.pread(8, COUNTER_OFF))[0]
            if rng.random() < 0.3:
                time.sleep(0.0005)
            f.pwrite(struct.pack("<Q", v + 1), COUNTER_OFF)
            f.unlock(start, length, kind=kind)
        f.close()
    return True


def hold_until_killed(path, name, ready):
    """Takes a write lock on name and sleeps forever (SIGKILLed)."""
    r = daxfs.Region(path)
    f = r.open(name)
    f.lock("w", 0, 0)
    ready.set()
    while True:
        time.sleep(1)


def hold_and_report(path, name, ready, done):
    """Holds a read lock on bytes 10..19 of name until done is set;
    returns through ready once it holds it."""
    with daxfs.Region(path) as r:
        f = r.open(name)
        f.lock("r", 10, 10)
        ready.set()
        done.wait(60)
        f.close()


def deadlock_a(path, have_a, have_b, a_waiting, result):
    """Holds /a, then waits for /b (which host B holds) until B gives it
    up; reports whether it got /b."""
    with daxfs.Region(path) as r:
        fa, fb = r.open("/a"), r.open("/b")
        fa.lock("w", 0, 1)
        have_a.set()
        have_b.wait(30)
        a_waiting.set()
        fb.lock("w", 0, 1, wait=30)
        result.put(("a", "got b"))
        fa.close()
        fb.close()


def deadlock_b(path, have_a, have_b, a_waiting, result):
    """Holds /b, and once host A waits for it asks to wait for /a: a
    cycle across two hosts, EDEADLK; then gives /b up."""
    with daxfs.Region(path) as r:
        fa, fb = r.open("/a"), r.open("/b")
        have_a.wait(30)
        fb.lock("w", 0, 1)
        have_b.set()
        a_waiting.wait(30)
        # A's waiting record is in the region once it blocks
        deadline = time.monotonic() + 30
        while not any(w for _, _, w in r.locks("/b")):
            assert time.monotonic() < deadline, "A never waited"
            time.sleep(0.01)
        try:
            fa.lock("w", 0, 1, wait=True)
            result.put(("b", "got a"))
        except OSError as e:
            result.put(("b", os.strerror(e.errno)))
        fb.close()       # releases B's POSIX locks: A gets /b
        fa.close()
