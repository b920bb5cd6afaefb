"""Recovery of a rename whose new name another host removed before the
renamer's death was noticed (docs/recovery.md, "Published or not").

A victim host (the crash build: `make crash`) renames and SIGKILLs itself
at `rename.linked`: right after the CAS that published the new name, before
its step mark.  This process, another host, reads the new name (it sees
the victim's inode there: the rename happened) and unlinks it.  Only then
does the victim's lease run out and this host recovers it.  The outcome
must be the serial order the survivor observed, rename then unlink: no
inode without a name, every link count right, fsck clean with nothing to
repair.
"""

import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

# Long enough that the survivor's unlink surely lands before the victim is
# declared dead (the test checks that it did).
LEASE_MS = 2000
SIZE = 16 * env.MiB
A = cl.data("a", 5000)
B = cl.data("b", 300)

# (crash point, rename flags, source, destination, the name the survivor
# reads (finding A there) and unlinks, the names left in /x after the
# serial order "rename, then that unlink" with their contents).
# rename.linked: after the CAS publishing the new name, before step 2 is
# marked.  rename.published: step 2 marked, the old name not yet swapped:
# the unlink takes the old name, so the exchanged file B, which lost its
# name, must be dropped (the exchange's own -1), not left unnamed.
CASES = {
    "exchange": ("rename.linked", daxfs.RENAME_EXCHANGE, "/x/a", "/x/b", "/x/b",
                 {"a": B}),
    "replace": ("rename.linked", 0, "/x/a", "/x/b", "/x/b", {}),
    "move": ("rename.linked", 0, "/x/a", "/x/c", "/x/c", {"b": B}),
    "exchange-cross": ("rename.linked", daxfs.RENAME_EXCHANGE, "/x/a", "/y/b",
                       "/y/b", {"a": B, "b": B}),
    "exchange-src-gone": ("rename.published", daxfs.RENAME_EXCHANGE, "/x/a",
                          "/x/b", "/x/a", {"b": A}),
}


def label(body):
    return {A: "A", B: "B"}.get(body, "%d bytes" % len(body))


@pytest.fixture
def region():
    yield from env.lease_region("rnrec", SIZE, LEASE_MS)


@pytest.mark.parametrize("case", sorted(CASES))
def test_published_then_unlinked(crash_build, region, case):
    point, flags, src, dst, gone, expect = CASES[case]
    with daxfs.Region(region) as r:
        r.mkdir("/x")
        r.mkdir("/y")
        r.write_file("/x/a", A)
        r.write_file("/x/b", B)
        r.write_file("/y/b", B)
        cl.run_rename_victim(region, point, src, dst, flags)
        # the rename is visible: the victim's source file is at dst
        assert label(r.read_file(dst)) == "A"
        assert label(r.read_file(gone)) == "A"
        r.unlink(gone)
        assert cl.victim_state(r) == "alive", "unlink came after the recovery"
        time.sleep(LEASE_MS / 1000 * 1.3)
        r.reclaim()
        assert cl.victim_state(r) == "recovered"
        assert r.listdir("/y") == ([] if dst.startswith("/y/") else ["b"])
        got = {n: label(r.read_file("/x/" + n)) for n in r.listdir("/x")}
        assert got == {n: label(body) for n, body in expect.items()}
        for n in got:
            assert r.stat("/x/" + n).st_nlink == 1, n
    code, out = env.fsck(region, "-n")
    assert code == 0, out
