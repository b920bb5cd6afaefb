"""What daxfs.ko trusts a cached name by, across a host killed at every step of a namespace
operation (docs/kernel.md "Dentries"): a directory's change counter moves after every change
of its entries is published, and an inode's after every removal of one of its names, also
when recovery finishes (or undoes) a dead host's operation.  While the counter a lookup came
with stands, its answer stands.

This host lists the directories and looks every name up (crashlib.NameWatch) while all is
quiet; a victim (the crash build, `make crash`) starts one create, mkdir, symlink, link,
unlink, rename or rmdir and is killed at a named point; this host recovers it.  Then every
counter that still shows what it showed before must come with the same entries and names.
Without the move after recovery (core/namei.c recover_dir_moved), a create killed at
`create.linked` leaves a new name under an unmoved counter: a guest's negative dentry would
hide the file for good.  The same check runs while the victim lies dead, before recovery:
format 13 raises each counter before the publish (docs/kernel.md "Changes in flight"), so a
counter that stands vouches even then.  And no counter is left showing a change in flight (format 13,
docs/kernel.md "Changes in flight"): recovery heals what the victim raised.
"""
import pytest

from helpers import env

import crashlib as cl
import daxfs

LEASE_MS = 300
SIZE = 16 * env.MiB

VICTIM = r'''
import sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
op, args = sys.argv[4], sys.argv[5:]
if op == "write_file":
    r.write_file(args[0], b"new")
elif op == "rename":
    r.rename(args[0], args[1], int(args[2]))
else:
    getattr(r, op)(*args)
sys.exit(3)	# not reached: the crash point kills us
'''

CREATE = ["create.counted", "create.inode_published", "create.before_link", "create.linked"]
CASES = (
    [("write_file", p, ["/d/new"]) for p in CREATE] +
    [("mkdir", "create.linked", ["/d/newdir"]),
     ("symlink", "create.linked", ["a", "/d/newlink"])] +
    [("link", p, ["/d/a", "/e/hard"]) for p in
     ["link.begin", "link.held", "link.counted", "link.nlink_raised", "link.published"]] +
    [("unlink", p, ["/d/a"]) for p in
     ["unlink.removed", "unlink.counted", "unlink.nlink_dropped", "unlink.freed"]] +
    [("rename", p, ["/d/a", "/e/moved", "0"]) for p in
     ["rename.prepared", "rename.linked", "rename.published", "rename.moved",
      "rename.unpinned", "rename.counted"]] +
    [("rename", p, ["/d/a", "/d/b", "0"]) for p in
     ["rename.published", "rename.moved", "rename.done"]] +
    [("rename", "rename.moved", ["/d/sub", "/e/sub", "0"]),
     ("rename", "rename.moved", ["/d/a", "/e/x", str(daxfs.RENAME_EXCHANGE)])] +
    [("rmdir", p, ["/d/sub"]) for p in ["rmdir.dead", "rmdir.unlinked", "rmdir.done"]]
)


@pytest.mark.parametrize("op,point,args", CASES,
                         ids=["%s-%s-%d" % (c[0], c[1], i) for i, c in enumerate(CASES)])
def test_counters_vouch_across_recovery(crash_build, region_path, op, point, args):
    env.mkfs(region_path, SIZE, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        for d in ("/d", "/e", "/d/sub"):
            r.mkdir(d)
        for f in ("/d/a", "/d/b", "/d/c", "/e/x"):
            r.write_file(f, f.encode())
        nw = cl.NameWatch(r, "/")
        nw.sample()
        before = {p: (r.lstat(p).st_ino, r.lstat(p).st_change) for p in ("/d", "/e")}
        assert all(k in nw.dirs for k in before.values())
        # the window (docs/kernel.md "Changes in flight"): with the victim dead mid-op,
        # before recovery, a counter that stands still vouches
        cl.victim_recovered(r, region_path, crash_build, point, VICTIM, [op] + args,
                            LEASE_MS, dead=nw.check)
        nw.check()
        # what the victim raised, recovery settled: no directory left untrusted
        assert cl.unsettled_counters(r) == []
