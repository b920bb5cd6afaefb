"""vm/media_fixed_kguest.py - guest side of tests/vm/test_kernel_media.py's
test_kernel_free_list_and_host_table_bad_after_mount (docs/kernel.md "Media errors":
the free lists and the fixed metadata going bad after the mount).  The scenarios run
through harden_kguest.py (`hd:` steps), which imports them.

  fixed-free   (fsdax /dev/pmem0, mounted rw) a file's pages are freed onto the page
               stack; a page some way down that stack is listed bad in the pmem driver's
               list; then a new file is written page by page, so that its allocations
               pop the stack past that depth.  The new file must read back (a listed page
               handed out again reads as EIO), the rest works, and the kernel said that
               fsck is needed
  fixed-host   (still mounted) the first page of the host table is listed bad: every
               operation (stat, readdir, create, statfs) fails with EIO, no oops, and the
               kernel named the host table
  fixed-fsck   (unmounted) fsck.daxfs -n reads the device's list, names the host table
               and exits 4
"""
import errno
import os
import struct
import subprocess
import time
from pathlib import Path

import daxfs_kguest as kg
from daxfs_kguest import check, log, result

PAGE = 4096
PMEM = "/dev/pmem0"
PMEM_BB = "/sys/block/pmem0/badblocks"
FSCK = Path(__file__).resolve().parents[1] / "build" / "bin" / "fsck.daxfs"
RGN_STATE, RGN_HOSTS = 1, 2
SB_REGIONS = 152            # offsetof(struct daxfs_super, regions)
STATE_FREE_HEAD = 384       # offsetof(struct daxfs_state, free_head)
CLASS_PAGE = 4
FREED_PAGES = 64            # pages of the file freed onto the stack
BAD_DEPTH = 8               # the stack entry listed bad
WAIT_S = 120


def _device(length=-1):
    """The first length bytes of the device (all: -1); a listed page is refused."""
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")          # the block device's cache holds stale pages
    with open(PMEM, "rb", buffering=0) as f:
        return f.read(length)


def _region(dev, kind):
    """(offset, size) of the superblock's region descriptor of kind."""
    for i in range(8):
        k, _, off, size, _ = struct.unpack_from("<IIQQQ", dev, SB_REGIONS + 32 * i)
        if k == kind:
            return off, size
    check(False, f"no region of kind {kind}")


def _page_stack(dev, limit=100000):
    """The page stack's objects, top first, as the device holds them."""
    state, _ = _region(dev, RGN_STATE)
    off = struct.unpack_from("<Q", dev, state + STATE_FREE_HEAD + 64 * CLASS_PAGE)[0]
    chain = []
    while off and len(chain) < limit and off + 8 <= len(dev):
        chain.append(off)
        off = struct.unpack_from("<Q", dev, off)[0]
    return chain


def _list_bad(off, what):
    Path(PMEM_BB).write_text(f"{off // 512} {PAGE // 512}\n")
    log(f"{what}: page at {PMEM} byte {off} listed bad: {Path(PMEM_BB).read_text().split()}")


def _write_paged(path, pages, tag):
    """One pwrite per page, so that each allocation takes one page (from the stack)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for i in range(pages):
            os.pwrite(fd, (b"%s-%06d " % (tag, i)).ljust(PAGE, b"."), i * PAGE)
        os.fsync(fd)
    finally:
        os.close(fd)


def _dmesg():
    return subprocess.run(["dmesg"], capture_output=True, text=True).stdout


def scen_fixed_free(args):
    _write_paged(kg.p("freed"), FREED_PAGES, b"freed")
    os.unlink(kg.p("freed"))
    # the lease work reclaims the unlinked file's pages onto the page stack
    end = time.monotonic() + WAIT_S
    while len(chain := _page_stack(_device())) < FREED_PAGES // 2:
        check(time.monotonic() < end, f"the page stack holds {len(chain)} pages after "
              f"{WAIT_S} s: the freed file's pages never came back")
        time.sleep(0.5)
    bad = chain[BAD_DEPTH]
    _list_bad(bad, f"page stack entry {BAD_DEPTH} of {len(chain)}")
    pages = len(chain) + 16
    _write_paged(kg.p("after"), pages, b"after")
    fd = os.open(kg.p("after"), os.O_RDONLY)
    try:
        for i in range(pages):
            e = kg.errno_of(lambda: os.pread(fd, PAGE, i * PAGE))
            check(not e, f"page {i} of a file written after the page went bad: errno {e} "
                  "(the bad page was handed out again)")
            got = os.pread(fd, PAGE, i * PAGE)
            check(got == (b"after-%06d " % i).ljust(PAGE, b"."), f"page {i} reads back wrong")
    finally:
        os.close(fd)
    check(sorted(os.listdir(kg.MNT)) == ["after"], "readdir")
    check(os.statvfs(kg.MNT).f_bfree > 0, "statfs")
    check("lies on a bad block" in _dmesg(), "the kernel did not say that fsck is needed")
    result(fixed_free="ok", fixed_free_depth=len(chain))


def scen_fixed_host(args):
    hosts, _ = _region(_device(PAGE), RGN_HOSTS)     # the superblock
    _list_bad(hosts, "the host table's first page")
    errs = {
        "stat": kg.errno_of(lambda: os.stat(kg.p("after"))),
        "read": kg.errno_of(lambda: kg.read_file(kg.p("after"))),
        "readdir": kg.errno_of(lambda: os.listdir(kg.MNT)),
        "create": kg.errno_of(lambda: kg.write_file(kg.p("new"), b"x")),
        "statfs": kg.errno_of(lambda: os.statvfs(kg.MNT)),
    }
    log(f"after the host table went bad: {errs}")
    for what, e in errs.items():
        check(e == errno.EIO, f"{what} after the host table went bad: errno {e}, not EIO")
    check("the host table at region byte" in _dmesg(),
          "the kernel did not name the host table")
    result(fixed_host="ok")


def scen_fixed_fsck(args):
    p = subprocess.run([str(FSCK), "-n", PMEM], capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    log(f"fsck.daxfs -n {PMEM}: exit {p.returncode}\n{out}")
    check(p.returncode == 4, f"fsck -n: exit {p.returncode}, not 4")
    check("the host table" in out and "2 bad range(s)" in out,
          "fsck -n did not name the host table, or not both bad ranges")
    result(fixed_fsck="ok")
