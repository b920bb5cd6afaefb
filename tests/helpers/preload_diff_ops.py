"""Random file-system calls for tests/test_preload_diff.py.

    python3 preload_diff_ops.py DIR OPS SEED...

For each seed, makes DIR/s<seed>/P/Q/R and runs OPS calls drawn from
random.Random(seed) through the os module (libc, so under `daxfs run` the
preload serves them) on a small namespace below R.  Prints one line per
call: its name, its arguments as pool indices and descriptor slots (never
raw descriptor numbers or absolute paths) and the result, normalized to
what must be the same on tmpfs and under the preload.  The test runs it
once on tmpfs and once in the region and compares the two outputs.

What the preload legitimately does otherwise (docs/preload.md) is avoided
here, each where it arises:

* paths are normalized lexically before the region resolves them
  ("Routing"), and a directory descriptor or region working directory
  keeps the path it was opened with ("Directory descriptors"): a ".."
  after a symlink or a non-directory, or above a base reached through a
  symlink, means another file than in the kernel, and so does a base
  whose directory was renamed or removed since.  Such a ".." is not
  made (printed as "skip"), and such bases are closed (printed);
* absolute symlink targets resolve inside the region ("Symlinks"):
  targets are relative;
* st_size and st_nlink of directories, atime, ctime and times the calls
  set by themselves are not compared ("Directories");
* region paths of an open are limited to 4,015 bytes: the deep paths
  stay below that;
* fchmodat with AT_SYMLINK_NOFOLLOW is made by glibc through an O_PATH
  open and /proc (no preload sees it): chmod always follows.
"""

import ctypes
import errno
import os
import random
import shutil
import stat
import sys

from diff_data_ops import FAMILIES, DataOps, digest, file_digest

LONG = "L" * 255        # the longest name
NAMES = ["a", "b", "c", LONG]
TOOLONG = "M" * 256

O_ACC = [os.O_RDONLY, os.O_WRONLY, os.O_RDWR]
O_MORE = [os.O_CREAT, os.O_EXCL, os.O_TRUNC, os.O_APPEND, os.O_DIRECTORY,
          os.O_NOFOLLOW]
MODES = [0o644, 0o600, 0o755, 0o700, 0o444, 0o000, 0o777, 0o1777, 0o4755,
         0o2755]
MAXSLOTS = 12

# set by tests/test_fuse_diff.py for both of its runs
TRUNC_TOUCH = os.environ.get("DAXFS_DIFF_TRUNC_TOUCH") == "1"
# set by tests/test_preload_diff.py: keep descriptors of removed
# directories (see after_remove)
KEEP_REMOVED = os.environ.get("DAXFS_DIFF_KEEP_REMOVED") == "1"

libc = ctypes.CDLL(None, use_errno=True)
libc.readlink.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
libc.readlink.restype = ctypes.c_ssize_t


# Split mode (diff_split.py) keeps the sequences it had before bases
# reached through symlinks counted as clean (2026-12-05): with them, the
# FUSE split test met a directory the other mount had moved, still cached
# here under its old name, and the kernel's rename here failed with
# ESTALE (docs/fuse.md "Coherence").
SPLIT = bool(os.environ.get("DAXFS_DIFF_SPLIT"))


def short(p):
    """A path as printed: the long names abbreviated."""
    return p.replace(LONG, "<L>").replace(TOOLONG, "<M>")


class Run(DataOps):
    def __init__(self, top, seed, nops):
        self.r = random.Random(seed)
        self.top = top
        self.seed = seed
        self.nops = nops
        self.base = os.path.join(top, "s%d" % seed)
        self.root = os.path.join(self.base, "P", "Q", "R")
        os.makedirs(self.root)
        if hasattr(os, "anchor"):       # split mode (diff_split.py)
            os.anchor(seed, self.root, self.top)
        os.chdir(self.root)
        self.root_ino = os.stat(self.root).st_ino
        self.cwd_clean = True
        self.slots = [None] * MAXSLOTS  # fd, or None
        self.clean = [True] * MAXSLOTS  # opened by a symlink-free path
        self.times = set()              # mtimes set explicitly, in ns
        self.abs_links = set()          # inodes of links to ROOT/...
        self.trace = []                 # what the current call picked
        self.pool = self.make_pool()
        self.targets = self.make_targets()

    # -- the namespace ------------------------------------------------

    def comp(self):
        x = self.r.random()
        if x < 0.06:
            return "."
        if x < 0.13:
            return ".."
        if x < 0.14:
            return TOOLONG
        return self.r.choice(NAMES)

    def make_pool(self):
        pool = []
        for depth in [1] * 10 + [2] * 12 + [3] * 8:
            p = "/".join(self.comp() for _ in range(depth))
            if self.r.random() < 0.06:
                p += "/"
            pool.append(p)
        # absolute paths, and the empty one
        pool += [self.root + "/a", self.root + "/a/b", self.root + "/" + LONG,
                 self.root + "/a/..", ""]
        return pool

    def make_targets(self):
        t = ["a", "b", "c", LONG, ".", "..", "a/b", "../a", "b/c/a",
             "nowhere", "a/" + LONG, LONG + "/a", "b/"]
        return t

    def path(self):
        i = self.r.randrange(len(self.pool))
        self.trace.append(self.pdesc(i))
        return i, self.pool[i]

    def pdesc(self, i):
        p = self.pool[i]
        if p.startswith(self.root):
            p = "ROOT" + p[len(self.root):]
        return "p%d=%s" % (i, short(p))

    # -- descriptors ----------------------------------------------------

    def live(self):
        return [s for s in range(MAXSLOTS) if self.slots[s] is not None]

    def pick(self):
        lv = self.live()
        s = self.r.choice(lv) if lv else None
        self.trace.append("s%d" % s if s is not None else "none")
        return s

    def free_slot(self):
        for s in range(MAXSLOTS):
            if self.slots[s] is None:
                return s
        return None

    def is_dir_fd(self, fd):
        try:
            return stat.S_ISDIR(os.fstat(fd).st_mode)
        except OSError:
            return False

    def dirfd(self):
        """(text, fd) for a dir_fd argument: None or a live slot."""
        if self.r.random() < 0.55:
            self.trace.append("-")
            return "-", None
        s = self.pick()
        if s is None:
            return "-", None
        return "s%d" % s, s

    def fdof(self, s):
        return None if s is None else self.slots[s]

    # -- lexical safety (see the module's comment) ---------------------

    def lexical_ok(self, p, ds):
        """Whether every ".." in p means the same lexically as in the
        kernel: it pops a real directory (no symlink), or climbs above a
        base reached without symlinks."""
        if ".." not in p.split("/"):
            return True
        dfd = self.fdof(ds)
        if p.startswith("/"):
            base_clean = True
        elif ds is None:
            base_clean = self.cwd_clean
        else:
            base_clean = self.clean[ds] if dfd is not None else True
        comps = p.split("/")
        stack = []      # the prefixes that end with each name
        for i, c in enumerate(comps):
            if c in ("", "."):
                continue
            if c == "..":
                if not stack:
                    if not base_clean:
                        return False
                    continue
                # the name popped, itself (lstat: "c/." would follow c)
                prefix = stack[-1]
                try:
                    st = os.lstat(prefix, dir_fd=dfd)
                except (OSError, ValueError):
                    return False
                if not stat.S_ISDIR(st.st_mode):
                    return False
                stack.pop()
            else:
                stack.append("/".join(comps[:i + 1]))
        return True

    def has_symlink(self, p, ds):
        """Whether resolving p passes through a symlink (or the base was
        reached through one)."""
        dfd = self.fdof(ds)
        if not p.startswith("/"):
            if ds is None and not self.cwd_clean:
                return True
            if ds is not None and not self.clean[ds]:
                return True
        comps = p.split("/")
        for i in range(1, len(comps) + 1):
            if comps[i - 1] in ("", ".", ".."):
                continue
            try:
                st = os.lstat("/".join(comps[:i]) or "/", dir_fd=dfd)
            except (OSError, ValueError):
                return True
            if stat.S_ISLNK(st.st_mode):
                return True
        return False

    def chain(self, fd):
        """Inode numbers of the directory fd and its ancestors up to R."""
        out = []
        rel = "."
        for _ in range(10):
            try:
                # the directory itself by fstat: "." needs search
                # permission, which a user's mode may have taken away
                ino = (os.fstat(fd) if fd is not None and rel == "." else
                       os.stat(rel, dir_fd=fd)).st_ino
            except OSError:
                break
            out.append(ino)
            if ino == self.root_ino:
                break
            rel = rel + "/.."
        return out

    def before_remove(self, paths):
        """Called before a rename/rmdir/unlink: what it may leave stale.
        Returns the inode numbers of the directories among paths (those
        named, not followed) and whether a symlink is among them."""
        inos, link = set(), False
        for p, ds in paths:
            try:
                st = os.lstat(p, dir_fd=self.fdof(ds))
            except (OSError, ValueError):
                continue
            if stat.S_ISDIR(st.st_mode):
                inos.add(st.st_ino)
            if stat.S_ISLNK(st.st_mode):
                link = True
        if not inos and not link:
            return None
        chains = {}
        for s in self.live():
            if self.is_dir_fd(self.slots[s]):
                chains[s] = self.chain(self.slots[s]) if self.clean[s] \
                    else None
        chains["cwd"] = self.chain(None) if self.cwd_clean else None
        return inos, link, chains, getattr(os, "removals_sent", 0)

    def after_remove(self, pre):
        """A directory or symlink went away or moved: bases below it, or
        reached through a symlink, keep a path that now names another
        place (docs/preload.md "Directory descriptors"); close them.
        With KEEP_REMOVED a descriptor of a directory that was removed
        itself stays: it has no name, and the kernel and the preload
        answer for it as for an open directory with no name
        (docs/preload.md "Removed directories").  Without, it is closed
        too: daxfs.ko and the FUSE mount refuse a change to its
        attributes (fchmod, futimens: ENOENT), as the core frees a
        directory at its rmdir.  Nor when the call ran on the other host
        (split mode, diff_split.py): only the remover's descriptors know
        the directory it removed (docs/preload.md, "Removed
        directories")."""
        if pre is None:
            return
        inos, link, chains, sent = pre
        keep = KEEP_REMOVED and getattr(os, "removals_sent", 0) == sent
        gone = []
        # the directory descriptors as they were before the call
        for s in self.live():
            if s not in chains:
                continue
            c = chains[s]
            if c is not None and not inos & set(c[1:]) and \
                    (not inos & set(c[:1]) or keep and
                     os.fstat(self.slots[s]).st_nlink == 0):
                continue
            os.close(self.slots[s])
            self.slots[s] = None
            gone.append("s%d" % s)
        c = chains["cwd"]
        if c is None or inos & set(c):
            os.chdir(self.root)
            self.cwd_clean = True
            gone.append("cwd")
        if gone:
            self.out("  stale %s" % " ".join(gone))

    # -- output -------------------------------------------------------

    def out(self, line):
        sys.stdout.write(line + "\n")

    def st(self, st):
        m = st.st_mode
        t = stat.filemode(m)[0]
        s = "%s%04o" % (t, stat.S_IMODE(m))
        if stat.S_ISLNK(m) and st.st_ino in self.abs_links:
            s += " size=ROOT+%d" % (st.st_size - len(self.root))
        elif stat.S_ISREG(m) or stat.S_ISLNK(m):
            s += " size=%d" % st.st_size
        if not stat.S_ISDIR(m):
            s += " nlink=%d" % st.st_nlink
        if st.st_mtime_ns in self.times:
            s += " mtime=%d" % st.st_mtime_ns
        return s

    h = staticmethod(digest)

    # -- the calls --------------------------------------------------------

    def op_open(self, fl=None):
        i, p = self.path()
        dn, ds = self.dirfd()
        if fl is None:
            fl = self.r.choice(O_ACC)
            for f, pr in zip(O_MORE, [0.5, 0.15, 0.2, 0.2, 0.15, 0.15]):
                if self.r.random() < pr:
                    fl |= f
        mode = self.r.choice(MODES)
        args = "%s %s flags=%s mode=%o" % (self.pdesc(i), dn, flagstr(fl), mode)
        self.trace = [args]
        s = self.free_slot()
        if s is None:
            return "open", args, "no slot"
        if not self.lexical_ok(p, ds):
            return "open", args, "skip"
        dirty = SPLIT and self.has_symlink(p, ds)
        fd = os.open(p, fl, mode, dir_fd=self.fdof(ds))
        self.slots[s] = fd
        # reached through a symlink too, a directory descriptor is the
        # directory's own: ".." from it is its parent (the preload keeps
        # the resolved path since 2026-12-05, dir.c pl_physical); not in
        # split mode (see SPLIT)
        self.clean[s] = not dirty
        return "open", args, "s%d %s" % (s, self.st(os.fstat(fd)))

    def op_close(self):
        s = self.pick()
        if s is None:
            return "close", "", "none"
        self.unlock_before_close(s)
        os.close(self.slots[s])
        self.slots[s] = None
        return "close", "s%d" % s, "ok"

    def op_read(self):
        s = self.pick()
        if s is None:
            return "read", "", "none"
        n = self.r.choice([0, 1, 100, 4096, 5000, 70000])
        return "read", "s%d %d" % (s, n), self.h(os.read(self.slots[s], n))

    def op_pread(self):
        s = self.pick()
        if s is None:
            return "pread", "", "none"
        n = self.r.choice([0, 1, 100, 4096, 9000])
        off = self.r.choice([0, 1, 4095, 4096, 10000, 100000])
        return "pread", "s%d %d@%d" % (s, n, off), \
            self.h(os.pread(self.slots[s], n, off))

    def data(self):
        n = self.r.choice([0, 1, 7, 512, 4096, 4097, 20000])
        return self.r.randbytes(n)

    def op_write(self):
        s = self.pick()
        if s is None:
            return "write", "", "none"
        d = self.data()
        return "write", "s%d %s" % (s, self.h(d)), os.write(self.slots[s], d)

    def op_pwrite(self):
        s = self.pick()
        if s is None:
            return "pwrite", "", "none"
        d = self.data()
        off = self.r.choice([0, 3, 4096, 5000, 70000])
        return "pwrite", "s%d %s@%d" % (s, self.h(d), off), \
            os.pwrite(self.slots[s], d, off)

    def op_lseek(self):
        s = self.pick()
        if s is None:
            return "lseek", "", "none"
        wh = self.r.choice([os.SEEK_SET, os.SEEK_CUR, os.SEEK_END])
        off = self.r.choice([0, 1, -1, 10, 4096, 100000, -100000])
        fd = self.slots[s]
        if self.is_dir_fd(fd):
            # a directory's offset is a listing cursor, not tmpfs'
            # (docs/preload.md "Directories"): only rewinding compares
            wh, off = os.SEEK_SET, 0
        return "lseek", "s%d %d %d" % (s, off, wh), os.lseek(fd, off, wh)

    def op_ftruncate(self):
        s = self.pick()
        if s is None:
            return "ftruncate", "", "none"
        n = self.r.choice([0, 1, 4096, 5000, 123456, -1])
        os.ftruncate(self.slots[s], n)
        return "ftruncate", "s%d %d" % (s, n), self.st(os.fstat(self.slots[s]))

    def op_truncate(self):
        i, p = self.path()
        n = self.r.choice([0, 1, 4096, 5000, 123456, -1])
        if not self.lexical_ok(p, None):
            return "truncate", self.pdesc(i), "skip"
        same = "data" in FAMILIES and self.size_is(p, n)
        os.truncate(p, n)
        if TRUNC_TOUCH or same:
            # a FUSE server cannot tell truncate(2) from O_TRUNC, which
            # moves mtime at any size (docs/fuse.md "Truncation times");
            # tmpfs moves it at the same size when the truncate drops
            # pages fallocate put beyond the end (its own way; ext4's
            # and daxfs' leave it, as for any truncate to the same size)
            os.utime(p)
        return "truncate", "%s %d" % (self.pdesc(i), n), \
            self.st(os.stat(p))

    @staticmethod
    def size_is(p, n):
        try:
            return os.stat(p).st_size == n
        except OSError:
            return False

    def op_stat(self):
        i, p = self.path()
        dn, ds = self.dirfd()
        fol = self.r.random() < 0.6
        args = "%s %s follow=%d" % (self.pdesc(i), dn, fol)
        if not self.lexical_ok(p, ds):
            return "stat", args, "skip"
        return "stat", args, self.st(os.stat(p, dir_fd=self.fdof(ds),
                                             follow_symlinks=fol))

    def op_lstat(self):
        i, p = self.path()
        if not self.lexical_ok(p, None):
            return "lstat", self.pdesc(i), "skip"
        return "lstat", self.pdesc(i), self.st(os.lstat(p))

    def op_fstat(self):
        s = self.pick()
        if s is None:
            return "fstat", "", "none"
        return "fstat", "s%d" % s, self.st(os.fstat(self.slots[s]))

    def two(self, name, fn, follow=None):
        i, p = self.path()
        j, q = self.path()
        dn, ds = self.dirfd()
        en, es = self.dirfd()
        args = "%s %s %s %s" % (self.pdesc(i), dn, self.pdesc(j), en)
        if follow is not None:
            args += " follow=%d" % follow
        if not self.lexical_ok(p, ds) or not self.lexical_ok(q, es):
            return name, args, "skip"
        pre = self.before_remove([(p, ds), (q, es)])
        fn(p, q, self.fdof(ds), self.fdof(es))
        self.after_remove(pre)
        return name, args, "ok"

    def op_rename(self):
        return self.two("rename", lambda p, q, a, b: os.rename(
            p, q, src_dir_fd=a, dst_dir_fd=b))

    def op_replace(self):
        return self.two("replace", lambda p, q, a, b: os.replace(
            p, q, src_dir_fd=a, dst_dir_fd=b))

    def op_link(self):
        fol = self.r.random() < 0.3
        return self.two("link", lambda p, q, a, b: os.link(
            p, q, src_dir_fd=a, dst_dir_fd=b, follow_symlinks=fol), fol)

    def op_symlink(self):
        t = self.r.choice(self.targets)
        i, p = self.path()
        if self.r.random() < 0.15:
            # a loop: the link's own name
            t = p.rstrip("/").split("/")[-1] or "x"
        elif self.r.random() < 0.4:
            t = short(self.pool[self.r.randrange(30)]).replace("<L>", LONG)
        dn, ds = self.dirfd()
        args = "%s -> %s %s" % (self.pdesc(i), short(t), dn)
        if not self.lexical_ok(p, ds):
            return "symlink", args, "skip"
        os.symlink(t, p, dir_fd=self.fdof(ds))
        return "symlink", args, "ok"

    def link_text(self, t):
        """A symlink's target as printed: the run's root as ROOT."""
        if t == self.root or t.startswith(self.root + "/"):
            t = "ROOT" + t[len(self.root):]
        return short(t)

    def op_readlink(self):
        i, p = self.path()
        dn, ds = self.dirfd()
        args = "%s %s" % (self.pdesc(i), dn)
        if not self.lexical_ok(p, ds):
            return "readlink", args, "skip"
        return "readlink", args, self.link_text(
            os.readlink(p, dir_fd=self.fdof(ds)))

    def op_readlink_size(self):
        """readlink(2) with a small buffer (Python's os.readlink always
        gives PATH_MAX): size 0 is EINVAL, a short one truncates."""
        i, p = self.path()
        n = self.r.choice([0, 1, 3, 300])
        args = "%s size=%d" % (self.pdesc(i), n)
        if not self.lexical_ok(p, None):
            return "readlink_sz", args, "skip"
        buf = ctypes.create_string_buffer(max(n, 1))
        r = libc.readlink(p.encode(), buf, n)
        if r < 0:
            raise OSError(ctypes.get_errno(), "readlink")
        # a link to ROOT/...: its bytes, and where a size cuts them,
        # depend on the run's root
        if os.lstat(p).st_ino in self.abs_links:
            return "readlink_sz", args, "a link to ROOT"
        return "readlink_sz", args, "%d %s" % (r, short(buf.raw[:r].decode()))

    def remove(self, name, fn):
        """unlink or rmdir of a random path"""
        i, p = self.path()
        dn, ds = self.dirfd()
        args = "%s %s" % (self.pdesc(i), dn)
        if not self.lexical_ok(p, ds):
            return name, args, "skip"
        pre = self.before_remove([(p, ds)])
        fn(p, dir_fd=self.fdof(ds))
        self.after_remove(pre)
        return name, args, "ok"

    def change(self, name, args, p, ds, fn):
        """fn(p, dir_fd) where the lexical routing is safe, then p's stat"""
        if not self.lexical_ok(p, ds):
            return name, args, "skip"
        fn(p, self.fdof(ds))
        return name, args, self.st(os.stat(p, dir_fd=self.fdof(ds)))

    def op_unlink(self):
        return self.remove("unlink", os.unlink)

    def op_mkdir(self):
        i, p = self.path()
        dn, ds = self.dirfd()
        mode = self.r.choice(MODES)
        args = "%s %s mode=%o" % (self.pdesc(i), dn, mode)
        return self.change("mkdir", args, p, ds,
                           lambda q, fd: os.mkdir(q, mode, dir_fd=fd))

    def op_rmdir(self):
        return self.remove("rmdir", os.rmdir)

    def op_listdir(self):
        if self.r.random() < 0.3:
            s = self.pick()
            if s is None:
                return "listdir", "", "none"
            return "listdir", "s%d" % s, short(
                " ".join(sorted(os.listdir(self.slots[s]))))
        i, p = self.path()
        if not self.lexical_ok(p, None):
            return "listdir", self.pdesc(i), "skip"
        return "listdir", self.pdesc(i), short(" ".join(sorted(os.listdir(p))))

    def op_scandir(self):
        i, p = self.path()
        if not self.lexical_ok(p, None):
            return "scandir", self.pdesc(i), "skip"
        # each entry's look in name order: the first that fails (a link
        # loop, a link through a file) must be the same one on both sides,
        # whatever order the directory lists them in
        with os.scandir(p) as it:
            ents = ["%s:%d%d%d" % (e.name, e.is_dir(), e.is_file(),
                                   e.is_symlink())
                    for e in sorted(it, key=lambda e: e.name)]
        return "scandir", self.pdesc(i), short(" ".join(ents))

    def where(self):
        c = os.getcwd()
        if c == self.root:
            return "ROOT"
        if c.startswith(self.root + "/"):
            return short("ROOT" + c[len(self.root):])
        return "outside"

    def op_chdir(self):
        i, p = self.path()
        if not self.lexical_ok(p, None):
            return "chdir", self.pdesc(i), "skip"
        dirty = SPLIT and self.has_symlink(p, None)
        os.chdir(p)
        # through a symlink too: the directory's own (as op_open's)
        self.cwd_clean = not dirty
        w = "(via symlink)" if dirty else self.where()
        if w == "outside":
            # above R: back, so that ".." never leaves s<seed>
            os.chdir(self.root)
            self.cwd_clean = True
        return "chdir", self.pdesc(i), w

    def op_fchdir(self):
        s = self.pick()
        if s is None:
            return "fchdir", "", "none"
        os.fchdir(self.slots[s])
        self.cwd_clean = self.clean[s]
        w = self.where() if self.cwd_clean else "(via symlink)"
        if w == "outside":
            os.chdir(self.root)
        return "fchdir", "s%d" % s, w

    def ns(self):
        t = self.r.randrange(600000000, 1200000000) * 10**9 + \
            self.r.randrange(10**9)
        self.times.add(t)
        return t

    def op_utime(self):
        a, m = self.ns(), self.ns()
        if self.r.random() < 0.4:
            s = self.pick()
            if s is None:
                return "futime", "", "none"
            fd = self.slots[s]
            os.utime(fd, ns=(a, m))
            return "futime", "s%d %d" % (s, m), self.st(os.fstat(fd))
        i, p = self.path()
        dn, ds = self.dirfd()
        fol = self.r.random() < 0.7
        args = "%s %s %d follow=%d" % (self.pdesc(i), dn, m, fol)
        if not self.lexical_ok(p, ds):
            return "utime", args, "skip"
        dfd = self.fdof(ds)
        os.utime(p, ns=(a, m), dir_fd=dfd, follow_symlinks=fol)
        return "utime", args, self.st(os.stat(p, dir_fd=dfd,
                                              follow_symlinks=fol))

    def op_chmod(self):
        mode = self.r.choice(MODES)
        if self.r.random() < 0.4:
            s = self.pick()
            if s is None:
                return "fchmod", "", "none"
            os.fchmod(self.slots[s], mode)
            return "fchmod", "s%d %o" % (s, mode), \
                self.st(os.fstat(self.slots[s]))
        i, p = self.path()
        dn, ds = self.dirfd()
        args = "%s %s %o" % (self.pdesc(i), dn, mode)
        return self.change("chmod", args, p, ds,
                           lambda q, fd: os.chmod(q, mode, dir_fd=fd))

    def op_dup(self):
        s = self.pick()
        t = self.free_slot()
        if s is None or t is None:
            return "dup", "", "none"
        if self.r.random() < 0.5:
            fd = os.dup(self.slots[s])
            how = "dup"
        else:
            u = self.pick()
            if u != s and self.r.random() < 0.5:
                # onto another slot's descriptor: that one is closed
                self.unlock_before_close(u)
                os.dup2(self.slots[s], self.slots[u])
                self.clean[u] = self.clean[s]
                return "dup2", "s%d s%d" % (s, u), "ok"
            fd = os.dup2(self.slots[s], 40 + t)
            how = "dup2"
        self.slots[t] = fd
        self.clean[t] = self.clean[s]
        return how, "s%d" % s, "s%d" % t

    def on_slot(self, name, fn):
        """fn on a live slot's descriptor; its result is "ok" or its
        error."""
        s = self.pick()
        if s is None:
            return name, "", "none"
        fn(self.slots[s])
        return name, "s%d" % s, "ok"

    def op_fsync(self):
        return self.on_slot("fsync", os.fsync)

    def op_access(self):
        i, p = self.path()
        dn, ds = self.dirfd()
        m = self.r.choice([os.F_OK, os.R_OK, os.W_OK, os.X_OK,
                           os.R_OK | os.W_OK])
        fol = self.r.random() < 0.8
        args = "%s %s %d follow=%d" % (self.pdesc(i), dn, m, fol)
        if not self.lexical_ok(p, ds):
            return "access", args, "skip"
        return "access", args, os.access(p, m, dir_fd=self.fdof(ds),
                                         follow_symlinks=fol)

    def op_realpath(self):
        i, p = self.path()
        if not self.lexical_ok(p, None) or not self.cwd_clean:
            return "realpath", self.pdesc(i), "skip"
        r = os.path.realpath(p)
        if r == self.root or r.startswith(self.root + "/"):
            r = "ROOT" + r[len(self.root):]
        elif r.startswith(self.base):
            r = "BASE" + r[len(self.base):]
        else:
            r = "outside"
        return "realpath", self.pdesc(i), short(r)

    def op_deep(self):
        """A chain of 255-byte names, k deep (up to about 2,600 bytes:
        with the working directory still below the 4,015 bytes of an
        open), then one call at its end."""
        k = self.r.randrange(1, 11)
        p = "/".join([LONG] * k)
        # the preload takes a region path of up to 4,015 bytes in all, the
        # kernel a relative one of 4,095 from a working directory of any
        # depth (docs/preload.md): past that, both runs skip (found at
        # seed 945 of 1,500, from 1,555 bytes deep)
        try:
            here = len(os.getcwd()) - len(self.top)
        except OSError:
            here = 0
        if here + len(p) + len("/f") > 3900:
            return "deep", "%d from far below" % k, "skip"
        res = []
        for j in range(1, k + 1):
            try:
                os.mkdir("/".join([LONG] * j))
                res.append("+")
            except OSError as e:
                res.append(errno.errorcode[e.errno])
        what = self.r.choice(["file", "dirfd", "stat", "rmdir"])
        if what == "file":
            fd = os.open(p + "/f", os.O_CREAT | os.O_RDWR, 0o644)
            os.write(fd, b"deep")
            r = self.st(os.fstat(fd))
            os.close(fd)
        elif what == "dirfd":
            fd = os.open(p, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.mkdir("d", dir_fd=fd)
            except OSError as e:
                r = errno.errorcode[e.errno]
            r = " ".join(sorted(os.listdir(fd)))
            os.close(fd)
        elif what == "stat":
            r = self.st(os.stat(p))
        else:
            pre = self.before_remove([(p, None)])
            os.rmdir(p)
            self.after_remove(pre)
            r = "ok"
        return "deep", "%d %s %s" % (k, "".join(res), what), r

    def tree(self):
        """The whole namespace below R, and what each file holds."""
        lines = []

        def walk(d, rel):
            try:
                names = sorted(os.listdir(d))
            except OSError as e:    # a user's mode 0 directory
                lines.append("%s unreadable %s" % (
                    short(rel), errno.errorcode.get(e.errno, e.errno)))
                return
            for n in names:
                p = d + "/" + n
                try:
                    st = os.lstat(p)
                    line = "%s %s" % (rel + n, self.st(st))
                    if stat.S_ISLNK(st.st_mode):
                        line += " -> " + self.link_text(os.readlink(p))
                    elif stat.S_ISREG(st.st_mode):
                        line += " " + getattr(os, "file_digest",
                                              file_digest)(p, st.st_size)
                except OSError as e:    # a user's modes
                    lines.append(short("%s %s" % (rel + n, errno.errorcode.get(
                        e.errno, e.errno))))
                    continue
                lines.append(short(line))
                # long runs can nest 255-byte names past PATH_MAX: the
                # walk stops where its paths would near it (on both sides)
                if stat.S_ISDIR(st.st_mode) and (rel + n).count("/") < 20 \
                        and len(rel + n) < 3000:
                    walk(p, rel + n + "/")

        walk(self.root, "")
        return lines

    OPS = [("open", 22), ("close", 6), ("read", 6), ("pread", 4),
           ("write", 7), ("pwrite", 4), ("lseek", 4), ("ftruncate", 3),
           ("truncate", 2), ("stat", 5), ("lstat", 3), ("fstat", 4),
           ("rename", 5), ("replace", 2), ("link", 3), ("symlink", 5),
           ("readlink", 3), ("readlink_size", 2), ("unlink", 4),
           ("mkdir", 7), ("rmdir", 3), ("listdir", 3), ("scandir", 2),
           ("chdir", 3), ("fchdir", 2), ("utime", 4), ("chmod", 3),
           ("dup", 3), ("fsync", 1), ("access", 3), ("realpath", 2),
           ("deep", 1)] + DataOps.family_ops()

    def run(self):
        names = [n for n, _ in self.OPS]
        weights = [w for _, w in self.OPS]
        self.out("seed %d" % self.seed)
        # a start: R open as slot 0, a few directories and files
        self.slots[0] = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        for p in ["a", "b", "a/b", LONG, "a/b/c", "b/" + LONG]:
            os.mkdir(p)
        for p in ["c", "a/a", "b/c", LONG + "/a"]:
            with open(p, "wb") as f:
                f.write(self.r.randbytes(self.r.randrange(10000)))
        for k in range(self.nops):
            name = self.r.choices(names, weights)[0]
            self.trace = []
            try:
                n, args, res = getattr(self, "op_" + name)()
            except OSError as e:
                n, args = name, " ".join(self.trace)
                res = errno.errorcode.get(e.errno, e.errno)
            except ValueError as e:     # embedded NUL and such
                n, args = name, " ".join(self.trace)
                res = "ValueError %s" % e
            self.out("%d %s %s -> %s" % (k, n, args, res))
        for line in self.tree():
            self.out("tree " + line)
        for s in self.live():
            os.close(self.slots[s])
        os.chdir(self.top)
        if "data" in FAMILIES:
            # preallocated megabytes per seed would fill the region
            if os.getuid():
                os.chmod(self.base, 0o700)
                fd = os.open(self.base, os.O_RDONLY | os.O_DIRECTORY)
                open_up(fd)
                os.close(fd)
            shutil.rmtree(self.base, onerror=DeeperThanPathMax())


class DeeperThanPathMax:
    """rmtree's errors but those of a tree deeper than PATH_MAX: renames
    can nest 255-byte names so, which the kernel removes through
    descriptors and the preload cannot reach (ENAMETOOLONG,
    docs/preload.md); such a part is left in the region, which the test
    throws away, and so are the directories above it (ENOTEMPTY)."""

    def __init__(self):
        self.deep = False

    def __call__(self, func, path, exc):
        e = exc[1]
        if isinstance(e, OSError) and (
                e.errno == errno.ENAMETOOLONG or
                self.deep and e.errno == errno.ENOTEMPTY):
            self.deep = True
            return
        raise e


def flagstr(fl):
    acc = {os.O_RDONLY: "R", os.O_WRONLY: "W", os.O_RDWR: "RW"}[fl & 3]
    for f, n in [(os.O_CREAT, "C"), (os.O_EXCL, "X"), (os.O_TRUNC, "T"),
                 (os.O_APPEND, "A"), (os.O_DIRECTORY, "D"),
                 (os.O_NOFOLLOW, "N")]:
        if fl & f:
            acc += "|" + n
    return acc


def open_up(dfd):
    """Every directory below dfd to mode 0700 (a user's modes may have
    closed some), by descriptor: paths may be longer than PATH_MAX."""
    for e in os.scandir(dfd):
        if e.is_dir(follow_symlinks=False):
            os.chmod(e.name, 0o700, dir_fd=dfd)
            fd = os.open(e.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                         dir_fd=dfd)
            open_up(fd)
            os.close(fd)


def become_user(top):
    """DAXFS_DIFF_UID=N (the harness runs as root): the calls run as user
    and group N, owner of top, so that permissions count (EACCES, EPERM,
    the sticky bit, set-id bits cleared)."""
    uid = int(os.environ.get("DAXFS_DIFF_UID", "-1"))
    if uid < 0:
        return
    os.chown(top, uid, uid)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def main():
    top, nops = sys.argv[1], int(sys.argv[2])
    os.umask(0o022)
    os.makedirs(top, exist_ok=True)
    split = None
    if os.environ.get("DAXFS_DIFF_SPLIT"):
        # the mailbox is root's: opened before become_user
        import diff_data_ops
        import diff_split
        split = diff_split.install([sys.modules[__name__], diff_data_ops],
                                   os.environ["DAXFS_DIFF_SPLIT"])
    become_user(top)
    for seed in sys.argv[3:]:
        Run(top, int(seed), nops).run()
        sys.stdout.flush()
    if split:
        split.close_peer()


if __name__ == "__main__":
    main()
