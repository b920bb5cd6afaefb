#!/usr/bin/env python3
"""vm/xattr_kguest.py - guest side of tests/vm/test_kernel_xattr.py (extended attributes
and POSIX ACLs on daxfs.ko, docs/xattr.md).

Runs inside a QEMU guest as `host python3 vm/xattr_kguest.py SCENARIO MNT ARGS...`
through vm/guest/daxfs-k.sh's `xa:` step (the host's setfattr, getfattr, setfacl and
getfacl, run chrooted, act on the guest's mount).

Scenarios:
  attrs   setfattr/getfattr of user., trusted. and security. attributes on /x; a 64 KiB
          value; XATTR_CREATE/REPLACE errors; an unprivileged user sees no trusted.*;
          `cp -a` and `rsync -aX` keep them.  Leaves /x with user.shared=from-guest for the host to read.
  acl     /secret mode 600: user 4242 denied; after `setfacl -m u:4242:r` allowed to read
          (not to write), user 4243 still denied; a directory's default ACL is inherited
          by a file and a directory made in it.  Leaves the ACL for the host to read.
  killpriv
          /cap written (no capability: the kernel may skip the look on later writes),
          /cap-ready made; once another host set security.capability on /cap, a write
          here must remove it, as Linux does after a local setcap.
  capmark [ROUNDS]
          /capm rewritten in place in a loop (rewrites that only mark the change
          counter) while another host sets security.capability on it, once per round
          (/capm-ready-I, then the host's /capm-set-I): the first rewrite after
          /capm-set-I is seen must remove it.  A setxattr that lands inside a rewrite's
          op must not pass for that rewrite's own change.
"""
import errno
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import daxfs_kguest as kg  # noqa: E402
from daxfs_kguest import check, log, result  # noqa: E402

USER = 4242


def sh(*args):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"{args}: {p.stdout + p.stderr}")
    return p.stdout


def as_user(uid, *args):
    p = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                        *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def errno_of(fn, *args):
    try:
        fn(*args)
    except OSError as e:
        return e.errno
    return 0


def scen_attrs(args):
    x = kg.p("x")
    kg.write_file(x, b"data")
    sh("setfattr", "-n", "user.color", "-v", "blue", x)
    sh("setfattr", "-n", "trusted.t", "-v", "0x0102", x)
    sh("setfattr", "-n", "security.s", "-v", "label", x)
    check('user.color="blue"' in sh("getfattr", "-d", x), "getfattr -d")
    check(os.getxattr(x, "trusted.t") == b"\x01\x02", "trusted value")
    big = bytes(range(256)) * 256
    os.setxattr(x, "user.big", big)
    check(os.getxattr(x, "user.big") == big, "64 KiB value")
    check(errno_of(os.setxattr, x, "user.color", b"r", os.XATTR_CREATE) == errno.EEXIST,
          "XATTR_CREATE on an existing name")
    check(errno_of(os.setxattr, x, "user.none", b"r", os.XATTR_REPLACE) == errno.ENODATA,
          "XATTR_REPLACE on a missing name")
    check(errno_of(os.getxattr, x, "user.none") == errno.ENODATA, "ENODATA")
    os.removexattr(x, "user.big")
    names = sorted(os.listxattr(x))
    check(names == ["security.s", "trusted.t", "user.color"], f"listxattr {names}")
    rc, out = as_user(USER, "getfattr", "-d", "-m", "-", x)
    check("trusted.t" not in out and "user.color" in out, f"unprivileged list: {out}")
    rc, out = as_user(USER, "setfattr", "-n", "trusted.u", "-v", "1", x)
    check(rc != 0, "an unprivileged user set trusted.*")
    sh("cp", "-a", x, kg.p("copy"))
    check(os.getxattr(kg.p("copy"), "user.color") == b"blue", "cp -a kept user.color")
    sh("rsync", "-aX", x, kg.p("rcopy"))
    check(os.getxattr(kg.p("rcopy"), "user.color") == b"blue", "rsync -aX kept user.color")
    os.setxattr(x, "user.shared", b"from-guest")
    result(attrs="ok")


def scen_acl(args):
    f = kg.p("secret")
    kg.write_file(f, b"s3cret")
    os.chmod(f, 0o600)
    rc, _ = as_user(USER, "cat", f)
    check(rc != 0, "user read a mode 600 file without an ACL")
    sh("setfacl", "-m", f"u:{USER}:r", f)
    check(f"user:{USER}:r--" in sh("getfacl", f), "getfacl shows the entry")
    rc, out = as_user(USER, "cat", f)
    check(rc == 0 and out == "s3cret", f"ACL did not allow the read: {out}")
    rc, _ = as_user(USER, "sh", "-c", f"echo x >> {f}")
    check(rc != 0, "ACL r allowed a write")
    rc, _ = as_user(USER + 1, "cat", f)
    check(rc != 0, "another user read through the ACL")
    d = kg.p("shared")
    os.mkdir(d, 0o700)
    sh("setfacl", "-m", f"u:{USER}:rwx", d)
    sh("setfacl", "-d", "-m", f"u:{USER}:rwx", d)
    kg.write_file(os.path.join(d, "new"), b"hello")
    os.mkdir(os.path.join(d, "sub"))
    check(f"user:{USER}:rwx" in sh("getfacl", os.path.join(d, "new")), "inherited ACL")
    check(f"default:user:{USER}:rwx" in sh("getfacl", os.path.join(d, "sub")),
          "inherited default ACL")
    rc, out = as_user(USER, "cat", os.path.join(d, "new"))
    check(rc == 0 and out == "hello", f"inherited ACL did not allow the read: {out}")
    result(acl="ok")


def scen_killpriv(args):
    f = kg.p("cap")
    fd = os.open(f, os.O_WRONLY | os.O_CREAT, 0o755)
    try:
        check(os.write(fd, b"a" * 4096) == 4096, "first write")
        check(os.write(fd, b"b" * 4096) == 4096, "second write")
        kg.write_file(kg.p("cap-ready"), b"1")
        deadline = time.monotonic() + 120
        while errno_of(os.getxattr, f, "security.capability") == errno.ENODATA:
            check(time.monotonic() < deadline, "the other host never set the capability")
            time.sleep(0.2)
        check(os.write(fd, b"c" * 4096) == 4096, "write after setcap")
        check(errno_of(os.getxattr, f, "security.capability") == errno.ENODATA,
              "a write kept the capability another host set")
    finally:
        os.close(fd)
    result(killpriv="ok")


def clock_offset(path, seconds):
    """The other host's CLOCK_REALTIME minus ours, from the clock it keeps writing (20
    ASCII digits of ns) at the start of path, sampled for seconds: the largest
    difference seen, short by about one of its store intervals (a stale sample only
    makes it smaller)."""
    best = None
    end = time.monotonic() + seconds
    with open(path, "rb", buffering=0) as f:
        while time.monotonic() < end or best is None:
            raw = os.pread(f.fileno(), 20, 0)
            g = time.time_ns()
            if len(raw) == 20 and raw.isdigit():
                d = int(raw) - g
                best = d if best is None or d > best else best
    return best


def align_clock(path, ahead_ns):
    """Sets this guest's CLOCK_REALTIME ahead_ns behind the other host's, checked by
    sampling again (a loaded machine may starve the other host's clock writer for a
    while): within 1 ms of it, or after five tries as near as it got."""
    deadline = time.monotonic() + 120
    while not os.path.exists(path):
        check(time.monotonic() < deadline, "the other host never wrote its clock")
        time.sleep(0.05)
    for _ in range(5):
        off = clock_offset(path, 0.3)
        if abs(off - ahead_ns) <= 1_000_000:
            break
        time.clock_settime_ns(time.CLOCK_REALTIME, time.time_ns() + off - ahead_ns)
    log(f"clock: the other host's {off / 1e6:.3f} ms ahead at the last look")


CAPMARK_FILE = 4 << 20
CAPMARK_CHUNK = 1 << 20


def scen_capmark(args):
    """The guest's clock is first set a little behind the other host's, so that
    the ctime its setxattr stamps is fresh to this host's writes (docs/files.md
    "Time stamps of writes"), which then mark the counter in its presence too."""
    rounds = int(args[0]) if args else 20
    align_clock(kg.p("capm-clock"), 3_000_000)
    kg.write_file(kg.p("capm-clock-done"), b"1")
    f = kg.p("capm")
    fd = os.open(f, os.O_RDWR | os.O_CREAT, 0o755)
    chunk = b"r" * CAPMARK_CHUNK
    try:
        check(os.write(fd, b"a" * CAPMARK_FILE) == CAPMARK_FILE, "first write")
        capmark_rounds(fd, f, chunk, rounds)
    except BaseException:
        kg.write_file(kg.p("capm-stop"), b"1")     # the other host stops waiting
        raise
    finally:
        os.close(fd)
    result(capmark="ok")


def capmark_rounds(fd, f, chunk, rounds):
    rewrites = 0
    for i in range(rounds):
        kg.write_file(kg.p(f"capm-ready-{i}"), b"1")
        deadline = time.monotonic() + 120
        while not os.path.exists(kg.p(f"capm-set-{i}")):
            check(time.monotonic() < deadline, f"round {i}: no capability set")
            off = CAPMARK_CHUNK * (rewrites % (CAPMARK_FILE // CAPMARK_CHUNK))
            os.pwrite(fd, chunk, off)
            rewrites += 1
        check(os.pwrite(fd, b"s" * 64, 0) == 64, "write after setcap")
        check(errno_of(os.getxattr, f, "security.capability") == errno.ENODATA,
              f"round {i}: a write kept the capability another host set")
    log(f"capmark: {rounds} rounds, {rewrites} rewrites")


def main():
    kg.dispatch(globals())


if __name__ == "__main__":
    main()
