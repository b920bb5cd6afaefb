"""A directory moved by a rename whose host died after the step that
moves its parent word was marked (docs/recovery.md, "Rename").

A victim host (the crash build: `make crash`) exchanges a file in /p with
the directory /a and SIGKILLs itself at a point of the rename's step 3
(its pins dropped: the file's link, the directory's MOVING mark and its
parent word, which must now name /p) or later.  This host recovers it.
Step 3 is marked before it acts, so that a recoverer never drops the
file's link twice; the directory's part of it (its parent word, MOVING)
is idempotent and must be done however far the victim got.  A parent word
left naming the root lets a later rename move /p into its own
subdirectory: is_ancestor walks parent words.
"""

import errno
import stat
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

LEASE_MS = 300
SIZE = 16 * env.MiB

# unlink.nlink_dropped: in step 3, the file's pin dropped, the directory's
# not yet; rename.unpinned, rename.counted: after step 3
POINTS = ["unlink.nlink_dropped", "rename.unpinned", "rename.counted"]


@pytest.fixture
def region():
    yield from env.lease_region("unpin", SIZE, LEASE_MS)


@pytest.mark.parametrize("point", POINTS)
def test_exchanged_directory_names_its_new_parent(crash_build, region, point):
    with daxfs.Region(region) as r:
        r.mkdir("/p")
        r.write_file("/p/s", b"S")
        r.mkdir("/a")
        cl.run_rename_victim(region, point, "/p/s", "/a",
                             daxfs.RENAME_EXCHANGE)
        time.sleep(LEASE_MS / 1000 * 1.5)
        r.reclaim()
        assert cl.victim_state(r) == "recovered"
        assert stat.S_ISDIR(r.stat("/p/s").st_mode)
        assert r.read_file("/a") == b"S"
        # /p/s is below /p: moving /p there would make a loop
        with pytest.raises(OSError) as e:
            r.rename("/p", "/p/s/z")
        assert e.value.errno == errno.EINVAL
        r.mkdir("/p/s/d")
        r.rename("/p/s/d", "/d")
        assert r.listdir("/p/s") == []
    code, out = env.fsck(region, "-n")
    assert code == 0, out
