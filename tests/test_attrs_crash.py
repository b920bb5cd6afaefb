"""A host that dies in the middle of chattr +i (docs/attrs.md, crash
story): killed at `setflags.set` (the crash build, `make crash`), after
its flag CAS, with the file's write gate still closed.  A survivor
recovers it after its lease: the flag stands (writes are refused, on
every host), the gate is open again (chattr -i and then a write go
through), the bytes are the old ones, and fsck is clean.
"""
import subprocess

from helpers import env

import crashlib as cl
import daxfs

LEASE_MS = 300
SIZE = 16 * env.MiB

VICTIM = r'''
import os, sys
sys.path.insert(0, sys.argv[2])
import daxfs
with daxfs.Region(sys.argv[1]) as r:
    r.setflags("/f", daxfs.FL_IMMUTABLE)
'''


def test_dead_chattr_recovered(crash_build, region_path):
    env.mkfs(region_path, SIZE, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.write_file("/f", b"old bytes\n")
        cl.victim_recovered(r, region_path, crash_build, "setflags.set",
                            VICTIM, [], LEASE_MS)
        assert r.getflags("/f") == daxfs.FL_IMMUTABLE
        with r.open("/f") as f:
            try:
                f.pwrite(b"new", 0)
                assert False, "a write into an immutable file went through"
            except PermissionError:
                pass
        r.setflags("/f", 0)
        with r.open("/f") as f:
            f.pwrite(b"new", 0)
        assert r.read_file("/f") == b"new bytes\n"
    code = subprocess.run([env.tool("fsck.daxfs"), "-n", region_path],
                          capture_output=True, text=True)
    assert code.returncode == 0, code.stdout + code.stderr
