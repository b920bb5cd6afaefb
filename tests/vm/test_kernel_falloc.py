"""fallocate, SEEK_DATA / SEEK_HOLE and FIEMAP through daxfs.ko, with a second host
(docs/files.md "fallocate", docs/kernel.md).

Guest A (daxfs.ko, phys= mount) runs fallocate(1) -p / -z / -l / -k, xfs_io fiemap,
filefrag and lseek on its files (xfs_io fiemap -v shows `unwritten` after fallocate
and not after a write; truncate to the same size drops a KEEP_SIZE preallocation), with a shared mapping open across a punch; the
user-space host H (libdaxfs) then sees A's holes, and punches a file that A keeps
mapped: A's read(2), SEEK_HOLE and (after the lease work) its mapping show the hole.
Skip/fail rules as in test_kernel_cluster.py.  Guest side: vm/falloc_kguest.py.
"""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
import falloc_kguest as fk  # noqa: E402
from test_kernel_cluster import built, fsck, mkfs  # noqa: E402,F401

SIZE = 64 << 20


def test_kernel_fallocate_holes_seen_by_two_hosts(request, built):
    """A: punch frees st_blocks and df space and zeroes A's own mapping at once;
    SEEK_HOLE/SEEK_DATA and fiemap report the hole; -z zeroes, -n allocates beyond EOF,
    -l grows with zeros; past RLIMIT_FSIZE a growing fallocate fails with EFBIG.  H: A's bytes, hole and extents as A left them; H's punch of
    /fb shows to A through read(2), SEEK_HOLE and its mapping, and frees its pages
    (st_blocks); /fr's 2 MiB runs (format 11) written whole, mapped, punched
    and cut inside read the same on H; fsck clean."""
    host = {}
    with Cluster(label=request.node.name, size=SIZE, timeout=500) as c:
        # a loaded machine stalls a TCG guest for seconds: with a 2 s
        # lease, and H joined while it waited, A was declared dead in 1 of
        # 3 runs (2 of 5 with 5 s); H now waits through read-only handles
        mkfs(c.shm, "--lease-ms", "5000")

        def host_peer():
            host.update(fk.host_peer(str(c.shm)))
            return True

        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", "fa:tools:A",
                                            "umount", "rmmod", "clean"])],
                    host_fn=host_peer)
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}\nhost H: {host}")
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
    assert ra["tools"] == "ok" and ra["remote"] == "ok", ra
    assert ra["unwritten"] == "ok", ra
    assert ra.get("runs") == "ok" and host["fr_ok"], (ra, host)
    assert ra.get("fsize") == "ok", ra
    assert int(ra["free_gain"]) > 0, ra
    assert host["fa_ok"], host
    assert host["fa_hole"] == fk.PUNCH[0], host
    assert host["fa_data"] == sum(fk.PUNCH), host
    assert host["fa_in_hole"] == 0, host
    assert host["fb_freed"] == fk.HOST_PUNCH[1], host
