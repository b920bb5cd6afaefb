"""Two FUSE mounts of one region are two hosts (docs/fuse.md).

A change made through one mount is seen through the other within the
documented bound (the `timeout` option: names and attributes; half of it
for files open on the seeing side), appends from both never overwrite each
other, and a mount whose daxfs-fuse is killed with SIGKILL is a dead host:
its mount point gives ENOTCONN, the other host recovers it (its open files
are let go), and `daxfs umount` cleans the mount point up.
"""
import errno
import mmap
import os
import subprocess
import sys
import threading
import time

import pytest

from helpers import clockshim, create_churn, env
from helpers import fuse as hf

import daxfs

pytestmark = pytest.mark.skipif(hf.skip_reason() is not None,
                                reason=str(hf.skip_reason()))

TIMEOUT = 0.5                   # -o timeout= of both mounts, seconds
# What docs/fuse.md promises (timeout for names and attributes, timeout/2
# for the pages of open files), with room for a loaded machine.
BOUND = 2 * TIMEOUT + 1.0


@pytest.fixture
def two(region):
    a = hf.Mount(region, opts=["timeout=%g" % TIMEOUT])
    b = hf.Mount(region, opts=["timeout=%g" % TIMEOUT])
    yield a, b
    a.close()
    b.close()


def write(path, data, mode="wb"):
    with open(path, mode) as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_two_mounts_are_two_hosts(two, region):
    with daxfs.Region(region, readonly=True) as fs:
        alive = [h for h in fs.info()["hosts"] if h["state"] == 1]
    assert len(alive) == 2


def test_names_and_attributes_seen_within_bound(two):
    a, b = two
    write(a.path("gone"), b"old")
    write(a.path("moved"), b"m")
    assert not os.path.exists(b.path("new"))        # a cached negative entry
    assert read(b.path("gone")) == b"old"
    os.stat(b.path("moved"))
    write(a.path("new"), b"fresh")
    os.unlink(a.path("gone"))
    os.rename(a.path("moved"), a.path("there"))
    os.chmod(a.path("there"), 0o600)
    time.sleep(BOUND)
    assert read(b.path("new")) == b"fresh"
    assert not os.path.exists(b.path("gone"))
    assert not os.path.exists(b.path("moved"))
    assert os.stat(b.path("there")).st_mode & 0o777 == 0o600


def test_data_of_open_and_mapped_file_seen_within_bound(two):
    a, b = two
    write(a.path("f"), b"1" * 8192)
    fd = os.open(b.path("f"), os.O_RDONLY)
    try:
        m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ)
        assert os.pread(fd, 4, 0) == b"1111" and m[4096:4100] == b"1111"
        with open(a.path("f"), "r+b") as f:    # same size: only the data moves
            f.write(b"2" * 8192)
        time.sleep(BOUND)
        # the mapping first: loads from it make no request that could
        # tell the kernel its pages are stale
        assert m[4096:4100] == b"2222"
        assert os.pread(fd, 4, 0) == b"2222"
        with open(a.path("f"), "ab") as f:      # and a size change
            f.write(b"3" * 100)
        time.sleep(BOUND)
        assert os.fstat(fd).st_size == 8292
        assert os.pread(fd, 200, 8192) == b"3" * 100
        m.close()
    finally:
        os.close(fd)


# A library host that writes /f on command: "0" makes it (8 KiB of b"0"),
# "k" rewrites it with b"k"; each answered with the bytes written.  No
# stat: a getattr here would fold the mark.
REWRITER = """
import sys
import daxfs
with daxfs.Region(sys.argv[1]) as fs:
    f = fs.open("/f", create=True)
    for line in sys.stdin:
        print(f.pwrite(line.strip().encode() * 8192, 0), flush=True)
"""


@pytest.fixture(scope="module")
def held_clock(tmp_path_factory):
    return clockshim.build(tmp_path_factory.mktemp("clockshim"))


@pytest.mark.parametrize("opts", [["ro"], ["ro", "nohost"]], ids=["ro", "ro+nohost"])
def test_read_only_mount_sees_rewrites_within_bound(region, held_clock, opts):
    """A read-only mount (and a host-less one, which joins no host slot)
    serves a file held open and mapped while a library host rewrites it in
    place, five times.  The writer's wall clock is held (the clock shim),
    so its rewrites fall in one tick and find the stamps fresh: the first
    marks the file's change counter (format 14), the later ones find it
    marked and leave the word as it is (only a getattr on a writable host
    folds a mark).  A plain ro mount is still a writable host to the
    region, and its poller's fstat folds; a nohost mount maps the region
    read-only and cannot.  So there the poller must take a word that
    still carries the mark for a change (daxfs_change_bytes_moved): one
    that only compares the words failed at the second rewrite (checked
    by swapping the rule in tools/fuse/opens.c)."""
    e = dict(os.environ, LD_PRELOAD=held_clock, DAXFS_TEST_HOLD_WALL="1",
             PYTHONPATH=env.PYDIR)
    w = subprocess.Popen([sys.executable, "-c", REWRITER, region], env=e,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)

    def rewrite(k):
        w.stdin.write("%d\n" % k)
        w.stdin.flush()
        assert w.stdout.readline().strip() == "8192"

    b = None
    try:
        rewrite(0)
        b = hf.Mount(region, opts=opts + ["timeout=%g" % TIMEOUT])
        fd = os.open(b.path("f"), os.O_RDONLY)
        m = mmap.mmap(fd, 8192, mmap.MAP_SHARED, mmap.PROT_READ)
        try:
            assert os.pread(fd, 4, 4096) == b"0000" and m[0:4] == b"0000"
            for k in range(1, 6):
                rewrite(k)
                time.sleep(BOUND)
                want = b"%d" % k * 4
                # the mapping first: its loads tell the kernel nothing
                assert m[4096:4100] == want, k
                assert os.pread(fd, 4, 0) == want, k
        finally:
            m.close()
            os.close(fd)
    finally:
        if b:
            b.close()
        w.stdin.close()
        w.wait(timeout=60)


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="known: the kernel's lookup holds no inode on "
                   "the server, so an open(O_CREAT) that meets a file "
                   "another host frees still fails now and then "
                   "(docs/fuse.md \"Coherence\")")
def test_create_while_the_other_mount_churns_the_name(region):
    """open(O_CREAT) of one name through two mounts (two hosts) while
    both create and unlink it: in an existing directory every open gives
    a descriptor.  daxfs-fuse's create answered ENOENT when the inode its
    create met (or made) was unlinked and freed on the other host before
    its open held it, about one open in 20 in this test (session 53).
    op_create now looks again, and op_open answers ESTALE so that the VFS
    looks the name up again; one open in 100 or so still fails (ENOENT,
    or ESTALE when the second look meets the same race): the kernel
    opens what its lookup found, and nothing holds that inode for it.
    Strict xfail, so that a fix shows."""
    a = hf.Mount(region, opts=["timeout=0"])
    b = hf.Mount(region, opts=["timeout=0"])
    try:
        results = create_churn.run([a.path("x"), b.path("x")] * 2, 2.0)
    finally:
        a.close()
        b.close()
    assert all(r["ok"] > 0 for r in results), results
    assert [r["failed"] for r in results] == [{}] * 4, results


def test_appends_from_two_hosts_never_overlap(two):
    a, b = two
    write(a.path("log"), b"")
    n = 200

    def appender(m, tag):
        fd = os.open(m.path("log"), os.O_WRONLY | os.O_APPEND)
        try:
            for i in range(n):
                os.write(fd, b"%s%04d\n" % (tag, i))
        finally:
            os.close(fd)

    ts = [threading.Thread(target=appender, args=(m, t)) for m, t in ((a, b"A"), (b, b"B"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    lines = read(a.path("log")).split(b"\n")[:-1]
    assert sorted(lines) == sorted([b"A%04d" % i for i in range(n)] +
                                   [b"B%04d" % i for i in range(n)])
    # each host's own records stay in its order
    assert [x for x in lines if x[:1] == b"A"] == [b"A%04d" % i for i in range(n)]


def host_states(region):
    with daxfs.Region(region, readonly=True) as fs:
        return {h["slot"]: h for h in fs.info()["hosts"]}


def test_kill9_is_a_dead_host_recovered_by_the_other(region_path):
    env.mkfs(region_path, 64 * env.MiB, lease_ms=1000)
    a = hf.Mount(region_path)
    b = hf.Mount(region_path)
    try:
        slots = {h["slot"] for h in host_states(region_path).values() if h["state"] == 1}
        assert len(slots) == 2
        write(a.path("orphan"), b"x" * (1 << 20))
        fd = os.open(a.path("orphan"), os.O_RDONLY)
        os.unlink(a.path("orphan"))             # kept by a's open set only
        write(a.path("kept"), b"written by a")
        a.kill()
        with pytest.raises(OSError) as ei:
            os.stat(a.path("kept"))
        assert ei.value.errno == errno.ENOTCONN
        try:
            os.close(fd)
        except OSError:
            pass
        assert read(b.path("kept")) == b"written by a"
        # b recovers a once a's lease ran out, even with nothing to do
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            alive = [h for h in host_states(region_path).values() if h["state"] == 1]
            if len(alive) == 1:
                break
            time.sleep(0.1)
        assert len(alive) == 1, host_states(region_path)
        assert alive[0]["open_files"] == 0      # the orphan was let go
        write(b.path("after"), b"b goes on")
        assert read(b.path("after")) == b"b goes on"
        # daxfs umount cleans up the dead mount point
        subprocess.run([env.tool("daxfs"), "umount", a.mp], check=True, timeout=60)
        assert hf.mounted(a.mp) is None
        assert b.umount() == 0
    finally:
        a.close()
        b.close()
    code, out = env.fsck(region_path)
    assert code == 0, out


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="known: the kernel's stale alias of a directory "
                   "another mount moved gives ESTALE (docs/fuse.md "
                   "\"Coherence\")")
def test_rename_onto_a_directory_the_other_mount_moved(region):
    """Mount B moves directory a over the empty L/L that mount A has
    looked up; A then renames another directory onto L/L, which is a's
    now and not empty: ENOTEMPTY, as on one host.  FUSE says ESTALE: A's
    dentry cache still holds a under its old name, and the kernel cannot
    move that alias while the rename holds its locks (__d_unalias).  The
    differential test's split mode met it (2026-12-05) once bases reached
    through symlinks took part; strict xfail, so that a fix shows."""
    a = hf.Mount(region, opts=["allow_other", "timeout=0"])
    b = hf.Mount(region, opts=["allow_other", "timeout=0"])
    try:
        os.makedirs(a.path("L", "L"))
        os.makedirs(a.path("a", "inner"))
        os.makedirs(a.path("b", "L", "inner2"))
        os.stat(a.path("L", "L"))
        os.rename(b.path("a"), b.path("L", "L"))
        time.sleep(0.1)         # many times poll_ms
        with pytest.raises(OSError) as e:
            os.rename(a.path("b", "L"), a.path("L", "L"))
        assert e.value.errno == errno.ENOTEMPTY, e.value
        assert os.listdir(a.path("L", "L")) == ["inner"]
    finally:
        a.close()
        b.close()
