#!/usr/bin/env python3
"""The kernel corrupt-image fuzz (docs/testing.md "Kernel image fuzz").

The host builds one populated base image with the user-space tools (a base
image from a source tree, an overlay with files, holes, symlinks, hard links,
a wide directory, freed space in the limbo and free chains, and a host that
died holding open files), then for each image number I:
  - copies the base into the shared memory file of a running guest,
  - corrupts it with build/bin/daxfs-chaos (the words it finds live by
    walking the structures) restricted to one kind of structure, 1 to 12
    words, seeded by I (so an image is rebuilt from its number and the run's
    base images, kept in OUT: --image N),
  - bumps the handshake (a second nvdimm) and waits for the guest.
The guest (vm/guest/kfuzz.sh, vm/helpers/kfuzz.c) mounts the image with
daxfs.ko, runs a short workload, unmounts, counts bad kernel log lines and
answers.  A guest that stops answering (hang) or dies (oops: the guests run
with oops=panic) is recorded with its image, kept under OUT/found/, and a
fresh guest goes on with the next image.

    python3 vm/kfuzz.py -n 10000 -j 2          # or: make kfuzz N=10000 J=2
    python3 vm/kfuzz.py --image 1234           # rebuild one image (OUT/img-1234)

Exit status 0 when no image caused an oops, WARN, BUG, lockup, hang or a
failed unmount; 1 otherwise.  OUT/results.jsonl has one line per image,
OUT/summary.json the totals.
"""
import argparse
import errno
import gzip
import json
import mmap
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))
import cluster  # noqa: E402
from cluster import Cluster, Guest  # noqa: E402

BIN = REPO / "build" / "bin"
SIZE = 16 << 20
PAGE = 4096
HOST_MAGIC = 0x54534f485a464b44
GUEST_MAGIC = 0x545345475a464b44
FL_VALIDATE, FL_STOP, FL_SELFTEST = 1, 2, 4
GUEST_FMT = "<QQqIIIIII160I"
GUEST_LEN = struct.calcsize(GUEST_FMT)
MSG_LEN = 2048
# console lines that tell why a guest died or hung
BAD_CONSOLE = ("BUG:", "Oops", "Kernel panic", "WARNING:", "soft lockup", "blocked for more than",
               "general protection", "RIP:", "Call Trace")
# every structure kind daxfs-chaos knows (docs/tools.md), "mix" = all at once
# (pcache and split-mix on the split-mode base)
KINDS = ["super", "base", "bucket", "inode", "trie", "dirent", "radix", "symlink",
         "free", "limbo", "openset", "host", "lane", "state", "pcache", "mix", "split-mix",
         "raw", "size", "none"]
MIX = ",".join(k for k in KINDS if k not in ("pcache", "mix", "split-mix", "raw", "size",
                                             "none"))
# regression images of what the fuzz found (docs/testing.md "Kernel image fuzz runs"):
# "size": a regular file's size word beyond DAXFS_MAX_FILE_SIZE (stat said 2^64 - 1)
SIZE_FILE = "/w/s2"
INODE_MAGIC = 0x444e49
INODE_SIZE_OFF = 32
SPLIT_KINDS = ("pcache", "split-mix")


def _run(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True,
                          text=True, **kw)


# ---------------------------------------------------------------- the base image

DEAD_HOST = r"""
import os, sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1], heartbeat=False)
keep = [r.open("/w/big"), r.open("/many/n07"), r.open("/w/orphan")]
r.unlink("/w/orphan")              # open and unlinked: an orphan in its open set
r.write_file("/w/dying", b"d" * 9000)
r.unlink("/many/n11")              # into its limbo
os._exit(0)                        # no leave: a host slot that looks alive
"""


SPLIT_DEAD_HOST = r"""
import os, sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1], heartbeat=False, backing=sys.argv[3:])
for n in ("s1", "s3"):
    r.page_map(r.stat("/d/" + n).st_ino, 1)     # pinned by a host that dies
keep = r.open("/d/s2")
os._exit(0)
"""


_BK = {}


def backing_dir() -> Path:
    """Where this run's backing files live: under the repository, which the guests see
    (their /host/tmp is a tmpfs of their own); OUT/bk for a resumable run (set_backing)."""
    return _BK.get("dir", REPO / "build" / "kfuzz-bk" / str(os.getpid()))


def set_backing(d: Path):
    """Backing files kept with the run's base images, so that --resume finds them."""
    _BK["dir"] = d


def build_split(out: Path) -> Path:
    """The split-mode base (shared page cache, 2 backing files in backing_dir()),
    OUT/split.img, its cache filled by a reader and pinned by a host that died."""
    import daxfs
    src = out / "ssrc"
    shutil.rmtree(src, ignore_errors=True)
    (src / "d").mkdir(parents=True)
    for i in range(6):
        (src / "d" / f"s{i}").write_bytes(bytes([i + 97]) * (i * 9000 + 5000))
    backing_dir().mkdir(parents=True, exist_ok=True)
    bk = [str(backing_dir() / "bk0"), str(backing_dir() / "bk1")]
    img = out / "split.img"
    _run(BIN / "mkfs.daxfs", "-f", "-q", "-s", SIZE, "--source", src, "--cache-size", 1 << 20,
         "--cache-window", 8, "--backing", bk[0], "--backing", bk[1], "--max-hosts", 8,
         "--buckets", 1024, "--lease-ms", 20, img)
    with daxfs.Region(str(img), backing=bk) as r:
        for i in range(6):
            r.read_file(f"/d/s{i}")
        r.write_file("/d/new", b"n" * 7000)
        r.unlink("/d/s5")
        r.reclaim()
    _run(sys.executable, "-c", SPLIT_DEAD_HOST, img, REPO / "python", *bk)
    return img


def build_base(out: Path) -> Path:
    """The populated base image, OUT/base.img (rebuilt each run)."""
    import daxfs
    out.mkdir(parents=True, exist_ok=True)
    src = out / "src"
    shutil.rmtree(src, ignore_errors=True)
    (src / "etc" / "deep" / "er").mkdir(parents=True)
    (src / "etc" / "conf").write_bytes(b"key=value\n" * 40)
    (src / "etc" / "deep" / "er" / "leaf").write_bytes(bytes(range(256)) * 40)
    (src / "bin.dat").write_bytes(random.Random(7).randbytes(70000))
    (src / "empty").write_bytes(b"")
    os.symlink("etc/conf", src / "conf-link")
    for i in range(12):
        (src / "etc" / f"f{i:02d}").write_bytes(b"%d" % i * (i * 97 + 1))
    img = out / "base.img"
    _run(BIN / "mkfs.daxfs", "-f", "-q", "-s", SIZE, "--source", src, "--max-hosts", 8,
         "--buckets", 1024, "--lease-ms", 20, img)
    with daxfs.Region(str(img)) as r:
        r.makedirs("/a/b/c/d")
        r.mkdir("/w")
        r.mkdir("/many")
        for i, n in enumerate([0, 1, 100, 4096, 5000, 70000, 300000]):
            r.write_file(f"/w/s{i}", bytes([i + 65]) * n)
        with r.open("/w/big", create=True) as f:      # a hole, then 2 levels of radix
            f.pwrite(b"B" * 8192, 3 << 20)
        r.write_file("/w/orphan", b"o" * 6000)
        r.write_file("/a/b/c/d/deepfile", b"deep" * 300)
        r.symlink("s1", "/w/short-link")
        r.symlink("/a/b/c/" + "x" * 200, "/w/long-link")
        r.link("/w/s4", "/a/hard")
        r.mknod("/a/fifo", 0o10644)
        for i in range(40):
            r.write_file(f"/many/n{i:02d}", b"m" * (i * 50))
        for i in range(0, 40, 3):
            r.unlink(f"/many/n{i:02d}")                # freed: limbo, then free chains
        r.truncate("/w/s6", 1000)
        r.rename("/w/s5", "/a/b/moved")
        r.rename("/etc/f03", "/a/from-base")           # a base name hidden by the overlay
        r.unlink("/etc/f04")
        r.write_file("/etc/conf", b"overlay copy\n" * 10)
        r.reclaim()
        (out / "base.json").write_text(json.dumps({"size_ino": r.stat(SIZE_FILE).st_ino}))
    _run(sys.executable, "-c", DEAD_HOST, img, REPO / "python")
    return img


# ---------------------------------------------------------------- one image

def image_params(i: int, seed: int):
    """(kind list for daxfs-chaos, name, count, validate) of image number i."""
    rng = random.Random(seed * 1000003 + i)
    name = KINDS[i % len(KINDS)]
    mix = name in ("mix", "split-mix")
    count = rng.randint(3, 12) if mix else rng.choice([1, 1, 1, 2, 3, 5])
    if name == "raw":
        count = rng.randint(1, 8)
    elif name in ("none", "size"):
        count = int(name == "size")
    validate = rng.random() < 0.2
    kinds = {"mix": MIX, "split-mix": MIX + ",pcache"}.get(name, name)
    return kinds, name, count, validate


def raw_words(mm, used, rng, count, log):
    """Any word of the used part of the image, live or not (names, inline data, padding,
    structures daxfs-chaos does not walk): a random value, a flipped bit, 0, ~0 or +-1."""
    with open(log, "a") as f:
        for n in range(count):
            off = rng.randrange(0, max(8, used)) & ~7
            old = struct.unpack_from("<Q", mm, off)[0]
            new = rng.choice([rng.getrandbits(64), old ^ (1 << rng.randrange(64)), 0,
                              (1 << 64) - 1, (old + 1) % (1 << 64), (old - 1) % (1 << 64)])
            struct.pack_into("<Q", mm, off, new)
            f.write(f"{n + 1} raw {off:#x} {old:#x} {new:#x}\n")


def make_image(i: int, seed: int, bases, mm, shm: Path, log: Path):
    """Writes image i into the mapped shared file; returns its parameters.
    bases: {"plain": bytes, "split": bytes}."""
    kinds, name, count, validate = image_params(i, seed)
    rec = {"i": i, "kind": name, "count": count, "validate": validate}
    base = bases["split" if name in SPLIT_KINDS else "plain"]
    mm[:len(base)] = base
    mm.flush()
    with open(log, "w") as f:
        f.write(f"image {i} kind {name} count {count} validate {int(validate)}\n")
    if name == "none":                 # the control: the base image as it is
        return rec
    if name == "raw":
        raw_words(mm, _used(base), random.Random(seed * 1000003 + i), count, log)
        return rec
    if name == "size":
        off = _inode_record(base, bases["size_ino"]) + INODE_SIZE_OFF
        new = random.Random(seed * 1000003 + i).choice([(1 << 64) - 1, (1 << 48) + 1, 1 << 63])
        old = struct.unpack_from("<Q", mm, off)[0]
        struct.pack_into("<Q", mm, off, new)
        with open(log, "a") as f:
            f.write(f"1 size {off:#x} {old:#x} {new:#x}\n")
        return rec
    cmd = [str(BIN / "daxfs-chaos"), "-q", "-s", str(seed * 1000003 + i), "-n", str(count),
           "-t", "2", "-k", kinds, "-l", str(log), str(shm)]
    for attempt in range(3):       # a rebuild of the tools (make) may replace it meanwhile
        try:
            p = subprocess.run(cmd, capture_output=True, text=True)
            break
        except OSError:
            if attempt == 2:
                raise
            time.sleep(2)
    if p.returncode:
        raise RuntimeError(f"daxfs-chaos on image {i}: {p.stderr.strip()}")
    return rec


_USED = {}


def _inode_record(base: bytes, ino: int) -> int:
    """Offset of the inode record of ino in a base image: the one 64-byte aligned place
    that starts with ino and the inode magic (computed once)."""
    key = (id(base), ino)
    if key not in _USED:
        want = struct.pack("<QI", ino, INODE_MAGIC)
        hits = [o for o in range(0, len(base), 64) if base[o:o + 12] == want]
        if len(hits) != 1:
            raise RuntimeError(f"inode {ino}: {len(hits)} records in the base image")
        _USED[key] = hits[0]
    return _USED[key]


def _used(base: bytes) -> int:
    """Bytes up to the last non-zero one of a base image (computed once)."""
    if id(base) not in _USED:
        _USED[id(base)] = len(base.rstrip(b"\0"))
    return _USED[id(base)]


# ---------------------------------------------------------------- one guest

class Worker:
    """One guest and its two shared files; takes image numbers from a shared list."""

    def __init__(self, wid, args, bases, todo, results, lock):
        self.wid, self.a, self.bases = wid, args, bases
        self.todo, self.results, self.lock = todo, results, lock
        self.out = Path(args.out)
        self.c = Cluster(label=f"kfuzz-{os.getpid()}-w{wid}", size=SIZE,
                         extra_shm=[f"/dev/shm/daxfs-kfuzz-{os.getpid()}-{wid}-hs"],
                         extra_modules=[], timeout=10 ** 6, keep_shm=args.keep)
        self.proc = None
        self.boots = 0

    def _boot(self):
        self.c.prepare()                     # fresh, zeroed files: no stale handshake
        fd = os.open(self.c.extra_shm[0], os.O_RDWR)
        self.hs = mmap.mmap(fd, 2 * PAGE)
        os.close(fd)
        fd = os.open(self.c.shm, os.O_RDWR)
        self.mm = mmap.mmap(fd, SIZE)
        os.close(fd)
        self.boots += 1
        self.log = self.c.log_dir / f"boot{self.boots}.log"
        g = Guest("K", "kfuzz", [str(self.a.hung_secs), "verbose" if self.a.verbose else "quiet",
                                 self.a.module])
        self.proc = subprocess.Popen(self.c.guest_cmd(g, self.log, 10 ** 6),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        end = time.monotonic() + self.a.boot_timeout
        while time.monotonic() < end and self.proc.poll() is None:
            if struct.unpack_from("<Q", self.hs, PAGE)[0] == GUEST_MAGIC:
                return
            time.sleep(0.1)
        raise RuntimeError(f"worker {self.wid}: guest not ready; log {self.log}:\n"
                           + self._tail())

    def _tail(self, n=4000):
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def _kill(self):
        """Ends the guest: run-guest.sh's group and QEMU (which `timeout` keeps in a
        process group of its own)."""
        if self.proc and self.proc.poll() is None:
            for pid in cluster.descendants(self.proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def _send(self, seq, flags, opts=""):
        struct.pack_into("<QQQ40x256s", self.hs, 0, 0, seq, flags, opts.encode())
        struct.pack_into("<Q", self.hs, 0, HOST_MAGIC)

    def _wait(self, seq, timeout):
        """The guest's answer for seq, or None (hang or death)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if struct.unpack_from("<Q", self.hs, PAGE + 8)[0] == seq:
                v = struct.unpack_from(GUEST_FMT, self.hs, PAGE)
                msg = bytes(self.hs[PAGE + GUEST_LEN:PAGE + GUEST_LEN + MSG_LEN])
                return v, msg.split(b"\0")[0].decode(errors="replace")
            if self.proc.poll() is not None:
                return None
            time.sleep(0.005)
        return None

    def _keep(self, rec, what):
        """Keeps a failing image (gzipped) and the guest's console."""
        found = self.out / "found"
        found.mkdir(parents=True, exist_ok=True)
        with gzip.open(found / f"img-{rec['i']}.gz", "wb", compresslevel=1) as f:
            f.write(self.mm[:])
        shutil.copy(self.out / f"w{self.wid}.chaos", found / f"img-{rec['i']}.chaos")
        if rec["kind"] in SPLIT_KINDS:
            for b in ("bk0", "bk1"):
                shutil.copy(backing_dir() / b, found / b)
        (found / f"img-{rec['i']}.console").write_text(self._tail(60000))
        rec["failure"] = what

    def _enough_failures(self):
        """--stop-after: a test need not spend 90 s on every hanging image."""
        if not self.a.stop_after:        # long runs: no scan of the results
            return False
        bad = sum(1 for r in self.results if "failure" in r and not r.get("selftest"))
        return bad >= self.a.stop_after

    def run(self):
        try:
            self._boot()
            while True:
                with self.lock:
                    if not self.todo or self._enough_failures():
                        break
                    i = self.todo.pop()
                rec = self.one(i)
                with self.lock:
                    self.results.append(rec)
                    self.a.jsonl.write(json.dumps(rec) + "\n")
                    self.a.jsonl.flush()
            self._send(1 << 62, FL_STOP)
            ans = self._wait(1 << 62, self.a.timeout)
            if self.proc.wait(timeout=60) != 0 or ans is None:
                raise RuntimeError(f"worker {self.wid}: guest did not end cleanly:\n"
                                   + self._tail())
        except BaseException as e:            # reported by main()
            with self.lock:
                self.results.append({"worker": self.wid, "error": repr(e)})
        finally:
            self._kill()
            self.c.cleanup()

    def one(self, i):
        seq = i + 1
        t0 = time.monotonic()
        rec = make_image(i, self.a.seed, self.bases, self.mm, self.c.shm,
                         self.out / f"w{self.wid}.chaos")
        # the guest reaches this machine's files under /host (9p)
        opts = ("" if rec["kind"] not in SPLIT_KINDS else
                ",".join(f"backing=/host{backing_dir() / b}" for b in ("bk0", "bk1")))
        flags = FL_VALIDATE if rec["validate"] else 0
        if i == self.a.selftest:
            flags |= FL_SELFTEST
            rec["selftest"] = True
        self._send(seq, flags, opts)
        ans = self._wait(seq, self.a.timeout)
        rec["t"] = round(time.monotonic() - t0, 3)
        if ans is None:
            dead = self.proc.poll() is not None
            if not dead:                   # let the hung-task detector speak first
                time.sleep(min(30, 3 * self.a.hung_secs))
            self._keep(rec, "guest died (oops/panic)" if dead else "hang: no answer")
            bad = [ln for ln in self._tail(60000).splitlines()
                   if any(p in ln for p in BAD_CONSOLE)]
            rec["msg"] = "\n".join(bad[:20]) or "(nothing on the console)"
            self._kill()
            self._boot()
            return rec
        v, msg = ans
        (_, _, mount_err, ops, fails, wrong, bad, sigbus, umount_err) = v[:9]
        if fails != sum(v[9:]):           # a torn answer (vm/helpers/kfuzz.c hs_write)
            raise RuntimeError(f"worker {self.wid}: image {i}: {fails} failures but "
                               f"{sum(v[9:])} errno counts")
        errs = {errno.errorcode.get(e, str(e)): n for e, n in enumerate(v[9:]) if n}
        rec.update(mount_err=errno.errorcode.get(mount_err, mount_err) if mount_err else 0,
                   ops=ops, fails=fails, wrong=wrong, bad=bad, sigbus=sigbus,
                   umount_err=umount_err, errs=errs)
        if msg:
            rec["msg"] = msg
        if bad or umount_err:
            self._keep(rec, "bad kernel log" if bad else "umount failed")
        return rec


# ---------------------------------------------------------------- totals

def summarize(results, elapsed):
    s = {"images": 0, "refused": {}, "mounted": 0, "ops": 0, "fails": {}, "wrong": 0,
         "sigbus": 0, "failures": [], "errors": [], "elapsed_s": round(elapsed, 1)}
    for r in results:
        if "error" in r:
            s["errors"].append(r)
            continue
        s["images"] += 1
        if r.get("selftest"):          # the positive control: must be caught
            s["selftest"] = "caught" if "self-test" in r.get("msg", "") else "missed"
        elif "failure" in r:
            s["failures"].append({k: r.get(k) for k in ("i", "kind", "failure", "msg")})
        if "ops" not in r:
            continue
        if r["mount_err"]:
            s["refused"][r["mount_err"]] = s["refused"].get(r["mount_err"], 0) + 1
        else:
            s["mounted"] += 1
        s["ops"] += r["ops"]
        s["wrong"] += r["wrong"]
        s["sigbus"] += r["sigbus"]
        for e, n in r["errs"].items():
            s["fails"][e] = s["fails"].get(e, 0) + n
    s["per_image_s"] = round(elapsed / max(1, s["images"]), 3)
    return s


def _records(out: Path):
    """The image records of OUT/results.jsonl (a line cut by a kill is dropped)."""
    recs = []
    try:
        lines = (out / "results.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return recs
    for line in lines:
        try:
            recs.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    return recs


def _resumed(out: Path, a):
    """Image numbers already done by earlier sittings of this run; checks that the run's
    parameters did not change between sittings (OUT/run.json)."""
    out.mkdir(parents=True, exist_ok=True)
    params = {"seed": a.seed, "first": a.first, "n": a.n}
    pf = out / "run.json"
    if pf.exists():
        old = json.loads(pf.read_text())
        if {k: old.get(k) for k in params} != params:
            raise SystemExit(f"kfuzz: --resume with {params}, but {out} holds a run of {old}")
    else:
        if (out / "results.jsonl").exists():
            raise SystemExit(f"kfuzz: --resume: {out} holds results of a run without run.json")
        params["sittings"] = []
        pf.write_text(json.dumps(params))
    return {r["i"] for r in _records(out) if "i" in r}


def _sitting(out: Path, elapsed, boots, images):
    """Records one sitting (ended or interrupted) in OUT/run.json."""
    pf = out / "run.json"
    run = json.loads(pf.read_text())
    run["sittings"].append({"elapsed_s": round(elapsed, 1), "boots": boots,
                            "images_total": images,
                            "ended": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())})
    pf.write_text(json.dumps(run, indent=1))


def _resume_totals(out: Path, s):
    """The summary of a resumable run: its elapsed time is the sum of all sittings."""
    run = json.loads((out / "run.json").read_text())
    s["sittings"] = len(run["sittings"])
    s["elapsed_s"] = round(sum(x["elapsed_s"] for x in run["sittings"]), 1)
    s["per_image_s"] = round(s["elapsed_s"] / max(1, s["images"]), 3)
    return s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=300, help="images (300)")
    ap.add_argument("--first", type=int, default=0, help="first image number (0)")
    ap.add_argument("-j", type=int, default=1, help="guests in parallel (1)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(REPO / "build" / "kfuzz"))
    ap.add_argument("--timeout", type=float, default=90, help="seconds per image (90)")
    ap.add_argument("--hung-secs", type=int, default=10, help="guest hung_task_timeout_secs")
    ap.add_argument("--boot-timeout", type=float, default=180)
    ap.add_argument("--stop-after", type=int, default=0, metavar="F",
                    help="take no more images once F have failed (0: never stop)")
    ap.add_argument("--keep", action="store_true", help="keep the shared files")
    ap.add_argument("--selftest", type=int, default=-1, metavar="N",
                    help="the guest logs a fake WARNING after image N: it must be caught")
    ap.add_argument("--module", default="kernel/daxfs.ko",
                    help="the daxfs.ko the guests load, relative to the repository")
    ap.add_argument("--reuse", action="store_true",
                    help="take OUT/base.img and OUT/split.img (to run again the images of a"
                    " run; split images also need that run's backing files)")
    ap.add_argument("--verbose", action="store_true",
                    help="the guest prints every failed operation with its line in kfuzz.c")
    ap.add_argument("--image", type=int, help="only write image N to OUT/img-N and exit")
    ap.add_argument("--resume", action="store_true",
                    help="one run in several sittings: keep the base images and backing"
                    " files in OUT, skip the images OUT/results.jsonl has, append to it;"
                    " the totals cover the whole file (same -n, --first and --seed)")
    a = ap.parse_args(argv)
    out = Path(a.out)
    done = set()
    if a.resume:
        out = out.resolve()
        set_backing(out / "bk")
        done = _resumed(out, a)
        a.reuse = (out / "base.img").exists()
    if (a.image is not None or a.reuse) and (out / "base.img").exists():
        # the bases of the run that made image N (mkfs draws a random hash key, so a
        # new base would lay out differently and the same seed would pick other words)
        files = {"plain": out / "base.img", "split": out / "split.img"}
        bases = {n: f.read_bytes() for n, f in files.items() if f.exists()}
    else:
        bases = {"plain": build_base(out).read_bytes(), "split": build_split(out).read_bytes()}
    bases.update(json.loads((out / "base.json").read_text()))
    if a.image is not None:
        dst = out / f"img-{a.image}"
        dst.write_bytes(bytes(SIZE))
        with open(dst, "r+b") as f:
            mm = mmap.mmap(f.fileno(), SIZE)
            print(make_image(a.image, a.seed, bases, mm, dst, out / f"img-{a.image}.chaos"))
        return 0
    miss = cluster.missing_prerequisites()
    if miss:
        print("kfuzz: missing " + "; ".join(miss), file=sys.stderr)
        return 2
    a.jsonl = open(out / "results.jsonl", "a" if a.resume else "w")
    todo = [i for i in range(a.first + a.n - 1, a.first - 1, -1) if i not in done]
    results, lock = [], threading.Lock()
    if a.resume:
        results = [r for r in _records(out) if "i" in r]
    t0 = time.monotonic()
    workers = [Worker(w, a, bases, todo, results, lock) for w in range(a.j)]
    threads = [threading.Thread(target=w.run, daemon=True) for w in workers]
    def _term(*_):           # once: a second TERM must not cut the cleanup short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.exit(143)

    old_term = signal.signal(signal.SIGTERM, _term)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:                 # interrupted: no guest outlives the run
        for w in workers:
            w._kill()
            w.c.cleanup()
        if not a.resume:
            shutil.rmtree(backing_dir(), ignore_errors=True)
        else:                # this sitting's time counts, interrupted or not
            _sitting(out, time.monotonic() - t0, sum(w.boots for w in workers),
                     len([r for r in results if "i" in r]))
        signal.signal(signal.SIGTERM, old_term)
    s = summarize(results, time.monotonic() - t0)
    s["boots"] = sum(w.boots for w in workers)
    if a.resume:
        s = _resume_totals(out, s)
    (out / "summary.json").write_text(json.dumps(s, indent=1, sort_keys=True))
    print(json.dumps(s, indent=1, sort_keys=True))
    missed = a.selftest >= 0 and s.get("selftest") != "caught"
    return 1 if s["failures"] or s["errors"] or s["images"] != a.n or missed else 0


if __name__ == "__main__":
    sys.exit(main())
