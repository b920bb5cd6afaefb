"""Leases and liveness (docs/hosts.md, docs/recovery.md).

A host stopped with SIGSTOP for less than its lease is never declared
dead, however hard the others look (they reap expired hosts on every
reclaim); stopped for twice its lease it is declared dead and recovered,
and when continued it learns ESTALE on its next renewal or operation,
comes back as a new host (libdaxfs rejoins by itself; a new slot
generation, never its old claims) and corrupts nothing.
"""

import os
import signal
import subprocess
import time

import pytest

from helpers import env, lease_workers

daxfs = env.daxfs

LEASE_MS = 500



def _lines(log):
    try:
        with open(log) as f:
            return f.read().split("\n")
    except FileNotFoundError:
        return []


def _wait_lines(log, pred, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if any(pred(ln) for ln in _lines(log)):
            return
        time.sleep(0.02)
    raise AssertionError("worker log never showed it: %s" % _lines(log)[-5:])


def _wait_progress(log, timeout=20):
    """Waits until the worker logged more operations."""
    n = os.path.getsize(log)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.getsize(log) > n + 64:
            return
        time.sleep(0.02)
    raise AssertionError("worker made no progress")


def _worker_host(r, pid):
    return [h for h in r.info()["hosts"] if h["pid"] == pid]


@pytest.fixture
def setup():
    path = env.region_path("live")
    env.mkfs(path, 32 * env.MiB, lease_ms=LEASE_MS)
    log = path + ".log"
    argv = lease_workers.command(path, log, env.PYDIR, "/w", 50, 300)
    p = subprocess.Popen(argv, stderr=subprocess.PIPE)
    yield path, log, p
    if p.poll() is None:
        os.kill(p.pid, signal.SIGCONT)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    env.remove(path)
    env.remove(log)


def test_sigstop_shorter_than_lease_never_dead(setup):
    path, log, p = setup
    _wait_lines(log, lambda ln: ln.startswith("ok 20"))
    with daxfs.Region(path) as r:
        gen = _worker_host(r, p.pid)[0]["gen"]
        for _ in range(6):
            os.kill(p.pid, signal.SIGSTOP)
            end = time.monotonic() + LEASE_MS / 1000 * 0.5
            while time.monotonic() < end:
                r.reclaim()		# reaps expired hosts
                h = _worker_host(r, p.pid)
                assert h and h[0]["state"] == "alive" and h[0]["gen"] == gen, h
                time.sleep(0.02)
            os.kill(p.pid, signal.SIGCONT)
            _wait_progress(log)
        assert not any(ln.startswith("stale") for ln in _lines(log))
    assert p.poll() is None, p.stderr.read()


def test_sigstop_twice_the_lease_is_dead_and_rejoins(setup):
    path, log, p = setup
    _wait_lines(log, lambda ln: ln.startswith("ok 20"))
    with daxfs.Region(path) as r:
        old = _worker_host(r, p.pid)[0]
        os.kill(p.pid, signal.SIGSTOP)
        end = time.monotonic() + LEASE_MS / 1000 * 2
        while time.monotonic() < end:
            r.reclaim()
            time.sleep(0.05)
        slot = [h for h in r.info()["hosts"] if h["slot"] == old["slot"]][0]
        assert slot["state"] == "recovered", slot
        os.kill(p.pid, signal.SIGCONT)
        # the stale host learns it on its next renew/op (ESTALE): libdaxfs
        # rejoins on its own (heartbeat thread), or the op fails ESTALE
        # and the worker reopens -- either way as a new host
        end = time.monotonic() + 20
        while time.monotonic() < end:
            new = [h for h in _worker_host(r, p.pid) if h["state"] == "alive"]
            if new:
                break
            time.sleep(0.02)
        assert new, r.info()["hosts"]
        assert (new[0]["slot"], new[0]["gen"]) != (old["slot"], old["gen"])
        _wait_progress(log)
    assert p.poll() is None, p.stderr.read()
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    # nothing the stale host did after it was declared dead corrupts the fs
    with daxfs.Region(path) as r:
        time.sleep(LEASE_MS / 1000 * 1.3)
        r.reclaim()
        torn = []
        for name in r.listdir("/w"):
            body = r.read_file("/w/" + name)
            k = body.split(b":")[0]
            if body != (k + b":") * 300:
                torn.append((name, body[:40]))
        # only the write the final SIGKILL interrupted may be torn
        assert len(torn) <= 1, torn
    code, out = env.fsck(path, "-n")
    if code == 4:
        assert env.fsck(path, "-y")[0] == 1
        code, out = env.fsck(path, "-n")
    assert code == 0, out
