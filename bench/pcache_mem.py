#!/usr/bin/env python3
"""Memory of N guests reading one dataset: through daxfs split mode (one shared
page cache in the region) versus each guest reading the same files through its
own page cache (9p with cache=loose, the stand-in for NFS).  docs/benchmarks.md,
"Shared page cache".

Usage: bench/pcache_mem.py [--hosts 1,2,3] [--dataset-mib 32] [--cache-mib 64]
Needs the VM prerequisites (vm/setup.sh) and `make all module`.
"""
import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "vm"))
BIN = os.path.join(REPO, "build", "bin")
WORK = os.path.join(REPO, "build", "bench", "pcache-mem")
FILE_MIB = 4


def make_dataset(mib):
    src = os.path.join(WORK, "src")
    os.makedirs(src, exist_ok=True)
    want = {"f%03d" % i for i in range(mib // FILE_MIB)}
    for name in set(os.listdir(src)) - want:
        os.unlink(os.path.join(src, name))
    for name in sorted(want):
        path = os.path.join(src, name)
        if not os.path.exists(path) or os.path.getsize(path) != FILE_MIB << 20:
            with open(path, "wb") as f:
                f.write(os.urandom(FILE_MIB << 20))
    return src


def guest_totals(res):
    """Sums the guests' results; fails loudly when one did not finish."""
    if not res.ok:
        sys.exit("guest run failed:\n" + res.summary())
    tot = {"cached_kb": 0, "used_kb": 0, "bytes": 0}
    for g in res.guests.values():
        for k in tot:
            tot[k] += int(g.results[k])
    return tot


def cache_info(shm, backing):
    out = subprocess.run([os.path.join(BIN, "daxfs"), "-r", str(shm), "--backing",
                          backing, "info", "--json"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)["cache"]


def run_n(n, src, cache_mib, size_mib):
    from cluster import Cluster, Guest
    names = [chr(ord("A") + i) for i in range(n)]
    bk = os.path.join(WORK, "bk0")
    row = {"hosts": n}
    with Cluster(label="bench-pcache-mem-%d" % n, size="%dM" % size_mib,
                 timeout=600) as c:
        subprocess.run([os.path.join(BIN, "mkfs.daxfs"), "-f", "-q", "--source", src,
                        "--backing", bk, "--cache-size", "%dM" % cache_mib, str(c.shm)],
                       check=True)
        res = c.run([Guest(x, "pcache-mem", ["daxfs", "/", "/host" + bk]) for x in names])
        d = guest_totals(res)
        ci = cache_info(c.shm, bk)
        row.update(daxfs_guest_kb=d["cached_kb"], daxfs_used_kb=d["used_kb"],
                   shared_kb=ci["valid"] * 4, fills=ci["fills"], bytes=d["bytes"])
        res = c.run([Guest(x, "pcache-mem", ["private", "/host" + src]) for x in names])
        p = guest_totals(res)
        row.update(private_kb=p["cached_kb"], private_used_kb=p["used_kb"])
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", default="1,2,3")
    ap.add_argument("--dataset-mib", type=int, default=32)
    ap.add_argument("--cache-mib", type=int, default=64)
    a = ap.parse_args()
    import cluster
    miss = cluster.missing_prerequisites()
    if miss:
        sys.exit("VM prerequisites missing (run vm/setup.sh): " + "; ".join(miss))
    os.makedirs(WORK, exist_ok=True)
    src = make_dataset(a.dataset_mib)
    size_mib = a.cache_mib * 2 + a.dataset_mib + 64
    size_mib += -size_mib % 2
    print("| guests | daxfs: shared cache MiB | daxfs: guests' own page cache MiB "
          "| private page caches MiB | private / daxfs | backing pages filled |")
    print("|---|---|---|---|---|---|")
    for n in [int(x) for x in a.hosts.split(",")]:
        r = run_n(n, src, a.cache_mib, size_mib)
        dax = (r["shared_kb"] + max(r["daxfs_guest_kb"], 0)) / 1024
        priv = r["private_kb"] / 1024
        print("| %d | %.1f | %.1f | %.1f | %.1fx | %d |" % (
            n, r["shared_kb"] / 1024, r["daxfs_guest_kb"] / 1024, priv,
            priv / dax if dax else 0, r["fills"]), flush=True)


if __name__ == "__main__":
    main()
