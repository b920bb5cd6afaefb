"""A file size beyond what DaxFS can hold, found by the kernel image fuzz (docs/testing.md
"Kernel image fuzz runs"): an inode whose size word reads 2^64 - 1 (or anything above the
2^48 maximum) is damage, not a size.  Before the fix stat() returned it as it was (the
kernel's i_size went negative: stat showed 18446744073709551615, lseek SEEK_END and SEEK_DATA
gave EINVAL, reads EUCLEAN); now every use of the inode answers EUCLEAN, like other damage,
and fsck reports the size.  The kernel side of the same image is the fuzz's regression image
"size" (vm/kfuzz.py REPROS, tests/vm/test_kernel_fuzz.py).
"""
import errno
import os
import struct
import subprocess

import pytest

from helpers import env

import daxfs

INODE_MAGIC = 0x444e49
SIZE_OFF = 32                       # struct daxfs_inode: ino, magic, flags, mode, uid, gid, nlink
MAX_FILE_SIZE = 1 << 48


def inode_record(img, ino):
    """Offset of the live inode record of ino in the image (64-byte aligned: the record
    starts with ino and the magic)."""
    want = struct.pack("<QI", ino, INODE_MAGIC)
    hits = [off for off in range(0, len(img), 64) if img[off:off + 12] == want]
    assert len(hits) == 1, hits
    return hits[0]


@pytest.mark.parametrize("bad", [(1 << 64) - 1, MAX_FILE_SIZE + 1])
def test_size_beyond_the_maximum_is_damage(tmp_path, bad):
    path = str(tmp_path / "r.img")
    daxfs.mkfs(path, 4 << 20, max_hosts=4)
    with daxfs.Region(path) as r:
        r.write_file("/f", b"x" * 500)
        r.write_file("/g", b"y" * 500)
        ino = r.stat("/f").st_ino
    with open(path, "r+b") as f:
        img = bytearray(f.read())
        off = inode_record(img, ino) + SIZE_OFF
        assert struct.unpack_from("<Q", img, off)[0] == 500
        struct.pack_into("<Q", img, off, bad)
        f.seek(0)
        f.write(img)
    with daxfs.Region(path) as r:
        with pytest.raises(OSError) as e:
            st = r.stat("/f")
            pytest.fail(f"stat gave size {st.st_size}")
        assert e.value.errno == errno.EUCLEAN
        with pytest.raises(OSError) as e:
            r.read_file("/f")
        assert e.value.errno == errno.EUCLEAN
        assert r.read_file("/g") == b"y" * 500          # the rest works
    p = subprocess.run([os.path.join(env.BIN, "fsck.daxfs"), "-n", path],
                       capture_output=True, text=True)
    assert p.returncode == 4 and "size" in p.stdout + p.stderr, p.stdout + p.stderr
