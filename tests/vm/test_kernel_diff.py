"""The randomized differential test against daxfs.ko (docs/testing.md "A
differential test of the preload", which it reuses): seeded random sequences of
file-system calls (tests/helpers/preload_diff_ops.py) run in one guest on a tmpfs
and on a daxfs.ko mount, and must print the same; then the host's fsck is clean.

The guest kernel is the same for both sides, so any difference is daxfs.ko's (or
the core's).  DAXFS_KDIFF_SEEDS sets the seeds (1..N, default 60) and
DAXFS_DIFF_OPS the calls per seed (300), DAXFS_KDIFF_FAMILIES the generator's
further call families (data,rename2,owner,tmpfile,locks,fdlink,abslink: tests/helpers/diff_data_ops.py;
the guest's tmpfs has no user.* attributes).  Descriptors of removed directories
stay open (DAXFS_DIFF_KEEP_REMOVED, as in the preload's test: daxfs.ko changes a
removed directory's attributes in its inode, docs/kernel.md).  Skip/fail rules as in
test_kernel_cluster.py.  Console log: build/vm/logs/test_kernel_diff/A.log.

The third test makes it three hosts at once on one region: two guests, each
with its own seeds in its own directory, and the host itself through a FUSE
mount (tests/test_fuse_diff.py's way); each must answer as its own tmpfs does.
"""
import os
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
from test_kernel_cluster import built, fsck, mkfs  # noqa: E402,F401

sys.path.insert(0, str(REPO / "tests"))
from helpers import fuse as hf  # noqa: E402
from test_fuse_diff import differences, run_ops  # noqa: E402

SIZE = 256 << 20
SEEDS = int(os.environ.get("DAXFS_KDIFF_SEEDS", "60"))
OPS = int(os.environ.get("DAXFS_DIFF_OPS", "300"))
# the guest's tmpfs (Linux 6.1) has no user.* extended attributes
FAMILIES = os.environ.get("DAXFS_KDIFF_FAMILIES",
                          "data,rename2,owner,tmpfile,locks,fdlink,abslink").replace(",", "+")


@pytest.mark.timeout(1800)
def test_kernel_random_calls_match_tmpfs(built):
    """Random calls (open with flag mixes and directory descriptors,
    read/write/pread/pwrite/lseek, truncate, the stat family, rename, link,
    symlink, readlink, unlink, mkdir, rmdir, listdir, scandir, chdir/fchdir,
    utime, chmod, dup, access, realpath) on names in up to 3 levels with ".",
    "..", symlinks and 255-byte names print the same on daxfs.ko as on tmpfs
    in the same guest; fsck is clean afterwards."""
    with Cluster(label="test_kernel_diff", size=SIZE, timeout=1500) as c:
        mkfs(c.shm)
        steps = ["load", "mount:phys", f"df:diff:fam={FAMILIES}:keep=1:{SEEDS}:{OPS}", "umount", "rmmod",
                 "clean"]
        res = c.run([Guest("A", "daxfs-k", steps)])
        ra = res.guests["A"].results
        assert ra.get("diff") == "ok", res.summary() + "\n" + res.guests["A"].tail(40)
        assert ra.get("diff_seeds") == str(SEEDS), res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out


@pytest.mark.timeout(1800)
def test_kernel_random_calls_as_a_user_match_tmpfs(built):
    """The same as user nobody (65534), owner of its directories, so that
    the permission checks count (the modes the calls set: 0, 0444, sticky,
    set-id bits): every EACCES and EPERM as on tmpfs."""
    with Cluster(label="test_kernel_diff_user", size=SIZE, timeout=1500) as c:
        mkfs(c.shm)
        steps = ["load", "mount:phys",
                 f"df:diff:fam={FAMILIES}:uid=65534:keep=1:{SEEDS}:{OPS}",
                 "umount",
                 "rmmod", "clean"]
        res = c.run([Guest("A", "daxfs-k", steps)])
        ra = res.guests["A"].results
        assert ra.get("diff") == "ok", res.summary() + "\n" + res.guests["A"].tail(40)
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out


@pytest.mark.timeout(1800)
def test_kernel_three_hosts_random_calls_match_tmpfs(request, built):
    """Guests A and B on daxfs.ko and the host on a FUSE mount of the same
    region run different seeds at once, each in its own directory: each
    answers as tmpfs does, and fsck is clean afterwards."""
    if hf.skip_reason():
        pytest.skip(hf.skip_reason())
    n = max(SEEDS // 2, 1)
    host_seeds = list(range(2 * n + 1, 3 * n + 1))
    with Cluster(label=request.node.name, size=SIZE, timeout=1500) as c:
        mkfs(c.shm)
        found = {}

        def host_peer():
            with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
                want = run_ops(os.path.join(tmp, "t"), OPS, host_seeds)
            m = hf.Mount(str(c.shm), opts=["allow_other"])
            try:
                got = run_ops(m.path("diffH"), OPS, host_seeds)
            finally:
                found["umount"] = m.umount(timeout=120)
            found["diff"] = differences(want, got, host_seeds)
            return True

        guests = [Guest(g, "daxfs-k", ["load", "mount:phys",
                                        f"df:diff:fam={FAMILIES}:keep=1:{n}:{OPS}:"
                                        f"{1 + i * n}:{g}",
                                        "umount", "rmmod", "clean"])
                  for i, g in enumerate("AB")]
        res = c.run(guests, host_fn=host_peer)
        assert res.ok, res.summary()
        for g in "AB":
            assert res.guests[g].results.get("diff") == "ok", \
                res.summary() + "\n" + res.guests[g].tail(40)
        assert found.get("umount") == 0 and not found.get("diff"), found
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out


def one_sequence_two_guests(request, uid=None):
    """Guest A's generator with guest B its peer (df:split, df:peer); asserts
    that they matched A's tmpfs run, and fsck."""
    n = max(SEEDS // 2, 1)
    user = f":uid={uid}" if uid is not None else ""
    with Cluster(label=request.node.name, size=SIZE, timeout=1500) as c:
        mkfs(c.shm)
        tail = ["umount", "rmmod", "clean"]
        guests = [Guest("A", "daxfs-k", ["load", "mount:phys",
                                         f"df:split:fam={FAMILIES}{user}:keep=1:{n}:{OPS}"]
                        + tail),
                  Guest("B", "daxfs-k", ["load", "mount:phys", f"df:peer{user}"] + tail)]
        res = c.run(guests)
        assert res.ok, res.summary()
        ra, rb = res.guests["A"].results, res.guests["B"].results
        assert ra.get("diff") == "ok", res.summary() + "\n" + res.guests["A"].tail(40)
        assert ra.get("diff_seeds") == str(n), res.summary()
        assert rb.get("peer") == "ok" and int(rb.get("peer_calls", 0)) > 0, \
            res.summary() + "\n" + res.guests["B"].tail(20)
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out


@pytest.mark.timeout(1800)
def test_kernel_one_sequence_from_two_guests_matches_tmpfs(request, built):
    """One sequence per seed on one tree from two guests (docs/testing.md
    "One tree, two hosts"): A runs the generator, and B makes about half
    of its calls by path, in lock-step through a mailbox file both map
    from the region.  Each guest's dentries, inodes and record caches must
    answer at once for what the other just did: the output must be the
    same as A's with its peer on a tmpfs; fsck is clean afterwards."""
    one_sequence_two_guests(request)


@pytest.mark.timeout(1800)
def test_kernel_one_sequence_from_two_guests_as_a_user(request, built):
    """The same as user nobody (65534) on both guests: a mode, owner or
    sticky bit one guest sets must decide the other's next permission check
    at once, whatever its inodes cached (docs/kernel.md "Coherence")."""
    one_sequence_two_guests(request, uid=65534)
