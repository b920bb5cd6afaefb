"""fsck.daxfs -y converges: a sweep of offline damage on worked regions.

The chaos rounds (test_chaos.py) damage a region while hosts work on it,
a few hundred stores a round.  A repair that holds for most damage but
not for a rare combination slips through them: one CI run in many found
`fsck -n` unclean after `fsck -y`.  This sweep makes the rare cases
common: a region that hosts worked on (free stacks, limbo, tries several
levels deep, symlinks of both record forms, copied-up base inodes) is
damaged offline by daxfs-chaos with many seeds, and each time a user
must see what fsck(8) promises:

  * `fsck.daxfs -y` ends with 0 or 1 (everything it found, repaired);
  * a second `fsck.daxfs -n` finds the region clean;
  * the region mounts, and everything in it can be used: every
    directory lists, every name stats, every file reads where it has
    data (bounded: a repaired size may be huge and sparse), every
    symlink reads, every attribute list reads, and every directory takes
    new names (an insert's own way through its trie).  fsck's "clean" must
    mean that no call finds the region corrupt;
  * a file fsck kept under its name and number, which no store of the
    damage touched (its inode record, radix nodes, data pages: the chaos
    log says where each store went) and no reported problem names,
    reads back the bytes it had: a repair loses nothing silently.

A failure names the seed: `daxfs-chaos -s SEED -n COUNT` on a copy of
the kept image replays it (docs/testing.md "fsck sweep").
"""

import errno
import hashlib
import json
import os
import shutil
import stat
import subprocess

import pytest

import daxfs
import test_chaos
from fsck_cuts import walk
from test_fsck import PAGE, Image

SEEDS = int(os.environ.get("DAXFS_SWEEP_SEEDS", "250"))
DAMAGE = int(os.environ.get("DAXFS_SWEEP_DAMAGE", "50"))  # stores a seed
SIZE = 16 << 20


def _tool(name):
    return test_chaos._tool(name)


def _source_tree(top):
    """A base image's tree: files, nested directories, both symlink
    forms (header record and bare page)."""
    os.makedirs(os.path.join(top, "b/c/d"))
    for i in range(8):
        with open(os.path.join(top, "b", "f%d" % i), "wb") as f:
            f.write(bytes([65 + i]) * (700 * i + 1))
    with open(os.path.join(top, "b/c/d/deep"), "wb") as f:
        f.write(b"z" * 9000)
    os.symlink("short-target", os.path.join(top, "b/ls"))
    os.symlink("t" * 3000, os.path.join(top, "b/c/ll"))


def _copy_ups(path):
    """Copies base inodes up the ways hosts do: write, chmod, rename,
    unlink, a new name in a base directory."""
    r = daxfs.Region(path)
    try:
        for i in range(0, 8, 2):
            with r.open_file("/b/f%d" % i, "r+b") as f:
                f.seek(0, os.SEEK_END)
                f.write(b"appended")
        r.chmod("/b/c", 0o700)
        r.rename("/b/f1", "/b/c/f1-moved")
        r.unlink("/b/f3")
        r.write_file("/b/c/d/new", b"n" * 5000)
        r.symlink("x" * 2000, "/b/c/new-link")
    finally:
        r.close()


def _fsck(*args):
    return subprocess.run([_tool("fsck.daxfs")] + list(args),
                          capture_output=True, text=True, timeout=120)


def _worked_region(tmp_path, with_base):
    """A region hosts worked on for a few seconds, repaired clean."""
    work = str(tmp_path / "work.img")
    base = str(tmp_path / "base.img")
    source = None
    if with_base:
        source = str(tmp_path / "src")
        _source_tree(source)
    # a corruption rate this low leaves the workers alone in practice;
    # whatever it did is repaired below, before the sweep starts
    res = test_chaos.run_round(work, 4, 7, rate=0.01, kinds="dirent",
                               size=SIZE, keep=base, source=source)
    assert not [p for p in res["problems"] if "fsck" not in p], res
    if with_base:
        _copy_ups(base)
    _fsck("-y", "-f", base)
    again = _fsck("-n", base)
    assert again.returncode == 0, again.stdout[-2000:]
    return base


def _read_data(r, path, size):
    """Reads the first 64 KiB, the last byte and every extent with data
    (the size alone may be 2^48 of holes)."""
    with r.open(path) as f:
        spans = [(0, 1 << 16), (max(0, size - 1), 1)]
        spans += [(e.logical, e.length) for e in f.extents()]
        for off, n in spans:
            end = min(off + n, size)
            while off < end:
                want = min(end - off, 1 << 20)
                got = len(f.pread(want, off))
                if got != want:
                    return "read %r at %d: %d of %d bytes" % (
                        path, off, got, want)
                off += want
    return None


# New names made in each directory at the end: with this many, every
# top-level slot of its trie takes one but for about 13 in 100.
PROBES = ["\x01probe%d" % i for i in range(128)]


def _take_new_names(r):
    """Every directory takes new names: a slot the walk passed but an
    insert gives up on (EUCLEAN) would keep every name that hashes there
    from being made (seed 150: a leaf tag naming no dirent, where an
    orphan's "#ino" in /lost+found hashed).  Lookups do not meet it: a
    missing name's lookup ends at the empty chain.  Other refusals (a
    full pool, an immutable directory) are not corruption."""
    bad = []
    dirs = ["/"] + [p for p, st in walk(r) if stat.S_ISDIR(st.st_mode)]
    for d in dirs:
        for name in PROBES:
            try:
                r.create(d.rstrip("/") + "/" + name)
            except OSError as e:
                if e.errno == errno.EUCLEAN:
                    bad.append("create in %r: %s" % (d, e))
                break
    return bad


def _use_everything(r):
    """Every object of the region used once, as a user's tools would:
    the failures, as strings."""
    bad, dirs = [], ["/"]
    while dirs:
        d = dirs.pop()
        try:
            names = [e[0] for e in r.scandir(d)]
        except OSError as e:
            bad.append("list %r: %s" % (d, e))
            continue
        for name in names:
            p = d.rstrip("/") + "/" + name
            try:
                st = r.lstat(p)
                if stat.S_ISDIR(st.st_mode):
                    dirs.append(p)
                elif stat.S_ISLNK(st.st_mode):
                    r.readlink(p)
                elif stat.S_ISREG(st.st_mode):
                    why = _read_data(r, p, st.st_size)
                    if why:
                        bad.append(why)
                r.listxattr(p, follow_symlinks=False)
            except OSError as e:
                if e.errno != errno.EOPNOTSUPP:
                    bad.append("%r: %s" % (p, e))
    return bad


def _errors(out):
    return [ln for ln in out.splitlines()
            if "error" in ln and not ln.endswith("FIXED")][:6]


def _file_bytes(path):
    """Every regular file of a closed region: path -> (ino, sha1 of its
    bytes, the region ranges its inode record, radix nodes and data pages
    lie in)."""
    im = Image(path)
    with daxfs.Region(path) as r:
        return {p: (st.st_ino, _sha(r.read_file(p)), _owned(im, st.st_ino))
                for p, st in walk(r) if stat.S_ISREG(st.st_mode)}


def _owned(im, ino):
    rec = im.inode(ino)
    if rec is None:             # a pristine base file: no pool object
        return []
    spans = [(rec, rec + 128)]
    for slot, page in im.radix_pages(ino):
        node = slot & ~(PAGE - 1) if slot != rec + 80 else slot
        spans += [(node, node + PAGE), (page, page + PAGE)]
    return spans


def _sha(data):
    return hashlib.sha1(data).hexdigest()


def _changed_silently(r, before, hits, reported):
    """Files fsck kept under the same name and number, that no store of
    the damage touched and no problem it reported names, whose bytes are
    not what they were: data a repair lost without saying so."""
    bad = []
    for path, (ino, sha, owned) in before.items():
        if ino in reported or any(a <= h < b for h in hits for a, b in owned):
            continue
        try:
            if r.lstat(path).st_ino != ino:
                continue
        except OSError:
            continue        # its name went with a damaged directory
        if _sha(r.read_file(path)) != sha:
            bad.append("%s (ino %d) changed" % (path, ino))
    return bad


@pytest.mark.parametrize("with_base", [False, True],
                         ids=["overlay-only", "base-image"])
def test_fsck_repair_converges_under_damage(tmp_path, with_base):
    base = _worked_region(tmp_path, with_base)
    before = _file_bytes(base)
    img = str(tmp_path / "damaged.img")
    log = str(tmp_path / "chaos.log")
    failures = []
    for seed in range(SEEDS):
        shutil.copyfile(base, img)
        if os.path.exists(log):
            os.unlink(log)
        chaos = subprocess.run([_tool("daxfs-chaos"), "-q", "-s", str(seed),
                                "-n", str(DAMAGE), "-l", log, img],
                               capture_output=True, text=True, timeout=60)
        assert chaos.returncode == 0, chaos.stderr
        with open(log) as f:
            hits = [int(line.split()[2], 16) for line in f]
        fix = _fsck("--json", "-y", "-f", img)
        rep = json.loads(fix.stdout)
        again = _fsck("-n", img)
        if fix.returncode not in (0, 1) or again.returncode != 0:
            failures.append("seed %d: -y exit %d %s; -n exit %d %s" % (
                seed, fix.returncode,
                [p["message"] for p in rep["problems"] if not p["repaired"]][:4],
                again.returncode, _errors(again.stdout)))
            continue
        reported = {p.get("ino") for p in rep["problems"]}
        with daxfs.Region(img) as r:
            unusable = _use_everything(r)
            unusable += _changed_silently(r, before, hits, reported)
            unusable += _take_new_names(r)
        if unusable:
            failures.append("seed %d: fsck -n clean, but %s" % (
                seed, "; ".join(unusable[:3])))
    if failures:
        keep = os.environ.get("DAXFS_CHAOS_KEEP")
        if keep:        # one per variant: a run can fail in both
            shutil.copyfile(base, os.path.join(keep, "sweep-base-%s.img" % (
                "base-image" if with_base else "overlay-only")))
    assert not failures, "%d of %d seeds:\n%s" % (
        len(failures), SEEDS, "\n".join(failures[:10]))


HEADER_SEEDS = int(os.environ.get("DAXFS_SWEEP_HEADER_SEEDS", "120"))


def _split_region(tmp_path):
    """A split-mode region (file data in a backing file, cached in the
    region) whose cache holds every file, read through it once."""
    src = tmp_path / "src"
    os.makedirs(src / "d")
    files = {}
    for i in range(1, 7):
        data = os.urandom(7000 * i)
        (src / "d" / ("f%d" % i)).write_bytes(data)
        files["/d/f%d" % i] = data
    path, back = str(tmp_path / "split.img"), str(tmp_path / "back1")
    subprocess.run([_tool("mkfs.daxfs"), "-q", "-s", str(8 << 20), "--source",
                    str(src), "--backing", back, path], check=True)
    with daxfs.Region(path, backing=[back]) as r:
        for name, data in files.items():
            assert r.read_file(name) == data
    return path, [back], files


def _base_region(tmp_path):
    src = tmp_path / "src"
    _source_tree(str(src))
    path = str(tmp_path / "base.img")
    subprocess.run([_tool("mkfs.daxfs"), "-q", "-s", str(SIZE), "--source",
                    str(src), path], check=True)
    _copy_ups(path)
    return path, [], {}


@pytest.mark.parametrize("kinds", ["super,base", "pcache"])
def test_fsck_fixed_headers_under_damage(tmp_path, kinds):
    """Stray stores into the fixed headers: the superblock and the base
    image's header (their checksums mostly recomputed by daxfs-chaos, so
    the geometry checks must catch them) and the split-mode page cache
    (header and slots).  Whatever fsck cannot repair (a superblock, the
    read-only base image) it must name, exit 4, or refuse as a newer
    format's, exit 8; what it repairs must leave a clean region whose
    files read back.  The page cache is a cache: every hit there is
    repairable (a backing descriptor's with the file given, --backing)
    and no file's bytes change.  Two stores into one descriptor make it
    another file's to fsck, which then stops, exit 8, naming the file."""
    split = kinds == "pcache"
    base, backing, files = (_split_region if split else _base_region)(tmp_path)
    given = sum((["--backing", b] for b in backing), [])
    img = str(tmp_path / "damaged.img")
    failures = []
    for seed in range(HEADER_SEEDS):
        shutil.copyfile(base, img)
        stores = 1 + seed % 3
        subprocess.run([_tool("daxfs-chaos"), "-q", "-s", str(seed), "-n",
                        str(stores), "-k", kinds, img], check=True,
                       capture_output=True, timeout=60)
        fix = _fsck("-y", "-f", *given, img)
        out = fix.stdout + fix.stderr
        what = "seed %d: -y exit %d" % (seed, fix.returncode)
        if fix.returncode == 8:
            if "features this fsck.daxfs does not know" not in out and \
                    "not a DaxFS filesystem" not in out and \
                    not (split and stores > 1 and
                         "not one of this filesystem's backing files" in out):
                failures.append("%s without naming features: %s" % (what, out[-300:]))
            continue
        if fix.returncode == 4 and not split:
            named = [ln for ln in out.splitlines()
                     if ln.startswith("fatal:") or
                     (ln.startswith("error:") and not ln.endswith("FIXED"))]
            # a hit version word reads as an older format: named too
            if not (named or "made by an older DaxFS" in out) or \
                    "run fsck.daxfs" in out:
                failures.append("%s without naming the damage: %s" % (what, out[-300:]))
            continue
        if fix.returncode not in (0, 1):
            failures.append("%s %s" % (what, _errors(out) or out[-300:]))
            continue
        again = _fsck("-n", *given, img)
        if again.returncode != 0:
            failures.append("%s, then -n exit %d %s" % (
                what, again.returncode, _errors(again.stdout)))
            continue
        with daxfs.Region(img, backing=backing) as r:
            bad = _use_everything(r)
            bad += ["%s: bytes changed" % name for name, data in files.items()
                    if r.read_file(name) != data]
        if bad:
            failures.append("%s, clean, but %s" % (what, "; ".join(bad[:3])))
    assert not failures, "%d of %d seeds:\n%s" % (
        len(failures), HEADER_SEEDS, "\n".join(failures[:10]))
