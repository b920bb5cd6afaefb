"""daxfs.ko compiles, with no warning, against the newer Debian kernels
(docs/kernel.md "Supported kernels"): scripts/kernel-compat.sh fetches each
suite's kernel headers (nothing installed) and builds there, or in a
debootstrapped root of the suite's release when its kernel wants a gcc this
host lacks (trixie's gcc-14).

The rest of the suite builds daxfs.ko for Debian 12's 6.1 only, so an API
that a newer kernel renamed broke those builds unseen: between 2026-11-28
and 2026-12-02 the 7.3 build failed twice over (struct fileattr became
struct file_kattr in 6.17, and <linux/fs.h> stopped pulling in struct
iov_iter), and only a manual `make kernels` found it.

Needs root and the Debian archive (deb.debian.org, as scripts/setup.sh);
about a minute for bookworm-backports, a few more the first time for
trixie-backports' build root.  Opt-in with DAXFS_COMPAT_TESTS=1 (.ci/run
sets it).
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(os.environ.get("DAXFS_COMPAT_TESTS") != "1",
                                reason="set DAXFS_COMPAT_TESTS=1 (fetches kernel headers)")


@pytest.mark.parametrize("suite", ["bookworm-backports", "trixie-backports"])
def test_module_builds_for_newer_kernel(suite):
    res = subprocess.run(["scripts/kernel-compat.sh", suite], cwd=ROOT,
                         capture_output=True, text=True, timeout=1800)
    out = res.stdout + res.stderr
    assert res.returncode == 0, f"daxfs.ko for {suite}:\n{out[-4000:]}"
    m = re.search(r"ok: (build/daxfs-(\S+)\.ko)", out)
    assert m, out[-2000:]
    ko, kver = ROOT / m.group(1), m.group(2)
    info = subprocess.run(["modinfo", "-F", "vermagic", str(ko)],
                          capture_output=True, text=True, check=True).stdout
    assert info.split()[0] == kver, (ko, info)
    # the PMD mappings of runs are built for every kernel from 6.12 on
    # (docs/kernel.md "PMD mappings of runs")
    syms = subprocess.run(["nm", str(ko)], capture_output=True, text=True,
                          check=True).stdout
    assert re.search(r" t daxfs_huge_fault$", syms, re.M), f"{ko}: no huge_fault"
