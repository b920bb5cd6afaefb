"""Locations, region creation and fsck for the user-space test suites."""

import inspect
import itertools
import os
import subprocess
import sys
import uuid

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYDIR = os.environ.get("DAXFS_PYDIR", os.path.join(REPO, "python"))
TESTS = os.path.join(REPO, "tests")
BIN = os.path.join(os.environ.get("DAXFS_BUILD", os.path.join(REPO, "build")), "bin")
SHM = "/dev/shm" if os.path.isdir("/dev/shm") else "/tmp"

for _p in (PYDIR, TESTS):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import daxfs  # noqa: E402  (needs PYDIR on sys.path)

MiB = 1 << 20

_counter = itertools.count()


def unique_name(tag):
    """A name no other test (or concurrent test run) uses."""
    return "dxut-%s-%d-%d-%s" % (tag, os.getpid(), next(_counter),
                                 uuid.uuid4().hex[:8])


def region_path(tag):
    return os.path.join(SHM, unique_name(tag))


def tool(name):
    """Path of a built tool, or None when it has not been built."""
    path = os.path.join(BIN, name)
    return path if os.access(path, os.X_OK) else None


def _tool_help(name):
    path = tool(name)
    if path is None:
        return ""
    try:
        out = subprocess.run([path, "--help"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout + out.stderr


def mkfs_supports_lease():
    """True when a short lease can be asked for (bindings or tool)."""
    if "lease_ms" in inspect.signature(daxfs.mkfs).parameters:
        return True
    return "lease" in _tool_help("mkfs.daxfs")


def mkfs(path, size, buckets=0, max_hosts=0, lease_ms=None):
    """Formats a new region file at path.

    The bindings are used unless a lease is asked for and they have no
    lease option; then the tool's --lease-ms is used.  The region keeps
    /dev/shm's 4 KiB pages: giving it 2 MiB ones costs mkfs 2-4 ms per
    2 MiB here, and the suite formats hundreds of regions; the tests of
    huge pages (test_hugepages.py) format theirs as users do.
    """
    params = inspect.signature(daxfs.mkfs).parameters
    if lease_ms is None or "lease_ms" in params:
        kw = {}
        if lease_ms is not None:
            kw["lease_ms"] = lease_ms
        if "small_pages" in params:
            kw["small_pages"] = True
        daxfs.mkfs(path, size, force=True, buckets=buckets, max_hosts=max_hosts, **kw)
        return
    exe = tool("mkfs.daxfs")
    if exe is None:
        raise RuntimeError("mkfs.daxfs is not built and daxfs.mkfs has no lease_ms")
    cmd = [exe, "-f", "-s", str(size), "--lease-ms", str(lease_ms),
           "--small-pages"]
    if buckets:
        cmd += ["--buckets", str(buckets)]
    if max_hosts:
        cmd += ["--max-hosts", str(max_hosts)]
    cmd.append(path)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if res.returncode != 0:
        raise RuntimeError("%s failed (%d): %s%s" % (
            " ".join(cmd), res.returncode, res.stdout, res.stderr))


def fsck(path, mode="-n", timeout=120):
    """Runs fsck.daxfs MODE PATH; returns (exit code, combined output)."""
    exe = tool("fsck.daxfs")
    if exe is None:
        raise RuntimeError("fsck.daxfs is not built (make -C %s)" % REPO)
    res = subprocess.run([exe, mode, path], capture_output=True, text=True,
                         timeout=timeout)
    return res.returncode, res.stdout + res.stderr


def remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def lease_region(tag, size, lease_ms):
    """Generator for a fixture: a fresh region with lease_ms, removed
    afterwards with its crash-point log (REGION.points)."""
    path = region_path(tag)
    mkfs(path, size, lease_ms=lease_ms)
    yield path
    for p in (path, path + ".points"):
        remove(p)
