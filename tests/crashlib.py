"""Crash-injection workload, model and checks for tests/test_crash.py and
tests/test_liveness.py (docs/recovery.md).

A *victim* is a separate Python process that loads the crash build of the
library (DAXFS_LIB=build/crash/libdaxfs.so) and runs a deterministic list
of operations in its own directory, writing "B i" before and "E i" after
each one to a log (unbuffered os.write: a SIGKILL loses nothing written).
DAXFS_CRASH_AT makes it SIGKILL itself at a named protocol point.

The model replays the same list: after the victim died with k operations
logged complete, the directory must be the model after k operations, or
(the one in flight) after k + 1 -- where a file the in-flight operation
touches may hold, byte for byte, its old or new contents or zeros (torn
append / write / truncate), never anything else.

Run as a script: python3 crashlib.py victim REGION LOG SEED NOPS DIR
"""

import functools
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRASH_BUILD = os.path.join(REPO, "build", "crash")
CRASH_LIB = os.path.join(CRASH_BUILD, "libdaxfs.so")

# A victim that renames argv[3] to argv[4] with flags argv[5] and dies at
# its crash point (DAXFS_CRASH_AT): run_rename_victim.
RENAME_VICTIM = r'''
import sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
r.rename(sys.argv[3], sys.argv[4], int(sys.argv[5]))
sys.exit(3)	# not reached: the crash point kills us
'''


def run_rename_victim(region, point, src, dst, flags):
    """Runs RENAME_VICTIM on the crash build, checks it died at point
    (and nowhere else first)."""
    venv = dict(os.environ, DAXFS_LIB=CRASH_LIB, DAXFS_CRASH_AT=point,
                DAXFS_CRASH_LOG=region + ".points")
    v = subprocess.run([sys.executable, "-c", RENAME_VICTIM, region,
                        os.path.join(REPO, "python"), src, dst, str(flags)],
                       env=venv, capture_output=True, text=True, timeout=120)
    assert v.returncode == -9, "victim: %s %s" % (v.returncode, v.stderr[-2000:])
    with open(region + ".points") as f:
        assert f.read().split()[0] == point


def victim_state(r):
    """The state of the one other host slot in use (the victim's)."""
    others = [h["state"] for h in r.info()["hosts"] if not h["self"]]
    assert len(others) == 1, others
    return others[0]


# The start of a host script run as [python, -c, script, region, python/]:
# it opens the region as r.
HOST_SCRIPT = r'''
import errno, sys, time
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
'''

# A host that reclaims until the dead host is recovered (a recoverer that
# dies in that recovery at its DAXFS_CRASH_AT).
RECOVERER_SCRIPT = HOST_SCRIPT + r'''
for _ in range(200):
    r.reclaim()
    time.sleep(0.05)
'''

# After HOST_SCRIPT, for a host whose threads wait at a crash point
# (DAXFS_CRASH_STOP=thread, DAXFS_CRASH_LOG=REGION.points): call(key, fn,
# *args) keeps fn's errno (0: it returned) in res[key]; first_point()
# waits until a thread reached a point and returns its name; resume(*ts)
# lets the waiting thread go on and joins ts; done() prints res.
THREADS_SCRIPT = r'''
import json, os, signal, threading
points = sys.argv[1] + ".points"
res = {}


def call(key, fn, *args):
    try:
        fn(*args)
        res[key] = 0
    except OSError as e:
        res[key] = e.errno


def first_point():
    while not (os.path.exists(points) and open(points).read().strip()):
        time.sleep(0.01)
    return open(points).read().split()[0]


def resume(*ts):
    os.kill(os.getpid(), signal.SIGUSR1)
    for t in ts:
        t.join()


def done():
    print(json.dumps(res))
    r.close()
'''

# Every named point in core/ (docs/recovery.md) with a workload that
# reaches it.
POINTS = [
    "ov_insert.claimed", "ov_insert.value",
    "alloc.batch_locked", "alloc.pages_held",
    "create.counted", "create.inode_published", "create.before_link",
    "create.linked",
    "link.begin", "link.held", "link.counted", "link.nlink_raised", "link.published",
    "unlink.removed", "unlink.counted", "unlink.nlink_dropped",
    "unlink.freed",
    "rename.prepared", "rename.linked", "rename.published", "rename.moved",
    "rename.unpinned", "rename.counted", "rename.done",
    "rmdir.dead", "rmdir.unlinked", "rmdir.done",
    "write.page_published", "write.size_moved",
    "append.reserved", "append.written",
    "truncate.cleared", "truncate.size",
    "reclaim.popped", "reclaim.emptied", "reclaim.freed", "limbo.sealing",
    "open.inserted", "open.removed", "orphan.claimed", "open.unlinked",
]

# Points a host reaches while recovering another (test_crash.py kills the
# recoverer there); open.unlinked is also reached by a victim leaving.
RECOVERY_POINTS = ["recover.claimed", "recover.lane", "recover.open_set",
                   "open.unlinked"]

# Points tested elsewhere, with the test that kills a host there.
OTHER_POINTS = {
    "convert.version": "test_convert.py",
    "alloc.compact": "test_compact.py",
    "pcache.fill": "test_pcache.py",
    "ov_insert.publish": "test_overlay_publish.py",
    "falloc.punch_zeroed": "test_falloc_crash.py",
    "falloc.zero_filled": "test_falloc_crash.py",
    "falloc.zeroed_unmarked": "test_falloc_crash.py",
    "xattr.page": "test_xattr_crash.py",
    "xattr.built": "test_xattr_crash.py",
    "xattr.published": "test_xattr_crash.py",
    "xattr.retire": "test_xattr_crash.py",
    "tmpfile.published": "test_tmpfile.py",
    "tmpfile.held": "test_tmpfile.py",
    "tmpfile.orphan": "test_tmpfile.py",
    "dir.marked": "test_link_race.py",
    "alloc.take_locked": "test_write_crash_leak.py",
    "alloc.take_held": "test_write_crash_leak.py",
    "alloc.pages_taken": "test_write_crash_leak.py",
    "write.page_publishing": "test_write_crash_leak.py",
    "alloc.run_held": "test_write_crash_leak.py",
    "write.run_publishing": "test_write_crash_leak.py",
    "write.run_published": "test_write_crash_leak.py",
    "radix.run_splitting": "test_write_crash_leak.py",
    "rmdir.found": "test_rmdir_rename_race.py",
    "create.undone": "test_create_recover_twice.py",
    "link.undone": "test_create_recover_twice.py",
    "strict.logged": "test_strict_crash.py",
    "strict.committed": "test_strict_crash.py",
    "strict.applied": "test_strict_crash.py",
    "setflags.set": "test_attrs_crash.py",
    "eoftail.zeroed": "test_eof_tail.py",
    "fence": "test_crash_fence.py",
    # a kill there leaks the run (the bump's window, docs/alloc.md); a
    # host stopped there and declared dead gives it back
    "alloc.run_carved": "test_zombie_fence.py",
    "fence.hold": "test_zombie_fence.py",
    "fence.free": "test_zombie_fence.py",
    "fence.retire": "test_zombie_fence.py",
}


def core_points():
    """Every daxfs_crash_point() name in core/."""
    names = set()
    core = os.path.join(REPO, "core")
    for fn in os.listdir(core):
        if fn.endswith((".c", ".h")):
            with open(os.path.join(core, fn)) as f:
                names.update(re.findall(r'daxfs_crash_point\("([^"]+)"\)', f.read()))
    return names

SIZES = [0, 1, 100, 4095, 4096, 5000, 9000, 20000]


def wait_point(p, points, name):
    """Waits until process p reached the crash point `name` (the first one
    in its DAXFS_CRASH_LOG file `points`): stopped there (DAXFS_CRASH_STOP)
    or killed.  Fails if p exits first or reached another point."""
    for _ in range(600):
        if os.path.exists(points) and open(points).read().strip():
            break
        assert p.poll() is None or p.returncode == -9, p.communicate()
        time.sleep(0.1)
    assert open(points).read().split()[0] == name


def run_threads(script, region, point, *args):
    """Runs a host script (HOST_SCRIPT + THREADS_SCRIPT + ...; argv:
    region, python/, *args) on the crash build, its threads waiting at
    point (DAXFS_CRASH_STOP=thread); checks that it exited 0 and that
    res["point"] is point; returns the JSON it printed (its res)."""
    venv = dict(os.environ, DAXFS_LIB=CRASH_LIB, DAXFS_CRASH_AT=point,
                DAXFS_CRASH_STOP="thread", DAXFS_CRASH_LOG=region + ".points")
    run = subprocess.run([sys.executable, "-c", script, region,
                          os.path.join(REPO, "python"), *map(str, args)],
                         env=venv, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    res = json.loads(run.stdout)
    assert res["point"] == point, res
    return res


def wait_recovered(r, lease_ms, timeout=30):
    """Reclaims on region r every half lease until no other host is alive
    (this host times a dead one's lease from its own first look: no shared
    clock, so recovery comes within a few leases); the other hosts' states."""
    deadline = time.monotonic() + timeout
    while True:
        time.sleep(lease_ms / 1000 / 2)
        r.reclaim()
        states = [h["state"] for h in r.info()["hosts"] if not h["self"]]
        if "alive" not in states or time.monotonic() > deadline:
            return states


def run_dying(region, script, point):
    """Runs host script (argv: region, python/) on the crash build until it
    dies at point (DAXFS_CRASH_AT: name or name:n), and there first;
    returns its pid."""
    log = region + "." + point.replace(":", "_")
    venv = dict(os.environ, DAXFS_LIB=CRASH_LIB, DAXFS_CRASH_AT=point,
                DAXFS_CRASH_LOG=log)
    v = subprocess.Popen([sys.executable, "-c", script, region,
                          os.path.join(REPO, "python")], env=venv,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    _, err = v.communicate(timeout=120)
    died = open(log).read().split() if os.path.exists(log) else []
    if os.path.exists(log):
        os.unlink(log)
    assert v.returncode == -9, "%s: %s %s" % (point, v.returncode, err[-2000:])
    assert died and died[0] == point.split(":")[0], died
    return v.pid


def others_recovered(r):
    """No other host slot is alive, dead or being recovered."""
    return all(h["state"] in ("recovered", "free")
               for h in r.info()["hosts"] if not h["self"])


def recover_others(r, rounds=600):
    """Reclaims on region r until every other slot is recovered (a stalled
    recovery is taken over once its recovery lease ran out)."""
    for _ in range(rounds):
        r.reclaim()
        if others_recovered(r):
            return
        time.sleep(0.05)
    assert others_recovered(r), r.info()["hosts"]


def victim_recovered(r, path, crash_build, point, src, args, lease_ms, dead=None):
    """Runs python source src (argv: path, python/, tests/, *args) with the
    crash build killing it at point, checks that it died there, calls dead()
    if given (before its lease runs out: recovery may start during it), and
    waits on region r until it is recovered."""
    venv = dict(os.environ, DAXFS_LIB=crash_build, DAXFS_CRASH_AT=point)
    p = subprocess.run([sys.executable, "-c", src, path,
                        os.path.join(REPO, "python"),
                        os.path.join(REPO, "tests"), *args],
                       env=venv, capture_output=True, timeout=120)
    assert p.returncode == -9, p.stderr[-2000:]
    if dead:
        dead()
    states = wait_recovered(r, lease_ms)
    assert "recovered" in states and "alive" not in states, states


@functools.lru_cache(maxsize=64)
def data(tag, size):
    """size bytes that name their tag and position (no two alike);
    the last few are kept (a model replays the same writes often)."""
    out = bytearray()
    i = 0
    while len(out) < size:
        out += hashlib.sha256(("%s/%d" % (tag, i)).encode()).digest()
        i += 1
    return bytes(out[:size])


def long_target(tag, size):
    """A symlink target of size bytes (components under NAME_MAX)."""
    out = ""
    while len(out) < size:
        out += "%s-%d/" % (tag, len(out)) + "x" * 200 + "/"
    return out[:size]


def gen_ops(seed, n, base):
    """n operations in directory base, valid when run in order.

    Besides files and directories: symlinks (short and 4089..4095-byte
    targets, the bare-page form), files held open across later operations
    (and across their unlink: the open set and the orphan settle), and
    open-unlink-write-close in one operation."""
    rng = random.Random(seed)
    files, dirs, links, held = [], [], [], []
    ops = [("mkdir", base)]
    k = 0

    m = Model()
    m.apply(ops[0])
    m_applied = [1]

    def fresh(prefix):
        nonlocal k
        k += 1
        d = base
        if prefix != "d" and dirs and rng.random() < 0.3:
            d = rng.choice(dirs)
        return "%s/%s%d" % (d, prefix, k)

    def moved(d, nd, names):
        names[:] = [nd + f[len(d):] if f.startswith(d + "/") else f for f in names]

    while len(ops) < n:
        p = rng.random()
        if p < 0.16 or len(files) < 2:
            name = fresh("f")
            ops.append(("write", name, "t%d" % len(ops), rng.choice(SIZES)))
            files.append(name)
        elif p < 0.23:
            ops.append(("pwrite", rng.choice(files), rng.choice([0, 10, 4000, 8192]),
                        "t%d" % len(ops), rng.choice([1, 100, 5000])))
        elif p < 0.31:
            ops.append(("append", rng.choice(files), "t%d" % len(ops),
                        rng.choice([10, 100, 4096, 6000])))
        elif p < 0.37:
            src = rng.choice(files)
            dst = fresh("l")
            ops.append(("link", src, dst))
            files.append(dst)
        elif p < 0.47:
            src = rng.choice(files)
            if rng.random() < 0.4:
                dst = rng.choice(files)
            else:
                dst = fresh("r")
            ops.append(("rename", src, dst))
            if m.names.get(dst) != m.names[src]:
                files.remove(src)
                if dst not in files:
                    files.append(dst)
        elif p < 0.57:
            name = rng.choice(files)
            ops.append(("unlink", name))
            files.remove(name)
        elif p < 0.62:
            name = fresh("d")
            ops.append(("mkdir", name))
            dirs.append(name)
        elif p < 0.65 and dirs:
            d = rng.choice(dirs)
            if not any(f.startswith(d + "/") for f in files + links):
                ops.append(("rmdir", d))
                dirs.remove(d)
        elif p < 0.68 and dirs:
            d = rng.choice(dirs)
            nd = "%s/m%d" % (base, len(ops))
            ops.append(("rename", d, nd))
            dirs[dirs.index(d)] = nd
            moved(d, nd, files)
            moved(d, nd, links)
        elif p < 0.75:
            name = fresh("s")
            if rng.random() < 0.4:
                target = long_target("t%d" % len(ops), rng.choice([4089, 4094, 4095]))
            else:
                target = "t%d/%s" % (len(ops), "y" * rng.choice([1, 60, 600]))
            ops.append(("symlink", target, name))
            links.append(name)
        elif p < 0.79 and links:
            name = rng.choice(links)
            links.remove(name)
            if rng.random() < 0.5:
                ops.append(("unlink", name))
            else:
                dst = fresh("r")
                ops.append(("rename", name, dst))
                links.append(dst)
        elif p < 0.85 and len(held) < 4:
            ops.append(("hold", rng.choice(files), len(ops)))
            held.append(len(ops) - 1)
        elif p < 0.89 and held:
            ops.append(("release", held.pop(0)))
        elif p < 0.93:
            name = rng.choice(files)
            ops.append(("openunlink", name, "t%d" % len(ops), rng.choice([1, 100, 5000])))
            files.remove(name)
        else:
            ops.append(("truncate", rng.choice(files), rng.choice([0, 1, 100, 4096, 7000])))
        while len(m_applied) < len(ops):
            m.apply(ops[len(m_applied)])
            m_applied.append(1)
    return ops


class Model:
    """Names -> ('d',) for directories, ('l', target, k) for symlinks or an
    inode id; inode id -> bytes."""

    def __init__(self):
        self.names = {}
        self.data = {}
        self.next = 0

    def copy(self):
        m = Model()
        m.names = dict(self.names)
        m.data = dict(self.data)
        m.next = self.next
        return m

    def apply(self, op):
        kind = op[0]
        if kind == "mkdir":
            self.names[op[1]] = ("d",)
        elif kind == "write":
            ino = self.names.get(op[1])
            if ino is None:
                self.next += 1
                ino = self.next
                self.names[op[1]] = ino
            self.data[ino] = data(op[2], op[3])
        elif kind == "pwrite":
            self._pwrite(self.names[op[1]], op[2], data(op[3], op[4]))
        elif kind == "openunlink":
            self._pwrite(self.names.pop(op[1]), 0, data(op[2], op[3]))
        elif kind == "symlink":
            self.next += 1
            self.names[op[2]] = ("l", op[1], self.next)
        elif kind == "append":
            ino = self.names[op[1]]
            self.data[ino] = self.data[ino] + data(op[2], op[3])
        elif kind == "link":
            self.names[op[2]] = self.names[op[1]]
        elif kind == "rename":
            src, dst = op[1], op[2]
            if self.names.get(dst) == self.names[src] and isinstance(self.names[src], int):
                return			# same inode: nothing changes
            pre = src + "/"
            for n in [n for n in self.names if n == src or n.startswith(pre)]:
                self.names[dst + n[len(src):]] = self.names.pop(n)
        elif kind in ("unlink", "rmdir"):
            del self.names[op[1]]
        elif kind == "truncate":
            ino = self.names[op[1]]
            old = self.data[ino]
            self.data[ino] = old[:op[2]] + bytes(max(0, op[2] - len(old)))

    def _pwrite(self, ino, off, new):
        old = self.data[ino]
        buf = bytearray(old) + bytes(max(0, off + len(new) - len(old)))
        buf[off:off + len(new)] = new
        self.data[ino] = bytes(buf)

    def files(self, base):
        return {n: v for n, v in self.names.items() if n == base or n.startswith(base + "/")}


def extra_ops(base):
    """The protocols gen_ops() leaves out, in directory base (no model:
    tests/test_zombie_fence.py checks them with fsck): extended
    attributes in a page of their own, fallocate's punch and zero, 2 MiB
    runs and a cut inside one, O_TMPFILE linked and dropped, chattr, a
    truncate that zeroes a tail, and frees of all of it."""
    MiB = 1 << 20
    return [
        ("mkdir", base),
        ("write", base + "/a", "xa", 9000),
        ("setxattr", base + "/a", "user.a", 6000),
        ("setxattr", base + "/a", "user.a", 5000),
        ("removexattr", base + "/a", "user.a"),
        ("write", base + "/b", "xb", 64 * 1024),
        ("punch", base + "/b", 8192, 16384),
        ("zero", base + "/b", 30000, 20000),
        ("write", base + "/run", "xr", 4 * MiB),
        ("truncate", base + "/run", 3 * MiB + 100),
        ("pwrite", base + "/run", MiB, "xp", 5000),
        ("tmpfile", base, base + "/t", "xt", 12000),
        ("tmpfile", base, None, "xu", 12000),
        ("setflags", base + "/a", 0x20),
        ("setflags", base + "/a", 0),
        ("truncate", base + "/a", 5000),
        ("truncate", base + "/a", 9000),
        ("unlink", base + "/b"),
        ("unlink", base + "/run"),
        ("unlink", base + "/t"),
    ]


def do_op(r, op, held):
    """Runs op; held maps a hold's index to its open File."""
    kind = op[0]
    if kind == "mkdir":
        r.mkdir(op[1])
    elif kind == "write":
        r.write_file(op[1], data(op[2], op[3]))
    elif kind == "pwrite":
        with r.open(op[1]) as f:
            f.pwrite(data(op[3], op[4]), op[2])
    elif kind == "append":
        with r.open(op[1]) as f:
            f.append(data(op[2], op[3]))
    elif kind == "link":
        r.link(op[1], op[2])
    elif kind == "rename":
        r.rename(op[1], op[2])
    elif kind == "unlink":
        r.unlink(op[1])
    elif kind == "rmdir":
        r.rmdir(op[1])
    elif kind == "truncate":
        r.truncate(op[1], op[2])
    elif kind == "symlink":
        r.symlink(op[1], op[2])
    elif kind == "hold":
        held[op[2]] = r.open(op[1])
    elif kind == "release":
        held.pop(op[1]).close()
    elif kind == "setxattr":
        r.setxattr(op[1], op[2], data(op[1], op[3]))
    elif kind == "removexattr":
        r.removexattr(op[1], op[2])
    elif kind in ("punch", "zero"):
        with r.open(op[1]) as f:
            if kind == "punch":
                f.punch_hole(op[2], op[3])
            else:
                f.zero_range(op[2], op[3])
    elif kind == "tmpfile":
        with r.tmpfile(op[1]) as f:
            f.pwrite(data(op[3], op[4]), 0)
            if op[2]:
                r.link_open(f, op[2])
    elif kind == "setflags":
        r.setflags(op[1], op[2])
    elif kind == "openunlink":
        with r.open(op[1]) as f:
            r.unlink(op[1])
            body = data(op[2], op[3])
            f.pwrite(body, 0)
            if f.pread(len(body), 0) != body:
                raise AssertionError("open unlinked file reads back wrong")


def victim(region, logpath, seed, nops, base):
    import daxfs
    ops = gen_ops(seed, nops, base)
    fd = os.open(logpath, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    r = daxfs.Region(region)
    os.write(fd, b"J\n")
    held = {}
    for i, op in enumerate(ops):
        os.write(fd, b"B %d\n" % i)
        do_op(r, op, held)
        os.write(fd, b"E %d\n" % i)
    r.reclaim()
    # leaving runs protocols too (open.unlinked when files are still
    # open, reclaim.*): "D" only once the slot is given back
    r.close()
    os.write(fd, b"D\n")


def _victim_until(region, logpath, seed, nops, base, stop_errno, mark):
    """victim() whose first call failing with stop_errno ends the workload
    ("MARK i": op i failed); then it closes the region.  Seed -1: the
    extra_ops() workload."""
    import daxfs
    ops = extra_ops(base) if seed == -1 else gen_ops(seed, nops, base)
    fd = os.open(logpath, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    r = daxfs.Region(region)
    os.write(fd, b"J\n")
    held = {}
    try:
        for i, op in enumerate(ops):
            os.write(fd, b"B %d\n" % i)
            do_op(r, op, held)
            os.write(fd, b"E %d\n" % i)
        r.reclaim()
    except OSError as e:
        if e.errno != stop_errno:
            raise
        os.write(fd, b"%s %d\n" % (mark, i))
    r.close()
    os.write(fd, b"D\n")


def shut_victim(region, logpath, seed, nops, base):
    """victim() for DAXFS_CRASH_STOP=shutdown: the host shuts down at the
    point and goes on; the first call that then fails (EIO) ends the
    workload ("S i": op i failed), and close() gives the slot up DEAD,
    as daxfs.ko's unmount after FS_IOC_SHUTDOWN does."""
    import errno
    _victim_until(region, logpath, seed, nops, base, errno.EIO, b"S")


def zombie_victim(region, logpath, seed, nops, base):
    """victim() for DAXFS_CRASH_STOP=1 at a point where the test declares
    the host dead while it is stopped: once continued, the first call
    that fails with ESTALE (the outcome unknown, recovery settled it)
    ends the workload ("Z i": op i failed), and close() leaves a slot
    that is no longer ours (it touches nothing there)."""
    import errno
    _victim_until(region, logpath, seed, nops, base, errno.ESTALE, b"Z")


ROLES = {"victim": victim, "shut_victim": shut_victim,
         "zombie_victim": zombie_victim}


def spawn_victim(region, logpath, seed, nops, base, crash_at, crash_log=None,
                 lib=CRASH_LIB, stop=None, role=None):
    env = dict(os.environ)
    env["DAXFS_LIB"] = lib
    env["DAXFS_PYDIR"] = os.path.join(REPO, "python")
    env["PYTHONPATH"] = os.path.join(REPO, "python")
    if crash_at:
        env["DAXFS_CRASH_AT"] = crash_at
    else:
        env.pop("DAXFS_CRASH_AT", None)
    if crash_log:
        env["DAXFS_CRASH_LOG"] = crash_log
    env.pop("DAXFS_CRASH_STOP", None)
    if stop:
        env["DAXFS_CRASH_STOP"] = stop
    role = role or ("shut_victim" if stop == "shutdown" else "victim")
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), role,
                             region, logpath, str(seed), str(nops), base], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def read_log(logpath):
    """(operations logged complete, index in flight or None, finished)."""
    done, inflight, finished = 0, None, False
    try:
        with open(logpath) as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        return 0, None, False
    for ln in lines:
        if ln.startswith("B "):
            inflight = int(ln[2:])
        elif ln.startswith("E "):
            done = int(ln[2:]) + 1
            inflight = None
        elif ln == "D":
            finished = True
    return done, inflight, finished


def tree(r, base):
    """The directory tree under base as the model shows it: names ->
    ('d',) or (ino, bytes)."""
    out = {}
    try:
        st = r.lstat(base)
    except FileNotFoundError:
        return out
    out[base] = ("d",)
    todo = [base]
    while todo:
        d = todo.pop()
        for name in r.listdir(d):
            p = d + "/" + name
            st = r.lstat(p)
            if (st.st_mode & 0o170000) == 0o040000:
                out[p] = ("d",)
                todo.append(p)
            elif (st.st_mode & 0o170000) == 0o120000:
                out[p] = ("l", r.readlink(p))
            elif (st.st_mode & 0o170000) == 0o020000:
                out[p] = ("c",)		# a whiteout (RENAME_WHITEOUT)
            else:
                out[p] = (st.st_ino, r.read_file(p))
    return out


def _same_shape(actual, model):
    """Names equal and hard links grouped alike."""
    if set(actual) != set(model.names):
        return False
    groups = {}
    for n, v in model.names.items():
        if not isinstance(v, int):	# a directory or a symlink
            if actual[n] != v[:2]:
                return False
            continue
        if actual[n][0] in ("d", "l"):
            return False
        groups.setdefault(v, set()).add(actual[n][0])
    return all(len(s) == 1 for s in groups.values())


def _torn_ok(got, old, new):
    if len(got) > max(len(old), len(new)):
        return False
    for i, b in enumerate(got):
        if b != 0 and (i >= len(old) or b != old[i]) and (i >= len(new) or b != new[i]):
            return False
    return True


def check_victim(r, ops, done, inflight, may_tear=None, model=None):
    """Asserts the victim's directory is what its log allows; returns
    which state matched ('before', 'after').  may_tear(op): whether the
    in-flight op may leave its file torn (default: any op may); model:
    the Model class that applies ops (default Model)."""
    base = ops[0][1]
    before = (model or Model)()
    for op in ops[:done]:
        before.apply(op)
    after = before.copy()
    if inflight is not None and inflight < len(ops):
        after.apply(ops[inflight])
    actual = tree(r, base)
    errors = []
    for label, m in (("before", before), ("after", after)):
        if not _same_shape(actual, m):
            errors.append("%s: names %s" % (label, sorted(set(actual) ^ set(m.names))))
            continue
        bad = []
        for n, v in m.names.items():
            if not isinstance(v, int):
                continue
            got = actual[n][1]
            want = m.data[v]
            if got == want:
                continue
            other = (before if label == "after" else after)
            ov = other.names.get(n)
            old = other.data.get(ov, b"") if isinstance(ov, int) else b""
            if inflight is not None and \
                    (may_tear is None or may_tear(ops[inflight])) and \
                    _torn_ok(got, old, want):
                continue	# the in-flight op's own file, torn
            bad.append((n, len(got), len(want)))
        if not bad:
            return label
        errors.append("%s: contents differ %s" % (label, bad[:5]))
    raise AssertionError("victim dir %s after %d ops (in flight %r: %r): %s" %
                         (base, done, inflight,
                          ops[inflight] if inflight is not None else None,
                          "; ".join(errors)))


if __name__ == "__main__":
    if sys.argv[1] in ROLES:
        ROLES[sys.argv[1]](sys.argv[2], sys.argv[3], int(sys.argv[4]),
                           int(sys.argv[5]), sys.argv[6])


CHANGE_FLIGHT_SHIFT = 48       # format.h DAXFS_CHANGE_FLIGHT_SHIFT


def settled(change):
    """A change counter that shows no entry change in flight: only such a word vouches for
    a name or a listing (docs/kernel.md "Changes in flight")."""
    return change >> CHANGE_FLIGHT_SHIFT == 0


def unsettled_counters(r, base="/"):
    """Every path under base whose inode's change counter still shows a change in flight,
    with the number in flight."""
    out, todo = [], [base]
    while todo:
        d = todo.pop()
        for n, ino, dt, _ in r.scandir(d):
            p = d.rstrip("/") + "/" + n
            try:
                c = r.lstat(p).st_change
            except OSError:
                continue
            if not settled(c):
                out.append((p, c >> CHANGE_FLIGHT_SHIFT))
            if dt == NameWatch.DT_DIR:
                todo.append(p)
    st = r.lstat(base)
    if not settled(st.st_change):
        out.append((base, st.st_change >> CHANGE_FLIGHT_SHIFT))
    return out


class NameWatch:
    """What daxfs.ko trusts a cached name by (docs/kernel.md "Dentries"), checked from
    another host while a victim works and dies under base: every change of a directory's
    entries moves the directory's change counter after it is published, and every removal
    of a name of an inode moves the inode's, recovery included.  So a counter read before a
    lookup vouches for what the lookup found while the counter stands.

    sample() lists every directory under base, keeping what a listing found while the
    directory's counter held across it, and looks each name up again after reading its
    inode's counter.  check(), once all is quiet, holds every sample taken at a counter that
    still stands to what the names map to now: a name that changed with no move after it
    (say, a dead host's create that recovery finished silently) fails it."""

    DT_DIR = 4

    def __init__(self, r, base):
        self.r, self.base = r, base
        self.dirs = {}          # (dir ino, change) -> set of frozen {name: ino}
        self.names = {}         # (ino, change) -> set of paths it had
        self.samples = 0

    def _stat(self, path):
        try:
            return self.r.lstat(path)
        except OSError:
            return None

    def sample(self):
        todo = [self.base]
        while todo:
            d = todo.pop()
            st = self._stat(d)
            try:
                ents = list(self.r.scandir(d))
            except OSError:
                continue
            st2 = self._stat(d)
            if not st or not st2 or st.st_ino != st2.st_ino:
                continue
            if st.st_change == st2.st_change and settled(st.st_change):
                self.dirs.setdefault((st.st_ino, st.st_change), set()).add(
                    frozenset((n, i) for n, i, _, _ in ents))
            for n, ino, dt, _ in ents:
                p = d + "/" + n
                if dt == self.DT_DIR:
                    todo.append(p)
                try:
                    c = self.r.fstat(ino).st_change
                except OSError:
                    continue
                now = self._stat(p)
                st3 = self._stat(d)
                if (now and now.st_ino == ino and st3 and st3.st_ino == st.st_ino
                        and settled(c)):
                    self.names.setdefault((ino, c), set()).add((st.st_ino, n))
        self.samples += 1

    def check(self):
        """Call once nothing changes any more (the victim recovered)."""
        for (dino, c), seen in self.dirs.items():
            for ents in seen:
                path = self._path_of_dir(dino)
                if path is None:
                    continue
                st = self._stat(path)
                if not st or st.st_change != c:
                    continue
                now = frozenset((n, i) for n, i, _, _ in self.r.scandir(path))
                st = self._stat(path)
                if not st or st.st_change != c:
                    continue        # moved under the listing (a recovery)
                assert ents == now, ("directory %s (inode %d) changed with its counter "
                                     "standing at %d: +%s -%s" % (
                                         path, dino, c, sorted(now - ents)[:5],
                                         sorted(ents - now)[:5]))
        for (ino, c), names in self.names.items():
            try:
                if self.r.fstat(ino).st_change != c:
                    continue
            except OSError:
                continue        # gone: no name left to trust
            for dino, n in names:
                # by directory: a rename of a directory above moves no counter of ours
                d = self._path_of_dir(dino)
                st = self._stat(d + "/" + n) if d else None
                try:
                    if self.r.fstat(ino).st_change != c:
                        continue    # moved under the lookup (a recovery)
                except OSError:
                    continue
                assert st and st.st_ino == ino, (
                    "%s in directory %d no longer names inode %d, whose counter stands "
                    "at %d" % (n, dino, ino, c))

    def _path_of_dir(self, dino):
        todo = [self.base]
        while todo:
            d = todo.pop()
            st = self._stat(d)
            if st and st.st_ino == dino:
                return d
            try:
                todo += [d + "/" + n for n, _, dt, _ in self.r.scandir(d) if dt == self.DT_DIR]
            except OSError:
                pass
        return None
