"""Unnamed files (O_TMPFILE) in libdaxfs and the core (docs/open-files.md,
"Unnamed files"): a file made with no name is held by its maker's open set
like an unlinked open file.  No other host sees a name; its space comes
back at its close, or when its host dies (at any crash point of its
making); a link of it gives it its first name, seen by every host.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

LEASE_MS = 400
SIZE = 16 * env.MiB
BODY = cl.data("t", 3 * 4096 + 100)

VICTIM = r'''
import os, sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
f = r.tmpfile("/d")
f.pwrite_all(sys.argv[3].encode() * 4096, 0)
print("held", flush=True)
os.kill(os.getpid(), 9)		# dies holding it
'''

POINTS = ["tmpfile.published", "tmpfile.held", "tmpfile.orphan"]


@pytest.fixture
def region():
    path = env.region_path("tmpf")
    env.mkfs(path, SIZE, lease_ms=LEASE_MS)
    with daxfs.Region(path) as r:
        r.mkdir("/d")
    yield path
    for p in (path, path + ".points"):
        env.remove(p)


def used(r, *others):
    """Pool bytes and inodes in use once every retired object is reclaimed
    (each host's epoch must move on: all of them reclaim)."""
    for _ in range(3):
        for h in (r,) + others:
            h.reclaim()
    st = r.statfs()
    return st["used_bytes"], st["inodes"]


def hold_one(*regions):
    """Each host holds a file open: its open-set page exists before any
    baseline is taken (a host's first open allocates it for good)."""
    for r in regions:
        if not r.exists("/keep"):
            r.write_file("/keep", b"k")
    return [r.open("/keep") for r in regions]


def fsck_clean(path):
    code, out = env.fsck(path, "-n")
    assert code == 0, out


def test_tmpfile_has_no_name_and_goes_at_close(region):
    with daxfs.Region(region) as a, daxfs.Region(region) as b:
        keep = hold_one(a, b)
        before = used(a, b)
        f = a.tmpfile("/d", 0o640)
        f.pwrite_all(BODY, 0)
        st = b.fstat(f.ino)
        assert st.st_nlink == 0 and st.st_size == len(BODY)
        assert st.st_mode & 0o777 == 0o640
        assert a.listdir("/d") == [] and b.listdir("/d") == []
        assert f.pread(len(BODY), 0) == BODY
        assert used(a) != before
        f.close()
        with pytest.raises(FileNotFoundError):
            b.fstat(f.ino)
        assert used(b, a) == before
        for k in keep:
            k.close()
    fsck_clean(region)


def test_linked_tmpfile_is_an_ordinary_file(region):
    with daxfs.Region(region) as a, daxfs.Region(region) as b:
        f = a.tmpfile("/d")
        f.pwrite_all(BODY, 0)
        a.link_open(f, "/d/named")
        assert b.read_file("/d/named") == BODY
        assert b.stat("/d/named").st_nlink == 1
        with pytest.raises(FileExistsError):
            a.link_open(f, "/d/named")
        f.close()
        assert b.read_file("/d/named") == BODY
        b.unlink("/d/named")
    fsck_clean(region)


def test_link_needs_the_file_held_here(region):
    """Only a host that holds it open can name a nlink-0 file: another
    host's unlinked file stays unnamed (its 0 is final elsewhere)."""
    with daxfs.Region(region) as a, daxfs.Region(region) as b:
        f = a.tmpfile("/d")
        with pytest.raises(FileNotFoundError):
            b.link_open(f, "/d/stolen")
        assert a.listdir("/d") == []
        h = a.open("/d/x", create=True)
        a.unlink("/d/x")
        with pytest.raises(FileNotFoundError):
            b.link_open(h, "/d/back")
        h.close()
        f.close()
    fsck_clean(region)


def wait_recovered(r, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        time.sleep(LEASE_MS / 1000)
        r.reclaim()
        states = [h["state"] for h in r.info()["hosts"] if not h["self"]]
        if "recovered" in states and "alive" not in states:
            return
    raise AssertionError("victim never recovered: %s" % r.info()["hosts"])


def test_holder_killed_frees_tmpfile(region):
    with daxfs.Region(region) as r:
        before = used(r)
        p = subprocess.run([sys.executable, "-c", VICTIM, region,
                            os.path.join(cl.REPO, "python"), "k"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == -signal.SIGKILL and "held" in p.stdout, p.stderr
        wait_recovered(r)
        assert used(r) == before
    fsck_clean(region)


@pytest.mark.parametrize("point", POINTS)
def test_maker_killed_at_point(crash_build, region, point):
    """Killed at each step of making it: the survivor's recovery frees the
    record, whether published, held or marked; nothing leaks."""
    points = region + ".points"
    with daxfs.Region(region) as r:
        before = used(r)
        venv = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB, DAXFS_CRASH_AT=point,
                    DAXFS_CRASH_LOG=points)
        p = subprocess.run([sys.executable, "-c", VICTIM, region,
                            os.path.join(cl.REPO, "python"), "c"], env=venv,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == -signal.SIGKILL, p.stderr
        with open(points) as f:
            assert f.read().split()[0] == point
        assert "held" not in p.stdout
        wait_recovered(r)
        assert used(r) == before
        assert r.listdir("/d") == []
    fsck_clean(region)


@pytest.mark.parametrize("point", [None, "tmpfile.published"])
def test_cluster_crash_fsck_frees_tmpfile(crash_build, region, point):
    """Nobody survives the holder (or the maker, killed mid-way): once its lease is
    over, fsck -n reports the lost file, fsck -y frees it (the same recovery a
    survivor runs), and fsck -n is clean again."""
    venv = dict(os.environ)
    if point:
        venv.update(DAXFS_LIB=cl.CRASH_LIB, DAXFS_CRASH_AT=point,
                    DAXFS_CRASH_LOG=region + ".points")
    p = subprocess.run([sys.executable, "-c", VICTIM, region,
                        os.path.join(cl.REPO, "python"), "f"], env=venv,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == -signal.SIGKILL, p.stderr
    time.sleep(LEASE_MS / 1000 * 2)
    code, out = env.fsck(region, "-n")
    assert code == 4, out
    code, out = env.fsck(region, "-y")
    assert code == 1, out
    fsck_clean(region)
    with daxfs.Region(region) as r:
        assert r.listdir("/d") == []
        assert r.statfs()["inodes"] == 2, r.statfs()
