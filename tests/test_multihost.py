"""Several hosts on one region, racing on real shared memory.

Every worker is its own process with its own daxfs.Region, i.e. its own
host slot; they share nothing but the region file in /dev/shm and meet
only through the CAS protocols in the region.  Workers live in
tests/helpers/mh_workers.py; the parent checks the end state through yet
another host and, where it matters, with fsck.daxfs -n.
"""

import collections
import errno

import pytest

from helpers import content, env, mh_workers as W, procs

daxfs = env.daxfs

NPROCS = 4
SEED = 20240611


def mkregion(path, size_mib, **kw):
    env.mkfs(path, size_mib * env.MiB, **kw)


def assert_fsck_clean(path):
    rc, out = env.fsck(path, "-n")
    assert rc == 0, "fsck.daxfs -n: exit %d\n%s" % (rc, out[-4000:])


def test_distinct_creates_one_dir(region_path):
    """(a) 4 x 2000 creates of distinct names in one directory: every name
    is listed exactly once, by listdir and by chunked readdir, on every host."""
    n = 2000
    mkregion(region_path, 64)
    with daxfs.Region(region_path) as r:
        r.mkdir("/d")
    procs.run(W.distinct_creates, [(region_path, NPROCS, n)] * NPROCS, timeout=120)
    with daxfs.Region(region_path) as r:
        names = r.listdir("/d")
        assert len(names) == NPROCS * n == len(set(names))
        assert r.stat("/d").st_nlink == 2
    assert_fsck_clean(region_path)


@pytest.mark.parametrize("kind", ["f", "d"])
def test_racing_creates_one_winner(region_path, kind):
    """(b) Hosts create the same names at once: exactly one winner per
    name, everybody else gets EEXIST; the winner's inode is the one listed."""
    n, rounds = 1500, 3
    mkregion(region_path, 64)
    with daxfs.Region(region_path) as r:
        for rnd in range(rounds):
            r.mkdir("/race%d" % rnd)
    results = procs.run(W.racing_creates, [(region_path, n, kind, rounds)] * NPROCS,
                        timeout=120)
    owner = {}
    for idx, wins in enumerate(results):
        for name, ino in wins.items():
            assert name not in owner, "%s created by hosts %d and %d" % (name, owner[name], idx)
            owner[name] = idx
    with daxfs.Region(region_path) as r:
        for rnd in range(rounds):
            expected = ["%s%d" % (kind, j) for j in range(n)]
            missing = [x for x in expected if "/race%d/%s" % (rnd, x) not in owner]
            assert not missing, "round %d: %d names have no winner" % (rnd, len(missing))
            assert sorted(r.listdir("/race%d" % rnd)) == sorted(expected)
            if kind == "d":
                assert r.stat("/race%d" % rnd).st_nlink == 2 + n
        for wins in results:
            for name, ino in wins.items():
                assert r.stat(name).st_ino == ino, "%s: listed inode is not the winner's" % name
    assert_fsck_clean(region_path)
    winners = collections.Counter(owner.values())
    if len(winners) < 2:
        pytest.skip("no two hosts ever raced (scheduling): %s" % dict(winners))


def test_contents_across_hosts(region_path):
    """(c) Files written (whole, in order and out of order) by several hosts
    read back bit-exact (sha256) on the other hosts."""
    nfiles = 12
    mkregion(region_path, 128)
    with daxfs.Region(region_path) as r:
        r.mkdir("/data")
    results = procs.run(W.write_and_verify,
                        [(region_path, NPROCS, nfiles, SEED)] * NPROCS, timeout=120)
    with daxfs.Region(region_path) as r:
        for digests in results:
            for name, digest in digests.items():
                assert content.sha256(r.read_file(name)) == digest, name
    assert_fsck_clean(region_path)


def test_concurrent_appends(region_path):
    """(d) Concurrent appends of tagged fixed-size records (64 B, and 100 B
    which straddle pages): every record lands exactly once, intact, at the
    offset its append returned."""
    nrec, sizes = 3000, (64, 100)
    mkregion(region_path, 64)
    with daxfs.Region(region_path) as r:
        for size in sizes:
            r.create("/log%d" % size)
    results = procs.run(W.appender, [(region_path, nrec, sizes)] * NPROCS, timeout=120)
    with daxfs.Region(region_path) as r:
        for size in sizes:
            data = r.read_file("/log%d" % size)
            assert len(data) == NPROCS * nrec * size
            where = {}
            for off in range(0, len(data), size):
                rec = content.parse_record(data[off:off + size])
                assert rec is not None, "log%d: damaged record at offset %d" % (size, off)
                assert rec not in where, "log%d: record %s twice" % (size, rec)
                where[rec] = off
            for idx, offs in enumerate(results):
                for seq, off in enumerate(offs[size]):
                    assert where.get((idx, seq)) == off, \
                        "log%d: record (%d, %d) not at its append offset %d" % (size, idx, seq, off)
    assert_fsck_clean(region_path)


def walk_storm(r, ndirs):
    """Every name below /d* with its path; bounded against cycles."""
    found = collections.defaultdict(list)
    stack = [("/d%d" % i, 0) for i in range(ndirs)]
    visited = 0
    while stack:
        d, depth = stack.pop()
        assert depth < 64, "directory chain too deep at %s: a cycle?" % d
        for name in r.listdir(d):
            p = "%s/%s" % (d, name)
            found[name].append(p)
            visited += 1
            assert visited < 1 << 20
            if name.startswith("s") and "-" not in name:
                stack.append((p, depth + 1))
    return found


def test_rename_storm(region_path, need_fsck):
    """(e) 4 hosts rename files and directories among several directories
    (moves, NOREPLACE, EXCHANGE, into other subdirs, into their own subtree)
    at once: afterwards fsck is clean, every name exists exactly once, and
    every file's contents exist exactly once."""
    ndirs, nfiles, nsub, nsubfiles, iters = 4, 200, 12, 3, 3000
    mkregion(region_path, 64)
    files, subs, subfiles = W.storm_layout(ndirs, nfiles, nsub, nsubfiles)
    with daxfs.Region(region_path) as r:
        for i in range(ndirs):
            r.mkdir("/d%d" % i)
        for name, d in files.items():
            r.write_file("%s/%s" % (d, name), content.make(name, 3000))
        for name, d in subs.items():
            r.mkdir("%s/%s" % (d, name))
            for g in subfiles[name]:
                r.write_file("%s/%s/%s" % (d, name, g), content.make(g, 200))
    stats = procs.run(W.rename_storm,
                      [(region_path, ndirs, nfiles, nsub, iters, SEED)] * NPROCS, timeout=120)
    total = collections.Counter()
    for s in stats:
        total.update(s)
    assert total["ok"] > NPROCS * iters // 20, "too few renames succeeded: %s" % dict(total)
    print("rename storm: %s" % dict(total))
    assert_fsck_clean(region_path)
    with daxfs.Region(region_path) as r:
        found = walk_storm(r, ndirs)
        expected = set(files) | set(subs) | {g for gs in subfiles.values() for g in gs}
        assert set(found) == expected, "unexpected names %s, missing %s" % (
            sorted(set(found) - expected)[:5], sorted(expected - set(found))[:5])
        dup = {n: ps for n, ps in found.items() if len(ps) != 1}
        assert not dup, "names present more than once: %s" % dict(list(dup.items())[:5])
        tags = collections.Counter()
        for name in files:
            tags[content.check(r.read_file(found[name][0]))] += 1
        assert tags == collections.Counter(set(files)), "file contents lost or duplicated"
        # EXCHANGE swaps inodes under fixed names, so a subdir's files
        # travel with its inode: each subdir holds exactly one original set.
        sets = collections.Counter()
        for name in subs:
            spath = found[name][0]
            gs = sorted(n for n in r.listdir(spath) if "-g" in n)
            owner = gs[0].split("-")[0] if gs else None
            assert owner in subfiles and gs == sorted(subfiles[owner]), \
                "%s holds %s" % (spath, gs)
            sets[owner] += 1
            for g in gs:
                content.check(r.read_file("%s/%s" % (spath, g)), g)
            nsubdirs = sum(1 for n in r.listdir(spath) if n in subs)
            assert r.stat(spath).st_nlink == 2 + nsubdirs, spath
        assert sets == collections.Counter(set(subs)), "subdir inodes lost or duplicated"
        for i in range(ndirs):
            d = "/d%d" % i
            nsubdirs = sum(1 for n in r.listdir(d) if n in subs)
            assert r.stat(d).st_nlink == 2 + nsubdirs, d


def test_churn_reuses_space(region_path):
    """(f) Hosts create, verify and unlink files for many rounds, writing
    several times the pool size in total: space is reused (statfs stays
    bounded after reclaim) and a reader racing with the unlinks only ever
    sees a file's own bytes or an error."""
    nchurn, rounds, per_round, max_size = 3, 80, 8, 100 << 10
    mkregion(region_path, 48)
    with daxfs.Region(region_path) as r:
        for i in range(nchurn):
            r.mkdir("/c%d" % i)
        r.reclaim()
        st0 = r.statfs()
    base = st0["used_bytes"]
    done = procs.CTX.Value("i", 0)
    args = [(region_path, rounds, per_round, max_size, SEED)] * nchurn
    results = procs.run(_churn_or_read, [(a, done, nchurn) for a in args] +
                        [((region_path,), done, nchurn)], timeout=150)
    churn, (reads, misses) = results[:nchurn], results[nchurn]
    written = sum(w for _, w in churn)
    peak = max(p for p, _ in churn)
    assert written > 1.5 * st0["pool_bytes"], "test wrote too little to show reuse"
    assert peak - base < st0["pool_bytes"] * 0.6, "used_bytes peaked at %d" % peak
    assert reads > 0, "the hazard reader never read a live file"
    print("churn: wrote %d MiB through a %d MiB pool; peak used %d KiB over the start; "
          "reader: %d reads, %d misses" % (written >> 20, st0["pool_bytes"] >> 20,
                                           (peak - base) >> 10, reads, misses))
    with daxfs.Region(region_path) as r:
        for _ in range(4):
            r.reclaim()
        used = r.statfs()["used_bytes"]
    slack = 2 * env.MiB
    print("churn: %d KiB above the start after everything was unlinked" % ((used - base) >> 10))
    assert used - base <= slack, \
        "after unlinking everything, used_bytes is %d above the start (%d)" % (used - base, base)
    assert_fsck_clean(region_path)


def _churn_or_read(idx, barrier, args, done, nchurn):
    """Workers 0..nchurn-1 churn; the last one reads until they are done."""
    if idx < nchurn:
        try:
            return W.churner(idx, barrier, *args)
        finally:
            with done.get_lock():
                done.value += 1
    return W.hazard_reader(idx, barrier, args[0], nchurn, done)


def test_readdir_stable_under_change(region_path):
    """(g) One host lists a 3000-entry directory in chunks of 7 while three
    hosts create and delete other names in it: every stable name is
    returned exactly once per pass, no name twice, positions monotonic."""
    nkeep, passes, chunk = 3000, 6, 7
    mkregion(region_path, 64)
    with daxfs.Region(region_path) as r:
        r.mkdir("/big")
        for i in range(nkeep):
            r.create("/big/keep-%d" % i)
    stop = procs.CTX.Event()
    results = procs.run(_list_or_churn,
                        [(region_path, nkeep, passes, chunk, stop)] * NPROCS, timeout=150)
    assert all(ops >= 50 for ops in results[1:]), results
    assert results[0] > 0, "the lister never saw a concurrent change"
    with daxfs.Region(region_path) as r:
        names = set(r.listdir("/big"))
        assert {"keep-%d" % i for i in range(nkeep)} <= names
    assert_fsck_clean(region_path)


def _list_or_churn(idx, barrier, path, nkeep, passes, chunk, stop):
    if idx == 0:
        return W.readdir_lister(idx, barrier, path, nkeep, passes, chunk, stop)
    return W.readdir_churner(idx, barrier, path, stop, SEED)


def test_small_overlay_contention(region_path):
    """(h) A region formatted with a tiny overlay table, so that inode keys
    of different hosts collide in the same probe windows: creates, unlinks
    and racing shared names keep every inode resolving to its own record."""
    buckets = 256
    try:
        mkregion(region_path, 32, buckets=buckets)
    except (OSError, ValueError):
        buckets = 1024  # the smallest table mkfs accepts
        mkregion(region_path, 32, buckets=buckets)
    nown = 25 if buckets == 256 else 100
    with daxfs.Region(region_path) as r:
        r.mkdir("/h")
        assert r.statfs()["nr_buckets"] == buckets
    results = procs.run(W.overlay_worker, [(region_path, 25, nown, 8)] * NPROCS, timeout=120)
    with daxfs.Region(region_path) as r:
        st = r.statfs()
        assert st["used_buckets"] <= st["nr_buckets"]
        for mine in results:
            for name, ino in mine.items():
                assert r.stat(name).st_ino == ino
                content.check(r.read_file(name), name + "@%d" % ino)
        expected = {n.rsplit("/", 1)[1] for mine in results for n in mine}
        names = set(r.listdir("/h"))
        assert {n for n in names if not n.startswith("shared-")} == expected
    assert_fsck_clean(region_path)


def test_errno_is_set():
    """DaxfsError carries the errno (the other suites rely on it)."""
    assert issubclass(daxfs.DaxfsError, OSError)
    e = daxfs.DaxfsError(errno.EEXIST, "x")
    assert e.errno == errno.EEXIST
