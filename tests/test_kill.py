"""Hosts killed with SIGKILL in the middle of their work.

Three worker processes (three hosts) create, overwrite, append to,
truncate, link, rename and unlink files, each logging every operation
before starting it and again once it has returned success (fsync'd before
going on; see tests/helpers/kill_workers.py).  The parent SIGKILLs a random
worker at a random moment, checks that the survivors keep making progress
(so a dead host's claims, leases and lanes do not wedge anybody), starts a
replacement, and repeats; the last round kills every worker at once.

The region is formatted with a 500 ms lease so dead hosts are found
quickly.  Afterwards:
  * fsck.daxfs -n on the crashed region exits 0, or 4 for leftovers that
    fsck.daxfs -y repairs (exit 0 or 1), after which -n exits 0;
  * every logged-successful operation's effect is there, on the repaired
    region and, independently, on a copy taken before fsck that a new
    host opens normally (host-side recovery of the dead hosts);
  * the dead hosts are declared dead and recovered (not left 'alive').
"""

import os
import random
import shutil
import time

import pytest

from helpers import env, kill_workers as kw, procs

daxfs = env.daxfs

LEASE_MS = 500
NWORKERS = 3
ROUNDS = 6
PROGRESS_OPS = 20  # a survivor must finish this many ops ...
PROGRESS_S = 20.0  # ... within this long after a kill
SEED = 424242


@pytest.fixture
def workdir():
    path = os.path.join(env.SHM, env.unique_name("kill-logs"))
    os.mkdir(path)
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Fleet:
    """The running workers, by worker id (one per incarnation)."""

    def __init__(self, region, logdir):
        self.region = region
        self.logdir = logdir
        self.stop = procs.StopFlag()  # workers get SIGKILLed: no locks
        self.running = {}
        self.all = {}
        self.killed = []
        self.declared = []  # wids whose hosts were declared dead
        self.next_wid = 0

    def log(self, wid):
        return os.path.join(self.logdir, "w%d.log" % wid)

    def start(self):
        wid = self.next_wid
        self.next_wid += 1
        p = procs.CTX.Process(target=kw.kill_worker, name="kill-worker-%d" % wid,
                              args=(wid, self.region, self.log(wid), SEED, self.stop),
                              daemon=True)
        p.start()
        self.running[wid] = self.all[wid] = p
        return wid

    def kill(self, wid):
        p = self.running.pop(wid)
        procs.kill(p)
        self.killed.append((wid, p.pid))

    def done(self, wid):
        return kw.count_done(self.log(wid))

    def failure(self, wid):
        """The worker's own traceback, if it logged one."""
        try:
            _, err = kw.parse_log(self.log(wid))
        except (OSError, AssertionError) as e:
            return str(e)
        return err

    def check_alive(self):
        """Raises for a worker that died; replaces one whose host was
        declared dead (starved past its lease on a loaded machine: it
        ended like a killed one).  Returns {old wid: replacement wid}."""
        replaced = {}
        for wid, p in list(self.running.items()):
            if p.is_alive():
                continue
            if p.exitcode != kw.DECLARED_DEAD_EXIT:
                raise AssertionError("worker %d died (exit %s):\n%s" % (
                    wid, p.exitcode, self.failure(wid)))
            del self.running[wid]
            self.killed.append((wid, p.pid))
            self.declared.append(wid)
            replaced[wid] = self.start()
        return replaced

    def wait_progress(self, wids, ops, timeout, why):
        base = {w: self.done(w) for w in wids}
        deadline = time.monotonic() + timeout
        while True:
            for old, new in self.check_alive().items():
                if base.pop(old, None) is not None:
                    base[new] = self.done(new)
            lag = {w: self.done(w) - base[w] for w in base}
            if all(n >= ops for n in lag.values()):
                return
            if time.monotonic() > deadline:
                raise AssertionError("%s: workers stalled: ops done in %.0f s: %s"
                                     % (why, timeout, lag))
            time.sleep(0.02)

    def shutdown(self):
        self.stop.set()
        for wid, p in list(self.running.items()):
            p.join(timeout=30)
            if p.is_alive():
                procs.kill(p)
                raise AssertionError("worker %d did not stop within 30 s" % wid)
            if p.exitcode == kw.DECLARED_DEAD_EXIT:
                self.killed.append((wid, p.pid))
                self.declared.append(wid)
            elif p.exitcode != 0:
                raise AssertionError("worker %d exited %s:\n%s" % (
                    wid, p.exitcode, self.failure(wid)))

    def abort(self):
        self.stop.set()
        for p in self.running.values():
            procs.kill(p)


def test_sigkill_hosts(region_path, workdir, need_fsck):
    env.mkfs(region_path, 64 * env.MiB, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.mkdir("/shared")
        r.create("/shared/log")
    fleet = Fleet(region_path, workdir)
    rng = random.Random(SEED)
    try:
        for _ in range(NWORKERS):
            fleet.start()
        fleet.wait_progress(list(fleet.running), PROGRESS_OPS, 60, "start-up")
        for rnd in range(ROUNDS):
            time.sleep(rng.uniform(0.05, 0.5))
            if rnd == ROUNDS - 1:
                victims = sorted(fleet.running)  # everybody at once
            else:
                victims = [rng.choice(sorted(fleet.running))]
            for wid in victims:
                fleet.kill(wid)
            survivors = list(fleet.running)
            for _ in victims:
                fleet.start()
            why = "after killing %s" % victims
            fleet.wait_progress(survivors or list(fleet.running), PROGRESS_OPS,
                                PROGRESS_S, why)
        fleet.shutdown()
    except BaseException:
        fleet.abort()
        raise

    expected = []
    for wid in sorted(fleet.all):
        ex = kw.replay(wid, fleet.log(wid))
        assert ex.error is None, "worker %d failed:\n%s" % (wid, ex.error)
        expected.append(ex)
    total = sum(ex.done for ex in expected)
    assert total > 300, "only %d operations completed" % total
    unsure = sum(1 for ex in expected if ex.maybe or ex.unsure_inodes)
    print("kill test: %d workers, %d killed (%d of them declared dead while "
          "starved), %d ops logged done, %d killed mid-op"
          % (len(expected), len(fleet.killed), len(fleet.declared), total,
             unsure))

    # Let every dead host's lease run out, then keep a copy of the crashed
    # region for the host-side recovery check.
    time.sleep(3 * LEASE_MS / 1000)
    copy = region_path + ".crashed"
    shutil.copyfile(region_path, copy)
    try:
        check_fsck_repairs(region_path)
        with daxfs.Region(region_path, readonly=True) as r:
            for ex in expected:
                kw.verify(r, ex, exact_nlink=True)
            kw.verify_shared(r, expected)

        with daxfs.Region(copy) as r:
            # a fresh host times the others' heartbeats with its own
            # clock first (docs/hosts.md "Leases")
            r.watch_hosts()
            for _ in range(3):
                r.reclaim()
            for ex in expected:
                kw.verify(r, ex, exact_nlink=False)
            kw.verify_shared(r, expected)
            dead_pids = {pid for _, pid in fleet.killed}
            hosts = r.info()["hosts"]
            stuck = [h for h in hosts if h["pid"] in dead_pids and h["state"] == "alive"]
            assert not stuck, "killed hosts still 'alive' after reclaim: %s" % stuck
            r.create("/after-recovery")  # the region is usable
    finally:
        env.remove(copy)


def check_fsck_repairs(path):
    rc, out = env.fsck(path, "-n")
    print("fsck -n on the crashed region: exit %d" % rc)
    print(out[-3000:])
    assert rc in (0, 4), "fsck -n on the crashed region: exit %d\n%s" % (rc, out[-4000:])
    rc_y, out_y = env.fsck(path, "-y")
    assert rc_y in (0, 1), "fsck -y: exit %d\n%s\n(fsck -n said:)\n%s" % (
        rc_y, out_y[-4000:], out[-2000:])
    rc2, out2 = env.fsck(path, "-n")
    assert rc2 == 0, "fsck -n after -y: exit %d\n%s\n(-y said:)\n%s" % (
        rc2, out2[-4000:], out_y[-2000:])
