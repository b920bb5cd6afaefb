"""A host killed at every step of an xattr change (docs/xattr.md "Crash
story"), with the crash build of libdaxfs (`make crash`): after its lease
runs out and a survivor recovers it, the attribute holds its old or its
new value (never a mix), the other attributes are intact, nothing leaked
(fsck -n clean, used bytes = reachable), and the inode's attributes can be
changed again (the dead host's claim is gone)."""

import os
import subprocess
import sys
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

LEASE_MS = 300
SIZE = 16 * env.MiB
OLD = bytes(range(256)) * 20            # 5120 bytes: a paged set
NEW = b"n" * 6000
KEEP = b"keep"

VICTIM = r"""
import sys
sys.path.insert(0, sys.argv[1])
import daxfs
with daxfs.Region(sys.argv[2]) as r:
    op = sys.argv[3]
    if op == "set":
        r.setxattr("/f", "user.a", b"n" * 6000)
    elif op == "create":
        r.setxattr("/g", "user.a", b"n" * 6000)
    else:
        r.removexattr("/h", "user.only")
"""

# (crash point, its hit, the change): each step of set, insert, removal
CASES = [
    ("xattr.page", 1, "set"), ("xattr.page", 2, "set"),
    ("xattr.built", 1, "set"), ("xattr.published", 1, "set"),
    ("xattr.retire", 1, "set"), ("xattr.retire", 2, "set"),
    ("xattr.retire", 3, "set"),
    ("xattr.built", 1, "create"), ("xattr.published", 1, "create"),
    ("xattr.built", 1, "remove"), ("xattr.published", 1, "remove"),
    ("xattr.retire", 1, "remove"),
]


def fsck_clean(path):
    code, out = env.fsck(path, "-n")
    assert code == 0 and "clean" in out and " 0 bytes leaked" in out, out


@pytest.fixture
def region():
    path = env.region_path("xcrash")
    yield path
    env.remove(path)


@pytest.mark.parametrize("point,nth,change", CASES)
def test_crash_during_change(crash_build, region, point, nth, change):
    env.mkfs(region, SIZE, lease_ms=LEASE_MS)
    with daxfs.Region(region) as r:
        for name in ("/f", "/g", "/h"):
            r.write_file(name, b"data")
        r.setxattr("/f", "user.a", OLD)
        r.setxattr("/f", "user.keep", KEEP)
        r.setxattr("/h", "user.only", KEEP)
        r.reclaim()
    venv = dict(os.environ, DAXFS_LIB=crash_build,
                DAXFS_CRASH_AT="%s:%d" % (point, nth))
    p = subprocess.run([sys.executable, "-c", VICTIM, env.PYDIR, region,
                        change], env=venv, capture_output=True, timeout=60)
    assert p.returncode == -9, "victim: %d %s" % (p.returncode, p.stderr[-2000:])
    with daxfs.Region(region) as r:
        time.sleep(LEASE_MS / 1000 * 1.3)
        r.reclaim()
        states = [h["state"] for h in r.info()["hosts"] if not h["self"]]
        assert "recovered" in states, states
        if change == "set":
            assert r.getxattr("/f", "user.a") in (OLD, NEW)
            assert r.getxattr("/f", "user.keep") == KEEP
        elif change == "create":
            assert r.listxattr("/g") in ([], ["user.a"])
            if r.listxattr("/g"):
                assert r.getxattr("/g", "user.a") == NEW
        else:
            assert r.listxattr("/h") in ([], ["user.only"])
        r.reclaim()
    # recovery alone left nothing behind: no set, page or claim
    fsck_clean(region)
    with daxfs.Region(region) as r:
        for name in ("/f", "/g", "/h"):
            r.setxattr(name, "user.after", b"x")
            assert r.getxattr(name, "user.after") == b"x"
        r.reclaim()
    fsck_clean(region)
    with daxfs.Region(region) as r:
        for name in ("/f", "/g", "/h"):
            r.unlink(name)
        r.reclaim()
    fsck_clean(region)
