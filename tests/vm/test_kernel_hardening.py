"""daxfs.ko hardening: no user can deny service to the others, no call hangs unkillably
(docs/kernel.md, "Limits one user cannot exhaust"), and no peer-written set-id file or
device node is trusted by default (docs/kernel.md, trust model).

Each test boots one guest (daxfs.ko on the shared memory file) and runs a
vm/harden_kguest.py scenario; then fsck of the region must be clean.  Skip/fail rules as
in test_kernel_cluster.py.  Console logs: build/vm/logs/<test name>/A.log.
"""
import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
from test_kernel_cluster import built, fsck, mkfs, region  # noqa: E402,F401
import harden_kguest as hk  # noqa: E402
import ro_calls  # noqa: E402

SIZE = 64 << 20
MIB = 1 << 20


def run_guest(request, steps, mkfs_args=(), pmem=False, cpus=1, pre=(), umount=True,
              left_dead=False, mount_opts=()):
    """Boots guest A with the daxfs-k steps between mount and umount (PRE steps before the
    mount; umount=False: the steps end unmounted); returns its results once fsck is clean.
    pmem: the persistent route (fsdax /dev/pmem0, formatted in the guest; the image starts
    2 MiB into the shared file), else phys=; mount_opts: its -o options.  left_dead: the guest's host stopped without
    leaving, so fsck -n must find exactly that, and be clean after fsck -y recovered it
    (what another host's recovery does)."""
    with Cluster(label=request.node.name, size=SIZE, timeout=500) as c:
        if pmem:
            mount = ["fsdax", "mkfs:pmem:" + "+".join(mkfs_args),
                     ":".join(["mount:pmem", *(["+".join(mount_opts)] if mount_opts else [])])]
        else:
            mkfs(c.shm, *mkfs_args)
            mount = ["mount:phys"]
        res = c.run([Guest("A", "daxfs-k", ["load", *pre, *mount, *steps,
                                            *(["umount"] if umount else []), "rmmod",
                                            "clean"], cpus=cpus)])
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
        img = Path(str(c.shm) + ".img")
        try:
            with open(c.shm, "rb") as src, open(img, "wb") as dst:
                src.seek(2 * MIB if pmem else 0)
                dst.write(src.read())
            if left_dead:
                rc, out = fsck(img, "-n")
                assert rc == 4 and "dead host still holds its slot" in out, out
                assert fsck(img, "-y")[0] in (0, 1)
            rc, out = fsck(img, "-n")
        finally:
            img.unlink(missing_ok=True)
        assert rc == 0, out
    return ra


def test_kernel_open_one_file_100k_times(request, built):
    """An unprivileged user opens one file 100,000 times and holds every descriptor (more
    than a host's open set has entries: 8,064); another user meanwhile opens, writes and
    reads 200 files of its own.  Every open succeeds; the file, unlinked while held, is
    still readable, and its space comes back after the last close."""
    ra = run_guest(request, ["hd:opens:100000"], ("--lease-ms", "2000"))
    assert ra.get("opens") == "100000", ra


def test_kernel_fsync_sparse_file(request, built):
    """On the persistent route (fsync writes back cache lines), a file of 2^48 bytes with
    four pages: fsync, fdatasync and msync return (they used to visit every 4 KiB block up
    to the size, 2^36 lookups, and could not be killed) and the bytes read back."""
    ra = run_guest(request, ["hd:fsync-sparse"], pmem=True)
    assert ra.get("fsync_sparse") == "ok", ra


def test_kernel_truncate_waits_for_faults(request, built):
    """Two vCPUs: one thread faults pages of a shared mapping while the other truncates the
    file to one page and regrows it, 300 times.  After each ftruncate returns, the mapping
    gives SIGBUS beyond EOF and zeros after the regrow: never the bytes the truncate cut
    (a fault between the truncate's unmap and its cut mapped a page the cut then freed)."""
    ra = run_guest(request, ["hd:trunc-fault:300"], cpus=2)
    assert ra.get("trunc_fault") == "rounds=300,stale=0", ra


def test_kernel_timestamps_one_clock(request, built):
    """FIFOs, device nodes, files and directories made and then chmod-ed at once (as
    `mknod -m` does), utime(NULL)-ed, truncated and written: ctime is never before mtime,
    and the times one operation sets are equal (xfstests generic/423 ts_order)."""
    ra = run_guest(request, ["hd:times"])
    assert ra["times"] == "ok", ra


def test_kernel_trust_nosuid_nodev_by_default(request, built):
    """Any peer can write a setuid-root file or a device node: a plain mount runs the
    file with the caller's ids and refuses to open the node; `-o trust_suid,trust_dev`
    honours both; stat shows the set-id bits either way, and a write, truncate or
    fallocate (grow, punch, zero) by another user (and chown) clears them."""
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


def test_kernel_bad_blocks_mount_ro_and_read_eio(request, built):
    """On the fsdax route, a page of one file is listed as a bad block in the pmem
    driver's list (/sys/block/pmem0/badblocks) while unmounted.  The device still mounts
    (read-only, it used to be refused: dax_direct_access fails over a bad range); a read
    of that page fails with EIO, a read across it stops before it, the rest of the file
    and the other file read back, a mapping of it gets SIGBUS; no oops."""
    ra = run_guest(request, ["hd:media-write", "umount", "hd:media-inject",
                             "mount:pmem", "mounts", "hd:media-read"], pmem=True)
    assert ra.get("media_read") == "ok", ra
    assert ra["mounts"].startswith("ro"), ra


def test_kernel_pmem_unbind_while_mounted(request, built):
    """The pmem driver is unbound from the namespace under a mount with a file open and
    mapped: no oops (the driver's kernel mapping goes, ours stays); every operation
    fails with EIO, the mapping with SIGBUS, and umount and rmmod work."""
    with Cluster(label=request.node.name, size=SIZE, timeout=500) as c:
        res = c.run([Guest("A", "daxfs-k", ["load", "fsdax", "mkfs:pmem", "mount:pmem",
                                            "hd:unbind", "umount", "rmmod", "clean"])])
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
    assert ra.get("unbind") == "ok", ra


def _pool_full_one_long_chain(shm, flag_page, flag):
    """A hostile peer's stores (raw, like daxfs-chaos): every never-used page of the pool
    becomes free 64-byte objects on one chain, the 64-byte class's free list, and the
    pool looks full otherwise (bump at its end, no page on the page stack, no host
    batch).  The next allocation's compaction walks the chain and sorts it by address
    (docs/alloc.md "Compaction"): pool / 64 nodes, log2 of that merge passes.  Then
    flag goes over the start of the file page that holds flag_page."""
    import mmap as _mmap
    import struct
    from array import array
    with open(shm, "r+b") as f, _mmap.mmap(f.fileno(), 0) as m:
        max_hosts = struct.unpack_from("<I", m, 60)[0]
        rg = {}
        for k in range(8):
            kind, _, off, size, _ = struct.unpack_from("<IIQQQ", m, 152 + 32 * k)
            rg[kind] = (off, size)
        state, (pool, pool_size), hosts = rg[1][0], rg[4], rg[2][0]
        assert struct.unpack_from("<Q", m, state)[0] == 0x5441545346584144, "no state page"
        start, end = struct.unpack_from("<Q", m, state + 64)[0], pool + pool_size
        chunk = 1 << 20
        for at in range(start, end, chunk):
            n = min(chunk, end - at)
            words = array("Q", bytes(n))
            words[0::8] = array("Q", range(at + 64, at + n + 64, 64))
            if at + n == end:
                words[-8] = 0                           # the chain's end
            m[at:at + n] = words.tobytes()
        struct.pack_into("<Q", m, state + 64, end)      # bump at the end
        for cls, head in ((0, start), (4, 0)):          # class 64: the chain; pages: none
            tag = struct.unpack_from("<Q", m, state + 384 + 64 * cls + 8)[0]
            struct.pack_into("<QQ", m, state + 384 + 64 * cls, head, tag + 1)
        for slot in range(max_hosts):                   # no batch to take pages from
            struct.pack_into("<QQ", m, hosts + 256 * slot + 96, 0, 0)
        # then the flag the guest polls, in place: any write through the
        # filesystem would allocate now (the pool looks full)
        at = m.find(flag_page)
        while at >= 0 and at % 4096:
            at = m.find(flag_page, at + 1)
        assert at >= 0, "the flag file's page is not in the region"
        m[at:at + len(flag)] = flag


def test_kernel_walk_stops_when_killed(request, built):
    """A peer turns the unused pool of a 1 GiB region into one chain of 16 M free 64-byte
    objects and makes the pool look full otherwise.  A guest process writing a new file
    compacts: it checks the chain and sorts it (24 merge passes).  SIGKILL 2 s in must end
    the process within 20 s (it used to finish the walk first), with soft-lockup
    detection on and a clean dmesg."""
    import daxfs_kguest as kg
    with Cluster(label=request.node.name, size=1 << 30, timeout=900) as c:
        mkfs(c.shm)
        with region(c.shm) as r:
            r.write_file("/" + hk.WALK_FLAG, hk.WALK_CLEAR * 256)

        def peer():
            with region(c.shm) as r:
                kg.fs_wait(kg.LibFS(r), ["walk-mounted"], 300)
            _pool_full_one_long_chain(c.shm, hk.WALK_CLEAR * 256, hk.WALK_SET)
            return True

        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", "hd:walk-kill", "umount",
                                            "rmmod", "clean"],
                           append="softlockup_panic=0")], host_fn=peer)
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
    assert ra.get("walk_kill") == "ok", ra


# joins the region's host table, then dies without leaving: its slot stays ALIVE
KILLED_HOST = """import os, signal, sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_kernel_nohost_is_explicit_and_maps_nothing(request, built):
    """A region with one host slot, taken by a host that died without leaving (lease 10
    min).  mount -o ro fails with a message (it used to fall back silently to a host-less
    mount); mount -o ro,nohost works, shows nohost in /proc/mounts, reads a file, and
    refuses mmap with ENODEV (a host-less mount cannot hold back the reuse of pages)."""
    with Cluster(label=request.node.name, size=SIZE, timeout=500) as c:
        mkfs(c.shm, "--max-hosts", "1", "--lease-ms", "600000")
        with region(c.shm) as r:
            r.write_file("/hello", hk.NOHOST_DATA)
        p = subprocess.run([sys.executable, "-c", KILLED_HOST, str(c.shm),
                            str(REPO / "python")], env=dict(os.environ))
        assert p.returncode == -signal.SIGKILL, p
        res = c.run([Guest("A", "daxfs-k", ["load", "badmount:phys:ro",
                                            "mount:phys:ro+nohost", "mounts",
                                            "hd:nohost:/hello", "umount", "rmmod",
                                            "clean"])])
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
    assert "host_table" in ra.get("badmount_phys", ""), ra
    assert "nohost" in ra.get("mounts", "") and ra.get("nohost") == "ok", ra


def test_kernel_nohost_every_call(request, built):
    """Every system call a user can make on a ro,nohost mount (docs/kernel.md
    "Host-less mounts"): stat, readdir, readlink, xattrs, reads, seeks, sendfile,
    copy_file_range and the flags ioctl work; every change fails with EROFS, mmap with
    ENODEV, a lock (F_GETLK too) with ENOLCK; no oops or warning in dmesg, and the
    region's bytes are the same afterwards (a host-less mount stores nothing)."""
    with Cluster(label=request.node.name, size=SIZE, timeout=500) as c:
        mkfs(c.shm)
        with region(c.shm) as r:
            r.mkdir("/d")
            r.mkdir("/d/e")
            r.write_file("/d/f", hk.NOHOST_DATA)
            r.symlink("f", "/d/s")
            r.setxattr("/d/f", "user.k", b"v")
        before = ro_calls.file_digest(c.shm)
        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys:ro+nohost",
                                            "hd:nohost-calls:/d", "umount", "rmmod",
                                            "clean"])])
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
        assert ra.get("nohost_calls") == "ok", ra
        assert ro_calls.file_digest(c.shm) == before, "the host-less mount changed the region"


def test_kernel_failed_creates_leave_no_open(request, built):
    """An unprivileged user makes 9,000 regular files with mknod(2) (more than a host's
    open set has entries): a create publishes an entry to keep its new file until an open
    takes it over, and no open follows a mknod.  Every mknod succeeds, and another user's
    200 creates and opens afterwards too (kernel/inode.c: mknod drops the hold at once,
    and the lease work drops holds no open took over)."""
    ra = run_guest(request, ["hd:create-fail:9000"], ("--lease-ms", "2000"))
    assert ra.get("create_fail") == "9000", ra
