"""`daxfs run --mode posix|sync|strict` (docs/modes.md): the launcher's
modes, and strict writes never seen torn by a strict reader on another
host (each `daxfs run` process is its own host)."""

import os
import subprocess

import pytest

from helpers import env
from helpers import preload as pl

STRICT = os.path.join(pl.PROGS, "pl_strict")


def run_mode(region, mode, argv, **kw):
    return subprocess.run([pl.DAXFS, "-r", region, "run", "--mode", mode,
                           "--"] + argv, capture_output=True, timeout=300, **kw)


def popen_mode(region, mode, argv):
    return subprocess.Popen([pl.DAXFS, "-r", region, "run", "--mode", mode,
                             "--"] + argv, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


@pytest.fixture(autouse=True)
def _built():
    for p in (pl.DAXFS, pl.PRELOAD_LIB, STRICT):
        if not os.path.exists(p):
            pytest.fail("%s is missing: run make first" % p)


@pytest.mark.parametrize("mode", ["posix", "sync", "strict"])
def test_mode_runs_program(region, mode):
    """Each mode serves the program's calls: a file written through the
    mode reads back through libdaxfs."""
    res = run_mode(region, mode, ["sh", "-c",
                                  "printf hello > /daxfs/m && cat /daxfs/m"])
    assert res.returncode == 0, res.stderr
    assert res.stdout == b"hello"
    with env.daxfs.Region(region) as r:
        assert r.read_file("/m") == b"hello"


def test_unknown_mode_refused(region):
    res = run_mode(region, "fast", ["true"])
    assert res.returncode == 2
    assert b"unknown mode 'fast'" in res.stderr


def _torn_run(region, tmp_path, mode, how, n, size):
    stop = str(tmp_path / "stop")
    checker = popen_mode(region, mode, [STRICT, "check", "/daxfs/f", str(size),
                                        stop])
    try:
        writer = run_mode(region, mode, [STRICT, how, "/daxfs/f", str(n),
                                         str(size)])
        assert writer.returncode == 0, writer.stderr
    finally:
        open(stop, "w").close()
        out, err = checker.communicate(timeout=300)
    return checker.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("how,n,size", [("overwrite", 200, 1 << 20),
                                        ("append", 5000, 16 << 10)])
def test_strict_write_never_torn(region, tmp_path, how, n, size):
    """A strict reader on another host sees each strict write (1 MiB
    overwrites, 16 KiB appends) all or nothing while it is being written.
    (The same run in posix mode shows torn reads: the checker can fail.)"""
    code, out, err = _torn_run(region, tmp_path, "strict", how, n, size)
    assert code == 0, out + err
    assert out.startswith("reads "), out + err
    with env.daxfs.Region(region) as r:
        data = r.read_file("/f")
    if how == "append":
        assert len(data) == n * size
    else:
        assert data == bytes([(n - 1) % 251 + 1]) * size


def test_atomic_reader_never_torn(region):
    """A reader host in posix mode that reads as the FUSE server does
    (DAXFS_OPEN_ATOMIC_READ, docs/modes.md "Who is covered") never sees
    part of a strict write made on another host: every read of the
    1 MiB file is one byte value throughout."""
    size, n = 1 << 20, 200
    with env.daxfs.Region(region) as r:
        r.write_file("/f", bytes([1]) * size)
    writer = popen_mode(region, "strict", [STRICT, "overwrite", "/daxfs/f",
                                           str(n), str(size)])
    reads = 0
    try:
        with env.daxfs.Region(region, atomic_read=True) as r:
            with r.open("/f") as f:
                while writer.poll() is None or reads == 0:
                    got = f.pread(size, 0)
                    assert len(got) == size
                    assert got.count(got[:1]) == size, \
                        "torn read: %d bytes differ from the first" % (
                            size - got.count(got[:1]))
                    reads += 1
    finally:
        out, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    assert reads > 0
