#!/usr/bin/env python3
"""vm/daxfs_kguest.py - guest side of the daxfs.ko VM tests (tests/vm/test_kernel_*.py).

Runs inside a QEMU guest as `host python3 vm/daxfs_kguest.py SCENARIO MNT ARGS...` (that is,
chrooted into the host's root over 9p, with the daxfs mount at MNT), through
vm/guest/daxfs-k.sh's `py:` step.  Prints "DAXFS-VM-RESULT: key=value" lines for the test and
exits non-zero on the first failed check.  Hosts coordinate through marker files in the
filesystem under test itself (MNT/sync/NAME), so every barrier is also a coherence check.

Scenarios:
  basic                      single-host VFS semantics through the kernel module
  multi ROLE PEERS           multi-host exchange (ROLE A/B, PEERS e.g. A+B+H)
  names                      cached names and attributes follow another host at once
                             (guest part of names_exchange; the host runs names_host)
  crash-victim               append to a file forever (the test kills this guest)
  crash-survivor             keep working while the victim is killed, see space reclaimed
  coherent ROLE W T          map base-image files W and T read-only; another host writes a
                             page of W and truncates T: our mappings follow within 10 s
  clock-step ROLE STEP_S LEASE_MS
                             work while stepping this guest's wall clock by STEP_S seconds:
                             nothing fails, nobody is declared dead
  chaos SECONDS PROCS        random operations while the host corrupts the region
                             (any errno is fine; no worker may be killed or hang)
  damaged-name DIR NAME OTHER
                             every call on DIR/NAME, an entry that names no inode,
                             returns (test_kernel_chaos.py)
  sqlite ROLE PEERS N JMODE  N one-row transactions into MNT/db.sqlite (journal mode JMODE)
                             while the other peers do the same (test_kernel_locks.py)
  locks ROLE PEERS ROUNDS    once every peer is ready, two processes add to counters in
                             /lockfile under an fcntl lock and under flock, ROUNDS times
                             each (tests/vm/test_kernel_locks.py; the peers at once)
  dirlocks ROLE PEERS ROUNDS as locks, with two processes that add to one counter under
                             flock of the directory /lockdir (test_kernel_dir_flock.py)
  lock-victim                F_SETLEASE must fail with EINVAL; then hold a POSIX, an OFD
                             and a flock lock on /lockfile until killed
  lock-close                 each kind of lock is free for another process after the close
                             that releases it (a dup keeps OFD and flock locks)
"""
import ctypes
import errno
import fcntl
import mmap
import os
import struct
import subprocess
import sys
import time

MNT = "/mnt/daxfs"
T0 = time.monotonic()


def log(msg):
    print(f"DAXFS-VM: [kguest {time.monotonic() - T0:.1f}s] {msg}", flush=True)


def result(**kv):
    print("DAXFS-VM-RESULT: " + " ".join(f"{k}={v}" for k, v in kv.items()), flush=True)


def check(cond, msg):
    if not cond:
        log("CHECK FAILED: " + msg)
        sys.exit(1)


def p(*parts):
    return os.path.join(MNT, *[x.lstrip("/") for x in parts])


def errno_of(fn):
    """The errno fn() fails with, 0 if it succeeds."""
    try:
        fn()
        return 0
    except OSError as e:
        return e.errno


def write_file(path, data, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
    fd = os.open(path, flags, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def makedirs(path):
    try:
        os.mkdir(path)
    except FileExistsError:
        pass


def renameat2(src, dst, flags):
    libc = ctypes.CDLL(None, use_errno=True)
    AT_FDCWD = -100
    r = libc.renameat2(AT_FDCWD, src.encode(), AT_FDCWD, dst.encode(), flags)
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), src)


RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2


# ---------------------------------------------------------------- two kinds of host
class PosixFS:
    """A kernel mount (daxfs.ko) seen through system calls."""
    kind = "kernel"

    def __init__(self, mnt):
        self.mnt = mnt

    def _p(self, path):
        return os.path.join(self.mnt, path.lstrip("/"))

    def write(self, path, data):
        write_file(self._p(path), data)

    def read(self, path):
        return read_file(self._p(path))

    def pread(self, path, n, off):
        fd = os.open(self._p(path), os.O_RDONLY)
        try:
            return os.pread(fd, n, off)
        finally:
            os.close(fd)

    def exists(self, path):
        return os.path.exists(self._p(path))

    def isdir(self, path):
        return os.path.isdir(self._p(path))

    def create_excl(self, path, data):
        try:
            fd = os.open(self._p(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        os.write(fd, data)
        os.close(fd)
        return True

    def mkdir(self, path):
        try:
            os.mkdir(self._p(path))
            return True
        except FileExistsError:
            return False

    def listdir(self, path):
        return os.listdir(self._p(path))

    def append(self, path, data):
        fd = os.open(self._p(path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            check(os.write(fd, data) == len(data), "short append")
        finally:
            os.close(fd)

    def rename(self, src, dst, flags=0):
        if flags:
            renameat2(self._p(src), self._p(dst), flags)
        else:
            os.rename(self._p(src), self._p(dst))

    def unlink(self, path):
        os.unlink(self._p(path))

    def used_bytes(self):
        sv = os.statvfs(self.mnt)
        return (sv.f_blocks - sv.f_bfree) * sv.f_frsize

    def tick(self):
        """Some operations, so that this host's retired objects get freed."""
        for _ in range(70):
            os.stat(self.mnt)


class LibFS:
    """A user-space host: libdaxfs (python/daxfs) on the shared file itself."""
    kind = "libdaxfs"

    def __init__(self, region):
        self.r = region

    def write(self, path, data):
        self.r.write_file(path, data)

    def read(self, path):
        return self.r.read_file(path)

    def pread(self, path, n, off):
        with self.r.open(path) as f:
            return f.pread(n, off)

    def exists(self, path):
        return self.r.exists(path)

    def isdir(self, path):
        import stat as st
        try:
            return st.S_ISDIR(self.r.stat(path).st_mode)
        except FileNotFoundError:
            return False

    def create_excl(self, path, data):
        try:
            self.r.create(path, exclusive=True)
        except FileExistsError:
            return False
        with self.r.open(path) as f:
            f.pwrite(data, 0)
        return True

    def mkdir(self, path):
        try:
            self.r.mkdir(path)
            return True
        except FileExistsError:
            return False

    def listdir(self, path):
        return self.r.listdir(path)

    def append(self, path, data):
        with self.r.open(path, create=True) as f:
            f.append(data)

    def rename(self, src, dst, flags=0):
        self.r.rename(src, dst, flags)

    def unlink(self, path):
        self.r.unlink(path)

    def used_bytes(self):
        st = self.r.statfs
        return (st() if callable(st) else st)["used_bytes"]

    def tick(self):
        self.r.reclaim()


# ---- barriers through the filesystem under test (any kind of host)
def fs_mark(fs, role, name, data=b"x"):
    """Publishes /sync/NAME with its content at once (write a temp file, rename)."""
    fs.mkdir("/sync")
    tmp = f"/sync/.tmp-{role}-{name}"
    fs.write(tmp, data)
    fs.rename(tmp, f"/sync/{name}")


def fs_wait(fs, names, timeout=120.0, poll=0.05):
    end = time.monotonic() + timeout
    for n in names:
        while not fs.exists(f"/sync/{n}"):
            check(time.monotonic() < end, f"marker {n} never appeared")
            time.sleep(poll)


def fs_wait_until(fs, cond, timeout, what):
    end = time.monotonic() + timeout
    while not cond():
        check(time.monotonic() < end, what)
        fs.tick()
        time.sleep(0.2)


# ---------------------------------------------------------------- scenarios
LONG_LINK = "a" * 4095      # PATH_MAX - 1 (pjdfstest symlink/03.t)


def long_links(d):
    """Symlink targets of up to PATH_MAX - 1 bytes, by ln -s and readlink(1) as a user
    would; PATH_MAX (with its NUL) is ENAMETOOLONG.  Leaves MNT/keep-link (4095 bytes) for
    the host side to read and fsck to check."""
    x = os.path.join(d, "x")
    r = subprocess.run(["sh", "-c", 'cd "$1" && ln -s "$2" x && readlink x', "sh", d,
                        LONG_LINK], capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout == LONG_LINK + "\n",
          f"ln -s + readlink of 4095 bytes: rc {r.returncode} {r.stderr.strip()[:200]}")
    check(os.lstat(x).st_size == 4095, f"long symlink size {os.lstat(x).st_size}")
    os.unlink(x)
    for n in (4088, 4089):
        os.symlink("b" * n, x)
        check(os.readlink(x) == "b" * n, f"readlink of {n} bytes")
        os.unlink(x)
    # resolution through a 4095-byte target: "././.../f"
    os.symlink("./" * 2047 + "f", x)
    check(read_file(x).startswith(b"hel"), "read through a 4095-byte symlink")
    os.unlink(x)
    try:
        os.symlink("c" * 4096, x)
        check(False, "a 4096-byte symlink target was accepted")
    except OSError as e:
        check(e.errno == errno.ENAMETOOLONG, f"4096-byte target errno {e.errno}")
    os.symlink(LONG_LINK, p("keep-link"))


def scen_basic(args):
    """One host: the VFS operations of a real filesystem."""
    d = p("basic")
    os.mkdir(d, 0o755)
    st = os.stat(d)
    check(st.st_nlink == 2, f"new dir nlink {st.st_nlink}")
    # create / write / read / stat
    f = os.path.join(d, "f")
    write_file(f, b"hello world\n")
    check(read_file(f) == b"hello world\n", "read back")
    check(os.stat(f).st_size == 12, "size 12")
    # O_EXCL on an existing name
    try:
        os.open(f, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        check(False, "O_EXCL succeeded on an existing file")
    except FileExistsError:
        pass
    # O_APPEND
    fd = os.open(f, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"more\n")
    os.close(fd)
    check(read_file(f) == b"hello world\nmore\n", "append")
    # pwrite past EOF leaves a hole that reads as zeros
    fd = os.open(f, os.O_RDWR)
    os.pwrite(fd, b"X", 10000)
    check(os.pread(fd, 10, 5000) == b"\0" * 10, "hole reads zeros")
    check(os.fstat(fd).st_size == 10001, "size after pwrite")
    check(os.lseek(fd, 0, os.SEEK_END) == 10001, "SEEK_END")
    # truncate down and up: the old bytes must not come back
    os.ftruncate(fd, 3)
    os.ftruncate(fd, 8192)
    check(os.pread(fd, 8192, 0) == b"hel" + b"\0" * 8189, "truncate-extend reads zeros")
    os.close(fd)
    # big file, several pages, read back in odd pieces
    big = bytes((i * 7 + 3) & 0xff for i in range(300000))
    write_file(os.path.join(d, "big"), big)
    with open(os.path.join(d, "big"), "rb") as fh:
        fh.seek(4095)
        check(fh.read(70000) == big[4095:74095], "big read at odd offset")
    check(read_file(os.path.join(d, "big")) == big, "big file content")
    # symlink, hard link
    os.symlink("f", os.path.join(d, "sl"))
    check(os.readlink(os.path.join(d, "sl")) == "f", "readlink")
    check(read_file(os.path.join(d, "sl")).startswith(b"hel"), "read through symlink")
    long_links(d)
    os.link(f, os.path.join(d, "hl"))
    check(os.stat(f).st_nlink == 2, "nlink after link")
    check(os.stat(f).st_ino == os.stat(os.path.join(d, "hl")).st_ino, "same ino")
    os.unlink(os.path.join(d, "hl"))
    check(os.stat(f).st_nlink == 1, "nlink after unlink")
    # mknod fifo
    os.mkfifo(os.path.join(d, "fifo"))
    check(os.path.exists(os.path.join(d, "fifo")), "fifo")
    # chmod / chown / utime
    os.chmod(f, 0o600)
    check(os.stat(f).st_mode & 0o777 == 0o600, "chmod")
    os.chown(f, 1234, 5678)
    st = os.stat(f)
    check((st.st_uid, st.st_gid) == (1234, 5678), "chown")
    os.utime(f, ns=(1_000_000_000_123, 2_000_000_000_456))
    st = os.stat(f)
    check(st.st_mtime_ns == 2_000_000_000_456 and st.st_atime_ns == 1_000_000_000_123, "utime")
    # readdir
    names = sorted(os.listdir(d))
    check(names == ["big", "f", "fifo", "sl"], f"listdir {names}")
    for i in range(300):
        write_file(os.path.join(d, f"n{i:03d}"), b"")
    names = os.listdir(d)
    check(len(names) == 304 and len(set(names)) == 304, f"listdir 304: {len(names)}")
    # rename variants
    os.rename(os.path.join(d, "n000"), os.path.join(d, "m000"))
    check(not os.path.exists(os.path.join(d, "n000")), "rename: old gone")
    try:
        renameat2(os.path.join(d, "n001"), os.path.join(d, "n002"), RENAME_NOREPLACE)
        check(False, "RENAME_NOREPLACE replaced")
    except OSError as e:
        check(e.errno == errno.EEXIST, f"NOREPLACE errno {e.errno}")
    write_file(os.path.join(d, "x1"), b"one")
    write_file(os.path.join(d, "x2"), b"two")
    renameat2(os.path.join(d, "x1"), os.path.join(d, "x2"), RENAME_EXCHANGE)
    check(read_file(os.path.join(d, "x1")) == b"two" and read_file(os.path.join(d, "x2")) == b"one",
          "RENAME_EXCHANGE")
    os.mkdir(os.path.join(d, "sub"))
    write_file(os.path.join(d, "sub", "inner"), b"in")
    try:
        os.rmdir(os.path.join(d, "sub"))
        check(False, "rmdir of a non-empty dir")
    except OSError as e:
        check(e.errno == errno.ENOTEMPTY, f"rmdir errno {e.errno}")
    try:
        os.rename(d, os.path.join(d, "sub", "loop"))
        check(False, "dir moved into itself")
    except OSError as e:
        check(e.errno == errno.EINVAL, f"rename into self errno {e.errno}")
    os.rename(os.path.join(d, "sub"), p("sub-moved"))
    check(read_file(p("sub-moved", "inner")) == b"in", "moved dir content")
    check(os.stat(d).st_nlink == 2, f"parent nlink after moving subdir out {os.stat(d).st_nlink}")
    # mmap shared: write through the mapping, read with read()
    mf = os.path.join(d, "mm")
    write_file(mf, b"\0" * 16384)
    fd = os.open(mf, os.O_RDWR)
    m = mmap.mmap(fd, 16384, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    m[5000:5010] = b"0123456789"
    m.flush()
    check(os.pread(fd, 10, 5000) == b"0123456789", "mmap write visible to read")
    os.pwrite(fd, b"abcdef", 9000)
    check(m[9000:9006] == b"abcdef", "write visible through mmap")
    m.close()
    # mmap private: copy-on-write, file unchanged
    m = mmap.mmap(fd, 16384, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_WRITE)
    check(m[5000:5010] == b"0123456789", "private map reads file")
    m[5000:5010] = b"PRIVATEPRI"
    check(m[5000:5010] == b"PRIVATEPRI", "private write")
    check(os.pread(fd, 10, 5000) == b"0123456789", "private write not in file")
    m.close()
    os.close(fd)
    # sparse file mapped read-only private reads zeros
    write_file(os.path.join(d, "sparse"), b"")
    os.truncate(os.path.join(d, "sparse"), 1 << 20)
    with open(os.path.join(d, "sparse"), "rb") as fh:
        m = mmap.mmap(fh.fileno(), 1 << 20, mmap.MAP_PRIVATE, mmap.PROT_READ)
        check(m[500000:500010] == b"\0" * 10, "sparse mmap zeros")
        m.close()
    # statfs
    sv = os.statvfs(MNT)
    check(sv.f_bsize == 4096 and sv.f_blocks > 0 and sv.f_bfree <= sv.f_blocks, "statvfs")
    # unlink everything, rmdir
    for n in os.listdir(d):
        os.unlink(os.path.join(d, n))
    os.rmdir(d)
    os.unlink(p("sub-moved", "inner"))
    os.rmdir(p("sub-moved"))
    check(not os.path.exists(d), "dir removed")
    result(basic="ok")


N_CREATES = 60      # files each host creates in /shared
N_RACES = 150       # names all hosts race for (files and directories each)
N_APPENDS = 300     # records each host appends to /log
BIG = 16 << 20      # bytes of the file written and removed for the df check
MM_A, MM_B = 3 * 4096 + 10, 5 * 4096 + 20
HELD = 4 << 20      # bytes of the file unlinked while open on another host


def multi(fs, role, peers):
    """One host's part of the multi-host exchange; every host runs this same code.
    role: A, B (kernel guests) or H (user-space host); peers: all roles taking part."""
    others = [r for r in peers if r != role]
    guests = [r for r in peers if r != "H"]
    log(f"multi: {role} ({fs.kind}) with {others}")

    # 1. names and data written by one host are read by all the others
    fs.write(f"/hello-{role}", f"hello from {role}".encode())
    if role == "A":
        fs.write("/xa", b"A-xa")
        fs.write("/xb", b"A-xb")
    fs_mark(fs, role, f"hello-{role}")
    fs_wait(fs, [f"hello-{r}" for r in peers])
    for r in peers:
        got = fs.read(f"/hello-{r}")
        check(got == f"hello from {r}".encode(), f"/hello-{r} reads {got!r}")
    log("hello: every host reads every other host's file")

    # 2. concurrent creates into one directory: each name present exactly once
    fs.mkdir("/shared")
    for i in range(N_CREATES):
        check(fs.create_excl(f"/shared/{role}-{i}", role.encode()), f"create {role}-{i}")
    fs_mark(fs, role, f"created-{role}")
    fs_wait(fs, [f"created-{r}" for r in peers], poll=0.002)    # start the races together
    names = fs.listdir("/shared")
    want = {f"{r}-{i}" for r in peers for i in range(N_CREATES)}
    check(len(names) == len(want) and set(names) == want,
          f"/shared lists {len(names)} names ({len(set(names))} distinct), want {len(want)}")
    result(**{f"shared_{role}": len(names)})

    # 3. racing creates of one name: exactly one winner per name
    # (the user-space host is much faster than a TCG guest and wins most races for names
    # everyone wants, so the kernel hosts also race among themselves for /race/g*)
    fs.mkdir("/race")
    wins = gwins = 0
    for i in range(N_RACES):
        if role != "H":
            gwins += fs.create_excl(f"/race/g{i}", role.encode())
        wins += fs.create_excl(f"/race/f{i}", role.encode())
        wins += fs.mkdir(f"/race/d{i}")
        if i % 3 == 0:
            # O_CREAT without O_EXCL: a lost create race must open the winner's file
            # (daxfs.ko: ->create returns -ESTALE, the VFS retries with LOOKUP_REVAL)
            fs.append(f"/race/o{i}", role.encode())
    fs_mark(fs, role, f"race-{role}", f"{wins} {gwins}".encode())
    fs_wait(fs, [f"race-{r}" for r in peers])
    counts = [fs.read(f"/sync/race-{r}").split() for r in peers]
    total = sum(int(c[0]) for c in counts)
    gtotal = sum(int(c[1]) for c in counts)
    check(total == 2 * N_RACES, f"race winners {total}, want {2 * N_RACES}")
    check(gtotal == (N_RACES if guests else 0), f"guest race winners {gtotal}, want {N_RACES}")
    for i in range(N_RACES):
        check(fs.read(f"/race/f{i}").decode() in peers, f"/race/f{i} content")
        if i % 3 == 0:
            got = fs.read(f"/race/o{i}").decode()
            check(sorted(got) == sorted(peers), f"/race/o{i} holds {got!r}, want one record of each host")
        if guests:
            check(fs.read(f"/race/g{i}").decode() in guests, f"/race/g{i} content")
    result(**{f"race_wins_{role}": wins, f"race_guest_wins_{role}": gwins})
    fs_mark(fs, role, f"raced-{role}")
    fs_wait(fs, [f"raced-{r}" for r in peers], poll=0.002)      # start the appends together

    # 4. concurrent appends: every record exactly once, none torn
    for i in range(N_APPENDS):
        fs.append("/log", f"{role}-{i:04d}\n".encode())
    fs_mark(fs, role, f"append-{role}")
    fs_wait(fs, [f"append-{r}" for r in peers])
    lines = fs.read("/log").split(b"\n")
    check(lines[-1] == b"", "log ends with a newline")
    lines = lines[:-1]
    want = {f"{r}-{i:04d}".encode() for r in peers for i in range(N_APPENDS)}
    check(len(lines) == len(want) and set(lines) == want,
          f"/log has {len(lines)} records ({len(set(lines))} distinct), want {len(want)}")
    # how often consecutive records come from different hosts (0: no overlap at all)
    switches = sum(1 for a, b in zip(lines, lines[1:]) if a[:1] != b[:1])
    result(**{f"appends_{role}": len(lines), f"append_switches_{role}": switches})

    # 5. renames and unlinks on one host are seen by the others (cached names!)
    if role == "A":
        fs.rename("/hello-A", "/moved-A")
        fs.rename("/xa", "/xb", 2)                      # RENAME_EXCHANGE
    elif role == "B":
        fs.unlink("/hello-B")
        fs.mkdir("/dirB")
        fs.rename("/dirB", "/dirB2")
    elif role == "H":
        fs.mkdir("/sub-h")
        fs.rename("/hello-H", "/sub-h/hello-H")
    fs_mark(fs, role, f"rename-{role}")
    fs_wait(fs, [f"rename-{r}" for r in peers])
    if "A" in peers:
        check(not fs.exists("/hello-A"), "/hello-A still there after rename on A")
        check(fs.read("/moved-A") == b"hello from A", "/moved-A content")
        check(fs.read("/xa") == b"A-xb" and fs.read("/xb") == b"A-xa", "exchange not seen")
    if "B" in peers:
        check(not fs.exists("/hello-B"), "/hello-B still there after unlink on B")
        check(not fs.exists("/dirB") and fs.isdir("/dirB2"), "dir rename on B not seen")
    if "H" in peers:
        check(not fs.exists("/hello-H"), "/hello-H still there after rename on H")
        check(fs.read("/sub-h/hello-H") == b"hello from H", "/sub-h/hello-H content")
    log("rename/unlink: seen by every host")

    # 6. df: a big file's space shows up everywhere, and comes back everywhere
    writer = "B" if "B" in peers else guests[0]
    base = fs.used_bytes()
    fs_mark(fs, role, f"df0-{role}")
    if role == writer:
        fs_wait(fs, [f"df0-{r}" for r in peers])
        fs.write("/big", bytes(range(256)) * (BIG // 256))
        fs_mark(fs, role, "big")
    fs_wait(fs, ["big"])
    fs_wait_until(fs, lambda: fs.used_bytes() >= base + BIG - (1 << 20), 30,
                  f"{role}: used space did not grow by {BIG} (base {base}, now {fs.used_bytes()})")
    grown = fs.used_bytes() - base
    fs_mark(fs, role, f"dfbig-{role}")
    if role == writer:
        fs_wait(fs, [f"dfbig-{r}" for r in peers])
        fs.unlink("/big")
        fs_mark(fs, role, "bigdel")
    fs_wait(fs, ["bigdel"])
    fs_wait_until(fs, lambda: fs.used_bytes() <= base + (2 << 20), 60,
                  f"{role}: space of /big not freed (base {base}, now {fs.used_bytes()})")
    result(**{f"df_grew_{role}": grown, f"df_back_{role}": fs.used_bytes() - base})
    fs_mark(fs, role, f"dffree-{role}")
    fs_wait(fs, [f"dffree-{r}" for r in peers])

    # 7. mmap: a store through one guest's mapping is read by every host
    if role == "A":
        fs.write("/mm", b"")
        fd = os.open(p("mm"), os.O_RDWR)
        os.ftruncate(fd, 64 << 10)
        m = mmap.mmap(fd, 64 << 10, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        m[MM_A:MM_A + 6] = b"MMAP-A"
        fs_mark(fs, role, "mm-A")
    fs_wait(fs, ["mm-A"])
    check(fs.pread("/mm", 6, MM_A) == b"MMAP-A", f"{role}: mmap store of A not read")
    if role == "B":
        fd = os.open(p("mm"), os.O_RDWR)
        m = mmap.mmap(fd, 64 << 10, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        check(m[MM_A:MM_A + 6] == b"MMAP-A", "B's mapping does not show A's store")
        m[MM_B:MM_B + 6] = b"MMAP-B"
        fs_mark(fs, role, "mm-B")
    if "B" in peers:
        fs_wait(fs, ["mm-B"])
        check(fs.pread("/mm", 6, MM_B) == b"MMAP-B", f"{role}: mmap store of B not read")
        if role == "A":
            check(m[MM_B:MM_B + 6] == b"MMAP-B", "A's mapping does not show B's store")
    if role in ("A", "B"):
        m.close()
        os.close(fd)
    log("mmap: stores through a mapping seen by every host")
    if "A" in peers and len(peers) > 1:
        held_open_elsewhere(fs, role, peers)
    fs_mark(fs, role, f"done-{role}")
    fs_wait(fs, [f"done-{r}" for r in peers])
    result(**{f"multi_{role}": "ok"})


def held_open_elsewhere(fs, role, peers):
    """Guest A holds a file open; the user-space host (else another guest) unlinks it:
    the name is gone everywhere, A's descriptor keeps reading and writing the data, and the
    space comes back after A closes it (docs/open-files.md)."""
    unlinker = "H" if "H" in peers else [r for r in peers if r != "A"][0]
    data = bytes(range(256)) * (HELD // 256)
    base = fs.used_bytes()
    fs_mark(fs, role, f"held-base-{role}")
    if role == "A":
        fs_wait(fs, [f"held-base-{r}" for r in peers])
        fs.write("/held", data)
        fd = os.open(p("held"), os.O_RDWR)
        fs_mark(fs, role, "held-open")
    fs_wait(fs, ["held-open"])
    if role == unlinker:
        fs.unlink("/held")
        fs_mark(fs, role, "held-gone")
    fs_wait(fs, ["held-gone"])
    check(not fs.exists("/held"), f"{role}: /held still there after the unlink on {unlinker}")
    if role == "A":
        check(os.fstat(fd).st_nlink == 0, "A: unlinked file open here does not show nlink 0")
        check(os.pread(fd, HELD, 0) == data, "A: open file unlinked elsewhere lost its data")
        check(os.pwrite(fd, b"after-unlink", 4096) == 12, "A: write to the unlinked file")
        check(os.pread(fd, 12, 4096) == b"after-unlink", "A: write not read back")
        check(fs.used_bytes() >= base + HELD, "A: space of the held file already gone")
        os.close(fd)
        fs_mark(fs, role, "held-closed")
    fs_wait(fs, ["held-closed"])
    fs_wait_until(fs, lambda: fs.used_bytes() <= base + (2 << 20), 60,
                  f"{role}: space of /held not freed after A closed it "
                  f"(base {base}, now {fs.used_bytes()})")
    result(**{f"held_{role}": "ok"})
    log("unlink while open: the holder kept its file until it closed it")


def scen_multi(args):
    role, peers = args[0], args[1].split("+")
    multi(PosixFS(MNT), role, peers)


# ---------------------------------------------------------------- cached names
NM_ROUNDS = 4


def nm_ino(path):
    """The inode a path names now, or None (ENOENT)."""
    try:
        return os.lstat(path).st_ino
    except FileNotFoundError:
        return None


def nm_warm(paths):
    """Walks each path a few times: the dentries (positive and negative) and the
    attributes are cached, and from the second walk on trusted by their counters."""
    for _ in range(3):
        for q in paths:
            nm_ino(q)


def names_host(fs, rounds=NM_ROUNDS):
    """Host H's part of the names exchange (libdaxfs, fs a LibFS): each round changes the
    names and attributes the guest has cached, then lets it look (marker H<n>)."""
    r = fs.r
    fs_wait(fs, ["nmA0"])
    r.write_file("/nm/new", b"made by H")                 # over A's negative dentry
    r.rename("/nm/a", "/nm/a2")
    r.unlink("/nm/b")
    r.rename("/nm/sub", "/nm/other/sub")                  # a directory moves
    r.chmod("/nm/other/sub/f", 0o600)
    r.unlink("/nm/sl")                                    # names the guest made
    r.symlink("b", "/nm/sl")
    r.rename("/nm/md", "/nm/md2")
    r.unlink("/nm/ff")
    fs_mark(fs, "H", "nmH1")
    fs_wait(fs, ["nmA1"])
    r.unlink("/nm/new")                                   # the same name, another file
    r.write_file("/nm/new", b"again")
    r.write_file("/nm/a", b"a is back")
    r.write_file("/nm/b", b"b is back")
    r.rename("/nm/a2", "/nm/b")                           # over a name
    fs_mark(fs, "H", "nmH2")
    fs_wait(fs, ["nmA2"])
    r.rename("/nm/a", "/nm/b", 2)                         # RENAME_EXCHANGE
    r.write_file("/nm/other/sub/f", b"longer than before")
    r.link("/nm/new", "/nm/hard")
    fs_mark(fs, "H", "nmH3")
    fs_wait(fs, ["nmA3"])
    r.unlink("/nm/new")                                   # the other link stays
    r.rename("/nm/other", "/nm/moved")                    # above a cached name
    fs_mark(fs, "H", "nmH4")
    fs_wait(fs, ["nmA4"])


def scen_names(args):
    """Guest A's part: every change host H makes is seen by the next system call, with
    no retry, however warm the caches (docs/kernel.md "Dentries")."""
    fs = PosixFS(MNT)
    os.makedirs(p("nm/sub"))
    os.makedirs(p("nm/other"))
    for f in ("nm/a", "nm/b", "nm/sub/f"):
        write_file(p(f), f.encode())
    ino = {f: nm_ino(p(f)) for f in ("nm/a", "nm/b", "nm/sub/f")}
    warm = ["nm/a", "nm/b", "nm/new", "nm/sub", "nm/sub/f", "nm/a2", "nm/other/sub/f"]
    nm_warm([p(q) for q in warm])
    # names this guest makes: trusted from their create on (its vouch), not looked up
    os.symlink("a", p("nm/sl"))
    os.mkdir(p("nm/md"))
    os.mkfifo(p("nm/ff"))
    ino["nm/md"] = nm_ino(p("nm/md"))
    check(os.readlink(p("nm/sl")) == "a" and nm_ino(p("nm/ff")) is not None,
          "the guest's own nodes")
    fs_mark(fs, "A", "nmA0")
    fs_wait(fs, ["nmH1"], poll=0.01)
    check(read_file(p("nm/new")) == b"made by H", "a name made elsewhere is seen")
    check(nm_ino(p("nm/a")) is None, "a renamed-away name is gone")
    check(nm_ino(p("nm/a2")) == ino["nm/a"], "the new name of a rename")
    check(nm_ino(p("nm/b")) is None, "an unlinked name is gone")
    check(nm_ino(p("nm/sub/f")) is None, "a name under a moved directory is gone")
    st = os.lstat(p("nm/other/sub/f"))
    check(st.st_ino == ino["nm/sub/f"] and st.st_mode & 0o777 == 0o600,
          f"moved file: ino {st.st_ino} mode {st.st_mode:o}")
    check(os.readlink(p("nm/sl")) == "b", "a symlink made here, made again elsewhere")
    check(nm_ino(p("nm/md")) is None and nm_ino(p("nm/md2")) == ino["nm/md"],
          "a directory made here, renamed elsewhere")
    check(nm_ino(p("nm/ff")) is None, "a FIFO made here, unlinked elsewhere")
    new1 = nm_ino(p("nm/new"))
    nm_warm([p(q) for q in warm])
    fs_mark(fs, "A", "nmA1")
    fs_wait(fs, ["nmH2"], poll=0.01)
    check(nm_ino(p("nm/new")) not in (None, new1), "a name made again names the new file")
    check(read_file(p("nm/new")) == b"again", "the new file's bytes")
    check(read_file(p("nm/a")) == b"a is back", "a name back")
    check(nm_ino(p("nm/b")) == ino["nm/a"], "a rename over a name")
    check(nm_ino(p("nm/a2")) is None, "the old name of a rename over")
    before = {q: nm_ino(p(q)) for q in ("nm/a", "nm/b", "nm/new")}
    nm_warm([p(q) for q in warm + ["nm/hard"]])
    fs_mark(fs, "A", "nmA2")
    fs_wait(fs, ["nmH3"], poll=0.01)
    check(nm_ino(p("nm/a")) == before["nm/b"] and nm_ino(p("nm/b")) == before["nm/a"],
          "an exchange swaps the names")
    check(os.stat(p("nm/other/sub/f")).st_size == len(b"longer than before"),
          "a size changed elsewhere")
    check(nm_ino(p("nm/hard")) == before["nm/new"], "a hard link made elsewhere")
    check(os.stat(p("nm/new")).st_nlink == 2, "its link count")
    nm_warm([p(q) for q in warm + ["nm/hard", "nm/moved/sub/f"]])
    fs_mark(fs, "A", "nmA3")
    fs_wait(fs, ["nmH4"], poll=0.01)
    check(nm_ino(p("nm/new")) is None, "one link unlinked elsewhere")
    check(os.stat(p("nm/hard")).st_nlink == 1, "the other link's count")
    check(nm_ino(p("nm/other/sub/f")) is None, "a path through a renamed directory")
    check(read_file(p("nm/moved/sub/f")) == b"longer than before", "the new path")
    fs_mark(fs, "A", "nmA4")
    result(names="ok")


# ---- a raise nobody will settle, healed by the guest that keeps meeting it

HL_SECONDS = 3.0     # of sightings: the heal waits 1 s (DAXFS_HEAL_AFTER_NS)


def heal_host(fs, leak):
    """Host H: once the guest's names in /hl are warm, leaves a raise on /hl's change
    counter as a host fenced between its check and its add would (leak(path) -> the word
    before), then waits for the guest's sightings and returns the word it left."""
    fs_wait(fs, ["hlA0"])
    before = leak("/hl")
    fs_mark(fs, "H", "hlH1")
    fs_wait(fs, ["hlA1"])
    return before


def scen_heal(args):
    """Guest A: a directory whose counter shows a change in flight that nobody will settle
    is never trusted (every look asks the region, and answers right), and the guest heals
    it after a second of sightings (docs/kernel.md "Changes in flight")."""
    fs = PosixFS(MNT)
    os.makedirs(p("hl"))
    for i in range(4):
        write_file(p(f"hl/f{i}"), b"%d" % i)
    want = sorted(os.listdir(p("hl")))
    for _ in range(3):
        nm_ino(p("hl/missing"))
        os.listdir(p("hl"))
    fs_mark(fs, "A", "hlA0")
    fs_wait(fs, ["hlH1"], poll=0.01)
    end = time.monotonic() + HL_SECONDS
    looks = 0
    while time.monotonic() < end:
        check(nm_ino(p("hl/missing")) is None, "an absent name stays absent")
        check(sorted(os.listdir(p("hl"))) == want, "the listing")
        looks += 1
        time.sleep(0.02)
    fs_mark(fs, "A", "hlA1")
    result(heal="ok", heal_looks=looks)


# ---- a directory's default ACL, changed by another host between creates here

ACL_UNDEFINED = 0xFFFFFFFF


def acl_blob(user, perm):
    """A POSIX ACL attribute value (version 2): owner rwx, USER perm, group r-x, mask rwx,
    other r-x."""
    ents = [(0x01, 7, ACL_UNDEFINED), (0x02, perm, user), (0x04, 5, ACL_UNDEFINED),
            (0x10, 7, ACL_UNDEFINED), (0x20, 5, ACL_UNDEFINED)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in ents)


def acl_users(path):
    """The named users of path's access ACL: {uid: perm}."""
    blob = os.getxattr(path, "system.posix_acl_access")
    ents = [struct.unpack_from("<HHI", blob, 4 + 8 * i) for i in range((len(blob) - 4) // 8)]
    return {e[2]: e[1] for e in ents if e[0] == 0x02}


def acl_host(fs):
    """Host H's part of the default-ACL exchange: replaces the directory's default ACL."""
    fs_wait(fs, ["acA0"])
    fs.r.setxattr("/dacl", "system.posix_acl_default", acl_blob(4243, 5))
    fs_mark(fs, "H", "acH1")
    fs_wait(fs, ["acA1"])


def scen_aclx(args):
    """Guest A makes files in a directory whose default ACL it set: each inherits it, and
    the directory's ACLs stay cached across these creates (the counter moved by them alone,
    docs/kernel.md "Coherence").  Host H replaces the default ACL; the next file made
    here inherits H's, not the one cached before."""
    fs = PosixFS(MNT)
    d = p("dacl")
    os.mkdir(d)
    os.setxattr(d, "system.posix_acl_default", acl_blob(4242, 7))
    for i in range(20):
        write_file(os.path.join(d, f"f{i}"), b"x")
        check(acl_users(os.path.join(d, f"f{i}")) == {4242: 7}, f"f{i} inherits")
    fs_mark(fs, "A", "acA0")
    fs_wait(fs, ["acH1"], poll=0.01)
    write_file(os.path.join(d, "g"), b"y")
    got = acl_users(os.path.join(d, "g"))
    check(got == {4243: 5}, f"a file made after another host's change inherits it: {got}")
    fs_mark(fs, "A", "acA1")
    result(aclx="ok")


# ---- listings kept by a directory's counter, changed by another host between listings

LS_ROUNDS = 12
LS_DIRS = ("/ls", "/ls2", "/big")
LS_BIG = 1500       # name space of /big (750 made): a listing longer than one getdents buffer


def ls_mode(r, path):
    """The file type bits of path itself, 0 if there is none (host H)."""
    try:
        return r.lstat(path).st_mode & 0o170000
    except Exception:
        return 0


def ls_expect(r):
    """What every listed directory holds now, seen through libdaxfs: {dir: [[name, ino],
    ...]} for /ls, /ls2, /big and the directories in /ls and /ls2, and {dir: parent ino}
    for those (their ".." entries)."""
    dirs = list(LS_DIRS)
    for d in ("/ls", "/ls2"):
        dirs += [f"{d}/{e[0]}" for e in r.scandir(d) if ls_mode(r, f"{d}/{e[0]}") == 0o040000]
    return {"names": {d: sorted([e[0], e[1]] for e in r.scandir(d)) for d in dirs},
            "up": {d: r.lstat(os.path.dirname(d)).st_ino for d in dirs}}


def ls_step(r, rnd):
    """One random change of the listed directories (host H)."""
    ls, ls2 = [e[0] for e in r.scandir("/ls")], [e[0] for e in r.scandir("/ls2")]
    pick = rnd.randrange(11)
    name = f"n{rnd.randrange(60)}"
    src = rnd.choice(ls) if ls else None
    if pick == 0 or not src:
        if not ls_mode(r, f"/ls/{name}"):
            r.write_file(f"/ls/{name}", b"h")
    elif pick == 1 and ls_mode(r, f"/ls/{src}") != 0o040000:
        r.unlink(f"/ls/{src}")
    elif pick == 2 and ls_mode(r, f"/ls/{src}") != 0o040000:
        r.rename(f"/ls/{src}", f"/ls/{name}")            # new name or over a file
    elif pick == 3 and not ls_mode(r, f"/ls2/{src}"):
        r.rename(f"/ls/{src}", f"/ls2/{src}")            # out (a directory moves too)
    elif pick == 4 and ls2 and not ls_mode(r, f"/ls/{ls2[0]}"):
        r.rename(f"/ls2/{ls2[0]}", f"/ls/{ls2[0]}")      # in
    elif pick == 5 and len(ls) > 1:
        r.rename(f"/ls/{ls[0]}", f"/ls/{ls[-1]}", 2)     # RENAME_EXCHANGE
    elif pick == 6 and ls_mode(r, f"/ls/{src}") == 0o100000 and \
            not ls_mode(r, f"/ls/{name}"):
        r.link(f"/ls/{src}", f"/ls/{name}")
    elif pick == 7 and not ls_mode(r, f"/ls/d{name}"):
        r.mkdir(f"/ls/d{name}")
    elif pick == 8 and ls_mode(r, f"/ls/{src}") == 0o040000 and \
            not r.listdir(f"/ls/{src}"):
        r.rmdir(f"/ls/{src}")
    elif pick == 9 and not ls_mode(r, f"/ls/{name}"):
        r.symlink("target", f"/ls/{name}")
    else:
        i = rnd.randrange(LS_BIG)
        r.unlink(f"/big/b{i:05d}") if ls_mode(r, f"/big/b{i:05d}") else \
            r.write_file(f"/big/b{i:05d}", b"b")


def listing_host(fs, rounds=LS_ROUNDS, seed=7):
    """Host H's part: each round a few random changes to directories guest A has listed
    (and keeps listings of), then the listings A must see, in the marker lsH<n>."""
    import json
    import random
    r, rnd = fs.r, random.Random(seed)
    for n in range(rounds):
        fs_wait(fs, [f"lsA{n}"])
        for _ in range(1 + rnd.randrange(4 if n % 3 else 1)):
            ls_step(r, rnd)
        fs_mark(fs, "H", f"lsH{n}", json.dumps(ls_expect(r)).encode())
    # while the guest is part-way through a listing of /big
    fs_wait(fs, ["lsA-mid"])
    names = [e[0] for e in r.scandir("/big")]
    for name in rnd.sample(names, 50):
        r.unlink(f"/big/{name}")
    for i in range(50):
        r.write_file(f"/big/mid{i:03d}", b"m")
    fs_mark(fs, "H", "lsH-mid")

def getdents(fd, bufsize):
    """One getdents64 call on fd with a buffer of bufsize bytes: [(name, ino)], [] at the
    end."""
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(bufsize)
    n = libc.syscall(217, fd, buf, bufsize)
    check(n >= 0, f"getdents64: errno {ctypes.get_errno()}")
    out, off = [], 0
    while off < n:
        ino, _, reclen = struct.unpack_from("<QqH", buf.raw, off)
        out.append((buf.raw[off + 19:off + reclen].split(b"\0", 1)[0].decode(), ino))
        off += reclen
    return out


def raw_listing(path, bufsize):
    """Every entry of directory path, "." and ".." included, as getdents64 hands them
    with a buffer of bufsize bytes (a small one: many calls, each going on from the
    position the last one ended at): [(name, ino)]."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    out = []
    try:
        while True:
            got = getdents(fd, bufsize)
            if not got:
                return out
            out += got
    finally:
        os.close(fd)


def ls_check(want, label):
    """The guest's listings against host H's: names, inode numbers and each ".."."""
    for d, names in want["names"].items():
        for bufsize in (32768, 200):
            got = raw_listing(p(d), bufsize)
            up = [ino for name, ino in got if name == ".."]
            body = sorted([name, ino] for name, ino in got if name not in (".", ".."))
            check(body == names, f"{label}: {d} listed (buffer {bufsize}) "
                  f"missing {[e for e in names if e not in body][:5]} "
                  f"extra {[e for e in body if e not in names][:5]}")
            check(up == [want["up"][d]], f"{label}: {d}/.. is {up}, not {want['up'][d]}")


def scen_listing(args):
    """Guest A lists directories until its listings are kept (docs/kernel.md "Listings");
    host H changes them between rounds (creates, unlinks, renames within, in and out,
    exchanges, links, mkdir, rmdir and moves of directories, symlinks, a directory of 750
    names): the guest's next listing, through a large and a small getdents buffer, is
    what H sees, with no retry."""
    import json
    fs = PosixFS(MNT)
    for d in LS_DIRS:
        os.mkdir(p(d))
    for i in range(20):
        write_file(p(f"ls/n{i}"), b"a")
    os.mkdir(p("ls/dsub"))
    for i in range(0, LS_BIG, 2):
        write_file(p(f"big/b{i:05d}"), b"b")
    known = list(LS_DIRS) + ["/ls/dsub"]
    for n in range(LS_ROUNDS):
        for _ in range(2):          # the first listing is kept, the second uses it
            for d in known:
                if os.path.isdir(p(d)):
                    raw_listing(p(d), 32768)
        fs_mark(fs, "A", f"lsA{n}")
        fs_wait(fs, [f"lsH{n}"], poll=0.01)
        want = json.loads(fs.read(f"/sync/lsH{n}"))
        ls_check(want, f"round {n}")
        known = list(want["names"])
    long_listings()
    mid_listing(fs)
    result(listing="ok")


def long_listings():
    """Listings longer than kernel/dir.c's guess of 48 bytes a name: 300 names of 100
    bytes (the gathering adds chunks, and the listing is kept) and 1,300 of 200 (more
    than the 256 KiB kept: handed over a buffer at a time), each listed twice through
    a 32 KiB and a 4 KiB getdents buffer: every name once."""
    for d, n, size in (("long1", 300, 100), ("long2", 1300, 200)):
        os.mkdir(p(d))
        made = sorted(f"{i:05d}".ljust(size, "x") for i in range(n))
        for name in made:
            os.close(os.open(p(f"{d}/{name}"), os.O_CREAT | os.O_WRONLY, 0o644))
        for bufsize in (32768, 4096, 32768):
            got = sorted(name for name, _ in raw_listing(p(d), bufsize)
                         if name not in (".", ".."))
            check(got == made, f"/{d} listed (buffer {bufsize}): {len(got)} names of "
                  f"{len(made)}, missing {sorted(set(made) - set(got))[:2]}")


def mid_listing(fs):
    """A listing of /big (kept) goes on after host H removed 50 names and made 50: no
    name twice, and every name there before and after listed (POSIX leaves only the
    changed ones open)."""
    before = {name for name, _ in raw_listing(p("big"), 32768)}
    fd = os.open(p("big"), os.O_RDONLY | os.O_DIRECTORY)
    try:
        got = getdents(fd, 4096)
        fs_mark(fs, "A", "lsA-mid")
        fs_wait(fs, ["lsH-mid"], poll=0.01)
        while True:
            more = getdents(fd, 4096)
            if not more:
                break
            got += more
    finally:
        os.close(fd)
    after = {name for name, _ in raw_listing(p("big"), 32768)}
    names = [name for name, _ in got]
    dup = sorted({x for x in names if names.count(x) > 1})
    check(not dup, f"a listing across another host's change named {dup[:5]} twice")
    lost = sorted((before & after) - set(names))
    check(not lost, f"a listing across another host's change missed {lost[:5]}")
    check(len(after) == len(before), f"/big: {len(before)} names, then {len(after)}")


def scen_put(args):
    """put PATH CONTENT: write a file (CONTENT repeated 1000 times, so it spans pages)."""
    path, content = args
    d = os.path.dirname(p(path))
    os.makedirs(d, exist_ok=True)
    write_file(p(path), content.encode() * 1000)
    check(read_file(p(path)) == content.encode() * 1000, "read back")
    result(put="ok")


def scen_expect(args):
    """expect PATH CONTENT: the file holds what `put` wrote (e.g. after a remount)."""
    path, content = args
    got = read_file(p(path))
    check(got == content.encode() * 1000, f"{path}: {got[:40]!r}... ({len(got)} bytes)")
    result(expect="ok")


def scen_rofs(args):
    """On a read-only mount: reads work, every kind of change fails with EROFS."""
    check(len(os.listdir(MNT)) > 0, "listdir on a ro mount")
    for what, fn in (("create", lambda: write_file(p("ro-new"), b"x")),
                     ("mkdir", lambda: os.mkdir(p("ro-dir"))),
                     ("unlink", lambda: os.unlink(p("keep/file"))),
                     ("chmod", lambda: os.chmod(p("keep/file"), 0o600))):
        try:
            fn()
            check(False, f"{what} succeeded on a read-only mount")
        except OSError as e:
            check(e.errno == errno.EROFS, f"{what}: errno {e.errno}, want EROFS")
    result(rofs="ok")


STRESS_OK = {errno.ENOENT, errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR,
             errno.ESTALE, errno.EINVAL, errno.EXDEV, errno.ELOOP, errno.EPERM, errno.EMLINK}


def stress_op(rnd, seed, d, names, op):
    """One random operation of kind op (0..11) on the names in d."""
    a = os.path.join(d, rnd.choice(names))
    b = os.path.join(d, rnd.choice(names), rnd.choice(names)) if rnd.random() < 0.2 \
        else os.path.join(d, rnd.choice(names))
    if op == 0:
        write_file(a, os.urandom(rnd.randrange(0, 20000)))
    elif op == 1:
        fd = os.open(a, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(fd, b"x" * rnd.randrange(1, 9000))
        os.close(fd)
    elif op == 2:
        os.rename(a, b)
    elif op == 3:
        os.unlink(a)
    elif op == 4:
        os.mkdir(a)
    elif op == 5:
        os.rmdir(a)
    elif op == 6:
        os.link(a, b)
    elif op == 7:
        os.truncate(a, rnd.randrange(0, 30000))
    elif op == 8:
        os.listdir(d)
        os.stat(a)
    elif op == 9:
        read_file(a)
    elif op == 10:
        # a file of this worker only: another worker's truncate of a mapped
        # file would (rightly) kill this one with SIGBUS
        mine = os.path.join(d, f"mm-{seed}")
        fd = os.open(mine, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.ftruncate(fd, 16384)
            m = mmap.mmap(fd, 16384, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            k = rnd.randrange(16384)
            m[k:k + 1] = b"M"
            m.close()
            check(os.pread(fd, 1, k) == b"M", "mmap store not read back")
        finally:
            os.close(fd)
    elif op == 11:
        os.symlink(rnd.choice(names), a)
    return a, b


STRESS_NAMES = [f"n{i}" for i in range(24)]


def stress_worker(seed, d, nops, opset=None):
    """Random namespace and data operations on a small shared set of names
    (opset: the operation numbers to draw from, default all)."""
    import random
    rnd = random.Random(seed)
    ops = opset or list(range(12))
    bad = 0
    for _ in range(nops):
        op = rnd.choice(ops)
        try:
            stress_op(rnd, seed, d, STRESS_NAMES, op)
        except OSError as e:
            if e.errno not in STRESS_OK:
                log(f"stress: op {op}: unexpected {e!r}")
                bad += 1
        except ValueError:
            pass
    return bad


def chaos_worker(seed, d, until, wfd):
    """The stress operations (but mmap, whose read-back check a corrupted page
    pointer may rightly fail) until `until` while a chaos host corrupts the region
    (tests/vm/test_kernel_chaos.py): any errno is an answer; what counts is that
    this process is not killed and no operation hangs.  Writes a JSON summary of
    its errnos to wfd."""
    import json
    import random
    rnd = random.Random(seed)
    ops = [op for op in range(12) if op != 10]
    errs, ok = {}, 0
    while time.monotonic() < until:
        try:
            stress_op(rnd, seed, d, STRESS_NAMES, rnd.choice(ops))
            ok += 1
        except OSError as e:
            k = errno.errorcode.get(e.errno, str(e.errno))
            errs[k] = errs.get(k, 0) + 1
        except ValueError:
            pass
    os.write(wfd, json.dumps({"ok": ok, "errs": errs}).encode())


def scen_chaos(args):
    """chaos SECONDS PROCS: PROCS processes of random operations for SECONDS while the
    host corrupts the region; reports chaos_ok, chaos_errs (errno:count,...) and
    chaos_killed (workers that died of a signal)."""
    import json
    secs, procs = float(args[0]), int(args[1])
    d = p("chaos")
    try:
        os.mkdir(d)
    except OSError as e:
        log(f"chaos: mkdir: {e!r}")
    until = time.monotonic() + secs
    kids = []
    for i in range(procs):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            chaos_worker(f"chaos{i}", d, until, w)
            os._exit(0)
        os.close(w)
        kids.append((pid, r))
    # two minutes: past the longest bounded wait of a call (four leases of
    # 10 s) on a slow guest, and within the test's guest timeout
    hung = reap_or_report_hung([pid for pid, _ in kids], until + 120)
    ok, errs, killed = 0, {}, 0
    for pid, r in kids:
        data = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
        st = os.waitpid(pid, 0)[1]
        if os.WIFSIGNALED(st):
            killed += 1
            log(f"chaos: worker {pid} killed by signal {os.WTERMSIG(st)}")
        if data:
            s = json.loads(data)
            ok += s["ok"]
            for k, v in s["errs"].items():
                errs[k] = errs.get(k, 0) + v
    result(chaos_ok=ok, chaos_killed=killed - hung, chaos_hung=hung,
           chaos_errs=",".join(f"{k}:{v}" for k, v in sorted(errs.items())) or "none")
    check(hung == 0, f"{hung} chaos workers still running two minutes after their end")
    check(killed == 0, f"{killed} chaos workers killed by a signal")


def show_task(pid):
    """Logs where process pid is: its state, system call and kernel stack (a
    stuck worker's report, so that a hang seen once in CI can be read)."""
    for name in ("stat", "syscall", "wchan", "stack"):
        try:
            with open(f"/proc/{pid}/{name}") as f:
                text = f.read().strip()
        except OSError as e:
            text = repr(e)
        for line in text.splitlines() or [""]:
            log(f"pid {pid} {name}: {line}")


def reap_or_report_hung(pids, deadline):
    """Waits for pids until deadline (time.monotonic()); a process still running
    then is reported (show_task, and the kernel's backtraces of every CPU and of
    blocked tasks on the console), killed and counted.  The exit statuses stay
    to be collected by waitpid.  Returns how many were stuck."""
    left = set(pids)
    while left and time.monotonic() < deadline:
        for pid in list(left):
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
                left.discard(pid)
        time.sleep(0.2)
    if not left:
        return 0
    for pid in sorted(left):
        show_task(pid)
    try:
        with open("/proc/sysrq-trigger", "w") as f:
            f.write("l")
        with open("/proc/sysrq-trigger", "w") as f:
            f.write("w")
    except OSError as e:
        log(f"sysrq: {e!r}")
    for pid in left:
        os.kill(pid, 9)
    return len(left)


def bounded_call(fn, secs):
    """Runs fn() in a child process: "ok", the errno's name, or "hung" when it did
    not return within secs (its stack is logged, and it is killed)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            fn()
            out = "ok"
        except OSError as e:
            out = errno.errorcode.get(e.errno, str(e.errno))
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    hung = reap_or_report_hung([pid], time.monotonic() + secs)
    os.waitpid(pid, 0)
    with os.fdopen(r, "rb") as f:
        out = f.read().decode()
    return "hung" if hung else out or "died"


def damaged_name_calls(d, name, other):
    """The calls that meet a name: each makes, opens, changes or removes it."""
    a, b = os.path.join(d, name), os.path.join(d, other)

    def opener(flags):
        return lambda: os.close(os.open(a, flags, 0o644))
    return {
        "creat": opener(os.O_WRONLY | os.O_CREAT),
        "creat_trunc": opener(os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        "creat_excl": opener(os.O_WRONLY | os.O_CREAT | os.O_EXCL),
        "open": opener(os.O_RDONLY),
        "stat": lambda: os.stat(a),
        "listdir": lambda: os.listdir(d),
        "mkdir": lambda: os.mkdir(a),
        "mkfifo": lambda: os.mkfifo(a),
        "symlink": lambda: os.symlink("x", a),
        "link_onto": lambda: os.link(b, a),
        "rename_onto": lambda: os.rename(b, a),
        "rename_from": lambda: os.rename(a, os.path.join(d, "renamed")),
        "unlink": lambda: os.unlink(a),
    }


def scen_damaged_name(args):
    """damaged-name DIR NAME OTHER: every call on DIR/NAME, a name whose entry the
    host damaged (it names no inode), returns within 60 s; reports each call's
    answer as dn_CALL (ok, an errno's name, or hung) and dn_hung."""
    d, name, other = p(args[0]), args[1], args[2]
    hung = 0
    for call, fn in damaged_name_calls(d, name, other).items():
        out = bounded_call(fn, 60)
        log(f"damaged name: {call}: {out}")
        result(**{"dn_" + call: out})
        hung += out == "hung"
    result(dn_hung=hung)
    check(hung == 0, f"{hung} calls on a damaged name did not return")


def rmtree(path):
    for n in os.listdir(path):
        q = os.path.join(path, n)
        if os.path.isdir(q) and not os.path.islink(q):
            rmtree(q)
            os.rmdir(q)
        else:
            os.unlink(q)


def scen_stress(args):
    """stress PROCS OPS [ROLE PEERS [OPSET]]: PROCS processes of random operations on one small set
    of names, then everything removed: no unexpected errors, and the space comes back.
    With ROLE and PEERS (e.g. A A+B) several guests hammer the same names at once; A
    removes the tree once every peer is done."""
    procs, nops = int(args[0]), int(args[1])
    role, peers = (args[2], args[3].split("+")) if len(args) > 3 else ("A", ["A"])
    opset = [int(x) for x in args[4].split("+")] if len(args) > 4 else None
    fs = PosixFS(MNT)
    d = p("stress")
    fs.mkdir("/stress")
    sv = os.statvfs(MNT)
    base = (sv.f_blocks - sv.f_bfree) * sv.f_frsize
    pids = []
    for i in range(procs):
        pid = os.fork()
        if pid == 0:
            os._exit(1 if stress_worker(f"{role}{i}", d, nops, opset) else 0)
        pids.append(pid)
    st = [os.waitpid(pid, 0)[1] for pid in pids]
    check(all(x == 0 for x in st), f"stress workers failed: wait statuses {st}")
    if len(peers) > 1:
        fs_mark(fs, role, f"stress-{role}")
        fs_wait(fs, [f"stress-{r}" for r in peers])
    if role != peers[0]:
        fs_wait(fs, ["stress-clean"])
        result(**{f"stress_{role}": f"{procs}x{nops}"})
        return
    rmtree(d)
    os.rmdir(d)
    end = time.monotonic() + 30
    while True:
        sv = os.statvfs(MNT)
        used = (sv.f_blocks - sv.f_bfree) * sv.f_frsize
        if used <= base + (1 << 20):
            break
        check(time.monotonic() < end, f"space not back after stress: base {base} used {used}")
        for _ in range(70):
            os.stat(MNT)
        time.sleep(0.3)
    if len(peers) > 1:
        fs_mark(fs, role, "stress-clean")
    result(**{f"stress_{role}": f"{procs}x{nops}"})


def scen_crash_victim(args):
    """Appends 4 KiB records and renames a file back and forth until the guest is killed."""
    fs = PosixFS(MNT)
    fs.mkdir("/crash")
    fs.write("/crash/ren-a", b"r")
    rec = b"V" * 4095 + b"\n"
    i = 0
    while True:
        fs.append("/crash/victim", rec)
        if i % 2 == 0:
            fs.rename("/crash/ren-a", "/crash/ren-b")
        else:
            fs.rename("/crash/ren-b", "/crash/ren-a")
        i += 1
        if i == 20:
            fs_mark(fs, "V", "victim-writing")
            log("victim: writing, waiting to be killed")


def survivor(fs, role, big=8 << 20):
    """After the victim host is killed mid-operation: everything still works, including
    renames (the cluster-wide rename claim) and space reuse (epochs need the dead host's
    lanes released)."""
    fs_wait(fs, ["victim-writing"])
    fs_wait(fs, ["killed"])
    log(f"survivor {role}: victim killed, carrying on")
    t = time.monotonic()
    base = fs.used_bytes()
    fs.mkdir(f"/after-{role}")
    for i in range(40):
        check(fs.create_excl(f"/after-{role}/f{i}", b"x"), f"create after crash {i}")
        fs.append(f"/after-{role}/log", f"{i}\n".encode())
    for i in range(6):
        fs.rename(f"/after-{role}/f{i}", f"/after-{role}/g{i}")
    fs.write(f"/after-{role}/big", b"b" * big)
    fs.unlink(f"/after-{role}/big")
    fs_wait_until(fs, lambda: fs.used_bytes() <= base + (2 << 20), 90,
                  f"{role}: space not freed after the victim died (base {base}, now {fs.used_bytes()})")
    n = len(fs.read("/crash/victim")) // 4096
    check(n >= 20, f"victim file lost records: {n}")
    result(**{f"survivor_{role}": "ok", f"survivor_s_{role}": f"{time.monotonic() - t:.1f}",
              f"victim_records_{role}": n})
    fs_mark(fs, role, f"survived-{role}")


def scen_crash_survivor(args):
    survivor(PosixFS(MNT), args[0] if args else "B")


# ---- leases never compare wall clocks (docs/hosts.md "Leases")
CLOCK_ROLES = ("A", "B", "H")


def clock_work(role, seconds):
    """Writes and reads back files in /clock-ROLE for SECONDS; returns how many."""
    n = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        data = f"{role}:{n};".encode() * 400
        path = p(f"clock-{role}", f"f{n % 10}")
        write_file(path, data)
        check(read_file(path) == data, f"{role}: file {path} read back wrong")
        n += 1
    return n


def scen_clock_step(args):
    """clock-step ROLE STEP_S LEASE_MS: once every host is there, works for two leases,
    steps this guest's wall clock by STEP_S seconds (as settimeofday or an NTP step
    would), works for three more leases (the others reap expired hosts all along), then
    checks that no operation failed and this kernel never found itself declared dead."""
    role, step, lease = args[0], int(args[1]), int(args[2]) / 1000
    fs = PosixFS(MNT)
    fs.mkdir(f"/clock-{role}")
    fs_mark(fs, role, f"clock-ready-{role}")
    fs_wait(fs, [f"clock-ready-{r}" for r in CLOCK_ROLES], 200)
    n = clock_work(role, 2 * lease)
    before = time.time()
    time.clock_settime(time.CLOCK_REALTIME, before + step)
    log(f"{role}: wall clock stepped by {step} s ({before:.0f} -> {time.time():.0f})")
    n += clock_work(role, 3 * lease)
    fs_mark(fs, role, f"clock-done-{role}")
    fs_wait(fs, [f"clock-done-{r}" for r in CLOCK_ROLES], 200)
    dmesg = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    check("declared this host dead" not in dmesg, f"{role}: declared dead:\n{dmesg[-2000:]}")
    result(**{f"clock_{role}": "ok", f"clock_ops_{role}": n})


# ---- coherence of mappings of borrowed pages (docs/kernel.md "Mappings across hosts")
COH_MARK = b"NEW-BYTES-FROM-THE-OTHER-HOST"
COH_W_OFF = 2 * 4096 + 10           # a page of W the other host writes
COH_T_CUT = 4096 + 100              # T's new size: page 1 cut inside, page 2 beyond EOF
COH_WAIT = 10.0


def coherent_peer(fs, region, w, t):
    """The writing host: waits until the mapper maps, then writes W and truncates T."""
    fs_wait(fs, ["coh-mapped"], 300)
    with region.open(w) as f:
        f.pwrite(COH_MARK, COH_W_OFF)
    region.truncate(t, COH_T_CUT)
    fs_mark(fs, "H", "coh-written")
    fs_wait(fs, ["coh-seen"], 300)


def _sigbus_in_child(mm, off):
    """Reads mm[off] in a child: True when the read raised SIGBUS (the page is gone)."""
    pid = os.fork()
    if pid == 0:
        mm[off]
        os._exit(0)
    st = os.waitpid(pid, 0)[1]
    return os.WIFSIGNALED(st) and os.WTERMSIG(st) == 7     # SIGBUS


def scen_coherent(args):
    """Maps W and T read-only (shared) and touches every page, then makes no system call
    on them: only the lease work can make the mappings follow the other host's write of
    W and truncate of T.  Reports the delay from seeing its marker to seeing each change."""
    role, w, t = args[0], args[1], args[2]
    fs = PosixFS(MNT)
    maps = {}
    for name in (w, t):
        fd = os.open(p(name), os.O_RDONLY)
        size = os.fstat(fd).st_size
        maps[name] = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
        os.close(fd)
        check(size >= 3 * 4096, f"{name}: {size} bytes, want 3 pages at least")
    mw, mt = maps[w], maps[t]
    orig_w = mw[:]
    old_w = orig_w[COH_W_OFF:COH_W_OFF + len(COH_MARK)]
    check(old_w != COH_MARK, "W shows the marker before the write")
    tail = mt[COH_T_CUT:2 * 4096]
    check(any(tail), "T's bytes past the cut are zeros already: nothing to see")
    fs_mark(fs, role, "coh-mapped")
    fs_wait(fs, ["coh-written"], 300)
    t0 = time.monotonic()
    seen = {}
    while len(seen) < 3 and time.monotonic() - t0 < COH_WAIT:
        now = time.monotonic() - t0
        if "write" not in seen and mw[COH_W_OFF:COH_W_OFF + len(COH_MARK)] == COH_MARK:
            seen["write"] = now
        if "cut" not in seen and not any(mt[COH_T_CUT:2 * 4096]):
            seen["cut"] = now
        if "eof" not in seen and _sigbus_in_child(mt, 2 * 4096):
            seen["eof"] = now
        time.sleep(0.05)
    fs_mark(fs, role, "coh-seen")
    result(**{f"coh_{k}_s": f"{v:.2f}" for k, v in seen.items()})
    check("write" in seen, f"W's mapping still shows the old bytes after {COH_WAIT} s")
    check("cut" in seen, f"T's mapping shows old bytes past the cut after {COH_WAIT} s")
    check("eof" in seen, f"T's page beyond the new EOF still maps after {COH_WAIT} s")
    end = COH_W_OFF + len(COH_MARK)
    check(mw[:COH_W_OFF] == orig_w[:COH_W_OFF] and mw[end:] == orig_w[end:],
          "W's mapping lost bytes around the write")
    mw.close()
    mt.close()
    result(coherent="ok")


# ---------------------------------------------------------------- locks across hosts

LOCK_POSIX_OFF, LOCK_FLOCK_OFF = 0, 64     # the two counters in /lockfile
LOCK_DIR_OFF = 128                          # the counter under flock of /lockdir
LOCK_OFD_OFF = 192                          # the range lock-victim holds by OFD lock
F_OFD_SETLK = getattr(fcntl, "F_OFD_SETLK", 37)


def lock_count(path, rounds, use_flock, lockdir=None):
    """Adds 1 to a counter rounds times under a write lock (read, pause,
    write back: two holders at once would lose an increment).  lockdir:
    flock that directory instead, through an O_DIRECTORY descriptor."""
    fd = os.open(path, os.O_RDWR)
    lfd = fd
    off = LOCK_FLOCK_OFF if use_flock else LOCK_POSIX_OFF
    if lockdir is not None:
        lfd = os.open(lockdir, os.O_RDONLY | os.O_DIRECTORY)
        off = LOCK_DIR_OFF
    for i in range(rounds):
        if use_flock:
            fcntl.flock(lfd, fcntl.LOCK_EX)
        else:
            fcntl.lockf(fd, fcntl.LOCK_EX, 8, off)
        v = int.from_bytes(os.pread(fd, 8, off), "little")
        time.sleep(0.001)
        os.pwrite(fd, (v + 1).to_bytes(8, "little"), off)
        if use_flock:
            fcntl.flock(lfd, fcntl.LOCK_UN)
        else:
            fcntl.lockf(fd, fcntl.LOCK_UN, 8, off)
    if lfd != fd:
        os.close(lfd)
    os.close(fd)


def locks_ready(fs, role, peers):
    """Every peer starts counting only once all are mounted and ready."""
    fs_mark(fs, role, f"lk-ready-{role}")
    fs_wait(fs, [f"lk-ready-{x}" for x in peers])


def fork_lock_workers(role, peers, rounds, workers):
    """Once every peer is ready, runs each (use_flock, lockdir) worker of
    lock_count in a process of its own; all must finish cleanly."""
    locks_ready(PosixFS(MNT), role, peers)
    pids = []
    for use_flock, lockdir in workers:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                lock_count(p("lockfile"), rounds, use_flock, lockdir)
                code = 0
            except BaseException as e:  # noqa: BLE001 - reported, then exit 1
                log(f"lock worker (flock={use_flock} dir={lockdir}) failed: {e!r}")
            os._exit(code)
        pids.append(pid)
    for pid in pids:
        _, st = os.waitpid(pid, 0)
        check(st == 0, f"lock worker {pid} exited with status {st}")


def scen_locks(args):
    role, peers, rounds = args[0], args[1].split("+"), int(args[2])
    fork_lock_workers(role, peers, rounds, [(False, None), (True, None)])
    result(**{f"locks_{role}": "ok"})


def scen_dirlocks(args):
    role, peers, rounds = args[0], args[1].split("+"), int(args[2])
    lockdir = p("lockdir")
    fork_lock_workers(role, peers, rounds, [(True, lockdir), (True, lockdir)])
    result(**{f"dirlocks_{role}": "ok"})


F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)


def scen_lock_victim(args):
    """Holds a POSIX record lock, an OFD lock and a flock on /lockfile until the guest
    is killed (test_kernel_killed_guest_releases_locks).  First, F_SETLEASE must be
    refused: a lease would be this host's alone, and another host's open would not
    break it."""
    fs = PosixFS(MNT)
    rfd = os.open(p("lockfile"), os.O_RDONLY)
    err = errno_of(lambda: fcntl.fcntl(rfd, F_SETLEASE, fcntl.F_RDLCK))
    check(err == errno.EINVAL, f"F_SETLEASE gave errno {err}, not EINVAL")
    os.close(rfd)
    fd = os.open(p("lockfile"), os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 8, LOCK_POSIX_OFF)
    ofd = os.open(p("lockfile"), os.O_RDWR)
    fcntl.fcntl(ofd, F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET,
                                               LOCK_OFD_OFF, 8, 0) + bytes(4))
    ffd = os.open(p("lockfile"), os.O_RDWR)
    fcntl.flock(ffd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    result(setlease="EINVAL")
    fs_mark(fs, "V", "victim-locked")
    log("lock victim: holding three locks, waiting to be killed")
    while True:
        time.sleep(1)


LOCK_KINDS = ("posix", "ofd", "flock")


def try_lock(fd, kind, off):
    """A non-blocking write lock of kind on [off, off + 8) (flock: the file):
    True when granted."""
    try:
        if kind == "posix":
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 8, off)
        elif kind == "ofd":
            fcntl.fcntl(fd, F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET,
                                                      off, 8, 0) + bytes(4))
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise


def other_process_gets(path, kind, off, ours, meanwhile=None):
    """Whether another process (another owner) gets the lock at once.  It drops
    the descriptors ours it inherited (they share our open file descriptions)
    and opens the file, then meanwhile() runs here, then it tries: its open
    file is never the one meanwhile() closes, so the slab cannot hand it the
    closed file's address (an owner the region would take for the old one's)."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        for x in ours:
            os.close(x)
        fd = os.open(path, os.O_RDWR)
        os.write(ready_w, b"r")
        os.read(go_r, 1)
        try:
            os._exit(0 if try_lock(fd, kind, off) else 1)
        except OSError as e:
            os._exit(100 + e.errno)
    os.read(ready_r, 1)
    if meanwhile:
        meanwhile()
    os.write(go_w, b"g")
    _, st = os.waitpid(pid, 0)
    for x in (ready_r, ready_w, go_r, go_w):
        os.close(x)
    code = os.waitstatus_to_exitcode(st)
    check(code in (0, 1), f"{kind}: the other process's lock failed with errno {code - 100}")
    return code == 0


def scen_lock_close(args):
    """Each lock goes away with the close that Linux releases it on: a POSIX lock
    with any close by its process, an OFD lock and a flock with the last close of
    the open file description (a dup keeps them).  After that close another
    process takes the lock at once: the region's record went too, not only the
    local one (xfstests generic/478 hung in F_OFD_SETLKW behind a stale OFD record)."""
    path = p("closefile")
    with open(path, "wb") as f:
        f.write(b"x" * 4096)
    # the file stays open on this host throughout, as in generic/478 (its getter
    # has it open): the last close on the host is not what releases the lock
    witness = os.open(path, os.O_RDONLY)
    for i, kind in enumerate(LOCK_KINDS):
        off = 64 * i
        fd = os.open(path, os.O_RDWR)
        check(try_lock(fd, kind, off), f"{kind}: not granted on a free file")
        check(not other_process_gets(path, kind, off, [fd, witness]),
              f"{kind}: another process got it too")
        if kind != "posix":
            dup = os.dup(fd)
            os.close(fd)
            check(not other_process_gets(path, kind, off, [dup, witness]),
                  f"{kind}: released by closing one of two descriptors")
            fd = dup
        if not other_process_gets(path, kind, off, [fd, witness], lambda: os.close(fd)):
            with open("/proc/locks") as f:
                local = f.read().strip().replace("\n", "; ")
            check(False, f"{kind}: still held after the last close (/proc/locks: {local})")
    os.close(witness)
    result(lockclose="ok")


def scen_sqlite(args):
    """SQLite on one database from several hosts at once: its rollback
    journal (or WAL) protocol rests on fcntl locks, which daxfs.ko now
    holds in the region, so every host sees the others' locks."""
    import sqlite3
    role, peers, n, jmode = args[0], args[1].split("+"), int(args[2]), args[3]
    fs = PosixFS(MNT)
    db = p("db.sqlite")
    if role == peers[0]:
        con = sqlite3.connect(db)
        con.execute(f"pragma journal_mode={jmode}")
        con.execute("create table t(role text, i integer, pad text)")
        con.commit()
        con.close()
        fs_mark(fs, role, "sq-created")
    fs_wait(fs, ["sq-created"])
    fs_mark(fs, role, f"sq-ready-{role}")
    fs_wait(fs, [f"sq-ready-{x}" for x in peers])
    con = sqlite3.connect(db, timeout=300)
    for i in range(n):
        con.execute("insert into t values (?, ?, ?)", (role, i, "x" * (i % 300)))
        con.commit()
    rows = con.execute("select count(*) from t where role = ?", (role,)).fetchone()[0]
    check(rows == n, f"{role}: {rows} of its {n} rows")
    ok = con.execute("pragma integrity_check").fetchone()[0]
    con.close()
    check(ok == "ok", f"integrity_check: {ok}")
    fs_mark(fs, role, f"sq-done-{role}")
    fs_wait(fs, [f"sq-done-{x}" for x in peers], timeout=600)
    result(**{f"sqlite_{role}": "ok"})


def dispatch(scenarios):
    """argv: SCENARIO MNT ARGS...: runs scenarios["scen_SCENARIO"](ARGS)
    with MNT as this module's mount point."""
    global MNT
    scen, MNT = sys.argv[1], sys.argv[2]
    fn = scenarios.get("scen_" + scen.replace("-", "_"))
    if fn is None:
        log(f"unknown scenario {scen}")
        sys.exit(2)
    log(f"scenario {scen} args={sys.argv[3:]}")
    fn(sys.argv[3:])
    log(f"scenario {scen} passed")


def main():
    dispatch(globals())


if __name__ == "__main__":
    main()
