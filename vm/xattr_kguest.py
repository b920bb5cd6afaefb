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


def main():
    kg.dispatch(globals())


if __name__ == "__main__":
    main()
