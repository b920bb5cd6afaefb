"""A hostile peer: hosts keep working while daxfs-chaos corrupts the region.

Several worker processes (each its own host through libdaxfs) run random
operations on private and shared directories, files, symlinks and
reclamation, while build/bin/daxfs-chaos writes random values into random
live words of the region (directory leaves, trie slots, inodes, radix
nodes, symlink records, free and limbo chains, open sets, host table,
lanes, state page; docs/tools.md "daxfs-chaos").  What a user may expect
(issue "Trust under concurrency", defect 5):

  * no worker dies of a signal (a wild load or store, an abort);
  * no operation hangs: a watchdog in each worker ends it with HANG_EXIT
    when one operation runs longer than HANG_S (a bound far above any
    legitimate wait: a lease is 2 s);
  * every failed operation fails with EUCLEAN or EIO, or with an errno a
    user would expect from the operation (ENOENT, ENOTDIR ...);
  * once the chaos and the hosts stop, `fsck.daxfs -y` repairs the region
    and a second `fsck.daxfs -n` finds it clean.

Run as a script for long soaks outside CI (docs/testing.md "Chaos"):
    python3 tests/test_chaos.py soak SECONDS_PER_ROUND ROUNDS [SEED [RATE]]
(RATE: corruptions a second, 0 = as fast as the tool can)
"""

import errno
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
_PY = os.environ.get("DAXFS_PYDIR", os.path.join(_ROOT, "python"))
for _p in (_PY, _HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import daxfs  # noqa: E402
import pytest  # noqa: E402

BUILD = os.environ.get("DAXFS_BUILD", os.path.join(_ROOT, "build"))
HANG_S = 60.0
HANG_EXIT = 97
SHARED = "/shared"
NAMES = 12

# What an operation may fail with under corruption: the two a corrupt
# structure gives, and what the same operation gives on a healthy
# filesystem when names race or a corrupt entry names another type.
ALLOWED = {errno.EUCLEAN, errno.EIO, errno.ENOENT, errno.EEXIST,
           errno.ENOTDIR, errno.EISDIR, errno.ENOTEMPTY, errno.EINVAL,
           errno.ELOOP, errno.ESTALE, errno.ENOSPC, errno.EFBIG,
           errno.ENAMETOOLONG, errno.EPERM, errno.EACCES, errno.EXDEV,
           errno.EBUSY, errno.EMLINK}

# Namespace operations wait a bounded time (a few leases) for a name
# that a peer is changing, then give up with EAGAIN (docs/namespace.md);
# a corrupt entry that never settles ends the same way.  So does the
# creation of an inode (write, append, pwrite create their file) whose
# overlay bucket a claim nobody resolves holds (docs/overlay.md).
WAITING_OPS = ("rename", "unlink", "rmdir", "mkdir", "link", "symlink",
               "write", "append", "pwrite")

OPS = ("write", "append", "pwrite", "read", "stat", "readdir", "unlink",
       "truncate", "rename", "mkdir", "rmdir", "symlink", "readlink",
       "link", "reclaim", "statfs")
WEIGHTS = (5, 3, 3, 5, 4, 5, 3, 2, 2, 2, 1, 2, 3, 1, 1, 1)


# ---------------------------------------------------------------- worker

def _native_stacks():
    """Where this process is stuck, from gdb when it is installed."""
    if not shutil.which("gdb"):
        return ""
    try:
        return subprocess.run(["gdb", "-p", str(os.getpid()), "-batch", "-ex",
                               "thread apply all bt 30"], capture_output=True,
                              text=True, timeout=120).stdout[-8000:]
    except (OSError, subprocess.SubprocessError):
        return ""


class Watchdog(threading.Thread):
    """Ends the process when one operation runs longer than HANG_S.

    ctypes drops the GIL inside the library, so this thread runs while
    the main thread is stuck in a core walk."""

    def __init__(self):
        super().__init__(daemon=True)
        self.op = None
        self.since = None

    def begin(self, op):
        self.op, self.since = op, time.monotonic()

    def end(self):
        self.since = None

    def run(self):
        # DAXFS_CHAOS_SLOW=SECONDS:FILE appends the stacks of every
        # operation slower than SECONDS to FILE (once per operation), to
        # find what a slow wait waits on before it becomes a hang
        slow, _, slow_log = os.environ.get("DAXFS_CHAOS_SLOW",
                                           "").partition(":")
        dumped = None
        while True:
            time.sleep(1.0)
            since = self.since
            if (slow_log and since is not None and since != dumped and
                    time.monotonic() - since > float(slow)):
                dumped = since
                with open(slow_log, "a") as f:
                    f.write("SLOW %s (pid %d)\n%s\n" % (
                        self.op, os.getpid(), _native_stacks()))
            if since is not None and time.monotonic() - since > HANG_S:
                sys.stderr.write("HANG in %s\n" % self.op)
                sys.stderr.write(_native_stacks())
                sys.stderr.flush()
                os._exit(HANG_EXIT)


def _do(r, rnd, op, mine):
    pick = rnd.choice(mine) if rnd.random() < 0.6 else \
        "%s/s%d" % (SHARED, rnd.randrange(NAMES))
    other = rnd.choice(mine) if rnd.random() < 0.5 else \
        "%s/s%d" % (SHARED, rnd.randrange(NAMES))
    if op == "write":
        r.write_file(pick, os.urandom(rnd.choice((0, 100, 5000, 40000))))
    elif op == "append":
        with r.open(pick, create=True) as f:
            f.append(b"a" * rnd.randrange(1, 9000))
    elif op == "pwrite":
        with r.open(pick, create=True) as f:
            f.pwrite(b"p" * rnd.randrange(1, 9000), rnd.randrange(0, 200000))
    elif op == "read":
        with r.open(pick) as f:
            f.pread(65536, rnd.randrange(0, 100000))
    elif op == "stat":
        r.lstat(pick)
    elif op == "readdir":
        r.listdir(os.path.dirname(pick))
    elif op == "unlink":
        r.unlink(pick)
    elif op == "truncate":
        r.truncate(pick, rnd.randrange(0, 100000))
    elif op == "rename":
        r.rename(pick, other)
    elif op == "mkdir":
        r.mkdir(pick)
    elif op == "rmdir":
        r.rmdir(pick)
    elif op == "symlink":
        # short targets live in the inode, long ones in a record
        r.symlink("t" * rnd.choice((3, 40, 300, 3000)), pick)
    elif op == "readlink":
        r.readlink(pick)
    elif op == "link":
        r.link(pick, other)
    elif op == "reclaim":
        r.reclaim()
    elif op == "statfs":
        r.statfs()


def _stop_time(go):
    """The end of the round, once the driver has written it."""
    while not os.path.exists(go):
        time.sleep(0.01)
    with open(go) as f:
        return float(f.read())


def worker(path, seed, go):
    """One host until the round ends; prints a JSON summary."""
    rnd = random.Random(seed)
    dog = Watchdog()
    dog.start()
    # slowest: the longest operation (seconds, name), to watch waits
    # that grow towards the watchdog's bound
    res = {"ops": 0, "ok": 0, "errors": {}, "bad": {}, "slowest": [0, ""]}
    mine = ["/w%d/f%d" % (seed, i) for i in range(NAMES)]
    try:
        r = daxfs.Region(path)
        r.makedirs("/w%d" % seed)
    finally:
        print("joined", flush=True)	# the driver starts the chaos
    stop_at = _stop_time(go)
    while time.time() < stop_at:
        op = rnd.choices(OPS, WEIGHTS)[0]
        dog.begin(op)
        try:
            _do(r, rnd, op, mine)
            res["ok"] += 1
        except OSError as e:
            name = errno.errorcode.get(e.errno, str(e.errno))
            key = "%s:%s" % (op, name)
            fine = e.errno in ALLOWED or (e.errno == errno.EAGAIN and
                                          op in WAITING_OPS)
            group = "errors" if fine else "bad"
            res[group][key] = res[group].get(key, 0) + 1
        finally:
            took = time.monotonic() - dog.since
            dog.end()
            if took > res["slowest"][0]:
                res["slowest"] = [round(took, 2), op]
        res["ops"] += 1
    dog.begin("close")
    try:
        r.close()
    except OSError:
        pass
    dog.end()
    print(json.dumps(res), flush=True)


# ---------------------------------------------------------------- driver

def _tool(name):
    return os.path.join(BUILD, "bin", name)


def _populate(path):
    """Live structures for the chaos to find from the start."""
    r = daxfs.Region(path)
    try:
        r.mkdir(SHARED)
        for i in range(NAMES):
            if i % 3 == 0:
                r.symlink("x" * (20 + 200 * i), "%s/s%d" % (SHARED, i))
            else:
                r.write_file("%s/s%d" % (SHARED, i), b"d" * (3000 * i))
        r.mkdir(SHARED + "/sub")
    finally:
        r.close()


def run_round(path, seconds, seed, nworkers=3, rate=0, log=None,
              kinds=None, size=64 << 20, keep=None, source=None):
    """mkfs (a base image of the tree under source, if given), workers +
    chaos for `seconds`, then repair.  keep: a file to copy the damaged
    region to before the repair.  Returns a dict with the corruption
    count, the workers' summaries and the problems found (empty: the
    round passed)."""
    if source:
        subprocess.run([_tool("mkfs.daxfs"), "-q", "-f", "-s", str(size),
                        "--source", source, path], check=True)
    else:
        daxfs.mkfs(path, size, force=True)
    _populate(path)
    me = os.path.abspath(__file__)
    # the workers stop `seconds` after the last has joined (a slow
    # start on a loaded machine must not eat the round)
    go = os.path.join(os.path.dirname(path) or ".",
                      ".%s.go" % os.path.basename(path))
    workers = [subprocess.Popen([sys.executable, me, "worker", path,
                                 str(seed * 100 + i), go],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
               for i in range(nworkers)]
    for w in workers:
        w.stdout.readline()		# "joined" (or it died: seen below)
    with open(go + ".tmp", "w") as f:
        f.write(repr(time.time() + seconds))
    os.rename(go + ".tmp", go)
    cmd = [_tool("daxfs-chaos"), "-s", str(seed), "-t", str(seconds),
           "-r", str(rate), path]
    if log:
        cmd[1:1] = ["-l", log]
    if kinds:
        cmd[1:1] = ["-k", kinds]
    chaos = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=seconds + 120)
    problems = []
    if chaos.returncode != 0:
        problems.append("chaos exit %d: %s" % (chaos.returncode,
                                               chaos.stderr[-500:]))
    tried = int(chaos.stdout.split(":")[1].split()[0]) \
        if chaos.returncode == 0 else 0
    outs = []
    for w in workers:
        try:
            out, err = w.communicate(timeout=HANG_S + 60)
        except subprocess.TimeoutExpired:
            w.kill()
            out, err = w.communicate()
            problems.append("worker hung past its watchdog: %s" % err[-500:])
            continue
        if w.returncode == HANG_EXIT:
            problems.append("worker hung: %s" % err.strip()[-6000:])
        elif w.returncode < 0:
            problems.append("worker killed by signal %d: %s" % (
                -w.returncode, err[-1500:]))
        elif w.returncode != 0:
            problems.append("worker failed (%d): %s" % (w.returncode,
                                                        err[-1500:]))
        else:
            s = json.loads(out.strip().splitlines()[-1])
            outs.append(s)
            if s["bad"]:
                problems.append("unexpected errors: %s" % s["bad"])
    def left(out):
        return [ln for ln in out.splitlines()
                if not ln.endswith("FIXED") and "error" in ln][:12]

    os.unlink(go)
    if not keep and os.environ.get("DAXFS_CHAOS_KEEP"):
        keep = "%s/chaos-%d.img" % (os.environ["DAXFS_CHAOS_KEEP"], seed)
    if keep:			# the damaged image, for replaying fsck
        shutil.copyfile(path, keep)
    fsck = _tool("fsck.daxfs")
    fix = subprocess.run([fsck, "-y", path], capture_output=True, text=True,
                         timeout=300)
    forced = "NOT REPAIRING" in fix.stdout + fix.stderr
    if forced:
        # a host slot the chaos made ALIVE looks mounted (fsck cannot
        # judge a lease it has not watched; docs/testing.md "Chaos runs");
        # every worker has left, so -f is what its operator would use
        fix = subprocess.run([fsck, "-y", "-f", path], capture_output=True,
                             text=True, timeout=300)
    if fix.returncode not in (0, 1):
        problems.append("fsck -y exit %d: %s" % (
            fix.returncode, left(fix.stdout + fix.stderr)))
    again = subprocess.run([fsck, "-n", path], capture_output=True, text=True,
                           timeout=300)
    if again.returncode != 0:
        problems.append("fsck -n after -y exit %d: %s" % (
            again.returncode, left(again.stdout + again.stderr)))
    return {"seed": seed, "tried": tried, "workers": outs,
            "problems": problems, "forced": forced}


# ---------------------------------------------------------------- pytest

def test_chaos_workers_survive_and_fsck_repairs(region_path):
    """Three hosts and the chaos host (200 corruptions a second, every
    kind) for 20 s; no crash, no hang, only expected errors, and fsck
    brings the region back to clean."""
    res = run_round(region_path, 20, seed=1, rate=200)
    assert not res["problems"], "\n".join(res["problems"])
    assert res["tried"] > 0, res
    # the hosts joined before the chaos began and worked through it
    assert sum(w["ok"] for w in res["workers"]) > 0, res["workers"]


def test_chaos_issue5_fields_only(region_path):
    """The directory leaves (name_len, hash, next, ino), free-stack heads
    and links and limbo batches that issue 5 names, 1000 a second."""
    res = run_round(region_path, 15, seed=2, rate=1000,
                    kinds="dirent,free,limbo")
    assert not res["problems"], "\n".join(res["problems"])
    assert res["tried"] > 0, res


def soak(seconds, rounds, seed0, rate):
    """Repeated rounds; prints one line per round and the totals."""
    path = "/dev/shm/dxchaos-%d" % os.getpid()
    total = crashes = failed = forced = 0
    try:
        for i in range(rounds):
            res = run_round(path, seconds, seed0 + i, rate=rate)
            total += res["tried"]
            died = [p for p in res["problems"]
                    if "signal" in p or "hung" in p]
            crashes += len(died)
            failed += bool(res["problems"])
            forced += res["forced"]
            ok = sum(w["ok"] for w in res["workers"])
            slow = max((w.get("slowest", [0, ""]) for w in res["workers"]),
                       default=[0, ""])
            print("round %d seed %d: %d corruptions, %d ok ops, slowest "
                  "%.1f s (%s), %s%s" % (
                      i, seed0 + i, res["tried"], ok, slow[0], slow[1],
                      res["problems"] or "clean",
                      " (fsck -f)" if res["forced"] else ""), flush=True)
    finally:
        if os.path.exists(path):
            os.unlink(path)
    print("total: %d corruptions, %d crashes/hangs, %d failed rounds of %d"
          " (%d needed fsck -f)" % (total, crashes, failed, rounds, forced),
          flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        worker(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "soak":
        soak(float(sys.argv[2]), int(sys.argv[3]),
             int(sys.argv[4]) if len(sys.argv) > 4 else 1000,
             float(sys.argv[5]) if len(sys.argv) > 5 else 0)
