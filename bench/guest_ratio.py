#!/usr/bin/env python3
"""Guest Table 2 as ratios with a confidence interval, independent of load.

    bench/guest_ratio.py [--rounds N] [--runtime 200ms] [--sections a,b]
                         [--wallclock] [--out DIR] [--meta NFILES]
                         [--trust-ab]

One QEMU TCG guest mounts daxfs.ko, ext4 -o dax and a tmpfs
(vm/guest/daxfs-bench.sh ratio) and runs bench/fio/table2.fio section by
section, the three filesystems one right after the other for each section,
for N rounds (target order rotated per round).  Per round and section it
takes the ratios daxfs/ext4-dax and daxfs/tmpfs; it reports their
geometric mean over the rounds with a 95% confidence interval (Student t
on the log ratios).

By default the guest runs with QEMU's -icount shift=0,sleep=off
(vm/run-guest.sh DAXFS_VM_ICOUNT): the guest clock advances 1 ns per guest
instruction, so fio's MiB/s is bytes per guest instruction, whatever else
the machine runs.  What it leaves out: memory and cache costs (every
instruction counts the same; TCG counts a rep movsb once per byte, the
copy of daxfs.ko and tmpfs, while ext4-dax copies with 8-byte
non-temporal stores: docs/benchmarks.md), the host's emulation cost of each
instruction, and waits (with sleep=off an idle guest's clock jumps to its
next timer: the timed sections are CPU-bound, but nothing here may wait
for I/O).  The -icount guest has one vCPU (a 2-vCPU guest did not get
through its boot in 9 minutes on the loaded build machine: one TCG
thread runs both vCPUs in turn); the multi-job rows then share it.
--wallclock uses the ordinary multi-threaded TCG, 2 vCPUs and host time
instead: the same interleaved rounds, wider intervals.

--meta NFILES: the DaxFS paper's Figure 4 instead of Table 2: per round,
bench/meta_bench posix (create, stat, readdir, unlink of NFILES files in
one directory) on each target one after the other; the table then holds
time ratios per operation (below 1: daxfs is faster), guest instructions
per file under the instruction clock.  --trust-ab adds daxfs.ko with
the module parameter trust_cached=0 (set in the guest before each of its
runs, back to 1, the default, for the plain daxfs runs) as a fourth
target: the cost of not trusting cached names, A/B in one guest; with
--profile it adds that profile (no listing kept: a profile of the walk).

Writes DIR/ratio.csv (round, section, target, MiB/s) and prints a
Markdown table.  Needs what bench/run's guest part needs (make module,
vm/setup.sh).
"""

import argparse
import csv
import math
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
from evaluate import PAPER_RATIO, TOOLS, fio_json_rows, sections  # noqa: E402

TARGETS = ("daxfs", "ext4dax", "tmpfs")
# two-sided 95% quantiles of Student's t, by degrees of freedom
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447,
       7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131,
       20: 2.086, 30: 2.042}


def t95(df):
    """The 95% quantile for df degrees of freedom (the next smaller df in
    the table when df is not in it: a slightly wider interval)."""
    if df >= 30:
        return 1.96 if df > 120 else T95[30]
    return T95[max(k for k in T95 if k <= df)]


def geo_ci(ratios):
    """(geometric mean, low, high) of the ratios: 95% t interval of the
    mean log ratio; low = high = mean with one ratio."""
    logs = [math.log(r) for r in ratios if r > 0]
    if not logs:
        return None
    m = statistics.mean(logs)
    if len(logs) < 2:
        return math.exp(m), math.exp(m), math.exp(m)
    h = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def result_files(outdir, pattern):
    """(match, path) for each file of outdir whose name matches pattern."""
    for f in sorted(os.listdir(outdir)):
        m = re.match(pattern, f)
        if m:
            yield m, os.path.join(outdir, f)


def read_rows(outdir):
    """[(round, section, target, MiB/s)] from the guest's JSON files."""
    rows = []
    for m, path in result_files(outdir, r"ratio-(\w+)-(\d+)-([\w-]+)\.json$"):
        with open(path) as fh:
            text = fh.read()
        if "{" not in text:
            continue        # still being written, or fio failed
        for sect, mib in fio_json_rows(text):
            if sect == m.group(3):
                rows.append((int(m.group(2)), sect, m.group(1), mib))
    return rows


def read_meta(outdir):
    """[(round, op, target, us per op)] from the guest's meta_bench CSVs."""
    rows = []
    for m, path in result_files(outdir, r"meta-(\w+)-(\d+)\.csv$"):
        with open(path) as fh:
            for rec in csv.DictReader(fh):
                rows.append((int(m.group(2)), rec["op"], m.group(1),
                             float(rec["us_per_op"])))
    return rows


def meta_summary(rows):
    """Markdown table: per operation, the median time per target and the
    per-round time ratios' geometric mean with its 95% interval."""
    us = {}
    for rnd, op, tgt, t in rows:
        us.setdefault(op, {}).setdefault(tgt, {})[rnd] = t
    out = ["| op | daxfs | ext4-dax | tmpfs | daxfs/ext4-dax time (95% CI) "
           "| daxfs/tmpfs time (95% CI) | rounds |",
           "|---|---|---|---|---|---|---|"]
    for op in ("create", "stat", "readdir", "unlink"):
        t = us.get(op, {})
        med, cis = medians_cis(t)
        out.append("| %s | %.2f | %.2f | %.2f | %s | %s | %d |" % (
            op, med[0], med[1], med[2], fmt_ci(cis[0]), fmt_ci(cis[1]),
            len(t.get("daxfs", {}))))
    if any(us.get(op, {}).get("daxfsnotrust") for op in us):
        out += ["", "| op | daxfs | daxfs, trust_cached=0 | trusted/not "
                "time (95% CI) |", "|---|---|---|---|"]
        for op in ("create", "stat", "readdir", "unlink"):
            t = us.get(op, {})
            a, b = t.get("daxfs", {}), t.get("daxfsnotrust", {})
            if not a or not b:
                continue
            out.append("| %s | %.2f | %.2f | %s |" % (
                op, statistics.median(a.values()),
                statistics.median(b.values()),
                fmt_ci(geo_ci([a[r] / b[r] for r in a if b.get(r)]))))
    return "\n".join(out)


def medians_cis(t):
    """t: {target: {round: value}}.  The median per target (TARGETS'
    order) and, against ext4-dax and tmpfs, the per-round ratios daxfs /
    other as geo_ci gives them."""
    med = [statistics.median(t[x].values()) if t.get(x) else 0
           for x in TARGETS]
    cis = [geo_ci([t["daxfs"][r] / t[o][r] for r in t.get("daxfs", {})
                   if t.get(o, {}).get(r)]) for o in ("ext4dax", "tmpfs")]
    return med, cis


def fmt_ci(ci):
    return "%.2fx (%.2f-%.2f)" % ci if ci else "-"


def summary(rows, secs):
    """Markdown table: per section, median MiB/s per target and the
    per-round ratios' geometric mean with its 95% interval."""
    bw = {}
    for rnd, sect, tgt, mib in rows:
        bw.setdefault(sect, {}).setdefault(tgt, {})[rnd] = mib
    out = ["| row | daxfs MiB/s | ext4-dax | tmpfs | daxfs/ext4-dax (95% CI) "
           "| daxfs/tmpfs (95% CI) | paper daxfs/tmpfs | rounds |",
           "|---|---|---|---|---|---|---|---|"]
    for sect in secs:
        if sect not in bw or sect == "layout":
            continue
        t = bw[sect]
        med, cis = medians_cis(t)
        paper = PAPER_RATIO.get(sect)
        out.append("| %s | %.0f | %.0f | %.0f | %s | %s | %s | %d |" % (
            sect, med[0], med[1], med[2], fmt_ci(cis[0]), fmt_ci(cis[1]),
            "%.2fx" % paper if paper else "-", len(t.get("daxfs", {}))))
    return "\n".join(out)


def profile_summary(outdir, secs, top=25):
    """The first TOP symbols of each profile-TARGET-SECTION.txt."""
    out = []
    for s in secs:
        for t in TARGETS:
            path = os.path.join(outdir, "profile-%s-%s.txt" % (t, s))
            if not os.path.exists(path):
                continue
            lines = [ln for ln in open(path)
                     if ln.strip() and not ln.startswith("#")]
            out.append("== %s on %s (%s)" % (s, t, path))
            out.extend(ln.rstrip() for ln in lines[:top])
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", default="200ms",
                    help="fio runtime of timed sections (guest time)")
    ap.add_argument("--sections", default="",
                    help="comma-separated sections (default: all)")
    ap.add_argument("--wallclock", action="store_true",
                    help="host time, multi-threaded TCG (no -icount)")
    ap.add_argument("--out", default="",
                    help="result directory (default bench/results/ratio-TIME)")
    ap.add_argument("--module", default="kernel/daxfs.ko",
                    help="daxfs.ko to load, relative to the repository "
                         "(e.g. an older tree's, as bench/ab.sh -g builds)")
    ap.add_argument("--profile", action="store_true",
                    help="instead of rounds: each section once per target "
                         "under perf record (cpu-clock, so samples count "
                         "guest instructions); profile-TARGET-SECTION.txt")
    ap.add_argument("--meta", type=int, metavar="NFILES", default=0,
                    help="Figure 4 (metadata) instead of Table 2")
    ap.add_argument("--listings", type=int, default=10,
                    help="with --meta: listings of the directory per round "
                         "(readdir's figure is per listing)")
    ap.add_argument("--stats", type=int, default=1,
                    help="with --meta --profile: stat every file this many "
                         "times (a profile mostly of stat)")
    ap.add_argument("--callers", action="store_true",
                    help="with --profile: record call graphs and "
                         "report each function with what it calls "
                         "(perf report --children): the cost of a whole "
                         "path, such as atomic_open or release")
    ap.add_argument("--trust-ab", action="store_true",
                    help="with --meta: also daxfs.ko with trust_cached=0, "
                         "as a fourth target in every round (with "
                         "--profile: a fourth profile, every listing "
                         "walking)")
    ap.add_argument("--summarize", metavar="DIR",
                    help="only print the table of an earlier run's DIR")
    a = ap.parse_args()
    secs = a.sections.split(",") if a.sections else sections()
    if a.summarize:
        print(meta_summary(read_meta(a.summarize)) if a.meta else
              summary(read_rows(a.summarize), secs))
        return 0
    from cluster import Cluster, Guest
    out = a.out or os.path.join(HERE, "results",
                                time.strftime("ratio-%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    if not a.wallclock:
        os.environ["DAXFS_VM_ICOUNT"] = "shift=0,sleep=off"
    ext4 = "/dev/shm/daxfs-ratio-ext4-%d" % os.getpid()
    tmo = a.rounds * len(secs) * 3 * 60 + 600
    label = "bench-ratio-" + re.sub(r"\W", "_", os.path.basename(out))
    with Cluster(label=label, size="512M", extra_shm=[ext4],
                 timeout=tmo) as c:
        subprocess.run([os.path.join(TOOLS, "mkfs.daxfs"), "-f", "-q",
                        str(c.shm)], check=True)
        if a.profile and a.meta:
            args = ["metaprofile", "%d:%d:%d%s" % (a.meta, a.listings,
                                                   a.stats,
                                                   ":g" if a.callers else ""),
                    "+".join(TARGETS + (("daxfsnotrust",) if a.trust_ab
                                        else ()))]
        elif a.profile:
            args = ["profile", a.runtime + (":g" if a.callers else ""),
                    "+".join(TARGETS)]
        elif a.meta:
            args = ["meta", str(a.rounds), "%d:%d" % (a.meta, a.listings),
                    "+".join(TARGETS + (("daxfsnotrust",) if a.trust_ab
                                        else ()))]
        else:
            args = ["ratio", str(a.rounds), a.runtime, "+".join(TARGETS)]
        g = Guest("A", "daxfs-bench",
                  args + ([] if a.meta else
                          ["+".join(secs) if a.sections else "all"]) +
                  [a.module],
                  cpus=1 if not a.wallclock else 2, mem="2G", outdir=out)
        res = c.run([g])
        if not res.ok:
            print(res.summary(), file=sys.stderr)
    if a.profile:
        print(profile_summary(out, ["meta"] if a.meta else secs))
        return 0 if res.ok else 1
    if a.meta:
        print("guest clock: %s; %d rounds; %d files, %d listings; results "
              "in %s\n" % ("host time" if a.wallclock else
                           "instructions (-icount shift=0)",
                           a.rounds, a.meta, a.listings, out))
        print(meta_summary(read_meta(out)))
        return 0 if res.ok else 1
    rows = read_rows(out)
    with open(os.path.join(out, "ratio.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["round", "section", "target", "mib_s"])
        w.writerows(rows)
    print("guest clock: %s; %d rounds; runtime %s; results in %s\n" % (
        "host time" if a.wallclock else "instructions (-icount shift=0)",
        a.rounds, a.runtime, out))
    print(summary(rows, secs))
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
