"""A repair killed at its stores, then run again, ends where it ends run once.

docs/fsck.md promises that a repair interrupted by a crash is finished
by running fsck.daxfs -y again.  tests/test_fsck_interrupted.py checks
that over random damage, where what a rare case does is left to chance
(stop 71's CI: a symlink bent into a file's page, one worked region in
about 25).  This checks it for every damage a case test builds by hand:
with DAXFS_FSCK_CUTS=1 in the environment, test_fsck.fsck() and
fsck_json() call check() before each repair (-y) they run, so every case
of the fsck tests is also repaired killed after each of its first stores
(atomics, then every plain store too: lib/crash-plain.c) and some spread
over the rest, then repaired again.  The rerun must end 0 or 1, -n must
find the region clean, and the tree (names, types, inode numbers, bytes,
link targets) must be the one the repair run once leaves.
tests/test_fsck_cases_interrupted.py runs the case files so.

A failure names the case (the test), the counting and the store:
`DAXFS_CRASH_AT=store:N [DAXFS_CRASH_PLAIN=1] build/crash/bin/fsck.daxfs
-y -f` on the image the case built replays it.
"""

import hashlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time

import crashlib as cl
import daxfs
from helpers import env, superblock

CRASH_FSCK = os.path.join(cl.REPO, "build", "crash", "bin", "fsck.daxfs")
FSCK = os.path.join(env.BIN, "fsck.daxfs")
FIRST = int(os.environ.get("DAXFS_FSCK_CUTS_FIRST", "48"))  # one by one
SPREAD = int(os.environ.get("DAXFS_FSCK_CUTS_SPREAD", "16"))
SLOW_S = 1.0           # a repair slower than this is not cut
CUT_LEASE_MS = 20      # the lease of the images cut (below)
LOST_FOUND = r"/lost\+found(\.[1-9])?"


def _log(what, detail):
    """One line per repair looked at, for the driver to count."""
    log = os.environ.get("DAXFS_FSCK_CUTS_LOG")
    if log:
        with open(log, "a") as f:
            f.write("%s %s %s\n" % (
                what, os.environ.get("PYTEST_CURRENT_TEST", "?").split()[0],
                detail))


def enabled():
    return os.environ.get("DAXFS_FSCK_CUTS") == "1"


def _file_sum(r, path, size):
    """A file's size and the sha1 of each extent with data (the size
    alone may be 2^48 of holes)."""
    with r.open(path) as f:
        return size, [(e.logical, e.length, hashlib.sha1(
            f.pread(min(e.length, max(0, size - e.logical)), e.logical)
        ).hexdigest()) for e in f.extents()]


def walk(r):
    """(path, lstat) of every name of an open region, depth first."""
    dirs = ["/"]
    while dirs:
        d = dirs.pop()
        for e in r.scandir(d):
            p = d.rstrip("/") + "/" + e[0]
            st = r.lstat(p)
            if stat.S_ISDIR(st.st_mode):
                dirs.append(p)
            yield p, st


def tree(path):
    """Every name of a closed region: path -> (mode, ino, bytes or
    target); no number for /lost+found."""
    out = {}
    with daxfs.Region(path) as r:
        for p, st in walk(r):
            if stat.S_ISLNK(st.st_mode):
                what = r.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                what = _file_sum(r, p, st.st_size)
            else:
                what = None
            # the number of a /lost+found fsck makes is the next free
            # one: a killed repair may have taken one already
            ino = None if re.fullmatch(LOST_FOUND, p) else st.st_ino
            out[p] = (st.st_mode, ino, what)
    return out


def _run(prog, img, env=None):
    """prog -y -f img."""
    return subprocess.run([prog, "-y", "-f", img], env=env,
                          capture_output=True, text=True, timeout=120)


def _killed(img, n, counting):
    env = dict(os.environ, DAXFS_CRASH_AT="store:%d" % n,
               DAXFS_CRASH_PLAIN="1" if counting == "plain" else "0")
    return _run(CRASH_FSCK, img, env).returncode == -9


def _differs(got, want):
    """The first few names whose entry differs between two trees: name,
    (mode, ino) after the cut, and as the repair run once left it."""
    names = sorted(set(got) | set(want))
    return ["%s %s, once %s" % (n, got.get(n, (None,))[:2],
                                want.get(n, (None,))[:2])
            for n in names if got.get(n) != want.get(n)][:4]


def _short_lease(src):
    """A repair watches the host table for a lease and a quarter before it
    recovers the hosts listed there: 12.5 s at mkfs's default, for every
    run.  Nothing renews in a copy, so a shorter watch sees the same dead
    hosts: the copy gets a 20 ms lease.  A superblock whose checksum the
    damage broke is the damage: left as it is."""
    with open(src, "rb") as f:
        b = f.read(superblock.CSUM_OFF + 4)
    if len(b) < superblock.CSUM_OFF + 4 or \
            superblock.crc32c(b[:superblock.CSUM_OFF]) != \
            int.from_bytes(b[superblock.CSUM_OFF:], "little"):
        return
    if superblock.lease_ms(src) > CUT_LEASE_MS:
        superblock.set_lease_ms(src, CUT_LEASE_MS)


def check(path):
    """The checks above for the damaged region at path (left as it is);
    raises AssertionError naming each cut that ended elsewhere."""
    if not os.path.isfile(path):
        return          # fsck's own errors: their test checks them
    assert os.access(CRASH_FSCK, os.X_OK), "run make crash"
    with tempfile.TemporaryDirectory() as tmp:
        img = os.path.join(tmp, "cut.img")
        src = os.path.join(tmp, "damaged.img")
        shutil.copyfile(path, src)
        _short_lease(src)
        path = src
        shutil.copyfile(path, img)
        start = time.monotonic()
        once = _run(FSCK, img)
        took = time.monotonic() - start
        if once.returncode not in (0, 1):
            return _log("unfinished", once.returncode)
        if took > SLOW_S:
            # a hundred cuts of it would take too long
            return _log("slow", "%.1fs" % took)
        want = tree(img)
        bad, ran = [], 0
        for counting in ("atomics", "plain"):
            total = 1
            while True:
                shutil.copyfile(path, img)
                if not _killed(img, total, counting):
                    break
                total *= 2
            cuts = sorted(set(range(1, min(total, FIRST + 1))) |
                          set(range(FIRST + 1, total,
                                    max(1, total // SPREAD))))
            for n in cuts:
                shutil.copyfile(path, img)
                if not _killed(img, n, counting):
                    break       # the repair ended before its nth store
                ran += 1
                again = _run(FSCK, img)
                clean = subprocess.run([FSCK, "-n", img], capture_output=True,
                                       text=True, timeout=120)
                if again.returncode not in (0, 1) or clean.returncode:
                    bad.append("%s store %d: rerun exit %d, -n exit %d" % (
                        counting, n, again.returncode, clean.returncode))
                    continue
                got = tree(img)
                if got != want:
                    bad.append("%s store %d: %s differ" % (
                        counting, n, _differs(got, want)))
        _log("checked", "%d cuts, %d ended elsewhere" % (ran, len(bad)))
        assert not bad, "repair killed, then rerun, ends elsewhere:\n" + \
            "\n".join(bad[:8])
