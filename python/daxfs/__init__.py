"""Python bindings for libdaxfs, the user-space DaxFS host.

A :class:`Region` maps a DaxFS region (a file, a /dev/shm file, a pmem
block device or a devdax device), joins the host table and offers a
POSIX-like path API plus file I/O by inode number::

    import daxfs

    daxfs.mkfs("/dev/shm/fs", 64 << 20)
    with daxfs.Region("/dev/shm/fs") as fs:
        fs.mkdir("/docs")
        fs.write_file("/docs/hello.txt", b"hello\\n")
        print(fs.listdir("/docs"), fs.read_file("/docs/hello.txt"))

Every failure of the library raises :class:`DaxfsError` (an ``OSError``
whose ``errno`` is set).  The library is the one ``DAXFS_LIB`` names,
else the package's own ``_libdaxfs.so`` (pip install), else
``../build/libdaxfs.so`` relative to this package's directory (`make`).
Files are also io objects (:meth:`Region.open_file`), maps of them are
zero-copy buffers (:meth:`Region.map_file`), and :mod:`daxfs.fsspec_impl`
is the ``daxfs://`` fsspec filesystem (docs/python.md).
"""

import contextlib
import ctypes
import errno as _errno
import io
import os
import stat as _stat
import time
from collections import namedtuple

from . import _lib, _map
from ._xattr import XattrMixin

__all__ = [
    "DaxfsError", "File", "FileMap", "Region", "StatResult", "mkfs",
    "strerror",
    "RENAME_NOREPLACE", "RENAME_EXCHANGE", "RENAME_WHITEOUT",
]

FileMap = _map.FileMap
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
RENAME_WHITEOUT = 4     # leaves a character device 0/0 at src, atomically

HOST_STATES = {0: "free", 1: "alive", 2: "dead", 3: "recovering", 4: "recovered"}
TARGET_KINDS = {0: "file", 1: "block", 2: "devdax"}

_CHUNK = 256
_IO_CHUNK = 1 << 26

# fallocate(2) modes and lseek(2) whence values (Linux's)
FALLOC_KEEP_SIZE = 0x01
FALLOC_PUNCH_HOLE = 0x02
FALLOC_ZERO_RANGE = 0x10
SEEK_DATA = 3
SEEK_HOLE = 4
EXTENT_BASE = 1
EXTENT_NOPHYS = 2
EXTENT_UNWRITTEN = 4                # fallocated or zeroed pages: zeros (format 8)
# attribute flags (chattr, format 9, docs/attrs.md): Linux's FS_*_FL values
FL_SYNC = 0x08
FL_IMMUTABLE = 0x10
FL_APPEND = 0x20
FL_NODUMP = 0x40
FL_NOATIME = 0x80
Extent = namedtuple("Extent", "logical physical length flags")

# advisory locks (docs/locks.md): types and kinds as in core/daxfs_core.h
LOCK_EOF = (1 << 64) - 1
_LOCK_TYPES = {"u": 0, "r": 1, "w": 2}
_LOCK_KINDS = {"posix": 1, "ofd": 2, "flock": 3}
_LOCK_NAMES = {1: "r", 2: "w"}
_LOCK_KIND_NAMES = {v: k for k, v in _LOCK_KINDS.items()}
LockInfo = namedtuple("LockInfo", "type kind start end pid host owner")


# struct daxfs_info_host.lease: how this process judges a host's lease
# (its heartbeat counter timed with our own clock; docs/hosts.md)
_LEASES = {0: "unknown", 1: "live", 2: "expired"}


def strerror(err):
    """Message for an errno value, with DaxFS advice where it helps."""
    return _lib.lib().daxfs_strerror(-abs(err)).decode("utf-8", "replace")


class DaxfsError(OSError):
    """A libdaxfs call failed; ``errno`` holds the (positive) errno."""


# Concrete subclasses so that callers may also catch the usual builtins
# (FileNotFoundError, FileExistsError, ...), as with os functions.
_BUILTIN_ERRORS = {
    _errno.ENOENT: FileNotFoundError,
    _errno.EEXIST: FileExistsError,
    _errno.ENOTDIR: NotADirectoryError,
    _errno.EISDIR: IsADirectoryError,
    _errno.EACCES: PermissionError,
    _errno.EPERM: PermissionError,
    _errno.EAGAIN: BlockingIOError,     # a lock held by another owner
}
_ERROR_CLASSES = {}


def _error_class(err):
    cls = _ERROR_CLASSES.get(err)
    if cls is None:
        base = _BUILTIN_ERRORS.get(err)
        if base is None:
            cls = DaxfsError
        else:
            cls = type("Daxfs" + base.__name__, (DaxfsError, base), {})
        _ERROR_CLASSES[err] = cls
    return cls


def _raise(ret, *paths):
    err = -ret
    args = [err, strerror(err)]
    if paths:
        args.append(os.fsdecode(paths[0]))
        if len(paths) > 1:
            args.extend([None, os.fsdecode(paths[1])])
    raise _error_class(err)(*args)


# _open_ino's creates of a file that keeps going before it is held
_CREATE_ROUNDS = 1024


def _check(ret, *paths):
    if ret < 0:
        _raise(ret, *paths)
    return ret


def _path(path):
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, str):
        path = path.encode("utf-8", "surrogateescape")
    if not isinstance(path, bytes):
        raise TypeError(f"path must be str or bytes, not {type(path)!r}")
    if b"\0" in path:
        raise ValueError("embedded null byte in path")
    return path


def _bytes(data):
    if isinstance(data, str):
        return data.encode("utf-8")
    return bytes(data)


def _as_bytes(b):
    """The bytes of a buffer (bytes as it is; a str is a TypeError, as
    for a binary file)."""
    return b if type(b) is bytes else memoryview(b).tobytes()


@contextlib.contextmanager
def _c_buffer(b):
    """A writable buffer (bytearray, memoryview, array, numpy array) as a
    ctypes array over the same memory, and its size in bytes."""
    mv = memoryview(b).cast("B")
    try:
        if mv.readonly:
            raise TypeError("readinto() argument must be a writable buffer")
        buf = (ctypes.c_char * mv.nbytes).from_buffer(mv) if mv else None
        try:
            yield buf, mv.nbytes
        finally:
            del buf       # drops its export of mv before the release
    finally:
        mv.release()


def mkfs(path, size, force=False, buckets=0, max_hosts=0, lease_ms=0,
         label=None, small_pages=False):
    """Creates an empty DaxFS (no base image) on path.

    A regular file is created or resized to size bytes; a device is used
    as is (size 0: the whole device).  An existing DaxFS is only
    overwritten with force=True (else FileExistsError / EEXIST).  A file
    on a tmpfs gets 2 MiB pages where the kernel can give them, unless
    small_pages=True.  Returns the bytes of the region on pages of 2 MiB
    or more.
    """
    opts = _lib.MkfsOpts()
    opts.force = 1 if force else 0
    opts.nr_buckets = buckets
    opts.max_hosts = max_hosts
    opts.lease_ms = lease_ms
    opts.label = label.encode("utf-8") if label else None
    opts.small_pages = 1 if small_pages else 0
    huge = ctypes.c_uint64(0)
    opts.huge_bytes = ctypes.pointer(huge)
    p = _path(path)
    _check(_lib.lib().daxfs_region_create(p, size, ctypes.byref(opts)), p)
    return huge.value


StatResult = namedtuple("StatResult", [
    "st_ino", "st_mode", "st_nlink", "st_uid", "st_gid", "st_size",
    "st_blocks", "st_atime_ns", "st_mtime_ns", "st_ctime_ns", "st_rdev",
    "st_change", "st_generation",
])
StatResult.__doc__ = """Attributes of an inode (like os.stat_result).

st_blocks counts 512-byte units as in stat(2); st_change is bumped on
every change of the inode (for cache revalidation); bit 47 set (a
rewrite's mark, which only a read-only region shows) says that its bytes
may have changed since the count last moved.
"""


def _stat_result(a):
    return StatResult(a.ino, a.mode, a.nlink, a.uid, a.gid, a.size,
                      a.blocks * 8, a.atime_ns, a.mtime_ns, a.ctime_ns,
                      a.rdev, a.change, a.generation)


class HostState(str):
    """A host state name ('alive', ...) that also equals its number."""

    def __new__(cls, code):
        obj = super().__new__(cls, HOST_STATES.get(code, "?"))
        obj.code = code
        return obj

    def __eq__(self, other):
        if isinstance(other, int):
            return self.code == other
        return str.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


class Region(XattrMixin):
    """A mapped DaxFS region; this process is one host of the filesystem.

    readonly: map read-only and do not join the host table.
    join=False: map read-write without joining (modifications fail EROFS).
    heartbeat=False: join, but renew the lease only through renew().
    """

    def __init__(self, path, readonly=False, join=True, heartbeat=True,
                 backing=(), fill_timeout_ms=0, helper=True, persistent=False,
                 sync=False, strict=False, atomic_read=False,
                 prefault=False):
        """backing: backing files of a split-mode filesystem that this
        host can read (docs/pcache.md); fill_timeout_ms bounds waits for
        pages nobody can fill (0: 2 x lease); helper=False: do not serve
        other hosts' fill requests.  persistent: flush cache lines on
        every update (pmem); sync: also drain them before every call
        returns; strict: sync, and each write is atomic for strict
        readers (docs/modes.md); atomic_read: reads never see part of a
        strict write (as the FUSE server reads; implied by strict).
        prefault: map the whole region into this process's page tables
        now, so that no later access takes a page fault."""
        flags = 0
        if prefault:
            flags |= _lib.OPEN_PREFAULT
        if persistent:
            flags |= _lib.OPEN_PERSISTENT
        if sync:
            flags |= _lib.OPEN_SYNC
        if strict:
            flags |= _lib.OPEN_STRICT
        if atomic_read:
            flags |= _lib.OPEN_ATOMIC_READ
        if readonly:
            flags |= _lib.OPEN_RDONLY
        if not join:
            flags |= _lib.OPEN_NOJOIN
        if not heartbeat:
            flags |= _lib.OPEN_NO_HEARTBEAT
        self._lib = _lib.lib()
        self._h = None
        self._mapper = None
        handle = ctypes.c_void_p()
        p = _path(path)
        bk = [_path(b) for b in backing]
        arr = (ctypes.c_char_p * max(1, len(bk)))(*bk)
        opts = _lib.OpenOpts(flags=flags, backing=arr, nr_backing=len(bk),
                             fill_timeout_ms=fill_timeout_ms,
                             no_helper=0 if helper else 1)
        _check(self._lib.daxfs_region_open_opts(p, ctypes.byref(opts),
                                                ctypes.byref(handle)), p)
        self._h = handle
        self.path = os.fsdecode(p)
        self.readonly = readonly

    # -- lifetime --------------------------------------------------------

    def close(self):
        """Stops the heartbeat, leaves the host table and unmaps."""
        if self._h is not None:
            if self._mapper is not None:
                self._mapper.stop()
            self._lib.daxfs_region_close(self._h)
            self._h = None

    def shutdown(self):
        """Shuts this host down as if it had crashed (FS_IOC_SHUTDOWN's twin):
        calls in flight finish, later ones raise EIO, the lease is no longer
        renewed, and close() leaves the slot DEAD for the next host to
        recover."""
        self._lib.daxfs_region_shutdown(self._handle())

    @property
    def closed(self):
        return self._h is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _handle(self):
        if self._h is None:
            raise ValueError("operation on a closed DaxFS region")
        return self._h

    def renew(self):
        """Renews this host's lease now (for heartbeat=False)."""
        _check(self._lib.daxfs_region_renew(self._handle()))

    def set_creds(self, uid, gid):
        """Owner of objects created from now on (default: euid/egid)."""
        self._lib.daxfs_set_creds(self._handle(), uid, gid)

    # -- attributes ------------------------------------------------------

    def _stat(self, func, path):
        a = _lib.Attr()
        p = _path(path)
        _check(func(self._handle(), p, ctypes.byref(a)), p)
        return _stat_result(a)

    def stat(self, path):
        """Attributes of path, following a final symlink."""
        return self._stat(self._lib.daxfs_path_stat, path)

    def lstat(self, path):
        """Attributes of path itself (a final symlink is not followed)."""
        return self._stat(self._lib.daxfs_path_lstat, path)

    def fstat(self, ino):
        """Attributes of an inode number."""
        a = _lib.Attr()
        _check(self._lib.daxfs_fstat(self._handle(), ino, ctypes.byref(a)))
        return _stat_result(a)

    def exists(self, path):
        """True when path resolves (following symlinks), like os.path."""
        try:
            self.stat(path)
        except DaxfsError:
            return False
        return True

    def resolve(self, path, follow=True):
        """Inode number of path."""
        ino = ctypes.c_uint64()
        p = _path(path)
        _check(self._lib.daxfs_path_resolve(self._handle(), p,
                                            1 if follow else 0,
                                            ctypes.byref(ino)), p)
        return ino.value

    # -- namespace -------------------------------------------------------

    def mkdir(self, path, mode=0o755):
        p = _path(path)
        _check(self._lib.daxfs_path_mkdir(self._handle(), p, mode), p)

    def makedirs(self, path, mode=0o755, exist_ok=True):
        """mkdir -p: creates missing parents too."""
        p = _path(path)
        parts = [c for c in p.split(b"/") if c]
        cur = b""
        for i, comp in enumerate(parts):
            cur += b"/" + comp
            try:
                self.mkdir(cur, mode)
            except FileExistsError:
                if not _stat.S_ISDIR(self.stat(cur).st_mode):
                    raise
                if i == len(parts) - 1 and not exist_ok:
                    raise

    def create(self, path, mode=0o644, exclusive=True):
        """Creates a regular file and returns its inode number.

        exclusive=False opens an existing file instead (O_CREAT without
        O_EXCL; a final symlink is followed).
        """
        ino = ctypes.c_uint64()
        p = _path(path)
        flags = _lib.CREATE_EXCL if exclusive else 0
        _check(self._lib.daxfs_path_create(self._handle(), p, mode, flags,
                                           ctypes.byref(ino)), p)
        return ino.value

    def mknod(self, path, mode, rdev=0):
        """Creates a file, FIFO, socket or device node (type in mode)."""
        p = _path(path)
        _check(self._lib.daxfs_path_mknod(self._handle(), p, mode, rdev), p)

    def unlink(self, path):
        p = _path(path)
        _check(self._lib.daxfs_path_unlink(self._handle(), p), p)

    def rmdir(self, path):
        p = _path(path)
        _check(self._lib.daxfs_path_rmdir(self._handle(), p), p)

    def rename(self, src, dst, flags=0):
        """Renames src to dst (flags: RENAME_NOREPLACE, RENAME_EXCHANGE,
        RENAME_WHITEOUT)."""
        s, d = _path(src), _path(dst)
        _check(self._lib.daxfs_path_rename(self._handle(), s, d, flags),
               s, d)

    def link(self, src, dst):
        """Hard link dst to src (src's final symlink is not followed)."""
        s, d = _path(src), _path(dst)
        _check(self._lib.daxfs_path_link(self._handle(), s, d), s, d)

    def symlink(self, target, path):
        """Creates symlink path pointing to target (like os.symlink)."""
        t, p = _path(target), _path(path)
        _check(self._lib.daxfs_path_symlink(self._handle(), t, p), p)

    def readlink(self, path):
        p = _path(path)
        size = 4096
        while True:
            buf = ctypes.create_string_buffer(size + 1)
            n = _check(self._lib.daxfs_path_readlink(self._handle(), p, buf,
                                                     size + 1), p)
            if n <= size:
                return os.fsdecode(buf.raw[:n])
            size = n

    # -- directories -----------------------------------------------------

    def readdir_chunk(self, path, pos=0, max_entries=_CHUNK):
        """Up to max_entries entries from readdir position pos.

        Returns ([(name, ino, dtype, pos), ...], next_pos); next_pos is
        None at the end.  "." and ".." are not listed; positions stay
        valid while the directory changes.
        """
        if pos is None:
            return [], None
        max_entries = max(0, int(max_entries))
        ents = (_lib.DirentInfo * max(1, max_entries))()
        nxt = ctypes.c_uint64()
        p = _path(path)
        n = _check(self._lib.daxfs_path_readdir_chunk(
            self._handle(), p, pos, ents, max_entries, ctypes.byref(nxt)), p)
        out = [(os.fsdecode(e.name[:e.name_len]), e.ino, e.dtype, e.pos)
               for e in ents[:n]]
        return out, (None if nxt.value == _lib.POS_EOF else nxt.value)

    def scandir(self, path):
        """Yields (name, ino, dtype, pos) for every entry of path."""
        pos = 0
        while pos is not None:
            ents, pos = self.readdir_chunk(path, pos, _CHUNK)
            yield from ents

    def listdir(self, path):
        """Names in directory path (no "." and ".."), in hash order."""
        return [e[0] for e in self.scandir(path)]

    # -- whole files -----------------------------------------------------

    def read_file(self, path):
        """Contents of the file at path (follows symlinks)."""
        with self.open(path) as f:
            return f.read_all()

    def write_file(self, path, data, mode=0o644):
        """Creates or truncates path and writes data to it.

        All of data or an error: when the region fills part way the
        exception is raised and the file does not keep the part written
        (a file this call created is removed, an existing one is left
        empty), so that nothing short passes for the whole file.
        """
        data = _bytes(data)
        ino = ctypes.c_uint64()
        p = _path(path)
        created = _check(self._lib.daxfs_path_create(
            self._handle(), p, mode, _lib.CREATE_TRUNC, ctypes.byref(ino)), p)
        f = File(self, ino.value, p)
        try:
            f.pwrite_all(data, 0)
        except OSError:
            if created:
                self._lib.daxfs_path_unlink(self._handle(), p)
            else:
                f.truncate(0)
            raise
        return len(data)

    def _open_ino(self, p, create=None, mode=0o644):
        """Inode number of file p, published in this host's open set:
        resolved (create None), or created with CREATE_* flags create."""
        ino = ctypes.c_uint64()
        if create is None:
            _check(self._lib.daxfs_path_resolve(self._handle(), p, 1,
                                                ctypes.byref(ino)), p)
            st = self.fstat(ino.value)
            if _stat.S_ISDIR(st.st_mode):
                _raise(-_errno.EISDIR, p)
        # published in this host's open set: an unlink anywhere keeps the
        # file until close() (docs/open-files.md).  A file created or
        # found that another host's unlink freed before that is looked
        # for again, as the preload's open(O_CREAT) does
        for _ in range(_CREATE_ROUNDS):
            if create is not None:
                _check(self._lib.daxfs_path_create(
                    self._handle(), p, mode, create, ctypes.byref(ino)), p)
            err = self._lib.daxfs_file_open(self._handle(), ino.value)
            if err != -_errno.ENOENT or create is None:
                break
        _check(err, p)
        return ino.value

    def open(self, path, create=False, mode=0o644):
        """A File for path (create=True creates it when missing), for
        reading and writing (mode "rb+"), at position 0."""
        p = _path(path)
        return File(self, self._open_ino(p, 0 if create else None, mode), p,
                    opened=True)

    def open_file(self, path, mode="r", buffering=-1, encoding=None,
                  errors=None, newline=None, perm=0o644):
        """Opens path as the built-in open() opens a file: mode "r", "w",
        "x" or "a", with "+" and "b" or "t"; a TextIOWrapper in text
        mode, else a BufferedReader, BufferedWriter or BufferedRandom
        around a File (buffering=0 in binary mode: the File itself).  New
        files get permissions perm (no umask: the library has none)."""
        kind, raw_mode, text = _parse_mode(mode)
        _check_wrap_args(text, buffering, encoding, errors, newline)
        p = _path(path)
        create = {"r": None, "w": _lib.CREATE_TRUNC, "x": _lib.CREATE_EXCL,
                  "a": 0}[kind]
        raw = File(self, self._open_ino(p, create, perm), p, opened=True,
                   mode=raw_mode)
        try:
            if kind == "a":
                raw.seek(0, os.SEEK_END)
            return _wrap(raw, mode, text, buffering, encoding, errors,
                         newline)
        except BaseException:
            raw.close()
            raise

    def tmpfile(self, dirpath="/", mode=0o600):
        """An unnamed regular file in dirpath (O_TMPFILE), held open: a File
        whose close frees it unless link_open() named it meanwhile."""
        p = _path(dirpath)
        ino = ctypes.c_uint64()
        _check(self._lib.daxfs_path_tmpfile(self._handle(), p, mode,
                                            ctypes.byref(ino)), p)
        return File(self, ino.value, None, opened=True)

    def link_open(self, f, path):
        """Gives the open File f the name path (linkat with AT_EMPTY_PATH),
        also when it has no name (a tmpfile)."""
        p = _path(path)
        _check(self._lib.daxfs_link_open(self._handle(), f.ino, p), p)

    # -- attributes (modify) --------------------------------------------

    def truncate(self, path, size):
        p = _path(path)
        _check(self._lib.daxfs_path_truncate(self._handle(), p, size), p)

    def chmod(self, path, mode):
        p = _path(path)
        _check(self._lib.daxfs_path_chmod(self._handle(), p, mode), p)

    def getflags(self, path):
        """The attribute flags (FL_* bits, lsattr) of path."""
        a = _lib.Attr()
        p = _path(path)
        _check(self._lib.daxfs_path_stat(self._handle(), p, ctypes.byref(a)),
               p)
        return a.flags

    def setflags(self, path, flags):
        """chattr: sets the attribute flags (FL_* bits) of path; every
        host then refuses what immutable / append-only forbid (EPERM)."""
        p = _path(path)
        _check(self._lib.daxfs_path_setflags(self._handle(), p, flags), p)

    def chown(self, path, uid, gid, follow_symlinks=True):
        """Changes owner; -1 leaves uid or gid unchanged."""
        p = _path(path)
        func = (self._lib.daxfs_path_chown if follow_symlinks
                else self._lib.daxfs_path_lchown)
        _check(func(self._handle(), p, uid & 0xffffffff, gid & 0xffffffff),
               p)

    def utime(self, path, atime_ns=None, mtime_ns=None):
        """Sets access and modification times (ns); None means now."""
        a = _lib.UTIME_NOW if atime_ns is None else atime_ns
        m = _lib.UTIME_NOW if mtime_ns is None else mtime_ns
        p = _path(path)
        _check(self._lib.daxfs_path_utimens(self._handle(), p, a, m), p)

    # -- whole filesystem ------------------------------------------------

    def statfs(self):
        st = _lib.Statfs()
        _check(self._lib.daxfs_region_statfs(self._handle(),
                                             ctypes.byref(st)))
        return {name: getattr(st, name) for name, _ in st._fields_}

    def info(self):
        """Layout, space and hosts of the region (see `daxfs info`)."""
        inf = _lib.Info()
        _check(self._lib.daxfs_info(self._handle(), ctypes.byref(inf)))
        out = {name: getattr(inf, name) for name, _ in inf._fields_
               if name not in ("uuid", "label", "regions", "hosts")}
        out["uuid"] = "-".join(bytes(inf.uuid[a:b]).hex() for a, b in
                               ((0, 4), (4, 6), (6, 8), (8, 10), (10, 16)))
        out["label"] = inf.label.decode("utf-8", "replace")
        out["target_kind"] = TARGET_KINDS.get(inf.target_kind, "?")
        out["regions"] = [
            {"name": r.name.decode() if r.name else "?", "kind": r.kind,
             "offset": r.offset, "size": r.size}
            for r in inf.regions[:inf.nr_regions]]
        out["hosts"] = [
            {"slot": h.slot, "state": HostState(h.state), "gen": h.gen,
             "name": h.name.decode("utf-8", "replace"), "pid": h.pid,
             "lease_age_ns": h.lease_age_ns, "joined_ns": h.joined_ns,
             "kind": h.kind, "ops": h.ops, "busy_lanes": h.busy_lanes,
             "open_files": h.open_files,
             "self": bool(h.self), "expired": bool(h.expired),
             "lease": _LEASES.get(h.lease, "unknown"),
             "recovered_ns": h.recovered_ns,
             "recovered_by": (h.recovered_by - 1 if h.recovered_by else None)}
            for h in inf.hosts[:inf.nr_hosts]]
        out["self_slot"] = (None if inf.self_slot == 0xffffffff
                            else inf.self_slot)
        return out

    def cache_info(self):
        """The shared page cache of a split-mode filesystem (None without
        one): cluster-wide occupancy, pending, pins, sweep hand, totals,
        and this handle's hits/misses/backing reads."""
        ci = _lib.CacheInfo()
        err = self._lib.daxfs_cache_info(self._handle(), ctypes.byref(ci))
        if err == -_errno.EOPNOTSUPP:
            return None
        _check(err)
        out = {name: getattr(ci, name) for name, _ in ci._fields_
               if name != "backing"}
        out["backing"] = [{"size": b.size,
                           "name": b.name.decode("utf-8", "replace")}
                          for b in ci.backing[:ci.nr_backing]]
        return out

    def page_map(self, ino, pgoff):
        """Zero-copy view of page pgoff of file ino: returns (bytes of the
        page as a read-only memoryview or None for a hole, ref).  A cache
        slot stays pinned until page_release(ref), base data never
        changes; a page in the pool raises EAGAIN (nothing would hold it:
        map_file maps those, with its revalidation passes)."""
        ref = _lib.PageRef()
        ptr = ctypes.c_void_p()
        _check(self._lib.daxfs_page_map(self._handle(), ino, pgoff,
                                        ctypes.byref(ptr), ctypes.byref(ref)))
        if not ptr.value:
            return None, ref
        buf = (ctypes.c_char * 4096).from_address(ptr.value)
        return memoryview(buf).toreadonly(), ref

    def map_file(self, path):
        """A read-only, zero-copy FileMap of the file at path: its buffer
        is the file's pages in the region (docs/python.md "Zero copy")."""
        ino = self.resolve(path)
        st = self.fstat(ino)
        if not _stat.S_ISREG(st.st_mode):
            _raise(-_errno.EISDIR if _stat.S_ISDIR(st.st_mode)
                   else -_errno.EINVAL, _path(path))
        h = self._handle()
        if self._mapper is None:
            self._mapper = _map.Mapper(self)
        # the file outlives its last close while mapped; the mapper
        # announces an epoch before the first lookup
        _check(self._lib.daxfs_map_hold(h, ino))
        try:
            return self._mapper.add(lambda: _map.FileMap(
                self, ino, st.st_size, _check, File(self, ino).extents()),
                _check)
        except BaseException:
            self._lib.daxfs_map_unhold(h, ino)
            raise

    def _map_close(self, m):
        if self._mapper is not None and m in self._mapper.maps:
            self._mapper.remove(m)

    def map_pass(self):
        """Runs one revalidation pass of this Region's maps now (the pass
        thread runs one every lease/4)."""
        if self._mapper is not None:
            self._mapper.run_pass()

    def page_release(self, ref):
        """Releases a page_map() pin."""
        self._lib.daxfs_page_release(self._handle(), ctypes.byref(ref))

    def cache_drop(self):
        """Evicts every unpinned cached page; returns how many."""
        return _check(self._lib.daxfs_cache_drop(self._handle()))

    def reclaim(self):
        """Frees every retired object that no host can still read."""
        _check(self._lib.daxfs_region_reclaim(self._handle()))

    def locks(self, path=None):
        """Every advisory lock held on path's file (None: on every file)
        by any host: a list of (ino, LockInfo, waiting)."""
        ino = 0
        if path is not None:
            ino = self.stat(path).st_ino
        out = []
        fn_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64,
                                ctypes.POINTER(_lib.LockReq), ctypes.c_bool)

        def fn(_ctx, i, lp, waiting):
            r = lp.contents
            out.append((i, LockInfo(_LOCK_NAMES.get(r.type, "?"),
                                    _LOCK_KIND_NAMES.get(r.kind, "?"),
                                    r.start, r.end, r.pid, r.host, r.owner),
                        bool(waiting)))

        cb = fn_t(fn)
        _check(self._lib.daxfs_lock_list_all(
            self._handle(), ino, ctypes.cast(cb, ctypes.c_void_p), None))
        return out

    def watch_hosts(self):
        """Times the other hosts' heartbeats with this process's clock
        until each lease is known (live or run out), at most about one
        lease; returns how many are still undecided."""
        return _check(self._lib.daxfs_region_watch_hosts(self._handle()))


_BUFFER_SIZE = 1 << 18     # a library call per 256 KiB, not per 8 KiB


def _parse_mode(mode):
    """open()'s mode: ("r", "w", "x" or "a", the File's mode as io.FileIO
    writes it, text?)."""
    chars = set(mode) if isinstance(mode, str) else None
    if (not chars or len(chars) != len(mode) or not chars <= set("rwxab+t")
            or len(chars & set("rwxa")) != 1 or {"b", "t"} <= chars):
        raise ValueError("invalid mode: %r" % (mode,))
    kind = (chars & set("rwxa")).pop()
    if kind == "w" and "+" in chars:
        return kind, "rb+", "b" not in chars     # as io.FileIO names it
    return kind, kind + "b" + ("+" if "+" in chars else ""), "b" not in chars


def _check_wrap_args(text, buffering, encoding, errors, newline):
    if not text and (encoding, errors, newline) != (None, None, None):
        raise ValueError("binary mode doesn't take an encoding, errors or "
                         "newline argument")
    if text and buffering == 0:
        raise ValueError("can't have unbuffered text I/O")


def _wrap(raw, mode, text, buffering, encoding, errors, newline):
    """The buffered (and text) layers that open() puts around raw."""
    if buffering == 0:
        return raw
    size = buffering if buffering > 1 else _BUFFER_SIZE
    if "+" in raw.mode:
        buf = io.BufferedRandom(raw, size)
    elif raw.mode[0] == "r":
        buf = io.BufferedReader(raw, size)
    else:
        buf = io.BufferedWriter(raw, size)
    if not text:
        return buf
    if hasattr(io, "text_encoding"):         # 3.10: EncodingWarning
        encoding = io.text_encoding(encoding)
    out = io.TextIOWrapper(buf, encoding, errors, newline,
                           line_buffering=buffering == 1)
    out.mode = mode
    return out


def _lock_req(kind, type_, start, length, owner):
    if kind not in _LOCK_KINDS or type_ not in _LOCK_TYPES:
        raise ValueError("lock kind %r or type %r" % (kind, type_))
    if kind == "flock":
        start, length = 0, 0
    end = LOCK_EOF if length == 0 else start + length - 1
    return _lib.LockReq(start=start, end=end, owner=owner,
                        type=_LOCK_TYPES[type_], kind=_LOCK_KINDS[kind])


class File(io.RawIOBase):
    """An open regular file: I/O by inode number, and a raw binary file
    (io.RawIOBase: read, readinto, write, seek, tell, truncate; no fileno)
    with its own position, so that io.BufferedReader, TextIOWrapper and
    every reader of file objects take it (Region.open_file wraps it the
    way open() does).  pread/pwrite/append ignore the position."""

    def __init__(self, region, ino, path=None, opened=False, mode="rb+"):
        super().__init__()
        self.region = region
        self.ino = ino
        self.path = path
        self.mode = mode
        self._pos = 0
        self._readable = "r" in mode or "+" in mode
        self._writable = mode[0] in "wxa" or "+" in mode
        self._append = mode[0] == "a"
        self._opened = opened     # holds an entry in the host's open set

    @property
    def name(self):
        return os.fsdecode(self.path) if self.path else self.ino

    def _h(self):
        if self.closed:
            raise ValueError("I/O operation on closed file")
        return self.region._handle()

    # -- io.RawIOBase --------------------------------------------------

    def readable(self):
        self._h()
        return self._readable

    def writable(self):
        self._h()
        return self._writable

    def seekable(self):
        self._h()
        return True

    def _need(self, ok, what):
        if not ok:
            raise io.UnsupportedOperation("File not open for " + what)

    def readinto(self, b):
        """Reads into the buffer b at the position, with no copy in
        between; returns the count (0 at end of file)."""
        self._need(self._readable, "reading")
        with _c_buffer(b) as (buf, n):
            got = self._err(self.region._lib.daxfs_pread(
                self._h(), self.ino, buf, n, self._pos)) if n else 0
        self._pos += got
        return got

    def readall(self):
        self._need(self._readable, "reading")
        data = self.pread(max(0, self.size - self._pos), self._pos)
        self._pos += len(data)
        return data

    def write(self, b):
        """Writes b at the position (at the end of file, atomically, in
        "a" mode); returns the count, short only when the region fills
        (none written: ENOSPC)."""
        self._need(self._writable, "writing")
        data = _as_bytes(b)
        if not data:
            return 0
        if self._append:
            at = ctypes.c_uint64()
            n = self._err(self.region._lib.daxfs_append(
                self._h(), self.ino, data, len(data), ctypes.byref(at)))
            pos = at.value + n
        else:
            n = self._err(self.region._lib.daxfs_pwrite(
                self._h(), self.ino, data, len(data), self._pos))
            pos = self._pos + n
        if n <= 0:
            self._enospc()
        self._pos = pos
        return n

    def seek(self, offset, whence=os.SEEK_SET):
        """Moves the position (SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA,
        SEEK_HOLE) and returns it."""
        self._h()
        if whence == os.SEEK_SET:
            pos = offset
        elif whence == os.SEEK_CUR:
            pos = self._pos + offset
        elif whence == os.SEEK_END:
            pos = self.size + offset
        elif whence in (SEEK_DATA, SEEK_HOLE):
            pos = self._seek(offset, whence)
        else:
            raise ValueError("invalid whence (%r)" % (whence,))
        if pos < 0:
            raise OSError(_errno.EINVAL, "negative seek position %d" % pos)
        self._pos = pos
        return pos

    def tell(self):
        self._h()
        return self._pos

    def _enospc(self):
        _raise(-_errno.ENOSPC, *([self.path] if self.path else []))

    def _err(self, ret):
        if ret < 0:
            _raise(ret, *([self.path] if self.path else []))
        return ret

    @property
    def size(self):
        """Current size (read from the region every time)."""
        a = _lib.Attr()
        self._err(self.region._lib.daxfs_fstat(self._h(), self.ino,
                                               ctypes.byref(a)))
        return a.size

    def pread(self, n, off):
        """Up to n bytes at off (short only at end of file)."""
        # size the buffer by the current file size, not by n
        n = min(n, max(0, self.size - off))
        if n <= 0:
            return b""
        buf = ctypes.create_string_buffer(n)
        got = self._err(self.region._lib.daxfs_pread(self._h(), self.ino,
                                                     buf, n, off))
        return buf.raw[:got]

    def pwrite(self, data, off):
        """Writes data at off; returns the number of bytes written, which
        is short when the region filled part way (like os.pwrite)."""
        data = _bytes(data)
        if not data:
            return 0
        buf = ctypes.create_string_buffer(data, len(data))
        return self._err(self.region._lib.daxfs_pwrite(
            self._h(), self.ino, buf, len(data), off))

    def pwrite_all(self, data, off):
        """Writes all of data at off or raises (ENOSPC when the region
        fills: the bytes before the error stay written)."""
        data = memoryview(_bytes(data))
        done = 0
        while done < len(data):
            n = self.pwrite(data[done:], off + done)
            if n <= 0:
                self._enospc()
            done += n
        return done

    def append(self, data):
        """Atomically appends all of data; returns the offset it went to.

        Raises ENOSPC when the region fills part way; the bytes that went
        in stay (another host may have appended after them)."""
        data = _bytes(data)
        at = ctypes.c_uint64()
        buf = ctypes.create_string_buffer(data, max(1, len(data)))
        n = self._err(self.region._lib.daxfs_append(
            self._h(), self.ino, buf, len(data), ctypes.byref(at)))
        if n < len(data):
            self._enospc()
        return at.value

    def read_all(self):
        """The whole file (up to its current size)."""
        parts = []
        off = 0
        while True:
            chunk = self.pread(_IO_CHUNK, off)
            if not chunk:
                break
            parts.append(chunk)
            off += len(chunk)
        return b"".join(parts)

    def truncate(self, size=None):
        """Sets the size (default: the position, which stays); returns
        it."""
        if size is None:
            size = self.tell()
        self._err(self.region._lib.daxfs_ftruncate(self._h(), self.ino,
                                                   size))
        return size

    # -- fallocate, holes and extents (docs/files.md "fallocate") --------

    def fallocate(self, off, length, mode=0):
        """fallocate(2): mode is 0 or os.FALLOC_FL_* bits (KEEP_SIZE,
        PUNCH_HOLE | KEEP_SIZE, ZERO_RANGE)."""
        self._err(self.region._lib.daxfs_file_fallocate(
            self._h(), self.ino, mode, off, length))

    def punch_hole(self, off, length):
        """Frees [off, off + length): it reads as zeros, the size stays."""
        self.fallocate(off, length, FALLOC_PUNCH_HOLE | FALLOC_KEEP_SIZE)

    def zero_range(self, off, length, keep_size=False):
        """[off, off + length) reads as zeros, its blocks allocated."""
        self.fallocate(off, length, FALLOC_ZERO_RANGE |
                       (FALLOC_KEEP_SIZE if keep_size else 0))

    def _seek(self, off, whence):
        res = ctypes.c_uint64()
        self._err(self.region._lib.daxfs_file_seek(
            self._h(), self.ino, off, whence, ctypes.byref(res)))
        return res.value

    def seek_data(self, off):
        """lseek(SEEK_DATA): the first data byte at or after off
        (OSError ENXIO when none before EOF)."""
        return self._seek(off, SEEK_DATA)

    def seek_hole(self, off):
        """lseek(SEEK_HOLE): the first hole byte at or after off (EOF
        counts as a hole)."""
        return self._seek(off, SEEK_HOLE)

    def extents(self, off=0, length=None):
        """The runs of blocks with data (FIEMAP) meeting [off, off +
        length): a list of Extent(logical, physical, length, flags)."""
        end = (1 << 64) - 1 if length is None else off + length
        out = []
        arr = (_lib.Extent * 64)()
        while off < end:
            n = self._err(self.region._lib.daxfs_file_extents(
                self._h(), self.ino, off, end - off, arr, 64))
            out.extend(Extent(e.logical, e.physical, e.length, e.flags)
                       for e in arr[:n])
            if n < 64:
                break
            off = arr[n - 1].logical + arr[n - 1].length
        return out

    # -- advisory locks across hosts (docs/locks.md) ---------------------

    def _owner(self, kind):
        # POSIX: the process (the library's default); OFD and flock: this
        # open file, as an open file description on Linux
        return 0 if kind == "posix" else id(self)

    def lock(self, type_="w", start=0, length=0, kind="posix", wait=False):
        """Takes (type_ "r" or "w") or drops ("u") a lock on length bytes
        at start (0: to EOF and beyond); kind "posix" (fcntl), "ofd" or
        "flock" (whole file).  wait: False tries once (BlockingIOError
        when another owner's lock conflicts), True waits (F_SETLKW),
        a number waits at most that many seconds.  EDEADLK (a POSIX wait
        that closes a cycle, on any hosts) raises OSError."""
        r = _lock_req(kind, type_, start, length, self._owner(kind))
        deadline = None
        if wait is True:
            ms = -1
        elif wait is False:
            ms = 0
        else:
            ms = max(1, int(wait * 1000))
            deadline = time.monotonic() + wait
        while True:
            ret = self.region._lib.daxfs_lock(self._h(), self.ino,
                                              ctypes.byref(r), ms)
            if ret != -_errno.EINTR:
                break
            # a signal handler without SA_RESTART ended the wait (as
            # fcntl(F_SETLKW)'s EINTR): Python runs it here, and waits
            # again unless it raised (PEP 475)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    ret = -_errno.EAGAIN
                    break
                ms = max(1, int(left * 1000))
        self._err(ret)

    def unlock(self, start=0, length=0, kind="posix"):
        self.lock("u", start, length, kind)

    def getlk(self, type_="w", start=0, length=0, kind="posix"):
        """F_GETLK: None when the lock could be taken, else the first
        conflicting lock as a LockInfo (host: its host slot, pid: its
        process on that host)."""
        r = _lock_req(kind, type_, start, length, self._owner(kind))
        self._err(self.region._lib.daxfs_getlk(self._h(), self.ino,
                                               ctypes.byref(r)))
        if r.type == 0:
            return None
        return LockInfo(_LOCK_NAMES.get(r.type, "?"),
                        _LOCK_KIND_NAMES.get(r.kind, "?"), r.start, r.end,
                        r.pid, r.host, r.owner)

    def close(self):
        if self.closed:
            return
        try:
            if self._opened and not self.region.closed:
                ret = self.region._lib.daxfs_file_close(
                    self.region._handle(), self.ino)
                # EBADF: opened by another host (the parent before a fork)
                if ret < 0 and ret != -_errno.EBADF:
                    self._err(ret)
        finally:
            super().close()

    def __del__(self):
        # Unlike io.IOBase, not closed when collected: its open-set entry
        # stays until close() or the Region's close, as it always has
        # (the buffered objects of Region.open_file do close it).
        pass
