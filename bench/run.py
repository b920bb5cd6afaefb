#!/usr/bin/env python3
"""Runs the DaxFS benchmarks and fio on tmpfs, prints markdown tables and
writes raw CSV under bench/results/.  Called by bench/run.sh (which builds
first); see docs/benchmarks.md."""
import argparse
import csv
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# DaxFS paper, Table 2 (DaxFS/tmpfs, fio sync, 64 MB file, 1 thread)
PAPER = {
    ("seqwrite-first", 4096): 1.27, ("seqwrite-rewrite", 4096): 1.18,
    ("seqwrite-first", 65536): 1.24, ("seqwrite-rewrite", 65536): 1.13,
    ("seqread", 4096): 1.08, ("seqread", 65536): 1.00,
    ("randread", 4096): 1.14, ("randwrite", 4096): 0.94,
}
# which memcpy pattern bounds each file pattern
CEILING = {"seqwrite-first": "seqwrite", "seqwrite-rewrite": "seqwrite",
           "seqread": "seqread", "randread": "randread",
           "randwrite": "randwrite"}
PATTERNS = ["seqwrite-first", "seqwrite-rewrite", "seqread", "randread",
            "randwrite"]


def run(cmd):
    print("+ " + " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if r.returncode:
        sys.exit("%s failed (exit %d)" % (cmd[0], r.returncode))
    return r.stdout


def fio_job(fio, d, name, rw, bs, size, dur, extra=()):
    cmd = [fio, "--name=" + name, "--directory=" + d, "--ioengine=sync",
           "--rw=" + rw, "--bs=%d" % bs, "--invalidate=0",
           "--output-format=json"] + list(extra)
    if dur:
        cmd += ["--filename=file0", "--size=%d" % size, "--time_based",
                "--runtime=%dms" % int(dur * 1000)]
    out = run(cmd)
    job = json.loads(out[out.index("{"):])["jobs"][0]
    side = job["write" if "write" in rw else "read"]
    # io_bytes and runtime (ms) of the job
    return side["io_bytes"], side["runtime"] / 1000.0


def fio_rows(fio, size, dur, reps, sizes):
    d = "/dev/shm/daxfs-bench-fio"
    rows = []
    for bs in sizes:
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        # first write: reps new files written one after the other
        # (no fallocate: tmpfs allocates pages as the writes arrive)
        b, s = fio_job(fio, d, "first", "write", bs, size, 0,
                       ["--nrfiles=%d" % reps, "--filesize=%d" % size,
                        "--size=%d" % (size * reps),
                        "--file_service_type=sequential",
                        "--fallocate=none",
                        "--filename_format=file$filenum"])
        rows.append(("tmpfs-fio", "seqwrite-first", bs, b, s))
        for test, rw in (("seqwrite-rewrite", "write"), ("seqread", "read"),
                         ("randread", "randread"), ("randwrite", "randwrite")):
            b, s = fio_job(fio, d, test, rw, bs, size, dur)
            rows.append(("tmpfs-fio", test, bs, b, s))
        shutil.rmtree(d, ignore_errors=True)
    return [{"suite": r[0], "test": r[1], "bs": str(r[2]), "bytes": str(r[3]),
             "seconds": "%.4f" % r[4],
             "mib_s": "%.1f" % (r[3] / r[4] / 2**20 if r[4] else 0)}
            for r in rows]


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def machine():
    return "nproc %d, CPU %s, kernel %s" % (os.cpu_count(), cpu_model(),
                                            platform.release())


def fmt_size(b):
    b = int(b)
    return "%dK" % (b // 1024) if b < 2**20 else "%dM" % (b // 2**20)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "build", "bench"))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("-t", "--seconds", type=float, default=0.5,
                    help="duration of each timed test")
    ap.add_argument("-n", "--keys", type=int, default=262144,
                    help="overlay keys per process")
    ap.add_argument("-s", "--size", type=int, default=64 << 20,
                    help="file size for the I/O tests")
    ap.add_argument("-r", "--reps", type=int, default=3,
                    help="fresh files for the first-write test")
    ap.add_argument("--skip", default="", help="comma list: overlay,io,fio")
    a = ap.parse_args()
    skip = set(filter(None, a.skip.split(",")))
    sizes = [4096, 65536]
    os.makedirs(a.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    print("# DaxFS benchmarks, %s\n\n%s\n" %
          (time.strftime("%Y-%m-%d %H:%M"), machine()))

    if "overlay" not in skip:
        out = run([os.path.join(a.bin, "overlay_bench"), "-n", str(a.keys),
                   "-t", str(a.seconds)])
        path = os.path.join(a.out, stamp + "-overlay.csv")
        open(path, "w").write(out)
        rows = list(csv.DictReader(io.StringIO(out)))
        print("## Overlay and create (%d keys per process, %.1fs timed)\n" %
              (a.keys, a.seconds))
        print("| test | procs | ops/s | wins | EEXIST | claim-CAS fails "
              "| CAS success | check |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["test"], r["procs"], "{:,}".format(int(r["rate_ops_s"])),
                r["wins"] if r["wins"] != "0" else "",
                r["exists"] if r["exists"] != "0" else "",
                r["cas_fail"], r["cas_success"] or "", r["check"]))
        print("\nraw: %s\n" % os.path.relpath(path))

    rows = []
    if "io" not in skip:
        out = run([os.path.join(a.bin, "io_bench"), "-t", str(a.seconds),
                   "-s", str(a.size), "-r", str(a.reps)])
        rows += list(csv.DictReader(io.StringIO(out)))
    if "fio" not in skip:
        fio = shutil.which("fio")
        if not fio:
            print("fio not found (apt-get install fio): tmpfs column empty\n")
        else:
            rows += fio_rows(fio, a.size, a.seconds, a.reps, sizes)
    if rows:
        path = os.path.join(a.out, stamp + "-io.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["suite", "test", "bs", "bytes",
                                              "seconds", "mib_s"])
            w.writeheader()
            w.writerows(rows)
        v = {(r["suite"], r["test"], int(r["bs"])): float(r["mib_s"])
             for r in rows}
        print("## File I/O, %s file, 1 thread (MiB/s)\n" % fmt_size(a.size))
        print("| pattern | bs | daxfs (libdaxfs) | tmpfs (fio sync) "
              "| daxfs/tmpfs | paper | memcpy | daxfs/memcpy |")
        print("|---|---|---|---|---|---|---|---|")
        for bs in sizes:
            for p in PATTERNS:
                d = v.get(("daxfs", p, bs))
                t = v.get(("tmpfs-fio", p, bs))
                m = v.get(("memcpy", CEILING[p], bs))
                pr = PAPER.get((p, bs))
                print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    p, fmt_size(bs),
                    "%.0f" % d if d else "", "%.0f" % t if t else "",
                    "%.2fx" % (d / t) if d and t else "",
                    "%.2fx" % pr if pr else "",
                    "%.0f" % m if m else "",
                    "%.2f" % (d / m) if d and m else ""))
        print("\nmemcpy: the same block order between a small buffer and a "
              "MAP_SHARED /dev/shm mapping (first write and rewrite share the "
              "seqwrite ceiling).\nraw: %s" % os.path.relpath(path))


if __name__ == "__main__":
    main()
