"""Extended attributes and POSIX ACLs on the FUSE mount (docs/xattr.md,
docs/fuse.md): setfattr/getfattr, another host sees them, `cp -a` and
`rsync -aX` keep them, and setfacl grants or denies another user what the
mode bits alone would not, as the kernel enforces the ACL; a directory's
default ACL is inherited.  Needs attr, acl and rsync (scripts/setup.sh)."""

import os
import shutil
import subprocess

import pytest

from helpers import env
from helpers import fuse as hf

daxfs = env.daxfs

pytestmark = [
    pytest.mark.skipif(hf.skip_reason() is not None,
                       reason=str(hf.skip_reason())),
    pytest.mark.skipif(not all(shutil.which(t) for t in
                               ("setfattr", "getfattr", "setfacl", "getfacl",
                                "rsync")),
                       reason="attr, acl and rsync are needed (scripts/setup.sh)"),
]

USER = 4242


@pytest.fixture
def mnt(region):
    m = hf.Mount(region, opts=["allow_other"])
    yield m
    m.close()


def sh(*args, **kw):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=60,
                       **kw)
    assert p.returncode == 0, "%s: %s" % (args, p.stdout + p.stderr)
    return p.stdout


def as_user(uid, *args):
    """Runs a command as uid (gid uid, no groups): (exit code, output)."""
    p = subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid,
                        "--clear-groups", *args], capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def test_setfattr_getfattr_and_other_host(mnt, region):
    f = mnt.path("f")
    with open(f, "w") as fh:
        fh.write("data")
    sh("setfattr", "-n", "user.color", "-v", "blue", f)
    sh("setfattr", "-n", "trusted.t", "-v", "0x0102", f)
    assert "user.color=\"blue\"" in sh("getfattr", "-d", f)
    assert os.getxattr(f, "trusted.t") == b"\x01\x02"
    big = os.urandom(65536)
    os.setxattr(f, "user.big", big)
    assert os.getxattr(f, "user.big") == big
    with pytest.raises(OSError) as e:
        os.setxattr(f, "user.color", b"x", os.XATTR_CREATE)
    assert e.value.errno == 17
    # another host (a libdaxfs process) sees them, and its change here
    with daxfs.Region(region) as r:
        assert r.getxattr("/f", "user.color") == b"blue"
        r.setxattr("/f", "user.other", b"from another host")
    assert os.getxattr(f, "user.other") == b"from another host"
    os.removexattr(f, "user.color")
    assert sorted(os.listxattr(f)) == ["trusted.t", "user.big", "user.other"]
    # an unprivileged user sees no trusted.* names
    code, out = as_user(USER, "getfattr", "-d", "-m", "-", f)
    assert "trusted.t" not in out and "user.other" in out, out


def test_cp_a_and_rsync_keep_xattrs(mnt, tmp_path):
    src = mnt.path("src")
    os.mkdir(src)
    for i in range(5):
        p = os.path.join(src, "f%d" % i)
        with open(p, "w") as fh:
            fh.write("x" * i)
        os.setxattr(p, "user.n", b"%d" % i)
    os.setxattr(src, "user.dir", b"d")
    sh("cp", "-a", src, mnt.path("copy"))
    sh("rsync", "-aX", src + "/", str(tmp_path / "out") + "/")
    sh("rsync", "-aX", str(tmp_path / "out") + "/", mnt.path("back") + "/")
    for top in ("copy", "back"):
        assert os.getxattr(mnt.path(top), "user.dir") == b"d"
        for i in range(5):
            assert os.getxattr(mnt.path(top, "f%d" % i), "user.n") == b"%d" % i


def test_setfacl_enforced(mnt):
    d = mnt.path("d")
    os.mkdir(d)
    os.chmod(d, 0o755)
    f = os.path.join(d, "secret")
    with open(f, "w") as fh:
        fh.write("s3cret")
    os.chmod(f, 0o600)
    code, _ = as_user(USER, "cat", f)
    assert code != 0                      # mode bits: denied
    sh("setfacl", "-m", "u:%d:r" % USER, f)
    assert "user:%d:r--" % USER in sh("getfacl", f)
    code, out = as_user(USER, "cat", f)
    assert code == 0 and out == "s3cret", out
    code, _ = as_user(USER, "sh", "-c", "echo x >> " + f)
    assert code != 0                      # read only
    code, _ = as_user(USER + 1, "cat", f)
    assert code != 0                      # another user: still denied
    # the mask limits the named user
    sh("setfacl", "-m", "m::---", f)
    code, _ = as_user(USER, "cat", f)
    assert code != 0
    sh("setfacl", "-b", f)
    assert "user:%d" % USER not in sh("getfacl", f)


def test_default_acl_inherited(mnt):
    d = mnt.path("shared")
    os.mkdir(d)
    os.chmod(d, 0o700)
    sh("setfacl", "-m", "u:%d:rwx" % USER, d)
    sh("setfacl", "-d", "-m", "u:%d:rwx" % USER, d)
    with open(os.path.join(d, "new"), "w") as fh:
        fh.write("hello")
    os.mkdir(os.path.join(d, "sub"))
    assert "user:%d:rwx" % USER in sh("getfacl", os.path.join(d, "new"))
    assert "default:user:%d:rwx" % USER in sh("getfacl", os.path.join(d, "sub"))
    code, out = as_user(USER, "cat", os.path.join(d, "new"))
    assert code == 0 and out == "hello", out


def test_setfacl_by_owner_outside_group_clears_setgid(mnt):
    """As chmod does (xfstests generic/375): the owner who is not in the
    file's group keeps the set-group-ID bit only if in that group."""
    for kind in ("file", "dir"):
        p = mnt.path(kind)
        if kind == "file":
            open(p, "w").close()
        else:
            os.mkdir(p)
        os.chown(p, USER, USER)
        os.chmod(p, 0o2755)
        # in the group (gid USER): the bit stays
        code, out = as_user(USER, "setfacl", "-m", "u::rwx,g::rwx,o::rwx", p)
        assert code == 0, out
        assert os.stat(p).st_mode & 0o7777 == 0o2777
        os.chmod(p, 0o2755)
        # the owner, but outside the group: the bit goes
        r = subprocess.run(["setpriv", "--reuid=%d" % USER, "--regid=%d" % (USER + 1),
                            "--clear-groups", "setfacl", "-m", "u::rwx,g::rwx,o::rwx", p],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        assert os.stat(p).st_mode & 0o7777 == 0o777, oct(os.stat(p).st_mode)
