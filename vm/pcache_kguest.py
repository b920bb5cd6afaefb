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
  survivor DIR ROLE           read the page the victim was filling, after the kill
  timeout DIR                 no host can fill: read fails with ETIMEDOUT, never hangs
"""
import errno
import hashlib
import json
import mmap
import os
import random
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


def main():
    global MNT
    scen, MNT = sys.argv[1], sys.argv[2]
    kg.MNT = MNT
    fn = globals().get("scen_" + scen.replace("-", "_"))
    if fn is None:
        log(f"unknown scenario {scen}")
        sys.exit(2)
    log(f"scenario {scen} args={sys.argv[3:]}")
    fn(sys.argv[3:])
    log(f"scenario {scen} passed")


if __name__ == "__main__":
    main()
