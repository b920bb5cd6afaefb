"""The race of a write's bytes against its change counter
(tests/c/test_peek.c test_race_data_by_counter, docs/files.md "The change
counter of a rewrite") must catch a write that moves or marks the counter
before its bytes are there: built with -DDAXFS_BUG_CHANGE_BEFORE_DATA, the
observer trusts bytes older than a finished write and the program fails.
The program as built passes in tests/test_c_units.py."""

import re

from helpers import build


def test_race_catches_a_counter_moved_before_the_bytes():
    # the race runs up to 30 s (run_with_defect) and ends at the first
    # stale look: the writer and the observer must run at the same moment
    # to meet the defect's window
    r = build.run_with_defect("CHANGE", "DAXFS_BUG_CHANGE_BEFORE_DATA",
                              "test_peek")
    assert r.returncode != 0, r.stdout[-4000:]
    assert "trusted bytes older than a finished write" in r.stdout, \
        r.stdout[-4000:]
    assert re.search(r"test_race_data_by_counter\s+FAILED", r.stdout)
