"""fsck.daxfs --convert: a format version 1 image (free-stack heads of one
word, 20-bit tag above a 44-bit offset in 64-byte units) becomes version 2
({offset, 64-bit tag} pairs), then 3, 4 (a regular file's shrink words
become its open write gate), 5 (an empty lock table), 6 (xattr claims)
7 (no lane names a strict write's redo record), 8 (data page words may
be unwritten: nothing to change) and 9 (inode flags carry chattr bits:
undefined bits are cleared).  The old images are written here from a fresh
one by encoding its words the old way (docs/format.md "Changelog")."""

import mmap
import os
import re
import shutil
import stat
import struct
import subprocess
import threading

import pytest

from helpers import env, superblock

import daxfs

FSCK = os.path.join(env.BIN, "fsck.daxfs")
DAXFS = os.path.join(env.BIN, "daxfs")
DATA = bytes(range(251)) * 97
NR_CLASSES = 5
CSUM_OFF = 508
CURRENT = 15         # format version after --convert (docs/format.md)
PAGE_CLASS = 4       # free_head[4]: 4 KiB pages
EXTENT_MASK = 0xfff  # version 12: a page stack word is last | (pages - 1)
INODE_MAGIC = 0x444e49
RDEV_OFF, PARENT_OFF = 72, 88       # in struct daxfs_inode (128 bytes)
XCLAIM_OFF = 124                    # inode.xattr_claim (u32, version 6)
FLAGS_OFF = 12                      # inode.flags (u32; chattr bits: version 9)
CHANGE_OFF = 112                    # inode.change (changes in flight: version 13)
WRITTEN = 1 << 47                   # inode.change: a rewrite's mark (version 14)
LOCK_ROOT_OFF = 928                 # state.lock_root (version 5)
ATTR_EPOCH_OFF = 960                # state.attr_epoch (version 15)
INTENT_OFF = 64                     # daxfs_lane.intent (lanes: 128 bytes)
FILE_WRITE = 3                      # DAXFS_INTENT_FILE_WRITE
REDO_COMMITTED = 1                  # version 7: intent a[6], low bit


crc32c = superblock.crc32c


class Raw:
    """Just the words the conversion touches."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.b = bytearray(f.read())
        self.state = self.region(1)
        self.hosts = self.region(2)

    def region(self, kind):
        for i in range(8):
            k, _fl, off, _sz, _r = struct.unpack_from("<IIQQQ", self.b, 152 + 32 * i)
            if k == kind:
                return off
        raise KeyError(kind)

    def words(self, off, n):
        return list(struct.unpack_from("<%dQ" % n, self.b, off))

    def put(self, off, *ws):
        struct.pack_into("<%dQ" % len(ws), self.b, off, *ws)

    def line(self, c):
        return self.state + 64 * (6 + c)

    def version(self):
        return struct.unpack_from("<I", self.b, 8)[0]

    def set_version(self, v):
        """Stamps version v; below 12 the page stack becomes one page per
        entry first, as every older version left it (version 1's heads
        are rewritten by make_v1, after this)."""
        if 1 < v < 12:
            self.singles()
        struct.pack_into("<I", self.b, 8, v)
        struct.pack_into("<I", self.b, CSUM_OFF, crc32c(self.b[:CSUM_OFF]))

    def singles(self):
        """The page free stack as versions 1 to 11 wrote it, one page per
        entry: version 12 links extents, last | (pages - 1), each linked
        from its last page."""
        line = self.line(PAGE_CLASS)
        w, pages = self.words(line, 1)[0], []
        while w:
            last, n = w & ~EXTENT_MASK, (w & EXTENT_MASK) + 1
            pages += [last - 4096 * i for i in range(n - 1, -1, -1)]
            w = self.words(last, 1)[0]
        for a, b in zip(pages, pages[1:] + [0]):
            self.put(a, b)
        self.put(line, pages[0] if pages else 0)

    def inode(self, ino):
        """Offset of the overlay record of inode ino (the only 64-byte
        aligned place holding its number and the record magic)."""
        hits = [o for o in range(0, len(self.b) - 128, 64)
                if struct.unpack_from("<QI", self.b, o) == (ino, INODE_MAGIC)]
        assert len(hits) == 1, hits
        return hits[0]

    def save(self):
        with open(self.path, "r+b") as f:
            f.write(self.b)


LEASE_MS = 300


def make_v1(path):
    """Rewrites a closed v2 image as version 1; returns the v2 heads."""
    im = Raw(path)
    im.singles()
    heads = []
    for c in range(NR_CLASSES):
        off, tag, p0, p1, p2, _a, _b, _c = im.words(im.line(c), 8)
        heads.append(off)
        im.put(im.line(c), (tag & 0xfffff) << 44 | off >> 6, p0, p1, p2, 0, 0, 0, 0)
    im.set_version(1)
    im.save()
    return heads


def run(*args):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


@pytest.fixture
def v1(region_path):
    assert os.access(FSCK, os.X_OK), "fsck.daxfs not built: run make"
    # a short lease: --convert watches the host table for about one
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.mkdir("/d")
        r.write_file("/d/keep", DATA)
        r.write_file("/small", b"hello\n")
        for i in range(8):
            r.write_file("/gone%d" % i, DATA)
        for i in range(8):
            r.unlink("/gone%d" % i)
        r.reclaim()
    heads = make_v1(region_path)
    assert sum(1 for h in heads if h) >= 2, heads     # stacks to carry over
    return region_path, heads


def test_v1_refused_with_advice(v1):
    path, _ = v1
    with open(path, "rb") as f:
        before = f.read()
    rc, out = run(FSCK, "-n", path)
    assert rc == 4 and "fsck.daxfs --convert" in out, out
    rc, out = run(FSCK, "-y", path)
    assert rc == 4 and "fsck.daxfs --convert" in out, out
    rc, out = run(DAXFS, "-r", path, "ls", "/")
    assert rc != 0 and "fsck.daxfs --convert" in out, out
    with open(path, "rb") as f:
        assert f.read() == before, "a refused v1 image was modified"


def test_convert_then_clean(v1):
    path, heads = v1
    rc, out = run(FSCK, "--convert", path)
    assert rc == 0 and "converted to DaxFS format version %d" % CURRENT in out, out
    im = Raw(path)
    assert im.version() == CURRENT
    assert [im.words(im.line(c), 1)[0] for c in range(NR_CLASSES)] == heads
    rc, out = run(FSCK, "-n", path)
    assert rc == 0 and "clean" in out, out
    rc, out = run(FSCK, "--convert", path)             # again: nothing to do
    assert rc == 0, out
    with daxfs.Region(path) as r:
        assert r.read_file("/d/keep") == DATA
        assert r.read_file("/small") == b"hello\n"
        for i in range(8):                             # reuses the stacks
            r.write_file("/new%d" % i, DATA[::-1])
        for i in range(8):
            assert r.read_file("/new%d" % i) == DATA[::-1]
        assert r.read_file("/d/keep") == DATA
    rc, out = run(FSCK, "-n", path)
    assert rc == 0 and "clean" in out, out


def convert_checked(path, advice):
    """An older image at path is refused with advice, then converted;
    returns the converted image."""
    rc, out = run(DAXFS, "-r", path, "ls", "/")
    assert rc != 0 and "fsck.daxfs --convert" in out, out
    rc, out = run(FSCK, "-n", path)
    assert rc != 0 and advice in out, out
    rc, out = run(FSCK, "--convert", path)
    assert rc == 0 and "converted to DaxFS format version %d" % CURRENT in out, out
    im = Raw(path)
    assert im.version() == CURRENT
    return im


def converted_from(path, version, advice):
    """Makes an image of an older version at path (a current one with
    the older version number: those versions changed no layout this
    check reads), checks it is refused with advice, converts it."""
    daxfs.mkfs(path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(path) as r:
        r.write_file("/small", b"hello\n")
    im = Raw(path)
    im.set_version(version)
    im.save()
    convert_checked(path, advice)
    with daxfs.Region(path) as r:
        assert r.read_file("/small") == b"hello\n"


def test_v2_converts_to_current(region_path):
    """Version 2 (wall-clock leases) is refused with advice; --convert
    makes it current and changes nothing else."""
    converted_from(region_path, 2, "leases timed by wall clocks")


def test_v3_converts_to_current(region_path):
    """Version 3 kept a regular file's last shrink in its parent word and
    a shrink count in rdev; version 4 reads the parent word as the write
    gate.  --convert opens every gate (both words 0): the file left by a
    shrinker that died BUSY is writable and truncatable, and fsck clean."""
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.write_file("/f", DATA)
        ino = r.stat("/f").st_ino
    im = Raw(region_path)
    rec = im.inode(ino)
    im.put(rec + RDEV_OFF, 7)
    im.put(rec + PARENT_OFF, 7 << 49 | 1 << 48 | 100)    # number 7, BUSY
    im.set_version(3)
    im.save()
    im = convert_checked(region_path, "without a write gate")
    assert im.words(rec + RDEV_OFF, 1) == [0]
    assert im.words(rec + PARENT_OFF, 1) == [0]
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out
    with daxfs.Region(region_path) as r:
        r.truncate("/f", 100)
        f = r.open("/f")
        f.append(b"tail")
        f.close()
        assert r.read_file("/f") == DATA[:100] + b"tail"


def test_v4_converts_to_current(region_path):
    """Version 4 (before the cluster-wide lock table) is refused with
    advice; --convert makes it current (no locks yet), then hosts lock."""
    converted_from(region_path, 4, "before cluster-wide file locks")
    with daxfs.Region(region_path) as r:
        with r.open("/small") as f:
            f.lock("w")
            assert len(r.locks("/small")) == 1
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_v5_converts_to_current(region_path):
    """Version 5 (before extended attributes) is refused with advice;
    --convert keeps its lock table, frees every inode's xattr claim (the
    word was reserved), and then attributes can be set; fsck clean."""
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.write_file("/small", b"hello\n")
        with r.open("/small") as f:
            f.lock("w")
        ino = r.stat("/small").st_ino
    im = Raw(region_path)
    lock_root = im.words(im.state + LOCK_ROOT_OFF, 1)[0]
    assert lock_root
    rec = im.inode(ino)
    struct.pack_into("<I", im.b, rec + XCLAIM_OFF, 0x1234)
    im.set_version(5)
    im.save()
    im = convert_checked(region_path, "before extended attributes")
    assert im.words(im.state + LOCK_ROOT_OFF, 1)[0] == lock_root
    assert struct.unpack_from("<I", im.b, rec + XCLAIM_OFF)[0] == 0
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out
    with daxfs.Region(region_path) as r:
        r.setxattr("/small", "user.k", b"v")
        assert r.getxattr("/small", "user.k") == b"v"
        with r.open("/small") as f:
            f.lock("w")
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_v6_converts_to_current(region_path):
    """Version 6 stored strict overwrites in place; version 7 reads a
    FILE_WRITE intent's a[6] as a redo record (committed: low bit) and
    a[4] / a[5] as a page being published, in a layout of its own.
    --convert clears what a version 6 lane left in those words (here:
    stale words and what version 7 would take for a committed record),
    then fsck is clean and strict writes work."""
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.write_file("/small", b"hello\n")
        ino = r.stat("/small").st_ino
    im = Raw(region_path)
    # a dead host (slot 0, generation 5) whose lane 3 was writing
    im.put(im.hosts, 5 << 8 | 2)
    lane = im.region(7) + 3 * 128 + INTENT_OFF
    im.put(lane, FILE_WRITE, ino, 0, 6, 0, 7, im.state,
           im.state | REDO_COMMITTED)
    im.set_version(6)
    im.save()
    rc, out = run(FSCK, "-n", region_path)
    assert rc != 0 and "strict overwrites stored in place" in out, out
    rc, out = run(FSCK, "--convert", region_path)
    assert rc in (0, 1) and "format version %d" % CURRENT in out, out
    im = Raw(region_path)
    assert im.version() == CURRENT
    # recovered (no intent any more), and no redo record named
    assert im.words(lane, 8)[5:8] == [0, 0, 0]
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out
    with daxfs.Region(region_path, strict=True) as r:
        with r.open("/small") as f:
            f.pwrite(b"HE", 0)
        assert r.read_file("/small") == b"HEllo\n"
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_v7_converts_to_current(region_path):
    """Version 7 had no unwritten pages (no data page word has bit 3):
    refused with advice, --convert only bumps the version.  Files of
    both shapes (a direct root, a tree) read as before; fsck is clean;
    afterwards fallocate makes unwritten extents and a write clears
    them."""
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.write_file("/small", b"hello\n")
        r.write_file("/big", DATA * 3)
        r.truncate("/big", (1 << 20) + (64 << 10))
    im = Raw(region_path)
    im.set_version(7)
    im.save()
    rc, out = run(FSCK, "-n", region_path)
    assert rc != 0 and "before unwritten pages" in out, out
    convert_checked(region_path, "before unwritten pages")
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out
    with daxfs.Region(region_path) as r:
        assert r.read_file("/small") == b"hello\n"
        big = DATA * 3
        assert r.read_file("/big") == big + bytes((1 << 20) + (64 << 10) -
                                                  len(big))
        with r.open("/big") as f:
            assert all(not e.flags & daxfs.EXTENT_UNWRITTEN
                       for e in f.extents())
            f.fallocate(2 << 20, 8192)
            ext = [e for e in f.extents() if e.logical >= 2 << 20]
            assert ext and all(e.flags & daxfs.EXTENT_UNWRITTEN for e in ext)
            f.pwrite(b"x", 2 << 20)
            ext = [e for e in f.extents() if e.logical == 2 << 20]
            assert ext and not ext[0].flags & daxfs.EXTENT_UNWRITTEN
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_v8_converts_to_current(region_path):
    """Version 8 had no attribute flags: refused with advice; --convert
    clears flag bits it did not define (garbage that would otherwise make
    a file immutable) and keeps ORPHAN/BASE; afterwards chattr works and
    is enforced."""
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.write_file("/f", b"hello\n")
        ino = r.stat("/f").st_ino
    im = Raw(region_path)
    off = im.inode(ino) + FLAGS_OFF
    struct.pack_into("<I", im.b, off, 0x10 | 0x4)     # bits 2 and 4
    im.set_version(8)
    im.save()
    rc, out = run(FSCK, "-n", region_path)
    assert rc != 0 and "before attribute flags" in out, out
    im = convert_checked(region_path, "before attribute flags")
    assert struct.unpack_from("<I", im.b, off)[0] == 0
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out
    with daxfs.Region(region_path) as r:
        assert r.getflags("/f") == 0
        r.write_file("/f", b"again\n")
        r.setflags("/f", daxfs.FL_IMMUTABLE)
        with pytest.raises(PermissionError):
            r.write_file("/f", b"no\n")
        r.setflags("/f", 0)
        assert r.read_file("/f") == b"again\n"


def test_v9_converts_to_current(region_path):
    """Version 9 recovery would read a whiteout rename's intent as a plain
    rename (docs/format.md, version 10): a version 9 image is refused with
    advice, --convert only sets the version, and a RENAME_WHITEOUT works
    on the converted image."""
    converted_from(region_path, 9, "before atomic rename whiteouts")
    with daxfs.Region(region_path) as r:
        r.rename("/small", "/moved", daxfs.RENAME_WHITEOUT)
        st = r.stat("/small")
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == 0, st
        assert r.read_file("/moved") == b"hello\n"
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_v10_converts_to_current(region_path):
    """A version 10 reader would take a 2 MiB run for a leaf node
    (docs/format.md, version 11): a version 10 image is refused with
    advice, --convert only sets the version, and a file written in whole
    2 MiB pieces afterwards reads back and leaves fsck clean."""
    converted_from(region_path, 10, "before 2 MiB runs")
    big = bytes(range(256)) * (3 << 14)          # 12 MiB, 6 runs
    with daxfs.Region(region_path) as r:
        r.write_file("/big", big[:8 << 20])
        assert r.read_file("/big") == big[:8 << 20]
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_v11_converts_to_current(region_path):
    """A version 11 reader would take a page stack word naming several
    pages for a misaligned offset (docs/format.md, version 12): a version
    11 image (one page per entry) is refused with advice, --convert only
    sets the version, and the pages it had free are all there to take."""
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        for i in range(6):
            r.write_file("/f%d" % i, DATA * 64)
        for i in range(6):
            r.unlink("/f%d" % i)
        r.reclaim()
        free_before = r.statfs()["free_bytes"]
    im = Raw(region_path)
    im.set_version(11)
    words = []
    w = im.words(im.line(PAGE_CLASS), 1)[0]
    while w and len(words) < 10000:
        words.append(w)
        w = im.words(w, 1)[0]
    assert len(words) > 64 and all(w & EXTENT_MASK == 0 for w in words)
    im.save()
    convert_checked(region_path, "before free page extents")
    with daxfs.Region(region_path) as r:
        assert r.statfs()["free_bytes"] == free_before
        for i in range(6):
            r.write_file("/g%d" % i, DATA * 64)
        for i in range(6):
            assert r.read_file("/g%d" % i) == DATA * 64
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_v12_converts_to_current(region_path):
    """A version 12 host publishes a name with no raise of its directory's
    counter, and a version 13 front end would trust a name it cached
    across it (docs/format.md, version 13): a version 12 image is refused
    with advice.  --convert moves every counter, with nothing in flight
    (even where a stray store set a top bit), and the names and counters
    work as before."""
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.mkdir("/d")
        r.write_file("/d/f", b"hello\n")
        before = {p: (r.lstat(p).st_ino, r.lstat(p).st_change)
                  for p in ("/", "/d", "/d/f")}
    im = Raw(region_path)
    im.set_version(12)
    rec = im.inode(before["/d"][0])
    im.put(rec + CHANGE_OFF, before["/d"][1] | 1 << 63)
    im.save()
    convert_checked(region_path, "before changes in flight")
    with daxfs.Region(region_path) as r:
        for p, (ino, c) in before.items():
            now = r.lstat(p).st_change
            assert now >> 48 == 0 and now == (c + 1) & ((1 << 48) - 1), (p, c, now)
        r.write_file("/d/g", b"x")
        assert r.lstat("/d").st_change >> 48 == 0
        assert sorted(n for n, *_ in r.scandir("/d")) == ["f", "g"]
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_v13_converts_to_current(region_path):
    """A version 13 front end would take a rewrite's mark for no change at
    all, and keep pages a rewrite replaced (docs/format.md, version 14): a
    version 13 image is refused with advice.  --convert changes no
    counter (a version 13 count never reaches the mark's bit), and a
    rewrite through the converted image marks it, which a stat folds."""
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.write_file("/f", DATA)
        st = r.lstat("/f")
    im = Raw(region_path)
    rec = im.inode(st.st_ino)
    word = im.words(rec + CHANGE_OFF, 1)[0]
    im.set_version(13)
    im.save()
    im = convert_checked(region_path, "before rewrite marks")
    assert im.words(rec + CHANGE_OFF, 1)[0] == word
    with daxfs.Region(region_path) as r:
        assert r.lstat("/f").st_change == st.st_change
        with r.open("/f") as f:
            marked = False
            for i in range(100):
                f.pwrite(b"x" * 10, 10 * i)
                w = Raw(region_path).words(rec + CHANGE_OFF, 1)[0]
                if w & WRITTEN:
                    marked = True
                    break
        assert marked
        now = r.lstat("/f").st_change
        assert not now & WRITTEN and now > (w & ~WRITTEN)
        assert r.read_file("/f")[:10] == b"x" * 10
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_v14_converts_to_current(region_path):
    """A version 14 host changes a mode without adding to the attribute
    epoch, and a version 15 kernel would keep answering permission checks
    from the old mode (docs/format.md, version 15): a version 14 image is
    refused with advice.  --convert starts the word (reserved, zero, in
    version 14) at 1, changes nothing else, and a chmod through the
    converted image adds to it."""
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.write_file("/f", DATA)
    im = Raw(region_path)
    im.put(im.state + ATTR_EPOCH_OFF, 0)
    im.set_version(14)
    im.save()
    before = Raw(region_path).b
    im = convert_checked(region_path, "before the attribute epoch")
    assert im.words(im.state + ATTR_EPOCH_OFF, 1)[0] == 1
    changed = [o for o in range(0, len(before), 8)
               if before[o:o + 8] != im.b[o:o + 8]]
    # the version, the checksum's word, the epoch; fsck's own repair pass
    # may stamp nothing else on a clean image
    assert set(changed) <= {8, CSUM_OFF - 4, im.state + ATTR_EPOCH_OFF}, \
        changed
    with daxfs.Region(region_path) as r:
        assert r.read_file("/f") == DATA
        r.chmod("/f", 0o600)
    assert Raw(region_path).words(im.state + ATTR_EPOCH_OFF, 1)[0] == 2
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_fsck_takes_attr_epoch_zero_for_no_damage(region_path):
    """A zero attribute epoch only keeps permission checks from their
    fast path until the next change: fsck warns, exits clean, and -y
    starts it at 1."""
    daxfs.mkfs(region_path, 16 << 20, lease_ms=LEASE_MS)
    im = Raw(region_path)
    assert im.words(im.state + ATTR_EPOCH_OFF, 1)[0] == 1    # mkfs
    im.put(im.state + ATTR_EPOCH_OFF, 0)
    im.save()
    rc, out = run(FSCK, "-n", region_path)
    assert rc == 0 and "attribute epoch is 0" in out, out
    rc, out = run(FSCK, "-y", region_path)
    assert rc in (0, 1), out
    assert Raw(region_path).words(im.state + ATTR_EPOCH_OFF, 1)[0] == 1


def test_convert_refused_while_mounted(v1):
    """A host that keeps renewing (its heartbeat word changes, as an old
    host's wall-clock renewals do) holds off the conversion."""
    path, _ = v1
    im = Raw(path)
    im.put(im.hosts, 1 << 8 | 1, 1)                   # slot 0: ALIVE
    im.save()
    stop = threading.Event()

    def renew():
        with open(path, "r+b") as f:
            m = mmap.mmap(f.fileno(), 0)
            k = 2
            while not stop.is_set():
                struct.pack_into("<Q", m, im.hosts + 8, k)
                k += 1
                stop.wait(LEASE_MS / 4000)
            m.close()

    t = threading.Thread(target=renew)
    t.start()
    try:
        with open(path, "rb") as f:
            before = f.read()[:im.hosts]
        rc, out = run(FSCK, "--convert", path)
    finally:
        stop.set()
        t.join()
    assert rc == 4 and "NOT CONVERTING" in out, out
    with open(path, "rb") as f:
        assert f.read()[:im.hosts] == before, "--convert changed a mounted image"


def test_docs_name_the_written_version():
    """README and fsck's manual tell a user which older images need
    --convert; they drifted two versions behind format.h once."""
    root = os.path.join(os.path.dirname(__file__), "..")
    with open(os.path.join(root, "include/daxfs/format.h")) as f:
        m = re.search(r"#define DAXFS_VERSION\s+(\d+)u", f.read())
    v = int(m.group(1))
    with open(os.path.join(root, "README.md")) as f:
        readme = " ".join(f.read().split())
    assert "(format versions 1 to %d; this one writes %d)" % (v - 1, v) \
        in readme
    with open(os.path.join(root, "docs/fsck.md")) as f:
        fsck_doc = f.read()
    assert "(1 to %d) to the current format (version %d" % (v - 1, v) \
        in fsck_doc


CRASH_FSCK = os.path.join(os.path.dirname(env.BIN), "crash", "bin",
                          "fsck.daxfs")


def cut_convert(path, at, plain=False):
    """fsck.daxfs --convert -f of path, killed at crash point at (the
    crash build; plain: its plain stores counted too): its exit status."""
    r = subprocess.run([CRASH_FSCK, "--convert", "-f", path],
                       env=dict(os.environ, DAXFS_CRASH_AT=at,
                                DAXFS_CRASH_PLAIN="1" if plain else "0"),
                       capture_output=True, timeout=60)
    return r.returncode


def assert_v1_kept(path):
    """After the repair: current, clean, the files and free space whole."""
    assert Raw(path).version() == CURRENT
    rc, out = run(FSCK, "-n", path)
    assert rc == 0 and "clean" in out, out
    with daxfs.Region(path) as r:
        assert r.read_file("/d/keep") == DATA
        assert r.read_file("/small") == b"hello\n"
        for i in range(8):
            r.write_file("/new%d" % i, DATA[::-1])
    rc, out = run(FSCK, "-n", path)
    assert rc == 0 and "clean" in out, out


@pytest.mark.parametrize("landed", ["version", "checksum"])
def test_convert_cut_between_its_superblock_stores(crash_build, v1, landed):
    """A conversion killed between the superblock's version store and its
    checksum store (or, on persistent memory, a power loss that kept only
    one of the two cache lines) left a superblock whose checksum fails:
    fsck.daxfs called it corrupt, beyond repair, and every file was lost
    (session 56).  Now -n names the cut conversion and -y finishes it."""
    path, _ = v1
    assert cut_convert(path, "convert.version") == -9
    if landed == "checksum":        # the other line reached the media
        im = Raw(path)
        assert im.version() == CURRENT
        good = bytearray(im.b)
        struct.pack_into("<I", good, CSUM_OFF, crc32c(good[:CSUM_OFF]))
        struct.pack_into("<I", im.b, CSUM_OFF, crc32c(good[:CSUM_OFF]))
        struct.pack_into("<I", im.b, 8, 1)
        im.save()
    # what the user is told: run fsck.daxfs (-y, or --convert for what
    # says version 1); either finishes the conversion
    rc, out = run(DAXFS, "-r", path, "ls", "/")
    remedy = "-y" if landed == "version" else "--convert"
    assert rc != 0 and ("run fsck.daxfs" in out if landed == "version"
                        else "fsck.daxfs --convert" in out), out
    with open(path, "rb") as f:
        before = f.read()
    rc, out = run(FSCK, "-n", path)
    assert rc == 4 and "cut between its two superblock stores" in out \
        and "version 1 to %d" % CURRENT in out, out
    with open(path, "rb") as f:
        assert f.read() == before, "fsck -n changed the region"
    rc, out = run(FSCK, remedy, "-f", path)
    assert rc == 1 and "superblock of a cut format conversion" in out, out
    assert_v1_kept(path)


@pytest.mark.parametrize("counting", ["atomics", "plain"])
def test_convert_killed_after_any_store_then_again(crash_build, v1,
                                                   tmp_path, counting):
    """A conversion killed after its Nth store, for every N, then run
    again, gives a current, clean region with every file (what the
    conversion's crash story in core/convert.c promises: at most the
    free stacks leak, and the repair after it gives them back).  With
    plain stores counted too (DAXFS_CRASH_PLAIN=1, lib/crash-plain.c),
    the cuts also fall between the conversion's plain stores, where
    session 56 found one that lost the filesystem."""
    path, _ = v1
    cut = str(tmp_path / "cut.img")
    n = 0
    while True:
        n += 1
        shutil.copyfile(path, cut)
        if cut_convert(cut, "store:%d" % n, counting == "plain") != -9:
            break
        rc, out = run(FSCK, "--convert", "-f", cut)
        assert rc in (0, 1), (n, out)
        assert_v1_kept(cut)
    assert n > 20, n        # the cuts fell inside a real conversion
    if counting == "plain":
        # fsck's repair mapping is counted (lib/crash-plain.h): the
        # atomics alone end before the last plain-counted store
        shutil.copyfile(path, cut)
        assert cut_convert(cut, "store:%d" % (n - 1)) != -9, n
