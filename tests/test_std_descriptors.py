"""Programs started with standard descriptors closed (a daemon, `prog >&-`).

The region's descriptor, and the preload's own, must never be 0, 1 or 2:
a program writes its output to 1 and reads its input from 0 whatever they
are.  Before session 55 libdaxfs opened the region on the lowest free
number: a Python program with stdout closed that opened a region through
the binding and then printed overwrote the region's superblock (fsck: "bad
magic number"), and under the preload with a descriptor limit below 800
(where the preload's own descriptors cannot move up) `cat` of a region file
wrote the file into the region (lib/region.c daxfs_fd_above_std,
lib/preload/fdtable.c fd_high).  Each case checks what a user would: the
program's writes to its closed stdout fail (EBADF), as without DaxFS, and
the region is whole: fsck clean, the files' bytes as written.
"""
import os
import subprocess
import sys

import daxfs
import pytest

from helpers import env
from helpers import preload

BINDING_PROG = r"""
import errno, os, sys
import daxfs
for fd in sys.argv[2].split(","):
    os.close(int(fd))
r = daxfs.Region(sys.argv[1])
r.write_file("/f", b"written before the prints")
try:
    os.write(1, b"X" * 4096)
    print("stdout write went somewhere", file=sys.stderr)
except OSError as e:
    print("stdout", errno.errorcode[e.errno], file=sys.stderr)
try:
    print("a line to the closed stdout", flush=True)
except OSError as e:
    print("print", errno.errorcode[e.errno], file=sys.stderr)
try:
    os.read(0, 100)
    print("stdin read something", file=sys.stderr)
except OSError as e:
    print("stdin", errno.errorcode[e.errno], file=sys.stderr)
r.close()
"""


def check_whole(region, path, data):
    rc, out = env.fsck(region)
    assert rc == 0, out
    r = daxfs.Region(region)
    try:
        assert r.read_file(path) == data
    finally:
        r.close()


@pytest.mark.parametrize("closed", ["1", "0,1"])
def test_binding_with_standard_descriptors_closed(region, closed):
    """Closed stdout (the region took 1: print overwrote the superblock),
    closed stdin and stdout (the region took 0: stdin read the region)."""
    res = subprocess.run([sys.executable, "-c", BINDING_PROG, region, closed],
                         stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=env.PYDIR))
    assert res.returncode == 0, res.stderr
    assert "stdout EBADF" in res.stderr, res.stderr
    assert "print EBADF" in res.stderr, res.stderr
    if closed == "0,1":
        assert "stdin EBADF" in res.stderr, res.stderr
    check_whole(region, "/f", b"written before the prints")


def test_preload_with_stdout_closed_and_a_low_descriptor_limit(region):
    """ulimit -n 64: the preload's descriptors stay below 800; stdout is
    closed before cat and ls run, each a new image that opens the region
    again."""
    data = b"the file's bytes\n" * 300
    r = daxfs.Region(region)
    try:
        r.write_file("/x", data)
    finally:
        r.close()
    res = preload.run(region, ["sh", "-c",
                               "ulimit -n 64; exec >&-; cat %s/x; "
                               "echo cat=$? >&2; ls %s; echo ls=$? >&2"
                               % (preload.AT, preload.AT)], timeout=60)
    err = res.stderr.decode()
    assert "cat=1" in err and "ls=2" in err, err
    assert "Bad file descriptor" in err, err
    check_whole(region, "/x", data)


def test_tools_with_stdout_closed(tmp_path):
    """mkfs.daxfs and fsck.daxfs -y with stdout closed: both do their work,
    and their reports go nowhere (not into the region)."""
    path = os.path.join(env.SHM, env.unique_name("stdclosed"))
    try:
        for argv in ([env.tool("mkfs.daxfs"), "-s", "16M", path],
                     [env.tool("fsck.daxfs"), "-y", path]):
            res = subprocess.run(argv, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, timeout=60,
                                 preexec_fn=lambda: os.close(1))
            assert res.returncode == 0, (argv, res.stderr)
        rc, out = env.fsck(path)
        assert rc == 0, out
    finally:
        env.remove(path)


REUSED_PROG = r"""
import os, sys
import daxfs
path = sys.argv[1]
r = daxfs.Region(path)
r.write_file("/f", b"region bytes" * 400)
mine = [int(n) for n in os.listdir("/proc/self/fd")
        if os.path.realpath("/proc/self/fd/" + n) == os.path.realpath(path)]
os.closerange(3, 1024)              # a daemon's clean-up, the region's too
with open(path + ".other", "wb") as f:
    f.write(b"OTHER FILE!!" * ((8 << 20) // 12))
o = os.open(path + ".other", os.O_RDWR)
os.unlink(path + ".other")
print("number reused", o in mine)
try:
    m = r.map_file("/f")
    print("map shows", bytes(m.buffer[:12]))
except OSError as e:
    print("map", os.strerror(e.errno))
"""


def test_binding_map_after_the_region_descriptor_was_closed(region):
    """A program that closed the region's descriptor (os.closerange) and
    reused its number for a file of its own: a zero-copy map of a region
    file fails with EBADF (daxfs_region_fd checks what the descriptor
    is).  Before session 55 the map was of the program's file at region
    offsets: its bytes, or SIGBUS past its end."""
    res = subprocess.run([sys.executable, "-c", REUSED_PROG, region],
                         capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=env.PYDIR))
    assert res.returncode == 0, (res.returncode, res.stderr)
    assert "number reused True" in res.stdout, res.stdout
    assert "map Bad file descriptor" in res.stdout, res.stdout
