"""Advisory locks across hosts through daxfs.ko (docs/locks.md): guests A and B (daxfs.ko,
phys= mounts) and host H (libdaxfs on the shared file) add to two counters in one file at
once, one under fcntl record locks and one under flock, two processes (threads on H) per
host: no increment is lost on either counter, and fsck.daxfs finds the region clean.

Skip/fail rules and the build as in test_kernel_cluster.py (DAXFS_VM_TESTS=1: fail instead
of skipping).  About a minute under TCG.
"""
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
PEERS = "A+B+H"


def host_count(f, use_flock, out):
    """H's side of kg.lock_count through libdaxfs."""
    try:
        kind, off = ("flock", kg.LOCK_FLOCK_OFF) if use_flock else \
            ("posix", kg.LOCK_POSIX_OFF)
        for _ in range(ROUNDS):
            f.lock("w", off, 8, kind=kind, wait=True)
            v = struct.unpack("<Q", f.pread(8, off))[0]
            time.sleep(0.001)
            f.pwrite(struct.pack("<Q", v + 1), off)
            f.unlock(off, 8, kind=kind)
        out.append(True)
    except BaseException as e:  # noqa: BLE001 - reported by the test
        out.append(repr(e))


def test_kernel_locks_exclusion(request, built):
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        mkfs(c.shm, "--lease-ms", "5000")
        with region(c.shm) as r:
            r.write_file("/lockfile", bytes(4096))

        def host_peer():
            out = []
            with region(c.shm) as r:
                kg.locks_ready(kg.LibFS(r), "H", PEERS.split("+"))
                files = [r.open("/lockfile"), r.open("/lockfile")]
                ts = [threading.Thread(target=host_count, args=(files[i], i == 1, out))
                      for i in range(2)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                for f in files:
                    f.close()
            assert out == [True, True], out
            return True

        steps = ["load", "mount:phys", "py:locks:{}:%s:%d" % (PEERS, ROUNDS), "umount", "rmmod", "clean"]
        res = c.run([Guest(g, "daxfs-k", [s.format(g) for s in steps]) for g in "AB"],
                    host_fn=host_peer)
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
        with region(c.shm) as r:
            data = r.read_file("/lockfile")
            assert r.locks() == []
    for g in "AB":
        assert res.guests[g].results[f"locks_{g}"] == "ok", res.summary()
    posix = struct.unpack_from("<Q", data, kg.LOCK_POSIX_OFF)[0]
    flock = struct.unpack_from("<Q", data, kg.LOCK_FLOCK_OFF)[0]
    assert (posix, flock) == (3 * ROUNDS, 3 * ROUNDS), (posix, flock)


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
