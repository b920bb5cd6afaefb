#!/usr/bin/env python3
"""vm/harden_kguest.py - guest side of tests/vm/test_kernel_hardening.py (daxfs.ko
hardening: no user can deny service to the others, no call that cannot be killed).

Runs inside a QEMU guest as `host python3 vm/harden_kguest.py SCENARIO MNT ARGS...`
through vm/guest/daxfs-k.sh's `hd:` step.

Scenarios:
  opens N     an unprivileged user opens one file N times and keeps every descriptor
              open; meanwhile another user opens, reads and writes files of its own.
              Every open succeeds; the file, unlinked while held, stays readable and its
              space comes back after the last close (docs/open-files.md).
  fsync-sparse
              (persistent route: /dev/pmem0) a file of 2^48 bytes with a few pages
              written and one stored through a shared mapping: fsync, fdatasync and
              msync return (they walked every 4 KiB block up to the size: hours, and
              unkillable), and the bytes read back.
  trunc-fault ROUNDS
              vm/helpers/trunc_fault: one thread faults pages of a shared mapping
              while another truncates and regrows the file ROUNDS times; once
              ftruncate returned, the mapping never shows the bytes it cut.
"""
import mmap
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daxfs_kguest as kg  # noqa: E402
from daxfs_kguest import check, log, result  # noqa: E402

HOG_UID = 1001          # opens one file over and over
OTHER_UID = 1002        # opens files of its own meanwhile
OTHER_FILES = 200
ONE_SIZE = 4 << 20      # big enough that its space coming back shows in statvfs


def _as_user(uid, fn):
    """Runs fn() in a child as uid (gid uid); returns the child's pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        fn()
        code = 0
    except BaseException as e:      # the child reports, the parent judges
        log(f"uid {uid}: {e!r}")
    finally:
        os._exit(code)


def _wait_ok(pid, what):
    _, status = os.waitpid(pid, 0)
    check(os.waitstatus_to_exitcode(status) == 0, f"{what} failed")


def _free_bytes():
    st = os.statvfs(kg.MNT)
    return st.f_bavail * st.f_frsize


def scen_opens(args):
    n = int(args[0])
    d = kg.p("opens")
    os.mkdir(d, 0o755)
    one = os.path.join(d, "one")
    body = bytes(range(256)) * (ONE_SIZE // 256)
    kg.write_file(one, body)
    os.chmod(one, 0o644)
    mine = os.path.join(d, "other")
    os.mkdir(mine, 0o755)
    os.chown(mine, OTHER_UID, OTHER_UID)
    # the descriptors are the user's own limit to raise, not the filesystem's
    resource.setrlimit(resource.RLIMIT_NOFILE, (n + 64, n + 64))
    Path("/proc/sys/fs/file-max").write_text(str(4 * n))
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()

    def hog():
        fds = []
        for i in range(n):
            try:
                fds.append(os.open(one, os.O_RDONLY))
            except OSError as e:
                raise RuntimeError(f"open {i + 1} of {n}: {e}") from e
        os.write(ready_w, b"r")
        check(os.read(go_r, 1) == b"g", "no go")
        # unlinked while we hold it: still readable through any descriptor
        check(os.pread(fds[-1], 4096, ONE_SIZE - 4096) == body[-4096:],
              "the held file lost its bytes after its unlink")
        for fd in fds:
            os.close(fd)
        log(f"uid {HOG_UID}: {n} opens of one file held, then closed")

    def other():
        for i in range(OTHER_FILES):
            path = os.path.join(mine, f"f{i}")
            kg.write_file(path, b"%d" % i)
            with open(path, "rb") as f:
                check(f.read() == b"%d" % i, f"{path}: wrong bytes")
        with open(one, "rb") as f:
            check(f.read(4096) == body[:4096], "one: wrong bytes")

    t0 = time.monotonic()
    hog_pid = _as_user(HOG_UID, hog)
    os.close(ready_w)       # a hog that fails closes the pipe: no hang
    check(os.read(ready_r, 1) == b"r", f"uid {HOG_UID} could not open the file {n} times")
    log(f"{n} opens took {time.monotonic() - t0:.1f} s")
    _wait_ok(_as_user(OTHER_UID, other), f"uid {OTHER_UID}'s opens while {n} are held")
    before = _free_bytes()
    os.unlink(one)
    os.write(go_w, b"g")
    _wait_ok(hog_pid, f"uid {HOG_UID}'s reads and closes")
    # freed at the last close, through limbo: the lease work reclaims it
    deadline = time.monotonic() + 60
    while _free_bytes() < before + ONE_SIZE // 2:
        check(time.monotonic() < deadline,
              f"the file's space never came back after its last close: {_free_bytes()}")
        time.sleep(0.2)
    result(opens=n, other_files=OTHER_FILES)


SPARSE_SIZE = 1 << 48    # the largest file daxfs allows
HANG_S = 120            # a sync that takes this long walks holes (ms expected)


def _sync_sparse(fd, m):
    os.fsync(fd)
    os.fdatasync(fd)
    m.flush()           # msync(MS_SYNC) of the whole mapping
    os.fsync(fd)


def scen_fsync_sparse(args):
    path = kg.p("sparse")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    os.ftruncate(fd, SPARSE_SIZE)
    marks = {0: b"first", 1 << 40: b"middle", SPARSE_SIZE - 4096: b"last"}
    for off, data in marks.items():
        check(os.pwrite(fd, data, off) == len(data), f"pwrite at {off}")
    win = SPARSE_SIZE - 64 * 4096       # a window near the end, mapped shared
    m = mmap.mmap(fd, 16 * 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                  offset=win)
    m[4096:4096 + 6] = b"stored"
    t0 = time.monotonic()
    pid = os.fork()
    if not pid:
        code = 1
        try:
            _sync_sparse(fd, m)
            code = 0
        finally:
            os._exit(code)
    while time.monotonic() - t0 < HANG_S:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        killed = False
        for _ in range(100):
            if os.waitpid(pid, os.WNOHANG)[0]:
                killed = True
                break
            time.sleep(0.1)
        check(False, f"fsync/msync of a {SPARSE_SIZE}-byte sparse file still running after "
              f"{HANG_S} s; SIGKILL {'ended it' if killed else 'did not end it in 10 s'}")
    check(os.waitstatus_to_exitcode(status) == 0, "fsync/fdatasync/msync failed")
    log(f"fsync, fdatasync, msync of a 2^48-byte sparse file: {time.monotonic() - t0:.2f} s")
    for off, data in marks.items():
        check(os.pread(fd, len(data), off) == data, f"bytes at {off} lost")
    check(os.pread(fd, 6, win + 4096) == b"stored", "the store through the mapping is lost")
    m.close()
    os.close(fd)
    os.unlink(path)
    result(fsync_sparse="ok")


HELPERS = Path(__file__).resolve().parents[1] / "build" / "vm" / "helpers"


def scen_trunc_fault(args):
    rounds = int(args[0])
    p = subprocess.run([str(HELPERS / "trunc_fault"), kg.p("tf"), "16", str(rounds)],
                       capture_output=True, text=True, timeout=1800)
    log(f"trunc_fault: rc={p.returncode} {p.stdout.strip()} {p.stderr.strip()[:2000]}")
    check(p.returncode == 0, "the mapping showed bytes that a finished truncate cut")
    os.unlink(kg.p("tf"))
    result(trunc_fault=p.stdout.strip().replace(" ", ","))


def main():
    kg.dispatch(globals())


if __name__ == "__main__":
    main()
