"""A region full to the last page and small object (docs/reclaim.md "When
the pool is empty", docs/open-files.md "On a full pool").

Operations that fail with ENOSPC give back everything they allocated:
fsck -n afterwards finds no leaked byte and everything written before is
intact (with an op of another host holding the epoch back: the C test
tests/c/test_fullpool.c, which can hold one).  Users can still open, read and delete files: from the host that
filled the region and from a fresh host (another process), and deleting
gives the space back.
"""

import errno
import subprocess
import sys

import pytest

from helpers import env

daxfs = env.daxfs

SIZE = 4 * env.MiB
BIG = 64 * 1024


def data(name, n):
    seed = name.encode()
    return (seed * (n // len(seed) + 1))[:n]


def is_full(e):
    return e.errno in (errno.ENOSPC, errno.ENFILE)


def try_op(fn, *args):
    """Runs fn; True if it failed because the region is full."""
    try:
        fn(*args)
    except daxfs.DaxfsError as e:
        if not is_full(e):
            raise
        return True
    return False


def fill(r):
    """Files of BIG bytes, then small ones, then empty ones, until ENOSPC;
    returns {path: contents} of those written whole."""
    kept = {}
    for size, prefix in ((BIG, "/d/big"), (100, "/d/small"), (0, "/d/empty")):
        for i in range(SIZE // 64):
            name = "%s%d" % (prefix, i)
            if try_op(r.write_file, name, data(name, size)):
                if r.exists(name):	# the short one is not kept
                    r.unlink(name)
                break
            kept[name] = data(name, size)
    return kept


def failing_ops(r, kept, rounds):
    """Every kind of namespace and data change, each expected to fail
    (some may succeed when space came free); returns how many failed."""
    names = sorted(kept)
    fails = 0
    for k in range(rounds):
        victim = names[k % len(names)]
        fails += try_op(r.create, "/d/nc%d" % k)
        fails += try_op(r.mkdir, "/d/nm%d" % k)
        fails += try_op(r.symlink, "t" * (1 + k * 37 % 900), "/d/ns%d" % k)
        fails += try_op(r.link, victim, "/d/nl%d" % k)
        if not try_op(r.rename, victim, "/d/nr%d" % k):
            r.rename("/d/nr%d" % k, victim)
        with r.open(victim) as f:
            fails += try_op(f.pwrite, b"w" * 8192, len(kept[victim]) + 4096)
            fails += try_op(f.append, b"a" * 5000)
            # no change stays unless it succeeded: then keep our model
            kept[victim] = f.read_all()
        fails += try_op(r.truncate, victim, len(kept[victim]) + 4 * BIG)
        with r.open(victim) as f:
            kept[victim] = f.read_all()
    return fails


def check_fsck_clean(path):
    code, out = env.fsck(path)
    assert code == 0, out
    assert ", 0 bytes leaked" in out, out


@pytest.fixture
def region():
    path = env.region_path("fullpool")
    env.mkfs(path, SIZE)
    yield path
    env.remove(path)


def test_failed_ops_on_full_region_leak_nothing(region):
    with daxfs.Region(region) as r:
        r.mkdir("/d")
        kept = fill(r)
        assert len(kept) > 10
        fails = failing_ops(r, kept, 60)
        assert fails > 60			# the region stayed full
        for name, body in kept.items():
            assert r.read_file(name) == body, name
    check_fsck_clean(region)


READER = r"""
import sys
sys.path[:0] = sys.argv[1:3]
import daxfs
path, names = sys.argv[3], sys.argv[4:]
with daxfs.Region(path) as r:
    for n in names:
        sys.stdout.write("%s %d\n" % (n, len(r.read_file(n))))
"""


def test_open_read_delete_on_full_region(region):
    with daxfs.Region(region) as r:
        r.mkdir("/d")
        kept = fill(r)
        assert r.statfs()["free_bytes"] < BIG
        assert try_op(r.write_file, "/d/more", data("more", BIG))
        # the same host: open, read, close
        for name, body in kept.items():
            assert r.read_file(name) == body, name
        names = sorted(kept)[:20]
        # a fresh host, another process (its first open-set page)
        out = subprocess.run(
            [sys.executable, "-c", READER, env.PYDIR, env.TESTS, region] + names,
            capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split("\n")[:-1] == [
            "%s %d" % (n, len(kept[n])) for n in names]
        # deleting gives the space back
        bigs = [n for n in sorted(kept) if n.startswith("/d/big")]
        for name in bigs[:4]:
            r.unlink(name)
            del kept[name]
        r.reclaim()
        assert r.statfs()["free_bytes"] >= BIG
        r.write_file("/d/more", data("more", BIG))
        kept["/d/more"] = data("more", BIG)
        for name, body in kept.items():
            assert r.read_file(name) == body, name
    check_fsck_clean(region)
