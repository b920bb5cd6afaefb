"""Cross-host stress on shared names: space accounting stays exact.

Regression test for the leak / double-free race found by the kernel
engineer's cross-host stress (docs/kernel.md, known gap 7; reproducer
/work/kernel-ext/ustress.py).  Several processes -- each its own host on
one region -- run thousands of random operations on the SAME few names:
write (create + truncate + write), append (open-create + O_APPEND), pwrite
at an offset (extending writes), unlink, truncate up/down, exclusive
create, rename (and exchange) between the shared names, hard link, read.
Half the workers also reclaim constantly from a second thread so retired
pages are reused at once (what makes a double free visible).

Then, with no host left:

  * fsck.daxfs -n exits 0: nothing leaked ("space allocated but reachable
    from nothing"), nothing freed twice, no page beyond EOF, link counts
    and block counts right;
  * fsck's used_bytes == reachable + limbo + host batches, and statfs
    (used_bytes) agrees with fsck's accounting (statfs adds the limbo
    reserve, docs/alloc.md);
  * the same after removing every name and reclaiming: the pool goes back
    to the baseline.

No operation may fail with anything but the errors the races allow
(ENOENT, EEXIST, ENOTEMPTY, EISDIR ...): -EUCLEAN or -EAGAIN would mean a
corrupt tree or a livelock.

Run as a script (`python3 tests/test_stress_mix.py loop N`) to repeat the
whole scenario N times outside pytest.
"""

import errno
import json
import os
import random
import subprocess
import sys
import threading
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
_PY = os.environ.get("DAXFS_PYDIR", os.path.join(os.path.dirname(_HERE), "python"))
for _p in (_PY, _HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import daxfs  # noqa: E402

NAMES = 16
DIR = "/stress"
# errors the races on shared names legitimately produce
ALLOWED = {errno.ENOENT, errno.EEXIST, errno.ESTALE, errno.EISDIR,
           errno.ENOTDIR, errno.ENOTEMPTY, errno.EINVAL, errno.EPERM,
           errno.ELOOP}
OPS = ("write", "append", "pwrite", "unlink", "truncate", "create",
       "rename", "exchange", "link", "read", "mkdir", "rmdir", "symlink")
WEIGHTS = (4, 4, 3, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1)


# ---------------------------------------------------------------- worker

def _reclaimer(r, stop):
    while not stop.is_set():
        try:
            r.reclaim()
        except OSError:
            pass
        time.sleep(0.001)


def worker(path, seed, nops, reclaim, start_at):
    """One host: nops random operations; prints a JSON summary."""
    rnd = random.Random(seed)
    r = daxfs.Region(path)
    while time.time() < start_at:	# all hosts start together
        time.sleep(0.001)
    t0 = time.time()
    names = ["%s/n%d" % (DIR, i) for i in range(NAMES)]
    stop = threading.Event()
    th = None
    if reclaim:
        th = threading.Thread(target=_reclaimer, args=(r, stop), daemon=True)
        th.start()
    bad = {}
    done = 0
    for _ in range(nops):
        a = rnd.choice(names)
        op = rnd.choices(OPS, WEIGHTS)[0]
        try:
            if op == "write":
                r.write_file(a, os.urandom(rnd.randrange(0, 20000)))
            elif op == "append":
                with r.open(a, create=True) as f:
                    f.append(b"a" * rnd.randrange(1, 9000))
            elif op == "pwrite":
                with r.open(a) as f:
                    f.pwrite(b"p" * rnd.randrange(1, 9000), rnd.randrange(0, 40000))
            elif op == "unlink":
                r.unlink(a)
            elif op == "truncate":
                r.truncate(a, rnd.randrange(0, 30000))
            elif op == "create":
                r.open(a, create=True).close()
            elif op == "rename":
                r.rename(a, rnd.choice(names))
            elif op == "exchange":
                r.rename(a, rnd.choice(names), daxfs.RENAME_EXCHANGE)
            elif op == "link":
                r.link(a, rnd.choice(names))
            elif op == "read":
                with r.open(a) as f:
                    f.pread(50000, 0)
            elif op == "mkdir":
                r.mkdir(a)
            elif op == "rmdir":
                r.rmdir(a)
            elif op == "symlink":
                r.symlink("n%d" % rnd.randrange(NAMES), a)
            done += 1
        except OSError as e:
            if e.errno not in ALLOWED:
                key = "%s:%s" % (op, errno.errorcode.get(e.errno, e.errno))
                bad[key] = bad.get(key, 0) + 1
    stop.set()
    if th:
        th.join()
    r.close()
    print(json.dumps({"seed": seed, "done": done, "bad": bad,
                      "t0": t0, "t1": time.time()}))


# ---------------------------------------------------------------- checks

def _fsck_json(path):
    exe = os.path.join(os.environ.get("DAXFS_BUILD", os.path.join(os.path.dirname(_HERE),
                                                                  "build")),
                       "bin", "fsck.daxfs")
    res = subprocess.run([exe, "-n", "--json", path], capture_output=True, text=True,
                         timeout=120)
    return res.returncode, json.loads(res.stdout)


def _reserve_bytes(pool_bytes):
    """The limbo reserve statfs reports as used with no host joined
    (docs/alloc.md: pool_pages / 256 + 4 x max(hosts, 1), at most 1/4)."""
    pages = pool_bytes // 4096
    return min(pages // 256 + 4, pages // 4) * 4096


def check_accounting(path, what):
    code, rep = _fsck_json(path)
    s = rep["summary"]
    assert code == 0, "%s: fsck -n exit %d: %s" % (what, code, rep["problems"][:8])
    assert s["leaked_bytes"] == 0, (what, s)
    assert s["used_bytes"] == (s["reachable_bytes"] + s["limbo_bytes"] +
                               s["batch_bytes"]), (what, s)
    ro = daxfs.Region(path, join=False)
    try:
        st = ro.statfs()
    finally:
        ro.close()
    assert st["used_bytes"] == s["used_bytes"] + _reserve_bytes(st["pool_bytes"]), \
        (what, st, s)
    return s


def run_scenario(path, nproc=4, nops=2500, seed=0, size=256 << 20):
    daxfs.mkfs(path, size, force=True)
    r = daxfs.Region(path)
    r.mkdir(DIR)
    r.close()
    base = check_accounting(path, "fresh")
    me = os.path.abspath(__file__)
    start_at = time.time() + 0.5
    procs = [subprocess.Popen([sys.executable, me, "worker", path, str(seed * 100 + i),
                               str(nops), str(i % 2), repr(start_at)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(nproc)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, "worker failed (%d): %s" % (p.returncode, err[-3000:])
        outs.append(json.loads(out.strip().splitlines()[-1]))
    bad = {k: v for o in outs for k, v in o["bad"].items()}
    assert not bad, "unexpected errors: %s" % bad
    assert sum(o["done"] for o in outs) > nproc * nops // 10, outs
    if os.environ.get("DAXFS_STRESS_VERBOSE"):
        print(outs)

    check_accounting(path, "after the stress")

    # remove everything: the pool goes back to where it started
    r = daxfs.Region(path)
    for n in r.listdir(DIR):
        st = r.lstat(DIR + "/" + n)
        if (st.st_mode & 0o170000) == 0o040000:
            r.rmdir(DIR + "/" + n)
        else:
            r.unlink(DIR + "/" + n)
    r.rmdir(DIR)
    r.reclaim()
    r.close()
    end = check_accounting(path, "after removing everything")
    assert end["data_pages"] == 0, end
    assert end["reachable_bytes"] <= base["reachable_bytes"] + 4096, (base, end)


# ---------------------------------------------------------------- pytest

def test_stress_mix_shared_names(region_path):
    run_scenario(region_path, nproc=4, nops=8000, seed=1)


def test_stress_write_unlink_two_hosts(region_path):
    """The minimal mix that leaked: writers and unlinkers of shared names
    (a writer publishing pages into a file whose last link just went)."""
    os.environ["DAXFS_STRESS_MIX"] = "write+append+pwrite+unlink"
    try:
        run_scenario(region_path, nproc=2, nops=6000, seed=2, size=64 << 20)
    finally:
        del os.environ["DAXFS_STRESS_MIX"]


def _apply_mix_env():
    global OPS, WEIGHTS
    mix = os.environ.get("DAXFS_STRESS_MIX")
    if mix:
        OPS = tuple(mix.split("+"))
        WEIGHTS = (1,) * len(OPS)


if __name__ == "__main__":
    _apply_mix_env()
    if sys.argv[1] == "worker":
        worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1",
               float(sys.argv[6]))
    elif sys.argv[1] == "loop":
        n = int(sys.argv[2])
        nops = int(sys.argv[3]) if len(sys.argv) > 3 else 2500
        path = "/dev/shm/dxstress-%d" % os.getpid()
        try:
            for i in range(n):
                t = time.time()
                run_scenario(path, nops=nops, seed=1000 + i)
                print("run %d ok (%.1f s)" % (i, time.time() - t), flush=True)
        finally:
            if os.path.exists(path):
                os.unlink(path)
