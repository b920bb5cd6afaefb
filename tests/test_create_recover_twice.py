"""A dead creator's (or linker's) roll-back, when its recoverer dies too
(docs/recovery.md, "A recoverer that dies").

A victim host dies in create("/x/new") after publishing the inode and
before naming it (`create.inode_published`).  A second host recovers it:
it rolls the create back (frees the inode, lowers /x's entry count) and
dies right after (`create.undone`), before the victim's lane is cleared.
A third host (this one) recovers both.

The roll-back used to carry no marks: the third host ran it again and
lowered /x's entry count a second time (a freed record could be freed
twice as well).  /x, which still holds `keep`, then counted no entry:
rmdir("/x") succeeded on a directory with a file in it.  Found by the
linearizability checker with crash points (docs/lincheck.md: a name left
naming a freed inode after a recoverer died).

The link roll-back had the same gap: a linker that died after raising
the count (`link.nlink_raised`), recovered twice, lost a second link: its
source, still named, was freed.
"""

import errno
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

SIZE = 16 * env.MiB
LEASE_MS = 500

# the dead host's call, where it dies, where its recoverer dies
VICTIMS = {
    "create": ('r.write_file("/x/new", b"n" * 100)',
               "create.inode_published", "create.undone"),
    "link": ('r.link("/x/keep", "/x/new")', "link.nlink_raised",
             "link.undone"),
}

RECOVERER = cl.RECOVERER_SCRIPT


@pytest.fixture
def region():
    yield from env.lease_region("crtwice", SIZE, LEASE_MS)


@pytest.mark.parametrize("victim", sorted(VICTIMS))
def test_rollback_after_recoverer_died(crash_build, region, victim):
    call, point, undone = VICTIMS[victim]
    with daxfs.Region(region) as r:
        r.mkdir("/x")
        r.write_file("/x/keep", b"k" * 100)
    cl.run_dying(region, cl.HOST_SCRIPT + call + "\n", point)
    time.sleep(LEASE_MS / 1000 * 1.5)
    cl.run_dying(region, RECOVERER, undone)
    with daxfs.Region(region) as r:
        cl.recover_others(r)
        assert r.listdir("/x") == ["keep"]
        assert r.read_file("/x/keep") == b"k" * 100
        assert r.lstat("/x/keep").st_nlink == 1
        with pytest.raises(OSError) as e:
            r.rmdir("/x")
        assert e.value.errno == errno.ENOTEMPTY
    code, out = env.fsck(region, "-n")
    assert code == 0, out
