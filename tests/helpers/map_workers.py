"""A host in another process that maps a region file zero-copy
(tests/test_python_map.py)."""

import os
import struct
import time

from helpers import env  # noqa: F401  (puts python/ on sys.path)

import daxfs

PAGE = 4096


def mapper(conn, region_path, path):
    """Maps path, sends its region offsets; then commands:
    ("wait", off, data): until the map shows data at off (no read through
    the library, 10 s at most) -> True/False; ("store", off, data) ->
    written through the library; ("exit",)."""
    with daxfs.Region(region_path) as r, r.map_file(path) as m:
        conn.send(m.region_offsets())
        while True:
            cmd = conn.recv()
            if cmd[0] == "wait":
                off, data = cmd[1], cmd[2]
                end = time.monotonic() + 10
                while bytes(m.buffer[off:off + len(data)]) != data:
                    if time.monotonic() > end:
                        break
                    time.sleep(0.001)
                conn.send(bytes(m.buffer[off:off + len(data)]) == data)
            elif cmd[0] == "store":
                with r.open(path) as f:
                    conn.send(f.pwrite(cmd[2], cmd[1]))
            else:
                conn.send(None)
                return


def rewriter(region_path, path, done, stop):
    """Rewrites the first page of path with the 8-byte count k repeated,
    k = 1, 2, ..., storing each k in done once its write returned, until
    stop is set.  Rewrites within a coarse tick of the last stamp only
    mark the change counter (docs/files.md "The change counter of a
    rewrite"); a test that dies leaves no writer behind: it also stops
    when its parent is gone, or after 300 s."""
    parent, end = os.getppid(), time.monotonic() + 300
    with daxfs.Region(region_path) as r, r.open(path) as f:
        k = 0
        while not stop.value:
            k += 1
            f.pwrite(struct.pack("<Q", k) * (PAGE // 8), 0)
            done.value = k
            if not k & 1023 and (os.getppid() != parent or
                                 time.monotonic() > end):
                return


def read_only_map_kept(idx, barrier, region_path, path, seconds):
    """procs.run worker: maps path from a read-only Region and keeps the
    map while its pass thread runs (a pass every lease/4, a look for an
    ask every 20 ms); returns the map's bytes and whether it is zero-copy."""
    with daxfs.Region(region_path, readonly=True) as r, r.map_file(path) as m:
        time.sleep(seconds)
        r.map_pass()
        return bytes(m.buffer), m.zero_copy
