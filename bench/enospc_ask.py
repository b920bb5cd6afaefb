#!/usr/bin/env python3
"""How long a write waits for space that a mapping host (a Python
Region.map_file on another host of this process) holds back: the pool
is filled, the filler deleted, and the same amount written again.  With
asks (docs/reclaim.md "Asking for a pass") the mapping host passes at
once; without, at its tick (lease / 4: 15 s here).  Run from the
repository root after make."""
import errno
import os
import sys
import time

sys.path.insert(0, "python")
import daxfs
p = "/dev/shm/daxfs-enospc-ask.img"
daxfs.mkfs(p, 32 << 20, force=True, lease_ms=60000)
r1 = daxfs.Region(p)
r1.write_file("/m", b"M" * 8192)
m = r1.map_file("/m")
r2 = daxfs.Region(p)
f = r2.open("/fill", "w")
n = 0
try:
    while True:
        f.write(b"F" * (1 << 20)); n += 1
except OSError as e:
    assert e.errno == errno.ENOSPC
f.close()
r2.unlink("/fill")
t = time.monotonic()
r2.write_file("/again", b"A" * ((n - 1) << 20))
print("refill of %d MiB after delete took %.3f s" % (n - 1, time.monotonic() - t))
m.close()
r1.close()
r2.close()
os.unlink(p)
