"""Signals and the library's threads (docs/locks.md "Signals").

A program that bounds a lock wait with alarm() must see its handler end the
wait (EINTR, as fcntl(F_SETLKW) after a handler without SA_RESTART), and a
program that blocks its signals and takes them with sigwait() must get the
ones sent to the process.  Before session 55 libdaxfs's heartbeat thread
took process signals with the program's mask of its creation: alarm()'s
handler ran there and the wait went on for ever, and a signal the program
blocked after it opened the region reached that thread instead, where its
default action killed the process.  And a handler that ran between two of
the wait's system calls left no EINTR behind: the wait now holds the
signals and looks for them between its sleeps (lib/locks.c).  The preload's
calls are compared with tmpfs in tests/test_preload.py
(tests/preload/pl_lock_signal.c).  Each program runs in a child process,
whose signal state is its own.
"""
import os
import signal
import subprocess
import sys

from helpers import env

HOLD_AND_WAIT = r"""
import signal, sys, time
import daxfs
path, raises = sys.argv[1], sys.argv[2] == "raises"
holder = daxfs.Region(path)
waiter = daxfs.Region(path)
holder.write_file("/lk", b"")
held = holder.open("/lk")
held.lock("w", kind="flock")
f = waiter.open("/lk")
calls = []

def on_alarm(sig, frame):
    calls.append(time.monotonic())
    if raises:
        raise TimeoutError
    held.unlock(kind="flock")      # the wait goes on, and now gets it

signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.3)
t = time.monotonic()
try:
    f.lock("w", kind="flock", wait=True)
    print("locked after", len(calls), "handler runs")
except TimeoutError:
    print("interrupted after %.1f s" % round(time.monotonic() - t, 1))
"""

SIGWAIT = r"""
import os, signal, sys
import daxfs
r = daxfs.Region(sys.argv[1])          # starts the library's heartbeat
r.write_file("/x", b"x")
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
os.kill(os.getpid(), signal.SIGUSR1)
got = signal.sigtimedwait({signal.SIGUSR1}, 5)
print("sigwait got", got.si_signo if got else None)
"""


def run(prog, *args):
    return subprocess.run([sys.executable, "-c", prog, *args],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=env.PYDIR))


def test_alarm_ends_a_lock_wait(region_path):
    env.mkfs(region_path, 16 * env.MiB)
    res = run(HOLD_AND_WAIT, region_path, "raises")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "interrupted after 0.3 s", res.stdout


def test_handler_that_returns_lets_the_wait_go_on(region_path):
    """PEP 475: the binding waits again after a handler that did not raise;
    this one lets the lock go, so the wait then gets it."""
    env.mkfs(region_path, 16 * env.MiB)
    res = run(HOLD_AND_WAIT, region_path, "returns")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "locked after 1 handler runs", res.stdout


def test_sigwait_gets_the_process_signal(region_path):
    env.mkfs(region_path, 16 * env.MiB)
    res = run(SIGWAIT, region_path)
    assert res.returncode == 0, (res.returncode, res.stderr)
    assert res.stdout.strip() == "sigwait got %d" % signal.SIGUSR1, \
        res.stdout
