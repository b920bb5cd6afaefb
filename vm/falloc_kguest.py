#!/usr/bin/env python3
"""vm/falloc_kguest.py - guest side of tests/vm/test_kernel_falloc.py.

Runs inside a QEMU guest as `host python3 vm/falloc_kguest.py SCENARIO MNT ARGS...`
through vm/guest/daxfs-k.sh's `fa:` step; the user-space host of the test runs
host_peer() through libdaxfs on the same memory file.

Scenario:
  tools ROLE   fallocate(1) -l / -n / -p / -z, lseek SEEK_DATA / SEEK_HOLE, xfs_io's
               fiemap and filefrag on /fa (64 pages), df before and after a punch; a
               shared mapping of /fa sees the punched range as zeros at once.  Then
               /fb (16 pages) stays mapped while the host peer punches pages 4..7 of
               it: read(2) and SEEK_HOLE see the hole at once, the mapping comes to
               show zeros there (the lease work's revalidation), the rest stays.
               Also /fd: unwritten extents after fallocate, data after a write,
               and a same-size truncate dropping a KEEP_SIZE preallocation.
               And /fr: three 2 MiB runs (format 11) mapped, punched and cut
               inside, which the host peer reads back.
"""
import ctypes
import errno
import mmap
import os
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daxfs_kguest as kg  # noqa: E402
from daxfs_kguest import check, fs_mark, fs_wait, log, result  # noqa: E402

PAGE = 4096
FA_PAGES = 64
FB_PAGES = 16
PUNCH = (8 * PAGE, 16 * PAGE)           # /fa: pages 8..23
HOST_PUNCH = (4 * PAGE, 4 * PAGE)       # /fb: pages 4..7, by the host peer
WAIT_S = 120                            # lease work revalidation on a slow TCG guest


def page(tag, i):
    return (b"%s-PAGE%05d-" % (tag, i)).ljust(16, b"-") * (PAGE // 16)


def content(tag, n):
    return b"".join(page(tag, i) for i in range(n))


def expect_fa():
    """/fa after the guest's calls: pages 8..23 zero, 64 pages, + zero range."""
    d = bytearray(content(b"A", FA_PAGES))
    off, ln = PUNCH
    d[off:off + ln] = bytes(ln)
    d[100:200] = bytes(100)                 # fallocate -z -o 100 -l 100
    return bytes(d)


def run(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, f"{cmd}: rc {p.returncode}: {p.stdout}{p.stderr}")
    return p.stdout


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bfree * st.f_frsize


def fiemap_ranges(path):
    """(logical start, length) in bytes of each extent xfs_io lists."""
    out = run("xfs_io", "-r", "-c", "fiemap", path)
    ranges = []
    for m in re.finditer(r"\[(\d+)\.\.(\d+)\]:\s+(\d+)\.\.(\d+)", out):
        a, b = int(m.group(1)), int(m.group(2))
        ranges.append((a * 512, (b - a + 1) * 512))
    log(f"fiemap {path}: {ranges}")
    return ranges


def fiemap_kinds(path):
    """(logical start, length, unwritten) in bytes of each extent `xfs_io
    fiemap -v` lists (FIEMAP_EXTENT_UNWRITTEN is 0x800); holes left out."""
    out = run("xfs_io", "-r", "-c", "fiemap -v", path)
    exts = []
    for m in re.finditer(r"\[(\d+)\.\.(\d+)\]:\s+(\d+)\.\.\d+\s+\d+\s+"
                         r"(0x[0-9a-f]+)", out):
        a, b = int(m.group(1)), int(m.group(2))
        exts.append((a * 512, (b - a + 1) * 512, bool(int(m.group(4), 16) & 0x800)))
    log(f"fiemap -v {path}: {exts}")
    return exts


def unwritten_pages(path):
    """Page numbers FIEMAP calls unwritten, and those it calls data."""
    unw, data = set(), set()
    for a, ln, u in fiemap_kinds(path):
        (unw if u else data).update(range(a // PAGE, (a + ln) // PAGE))
    return unw, data


def scen_unwritten():
    """Format 8: fallocate makes unwritten extents, a write into one makes
    its page data (xfs_io fiemap -v shows FIEMAP_EXTENT_UNWRITTEN as on
    ext4 and XFS); truncate to the same size drops a KEEP_SIZE
    preallocation beyond EOF (xfstests generic/092)."""
    fd_path = kg.p("/fd")
    run("fallocate", "-l", str(8 * PAGE), fd_path)
    unw, data = unwritten_pages(fd_path)
    check(unw == set(range(8)) and not data, f"after fallocate: {unw} {data}")
    fd = os.open(fd_path, os.O_RDWR)
    os.pwrite(fd, b"x" * 10, 2 * PAGE + 5)
    unw, data = unwritten_pages(fd_path)
    check(data == {2} and unw == set(range(8)) - {2},
          f"after a write into page 2: {unw} {data}")
    run("fallocate", "-z", "-o", str(2 * PAGE), "-l", str(PAGE), fd_path)
    unw, data = unwritten_pages(fd_path)
    check(unw == set(range(8)) and not data, f"after fallocate -z: {unw} {data}")
    run("fallocate", "-n", "-o", str(8 * PAGE), "-l", str(8 * PAGE), fd_path)
    blocks = os.fstat(fd).st_blocks
    check(blocks == 16 * PAGE // 512, f"st_blocks with -n: {blocks}")
    run("truncate", "-s", str(8 * PAGE), fd_path)       # the same size
    st = os.fstat(fd)
    check(st.st_size == 8 * PAGE and st.st_blocks == 8 * PAGE // 512,
          f"same-size truncate: size {st.st_size} st_blocks {st.st_blocks}")
    unw, data = unwritten_pages(fd_path)
    check(max(unw | data) < 8, f"extents past EOF after truncate: {unw} {data}")
    check(kg.read_file(fd_path) == bytes(8 * PAGE), "/fd reads zeros")
    os.close(fd)
    result(unwritten="ok")


RUN = 2 << 20                           # format 11: a whole aligned 2 MiB
FR_PUNCH = (RUN + 100 * PAGE, 56 * PAGE)  # inside the second run of /fr
FR_SIZE = 2 * RUN + 300 * PAGE + 100    # a cut inside the third run


def expect_fr():
    """/fr after the guest's calls: three runs written whole, a punch
    inside the second, a truncate inside the third."""
    d = bytearray(content(b"R", 3 * RUN // PAGE))
    off, ln = FR_PUNCH
    d[off:off + ln] = bytes(ln)
    return bytes(d[:FR_SIZE])


def scen_runs():
    """Format 11: each whole aligned 2 MiB written by one write(2) is one
    run; a shared mapping reads it, a punch and a truncate inside runs
    split them (st_blocks drops by exactly the pages cut), SEEK_HOLE finds
    the punch; the user-space host reads the same bytes afterwards."""
    fr = kg.p("/fr")
    data = content(b"R", 3 * RUN // PAGE)
    fd = os.open(fr, os.O_RDWR | os.O_CREAT, 0o644)
    for k in range(3):
        check(os.pwrite(fd, data[k * RUN:(k + 1) * RUN], k * RUN) == RUN,
              "a 2 MiB write was short")
    m = mmap.mmap(fd, 3 * RUN, mmap.MAP_SHARED, mmap.PROT_READ)
    check(m[:] == data, "mapping of the runs")
    m.close()
    check(os.fstat(fd).st_blocks == 3 * RUN // 512, "st_blocks of 3 runs")
    run("fallocate", "-p", "-o", str(FR_PUNCH[0]), "-l", str(FR_PUNCH[1]), fr)
    os.ftruncate(fd, FR_SIZE)
    st = os.fstat(fd)
    pages = (FR_SIZE + PAGE - 1) // PAGE - FR_PUNCH[1] // PAGE
    check(st.st_blocks == pages * PAGE // 512,
          f"st_blocks after the cuts: {st.st_blocks}, want {pages * 8}")
    check(os.lseek(fd, 0, os.SEEK_HOLE) == FR_PUNCH[0], "SEEK_HOLE in a run")
    check(os.pread(fd, 3 * RUN, 0) == expect_fr(), "/fr bytes after the cuts")
    os.close(fd)
    result(runs="ok")


FALLOC_FL_KEEP_SIZE = 1


def falloc_under_fsize_limit(path, limit, mode, length):
    """fallocate(path, mode, 0, length) in a child whose RLIMIT_FSIZE is limit
    bytes, SIGXFSZ ignored: 0, or the errno it failed with."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.fallocate(fd, mode, ctypes.c_long(0), ctypes.c_long(length)):
                code = ctypes.get_errno()
        except OSError as e:
            code = e.errno
        os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def scen_fsize():
    """A size that fallocate grows is a write's: past RLIMIT_FSIZE it fails with
    EFBIG (xfstests generic/228); within it, or with KEEP_SIZE, it works."""
    path = kg.p("/flim")
    err = falloc_under_fsize_limit(path, 16 * PAGE, 0, 17 * PAGE)
    check(err == errno.EFBIG, f"fallocate past RLIMIT_FSIZE: {os.strerror(err)}, not EFBIG")
    check(os.stat(path).st_size == 0, "a refused fallocate changed the size")
    err = falloc_under_fsize_limit(path, 16 * PAGE, 0, 8 * PAGE)
    check(err == 0, f"fallocate within RLIMIT_FSIZE: {os.strerror(err)}")
    err = falloc_under_fsize_limit(path, 16 * PAGE, FALLOC_FL_KEEP_SIZE, 32 * PAGE)
    check(err == 0, f"KEEP_SIZE past RLIMIT_FSIZE: {os.strerror(err)}")
    check(os.stat(path).st_size == 8 * PAGE, "KEEP_SIZE changed the size")
    os.unlink(path)
    result(fsize="ok")


def scen_tools(args):
    role = args[0]
    fs = kg.PosixFS(kg.MNT)
    fa, fb = kg.p("/fa"), kg.p("/fb")
    kg.write_file(fa, content(b"A", FA_PAGES))
    fd = os.open(fa, os.O_RDWR)
    # from a read-only descriptor: a shared mapping that may be made
    # writable gets a page at a read fault of a hole (kernel/file.c), and
    # would fill the hole we punch
    rfd = os.open(fa, os.O_RDONLY)
    m = mmap.mmap(rfd, FA_PAGES * PAGE, mmap.MAP_SHARED, mmap.PROT_READ)
    os.close(rfd)
    check(m[:] == content(b"A", FA_PAGES), "mapping before the punch")
    blocks0 = os.stat(fa).st_blocks
    os.sync()
    free0 = free_bytes(kg.MNT)
    run("fallocate", "-p", "-o", str(PUNCH[0]), "-l", str(PUNCH[1]), fa)
    st = os.stat(fa)
    t0 = time.monotonic()
    free1 = free_bytes(kg.MNT)
    while free1 <= free0 and time.monotonic() - t0 < 60:
        time.sleep(0.5)         # retired pages come back after the epoch passes
        free1 = free_bytes(kg.MNT)
    result(fa_blocks_before=blocks0, fa_blocks_after=st.st_blocks,
           free_gain=free1 - free0)
    check(st.st_size == FA_PAGES * PAGE, f"punch changed the size: {st.st_size}")
    check(blocks0 - st.st_blocks == PUNCH[1] // 512,
          f"st_blocks {blocks0} -> {st.st_blocks}")
    check(m[PUNCH[0]:PUNCH[0] + PUNCH[1]] == bytes(PUNCH[1]),
          "this host's mapping still shows the punched bytes")
    m.close()
    seeks = [os.lseek(fd, 0, os.SEEK_HOLE), os.lseek(fd, PUNCH[0], os.SEEK_DATA),
             os.lseek(fd, sum(PUNCH), os.SEEK_HOLE)]
    check(seeks == [PUNCH[0], sum(PUNCH), FA_PAGES * PAGE], f"SEEK_HOLE/DATA: {seeks}")
    try:
        os.lseek(fd, FA_PAGES * PAGE, os.SEEK_DATA)
        check(False, "SEEK_DATA at EOF did not fail")
    except OSError as e:
        check(e.errno == 6, f"SEEK_DATA at EOF: {e}")
    ranges = fiemap_ranges(fa)
    covered = sum(ln for _, ln in ranges)
    check(covered == (FA_PAGES * PAGE - PUNCH[1]), f"fiemap covers {covered}")
    check(all(a + ln <= PUNCH[0] or a >= sum(PUNCH) for a, ln in ranges),
          f"an extent in the hole: {ranges}")
    out = run("filefrag", "-v", fa)
    log("filefrag: " + out.replace("\n", " | "))
    check(re.search(r"(\d+) extents? found", out) is not None, "filefrag output")
    run("fallocate", "-z", "-o", "100", "-l", "100", fa)
    run("fallocate", "-n", "-o", str(FA_PAGES * PAGE), "-l", str(4 * PAGE), fa)
    check(os.stat(fa).st_size == FA_PAGES * PAGE, "fallocate -n moved the size")
    check(os.stat(fa).st_blocks == blocks0 - PUNCH[1] // 512 + 4 * PAGE // 512,
          f"fallocate -n: st_blocks {os.stat(fa).st_blocks}")
    fc = kg.p("/fc")
    run("fallocate", "-l", str(10 * PAGE), fc)
    check(os.stat(fc).st_size == 10 * PAGE, "fallocate -l: size")
    check(kg.read_file(fc) == bytes(10 * PAGE), "fallocate -l: zeros")
    check(kg.read_file(fa) == expect_fa(), "/fa bytes after the calls")
    os.close(fd)
    scen_unwritten()
    scen_fsize()
    scen_runs()
    result(tools="ok")

    kg.write_file(fb, content(b"B", FB_PAGES))
    fd = os.open(fb, os.O_RDONLY)
    m = mmap.mmap(fd, FB_PAGES * PAGE, mmap.MAP_SHARED, mmap.PROT_READ)
    check(m[:] == content(b"B", FB_PAGES), "/fb mapping")
    fs_mark(fs, role, "guest-done")
    fs_wait(fs, ["host-punched"], 300)
    off, ln = HOST_PUNCH
    want = bytearray(content(b"B", FB_PAGES))
    want[off:off + ln] = bytes(ln)
    check(os.pread(fd, FB_PAGES * PAGE, 0) == bytes(want), "read(2) of /fb after the punch")
    check(os.lseek(fd, 0, os.SEEK_HOLE) == off, "SEEK_HOLE of the other host's hole")
    t0 = time.monotonic()
    while m[:] != bytes(want):
        check(time.monotonic() - t0 < WAIT_S, "the mapping never showed the hole")
        time.sleep(0.2)
    result(map_reval_s=round(time.monotonic() - t0, 1))
    m.close()
    os.close(fd)
    fs_mark(fs, role, "guest-checked")
    result(remote="ok")


def _wait_ro(path, name, timeout):
    """Waits for /sync/NAME through read-only handles: a host that is not
    joined times no lease, so a guest that TCG stalls for longer than its
    lease is not declared dead meanwhile."""
    import daxfs
    end = time.monotonic() + timeout
    while True:
        with daxfs.Region(path, readonly=True) as ro:
            if ro.exists(f"/sync/{name}"):
                return
        check(time.monotonic() < end, f"marker {name} never appeared")
        time.sleep(0.2)


def host_peer(path):
    """The user-space host: sees the guest's holes, punches /fb under its
    mapping.  It joins only for that (a few milliseconds)."""
    import daxfs
    _wait_ro(path, "guest-done", 400)
    with daxfs.Region(path) as r:
        f = r.open("/fa")
        out = {"fa_ok": f.read_all() == expect_fa(),
               "fr_ok": r.read_file("/fr") == expect_fr()}
        out["fa_hole"] = f.seek_hole(0)
        out["fa_data"] = f.seek_data(PUNCH[0])
        ext = f.extents(0, FA_PAGES * PAGE)
        out["fa_in_hole"] = sum(1 for e in ext if PUNCH[0] <= e.logical < sum(PUNCH))
        before = r.stat("/fb").st_blocks
        g = r.open("/fb")
        g.fallocate(HOST_PUNCH[0], HOST_PUNCH[1],
                    daxfs.FALLOC_PUNCH_HOLE | daxfs.FALLOC_KEEP_SIZE)
        out["fb_freed"] = (before - r.stat("/fb").st_blocks) * 512
        fs_mark(kg.LibFS(r), "H", "host-punched")
    _wait_ro(path, "guest-checked", 400)
    return out


def main():
    kg.dispatch(globals())


if __name__ == "__main__":
    main()
