"""vm/ro_calls.py - every system call a user can make on a read-only mount of
a region, with the answers wanted there: daxfs.ko's host-less mount (in a
guest, vm/harden_kguest.py's nohost-calls) and the FUSE server's read-only
mount (natively, tests/test_fuse.py).  Standard library only: the guest and
the host both import it.
"""
import errno
import fcntl
import hashlib
import mmap
import os
import struct

FS_IOC_GETFLAGS, FS_IOC_SETFLAGS = 0x80086601, 0x40086602
F_OFD_SETLK = 37


def file_digest(path):
    """SHA-256 of a file's bytes: a region file before and after a mount
    that must store nothing."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class WrongBytes(Exception):
    """A call that worked returned something other than the file's."""


def _want(cond, what):
    if not cond:
        raise WrongBytes(what)


def errno_of(call):
    """0 when call() returns, else the errno of the OSError it raises."""
    try:
        call()
        return 0
    except OSError as e:
        return e.errno


def calls(d, data, mmap_errnos, lock_errnos):
    """(name, call, wanted errnos) for directory d, which holds the file f
    (data, extended attribute user.k = b"v"), the directory e and the symlink
    s -> f.  Reads must work, changes give EROFS; mmap_errnos and lock_errnos
    are what the mount answers to a read-only mmap and to a lock."""
    f, e, s = os.path.join(d, "f"), os.path.join(d, "e"), os.path.join(d, "s")
    rofs = (errno.EROFS,)

    def with_fd(path, fn, flags=os.O_RDONLY):
        def call():
            fd = os.open(path, flags)
            try:
                return fn(fd)
            finally:
                os.close(fd)
        return call

    def read_all(fd):
        _want(os.read(fd, len(data) + 1) == data, "read: wrong bytes")

    def send_out(fd):
        out = os.open("/dev/null", os.O_WRONLY)
        try:
            _want(os.sendfile(out, fd, 0, 100) == 100, "sendfile: short")
        finally:
            os.close(out)

    def copy_out(fd):
        out = os.open("/tmp/ro-calls-copy", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            _want(os.copy_file_range(fd, out, len(data)) == len(data),
                  "copy_file_range: short")
        finally:
            os.close(out)
            os.unlink("/tmp/ro-calls-copy")

    def map_read(flags):
        def fn(fd):
            with mmap.mmap(fd, 4096, flags, mmap.PROT_READ) as m:
                _want(m[:4096] == data[:4096], "mmap: wrong bytes")
        return fn

    def ofd_lock(fd):
        fcntl.fcntl(fd, F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))

    def getlk(fd):
        fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))

    return [
        ("stat", lambda: os.stat(f), (0,)),
        ("lstat", lambda: os.lstat(s), (0,)),
        ("stat through the link", lambda: _want(os.stat(s).st_size == len(data),
                                                "stat through the link: size"), (0,)),
        ("listdir", lambda: _want(sorted(os.listdir(d)) == ["e", "f", "s"],
                                  "listdir: names"), (0,)),
        ("readlink", lambda: _want(os.readlink(s) == "f", "readlink"), (0,)),
        ("getxattr", lambda: _want(os.getxattr(f, "user.k") == b"v", "getxattr"), (0,)),
        ("listxattr", lambda: _want("user.k" in os.listxattr(f), "listxattr"), (0,)),
        ("access", lambda: _want(os.access(f, os.R_OK), "access"), (0,)),
        ("statvfs", lambda: os.statvfs(d), (0,)),
        ("read", with_fd(f, read_all), (0,)),
        ("pread", with_fd(f, lambda fd: _want(os.pread(fd, 5, 5) == data[5:10], "pread")),
         (0,)),
        ("seek data", with_fd(f, lambda fd: os.lseek(fd, 0, os.SEEK_DATA)), (0,)),
        ("seek hole", with_fd(f, lambda fd: os.lseek(fd, 0, os.SEEK_HOLE)), (0,)),
        ("fadvise", with_fd(f, lambda fd: os.posix_fadvise(fd, 0, 0,
                                                           os.POSIX_FADV_WILLNEED)), (0,)),
        ("sendfile", with_fd(f, send_out), (0,)),
        # 6.1 refuses a copy between two filesystems (EXDEV); later kernels copy
        ("copy_file_range", with_fd(f, copy_out), (0, errno.EXDEV)),
        ("getflags", with_fd(f, lambda fd: fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 8)),
         (0,)),
        ("setflags", with_fd(f, lambda fd: fcntl.ioctl(fd, FS_IOC_SETFLAGS, b"\0" * 8)),
         (errno.EROFS, errno.EPERM)),
        ("fstat of a directory", with_fd(e, os.fstat, os.O_RDONLY | os.O_DIRECTORY), (0,)),
        ("mmap shared", with_fd(f, map_read(mmap.MAP_SHARED)), mmap_errnos),
        ("mmap private", with_fd(f, map_read(mmap.MAP_PRIVATE)), mmap_errnos),
        ("flock", with_fd(f, lambda fd: fcntl.flock(fd, fcntl.LOCK_SH)), lock_errnos),
        ("posix read lock", with_fd(f, lambda fd: fcntl.lockf(fd, fcntl.LOCK_SH)),
         lock_errnos),
        ("ofd read lock", with_fd(f, ofd_lock), lock_errnos),
        ("getlk", with_fd(f, getlk), lock_errnos),
        ("open for writing", lambda: os.close(os.open(f, os.O_WRONLY)), rofs),
        ("create", lambda: os.close(os.open(os.path.join(d, "n"),
                                            os.O_WRONLY | os.O_CREAT)), rofs),
        ("truncate", lambda: os.truncate(f, 1), rofs),
        ("mkdir", lambda: os.mkdir(os.path.join(d, "m")), rofs),
        ("rmdir", lambda: os.rmdir(e), rofs),
        ("unlink", lambda: os.unlink(f), rofs),
        ("rename", lambda: os.rename(f, os.path.join(d, "r")), rofs),
        ("link", lambda: os.link(f, os.path.join(d, "l")), rofs),
        ("symlink", lambda: os.symlink("f", os.path.join(d, "t")), rofs),
        ("mkfifo", lambda: os.mkfifo(os.path.join(d, "p")), rofs),
        ("chmod", lambda: os.chmod(f, 0o600), rofs),
        ("chown", lambda: os.chown(f, 1, 1), rofs),
        ("utime", lambda: os.utime(f, (1, 1)), rofs),
        ("setxattr", lambda: os.setxattr(f, "user.n", b"v"), rofs),
        ("removexattr", lambda: os.removexattr(f, "user.k"), rofs),
    ]


def sweep(d, data, mmap_errnos, lock_errnos, log=print):
    """Makes every call; returns the list of those that gave an answer not
    wanted (a WrongBytes counts as one)."""
    bad = []
    for name, call, wanted in calls(d, data, mmap_errnos, lock_errnos):
        try:
            err = errno_of(call)
        except WrongBytes as w:
            bad.append(f"{name}: {w}")
            continue
        log(f"{name}: errno {err}")
        if err not in wanted:
            bad.append(f"{name}: errno {err} ({os.strerror(err)}), wanted one of {wanted}")
    return bad
