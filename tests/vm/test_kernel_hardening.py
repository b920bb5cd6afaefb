"""daxfs.ko hardening checks that one guest shows (docs/kernel.md).

Guest A (daxfs.ko, phys= mount) runs vm/harden_kguest.py scenarios.  Skip/fail rules as in
test_kernel_cluster.py.  Console log: build/vm/logs/<test name>/A.log.
"""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
from test_kernel_cluster import built, fsck, mkfs  # noqa: E402,F401

SIZE = 64 << 20


def run_guest(request, steps, pre=()):
    """Guest A: load, PRE steps, mount:phys, STEPS, umount, rmmod, clean dmesg."""
    with Cluster(label=request.node.name, size=SIZE, timeout=240) as c:
        mkfs(c.shm)
        res = c.run([Guest("A", "daxfs-k", ["load", *pre, "mount:phys", *steps,
                                            "umount", "rmmod", "clean"])])
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
    return ra


def test_kernel_timestamps_one_clock(request, built):
    """FIFOs, device nodes, files and directories made and then chmod-ed at once (as
    `mknod -m` does), utime(NULL)-ed, truncated and written: ctime is never before mtime,
    and the times one operation sets are equal (xfstests generic/423 ts_order)."""
    ra = run_guest(request, ["hd:times"])
    assert ra["times"] == "ok", ra


def test_kernel_trust_nosuid_nodev_by_default(request, built):
    """Any peer can write a setuid-root file or a device node: a plain mount runs the
    file with the caller's ids and refuses to open the node; `-o trust_suid,trust_dev`
    honours both; stat shows the set-id bits either way, and a write or truncate by
    another user (and chown) clears them."""
    ra = run_guest(request, ["hd:trust:default", "mounts", "umount",
                             "mount:phys:trust_suid+trust_dev", "hd:trust:trusted", "mounts"])
    assert ra["trust_default"] == "ok", ra
    assert ra["trust_trusted"] == "ok", ra
    assert ",trust_suid,trust_dev" in ra["mounts"], ra


def test_kernel_phys_range_claimed(request, built):
    """phys= over a pmem namespace that nd_pmem still holds is refused (it would alias
    /dev/pmem0), and so is a range that runs past the end of the Persistent Memory
    resource; with the namespace let go the same range mounts, and /proc/iomem names
    daxfs as its owner meanwhile."""
    ra = run_guest(request, ["iomem"], pre=["badmount:physkeep", "badmount:physover"])
    assert "is_in_use" in ra["badmount_physkeep"], ra
    assert "not_wholly_inside" in ra["badmount_physover"], ra
    assert ra["iomem_daxfs"] == "1", ra
