"""SQLite on three hosts at once (issue 11): guests A and B (daxfs.ko, phys= mounts) and a
host process H running the same SQLite scenario under `daxfs run` (libdaxfs-preload.so) on
the shared region file write one database, in rollback-journal mode (fcntl locks on the
database file, cluster-wide) and in WAL mode (fcntl locks on the -shm file, which all three
map: the guests through DAX, H through the preload's zero-copy MAP_SHARED).  Every insert
of every host is there, integrity_check passes on each host and on a copy read through
libdaxfs, and fsck.daxfs finds the region clean.

Skip/fail rules and the build as in test_kernel_cluster.py (DAXFS_VM_TESTS=1: fail instead
of skipping).  A few minutes per mode under TCG.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
from test_kernel_cluster import BIN, SIZE, built, fsck, mkfs, region  # noqa: E402,F401

ROWS = 100
PEERS = "A+B+H"
AT = "/daxfs-vm"


def host_sqlite(shm, jmode):
    """H: waits for A's database, then runs vm/daxfs_kguest.py's sqlite scenario under
    `daxfs run`, so its marks and its database calls go through the preload."""
    end = time.monotonic() + 500
    with region(shm) as r:
        while not r.exists("/sync/sq-created"):
            assert time.monotonic() < end, "guest A never created the database"
            time.sleep(0.2)
    argv = [str(BIN / "daxfs"), "-r", str(shm), "run", "--at", AT, "--", sys.executable,
            str(REPO / "vm" / "daxfs_kguest.py"), "sqlite", AT, "H", PEERS, str(ROWS), jmode]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert "DAXFS-VM-RESULT: sqlite_H=ok" in p.stdout, p.stdout[-3000:]
    return True


@pytest.mark.parametrize("jmode", ["delete", "wal"])
def test_preload_sqlite_two_guests_and_host(request, built, tmp_path, jmode):
    import sqlite3
    with Cluster(label=request.node.name, size=SIZE, timeout=900) as c:
        mkfs(c.shm, "--lease-ms", "5000")
        steps = ["load", "mount:phys", "py:sqlite:{}:%s:%d:%s" % (PEERS, ROWS, jmode),
                 "umount", "rmmod", "clean"]
        res = c.run([Guest(g, "daxfs-k", [s.format(g) for s in steps]) for g in "AB"],
                    host_fn=lambda: host_sqlite(c.shm, jmode))
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
    assert got == {"A": ROWS, "B": ROWS, "H": ROWS}, got
    for g in "AB":
        assert res.guests[g].results[f"sqlite_{g}"] == "ok", res.summary()
