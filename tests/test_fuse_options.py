"""The FUSE mount's speed options (docs/fuse.md, "Options" and "Speed").

-o noxattr: no extended attributes, and each write(2) is one request (the
kernel's look-up of security.capability before every write gets ENOSYS
once and is never sent again).  -o clone_fd,max_threads=N: a /dev/fuse
descriptor per worker, at most N workers; programs see the same files.
"""
import errno
import os
import threading

import pytest

from helpers import fuse as hf

pytestmark = pytest.mark.skipif(hf.skip_reason() is not None,
                                reason=str(hf.skip_reason()))


def _requests(m, opcode):
    """How many requests of opcode the server printed (-o debug)."""
    return m.output().count("opcode: %s " % opcode)


def test_noxattr_one_request_per_write(region):
    m = hf.Mount(region, opts=["noxattr,debug"])
    try:
        n = 50
        fd = os.open(m.path("f"), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            for i in range(n):
                assert os.write(fd, bytes([65 + i % 26]) * 4096) == 4096
        finally:
            os.close(fd)
        with pytest.raises(OSError) as ei:
            os.setxattr(m.path("f"), "user.k", b"v")
        assert ei.value.errno == errno.EOPNOTSUPP
        with pytest.raises(OSError) as ei:
            os.getxattr(m.path("f"), "user.k")
        assert ei.value.errno == errno.EOPNOTSUPP
        with open(m.path("f"), "rb") as f:
            assert f.read() == b"".join(bytes([65 + i % 26]) * 4096 for i in range(n))
        assert _requests(m, "WRITE") >= n
        # one for the whole mount at most, not one per write
        assert _requests(m, "GETXATTR") <= 1, _requests(m, "GETXATTR")
    finally:
        m.close()


def test_clone_fd_and_two_workers_serve_parallel_programs(region):
    m = hf.Mount(region, opts=["clone_fd,max_threads=2"])
    errors = []

    def worker(t):
        try:
            data = (b"%d" % t) * 100000
            for k in range(20):
                p = m.path("t%d_%d" % (t, k))
                with open(p, "wb") as f:
                    f.write(data)
                with open(p, "rb") as f:
                    assert f.read() == data
                os.unlink(p)
        except Exception as e:          # reported below, with its thread
            errors.append((t, e))

    try:
        ts = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors, errors
        assert os.listdir(m.mp) == []
        assert m.umount() == 0
    finally:
        m.close()
