"""Extended attributes and POSIX ACLs of a :class:`daxfs.Region`
(include/daxfs/libdaxfs-xattr.h, docs/xattr.md).  The method names and
arguments follow :func:`os.getxattr` and friends."""

import ctypes
import errno as _errno

XATTR_CREATE = 1
XATTR_REPLACE = 2


def _helpers():
    # the package's helpers: imported late, the package imports us
    from . import _check, _path, _bytes
    return _check, _path, _bytes


class XattrMixin:
    """getxattr / setxattr / removexattr / listxattr / access."""

    def _xattr_call(self, fn, path, follow, name, *args):
        check, to_path, _ = _helpers()
        p, n = to_path(path), to_path(name)
        return check(fn(self._handle(), p, 1 if follow else 0, n, *args), p)

    def getxattr(self, path, attribute, *, follow_symlinks=True):
        """The value of attribute (bytes); OSError ENODATA if none."""
        size = 256
        while True:
            buf = ctypes.create_string_buffer(size)
            try:
                n = self._xattr_call(self._lib.daxfs_path_getxattr, path,
                                     follow_symlinks, attribute, buf, size)
            except OSError as e:
                if e.errno != _errno.ERANGE:
                    raise
                size *= 4
                continue
            return buf.raw[:n]

    def setxattr(self, path, attribute, value, flags=0, *,
                 follow_symlinks=True):
        """Sets attribute to value; flags XATTR_CREATE / XATTR_REPLACE."""
        data = _helpers()[2](value)
        self._xattr_call(self._lib.daxfs_path_setxattr, path,
                         follow_symlinks, attribute, data, len(data), flags)

    def removexattr(self, path, attribute, *, follow_symlinks=True):
        self._xattr_call(self._lib.daxfs_path_removexattr, path,
                         follow_symlinks, attribute)

    def listxattr(self, path, *, follow_symlinks=True):
        """The attribute names (str) of path."""
        check, to_path, _ = _helpers()
        p = to_path(path)
        fn = self._lib.daxfs_path_listxattr
        size = 1024
        while True:
            buf = ctypes.create_string_buffer(size)
            n = fn(self._handle(), p, 1 if follow_symlinks else 0, buf, size)
            if n == -_errno.ERANGE:
                size *= 4
                continue
            n = check(n, p)
            names = buf.raw[:n].split(b"\0")[:-1]
            return [x.decode("utf-8", "surrogateescape") for x in names]

    def access(self, path, mode, uid, gid, groups=()):
        """True when user uid (gid, groups) may access path for mode
        (os.R_OK | os.W_OK | os.X_OK): mode bits and the access ACL."""
        check, to_path, _ = _helpers()
        p = to_path(path)
        ino = self.stat(path).st_ino
        arr = (ctypes.c_uint32 * max(1, len(groups)))(*groups)
        ret = self._lib.daxfs_access(self._handle(), ino, uid, gid, arr,
                                     len(groups), mode)
        if ret == -_errno.EACCES:
            return False
        check(ret, p)
        return True

    def acl_inherit(self, parent, path):
        """Gives path the default ACL of directory parent (as a create
        in it would under Linux)."""
        check, to_path, _ = _helpers()
        d, p = self.stat(parent).st_ino, self.lstat(path).st_ino
        check(self._lib.daxfs_acl_inherit(self._handle(), d, p),
              to_path(path))
