"""Every fsck case test's repair, killed after its stores and run again,
ends where the repair run once ends (tests/fsck_cuts.py).

test_fsck_interrupted.py cuts repairs of random damage; a case rare
there (a symlink bent into a file's page: stop 71's CI, one worked region
in about 25) passes most runs.  Here the damage each case test builds by
hand is repaired killed after each of its first 48 stores and 16 spread
over the rest, counting atomics and then plain stores: the case files
run again in a child pytest with DAXFS_FSCK_CUTS=1, which makes
test_fsck.fsck() and fsck_json() do that before each repair.  Found with
it: /lost+found published before it was named, so a repair killed in
between left an empty directory the rerun linked into its own
/lost+found as "#ino".

The repairs that recover a dead host (test_dead_host_and_stuck_claim,
the nine of test_recovery_in_fsck_writes_nothing_in_use, the forced
ones) watch the host table for a lease first: fsck_cuts gives its copies
a 20 ms lease, so they are cut too (until session 62 they were left out,
at 12.5 s or 0.4 s a run).  Left out: test_pcache.py (its files read
through backing files the child's opens do not name).
"""

import os
import subprocess
import sys

import crashlib as cl

FILES = ["tests/test_fsck.py", "tests/test_fsck_repair_root_symlink.py",
         "tests/test_fsck_sweep_cases.py", "tests/test_rename_dangling.py",
         "tests/test_fsck_force.py"]


def test_fsck_cases_killed_then_rerun_end_where_one_repair_ends(
        crash_build, tmp_path):
    log = tmp_path / "cuts.log"
    env = dict(os.environ, DAXFS_FSCK_CUTS="1", DAXFS_FSCK_CUTS_LOG=str(log))
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                          "no:cacheprovider", *FILES], cwd=cl.REPO, env=env,
                         capture_output=True, text=True, timeout=1100)
    assert res.returncode == 0, res.stdout[-6000:]
    lines = log.read_text().splitlines()
    checked = [ln for ln in lines if ln.startswith("checked")]
    cuts = sum(int(ln.split()[2]) for ln in checked)
    print("%d repairs cut %d times" % (len(checked), cuts))
    # the cases ran, and their repairs were cut: not a pass by skipping
    # (55 repairs cut 4,575 times on an idle machine; a loaded one may
    # find a few repairs slower than fsck_cuts.SLOW_S)
    assert len(checked) >= 46 and cuts >= 3600, (len(checked), cuts, lines)
