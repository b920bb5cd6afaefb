"""The fsck sweep's failures, each rebuilt by itself.

tests/test_fsck_sweep.py damages worked regions with daxfs-chaos and
found repairs that did not converge or changed a file silently
(docs/testing.md "Long fsck sweeps").  Its images are too big to keep in
the tree, so each case is made again here on a small region: the objects
the seed met, and the very words its stores bent.
"""

import stat

import pytest

from test_fsck import DATA, LEAF, NODE, TAG, Image, damage_cycle, fsck, fsck_json

from helpers import env
from test_fsck_sweep import walk
from test_fsck_repair_root_symlink import bend_symlink_into_file_page

import daxfs

SHORT = "/some/target"


def _fresh(path, build, lease_ms=None):
    """lease_ms: short, where fsck waits out a dead host's lease."""
    env.mkfs(path, 16 << 20, lease_ms=lease_ms)
    with daxfs.Region(path) as r:
        build(r)


def _orphan(im, d, name):
    """Cuts name's dirent out of directory d (its chain from there)."""
    _off, link, _is_slot, _ino = im.dirents(d)[name]
    im.put64(link, 0)
    im.set_field(d, "aux", im.field(d, "aux") - 1)


def _repair(path):
    """fsck -y exits 1 (all repaired) and a second fsck -n is clean."""
    rc, rep = fsck_json(path, "-y")
    assert rc == 1, [p["message"] for p in rep["problems"]]
    rc, out = fsck(path, "-n")
    assert rc == 0, out


def _root_node(im, d):
    return im.field(d, "root") & ~TAG


# --- seed 150: a leaf tag that names no dirent ---------------------------

def _slot_of(im, node, d, name):
    """The slot of trie node `node` that holds name's chain, or None."""
    _off, link, is_slot, _ino = im.dirents(d)[name]
    return link if is_slot and node <= link < node + 512 else None


def test_leaf_naming_no_dirent_cleared(region_path):
    """An empty slot set to the leaf tag alone (one store, as the chaos
    did) passed the walk as an empty chain, while every lookup and insert
    there gives up (EUCLEAN): no name hashing to it could be made again."""
    def build(r):
        r.mkdir("/d")
        for i in range(8):
            r.write_file("/d/f%d" % i, b"x" * i)
    _fresh(region_path, build)
    with daxfs.Region(region_path) as r:
        d = r.stat("/d").st_ino
    im = Image(region_path)
    node = _root_node(im, d)
    slot = next(node + 8 * i for i in range(64) if im.u64(node + 8 * i) == 0)
    im.put64(slot, LEAF)
    im.save()
    damage_cycle(region_path, {"trie"})
    names = []
    with daxfs.Region(region_path) as r:
        for i in range(2000):       # until a name lands in that slot
            names.append("new%d" % i)
            r.write_file("/d/" + names[-1], b"n")
            if Image(region_path).u64(slot):
                break
        assert sorted(r.listdir("/d")) == sorted(
            names + ["f%d" % i for i in range(8)])
    assert Image(region_path).u64(slot) & TAG in (LEAF, NODE)


def test_orphan_links_into_lost_found_with_bare_leaf(region_path, tmp_path):
    """Seed 150: a free-stack store put 1 into an empty slot of
    /lost+found's root node; the orphan's "#ino" hashed there, fsck's
    insert gave up ("could not link an orphan into /lost+found") and
    left the dirent it had allocated as a leak, pass after pass."""
    late = ["o%d" % i for i in range(4)]

    def build(r):
        r.mkdir("/d")
        r.write_file("/d/first", b"first orphan")
        for n in late:
            r.write_file("/d/" + n, DATA + n.encode())
    _fresh(region_path, build)
    with daxfs.Region(region_path) as r:
        d = r.stat("/d").st_ino
        first = r.stat("/d/first").st_ino
        inos = {n: r.stat("/d/" + n).st_ino for n in late}
    im = Image(region_path)
    _orphan(im, d, "first")
    im.save()
    rc, out = fsck(region_path, "-y")       # makes /lost+found
    assert rc == 1, out
    with daxfs.Region(region_path) as r:
        lf = r.stat("/lost+found").st_ino
    im = Image(region_path)
    for n in late:
        _orphan(im, d, n)
    im.save()
    # where the late orphans' names go: the hash key is the region's, so
    # a copy repaired first shows the slots (the one store bends one)
    copy = str(tmp_path / "copy.img")
    with open(region_path, "rb") as f, open(copy, "wb") as g:
        g.write(f.read())
    rc, out = fsck(copy, "-y")
    assert rc == 1, out
    cim = Image(copy)
    node = _root_node(cim, lf)
    slots = [_slot_of(cim, node, lf, "#%d" % inos[n]) for n in late]
    slot = next(s for s in slots if s and im.u64(s) == 0)
    im.put64(slot, LEAF)
    im.save()
    rc, out = fsck(region_path, "-y")
    assert rc == 1, out
    assert "could not link" not in out, out
    rc, out = fsck(region_path, "-n")
    assert rc == 0, out
    with daxfs.Region(region_path) as r:
        assert r.read_file("/lost+found/#%d" % first) == b"first orphan"
        for n in late:
            assert r.read_file("/lost+found/#%d" % inos[n]) == \
                DATA + n.encode()


# --- seed 36: a symlink record bent into a directory's trie node ----------

def _bare_then_leaf(im, node):
    """A 64-byte place j in the trie node whose first slot is empty and
    whose second holds a leaf: as a symlink header record, a bad len
    word (0) and a target of the leaf pointer's bytes."""
    for j in range(8):
        a, b = im.u64(node + 64 * j), im.u64(node + 64 * j + 8)
        if a == 0 and b & TAG == LEAF:
            return node + 64 * j
    return None


def test_symlink_bent_into_trie_node_dropped(region_path):
    """Seed 36: a symlink's root word bent into a directory's trie node,
    where its len word is an empty slot.  The repair rebuilt the length
    from the next slot's bytes (writing it into the empty slot), the
    directory's walk cleared that slot as a bad tag, and the symlink's
    walk then found its record invalid and only reported it: every pass
    rebuilt again and -y never converged.  The directory keeps its names.
    A length repair is now written only into a record its symlink's walk
    claimed, so the slot is never written: the symlink finds its record
    the trie node's and gets its own copy of the bytes it names, as a
    symlink bent into a file's page does."""
    def build(r):
        r.mkdir("/a")
        r.mkdir("/a/sub")           # walked after /a's trie
        r.symlink(SHORT, "/a/sub/s")
    # the layout depends on the region's hash key: about one fresh
    # region in 25 fills the slots the other way round, so a few tries
    rec = None
    for _ in range(6):
        _fresh(region_path, build)
        with daxfs.Region(region_path) as r:
            a, s = r.stat("/a").st_ino, r.lstat("/a/sub/s").st_ino
            names = ["sub"]
            for i in range(400):
                names.append("n%d" % i)
                r.write_file("/a/" + names[-1], b"%d" % i)
                im = Image(region_path)
                rec = _bare_then_leaf(im, _root_node(im, a))
                if rec:
                    break
        if rec:
            break
    assert rec, "no empty slot before a leaf in 400 names, 6 regions"
    im = Image(region_path)
    im.set_field(s, "root", rec)
    im.save()
    _repair(region_path)
    with daxfs.Region(region_path) as r:
        assert sorted(r.listdir("/a")) == sorted(names)
        assert r.listdir("/a/sub") == ["s"]
        target = r.readlink("/a/sub/s")
        assert target and "\0" not in target
        for n in names[1:]:
            assert r.read_file("/a/" + n) == n[1:].encode()


def test_orphan_symlink_bent_into_file_page_leaves_the_file_alone(
        region_path):
    """Seed 1505 (session 56's own sweep): a symlink's root bent into a
    file's data page, at bytes that make a header record with a bad len
    word, and the symlink's name lost.  The length repair wrote into the
    file's page; an orphan symlink is dropped unwalked, so no walk found
    the bytes another object's and undid it: the file changed and no
    problem named it.  A repair no walk claimed is now undone."""
    page, im, d = bend_symlink_into_file_page(region_path)
    _orphan(im, d, "z")
    im.save()
    _repair(region_path)
    with daxfs.Region(region_path) as r:
        assert r.read_file("/a") == page
        assert r.listdir("/d") == []


# --- seed 97: the recovery fsck runs first frees through bent words -------

def _tree(path):
    """Every name of a closed region: path -> (mode, bytes or target)."""
    with daxfs.Region(path) as r:
        return {p: (st.st_mode,
                    None if stat.S_ISDIR(st.st_mode) else
                    r.readlink(p) if stat.S_ISLNK(st.st_mode) else
                    r.read_file(p))
                for p, st in walk(r)}


# where each word lies: (host slot offset or None, lane pad word or None)
HOST_WORDS = {
    "hold-pages": (None, 48),       # lane.pad[DAXFS_LANE_HOLD_PAGES]
    "hold-chain": (None, 56),       # lane.pad[DAXFS_LANE_HOLD_CHAIN]
    "limbo-open": (None, 16),       # lane.limbo_open
    "batch": (96, None),            # host.alloc_cursor, alloc_end
    "limbo-sealed": (112, None),    # host.limbo_sealed
}
# each pair changed the tree before the fix (a batch's free writes into
# its last page only: the page after the records' page here)
CASES = [(w, t) for w in sorted(HOST_WORDS) for t in ("data", "records")
         if (w, t) != ("batch", "records")]


@pytest.mark.parametrize("word,target", CASES)
def test_recovery_in_fsck_writes_nothing_in_use(region_path, word, target):
    """A dead host with work left, one of its words bent onto a page in
    use (a file's data, the page of inode records): fsck -y recovers the
    host before anything is checked, through the core's own recovery.
    Its frees wrote free-stack links into what the bent words named (and
    its allocations could take what bent free-stack heads name), so a
    file changed that no reported problem named ("seed 97: /w700/f5
    changed").  Now fsck's recovery neither frees nor pops
    (DAXFS_FS_NO_FREE): the tree reads back unchanged."""
    def build(r):
        r.write_file("/a", DATA)
        r.mkdir("/d")
        r.write_file("/d/f", DATA)
        r.symlink(SHORT, "/d/s")
        r.write_file("/b", DATA)
        r.unlink("/a")              # something on the free stacks
    _fresh(region_path, build, lease_ms=300)
    before = _tree(region_path)
    with daxfs.Region(region_path) as r:
        ino = r.stat("/d/f").st_ino
    im = Image(region_path)
    page = im.radix_pages(ino)[1][1] if target == "data" else \
        im.inode(ino) & ~4095
    h = im.host(3)
    im.put64(h, (7 << 8) | 1)                   # ALIVE gen 7 ...
    im.put64(h + 8, 1)                          # ... lease long gone
    im.put64(im.lane(3, 5), 9)                  # a lane busy
    at_host, at_lane = HOST_WORDS[word]
    if at_host is not None:
        im.put64(h + at_host, page)
        if word == "batch":
            im.put64(h + at_host + 8, page + 2 * 4096)
    else:
        im.put64(im.lane(3, 0) + at_lane, page)
    im.save()
    rc, out = fsck(region_path, "-y")
    assert rc == 1, out
    rc, out = fsck(region_path, "-n")
    assert rc == 0, out
    assert _tree(region_path) == before

