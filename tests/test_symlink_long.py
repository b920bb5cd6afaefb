"""Symlink targets of up to PATH_MAX - 1 = 4095 bytes.

Targets of up to 4088 bytes keep the header record that older code
reads; longer ones live in a bare page named by inode.root | 1 with the
length in inode.size (docs/inodes.md, "Symlink records").  Checked
through the bindings, the tools, fsck, corrupted regions and a base
image made by mkfs --source.
"""

import errno
import os
import subprocess

import pytest

from helpers import env
from test_fsck import FSCK, Image, fsck, fsck_json, sha

import daxfs

DAXFS = os.path.join(env.BIN, "daxfs")
MKFS = os.path.join(env.BIN, "mkfs.daxfs")
LENGTHS = [1, 4088, 4089, 4095]
PAGE = 4096


def target(n):
    """An n-byte target, different for every n."""
    stem = "t%d-" % n
    return (stem * (n // len(stem) + 1))[:n]


def dx(path, *args):
    return subprocess.run([DAXFS, "-r", path, *args], capture_output=True,
                          text=True, timeout=60)


@pytest.fixture
def links(region_path):
    """A closed region holding one symlink per length in LENGTHS."""
    assert os.access(FSCK, os.X_OK), "fsck.daxfs not built: run make"
    daxfs.mkfs(region_path, 16 << 20)
    with daxfs.Region(region_path) as r:
        inos = {}
        for n in LENGTHS:
            r.symlink(target(n), "/l%d" % n)
            inos[n] = r.lstat("/l%d" % n).st_ino
    return region_path, inos


def test_round_trip_and_limit(links):
    path, _ = links
    with daxfs.Region(path) as r:
        for n in LENGTHS:
            assert r.readlink("/l%d" % n) == target(n)
            assert r.lstat("/l%d" % n).st_size == n
        with pytest.raises(OSError) as ei:
            r.symlink("x" * 4096, "/l4096")
        assert ei.value.errno == errno.ENAMETOOLONG
        assert not r.exists("/l4096")
    for n in LENGTHS:
        res = dx(path, "readlink", "/l%d" % n)
        assert res.returncode == 0 and res.stdout == target(n) + "\n"
    rc, rep = fsck_json(path, "-n")
    assert rc == 0, rep
    assert rep["summary"]["symlinks"] == len(LENGTHS)
    assert rep["summary"]["leaked_bytes"] == 0


def test_record_forms(links):
    """4088 bytes: the old header record; 4089+: a tagged bare page."""
    path, inos = links
    im = Image(path)
    for n, ino in inos.items():
        root = im.field(ino, "root")
        if n <= 4088:
            assert root % 64 == 0 and im.u32(root) == n
            assert bytes(im.b[root + 8:root + 8 + n]) == target(n).encode()
        else:
            page = root & ~(PAGE - 1)
            assert root & (PAGE - 1) == 1
            assert bytes(im.b[page:page + n]) == target(n).encode()
            assert im.b[page + n] == 0


def test_resolution_through_long_target(region_path):
    """A 4095-byte target walked by the library's path resolution.  One
    that ends in a slash names a directory, as in the kernel: a file
    there is ENOTDIR (until 2026-12-05 the walk dropped the slash, and
    this test padded the target with "//" to find the file)."""
    daxfs.mkfs(region_path, 16 << 20)
    tgt = "./" * 2045 + "d/f"
    assert len(tgt) == 4093
    with daxfs.Region(region_path) as r:
        r.mkdir("/d")
        r.write_file("/d/f", b"found")
        r.symlink(tgt.replace("d/f", "d///f"), "/s")
        assert len(r.readlink("/s")) == 4095
        assert r.read_file("/s") == b"found"
        r.symlink(tgt + "//", "/slash")
        assert len(r.readlink("/slash")) == 4095
        with pytest.raises(OSError) as ei:
            r.read_file("/slash")
        assert ei.value.errno == errno.ENOTDIR


def test_unlink_gives_space_back(links):
    path, _ = links
    with daxfs.Region(path) as r:
        for n in LENGTHS:
            r.unlink("/l%d" % n)
        assert r.listdir("/") == []
    rc, rep = fsck_json(path, "-n")
    assert rc == 0, rep
    assert rep["summary"]["symlinks"] == 0
    assert rep["summary"]["leaked_bytes"] == 0


def assert_corrupt(path, bad, good):
    """readlink of /l<bad> is EUCLEAN; /l<good> still reads."""
    with daxfs.Region(path) as r:
        with pytest.raises(OSError) as ei:
            r.readlink("/l%d" % bad)
        assert ei.value.errno == errno.EUCLEAN
        assert r.readlink("/l%d" % good) == target(good)


@pytest.mark.parametrize("bad", [4096, 5000, 1 << 40, 4090, 4088, 0])
def test_corrupt_length_is_caught(links, bad):
    """A bare record's length (inode.size) beyond the page, not ending at
    the NUL, or in the header form's range: EUCLEAN and an fsck error."""
    path, inos = links
    im = Image(path)
    im.set_field(inos[4095], "size", bad)
    im.save()
    assert_corrupt(path, 4095, 4089)
    before = sha(path)
    rc, rep = fsck_json(path, "-n")
    assert rc == 4, rep
    assert sha(path) == before
    bad_inos = {p["ino"] for p in rep["problems"]
                if p["code"] == "symlink" and p["severity"] == "error"}
    assert bad_inos == {inos[4095]}


def test_corrupt_header_length_is_caught(links):
    path, inos = links
    im = Image(path)
    rec = im.field(inos[4088], "root")
    im.put32(rec, 4089)             # beyond what a header record holds
    im.save()
    assert_corrupt(path, 4088, 4095)
    rc, out = fsck(path, "-n")
    assert rc == 4 and "symlink" in out, out


def base_image(tmp_path, lengths):
    """mkfs --source of a tree holding file /f and symlinks /lN."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "f").write_text("base file\n")
    for n in lengths:
        os.symlink(target(n), src / ("l%d" % n))
    path = str(tmp_path / "base.img")
    res = subprocess.run([MKFS, "-q", "-s", "32M", "--source", str(src), path],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return path


def test_base_image_long_symlinks(tmp_path):
    path = base_image(tmp_path, LENGTHS)
    rc, rep = fsck_json(path, "-n")
    assert rc == 0, rep
    with daxfs.Region(path) as r:
        for n in LENGTHS:
            assert r.readlink("/l%d" % n) == target(n)
            assert r.lstat("/l%d" % n).st_size == n
        # copy-up (a chown writes the inode) keeps the target in the base
        r.chown("/l4095", 1234, 1234, follow_symlinks=False)
        assert r.lstat("/l4095").st_uid == 1234
        assert r.readlink("/l4095") == target(4095)
        r.unlink("/l4089")
    assert dx(path, "readlink", "/l4095").stdout == target(4095) + "\n"
    rc, rep = fsck_json(path, "-n")
    assert rc == 0, rep



def test_base_image_corrupt_length(tmp_path):
    """A base symlink whose length runs past PATH_MAX - 1: EUCLEAN for
    readlink (the others still read) and a base error for fsck."""
    path = base_image(tmp_path, [4095, 10])
    with daxfs.Region(path) as r:
        ino = r.lstat("/l4095").st_ino
    im = Image(path)
    base = im.regions[5][0]
    size_at = base + im.u64(base + 24) + 64 * (ino - 1) + 16
    assert im.u64(size_at) == 4095
    im.put64(size_at, 4096)
    im.save()
    assert_corrupt(path, 4095, 10)
    rc, rep = fsck_json(path, "-n")
    assert rc == 4, rep
    assert {(p["code"], p["ino"]) for p in rep["problems"]
            if p["severity"] == "error"} == {("base", ino)}
