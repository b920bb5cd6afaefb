"""A dead O_TMPFILE maker's roll-back, when its recoverer dies too
(docs/recovery.md, "A recoverer that dies"; docs/open-files.md,
"Unnamed files").

A victim host dies in tmpfile("/") with its record named in its OPEN_PUT
intent (a3): at `ov_insert.claimed` the record was never published, at
`tmpfile.published` it is published with nlink 0 and no open-set entry.
A second host recovers it (`daxfs_tmpfile_recover`: frees the record, or
settles it, which frees it too) and dies at `recover.lane` for the
victim's lane, before the intent is cleared.  A third host (this one)
recovers both and runs the lane's recovery again.

The roll-back carried no mark: the rerun freed the record a second time
(for a published one: no longer under its number, it read as "never
published").  The next two 128-byte allocations then got the same record:
fsck "object on a free stack is still in use".  Found by an audit of the
recovery reruns.  Each case is run with the recoverer surviving too
(control: one recovery, clean).
"""

import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

SIZE = 16 * env.MiB
LEASE_MS = 500
LANES = 32

RECOVERER = cl.RECOVERER_SCRIPT


@pytest.fixture
def region():
    yield from env.lease_region("tmptwice", SIZE, LEASE_MS)


@pytest.mark.parametrize("recoverer_dies", [False, True],
                         ids=["once", "recoverer-dies"])
@pytest.mark.parametrize("point", ["ov_insert.claimed", "tmpfile.published"])
def test_tmpfile_rollback_twice(crash_build, region, point, recoverer_dies):
    with daxfs.Region(region) as r:
        r.write_file("/keep", b"k" * 100)
    pid = cl.run_dying(region, cl.HOST_SCRIPT + 'r.tmpfile("/")\n', point)
    time.sleep(LEASE_MS / 1000 * 1.5)
    if recoverer_dies:
        # the victim's only call ran on its main thread, whose lane is
        # its tid (= pid) mod LANES (daxfs_op_begin; the heartbeat takes
        # none); recover_slot hits recover.lane once per lane, in order
        cl.run_dying(region, RECOVERER, "recover.lane:%d" % (pid % LANES + 1))
        time.sleep(LEASE_MS / 1000 * 1.5)
    with daxfs.Region(region) as r:
        cl.recover_others(r)
        # a few 128-byte records: a record freed twice comes out twice
        for i in range(8):
            r.write_file("/n%d" % i, b"x")
        for i in range(8):
            assert r.read_file("/n%d" % i) == b"x"
        assert r.read_file("/keep") == b"k" * 100
    code, out = env.fsck(region, "-n")
    assert code == 0, out
