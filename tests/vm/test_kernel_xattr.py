"""Extended attributes and POSIX ACLs on daxfs.ko (docs/xattr.md): one guest mounts the
shared memory file and runs vm/xattr_kguest.py (setfattr/getfattr, setfacl then a user
denied or allowed accordingly, default ACL inheritance); then the host, another host of
the same region, sees what the guest set, and fsck is clean.  Skip/fail rules as in
test_kernel_cluster.py.  Console logs: build/vm/logs/<test name>/A.log.
"""
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
from test_kernel_cluster import built, fsck, mkfs  # noqa: E402,F401
import daxfs  # noqa: E402

SIZE = 64 << 20
USER = 4242


def test_kernel_xattrs_and_acls(request, built):
    with Cluster(label=request.node.name, size=SIZE, timeout=500) as c:
        mkfs(c.shm)
        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", "xa:attrs", "xa:acl",
                                            "umount", "rmmod", "clean"])])
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
        assert ra.get("attrs") == "ok" and ra.get("acl") == "ok", ra
        # another host of the region sees what the guest's kernel stored
        with daxfs.Region(str(c.shm)) as r:
            assert r.getxattr("/x", "user.shared") == b"from-guest"
            assert r.getxattr("/x", "trusted.t") == b"\x01\x02"
            acl = r.getxattr("/secret", "system.posix_acl_access")
            entries = [struct.unpack_from("<HHI", acl, 4 + 8 * i)
                       for i in range((len(acl) - 4) // 8)]
            assert (2, 4, USER) in entries, entries          # user:4242:r--
            assert r.access("/secret", 4, USER, USER)
            assert not r.access("/secret", 4, USER + 1, USER + 1)
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
