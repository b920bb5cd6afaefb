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
* rename2: renameat2 with RENAME_NOREPLACE and RENAME_EXCHANGE.

Each call prints what a user would check afterwards: the result, the
file's size, and a digest of the bytes around the range it touched.
Where the reference may legitimately answer otherwise (st_blocks, the
position of holes), nothing is printed.
"""

import ctypes
import errno
import mmap
import os

FAMILIES = set(f for f in os.environ.get("DAXFS_DIFF_FAMILIES", "")
               .split(",") if f)

FALLOC_FL_KEEP_SIZE = 1
FALLOC_FL_PUNCH_HOLE = 2
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
AT_FDCWD = -100

_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64,
                            ctypes.c_int64]
_libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                            ctypes.c_char_p, ctypes.c_uint]

OFFSETS = [0, 1, 4095, 4096, 5000, 65536, 1 << 20, 3 << 20]
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
        s = self.pick()
        if s is None:
            return "fdatasync", "", "none"
        os.fdatasync(self.slots[s])
        return "fdatasync", "s%d" % s, "ok"

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
        """The lexical rule of the namespace calls, for a path target."""
        return not isinstance(t, str) or self.lexical_ok(t, None)

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


def file_digest(path, size, h):
    """The tree walk's digest of a regular file: whole below 1 MiB, else
    its first MiB and its last 64 KiB (files of gigabytes are sparse)."""
    with open(path, "rb") as f:
        if size <= 1 << 20:
            return h(f.read())
        head = f.read(1 << 20)
        f.seek(size - 65536)
        return "%s..%s" % (h(head), h(f.read()))
