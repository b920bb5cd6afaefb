"""fsck.daxfs on precisely damaged regions.

Each test builds a small filesystem through the Python bindings, damages
one structure by editing the region file (the layout comes from
include/daxfs/format.h, decoded by the small Image class below), and
checks the fsck(8) contract: `-n` exits 4 without changing a byte, `-y`
exits 1, and a second `-n` exits 0 with the data intact.
"""

import errno
import hashlib
import json
import os
import stat
import struct
import subprocess

import pytest

import fsck_cuts
from helpers import env

import daxfs

FSCK = os.path.join(env.BIN, "fsck.daxfs")
DAXFS = os.path.join(env.BIN, "daxfs")
PAGE = 4096
KEY_INODE = 1 << 60
KEY_PENDING = 1 << 59
KEY_TOMB = (1 << 64) - 1
TAG = 63
WRITTEN = 1 << 47                      # inode.change: a rewrite's mark (version 14)
LEAF, NODE = 1, 2


# ---------------------------------------------------------------------------
# A read/write decoder of the on-memory format (format.h), for tests only.

class Image:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.b = bytearray(f.read())
        (magic,) = struct.unpack_from("<Q", self.b, 0)
        assert magic == 0x42535F5346584144
        self.max_hosts = self.u32(60)
        self.root_ino = self.u64(80)
        self.first_dyn = self.u64(88)
        self.nr_buckets = self.u64(96)
        self.regions = {}
        for i in range(8):
            kind, _flags, off, size, _r = struct.unpack_from("<IIQQQ", self.b, 152 + 32 * i)
            if kind:
                self.regions[kind] = (off, size)
        self.state = self.regions[1][0]
        self.hosts = self.regions[2][0]
        self.buckets = self.regions[3][0]
        self.pool_off, pool_size = self.regions[4]
        self.pool_end = self.pool_off + pool_size
        self.lanes = self.regions[7][0]

    def u64(self, off):
        return struct.unpack_from("<Q", self.b, off)[0]

    def u32(self, off):
        return struct.unpack_from("<I", self.b, off)[0]

    def put64(self, off, v):
        struct.pack_into("<Q", self.b, off, v & ((1 << 64) - 1))

    def put32(self, off, v):
        struct.pack_into("<I", self.b, off, v & 0xffffffff)

    def save(self):
        with open(self.path, "r+b") as f:
            f.write(self.b)

    # state page words
    def state_word(self, name):
        idx = {"bump": 1, "next_ino": 2, "epoch": 3, "used_bytes": 4,
               "rename_claim": 5}[name]
        return self.state + 64 * idx

    def free_head(self, cls):
        return self.state + 64 * (6 + cls)

    def host(self, slot):
        return self.hosts + 256 * slot

    def lane(self, slot, idx):
        return self.lanes + 128 * (slot * 32 + idx)

    # overlay
    def bucket_of(self, ino):
        key = KEY_INODE | ino
        for i in range(self.nr_buckets):
            off = self.buckets + 16 * i
            if self.u64(off) == key and self.u64(off + 8):
                return off
        return None

    def inode(self, ino):
        b = self.bucket_of(ino)
        return None if b is None else self.u64(b + 8)

    def free_bucket(self):
        for i in range(self.nr_buckets):
            if self.u64(self.buckets + 16 * i) == 0:
                return self.buckets + 16 * i
        raise AssertionError("no empty bucket")

    # inode record fields
    FIELDS = {"ino": (0, 8), "magic": (8, 4), "flags": (12, 4), "mode": (16, 4),
              "nlink": (28, 4), "size": (32, 8), "blocks": (40, 8),
              "root": (80, 8), "parent": (88, 8), "aux": (96, 8),
              "change": (112, 8)}

    def field(self, ino, name):
        off, n = self.FIELDS[name]
        rec = self.inode(ino)
        return (self.u64 if n == 8 else self.u32)(rec + off)

    def set_field(self, ino, name, v):
        off, n = self.FIELDS[name]
        rec = self.inode(ino)
        (self.put64 if n == 8 else self.put32)(rec + off, v)

    # directories: {name: (dirent_off, link_off, link_is_slot, ino)}
    def dirents(self, dir_ino):
        out = {}
        root = self.field(dir_ino, "root")

        def chain(link, is_slot, off):
            while off:
                ln = struct.unpack_from("<H", self.b, off + 24)[0]
                name = bytes(self.b[off + 32:off + 32 + ln]).decode()
                out[name] = (off, link, is_slot, self.u64(off))
                link, is_slot, off = off + 16, False, self.u64(off + 16)

        def node(off, depth):
            for i in range(64):
                s = off + 8 * i
                v = self.u64(s)
                if v & TAG == LEAF:
                    chain(s, True, v & ~TAG)
                elif v & TAG == NODE:
                    node(v & ~TAG, depth + 1)
        if root:
            node(root, 0)
        return out

    def radix_pages(self, ino):
        """[(slot_off, page_off)] of the leaf slots of a file.  A direct
        root (height 0: the page of block 0 itself) gives the root field."""
        root = self.field(ino, "root")
        out = []
        if root and root != 1 and root & 7 == 0:
            return [(self.inode(ino) + self.FIELDS["root"][0], root)]

        def walk(off, h):
            for i in range(512):
                s = off + 8 * i
                v = self.u64(s)
                if v in (0, 1):
                    continue
                if h > 1:
                    walk(v, h - 1)
                else:
                    out.append((s, v))
        if root and root != 1:
            walk(root & ~0xfff, root & 7)
        return out


# ---------------------------------------------------------------------------

def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def fsck(path, *args, timeout=60):
    if "-y" in args and fsck_cuts.enabled():
        fsck_cuts.check(path)
    res = subprocess.run([FSCK, *args, path], capture_output=True, text=True,
                         timeout=timeout)
    return res.returncode, res.stdout + res.stderr


def fsck_json(path, *args):
    if "-y" in args and fsck_cuts.enabled():
        fsck_cuts.check(path)
    res = subprocess.run([FSCK, "--json", *args, path], capture_output=True,
                         text=True, timeout=60)
    return res.returncode, json.loads(res.stdout)


DATA = bytes(range(256)) * 40          # 10240 bytes: 3 pages


@pytest.fixture
def img(region_path):
    """A populated filesystem, closed (no live host)."""
    assert os.access(FSCK, os.X_OK), "fsck.daxfs not built: run make"
    daxfs.mkfs(region_path, 16 << 20)
    with daxfs.Region(region_path) as r:
        r.mkdir("/d")
        r.mkdir("/d/sub")
        r.write_file("/d/file", DATA)
        r.write_file("/small", b"hello\n")
        r.write_file("/empty", b"")
        r.link("/small", "/d/hard")
        r.symlink("/d/file", "/sym")
        inos = {p: r.stat(p).st_ino for p in
                ("/d", "/d/sub", "/d/file", "/small", "/empty")}
    return region_path, inos


def damage_cycle(path, codes=None):
    """-n: 4 and untouched; -y: 1; -n again: 0.  Returns the -n report."""
    before = sha(path)
    rc, rep = fsck_json(path, "-n")
    assert rc == 4, rep
    assert sha(path) == before, "fsck -n modified the region"
    found = {p["code"] for p in rep["problems"] if p["severity"] in ("error", "fatal")}
    if codes:
        assert set(codes) <= found, (codes, found, rep["problems"])
    rc, out = fsck(path, "-y")
    assert rc == 1, out
    rc, out = fsck(path, "-n")
    assert rc == 0, out
    return rep


def test_clean(img):
    path, _ = img
    before = sha(path)
    rc, out = fsck(path, "-n")
    assert rc == 0, out
    assert "clean" in out
    rc, out = fsck(path, "-y")
    assert rc == 0, out
    assert sha(path) == before, "-y on a clean filesystem wrote something"
    rc, rep = fsck_json(path)
    assert rc == 0 and rep["status"] == "clean" and rep["problems"] == []
    assert rep["summary"]["dirs"] == 3 and rep["summary"]["leaked_bytes"] == 0


def test_usage_and_operational_errors(tmp_path):
    assert os.access(FSCK, os.X_OK), "fsck.daxfs not built: run make"
    assert fsck(str(tmp_path / "x"), "-n", "-y")[0] == 16
    assert subprocess.run([FSCK], capture_output=True).returncode == 16
    assert fsck(str(tmp_path / "missing"))[0] == 8
    junk = tmp_path / "junk"
    junk.write_bytes(os.urandom(1 << 16))
    assert fsck(str(junk))[0] == 8


def test_wrong_nlink(img):
    path, inos = img
    im = Image(path)
    im.set_field(inos["/small"], "nlink", 5)          # upward: space leak
    im.set_field(inos["/d/file"], "nlink", 0)         # downward: data at risk
    im.save()
    damage_cycle(path, {"nlink"})
    with daxfs.Region(path) as r:
        assert r.stat("/small").st_nlink == 2
        assert r.stat("/d/file").st_nlink == 1
        assert r.read_file("/d/file") == DATA


def test_special_file_with_data_words(img):
    """A fifo has no data: a stray root pointer, size or block count is
    damage.  A size past the maximum made every stat of it EUCLEAN while
    fsck only warned; -y zeroes the words and the fifo stats again."""
    path, _ = img
    with daxfs.Region(path) as r:
        r.mknod("/fifo", stat.S_IFIFO | 0o600)
        fifo = r.lstat("/fifo").st_ino
        file_root = Image(path).field(_["/d/file"], "root")
    im = Image(path)
    im.set_field(fifo, "root", file_root)      # another file's pages
    im.set_field(fifo, "size", (1 << 64) - 1)
    im.set_field(fifo, "blocks", 3)
    im.save()
    with daxfs.Region(path) as r:
        with pytest.raises(OSError) as e:
            r.lstat("/fifo")
        assert e.value.errno == errno.EUCLEAN
    rep = damage_cycle(path, {"inode"})
    assert sum("special file" in p["message"] for p in rep["problems"]) == 3
    with daxfs.Region(path) as r:
        st = r.lstat("/fifo")
        assert stat.S_ISFIFO(st.st_mode)
        assert (st.st_size, st.st_blocks) == (0, 0)
        assert r.read_file("/d/file") == DATA     # its pages stay its own


def test_change_left_in_flight(img):
    """A raise of a directory's change counter that nobody settles (a host
    fenced between its checks and its raise, docs/kernel.md "Changes in
    flight"): the directory is never trusted again, so a front end looks
    every name in it up.  Offline no change is running: fsck names it and
    -y moves the count, with nothing in flight; the names stay."""
    path, inos = img
    im = Image(path)
    d = inos["/d"]
    w = im.field(d, "change")
    im.set_field(d, "change", w + (2 << 48))
    im.save()
    rep = damage_cycle(path, {"inode"})
    hits = [p for p in rep["problems"] if "in flight" in p["message"]]
    assert len(hits) == 1 and hits[0]["ino"] == d, rep["problems"]
    with daxfs.Region(path) as r:
        c = r.lstat("/d").st_change
        assert c >> 48 == 0 and c != w
        assert sorted(n for n, *_ in r.scandir("/d")) == ["file", "hard", "sub"]
        assert r.read_file("/d/file") == DATA


def test_rewrite_mark_only_on_regular_files(img):
    """A rewrite's mark (format 14, docs/files.md "The change counter of a
    rewrite") on a regular file is a rewrite no getattr folded yet: clean.
    On a directory only a stray store puts it: fsck names it and -y folds
    it (count + 1, mark clear); the names stay."""
    path, inos = img
    im = Image(path)
    f, d = inos["/d/file"], inos["/d"]
    wf, wd = im.field(f, "change"), im.field(d, "change")
    im.set_field(f, "change", wf | WRITTEN)
    im.save()
    rc, out = fsck(path, "-n")
    assert rc == 0 and "clean" in out, out
    im = Image(path)
    im.set_field(d, "change", wd | WRITTEN)
    im.save()
    rep = damage_cycle(path, {"inode"})
    hits = [p for p in rep["problems"] if "mark" in p["message"]]
    assert len(hits) == 1 and hits[0]["ino"] == d, rep["problems"]
    assert Image(path).field(d, "change") == wd + 1
    assert Image(path).field(f, "change") == wf | WRITTEN
    with daxfs.Region(path) as r:
        assert r.lstat("/d/file").st_change == wf + 1   # the stat folds
        assert sorted(n for n, *_ in r.scandir("/d")) == ["file", "hard", "sub"]
        assert r.read_file("/d/file") == DATA


def test_damaged_key_restored_from_its_record(img):
    """A stray store in an overlay bucket's key word (the value intact):
    the record it points at names its inode, so -y puts the key back and
    the file keeps its name and bytes.  Tombstoning it lost the file (and
    a copied-up base file silently went back to its base bytes)."""
    path, inos = img
    im = Image(path)
    # unknown type; a pending bit on a key of no type; a key no lookup
    # reaches; a key zeroed (the bucket looked empty: the record leaked);
    # a key turned into a tomb (the same)
    for garbage, code in ((0x90a884, "bucket"),
                          (0x5a292e55bd6f6753, "bucket"),
                          (KEY_INODE | 999999, "bucket-lost"),
                          (0, "bucket"), (KEY_TOMB, "bucket")):
        b = im.bucket_of(inos["/d/file"])
        im.put64(b, garbage)
        im.save()
        damage_cycle(path, {code})
        with daxfs.Region(path) as r:
            assert r.stat("/d/file").st_ino == inos["/d/file"]
            assert r.read_file("/d/file") == DATA
        im = Image(path)


def test_value_in_an_empty_bucket(img):
    """A stray store into a free bucket's value word: no host leaves one
    there (a claim sets key and value in one CAS), so it is an error,
    and -y clears it; what the region holds is unchanged."""
    path, inos = img
    im = Image(path)
    im.put64(im.free_bucket() + 8, 0x1234567)
    im.save()
    damage_cycle(path, {"bucket"})
    with daxfs.Region(path) as r:
        assert r.read_file("/d/file") == DATA


def test_wrong_dir_count_and_nlink(img):
    path, inos = img
    im = Image(path)
    d = inos["/d"]
    im.set_field(d, "aux", im.field(d, "aux") + 3)
    im.set_field(d, "nlink", 7)
    im.save()
    damage_cycle(path, {"dir-count", "nlink"})
    with daxfs.Region(path) as r:
        assert sorted(r.listdir("/d")) == ["file", "hard", "sub"]
        r.rmdir("/d/sub")
        r.unlink("/d/file")
        r.unlink("/d/hard")
        r.rmdir("/d")                       # count is right: rmdir works


def test_dangling_dirent(img):
    path, inos = img
    im = Image(path)
    b = im.bucket_of(inos["/empty"])
    im.put64(b, KEY_TOMB)                               # inode gone, as
    im.put64(b + 8, 0)                                  # a delete leaves it
    ents = im.dirents(im.root_ino)
    off = ents["small"][0]
    im.put64(off, 987654)                               # names nothing
    im.save()
    damage_cycle(path, {"dirent-dangling"})
    with daxfs.Region(path) as r:
        names = r.listdir("/")
        assert "empty" not in names and "small" not in names
        assert r.read_file("/d/hard") == b"hello\n"
        assert r.stat("/d/hard").st_nlink == 1


def test_leaked_pages(img):
    path, _ = img
    im = Image(path)
    bump = im.state_word("bump")
    im.put64(bump, im.u64(bump) + 8 * PAGE)              # 8 pages nobody owns
    used = im.state_word("used_bytes")
    im.put64(used, im.u64(used) + 8 * PAGE)
    im.save()
    rep = damage_cycle(path, {"leak"})
    leak = [p for p in rep["problems"] if p["code"] == "leak"][0]
    assert leak["have"] >= 8 * PAGE
    rc, rep = fsck_json(path)
    assert rep["summary"]["leaked_bytes"] == 0


def test_leak_from_free_stack(img):
    path, _ = img
    im = Image(path)
    head = im.free_head(4)                  # {offset, tag} (format v2)
    if im.u64(head) == 0:
        pytest.skip("no free page to lose")
    # head = the top extent's link (format 12: first | (pages - 1))
    im.put64(head, im.u64(im.u64(head) & ~0xfff))
    im.save()
    damage_cycle(path, {"leak", "used-bytes"})


def test_orphan_with_data_goes_to_lost_found(img):
    path, inos = img
    im = Image(path)
    ents = im.dirents(inos["/d"])
    _off, link, is_slot, ino = ents["file"]
    assert ino == inos["/d/file"]
    im.put64(link, 0)                                   # unhook the name
    d = inos["/d"]
    im.set_field(d, "aux", im.field(d, "aux") - 1)
    im.save()
    damage_cycle(path, {"orphan"})
    with daxfs.Region(path) as r:
        assert "file" not in r.listdir("/d")
        lf = r.listdir("/lost+found")
        assert lf == ["#%d" % ino]
        assert r.read_file("/lost+found/#%d" % ino) == DATA
        assert r.stat("/lost+found/#%d" % ino).st_nlink == 1


def test_orphan_without_data_dropped(img):
    path, inos = img
    im = Image(path)
    ents = im.dirents(im.root_ino)
    im.put64(ents["empty"][1], 0)
    root = im.root_ino
    im.set_field(root, "aux", im.field(root, "aux") - 1)
    im.save()
    damage_cycle(path, {"orphan"})
    assert Image(path).bucket_of(inos["/empty"]) is None


def test_orphan_symlink_whose_free_stopped_is_only_an_orphan(img):
    """A symlink unlinked by a host that died inside its free, after the
    target record was dropped (root 0) and before the inode record went:
    an orphan (a leak recovery may leave), not a symlink with a bad
    target pointer.  test_lincheck.py's nested crash run left one (the
    rehearsal of session 62), and fsck called it an error of its own."""
    path, _ = img
    with daxfs.Region(path) as r:
        ino = r.lstat("/sym").st_ino
    im = Image(path)
    ents = im.dirents(im.root_ino)
    im.put64(ents["sym"][1], 0)                         # unhook the name
    root = im.root_ino
    im.set_field(root, "aux", im.field(root, "aux") - 1)
    im.set_field(ino, "nlink", 0)
    im.set_field(ino, "flags", im.field(ino, "flags") | 2)  # ORPHAN
    im.set_field(ino, "root", 0)          # daxfs_link_rec_drop's CAS
    im.save()
    # the dropped record is left allocated here, where a retire would
    # have put it in limbo: a leak
    rep = damage_cycle(path, {"orphan"})
    assert {p["code"] for p in rep["problems"]} == {"orphan", "leak"}, \
        rep["problems"]
    assert Image(path).bucket_of(ino) is None


def test_orphan_directory_tree(img):
    path, inos = img
    im = Image(path)
    ents = im.dirents(im.root_ino)
    im.put64(ents["d"][1], 0)                           # whole /d subtree
    root = im.root_ino
    im.set_field(root, "aux", im.field(root, "aux") - 1)
    im.set_field(root, "nlink", im.field(root, "nlink") - 1)
    im.save()
    damage_cycle(path, {"orphan"})
    with daxfs.Region(path) as r:
        d = "/lost+found/#%d" % inos["/d"]
        assert sorted(r.listdir(d)) == ["file", "hard", "sub"]
        assert r.read_file(d + "/file") == DATA


def test_dead_host_and_stuck_claim(img):
    path, _ = img
    im = Image(path)
    h = im.host(3)
    im.put64(h, (7 << 8) | 1)                            # ALIVE gen 7 ...
    im.put64(h + 8, 1)                                   # ... lease long gone
    ln = im.lane(3, 5)
    im.put64(ln, 9)                                      # lane busy
    im.put64(im.state_word("rename_claim"), (7 << 16) | 4)
    pb = im.free_bucket()
    im.put64(pb, KEY_INODE | KEY_PENDING | 4242)         # half-done insert
    im.save()
    damage_cycle(path, {"host-dead", "rename-claim", "bucket-pending"})
    im = Image(path)
    assert im.u64(im.host(3)) & 0xff == 0
    assert im.u64(im.lane(3, 5)) == 0
    assert im.u64(im.state_word("rename_claim")) == 0
    assert im.u64(pb) == KEY_TOMB


def test_crosslinked_data_page(img):
    path, inos = img
    im = Image(path)
    a = im.radix_pages(inos["/d/file"])
    b = im.radix_pages(inos["/small"])
    assert a and b
    im.put64(b[0][0], a[1][1])                           # share a page
    im.save()
    damage_cycle(path, {"crosslink"})


def test_free_object_in_use(img):
    path, inos = img
    im = Image(path)
    page = im.radix_pages(inos["/d/file"])[0][1]
    head = im.free_head(4)                               # page stack
    im.put64(head, page)
    im.save()
    damage_cycle(path, {"free-inuse"})
    with daxfs.Region(path) as r:
        assert r.read_file("/d/file") == DATA
        r.write_file("/new", b"x" * 50000)           # allocates pages again
        assert r.read_file("/d/file") == DATA


def test_corrupt_inode_record(img):
    path, inos = img
    im = Image(path)
    im.set_field(inos["/d/sub"], "magic", 0xdeadbeef)
    im.save()
    damage_cycle(path, {"inode"})
    with daxfs.Region(path) as r:
        assert "sub" not in r.listdir("/d")
        assert r.stat("/d").st_nlink == 2


def test_bad_state_page(img):
    path, _ = img
    im = Image(path)
    im.put64(im.state_word("epoch"), 0)
    im.put64(im.state_word("bump"), 12345)
    im.save()
    damage_cycle(path, {"state"})


def test_corrupt_superblock(img):
    path, _ = img
    im = Image(path)
    im.put64(96, im.nr_buckets * 2)                     # csum now wrong
    im.save()
    before = sha(path)
    rc, out = fsck(path, "-n")
    assert rc == 4 and "checksum" in out
    rc, out = fsck(path, "-y")
    assert rc == 4
    assert sha(path) == before


def test_region_cut_short(img):
    """A region file truncated to half: fsck says so, with the size to give
    back, and changes nothing (it said "the superblock is corrupt and
    DaxFS keeps no backup copy", with -y too); an open says the file is
    shorter than its filesystem, not "DaxFS files are limited to 256 TiB".
    With its size back, everything in the half kept reads as before."""
    path, _ = img
    full = os.path.getsize(path)
    os.truncate(path, full // 2)
    before = sha(path)
    for mode in ("-n", "-y"):
        rc, out = fsck(path, mode)
        assert rc == 4, out
        assert "cut short" in out and "truncate -s %d" % full in out, out
        assert "corrupt" not in out, out
        assert sha(path) == before
    res = subprocess.run([DAXFS, "-r", path, "ls", "/"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode != 0
    assert "shorter than the filesystem" in res.stderr, res.stderr
    os.truncate(path, full)
    rc, out = fsck(path, "-n")
    assert rc == 0, out
    with daxfs.Region(path) as r:
        assert r.read_file("/small") == b"hello\n"
        assert r.read_file("/d/file") == DATA


def test_repair_refused_while_mounted(img):
    path, inos = img
    im = Image(path)
    im.set_field(inos["/small"], "nlink", 9)
    im.save()
    with daxfs.Region(path):
        rc, out = fsck(path, "-y")
        assert rc == 4, out
        assert "NOT REPAIRING" in out
        assert Image(path).field(inos["/small"], "nlink") == 9
    rc, out = fsck(path, "-y")
    assert rc == 1, out
