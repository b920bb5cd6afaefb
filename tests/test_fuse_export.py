"""File handles on the FUSE mount (docs/fuse.md, "File handles").

name_to_handle_at() gives a handle that open_by_handle_at() turns back
into the same file or directory, also once the kernel has forgotten the
inode: here the mount is ended and mounted again (a fresh kernel inode
cache and a fresh server), which is what an NFS server re-exporting the
mount meets after its cache is trimmed.  A handle of a removed file gives
ESTALE, also once its inode number serves another file.
"""
import ctypes
import errno
import os

import pytest

from helpers import fuse as hf

pytestmark = pytest.mark.skipif(hf.skip_reason() is not None,
                                reason=str(hf.skip_reason()))

MAX_HANDLE_SZ = 128
_libc = ctypes.CDLL(None, use_errno=True)


class FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint),
                ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * MAX_HANDLE_SZ)]


def _raise(what):
    e = ctypes.get_errno()
    raise OSError(e, os.strerror(e), what)


def name_to_handle(path):
    h = FileHandle(handle_bytes=MAX_HANDLE_SZ)
    mount_id = ctypes.c_int()
    AT_FDCWD = -100
    if _libc.name_to_handle_at(AT_FDCWD, os.fsencode(path), ctypes.byref(h),
                               ctypes.byref(mount_id), 0):
        _raise(path)
    return h


def open_by_handle(mp, h, flags=os.O_RDONLY):
    mfd = os.open(mp, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = _libc.open_by_handle_at(mfd, ctypes.byref(h), flags)
        if fd < 0:
            _raise(mp)
        return fd
    finally:
        os.close(mfd)


def remount(m, region, mp):
    """Ends mount m and mounts region again on the same mount point: the
    kernel no longer has any inode of it."""
    assert m.umount() == 0
    return hf.Mount(region, mp=mp)


@pytest.fixture
def mp(tmp_path):
    return str(tmp_path)


def test_handle_opens_file_and_directory_after_remount(region, mp):
    m = hf.Mount(region, mp=mp)
    try:
        os.makedirs(m.path("d", "e"))
        with open(m.path("d", "e", "f"), "wb") as f:
            f.write(b"by handle" * 1000)
        fh = name_to_handle(m.path("d", "e", "f"))
        dh = name_to_handle(m.path("d", "e"))
        ino, dino = os.stat(m.path("d", "e", "f")).st_ino, os.stat(m.path("d", "e")).st_ino
        m = remount(m, region, mp)
        fd = open_by_handle(mp, fh)
        try:
            assert os.fstat(fd).st_ino == ino
            assert os.read(fd, 1 << 20) == b"by handle" * 1000
        finally:
            os.close(fd)
        m = remount(m, region, mp)
        # a directory: the kernel reconnects it to the root through ".."
        fd = open_by_handle(mp, dh, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert os.fstat(fd).st_ino == dino
            assert os.listdir(fd) == ["f"]
        finally:
            os.close(fd)
    finally:
        m.close()


def test_handle_of_removed_file_is_stale(region, mp):
    m = hf.Mount(region, mp=mp)
    try:
        with open(m.path("old"), "wb") as f:
            f.write(b"old data")
        old = os.stat(m.path("old")).st_ino
        h = name_to_handle(m.path("old"))
        os.unlink(m.path("old"))
        m = remount(m, region, mp)
        # files until one gets the old number back (the core reuses
        # numbers; the generation tells them apart), or enough tried
        reused = None
        for i in range(64):
            p = m.path("new%d" % i)
            with open(p, "wb") as f:
                f.write(b"new data %d" % i)
            if os.stat(p).st_ino == old:
                reused = p
                break
        with pytest.raises(OSError) as ei:
            os.close(open_by_handle(mp, h))
        assert ei.value.errno == errno.ESTALE
        if reused:
            with open(reused, "rb") as f:
                assert f.read().startswith(b"new data")
    finally:
        m.close()
