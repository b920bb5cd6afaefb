"""The public suites on a FUSE mount, natively (docs/testing.md, "External
suites on the FUSE mount"): all of pjdfstest, fsx with 10^6 operations with
and without mapped reads and writes, fsstress with 4 processes x 10,000
operations, then fsck.daxfs clean.

The suites are not in this repository and no package registry has them, so
this is opt-in: build them outside the repository (docs/testing.md has the
commands) and set DAXFS_SUITES=DIR (DIR/pjdfstest, DIR/xfstests), or
DAXFS_PJDFSTEST / DAXFS_XFSTESTS, as for tests/vm/test_kernel_suites.py.
Without them each test is skipped.  DAXFS_FSX_OPS and DAXFS_FSSTRESS_OPS
shorten the runs.
"""
import os
import subprocess
import sys

import pytest

from helpers import env
from helpers import fuse as hf

sys.path.insert(0, os.path.join(env.REPO, "vm"))
import suites  # noqa: E402

pytestmark = pytest.mark.skipif(hf.skip_reason() is not None,
                                reason=str(hf.skip_reason()))

PJD, XFS = suites.suite_dirs()
FSX_OPS = int(os.environ.get("DAXFS_FSX_OPS", "1000000"))
FSS_OPS = int(os.environ.get("DAXFS_FSSTRESS_OPS", "10000"))
HOW = "docs/testing.md, 'External suites on the FUSE mount'"

need_pjd = pytest.mark.skipif(PJD is None, reason="pjdfstest not built: set DAXFS_SUITES "
                              "or DAXFS_PJDFSTEST (%s)" % HOW)
need_xfs = pytest.mark.skipif(XFS is None, reason="fsx/fsstress not built: set DAXFS_SUITES "
                              "or DAXFS_XFSTESTS (%s)" % HOW)


@pytest.fixture
def mnt(region_path):
    env.mkfs(region_path, 1024 * env.MiB)
    m = hf.Mount(region_path, opts=["allow_other"])
    yield m
    rc = m.umount(timeout=120)
    assert rc == 0, m.output()
    code, out = env.fsck(region_path, timeout=600)
    assert code == 0, out


def run(cmd, cwd, timeout):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout[-20000:] + p.stderr[-5000:]


@need_pjd
def test_pjdfstest_all(mnt):
    work = mnt.path("pjd")
    os.mkdir(work)
    rc, out = run(["prove", "-r", str(PJD / "tests")], work, 3600)
    assert rc == 0, out


@need_xfs
@pytest.mark.parametrize("mapped", [True, False], ids=["mapped", "nomap"])
def test_fsx(mnt, mapped):
    cmd = [str(XFS / "ltp" / "fsx"), "-N", str(FSX_OPS), "-S", "1" if mapped else "3",
           "-l", "262144", "-o", "65536", "-q"]
    if not mapped:
        cmd += ["-W", "-R"]
    cmd.append(mnt.path("fsx"))
    rc, out = run(cmd, mnt.mp, 3600)
    assert rc == 0, out


@need_xfs
def test_fsstress(mnt):
    rc, out = run([str(XFS / "ltp" / "fsstress"), "-d", mnt.path("fss"), "-n", str(FSS_OPS),
                   "-p", "4", "-s", "1"], mnt.mp, 3600)
    assert rc == 0, out
    rc, out = run(["rm", "-rf", mnt.path("fss")], mnt.mp, 600)
    assert rc == 0, out
