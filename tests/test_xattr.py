"""Extended attributes and POSIX ACLs through libdaxfs and the Python
bindings (docs/xattr.md): Linux's errors, two hosts seeing each other's
attributes, the access ACL folded into the mode, permission checks that
follow the ACL, default ACL inheritance, and fsck after unlink."""

import errno
import os
import struct

import pytest

from helpers import env

daxfs = env.daxfs

SIZE = 32 * env.MiB
ACL_ACCESS = "system.posix_acl_access"
ACL_DEFAULT = "system.posix_acl_default"
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 1, 2, 4, 8, 0x10, 0x20
UNDEF = 0xffffffff


def acl(*entries):
    """Linux's xattr layout of an ACL: version 2, {tag, perm, id}."""
    return struct.pack("<I", 2) + b"".join(
        struct.pack("<HHI", t, p, UNDEF if i is None else i)
        for t, p, i in entries)


@pytest.fixture
def fs(region_path):
    env.mkfs(region_path, SIZE)
    with daxfs.Region(region_path) as r:
        yield r


def errno_of(fn, *args, **kw):
    with pytest.raises(OSError) as e:
        fn(*args, **kw)
    return e.value.errno


def test_linux_errors(fs):
    fs.write_file("/f", b"x")
    fs.symlink("/f", "/l")
    fs.setxattr("/f", "user.a", b"1")
    assert errno_of(fs.setxattr, "/f", "user.a", b"2", 1) == errno.EEXIST
    assert errno_of(fs.setxattr, "/f", "user.b", b"2", 2) == errno.ENODATA
    assert errno_of(fs.getxattr, "/f", "user.b") == errno.ENODATA
    assert errno_of(fs.removexattr, "/f", "user.b") == errno.ENODATA
    assert errno_of(fs.setxattr, "/f", "foo.a", b"1") == errno.EOPNOTSUPP
    assert errno_of(fs.setxattr, "/f", "user.", b"1") == errno.EINVAL
    assert errno_of(fs.setxattr, "/f", "user." + "n" * 251, b"1") == errno.ERANGE
    assert errno_of(fs.setxattr, "/f", "user.big", b"v" * 65537) == errno.E2BIG
    fs.setxattr("/f", "user.max", b"v" * 65536)
    assert fs.getxattr("/f", "user.max") == b"v" * 65536
    # user.* only on files and directories; the symlink itself
    assert errno_of(fs.setxattr, "/l", "user.a", b"1",
                    follow_symlinks=False) == errno.EPERM
    fs.setxattr("/l", "trusted.t", b"t", follow_symlinks=False)
    assert fs.listxattr("/l", follow_symlinks=False) == ["trusted.t"]
    assert fs.getxattr("/l", "user.a") == b"1"      # followed to /f
    assert errno_of(fs.setxattr, "/f", ACL_DEFAULT,
                    acl((USER_OBJ, 7, None), (GROUP_OBJ, 5, None),
                        (OTHER, 5, None))) == errno.EACCES
    assert errno_of(fs.setxattr, "/f", ACL_ACCESS, b"junk") == errno.EINVAL


def test_two_hosts_see_each_other(fs, region_path):
    fs.write_file("/f", b"x")
    with daxfs.Region(region_path) as other:
        fs.setxattr("/f", "user.from_a", b"A")
        other.setxattr("/f", "user.from_b", b"B" * 5000)
        assert sorted(fs.listxattr("/f")) == ["user.from_a", "user.from_b"]
        assert other.getxattr("/f", "user.from_a") == b"A"
        assert fs.getxattr("/f", "user.from_b") == b"B" * 5000
        other.removexattr("/f", "user.from_a")
        assert fs.listxattr("/f") == ["user.from_b"]


def test_access_acl_enforced(fs):
    fs.write_file("/f", b"secret")
    fs.chmod("/f", 0o640)
    fs.chown("/f", 1000, 1000)
    # no ACL: the mode bits
    assert fs.access("/f", os.R_OK, 1000, 1000)
    assert fs.access("/f", os.R_OK, 2000, 1000)
    assert not fs.access("/f", os.R_OK, 2000, 2000)
    # user:2000:rw, mask rw: allowed; user 3000 is other: denied
    fs.setxattr("/f", ACL_ACCESS, acl((USER_OBJ, 6, None), (USER, 6, 2000),
                                      (GROUP_OBJ, 4, None), (MASK, 6, None),
                                      (OTHER, 0, None)))
    assert fs.stat("/f").st_mode & 0o777 == 0o660     # group bits = mask
    assert fs.access("/f", os.R_OK | os.W_OK, 2000, 2000)
    assert not fs.access("/f", os.R_OK, 3000, 3000)
    assert not fs.access("/f", os.X_OK, 2000, 2000)
    # the mask limits the named user
    fs.setxattr("/f", ACL_ACCESS, acl((USER_OBJ, 6, None), (USER, 6, 2000),
                                      (GROUP_OBJ, 4, None), (MASK, 4, None),
                                      (OTHER, 0, None)))
    assert fs.access("/f", os.R_OK, 2000, 2000)
    assert not fs.access("/f", os.W_OK, 2000, 2000)
    # root reads anything
    assert fs.access("/f", os.R_OK | os.W_OK, 0, 0)
    # an ACL that says no more than the mode is the mode, not stored
    fs.setxattr("/f", ACL_ACCESS, acl((USER_OBJ, 6, None),
                                      (GROUP_OBJ, 0, None), (OTHER, 4, None)))
    assert ACL_ACCESS not in fs.listxattr("/f")
    assert fs.stat("/f").st_mode & 0o777 == 0o604


def test_default_acl_inherited(fs):
    fs.mkdir("/d", 0o755)
    default = acl((USER_OBJ, 7, None), (USER, 7, 2000), (GROUP_OBJ, 5, None),
                  (MASK, 7, None), (OTHER, 0, None))
    fs.setxattr("/d", ACL_DEFAULT, default)
    fs.write_file("/d/f", b"x", mode=0o644)
    fs.acl_inherit("/d", "/d/f")
    # the access ACL is the default masked by the mode asked for
    got = fs.getxattr("/d/f", ACL_ACCESS)
    assert got == acl((USER_OBJ, 6, None), (USER, 7, 2000),
                      (GROUP_OBJ, 5, None), (MASK, 4, None), (OTHER, 0, None))
    assert fs.stat("/d/f").st_mode & 0o777 == 0o640
    assert fs.access("/d/f", os.R_OK, 2000, 2000)
    assert not fs.access("/d/f", os.W_OK, 2000, 2000)
    fs.mkdir("/d/sub", 0o755)
    fs.acl_inherit("/d", "/d/sub")
    assert fs.getxattr("/d/sub", ACL_DEFAULT) == default


def test_unlink_frees_and_fsck_clean(fs, region_path):
    for i in range(20):
        fs.write_file("/f%d" % i, b"x")
    fs.reclaim()
    before = fs.statfs()["used_bytes"]      # files and directory made
    for i in range(20):
        fs.setxattr("/f%d" % i, "user.v", bytes([i]) * (i * 700))
        fs.setxattr("/f%d" % i, "security.label", b"l%d" % i)
    fs.reclaim()
    code, out = env.fsck(region_path, "-n")
    assert code == 0 and "clean" in out, out
    assert fs.statfs()["used_bytes"] > before + 20 * 4096
    for i in range(20):
        fs.unlink("/f%d" % i)
    fs.reclaim()
    code, out = env.fsck(region_path, "-n")
    assert code == 0 and "clean" in out and " 0 bytes leaked" in out, out
    # the files went too: at most what they took before their attributes
    assert fs.statfs()["used_bytes"] <= before
