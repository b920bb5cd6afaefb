"""vm/media_fixed_kguest.py - guest side of tests/vm/test_kernel_media.py's
test_kernel_free_list_and_host_table_bad_after_mount (docs/kernel.md "Media errors":
the free lists and the fixed metadata going bad after the mount).  The scenarios run
through harden_kguest.py (`hd:` steps), which imports them.

  fixed-free   (fsdax /dev/pmem0, mounted rw) a file's pages are freed onto the page
               stack; a page some way down that stack (in the order the allocator takes
               them: each extent from its first page up) is listed bad in the pmem driver's
               list; then a new file is written page by page, so that its allocations
               take from the stack past that depth.  The new file must read back (a listed page
               handed out again reads as EIO), the rest works, and the kernel said that
               fsck is needed
  fixed-host   (still mounted) the first page of the host table is listed bad: every
               operation (stat, readdir, create, statfs) fails with EIO, no oops, and the
               kernel named the host table
  fixed-fsck   (unmounted) fsck.daxfs -n reads the device's list, names the host table
               and exits 4
  direct-open  (fsdax /dev/pmem0, mounted rw) a file held open puts a page in this host's
               open set; that page is listed bad: the open of another file (which walks
               the set) and then every operation fail with EIO, no oops, and the kernel
               named the open set
  direct-lock  (the same) a POSIX lock makes the lock table (root and one bucket page);
               the bucket page is listed bad: the next lock call on the file and then
               every operation fail with EIO, and the kernel named the lock table
  split-src    (before mkfs) a source tree for a split-mode mkfs under /tmp/split (the
               guest's tmpfs: the 9p shares are read-only), its backing file beside it
  direct-pcache (split mode on /dev/pmem0) a base file read through the shared page cache
               (its pages take cache slots); the page of the cache's slot table is listed
               bad: the next read and then every operation fail with EIO, and the kernel
               named the cache's slots
"""
import errno
import fcntl
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
RGN_STATE, RGN_HOSTS, RGN_PCACHE = 1, 2, 6
PC_META_OFF = 40            # offsetof(struct daxfs_pcache_header, meta_off)
SPLIT_FILE, SPLIT_PAGES = "/tmp/split/src/cached.bin", 16   # the base file read
SB_REGIONS = 152            # offsetof(struct daxfs_super, regions)
STATE_FREE_HEAD = 384       # offsetof(struct daxfs_state, free_head)
STATE_LOCK_ROOT = 928       # offsetof(struct daxfs_state, lock_root)
HOST_SIZE, HOST_OPEN_SET = 256, 136     # struct daxfs_host, offsetof(..., open_set)
LOCK_ROOT_BUCKET, LOCK_BUCKETS = 64, 256  # offsetof(struct daxfs_lock_root, bucket)
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
    """The page stack's pages in the order the allocator hands them out, as the device
    holds them: each word is an extent, last | (pages - 1) (format 12), linked from its
    last page and taken from its first page up."""
    state, _ = _region(dev, RGN_STATE)
    w = struct.unpack_from("<Q", dev, state + STATE_FREE_HEAD + 64 * CLASS_PAGE)[0]
    chain = []
    while w and len(chain) < limit:
        last, n = w & ~(PAGE - 1), (w & (PAGE - 1)) + 1
        if last + PAGE > len(dev) or last < (n - 1) * PAGE:
            break
        chain += [last - PAGE * i for i in range(n - 1, -1, -1)]
        w = struct.unpack_from("<Q", dev, last)[0]
    return chain


def _words(dev, off, n):
    return struct.unpack_from(f"<{n}Q", dev, off)


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


def _host_stopped(what, name, file, first=()):
    """After a page of what (the kernel's name) went bad: first (the op that loads it), then
    every operation fails with EIO, and the kernel named it."""
    errs = {
        **dict(first),
        "stat": kg.errno_of(lambda: os.stat(file)),
        "read": kg.errno_of(lambda: kg.read_file(file)),
        "readdir": kg.errno_of(lambda: os.listdir(kg.MNT)),
        "create": kg.errno_of(lambda: kg.write_file(kg.p("new"), b"x")),
        "statfs": kg.errno_of(lambda: os.statvfs(kg.MNT)),
    }
    log(f"after {what} went bad: {errs}")
    for op, e in errs.items():
        check(e == errno.EIO, f"{op} after {what} went bad: errno {e}, not EIO")
    check(f"{name} at region byte" in _dmesg(), f"the kernel did not name {what}")


def scen_fixed_host(args):
    hosts, _ = _region(_device(PAGE), RGN_HOSTS)     # the superblock
    _list_bad(hosts, "the host table's first page")
    _host_stopped("the host table", "the host table", kg.p("after"))
    result(fixed_host="ok")


def scen_direct_open(args):
    for name in ("held", "other"):
        kg.write_file(kg.p(name), name.encode())
    fd = os.open(kg.p("held"), os.O_RDONLY)     # this host's open set gets a page
    try:
        dev = _device()
        hosts, size = _region(dev, RGN_HOSTS)
        sets = [w for w in _words(dev, hosts, size // 8)[HOST_OPEN_SET // 8::HOST_SIZE // 8]
                if w]
        check(len(sets) == 1, f"open sets in the host table: {sets}, not one")
        _list_bad(sets[0], "the open set's first page")
        _host_stopped("the open set", "an open set", kg.p("held"), first={
            "open": kg.errno_of(lambda: os.close(os.open(kg.p("other"), os.O_RDONLY)))})
    finally:
        os.close(fd)
    result(direct_open="ok")


def scen_direct_lock(args):
    kg.write_file(kg.p("locked"), b"locked")
    fd = os.open(kg.p("locked"), os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the lock table: root, a bucket
        dev = _device()
        state, _ = _region(dev, RGN_STATE)
        root = _words(dev, state + STATE_LOCK_ROOT, 1)[0]
        check(root, "no lock table after a lock")
        buckets = [w for w in _words(dev, root + LOCK_ROOT_BUCKET, LOCK_BUCKETS) if w]
        check(len(buckets) == 1, f"lock table buckets: {buckets}, not one")
        _list_bad(buckets[0], "the lock table's bucket page")
        _host_stopped("the lock table", "the lock table", kg.p("locked"), first={
            "lock": kg.errno_of(lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB))})
    finally:
        os.close(fd)
    result(direct_lock="ok")


def fsck_names(what, ranges):
    """(unmounted) fsck.daxfs -n reads the device's list: it must name what and all
    ranges listed, and exit 4."""
    p = subprocess.run([str(FSCK), "-n", PMEM], capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    log(f"fsck.daxfs -n {PMEM}: exit {p.returncode}\n{out}")
    check(p.returncode == 4, f"fsck -n: exit {p.returncode}, not 4")
    check(what in out and f"{ranges} bad range(s)" in out,
          f"fsck -n did not name {what}, or not all {ranges} bad ranges")


def scen_fixed_fsck(args):
    fsck_names("the host table", 2)
    result(fixed_fsck="ok")


def _split_page(i):
    return (b"cached-%06d " % i).ljust(PAGE, b"#")


def scen_split_src(args):
    src = Path(SPLIT_FILE)
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_bytes(b"".join(_split_page(i) for i in range(SPLIT_PAGES)))


def scen_direct_pcache(args):
    base = kg.p(Path(SPLIT_FILE).name)
    check(kg.read_file(base) == Path(SPLIT_FILE).read_bytes(), "the base file reads wrong")
    dev = _device(PAGE)
    pc, _ = _region(dev, RGN_PCACHE)
    meta = pc + _words(_device(pc + PAGE), pc + PC_META_OFF, 1)[0]
    _list_bad(meta // PAGE * PAGE, "the page cache's slot table")
    _host_stopped("the page cache's slots", "the split-mode page cache's slots (header, pin "
                  "owners, slot table, pins)", base, first={
        "cached read": kg.errno_of(lambda: kg.read_file(base))})
    result(direct_pcache="ok")
