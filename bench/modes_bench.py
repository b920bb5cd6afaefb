#!/usr/bin/env python3
"""Cost of the consistency modes (docs/modes.md): fio (sync engine) rows and
create/stat/unlink of N files through `daxfs run --mode posix|sync|strict`,
best of --runs each; prints Markdown tables of MiB/s (ops/s) and the ratio
to posix (docs/benchmarks.md "Consistency modes").

Usage: bench/modes_bench.py [--size 64m] [--runs 2] [--meta 10000]
Needs fio and a built tree (make; make bench for preload_meta).
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import preload_fio as pf  # noqa: E402  (fio runner and paths)

MODES = ["posix", "sync", "strict"]
ROWS = [
    ("seq write 4K first", "4k", ["--rw=write", "--create_on_open=1"]),
    ("seq write 4K rewrite", "4k", ["--rw=write"]),
    ("rand write 4K", "4k", ["--rw=randwrite"]),
    ("append 4K", "4k", ["--rw=write", "--file_append=1"]),
    ("seq write 1M rewrite", "1m", ["--rw=write"]),
    ("seq read 4K", "4k", ["--rw=read"]),
    ("rand read 4K", "4k", ["--rw=randread"]),
]


def fio(prefix, path, bs, args, size):
    return pf.fio(prefix, path, ["--bs=" + bs] + args, size)[0]


def main():
    a, tmp, region = pf.scratch("modebench-", 2, 10000)
    try:
        pre = {m: [os.path.join(pf.BIN, "daxfs"), "-r", region, "run",
                   "--mode", m, "--"] for m in MODES}
        print("| row | " + " | ".join("%s MiB/s" % m for m in MODES) +
              " | sync/posix | strict/posix |")
        print("|---" * (len(MODES) + 3) + "|")
        for name, bs, args in ROWS:
            got = {}
            for m in MODES:
                best = 0.0
                for _ in range(1 if "first" in name else a.runs):
                    if "first" in name or "append" in name:
                        subprocess.run(pre[m] + ["rm", "-f", "/daxfs/f"],
                                       check=True)
                    best = max(best, fio(pre[m], "/daxfs/f", bs, args, a.size))
                got[m] = best
            print("| %s | %s | %.2fx | %.2fx |" % (
                name, " | ".join("%.0f" % got[m] for m in MODES),
                got["sync"] / got["posix"], got["strict"] / got["posix"]))
        if a.meta:
            prog = os.path.join(pf.REPO, "build", "bench", "preload_meta")
            res = {}
            for m in MODES:
                best = {}
                for _ in range(a.runs):
                    out = subprocess.run(pre[m] + [prog, "/daxfs", str(a.meta)],
                                         capture_output=True, text=True,
                                         timeout=1200, check=True).stdout
                    for k, v in (ln.split() for ln in out.splitlines()):
                        best[k] = max(best.get(k, 0), float(v))
                res[m] = best
            print()
            print("| %d files | " % a.meta + " | ".join("%s ops/s" % m for m in MODES) +
                  " | sync/posix | strict/posix |")
            print("|---" * (len(MODES) + 3) + "|")
            for k in ("create", "stat", "unlink"):
                print("| %s | %s | %.2fx | %.2fx |" % (
                    k, " | ".join("%.0f" % res[m][k] for m in MODES),
                    res["sync"][k] / res["posix"][k],
                    res["strict"][k] / res["posix"][k]))
    finally:
        pf.drop_scratch(tmp, region)


if __name__ == "__main__":
    main()
