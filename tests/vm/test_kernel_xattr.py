"""Extended attributes and POSIX ACLs on daxfs.ko (docs/xattr.md): one guest mounts the
shared memory file and runs vm/xattr_kguest.py (setfattr/getfattr, setfacl then a user
denied or allowed accordingly, default ACL inheritance); then the host, another host of
the same region, sees what the guest set, and fsck is clean.  Skip/fail rules as in
test_kernel_cluster.py.  Console logs: build/vm/logs/<test name>/A.log.
"""
import struct
import sys
import time
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


# struct vfs_cap_data, revision 2, effective: cap_net_raw permitted
CAP_BLOB = struct.pack("<5I", 0x02000001, 1 << 13, 0, 0, 0)


def test_kernel_write_drops_capability_set_elsewhere(request, built):
    """A write on daxfs.ko removes security.capability, as on every Linux filesystem,
    also when another host set it after this host had written the file (daxfs.ko lets
    writes skip the look once an inode has no capability: SB_NOSEC)."""
    with Cluster(label=request.node.name, size=SIZE, timeout=500) as c:
        mkfs(c.shm)

        def host_setcap():
            with daxfs.Region(str(c.shm)) as r:
                deadline = time.monotonic() + 400
                while not r.exists("/cap-ready"):
                    assert time.monotonic() < deadline, "the guest never wrote /cap"
                    time.sleep(0.2)
                r.setxattr("/cap", "security.capability", CAP_BLOB)
            return True

        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", "xa:killpriv",
                                            "umount", "rmmod", "clean"])],
                    host_fn=host_setcap)
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
        assert ra.get("killpriv") == "ok", ra
        with daxfs.Region(str(c.shm)) as r:
            assert r.read_file("/cap") == b"a" * 4096 + b"b" * 4096 + b"c" * 4096
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
