"""The lane-free read's race (tests/c/test_optread.c, docs/files.md
"Lane-free reads") must catch a read that trusts its first look: built
with -DDAXFS_BUG_OPTREAD_NO_SECOND_LOOK, answers holding another file's
bytes (or the words of reused nodes) appear and the program fails.  The
program as built passes in tests/test_c_units.py."""

import os
import re
import subprocess

from helpers import build

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAG = "DAXFS_BUG_OPTREAD_NO_SECOND_LOOK"


def test_race_catches_a_read_without_second_look():
    bug_build = os.path.join(ROOT, "build", "bug-OPTREAD")
    prog = os.path.join(bug_build, "tests", "test_optread")
    r = build.make("-C", ROOT, "-j2", "BUILD=" + bug_build,
                   "EXTRA_CFLAGS=-D" + FLAG, prog,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                   text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:]
    r = subprocess.run([prog], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    assert r.returncode != 0, r.stdout[-4000:]
    assert "bad reads" in r.stdout, r.stdout[-4000:]
    assert re.search(r"test_race_cut_and_reuse\s+FAILED", r.stdout)
