"""Power-failure states (docs/testing.md "Power-failure states").

One process is the only host of a small region and runs a crashlib
workload through the traced build of libdaxfs (`make pmem`,
lib/pmem-trace.c), which keeps a "media" copy of the region: only cache
lines flushed and then drained reach it.  A crash state is the media plus
a random subset of the lines stored but not yet on it.  States are taken
after each operation returned and, inside operations, at every Nth
drain.  Each state is then checked as a separate image, in the same
process (the image is not traced: only the first region is):

  * a new host joins, waits out the dead writer's lease and recovers it;
  * the tree is what the mode promises (check_state);
  * fsck.daxfs -n is clean.

Run as a script for a longer run: python3 powerfail.py MODE SEED NOPS.
"""

import ctypes
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PMEM_LIB = os.path.join(REPO, "build", "pmem", "libdaxfs.so")

LEASE_MS = 40
SIZE = 8 << 20
RUN = 2 << 20


def _tracer():
    import daxfs
    lib = daxfs._lib.lib()
    lib.daxfs_pmem_crash_image.restype = ctypes.c_int64
    lib.daxfs_pmem_crash_image.argtypes = [ctypes.c_char_p, ctypes.c_uint,
                                           ctypes.c_uint64]
    lib.daxfs_pmem_auto.restype = None
    lib.daxfs_pmem_auto.argtypes = [ctypes.c_char_p, ctypes.c_uint64,
                                    ctypes.c_uint, ctypes.c_uint64]
    lib.daxfs_pmem_label.restype = None
    lib.daxfs_pmem_label.argtypes = [ctypes.c_uint64]
    return lib


def fsck(path, mode):
    """(exit code, problem codes) of fsck.daxfs MODE --json path."""
    exe = os.path.join(REPO, "build", "bin", "fsck.daxfs")
    res = subprocess.run([exe, mode, "--json", path], capture_output=True,
                         text=True, timeout=120)
    rep = json.loads(res.stdout)
    return res.returncode, sorted({p["code"] for p in rep["problems"]})


def recover(path, check):
    """Joins the image as a new host, recovers the dead writer, runs
    check(region) and leaves.  Returns check's answer."""
    import daxfs
    r = daxfs.Region(path)
    try:
        time.sleep(LEASE_MS / 1000 * 1.5)
        r.reclaim()
        # the writer's slot must be recovered before the tree is judged
        for _ in range(100):
            if all(h["state"] != "alive" or h["self"]
                   for h in r.info()["hosts"]):
                break
            time.sleep(LEASE_MS / 1000)
            r.reclaim()
        return check(r)
    finally:
        r.close()


class Run:
    """One workload in one mode; states land in workdir."""

    def __init__(self, region, workdir, mode, seed, nops, every=7,
                 permille=500, ops=None):
        self.region = region
        self.workdir = workdir
        self.mode = mode
        self.seed = seed
        self.nops = nops
        self.every = every
        self.permille = permille
        self.ops = ops
        self.states = 0
        self.problems = []
        self.fsck = {}
        self.fsck_codes = set()

    def states_of(self, label):
        pre = "auto."
        out = []
        for fn in os.listdir(self.workdir):
            if fn.startswith(pre) and fn.endswith(".%d" % label):
                out.append(os.path.join(self.workdir, fn))
        return sorted(out)

    def check(self, path, ops, done, inflight):
        """Recovery, the mode's promise on the tree, then fsck -n.  A
        state taken after a call returned must be clean; one taken inside
        a call is counted by what fsck says (self.fsck: 'clean',
        'repaired' when -y fixes it, else 'broken')."""
        import crashlib as cl

        def may_tear(op):
            # strict: an append or a pwrite (over existing bytes too:
            # out of place, format 7) is all or nothing after a power
            # loss; write_file and truncate are several calls or none
            return self.mode != "strict" or op[0] not in ("append",
                                                          "pwrite")

        def tree_ok(r):
            if self.mode == "posix":
                return None	# posix promises structure only (fsck)
            try:
                cl.check_victim(r, ops, done, inflight, may_tear)
            except (AssertionError, OSError) as e:
                return "%s: %s" % (type(e).__name__, e)
            return None
        label = os.path.basename(path)
        err = recover(path, tree_ok)
        self.states += 1
        code, codes = fsck(path, "-n")
        verdict = "clean"
        if code:
            verdict = "broken"
            if code == 4 and fsck(path, "-y")[0] == 1 and \
                    fsck(path, "-n")[0] == 0:
                verdict = "repaired"
            self.fsck_codes.update(codes)
        self.fsck[verdict] = self.fsck.get(verdict, 0) + 1
        # sync: a returned call leaves a clean state; inside a call, and
        # in posix mode (docs/modes.md), fsck -y must be able to repair
        strict_fsck = inflight is None and self.mode != "posix"
        if not err and code and (strict_fsck or verdict == "broken"):
            err = "fsck -n exit %d %s (%s)" % (code, codes, verdict)
        if err and os.environ.get("PF_KEEP"):
            os.rename(path, os.path.join(os.environ["PF_KEEP"],
                                         os.path.basename(path)))
            path = None
        if err:
            self.problems.append("%s (done %d, in flight %r): %s" %
                                 (label, done, inflight, err))
        if path:
            os.unlink(path)

    def run(self):
        import crashlib as cl
        import daxfs
        lib = _tracer()
        ops = self.ops or cl.gen_ops(self.seed, self.nops, "/v")
        r = daxfs.Region(self.region, persistent=True,
                         sync=self.mode != "posix",
                         strict=self.mode == "strict")
        lib.daxfs_pmem_auto(os.path.join(self.workdir, "auto").encode(),
                            self.every, self.permille, self.seed)
        held = {}
        for i, op in enumerate(ops):
            lib.daxfs_pmem_label(i)
            cl.do_op(r, op, held)
            lib.daxfs_pmem_auto(b"", 0, 0, 0)	# no states while we check
            for path in self.states_of(i):
                self.check(path, ops, i, i)
            after = os.path.join(self.workdir, "after.%d" % i)
            n = lib.daxfs_pmem_crash_image(after.encode(), self.permille,
                                           self.seed * 1000003 + i)
            assert n >= 0, n
            self.check(after, ops, i + 1, None)
            lib.daxfs_pmem_auto(os.path.join(self.workdir, "auto").encode(),
                                self.every, self.permille, self.seed + i)
        lib.daxfs_pmem_auto(b"", 0, 0, 0)
        for f in held.values():
            f.close()
        r.close()
        return self.problems


def overwrite_ops():
    """Strict overwrites whose in-place copy used to be torn by a power
    loss: a pwrite over an existing page and on into new ones (the new
    pages' drain came while the in-place lines were not on the media),
    over several existing pages, over a whole file and beyond its end
    (tests/test_strict_crash.py kills one of two redo records)."""
    f, g = "/v/f", "/v/g"
    return [("mkdir", "/v"),
            ("write", f, "t1", 4096),
            ("pwrite", f, 4000, "t2", 5000),
            ("pwrite", f, 10, "t3", 9000),
            ("write", g, "t4", 20000),
            ("pwrite", g, 100, "t5", 16000),
            ("pwrite", g, 0, "t6", 30000),
            ("pwrite", f, 4095, "t7", 2)]


def runs_ops():
    """Whole aligned 2 MiB writes, each one run (format 11, docs/files.md
    "Runs"): a new file of one run, a second run beyond its end, a rewrite
    inside a run, a truncate that splits a run, and a rewrite of a whole
    run in place."""
    f = "/v/r"
    return [("mkdir", "/v"),
            ("write", f, "t1", RUN),
            ("pwrite", f, RUN, "t2", RUN),
            ("pwrite", f, 100, "t3", 5000),
            ("truncate", f, RUN + RUN // 2 + 100),
            ("pwrite", f, 0, "t4", RUN)]


FIXED = {"overwrite": overwrite_ops, "runs": runs_ops}


def main():
    sys.path.insert(0, os.path.join(REPO, "python"))
    sys.path.insert(0, HERE)
    from helpers import env
    mode, seed = sys.argv[1], int(sys.argv[2])
    # NOPS "overwrite" or "runs": a fixed workload above, a state at
    # every drain
    fixed = FIXED.get(sys.argv[3])
    nops = len(fixed()) if fixed else int(sys.argv[3])
    region = env.region_path("pf")
    workdir = region + ".d"
    os.mkdir(workdir)
    # runs need 4 MiB of room beside their own (docs/alloc.md "Runs")
    env.mkfs(region, 4 * SIZE if fixed is runs_ops else SIZE,
             lease_ms=LEASE_MS)
    t = time.monotonic()
    try:
        if fixed:
            run = Run(region, workdir, mode, seed, nops, every=1,
                      ops=fixed())
        else:
            run = Run(region, workdir, mode, seed, nops)
        problems = run.run()
    finally:
        env.remove(region)
        for fn in os.listdir(workdir):
            os.unlink(os.path.join(workdir, fn))
        os.rmdir(workdir)
    print("mode %s seed %d ops %d: %d states, %d problems, fsck %s %s, %.1f s" %
          (mode, seed, nops, run.states, len(problems), run.fsck,
           sorted(run.fsck_codes), time.monotonic() - t))
    for p in problems[:10]:
        print("  " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
