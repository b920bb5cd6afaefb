"""fallocate, SEEK_DATA / SEEK_HOLE on the FUSE mount (docs/fuse.md, docs/files.md
"fallocate"): fallocate(1) and xfs_io from util-linux and xfsprogs on the mount, lseek
through Python, and a second host (libdaxfs on the same region) that sees the holes.
Skipped, with the reason, where FUSE cannot be mounted.
"""
import os
import shutil
import subprocess
import time

import pytest

from helpers import fuse as hf

import daxfs

pytestmark = pytest.mark.skipif(hf.skip_reason() is not None,
                                reason=str(hf.skip_reason()))

PAGE = 4096


@pytest.fixture
def mnt(region):
    m = hf.Mount(region)
    yield m
    m.close()


def pattern(n):
    return bytes((i * 7 + 1) % 251 for i in range(n))


def run(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, (cmd, p.stdout, p.stderr)
    return p.stdout


def test_fuse_punch_zero_prealloc_with_tools(mnt, region):
    """fallocate -p frees blocks (st_blocks, df) and reads as zeros, the size stays;
    -z zeroes; -n allocates beyond EOF; -l grows with zeros; xfs_io's seek finds the
    hole; another host sees the same hole and bytes."""
    if not shutil.which("fallocate"):
        pytest.skip("fallocate(1) missing")
    f = mnt.path("f")
    data = pattern(64 * PAGE)
    with open(f, "wb") as fh:
        fh.write(data)
    st0 = os.stat(f)
    free0 = os.statvfs(mnt.mp).f_bfree
    run("fallocate", "-p", "-o", str(8 * PAGE + 100), "-l", str(16 * PAGE), f)
    st1 = os.stat(f)
    assert st1.st_size == st0.st_size
    # pages 9..23 wholly inside [8 pages + 100, 24 pages + 100)
    assert st0.st_blocks - st1.st_blocks == 15 * PAGE // 512
    want = bytearray(data)
    want[8 * PAGE + 100:24 * PAGE + 100] = bytes(16 * PAGE)
    with open(f, "rb") as fh:
        assert fh.read() == bytes(want)
    fd = os.open(f, os.O_RDONLY)
    try:
        assert os.lseek(fd, 0, os.SEEK_HOLE) == 9 * PAGE
        assert os.lseek(fd, 9 * PAGE, os.SEEK_DATA) == 24 * PAGE
        assert os.lseek(fd, 24 * PAGE, os.SEEK_HOLE) == 64 * PAGE
        with pytest.raises(OSError) as e:
            os.lseek(fd, 64 * PAGE, os.SEEK_DATA)
        assert e.value.errno == 6
    finally:
        os.close(fd)
    if shutil.which("xfs_io"):
        out = run("xfs_io", "-r", "-c", "seek -h 0", f)
        assert str(9 * PAGE) in out, out
    # freed pages come back once the epoch passes (the mount's housekeeping
    # reclaims every other lease tick)
    deadline = time.monotonic() + 60
    while os.statvfs(mnt.mp).f_bfree < free0 + 15 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert os.statvfs(mnt.mp).f_bfree >= free0 + 15
    run("fallocate", "-z", "-o", "10", "-l", "20", f)
    want[10:30] = bytes(20)
    run("fallocate", "-n", "-o", str(64 * PAGE), "-l", str(8 * PAGE), f)
    assert os.stat(f).st_size == 64 * PAGE
    assert os.stat(f).st_blocks == st1.st_blocks + 8 * PAGE // 512
    g = mnt.path("g")
    run("fallocate", "-l", str(5 * PAGE + 3), g)
    assert os.stat(g).st_size == 5 * PAGE + 3
    with open(g, "rb") as fh:
        assert fh.read() == bytes(5 * PAGE + 3)
    with open(f, "rb") as fh:
        assert fh.read() == bytes(want)
    with daxfs.Region(region) as r:
        h = r.open("/f")
        assert h.read_all() == bytes(want)
        assert h.seek_hole(0) == 9 * PAGE
        assert all(not (9 * PAGE <= e.logical < 24 * PAGE) for e in h.extents())


def test_fuse_fallocate_errors(mnt):
    """Linux's errors come through: EOPNOTSUPP for a punch without KEEP_SIZE and for
    modes daxfs lacks, EINVAL for an empty range."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long,
                               ctypes.c_long]
    fd = os.open(mnt.path("e"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        for mode, off, ln, err in ((0x02, 0, PAGE, 95), (0x08, 0, PAGE, 95),
                                   (0x20, 0, PAGE, 95), (0, 0, 0, 22)):
            assert libc.fallocate(fd, mode, off, ln) == -1, mode
            assert ctypes.get_errno() == err, (mode, ctypes.get_errno())
        assert libc.fallocate(fd, 0, 0, PAGE) == 0
        assert os.fstat(fd).st_size == PAGE
    finally:
        os.close(fd)


def test_fuse_available_space_fits_one_file(mnt):
    """df's "available" is space a file can really take: fallocate of all of it
    succeeds (xfstests generic/103 asks for available less 512 KiB on 2 GiB; the
    file's own radix nodes, about 1/512 of its data, must be set aside), and a
    write of more than the free blocks fails with ENOSPC, never a short file."""
    f = mnt.path("big")
    vfs = os.statvfs(mnt.mp)
    assert 0 < vfs.f_bavail <= vfs.f_bfree
    fd = os.open(f, os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        os.posix_fallocate(fd, 0, vfs.f_bavail * vfs.f_frsize)
    finally:
        os.close(fd)
    assert os.stat(f).st_size == vfs.f_bavail * vfs.f_frsize
