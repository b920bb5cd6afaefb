"""A user buffer whose page fault blocks, under the preload (docs/libdaxfs.md
"User buffers"): 40 threads (more than the 32 lanes of a host) pread, pwrite
and getdents64 on region files with buffer pages registered with userfaultfd
and left missing (the guests' helper vm/helpers/uffd_stall.c, built
dynamically).  While they wait, the same process creates, writes, lists and
unlinks a 4 MiB file, and that file's space comes back; then the faults are
resolved and every thread's I/O is right.

Before 2026-12-02 the blocked copies ran inside their ops: 32 threads held
every lane and the process's open failed with EBUSY; with the lanes freed,
the reads' and listings' descriptor look-up still held the descriptor map,
and the open that would resolve the faults waited for it forever."""
import os
import subprocess

import pytest

from helpers import env
from helpers import preload as pl

HELPER = os.path.join(pl.PROGS, "uffd_stall")
THREADS = 40


def test_blocked_user_faults_hold_no_lane_and_no_lock(region_path):
    if not os.path.exists(HELPER):
        pytest.fail("%s is missing: run make first" % HELPER)
    env.mkfs(region_path, 64 * env.MiB)
    res = pl.run(region_path, [HELPER, "/daxfs", str(THREADS)], timeout=120)
    out = res.stdout.decode(errors="replace")
    if "fail=userfaultfd:" in out:
        # an unprivileged run where vm.unprivileged_userfaultfd is 0
        pytest.skip("userfaultfd refused here: " + out.strip())
    assert res.returncode == 0, (out, res.stderr)
    assert "blocked=%d of %d" % (THREADS, THREADS) in out, out
    assert "result=ok" in out, out
    fsck = subprocess.run([env.tool("fsck.daxfs"), "-n", region_path],
                          capture_output=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
