"""Worker processes for tests/test_open_unlink.py.

Each runs in its own spawned process with its own daxfs.Region, i.e. as
its own host.  holder() obeys commands sent over a pipe, so the parent
(another host) can interleave unlinks, kills and checks with its steps;
churn() races open/unlink/close with the other churners.
"""

import errno
import random

from helpers import env

daxfs = env.daxfs

TAG_OFF = 1 << 16       # each churner writes its own tag at TAG_OFF * (idx + 1)


def pattern(ino, n):
    """The bytes a churned file holds from offset 0: derived from its inode
    number, so a freed and reused page shows as a mismatch."""
    seed = ("<%d>" % ino).encode()
    return (seed * (n // len(seed) + 1))[:n]


def holder(conn, region_path):
    """Commands: ("open", path) -> ino; ("read", n) -> bytes;
    ("write", data, off) -> written; ("stat",) -> (nlink, size);
    ("close",) -> None; ("reclaim",) -> None; ("exit",)."""
    r = daxfs.Region(region_path)
    f = None
    try:
        while True:
            cmd = conn.recv()
            try:
                if cmd[0] == "open":
                    f = r.open(cmd[1])
                    conn.send(("ok", f.ino))
                elif cmd[0] == "read":
                    conn.send(("ok", f.pread(cmd[1], 0)))
                elif cmd[0] == "write":
                    conn.send(("ok", f.pwrite(cmd[1], cmd[2])))
                elif cmd[0] == "stat":
                    st = r.fstat(f.ino)
                    conn.send(("ok", (st.st_nlink, st.st_size)))
                elif cmd[0] == "close":
                    f.close()
                    conn.send(("ok", None))
                elif cmd[0] == "reclaim":
                    r.reclaim()
                    conn.send(("ok", None))
                else:
                    conn.send(("ok", None))
                    return
            except OSError as e:
                conn.send(("err", e.errno))
    finally:
        r.close()


def churn(idx, barrier, region_path, names, ops, seed):
    """Random open / read / write / unlink / create / close on shared names.
    A file this host holds open must stay readable with its own data and
    this host's tag, whatever the other hosts unlink.  Returns counters."""
    rnd = random.Random(seed + idx)
    tag = ("host%d" % idx).encode() * 8
    held = []           # File objects, maybe unlinked by now
    cnt = {"opened": 0, "unlinked": 0, "held_after_unlink": 0, "enoent": 0}
    r = daxfs.Region(region_path)
    try:
        barrier.wait(60)
        for _ in range(ops):
            op = rnd.random()
            name = "/c/%s" % rnd.choice(names)
            if op < 0.25:
                try:
                    ino = r.resolve(name)
                    f = r.open(name)
                except OSError as e:
                    assert e.errno == errno.ENOENT, e
                    cnt["enoent"] += 1
                    continue
                if f.ino != ino:        # replaced between resolve and open
                    f.close()
                    continue
                f.pwrite(tag, TAG_OFF * (idx + 1))
                held.append(f)
                cnt["opened"] += 1
            elif op < 0.45:
                try:
                    r.unlink(name)
                    cnt["unlinked"] += 1
                except OSError as e:
                    assert e.errno == errno.ENOENT, e
            elif op < 0.65:
                try:
                    ino = r.create(name)
                    daxfs.File(r, ino).pwrite(pattern(ino, 3000), 0)
                except OSError as e:    # exists, or unlinked before the write
                    assert e.errno in (errno.EEXIST, errno.ENOENT), e
            elif op < 0.85 and held:
                f = held.pop(rnd.randrange(len(held)))
                if r.fstat(f.ino).st_nlink == 0:
                    cnt["held_after_unlink"] += 1
                f.close()
            elif held:
                f = rnd.choice(held)
                got = f.pread(3000, 0)
                # the creator may not have written (all of) it yet: zeros there
                want = pattern(f.ino, len(got))
                assert all(g in (0, w) for g, w in zip(got, want)), (f.ino, got[:40])
                assert f.pread(len(tag), TAG_OFF * (idx + 1)) == tag
        for f in held:
            assert f.pread(len(tag), TAG_OFF * (idx + 1)) == tag
            f.close()
    finally:
        r.close()
    return cnt
