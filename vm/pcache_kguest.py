#!/usr/bin/env python3
"""vm/pcache_kguest.py - guest side of the split-mode VM tests (tests/vm/test_kernel_pcache.py).

Runs inside a QEMU guest as `host python3 vm/pcache_kguest.py SCENARIO MNT ARGS...` through
vm/guest/daxfs-k.sh's `pc:` step, with a split-mode filesystem mounted at MNT (daxfs.ko,
backing=... or not).  DIR arguments are directories under the repository that the test
filled: DIR/src is the source tree of mkfs.daxfs, DIR/manifest.json lists the files:
{"fit": [names], "big": [names], "w": [names], "c_only": [names]}.  The user-space host of the tests runs the
same functions through daxfs_kguest.LibFS.

Scenarios:
  readall DIR ROLE PEERS      every file, sha256 against the source; backing reads per phase
  pressure DIR ROLE NPROC N WRITER   NPROC processes x N random page reads (+ writes by WRITER)
  mmap DIR ROLE               mappings of cached pages survive a cache drop; pins released
  victim DIR                  pin pages by mmap, then hang in a slow fill (the test kills us)
  longfault DIR DELAY_MS      a page fault whose fill takes DELAY_MS: this host's lease is
                              renewed all along (issue 16 item 11)
  survivor DIR ROLE           read the page the victim was filling, after the kill
  timeout DIR                 no host can fill: read fails with ETIMEDOUT, never hangs
  killwait DIR                no host can fill and the wait is long: a killed reader exits
  stale DIR                   map, wait until declared dead (EIO), then unmap
  lifetime DIR SLOW_MS        mapping lifetime (fork, split, mremap, madvise), truncate and
                              copy-up under another process's mapping, remount, idle fill
                              server, umount during a slow fill (docs/pcache.md)
"""
import ctypes
import errno
import hashlib
import json
import mmap
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daxfs_kguest as kg  # noqa: E402
from daxfs_kguest import check, fs_mark, fs_wait, log, result  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PAGE = 4096
MNT = "/mnt/daxfs"
W_PAGES = (0, 3, 5)         # pages of each "w" file the writer overwrites


def manifest(d):
    d = REPO / d
    return d, json.loads((d / "manifest.json").read_text())


def source(d, name):
    return (d / "src" / name.lstrip("/")).read_bytes()


def w_pattern(name, pg):
    return (f"written {name} page {pg} ".encode() * PAGE)[:PAGE]


def w_expected(d, name):
    """Content of a "w" file after the writer's overwrites."""
    data = bytearray(source(d, name))
    for pg in W_PAGES:
        if pg * PAGE < len(data):
            n = min(PAGE, len(data) - pg * PAGE)
            data[pg * PAGE:pg * PAGE + n] = w_pattern(name, pg)[:n]
    return bytes(data)


def mountstats(mnt=None):
    """This mount's daxfs counters from /proc/self/mountstats: {"pcache": {...},
    "pcache_shared": {...}}."""
    mnt = mnt or MNT
    out, cur = {}, False
    with open("/proc/self/mountstats") as f:
        for line in f:
            if line.startswith("device "):
                cur = f" mounted on {mnt} with fstype daxfs" in line
                continue
            if cur and line.startswith("\t") and ":" in line:
                key, rest = line.strip().split(":", 1)
                out[key] = {k: int(v, 0) for k, v in
                            (kv.split("=") for kv in rest.split() if "=" in kv)}
    check("pcache" in out, f"no pcache counters for {mnt} in /proc/self/mountstats")
    return out


def kernel_reads():
    return mountstats()["pcache"]["backing_reads"]


def sha(b):
    return hashlib.sha256(b).hexdigest()


def read_all(fs, d, names, shift):
    """Reads names (sorted, rotated by shift, so that hosts start in different places)."""
    names = sorted(names)
    k = shift % len(names) if names else 0
    for n in names[k:] + names[:k]:
        got = fs.read(n)
        check(sha(got) == sha(source(d, n)), f"{n}: wrong content ({len(got)} bytes)")


# ---------------------------------------------------------------- readall
def readall(fs, d, m, role, peers, reads):
    """Everyone mounted, then phase 1: the files that fit in the cache (C, which has no
    backing access, first reads files nobody else reads yet, so other hosts must serve
    it); backing reads are taken after everyone finished.  Phase 2: the rest (files
    bigger than the cache).  reads() = this host's backing reads."""
    shift = peers.index(role) * 2
    fs_mark(fs, role, f"ready-{role}")
    fs_wait(fs, [f"ready-{p}" for p in peers], 300)
    if role == "C":
        read_all(fs, d, m["c_only"], 0)
    read_all(fs, d, m["fit"], shift)
    fs_mark(fs, role, f"p1-{role}")
    fs_wait(fs, [f"p1-{p}" for p in peers], 300)
    n = reads()
    result(**{f"reads_{role}": n})
    fs_mark(fs, role, f"st-{role}", str(n).encode())
    fs_wait(fs, [f"st-{p}" for p in peers], 300)
    read_all(fs, d, m["big"] + (m["c_only"] if role != "C" else []), shift)
    fs_mark(fs, role, f"done-{role}")
    fs_wait(fs, [f"done-{p}" for p in peers], 300)


def scen_readall(args):
    d, m = manifest(args[0])
    readall(kg.PosixFS(MNT), d, m, args[1], args[2].split("+"), kernel_reads)
    result(**{f"readall_{args[1]}": "ok"})


# ---------------------------------------------------------------- pressure
def reader(d, m, seed, n):
    rnd = random.Random(seed)
    names = m["fit"] + m["big"]
    src = {x: source(d, x) for x in names}
    for _ in range(n):
        name = rnd.choice(names)
        size = len(src[name])
        if not size:
            continue
        off = rnd.randrange(0, size, PAGE) if rnd.random() < 0.8 else rnd.randrange(size)
        ln = rnd.choice((1, 100, PAGE, 3 * PAGE))
        fd = os.open(os.path.join(MNT, name.lstrip("/")), os.O_RDONLY)
        try:
            got = os.pread(fd, ln, off)
        finally:
            os.close(fd)
        check(got == src[name][off:off + ln], f"{name} @{off}+{ln}: wrong content")


def writer(d, m, role):
    for name in m["w"]:
        fd = os.open(os.path.join(MNT, name.lstrip("/")), os.O_WRONLY)
        try:
            size = os.fstat(fd).st_size
            for pg in W_PAGES:
                if pg * PAGE < size:
                    n = min(PAGE, size - pg * PAGE)
                    check(os.pwrite(fd, w_pattern(name, pg)[:n], pg * PAGE) == n, "short write")
        finally:
            os.close(fd)


def check_written(fs, d, m):
    for name in m["w"]:
        check(fs.read(name) == w_expected(d, name), f"{name}: writes not seen")


def scen_pressure(args):
    d, m = manifest(args[0])
    role, nproc, n, wr = args[1], int(args[2]), int(args[3]), args[4]
    fs = kg.PosixFS(MNT)
    pids = []
    for i in range(nproc):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                reader(d, m, hash((role, i)) & 0xffffffff, n)
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    if wr == role:
        writer(d, m, role)
        fs_mark(fs, role, "written")
    bad = [p for p in pids if os.waitpid(p, 0)[1] != 0]
    check(not bad, f"{len(bad)} of {nproc} readers failed")
    fs_wait(fs, ["written"], 300)
    check_written(fs, d, m)
    st = mountstats()
    result(**{f"pressure_{role}": f"{nproc}x{n}",
              f"reads_{role}": st["pcache"]["backing_reads"],
              f"evictions_{role}": st["pcache_shared"]["evictions"]})
    fs_mark(fs, role, f"pdone-{role}")


# ---------------------------------------------------------------- mmap
def scen_mmap(args):
    """With the host H: map a file whose pages are cached; H drops the cache while we keep
    the mapping; the mapped slots stay (pins) and read right; munmap releases the pins.
    Then write(2) to a mapped page on this host: the mapping shows the new bytes."""
    d, m = manifest(args[0])
    role = args[1]
    fs = kg.PosixFS(MNT)
    name = m["fit"][-1]
    want = source(d, name)
    pages = (len(want) + PAGE - 1) // PAGE
    check(pages >= 4, f"{name} too small for the mmap test")
    fd = os.open(os.path.join(MNT, name.lstrip("/")), os.O_RDONLY)
    mm = mmap.mmap(fd, len(want), mmap.MAP_SHARED, mmap.PROT_READ)
    check(mm[:] == want, "mapping: wrong content")
    st = mountstats()
    check(st["pcache"]["mmap_pins"] == pages,
          f"mmap_pins {st['pcache']['mmap_pins']}, want {pages}")
    result(mmap_pins_held=st["pcache"]["mmap_pins"])
    fs_mark(fs, role, "mapped", str(pages).encode())
    fs_wait(fs, ["dropped"], 300)
    check(mm[:] == want, "mapping changed after the cache drop")
    st = mountstats()
    check(st["pcache_shared"]["pins"] >= pages, f"pins gone: {st['pcache_shared']}")
    # a private mapping reads the same slots; its copy-on-write stays private
    pm = mmap.mmap(fd, len(want), mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_WRITE)
    check(pm[:PAGE] == want[:PAGE], "private mapping: wrong content")
    pm[0:5] = b"PRIV!"
    check(pm[0:5] == b"PRIV!" and mm[0:5] == want[0:5], "private COW leaked")
    pm.close()
    mm.close()
    os.close(fd)
    st = mountstats()
    check(st["pcache"]["mmap_pins"] == 0, f"pins left after munmap: {st['pcache']}")
    check(st["pcache_shared"]["pins"] == 0, f"shared pins left: {st['pcache_shared']}")
    result(mmap_pins_after=st["pcache"]["mmap_pins"])
    # write(2) on this host to a page we map from the cache: the block moves to the
    # overlay and our mapping must follow it
    wname = m["w"][0]
    rfd = os.open(os.path.join(MNT, wname.lstrip("/")), os.O_RDONLY)
    wfd = os.open(os.path.join(MNT, wname.lstrip("/")), os.O_WRONLY)
    wsz = os.fstat(wfd).st_size
    # read-only shared mapping (a writable one would copy every page up)
    wm = mmap.mmap(rfd, wsz, mmap.MAP_SHARED, mmap.PROT_READ)
    check(wm[:] == source(d, wname), "w mapping: wrong content")
    pins = mountstats()["pcache"]["mmap_pins"]
    check(os.pwrite(wfd, b"NEW-BYTES", PAGE + 10) == 9, "short write")
    check(wm[PAGE + 10:PAGE + 19] == b"NEW-BYTES", "mapping did not follow the write")
    check(mountstats()["pcache"]["mmap_pins"] == pins - 1, "pin of the copied-up page kept")
    wm.close()
    os.close(wfd)
    os.close(rfd)
    check(mountstats()["pcache"]["mmap_pins"] == 0, "pins left")
    fs_mark(fs, role, "unmapped")
    result(mmap="ok")


# ---------------------------------------------------------------- host failure
def scen_victim(args):
    """Pins pages by mmap, then starts a fill that takes forever (fill_delay_ms)."""
    d, m = manifest(args[0])
    fs = kg.PosixFS(MNT)
    name = m["fit"][0]
    fd = os.open(os.path.join(MNT, name.lstrip("/")), os.O_RDONLY)
    size = os.fstat(fd).st_size
    mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
    check(mm[:] == source(d, name), "victim mapping: wrong content")
    pins = mountstats()["pcache"]["mmap_pins"]
    result(victim_pins=pins)
    fs_mark(fs, "V", "victim-pinned", str(pins).encode())
    with open("/sys/module/daxfs/parameters/fill_delay_ms", "w") as f:
        f.write("600000")
    fs_mark(fs, "V", "victim-filling")
    log("victim: filling a page slowly, waiting to be killed")
    fs.pread(m["victim_page"][0], 1, m["victim_page"][1])
    log("victim: the slow fill returned, which it must not before the kill")
    sys.exit(1)


def scen_longfault(args):
    """A read fault on a mapped page whose fill takes DELAY_MS (fill_delay_ms): the fault
    holds the inode's pin_lock all along, which the lease work's mapping revalidation
    also takes.  Renewal must not wait behind it: nobody declares this host dead."""
    d, m = manifest(args[0])
    delay = int(args[1])
    fs = kg.PosixFS(MNT)
    name, off = m["victim_page"]
    fd = os.open(os.path.join(MNT, name.lstrip("/")), os.O_RDONLY)
    mm = mmap.mmap(fd, os.fstat(fd).st_size, mmap.MAP_SHARED, mmap.PROT_READ)
    fs_wait(fs, ["long-watching"], 200)
    with open("/sys/module/daxfs/parameters/fill_delay_ms", "w") as f:
        f.write(str(delay))
    t = time.monotonic()
    got = mm[off:off + PAGE]            # the fault: one slow fill
    took = time.monotonic() - t
    with open("/sys/module/daxfs/parameters/fill_delay_ms", "w") as f:
        f.write("0")
    check(got == source(d, name)[off:off + PAGE], "long fault: wrong content")
    check(took >= delay / 1000 * 0.9, f"the fault took {took:.1f}s: no slow fill happened")
    mm.close()
    os.close(fd)
    fs.write("/long-after", b"still a live host")
    dmesg = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    check("declared this host dead" not in dmesg, f"declared dead:\n{dmesg[-2000:]}")
    result(longfault="ok", fault_s=f"{took:.1f}")
    fs_mark(fs, "L", "long-done")


def scen_survivor(args):
    d, m = manifest(args[0])
    role = args[1]
    fs = kg.PosixFS(MNT)
    fs_wait(fs, ["killed"], 300)
    name, off = m["victim_page"]
    t = time.monotonic()
    got = fs.pread(name, PAGE, off)
    check(got == source(d, name)[off:off + PAGE], "survivor: wrong content")
    result(**{f"survivor_{role}": "ok", f"survivor_wait_s_{role}": f"{time.monotonic() - t:.1f}"})
    fs_mark(fs, role, f"survived-{role}")
    fs_wait(fs, ["recovered"], 300)


def scen_timeout(args):
    """Nobody can fill: the read fails (ETIMEDOUT) after the bounded wait."""
    d, m = manifest(args[0])
    name = m["fit"][0]
    t = time.monotonic()
    try:
        kg.PosixFS(MNT).pread(name, PAGE, 0)
        check(False, "read of an unreachable page succeeded")
    except OSError as e:
        check(e.errno == errno.ETIMEDOUT, f"read failed with {e!r}, want ETIMEDOUT")
    result(timeout="ETIMEDOUT", timeout_s=f"{time.monotonic() - t:.1f}",
           timeouts=mountstats()["pcache_shared"]["timeouts"])


KILL_EXIT_S = 30.0      # liveness bound for a killed reader; the fill wait is 120 s


def scen_killwait(args):
    """Nobody can fill and the bounded wait is long (2 x a 60 s lease): a reader
    killed while it waits exits (the wait stops on a fatal signal) instead of
    sitting out the wait in D state."""
    d, m = manifest(args[0])
    name = m["fit"][0]
    pid = os.fork()
    if pid == 0:
        try:
            kg.PosixFS(MNT).pread(name, PAGE, 0)
        finally:
            os._exit(0)
    time.sleep(1.0)
    os.kill(pid, 9)
    t = time.monotonic()
    done = 0
    while not done and time.monotonic() - t < KILL_EXIT_S:
        done, _ = os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)
    if not done:
        # let the guest finish cleanly: the wait ends by itself
        os.waitpid(pid, 0)
    check(done, f"a killed reader still waited for the fill after {KILL_EXIT_S} s")
    result(killwait="ok", killwait_exit_s=f"{time.monotonic() - t:.1f}")


# ---------------------------------------------------------------- mapping lifetime
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]
_libc.mremap.restype = ctypes.c_void_p
_libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int,
                         ctypes.c_void_p]
for _f in ("munmap", "mprotect", "madvise"):
    getattr(_libc, _f).argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int][
        :3 if _f != "munmap" else 2]
MAP_FAILED = ctypes.c_void_p(-1).value
PROT_NONE, MREMAP_MAYMOVE, MREMAP_FIXED, MADV_DONTNEED = 0, 1, 2, 4


def _sys(name, r, *a):
    if r in (-1, MAP_FAILED, None):
        e = ctypes.get_errno()
        raise OSError(e, f"{name}: {os.strerror(e)}")
    return r


def mmap_ro(fd, n):
    return _sys("mmap", _libc.mmap(None, n * PAGE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0))


def peek(addr, pg, n=1):
    return ctypes.string_at(addr + pg * PAGE, n * PAGE)


def pins():
    return mountstats()["pcache"]["mmap_pins"]


class Checks:
    """Named sub-checks of one scenario: each runs, its verdict goes to the console, and
    the scenario fails at the end if any failed (one boot shows every finding)."""

    def __init__(self):
        self.failed = []

    def run(self, name, fn, *a):
        try:
            fn(*a)
            result(**{name: "ok"})
        except Exception as e:  # noqa: B902 - every finding goes to the console
            log(f"CHECK FAILED: {name}: {e!r}")
            result(**{name: "FAIL"})
            self.failed.append(name)


def want(cond, msg):
    if not cond:
        raise AssertionError(msg)


def in_child(fn):
    """Runs fn in a forked child (another process of this host); its failure fails us."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            fn()
            code = 0
        except BaseException as e:  # noqa: B902 - report anything, then leave
            log(f"child failed: {e!r}")
        finally:
            os._exit(code)
    want(os.waitpid(pid, 0)[1] == 0, "the child process failed")


def lt_fork(path, data):
    """fork copies the mapping (vm_ops->open): the parent's munmap leaves the child's
    pins; the child's exit (last close) releases them."""
    n = len(data) // PAGE
    fd = os.open(path, os.O_RDONLY)
    a = mmap_ro(fd, n)
    os.close(fd)
    want(peek(a, 0, n) == data, "mapping: wrong content")
    want(pins() == n, f"mmap_pins {pins()}, want {n}")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        ok = peek(a, 0, n) == data and pins() == n
        os._exit(0 if ok else 1)
    os.close(r)
    _libc.munmap(a, n * PAGE)
    left = pins()
    os.write(w, b"x")
    os.close(w)
    st = os.waitpid(pid, 0)[1]
    want(left == n, f"after the parent's munmap {left} pins, want {n} (the child maps them)")
    want(st == 0, "the child's copy of the mapping read wrong or lost its pins")
    want(pins() == 0, f"{pins()} pins left after the child exited")


def lt_split(path, data):
    """munmap of a middle page and mprotect split the VMA (->open on the new piece),
    mremap moves a piece (->open, then ->close of the old), madvise(DONTNEED) and a
    re-fault reuse the pin; unmapping everything releases every pin."""
    n = len(data) // PAGE
    fd = os.open(path, os.O_RDONLY)
    a = mmap_ro(fd, n)
    os.close(fd)
    want(peek(a, 0, n) == data, "mapping: wrong content")
    _sys("munmap", _libc.munmap(a + 3 * PAGE, PAGE))
    want(pins() == n, f"hole punched: {pins()} pins, want {n}")
    _sys("mprotect", _libc.mprotect(a + 5 * PAGE, PAGE, PROT_NONE))
    _sys("mprotect", _libc.mprotect(a + 5 * PAGE, PAGE, mmap.PROT_READ))
    _sys("madvise", _libc.madvise(a, 3 * PAGE, MADV_DONTNEED))
    want(peek(a, 0, 3) == data[:3 * PAGE], "re-fault after MADV_DONTNEED: wrong content")
    want(pins() == n, f"after split/madvise/re-fault {pins()} pins, want {n}")
    dst = _sys("mmap", _libc.mmap(None, 2 * PAGE, PROT_NONE,
                                  mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0))
    m = _sys("mremap", _libc.mremap(a + 6 * PAGE, 2 * PAGE, 2 * PAGE,
                                    MREMAP_MAYMOVE | MREMAP_FIXED, dst))
    want(peek(m, 0, 2) == data[6 * PAGE:8 * PAGE], "moved mapping: wrong content")
    want(peek(a, 4, 2) == data[4 * PAGE:6 * PAGE], "split mapping: wrong content")
    want(pins() == n, f"after mremap {pins()} pins, want {n}")
    _libc.munmap(a, 6 * PAGE)
    want(pins() == n, f"one piece still mapped: {pins()} pins, want {n}")
    _libc.munmap(m, 2 * PAGE)
    want(pins() == 0, f"{pins()} pins left after every piece was unmapped")


def lt_truncate(path, data):
    """Another process truncates inside page 0 and extends again while we map the file
    from the cache: bytes past the cut read as zeros in our mapping (as read(2) shows
    them), and every pin is dropped once (no WARN in dmesg, none left)."""
    fd = os.open(path, os.O_RDONLY)
    a = mmap_ro(fd, 3)
    want(peek(a, 0, 3) == data[:3 * PAGE], "mapping: wrong content")
    want(pins() == 3, f"mmap_pins {pins()}, want 3")

    def cut():
        wfd = os.open(path, os.O_WRONLY)
        os.ftruncate(wfd, 100)
        os.ftruncate(wfd, 3 * PAGE)
        os.close(wfd)
    in_child(cut)
    exp = data[:100] + bytes(3 * PAGE - 100)
    want(os.pread(fd, 3 * PAGE, 0) == exp, "read(2) after truncate/extend: wrong content")
    got = peek(a, 0, 3)
    nz = [i for i in range(100, 3 * PAGE) if got[i]]
    left = pins()
    _libc.munmap(a, 3 * PAGE)
    os.close(fd)
    want(not nz, f"mapping shows {len(nz)} old bytes past the cut (first at {nz[:1]})")
    want(left == 0, f"{left} pins still held for pages the truncate moved")
    want(pins() == 0, f"{pins()} pins left after munmap")


def lt_copyup(path, data):
    """Another process copies pages up while we map them from the cache: by write(2)
    (page 1) and by a write fault of its shared writable mapping (page 2).  Our mapping
    shows the new bytes at once, and each old pin is dropped once."""
    fd = os.open(path, os.O_RDONLY)
    a = mmap_ro(fd, 3)
    want(peek(a, 0, 3) == data[:3 * PAGE], "mapping: wrong content")
    want(pins() == 3, f"mmap_pins {pins()}, want 3")

    def write():
        wfd = os.open(path, os.O_WRONLY)
        os.pwrite(wfd, b"WRITE(2)", PAGE + 8)
        os.close(wfd)
    in_child(write)
    want(peek(a, 1)[8:16] == b"WRITE(2)", "our mapping did not follow the write(2)")
    want(pins() == 2, f"after write(2) {pins()} pins, want 2")

    def fault():
        wfd = os.open(path, os.O_RDWR)
        mm = mmap.mmap(wfd, 3 * PAGE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                       offset=0)
        mm[2 * PAGE + 8:2 * PAGE + 16] = b"FAULTED!"
        mm.close()
        os.close(wfd)
    in_child(fault)
    want(peek(a, 2)[8:16] == b"FAULTED!", "our mapping did not follow the write fault")
    want(pins() == 1, f"after the write fault {pins()} pins, want 1")
    want(peek(a, 0) == data[:PAGE], "page 0 changed")
    _libc.munmap(a, 3 * PAGE)
    os.close(fd)
    want(pins() == 0, f"{pins()} pins left after munmap")


def _mount(*opts):
    return subprocess.run(["mount", "-o", ",".join(("remount",) + opts), MNT],
                          capture_output=True, text=True)


def lt_remount(path, data):
    """Remount ro, rw, with the same backing= and with another: the mount keeps its
    backing files and reads right; a changed backing= is refused."""
    def opts():
        with open("/proc/mounts") as f:
            return next(x.split()[3] for x in f if x.split()[1] == MNT)
    before = opts()
    backing = next(o for o in before.split(",") if o.startswith("backing="))[8:]
    for o in (("ro",), ("rw",), ("backing=" + backing,)):
        r = _mount(*o)
        want(r.returncode == 0, f"mount -o remount,{','.join(o)}: {r.stderr.strip()}")
        want(kg.read_file(path) == data, f"after remount,{','.join(o)}: wrong content")
    r = _mount("backing=" + backing + ".other")
    want(r.returncode != 0, "a remount changing backing= was accepted")
    want(opts() == before, f"options changed: {before} -> {opts()}")
    kg.write_file(os.path.join(MNT, "remount-rw"), b"ok")


def fill_server_pid():
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    if f.read().startswith("daxfs-fill"):
                        return int(d)
            except OSError:
                pass
    return None


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        st = f.read().rsplit(")", 1)[1].split()
    return int(st[11]) + int(st[12])        # utime + stime


def lt_idle():
    """The fill server sleeps when nobody asks (idle guests must stay idle)."""
    pid = fill_server_pid()
    want(pid, "no daxfs-fill kthread")
    time.sleep(3)                           # past its busy window
    t0, c0 = time.monotonic(), cpu_ticks(pid)
    time.sleep(5)
    hz = os.sysconf("SC_CLK_TCK")
    used, span = cpu_ticks(pid) - c0, (time.monotonic() - t0) * hz
    result(fill_server_idle_ticks=used, fill_server_idle_span_ticks=int(span))
    want(used < span / 10, f"idle fill server used {used} of {span:.0f} ticks")


def lt_slow_umount(fs, slow_ms):
    """A host without backing asks for a page while our fill server sleeps in a slow
    backing read (fill_delay_ms): umount stops the server without waiting it out."""
    with open("/sys/module/daxfs/parameters/fill_delay_ms", "w") as f:
        f.write(str(slow_ms))
    r0 = kernel_reads()
    fs_mark(fs, "A", "slow-ready")
    end = time.monotonic() + 120
    while kernel_reads() == r0:
        want(time.monotonic() < end, "the host's request never reached our fill server")
        time.sleep(0.1)
    pid = fill_server_pid()
    t = time.monotonic()
    r = subprocess.run(["umount", MNT], capture_output=True, text=True)
    took = time.monotonic() - t
    result(umount_during_slow_fill_s=f"{took:.1f}")
    with open("/sys/module/daxfs/parameters/fill_delay_ms", "w") as f:
        f.write("0")
    want(r.returncode == 0, f"umount: {r.stderr.strip()}")
    want(not os.path.exists(f"/proc/{pid}"), "the fill server outlived the umount")
    want(took * 1000 < slow_ms, f"umount waited for the slow fill ({took:.1f} s)")


def scen_lifetime(args):
    d, m = manifest(args[0])
    slow_ms = int(args[1])
    fs = kg.PosixFS(MNT)
    c = Checks()
    for name, fn in (("lt_fork", lt_fork), ("lt_split", lt_split),
                     ("lt_truncate", lt_truncate), ("lt_copyup", lt_copyup)):
        f = m[name][0]
        c.run(name, fn, os.path.join(MNT, f.lstrip("/")), source(d, f))
    f = m["fit"][0]
    c.run("lt_remount", lt_remount, os.path.join(MNT, f.lstrip("/")), source(d, f))
    c.run("lt_idle", lt_idle)
    c.run("lt_slow_umount", lt_slow_umount, fs, slow_ms)
    check(not c.failed, f"failed: {' '.join(c.failed)}")


def scen_stale(args):
    """Maps a file (pins), then waits, reading, until this host is declared dead (the test
    stops our QEMU meanwhile): reads fail with EIO; then unmaps (the pins of a dead host
    must not be released in a pin column that a new host may own by now)."""
    d, m = manifest(args[0])
    fs = kg.PosixFS(MNT)
    name = m["fit"][0]
    fd = os.open(os.path.join(MNT, name.lstrip("/")), os.O_RDONLY)
    size = os.fstat(fd).st_size
    mm = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
    check(mm[:] == source(d, name), "mapping: wrong content")
    fs_mark(fs, "V", "mapped", str(pins()).encode())
    end = time.monotonic() + 300
    while True:
        try:
            kg.read_file(os.path.join(MNT, m["fit"][1].lstrip("/")))
        except OSError as e:
            check(e.errno == errno.EIO, f"read failed with {e!r}, want EIO")
            break
        check(time.monotonic() < end, "this host was never declared dead")
        time.sleep(0.2)
    log("declared dead: reads fail with EIO; unmapping")
    mm.close()
    os.close(fd)
    result(stale="ok")


def main():
    global MNT
    MNT = sys.argv[2]
    kg.dispatch(globals())


if __name__ == "__main__":
    main()
