#!/usr/bin/env python3
"""Mappings of 2 MiB runs in a guest: daxfs.ko with PMDs, without, and ext4 -o dax.

    bench/guest_pmd.py [--rounds N] [--mib M] [--wallclock] [--module KO] [--out DIR]

One QEMU TCG guest mounts daxfs.ko (phys=) and ext4 -o dax and runs, per
round and target (order rotated), build/bench/preload_io FILE M mapread: a
file written in whole 2 MiB pieces, mapped shared from its second page on
(so only a mapping placed for the runs gets them on 2 MiB boundaries),
every page touched once, then 8-byte loads at random pages.  Targets:
daxfs (PMD faults where the kernel has them: 6.12 and later,
docs/kernel.md "PMD mappings of runs"), daxfs-pte (the same module with
THP set to "never" for the run: page faults only) and ext4dax.

Reported per target: minor faults of the first touch, guest ns per page of
it and guest ns per random load, medians over the rounds.  By default the
guest clock counts guest instructions (-icount shift=0, as
bench/guest_ratio.py): the touch column is then the fault path's
instructions per page, and the load column cannot show a TLB miss's cost
(a page walk is no guest instruction); --wallclock uses host time instead.
Boot a newer kernel with DAXFS_VM_ROOT (docs/kernel.md "Supported
kernels"); on 6.1 daxfs and daxfs-pte are the same.

Runs come only from the never-used part of the pool (docs/alloc.md
"Runs"), so the region (--region, default 2 GiB) must hold every daxfs
file of the run: 2 x ROUNDS x M MiB.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "vm"))
sys.path.insert(0, HERE)
from evaluate import TOOLS  # noqa: E402

TARGETS = ("daxfs", "daxfs-pte", "ext4dax")


def read_runs(out):
    """{target: [(touch_ns, faults, load_ns), ...]} from DIR/map-TARGET-ROUND.txt."""
    runs = {t: [] for t in TARGETS}
    for name in sorted(os.listdir(out)):
        m = re.fullmatch(r"map-(.+)-(\d+)\.txt", name)
        if not m or m.group(1) not in runs:
            continue
        with open(os.path.join(out, name)) as fh:
            f = dict((ln.split()[0], ln.split()[1:]) for ln in fh if ln.strip())
        runs[m.group(1)].append((float(f["maptouch"][0]), int(f["maptouch"][1]),
                                 float(f["mapread"][0])))
    return runs


def summary(runs):
    lines = ["| target | rounds | first-touch faults | ns per page touched | "
             "ns per random load |", "|---|---|---|---|---|"]
    for t, rs in runs.items():
        if not rs:
            continue
        med = [statistics.median(r[i] for r in rs) for i in range(3)]
        lines.append(f"| {t} | {len(rs)} | {med[1]:,.0f} | {med[0]:,.0f} | {med[2]:.1f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mib", type=int, default=64, help="file size, a power of two")
    ap.add_argument("--region", default="2G", help="daxfs region size (default 2G)")
    ap.add_argument("--wallclock", action="store_true",
                    help="host time, multi-threaded TCG (no -icount)")
    ap.add_argument("--module", default="kernel/daxfs.ko",
                    help="daxfs.ko to load, relative to the repository")
    ap.add_argument("--out", help="results directory (default bench/results/pmd-DATE)")
    ap.add_argument("--summarize", metavar="DIR", help="only print DIR's table")
    a = ap.parse_args()
    if a.summarize:
        print(summary(read_runs(a.summarize)))
        return 0
    from cluster import Cluster, Guest
    out = a.out or os.path.join(HERE, "results", time.strftime("pmd-%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    if not a.wallclock:
        os.environ["DAXFS_VM_ICOUNT"] = "shift=0,sleep=off"
    ext4 = "/dev/shm/daxfs-pmd-ext4-%d" % os.getpid()
    with Cluster(label="bench-pmd", size=a.region, extra_shm=[ext4],
                 timeout=a.rounds * 3 * 300 + 600) as c:
        subprocess.run([os.path.join(TOOLS, "mkfs.daxfs"), "-f", "-q", str(c.shm)],
                       check=True)
        g = Guest("A", "daxfs-bench", ["mapread", str(a.rounds), str(a.mib), a.module],
                  cpus=1 if not a.wallclock else 2, mem="2G", outdir=out)
        res = c.run([g])
        if not res.ok:
            print(res.summary(), file=sys.stderr)
            return 1
        info = res.guests["A"].results
    print("kernel %s, THP %s; guest clock: %s; %d MiB file; results in %s\n" % (
        info.get("map_kernel"), info.get("map_thp"),
        "host time" if a.wallclock else "instructions (-icount shift=0)",
        a.mib, out))
    print(summary(read_runs(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
