"""Free small objects come back as pages (docs/alloc.md "Compaction").

A region filled with empty files and directories (inodes, directory
trie nodes: small objects only) and then emptied must give its space to
one big file: df's free space is allocatable.  Also with a host killed in
the middle of a compaction (crash build, point alloc.compact).
"""

import errno
import os
import sys
import time
import subprocess

from helpers import build, env
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


VICTIM = """
import sys
sys.path.insert(0, %(tests)r)
import test_compact as t
from helpers import env
with env.daxfs.Region(%(path)r) as r:
    r.write_file("/big", bytes(t.big_size(r)))
"""


def test_killed_mid_compaction():
    """A host dies at alloc.compact (its own ENOSPC path, several hits
    apart): after recovery fsck is clean and the space is whole."""
    res = build.make("-s", "-C", cl.REPO, "crash",
                     capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    lease_ms = 300
    for nth in (1, 40):
        path = env.region_path("compact-crash")
        env.mkfs(path, SIZE, buckets=BUCKETS, lease_ms=lease_ms)
        try:
            with daxfs.Region(path) as r:
                empty = big_size(r)
                names = fill_names(r)
                drop_names(r, names)
                r.rmdir("/d")
                r.reclaim()
                venv = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB,
                            PYTHONPATH=os.path.join(cl.REPO, "python"),
                            DAXFS_CRASH_AT="alloc.compact:%d" % nth)
                p = subprocess.run(
                    [sys.executable, "-c", VICTIM % {
                        "tests": os.path.dirname(os.path.abspath(__file__)),
                        "path": path}],
                    env=venv, capture_output=True, text=True, timeout=120)
                assert p.returncode == -9, p.stderr[-2000:]
                time.sleep(lease_ms / 1000 * 1.3)
                r.reclaim()
                states = [h["state"] for h in r.info()["hosts"] if not h["self"]]
                assert "alive" not in states, states
            code, rep = _fsck(path)
            assert code == 0, rep["problems"][:5]
            s = rep["summary"]
            assert s["leaked_bytes"] == 0, s
            with daxfs.Region(path) as r:
                assert big_size(r) >= empty * 95 // 100
                body = bytes(big_size(r))
                r.write_file("/big", body)
                assert r.read_file("/big") == body
        finally:
            env.remove(path)
