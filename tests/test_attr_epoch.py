"""The attribute epoch (format 15, docs/kernel.md "Permission checks and
the attribute epoch"): the core adds to it after every change of what a
permission check reads (mode, owners, the access ACL, the immutable and
append-only flags), whichever front end makes it, and at the recovery of
a dead host; and on nothing else, so that daxfs.ko's permission checks
answer from the inode on the fast path."""

import os
import signal
import struct
import subprocess
import sys
import time

import pytest

from helpers import env

daxfs = env.daxfs

SIZE = 32 * env.MiB
LEASE_MS = 300
ATTR_EPOCH_OFF = 960                # offsetof(struct daxfs_state, attr_epoch)
ACL_ACCESS = "system.posix_acl_access"
ACL_DEFAULT = "system.posix_acl_default"
USER_OBJ, USER, GROUP_OBJ, MASK, OTHER = 1, 2, 4, 0x10, 0x20
UNDEF = 0xffffffff


def acl(*entries):
    """Linux's xattr layout of an ACL: version 2, {tag, perm, id}."""
    return struct.pack("<I", 2) + b"".join(
        struct.pack("<HHI", t, p, i) for t, p, i in entries)


# one a mode cannot say (a named user): kept as an attribute
EXTENDED = acl((USER_OBJ, 6, UNDEF), (USER, 4, 1000), (GROUP_OBJ, 4, UNDEF),
               (MASK, 4, UNDEF), (OTHER, 0, UNDEF))


def epoch(path):
    """state.attr_epoch, read from the region file (the state page is
    region descriptor kind 1 of the superblock)."""
    with open(path, "rb") as f:
        sb = f.read(512)
        for i in range(8):
            kind, _fl, off, _sz, _r = struct.unpack_from("<IIQQQ", sb,
                                                         152 + 32 * i)
            if kind == 1:
                f.seek(off + ATTR_EPOCH_OFF)
                return struct.unpack("<Q", f.read(8))[0]
    raise AssertionError("no state region")


@pytest.fixture
def fs(region_path):
    daxfs.mkfs(region_path, SIZE, lease_ms=LEASE_MS)
    with daxfs.Region(region_path) as r:
        r.mkdir("/d")
        r.write_file("/d/f", b"x" * 100)
        yield region_path, r


PERMISSION_CHANGES = [
    ("chmod", lambda r: r.chmod("/d/f", 0o600)),
    ("chmod of a directory", lambda r: r.chmod("/d", 0o700)),
    ("chown", lambda r: r.chown("/d/f", 1000, -1)),
    ("chgrp", lambda r: r.chown("/d/f", -1, 1000)),
    ("access ACL set", lambda r: r.setxattr("/d/f", ACL_ACCESS, EXTENDED)),
    ("immutable", lambda r: r.setflags("/d/f", daxfs.FL_IMMUTABLE)),
    ("append-only", lambda r: r.setflags("/d/f", daxfs.FL_APPEND)),
    ("flags cleared", lambda r: r.setflags("/d/f", 0)),
]


@pytest.mark.parametrize("name,change", PERMISSION_CHANGES,
                         ids=[n for n, _ in PERMISSION_CHANGES])
def test_permission_change_bumps(fs, name, change):
    path, r = fs
    if name == "append-only" or name == "flags cleared":
        r.setflags("/d/f", daxfs.FL_IMMUTABLE if name == "flags cleared"
                   else 0)
    before = epoch(path)
    assert before >= 1, "mkfs starts the word at 1"
    change(r)
    assert epoch(path) > before, name


def test_access_acl_removal_bumps(fs):
    path, r = fs
    r.setxattr("/d/f", ACL_ACCESS, EXTENDED)
    before = epoch(path)
    r.removexattr("/d/f", ACL_ACCESS)
    assert epoch(path) > before


def test_plain_changes_leave_it(fs):
    """Creates, writes, names, times, other attributes: none is read by
    a permission check, and each bump would send every cached inode of
    every daxfs.ko host to the slow path."""
    path, r = fs
    before = epoch(path)
    assert before >= 1, "mkfs starts the word at 1"
    r.write_file("/d/g", b"y" * 5000)
    with r.open("/d/g") as f:
        f.pwrite(b"z" * 10, 4096)
    r.truncate("/d/g", 100)
    r.mkdir("/d/sub")
    r.create("/d/sub/h")
    r.link("/d/g", "/d/g2")
    r.rename("/d/g2", "/d/sub/g3")
    r.symlink("/d/g", "/d/l")
    r.unlink("/d/sub/g3")
    r.unlink("/d/l")
    r.utime("/d/g", 1, 2)
    r.setxattr("/d/g", "user.a", b"1")
    r.removexattr("/d/g", "user.a")
    r.setxattr("/d", ACL_DEFAULT, EXTENDED)
    r.setflags("/d/g", daxfs.FL_NODUMP)
    r.read_file("/d/g")
    r.stat("/d/g")
    assert epoch(path) == before


KILLED_HOST = """
import os, signal, sys
sys.path.insert(0, %r)
import daxfs
r = daxfs.Region(%r)
r.create("/joined")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_recovery_bumps(fs):
    """A host that published a change of permission attributes and died
    before its bump: its recovery bumps for it."""
    path, r = fs
    code = KILLED_HOST % (os.path.dirname(os.path.dirname(daxfs.__file__)),
                          path)
    p = subprocess.Popen([sys.executable, "-c", code])
    assert p.wait(timeout=60) == -signal.SIGKILL
    before = epoch(path)
    time.sleep(3 * LEASE_MS / 1000)
    r.watch_hosts()
    for _ in range(3):
        r.reclaim()
        time.sleep(LEASE_MS / 1000)
    hosts = r.info()["hosts"]
    assert not [h for h in hosts if h["pid"] == p.pid and
                h["state"] == "alive"], hosts
    assert epoch(path) > before
