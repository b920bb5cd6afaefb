"""The daxfs:// filesystem for fsspec (docs/python.md "fsspec").

    import fsspec
    fs = fsspec.filesystem("daxfs", region="/dev/shm/fs")
    with fsspec.open("daxfs:///data/x.csv", "w", region="/dev/shm/fs") as f:
        f.write("a,b\\n1,2\\n")

The region is the ``region`` storage option (a path, or an open
daxfs.Region), else $DAXFS_REGION.  Paths are absolute paths inside the
region: ``daxfs:///a/b`` is ``/a/b``.  The package registers the protocol
through the ``fsspec.specs`` entry point.  Each filesystem instance is one
host of the region (fsspec caches instances per process, and a forked or
unpickled one opens the region anew).
"""

import datetime
import os
import shutil
import stat as _stat

from fsspec.spec import AbstractFileSystem

from . import Region

_TYPES = {_stat.S_IFDIR: "directory", _stat.S_IFREG: "file"}


class DaxfsFileSystem(AbstractFileSystem):
    """fsspec filesystem over a DaxFS region (libdaxfs, this process as
    one host).  auto_mkdir: opening a file for writing, cp_file and mv
    create the missing parent directories (as LocalFileSystem's)."""

    protocol = "daxfs"
    root_marker = "/"

    def __init__(self, region=None, auto_mkdir=False, readonly=False,
                 **kwargs):
        super().__init__(region=region, auto_mkdir=auto_mkdir,
                         readonly=readonly, **kwargs)
        if isinstance(region, Region):
            self.region = region
        else:
            path = region or os.environ.get("DAXFS_REGION")
            if not path:
                raise ValueError("daxfs: no region: pass region=PATH or "
                                 "set DAXFS_REGION")
            self.region = Region(path, readonly=readonly)
        self.auto_mkdir = auto_mkdir

    @classmethod
    def _strip_protocol(cls, path):
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        path = super()._strip_protocol(path)
        return path if path.startswith("/") else "/" + path

    @property
    def fsid(self):
        return "daxfs-" + self.region.info()["uuid"]

    # -- metadata ----------------------------------------------------------

    def info(self, path, **kwargs):
        path = self._strip_protocol(path)
        st = self.region.lstat(path)
        link = _stat.S_ISLNK(st.st_mode)
        out = {"name": path, "islink": link}
        if link:
            out["destination"] = self.region.readlink(path)
            try:
                st = self.region.stat(path)
            except FileNotFoundError:
                pass            # dangling: the link itself
        out.update(size=st.st_size,
                   type=_TYPES.get(_stat.S_IFMT(st.st_mode), "other"),
                   mode=st.st_mode, uid=st.st_uid, gid=st.st_gid,
                   ino=st.st_ino, nlink=st.st_nlink,
                   mtime=st.st_mtime_ns / 1e9, created=st.st_ctime_ns / 1e9)
        return out

    def ls(self, path, detail=True, **kwargs):
        path = self._strip_protocol(path)
        top = self.info(path)
        if top["type"] != "directory":
            return [top] if detail else [path]
        base = path.rstrip("/")
        out = []
        for name in self.region.listdir(path):
            full = base + "/" + name
            if not detail:
                out.append(full)
                continue
            try:
                out.append(self.info(full))
            except FileNotFoundError:
                pass            # removed by another host meanwhile
        return out

    def modified(self, path):
        return datetime.datetime.fromtimestamp(self.info(path)["mtime"],
                                               datetime.timezone.utc)

    def created(self, path):
        return datetime.datetime.fromtimestamp(self.info(path)["created"],
                                               datetime.timezone.utc)

    def lexists(self, path, **kwargs):
        try:
            self.region.lstat(self._strip_protocol(path))
        except FileNotFoundError:
            return False
        return True

    def islink(self, path):
        try:
            return self.info(path)["islink"]
        except FileNotFoundError:
            return False

    # -- namespace ---------------------------------------------------------

    def mkdir(self, path, create_parents=True, **kwargs):
        path = self._strip_protocol(path)
        if self.exists(path):
            raise FileExistsError(path)
        if create_parents:
            self.makedirs(path, exist_ok=True)
        else:
            self.region.mkdir(path)

    def makedirs(self, path, exist_ok=False):
        self.region.makedirs(self._strip_protocol(path), exist_ok=exist_ok)

    def rmdir(self, path):
        self.region.rmdir(self._strip_protocol(path))

    def _rm(self, path):
        path = self._strip_protocol(path)
        if self.isdir(path) and not self.islink(path):
            self.region.rmdir(path)
        else:
            self.region.unlink(path)

    def rm_file(self, path):
        self._rm(path)

    def rm(self, path, recursive=False, maxdepth=None):
        paths = self.expand_path(path, recursive=recursive,
                                 maxdepth=maxdepth)
        for p in sorted(paths, key=len, reverse=True):  # children first
            if self.isdir(p) and not self.islink(p) and not recursive:
                raise ValueError("cannot delete directory %s: set "
                                 "recursive=True" % p)
            self._rm(p)

    def _parents_for(self, path):
        if self.auto_mkdir:
            self.makedirs(self._parent(path), exist_ok=True)

    def mv(self, path1, path2, recursive=True, maxdepth=None, **kwargs):
        """Renames path1 to path2 (into path2 when that is a directory,
        as mv(1)); a list or a glob moves each."""
        if isinstance(path1, str) and not any(c in path1 for c in "*?["):
            src = self._strip_protocol(path1)
            dst = self._strip_protocol(path2)
            if self.isdir(dst):
                dst = dst.rstrip("/") + "/" + src.rstrip("/").rsplit("/")[-1]
            self._parents_for(dst)
            self.region.rename(src, dst)
            return
        super().mv(path1, path2, recursive=recursive, maxdepth=maxdepth,
                   **kwargs)

    def cp_file(self, path1, path2, **kwargs):
        path1 = self._strip_protocol(path1)
        path2 = self._strip_protocol(path2)
        self._parents_for(path2)
        if self.isfile(path1):
            with self.region.open_file(path1, "rb") as src, \
                    self.region.open_file(path2, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        elif self.isdir(path1):
            self.makedirs(path2, exist_ok=True)
        else:
            raise FileNotFoundError(path1)

    def link(self, src, dst, **kwargs):
        self.region.link(self._strip_protocol(src),
                         self._strip_protocol(dst))

    def symlink(self, src, dst, **kwargs):
        self.region.symlink(self._strip_protocol(src),
                            self._strip_protocol(dst))

    def touch(self, path, truncate=True, **kwargs):
        path = self._strip_protocol(path)
        self._parents_for(path)
        if truncate or not self.exists(path):
            self.region.write_file(path, b"")
        else:
            self.region.utime(path)

    # -- data --------------------------------------------------------------

    def _open(self, path, mode="rb", block_size=None, autocommit=True,
              cache_options=None, **kwargs):
        """The Region.open_file object: buffered binary, block_size its
        buffer size.  No transactions (autocommit=False is refused)."""
        if not autocommit:
            raise NotImplementedError("daxfs: no transactions")
        path = self._strip_protocol(path)
        if mode[0] in "wxa":
            self._parents_for(path)
        return self.region.open_file(path, mode, buffering=block_size or -1)

    def cat_file(self, path, start=None, end=None, **kwargs):
        path = self._strip_protocol(path)
        if start is None and end is None:
            return self.region.read_file(path)
        return super().cat_file(path, start=start, end=end, **kwargs)

    def pipe_file(self, path, value, mode="overwrite", **kwargs):
        path = self._strip_protocol(path)
        if mode == "create" and self.exists(path):
            raise FileExistsError(path)
        self._parents_for(path)
        self.region.write_file(path, value)
