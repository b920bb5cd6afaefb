"""Running several DaxFS hosts as separate processes.

Every worker is a fresh 'spawn' process (no inherited Region, no inherited
heartbeat thread) that opens its own daxfs.Region and so joins the region
as its own host.  run() passes each worker a shared Barrier so the workers
can open their regions first and then start the contended part together.
"""

import multiprocessing as mp
import os
import queue
import signal
import time
import traceback

CTX = mp.get_context("spawn")


def _entry(func, idx, args, barrier, results):
    try:
        res = func(idx, barrier, *args)
    except BaseException:  # report everything, incl. asserts
        results.put((idx, False, traceback.format_exc()))
        if barrier is not None:
            barrier.abort()
        return
    results.put((idx, True, res))


def run(func, args_list, timeout=120.0, barrier=True):
    """Runs func(idx, barrier, *args) in one process per args tuple.

    Returns the list of return values in order.  A worker that raises, dies
    or does not finish within timeout fails the test with its traceback.
    """
    n = len(args_list)
    bar = CTX.Barrier(n) if barrier else None
    results = CTX.Queue()
    procs = [CTX.Process(target=_entry, args=(func, i, tuple(a), bar, results),
                         name="daxfs-worker-%d" % i, daemon=True)
             for i, a in enumerate(args_list)]
    for p in procs:
        p.start()
    out = {}
    errors = []
    deadline = time.monotonic() + timeout
    try:
        while len(out) + len(errors) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                idx, ok, val = results.get(timeout=min(left, 1.0))
            except queue.Empty:
                dead = [p for i, p in enumerate(procs)
                        if not p.is_alive() and i not in out
                        and p.exitcode not in (0, None)]
                if dead and results.empty():
                    time.sleep(0.2)  # a last result may be in flight
                    if results.empty():
                        errors.extend("worker %s died with exit code %s" %
                                      (p.name, p.exitcode) for p in dead)
                        break
                continue
            if ok:
                out[idx] = val
            else:
                errors.append("worker %d failed:\n%s" % (idx, val))
                # The others are likely stuck at the (aborted) barrier or
                # will fail the same way: don't wait the full timeout.
                deadline = min(deadline, time.monotonic() + 10)
    finally:
        for p in procs:
            p.join(timeout=max(0.1, deadline - time.monotonic()))
        for p in procs:
            if p.is_alive():
                kill(p)
    if errors:
        raise AssertionError("\n".join(errors))
    missing = [i for i in range(n) if i not in out]
    if missing:
        raise AssertionError("workers %s did not finish within %.0f s" % (missing, timeout))
    return [out[i] for i in range(n)]


class StopFlag:
    """A stop request that workers poll and that survives SIGKILLed workers.

    multiprocessing.Event.is_set() takes a process-shared lock: a worker
    SIGKILLed inside it leaves the lock held forever, and the next is_set()
    or set() (the parent's) blocks for good.  This is one byte in shared
    memory, read and written without a lock.
    """

    def __init__(self):
        self._flag = CTX.RawValue("b", 0)

    def set(self):
        self._flag.value = 1

    def is_set(self):
        return self._flag.value != 0


def kill(p):
    """SIGKILLs a worker process (by its own pid) and reaps it."""
    if p.pid is not None and p.is_alive():
        try:
            os.kill(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.join(timeout=10)
