"""POSIX unlink of open files across hosts (docs/open-files.md).

Every process is its own host.  Host A holds a file open, host B (the
test process, or other workers) unlinks it: A keeps reading and writing
its data, the name is gone everywhere, and the space comes back exactly
when A closes it -- or when A is SIGKILLed and recovered.  A random
open/unlink/close churn on several hosts never frees a file still open
and never leaks.
"""

import errno
import json
import subprocess
import time

import pytest

from helpers import env, open_workers as W, procs

daxfs = env.daxfs

LEASE_MS = 500
MiB = 1 << 20


class Holder:
    """A host in another process that does what it is told, step by step."""

    def __init__(self, region_path):
        self.conn, child = procs.CTX.Pipe()
        self.proc = procs.CTX.Process(target=W.holder, args=(child, region_path),
                                      daemon=True)
        self.proc.start()

    def __call__(self, *cmd):
        self.conn.send(cmd)
        if not self.conn.poll(60):
            raise AssertionError("holder did not answer %r" % (cmd,))
        status, val = self.conn.recv()
        if status == "err":
            raise OSError(val, "holder: %r" % (cmd,))
        return val

    def stop(self):
        if self.proc.is_alive():
            try:
                self("exit")
            except (OSError, AssertionError, EOFError):
                pass
        self.proc.join(10)
        procs.kill(self.proc)


def used(r):
    """Pool bytes in use once retired objects have been reclaimed."""
    for _ in range(4):
        r.reclaim()
    return r.info()["used_bytes"]


def fsck_json(path):
    res = subprocess.run([env.tool("fsck.daxfs"), "-n", "--json", path],
                         capture_output=True, text=True, timeout=120)
    return res.returncode, json.loads(res.stdout)


def assert_accounted(path):
    """fsck -n clean, nothing leaked, and the pool counter is exactly what the
    live files need plus what waits in limbo and in host batches."""
    rc, rep = fsck_json(path)
    s = rep["summary"]
    assert rc == 0 and s["leaked_bytes"] == 0, rep
    assert s["used_bytes"] == s["reachable_bytes"] + s["limbo_bytes"] + s["batch_bytes"], s


def assert_fsck_clean(path):
    rc, out = env.fsck(path, "-n")
    assert rc == 0, "fsck.daxfs -n: exit %d\n%s" % (rc, out[-4000:])


def test_other_host_unlinks_open_file(region_path):
    env.mkfs(region_path, 32 * MiB)
    data = bytes(range(256)) * 4096           # 1 MiB
    a = Holder(region_path)
    try:
        with daxfs.Region(region_path) as b:
            b.write_file("/warm", b"w")
            a("open", "/warm")                # A's open set exists from here
            b.mkdir("/d")
            # after the mkdir: "d" may share a root trie slot with "warm"
            # (the hash key is random per region), and the node that
            # splits them stays when /d goes (directories keep their shape)
            base = used(b)
            b.write_file("/d/f", data)
            ino = a("open", "/d/f")
            opens = sorted(h["open_files"] for h in b.info()["hosts"])
            assert opens == [0, 2], opens     # B none, A /warm and /d/f
            b.unlink("/d/f")
            assert b.listdir("/d") == []
            with pytest.raises(FileNotFoundError):
                b.stat("/d/f")
            with pytest.raises(FileNotFoundError):
                b.open("/d/f")
            # A keeps reading and writing the unlinked file
            assert a("read", len(data)) == data
            assert a("write", b"still here", 100) == 10
            assert a("read", 200)[100:110] == b"still here"
            assert a("stat") == (0, len(data))
            st = b.fstat(ino)
            assert (st.st_nlink, st.st_size) == (0, len(data))
            held = used(b)
            assert held >= base + len(data)
            # B's fsck while A lives: a held file, not an orphan error
            rc, out = env.fsck(region_path, "-nv")
            assert rc == 0, out
            assert "still open on a live host" in out, out
            a("close")
            a("reclaim")
            with pytest.raises(FileNotFoundError):
                b.fstat(ino)
            assert used(b) == base
            b.rmdir("/d")
    finally:
        a.stop()
    assert_fsck_clean(region_path)


def test_killed_holder_space_comes_back(region_path):
    env.mkfs(region_path, 32 * MiB, lease_ms=LEASE_MS)
    data = b"k" * (300 * 1024)
    with daxfs.Region(region_path) as b:
        base = used(b)
        b.write_file("/victim", data)
        a = Holder(region_path)
        try:
            ino = a("open", "/victim")
            b.unlink("/victim")
            assert a("read", len(data)) == data
            assert used(b) >= base + len(data)
            procs.kill(a.proc)                # SIGKILL: no close, no leave
        finally:
            a.stop()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                b.fstat(ino)
            except FileNotFoundError:
                break
            time.sleep(LEASE_MS / 1000 / 2)
            b.reclaim()                      # notices the expired lease
        with pytest.raises(FileNotFoundError):
            b.fstat(ino)
        assert used(b) == base
    assert_fsck_clean(region_path)


@pytest.mark.parametrize("seed", [1, 2])
def test_open_unlink_close_churn(region_path, seed):
    nprocs, ops = 4, 2000
    names = ["n%d" % i for i in range(6)]
    env.mkfs(region_path, 64 * MiB)
    with daxfs.Region(region_path) as r:
        base = used(r)
        r.mkdir("/c")
    res = procs.run(W.churn, [(region_path, names, ops, seed * 1000)] * nprocs,
                    timeout=300)
    total = {k: sum(c[k] for c in res) for k in res[0]}
    print("churn totals:", total)
    # the race was there: files were unlinked under open descriptors
    assert total["opened"] > 0 and total["unlinked"] > 0, total
    assert total["held_after_unlink"] > 0, total
    assert_accounted(region_path)
    with daxfs.Region(region_path) as r:
        for n in r.listdir("/c"):
            r.unlink("/c/" + n)
        r.rmdir("/c")
        assert used(r) == base
    assert_accounted(region_path)


def test_open_errors(region_path):
    env.mkfs(region_path, 16 * MiB)
    with daxfs.Region(region_path) as r:
        r.mkdir("/d")
        with pytest.raises(IsADirectoryError):
            r.open("/d")
        r.write_file("/f", b"x")
        f = r.open("/f")
        ino = f.ino
        r.unlink("/f")
        assert f.pread(1, 0) == b"x"
        # an unlinked file takes no new opens, even on the holding host
        lib = r._lib
        assert lib.daxfs_file_open(r._handle(), ino) == -errno.ENOENT
        f.close()
        assert lib.daxfs_file_close(r._handle(), ino) == -errno.EBADF
        with pytest.raises(FileNotFoundError):
            r.fstat(ino)
