"""A host in another process that maps a region file zero-copy
(tests/test_python_map.py)."""

import time

from helpers import env  # noqa: F401  (puts python/ on sys.path)

import daxfs


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
