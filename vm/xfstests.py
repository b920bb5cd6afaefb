#!/usr/bin/env python3
"""vm/xfstests.py - xfstests on daxfs.ko in one QEMU guest (docs/testing.md, "xfstests on
daxfs.ko").  The xfstests tree is built outside the repository (docs/testing.md says how);
this script fetches and builds nothing.  It copies vm/xfstests/local.config and
vm/xfstests/exclude into the tree (as local.config and daxfs.exclude), applies
vm/xfstests/rc-daxfs.sed to its common/rc once (the daxfs case of _scratch_mkfs_sized),
and boots a guest with two nvdimms that runs vm/guest/daxfs-xfstests.sh.

    vm/xfstests.py --xfstests /work/kernel-ext/xfstests [--out DIR] [TESTS...]
    (default TESTS: -g generic/quick; needs `make all module` and vm/setup.sh)
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path

VM = Path(__file__).resolve().parent
REPO = VM.parent
sys.path.insert(0, str(VM))
from cluster import Cluster, Guest  # noqa: E402

MARK = "# daxfs: vm/xfstests/rc-daxfs.sed applied"


def prepare(tree):
    shutil.copy(VM / "xfstests" / "local.config", tree / "local.config")
    shutil.copy(VM / "xfstests" / "exclude", tree / "daxfs.exclude")
    rc = tree / "common" / "rc"
    text = rc.read_text()
    if MARK in text:
        return
    subprocess.run(["sed", "-i", "-f", str(VM / "xfstests" / "rc-daxfs.sed"), str(rc)],
                   check=True)
    if "\tdaxfs)" not in rc.read_text():
        sys.exit("rc-daxfs.sed did not apply to this xfstests version's common/rc")
    with rc.open("a") as f:
        f.write("\n" + MARK + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xfstests", required=True, type=Path)
    ap.add_argument("--out", type=Path, default=REPO / "build" / "xfstests")
    ap.add_argument("--size", default="2G", help="each nvdimm (2G)")
    ap.add_argument("--timeout", type=int, default=3600, help="guest timeout, s")
    ap.add_argument("tests", nargs="*", default=["-g", "generic/quick"])
    a = ap.parse_args()
    tree = a.xfstests.resolve()
    prepare(tree)
    a.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(f"/dev/shm/daxfs-xfst-scratch-{a.out.stat().st_ino}")
    with Cluster(label="xfstests", size=a.size, extra_shm=[scratch],
                 timeout=a.timeout + 120) as c:
        res = c.run([Guest("A", "daxfs-xfstests",
                           [str(tree), "+".join(a.tests), str(a.timeout)],
                           mem="2G", outdir=a.out)])
    scratch.unlink(missing_ok=True)
    print(res.summary())
    print(f"check.log and results: {a.out}")
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
