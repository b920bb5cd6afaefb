"""Running programs under `daxfs run` (libdaxfs-preload.so) and on tmpfs.

The same shell script runs twice: once with $D a directory inside the
region (under the preload's mount point), once with $D a directory on
tmpfs.  Its output, with the directory's name replaced by "$D", must be
identical byte for byte.
"""

import errno
import functools
import os
import shutil
import subprocess
import sys
import tempfile

from helpers import env

DAXFS = os.path.join(env.BIN, "daxfs")
BUILD = os.path.dirname(env.BIN)
PRELOAD_LIB = os.path.join(BUILD, "libdaxfs-preload.so")
PROGS = os.path.join(BUILD, "tests", "preload")
AT = "/daxfs"


def run(region, argv, at=AT, timeout=120, extra_env=None, **kw):
    """Runs argv under `daxfs run -r region --at at`."""
    e = dict(os.environ)
    e.pop("DAXFS_DEBUG", None)
    e.update(extra_env or {})
    return subprocess.run([DAXFS, "-r", region, "run", "--at", at, "--"] + argv,
                          capture_output=True, timeout=timeout, env=e, **kw)


def popen(region, argv, at=AT, extra_env=None, **kw):
    e = dict(os.environ)
    e.update(extra_env or {})
    return subprocess.Popen([DAXFS, "-r", region, "run", "--at", at, "--"] + argv,
                            env=e, **kw)


def sh(script, d, region=None, timeout=120):
    """Runs script with $D=d, under the preload when region is given.
    Returns (exit status, stdout with d replaced by $D, stderr)."""
    e = {"D": d, "LC_ALL": "C", "TZ": "UTC", "PY": sys.executable}
    argv = ["sh", "-c", script]
    if region:
        # the shell holds a region file with no name open throughout,
        # so that every command it runs hands open files over across fork
        # and exec (docs/preload.md "A fork child that execs at once")
        argv = ["sh", "-c", 'exec 9<> "%s/.held-$$" && rm "%s/.held-$$" '
                '&& %s' % (AT, AT, script)]
        res = run(region, argv, extra_env=e, timeout=timeout)
    else:
        full = dict(os.environ)
        full.update(e)
        res = subprocess.run(argv, capture_output=True, timeout=timeout, env=full)
    out = res.stdout.replace(d.encode(), b"$D")
    return res.returncode, out, res.stderr.decode(errors="replace")


class Tmpfs:
    """A scratch directory on tmpfs (/dev/shm), removed afterwards."""

    def __init__(self, tag):
        self.path = os.path.join(env.SHM, env.unique_name(tag))
        os.mkdir(self.path)

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)


def compare(region, script, tag, timeout=120):
    """Runs script on tmpfs and in the region; asserts equal output and
    status.  Returns the output."""
    tmp = Tmpfs(tag)
    try:
        nst, nout, nerr = sh(script, os.path.join(tmp.path, "t"), timeout=timeout)
    finally:
        tmp.close()
    pst, pout, perr = sh(script, AT + "/" + tag, region=region, timeout=timeout)
    assert nst == 0, "tmpfs run failed (%d): %s" % (nst, nerr)
    assert pst == 0, "preload run failed (%d): %s" % (pst, perr)
    assert pout == nout, _diff(nout, pout)
    return pout


def _diff(a, b):
    import difflib
    return "output differs (tmpfs -> preload):\n" + "\n".join(difflib.unified_diff(
        a.decode(errors="replace").splitlines(),
        b.decode(errors="replace").splitlines(), lineterm=""))


@functools.lru_cache(maxsize=None)
def tmpfs_user_xattrs():
    """Whether /dev/shm (the tmpfs the references run on) keeps user.*."""
    with tempfile.NamedTemporaryFile(dir="/dev/shm") as f:
        try:
            os.setxattr(f.name, "user.probe", b"1")
        except OSError as e:
            if e.errno in (errno.EOPNOTSUPP, errno.EPERM):
                return False
            raise
    return True
