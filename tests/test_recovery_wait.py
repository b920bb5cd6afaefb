"""No operation waits without bound on a recovery that a peer keeps alive.

Found by the chaos host (tests/test_chaos.py at 5000 corruptions a second,
docs/testing.md "Chaos runs"): a worker's reclaim ran for 18 s, its stack in
check_dead() yielding "while a live survivor is at it".  The chaos had made
a host slot RECOVERING and kept touching its heartbeat, so the recovery
lease never ran out, and epoch advance waited up to a million yields per
look.  On a busy CPU every yield hands a whole time slice to another
process: minutes, the rare hangs past the chaos watchdog's 60 s.

Here a peer keeps a forged recovery's heartbeat moving while a host
reclaims, or renames a directory (the forged slot holds the rename
claim), on a CPU it shares with a busy process.  The operation must
return (bound: the chaos watchdog's 60 s, far above the few leases of
1 s a rename waits for the claim before EBUSY).
"""

import mmap
import os
import struct
import subprocess
import sys
import threading

from test_fsck import Image

import daxfs
import pytest

HANG_S = 60
RECOVERING = 3

# The host: reclaim, or a directory rename (it takes the rename claim,
# which the forged recovery's slot holds); either may fail (EBUSY), but
# it must return.
WORKER = r"""
import errno, os, sys
sys.path.insert(0, sys.argv[2])
import daxfs
os.sched_setaffinity(0, {int(sys.argv[3])})
with daxfs.Region(sys.argv[1]) as r:
    if sys.argv[4] == "reclaim":
        for _ in range(3):
            r.reclaim()
    else:
        try:
            r.rename("/a/d", "/b/d")
        except OSError as e:
            assert e.errno in (errno.EBUSY, errno.EAGAIN), e
print("done", flush=True)
"""

BUSY = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\n" \
       "while True:\n    pass\n"


def _forge_recovery(path, slot):
    """Slot RECOVERING, one of its lanes holding back the epoch, and the
    rename claim in its name."""
    gen = 5
    im = Image(path)
    im.put64(im.host(slot), (gen << 8) | RECOVERING)
    im.put64(im.lane(slot, 0), im.u64(im.state_word("epoch")) + 7)
    im.put64(im.state_word("rename_claim"), (gen << 16) | (slot + 1))
    im.save()
    return im.host(slot) + 8			# its heartbeat word


def _keep_renewing(path, hb_off, stop):
    """The hostile peer: the recovery lease never runs out."""
    with open(path, "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
        try:
            while not stop.wait(0.005):
                (hb,) = struct.unpack_from("<Q", m, hb_off)
                struct.pack_into("<Q", m, hb_off, hb + 1)
        finally:
            m.close()


@pytest.mark.parametrize("op", ["reclaim", "rename"])
def test_no_wait_on_a_recovery_kept_alive(region_path, op):
    daxfs.mkfs(region_path, 16 << 20, lease_ms=1000)
    with daxfs.Region(region_path) as r:
        r.write_file("/f", b"x" * 10000)
        r.unlink("/f")
        r.makedirs("/a/d")
        r.mkdir("/b")
    hb_off = _forge_recovery(region_path, 1)
    stop = threading.Event()
    peer = threading.Thread(target=_keep_renewing,
                            args=(region_path, hb_off, stop))
    peer.start()
    cpu = min(os.sched_getaffinity(0))
    busy = subprocess.Popen([sys.executable, "-c", BUSY, str(cpu)])
    pydir = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "python")
    try:
        res = subprocess.run([sys.executable, "-c", WORKER, region_path,
                              pydir, str(cpu), op], capture_output=True,
                             text=True, timeout=HANG_S)
    except subprocess.TimeoutExpired:
        res = None
    finally:
        busy.kill()
        busy.wait()
        stop.set()
        peer.join()
    assert res is not None, "%s still waiting after %d s" % (op, HANG_S)
    assert res.returncode == 0 and "done" in res.stdout, res.stderr
