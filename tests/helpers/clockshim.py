"""The LD_PRELOAD clock shim (tests/helpers/clockstep.c), built for a test
session: steps a process's wall clock (DAXFS_TEST_STEP_S after
DAXFS_TEST_STEP_AFTER_MS) or holds it (DAXFS_TEST_HOLD_WALL=1)."""

import os
import subprocess

from helpers import env


def build(out_dir):
    """Compiles the shim into out_dir; returns the .so's path."""
    out = os.path.join(str(out_dir), "clockstep.so")
    src = os.path.join(env.TESTS, "helpers", "clockstep.c")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", out, src, "-ldl"],
                   check=True)
    return out
