"""Zero-copy maps of region files (Region.map_file, docs/python.md
"Zero copy").

The map's buffer is the file's bytes where they lie in the region: numpy
arrays over it share its memory, stores through libdaxfs show without a
read, two hosts in two processes map the same region offsets and see each
other's stores, and a truncate's moved pages are mapped again by the
revalidation pass.
"""

import errno
import os
import struct
import threading
import time

import pytest

from helpers import env, procs
from helpers.map_workers import mapper, read_only_map_kept, rewriter

import daxfs
from daxfs import _map

PAGE = 4096


@pytest.fixture
def fs(region_path):
    daxfs.mkfs(region_path, 64 * env.MiB, lease_ms=400)
    with daxfs.Region(region_path) as r:
        yield r


def test_map_is_the_file_in_place(fs):
    data = os.urandom(5 * PAGE + 123)
    fs.write_file("/w", data)
    with fs.open("/w") as f:
        f.pwrite(b"tail", 8 * PAGE)          # pages 6 and 7: a hole
        phys = {e.logical // PAGE + i: e.physical + i * PAGE
                for e in f.extents() for i in range(e.length // PAGE)}
    whole = fs.read_file("/w")
    with fs.map_file("/w") as m:
        assert m.size == len(whole) == 8 * PAGE + 4
        assert bytes(m.buffer) == whole
        offs = m.region_offsets()
        assert m.zero_copy and len(offs) == 9
        assert offs[6] == offs[7] == 0
        # the pages the extent map names, and the library's page look-up
        assert {i: o for i, o in enumerate(offs) if o} == phys
        assert [m._lookup(pg) for pg in range(9)] == offs
        assert all(o % PAGE == 0 for o in offs)
        assert m.buffer.readonly
        with fs.open("/w") as f:                 # a store, no re-read
            f.pwrite(b"\xee" * 10, PAGE - 5)
        assert bytes(m.buffer[PAGE - 5:PAGE + 5]) == b"\xee" * 10
    assert m.closed
    with pytest.raises(IsADirectoryError):
        fs.map_file("/")
    with fs.map_file("/w") as m2:                  # mapped again after close
        assert bytes(m2.buffer[:PAGE - 5]) == whole[:PAGE - 5]


def test_numpy_reads_in_place(fs):
    np = pytest.importorskip("numpy", reason="numpy is not installed "
                             "(tests/requirements.txt installs it)")
    w = np.random.default_rng(7).standard_normal(100000).astype(np.float32)
    fs.write_file("/weights", w.tobytes())
    m = fs.map_file("/weights")
    a = np.frombuffer(m.buffer, dtype=np.float32)
    assert a.ctypes.data == m.address and not a.flags.writeable
    assert np.array_equal(a, w)
    with fs.open("/weights") as f:
        f.pwrite(np.float32(42.5).tobytes(), 4 * 1234)
    assert a[1234] == 42.5                       # the same memory
    with pytest.raises(BufferError):             # a view is alive
        m.close()
    del a
    m.close()
    assert m.closed


def test_two_hosts_map_the_same_pages(fs, region_path):
    data = os.urandom(3 * PAGE)
    fs.write_file("/shared", data)
    conn, child = procs.CTX.Pipe()
    p = procs.CTX.Process(target=mapper, args=(child, region_path, "/shared"),
                          daemon=True)
    p.start()
    try:
        assert conn.poll(60), "mapper did not start"
        theirs = conn.recv()
        with fs.map_file("/shared") as m:
            mine = m.region_offsets()
            assert mine == theirs and all(mine)
            # our store through libdaxfs shows in their map, and theirs
            # in ours, with no read
            with fs.open("/shared") as f:
                f.pwrite(b"from A", PAGE + 10)
            conn.send(("wait", PAGE + 10, b"from A"))
            assert conn.poll(30) and conn.recv() is True
            conn.send(("store", 2 * PAGE + 1, b"from B"))
            assert conn.poll(30) and conn.recv() == 6
            assert bytes(m.buffer[2 * PAGE + 1:2 * PAGE + 7]) == b"from B"
            assert bytes(m.buffer[:PAGE]) == data[:PAGE]
        conn.send(("exit",))
        assert conn.poll(30)
        conn.recv()
    finally:
        p.join(10)
        procs.kill(p)


def test_pass_maps_moved_pages_again(fs, region_path):
    fs.write_file("/w", b"a" * (3 * PAGE))
    with fs.map_file("/w") as m:
        before = m.region_offsets()
        with daxfs.Region(region_path) as other:   # another host rewrites
            other.truncate("/w", 0)
            other.write_file("/w", b"b" * (2 * PAGE))
        fs.map_pass()
        after = m.region_offsets()
        assert after[2] == 0 and after[:2] != before[:2] and all(after[:2])
        assert bytes(m.buffer) == b"b" * (2 * PAGE) + bytes(PAGE)
        # the pass thread (every lease/4 = 100 ms) does the same alone
        with daxfs.Region(region_path) as other:
            other.truncate("/w", 0)
            other.write_file("/w", b"c" * (3 * PAGE))
        deadline = time.monotonic() + 10
        while bytes(m.buffer) != b"c" * (3 * PAGE):
            assert time.monotonic() < deadline, m.region_offsets()
            time.sleep(0.01)
        assert all(m.region_offsets())


def test_forked_child_maps_again(fs):
    """A forked child (a new host) maps with its own passes while the
    parent's map stays the parent's."""
    data = os.urandom(2 * PAGE + 7)
    fs.write_file("/w", data)
    with fs.map_file("/w") as m:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                with fs.map_file("/w") as m2:
                    fs.map_pass()
                    code = 0 if bytes(m2.buffer) == data else 3
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        fs.map_pass()
        assert bytes(m.buffer) == data


def _pass_threads():
    return [t for t in threading.enumerate() if t.name == "daxfs-map-pass"]


def test_pass_thread_ends_with_the_last_map(fs):
    """While nothing is mapped the Region has no pass thread to wake
    every 20 ms (it had one until close before 2026-12-02); a new map
    starts one again, and a second map shares it."""
    fs.write_file("/w", b"a" * PAGE)
    m = fs.map_file("/w")
    m2 = fs.map_file("/w")
    assert len(_pass_threads()) == 1
    m.close()
    time.sleep(0.1)
    assert len(_pass_threads()) == 1        # m2 still mapped
    m2.close()
    deadline = time.monotonic() + 10
    while _pass_threads():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with fs.map_file("/w") as m:
        assert bytes(m.buffer) == b"a" * PAGE
        assert len(_pass_threads()) == 1


# ---- maps from a host-less (read-only) Region ----
#
# A read-only Region has no host slot: it cannot announce a pass epoch,
# so nothing holds a page it maps back from reuse for another file.  Its
# maps copy every page (as on devdax), and its passes copy again while the
# change counter moved or still carries a rewrite's mark, which nobody
# folds for it (docs/python.md "Zero copy").

def test_read_only_map_outlives_its_pass_thread(fs, region_path):
    """The pass thread looks for an asked-for pass every 20 ms; on a
    read-only Region that look read the host table at slot DAXFS_NO_HOST
    and killed the process (SIGSEGV) once a map lived 20 ms."""
    data = os.urandom(2 * PAGE + 5)
    fs.write_file("/w", data)
    [(got, zero_copy)] = procs.run(read_only_map_kept,
                                   [(region_path, "/w", 0.5)], timeout=60)
    assert got == data and not zero_copy


def test_read_only_map_never_shows_another_files_bytes(fs, region_path):
    """The file is unlinked and the whole pool written over by another
    file: the read-only map still shows the bytes it mapped, never what
    reused their pages (before the copy, the metadata and data of others
    showed through)."""
    data = b"f" * (4 * PAGE)
    fs.write_file("/f", data)
    with daxfs.Region(region_path, readonly=True) as ro, \
            ro.map_file("/f") as m:
        assert not m.zero_copy
        assert m.region_offsets() == [-1] * 4
        fs.unlink("/f")
        fs.reclaim()
        with fs.open("/g", create=True) as g:
            with pytest.raises(OSError) as e:
                while True:
                    g.append(b"g" * (64 * 1024))
            assert e.value.errno == errno.ENOSPC
        assert fs.statfs()["free_bytes"] < 64 * 1024
        assert bytes(m.buffer) == data
        ro.map_pass()           # the file is gone: the pass keeps the copy
        assert bytes(m.buffer) == data


def watch_rewrites(region_path, seconds):
    """A read-only map of a file another host keeps rewriting (its first
    page holds the count k of the last write): after each pass, the map
    must show at least the k whose write returned before the pass began.
    Returns (passes, stale passes, passes that found the counter's word
    unchanged and marked: the case a rule ignoring the mark gets wrong)."""
    done = procs.CTX.Value("q", 0, lock=False)
    stop = procs.CTX.Value("i", 0, lock=False)
    writer = procs.CTX.Process(target=rewriter,
                               args=(region_path, "/w", done, stop),
                               daemon=True)
    writer.start()
    passes = stale = unchanged_marked = 0
    try:
        with daxfs.Region(region_path, readonly=True) as ro, \
                ro.map_file("/w") as m:
            ino, last = m.ino, None
            deadline = time.monotonic() + 60
            while not done.value:
                assert time.monotonic() < deadline, "the writer never wrote"
                time.sleep(0.001)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                k = done.value
                word = ro.fstat(ino).st_change
                unchanged_marked += word == last and bool(
                    word & _map.CHANGE_WRITTEN)
                last = word
                ro.map_pass()
                passes += 1
                stale += struct.unpack("<Q", bytes(m.buffer[:8]))[0] < k
    finally:
        stop.value = 1
        writer.join(30)
        procs.kill(writer)
    assert writer.exitcode == 0
    return passes, stale, unchanged_marked


def test_read_only_map_sees_rewrites_that_only_mark(fs, region_path):
    """A rewrite within a tick of the last stamp only marks the change
    counter, and a read-only host cannot fold the mark: while the word
    stays marked its copies are taken again at every pass."""
    fs.write_file("/w", bytes(PAGE))
    passes, stale, unchanged_marked = watch_rewrites(region_path, 1.5)
    assert passes > 100 and unchanged_marked > 0, (passes, unchanged_marked)
    assert stale == 0, "%d of %d passes kept older bytes" % (stale, passes)


def test_read_only_map_rule_without_the_mark_is_caught(fs, region_path,
                                                         monkeypatch):
    """The same race with the rule that ignores the mark (the word alone
    decides): some pass keeps bytes older than a finished rewrite, so the
    test above can fail."""
    monkeypatch.setattr(_map, "_bytes_moved", lambda seen, now: seen != now)
    fs.write_file("/w", bytes(PAGE))
    passes, stale, unchanged_marked = watch_rewrites(region_path, 1.5)
    assert unchanged_marked > 0, (passes, unchanged_marked)
    assert stale > 0, (passes, unchanged_marked)


def test_page_map_refuses_pool_pages(fs, region_path):
    """Region.page_map gives a view only of what stays put (a pinned cache
    slot, base data): a page in the pool raises EAGAIN.  Before, it gave a
    view of the pool page that nothing held, so another host's truncate
    let the pool reuse it under the view for another file's bytes."""
    fs.write_file("/w", b"w" * (2 * PAGE))
    ino = fs.stat("/w").st_ino
    with pytest.raises(OSError) as e:
        fs.page_map(ino, 1)
    assert e.value.errno == errno.EAGAIN
    view, ref = fs.page_map(ino, 7)         # past EOF: a hole, no view
    assert view is None
    fs.page_release(ref)
    with fs.map_file("/w") as m:            # the way to map such pages
        assert bytes(m.buffer) == b"w" * (2 * PAGE)
