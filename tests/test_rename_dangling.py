"""A rename of (or onto) a name that names no inode ends with EUCLEAN;
so do a create, an open and a stat of it, through every front end.

Found by the chaos host (tests/test_chaos.py, docs/testing.md "Chaos
runs"): renames took 40-42 s, their stacks in daxfs_rename's retry loop.
A stray store had changed a directory entry's inode number; the rename
found the name, not its inode, and took that for an unlink freeing the
inode after its lookup: it retried for four leases (40 s with the default
lease), then failed with EAGAIN, and did so again on every rename of that
name.  An unlink removes the name before it frees the inode, so a name
that keeps naming no inode is damage: EUCLEAN, at once, and fsck -y
removes it.
"""

import errno
import os
import sys

import pytest
from helpers import fuse as hf
from helpers import preload as pl
from test_fsck import Image, fsck

import daxfs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "vm"))
from daxfs_kguest import damaged_name_calls  # noqa: E402


def _dangling(path):
    daxfs.mkfs(path, 16 << 20, lease_ms=1000)
    with daxfs.Region(path) as r:
        r.mkdir("/d")
        r.write_file("/d/victim", b"v")
        r.write_file("/d/other", b"o")
        d = r.stat("/d").st_ino
    im = Image(path)
    off = im.dirents(d)["victim"][0]
    im.put64(off, 999999)			# the entry's inode number
    im.save()


@pytest.mark.parametrize("src,dst", [("/d/victim", "/d/new"),
                                     ("/d/other", "/d/victim")])
def test_rename_of_dangling_name_is_euclean(region_path, src, dst):
    _dangling(region_path)
    with daxfs.Region(region_path) as r:
        with pytest.raises(OSError) as e:
            r.rename(src, dst)
        assert e.value.errno == errno.EUCLEAN
        assert r.read_file("/d/other") == b"o"
    rc, out = fsck(region_path, "-y")
    assert rc == 1, out
    with daxfs.Region(region_path) as r:
        assert sorted(r.listdir("/d")) == ["other"]
        r.rename("/d/other", "/d/victim")
        assert r.read_file("/d/victim") == b"o"


# Session 63: daxfs.ko's open(O_CREAT) of such a name went round for ever
# (taken for the create, missing for the open: tests/vm/test_kernel_chaos.py);
# libdaxfs's went round 65,536 times to say EAGAIN, and a stat said ENOENT
# for a name that readdir lists.  tests/c/test_dangling_name.c has the core's
# side; these are the front ends'.

def _answers(calls):
    """Each call's errno name ("ok" when it succeeded)."""
    out = {}
    for name, fn in calls.items():
        try:
            fn()
            out[name] = "ok"
        except OSError as e:
            out[name] = errno.errorcode[e.errno]
    return out


EUCLEAN_ALL = {"creat": "EUCLEAN", "creat_trunc": "EUCLEAN", "open": "EUCLEAN",
               "stat": "EUCLEAN"}


def _posix_calls(path):
    """The calls of daxfs.ko's damaged-name test that open or look at the
    name (vm/daxfs_kguest.py), on path."""
    calls = damaged_name_calls(os.path.dirname(path), os.path.basename(path), "other")
    return {k: calls[k] for k in EUCLEAN_ALL}


def test_libdaxfs_calls_on_dangling_name_are_euclean(region_path):
    _dangling(region_path)
    with daxfs.Region(region_path) as r:
        got = _answers({"creat": lambda: r.write_file("/d/victim", b"x"),
                        "stat": lambda: r.stat("/d/victim")})
        assert got == {"creat": "EUCLEAN", "stat": "EUCLEAN"}
        assert r.read_file("/d/other") == b"o"


@pytest.mark.skipif(hf.skip_reason() is not None, reason=str(hf.skip_reason()))
def test_fuse_calls_on_dangling_name_are_euclean(region_path):
    _dangling(region_path)
    m = hf.Mount(region_path)
    try:
        assert _answers(_posix_calls(m.path("d", "victim"))) == EUCLEAN_ALL
        with open(m.path("d", "other"), "rb") as f:
            assert f.read() == b"o"
    finally:
        assert m.umount() == 0


PRELOAD_PROBE = """
import errno, os, sys
sys.path.insert(0, sys.argv[1])
from test_rename_dangling import _answers, _posix_calls
print(sorted(_answers(_posix_calls("/daxfs/d/victim")).items()))
"""


def test_preload_calls_on_dangling_name_are_euclean(region_path):
    _dangling(region_path)
    here = os.path.dirname(os.path.abspath(__file__))
    p = pl.run(region_path, ["python3", "-c", PRELOAD_PROBE, here], timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().strip() == str(sorted(EUCLEAN_ALL.items()))
