#!/usr/bin/env python3
"""vm/mmap_kguest.py - guest side of tests/vm/test_kernel_mmap_reuse.py.

Runs inside a QEMU guest as `host python3 vm/mmap_kguest.py SCENARIO MNT ARGS...` through
vm/guest/daxfs-k.sh's `mm:` step.  The user-space host of the test runs reuse_peer()
through libdaxfs on the same memory file.

Scenarios:
  reuse ROLE PATH [PAGES]
                    map PATH (written by the peer: PAGES pages, default REUSE_PAGES,
                    page i = victim(i))
                    read-only and shared, then scan every page until the peer's marker
                    while the peer truncates PATH to 0, regrows it and fills the pool with
                    other files (other()).  Every byte must be the old one or zero
                    (a page read while the lease pass unmaps it has some of each:
                    "torn"), never another file's; after the marker every page must be
                    zeros (docs/kernel.md, "Mappings across hosts").  Reports the
                    minor faults of the first scan (one per page, or one per 2 MiB run
                    mapped with a PMD: docs/kernel.md "PMD mappings of runs").
  pmdrw ROLE PATH   a file of two 2 MiB runs written here, mapped shared and writable:
                    its bytes through the mapping, what a user may do to their own
                    mapping (pagemap, clear_refs, smaps, /proc/self/mem: no oops),
                    stores through it (seen by pread(2),
                    mtime moved), then a truncate into the second run: the first still
                    maps its bytes, the cut run's rest below EOF its own, past EOF SIGBUS.
  hole ROLE PATH    map PATH (HOLE_PAGES pages, all holes, made by the peer) read-only
                    and shared and read every page (zeros), then wait until the peer has
                    filled the odd pages: the mapping must come to show them (without a
                    read(2) of the file) while the even pages stay zeros; then a hole
                    of a file of our own, mapped the same way, filled by our own
                    pwrite(2), must show through the mapping at once.
  ask ROLE PATH     map PATH (ASK_PAGES pages, written by the peer) read-only and shared
                    and hold the mapping until the peer's marker, while the peer fills the
                    pool, deletes the filler and writes as much again (ask_peer): its
                    writes wait for our mapping announcement, which must move when the
                    peer asks for a pass, not at our next lease tick (docs/reclaim.md,
                    "Asking for a pass").
"""
import errno
import mmap
import os
import resource
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daxfs_kguest as kg  # noqa: E402
from daxfs_kguest import check, fs_mark, fs_wait, log, result  # noqa: E402

PAGE = 4096
REUSE_PAGES = 64
OTHER = b"OTHER-FILE-DATA!" * (PAGE // 16)
ZERO = bytes(PAGE)
REFILL_S = 8.0          # the peer keeps refilling this long (6 lease ticks at lease 5 s)


def victim(i):
    return (b"VICTIM-PAGE%05d" % i) * (PAGE // 16)


def _kind(pg, i):
    """old, zero, torn (every byte old or zero: a copy that the unmapping of the
    page interrupted, the first bytes read before it, the rest after it), other
    (another file's bytes) or junk (neither)."""
    if pg == victim(i):
        return "old"
    if pg == ZERO:
        return "zero"
    old = victim(i)
    if any(pg[o:o + 16] == OTHER[:16] for o in range(0, PAGE, 16)):
        return "other"
    if all(b == 0 or b == old[o] for o, b in enumerate(pg)):
        return "torn"
    return "junk"


def _runs(pg, i):
    """The page as runs of (what, length): old bytes, zeros or other bytes."""
    old, runs = victim(i), []
    for o, b in enumerate(pg):
        k = "old" if b == old[o] else "zero" if b == 0 else "x"
        if runs and runs[-1][0] == k:
            runs[-1][1] += 1
        else:
            runs.append([k, 1])
    return runs


def _map_when(fs, ready, path, pages):
    """Once the peer's marker ready is there: path's first pages mapped read-only and
    shared."""
    fs_wait(fs, [ready], 300)
    fd = os.open(kg.p(path), os.O_RDONLY)
    m = mmap.mmap(fd, pages * PAGE, mmap.MAP_SHARED, mmap.PROT_READ)
    os.close(fd)
    return m


def minor_faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def scen_reuse(args):
    role, path = args[0], args[1]
    pages = int(args[2]) if len(args) > 2 else REUSE_PAGES
    fs = kg.PosixFS(kg.MNT)
    m = _map_when(fs, "reuse-ready", path, pages)
    f0 = minor_faults()
    for i in range(pages):
        check(m[i * PAGE:(i + 1) * PAGE] == victim(i), f"page {i} wrong before the cut")
    result(reuse_faults=minor_faults() - f0, kernel=os.uname().release)
    fs_mark(fs, role, "reuse-mapped")
    seen = {"old": 0, "zero": 0, "torn": 0, "other": 0, "junk": 0}
    bad_seen = set()
    scans, first_bad = 0, None
    t0 = time.monotonic()
    while True:
        done = fs.exists("/sync/reuse-done")     # one whole scan after the marker
        last = []
        for i in range(pages):
            pg = m[i * PAGE:(i + 1) * PAGE]
            k = _kind(pg, i)
            seen[k] += 1
            last.append(k)
            if k != "old" and k != "zero" and k not in bad_seen:
                bad_seen.add(k)
                log(f"page {i}: {k} at {time.monotonic() - t0:.2f} s: {_runs(pg, i)[:16]}"
                    + (f" bytes {pg[:64]!r}" if k == "junk" else ""))
            if k in ("other", "junk") and first_bad is None:
                first_bad = (i, k, round(time.monotonic() - t0, 2))
        scans += 1
        if done:
            break
        check(time.monotonic() - t0 < 300, "the peer's marker never came")
    m.close()
    result(reuse_scans=scans, **{f"reuse_{k}": v for k, v in seen.items()},
           reuse_last_zero=last.count("zero"))
    check(first_bad is None, f"another file's bytes through the mapping: page, kind, "
          f"seconds after mapping = {first_bad}; counts {seen}")
    check(last.count("zero") == pages,
          f"after the peer's refill the mapping still shows old bytes: {last}")
    result(reuse="ok")


HOLE_PAGES = 16
HOLE_WAIT_S = 120       # the lease work revalidates every lease/4; a loaded TCG guest is slow


def hole_page(i):
    return (b"FILLED-HOLE%05d" % i) * (PAGE // 16)


def _hole_pages(m, n):
    return [m[i * PAGE:(i + 1) * PAGE] for i in range(n)]


def _holes_filled(pages):
    return all(pg == (hole_page(i) if i % 2 else ZERO) for i, pg in enumerate(pages))


def _hole_own(path):
    """A hole of our own file, mapped read-only and shared, then filled by pwrite(2)
    here: the mapping shows the bytes at once (not the zero page it had)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    os.ftruncate(fd, 4 * PAGE)
    m = mmap.mmap(fd, 4 * PAGE, mmap.MAP_SHARED, mmap.PROT_READ)
    check(_hole_pages(m, 4) == [ZERO] * 4, "own holes do not read as zeros")
    check(os.pwrite(fd, hole_page(1), PAGE) == PAGE, "own pwrite short")
    pages = _hole_pages(m, 4)
    m.close()
    os.close(fd)
    os.unlink(path)
    check(pages[1] == hole_page(1),
          "our own pwrite(2) into a mapped hole: the mapping still shows zeros")
    check(pages[0] == pages[2] == pages[3] == ZERO, "own untouched holes not zeros")


def scen_hole(args):
    role, path = args[0], args[1]
    fs = kg.PosixFS(kg.MNT)
    fs_wait(fs, ["hole-ready"], 300)
    fd = os.open(kg.p(path), os.O_RDONLY)
    m = mmap.mmap(fd, HOLE_PAGES * PAGE, mmap.MAP_SHARED, mmap.PROT_READ)
    check(_hole_pages(m, HOLE_PAGES) == [ZERO] * HOLE_PAGES, "holes do not read as zeros")
    fs_mark(fs, role, "hole-mapped")
    fs_wait(fs, ["hole-filled"], 300)
    t0 = time.monotonic()
    while not _holes_filled(pages := _hole_pages(m, HOLE_PAGES)):
        if time.monotonic() - t0 > HOLE_WAIT_S:
            stale = [i for i, pg in enumerate(pages) if i % 2 and pg == ZERO]
            check(False, f"{HOLE_WAIT_S} s after the peer filled them, the mapping still "
                  f"shows the zero page for pages {stale} (read(2) shows "
                  f"{'the data' if os.pread(fd, PAGE, PAGE) == hole_page(1) else 'zeros'})")
        time.sleep(0.1)
    log(f"the filled holes showed through the mapping after {time.monotonic() - t0:.2f} s")
    check(os.pread(fd, PAGE, PAGE) == hole_page(1), "read(2) does not show the filled hole")
    m.close()
    os.close(fd)
    _hole_own(kg.p(path + "-own"))
    result(hole="ok")


def hole_peer(r, path):
    """The user-space host: makes PATH all holes, waits for the mapping, then writes
    the odd pages."""
    fs = kg.LibFS(r)
    r.create(path)
    r.truncate(path, HOLE_PAGES * PAGE)
    fs_mark(fs, "H", "hole-ready")
    fs_wait(fs, ["hole-mapped"], 400)
    with r.open(path) as f:
        for i in range(1, HOLE_PAGES, 2):
            f.pwrite(hole_page(i), i * PAGE)
    fs_mark(fs, "H", "hole-filled")


ASK_PAGES = 4
ASK_ROUNDS = 2          # the second round starts just after the first one's pass
ASK_MIB = 1 << 20


def ask_page(i):
    return (b"ASKED-PASS%06d" % i) * (PAGE // 16)


def scen_ask(args):
    role, path = args[0], args[1]
    fs = kg.PosixFS(kg.MNT)
    m = _map_when(fs, "ask-ready", path, ASK_PAGES)
    want = b"".join(ask_page(i) for i in range(ASK_PAGES))
    check(m[:] == want, "mapped pages wrong")
    fs_mark(fs, role, "ask-mapped")
    fs_wait(fs, ["ask-done"], 400)
    check(m[:] == want, "mapped pages changed while the peer refilled the pool")
    m.close()
    result(ask="ok")


def ask_peer(r, path):
    """The user-space host: writes PATH, waits for the mapping, fills the pool with
    /fill (1 MiB writes until ENOSPC), then ASK_ROUNDS times deletes the last file and
    writes all but one MiB of it again.  Each such write waits for the deleted file's
    pages, which the guest's mapping holds back until it passes.  Returns the seconds
    each write took and the rounds whose write failed."""
    fs = kg.LibFS(r)
    r.write_file(path, b"".join(ask_page(i) for i in range(ASK_PAGES)))
    fs_mark(fs, "H", "ask-ready")
    fs_wait(fs, ["ask-mapped"], 400)
    n = 0
    with r.open("/fill", create=True) as f:
        try:
            while True:
                f.pwrite(OTHER * (ASK_MIB // PAGE), n * ASK_MIB)
                n += 1
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
    waits, enospc, last = [], [], "/fill"
    for k in range(ASK_ROUNDS):
        r.unlink(last)
        last = f"/again{k}"
        t = time.monotonic()
        try:
            r.write_file(last, b"A" * ((n - 1) * ASK_MIB))
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            enospc.append(k)
            r.write_file(last, b"")
        waits.append(round(time.monotonic() - t, 3))
    fs_mark(fs, "H", "ask-done")
    return {"ask_waits": waits, "ask_enospc": enospc, "ask_mib": n - 1}


def _fill(r, d, n0, size, budget=None):
    """Writes files of size bytes of OTHER under d until ENOSPC (or budget files);
    returns (files written whole, next index)."""
    n = n0
    written = 0
    while budget is None or written < budget:
        try:
            r.write_file(f"{d}/f{n:06d}", OTHER * (size // PAGE))
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
            return written, n + 1
        n += 1
        written += 1
    return written, n


def reuse_peer(r, path, pages=REUSE_PAGES):
    """The user-space host: writes PATH, waits for the mapping, fills the pool, truncates
    PATH to 0 and regrows it, then keeps reclaiming and refilling for REFILL_S: every page
    the truncate frees is reused by another file as soon as reclamation allows.  Returns
    what it saw (pages written after the cut)."""
    fs = kg.LibFS(r)
    r.write_file(path, b"".join(victim(i) for i in range(pages)))
    r.mkdir("/fill")
    fs_mark(fs, "H", "reuse-ready")
    fs_wait(fs, ["reuse-mapped"], 400)
    n = 0
    for size in (1 << 20, 64 << 10, PAGE):        # the pool full to the last page
        _, n = _fill(r, "/fill", n, size)
    r.truncate(path, 0)
    r.truncate(path, pages * PAGE)
    after, t0 = 0, time.monotonic()
    while time.monotonic() - t0 < REFILL_S:
        r.reclaim()
        # only what df offers (half of it: inodes and names need room too), so
        # that creates rarely fail for lack of space
        room = r.statfs()["free_bytes"] // PAGE // 2
        if room:
            w, n = _fill(r, "/fill", n, PAGE, budget=room)
            after += w
        time.sleep(0.05)
    # room for the marker: the refill files go (through limbo, like any unlink)
    for i in range(n):
        try:
            r.unlink(f"/fill/f{i:06d}")
        except FileNotFoundError:
            pass
    end = time.monotonic() + 60
    while True:
        r.reclaim()
        try:
            fs_mark(fs, "H", "reuse-done")
            break
        except OSError as e:
            if e.errno != errno.ENOSPC or time.monotonic() > end:
                raise
            time.sleep(0.1)
    return {"pages_after_cut": after}


RUN_PAGES = 512                 # a 2 MiB run (docs/files.md "Runs")


def _sigbus_at(m, off):
    """True when a load of byte off through m kills a child with SIGBUS."""
    pid = os.fork()
    if pid == 0:
        m[off]
        os._exit(0)
    _, st = os.waitpid(pid, 0)
    return os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGBUS


def _walk_own_mapping(m, data):
    """What any user may do to their own mapping, and what a kernel that took a PMD of
    region frames for a THP's would crash on (docs/kernel.md "PMD mappings of runs"):
    /proc/self/pagemap read over it, /proc/self/clear_refs written, /proc/self/mem read
    through it (get_user_pages on the mapping: the bytes, or an error, never an oops),
    smaps read.  The cluster's `clean` step then checks dmesg."""
    import ctypes
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    with open("/proc/self/pagemap", "rb") as f:
        f.seek(addr // PAGE * 8)
        check(len(f.read(len(data) // PAGE * 8)) == len(data) // PAGE * 8,
              "pagemap read short")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("1")
    with open("/proc/self/smaps") as f:
        f.read()
    fd = os.open("/proc/self/mem", os.O_RDONLY)
    try:
        got = os.pread(fd, 64, addr + 3 * PAGE)
        check(got == data[3 * PAGE:3 * PAGE + 64], "/proc/self/mem read wrong bytes")
        how = "bytes"
    except OSError as e:
        how = errno.errorcode.get(e.errno, str(e.errno))
    os.close(fd)
    log(f"/proc/self/mem over the mapping: {how}")
    check(m[:64] == data[:64], "the mapping changed after the walks")


def scen_pmdrw(args):
    path = kg.p(args[1])
    size = 2 * RUN_PAGES * PAGE
    data = b"".join(victim(i) for i in range(2 * RUN_PAGES))
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    for o in (0, size // 2):                    # each a whole aligned 2 MiB: a run
        check(os.pwrite(fd, data[o:o + size // 2], o) == size // 2, "short pwrite")
    m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    f0 = minor_faults()
    for i in range(2 * RUN_PAGES):              # a page at a time: no big buffer faulted in
        check(m[i * PAGE:(i + 1) * PAGE] == data[i * PAGE:(i + 1) * PAGE],
              f"page {i} of the runs reads wrong through the mapping")
    faults = {"read": minor_faults() - f0}
    _walk_own_mapping(m, data)
    try:            # VM_PFNMAP (mounted with pmd) refuses it: docs/kernel.md
        m.madvise(mmap.MADV_DONTNEED, 0, size // 2)
        dontneed = "ok"
    except OSError as e:
        dontneed = errno.errorcode.get(e.errno, str(e.errno))
    check(m[:PAGE] == data[:PAGE], "the first page after MADV_DONTNEED")
    mtime = os.fstat(fd).st_mtime_ns
    time.sleep(0.1)
    stores = {5 * PAGE + 3: b"STORED-IN-RUN-0!", size // 2 + 7 * PAGE: b"STORED-IN-RUN-1!"}
    f0 = minor_faults()
    for off, b in stores.items():
        m[off:off + len(b)] = b
    faults["store"] = minor_faults() - f0
    for off, b in stores.items():
        check(os.pread(fd, len(b), off) == b, f"a store at {off} not seen by pread")
        data = data[:off] + b + data[off + len(b):]
    check(os.fstat(fd).st_mtime_ns > mtime, "a store through the mapping left mtime")
    cut = size // 2 + RUN_PAGES // 2 * PAGE         # half of the second run
    os.ftruncate(fd, cut)
    check(m[:cut] == data[:cut], "bytes below the cut wrong through the mapping")
    check(_sigbus_at(m, cut), "a load past EOF after the cut did not SIGBUS")
    check(_sigbus_at(m, size - 1), "a load at the cut run's end did not SIGBUS")
    check(os.pread(fd, cut, 0) == data[:cut], "pread after the cut wrong")
    m.close()
    os.close(fd)
    os.unlink(path)
    result(pmdrw="ok", pmdrw_dontneed=dontneed, pmdrw_read_faults=faults["read"],
           pmdrw_store_faults=faults["store"], kernel=os.uname().release)


def main():
    kg.dispatch(globals())


if __name__ == "__main__":
    main()
