"""fsck.daxfs -y -f repairs as completely as with no host mounted.

Found by the chaos host (tests/test_chaos.py): a host slot looked mounted,
fsck -y refused, and -y -f (what the test and an operator who knows every
host is gone run) repaired, yet still treated that host as live: orphans
were only warned about ("may be in use") and its slot stayed ALIVE.  A
later fsck, which saw the lease run out, reported both: fsck -y had left
the two orphan inodes (and the slot) a second fsck still found.
"""

import threading

from test_fsck import Image, fsck

import daxfs


def test_force_repairs_orphans_and_frees_the_mounted_slot(region_path):
    daxfs.mkfs(region_path, 16 << 20, lease_ms=1000)
    with daxfs.Region(region_path) as r:
        r.mkdir("/d")
        r.write_file("/d/file", b"orphan data")
        d, f = r.stat("/d").st_ino, r.stat("/d/file").st_ino
    im = Image(region_path)
    _off, link, _is_slot, _ino = im.dirents(d)["file"]
    im.put64(link, 0)				# the file becomes an orphan
    im.set_field(d, "aux", im.field(d, "aux") - 1)
    im.save()
    # a host that renews its lease while fsck runs, then stops (dies)
    host = daxfs.Region(region_path, heartbeat=False)
    stop = threading.Event()

    def renew():
        while not stop.wait(0.05):
            try:
                host.renew()
            except OSError:
                pass			# declared dead by fsck -f: expected
    t = threading.Thread(target=renew)
    t.start()
    try:
        rc, out = fsck(region_path, "-y")
        assert rc == 4 and "NOT REPAIRING" in out, out
        rc, out = fsck(region_path, "-y", "-f")
        assert rc == 1, out
    finally:
        stop.set()
        t.join()
    # fsck -n watches the table for more than a lease: a slot left
    # ALIVE would be seen dead now and reported
    rc, out = fsck(region_path, "-n")
    assert rc == 0, out
    with daxfs.Region(region_path) as r:
        assert r.read_file("/lost+found/#%d" % f) == b"orphan data"
