#!/usr/bin/env python3
"""vm/harden_kguest.py - guest side of tests/vm/test_kernel_hardening.py (daxfs.ko
hardening: no user can deny service to the others, no call that cannot be killed, no
peer-written file or node trusted).

Runs inside a QEMU guest as `host python3 vm/harden_kguest.py SCENARIO MNT ARGS...`
through vm/guest/daxfs-k.sh's `hd:` step.

Scenarios:
  opens N     an unprivileged user opens one file N times and keeps every descriptor
              open; meanwhile another user opens, reads and writes files of its own.
              Every open succeeds; the file, unlinked while held, stays readable and its
              space comes back after the last close (docs/open-files.md).
  fsync-sparse
              (persistent route: /dev/pmem0) a file of 2^48 bytes with a few pages
              written and one stored through a shared mapping: fsync, fdatasync and
              msync return (they walked every 4 KiB block up to the size: hours, and
              unkillable), and the bytes read back.
  trunc-fault ROUNDS
              vm/helpers/trunc_fault: one thread faults pages of a shared mapping
              while another truncates and regrows the file ROUNDS times; once
              ftruncate returned, the mapping never shows the bytes it cut.
  times   every kind of object (FIFO, character and block device, regular file, directory,
          symlink) made and then changed at once (chmod, utime(NULL), truncate, write): no
          timestamp of one operation is earlier than one set before it, and the timestamps
          one operation sets are equal (one reading of one clock)
  trust MODE
          set-id files and device nodes that any peer could write: MODE "default" (a
          plain mount) must run a setuid-root program with the caller's ids and refuse to
          open a device node; MODE "trusted" (mount -o trust_suid,trust_dev) must honour
          both.  Either way stat shows the set-id bits, and a write or truncate by another
          user (and chown) clears them
  media-write (fsdax /dev/pmem0) /media-bad and /media-good, MEDIA_PAGES pages each
  media-inject (unmounted) finds page MEDIA_BAD_PAGE of /media-bad on /dev/pmem0 and lists
              its sectors in /sys/block/pmem0/badblocks (the pmem driver's bad-block list,
              which dax_direct_access honours)
  media-read  (mounted again) the mount is read-only; reading the bad page fails with
              EIO, a read across it stops short before it, the pages before it and the
              other file read back; a mapping of the bad page gets SIGBUS, of a good
              page its bytes
  unbind      (fsdax /dev/pmem0) a file open and mapped, then the pmem driver is unbound
              from the namespace under the mount: no oops; read, write, stat, readdir
              and a new open fail with EIO, the mapping with SIGBUS; closing works
  walk-kill   wait until the peer made the pool look full but for one long free list
              of 64-byte objects (docs/alloc.md: a compaction checks and sorts it),
              then a child writes a new file: its allocation compacts and walks.  SIGKILL after WALK_KILL_AFTER_S: the child must
              be gone within WALK_GONE_S (it stopped walking), and dmesg must
              show no soft lockup (the clean step)
  fixed-free, fixed-host, fixed-fsck, direct-open, direct-lock, split-src, direct-pcache
              the free lists, the host table, an open set, the lock table and the
              split-mode cache's slots going bad after the mount (vm/media_fixed_kguest.py)
  base-src, base-bad, base-fsck
              the base image's inode table and directory entries going bad after the
              mount (vm/media_base_kguest.py)
  nohost PATH (a ro,nohost mount) PATH reads back (the peer's put() bytes), and
              mmap is refused with ENODEV: a host-less mount cannot announce a map
              epoch, so a mapping could show pages reused for another file.
  nohost-calls DIR
              (a ro,nohost mount) every system call a user can make on DIR's file f,
              directory e and symlink s: reads work, changes fail with EROFS, mmap
              with ENODEV, locks with ENOLCK (the clean step then checks dmesg).
"""
import errno
import mmap
import os
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daxfs_kguest as kg  # noqa: E402
import ro_calls  # noqa: E402
from daxfs_kguest import check, log, result  # noqa: E402
from media_fixed_kguest import (scen_fixed_free, scen_fixed_host, scen_fixed_fsck,  # noqa: E402,F401
                                 scen_direct_open, scen_direct_lock, scen_split_src,
                                 scen_direct_pcache)
from media_base_kguest import scen_base_src, scen_base_bad, scen_base_fsck  # noqa: E402,F401

HOG_UID = 1001          # opens one file over and over
OTHER_UID = 1002        # opens files of its own meanwhile
OTHER_FILES = 200
ONE_SIZE = 4 << 20      # big enough that its space coming back shows in statvfs


def _as_user(uid, fn):
    """Runs fn() in a child as uid (gid uid); returns the child's pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        fn()
        code = 0
    except BaseException as e:      # the child reports, the parent judges
        log(f"uid {uid}: {e!r}")
    finally:
        os._exit(code)


def _wait_ok(pid, what):
    _, status = os.waitpid(pid, 0)
    check(os.waitstatus_to_exitcode(status) == 0, f"{what} failed")


def _free_bytes():
    st = os.statvfs(kg.MNT)
    return st.f_bavail * st.f_frsize


def _write_read_files(d):
    """OTHER_FILES small files of the other user's, each written and read back."""
    for i in range(OTHER_FILES):
        path = os.path.join(d, f"f{i}")
        kg.write_file(path, b"%d" % i)
        with open(path, "rb") as f:
            check(f.read() == b"%d" % i, f"{path}: wrong bytes")


def scen_opens(args):
    n = int(args[0])
    d = kg.p("opens")
    os.mkdir(d, 0o755)
    one = os.path.join(d, "one")
    body = bytes(range(256)) * (ONE_SIZE // 256)
    kg.write_file(one, body)
    os.chmod(one, 0o644)
    mine = os.path.join(d, "other")
    os.mkdir(mine, 0o755)
    os.chown(mine, OTHER_UID, OTHER_UID)
    # the descriptors are the user's own limit to raise, not the filesystem's
    resource.setrlimit(resource.RLIMIT_NOFILE, (n + 64, n + 64))
    Path("/proc/sys/fs/file-max").write_text(str(4 * n))
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()

    def hog():
        fds = []
        for i in range(n):
            try:
                fds.append(os.open(one, os.O_RDONLY))
            except OSError as e:
                raise RuntimeError(f"open {i + 1} of {n}: {e}") from e
        os.write(ready_w, b"r")
        check(os.read(go_r, 1) == b"g", "no go")
        # unlinked while we hold it: still readable through any descriptor
        check(os.pread(fds[-1], 4096, ONE_SIZE - 4096) == body[-4096:],
              "the held file lost its bytes after its unlink")
        for fd in fds:
            os.close(fd)
        log(f"uid {HOG_UID}: {n} opens of one file held, then closed")

    def other():
        _write_read_files(mine)
        with open(one, "rb") as f:
            check(f.read(4096) == body[:4096], "one: wrong bytes")

    t0 = time.monotonic()
    hog_pid = _as_user(HOG_UID, hog)
    os.close(ready_w)       # a hog that fails closes the pipe: no hang
    check(os.read(ready_r, 1) == b"r", f"uid {HOG_UID} could not open the file {n} times")
    log(f"{n} opens took {time.monotonic() - t0:.1f} s")
    _wait_ok(_as_user(OTHER_UID, other), f"uid {OTHER_UID}'s opens while {n} are held")
    before = _free_bytes()
    os.unlink(one)
    os.write(go_w, b"g")
    _wait_ok(hog_pid, f"uid {HOG_UID}'s reads and closes")
    # freed at the last close, through limbo: the lease work reclaims it
    deadline = time.monotonic() + 60
    while _free_bytes() < before + ONE_SIZE // 2:
        check(time.monotonic() < deadline,
              f"the file's space never came back after its last close: {_free_bytes()}")
        time.sleep(0.2)
    result(opens=n, other_files=OTHER_FILES)


SPARSE_SIZE = 1 << 48    # the largest file daxfs allows
HANG_S = 120            # a sync that takes this long walks holes (ms expected)


def _sync_sparse(fd, m):
    os.fsync(fd)
    os.fdatasync(fd)
    m.flush()           # msync(MS_SYNC) of the whole mapping
    os.fsync(fd)


def scen_create_fail(args):
    """An unprivileged user makes N regular files with mknod(2): each create publishes
    an open-set entry to keep its new file until an open takes it over, and no open
    follows a mknod.  N is more than a host's open set has entries (8,064); afterwards
    another user's creates and opens still succeed.  (open(O_CREAT | O_DIRECTORY), which
    created the file and then failed on older kernels, is EINVAL on this 6.1 build.)"""
    n = int(args[0])
    d = kg.p("cfail")
    os.mkdir(d)
    os.chown(d, HOG_UID, HOG_UID)
    mine = kg.p("cfail-other")
    os.mkdir(mine, 0o755)
    os.chown(mine, OTHER_UID, OTHER_UID)

    def hog():
        errs = {}
        for i in range(n):
            e = kg.errno_of(lambda: os.mknod(os.path.join(d, f"c{i}"), stat.S_IFREG | 0o644))
            errs[e] = errs.get(e, 0) + 1
        log(f"uid {HOG_UID}: {n} mknod(S_IFREG): {errs}")
        check(set(errs) == {0}, f"errors {errs}")

    _wait_ok(_as_user(HOG_UID, hog), f"uid {HOG_UID}'s failing creates")
    made = len(os.listdir(d))
    time.sleep(3.0)     # lease 2 s (the test): a tick each 0.5 s drops the holds
    _wait_ok(_as_user(OTHER_UID, lambda: _write_read_files(mine)),
             f"uid {OTHER_UID}'s opens after {made} creates")
    result(create_fail=made)


def scen_fsync_sparse(args):
    path = kg.p("sparse")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    os.ftruncate(fd, SPARSE_SIZE)
    marks = {0: b"first", 1 << 40: b"middle", SPARSE_SIZE - 4096: b"last"}
    for off, data in marks.items():
        check(os.pwrite(fd, data, off) == len(data), f"pwrite at {off}")
    win = SPARSE_SIZE - 64 * 4096       # a window near the end, mapped shared
    m = mmap.mmap(fd, 16 * 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                  offset=win)
    m[4096:4096 + 6] = b"stored"
    t0 = time.monotonic()
    pid = os.fork()
    if not pid:
        code = 1
        try:
            _sync_sparse(fd, m)
            code = 0
        finally:
            os._exit(code)
    while time.monotonic() - t0 < HANG_S:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        killed = False
        for _ in range(100):
            if os.waitpid(pid, os.WNOHANG)[0]:
                killed = True
                break
            time.sleep(0.1)
        check(False, f"fsync/msync of a {SPARSE_SIZE}-byte sparse file still running after "
              f"{HANG_S} s; SIGKILL {'ended it' if killed else 'did not end it in 10 s'}")
    check(os.waitstatus_to_exitcode(status) == 0, "fsync/fdatasync/msync failed")
    log(f"fsync, fdatasync, msync of a 2^48-byte sparse file: {time.monotonic() - t0:.2f} s")
    for off, data in marks.items():
        check(os.pread(fd, len(data), off) == data, f"bytes at {off} lost")
    check(os.pread(fd, 6, win + 4096) == b"stored", "the store through the mapping is lost")
    m.close()
    os.close(fd)
    os.unlink(path)
    result(fsync_sparse="ok")


HELPERS = Path(__file__).resolve().parents[1] / "build" / "vm-helpers"


def scen_trunc_fault(args):
    rounds = int(args[0])
    p = subprocess.run([str(HELPERS / "trunc_fault"), kg.p("tf"), "16", str(rounds)],
                       capture_output=True, text=True, timeout=1800)
    log(f"trunc_fault: rc={p.returncode} {p.stdout.strip()} {p.stderr.strip()[:2000]}")
    check(p.returncode == 0, "the mapping showed bytes that a finished truncate cut")
    os.unlink(kg.p("tf"))
    result(trunc_fault=p.stdout.strip().replace(" ", ","))



ROUNDS = 40


def _times(path):
    st = os.lstat(path)
    return st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns


def _make(kind, path):
    if kind == "fifo":
        os.mkfifo(path, 0o644)
    elif kind == "chr":
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 3))
    elif kind == "blk":
        os.mknod(path, stat.S_IFBLK | 0o644, os.makedev(7, 0))
    elif kind == "reg":
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    elif kind == "dir":
        os.mkdir(path, 0o755)


def _ordered(what, before, after):
    """Every timestamp the second operation moved is not earlier than the first's."""
    a0, m0, c0 = before
    a1, m1, c1 = after
    check(c1 >= c0 and c1 >= m1, f"{what}: ctime {c1} before mtime {m1} or old ctime {c0}")
    check(m1 >= m0, f"{what}: mtime went back {m0} -> {m1}")


def scen_times(args):
    """mknod/mkfifo/create/mkdir then chmod at once (what `mkfifo -m`, `mknod -m` do),
    utime(NULL), and for files truncate and write: xfstests generic/423's ts_order."""
    bad = 0
    for kind in ("fifo", "chr", "blk", "reg", "dir"):
        for i in range(ROUNDS):
            path = kg.p(f"t-{kind}-{i}")
            _make(kind, path)
            made = _times(path)
            check(made[0] == made[1] == made[2], f"{kind} {i}: made with times {made}")
            os.chmod(path, 0o600)
            mod = _times(path)
            if mod[2] < mod[1]:
                bad += 1
                log(f"{kind} {i}: after chmod ctime {mod[2]} < mtime {mod[1]}")
            _ordered(f"{kind} {i} chmod", made, mod)
            os.utime(path, None)
            now = _times(path)
            check(now[0] == now[1] == now[2], f"{kind} {i}: utime(NULL) set {now}")
            _ordered(f"{kind} {i} utime", mod, now)
            if kind == "reg":
                os.truncate(path, 4096)
                tr = _times(path)
                check(tr[1] == tr[2], f"reg {i}: truncate set mtime {tr[1]} ctime {tr[2]}")
                _ordered(f"reg {i} truncate", now, tr)
                fd = os.open(path, os.O_WRONLY)
                os.write(fd, b"x" * 100)
                os.close(fd)
                wr = _times(path)
                check(wr[1] == wr[2], f"reg {i}: write set mtime {wr[1]} ctime {wr[2]}")
                _ordered(f"reg {i} write", tr, wr)
            if kind == "dir":
                os.rmdir(path)
            else:
                os.unlink(path)
    result(times_bad=bad)
    check(bad == 0, f"{bad} objects had ctime before mtime")
    result(times="ok")


NOBODY = 65534


def _as_nobody(fn):
    """Runs fn() in a child with uid/gid nobody; returns its exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os._exit(fn())
        except BaseException as e:  # noqa: BLE001 - report anything as a status
            log(f"child: {e!r}")
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _euid_of_setuid_id():
    """A setuid-root copy of id(1) on the mount, run by nobody: its effective uid."""
    path = kg.p("suid-id")
    shutil.copyfile(shutil.which("id"), path)
    os.chown(path, 0, 0)
    os.chmod(path, 0o4755)
    check(stat.S_IMODE(os.stat(path).st_mode) == 0o4755,
          f"stat hides the set-id bits: {oct(os.stat(path).st_mode)}")
    r, w = os.pipe()

    def run():
        os.dup2(w, 1)
        os.execv(path, [path, "-u"])
    rc = _as_nobody(run)
    os.close(w)
    out = os.read(r, 100).decode().strip()
    os.close(r)
    os.unlink(path)
    check(rc == 0, f"setuid id exited {rc}")
    return int(out)


def _dev_open_errno():
    path = kg.p("null-dev")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    try:
        os.close(os.open(path, os.O_WRONLY))
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.unlink(path)


FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
FALLOC_FL_ZERO_RANGE = 0x10


def _fallocate(path, mode, off, length):
    """fallocate(2) through libc (Python has posix_fallocate only)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    fd = os.open(path, os.O_WRONLY)
    try:
        if libc.fallocate(fd, mode, off, length):
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e), path)
    finally:
        os.close(fd)
    return 0


def _setid_cleared():
    """Write, truncate and fallocate (grow, punch, zero) by nobody, and chown, clear
    S_ISUID and S_ISGID (with group execute), as on any Linux filesystem (xfstests
    generic/684 found the fallocate case: i_mode hides the bits without trust_suid, so
    the VFS's check saw none)."""
    path = kg.p("setid")

    def write():
        fd = os.open(path, os.O_WRONLY)
        os.write(fd, b"x")
        os.close(fd)
        return 0

    def trunc():
        os.truncate(path, 0)
        return 0
    def falloc(mode):
        return lambda: _as_nobody(lambda: _fallocate(path, mode, 0, 8192))
    for what, op, want in (("write", lambda: _as_nobody(write), 0o777),
                           ("truncate", lambda: _as_nobody(trunc), 0o777),
                           ("fallocate", falloc(0), 0o777),
                           ("punch", falloc(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE), 0o777),
                           ("zero range", falloc(FALLOC_FL_ZERO_RANGE), 0o777),
                           ("chown", lambda: os.chown(path, 1, 1) or 0, 0o777)):
        kg.write_file(path, b"data")
        os.chown(path, 0, 0)
        os.chmod(path, 0o6777)
        check(op() == 0, f"{what} as another user failed")
        mode = stat.S_IMODE(os.stat(path).st_mode)
        check(mode == want, f"{what} left mode {oct(mode)}, not {oct(want)}")
        os.unlink(path)


def scen_trust(args):
    mode = args[0]
    euid = _euid_of_setuid_id()
    err = _dev_open_errno()
    log(f"{mode}: setuid-root id ran with euid {euid}; device open errno {err}")
    result(**{f"trust_{mode}_euid": euid, f"trust_{mode}_dev_errno": err})
    if mode == "trusted":
        check(euid == 0, "mounted suid: the set-uid bit must be honoured")
        check(err == 0, "mounted dev: a device node must open")
    else:
        check(euid == NOBODY, "a peer's setuid-root file ran as root (not nosuid)")
        check(err == errno.EACCES, f"a peer's device node opened (errno {err}, not nodev)")
    _setid_cleared()
    result(**{f"trust_{mode}": "ok"})


NOHOST_DATA = b"HELLO" * 1000


def scen_nohost(args):
    path = kg.p(args[0])
    check(kg.read_file(path) == NOHOST_DATA, f"{path}: wrong bytes")
    fd = os.open(path, os.O_RDONLY)
    try:
        m = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ)
        m.close()
        check(False, "mmap on a host-less mount was allowed")
    except OSError as e:
        check(e.errno == errno.ENODEV, f"mmap on a host-less mount: {e!r}, not ENODEV")
    finally:
        os.close(fd)
    result(nohost="ok")


def scen_nohost_calls(args):
    """Every system call a user can make on a ro,nohost mount: reads work,
    changes fail with EROFS, mmap with ENODEV, and a lock with ENOLCK (a
    host-less mount holds none, docs/kernel.md); the clean step then finds no
    oops or warning in dmesg."""
    bad = ro_calls.sweep(kg.p(args[0]), NOHOST_DATA, (errno.ENODEV,), (errno.ENOLCK,),
                         log=log)
    for b in bad:
        log("FAILED " + b)
    result(nohost_calls=len(bad) and "bad" or "ok", nohost_bad=len(bad))
    check(not bad, f"{len(bad)} calls gave the wrong answer")


PAGE = 4096
INODE_MAGIC = 0x444E49
FSCK = Path(__file__).resolve().parents[1] / "build" / "bin" / "fsck.daxfs"
MEDIA_PAGES = 8
MEDIA_BAD_PAGE = 3
PMEM = "/dev/pmem0"
PMEM_BB = "/sys/block/pmem0/badblocks"


def media_page(name, i):
    return (b"MEDIA-%-4s-PAGE%04d" % (name.encode(), i)).ljust(32, b"!") * (PAGE // 32)


def scen_media_write(args):
    for name in ("bad", "good"):
        kg.write_file(kg.p(f"media-{name}"),
                      b"".join(media_page(name, i) for i in range(MEDIA_PAGES)))
    result(media_write="ok")


def _find_page(dev, page):
    """Byte offset of the page-aligned copy of page on dev."""
    with open(dev, "rb", buffering=0) as f:
        off = 0
        while True:
            chunk = f.read(16 << 20)
            if not chunk:
                return None
            at = chunk.find(page)
            while at >= 0 and at % PAGE:
                at = chunk.find(page, at + 1)
            if at >= 0:
                return off + at
            off += len(chunk)


def scen_media_inject(args):
    off = _find_page(PMEM, media_page("bad", MEDIA_BAD_PAGE))
    check(off is not None, f"page {MEDIA_BAD_PAGE} of /media-bad not found on {PMEM}")
    sector = off // 512
    Path(PMEM_BB).write_text(f"{sector} {PAGE // 512}\n")
    listed = Path(PMEM_BB).read_text().split()
    log(f"bad block listed at {PMEM} byte {off}: {PMEM_BB} = {listed}")
    check(listed[:2] == [str(sector), str(PAGE // 512)], f"{PMEM_BB} did not take it: {listed}")
    result(media_sector=sector)


def _mapped_byte(path, page):
    """Reads a byte of page through a shared read-only mapping in a child: its exit
    code (0) or the signal that ended it (negative)."""
    pid = os.fork()
    if not pid:
        fd = os.open(path, os.O_RDONLY)
        m = mmap.mmap(fd, PAGE, mmap.MAP_SHARED, mmap.PROT_READ, offset=page * PAGE)
        os._exit(0 if m[100] == media_page("bad", page)[100] else 3)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def scen_media_read(args):
    st = os.statvfs(kg.MNT)
    check(st.f_flag & os.ST_RDONLY, "a device with bad blocks mounted read-write")
    bad, good = kg.p("media-bad"), kg.p("media-good")
    fd = os.open(bad, os.O_RDONLY)
    try:
        os.pread(fd, PAGE, MEDIA_BAD_PAGE * PAGE)
        check(False, "a read of the bad page succeeded")
    except OSError as e:
        check(e.errno == errno.EIO, f"a read of the bad page: {e!r}, not EIO")
    got = os.pread(fd, MEDIA_PAGES * PAGE, 0)
    check(got == b"".join(media_page("bad", i) for i in range(MEDIA_BAD_PAGE)),
          f"a read across the bad page returned {len(got)} bytes, not the {MEDIA_BAD_PAGE} "
          "pages before it")
    check(os.pread(fd, PAGE, (MEDIA_BAD_PAGE + 1) * PAGE) ==
          media_page("bad", MEDIA_BAD_PAGE + 1), "the page after the bad one")
    os.close(fd)
    check(kg.read_file(good) == b"".join(media_page("good", i) for i in range(MEDIA_PAGES)),
          "the other file does not read back")
    check(_mapped_byte(bad, 0) == 0, "a mapping of a good page")
    rc = _mapped_byte(bad, MEDIA_BAD_PAGE)
    check(rc == -signal.SIGBUS, f"a mapping of the bad page: exit {rc}, not SIGBUS")
    check(sorted(os.listdir(kg.MNT)) == ["media-bad", "media-good"], "readdir")
    result(media_read="ok")


META_FILES = 64          # enough inode records for several pages of them
META_DIR = "meta"
META_INO = "/tmp/daxfs-meta-ino"


def scen_meta_write(args):
    """(fsdax /dev/pmem0, mounted) /meta/f00.. with a few bytes each."""
    kg.makedirs(kg.p(META_DIR))
    for i in range(META_FILES):
        kg.write_file(kg.p(META_DIR, f"f{i:02d}"), b"meta file %d\n" % i)
    result(meta_write="ok")


def _record_page(ino):
    """Device byte offset of the page that holds inode ino's record (128-byte
    record, 64-byte aligned, starting with the number and the magic)."""
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")          # the block device's cache may hold mkfs's pages
    want = struct.pack("<QI", ino, INODE_MAGIC)
    with open(PMEM, "rb", buffering=0) as f:
        data = f.read()
    at = data.find(want)
    while at >= 0 and at % 64:
        at = data.find(want, at + 1)
    check(at >= 0 and data.find(want, at + 64) < 0, f"record of inode {ino} not found once")
    return at - at % PAGE


def scen_meta_inject(args):
    """(still mounted) lists the page of a late file's inode record as bad (not the
    page of /meta's own record, made first), as the pmem driver does for a page that a
    scrub or a machine check found bad."""
    victim = kg.p(META_DIR, f"f{META_FILES - 4:02d}")
    ino = os.stat(victim).st_ino
    off = _record_page(ino)
    Path(PMEM_BB).write_text(f"{off // 512} {PAGE // 512}\n")
    log(f"inode {ino}: its record's page at {PMEM} byte {off} listed bad")
    Path(META_INO).write_text(str(ino))     # for meta-fsck, unmounted
    result(meta_ino=ino, meta_page=off)


def scen_meta_read(args):
    """Every file of /meta whose record lies on the bad page now fails with EIO (stat,
    open, read), the others still read back, and the kernel said that fsck is
    needed; no oops (the clean step checks dmesg)."""
    eio = ok = 0
    for i in range(META_FILES):
        path = kg.p(META_DIR, f"f{i:02d}")
        e = kg.errno_of(lambda: os.stat(path))
        if e:
            check(e == errno.EIO, f"stat {path}: errno {e}, not EIO")
            check(kg.errno_of(lambda: kg.read_file(path)) == errno.EIO, f"read {path}")
            eio += 1
            continue
        check(kg.read_file(path) == b"meta file %d\n" % i, f"{path} reads back wrong")
        ok += 1
    check(eio >= 1, "no file failed: the bad page was read")
    check(ok >= 1, "every file failed: more than the bad page was refused")
    msg = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    check("lies on a bad block" in msg and "fsck.daxfs" in msg,
          "the kernel did not say that fsck is needed")
    log(f"{eio} files EIO, {ok} fine")
    check(os.stat(kg.MNT).st_nlink >= 2, "the root")
    result(meta_read="ok", meta_eio=eio, meta_ok=ok)


def _fsck(*args):
    p = subprocess.run([str(FSCK), *args, PMEM], capture_output=True, text=True,
                       timeout=300)
    log(f"fsck.daxfs {' '.join(args)} {PMEM}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p.returncode, p.stdout + p.stderr


def scen_meta_fsck(args):
    """(unmounted) fsck.daxfs reads the device's own list: -n names the inode whose
    record is lost without loading the page (a load would be a SIGBUS: the driver
    refuses the listed sectors) and exits 4.  -y must first write zeros there, which
    QEMU's NVDIMM refuses (it cannot clear poison: no ACPI clear-error method), so it
    says so, repairs nothing and exits 4; the list and the page stay as they were."""
    ino = int(Path(META_INO).read_text())
    rc, out = _fsck("-n")
    check(rc == 4, f"fsck -n: exit {rc}, not 4")
    check(f"(inode {ino}): metadata at" in out and PMEM_BB.split("/")[-1] in out,
          "fsck -n did not name the inode on the bad page, or the list it read")
    listed = Path(PMEM_BB).read_text()
    rc, out = _fsck("-y")
    check(rc == 4, f"fsck -y: exit {rc}, not 4")
    check("cannot write zeros over the bad ranges (the device refuses them)" in out and
          "nothing repaired" in out, "fsck -y did not say why it repaired nothing")
    check(Path(PMEM_BB).read_text() == listed, "the bad-block list changed")
    rc, out = _fsck("-n")
    check(rc == 4, f"fsck -n after the refused -y: exit {rc}, not 4")
    result(meta_fsck="ok")


def scen_unbind(args):
    path = kg.p("unbind")
    data = bytes(range(256)) * (4 * PAGE // 256)
    kg.write_file(path, data)
    fd = os.open(path, os.O_RDWR)
    m = mmap.mmap(fd, 4 * PAGE, mmap.MAP_SHARED, mmap.PROT_READ)
    check(m[:PAGE] == data[:PAGE], "the mapping before the unbind")
    # in fsdax mode nd_pmem drives the pfn device that claims the namespace
    drv = Path("/sys/bus/nd/drivers/nd_pmem")
    devs = [d.name for d in drv.iterdir() if d.name.startswith(("pfn", "namespace"))]
    check(len(devs) == 1, f"nd_pmem drives {devs}, not one device")
    (drv / "unbind").write_text(devs[0])
    log(f"nd_pmem unbound from {devs[0]} under the mount")
    errs = {
        "read": kg.errno_of(lambda: os.pread(fd, PAGE, 0)),
        "write": kg.errno_of(lambda: os.pwrite(fd, b"x", 0)),
        "stat": kg.errno_of(lambda: os.stat(kg.p("unbind"))),
        "readdir": kg.errno_of(lambda: os.listdir(kg.MNT)),
        "create": kg.errno_of(lambda: os.close(os.open(kg.p("new"), os.O_CREAT | os.O_WRONLY))),
    }
    log(f"after the unbind: {errs}")
    result(**{f"unbind_{k}": v for k, v in errs.items()})
    for what, e in errs.items():
        check(e == errno.EIO, f"{what} after the unbind: errno {e}, not EIO")
    pid = os.fork()
    if not pid:
        # the notice zaps the mapping from a work item: a load may still see
        # the old page until then, then SIGBUS (bounded: 60 s)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            m[0]
            time.sleep(0.01)
        os._exit(0)
    rc = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    check(rc == -signal.SIGBUS, f"the mapping after the unbind: exit {rc}, not SIGBUS")
    m.close()
    os.close(fd)
    result(unbind="ok")


WALK_FLAG = "walk-flag"
WALK_CLEAR = b"WALK-FLAG-CLEAR!"     # the flag file's page, until the peer sets it
WALK_SET = b"WALK-FLAG-SET!!!"
WALK_KILL_AFTER_S = 2
WALK_GONE_S = 20        # a killed walker stops at its next step (ms expected)


def scen_walk_kill(args):
    fs = kg.PosixFS(kg.MNT)
    kg.fs_mark(fs, "A", "walk-mounted")
    # the peer's flag: a byte of a page it wrote before (no allocation:
    # the pool looks full once it is set)
    end = time.monotonic() + 120
    while kg.read_file(kg.p(WALK_FLAG))[:len(WALK_SET)] != WALK_SET:
        check(time.monotonic() < end, "the peer never made the cycle")
        time.sleep(0.1)
    t0 = time.monotonic()
    pid = os.fork()
    if not pid:
        try:
            kg.write_file(kg.p("walker"), b"w" * (64 << 10))
        except OSError:
            pass
        os._exit(0)
    time.sleep(WALK_KILL_AFTER_S)
    done, _ = os.waitpid(pid, os.WNOHANG)
    check(not done, f"the write ended within {WALK_KILL_AFTER_S} s: no long walk to kill")
    os.kill(pid, signal.SIGKILL)
    t1 = time.monotonic()
    while not os.waitpid(pid, os.WNOHANG)[0]:
        if time.monotonic() - t1 > 600:
            check(False, "the killed walker was still there after 600 s")
        time.sleep(0.05)
    gone = time.monotonic() - t1
    log(f"the walker, killed {t1 - t0:.1f} s into its write, was gone {gone:.2f} s later")
    result(walk_gone_s=f"{gone:.2f}")
    check(gone < WALK_GONE_S, f"the killed walker took {gone:.1f} s to go: the walk did "
          "not stop on the fatal signal")
    result(walk_kill="ok")


def main():
    kg.dispatch(globals())


if __name__ == "__main__":
    main()
