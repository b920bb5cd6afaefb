"""Crash injection at named protocol points and at random points
(docs/recovery.md).

A victim process (its own host, loading the crash build of libdaxfs:
`make crash`) runs a deterministic workload and SIGKILLs itself at a
chosen daxfs_crash_point() -- or at random points -- while this process
(another host) keeps creating, writing, reading back, renaming and
deleting its own files on the same region.  Then:

  * the survivor never waited longer than about one lease for anything;
  * once the victim's lease ran out, the survivor recovers it (its slot
    shows 'recovered' in daxfs info) and the victim's directory is exactly
    the state after its last operation logged complete, or (for the one in
    flight) after that one -- torn file contents allowed only as old/new
    bytes or zeros;
  * fsck.daxfs -n is clean, or reports only what -y repairs (then clean);
  * the pool is accounted exactly: fsck's used_bytes equals what is
    reachable (+ limbo not yet reclaimable), nothing leaked.
"""

import glob
import json
import os
import random
import subprocess
import sys
import threading
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

LEASE_MS = 300
RANDOM_LEASE_MS = 1000
SLACK_S = 3.0			# a wedged survivor waits forever; this only tells
				# it from scheduling noise (seen: 1.9 s on a loaded
				# 2-core machine with four builds running)
SIZE = 48 * env.MiB


@pytest.fixture
def region():
    path = env.region_path("crash")
    env.mkfs(path, SIZE, lease_ms=LEASE_MS)
    yield path
    env.remove(path)
    for suffix in (".log", ".points"):
        env.remove(path + suffix)
    for extra in glob.glob(glob.escape(path) + ".*.log"):
        env.remove(extra)


class Survivor(threading.Thread):
    """Works in /s on its own host; times every operation."""

    def __init__(self, r, seed):
        super().__init__(daemon=True)
        self.r = r
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.lat = []			# (start time, seconds)
        self.files = {}
        self.error = None
        self.ops = 0

    def run(self):
        try:
            self._run()
        except BaseException as e:	# reported by the test
            self.error = e

    def _timed(self, fn, *a):
        t = time.monotonic()
        out = fn(*a)
        self.lat.append((t, time.monotonic() - t))
        return out

    def _run(self):
        r, rng = self.r, self.rng
        self._timed(r.makedirs, "/s")
        k = 0
        while not self.stop.is_set():
            k += 1
            p = rng.random()
            names = sorted(self.files)
            if p < 0.35 or len(names) < 3:
                name = "/s/f%d" % k
                body = cl.data("s%d" % k, rng.choice([0, 100, 4096, 9000]))
                self._timed(r.write_file, name, body)
                self.files[name] = body
            elif p < 0.65:
                name = rng.choice(names)
                got = self._timed(r.read_file, name)
                assert got == self.files[name], "survivor read wrong data in %s" % name
            elif p < 0.8:
                src = rng.choice(names)
                dst = "/s/r%d" % k
                self._timed(r.rename, src, dst)
                self.files[dst] = self.files.pop(src)
            else:
                name = rng.choice(names)
                self._timed(r.unlink, name)
                del self.files[name]
            self.ops += 1

    def check(self):
        for name, body in self.files.items():
            assert self.r.read_file(name) == body


def fsck_json(path, mode):
    exe = env.tool("fsck.daxfs")
    res = subprocess.run([exe, mode, "--json", path], capture_output=True, text=True,
                         timeout=120)
    return res.returncode, json.loads(res.stdout)


def fsck_cycle(path):
    """-n clean, or 4 and -y (1) then -n clean; returns the codes fixed."""
    code, rep = fsck_json(path, "-n")
    fixed = []
    if code == 4:
        fixed = sorted({p["code"] for p in rep["problems"]})
        c2, _ = fsck_json(path, "-y")
        assert c2 == 1, "fsck -y: %d" % c2
        code, rep = fsck_json(path, "-n")
    assert code == 0, "fsck -n after recovery: %d %s" % (code, rep["problems"][:5])
    s = rep["summary"]
    assert s["leaked_bytes"] == 0, s
    # pool usage is what the live files need (+ limbo waiting for epochs)
    assert s["used_bytes"] == s["reachable_bytes"] + s["limbo_bytes"] + s["batch_bytes"], s
    return fixed


def wait_victim(p, timeout=60):
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise AssertionError("victim did not die or finish in %ds" % timeout)


def recover(r, sv, lease_ms=LEASE_MS):
    """Lets the victim's lease run out, then recovers it from this host."""
    time.sleep(lease_ms / 1000 * 1.3)
    r.reclaim()


def max_block(sv, since):
    lats = [d for t, d in sv.lat if t + d >= since]
    return max(lats) if lats else 0.0


class Watcher(threading.Thread):
    """Samples the victim's names from this host until stopped (crashlib.NameWatch)."""

    def __init__(self, r, base):
        super().__init__(daemon=True)
        self.nw = cl.NameWatch(r, base)
        self.stop = threading.Event()
        self.error = None

    def run(self):
        try:
            while not self.stop.is_set():
                self.nw.sample()
                time.sleep(0.002)
        except BaseException as e:	# reported by the test
            self.error = e


def one_run(path, point, nth, seed):
    ops = cl.gen_ops(seed, 400, "/v")
    log = path + ".log"
    env.remove(log)
    with daxfs.Region(path) as r:
        sv = Survivor(r, seed)
        sv.start()
        nw = Watcher(r, "/v")
        nw.start()
        p = cl.spawn_victim(path, log, seed, len(ops), "/v", "%s:%d" % (point, nth),
                            crash_log=path + ".points")
        wait_victim(p)
        died = time.monotonic()
        done, inflight, finished = cl.read_log(log)
        recover(r, sv)
        time.sleep(0.1)
        sv.stop.set()
        sv.join(30)
        nw.stop.set()
        nw.join(30)
        assert sv.error is None, "survivor failed: %r" % sv.error
        assert nw.error is None, "name watcher failed: %r" % nw.error
        assert nw.nw.samples > 0
        nw.nw.check()
        assert max_block(sv, died) < LEASE_MS / 1000 + SLACK_S, \
            "survivor blocked %.2fs" % max_block(sv, died)
        if finished:
            assert p.returncode == 0, p.stderr.read()[-3000:]
            return None
        assert p.returncode == -9, "victim: %s %s" % (p.returncode, p.stderr.read()[-3000:])
        states = [h["state"] for h in r.info()["hosts"] if not h["self"]]
        assert "recovered" in states and "alive" not in states, states
        matched = cl.check_victim(r, ops, done, inflight)
        sv.check()
    fixed = fsck_cycle(path)
    return matched, fixed


@pytest.mark.parametrize("point", cl.POINTS)
def test_named_point(crash_build, region, point):
    """Two runs per point (first and a later hit), each checked."""
    outcomes = []
    for nth, seed in ((1, 11), (3, 12)):
        if nth > 1:
            env.mkfs(region, SIZE, lease_ms=LEASE_MS)
        outcomes.append(one_run(region, point, nth, seed))
    # the workload reaches every point at least on its first hit
    assert outcomes[0] is not None, "point %s never reached" % point
    with open(region + ".points") as f:
        assert f.read().split()[0] == point


def test_info_shows_recovered(crash_build, region):
    one_run(region, "rename.published", 1, 5)
    exe = env.tool("daxfs")
    out = subprocess.run([exe, "-r", region, "info", "--json"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    hosts = json.loads(out.stdout)["hosts"]
    rec = [h for h in hosts if h["state"] == "recovered"]
    assert rec and rec[0]["recovered_ns"] > 0 and "lease_age_ms" in rec[0]
    text = subprocess.run([exe, "-r", region, "info"], capture_output=True, text=True,
                          timeout=60).stdout
    assert "recovered" in text


RANDOM_VICTIMS = int(os.environ.get("DAXFS_CRASH_RANDOM_RUNS", "150"))


def test_random_points(crash_build, region):
    """Victims die at random crash points (probability per point), one
    after another, on one region while the survivor works; every victim's
    directory is checked at the end.

    150 victims live long enough that on a loaded machine one may stall
    past a 300 ms lease while alive: it is then declared dead, libdaxfs
    rejoins it as a new host, and an operation it had in flight may have
    been rolled back by recovery although it returned success (the open
    problem in docs/libdaxfs.md, "Declared dead while busy").  A longer
    lease keeps this test about crash points."""
    lease_ms = RANDOM_LEASE_MS
    env.mkfs(region, 256 * env.MiB, lease_ms=lease_ms)
    runs = []
    with daxfs.Region(region) as r:
        sv = Survivor(r, 99)
        sv.start()
        worst = 0.0
        for k in range(RANDOM_VICTIMS):
            seed = 1000 + k
            base = "/v%d" % k
            log = "%s.%d.log" % (region, k)
            p = cl.spawn_victim(region, log, seed, 80, base, "random:0.01:%d" % seed,
                                crash_log=region + ".points")
            wait_victim(p)
            assert p.returncode in (0, -9), p.stderr.read()[-3000:]
            runs.append((base, log, seed, p.returncode))
            if k % 10 == 9:
                r.reclaim()
        died = time.monotonic()
        recover(r, sv, lease_ms)
        worst = max(max_block(sv, 0), worst)
        sv.stop.set()
        sv.join(30)
        assert sv.error is None, "survivor failed: %r" % sv.error
        assert worst < lease_ms / 1000 + SLACK_S, "survivor blocked %.2fs" % worst
        killed = 0
        for base, log, seed, rc in runs:
            done, inflight, finished = cl.read_log(log)
            ops = cl.gen_ops(seed, 80, base)
            cl.check_victim(r, ops, done, inflight)
            killed += rc == -9
            env.remove(log)
        sv.check()
        assert all(h["state"] != "alive" for h in r.info()["hosts"] if not h["self"])
    assert killed >= RANDOM_VICTIMS // 3, "only %d of %d victims died" % (killed, RANDOM_VICTIMS)
    with open(region + ".points") as f:
        hit = {ln.split()[0] for ln in f if ln.strip()}
    fsck_cycle(region)
    assert len(hit) >= 8, hit


def test_every_point_has_a_test():
    """A crash point added to core/ without a test here (POINTS,
    RECOVERY_POINTS) or in the file OTHER_POINTS names fails CI."""
    core = cl.core_points()
    tested = set(cl.POINTS) | set(cl.RECOVERY_POINTS) | set(cl.OTHER_POINTS)
    assert core - tested == set(), "crash points without a test"
    assert tested - core == set(), "tests for crash points core/ no longer has"
    here = os.path.dirname(os.path.abspath(__file__))
    for point, fn in cl.OTHER_POINTS.items():
        with open(os.path.join(here, fn)) as f:
            assert '"%s' % point in f.read(), "%s does not kill at %s" % (fn, point)


RECOVERER = r'''
import sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
r.watch_hosts()     # a fresh host times the others' leases first
r.reclaim()
r.close()
'''


def crash_log(path):
    with open(path) as f:
        return [ln.split()[0] for ln in f if ln.strip()]


# daxfs_open_drop() (core/openset.c) unlinks the set's pages from the slot
# one at a time, each with one CAS, and retires each right after: a host
# dying between the two (a recoverer, or a host leaving: open.unlinked)
# leaks that one page to fsck; the rest stays linked for the next recoverer.
OPEN_UNLINKED_LEAK = pytest.mark.xfail(
    strict=True, reason="one open-set page leaks when the recoverer dies at open.unlinked")


@pytest.mark.parametrize("point", [
    pytest.param(p, marks=OPEN_UNLINKED_LEAK) if p == "open.unlinked" else p
    for p in cl.RECOVERY_POINTS])
def test_recoverer_dies(crash_build, region, point):
    """A victim dies in the middle of a rename holding open files (one of
    them unlinked); a second host dies while recovering it, at point; a
    third host, working all along, recovers both: the victim's rename is
    finished, its orphan freed, fsck clean with nothing to repair."""
    seed, nops = 11, 400
    ops = cl.gen_ops(seed, nops, "/v")
    log = region + ".log"
    p = cl.spawn_victim(region, log, seed, nops, "/v", "rename.published:12",
                        crash_log=region + ".points")
    wait_victim(p)
    assert p.returncode == -9 and crash_log(region + ".points") == ["rename.published"]
    with daxfs.Region(region, join=False) as ro:
        held = [h["open_files"] for h in ro.info()["hosts"] if h["state"] == "alive"]
    assert held and held[0] > 0, held	# the recoverer has opens to settle
    time.sleep(LEASE_MS / 1000 * 1.3)
    rec_log = region + ".rec.log"
    env.remove(rec_log)
    renv = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB, DAXFS_CRASH_AT=point,
                DAXFS_CRASH_LOG=rec_log)
    rec = subprocess.run([sys.executable, "-c", RECOVERER, region,
                          os.path.join(cl.REPO, "python")], env=renv,
                         capture_output=True, text=True, timeout=120)
    assert rec.returncode == -9, "recoverer: %s %s" % (rec.returncode, rec.stderr[-2000:])
    assert crash_log(rec_log) == [point]
    died = time.monotonic()
    with daxfs.Region(region) as r:
        sv = Survivor(r, seed)
        sv.start()
        recover(r, sv)
        time.sleep(LEASE_MS / 1000)
        r.reclaim()
        sv.stop.set()
        sv.join(30)
        assert sv.error is None, "survivor failed: %r" % sv.error
        assert max_block(sv, died) < LEASE_MS / 1000 + SLACK_S, \
            "survivor blocked %.2fs" % max_block(sv, died)
        others = [h for h in r.info()["hosts"] if not h["self"]]
        assert [h["state"] for h in others] == ["recovered", "recovered"], others
        assert all(h["open_files"] == 0 for h in others)
        done, inflight, _ = cl.read_log(log)
        assert ops[inflight][0] == "rename"
        assert cl.check_victim(r, ops, done, inflight) == "after"
        sv.check()
    assert fsck_cycle(region) == []
