"""Free small objects come back as pages (docs/alloc.md "Compaction").

A region filled with empty files and directories (inodes, directory
trie nodes: small objects only) and then emptied must give its space to
one big file: df's free space is allocatable.  Also with a host killed in
the middle of a compaction (crash build, point alloc.compact).
"""

import errno
import subprocess

from helpers import env
import crashlib as cl

daxfs = env.daxfs

SIZE = 16 * env.MiB
MAX_NAMES = 100000
BUCKETS = 1 << 18		# names, not buckets, must run out


def fill_names(r):
    """Creates empty files and dirs in /d until ENOSPC; returns them."""
    r.makedirs("/d")
    names = []
    try:
        for k in range(MAX_NAMES):
            name = "/d/%s%d" % ("x" if k % 4 == 0 else "f", k)
            if k % 4 == 0:
                r.mkdir(name)
            else:
                r.create(name)
            names.append(name)
    except daxfs.DaxfsError as e:
        assert e.errno == errno.ENOSPC, e
    return names


def drop_names(r, names):
    for name in names:
        if name.startswith("/d/x"):
            r.rmdir(name)
        else:
            r.unlink(name)


def big_size(r):
    """What df says files can still get, most of it (a file needs a few
    radix nodes too)."""
    st = r.statfs()
    return st["free_bytes"] * 9 // 10 // 4096 * 4096


def test_names_then_big_file():
    path = env.region_path("compact")
    env.mkfs(path, SIZE, buckets=BUCKETS)
    try:
        with daxfs.Region(path) as r:
            empty = big_size(r)
            names = fill_names(r)
            assert len(names) > 1000
            full = r.statfs()
            assert full["free_bytes"] < SIZE // 20, full
            drop_names(r, names)
            r.rmdir("/d")
            r.reclaim()
            want = big_size(r)
            # df shows the space back, and a file can really have it
            assert want >= empty * 95 // 100, (want, empty)
            body = bytes(range(256)) * (want // 256)
            r.write_file("/big", body)
            assert r.read_file("/big") == body
        code, rep = _fsck(path)
        assert code == 0, rep["problems"][:5]
        assert rep["summary"]["leaked_bytes"] == 0
    finally:
        env.remove(path)


def _fsck(path):
    import json
    res = subprocess.run([env.tool("fsck.daxfs"), "-n", "--json", path],
                         capture_output=True, text=True, timeout=120)
    return res.returncode, json.loads(res.stdout)
