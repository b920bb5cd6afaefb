#!/usr/bin/env python3
"""vm/harden_kguest.py - guest side of tests/vm/test_kernel_hardening.py (docs/kernel.md).

Runs inside a QEMU guest as `host python3 vm/harden_kguest.py SCENARIO MNT ARGS...` through
vm/guest/daxfs-k.sh's `hd:` step.

Scenarios:
  times   every kind of object (FIFO, character and block device, regular file, directory,
          symlink) made and then changed at once (chmod, utime(NULL), truncate, write): no
          timestamp of one operation is earlier than one set before it, and the timestamps
          one operation sets are equal (one reading of one clock)
  trust MODE
          set-id files and device nodes that any peer could write: MODE "default" (a
          plain mount) must run a setuid-root program with the caller's ids and refuse to
          open a device node; MODE "trusted" (mount -o trust_suid,trust_dev) must honour
          both.  Either way stat shows the set-id bits, and a write or truncate by another
          user (and chown) clears them
"""
import errno
import os
import shutil
import stat
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daxfs_kguest as kg  # noqa: E402
from daxfs_kguest import check, log, result  # noqa: E402

ROUNDS = 40


def _times(path):
    st = os.lstat(path)
    return st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns


def _make(kind, path):
    if kind == "fifo":
        os.mkfifo(path, 0o644)
    elif kind == "chr":
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 3))
    elif kind == "blk":
        os.mknod(path, stat.S_IFBLK | 0o644, os.makedev(7, 0))
    elif kind == "reg":
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    elif kind == "dir":
        os.mkdir(path, 0o755)


def _ordered(what, before, after):
    """Every timestamp the second operation moved is not earlier than the first's."""
    a0, m0, c0 = before
    a1, m1, c1 = after
    check(c1 >= c0 and c1 >= m1, f"{what}: ctime {c1} before mtime {m1} or old ctime {c0}")
    check(m1 >= m0, f"{what}: mtime went back {m0} -> {m1}")


def scen_times(args):
    """mknod/mkfifo/create/mkdir then chmod at once (what `mkfifo -m`, `mknod -m` do),
    utime(NULL), and for files truncate and write: xfstests generic/423's ts_order."""
    bad = 0
    for kind in ("fifo", "chr", "blk", "reg", "dir"):
        for i in range(ROUNDS):
            path = kg.p(f"t-{kind}-{i}")
            _make(kind, path)
            made = _times(path)
            check(made[0] == made[1] == made[2], f"{kind} {i}: made with times {made}")
            os.chmod(path, 0o600)
            mod = _times(path)
            if mod[2] < mod[1]:
                bad += 1
                log(f"{kind} {i}: after chmod ctime {mod[2]} < mtime {mod[1]}")
            _ordered(f"{kind} {i} chmod", made, mod)
            os.utime(path, None)
            now = _times(path)
            check(now[0] == now[1] == now[2], f"{kind} {i}: utime(NULL) set {now}")
            _ordered(f"{kind} {i} utime", mod, now)
            if kind == "reg":
                os.truncate(path, 4096)
                tr = _times(path)
                check(tr[1] == tr[2], f"reg {i}: truncate set mtime {tr[1]} ctime {tr[2]}")
                _ordered(f"reg {i} truncate", now, tr)
                fd = os.open(path, os.O_WRONLY)
                os.write(fd, b"x" * 100)
                os.close(fd)
                wr = _times(path)
                check(wr[1] == wr[2], f"reg {i}: write set mtime {wr[1]} ctime {wr[2]}")
                _ordered(f"reg {i} write", tr, wr)
            if kind == "dir":
                os.rmdir(path)
            else:
                os.unlink(path)
    result(times_bad=bad)
    check(bad == 0, f"{bad} objects had ctime before mtime")
    result(times="ok")


NOBODY = 65534


def _as_nobody(fn):
    """Runs fn() in a child with uid/gid nobody; returns its exit status."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os._exit(fn())
        except BaseException as e:  # noqa: BLE001 - report anything as a status
            log(f"child: {e!r}")
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _euid_of_setuid_id():
    """A setuid-root copy of id(1) on the mount, run by nobody: its effective uid."""
    path = kg.p("suid-id")
    shutil.copyfile(shutil.which("id"), path)
    os.chown(path, 0, 0)
    os.chmod(path, 0o4755)
    check(stat.S_IMODE(os.stat(path).st_mode) == 0o4755,
          f"stat hides the set-id bits: {oct(os.stat(path).st_mode)}")
    r, w = os.pipe()

    def run():
        os.dup2(w, 1)
        os.execv(path, [path, "-u"])
    rc = _as_nobody(run)
    os.close(w)
    out = os.read(r, 100).decode().strip()
    os.close(r)
    os.unlink(path)
    check(rc == 0, f"setuid id exited {rc}")
    return int(out)


def _dev_open_errno():
    path = kg.p("null-dev")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    try:
        os.close(os.open(path, os.O_WRONLY))
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.unlink(path)


def _setid_cleared():
    """Write and truncate by nobody, and chown, clear S_ISUID and S_ISGID (with group
    execute), as on any Linux filesystem."""
    path = kg.p("setid")

    def write():
        fd = os.open(path, os.O_WRONLY)
        os.write(fd, b"x")
        os.close(fd)
        return 0

    def trunc():
        os.truncate(path, 0)
        return 0
    for what, op, want in (("write", lambda: _as_nobody(write), 0o777),
                           ("truncate", lambda: _as_nobody(trunc), 0o777),
                           ("chown", lambda: os.chown(path, 1, 1) or 0, 0o777)):
        kg.write_file(path, b"data")
        os.chown(path, 0, 0)
        os.chmod(path, 0o6777)
        check(op() == 0, f"{what} as another user failed")
        mode = stat.S_IMODE(os.stat(path).st_mode)
        check(mode == want, f"{what} left mode {oct(mode)}, not {oct(want)}")
        os.unlink(path)


def scen_trust(args):
    mode = args[0]
    euid = _euid_of_setuid_id()
    err = _dev_open_errno()
    log(f"{mode}: setuid-root id ran with euid {euid}; device open errno {err}")
    result(**{f"trust_{mode}_euid": euid, f"trust_{mode}_dev_errno": err})
    if mode == "trusted":
        check(euid == 0, "mounted suid: the set-uid bit must be honoured")
        check(err == 0, "mounted dev: a device node must open")
    else:
        check(euid == NOBODY, "a peer's setuid-root file ran as root (not nosuid)")
        check(err == errno.EACCES, f"a peer's device node opened (errno {err}, not nodev)")
    _setid_cleared()
    result(**{f"trust_{mode}": "ok"})


def main():
    kg.dispatch(globals())


if __name__ == "__main__":
    main()
