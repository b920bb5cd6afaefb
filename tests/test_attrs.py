"""Attribute flags (chattr / lsattr, format 9, docs/attrs.md) through the
Python bindings and the `daxfs` command: two Region handles are two hosts
on one region; what host A sets, host B obeys at once, also through a
file it opened before."""

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import daxfs  # noqa: E402
from helpers import env  # noqa: E402

SIZE = 32 << 20
DAXFS = os.path.join(env.BIN, "daxfs")


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "fs.img"
    daxfs.mkfs(str(path), SIZE)
    return str(path)


def refused(fn, *args):
    with pytest.raises(OSError) as e:
        fn(*args)
    assert e.value.errno == errno.EPERM, e.value


def test_immutable_across_hosts(image):
    with daxfs.Region(image) as a, daxfs.Region(image) as b:
        a.write_file("/f", b"hello\n")
        a.write_file("/g", b"other\n")
        f = b.open("/f")
        f.pwrite(b"H", 0)
        a.setflags("/f", daxfs.FL_IMMUTABLE)
        assert b.getflags("/f") == daxfs.FL_IMMUTABLE
        refused(f.pwrite, b"x", 0)
        refused(b.write_file, "/f", b"new\n")
        refused(b.truncate, "/f", 0)
        refused(b.chmod, "/f", 0o600)
        refused(b.unlink, "/f")
        refused(b.rename, "/f", "/h")
        refused(b.rename, "/g", "/f")
        refused(b.link, "/f", "/l")
        refused(b.setxattr, "/f", "user.a", b"1")
        assert b.read_file("/f") == b"Hello\n"
        b.setflags("/f", 0)
        assert a.getflags("/f") == 0
        f.pwrite(b"J", 0)
        f.close()
        assert a.read_file("/f") == b"Jello\n"
        b.unlink("/f")


def test_append_only_and_directories(image):
    with daxfs.Region(image) as a, daxfs.Region(image) as b:
        a.mkdir("/d")
        a.write_file("/d/x", b"x")
        a.write_file("/log", b"1\n")
        a.setflags("/log", daxfs.FL_APPEND | daxfs.FL_NODUMP)
        assert b.getflags("/log") == daxfs.FL_APPEND | daxfs.FL_NODUMP
        with b.open("/log") as f:
            refused(f.pwrite, b"0", 0)
            f.append(b"2\n")
        refused(b.truncate, "/log", 1)
        refused(b.unlink, "/log")
        assert a.read_file("/log") == b"1\n2\n"
        a.setflags("/d", daxfs.FL_APPEND)
        b.write_file("/d/y", b"y")
        refused(b.unlink, "/d/x")
        a.setflags("/d", daxfs.FL_IMMUTABLE)
        refused(b.write_file, "/d/z", b"z")
        refused(b.mkdir, "/d/e")
        with pytest.raises(OSError) as e:
            a.setflags("/d", 0x1)
        assert e.value.errno == errno.EOPNOTSUPP


def test_daxfs_command_chattr_lsattr(image):
    def run(*args, stdin=None):
        return subprocess.run([DAXFS, "-r", image, *args], input=stdin,
                              capture_output=True)

    assert run("write", "/f", stdin=b"v1\n").returncode == 0
    assert run("lsattr", "/f").stdout == b"----- /f\n"
    assert run("chattr", "+i", "+A", "/f").returncode == 0
    assert run("lsattr", "/f").stdout == b"-i--A /f\n"
    r = run("rm", "/f")
    assert r.returncode != 0 and b"Operation not permitted" in r.stderr
    r = run("write", "-a", "/f", stdin=b"v2\n")
    assert r.returncode != 0 and b"Operation not permitted" in r.stderr
    assert run("chattr", "-i", "=a", "/f").returncode == 0
    assert run("lsattr", "/f").stdout == b"--a-- /f\n"
    assert run("write", "-a", "/f", stdin=b"v2\n").returncode == 0
    assert run("cat", "/f").stdout == b"v1\nv2\n"
    assert run("chattr", "+q", "/f").returncode != 0
    assert run("chattr", "=", "/f").returncode != 0


@pytest.mark.skipif(not (shutil.which("chattr") and shutil.which("lsattr")),
                    reason="chattr and lsattr (e2fsprogs) are needed")
def test_fuse_chattr_and_other_host(image):
    """chattr / lsattr on the FUSE mount (FS_IOC_* ioctls, which the
    kernel's fuse sends to daxfs-fuse): another host sees the flag and is
    refused; a flag the other host sets binds the mount (open for
    writing, rm)."""
    from helpers import fuse as hf
    if hf.skip_reason() is not None:
        pytest.skip(str(hf.skip_reason()))
    m = hf.Mount(image)
    try:
        f = m.path("f")
        with open(f, "w") as fp:
            fp.write("v1\n")
        assert subprocess.run(["chattr", "+i", f]).returncode == 0
        out = subprocess.run(["lsattr", f], capture_output=True, text=True)
        assert out.stdout.split()[0][4] == "i", out
        with daxfs.Region(image) as b:
            assert b.getflags("/f") == daxfs.FL_IMMUTABLE
            refused(b.write_file, "/f", b"x")
            refused(b.unlink, "/f")
            b.setflags("/f", daxfs.FL_APPEND)
        out = subprocess.run(["lsattr", f], capture_output=True, text=True)
        assert out.stdout.split()[0][4:6] == "-a", out
        refused(open, f, "w")
        refused(os.unlink, f)
        with open(f, "a") as fp:
            fp.write("v2\n")
        assert subprocess.run(["chattr", "-a", f]).returncode == 0
        os.unlink(f)
    finally:
        m.close()
