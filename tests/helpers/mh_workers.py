"""Worker functions for tests/test_multihost.py.

Each runs in its own spawned process, opens its own daxfs.Region (so it
is its own host in the region's host table) and is called as
func(idx, barrier, *args) by helpers.procs.run().
"""

import errno
import random
import time

from helpers import content, env

daxfs = env.daxfs

BARRIER_S = 60


def wait(barrier):
    if barrier is not None:
        barrier.wait(BARRIER_S)


def listing_chunked(r, path, chunk):
    """Names of path via readdir_chunk, checking chunk-level invariants:
    no name twice, positions never go backwards, EOF reached."""
    names = []
    seen = set()
    pos, last = 0, -1
    for _ in range(1 << 20):
        entries, nxt = r.readdir_chunk(path, pos, chunk)
        assert len(entries) <= chunk, "readdir_chunk returned %d > %d" % (len(entries), chunk)
        for name, _ino, _dtype, epos in entries:
            if name in (".", ".."):
                continue
            assert name not in seen, "readdir of %s returned %r twice" % (path, name)
            assert epos >= last, "readdir of %s: position %d after %d" % (path, epos, last)
            last = epos
            seen.add(name)
            names.append(name)
        if nxt is None:
            return names
        assert entries, "readdir_chunk(%s, %d) returned no entry and no EOF" % (path, pos)
        assert nxt > pos, "readdir_chunk(%s): next position %d <= %d" % (path, nxt, pos)
        pos = nxt
    raise AssertionError("readdir of %s never reached EOF" % path)


def expect_errno(e, allowed, what):
    assert e.errno in allowed, "%s: unexpected %s" % (what, errno.errorcode.get(e.errno, e.errno))


# ---- (a) distinct creates in one directory

def distinct_creates(idx, barrier, path, nprocs, n):
    with daxfs.Region(path) as r:
        wait(barrier)
        t0 = time.monotonic()
        for j in range(n):
            r.create("/d/p%d-%d" % (idx, j))
        elapsed = time.monotonic() - t0
        wait(barrier)  # everybody has finished creating
        expected = {"p%d-%d" % (i, j) for i in range(nprocs) for j in range(n)}
        names = r.listdir("/d")
        assert len(names) == len(set(names)), "listdir has %d duplicates" % (
            len(names) - len(set(names)))
        assert set(names) == expected, "listdir: %d missing, %d extra" % (
            len(expected - set(names)), len(set(names) - expected))
        chunked = listing_chunked(r, "/d", 37 + idx)
        assert set(chunked) == expected and len(chunked) == len(expected)
        other = (idx + 1) % nprocs
        rng = random.Random(idx)
        for j in rng.sample(range(n), min(n, 50)):
            s = r.stat("/d/p%d-%d" % (other, j))
            assert s.st_nlink == 1 and s.st_size == 0
        return elapsed


# ---- (b) racing creates of the same names

def racing_creates(idx, barrier, path, n, kind, rounds):
    """Round k races on /race<k>/: even hosts go forward, odd hosts
    backward (so they meet), host 3 in a shuffled order."""
    wins = {}
    with daxfs.Region(path) as r:
        for rnd in range(rounds):
            order = list(range(n))
            if idx % 2:
                order.reverse()
            if idx == 3:
                random.Random(rnd).shuffle(order)
            wait(barrier)
            for j in order:
                name = "/race%d/%s%d" % (rnd, kind, j)
                try:
                    if kind == "f":
                        ino = r.create(name)
                    else:
                        r.mkdir(name)
                        ino = None
                except OSError as e:
                    expect_errno(e, {errno.EEXIST}, "create " + name)
                    continue
                wins[name] = ino
        for name in wins:
            if kind == "d":
                wins[name] = r.stat(name).st_ino
    return wins


# ---- (c) random contents written by some hosts, checked by the others

def plan_files(seed, idx, nfiles):
    rng = random.Random("%d/%d" % (seed, idx))
    plan = []
    for k in range(nfiles):
        size = rng.choice([0, 1, 4095, 4096, 4097, 8192, rng.randrange(300 << 10),
                           rng.randrange(40 << 10)])
        plan.append(("/data/p%d-f%d" % (idx, k), size, rng.randrange(3)))
    return plan


def write_and_verify(idx, barrier, path, nprocs, nfiles, seed):
    digests = {}
    with daxfs.Region(path) as r:
        wait(barrier)
        rng = random.Random(idx)
        for name, size, how in plan_files(seed, idx, nfiles):
            data = content.make(name, size)
            if how == 0:
                r.write_file(name, data)
            else:
                f = r.open(name, create=True)
                try:
                    # out-of-order chunks: holes exist until the last one lands
                    chunks = [(o, data[o:o + 12345]) for o in range(0, size, 12345)]
                    if how == 2:
                        rng.shuffle(chunks)
                    for off, buf in chunks:
                        assert f.pwrite(buf, off) == len(buf)
                finally:
                    f.close()
            digests[name] = content.sha256(data)
        wait(barrier)
        for other in range(nprocs):
            if other == idx:
                continue
            for name, size, _how in plan_files(seed, other, nfiles):
                got = r.read_file(name)
                assert len(got) == size, "%s: %d bytes, expected %d" % (name, len(got), size)
                exp = content.make(name, size)
                assert content.sha256(got) == content.sha256(exp), \
                    "%s: sha256 differs from the writer's" % name
                assert r.stat(name).st_size == size
    return digests


# ---- (d) concurrent appends of fixed-size tagged records

def appender(idx, barrier, path, nrec, sizes):
    offs = {size: [] for size in sizes}
    with daxfs.Region(path) as r:
        files = {size: r.open("/log%d" % size) for size in sizes}
        try:
            wait(barrier)
            for seq in range(nrec):
                for size, f in files.items():
                    off = f.append(content.record(idx, seq, size))
                    assert off % size == 0, "append of a %d-byte record went to %d" % (size, off)
                    offs[size].append(off)
        finally:
            for f in files.values():
                f.close()
    return offs


# ---- (e) rename storm

def storm_layout(ndirs, nfiles, nsub, nsubfiles):
    """Initial layout: files f<k> and subdirs s<j> spread over /d<i>;
    each s<j> holds files s<j>-g<m> that never move."""
    files = {"f%d" % k: "/d%d" % (k % ndirs) for k in range(nfiles)}
    subs = {"s%d" % j: "/d%d" % (j % ndirs) for j in range(nsub)}
    subfiles = {"s%d" % j: ["s%d-g%d" % (j, m) for m in range(nsubfiles)] for j in range(nsub)}
    return files, subs, subfiles


def rename_storm(idx, barrier, path, ndirs, nfiles, nsub, iters, seed):
    rng = random.Random("%d/%d" % (seed, idx))
    stats = {"ok": 0, "ENOENT": 0, "EEXIST": 0, "EINVAL": 0, "ENOTEMPTY": 0}
    noreplace = getattr(daxfs, "RENAME_NOREPLACE", 1)
    exchange = getattr(daxfs, "RENAME_EXCHANGE", 2)

    def topdir():
        return "/d%d" % rng.randrange(ndirs)

    def locate(r, name, nested):
        """Where name is now (probing; it may move before we use it)."""
        tops = ["/d%d" % i for i in range(ndirs)]
        rng.shuffle(tops)
        for t in tops:
            if r.exists("%s/%s" % (t, name)):
                return "%s/%s" % (t, name)
        if nested:
            for t in tops:
                for i in range(nsub):
                    p = "%s/s%d/%s" % (t, i, name)
                    if r.exists(p):
                        return p
        return "%s/%s" % (topdir(), name)  # not found: a guess (ENOENT)

    def subpath(r=None):
        j = rng.randrange(nsub)
        if r is not None and rng.random() < 0.8:
            return locate(r, "s%d" % j, True), j
        if rng.random() < 0.7:
            return "%s/s%d" % (topdir(), j), j
        return "%s/s%d/s%d" % (topdir(), rng.randrange(nsub), j), j

    with daxfs.Region(path) as r:
        wait(barrier)
        for _ in range(iters):
            p = rng.random()
            flags = 0
            if p < 0.45:  # move a file between top dirs
                k = rng.randrange(nfiles)
                src, dst = locate(r, "f%d" % k, False), "%s/f%d" % (topdir(), k)
                flags = rng.choice([0, noreplace])
            elif p < 0.6:  # swap two files' inodes
                src = locate(r, "f%d" % rng.randrange(nfiles), False)
                dst = locate(r, "f%d" % rng.randrange(nfiles), False)
                flags = exchange
            elif p < 0.9:  # move a subdir, maybe into another
                src, j = subpath(r)
                if rng.random() < 0.6:
                    dst = "%s/s%d" % (topdir(), j)
                else:
                    dst = "%s/s%d/s%d" % (topdir(), rng.randrange(nsub), j)
                flags = rng.choice([0, noreplace])
            elif p < 0.95:  # into its own subtree: EINVAL
                # ... as far as paths go: src and dst's parent are looked
                # up one after the other (as in Linux, before the rename
                # lock), so an EXCHANGE in between can make this a real
                # move into another subdir.  Keeping the name makes that
                # move like the ones above; a cycle would still lose names.
                src, j = subpath(r)
                dst = "%s/s%d/s%d" % (src, rng.randrange(nsub), j) \
                    if rng.random() < 0.5 else "%s/s%d" % (src, j)
            else:  # swap two subdirs
                src, _ = subpath(r)
                dst, _ = subpath(r)
                flags = exchange
            try:
                r.rename(src, dst, flags)
                stats["ok"] += 1
            except OSError as e:
                name = errno.errorcode.get(e.errno, str(e.errno))
                assert name in stats, "rename(%s, %s, %d): %s" % (src, dst, flags, name)
                if name == "EEXIST":
                    assert flags == noreplace, "rename(%s, %s, %d): EEXIST" % (src, dst, flags)
                stats[name] += 1
    return stats


# ---- (f) unlink/create churn with space reuse, plus a hazard reader

def churner(idx, barrier, path, rounds, per_round, max_size, seed):
    rng = random.Random("%d/%d" % (seed, idx))
    peak = 0
    written = 0
    with daxfs.Region(path) as r:
        wait(barrier)
        for rnd in range(rounds):
            names = []
            for k in range(per_round):
                tag = "c%d-r%d-%d" % (idx, rnd, k)
                data = content.make(tag, rng.randrange(64, max_size))
                tmp = "/c%d/tmp-%s" % (idx, tag)
                r.write_file(tmp, data)
                r.rename(tmp, "/c%d/%s" % (idx, tag))
                names.append(tag)
                written += len(data)
            for tag in names:
                content.check(r.read_file("/c%d/%s" % (idx, tag)), tag)
            for tag in names:
                r.unlink("/c%d/%s" % (idx, tag))
            r.reclaim()
            peak = max(peak, r.statfs()["used_bytes"])
        assert r.listdir("/c%d" % idx) == []
    return peak, written


def hazard_reader(idx, barrier, path, ndirs, done):
    """Reads files other hosts are deleting and re-creating: every read
    must give a file's exact bytes or fail; never another file's pages."""
    rng = random.Random(idx)
    reads = misses = 0
    with daxfs.Region(path) as r:
        wait(barrier)
        while done.value < ndirs:  # one churner per directory
            d = "/c%d" % rng.randrange(ndirs)
            names = [n for n in r.listdir(d) if not n.startswith("tmp-")]
            for name in names[:4]:
                try:
                    data = r.read_file("%s/%s" % (d, name))
                except OSError as e:
                    expect_errno(e, {errno.ENOENT, errno.ESTALE}, "read " + name)
                    misses += 1
                    continue
                content.check(data, name)
                reads += 1
    return reads, misses


# ---- (g) readdir stability under concurrent change

def readdir_lister(idx, barrier, path, nkeep, passes, chunk, stop):
    keep = {"keep-%d" % i for i in range(nkeep)}
    tmp_seen = 0
    try:
        with daxfs.Region(path) as r:
            wait(barrier)
            for p in range(passes):
                names = listing_chunked(r, "/big", chunk)
                got = set(names)
                missing = keep - got
                assert not missing, "pass %d: %d stable names missing, e.g. %s" % (
                    p, len(missing), sorted(missing)[:5])
                other = got - keep
                assert all(n.startswith("tmp-") for n in other), sorted(other)[:5]
                tmp_seen += len(other)
    finally:
        stop.set()
    return tmp_seen


def readdir_churner(idx, barrier, path, stop, seed):
    rng = random.Random("%d/%d" % (seed, idx))
    live = []
    ops = 0
    k = 0
    with daxfs.Region(path) as r:
        wait(barrier)
        while not stop.is_set() or ops < 50:
            if len(live) < 100 or rng.random() < 0.5:
                name = "/big/tmp-%d-%d" % (idx, k)
                k += 1
                r.create(name)
                live.append(name)
            else:
                name = live.pop(rng.randrange(len(live)))
                r.unlink(name)
            ops += 1
    return ops


# ---- (h) tiny overlay: colliding buckets under contention

def overlay_worker(idx, barrier, path, rounds, nown, nshared):
    rng = random.Random(idx)
    mine = {}  # name -> ino
    with daxfs.Region(path) as r:
        wait(barrier)
        for rnd in range(rounds):
            for k in range(nown):
                name = "/h/p%d-%d" % (idx, k)
                if name in mine and rng.random() < 0.5:
                    r.unlink(name)
                    del mine[name]
                elif name not in mine:
                    mine[name] = r.create(name)
                    r.write_file(name, content.make(name + "@%d" % mine[name], 100))
            for k in rng.sample(range(nshared), nshared // 2):
                name = "/h/shared-%d" % k
                try:
                    if rng.random() < 0.5:
                        r.create(name)
                    else:
                        r.unlink(name)
                except OSError as e:
                    expect_errno(e, {errno.EEXIST, errno.ENOENT}, name)
            for name, ino in mine.items():
                s = r.stat(name)
                assert s.st_ino == ino, "%s: ino %d, created as %d" % (name, s.st_ino, ino)
                content.check(r.read_file(name), name + "@%d" % ino)
    return mine
