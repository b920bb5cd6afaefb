"""Regions mapped with 2 MiB pages (docs/libdaxfs.md "Huge pages").

A region file on hugetlbfs: mkfs, two hosts (processes) writing and
reading, fsck clean, the page size in smaps, the clear refusal of a size
that is not whole huge pages or of more than the free huge pages, file
pages that cannot be mapped alone.  A region on a tmpfs mounted
huge=advise or within_size: its mapping holds PMD-mapped shmem huge pages
(within_size did before libdaxfs aligned its mappings too: the kernel
aligns a mapping of such a mount itself).  Every region mapping, the
preload's included, starts 2 MiB aligned.

The fixtures need root: they raise vm.nr_hugepages and mount a hugetlbfs
or a tmpfs in a temporary directory, and put everything back afterwards.
"""

import ctypes
import errno
import mmap
import os
import re
import subprocess

import pytest

from helpers import env, huge_workers as W, procs

daxfs = env.daxfs

HPAGE = 2 << 20
NEED = 48                       # huge pages the hugetlbfs tests use (96 MiB)
NR_HUGEPAGES = "/proc/sys/vm/nr_hugepages"
SHMEM_THP = "/sys/kernel/mm/transparent_hugepage/shmem_enabled"
MADV_COLLAPSE = 25
MAP_FIXED = 0x10


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def set_nr_hugepages(n):
    with open(NR_HUGEPAGES, "w") as f:
        f.write("%d\n" % n)


def need_root_mount(fstype):
    if os.geteuid() != 0:
        pytest.skip("needs root: mounts a %s and sets vm.nr_hugepages" % fstype)
    with open("/proc/filesystems") as f:
        if fstype not in f.read().split():
            pytest.skip("this kernel has no %s" % fstype)


def mount(fstype, opts, where):
    res = subprocess.run(["mount", "-t", fstype, "-o", opts, "none", where],
                         capture_output=True, text=True)
    return res.returncode == 0, res.stderr.strip()


def umount(where):
    subprocess.run(["umount", where], check=True)


@pytest.fixture
def hugetlbfs(tmp_path):
    """A hugetlbfs of 2 MiB pages with NEED more huge pages in the pool;
    unmounted and the pool size restored afterwards."""
    need_root_mount("hugetlbfs")
    if meminfo("Hugepagesize") != HPAGE >> 10:
        pytest.skip("the default huge page size is not 2 MiB")
    with open(NR_HUGEPAGES) as f:
        old = int(f.read())
    where = tmp_path / "huge"
    where.mkdir()
    set_nr_hugepages(old + NEED)
    try:
        if meminfo("HugePages_Free") < NEED:
            pytest.skip("the kernel could not give %d huge pages (memory too "
                        "fragmented)" % NEED)
        ok, err = mount("hugetlbfs", "pagesize=2M", str(where))
        if not ok:
            pytest.skip("cannot mount a hugetlbfs: %s" % err)
        try:
            yield str(where)
        finally:
            umount(str(where))
    finally:
        set_nr_hugepages(old)


@pytest.fixture(params=["advise", "within_size"])
def thp_tmpfs(request, tmp_path):
    """A tmpfs mounted huge=advise (2 MiB pages where a mapping asks for
    them) or huge=within_size (2 MiB pages inside the file's size, also
    for fallocate); unmounted afterwards."""
    need_root_mount("tmpfs")
    if not os.path.exists(SHMEM_THP):
        pytest.skip("this kernel has no transparent huge pages")
    with open(SHMEM_THP) as f:
        if "[deny]" in f.read():
            pytest.skip("shmem huge pages are denied (%s)" % SHMEM_THP)
    where = tmp_path / "thp"
    where.mkdir()
    opts = "huge=%s,size=256m" % request.param
    ok, err = mount("tmpfs", opts, str(where))
    if not ok:
        pytest.skip("cannot mount a tmpfs with %s: %s" % (opts, err))
    try:
        yield str(where)
    finally:
        umount(str(where))


def tool(name, *args, text=True):
    return subprocess.run([env.tool(name)] + list(args), capture_output=True,
                          text=text, timeout=120)


def assert_aligned(maps):
    assert maps, "the region is not mapped"
    for m in maps:
        assert m["start"] % W.MAP_ALIGN == 0, "mapped at %#x" % m["start"]


def test_hugetlbfs_two_hosts(hugetlbfs):
    """mkfs.daxfs on hugetlbfs, two hosts writing and reading each other's
    files, each mapping the region with 2 MiB pages; fsck clean."""
    path = os.path.join(hugetlbfs, "region")
    res = tool("mkfs.daxfs", "-s", "64M", path)
    assert res.returncode == 0, res.stderr
    maps = procs.run(W.two_hosts, [(path, 3 * HPAGE + 123)] * 2, timeout=120)
    for m in maps:
        assert_aligned(m)
        assert [x["KernelPageSize"] for x in m] == [2048], m
    with daxfs.Region(path) as r:
        assert sorted(r.listdir("/")) == ["h0", "h1"]
    rc, out = env.fsck(path, "-n")
    assert rc == 0 and "clean" in out, out
    # the daxfs command and the preload on the same region
    res = tool("daxfs", "-r", path, "run", "--", "cat", "/daxfs/h1", text=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout == bytes((7 + i) & 0xff for i in range(3 * HPAGE + 123))


MAP_CHECK = r"""
import mmap, os, sys
fd = os.open("/daxfs/f", os.O_RDWR)
try:
    mmap.mmap(fd, 8192, mmap.MAP_SHARED)
    print("shared mapped")
except OSError as e:
    print("shared", e.errno)
print("private", mmap.mmap(fd, 8192, mmap.MAP_PRIVATE)[:6].decode())
"""


def test_hugetlbfs_file_mappings(hugetlbfs):
    """A file's pages cannot be mapped alone out of 2 MiB pages: the
    preload's MAP_SHARED fails with ENODEV (as on devdax), MAP_PRIVATE
    works, and Python's map_file copies the pages."""
    path = os.path.join(hugetlbfs, "region")
    res = tool("mkfs.daxfs", "-s", "32M", path)
    assert res.returncode == 0, res.stderr
    data = b"abc" * 5000
    with daxfs.Region(path) as r:
        r.write_file("/f", data)
    res = tool("daxfs", "-r", path, "run", "--", "python3", "-c", MAP_CHECK)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n")[:2] == ["shared 19", "private abcabc"], res.stdout
    with daxfs.Region(path) as r:
        with r.map_file("/f") as m:
            assert bytes(m.buffer) == data
            assert not m.zero_copy


def test_hugetlbfs_size_not_whole_pages(hugetlbfs):
    """A size that is not whole huge pages: a clear error, nothing left."""
    path = os.path.join(hugetlbfs, "region")
    res = tool("mkfs.daxfs", "-s", "65M", path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "hugetlbfs" in res.stderr and "multiple of 2 MiB" in res.stderr, res.stderr
    assert "-s 66M" in res.stderr, res.stderr
    assert not os.path.exists(path)
    # the library alone refuses it too, and leaves nothing
    with pytest.raises(OSError) as e:
        daxfs.mkfs(path, 65 << 20)
    assert e.value.errno == 22
    assert not os.path.exists(path)


def test_hugetlbfs_too_few_pages(hugetlbfs):
    """More than the free huge pages: says to raise nr_hugepages."""
    path = os.path.join(hugetlbfs, "region")
    size = (meminfo("HugePages_Free") + 8) * HPAGE
    res = tool("mkfs.daxfs", "-s", "%dM" % (size >> 20), path)
    assert res.returncode == 8, res.stdout + res.stderr
    assert "nr_hugepages" in res.stderr, res.stderr
    assert not os.path.exists(path)


def test_thp_tmpfs_maps_huge(thp_tmpfs):
    """A region on a tmpfs mounted huge=advise or within_size is built of
    huge pages, and a host maps them with PMDs."""
    path = os.path.join(thp_tmpfs, "region")
    res = tool("mkfs.daxfs", "-s", "64M", path)
    assert res.returncode == 0, res.stderr
    with daxfs.Region(path) as r:
        r.write_file("/f", b"x" * (8 * HPAGE))
        assert r.read_file("/f") == b"x" * (8 * HPAGE)
        maps = W.region_mappings(path)
    assert_aligned(maps)
    assert sum(m["ShmemPmdMapped"] for m in maps) >= 8 * (HPAGE >> 10), maps
    rc, out = env.fsck(path, "-n")
    assert rc == 0, out


def test_preload_mapping_aligned(region_path):
    """The preload's mapping of a /dev/shm region starts 2 MiB aligned
    (where shmem can give huge pages, they can be PMD-mapped)."""
    env.mkfs(region_path, 64 * env.MiB + 4096)
    with daxfs.Region(region_path) as r:
        r.write_file("/x", b"hello")
    res = tool("daxfs", "-r", region_path, "run", "--", "cat", "/daxfs/x",
               "/proc/self/smaps")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("hello")
    smaps = os.path.join(env.SHM, "dxut-smaps-%d" % os.getpid())
    try:
        with open(smaps, "w") as f:
            f.write(res.stdout[len("hello"):])
        maps = W.region_mappings(region_path, smaps)
    finally:
        env.remove(smaps)
    assert_aligned(maps)
    with daxfs.Region(region_path) as r:
        assert_aligned(W.region_mappings(region_path))


RUN_MAP = r"""
import ctypes, mmap, os, sys
fd = os.open("/daxfs/f", os.O_RDWR)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, mmap.MAP_SHARED)
total = sum(m[i] for i in range(0, size, 4096))
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
sys.stdout.write("%d %d\n" % (addr, total))
with open("/proc/self/smaps") as f:
    sys.stdout.write(f.read())
"""


def test_preload_maps_runs_huge(thp_tmpfs):
    """A file written in whole 2 MiB pieces (runs) and mapped through the
    preload is mapped with PMDs on a region of huge pages: the preload
    puts each run on a 2 MiB boundary, also when the mapping's length is
    not whole 2 MiB (where the kernel would not align it)."""
    path = os.path.join(thp_tmpfs, "region")
    res = tool("mkfs.daxfs", "-s", "64M", path)
    assert res.returncode == 0, res.stderr
    size = 2 * HPAGE + 4096
    with daxfs.Region(path) as r:
        r.write_file("/f", b"\1" * size)
    res = tool("daxfs", "-r", path, "run", "--", "python3", "-c", RUN_MAP)
    assert res.returncode == 0, res.stderr
    head, smaps_text = res.stdout.split("\n", 1)
    addr, total = (int(x) for x in head.split())
    assert total == size // 4096
    smaps = os.path.join(env.SHM, "dxut-smaps-%d" % os.getpid())
    try:
        with open(smaps, "w") as f:
            f.write(smaps_text)
        maps = W.region_mappings(path, smaps)
    finally:
        env.remove(smaps)
    mine = [m for m in maps if addr <= m["start"] < addr + size]
    assert mine, "no mapping of the region at %#x: %s" % (addr, maps)
    pmd_kb = sum(m.get("ShmemPmdMapped", 0) for m in mine)
    assert pmd_kb == 2 * (HPAGE >> 10), (hex(addr), mine)
    rc, out = env.fsck(path, "-n")
    assert rc == 0, out


def shm_huge_never():
    """Whether /dev/shm gives a file only 4 KiB pages (huge=never, or no
    huge= option: how distributions mount it)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[4] == env.SHM:
                return "huge=" not in line or "huge=never" in line
    return False


def need_collapse():
    """Skips where the kernel cannot put 2 MiB pages into a tmpfs file
    (MADV_COLLAPSE came in Linux 6.1; it needs transparent huge pages,
    and shmem_enabled "deny" refuses it): there mkfs leaves the region on
    small pages, as every test that formats with --small-pages has it."""
    if env.SHM != "/dev/shm" or not shm_huge_never():
        pytest.skip("/dev/shm is not a tmpfs of 4 KiB pages here")
    if tuple(int(x) for x in os.uname().release.split(".")[:2]) < (6, 1):
        pytest.skip("no MADV_COLLAPSE before Linux 6.1")
    if not os.path.exists(SHMEM_THP):
        pytest.skip("this kernel has no transparent huge pages")
    with open(SHMEM_THP) as f:
        if "[deny]" in f.read():
            pytest.skip("shmem huge pages are denied (%s)" % SHMEM_THP)
    if not kernel_collapses():
        pytest.skip("MADV_COLLAPSE puts no 2 MiB page into a /dev/shm file "
                    "here")


def kernel_collapses():
    """Whether the kernel gives a new /dev/shm file a 2 MiB page when
    asked (MADV_COLLAPSE), by asking it here, without the library."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    path = os.path.join(env.SHM, "dxut-collapse-%d" % os.getpid())
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.posix_fallocate(fd, 0, HPAGE)
        area = libc.mmap(None, 2 * HPAGE, 0, mmap.MAP_PRIVATE |
                         mmap.MAP_ANONYMOUS, -1, 0)
        if area in (None, ctypes.c_void_p(-1).value):
            return False
        at = (area + HPAGE - 1) & ~(HPAGE - 1)
        got = libc.mmap(at, HPAGE, mmap.PROT_READ | mmap.PROT_WRITE,
                        mmap.MAP_SHARED | MAP_FIXED, fd, 0)
        ok = False
        for _ in range(3):      # EAGAIN: a page busy for a moment
            ok = got == at and libc.madvise(at, HPAGE, MADV_COLLAPSE) == 0
            if ok or ctypes.get_errno() != errno.EAGAIN:
                break
        libc.munmap(area, 2 * HPAGE)
        return ok
    finally:
        os.close(fd)
        os.unlink(path)


def need_whole(got, want):
    """The kernel just gave a 2 MiB page (need_collapse), so mkfs must
    have got some; it may find fewer than it asks for where memory is too
    fragmented, and then keeps small pages there by design: a skip."""
    assert got > 0, "mkfs got no 2 MiB page where the kernel gives them"
    if got < want:
        pytest.skip("the kernel gave %d of %d MiB in 2 MiB pages (memory "
                    "too fragmented)" % (got >> 20, want >> 20))


def mkfs_huge_bytes(out):
    """The bytes on 2 MiB pages that mkfs.daxfs' summary reports."""
    m = re.search(r"pages: +2 MiB for (\d+) MiB of it, 4 KiB for the rest",
                  out)
    if m:
        return int(m.group(1)) << 20
    assert "the kernel gave no 2 MiB pages" in out, out
    return 0


def test_shm_region_gets_huge_pages(region_path):
    """mkfs.daxfs on /dev/shm (mounted huge=never) gives the region 2 MiB
    pages all the same, and says so; two hosts then map the pages they
    use with PMDs, read each other's files, and fsck is clean.  A size
    that is not whole 2 MiB keeps its tail on 4 KiB pages."""
    need_collapse()
    res = tool("mkfs.daxfs", "-f", "-s", "65M", region_path)
    assert res.returncode == 0, res.stderr
    need_whole(mkfs_huge_bytes(res.stdout), 64 * env.MiB)
    assert "pages:       2 MiB for 64 MiB of it, 4 KiB for the rest" in \
        res.stdout, res.stdout
    maps = procs.run(W.two_hosts, [(region_path, 3 * HPAGE + 123)] * 2,
                     timeout=120)
    for m in maps:
        assert_aligned(m)
        # each host wrote 3 MiB and read 3 MiB of the pool: their pages,
        # and the metadata's, are mapped whole
        assert sum(x.get("ShmemPmdMapped", 0) for x in m) >= 4 * HPAGE >> 10, m
    rc, out = env.fsck(region_path, "-n")
    assert rc == 0 and "clean" in out, out
    res = tool("daxfs", "-r", region_path, "run", "--", "cat", "/daxfs/h1",
               text=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout == bytes((7 + i) & 0xff for i in range(3 * HPAGE + 123))


def test_shm_region_small_pages(region_path):
    """--small-pages (and the bindings' small_pages=True) keep /dev/shm's
    4 KiB pages: no PMD maps the region, and mkfs says nothing of
    pages; by default the bindings report the 2 MiB pages they got."""
    need_collapse()
    res = tool("mkfs.daxfs", "-f", "-s", "64M", "--small-pages", region_path)
    assert res.returncode == 0, res.stderr
    assert "pages:" not in res.stdout, res.stdout
    with daxfs.Region(region_path) as r:
        r.write_file("/f", b"s" * (8 * HPAGE))
        assert r.read_file("/f") == b"s" * (8 * HPAGE)
        maps = W.region_mappings(region_path)
    assert_aligned(maps)
    assert sum(m.get("ShmemPmdMapped", 0) for m in maps) == 0, maps
    assert daxfs.mkfs(region_path, 64 * env.MiB, force=True,
                      small_pages=True) == 0
    huge = daxfs.mkfs(region_path, 64 * env.MiB, force=True)
    assert huge % HPAGE == 0 and huge <= 64 * env.MiB, huge
    need_whole(huge, 64 * env.MiB)
    with daxfs.Region(region_path) as r:
        r.write_file("/f", b"h" * (8 * HPAGE))
        maps = W.region_mappings(region_path)
    assert sum(m.get("ShmemPmdMapped", 0) for m in maps) >= 8 * HPAGE >> 10
    rc, out = env.fsck(region_path, "-n")
    assert rc == 0 and "clean" in out, out


def test_hugepages_command_on_a_live_region(region_path):
    """`daxfs hugepages` gives a region made with --small-pages its 2 MiB
    pages while two hosts write and read it: every record each host wrote
    reads back whole, before and after, fsck is clean, and a host that
    maps the region afterwards maps the pages it uses with PMDs.  On a
    file that is not on a tmpfs it says it got none (exit status 1)."""
    need_collapse()
    res = tool("mkfs.daxfs", "-f", "-s", "64M", "--small-pages", region_path)
    assert res.returncode == 0, res.stderr
    done = region_path + ".done"
    try:
        out = procs.run(W.live_during_collapse,
                        [(region_path, done)] * 3, timeout=120)
    finally:
        env.remove(done)
    counts, (rc, said) = out[:2], out[2]
    print("records written during the collapse:", counts)
    assert rc == 0, said
    need_whole(int(re.search(r"2 MiB pages: (\d+) MiB", said).group(1)) << 20
               if "none" not in said else 0, 64 * env.MiB)
    assert said == "2 MiB pages: 64 MiB of 64 MiB\n", said
    with daxfs.Region(region_path) as r:
        for idx, n in enumerate(counts):
            assert n >= 64, counts
            for slot in range(min(n, W.SLOTS)):
                assert r.read_file("/w%d-%d" % (idx, slot)) == \
                    W.record(idx, W.last_record(n - 1, slot)), (idx, slot)
        maps = W.region_mappings(region_path)
    assert sum(m.get("ShmemPmdMapped", 0) for m in maps) >= 4 * HPAGE >> 10
    rc, fsck_out = env.fsck(region_path, "-n")
    assert rc == 0 and "clean" in fsck_out, fsck_out
    fstype = subprocess.run(["stat", "-f", "-c", "%T", "/var/tmp"],
                            capture_output=True, text=True).stdout.strip()
    if fstype not in ("tmpfs", "hugetlbfs", ""):
        other = os.path.join("/var/tmp", "dxut-hp-%d" % os.getpid())
        try:
            res = tool("mkfs.daxfs", "-q", "-f", "-s", "16M", other)
            assert res.returncode == 0, res.stderr
            res = tool("daxfs", "-r", other, "hugepages")
            assert res.returncode == 1, res.stdout + res.stderr
            assert res.stdout == "2 MiB pages: none of 16 MiB\n"
            assert "needs a region on a tmpfs" in res.stderr
        finally:
            env.remove(other)
