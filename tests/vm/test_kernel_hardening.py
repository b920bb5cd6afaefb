"""daxfs.ko hardening: no user can deny service to the others, no call hangs unkillably
(docs/kernel.md, "Limits one user cannot exhaust").

Each test boots one guest (daxfs.ko on the shared memory file) and runs a
vm/harden_kguest.py scenario; then fsck of the region must be clean.  Skip/fail rules as
in test_kernel_cluster.py.  Console logs: build/vm/logs/<test name>/A.log.
"""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
from test_kernel_cluster import built, fsck, mkfs  # noqa: E402,F401

SIZE = 64 << 20


def run_guest(request, steps, mkfs_args=(), size=SIZE):
    """Boots guest A with the daxfs-k steps; returns its results once fsck is clean."""
    with Cluster(label=request.node.name, size=size, timeout=500) as c:
        mkfs(c.shm, *mkfs_args)
        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", *steps,
                                            "umount", "rmmod", "clean"])])
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
    return ra


def test_kernel_open_one_file_100k_times(request, built):
    """An unprivileged user opens one file 100,000 times and holds every descriptor (more
    than a host's open set has entries: 8,064); another user meanwhile opens, writes and
    reads 200 files of its own.  Every open succeeds; the file, unlinked while held, is
    still readable, and its space comes back after the last close."""
    ra = run_guest(request, ["hd:opens:100000"], ("--lease-ms", "2000"))
    assert ra.get("opens") == "100000", ra
