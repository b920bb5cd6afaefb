"""The lane-free read's race (tests/c/test_optread.c, docs/files.md
"Lane-free reads") must catch a read that trusts its first look: built
with -DDAXFS_BUG_OPTREAD_NO_SECOND_LOOK, answers holding another file's
bytes (or the words of reused nodes) appear and the program fails.  The
program as built passes in tests/test_c_units.py."""

import re

from helpers import build


def test_race_catches_a_read_without_second_look():
    r = build.run_with_defect("OPTREAD", "DAXFS_BUG_OPTREAD_NO_SECOND_LOOK",
                              "test_optread")
    assert r.returncode != 0, r.stdout[-4000:]
    assert "bad reads" in r.stdout, r.stdout[-4000:]
    assert re.search(r"test_race_cut_and_reuse\s+FAILED", r.stdout)
