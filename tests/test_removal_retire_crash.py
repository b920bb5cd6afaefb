"""A host killed in the retire of the leaves its removal took out of a
directory (docs/recovery.md, the unlink row; core/dir.h
daxfs_dir_retire_later).

Until session 60 an unlink, an rmdir and a rename retired those leaves
between the removal's CAS and the step mark that makes the removal
theirs: a host killed there left recovery unable to tell whose removal
it saw, so the counts stayed high, the directory could never be removed
and the file was named nowhere until fsck (tests/test_lincheck.py's fsck
after the crash runs found dozens a run).  The retires now come after the
mark: killed at the first retire (crash point `fence.retire`), the op is
rolled forward, every name and count is right, and fsck finds only the
retired leaves leaked.
"""
import json
import subprocess
import sys
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

LEASE_MS = 200

VICTIM = r'''
import sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
op, args = sys.argv[3], sys.argv[4:]
if op == "rename":
    r.rename(*args)
else:
    getattr(r, op)(*args)
sys.exit(3)	# not reached: the crash point kills us
'''

# op, its arguments, then the names each directory must hold afterwards
CASES = {
    "unlink": (("unlink", "/a/f"), {"/a": [], "/b": ["g"]}),
    "rmdir": (("rmdir", "/a/d"), {"/a": ["f"], "/b": ["g"]}),
    "rename-move": (("rename", "/a/f", "/b/h"),
                    {"/a": [], "/b": ["g", "h"]}),
    "rename-replace": (("rename", "/a/f", "/b/g"), {"/a": [], "/b": ["g"]}),
}


@pytest.fixture
def region():
    yield from env.lease_region("rmretire", 16 * env.MiB, LEASE_MS)


@pytest.mark.parametrize("case", sorted(CASES))
def test_killed_retiring_removed_leaves(crash_build, region, case):
    (op, *args), names = CASES[case]
    with daxfs.Region(region) as r:
        r.mkdir("/a")
        r.mkdir("/b")
        r.write_file("/a/f", b"F" * 100)
        r.write_file("/b/g", b"G" * 100)
        if op == "rmdir":
            r.mkdir("/a/d")
    v = subprocess.run([sys.executable, "-c", VICTIM, region,
                        cl.os.path.join(cl.REPO, "python"), op, *args],
                       env=dict(cl.os.environ, DAXFS_LIB=cl.CRASH_LIB,
                                DAXFS_CRASH_AT="fence.retire:1"),
                       capture_output=True, text=True, timeout=120)
    assert v.returncode == -9, v.stderr[-2000:]
    with daxfs.Region(region) as r:
        time.sleep(LEASE_MS / 1000 * 1.5)
        cl.recover_others(r)
        for d, want in names.items():
            assert sorted(r.listdir(d)) == want, d
            assert r.stat(d).st_nlink == 2, d
        for d, want in names.items():
            for n in want:
                assert r.stat(d + "/" + n).st_nlink == 1, (d, n)
        # emptied, each directory goes: its entry count is right
        for d, want in names.items():
            for n in want:
                r.unlink(d + "/" + n)
            r.rmdir(d)
    res = subprocess.run([env.tool("fsck.daxfs"), "--json", "-n", region],
                         capture_output=True, text=True, timeout=120)
    problems = json.loads(res.stdout)["problems"]
    assert {p["code"] for p in problems} <= {"leak"}, problems
