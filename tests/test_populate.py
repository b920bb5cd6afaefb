"""Fresh page batches mapped at once (DAXFS_FS_POPULATE, docs/alloc.md
"Fresh batches mapped at once"): a host that writes new pages takes one
madvise per 64-page batch instead of a minor fault per page, and the
bytes are the same either way.  Counts page-fault exceptions (a perf software event), not time."""
import os
import shutil
import subprocess
import sys

import pytest

from helpers import env

MIB = 1 << 20

# A fresh process (its own page tables) writes N MiB into a new file with
# 4 KiB writes and prints the page-fault exceptions it took meanwhile: the
# kernel's software event counts exceptions only, not the faults madvise
# makes on the process's behalf (ru_minflt counts both).  "skip" where
# perf events are refused or the kernel predates MADV_POPULATE_WRITE.
WRITER = r"""
import ctypes, os, platform, struct, sys
sys.path.insert(0, sys.argv[1])
import daxfs
NR = {"x86_64": 298, "aarch64": 241}.get(platform.machine())
libc = ctypes.CDLL(None, use_errno=True)
attr = bytearray(128)
# PERF_TYPE_SOFTWARE, size, PERF_COUNT_SW_PAGE_FAULTS; exclude_kernel, _hv
struct.pack_into("IIQ", attr, 0, 1, len(attr), 2)
struct.pack_into("Q", attr, 40, (1 << 5) | (1 << 6))
fd = libc.syscall(NR, (ctypes.c_char * len(attr)).from_buffer(attr),
                  0, -1, -1, 0) if NR else -1
if fd < 0:
    print("skip: perf events refused:", os.strerror(ctypes.get_errno()))
    sys.exit(0)
import mmap
probe = mmap.mmap(-1, 4096)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
addr = ctypes.addressof(ctypes.c_char.from_buffer(probe))
if libc.madvise(addr, 4096, 23):        # MADV_POPULATE_WRITE, Linux 5.14
    print("skip: no MADV_POPULATE_WRITE:", os.strerror(ctypes.get_errno()))
    sys.exit(0)
n = int(sys.argv[3])
block = bytes(range(256)) * 16
with daxfs.Region(sys.argv[2], prefault=sys.argv[5:] == ["prefault"]) as fs:
    f = fs.open(sys.argv[4], create=True)
    try:
        before = struct.unpack("Q", os.read(fd, 8))[0]
        for i in range(n * 256):
            f.pwrite_all(block, i * 4096)
        faults = struct.unpack("Q", os.read(fd, 8))[0] - before
    finally:
        f.close()
    print(faults)
"""


def write_faults(region, name, populate, mib=16, prefault=False, trace=None):
    e = dict(os.environ, DAXFS_POPULATE="1" if populate else "0")
    cmd = [sys.executable, "-c", WRITER, env.PYDIR, region, str(mib), name]
    if prefault:
        cmd.append("prefault")
    if trace:
        cmd = ["strace", "-f", "-qq", "-e", "trace=madvise", "-o", trace] + cmd
    res = subprocess.run(cmd, env=e, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    if res.stdout.startswith("skip"):
        pytest.skip(res.stdout.strip())
    return int(res.stdout.split()[-1])


def test_fresh_batches_take_no_fault_per_page(region_path):
    env.mkfs(region_path, 256 * env.MiB)
    pages = 16 * MIB // 4096
    plain = write_faults(region_path, "/plain", populate=False)
    mapped = write_faults(region_path, "/mapped", populate=True)
    # every new page faults once without it (pages the process had not
    # touched: the region is fresh and each run writes new pages) ...
    assert plain >= pages * 9 // 10, (plain, mapped)
    # ... and with it only the first batch's 64 pages and the
    # interpreter's own faults remain
    assert mapped < pages // 4, (plain, mapped)
    print("faults", plain, mapped)
    with env.daxfs.Region(region_path) as fs:
        a = fs.read_file("/plain")
        b = fs.read_file("/mapped")
    assert a == b == (bytes(range(256)) * 16) * pages


def populate_calls(trace):
    """The lengths of libdaxfs' MADV_POPULATE_WRITE calls in an strace
    log (without WRITER's own probe of one page)."""
    with open(trace) as f:
        n = [int(line.split(",")[1]) for line in f
             if "MADV_POPULATE_WRITE" in line]
    return [x for x in n if x != 4096]


@pytest.mark.skipif(shutil.which("strace") is None,
                    reason="strace missing (scripts/setup.sh installs it)")
def test_prefaulted_region_maps_at_open_only(region_path, tmp_path):
    """DAXFS_OPEN_PREFAULT maps the whole region at open: writing new
    pages then takes no fault, and libdaxfs does not map its fresh
    batches again (about 250 ns a page for pages already mapped)."""
    env.mkfs(region_path, 256 * env.MiB)
    pages = 16 * MIB // 4096
    size = os.path.getsize(region_path)
    t_plain = str(tmp_path / "plain.trace")
    t_pre = str(tmp_path / "prefault.trace")
    write_faults(region_path, "/batches", populate=True, trace=t_plain)
    faults = write_faults(region_path, "/prefaulted", populate=True,
                          prefault=True, trace=t_pre)
    plain, pre = populate_calls(t_plain), populate_calls(t_pre)
    # without it: a call per fresh 64-page batch but the first
    assert len(plain) >= pages // 64 - 2, plain
    assert size not in plain, plain
    # with it: one call over the whole region, at open, and no other
    assert pre == [size], pre
    # nothing left to fault in but the interpreter's own pages
    assert faults < 64, faults
    with env.daxfs.Region(region_path, readonly=True, prefault=True) as fs:
        assert fs.read_file("/prefaulted") == fs.read_file("/batches") \
            == (bytes(range(256)) * 16) * pages
