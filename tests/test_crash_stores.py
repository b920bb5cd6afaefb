"""A host killed after ANY store of its operations, not only at named points
(docs/recovery.md "Killed after any store").

The named crash points of test_crash.py sit between protocol steps; a
window between two stores that no point marks is never cut there.  The
crash build's point `store:N` (lib/crash.c, counted in core/compat.h
daxfs_dirty) SIGKILLs a process right after the Nth change of memory
through the core's atomics: a store, a CAS that took, an add.

A victim host (this file run as a script, on the crash build) runs a fixed
list of operations covering every kind the core has: create, write, pwrite,
append, truncate down and up, link, unlink, rmdir, renames of files and
directories (moving, replacing a file and an empty directory, across
directories, RENAME_EXCHANGE of files and of directories, RENAME_WHITEOUT,
RENAME_NOREPLACE), symlinks (short and the bare-page form), xattrs inline
and in a page (set, replace, remove), fallocate, punch, zero range,
O_TMPFILE linked and dropped, chattr, a file held open across its unlink,
open-unlink-write-close, a 2 MiB run cut by a truncate, and leaving with a
file still open.  It logs before and after each op how many stores the
process made (daxfs_crash_stores()), so one run without a cut gives every
op's span of stores.

test_victim_killed_after_store: for N spread over the whole run (every op
cut at its first and last store and at several between; the join and the
leave too), the victim dies after store N; then this process (a second
host) recovers it, and

  * the victim's directory is the model's after its last completed op or
    after the one in flight (crashlib.check_victim; torn file contents
    only as old/new bytes or zeros), and each file's xattrs are one of
    the two states' too;
  * what fsck -n finds is at most one of the residual windows
    docs/recovery.md names, at its smallest (test_crash_fence.residual);
    -y repairs it and -n is then clean;
  * the region is still usable: a few more ops in and around the
    victim's directory, and fsck -n clean after them.

test_every_late_store: every one of the last stores of the ops whose
windows the sweep found (an unlinked file's last close, a rename over a
directory, a 2 MiB write's publication), for a check that does not hang on
where the sweep's cuts land.

test_recoverer_killed_after_store: a victim killed after a store in the
middle of an op holding files open; a second host, recovering it, killed
after each store of its recovery (N spread over all of them); a third host
finishes both recoveries, with the same checks.

Each test runs twice: counting the atomics only ("atomics"), and with
DAXFS_CRASH_PLAIN=1 ("plain"), where the crash build also counts every
plain C store into the region and each cache line of a block copy there
(lib/crash-plain.c): the records, intent words and fields a host writes
without an atomic, before it publishes them or while it owns them, so
that a cut also falls between two such stores.

DAXFS_STORE_CUTS (default 1) is how many cuts each op gets between its
first and last store (DAXFS_STORE_PLAIN_CUTS, default 3, with plain
stores counted: there are about twice as many),
DAXFS_STORE_RECOVERER_CUTS (default 12) how many cuts the recovery gets:
raise them for a longer sweep (a value of 0 cuts at every store).  A
failure names N: `DAXFS_CRASH_AT=store:N python3
tests/test_crash_stores.py victim REGION LOG /v` on a fresh region (mkfs
--lease-ms 100) replays it, with DAXFS_CRASH_PLAIN=1 for a plain cut.
"""

import ctypes
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crashlib as cl  # noqa: E402

LEASE_MS = 100
SIZE = 32 << 20
MiB = 1 << 20
CUTS = int(os.environ.get("DAXFS_STORE_CUTS", "1"))
PLAIN_CUTS = int(os.environ.get("DAXFS_STORE_PLAIN_CUTS", "3"))
RECOVERER_CUTS = int(os.environ.get("DAXFS_STORE_RECOVERER_CUTS", "12"))

NOREPLACE, EXCHANGE, WHITEOUT = 1, 2, 4
FL_APPEND = 0x20


def store_ops(base):
    """The victim's operations, valid in order, every kind at least once."""
    long_target = cl.long_target("lt", 4095)
    return [
        ("mkdir", base),
        ("mkdir", base + "/d1"),
        ("mkdir", base + "/d2"),
        ("write", base + "/a", "a0", 9000),
        ("write", base + "/d1/b", "b0", 5000),
        ("write", base + "/c", "c0", 100),
        ("pwrite", base + "/a", 4000, "a1", 5000),
        ("append", base + "/a", "a2", 6000),
        ("truncate", base + "/a", 100),
        ("truncate", base + "/c", 7000),
        ("link", base + "/a", base + "/d2/la"),
        ("rename", base + "/c", base + "/d1/c"),
        ("rename", base + "/d1/c", base + "/d2/la"),
        ("rename", base + "/d1", base + "/d2/m"),
        ("renamef", base + "/a", base + "/d2/m/b", EXCHANGE),
        ("mkdir", base + "/d3"),
        ("write", base + "/d3/e", "e0", 300),
        ("renamef", base + "/d3", base + "/d2/m", EXCHANGE),
        ("renamef", base + "/a", base + "/wa", WHITEOUT),
        ("renamef", base + "/wa", base + "/nr", NOREPLACE),
        ("symlink", "t/short", base + "/s1"),
        ("symlink", long_target, base + "/d2/s2"),
        ("rename", base + "/s1", base + "/d3/s1"),
        ("setxattr", base + "/nr", "user.small", "x0", 40),
        ("setxattr", base + "/nr", "user.big", "x1", 6000),
        ("setxattr", base + "/nr", "user.big", "x2", 5000),
        ("removexattr", base + "/nr", "user.small"),
        ("falloc", base + "/nr", 0, 20000),
        ("punch", base + "/nr", 4096, 8192),
        ("zero", base + "/nr", 15000, 3000),
        ("tmpfile", base, base + "/t", "t0", 12000),
        ("tmpfile", base + "/d3", None, "t1", 9000),
        ("setflags", base + "/t", FL_APPEND),
        ("setflags", base + "/t", 0),
        ("hold", base + "/d2/la", 34),
        ("write", base + "/x", "x0", 5000),
        ("openunlink", base + "/x", "x1", 100),
        ("unlink", base + "/d2/la"),
        ("write", base + "/run", "r0", 2 * MiB + 5000),
        ("truncate", base + "/run", MiB + 100),
        ("release", 34),
        ("hold", base + "/run", 41),
        ("unlink", base + "/run"),
        ("mkdir", base + "/e1"),
        ("mkdir", base + "/e2"),
        ("rename", base + "/e1", base + "/e2"),
        ("rmdir", base + "/e2"),
        ("unlink", base + "/t"),
        ("unlink", base + "/d3/s1"),
        ("append", base + "/nr", "n1", 100),
    ]


class StoreModel(cl.Model):
    """crashlib.Model, and the kinds only store_ops() has; xattrs by inode."""

    def __init__(self):
        super().__init__()
        self.xattrs = {}

    def copy(self):
        m = StoreModel()
        m.names, m.data, m.next = dict(self.names), dict(self.data), self.next
        m.xattrs = {k: dict(v) for k, v in self.xattrs.items()}
        return m

    def _move(self, src, dst):
        pre = src + "/"
        moved = {}
        for n in [n for n in self.names if n == src or n.startswith(pre)]:
            moved[dst + n[len(src):]] = self.names.pop(n)
        return moved

    def apply(self, op):
        kind = op[0]
        if kind == "renamef":
            src, dst, flags = op[1:]
            if flags == EXCHANGE:
                a, b = self._move(src, dst), self._move(dst, src)
                self.names.update(a)
                self.names.update(b)
                return
            super().apply(("rename", src, dst))
            if flags == WHITEOUT:
                self.names[src] = ("c",)
        elif kind == "falloc":
            ino = self.names[op[1]]
            old = self.data[ino]
            self.data[ino] = old + bytes(max(0, op[2] + op[3] - len(old)))
        elif kind in ("punch", "zero"):
            ino = self.names[op[1]]
            old = self.data[ino]
            end = op[2] + op[3]
            if kind == "punch":
                end = min(end, len(old))
            buf = bytearray(old) + bytes(max(0, end - len(old)))
            buf[op[2]:end] = bytes(end - op[2])
            self.data[ino] = bytes(buf)
        elif kind == "tmpfile":
            if op[2]:
                self.next += 1
                self.names[op[2]] = self.next
                self.data[self.next] = cl.data(op[3], op[4])
        elif kind == "setxattr":
            ino = self.names[op[1]]
            self.xattrs.setdefault(ino, {})[op[2]] = cl.data(op[3], op[4])
        elif kind == "removexattr":
            del self.xattrs[self.names[op[1]]][op[2]]
        elif kind not in ("setflags", "hold", "release"):
            super().apply(op)


def do_op(r, op, held):
    kind = op[0]
    if kind == "renamef":
        r.rename(op[1], op[2], op[3])
    elif kind == "falloc":
        with r.open(op[1]) as f:
            f.fallocate(op[2], op[3])
    elif kind == "setxattr":
        r.setxattr(op[1], op[2], cl.data(op[3], op[4]))
    else:
        cl.do_op(r, op, held)


def victim(region, logpath, base):
    """Runs store_ops(base) on region, logging the stores made so far:
    "O s" before the join, "J s" after it, "B i s" / "E i s" around op i,
    "D s" once it left."""
    import daxfs
    count = ctypes.CDLL(os.environ["DAXFS_LIB"]).daxfs_crash_stores
    count.restype = ctypes.c_ulong
    fd = os.open(logpath, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def log(tag):
        os.write(fd, b"%s %d\n" % (tag, count()))

    log(b"O")
    # no heartbeat thread: its renewals would move the count by the clock
    r = daxfs.Region(region, heartbeat=False)
    log(b"J")
    held = {}
    for i, op in enumerate(store_ops(base)):
        log(b"B %d" % i)
        do_op(r, op, held)
        log(b"E %d" % i)
    r.reclaim()
    r.close()		# leaving with /v/run still open
    log(b"D")


def read_spans(logpath):
    """{label: (first store, last store)} of a whole run's log: 'join',
    op index, 'leave'."""
    marks = []
    with open(logpath) as f:
        for ln in f:
            w = ln.split()
            marks.append((w[0], int(w[1]) if w[0] in "BE" else None, int(w[-1])))
    spans = {}
    for (tag, i, s), (tag2, _, s2) in zip(marks, marks[1:]):
        label = {"O": "join", "B": i, "E": None, "J": None}.get(tag)
        if tag2 == "D":
            label = "leave"
        if label is not None and s2 > s:
            spans[label] = (s + 1, s2)
    return spans


def cuts_in(first, last, k):
    """The first and last store of a span and k more spread between (all
    of them with k == 0)."""
    if k <= 0 or last - first <= k + 1:
        return list(range(first, last + 1))
    step = (last - first) / (k + 1)
    return sorted({first, last} | {first + round(step * j) for j in range(1, k + 1)})


COUNTINGS = ["atomics", "plain"]


def env_for(crash_at, counting="atomics", points=None):
    e = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB,
             PYTHONPATH=os.path.join(cl.REPO, "python"),
             DAXFS_CRASH_PLAIN="1" if counting == "plain" else "0")
    e.pop("DAXFS_CRASH_STOP", None)
    e.pop("DAXFS_CRASH_LOG", None)
    if points:
        if os.path.exists(points):
            os.unlink(points)
        e["DAXFS_CRASH_LOG"] = points
    if crash_at:
        e["DAXFS_CRASH_AT"] = crash_at
    else:
        e.pop("DAXFS_CRASH_AT", None)
    return e


def run_victim(region, logpath, crash_at, counting="atomics"):
    if os.path.exists(logpath):
        os.unlink(logpath)
    return subprocess.run([sys.executable, os.path.abspath(__file__), "victim",
                           region, logpath, "/v"],
                          env=env_for(crash_at, counting, region + ".points"),
                          capture_output=True, text=True, timeout=120)


def killed_in(points):
    """The documented crash window the kill logged in points fell in
    (daxfs_crash_window), or None."""
    if not os.path.exists(points):
        return None
    with open(points) as f:
        w = f.read().split()
    return w[2] if len(w) > 2 else None


def log_state(logpath):
    """(joined, ops done, op in flight or None, left)."""
    joined, done, inflight, left = False, 0, None, False
    with open(logpath) as f:
        for ln in f:
            w = ln.split()
            if w[0] == "J":
                joined = True
            elif w[0] == "B":
                inflight = int(w[1])
            elif w[0] == "E":
                done, inflight = int(w[1]) + 1, None
            elif w[0] == "D":
                left = True
    return joined, done, inflight, left


def xattrs_of(r, path):
    return {n: r.getxattr(path, n, follow_symlinks=False)
            for n in r.listxattr(path, follow_symlinks=False)}


def check_dir(r, done, inflight):
    """check_victim with store_ops' model, then each file's xattrs."""
    ops = store_ops("/v")
    if done == 0 and inflight in (None, 0) and not r.exists("/v"):
        return "before"
    label = cl.check_victim(r, ops, done, inflight, model=StoreModel)
    states = []
    for k in (done, done + (inflight is not None)):
        m = StoreModel()
        for op in ops[:k]:
            m.apply(op)
        states.append(m)
    for name, v in states[0 if label == "before" else 1].names.items():
        if not isinstance(v, int):
            continue
        got = xattrs_of(r, name)
        allowed = [m.xattrs.get(m.names.get(name), {}) for m in states]
        assert got in allowed, "%s xattrs %s, not one of %s" % (
            name, {k: len(x) for k, x in got.items()},
            [{k: len(x) for k, x in a.items()} for a in allowed])
    return label


def use_region(r):
    """More ops in and around the victim's directory after its recovery."""
    r.makedirs("/after/sub")
    body = cl.data("after", 7000)
    r.write_file("/after/sub/f", body)
    if r.exists("/v"):
        r.write_file("/v/after", body[:100])
        for n in r.listdir("/v"):
            p = "/v/" + n
            st = r.lstat(p)
            if (st.st_mode & 0o170000) == 0o100000:
                with r.open(p) as f:
                    f.append(b"more")
        r.rename("/v/after", "/after/moved")
    r.link("/after/sub/f", "/after/l")
    r.unlink("/after/sub/f")
    assert r.read_file("/after/l") == body


PAGE = 4096
BATCH = 64 * PAGE		# DAXFS_BATCH_PAGES
RUN = 2 * MiB


def residual(p, run, window=None):
    """Is fsck problem p one of the residual windows docs/recovery.md
    names, at its smallest?  test_crash_fence's, and those only a cut
    between two stores reaches:

      * a retire that opens a new limbo batch: the page it took for the
        batch and the object it retires, named nowhere yet (a leak of up
        to two pages);
      * a batch refill cut between the bump's CAS and the cursor's: the
        carve leaks, 64 pages, counted (docs/alloc.md "Counted before
        taken");
      * counts raised before the act they count (docs/alloc.md,
        docs/files.md "Block count"): a file's blocks high by a page or
        a run; used_bytes high by up to 64 pages.
    run: the op in flight carves a 2 MiB run, which may leave the run
    and the pages it skips leaked (counted), or used_bytes high by both
    (its count before its carve).  window: the kill fell in a documented
    window (daxfs_crash_window): "reclaim.take", between a limbo chain's
    take and its hold in the lane, leaks the whole chain taken;
    "limbo.seal", between a lane's open batch taken out and pushed on
    the chain, leaks that batch (docs/reclaim.md "Crash story")."""
    import test_crash_fence
    if test_crash_fence.residual(p):
        return True
    code, have, want = p["code"], p.get("have", 0), p.get("want", 0)
    if code == "leak" and window in ("reclaim.take", "limbo.seal"):
        return True
    if code == "leak":
        return have <= 2 * PAGE or have == BATCH or (run and have < 2 * RUN)
    if code == "blocks":
        return have - want == RUN // PAGE
    if code == "used-bytes":
        return run and 0 < have - want < 2 * RUN
    return False


def fsck_settled(region, what, run=False, window=None):
    """fsck -n finds at most residual windows, each at its smallest; -y
    repairs them; -n is clean after.  Returns the codes found."""
    from test_shutdown import fsck_n
    code, rep = fsck_n(region)
    bad = [q for q in rep["problems"] if not residual(q, run, window)]
    assert not bad, "%s: fsck -n finds %s" % (what, bad[:5])
    if code:
        assert cl_fsck(region, "-y")[0] == 1, what
        assert cl_fsck(region, "-n")[0] == 0, what
    return [q["code"] for q in rep["problems"]]


def cl_fsck(region, mode):
    from helpers import env
    return env.fsck(region, mode)


@pytest.fixture
def region():
    from helpers import env
    path = env.region_path("stores")
    yield path
    for p in (path, path + ".clean", path + ".dead", path + ".log",
              path + ".rlog", path + ".points", path + ".rpoints"):
        env.remove(p)


def fresh(region):
    from helpers import env
    if not os.path.exists(region + ".clean"):
        env.mkfs(region + ".clean", SIZE, lease_ms=LEASE_MS)
    shutil.copyfile(region + ".clean", region)


def whole_run(region, counting="atomics"):
    """A run with no cut: its spans of stores."""
    fresh(region)
    v = run_victim(region, region + ".log", None, counting)
    assert v.returncode == 0, v.stderr[-3000:]
    return read_spans(region + ".log")


def victim_cuts(spans, per_op):
    cuts = []
    for label, (first, last) in sorted(spans.items(), key=lambda kv: kv[1]):
        k = per_op if isinstance(label, int) else 2
        cuts += [(n, label) for n in cuts_in(first, last, k)]
    return cuts


def recover_and_check(region, what, window=None):
    """This process, a new host: recovers every dead host, checks the
    victim's directory, uses the region, and fsck."""
    import daxfs
    with daxfs.Region(region) as r:
        cl.recover_others(r)
        joined, done, inflight, left = log_state(region + ".log")
        try:
            label = check_dir(r, done, inflight)
        except AssertionError as e:
            raise AssertionError("%s: %s" % (what, e))
    ops = store_ops("/v")
    what += " in op %r %r" % (inflight, ops[inflight] if inflight is not None else None)
    run = inflight is not None and ops[inflight][0] == "write" and \
        ops[inflight][3] >= RUN
    found = fsck_settled(region, what + " (recovered)", run, window)
    with daxfs.Region(region) as r:
        use_region(r)
    from test_shutdown import fsck_n
    code, rep = fsck_n(region)
    assert code == 0, "%s: fsck -n after more ops: %s" % (what, rep["problems"][:5])
    return label, found


def test_plain_stores_are_counted(crash_build, region):
    """The crash build counts plain stores with DAXFS_CRASH_PLAIN=1: each
    op's span is longer than its atomics alone (a create writes its record
    and its leaf before the CAS that publishes them), so the plain sweep
    cuts where the other cannot."""
    atomics = whole_run(region)
    plain = whole_run(region, "plain")
    assert atomics.keys() == plain.keys()
    longer = [k for k in atomics
              if plain[k][1] - plain[k][0] > atomics[k][1] - atomics[k][0]]
    assert len(longer) >= len(atomics) * 9 // 10, (atomics, plain)
    # a write's data counts a line each, streamed or moved: a cut can fall
    # inside the copy of the 2 MiB write, not only around it
    ops = store_ops("/v")
    big = next(i for i, op in enumerate(ops)
               if op[0] == "write" and op[3] > MiB)
    lines = ops[big][3] // 64
    assert plain[big][1] - plain[big][0] >= lines, (plain[big], lines)
    assert atomics[big][1] - atomics[big][0] < lines, atomics[big]


@pytest.mark.parametrize("counting", COUNTINGS)
def test_victim_killed_after_store(crash_build, region, counting):
    spans = whole_run(region, counting)
    total = max(last for _, last in spans.values())
    assert len([k for k in spans if isinstance(k, int)]) == len(store_ops("/v"))
    cuts = victim_cuts(spans, PLAIN_CUTS if counting == "plain" else CUTS)
    failures, tally, ran = [], {}, 0
    for n, label in cuts:
        fresh(region)
        v = run_victim(region, region + ".log", "store:%d" % n, counting)
        if v.returncode == 0:
            continue		# the count moved by a store or two: past the end
        assert v.returncode == -9, v.stderr[-3000:]
        ran += 1
        what = "store:%d (%s, op %r of %d stores)" % (n, counting, label,
                                                      total)
        try:
            _, found = recover_and_check(region, what,
                                         killed_in(region + ".points"))
        except AssertionError as e:
            failures.append(str(e))
            continue
        for c in found:
            tally[c] = tally.get(c, 0) + 1
    print("\n%d cuts of %d stores; residual windows: %s" % (ran, total, tally))
    assert ran >= len(cuts) * 9 // 10, (ran, len(cuts))
    assert not failures, "%d of %d cuts:\n%s" % (len(failures), ran,
                                                  "\n".join(failures[:12]))


# Ops whose last stores are cut one by one (test_every_late_store): how
# many.  An unlinked file's last close frees it (the inode's overlay
# delete, then its record's retire); a rename over an empty directory
# frees that directory at its step 5; the 2 MiB write publishes its run
# and its tail page (each insert's CAS and its block count); a mkdir and
# a link mark their linking step, then link the leaf's next and CAS it
# in.  Before session 59 a death between the mark and the CAS left the
# new directory unnamed, or the link's count high, for fsck; a link's
# last stores must now leave nothing at all (EXACT: its allocations come
# before them, so no counted-before-taken window is among them).  An
# rmdir marks its step 5, then stores the directory's nlink 0 and frees
# it: a death between the two left it at nlink 2 named nowhere.
LATE_STORES = {"release": (40, 12), "rename-over-dir": (45, 24),
               "write-run": (38, 30), "mkdir": (1, 14), "link": (10, 14),
               "rmdir": (46, 30)}
EXACT = {"link"}


@pytest.mark.parametrize("case", sorted(LATE_STORES))
def test_every_late_store(crash_build, region, case):
    """Every one of the last stores of an op that frees or publishes
    something whose steps are the windows the sweep above found."""
    op, k = LATE_STORES[case]
    assert store_ops("/v")[op][0] == case.split("-")[0]
    first, last = whole_run(region)[op]
    failures, ran = [], 0
    for n in range(max(first, last - k + 1), last + 1):
        fresh(region)
        v = run_victim(region, region + ".log", "store:%d" % n)
        if v.returncode == 0:
            continue
        assert v.returncode == -9, v.stderr[-3000:]
        ran += 1
        what = "store:%d (op %d: %d..%d)" % (n, op, first, last)
        try:
            _, found = recover_and_check(region, what,
                                         killed_in(region + ".points"))
            assert case not in EXACT or not found, \
                "%s: fsck -n finds %s after recovery" % (what, found)
        except AssertionError as e:
            failures.append(str(e))
    assert ran >= k // 2, ran
    assert not failures, "%d of %d cuts:\n%s" % (len(failures), ran,
                                                  "\n".join(failures[:12]))


# A host that recovers the dead victim, logging its stores ("R s" before
# the recovery, "F s" after it; the join's and the watch's stores come
# before R).
RECOVERER = r'''
import ctypes, os, sys
sys.path.insert(0, sys.argv[2])
import daxfs
count = ctypes.CDLL(os.environ["DAXFS_LIB"]).daxfs_crash_stores
count.restype = ctypes.c_ulong
fd = os.open(sys.argv[3], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
r = daxfs.Region(sys.argv[1], heartbeat=False)
r.watch_hosts()
os.write(fd, b"R %d\n" % count())
for _ in range(100):
    r.reclaim()
    if all(h["state"] in ("recovered", "free") for h in r.info()["hosts"]
           if not h["self"]):
        break
    r.watch_hosts()
os.write(fd, b"F %d\n" % count())
r.close()
'''

# Where the victim dies for the recoverer cuts, halfway through the op's
# stores: the 2 MiB write of /v/run, holding /v/d2/la open and unlinked
# (a recovery with a write's record, held pages and an orphan to settle);
# the rename of /v/e1 over the empty /v/e2, holding /v/run open and
# unlinked (a namespace roll and a 1 MiB orphan's free).
VICTIM_CUT_OPS = {"write-run": 38, "rename-over-dir": 45}


def run_recoverer(region, crash_at, counting="atomics"):
    rlog = region + ".rlog"
    if os.path.exists(rlog):
        os.unlink(rlog)
    p = subprocess.run([sys.executable, "-c", RECOVERER, region,
                        os.path.join(cl.REPO, "python"), rlog],
                       env=env_for(crash_at, counting, region + ".rpoints"),
                       capture_output=True, text=True, timeout=120)
    marks = {}
    if os.path.exists(rlog):
        with open(rlog) as f:
            marks = {ln.split()[0]: int(ln.split()[1]) for ln in f}
    return p, marks


@pytest.mark.parametrize("counting", COUNTINGS)
@pytest.mark.parametrize("case", sorted(VICTIM_CUT_OPS))
def test_recoverer_killed_after_store(crash_build, region, case, counting):
    spans = whole_run(region)
    first, last = spans[VICTIM_CUT_OPS[case]]
    assert store_ops("/v")[VICTIM_CUT_OPS[case]][0] == case.split("-")[0]
    fresh(region)
    v = run_victim(region, region + ".log", "store:%d" % ((first + last) // 2))
    assert v.returncode == -9, v.stderr[-3000:]
    victim_window = killed_in(region + ".points")
    shutil.copyfile(region, region + ".dead")
    # a whole recovery: its span of stores
    p, marks = run_recoverer(region, None, counting)
    assert p.returncode == 0, p.stderr[-3000:]
    assert marks["F"] > marks["R"], marks
    failures, ran = [], 0
    for n in cuts_in(marks["R"] + 1, marks["F"], RECOVERER_CUTS):
        shutil.copyfile(region + ".dead", region)
        p, got = run_recoverer(region, "store:%d" % n, counting)
        if p.returncode == 0:
            continue
        assert p.returncode == -9, p.stderr[-3000:]
        if "R" not in got:
            continue		# died in its join: not this test's cut
        ran += 1
        try:
            recover_and_check(region, "recoverer store:%d (%s, recovery %d..%d)"
                              % (n, counting, marks["R"] + 1, marks["F"]),
                              killed_in(region + ".rpoints") or victim_window)
        except AssertionError as e:
            failures.append(str(e))
    print("\n%d recoverer cuts of %d stores" % (ran, marks["F"] - marks["R"]))
    assert ran >= 1
    assert not failures, "%d of %d cuts:\n%s" % (len(failures), ran,
                                                  "\n".join(failures[:12]))


if __name__ == "__main__":
    if sys.argv[1] == "victim":
        sys.path.insert(0, os.path.join(cl.REPO, "python"))
        victim(sys.argv[2], sys.argv[3], sys.argv[4])
