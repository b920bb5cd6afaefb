"""daxfs.ko under a hostile peer: a guest works on a daxfs.ko mount while this host runs
build/bin/daxfs-chaos on the shared memory file (docs/tools.md "daxfs-chaos").

What a user may expect: the guest kernel does not oops, warn or hang (dmesg is checked by
the `clean` step, the guest must finish within its timeout), no worker process is killed,
unmount works, and afterwards `fsck.daxfs -y` brings the region back to clean.  The
operations' errnos are reported, not judged (any errno is an answer under corruption).

Slow (QEMU TCG, about 2-3 minutes); runs with the other VM tests (DAXFS_VM_TESTS=1).
DAXFS_KCHAOS_SECONDS, DAXFS_KCHAOS_RATE, DAXFS_KCHAOS_KINDS and DAXFS_KCHAOS_SEED make longer, harder
or other runs.
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
sys.path.insert(0, str(REPO / "tests" / "vm"))
sys.path.insert(0, str(REPO / "tests"))
import cluster  # noqa: E402
from cluster import Cluster, Guest  # noqa: E402
from test_kernel_cluster import built, fsck, mkfs  # noqa: E402,F401
from test_fsck import Image  # noqa: E402
import daxfs_kguest as kg  # noqa: E402

SIZE = 128 << 20
SECS = int(os.environ.get("DAXFS_KCHAOS_SECONDS", "40"))
RATE = os.environ.get("DAXFS_KCHAOS_RATE", "100")
SEED = int(os.environ.get("DAXFS_KCHAOS_SEED", "1"))
CHAOS = REPO / "build" / "bin" / "daxfs-chaos"
# Not the host table, lanes or state page by default: a forged host state
# fences the guest at once (every operation EIO until a remount, as
# designed), which ends the run's interest after the first hit.
KINDS = os.environ.get("DAXFS_KCHAOS_KINDS",
                       "dirent,trie,inode,bucket,radix,symlink,free,limbo,openset")


def _chaos_when_mounted(shm, seed, log):
    """Waits for the guest's /chaos directory (the guest has mounted and started its
    workers), then corrupts the region for SECS - 5 seconds.  Returns the tool's
    summary line."""
    import daxfs
    end = time.monotonic() + 240
    while time.monotonic() < end:
        try:
            with daxfs.Region(str(shm), readonly=True) as r:
                if r.exists("/chaos"):
                    break
        except OSError:
            pass
        time.sleep(0.5)
    else:
        raise AssertionError("the guest never created /chaos")
    p = subprocess.run([str(CHAOS), "-s", str(seed), "-r", RATE, "-t", str(SECS - 5),
                        "-k", KINDS, "-l", str(log), str(shm)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()[0]


def test_kernel_guest_survives_chaos_host(request, built, tmp_path):
    with Cluster(label=request.node.name, size=SIZE, timeout=SECS + 200) as c:
        mkfs(c.shm)
        g = Guest("A", "daxfs-k", ["load", "mount:phys", f"py:chaos:{SECS}:3",
                                   "umount", "clean"])
        res = c.run([g], host_fn=lambda: _chaos_when_mounted(c.shm, SEED,
                                                              tmp_path / "chaos.log"))
        print(res.summary())
        print("chaos:", res.host.value if res.host else None)
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-y")
        assert rc in (0, 1), out[-3000:]
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out[-3000:]
    r = res.guests["A"].results
    assert r["chaos_killed"] == "0", r
    print("guest:", r)


def _dangling_name(shm):
    """/d/victim names an inode that does not exist (its entry's inode number
    changed by a stray store), beside /d/other; the data of a damaged name that
    the chaos run left a guest spinning on."""
    import daxfs
    with daxfs.Region(str(shm)) as r:
        r.mkdir("/d")
        r.write_file("/d/victim", b"v")
        r.write_file("/d/other", b"o")
        d = r.stat("/d").st_ino
    im = Image(shm)
    im.put64(im.dirents(d)["victim"][0], 999999)
    im.save()


def test_kernel_calls_on_a_name_naming_no_inode_return(request, built):
    """Every call on a name whose entry names no inode returns (open(O_CREAT) of it
    used to spin forever in the kernel: the name was taken for the create and
    missing for the open of the file there, round after round; rehearsal's CI
    run of the chaos test hung on it).  Creating it says EUCLEAN, as the
    user-space front ends do; fsck -y then removes the name."""
    with Cluster(label=request.node.name, size=SIZE, timeout=400) as c:
        mkfs(c.shm)
        _dangling_name(c.shm)
        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys",
                                            "py:damaged-name:d:victim:other", "umount",
                                            "clean"])])
        print(res.summary())
        r = res.guests["A"].results
        print("guest:", r)
        assert res.ok, res.summary()
        calls = kg.damaged_name_calls("d", "victim", "other")
        assert all(r.get("dn_" + k) not in (None, "hung", "died") for k in calls), r
        assert r["dn_creat"] == r["dn_creat_trunc"] == "EUCLEAN", r
        rc, out = fsck(c.shm, "-y")
        assert rc in (0, 1), out[-3000:]
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out[-3000:]
