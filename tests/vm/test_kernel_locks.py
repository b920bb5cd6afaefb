"""Advisory locks across hosts through daxfs.ko (docs/locks.md): guests A and B (daxfs.ko,
phys= mounts) and host H (libdaxfs on the shared file) add to two counters in one file at
once, one under fcntl record locks and one under flock, two processes (threads on H) per
host: no increment is lost on either counter, and fsck.daxfs finds the region clean.  The
same with flock of a directory, SQLite on two guests at once, and a killed guest's locks
released to a waiting host (F_SETLEASE refused first).

Skip/fail rules and the build as in test_kernel_cluster.py (DAXFS_VM_TESTS=1: fail instead
of skipping).  About a minute under TCG.
"""
import os
import signal
import struct
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
import daxfs_kguest as kg  # noqa: E402
from test_kernel_cluster import SIZE, built, fsck, mkfs, region  # noqa: E402,F401

ROUNDS = 100
DIR_ROUNDS = 60
PEERS = "A+B+H"


def count_loop(lock, unlock, f, off, rounds):
    """Adds 1 to the counter at off rounds times between lock() and unlock()
    (read, pause, write back: two holders at once would lose an increment)."""
    for _ in range(rounds):
        lock()
        v = struct.unpack("<Q", f.pread(8, off))[0]
        time.sleep(0.001)
        f.pwrite(struct.pack("<Q", v + 1), off)
        unlock()


def host_count(r, use_flock, out, closing):
    """H's side of kg.lock_count through libdaxfs, on a File of its own, closed only
    once H's other workers are done too: H's threads are one process, one POSIX lock
    owner, and a close of any of its Files of the inode drops that owner's POSIX
    locks, as close(2) does on Linux (a CI run lost an increment so: H's flock
    worker closed its File while H's POSIX worker held the lock)."""
    try:
        kind, off = ("flock", kg.LOCK_FLOCK_OFF) if use_flock else \
            ("posix", kg.LOCK_POSIX_OFF)
        with r.open("/lockfile") as f:
            count_loop(lambda: f.lock("w", off, 8, kind=kind, wait=True),
                       lambda: f.unlock(off, 8, kind=kind), f, off, ROUNDS)
            closing.wait()
        out.append(True)
    except BaseException as e:  # noqa: BLE001 - reported by the test
        closing.abort()             # the others need not wait for us
        out.append(repr(e))


def host_dir_count(r, out, closing):
    """H's side of the dirlocks scenario: flock of /lockdir through libdaxfs,
    which keys locks by inode number (a directory is locked unopened)."""
    import daxfs
    try:
        d = daxfs.File(r, r.stat("/lockdir").st_ino, "/lockdir")
        with r.open("/lockfile") as f:
            count_loop(lambda: d.lock("w", kind="flock", wait=True),
                       lambda: d.unlock(kind="flock"), f, kg.LOCK_DIR_OFF, DIR_ROUNDS)
            closing.wait()
        out.append(True)
    except BaseException as e:  # noqa: BLE001 - reported by the test
        closing.abort()             # the others need not wait for us
        out.append(repr(e))


def lock_cluster(request, scen, rounds, host_workers):
    """Guests A and B run scenario scen (ROUNDS rounds) while host H runs each of
    host_workers (fn(region, out, closing)) in a thread (closing: a barrier of them all
    that each passes before it closes its Files); fsck is clean and no lock is
    left.  Returns /lockfile's bytes."""
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        mkfs(c.shm, "--lease-ms", "5000")
        with region(c.shm) as r:
            r.write_file("/lockfile", bytes(4096))
            r.mkdir("/lockdir")

        def host_peer():
            out = []
            with region(c.shm) as r:
                kg.locks_ready(kg.LibFS(r), "H", PEERS.split("+"))
                closing = threading.Barrier(len(host_workers), timeout=240)
                ts = [threading.Thread(target=fn, args=(r, out, closing))
                      for fn in host_workers]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
            assert out == [True] * len(host_workers), out
            return True

        steps = ["load", "mount:phys", "py:%s:{}:%s:%d" % (scen, PEERS, rounds), "umount",
                 "rmmod", "clean"]
        res = c.run([Guest(g, "daxfs-k", [s.format(g) for s in steps]) for g in "AB"],
                    host_fn=host_peer)
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
        with region(c.shm) as r:
            data = r.read_file("/lockfile")
            assert r.locks() == []
    for g in "AB":
        assert res.guests[g].results[f"{scen}_{g}"] == "ok", res.summary()
    return data


def test_kernel_locks_exclusion(request, built):
    data = lock_cluster(request, "locks", ROUNDS,
                        [lambda r, out, closing, i=i: host_count(r, i == 1, out, closing)
                         for i in range(2)])
    posix = struct.unpack_from("<Q", data, kg.LOCK_POSIX_OFF)[0]
    flock = struct.unpack_from("<Q", data, kg.LOCK_FLOCK_OFF)[0]
    assert (posix, flock) == (3 * ROUNDS, 3 * ROUNDS), (posix, flock)


def test_kernel_dir_flock_exclusion(request, built):
    """flock of a directory (programs that guard a lock directory): two processes on
    each guest and two threads on H add to one counter under an exclusive flock of
    /lockdir, and no increment is lost (before daxfs.ko set ->flock for directories,
    each guest's flock was local and 259 of 360 increments survived)."""
    data = lock_cluster(request, "dirlocks", DIR_ROUNDS, [host_dir_count, host_dir_count])
    count = struct.unpack_from("<Q", data, kg.LOCK_DIR_OFF)[0]
    assert count == 3 * 2 * DIR_ROUNDS, count


SQLITE_ROWS = 150


@pytest.mark.parametrize("jmode", ["delete", "wal"])
def test_kernel_sqlite_two_guests(request, built, tmp_path, jmode):
    """Guests A and B run SQLite on one database file at once, in rollback-journal
    mode (its locking is fcntl locks on the database file) and in WAL mode (fcntl
    locks on byte ranges of the -shm file, which both guests map): every insert of both
    is there and integrity_check passes, on each guest and on a copy read through
    libdaxfs."""
    import sqlite3
    with Cluster(label=request.node.name, size=SIZE, timeout=600) as c:
        mkfs(c.shm, "--lease-ms", "5000")
        steps = ["load", "mount:phys", "py:sqlite:{}:A+B:%d:%s" % (SQLITE_ROWS, jmode), "umount",
                 "rmmod", "clean"]
        res = c.run([Guest(g, "daxfs-k", [s.format(g) for s in steps]) for g in "AB"])
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
        with region(c.shm) as r:
            for name in r.listdir("/"):
                if name.startswith("db.sqlite"):     # with -wal, -shm in WAL mode
                    (tmp_path / name).write_bytes(r.read_file("/" + name))
    con = sqlite3.connect(str(tmp_path / "db.sqlite"))
    assert con.execute("pragma integrity_check").fetchone()[0] == "ok"
    got = dict(con.execute("select role, count(*) from t group by role").fetchall())
    assert got == {"A": SQLITE_ROWS, "B": SQLITE_ROWS}, got
    for g in "AB":
        assert res.guests[g].results[f"sqlite_{g}"] == "ok", res.summary()


def test_kernel_killed_guest_releases_locks(request, built):
    """Guest A refuses F_SETLEASE (EINVAL: a lease would be A's alone), then takes a POSIX
    record lock, an OFD lock and a flock on /lockfile, and its QEMU process is killed
    with SIGKILL while it holds them.  Host H sees all three held by A's slot (its tries
    fail), and once A's lease (6 s) has run out H takes each of them with a wait: the
    dead host's locks are released by the survivors' recovery, not by A.  No lock is
    left afterwards, and fsck.daxfs is clean (after -y for the dead host's leftovers)."""
    from test_kernel_cluster import _qemu_pid
    got = {}
    with Cluster(label=request.node.name, size=SIZE, timeout=200) as c:
        # 6 s: long enough that a loaded machine's stalled guest is not
        # declared dead before it holds its locks
        mkfs(c.shm, "--lease-ms", "6000")
        with region(c.shm) as r:
            r.write_file("/lockfile", bytes(4096))

        def host_peer():
            with region(c.shm) as r:
                fs = kg.LibFS(r)
                kg.fs_wait(fs, ["victim-locked"], 150)
                held = sorted(li.kind for _, li, _ in r.locks("/lockfile"))
                got["held"] = held
                wanted = (("posix", kg.LOCK_POSIX_OFF), ("ofd", kg.LOCK_OFD_OFF),
                          ("flock", 0))
                with r.open("/lockfile") as f:
                    for kind, off in wanted:
                        with pytest.raises(BlockingIOError):
                            f.lock("w", off, 8 if kind != "flock" else 0, kind=kind)
                    pid = _qemu_pid(c.shm, "A")
                    assert pid, "guest A's qemu not found"
                    os.kill(pid, signal.SIGKILL)
                    t = time.monotonic()
                    for kind, off in wanted:
                        f.lock("w", off, 8 if kind != "flock" else 0, kind=kind, wait=60)
                    got["s"] = time.monotonic() - t
                    got["after"] = sorted(li.kind for _, li, _ in r.locks("/lockfile"))
                    for kind, off in wanted:
                        f.unlock(off, 8 if kind != "flock" else 0, kind=kind)
                assert r.locks() == []
            return True

        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", "py:lock-victim"])],
                    host_fn=host_peer)
        assert res.host.rc == 0 and got.get("s") is not None, res.summary()
        assert res.guests["A"].results.get("setlease") == "EINVAL", res.summary()
        assert got["held"] == ["flock", "ofd", "posix"], got
        assert got["after"] == ["flock", "ofd", "posix"], got
        rc, out = fsck(c.shm, "-n")
        if rc != 0:
            assert rc == 4, out
            rc, out = fsck(c.shm, "-y")
            assert rc in (0, 1), out
            rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
    print(f"A's locks taken by H {got['s']:.1f} s after the kill")


def test_kernel_lock_close_releases(request, built):
    """The close that releases a lock in Linux releases it in the region: after it,
    another process of the guest gets a POSIX, an OFD and a flock lock at once
    (vm/daxfs_kguest.py lock-close).  The OFD case failed before: the last fput
    unlocks with FL_POSIX and the file as owner, which the region held as an OFD
    record of another kind, so it stayed (xfstests generic/478 hung)."""
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        mkfs(c.shm)
        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", "py:lock-close",
                                            "umount", "rmmod"])])
        assert res.ok, res.summary()
        assert res.guests["A"].results.get("lockclose") == "ok", res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
