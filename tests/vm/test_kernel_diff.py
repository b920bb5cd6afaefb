"""The randomized differential test against daxfs.ko (docs/testing.md "A
differential test of the preload", which it reuses): seeded random sequences of
file-system calls (tests/helpers/preload_diff_ops.py) run in one guest on a tmpfs
and on a daxfs.ko mount, and must print the same; then the host's fsck is clean.

The guest kernel is the same for both sides, so any difference is daxfs.ko's (or
the core's).  DAXFS_KDIFF_SEEDS sets the seeds (1..N, default 60) and
DAXFS_DIFF_OPS the calls per seed (300).  Skip/fail rules as in
test_kernel_cluster.py.  Console log: build/vm/logs/test_kernel_diff/A.log.
"""
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
from test_kernel_cluster import built, fsck, mkfs  # noqa: E402,F401

SIZE = 256 << 20
SEEDS = int(os.environ.get("DAXFS_KDIFF_SEEDS", "60"))
OPS = int(os.environ.get("DAXFS_DIFF_OPS", "300"))


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
        steps = ["load", "mount:phys", f"df:diff:{SEEDS}:{OPS}", "umount", "rmmod",
                 "clean"]
        res = c.run([Guest("A", "daxfs-k", steps)])
        ra = res.guests["A"].results
        assert ra.get("diff") == "ok", res.summary() + "\n" + res.guests["A"].tail(40)
        assert ra.get("diff_seeds") == str(SEEDS), res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
