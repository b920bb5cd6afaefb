"""Extended attributes and POSIX ACLs on daxfs.ko (docs/xattr.md): one guest mounts the
shared memory file and runs vm/xattr_kguest.py (setfattr/getfattr, setfacl then a user
denied or allowed accordingly, default ACL inheritance); then the host, another host of
the same region, sees what the guest set, and fsck is clean.  Skip/fail rules as in
test_kernel_cluster.py.  Console logs: build/vm/logs/<test name>/A.log.
"""
import ctypes
import struct
import subprocess
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


CAPMARK_ROUNDS = 40
KERNEL_DEFECT = "KERNEL_WRITE_MOVES"


def set_by_ino(r, ino, name, value):
    """daxfs_xattr_set on an inode number, with no path lookup."""
    fn = r._lib.daxfs_xattr_set
    fn.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_char_p,
                   ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    assert fn(r._handle(), ino, name, value, len(value), 0) == 0


def run_capmark(c, load="load"):
    """Guest A rewrites /capm in place (vm/xattr_kguest.py capmark) while this host
    stats it (folding the guest's mark) and sets security.capability on it once per
    round; the cluster's result.  The host stops early when the guest gives up
    (/capm-stop)."""
    mkfs(c.shm)

    def wait_for(r, path, what, seconds):
        deadline = time.monotonic() + seconds
        while not r.exists(path):
            if r.exists("/capm-stop"):
                return False
            assert time.monotonic() < deadline, what
            time.sleep(0.01)
        return True

    def host_setcaps():
        with daxfs.Region(str(c.shm)) as r:
            # this host's clock, for the guest to set its own by
            with r.open("/capm-clock", create=True) as f:
                deadline = time.monotonic() + 400
                while not r.exists("/capm-clock-done"):
                    assert time.monotonic() < deadline, "guest never took the clock"
                    f.pwrite(b"%020d" % time.time_ns(), 0)
            for i in range(CAPMARK_ROUNDS):
                if not wait_for(r, f"/capm-ready-{i}", f"round {i}: guest not ready", 60):
                    return False
                time.sleep(0.03 + 0.01 * (i % 7))
                # folds of the guest's mark (a getattr here), which the guest's
                # refresh takes for no change; then the attribute, somewhere inside
                # the guest's stream of rewrites.  By number on even rounds: a path's
                # lookup would fold first, a second move no rewrite's own count could
                # match, so only those rounds can show a miscount
                for _ in range(3):
                    ino = r.stat("/capm").st_ino
                    time.sleep(0.005)
                if i % 2:
                    r.setxattr("/capm", "security.capability", CAP_BLOB)
                else:
                    set_by_ino(r, ino, b"security.capability", CAP_BLOB)
                r.write_file(f"/capm-set-{i}", b"1")
        return True

    return c.run([Guest("A", "daxfs-k", [load, "mount:phys", f"xa:capmark:{CAPMARK_ROUNDS}",
                                        "umount", "rmmod", "clean"])],
                 host_fn=host_setcaps)


def test_kernel_rewrite_marks_keep_capability_checks(request, built):
    """Rewrites on daxfs.ko mark the change counter instead of moving it (docs/files.md
    "The change counter of a rewrite"); the kernel tells its own writes from another
    host's change by the moves the core reports.  Another host sets security.capability
    on a file the guest rewrites in place without pause, once per round: a setxattr
    inside a rewrite's op must not pass for that rewrite's own move, so the first
    rewrite after the guest sees the round's flag removes the capability (SB_NOSEC)."""
    with Cluster(label=request.node.name, size=SIZE, timeout=900) as c:
        res = run_capmark(c)
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
        assert ra.get("capmark") == "ok", ra
        with daxfs.Region(str(c.shm)) as r:
            assert "security.capability" not in r.listxattr("/capm")
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out


def test_kernel_rewrite_marks_defect_caught(request, built):
    """The test above against a module that counts every write as a move of the
    counter, its rewrites' marks too (make module-bug BUG=KERNEL_WRITE_MOVES): a
    setxattr inside a rewrite's op then passes for the rewrite's own move, the inode
    keeps S_NOSEC, and a later write leaves the capability.  The guest must see it."""
    r = subprocess.run(["make", "-C", str(REPO), "module-bug", f"BUG={KERNEL_DEFECT}"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    with Cluster(label=request.node.name, size=SIZE, timeout=900) as c:
        res = run_capmark(c, f"load:build/bug-{KERNEL_DEFECT}/daxfs.ko")
        ga = res.guests["A"]
        print(f"\nguest A: {ga.results}")
        assert ga.results.get("capmark") != "ok", "the defect went unseen: " + res.summary()
        assert "a write kept the capability another host set" in ga.log, res.summary()
