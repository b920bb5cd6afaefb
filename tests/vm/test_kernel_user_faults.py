"""A user page fault that blocks must not hold a lane (docs/kernel.md "User buffers").

Guest A (daxfs.ko, phys= mount) runs vm/helpers/uffd_stall: 40 threads (more than the 32
lanes of a host) read, write and getdents with buffer pages registered with userfaultfd
and left missing, so that each one blocks in its page fault.  While they wait, creating,
writing and unlinking a 4 MiB file must work, and its space must come back (no lane holds
back the epoch, so reclaim on any host can free it).  Then the faults are resolved and
every thread's read, write and listing must be right.  Skip/fail rules as in
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
THREADS = 40


def test_kernel_blocked_user_fault_holds_no_lane(request, built):
    """40 threads blocked in userfaultfd faults inside read/write/getdents on one host:
    the mount keeps working, an unlinked file's space comes back while they wait, and
    each thread's I/O is right once its fault is resolved; fsck clean afterwards."""
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        mkfs(c.shm, "--lease-ms", "2000")
        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", f"uffd:{THREADS}",
                                            "umount", "rmmod", "clean"])])
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
    assert ra["uffd_result"] == "ok", res.summary()
    assert ra["uffd_blocked"] == str(THREADS), res.summary()
