"""daxfs_create_held (daxfs.ko's create since session 59): the nameless
held file and its first name made in one op.  Its maker killed at every
crash point of the two protocols it runs (docs/open-files.md "Unnamed
files", docs/recovery.md for the link's intent) leaves what the two calls
would: before the link's publication, no name and nothing in use once a
survivor recovered it; from it on, the named file, which the dropped hold
leaves alone.  fsck is clean every time.
"""

import os
import signal
import subprocess
import sys

import pytest

from helpers import env
import crashlib as cl
import test_tmpfile as tt

daxfs = env.daxfs
fsck_clean, used, wait_recovered = tt.fsck_clean, tt.used, tt.wait_recovered
region = tt.region	# a region with /d, as test_tmpfile's

VICTIM = r'''
import ctypes, os, sys
sys.path.insert(0, sys.argv[2])
import daxfs
from daxfs import _lib
L = _lib.lib()
r = daxfs.Region(sys.argv[1])
d = r.stat("/d").st_ino
L.daxfs_handle_fs.restype = ctypes.c_void_p
L.daxfs_handle_fs.argtypes = [ctypes.c_void_p]
fs = L.daxfs_handle_fs(r._handle())
f = L.daxfs_create_held
f.restype = ctypes.c_int
f.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint32,
              ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p,
              ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint64),
              ctypes.c_void_p]
ino = ctypes.c_uint64()
err = f(fs, d, None, 0o640, 0, 0, b"f", 1, ctypes.byref(ino), None)
print("made", err, ino.value, flush=True)
os.kill(os.getpid(), 9)		# dies holding it
'''

# in the order the call passes them; from link.published on it is named
POINTS = ["tmpfile.published", "tmpfile.held", "tmpfile.orphan",
          "link.begin", "link.held", "link.counted", "link.nlink_raised",
          "link.published"]


def run_victim(region, point):
    venv = dict(os.environ)
    if point:
        venv.update(DAXFS_LIB=cl.CRASH_LIB, DAXFS_CRASH_AT=point,
                    DAXFS_CRASH_LOG=region + ".points")
    p = subprocess.run([sys.executable, "-c", VICTIM, region,
                        os.path.join(cl.REPO, "python")], env=venv,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == -signal.SIGKILL, p.stderr
    if point:
        with open(region + ".points") as f:
            assert f.read().split()[0] == point
        assert "made" not in p.stdout
    else:
        assert "made 0 " in p.stdout, p.stdout


@pytest.mark.parametrize("point", POINTS + [None])
def test_maker_killed_at_point(crash_build, region, point):
    """Killed at each step (None: after the call, holding the named
    file): the survivor's recovery frees the file that was never named
    and keeps the one that was; nothing leaks either way."""
    with daxfs.Region(region) as r:
        r.write_file("/keep", b"k")
        keep = r.open("/keep")	# our open-set page exists before
        before = used(r)
        run_victim(region, point)
        wait_recovered(r)
        named = point in ("link.published", None)
        assert r.listdir("/d") == (["f"] if named else [])
        if named:
            st = r.stat("/d/f")
            assert st.st_nlink == 1 and st.st_mode & 0o777 == 0o640
            r.unlink("/d/f")
        assert used(r) == before
        keep.close()
    fsck_clean(region)
