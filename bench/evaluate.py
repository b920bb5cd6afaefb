#!/usr/bin/env python3
"""bench/evaluate.py - the DaxFS paper's experiments side by side, in one command.

Run through bench/run (which builds everything first).  Writes under
bench/results/<timestamp>/: raw CSV (table2.csv, metadata.csv, xhost.csv,
footprint.csv), the fio JSON of every guest run (guest/), summary.md and PNG
plots.  See docs/benchmarks.md.

Parts (--only / --skip take their names):
  native     Table 2 rows on this machine: bench/fio/table2.fio through
             libdaxfs (io_bench -j) and through fio on tmpfs (/dev/shm), plus
             the copy ceiling of every row (memcpy, rep movsb, and for
             writes the streaming copy libdaxfs makes)
  meta       Figure 4 natively: create/stat/readdir/unlink of 1,000 files,
             libdaxfs vs tmpfs
  xnative    Figure 7 natively: 1, 2, 3 host processes inserting at once
  footprint  N hosts reading one dataset through daxfs vs N private copies
  guest      Table 2 and Figure 4 in one QEMU (TCG) guest: daxfs.ko vs tmpfs
             vs ext4 -o dax, the same job file
  xguest     Figure 7 across guests: 1, 2 guests (daxfs.ko) and 2 guests + a
             host process (libdaxfs) on one shared memory file
  fuse       Table 2 rows through a FUSE mount (daxfs mount): default,
             writeback_cache, splice, O_DIRECT (bench/fuse_bench.py); run it
             with native for the tmpfs and libdaxfs columns
"""
import argparse
import csv
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BIN = os.path.join(REPO, "build", "bench")
TOOLS = os.path.join(REPO, "build", "bin")
JOBFILE = os.path.join(HERE, "fio", "table2.fio")
sys.path.insert(0, os.path.join(REPO, "vm"))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)
import fuse_bench  # noqa: E402

PARTS = ["native", "meta", "xnative", "footprint", "guest", "xguest", "fuse"]

# Table 2 of the paper: section -> (label, DaxFS MiB/s, tmpfs MiB/s)
TABLE2 = [
    ("seqwrite-first-4k", "seq write 4K first", 1730, 1362),
    ("seqwrite-rewrite-4k", "seq write 4K rewrite", 1939, 1641),
    ("seqwrite-first-64k", "seq write 64K first", 2207, 1778),
    ("seqwrite-rewrite-64k", "seq write 64K rewrite", 2667, 2370),
    ("seqwrite-first-1m", "seq write 1M first", 2000, 1730),
    ("seqwrite-rewrite-1m", "seq write 1M rewrite", 2783, 2560),
    ("seqread-4k", "seq read 4K", 2667, 2462),
    ("seqread-64k", "seq read 64K", 3048, 3048),
    ("seqread-1m", "seq read 1M", 2133, 2462),
    ("randread-4k-1j", "rand read 4K, 1 job", 1730, 1524),
    ("randread-4k-4j", "rand read 4K, 4 jobs", 8000, 7111),
    ("randread-4k-8j", "rand read 4K, 8 jobs", 15564, 16486),
    ("randread-64k-4j", "rand read 64K, 4 jobs", 15052, 12800),
    ("randwrite-4k-1j", "rand write 4K, 1 job", 1255, 1333),
    ("randwrite-4k-4j", "rand write 4K, 4 jobs", 4830, 1803),
]
PAPER_RATIO = {"seqwrite-first-4k": 1.27, "seqwrite-rewrite-4k": 1.18,
               "seqwrite-first-64k": 1.24, "seqwrite-rewrite-64k": 1.13,
               "seqwrite-first-1m": 1.16, "seqwrite-rewrite-1m": 1.09,
               "seqread-4k": 1.08, "seqread-64k": 1.00, "seqread-1m": 0.87,
               "randread-4k-1j": 1.14, "randread-4k-4j": 1.13,
               "randread-4k-8j": 0.94, "randread-64k-4j": 1.18,
               "randwrite-4k-1j": 0.94, "randwrite-4k-4j": 2.68}
# Figure 4 of the paper (ms for 1,000 files; as printed there)
PAPER_META = {"stat": {"daxfs": 3528, "ext4dax": 3699, "tmpfs": 3764},
              "readdir": {"daxfs": 33.8, "tmpfs": 23.1, "ext4dax": 23.9}}

T0 = time.monotonic()


def log(msg):
    t = int(time.monotonic() - T0)
    print("[%02d:%02d] %s" % (t // 60, t % 60, msg), flush=True)


def sh(cmd, env=None, check=True, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=env, **kw)
    if check and r.returncode:
        sys.exit("FAILED (exit %d): %s\n%s" % (r.returncode, " ".join(cmd),
                                               r.stderr[-3000:]))
    return r


def sections():
    out = []
    for line in open(JOBFILE):
        m = re.match(r"^\[(.*)\]\s*$", line)
        if m and m.group(1) != "global":
            out.append(m.group(1))
    return out


def fio_json_rows(text):
    """[(section, MiB/s)] of a fio --output-format=json run of the job file: one
    reporting group per section (stonewall + group_reporting), all jobs summed"""
    d = json.loads(text[text.index("{"):])
    out = []
    for j in d["jobs"]:
        side = j["write"] if j["write"]["io_bytes"] else j["read"]
        out.append((j["jobname"], side["bw_bytes"] / 2**20))
    return out


def median(v):
    return statistics.median(v) if v else None


# ------------------------------------------------------------------ native
def part_native(cfg, rows):
    secs = sections()
    d = "/dev/shm/daxfs-bench-fio-%d" % os.getpid()
    env = dict(os.environ, DAXFS_BENCH_RUNTIME=cfg.native_runtime,
               DAXFS_BENCH_DIR=d)
    for rep in range(1, cfg.reps + 1):
        log("native rep %d/%d: libdaxfs + copy ceiling (io_bench -j, %d sections)"
            % (rep, cfg.reps, len(secs)))
        r = sh([os.path.join(BIN, "io_bench"), "-j", JOBFILE, "-c",
                "-f", "/dev/shm/daxfs-bench-io-%d" % os.getpid(),
                "-m", "/dev/shm/daxfs-bench-memcpy-%d" % os.getpid()], env=env)
        for rec in csv.DictReader(r.stdout.splitlines()):
            rows.append({"env": "native", "target": rec["suite"], "rep": rep,
                         "section": rec["test"], "mib_s": float(rec["mib_s"])})
        log("native rep %d/%d: fio on tmpfs (%s)" % (rep, cfg.reps, d))
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        r = sh(["fio", "--output-format=json", JOBFILE], env=env)
        for s, v in fio_json_rows(r.stdout):
            rows.append({"env": "native", "target": "tmpfs", "rep": rep,
                         "section": s, "mib_s": v})
        shutil.rmtree(d, ignore_errors=True)


def part_meta(cfg, rows):
    for rep in range(1, cfg.reps + 1):
        log("native metadata rep %d/%d: %d files, libdaxfs and tmpfs"
            % (rep, cfg.reps, cfg.nfiles))
        for target, args in (("daxfs", ["daxfs", "/dev/shm/daxfs-bench-meta-%d" % os.getpid()]),
                             ("tmpfs", ["posix", "/dev/shm/daxfs-bench-meta-dir-%d" % os.getpid()])):
            shutil.rmtree(args[1], ignore_errors=True)
            r = sh([os.path.join(BIN, "meta_bench")] + args + [str(cfg.nfiles)])
            for rec in csv.DictReader(r.stdout.splitlines()):
                rows.append({"env": "native", "target": target, "rep": rep,
                             "op": rec["op"], "n": int(rec["n"]),
                             "us_per_op": float(rec["us_per_op"])})


def parse_kv(text):
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def verify_xhost(region, peers):
    r = sh([os.path.join(BIN, "xhost_bench"), "verify", region, peers],
           check=False)
    kv = parse_kv(r.stdout)
    kv["verify_rc"] = r.returncode
    if r.returncode:
        log("  VERIFY FAILED (rc %d): %s %s" % (r.returncode, r.stdout, r.stderr))
    return kv


def part_xnative(cfg, rows, summ):
    for nh in (1, 2, 3):
        region = "/dev/shm/daxfs-bench-xh-%d" % os.getpid()
        sh([os.path.join(TOOLS, "mkfs.daxfs"), "-f", "-q", "-s", "2G", region])
        roles = ["H%d" % (i + 1) for i in range(nh)]
        peers = "+".join(roles)
        log("native cross-host: %d host process(es) inserting for %.1fs" %
            (nh, cfg.xnative_secs))
        ps = [subprocess.Popen([os.path.join(BIN, "xhost_bench"), "run", "daxfs",
                                region, r, peers, str(cfg.xnative_secs), "150000"],
                               stdout=subprocess.PIPE, text=True) for r in roles]
        for r, p in zip(roles, ps):
            out, _ = p.communicate()
            if p.returncode:
                sys.exit("xhost_bench %s failed" % r)
            rec = list(csv.DictReader(out.splitlines()))[0]
            rows.append({"env": "native", "config": "%d proc" % nh, "hosts": nh,
                         "role": r, "kind": "libdaxfs", "inserts": int(rec["inserts"]),
                         "seconds": float(rec["seconds"]), "rate": float(rec["rate"]),
                         "eexist": int(rec["eexist"])})
        kv = verify_xhost(region, peers)
        kv.update(env="native", config="%d proc" % nh, hosts=nh)
        summ.append(kv)
        os.unlink(region)
        log("  %s: lost names %s, lost records %s, CAS success %s" %
            (kv["config"], kv.get("lost_names"), kv.get("lost_records"),
             kv.get("cas_success")))


def smaps(pid):
    out = {}
    for line in open("/proc/%d/smaps_rollup" % pid):
        p = line.split()
        if len(p) >= 3 and p[2] == "kB":
            out[p[0].rstrip(":")] = int(p[1]) * 1024
    return out


def part_footprint(cfg, rows):
    import daxfs
    mib = cfg.fp_mib
    nfiles = 16
    src = "/dev/shm/daxfs-bench-fp-src-%d" % os.getpid()
    region = "/dev/shm/daxfs-bench-fp-%d" % os.getpid()
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    daxfs.mkfs(region, (mib + 64) << 20)
    blob = os.urandom((mib << 20) // nfiles)
    with daxfs.Region(region) as fs:
        fs.mkdir("/data")
        for i in range(nfiles):
            data = blob[i:] + blob[:i]
            fs.write_file("/data/part-%02d" % i, data)
            with open(os.path.join(src, "part-%02d" % i), "wb") as f:
                f.write(data)
    region_bytes = os.stat(region).st_blocks * 512
    src_bytes = sum(os.stat(os.path.join(src, f)).st_blocks * 512 for f in os.listdir(src))
    for n in cfg.fp_n:
        for mode in ("daxfs", "copy"):
            log("footprint: %d host(s), %s, %d MiB dataset" % (n, mode, mib))
            args = (["daxfs", region, "/data"] if mode == "daxfs" else ["copy", src])
            ps = [subprocess.Popen([os.path.join(BIN, "footprint_bench")] + args,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   text=True) for _ in range(n)]
            for p in ps:
                line = p.stdout.readline()
                if not line.startswith("ready"):
                    sys.exit("footprint_bench failed")
            sm = [smaps(p.pid) for p in ps]
            for p in ps:
                p.stdin.close()
                p.wait()
            tot = {k: sum(s.get(k, 0) for s in sm) for k in
                   ("Rss", "Pss", "Pss_Anon", "Pss_Shmem", "Pss_File")}
            backing = region_bytes if mode == "daxfs" else src_bytes
            rows.append({"hosts": n, "mode": mode, "dataset": mib << 20,
                         "backing_bytes": backing, "sum_rss": tot["Rss"],
                         "sum_pss": tot["Pss"], "sum_pss_anon": tot["Pss_Anon"],
                         "sum_pss_shmem": tot["Pss_Shmem"],
                         "total": backing + tot["Pss_Anon"]})
    os.unlink(region)
    shutil.rmtree(src, ignore_errors=True)


# ------------------------------------------------------------------ guests
def tail_progress(path, stop, prefix):
    """prints the guest's 'bench:' console lines while it runs"""
    pos = 0
    while not stop.is_set():
        try:
            with open(path, errors="replace") as f:
                f.seek(pos)
                data = f.read()
                pos = f.tell()
            for line in data.splitlines():
                if "DAXFS-VM: bench:" in line:
                    log(prefix + line.split("bench:", 1)[1].strip())
                elif "FAIL" in line:
                    log(prefix + line.strip())
        except OSError:
            pass
        stop.wait(2)


def part_guest(cfg, rows, meta_rows, outdir):
    from cluster import Cluster, Guest
    gdir = os.path.join(outdir, "guest")
    os.makedirs(gdir, exist_ok=True)
    secs = cfg.guest_sections or sections()
    nsec = len(secs)
    # generous: a full repetition takes about 4-6 min under TCG on 2 loaded cores
    tmo = int(cfg.reps * 3 * (nsec * 15 + 120)) + 300
    ext4 = "/dev/shm/daxfs-bench-ext4-%d" % os.getpid()
    with Cluster(label="bench-table2", size="512M", extra_shm=[ext4],
                 timeout=tmo) as c:
        sh([os.path.join(TOOLS, "mkfs.daxfs"), "-f", "-q", str(c.shm)])
        g = Guest("A", "daxfs-bench", ["table2", str(cfg.reps), cfg.guest_runtime,
                                       str(cfg.nfiles), "daxfs+tmpfs+ext4dax",
                                       "+".join(cfg.guest_sections or ["all"])],
                  cpus=2, mem="2G", outdir=gdir)
        log("guest: booting one QEMU TCG guest (2 vCPUs, 2 GiB, two 512 MiB nvdimms)")
        old = os.path.join(c.log_dir, "A.log")
        if os.path.exists(old):
            os.unlink(old)
        stop = threading.Event()
        th = threading.Thread(target=tail_progress,
                              args=(os.path.join(c.log_dir, "A.log"), stop, "guest: "),
                              daemon=True)
        th.start()
        res = c.run([g])
        stop.set()
        th.join()
        shutil.copy(res.guests["A"].log_path, os.path.join(gdir, "console.log"))
        if not res.ok:
            log("GUEST RUN FAILED (results so far are kept):\n" + res.summary())
            cfg.failures.append("guest Table 2 run: rc %d, see guest/console.log"
                                % res.guests["A"].rc)
    for f in sorted(os.listdir(gdir)):
        m = re.match(r"fio-(\w+)-(\d+)\.json$", f)
        if m:
            for s, v in fio_json_rows(open(os.path.join(gdir, f)).read()):
                rows.append({"env": "guest", "target": m.group(1), "rep": int(m.group(2)),
                             "section": s, "mib_s": v})
        m = re.match(r"meta-(\w+)-(\d+)\.csv$", f)
        if m:
            for rec in csv.DictReader(open(os.path.join(gdir, f))):
                meta_rows.append({"env": "guest", "target": m.group(1),
                                  "rep": int(m.group(2)), "op": rec["op"],
                                  "n": int(rec["n"]), "us_per_op": float(rec["us_per_op"])})


def part_xguest(cfg, rows, summ, outdir):
    from cluster import Cluster, Guest
    configs = cfg.xguest_configs
    for roles in configs:
        peers = "+".join(roles)
        gdir = os.path.join(outdir, "xguest-" + peers.replace("+", ""))
        os.makedirs(gdir, exist_ok=True)
        with Cluster(label="bench-xhost-" + peers.replace("+", ""), size="1G",
                     timeout=int(cfg.xguest_secs) + 240) as c:
            sh([os.path.join(TOOLS, "mkfs.daxfs"), "-f", "-q", str(c.shm)])
            guests = [Guest(r, "daxfs-bench", ["xhost", r, peers, str(cfg.xguest_secs),
                                               "400000"], outdir=gdir)
                      for r in roles if r != "H"]
            host_cmd = None
            if "H" in roles:
                # the host process is ~50x faster than a TCG guest: paced, so that it
                # contends for the whole window without filling the region
                host_cmd = [os.path.join(BIN, "xhost_bench"), "run", "daxfs", str(c.shm),
                            "H", peers, str(cfg.xguest_secs),
                            str(int(cfg.h_pace * cfg.xguest_secs)), "paced"]
            log("cross-host: %s (%d host(s)), %ss of inserts each" %
                (peers, len(roles), cfg.xguest_secs))
            stop = threading.Event()
            ths = [threading.Thread(target=tail_progress,
                                    args=(os.path.join(c.log_dir, g.name + ".log"),
                                          stop, "  guest %s: " % g.name), daemon=True)
                   for g in guests]
            for g in guests:
                old = os.path.join(c.log_dir, g.name + ".log")
                if os.path.exists(old):
                    os.unlink(old)
            for t in ths:
                t.start()
            res = c.run(guests, host_cmd=host_cmd)
            stop.set()
            for g in res.guests.values():
                shutil.copy(g.log_path, os.path.join(gdir, g.name + ".console.log"))
            if not res.ok:
                why = []
                for g in res.guests.values():
                    why += [l.split("FAIL:", 1)[1].strip() for l in g.log.splitlines()
                            if "FAIL:" in l]
                    why += [l.strip() for l in g.log.splitlines() if "daxfs: phys" in l
                            and ("EUCLEAN" in l or "error" in l)]
                if res.host and res.host.rc:
                    why.append("host H: " + res.host.output.strip()[-300:])
                msg = "%s: %s" % (peers, "; ".join(why) or "failed")
                log("  CROSS-HOST RUN FAILED: " + msg)
                cfg.failures.append("cross-host " + msg)
            for r in roles:
                if r == "H":
                    text = res.host.output if res.host else ""
                else:
                    f = os.path.join(gdir, "xhost-%s.csv" % r)
                    text = open(f).read() if os.path.exists(f) else ""
                recs = list(csv.DictReader(text.strip().splitlines()))
                if not recs or "inserts" not in recs[0]:
                    continue
                rec = recs[0]
                rows.append({"env": "guest", "config": peers, "hosts": len(roles),
                             "role": r, "kind": ("libdaxfs, paced %d/s" % cfg.h_pace) if r == "H"
                             else "daxfs.ko (TCG)",
                             "inserts": int(rec["inserts"]), "seconds": float(rec["seconds"]),
                             "rate": float(rec["rate"]), "eexist": int(rec["eexist"])})
            kv = verify_xhost(str(c.shm), peers) if res.ok else {"verify_rc": "not run"}
            kv.update(env="guest", config=peers, hosts=len(roles), ok=res.ok)
            fk = sh([os.path.join(TOOLS, "fsck.daxfs"), "-n", str(c.shm)], check=False)
            kv["fsck_rc"] = fk.returncode
            open(os.path.join(gdir, "fsck.txt"), "w").write(fk.stdout + fk.stderr)
            summ.append(kv)
            log("  %s: lost names %s, lost records %s, dup %s/%s, CAS success %s, fsck.daxfs -n rc %d" %
                (peers, kv.get("lost_names"), kv.get("lost_records"), kv.get("dup_names"),
                 kv.get("dup_records"), kv.get("cas_success"), fk.returncode))


# ------------------------------------------------------------------ report
def write_csv(path, rows):
    if not rows:
        return
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


def med(rows, env, target, section, key="section", val="mib_s"):
    return median([r[val] for r in rows if r["env"] == env and r["target"] == target
                   and r[key] == section])


def ceiling(rows, section):
    """The native copy ceiling of a row: the fastest of memcpy, one
    `rep movsb` per block (io_bench's movsb suite, x86-64) and, for
    writes, the streaming copy libdaxfs makes (its ntcopy suite)."""
    v = [m for m in (med(rows, "native", t, section)
                     for t in ("memcpy", "movsb", "ntcopy")) if m]
    return max(v) if v else None


def rep_ratios(rows, env, a, b, section):
    """per-repetition ratios a/b (both measured in the same repetition)"""
    va = {r["rep"]: r["mib_s"] for r in rows if r["env"] == env and r["target"] == a
          and r["section"] == section}
    vb = {r["rep"]: r["mib_s"] for r in rows if r["env"] == env and r["target"] == b
          and r["section"] == section}
    return [va[k] / vb[k] for k in va if k in vb and vb[k]]


def f0(x):
    return "" if x is None else "{:,.0f}".format(x)


def fr(x):
    return "" if x is None else "%.2fx" % x


def ratio(a, b):
    return a / b if a is not None and b else None


def rng(v):
    return "%.2f-%.2f" % (min(v), max(v)) if len(v) > 1 else ""


def machine():
    from run import cpu_model   # bench/run.py, beside this file
    model = cpu_model()
    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = ["?"]
    return "nproc %d, %s, kernel %s, load average %s" % (
        os.cpu_count(), model, platform.release(), " ".join(load))


def summary(cfg, t2, meta, xh, xsum, fp, outdir, started):
    L = []
    p = L.append
    p("# DaxFS evaluation, %s\n" % started)
    p("* command: `%s`" % cfg.command.strip())
    p("* machine: %s" % cfg.machine)
    p("* source: %s" % cfg.source)
    p("* mode: %s; %d repetitions; timed fio sections %s in the guest, %s natively; "
      "medians over repetitions" % ("quick" if cfg.quick else "full", cfg.reps,
                                    cfg.guest_runtime, cfg.native_runtime))
    p("* duration: %.1f min\n" % ((time.monotonic() - T0) / 60))
    if cfg.failures:
        p("**Failures in this run:**\n")
        for f in cfg.failures:
            p("* " + f)
        p("")
    secs = [s for s, *_ in TABLE2]
    if any(r["env"] == "guest" for r in t2):
        p("## Table 2 in one QEMU guest (TCG: emulated, compare ratios only)\n")
        p("fio %s, `bench/fio/table2.fio`, sync engine, 64 MiB file; daxfs.ko "
          "(phys= mount of nvdimm 0), tmpfs, ext4 -o dax (fsdax nvdimm 1), all in one "
          "guest run. MiB/s are medians; ratios are of the medians, with the range of the "
          "per-repetition ratios.\n" % ("3.33"))
        p("| row | daxfs | tmpfs | ext4-dax | daxfs/tmpfs | (range) | daxfs/ext4-dax | (range) | paper daxfs/tmpfs |")
        p("|---|---|---|---|---|---|---|---|---|")
        for s, label, _, _ in TABLE2:
            d, t, e = (med(t2, "guest", x, s) for x in ("daxfs", "tmpfs", "ext4dax"))
            p("| %s | %s | %s | %s | %s | %s | %s | %s | %.2fx |" % (
                label, f0(d), f0(t), f0(e), fr(ratio(d, t)),
                rng(rep_ratios(t2, "guest", "daxfs", "tmpfs", s)), fr(ratio(d, e)),
                rng(rep_ratios(t2, "guest", "daxfs", "ext4dax", s)), PAPER_RATIO[s]))
        p("")
    if any(r["env"] == "native" for r in t2):
        p("## Table 2 natively: libdaxfs vs tmpfs (fio), with the copy ceiling\n")
        p("The same job file: fio runs it on tmpfs (/dev/shm); `io_bench -j` runs it "
          "through libdaxfs (no system call); the copy ceiling runs each row's block "
          "order and thread count between private buffers and a MAP_SHARED /dev/shm "
          "mapping, as memcpy, as one `rep movsb` per block and (writes) as the "
          "streaming copy libdaxfs makes, and takes the fastest.\n")
        p("| row | daxfs (libdaxfs) | tmpfs (fio) | copy ceiling | daxfs/tmpfs | (range) | daxfs/ceiling | tmpfs/ceiling | paper daxfs/tmpfs |")
        p("|---|---|---|---|---|---|---|---|---|")
        for s, label, _, _ in TABLE2:
            d, t = (med(t2, "native", x, s) for x in ("daxfs", "tmpfs"))
            m = ceiling(t2, s)
            p("| %s | %s | %s | %s | %s | %s | %s | %s | %.2fx |" % (
                label, f0(d), f0(t), f0(m), fr(ratio(d, t)),
                rng(rep_ratios(t2, "native", "daxfs", "tmpfs", s)),
                "%.2f" % ratio(d, m) if ratio(d, m) else "",
                "%.2f" % ratio(t, m) if ratio(t, m) else "", PAPER_RATIO[s]))
        p("")
    if any(r["target"] == "fuse" for r in t2):
        fuse_bench.summary(p, TABLE2, lambda t, s: med(t2, "native", t, s), f0, fr, ratio)
    if meta:
        p("## Metadata (Figure 4): %d files in one directory, microseconds per file "
          "(readdir: per listing of the whole directory)\n" % cfg.nfiles)
        for env, targets in (("guest", ("daxfs", "tmpfs", "ext4dax")),
                             ("native", ("daxfs", "tmpfs"))):
            if not any(r["env"] == env for r in meta):
                continue
            p("%s:\n" % ("In the guest (TCG; daxfs.ko, tmpfs, ext4 -o dax)" if env == "guest"
                         else "Natively (libdaxfs vs tmpfs through system calls)"))
            p("| op | " + " | ".join(targets) + " | " +
              " | ".join("daxfs/" + t for t in targets[1:]) + " |")
            p("|---" * (2 * len(targets)) + "|")
            for op in ("create", "stat", "readdir", "unlink"):
                v = [med(meta, env, t, op, key="op", val="us_per_op") for t in targets]
                p("| %s | %s | %s |" % (op, " | ".join("%.1f" % x if x else "" for x in v),
                                        " | ".join(fr(ratio(v[0], x)) for x in v[1:])))
            p("")
    if xh:
        p("## Cross-host inserts (Figure 7)\n")
        p("Each host creates files in one shared directory and appends a 16-byte record "
          "per file to one shared file (O_APPEND: range reserved by CAS). Guests use their "
          "daxfs.ko mount (TCG, emulated speed); H is a host process using libdaxfs on the "
          "shared memory file. Lost = reported by a host but missing afterwards.\n")
        p("| setup | hosts | inserts/s per host | total inserts/s | CAS success | lost names | "
          "lost records | duplicates | spurious EEXIST | fsck |")
        p("|---|---|---|---|---|---|---|---|---|---|")
        for kv in xsum:
            per = [r for r in xh if r["env"] == kv["env"] and r["config"] == kv["config"]]
            p("| %s %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                kv["env"], kv["config"], kv["hosts"],
                ", ".join("%s %s" % (r["role"], f0(r["rate"])) for r in per),
                f0(sum(r["rate"] for r in per)),
                ("%.4f" % float(kv["cas_success"]) if kv.get("cas_success") else
                 "FAILED" if kv.get("ok") is False else "?"),
                kv.get("lost_names", "?"), kv.get("lost_records", "?"),
                "%s/%s" % (kv.get("dup_names", "?"), kv.get("dup_records", "?")),
                sum(r.get("eexist", 0) for r in per),
                "" if "fsck_rc" not in kv else ("clean" if kv["fsck_rc"] == 0 else
                                                "rc %s" % kv["fsck_rc"])))
        p("\nCAS success = published overlay keys / (published keys + the core's CAS "
          "failures), both from the state page (`stat_inserts`, `stat_cas_fail`) after "
          "the run.\n")
    if fp:
        p("## Footprint: N hosts reading one %d MiB dataset\n" % cfg.fp_mib)
        p("daxfs: N processes, each its own host (libdaxfs), read every file of the "
          "dataset from one region file in /dev/shm. copies: N processes each read the "
          "dataset into private memory (what N machines or VMs with their own page cache "
          "or tmpfs hold). total = the shared file's allocated bytes (region, or the "
          "source copy) + the processes' summed anonymous PSS. MiB.\n")
        p("| hosts | daxfs total | copies total | copies/daxfs | daxfs sum PSS | copies sum PSS |")
        p("|---|---|---|---|---|---|")
        for n in cfg.fp_n:
            d = next(r for r in fp if r["hosts"] == n and r["mode"] == "daxfs")
            c = next(r for r in fp if r["hosts"] == n and r["mode"] == "copy")
            p("| %d | %.1f | %.1f | %.2fx | %.1f | %.1f |" % (
                n, d["total"] / 2**20, c["total"] / 2**20, c["total"] / d["total"],
                d["sum_pss"] / 2**20, c["sum_pss"] / 2**20))
        p("")
    p("Raw data: `table2.csv`, `metadata.csv`, `xhost.csv`, `xhost_verify.csv`, "
      "`footprint.csv`, guest fio JSON and console logs in `guest/`.\n")
    return "\n".join(L)


def plots(cfg, t2, meta, xh, xsum, fp, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing: no plots (pip install -r bench/requirements.txt)")
        return []
    made = []
    labels = [l for _, l, _, _ in TABLE2]
    secs = [s for s, *_ in TABLE2]
    y = list(range(len(secs)))[::-1]
    if any(r["env"] == "guest" for r in t2):
        fig, ax = plt.subplots(figsize=(9, 7))
        rt = [ratio(med(t2, "guest", "daxfs", s), med(t2, "guest", "tmpfs", s)) or 0 for s in secs]
        re_ = [ratio(med(t2, "guest", "daxfs", s), med(t2, "guest", "ext4dax", s)) or 0 for s in secs]
        ax.barh([v + 0.2 for v in y], rt, 0.4, label="daxfs.ko / tmpfs")
        ax.barh([v - 0.2 for v in y], re_, 0.4, label="daxfs.ko / ext4-dax")
        ax.scatter([PAPER_RATIO[s] for s in secs], [v + 0.2 for v in y], marker="|",
                   s=200, color="k", label="paper DaxFS / tmpfs", zorder=3)
        ax.axvline(1, color="grey", lw=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels(labels)
        ax.set_xlabel("throughput ratio (>1: daxfs faster)")
        ax.set_title("Table 2 in one QEMU TCG guest (ratios only; medians of %d)" % cfg.reps)
        ax.legend(loc="lower right")
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "table2_guest.png"), dpi=110)
        made.append("table2_guest.png")
        plt.close(fig)
    if any(r["env"] == "native" for r in t2):
        fig, ax = plt.subplots(figsize=(9, 7))
        for i, (tg, name) in enumerate((("daxfs", "daxfs (libdaxfs)"), ("tmpfs", "tmpfs (fio)"),
                                        (None, "copy ceiling"))):
            ax.barh([v + 0.27 - 0.27 * i for v in y],
                    [(ceiling(t2, s) if tg is None else med(t2, "native", tg, s)) or 0
                     for s in secs], 0.27, label=name)
        ax.set_yticks(y)
        ax.set_yticklabels(labels)
        ax.set_xlabel("MiB/s (median of %d)" % cfg.reps)
        ax.set_title("Table 2 natively (%d CPUs)" % os.cpu_count())
        ax.legend(loc="lower right")
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "table2_native.png"), dpi=110)
        made.append("table2_native.png")
        plt.close(fig)
    if meta:
        fig, axs = plt.subplots(1, 4, figsize=(12, 3.6))
        for ax, op in zip(axs, ("create", "stat", "readdir", "unlink")):
            names, vals = [], []
            for env in ("guest", "native"):
                for t in ("daxfs", "tmpfs", "ext4dax"):
                    v = med(meta, env, t, op, key="op", val="us_per_op")
                    if v:
                        names.append("%s\n%s" % (t, env))
                        vals.append(v)
            ax.bar(range(len(vals)), vals,
                   color=["C0" if n.startswith("daxfs") else "C1" if n.startswith("tmpfs")
                          else "C2" for n in names])
            ax.set_xticks(range(len(vals)))
            ax.set_xticklabels(names, fontsize=7)
            ax.set_yscale("log")
            ax.set_title(op + (" (per listing)" if op == "readdir" else " (per file)"))
            ax.set_ylabel("µs")
        fig.suptitle("Metadata, %d files (guest = TCG, emulated)" % cfg.nfiles)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "metadata.png"), dpi=110)
        made.append("metadata.png")
        plt.close(fig)
    if xsum:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
        failed = [kv for kv in xsum if not kv.get("cas_success")]
        for env, mk in (("guest", "o-"), ("native", "s-")):
            ks = [kv for kv in xsum if kv["env"] == env and kv.get("cas_success")]
            if not ks:
                continue
            hs = [kv["hosts"] for kv in ks]
            tot = [sum(r["rate"] for r in xh if r["env"] == env and r["config"] == kv["config"])
                   for kv in ks]
            a1.plot(hs, tot, mk, label="%s (%s)" % (env, ", ".join(kv["config"] for kv in ks)))
            if env == "guest":
                gonly = [sum(r["rate"] for r in xh if r["env"] == env and
                             r["config"] == kv["config"] and r["role"] != "H") for kv in ks]
                a1.plot(hs, gonly, "o--", label="guests only (daxfs.ko, TCG)")
            a2.plot(hs, [float(kv.get("cas_success", 0)) for kv in ks], mk, label=env)
        a1.set_yscale("log")
        a1.set_xlabel("hosts")
        a1.set_ylabel("inserts/s (all hosts)")
        a1.set_xticks([1, 2, 3])
        a1.legend(fontsize=7)
        a1.set_title("overlay inserts (create + CAS append)")
        a2.set_xlabel("hosts")
        a2.set_ylabel("CAS success rate")
        a2.set_xticks([1, 2, 3])
        a2.axhline(0.99, color="grey", lw=0.8, ls="--")
        a2.set_ylim(0.95, 1.001)
        a2.legend()
        a2.set_title("CAS success (paper: >0.99); lost updates: %d%s" % (
            sum(int(kv.get("lost_names") or 0) + int(kv.get("lost_records") or 0)
                for kv in xsum),
            "; FAILED: " + ", ".join(kv["config"] for kv in failed) if failed else ""),
            fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "xhost.png"), dpi=110)
        made.append("xhost.png")
        plt.close(fig)
    if fp:
        fig, ax = plt.subplots(figsize=(6, 4))
        for mode, name in (("daxfs", "one daxfs region"), ("copy", "N private copies")):
            rs = [r for r in fp if r["mode"] == mode]
            ax.plot([r["hosts"] for r in rs], [r["total"] / 2**20 for r in rs], "o-", label=name)
        ax.set_xlabel("hosts reading the dataset")
        ax.set_ylabel("MiB")
        ax.set_title("Memory for a %d MiB dataset" % cfg.fp_mib)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "footprint.png"), dpi=110)
        made.append("footprint.png")
        plt.close(fig)
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke run (< 5 min): 1 repetition, short runs")
    ap.add_argument("--reps", type=int, help="repetitions (default 5, quick 1)")
    ap.add_argument("--only", default="", help="comma list of parts: " + ",".join(PARTS))
    ap.add_argument("--skip", default="", help="comma list of parts to leave out")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--command", default="bench/run", help=argparse.SUPPRESS)
    cfg = ap.parse_args()
    q = cfg.quick
    cfg.reps = cfg.reps or (1 if q else 5)
    cfg.guest_runtime = "300ms" if q else "2s"
    cfg.native_runtime = "200ms" if q else "1s"
    cfg.nfiles = 1000
    cfg.xnative_secs = 0.5 if q else 2
    cfg.xguest_secs = 3 if q else 10
    cfg.fp_n = [1, 2, 4] if q else [1, 2, 4, 8]
    # quick: a few guest sections (one of each kind) and only the 3-host setup
    cfg.guest_sections = (["seqwrite-first-1m", "seqwrite-rewrite-1m", "seqread-1m",
                           "layout", "randread-4k-1j", "randwrite-4k-1j"] if q else None)
    cfg.xguest_configs = ([["A", "B", "H"]] if q else [["A"], ["A", "B"], ["A", "B", "H"]])
    cfg.fp_mib = 32 if q else 64
    cfg.h_pace = 5000          # inserts/s of the host process among the guests
    cfg.machine = machine()
    cfg.failures = []
    r = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    cfg.source = os.environ.get("DAXFS_BENCH_SOURCE") or (
        ("git %s" % r.stdout.strip()) if r.returncode == 0 else REPO)
    only = set(filter(None, cfg.only.split(","))) or set(PARTS)
    skip = set(filter(None, cfg.skip.split(",")))
    bad = (only | skip) - set(PARTS)
    if bad:
        sys.exit("unknown part(s): %s (parts: %s)" % (",".join(bad), ",".join(PARTS)))
    parts = [x for x in PARTS if x in only and x not in skip]
    started = time.strftime("%Y-%m-%d %H:%M %Z")
    outdir = os.path.join(cfg.out, time.strftime("%Y%m%d-%H%M%S") + ("-quick" if q else ""))
    os.makedirs(outdir, exist_ok=True)
    log("DaxFS evaluation (%s): parts %s; results in %s" %
        ("quick" if q else "full", ",".join(parts), os.path.relpath(outdir, REPO)))
    log("machine: " + cfg.machine)
    if {"guest", "xguest"} & set(parts):
        import cluster
        miss = cluster.missing_prerequisites()
        if miss:
            sys.exit("cannot boot guests (run vm/setup.sh): " + ", ".join(miss))
    t2, meta, xh, xsum, fp = [], [], [], [], []
    calls = {"native": lambda: part_native(cfg, t2),
             "meta": lambda: part_meta(cfg, meta),
             "xnative": lambda: part_xnative(cfg, xh, xsum),
             "footprint": lambda: part_footprint(cfg, fp),
             "guest": lambda: part_guest(cfg, t2, meta, outdir),
             "xguest": lambda: part_xguest(cfg, xh, xsum, outdir),
             "fuse": lambda: fuse_bench.run(cfg, t2, JOBFILE, sh, fio_json_rows, log)}
    for part in parts:
        try:
            calls[part]()
        except (Exception, SystemExit) as e:      # keep the other parts' results
            import traceback
            traceback.print_exc()
            log("PART %s FAILED: %r" % (part, e))
            cfg.failures.append("part %s: %r" % (part, e))
    write_csv(os.path.join(outdir, "table2.csv"), t2)
    write_csv(os.path.join(outdir, "metadata.csv"), meta)
    write_csv(os.path.join(outdir, "xhost.csv"), xh)
    write_csv(os.path.join(outdir, "xhost_verify.csv"), xsum)
    write_csv(os.path.join(outdir, "footprint.csv"), fp)
    made = plots(cfg, t2, meta, xh, xsum, fp, outdir)
    md = summary(cfg, t2, meta, xh, xsum, fp, outdir, started)
    if made:
        md += "\n" + "\n".join("![%s](%s)" % (m[:-4], m) for m in made) + "\n"
    open(os.path.join(outdir, "summary.md"), "w").write(md)
    latest = os.path.join(cfg.out, "latest")
    try:
        if os.path.islink(latest):
            os.unlink(latest)
        os.symlink(os.path.basename(outdir), latest)
    except OSError:
        pass
    print()
    print(md)
    log("done: %s (summary.md, %d CSV, %d PNG)" % (
        os.path.relpath(outdir, REPO),
        len([f for f in os.listdir(outdir) if f.endswith(".csv")]), len(made)))
    lost = sum(int(kv.get("lost_names", 0)) + int(kv.get("lost_records", 0)) +
               int(kv.get("dup_names", 0)) + int(kv.get("dup_records", 0)) for kv in xsum)
    if lost or any(kv.get("verify_rc") for kv in xsum):
        log("LOST OR DUPLICATED UPDATES, OR A FAILED CROSS-HOST RUN: see xhost_verify.csv")
        return 1
    if cfg.failures:
        log("FAILURES: " + "; ".join(cfg.failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
