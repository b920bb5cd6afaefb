"""Public file-system suites on daxfs.ko in a QEMU guest: a short fsx (mapped reads and
writes included, its default), a short fsstress and, when pjdfstest is there too, its
"open file survives unlink" file, then umount + rmmod with a clean dmesg and fsck.daxfs clean.

The suites are not in this repository and not in CI: build them outside it (docs/testing.md,
"External suites", has the commands) and point DAXFS_SUITES at the directory holding
xfstests/ (ltp/fsx, ltp/fsstress built) and optionally pjdfstest/ (./pjdfstest built); or
DAXFS_XFSTESTS / DAXFS_PJDFSTEST at each tree.  Without them the test is skipped.
The long runs (all of pjdfstest, 20000-op fsx) are `vm/run-suites.sh`.
Other skip rules (qemu, guest kernel, module build) as in test_kernel_cluster.py.
Takes about a minute under TCG on an idle machine.
"""
import os
import sys
from pathlib import Path

import pytest

from helpers import build  # noqa: E402  (tests/ is on sys.path: conftest.py)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
import cluster  # noqa: E402
import suites  # noqa: E402

KO = REPO / "kernel" / "daxfs.ko"
BIN = REPO / "build" / "bin"


@pytest.fixture(scope="module")
def suite_dirs():
    pjd, xfs = suites.suite_dirs()
    if xfs is None:
        pytest.skip("xfstests (fsx, fsstress) not found: build them outside the repository "
                    "and set DAXFS_SUITES=DIR (DIR/xfstests/ltp/fsx) or DAXFS_XFSTESTS; "
                    "docs/testing.md, 'External suites'")
    cluster.require_vm(pytest)
    if os.environ.get("DAXFS_VM_NOBUILD") != "1":
        for target in ("all", "module"):
            p = build.make("-s", "-C", str(REPO), target, capture_output=True,
                           text=True)
            if p.returncode != 0:
                if "kernel headers not found" in p.stderr:
                    pytest.skip("cannot build daxfs.ko: " + p.stderr.strip())
                pytest.fail(f"make {target} failed:\n" + p.stdout[-2000:] + p.stderr[-2000:])
    assert KO.is_file() and (BIN / "mkfs.daxfs").is_file()
    return pjd, xfs


def test_kernel_suites_short(request, suite_dirs):
    pjd, xfs = suite_dirs
    runs = ["fsx", "fsxnomap", "fsstress"]
    if pjd is not None:
        runs.append("pjd:unlink/14.t")       # I/O and fstat on an open, unlinked file
    ok, g, frc, fout, logs = suites.run_suites(
        runs, pjd, xfs, label=request.node.name, size="256M", timeout=900,
        per_run_timeout=400, fsx_ops=3000, fss_ops=300, fss_procs=4)
    summary = (f"guest rc={g.rc} results={g.results} fsck rc={frc}\nlogs: {logs}\n"
               + g.tail(60) + "\n" + fout)
    assert g.ok, summary
    for r in runs:
        assert g.results.get(suites.result_key(r)) == "ok", summary
    assert frc == 0, summary
    print(summary)
