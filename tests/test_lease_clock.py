"""Leases never compare wall clocks across hosts (docs/hosts.md "Leases").

Each host's heartbeat is a counter that every other host times with its
own monotonic clock.  Here two hosts step their wall clock by an hour in
the middle of a workload, one forward and one back (an LD_PRELOAD shim,
tests/helpers/clockstep.c, as settimeofday or an NTP step would), while a
third host keeps reaping expired hosts: nobody is declared dead, nobody
gets ESTALE, every slot stays alive in the same generation.
"""

import os
import subprocess
import sys
import time

import pytest

from helpers import clockshim, env, lease_workers

daxfs = env.daxfs

LEASE_MS = 500
STEP_AFTER_MS = 1000
RUN_S = 4



@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    return clockshim.build(tmp_path_factory.mktemp("clockstep"))


def _spawn(path, log, shim, step_s):
    e = dict(os.environ, LD_PRELOAD=shim, DAXFS_TEST_STEP_S=str(step_s),
             DAXFS_TEST_STEP_AFTER_MS=str(STEP_AFTER_MS))
    own_dir = "/" + os.path.basename(log).replace(".", "_")
    argv = lease_workers.command(path, log, env.PYDIR, own_dir, 20, 200,
                                 run_s=RUN_S, reclaim=True)
    return subprocess.Popen(argv, env=e, stderr=subprocess.PIPE)


def _hosts_by_pid(r):
    return {h["pid"]: h for h in r.info()["hosts"]}


def test_shim_steps_the_wall_clock(shim):
    """The shim does what the test relies on: one process's time() jumps."""
    code = ("import time\n"
            "a = time.time(); m = time.monotonic()\n"
            "while time.monotonic() - m < 10 and time.time() - a < 3000:\n"
            "    time.sleep(0.01)\n"
            "print(time.time() - a, time.monotonic() - m)\n")
    e = dict(os.environ, LD_PRELOAD=shim, DAXFS_TEST_STEP_S="3600",
             DAXFS_TEST_STEP_AFTER_MS="2000")
    out = subprocess.run([sys.executable, "-c", code], env=e, check=True,
                         capture_output=True, text=True).stdout.split()
    wall, mono = float(out[0]), float(out[1])
    assert 3600 < wall < 3610 and mono < 9, out


def test_wall_clock_step_declares_nobody_dead(shim):
    path = env.region_path("clock")
    env.mkfs(path, 32 * env.MiB, lease_ms=LEASE_MS)
    logs = [path + ".fwd", path + ".back"]
    procs = []
    try:
        with daxfs.Region(path) as r:
            procs = [_spawn(path, logs[0], shim, 3600),
                     _spawn(path, logs[1], shim, -3600)]
            end = time.monotonic() + 20
            while time.monotonic() < end and not all(
                    os.path.exists(lg) and os.path.getsize(lg) for lg in logs):
                time.sleep(0.02)
            gens = {p.pid: _hosts_by_pid(r)[p.pid]["gen"] for p in procs}
            # this host reaps all along, before and after the steps
            while any(p.poll() is None for p in procs):
                r.reclaim()
                seen = _hosts_by_pid(r)
                for p in procs:
                    h = seen.get(p.pid)
                    if p.poll() is None and h is not None:
                        assert h["state"] == "alive" and h["gen"] == gens[p.pid], h
                time.sleep(0.02)
            r.create("/still-ours")     # and we were never declared dead
            states = [h["state"] for h in r.info()["hosts"]]
            assert "recovered" not in states, states
        for p, lg in zip(procs, logs):
            assert p.wait() == 0, p.stderr.read().decode()[-2000:]
            with open(lg) as f:
                lines = f.read().split("\n")
            assert not [ln for ln in lines if ln.startswith("stale")], lines[-5:]
            assert any(ln.startswith("done") for ln in lines), lines[-5:]
            # it kept working across its step
            assert int([ln for ln in lines if ln.startswith("done")][0].split()[1]) > 20
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in [path] + logs:
            env.remove(f)
