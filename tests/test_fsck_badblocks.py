"""fsck.daxfs on a region with known bad ranges (--badblocks FILE).

A list in the format of /sys/block/pmemN/badblocks names pages of the
region as unreadable.  fsck must say which files or metadata they hold,
never load them (it reads zeros in their place: a test page keeps valid
bytes that fsck must not see), keep `-n` read-only, and with `-y`
replace them by zeros and repair what depended on them, saying what was
lost (docs/fsck.md "Bad ranges").
"""

import hashlib
import os
import struct
import subprocess

import pytest

from helpers import env

import daxfs

FSCK = os.path.join(env.BIN, "fsck.daxfs")
PAGE = 4096
INODE_MAGIC = 0x444E49
HOSTS = 2


def fsck(*args):
    p = subprocess.run([FSCK, *map(str, args)], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def bad_list(tmp_path, *pages, sectors=8):
    """A list naming the given region pages (512-byte sectors, as sysfs writes it)."""
    p = tmp_path / "badblocks"
    p.write_text("".join(f"{pg * PAGE // 512} {sectors}\n" for pg in pages))
    return p


@pytest.fixture
def img(tmp_path):
    """A small filesystem: /d/victim (3 pages: V, W, X), /d/other, /keep."""
    path = tmp_path / "img"
    subprocess.run([os.path.join(env.BIN, "mkfs.daxfs"), "-q", "-s", "8M", str(path)],
                   check=True)
    with daxfs.Region(str(path)) as r:
        r.mkdir("/d")
        r.write_file("/d/victim", b"V" * PAGE + b"W" * PAGE + b"X" * PAGE)
        r.write_file("/d/other", b"O" * 5000)
        r.write_file("/keep", b"K" * 100)
    return path


def page_of(path, needle):
    data = path.read_bytes()
    off = data.find(needle)
    assert off >= 0 and data.find(needle, off + 1) < 0
    return off // PAGE


def test_bad_data_page_named_then_zeroed(img, tmp_path):
    bb = bad_list(tmp_path, page_of(img, b"W" * PAGE))
    before = digest(img)
    rc, out = fsck("-n", "--badblocks", bb, img)
    assert rc == 4, out
    assert "file /d/victim (inode" in out and "page 1 (file bytes 4096-8191)" in out, out
    assert "cannot be read" in out and "fsck.daxfs -y replaces the page by zeros" in out
    assert digest(img) == before            # -n changes nothing

    rc, out = fsck("-y", "--badblocks", bb, img)
    assert rc == 1, out
    assert "overwritten with zeros" in out and "is LOST: replaced by zeros" in out, out
    rc, out = fsck("-n", img)
    assert rc == 0, out
    with daxfs.Region(str(img)) as r:
        assert r.read_file("/d/victim") == b"V" * PAGE + bytes(PAGE) + b"X" * PAGE
        assert r.read_file("/d/other") == b"O" * 5000


def test_bad_metadata_never_read(img, tmp_path):
    """The page of the inode records holds valid bytes: fsck reports them as lost,
    so it read zeros there, not the page."""
    with daxfs.Region(str(img)) as r:
        ino = r.stat("/d/victim").st_ino
    pg = page_of(img, struct.pack("<QI", ino, INODE_MAGIC))
    bb = bad_list(tmp_path, pg, sectors=1)
    rc, plain = fsck("-n", img)
    assert rc == 0, plain                    # the page itself is fine
    rc, out = fsck("-n", "--badblocks", bb, img)
    assert rc == 4, out
    assert f"(inode {ino}): metadata at" in out and "is unreadable" in out, out
    assert "inode record has a bad magic number" in out

    rc, out = fsck("-y", "--badblocks", bb, img)
    assert rc == 1, out
    assert "LOST: see the repairs above" in out, out
    rc, out = fsck("-n", img)
    assert rc == 0, out
    with daxfs.Region(str(img)) as r:      # a consistent, if emptier, filesystem
        r.write_file("/after", b"a")
        assert r.read_file("/after") == b"a"


def test_bad_free_space_loses_nothing(img, tmp_path):
    size = img.stat().st_size
    bb = bad_list(tmp_path, size // PAGE - 1)   # the last page: never allocated yet
    rc, out = fsck("-n", "--badblocks", bb, img)
    assert "nothing in use (free space)" in out, out
    assert rc == 0, out
    rc, out = fsck("-y", "--badblocks", bb, img)
    assert rc == 0, out
    with daxfs.Region(str(img)) as r:
        assert r.read_file("/d/victim")[PAGE:PAGE + 1] == b"W"


def test_bad_fixed_metadata_named(img, tmp_path):
    data = img.read_bytes()
    hosts = None
    for i in range(8):
        kind, _fl, off, _size, _r = struct.unpack_from("<IIQQQ", data, 152 + 32 * i)
        if kind == HOSTS:
            hosts = off
    bb = bad_list(tmp_path, hosts // PAGE, sectors=1)
    rc, out = fsck("-n", "--badblocks", bb, img)
    assert rc == 4, out
    assert "the host table (leases, open sets): unreadable" in out, out


def test_bad_superblock_refused(img, tmp_path):
    before = digest(img)
    rc, out = fsck("-y", "--badblocks", bad_list(tmp_path, 0, sectors=1), img)
    assert rc == 4, out
    assert "superblock lies on a bad range" in out and "restore it from a copy" in out
    assert digest(img) == before


@pytest.mark.parametrize("text", ["12\n", "x 8\n", "5 0\n", "1 2 3\n"])
def test_malformed_list(img, tmp_path, text):
    bb = tmp_path / "bb"
    bb.write_text(text)
    rc, out = fsck("-n", "--badblocks", bb, img)
    assert rc == 8, out
    assert "expected \"SECTOR COUNT\"" in out


def test_missing_list(img, tmp_path):
    rc, out = fsck("-n", "--badblocks", tmp_path / "none", img)
    assert rc == 8 and "cannot read the bad block list" in out, out


def test_bad_state_page_listed_when_unopenable(img, tmp_path):
    """The state page on a bad range: the filesystem cannot be opened read-only, and
    fsck still says where the bad ranges are."""
    data = img.read_bytes()
    state = None
    for i in range(8):
        kind, _fl, off, _size, _r = struct.unpack_from("<IIQQQ", data, 152 + 32 * i)
        if kind == 1:
            state = off
    rc, out = fsck("-n", "--badblocks", bad_list(tmp_path, state // PAGE, sectors=1), img)
    assert rc == 4, out
    assert f"bytes {state:#x}-{state + PAGE - 1:#x} (1 page(s))" in out, out
    assert "the filesystem could not be opened" in out
