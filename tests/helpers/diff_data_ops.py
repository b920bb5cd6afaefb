"""More call families for the differential generator (preload_diff_ops.py).

The generator's own calls make and remove names and move small amounts of
data.  These families reach what they leave out, each enabled by naming it
in DAXFS_DIFF_FAMILIES (comma-separated), so a front end or a reference
file system that lacks one can leave it out:

* data: fallocate (mode 0, KEEP_SIZE, PUNCH_HOLE), shared mappings read
  and written, copy_file_range between open files, writes far past the
  end (sparse files of gigabytes), fdatasync;
* xattr: user.* extended attributes set (with XATTR_CREATE / REPLACE),
  read, listed and removed, by path and by descriptor (tmpfs has user.*
  attributes only from Linux 6.6 on);
* rename2: renameat2 with RENAME_NOREPLACE and RENAME_EXCHANGE;
* owner: chown, lchown and fchown to root, nobody or 1000 (or -1), then
  the owner, group and mode (which loses its set-id bits);
* tmpfile: O_TMPFILE opens, and linkat of a descriptor through
  /proc/self/fd (a file with no name gets one; FUSE has no O_TMPFILE);
* fdlink: paths through descriptor links ("/proc/self/fd/N",
  "/dev/fd/N"): a file's reopened for reading, appending or truncating,
  its stat, truncate, chmod and utime; names below a directory's link
  (the preload resolves these itself: the kernel sees only the stand-in
  behind a region descriptor, docs/preload.md "Descriptor links");
* locks: flock and open file description (OFD) record locks, which
  conflict between two opens of one file in one process, set, tested
  and dropped (F_OFD_GETLK of one byte shows how ranges were split and
  merged; which of several conflicting locks it names is the file
  system's choice, so only its type is printed).

Each call prints what a user would check afterwards: the result, the
file's size, and a digest of the bytes around the range it touched.
Where the reference may legitimately answer otherwise (st_blocks, the
position of holes), nothing is printed.
"""

import ctypes
import errno
import fcntl
import hashlib
import mmap
import os
import stat
import struct

FAMILIES = set(f for f in os.environ.get("DAXFS_DIFF_FAMILIES", "")
               .split(",") if f)
# set by tests/test_fuse_diff.py for both runs: FUSE drops the flock and
# OFD locks of a closed open file at its RELEASE, which the kernel sends
# after close(2) returned (docs/fuse.md); the last close of an open file
# unlocks them first, so that a lock test right after it cannot see them
UNLOCK_AT_CLOSE = os.environ.get("DAXFS_DIFF_UNLOCK_AT_CLOSE") == "1"
TRUNC_TOUCH = os.environ.get("DAXFS_DIFF_TRUNC_TOUCH") == "1"   # as there
SYS_KCMP = 312
KCMP_FILE = 0

FALLOC_FL_KEEP_SIZE = 1
FALLOC_FL_PUNCH_HOLE = 2
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
AT_FDCWD = -100
AT_SYMLINK_FOLLOW = 0x400

_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                            ctypes.c_int64]
_libc.linkat.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                         ctypes.c_char_p, ctypes.c_int]
_libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                            ctypes.c_char_p, ctypes.c_uint]

# struct flock on Linux: type, whence, start, len, pid, and its padding
FLOCK = "@hhqqi4x"

OFFSETS = [0, 1, 4095, 4096, 5000, 65536, 1 << 20, 3 << 20]
MODES_LINK = [0o644, 0o600, 0o755, 0o444]
LENGTHS = [1, 100, 4096, 8192, 70000, 1 << 21]
FAR = [(1 << 30) + 7, (1 << 33) + 4096, (1 << 31) - 1]
XNAMES = ["user.a", "user.b", "user." + "x" * 200]
XSIZES = [0, 1, 100, 4000]


def _check(rc):
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return rc


class DataOps:
    """Mixed into preload_diff_ops.Run: uses its slots, paths and output."""

    FAMILY_OPS = {
        "data": [("open_rw", 4), ("falloc", 4), ("mmap_write", 3), ("mmap_read", 2),
                 ("copy_range", 3), ("far_write", 1), ("fdatasync", 1)],
        "xattr": [("setxattr", 4), ("getxattr", 3), ("listxattr", 2),
                  ("removexattr", 2)],
        "rename2": [("rename2", 4)],
        "owner": [("chown", 4)],
        "tmpfile": [("tmpfile", 3), ("link_fd", 3)],
        "fdlink": [("fdlink", 4)],
        "abslink": [("abs_symlink", 4)],
        "locks": [("open_same", 3), ("flock", 3), ("ofd_setlk", 4),
                  ("ofd_getlk", 3)],
    }

    @classmethod
    def family_ops(cls):
        return [op for f in sorted(FAMILIES)
                for op in cls.FAMILY_OPS.get(f, [])]

    # -- helpers --------------------------------------------------------

    def pick_file(self):
        """A live slot whose descriptor is not a directory, or None."""
        lv = [s for s in self.live() if not self.is_dir_fd(self.slots[s])]
        s = self.r.choice(lv) if lv else None
        self.trace.append("s%d" % s if s is not None else "none")
        return s

    def window(self, fd, off, n):
        """size=..., and a digest of the bytes around [off, off + n)."""
        a = max(0, off - 4096)
        b = off + n + 4096
        size = os.fstat(fd).st_size
        try:
            data = os.pread(fd, min(b - a, 1 << 22), a)
        except OSError as e:
            return "size=%d read %s" % (
                size, errno.errorcode.get(e.errno, e.errno))
        return "size=%d %s" % (size, self.h(data))

    # -- data -----------------------------------------------------------

    def op_open_rw(self):
        """A file to work on: the generator's opens are mostly of
        directories, or fail, or are read-only."""
        _, args, res = self.op_open(os.O_RDWR | os.O_CREAT)
        return "open_rw", args, res

    def reread(self, link):
        """The digest of a whole file read through a new open of link,
        or the error."""
        try:
            f = os.open(link, os.O_RDONLY)
        except OSError as e:
            return errno.errorcode.get(e.errno, e.errno)
        try:
            return self.h(os.read(f, 1 << 22))
        finally:
            os.close(f)

    def op_abs_symlink(self):
        """A symlink whose target is absolute and below the root (an
        absolute name of what a relative target names): a mount resolves
        it from "/", and the preload since 2026-12-05 too (its DIR is the
        link prefix, daxfs_set_link_prefix); before, the preload resolved
        it from the region's root and found nothing."""
        t = self.r.randrange(len(self.targets))
        rel = self.targets[t]
        i, p = self.path()
        dn, ds = self.dirfd()
        args = "%s -> ROOT/target%d %s" % (self.pdesc(i), t, dn)
        # not in split mode (diff_split.py): the hosts' mounts of the
        # FUSE split test are at different paths, and a target names one
        if not self.lexical_ok(p, ds) or hasattr(os, "anchor"):
            return "abs_symlink", args, "skip"
        os.symlink(self.root + "/" + rel, p, dir_fd=self.fdof(ds))
        # its size is the root's length and more: the runs' roots differ
        self.abs_links.add(os.lstat(p, dir_fd=self.fdof(ds)).st_ino)
        return "abs_symlink", args, "ok"

    def op_fdlink(self):
        """A call through a live slot's descriptor link."""
        s = self.pick()
        if s is None:
            return "fdlink", "", "none"
        fd = self.slots[s]
        form = self.r.choice(["/proc/self/fd/", "/dev/fd/"])
        link = form + str(fd)
        if self.is_dir_fd(fd):
            what = self.r.choice(["create", "stat", "mkdir", "list"])
            name = self.r.choice(["a", "b", "c", "new", "a/b"])
            args = "%s%s %s %s" % (form, "s%d" % s, what, name)
            p = link + "/" + name
            if what == "create":
                f = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o644)
                n = os.write(f, self.data())
                os.close(f)
                return "fdlink", args, "%d %s" % (n, self.st(os.stat(p)))
            if what == "mkdir":
                os.mkdir(p, 0o755)
                return "fdlink", args, "ok"
            if what == "list":
                return "fdlink", args, " ".join(sorted(os.listdir(link)))
            return "fdlink", args, self.st(os.stat(p))
        what = self.r.choice(["stat", "read", "append", "rewrite", "truncate",
                              "chmod", "utime"])
        args = "%s%s %s" % (form, "s%d" % s, what)
        if what == "stat":
            return "fdlink", args, self.st(os.stat(link))
        if what == "read":
            return "fdlink", args, self.reread(link)
        if what in ("append", "rewrite"):
            f = os.open(link, os.O_WRONLY | (os.O_APPEND if what == "append"
                                             else os.O_TRUNC))
            try:
                n = os.write(f, self.data())
            finally:
                os.close(f)
            return "fdlink", args, "%d %s" % (n, self.reread(link))
        if what == "truncate":
            n = self.r.choice([0, 1, 4096, 5000, 123456])
            same = os.fstat(fd).st_size == n
            os.truncate(link, n)
            if TRUNC_TOUCH or same:
                os.utime(link)  # as op_truncate does, and why
        elif what == "chmod":
            os.chmod(link, self.r.choice(MODES_LINK))
        else:
            t = self.r.choice([10 ** 9, 3 * 10 ** 9 + 5])
            self.times.add(t)
            os.utime(link, ns=(t, t))
        return "fdlink", args, self.st(os.stat(link))

    def op_falloc(self):
        s = self.pick_file()
        if s is None:
            return "falloc", "", "none"
        mode = self.r.choice([0, FALLOC_FL_KEEP_SIZE,
                              FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE])
        off = self.r.choice(OFFSETS)
        n = self.r.choice(LENGTHS)
        fd = self.slots[s]
        _check(_libc.fallocate(fd, mode, off, n))
        return "falloc", "s%d mode=%d %d@%d" % (s, mode, n, off), \
            self.window(fd, off, n)

    def mapped(self, write):
        """(slot, mapping) of up to 1 MiB of a file, shared; slot None."""
        s = self.pick_file()
        if s is None:
            return None, None
        fd = self.slots[s]
        n = min(os.fstat(fd).st_size, 1 << 20)
        self.trace.append("len=%d" % n)
        prot = mmap.PROT_READ | (mmap.PROT_WRITE if write else 0)
        # Python refuses an empty mapping before any call: both sides
        return s, mmap.mmap(fd, n, mmap.MAP_SHARED, prot)

    def op_mmap_write(self):
        s, m = self.mapped(True)
        if s is None:
            return "mmap_write", "", "none"
        n = len(m)
        with m:
            at = self.r.randrange(n)
            d = self.r.randbytes(min(self.r.choice([1, 100, 4096, 9000]),
                                     n - at))
            m[at:at + len(d)] = d
            m.flush()
        return "mmap_write", "s%d len=%d %s@%d" % (s, n, self.h(d), at), \
            self.window(self.slots[s], at, len(d))

    def op_mmap_read(self):
        s, m = self.mapped(False)
        if s is None:
            return "mmap_read", "", "none"
        args = "s%d len=%d" % (s, len(m))
        with m:
            at = self.r.randrange(len(m))
            d = m[at:at + self.r.choice([1, 4096, 70000])]
        return "mmap_read", "%s @%d" % (args, at), self.h(d)

    def op_copy_range(self):
        a = self.pick_file()
        b = self.pick_file()
        if a is None or b is None:
            return "copy_range", "", "none"
        n = self.r.choice([0, 1, 4096, 5000, 70000])
        oa = self.r.choice([0, 1, 4096, 9000])
        ob = self.r.choice([0, 3, 4096, 100000])
        args = "s%d@%d s%d@%d %d" % (a, oa, b, ob, n)
        done = os.copy_file_range(self.slots[a], self.slots[b], n, oa, ob)
        return "copy_range", args, "%d %s" % (
            done, self.window(self.slots[b], ob, n))

    def op_far_write(self):
        s = self.pick_file()
        if s is None:
            return "far_write", "", "none"
        off = self.r.choice(FAR)
        d = self.r.randbytes(self.r.choice([1, 4096, 5000]))
        fd = self.slots[s]
        done = os.pwrite(fd, d, off)
        return "far_write", "s%d %s@%d" % (s, self.h(d), off), \
            "%d %s" % (done, self.window(fd, off, len(d)))

    def op_fdatasync(self):
        return self.on_slot("fdatasync", os.fdatasync)

    # -- extended attributes ---------------------------------------------

    def xtarget(self):
        """(text, target): a slot's descriptor or a pool path."""
        if self.r.random() < 0.5:
            s = self.pick()
            if s is not None:
                return "s%d" % s, self.slots[s]
        i, p = self.path()
        return self.pdesc(i), p

    def xok(self, t):
        """The lexical rule of the namespace calls, for a path target; and
        no removed directory: the kernel keeps its attributes until the
        last close, the core freed them at its rmdir (the preload answers
        as for a directory with none and refuses a set: docs/preload.md
        "Removed directories", test_preload.py
        test_removed_directory_descriptor)."""
        if isinstance(t, str) and not self.lexical_ok(t, None):
            return False
        return not self.removed_dir(t)

    def op_setxattr(self):
        tn, t = self.xtarget()
        name = self.r.choice(XNAMES)
        v = self.r.randbytes(self.r.choice(XSIZES))
        fl = self.r.choice([0, os.XATTR_CREATE, os.XATTR_REPLACE])
        args = "%s %s %s fl=%d" % (tn, name[:8], self.h(v), fl)
        if not self.xok(t):
            return "setxattr", args, "skip"
        os.setxattr(t, name, v, fl)
        return "setxattr", args, "ok"

    def op_getxattr(self):
        tn, t = self.xtarget()
        name = self.r.choice(XNAMES)
        if not self.xok(t):
            return "getxattr", tn, "skip"
        return "getxattr", "%s %s" % (tn, name[:8]), \
            self.h(os.getxattr(t, name))

    def op_listxattr(self):
        tn, t = self.xtarget()
        if not self.xok(t):
            return "listxattr", tn, "skip"
        names = sorted(n for n in os.listxattr(t) if n.startswith("user."))
        return "listxattr", tn, " ".join(n[:8] for n in names) or "-"

    def op_removexattr(self):
        tn, t = self.xtarget()
        name = self.r.choice(XNAMES)
        if not self.xok(t):
            return "removexattr", tn, "skip"
        os.removexattr(t, name)
        return "removexattr", "%s %s" % (tn, name[:8]), "ok"

    # -- owners ----------------------------------------------------------

    def owner(self, st):
        return "%s uid=%d gid=%d" % (self.st(st), st.st_uid, st.st_gid)

    def op_chown(self):
        uid = self.r.choice([-1, 0, 65534, 1000])
        gid = self.r.choice([-1, 0, 65534, 1000])
        if self.r.random() < 0.4:
            s = self.pick()
            if s is None:
                return "chown", "", "none"
            os.fchown(self.slots[s], uid, gid)
            return "chown", "s%d %d:%d" % (s, uid, gid), \
                self.owner(os.fstat(self.slots[s]))
        i, p = self.path()
        fol = self.r.random() < 0.7
        args = "%s %d:%d follow=%d" % (self.pdesc(i), uid, gid, fol)
        if not self.lexical_ok(p, None):
            return "chown", args, "skip"
        os.chown(p, uid, gid, follow_symlinks=fol)
        return "chown", args, self.owner(os.stat(p, follow_symlinks=fol))

    # -- unnamed files ---------------------------------------------------

    def op_tmpfile(self):
        i, p = self.path()
        mode = self.r.choice([0o600, 0o644, 0o000])
        args = "%s mode=%o" % (self.pdesc(i), mode)
        s = self.free_slot()
        if s is None:
            return "tmpfile", args, "no slot"
        if not self.lexical_ok(p, None) or self.removed_dir(p):
            return "tmpfile", args, "skip"
        fd = os.open(p, os.O_TMPFILE | os.O_RDWR, mode)
        self.slots[s] = fd
        self.clean[s] = not self.has_symlink(p, None)
        return "tmpfile", args, "s%d %s" % (s, self.st(os.fstat(fd)))

    @staticmethod
    def removed_dir(p):
        """Whether p (a path or a descriptor) is a directory that was
        removed (still open, or the working directory).  The kernel makes an O_TMPFILE in one; the
        core freed it at its rmdir, so the preload, the FUSE mount and
        daxfs.ko say ENOENT (docs/preload.md "Removed directories")."""
        try:
            st = os.fstat(p) if isinstance(p, int) else os.stat(p)
        except OSError:
            return False
        return stat.S_ISDIR(st.st_mode) and st.st_nlink == 0

    def op_link_fd(self):
        s = self.pick_file()
        if s is None:
            return "link_fd", "", "none"
        # mostly names not taken yet: the pool's all exist soon
        q = self.r.choice(["", "a/", "b/", "a/b/", "c/"]) + \
            "t%d" % self.r.randrange(4)
        args = "s%d %s" % (s, q)
        self.trace.append(args)
        # os.link calls link(2), which does not follow the magic link
        _check(_libc.linkat(AT_FDCWD, b"/proc/self/fd/%d" % self.slots[s],
                            AT_FDCWD, os.fsencode(q), AT_SYMLINK_FOLLOW))
        return "link_fd", args, self.st(os.lstat(q))

    # -- locks -----------------------------------------------------------

    def last_of_its_file(self, s):
        """Whether slot s holds the only descriptor of its open file."""
        pid = os.getpid()
        for t in self.live():
            if t != s and _libc.syscall(SYS_KCMP, pid, pid, KCMP_FILE,
                                        self.slots[s], self.slots[t]) == 0:
                return False
        return True

    def unlock_before_close(self, s):
        """UNLOCK_AT_CLOSE: the locks of slot s's open file go now, if
        this close is its last."""
        if "locks" not in FAMILIES or not UNLOCK_AT_CLOSE or \
                not self.last_of_its_file(s):
            return
        fd = self.slots[s]
        for fn in (lambda: fcntl.flock(fd, fcntl.LOCK_UN),
                   lambda: fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack(
                       FLOCK, fcntl.F_UNLCK, os.SEEK_SET, 0, 0, 0))):
            try:
                fn()
            except OSError:
                pass

    def op_open_same(self):
        """Another open of one of the first files: locks of two opens of
        one file conflict."""
        p = self.r.choice(["c", "a/a", "b/c"])
        s = self.free_slot()
        if s is None:
            return "open_same", p, "no slot"
        self.trace.append(p)
        fd = os.open(p, os.O_RDWR)
        self.slots[s] = fd
        self.clean[s] = True
        return "open_same", p, "s%d %s" % (s, self.st(os.fstat(fd)))

    def op_flock(self):
        s = self.pick_file()
        if s is None:
            return "flock", "", "none"
        how = self.r.choice([fcntl.LOCK_SH, fcntl.LOCK_EX, fcntl.LOCK_UN])
        try:
            fcntl.flock(self.slots[s], how | fcntl.LOCK_NB)
        except BlockingIOError:
            # a conversion that fails keeps the old lock here and drops
            # it on Linux, which flock(2) allows (docs/locks.md): none
            # after it on both sides
            fcntl.flock(self.slots[s], fcntl.LOCK_UN)
            raise
        return "flock", "s%d %d" % (s, how), "ok"

    def lock_args(self):
        kind = self.r.choice([fcntl.F_RDLCK, fcntl.F_WRLCK, fcntl.F_UNLCK])
        start = self.r.choice([0, 1, 100, 4096])
        n = self.r.choice([0, 1, 10, 4096])     # 0: to the end, and on
        return kind, start, n

    def op_ofd_setlk(self):
        s = self.pick_file()
        if s is None:
            return "ofd_setlk", "", "none"
        kind, start, n = self.lock_args()
        self.trace.append("%d %d+%d" % (kind, start, n))
        fcntl.fcntl(self.slots[s], fcntl.F_OFD_SETLK,
                    struct.pack(FLOCK, kind, os.SEEK_SET, start, n, 0))
        return "ofd_setlk", "s%d %d %d+%d" % (s, kind, start, n), "ok"

    def op_ofd_getlk(self):
        s = self.pick_file()
        if s is None:
            return "ofd_getlk", "", "none"
        kind, start, n = self.lock_args()
        if kind == fcntl.F_UNLCK:
            kind = fcntl.F_WRLCK
        if self.r.random() < 0.6:
            n = 1
        self.trace.append("%d %d+%d" % (kind, start, n))
        got = fcntl.fcntl(self.slots[s], fcntl.F_OFD_GETLK,
                          struct.pack(FLOCK, kind, os.SEEK_SET, start, n, 0))
        # which of several conflicting locks is told is the file
        # system's choice (POSIX: "the first"): only whether one is, and,
        # for one byte, its type (a write lock excludes all others)
        t = struct.unpack(FLOCK, got)[0]
        if t != fcntl.F_UNLCK and n != 1:
            t = -1
        return "ofd_getlk", "s%d %d %d+%d" % (s, kind, start, n), \
            "type=%d" % t

    # -- renameat2 --------------------------------------------------------

    def op_rename2(self):
        fl = self.r.choice([RENAME_NOREPLACE, RENAME_EXCHANGE])

        def call(p, q, a, b):
            _check(_libc.renameat2(AT_FDCWD if a is None else a,
                                   os.fsencode(p),
                                   AT_FDCWD if b is None else b,
                                   os.fsencode(q), fl))

        name, args, res = self.two("rename2", call)
        return name, "%s fl=%d" % (args, fl), res


def digest(data):
    """Bytes as the generator prints them: length and a short hash."""
    return "%d:%s" % (len(data), hashlib.sha1(data).hexdigest()[:8])


def file_digest(path, size):
    """The tree walk's digest of a regular file: whole below 1 MiB, else
    its first MiB and its last 64 KiB (files of gigabytes are sparse).
    In split mode the peer may read it (diff_split.py)."""
    with open(path, "rb") as f:
        if size <= 1 << 20:
            return digest(f.read())
        head = f.read(1 << 20)
        f.seek(size - 65536)
        return "%s..%s" % (digest(head), digest(f.read()))
