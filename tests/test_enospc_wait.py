"""ENOSPC only when the pool is full, not while freed space waits in limbo
behind a dead host (docs/reclaim.md "When the pool is empty").

A victim host (the crash build of libdaxfs) SIGKILLs itself inside an
operation, so its lane stays announced at an old epoch: until its lease
runs out and a survivor recovers it, the global epoch cannot move on and
nothing retired since can be freed.  A survivor that writes and deletes
more than the free space meanwhile must not see ENOSPC, and everything it
kept must be there.  A region truly full of live data still gives ENOSPC,
after at most about one lease, and loses nothing.
"""

import errno
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

LEASE_MS = 4000	# the survivor fills the pool well within it
SIZE = 16 * env.MiB
CHUNK = 1 * env.MiB
HANG_S = 120		# far above lease + margin: only catches a hang


@pytest.fixture(autouse=True)
def say_why(monkeypatch):
    """libdaxfs prints why an ENOSPC stood (DAXFS_DEBUG): a failing test
    shows the line in its captured stderr."""
    monkeypatch.setenv("DAXFS_DEBUG", "1")


@pytest.fixture
def region():
    path = env.region_path("enospc")
    env.mkfs(path, SIZE, lease_ms=LEASE_MS)
    yield path
    for suffix in ("", ".log", ".points"):
        env.remove(path + suffix)


def kill_victim_mid_op(region):
    """A host that dies inside a create: its lane holds the epoch back."""
    log = region + ".log"
    p = cl.spawn_victim(region, log, 5, 50, "/v", "create.counted",
                        crash_log=region + ".points")
    p.wait(timeout=60)
    assert p.returncode == -9, p.stderr.read() if p.stderr else p.returncode
    with open(region + ".points") as f:
        assert f.read().split()[0] == "create.counted"


def test_churn_behind_dead_host_gets_no_enospc(crash_build, region):
    kill_victim_mid_op(region)
    with daxfs.Region(region) as r:
        free = r.statfs()["free_bytes"]
        rounds = 3 * free // CHUNK + 1		# garbage: 3x the free space
        r.mkdir("/keep")
        for i in range(rounds):
            try:
                r.write_file("/churn", cl.data("c%d" % i, CHUNK))
            except daxfs.DaxfsError as e:
                # where the space went: fsck -v while we are still up
                rc, out = env.fsck(region, "-nv")
                raise AssertionError("round %d of %d: %s\nstatfs %r\n"
                                     "hosts %r\nfsck -nv: %d\n%s" %
                                     (i, rounds, e, r.statfs(),
                                      r.info()["hosts"], rc, out[-6000:]))
            assert r.read_file("/churn") == cl.data("c%d" % i, CHUNK)
            r.write_file("/keep/k%d" % i, cl.data("k%d" % i, 100 + i))
            r.unlink("/churn")
        for i in range(rounds):
            assert r.read_file("/keep/k%d" % i) == cl.data("k%d" % i, 100 + i)
        assert sorted(r.listdir("/keep")) == sorted("k%d" % i for i in range(rounds))
        dead = [h for h in r.info()["hosts"] if not h["self"]]
        assert all(h["state"] != "alive" for h in dead), dead


def test_one_pwrite_behind_dead_host_is_not_short(crash_build, region):
    """A single pwrite that would meet the full pool part-way waits for
    the space in limbo, as one that meets it at its first byte does,
    instead of coming back short (fsx under `daxfs run` reported "short
    write" once a mapping host held reclamation back).  The write is
    whole or nothing while the wait runs it again (DAXFS_WRITE_WHOLE).
    The churn writes a size that is no multiple of a page batch, so that
    some write crosses the point where the pool ran out."""
    kill_victim_mid_op(region)
    size = CHUNK + 3 * 4096 + 100
    with daxfs.Region(region) as r:
        rounds = 3 * r.statfs()["free_bytes"] // size + 1
        for i in range(rounds):
            data = cl.data("p%d" % i, size)
            with r.open("/churn", create=True) as f:
                n = f.pwrite(data, 0)
                assert n == size, "round %d of %d: short write %d of %d" % (
                    i, rounds, n, size)
                assert f.pread(size, 0) == data
            r.unlink("/churn")


def test_full_region_write_is_short(region):
    """A region truly full of live data: a write larger than what is
    left stores what fits and says so (a short write, as POSIX has it for
    a full medium), after the wait found nothing on its way."""
    with daxfs.Region(region) as r:
        names = fill(r, "/f")
        r.unlink(names[0])
        r.reclaim()
        data = cl.data("short", 4 * CHUNK)
        with r.open("/short", create=True) as f:
            n = f.pwrite(data, 0)
            assert 0 < n < len(data)
            assert f.pread(n, 0) == data[:n]
        for name in names[1:]:
            assert r.read_file(name) == cl.data(name, CHUNK)


def fill(r, prefix):
    """Writes CHUNK files until ENOSPC; returns the names written whole."""
    names = []
    t0 = time.monotonic()
    with pytest.raises(daxfs.DaxfsError) as ei:
        for i in range(2 * SIZE // CHUNK):
            name = "%s%d" % (prefix, i)
            r.write_file(name, cl.data(name, CHUNK))
            names.append(name)
    assert ei.value.errno == errno.ENOSPC
    assert time.monotonic() - t0 < HANG_S
    return names


def check_full_region(r, names):
    # full: still readable (an open's set page may come from the reserve,
    # docs/open-files.md "On a full pool"), deleting makes room again,
    # and nothing written is lost
    for n in names:
        assert r.read_file(n) == cl.data(n, CHUNK)
    for n in names[:2]:
        r.unlink(n)
    r.reclaim()
    for n in names[2:]:
        assert r.read_file(n) == cl.data(n, CHUNK)
    r.write_file("/after", cl.data("after", CHUNK))
    assert r.read_file("/after") == cl.data("after", CHUNK)


def test_full_region_still_enospc(region):
    with daxfs.Region(region) as r:
        names = fill(r, "/f")
        assert len(names) > 2
        check_full_region(r, names)


def test_full_region_behind_dead_host_enospc(crash_build, region):
    """Live data fills the pool while a dead host holds the epoch: the
    wait ends (the dead host is recovered, nothing more comes free) and
    the call fails with ENOSPC."""
    kill_victim_mid_op(region)
    with daxfs.Region(region) as r:
        names = fill(r, "/f")
        assert len(names) > 2
        check_full_region(r, names)
