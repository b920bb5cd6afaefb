"""bench/fuse_bench.py - the Table 2 job file on a FUSE mount (docs/fuse.md),
for bench/evaluate.py's "fuse" part: the FUSE cost next to tmpfs and libdaxfs
(the "native" part, same run), and what libfuse's writeback cache, splice,
O_DIRECT, -o noxattr (one request per write(2) instead of two) and clone_fd
(a /dev/fuse descriptor per worker) do to it.  Each configuration mounts a fresh region with
build/bin/daxfs-fuse and runs fio on it.
"""
import os
import shutil
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TOOLS = os.path.join(REPO, "build", "bin")

# target -> (daxfs-fuse -o options, extra fio arguments)
CONFIGS = [
    ("fuse", [], []),
    ("fuse-wb", ["writeback_cache"], []),
    ("fuse-splice", ["splice_read", "splice_write", "splice_move"], []),
    ("fuse-direct", [], ["--direct=1"]),
    ("fuse-noxattr", ["noxattr"], []),
    ("fuse-clonefd", ["clone_fd"], []),
]
TARGETS = [c[0] for c in CONFIGS]


def _mounted(mp):
    with open("/proc/mounts") as f:
        return any(line.split()[1] == mp for line in f)


def _mount(region, opts):
    mp = tempfile.mkdtemp(prefix="daxfs-bench-fuse-")
    cmd = [os.path.join(TOOLS, "daxfs-fuse"), "-f", "-r", region]
    for o in opts:
        cmd += ["-o", o]
    proc = subprocess.Popen(cmd + [mp], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not _mounted(mp):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("daxfs-fuse did not mount: %s" % proc.stderr.read())
        time.sleep(0.02)
    return mp, proc


def _umount(mp, proc):
    subprocess.run(["fusermount3", "-u", mp], check=False)
    proc.wait(timeout=60)
    shutil.rmtree(mp, ignore_errors=True)


def run(cfg, rows, jobfile, sh, fio_json_rows, log):
    """Adds {env: native, target: fuse*, rep, section, mib_s} rows."""
    if not os.access(os.path.join(TOOLS, "daxfs-fuse"), os.X_OK):
        raise RuntimeError("build/bin/daxfs-fuse is not built (libfuse3-dev, make)")
    region = "/dev/shm/daxfs-bench-fuse-%d" % os.getpid()
    for rep in range(1, cfg.reps + 1):
        for target, opts, fio_args in CONFIGS:
            log("fuse rep %d/%d: fio on a FUSE mount (%s)" % (rep, cfg.reps, target))
            sh([os.path.join(TOOLS, "mkfs.daxfs"), "-f", "-s", "1G", region])
            mp, proc = _mount(region, opts)
            try:
                d = os.path.join(mp, "bench")
                os.mkdir(d)
                env = dict(os.environ, DAXFS_BENCH_RUNTIME=cfg.native_runtime,
                           DAXFS_BENCH_DIR=d)
                r = sh(["fio", "--output-format=json"] + fio_args + [jobfile], env=env)
                for s, v in fio_json_rows(r.stdout):
                    rows.append({"env": "native", "target": target, "rep": rep,
                                 "section": s, "mib_s": v})
            finally:
                _umount(mp, proc)
                os.unlink(region)


def summary(p, table2, med, f0, fr, ratio):
    """The FUSE table of summary.md (p appends a line)."""
    p("## Table 2 natively through FUSE (`daxfs mount`), beside tmpfs and libdaxfs\n")
    p("The same job file, fio on a FUSE mount of a fresh region: default options "
      "(page cache, write-through), `-o writeback_cache`, `-o splice_read,splice_write,"
      "splice_move`, fio `--direct=1` (O_DIRECT: no page cache), `-o noxattr` and "
      "`-o clone_fd`. tmpfs and libdaxfs "
      "are the native part's columns, measured in the same run.\n")
    cols = ["daxfs", "tmpfs"] + TARGETS
    p("| row | libdaxfs | tmpfs | " + " | ".join(TARGETS) + " | fuse/tmpfs | fuse/libdaxfs |")
    p("|---" * (len(cols) + 3) + "|")
    for s, label, _, _ in table2:
        v = {t: med(t, s) for t in cols}
        p("| %s | %s | %s | %s |" % (label, " | ".join(f0(v[t]) for t in cols),
                                     fr(ratio(v["fuse"], v["tmpfs"])),
                                     fr(ratio(v["fuse"], v["daxfs"]))))
    p("")
