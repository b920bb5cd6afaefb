#!/usr/bin/env python3
"""vm/suites.py - run public file-system suites (pjdfstest, fsx, fsstress) on a daxfs.ko mount.

One guest boots (vm/cluster.py), formats nothing itself: this driver formats a fresh shared
file with mkfs.daxfs, the guest (vm/guest/daxfs-suites.sh) mounts it with phys=, runs the
chosen suites from the host root (chroot), unmounts and removes the module, and then this
driver checks the region with ``fsck.daxfs -n``.  The suites are NOT part of the repository
and nothing is fetched here: build them elsewhere and give their directories
(docs/testing.md, "External suites", has the commands).

    vm/run-suites.sh --pjdfstest /work/kernel-ext/pjdfstest --xfstests /work/kernel-ext/xfstests
    vm/run-suites.sh --xfstests DIR --run fsx+fsstress --fsx-ops 2000 --fsstress-ops 300

Environment defaults: DAXFS_PJDFSTEST, DAXFS_XFSTESTS, or DAXFS_SUITES=DIR holding
pjdfstest/ and xfstests/.  Logs: build/vm/logs/<label>/ (console A.log, and one log per run:
pjd.log, fsx1.log, fsx2.log, fsxnomap.log, fsstress.log, dmesg.log, fsck.log).
Exit status 0 only when every run passed, the guest script succeeded and fsck is clean.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

VM = Path(__file__).resolve().parent
REPO = VM.parent
sys.path.insert(0, str(VM))
import cluster  # noqa: E402
from cluster import Cluster, Guest  # noqa: E402

BIN = REPO / "build" / "bin"


def suite_dirs(pjd=None, xfs=None):
    """(pjdfstest dir or None, xfstests dir or None) from arguments or the environment."""
    base = os.environ.get("DAXFS_SUITES")
    pjd = pjd or os.environ.get("DAXFS_PJDFSTEST") or (base and f"{base}/pjdfstest")
    xfs = xfs or os.environ.get("DAXFS_XFSTESTS") or (base and f"{base}/xfstests")
    pjd = Path(pjd).resolve() if pjd and (Path(pjd) / "pjdfstest").is_file() else None
    xfs = Path(xfs).resolve() if xfs and (Path(xfs) / "ltp" / "fsx").is_file() \
        and (Path(xfs) / "ltp" / "fsstress").is_file() else None
    return pjd, xfs


def result_key(run):
    """The guest's result key for a run: pjd:unlink/14.t -> pjd-unlink_14_t."""
    return run.replace(":", "-", 1).replace("/", "_").replace(".", "_")


def run_suites(runs, pjd=None, xfs=None, label="suites", size="512M", timeout=3600,
               per_run_timeout=1800, fsx_ops=20000, fss_ops=2000, fss_procs=4, cpus=2,
               pjd_jobs=1):
    """Boot one guest, run RUNS ('pjd', 'pjd:SUB', 'fsx', 'fsxnomap', 'fsstress'); returns
    (ok, guest result, fsck rc, fsck output, log dir)."""
    args = [f"run={'+'.join(runs)}", f"fsxn={fsx_ops}", f"fssn={fss_ops}", f"fssp={fss_procs}",
            f"tmo={per_run_timeout}", f"pjdj={pjd_jobs}"]
    if pjd:
        args.append(f"pjd={pjd}")
    if xfs:
        args.append(f"xfs={xfs}")
    c = Cluster(label=label, size=size, timeout=timeout)
    with c:
        out = c.log_dir
        for f in out.glob("*.log"):
            f.unlink()
        subprocess.run([str(BIN / "mkfs.daxfs"), "-f", "-q", str(c.shm)], check=True)
        res = c.run([Guest("A", "daxfs-suites", args, cpus=cpus, outdir=out)])
        p = subprocess.run([str(BIN / "fsck.daxfs"), "-n", str(c.shm)], capture_output=True,
                           text=True)
        (out / "fsck.log").write_text(p.stdout + p.stderr)
    g = res.guests["A"]
    ok = g.ok and p.returncode == 0 and all(
        g.results.get(result_key(r)) == "ok" for r in runs)
    return ok, g, p.returncode, p.stdout + p.stderr, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="pjdfstest / fsx / fsstress on daxfs.ko in a guest")
    ap.add_argument("--pjdfstest", help="pjdfstest tree with ./pjdfstest built")
    ap.add_argument("--xfstests", help="xfstests tree with ltp/fsx and ltp/fsstress built")
    ap.add_argument("--run", default=None,
                    help="runs joined by '+': pjd, pjd:SUBDIR, fsx, fsxnomap, fsstress "
                         "(default: all those whose suite was given)")
    ap.add_argument("--fsx-ops", type=int, default=20000)
    ap.add_argument("--fsstress-ops", type=int, default=2000)
    ap.add_argument("--fsstress-procs", type=int, default=4)
    ap.add_argument("--size", default="512M", help="region size (512M)")
    ap.add_argument("--timeout", type=int, default=3600, help="whole guest, s (3600)")
    ap.add_argument("--run-timeout", type=int, default=1800, help="each run, s (1800)")
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--pjd-jobs", type=int, default=1, help="prove -j N (1)")
    ap.add_argument("--label", default="suites")
    a = ap.parse_args(argv)
    miss = cluster.missing_prerequisites()
    if miss:
        print("missing:", "; ".join(miss), "(run vm/setup.sh)", file=sys.stderr)
        return 2
    pjd, xfs = suite_dirs(a.pjdfstest, a.xfstests)
    if a.run:
        runs = a.run.split("+")
    else:
        runs = (["pjd"] if pjd else []) + (["fsx", "fsxnomap", "fsstress"] if xfs else [])
    if not runs:
        ap.error("no suite found: give --pjdfstest and/or --xfstests (or DAXFS_SUITES)")
    if any(r.startswith("pjd") for r in runs) and not pjd:
        ap.error("pjd run asked but no built pjdfstest (--pjdfstest DIR)")
    if any(not r.startswith("pjd") for r in runs) and not xfs:
        ap.error("fsx/fsstress asked but no built xfstests (--xfstests DIR)")
    for f in (REPO / "kernel" / "daxfs.ko", BIN / "mkfs.daxfs", BIN / "fsck.daxfs"):
        if not f.is_file():
            ap.error(f"{f} missing: make all module")
    ok, g, frc, fout, out = run_suites(runs, pjd, xfs, a.label, a.size, a.timeout,
                                       a.run_timeout, a.fsx_ops, a.fsstress_ops,
                                       a.fsstress_procs, a.cpus, a.pjd_jobs)
    print("\n".join(l for l in g.log.splitlines() if l.startswith("DAXFS-VM")))
    print(f"guest rc={g.rc} {g.elapsed:.0f}s; results: {g.results}")
    print(f"fsck.daxfs -n: rc={frc}\n{fout.strip()}")
    print(f"logs: {out}")
    print("ALL OK" if ok else "FAILURES (see the logs)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
