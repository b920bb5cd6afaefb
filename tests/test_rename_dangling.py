"""A rename of (or onto) a name that names no inode ends with EUCLEAN.

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

import pytest
from test_fsck import Image, fsck

import daxfs


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
