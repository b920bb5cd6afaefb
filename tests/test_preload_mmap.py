"""Zero-copy MAP_SHARED mappings of region files under `daxfs run`
(lib/preload/map.c, docs/preload.md "Shared mappings"): what a program
sees matches tmpfs, SQLite's WAL mode (which maps its -shm file shared)
works across processes, and a mapping never shows another file's bytes
after its file is truncated and the space reused."""

import errno
import os
import subprocess
import sys
import time

import pytest

from helpers import env
from helpers import preload as pl


@pytest.fixture(autouse=True)
def _built():
    for p in (pl.DAXFS, pl.PRELOAD_LIB, os.path.join(pl.PROGS, "pl_mmap")):
        if not os.path.exists(p):
            pytest.fail("%s is missing: run make first" % p)


def _fsck_clean(region_path):
    fsck = subprocess.run([env.tool("fsck.daxfs"), "-n", region_path],
                          capture_output=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def _mapper_beside(region_path, mapper, other):
    """Runs the mapper script and, beside it as another host, the other
    script; both must succeed.  The mapper's stdout."""
    mp = pl.popen(region_path, [sys.executable, "-c", mapper],
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ot = pl.run(region_path, [sys.executable, "-c", other], timeout=120)
    out, err = mp.communicate(timeout=120)
    assert ot.returncode == 0, ot.stderr
    assert mp.returncode == 0, err.decode(errors="replace")
    return out


def test_shared_mmap_matches_tmpfs(region):
    """Stores through a shared mapping are the file's bytes, writes show
    in the mapping, a second mapping and a fork child share the pages,
    holes map as zeros, msync/mprotect/munmap/MAP_PRIVATE as on tmpfs."""
    out = pl.compare(region, 'mkdir "$D" && exec %s "$D"'
                     % os.path.join(pl.PROGS, "pl_mmap"), "mmap")
    assert b"pread after store: mapped store" in out
    assert b"child store: from child" in out
    assert b"pread hole store: in hole" in out


def _sqlite_wal_script(rounds):
    return r'''
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)
assert db.execute("pragma journal_mode=wal").fetchone()[0] == "wal"
db.execute("create table if not exists t(w integer, i integer, b text)")
for i in range(%d):
    db.execute("begin immediate")
    db.execute("insert into t values(?, ?, ?)", (int(sys.argv[2]), i,
               "v" * (i %% 300)))
    db.execute("commit")
print("done")
''' % rounds


def test_sqlite_wal_two_hosts(region):
    """Two `daxfs run` processes (two hosts) write one WAL database at
    once, a third reads it meanwhile: every insert is there and
    integrity_check passes (the -shm index is a shared mapping)."""
    rounds = 400
    setup = pl.run(region, [sys.executable, "-c", "import os; os.mkdir("
                            "'/daxfs/wal')"])
    assert setup.returncode == 0, setup.stderr
    code = _sqlite_wal_script(rounds)
    init = pl.run(region, [sys.executable, "-c", code, "/daxfs/wal/db", "9"])
    assert init.returncode == 0, init.stderr
    reader = r'''
import sqlite3, sys, time
db = sqlite3.connect("/daxfs/wal/db", timeout=60)
last = 0
for _ in range(200):
    n = db.execute("select count(*) from t").fetchone()[0]
    assert n >= last, (n, last)
    last = n
    time.sleep(0.005)
print("reader ok")
'''
    ps = [pl.popen(region, [sys.executable, "-c", code, "/daxfs/wal/db",
                            str(w)], stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE) for w in (1, 2)]
    ps.append(pl.popen(region, [sys.executable, "-c", reader],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for p in ps:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode(errors="replace")
    check = r'''
import sqlite3
db = sqlite3.connect("/daxfs/wal/db")
print(db.execute("pragma integrity_check").fetchone()[0])
print(db.execute("select w, count(*), count(distinct i) from t "
                 "group by w order by w").fetchall())
'''
    res = pl.run(region, [sys.executable, "-c", check])
    assert res.returncode == 0, res.stderr
    assert res.stdout.decode() == "ok\n%r\n" % [
        (1, rounds, rounds), (2, rounds, rounds), (9, rounds, rounds)]


def test_mapping_never_shows_reused_pages(region_path, need_fsck):
    """A process maps a file; another host truncates it to 0 and then
    fills the pool with its own file again and again.  The mapping shows
    the old bytes or zeros, never the other file's; once the mapping
    host's pass has moved off the pages, they are reused (the filler gets
    them) and the mapping shows zeros."""
    env.mkfs(region_path, 32 * env.MiB, lease_ms=400)
    mapper = r'''
import mmap, os, sys, time
fd = os.open("/daxfs/m", os.O_CREAT | os.O_RDWR)
os.write(fd, b"A" * (64 * 4096))
m = mmap.mmap(fd, 64 * 4096)
open("/daxfs/ready", "w").close()
seen = set()
deadline = time.monotonic() + 60
while not os.path.exists("/daxfs/filled") and time.monotonic() < deadline:
    seen |= set(m[:])
# a pass shows the cut as zeros (waited for, not timed)
now = set(m[:])
while now != {0} and time.monotonic() < deadline:
    seen |= now
    time.sleep(0.05)
    now = set(m[:])
seen |= now
print(sorted(seen), now == {0})
'''
    filler = r'''
import os, time
while not os.path.exists("/daxfs/ready"):
    time.sleep(0.01)
fd = os.open("/daxfs/m", os.O_RDWR)
os.ftruncate(fd, 0)
os.close(fd)
chunk = b"B" * (1 << 20)
rounds = 0
# fill the pool, free it, fill again: freed pages come back once the
# mapping host let them go
for rounds in range(8):
    fd = os.open("/daxfs/fill", os.O_CREAT | os.O_WRONLY | os.O_TRUNC)
    total = 0
    try:
        while True:
            total += os.write(fd, chunk)
    except OSError:
        pass
    os.close(fd)
    os.unlink("/daxfs/fill")
    time.sleep(0.2)
open("/daxfs/filled", "w").close()
print("filled")
'''
    out = _mapper_beside(region_path, mapper, filler)
    assert out == b"[0, 65] True\n" or out == b"[0] True\n", out
    _fsck_clean(region_path)


def test_fork_child_mapping_keeps_file(region_path):
    """A fork child keeps its inherited mapping's file alive after the
    parent (another host) ended and a third host unlinked the file: the
    child still reads the file's bytes there, passes included."""
    env.mkfs(region_path, 32 * env.MiB, lease_ms=400)
    code = r'''
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.open("/daxfs/k", os.O_CREAT | os.O_RDWR)
os.write(fd, b"K" * 8192)
m = libc.mmap(None, 8192, 3, 1, fd, 0)     # RW, MAP_SHARED
assert m not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
os.close(fd)               # only the mapping holds the file now
r, w = os.pipe()
if os.fork() == 0:
    os.close(w)
    os.read(r, 1)          # the parent has ended
    while os.path.exists("/daxfs/k"):
        time.sleep(0.01)   # the third host unlinked it
    time.sleep(1.0)        # several passes of ours (lease 400 ms)
    data = ctypes.string_at(m, 8192)
    sys.stdout.write("child %s\n" % (set(data) == {ord("K")}))
    sys.stdout.flush()
    os._exit(0)
'''
    p = pl.popen(region_path, [sys.executable, "-c", code],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # the parent exits at once, closing the pipe's write end; the child
    # keeps the pipe's read end and our stdout
    rm = pl.run(region_path, [sys.executable, "-c", r'''
import os, time
while not os.path.exists("/daxfs/k"):
    time.sleep(0.01)
time.sleep(0.5)
os.unlink("/daxfs/k")
'''])
    assert rm.returncode == 0, rm.stderr
    out, err = p.communicate(timeout=60)
    assert out == b"child True\n", (out, err)


def test_unmapped_process_holds_no_freed_space(region_path):
    """A process that mapped a file and unmapped it again holds nothing
    back: space another host frees is reusable at once, not only after
    that process's next pass (a lease tick, here 15 s).  Before
    2026-12-01 its announcement stayed until that pass, and fsx under
    `daxfs run` (map, unmap, punch, write, over and over) ran a 512 MiB
    region out of space for a 1 MiB file."""
    env.mkfs(region_path, 32 * env.MiB, lease_ms=60000)
    mapper = r'''
import mmap, os, time
fd = os.open("/daxfs/m", os.O_CREAT | os.O_RDWR)
os.write(fd, b"A" * 4096)
m = mmap.mmap(fd, 4096)
assert m[:1] == b"A"
m.close()
open("/daxfs/ready", "w").close()
deadline = time.monotonic() + 60
while not os.path.exists("/daxfs/done") and time.monotonic() < deadline:
    time.sleep(0.01)
'''
    mp = pl.popen(region_path, [sys.executable, "-c", mapper],
                  stderr=subprocess.PIPE)
    try:
        with env.daxfs.Region(region_path) as r:
            while not r.exists("/ready"):
                assert mp.poll() is None, mp.stderr.read()
                time.sleep(0.01)
            free = r.statfs()["free_bytes"]
            r.write_file("/x", b"x" * (8 * env.MiB))
            r.unlink("/x")
            for _ in range(4):
                r.reclaim()
            after = r.statfs()["free_bytes"]
            r.write_file("/done", b"")
        assert after >= free - env.MiB, (free, after)
    finally:
        out, err = mp.communicate(timeout=120)
    assert mp.returncode == 0, err


def test_idle_pass_thread_sleeps_and_wakes_for_asks(region_path):
    """The preload's pass thread does not wake while its process maps
    nothing (it woke every 20 ms before 2026-12-02), and a later mapping
    wakes it: a host beside it that refills a full pool, whose freed
    space that mapping holds back, is answered at once, not at the
    mapper's tick (lease 60 s: 15 s)."""
    env.mkfs(region_path, 32 * env.MiB, lease_ms=60000)
    mapper = r'''
import mmap, os, time
def pass_wakeups():
    for t in os.listdir("/proc/self/task"):
        with open("/proc/self/task/%s/comm" % t) as f:
            if f.read().strip() != "daxfs-pass":
                continue
        with open("/proc/self/task/%s/status" % t) as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches"):
                    return int(line.split()[1])
    raise SystemExit("no daxfs-pass thread")
fd = os.open("/daxfs/m", os.O_CREAT | os.O_RDWR)
os.write(fd, b"A" * 4096)
m = mmap.mmap(fd, 4096)
m.close()
time.sleep(0.2)
before = pass_wakeups()
time.sleep(1.0)
print("idle wakeups", pass_wakeups() - before, flush=True)
m = mmap.mmap(fd, 4096)          # a mapping host again
assert m[:1] == b"A"
open("/daxfs/ready", "w").close()
deadline = time.monotonic() + 60
while not os.path.exists("/daxfs/done") and time.monotonic() < deadline:
    time.sleep(0.01)
assert m[:1] == b"A"
'''
    mp = pl.popen(region_path, [sys.executable, "-c", mapper],
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with env.daxfs.Region(region_path) as r:
            while not r.exists("/ready"):
                assert mp.poll() is None, mp.stderr.read()
                time.sleep(0.01)
            f = r.open("/fill", "w")
            n = 0
            try:
                while True:
                    f.write(b"F" * env.MiB)
                    n += 1
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
            f.close()
            r.unlink("/fill")
            t = time.monotonic()
            r.write_file("/again", b"A" * ((n - 1) * env.MiB))
            took = time.monotonic() - t
            r.write_file("/done", b"")
    finally:
        out, err = mp.communicate(timeout=120)
    assert mp.returncode == 0, err
    wakeups = int(out.split()[-1])
    assert wakeups <= 2, out
    # the tick would answer after 15 s; an ask within 20 ms
    assert took < 10, took
    _fsck_clean(region_path)


def test_exit_right_after_mapping(region_path):
    """A program that maps a region file and ends at once exits cleanly,
    100 times in a row.  The preload's pass thread used to read the
    region (the lease, through daxfs_info) before its first pass, outside
    what exit waits for: it read the region after exit had unmapped it
    and the program died of SIGSEGV, about 1 run in 10 here."""
    env.mkfs(region_path, 512 * env.MiB)     # a longer look: more buckets
    prog = os.path.join(pl.PROGS, "pl_mmap")
    script = 'i=0; while [ $i -lt 100 ]; do %s --map-exit /daxfs/m%s || ' \
             'exit $?; i=$((i+1)); done' % (prog, "$i")
    res = pl.run(region_path, ["sh", "-c", script], timeout=300)
    assert res.returncode == 0, (res.returncode, res.stderr)


def test_mapping_host_maps_sparse_file_on_full_pool(region_path,
                                                     need_fsck):
    """A process that maps a file, fills the pool, deletes what it wrote
    and then maps a sparse file gets its mapping: the holes need the space
    it freed, which only its own pass lets go.  Before 2026-12-01 the
    mmap waited for that space holding the mapping lock, so the pass could
    not run, and the mmap failed with ENOMEM after the whole wait (fsstress
    under `daxfs run`: every failing call waited 15 s)."""
    env.mkfs(region_path, 32 * env.MiB, lease_ms=4000)
    code = r'''
import errno, mmap, os
fd = os.open("/daxfs/m", os.O_CREAT | os.O_RDWR)
os.write(fd, b"A" * 4096)
m = mmap.mmap(fd, 4096)          # a mapping host from here on
f = os.open("/daxfs/fill", os.O_CREAT | os.O_WRONLY)
try:
    while True:
        os.write(f, b"F" * (1 << 20))
except OSError as e:
    assert e.errno == errno.ENOSPC, e
os.close(f)
os.unlink("/daxfs/fill")
s = os.open("/daxfs/sparse", os.O_CREAT | os.O_RDWR)
os.ftruncate(s, 2 << 20)         # all holes: the mmap fills them
sm = mmap.mmap(s, 2 << 20)
sm[:5] = b"hello"
sm[-5:] = b"world"
print(os.pread(s, 5, 0), os.pread(s, 5, (2 << 20) - 5), m[:1])
'''
    res = pl.run(region_path, [sys.executable, "-c", code], timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout == b"b'hello' b'world' b'A'\n", res.stdout
    _fsck_clean(region_path)


def test_hole_on_full_pool_never_loses_stores(region_path, need_fsck):
    """A process maps a file and fills the pool itself; another host cuts
    the mapped pages (truncate down and up again: holes below EOF).  The
    mapping host's pass must fill the holes from a full pool: where it
    cannot, it maps zeros read-only, so that a store faults (Linux raises
    SIGBUS) rather than landing in memory that is no file's, and it still
    announces, so the cut pages are freed and a later pass fills the
    holes.  Every store either faults or reaches the file, and one does
    in the end.  Before 2026-12-01 the pass waited for space on each
    hole, holding its lock and its old announcement (the very thing that
    held the cut pages back), then mapped a writable anonymous page:
    stores were lost."""
    env.mkfs(region_path, 32 * env.MiB, lease_ms=400)
    mapper = r"""
import ctypes, errno, mmap, os, time
region = REGION
fd = os.open("/daxfs/m", os.O_CREAT | os.O_RDWR)
os.write(fd, b"A" * (16 * 4096))
m = mmap.mmap(fd, 16 * 4096)
f = os.open("/daxfs/fill", os.O_CREAT | os.O_WRONLY)
# twice: what the first fill's failed calls left in limbo is freed in
# between (passes every 100 ms) and taken by the second
for size in (1 << 20, 4096, 256, 0, 1 << 20, 4096, 256):
    if not size:
        time.sleep(0.5)
        continue
    try:
        while True:
            os.write(f, b"F" * size)
    except OSError as e:
        assert e.errno == errno.ENOSPC, e
open("/daxfs/ready", "w").close()
deadline = time.monotonic() + 60
base = ctypes.addressof(ctypes.c_char.from_buffer(m))
def views():
    # what backs each page of the mapping: the region file (a store
    # reaches the file), a read-only zero page (a store faults), or a
    # writable page that is no file's (a store is lost)
    lines = [l.split() for l in open("/proc/self/maps")]
    out = set()
    for a in range(base, base + 16 * 4096, 4096):
        for f in lines:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            if lo <= a < hi:
                if "w" not in f[1]:
                    out.add("fault")
                elif len(f) > 5 and f[5] == region:
                    out.add("file")
                else:
                    out.add("lost")
    return out
# a pass moves off the cut pages (zeros), then fills the holes (the
# file's pages again); every view on the way is recorded
seen = set()
zeros = False
while time.monotonic() < deadline:
    zeros = zeros or set(m[:]) == {0}
    v = views()
    seen |= v - {"file"}
    if zeros and v == {"file"}:
        seen |= v
        break
    time.sleep(0.001)
m[4096:4101] = b"store"
print(sorted(seen - {"fault"}), os.pread(fd, 5, 4096))
"""
    mapper = mapper.replace("REGION", repr(os.path.realpath(region_path)))
    cutter = r"""
import os, time
deadline = time.monotonic() + 60
while not os.path.exists("/daxfs/ready") and time.monotonic() < deadline:
    time.sleep(0.01)
fd = os.open("/daxfs/m", os.O_RDWR)
os.ftruncate(fd, 0)
os.ftruncate(fd, 16 * 4096)
"""
    out = _mapper_beside(region_path, mapper, cutter)
    assert out == b"['file'] b'store'\n", out
    _fsck_clean(region_path)


def test_deleted_open_file_maps_and_msync_moves_times(region):
    """A file whose name is gone while a descriptor holds it maps (the
    idiom of shared buffers: create, unlink, mmap), and msync after a
    store through a shared mapping moves mtime and ctime, as on tmpfs.
    Found by the differential test's call families (2026-12-05): the
    mapping said ENOENT, and the times never moved."""
    out = pl.compare(region, r'''"$PY" - <<'EOF'
import mmap, os
d = os.environ["D"]
os.mkdir(d)
p = d + "/f"
fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
os.write(fd, b"x" * 8192)
old = 10 ** 18
os.utime(fd, ns=(old, old))
os.unlink(p)
m = mmap.mmap(fd, 8192)
m[100:105] = b"hello"
m.flush()
st = os.fstat(fd)
print("nlink", st.st_nlink, "mtime moved", st.st_mtime_ns != old,
      "ctime moved", st.st_ctime_ns != old)
os.close(fd)
print("mapped after close", m[100:105], m[8000:8003])
m.close()
print("listing", os.listdir(d))
EOF''', "mapdel")
    assert b"nlink 0 mtime moved True ctime moved True" in out
    assert b"mapped after close b'hello' b'xxx'" in out
