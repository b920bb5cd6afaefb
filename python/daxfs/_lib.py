"""Low-level ctypes declarations for libdaxfs (daxfs/_libdaxfs.so or
build/libdaxfs.so).

Mirrors include/daxfs/libdaxfs.h and the structures of core/daxfs_core.h
that the library API uses.  Everything here is private to the package;
use the classes in :mod:`daxfs` instead.
"""

import ctypes
import os
from pathlib import Path

NAME_MAX = 255
RGN_MAX = 8
MAX_HOSTS = 256
HOST_NAME_LEN = 32
LABEL_LEN = 32
POS_EOF = (1 << 64) - 1

OPEN_RDONLY = 1 << 0
OPEN_NOJOIN = 1 << 1
OPEN_NO_HEARTBEAT = 1 << 2
OPEN_PERSISTENT = 1 << 3
OPEN_VALIDATE = 1 << 4
OPEN_SYNC = 1 << 5
OPEN_STRICT = 1 << 6
OPEN_ATOMIC_READ = 1 << 7
OPEN_PREFAULT = 1 << 8

CREATE_EXCL = 1 << 0
CREATE_TRUNC = 1 << 1

UTIME_NOW = (1 << 63) - 1
UTIME_OMIT = (1 << 63) - 2


class Extent(ctypes.Structure):
    """struct daxfs_extent (core/daxfs_core.h)"""

    _fields_ = [
        ("logical", ctypes.c_uint64),
        ("physical", ctypes.c_uint64),
        ("length", ctypes.c_uint64),
        ("flags", ctypes.c_uint32),
        ("pad", ctypes.c_uint32),
    ]


class LockReq(ctypes.Structure):
    """struct daxfs_lock_req (core/daxfs_core.h)"""

    _fields_ = [
        ("start", ctypes.c_uint64),
        ("end", ctypes.c_uint64),
        ("owner", ctypes.c_uint64),
        ("type", ctypes.c_uint32),
        ("kind", ctypes.c_uint32),
        ("pid", ctypes.c_uint32),
        ("host", ctypes.c_uint32),
        ("seq", ctypes.c_uint64),
    ]


class Attr(ctypes.Structure):
    """struct daxfs_attr"""

    _fields_ = [
        ("ino", ctypes.c_uint64),
        ("mode", ctypes.c_uint32),
        ("uid", ctypes.c_uint32),
        ("gid", ctypes.c_uint32),
        ("nlink", ctypes.c_uint32),
        ("size", ctypes.c_uint64),
        ("blocks", ctypes.c_uint64),
        ("atime_ns", ctypes.c_int64),
        ("mtime_ns", ctypes.c_int64),
        ("ctime_ns", ctypes.c_int64),
        ("rdev", ctypes.c_uint64),
        ("change", ctypes.c_uint64),
        ("generation", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
    ]


class Statfs(ctypes.Structure):
    """struct daxfs_statfs"""

    _fields_ = [
        ("pool_bytes", ctypes.c_uint64),
        ("used_bytes", ctypes.c_uint64),
        ("free_bytes", ctypes.c_uint64),
        ("nr_buckets", ctypes.c_uint64),
        ("used_buckets", ctypes.c_uint64),
        ("inodes", ctypes.c_uint64),
    ]


class DirentInfo(ctypes.Structure):
    """struct daxfs_dirent_info"""

    _fields_ = [
        ("ino", ctypes.c_uint64),
        ("pos", ctypes.c_uint64),
        ("dtype", ctypes.c_uint32),
        ("name_len", ctypes.c_uint32),
        ("name", ctypes.c_char * (NAME_MAX + 1)),
    ]


BASE_WRITER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                               ctypes.c_uint64)


class MkfsOpts(ctypes.Structure):
    """struct daxfs_mkfs_opts"""

    _fields_ = [
        ("force", ctypes.c_int),
        ("nr_buckets", ctypes.c_uint64),
        ("max_hosts", ctypes.c_uint32),
        ("lease_ms", ctypes.c_uint32),
        ("label", ctypes.c_char_p),
        ("root_mode", ctypes.c_uint32),
        ("root_uid", ctypes.c_uint32),
        ("root_gid", ctypes.c_uint32),
        ("pcache_size", ctypes.c_uint64),
        ("base_size", ctypes.c_uint64),
        ("first_dyn_ino", ctypes.c_uint64),
        ("base_writer", BASE_WRITER),
        ("base_ctx", ctypes.c_void_p),
        ("pcache_window", ctypes.c_uint32),
        ("nr_backing", ctypes.c_uint32),
        ("backing", ctypes.c_void_p),
        ("small_pages", ctypes.c_int),
        ("huge_bytes", ctypes.POINTER(ctypes.c_uint64)),
    ]


class InfoRegion(ctypes.Structure):
    """struct daxfs_info_region"""

    _fields_ = [
        ("kind", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("offset", ctypes.c_uint64),
        ("size", ctypes.c_uint64),
        ("name", ctypes.c_char_p),
    ]


class InfoHost(ctypes.Structure):
    """struct daxfs_info_host"""

    _fields_ = [
        ("slot", ctypes.c_uint32),
        ("state", ctypes.c_uint32),
        ("gen", ctypes.c_uint64),
        ("lease_age_ns", ctypes.c_int64),
        ("joined_ns", ctypes.c_int64),
        ("pid", ctypes.c_uint32),
        ("kind", ctypes.c_uint32),
        ("ops", ctypes.c_uint64),
        ("busy_lanes", ctypes.c_uint32),
        ("self", ctypes.c_uint32),
        ("name", ctypes.c_char * (HOST_NAME_LEN + 1)),
        ("recovered_ns", ctypes.c_int64),
        ("recovered_by", ctypes.c_uint32),
        ("expired", ctypes.c_uint32),
        ("open_files", ctypes.c_uint32),
        ("lease", ctypes.c_uint32),
    ]


class Info(ctypes.Structure):
    """struct daxfs_info"""

    _fields_ = [
        ("version", ctypes.c_uint32),
        ("block_size", ctypes.c_uint32),
        ("feat_compat", ctypes.c_uint32),
        ("feat_incompat", ctypes.c_uint32),
        ("feat_ro_compat", ctypes.c_uint32),
        ("max_hosts", ctypes.c_uint32),
        ("probe_window", ctypes.c_uint32),
        ("lease_ms", ctypes.c_uint32),
        ("uuid", ctypes.c_uint8 * 16),
        ("label", ctypes.c_char * (LABEL_LEN + 1)),
        ("created_ns", ctypes.c_int64),
        ("total_size", ctypes.c_uint64),
        ("mapped_size", ctypes.c_uint64),
        ("target_kind", ctypes.c_uint32),
        ("root_ino", ctypes.c_uint64),
        ("first_dyn_ino", ctypes.c_uint64),
        ("nr_regions", ctypes.c_uint32),
        ("regions", InfoRegion * RGN_MAX),
        ("nr_buckets", ctypes.c_uint64),
        ("used_buckets", ctypes.c_uint64),
        ("tomb_buckets", ctypes.c_uint64),
        ("pending_buckets", ctypes.c_uint64),
        ("pool_bytes", ctypes.c_uint64),
        ("used_bytes", ctypes.c_uint64),
        ("free_bytes", ctypes.c_uint64),
        ("bump_bytes", ctypes.c_uint64),
        ("epoch", ctypes.c_uint64),
        ("next_ino", ctypes.c_uint64),
        ("inodes", ctypes.c_uint64),
        ("stat_cas_fail", ctypes.c_uint64),
        ("stat_inserts", ctypes.c_uint64),
        ("rename_claim", ctypes.c_uint64),
        ("self_slot", ctypes.c_uint32),
        ("nr_hosts", ctypes.c_uint32),
        ("hosts", InfoHost * MAX_HOSTS),
    ]


def _find_library():
    """$DAXFS_LIB (an explicit choice: the crash and pmem builds), else
    the library bundled by the package's build (daxfs/_libdaxfs.so), else
    build/libdaxfs.so of the clone this package sits in (`make`)."""
    env = os.environ.get("DAXFS_LIB")
    if env:
        return env
    here = Path(__file__).resolve().parent
    bundled = here / "_libdaxfs.so"
    if bundled.exists():
        return str(bundled)
    return str(here.parents[1] / "build" / "libdaxfs.so")


class OpenOpts(ctypes.Structure):
    """struct daxfs_open_opts"""

    _fields_ = [
        ("flags", ctypes.c_uint),
        ("backing", ctypes.POINTER(ctypes.c_char_p)),
        ("nr_backing", ctypes.c_uint),
        ("fill_timeout_ms", ctypes.c_uint32),
        ("no_helper", ctypes.c_int),
    ]


class CacheBacking(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint64), ("name", ctypes.c_char * 33)]


class CacheInfo(ctypes.Structure):
    """struct daxfs_cache_info"""

    _fields_ = [(n, ctypes.c_uint64) for n in (
        "nr_slots", "window", "cache_bytes", "free", "pending", "valid",
        "evicting", "requested", "referenced", "pinned_slots", "pins",
        "columns", "hand", "hand_pos", "fills", "evictions", "takeovers",
        "served", "timeouts", "req_seq", "host_hits", "host_misses",
        "host_fills", "backing_reads", "backing_bytes")] + [
        ("nr_backing", ctypes.c_uint32),
        ("reach", ctypes.c_uint32),
        ("backing", CacheBacking * 16),
    ]


class PageRef(ctypes.Structure):
    """struct daxfs_page_ref"""

    _fields_ = [("slot", ctypes.c_uint64), ("gen", ctypes.c_uint64),
                ("col", ctypes.c_uint32), ("pad", ctypes.c_uint32)]


_HANDLE = ctypes.c_void_p
_PATH = ctypes.c_char_p
_U32 = ctypes.c_uint32
_U64 = ctypes.c_uint64
_S64 = ctypes.c_int64
_INT = ctypes.c_int

_PROTOTYPES = {
    "daxfs_region_open": (_INT, [_PATH, ctypes.c_uint,
                                 ctypes.POINTER(_HANDLE)]),
    "daxfs_region_close": (None, [_HANDLE]),
    "daxfs_region_shutdown": (None, [_HANDLE]),
    "daxfs_region_open_opts": (_INT, [_PATH, ctypes.POINTER(OpenOpts),
                                      ctypes.POINTER(_HANDLE)]),
    "daxfs_cache_info": (_INT, [_HANDLE, ctypes.POINTER(CacheInfo)]),
    "daxfs_cache_drop": (_S64, [_HANDLE]),
    "daxfs_page_map": (_INT, [_HANDLE, _U64, _U64,
                              ctypes.POINTER(ctypes.c_void_p),
                              ctypes.POINTER(PageRef)]),
    "daxfs_page_release": (None, [_HANDLE, ctypes.POINTER(PageRef)]),
    "daxfs_map_page": (_INT, [_HANDLE, _U64, _U64, _INT,
                              ctypes.POINTER(_U64)]),
    "daxfs_map_begin": (_INT, [_HANDLE]),
    "daxfs_map_pass_begin": (_S64, [_HANDLE]),
    "daxfs_map_pass_end": (_INT, [_HANDLE, _U64]),
    "daxfs_map_pass_wanted": (_INT, [_HANDLE]),
    "daxfs_map_hold": (_INT, [_HANDLE, _U64]),
    "daxfs_map_unhold": (_INT, [_HANDLE, _U64]),
    "daxfs_region_fd": (_INT, [_HANDLE]),
    "daxfs_region_renew": (_INT, [_HANDLE]),
    "daxfs_region_create": (_INT, [_PATH, _U64, ctypes.POINTER(MkfsOpts)]),
    "daxfs_region_reclaim": (_INT, [_HANDLE]),
    "daxfs_region_watch_hosts": (_INT, [_HANDLE]),
    "daxfs_region_statfs": (_INT, [_HANDLE, ctypes.POINTER(Statfs)]),
    "daxfs_set_creds": (None, [_HANDLE, _U32, _U32]),
    "daxfs_path_resolve": (_INT, [_HANDLE, _PATH, _INT,
                                  ctypes.POINTER(_U64)]),
    "daxfs_path_stat": (_INT, [_HANDLE, _PATH, ctypes.POINTER(Attr)]),
    "daxfs_path_lstat": (_INT, [_HANDLE, _PATH, ctypes.POINTER(Attr)]),
    "daxfs_fstat": (_INT, [_HANDLE, _U64, ctypes.POINTER(Attr)]),
    "daxfs_path_mkdir": (_INT, [_HANDLE, _PATH, _U32]),
    "daxfs_path_mknod": (_INT, [_HANDLE, _PATH, _U32, _U64]),
    "daxfs_path_create": (_INT, [_HANDLE, _PATH, _U32, ctypes.c_uint,
                                 ctypes.POINTER(_U64)]),
    "daxfs_path_unlink": (_INT, [_HANDLE, _PATH]),
    "daxfs_path_rmdir": (_INT, [_HANDLE, _PATH]),
    "daxfs_path_rename": (_INT, [_HANDLE, _PATH, _PATH, ctypes.c_uint]),
    "daxfs_path_link": (_INT, [_HANDLE, _PATH, _PATH]),
    "daxfs_path_tmpfile": (_INT, [_HANDLE, _PATH, _U32, ctypes.POINTER(_U64)]),
    "daxfs_link_open": (_INT, [_HANDLE, _U64, _PATH]),
    "daxfs_path_symlink": (_INT, [_HANDLE, _PATH, _PATH]),
    "daxfs_path_readlink": (_INT, [_HANDLE, _PATH, ctypes.c_char_p,
                                   ctypes.c_size_t]),
    "daxfs_path_truncate": (_INT, [_HANDLE, _PATH, _U64]),
    "daxfs_path_chmod": (_INT, [_HANDLE, _PATH, _U32]),
    "daxfs_path_setflags": (_INT, [_HANDLE, _PATH, _U32]),
    "daxfs_path_chown": (_INT, [_HANDLE, _PATH, _U32, _U32]),
    "daxfs_path_lchown": (_INT, [_HANDLE, _PATH, _U32, _U32]),
    "daxfs_path_utimens": (_INT, [_HANDLE, _PATH, _S64, _S64]),
    "daxfs_path_readdir_chunk": (_INT, [_HANDLE, _PATH, _U64,
                                        ctypes.POINTER(DirentInfo),
                                        ctypes.c_uint, ctypes.POINTER(_U64)]),
    "daxfs_readdir_chunk": (_INT, [_HANDLE, _U64, _U64,
                                   ctypes.POINTER(DirentInfo), ctypes.c_uint,
                                   ctypes.POINTER(_U64)]),
    "daxfs_pread": (_S64, [_HANDLE, _U64, ctypes.c_void_p, _U64, _U64]),
    "daxfs_pwrite": (_S64, [_HANDLE, _U64, ctypes.c_void_p, _U64, _U64]),
    "daxfs_append": (_S64, [_HANDLE, _U64, ctypes.c_void_p, _U64,
                            ctypes.POINTER(_U64)]),
    "daxfs_ftruncate": (_INT, [_HANDLE, _U64, _U64]),
    "daxfs_file_fallocate": (_INT, [_HANDLE, _U64, _INT, _U64, _U64]),
    "daxfs_file_seek": (_INT, [_HANDLE, _U64, _U64, _INT,
                               ctypes.POINTER(_U64)]),
    "daxfs_file_extents": (_INT, [_HANDLE, _U64, _U64, _U64,
                                  ctypes.POINTER(Extent), ctypes.c_uint]),
    "daxfs_file_open": (_INT, [_HANDLE, _U64]),
    "daxfs_file_close": (_INT, [_HANDLE, _U64]),
    "daxfs_lock": (_INT, [_HANDLE, _U64, ctypes.POINTER(LockReq), _INT]),
    "daxfs_unlock": (_INT, [_HANDLE, _U64, _U32, _U64, _U64, _U64]),
    "daxfs_getlk": (_INT, [_HANDLE, _U64, ctypes.POINTER(LockReq)]),
    "daxfs_lock_list_all": (_INT, [_HANDLE, _U64, ctypes.c_void_p,
                                   ctypes.c_void_p]),
    "daxfs_info": (_INT, [_HANDLE, ctypes.POINTER(Info)]),
    "daxfs_path_getxattr": (_INT, [_HANDLE, _PATH, _INT, _PATH,
                                   ctypes.c_void_p, ctypes.c_size_t]),
    "daxfs_path_setxattr": (_INT, [_HANDLE, _PATH, _INT, _PATH,
                                   ctypes.c_char_p, ctypes.c_size_t, _INT]),
    "daxfs_path_removexattr": (_INT, [_HANDLE, _PATH, _INT, _PATH]),
    "daxfs_path_listxattr": (_INT, [_HANDLE, _PATH, _INT, ctypes.c_void_p,
                                    ctypes.c_size_t]),
    "daxfs_access": (_INT, [_HANDLE, _U64, _U32, _U32,
                            ctypes.POINTER(_U32), ctypes.c_size_t, _U32]),
    "daxfs_acl_inherit": (_INT, [_HANDLE, _U64, _U64]),
    "daxfs_strerror": (ctypes.c_char_p, [_INT]),
    "daxfs_region_kind_name": (ctypes.c_char_p, [_U32]),
    "daxfs_host_state_name": (ctypes.c_char_p, [_U32]),
}

_lib = None


def lib():
    """Loads libdaxfs on first use and returns the ctypes library."""
    global _lib
    if _lib is None:
        path = _find_library()
        try:
            handle = ctypes.CDLL(path)
        except OSError as exc:
            raise ImportError(
                f"cannot load libdaxfs from {path} ({exc}); install the "
                "package (pip install ./python), run `make` in the "
                "repository root or set DAXFS_LIB") from exc
        for name, (restype, argtypes) in _PROTOTYPES.items():
            func = getattr(handle, name)
            func.restype = restype
            func.argtypes = argtypes
        _lib = handle
    return _lib
