"""Split mode (shared page cache) in daxfs.ko: QEMU guests sharing one memory file with each
other and with a user-space host, backing files reached over 9p (/host: our stand-in for
NFS-shared backing files).  docs/pcache.md, "Kernel side".

Skip/fail rules as in test_kernel_cluster.py (DAXFS_VM_TESTS=1 turns skips into failures).
Guest side: vm/guest/daxfs-k.sh (steps) and vm/pcache_kguest.py (scenarios).
Console logs: build/vm/logs/<test name>/<guest>.log.
"""
import errno
import hashlib
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
import daxfs_kguest as kg  # noqa: E402
import pcache_kguest as pk  # noqa: E402
from test_kernel_cluster import SIZE, _qemu_pid, built, fsck, mkfs  # noqa: E402,F401

PAGE = 4096
KiB, MiB = 1 << 10, 1 << 20


def _content(seed, size):
    out, n = bytearray(), 0
    while len(out) < size:
        out += hashlib.sha256(b"%d-%d" % (seed, n)).digest()
        n += 1
    return bytes(out[:size])


def _pages(sizes):
    return sum((s + PAGE - 1) // PAGE for s in sizes)


def _sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class Split:
    """A source tree, its manifest and backing files under build/pc/NAME (guests see the
    repository over 9p; the chrooted tools see the same paths)."""

    def __init__(self, name, fit, big=(), w=(), nr_backing=2):
        self.rel = f"build/pc/{name}-{os.getpid()}"
        self.dir = REPO / self.rel
        shutil.rmtree(self.dir, ignore_errors=True)
        src = self.dir / "src"
        self.sizes = {}
        for i, (n, size) in enumerate({**dict(fit), **dict(big), **dict(w)}.items()):
            p = src / n.lstrip("/")
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(_content(i, size))
            self.sizes[n] = size
        self.m = {"fit": [n for n, _ in fit], "big": [n for n, _ in big],
                  "w": [n for n, _ in w]}
        self.backing = [str(self.dir / f"bk{i}") for i in range(nr_backing)]

    def mkfs(self, target, cache, *extra):
        args = ["--source", str(self.dir / "src"), "--cache-size", str(cache), *extra]
        for b in self.backing:
            args += ["--backing", b]
        mkfs(target, *args)
        (self.dir / "manifest.json").write_text(json.dumps(self.m))

    def opts(self):
        """mount option steps: backing=... for every backing file (as guests see them)."""
        return "+".join(f"backing=@REPO/{self.rel}/bk{i}" for i in range(len(self.backing)))

    def region(self, shm, **kw):
        import daxfs
        return daxfs.Region(str(shm), backing=self.backing, **kw)

    def digests(self):
        return [_sha(b) for b in self.backing]

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def split(request):
    made = []

    def make(*a, tag="", **kw):
        s = Split(request.node.name.replace("test_kernel_pcache_", "")[:12] + tag, *a, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.remove()


def _fsck_clean(shm):
    rc, out = fsck(shm, "-n")
    assert rc == 0, out
    return out


def test_kernel_pcache_shared_reads(request, built, split):
    """Guests A and B mount with backing=, guest C without (its misses are served by the
    others' fill servers: H runs no helper thread), and the user-space host H reads too.  Every file reads right on
    every host.  Phase 1 (working set fits the cache): the backing reads of all hosts add up
    to the number of distinct backing pages (no duplicate fills), C read nothing from the
    backing files.  Phase 2: a file bigger than the cache.  fsck clean, no pins left."""
    fit = [("/s/a.txt", 100), ("/s/b.txt", 5000), ("/s/c.bin", 40123),
           ("/d/deep/e.bin", 123457), ("/f.bin", 200000), ("/empty", 0),
           ("/g.bin", 150001)]
    c_only = [("/c/only.bin", 60000)]
    s = split(fit + c_only, big=[("/big.bin", 3 * MiB + 5)])
    s.m["fit"], s.m["c_only"] = [n for n, _ in fit], [n for n, _ in c_only]
    peers = ["A", "B", "C", "H"]
    host = {}
    with Cluster(label=request.node.name, size=SIZE, timeout=400) as c:
        s.mkfs(c.shm, 2 * MiB)
        digests = s.digests()

        def host_peer():
            # no helper thread here: C's requests are served by A's and B's kernels
            with s.region(c.shm, fill_timeout_ms=60000, helper=False) as r:
                def reads():
                    ci = r.cache_info()
                    host["p1"] = ci
                    return ci["backing_reads"]
                pk.readall(kg.LibFS(r), s.dir, s.m, "H", peers, reads)
            return True

        def steps(g, opts):
            return ["load", "mount:phys" + opts,
                    f"pc:readall:{s.rel}:{g}:{'+'.join(peers)}", "umount", "rmmod", "clean"]

        res = c.run([Guest("A", "daxfs-k", steps("A", ":" + s.opts())),
                     Guest("B", "daxfs-k", steps("B", ":" + s.opts())),
                     Guest("C", "daxfs-k", steps("C", ""))], host_fn=host_peer)
        assert res.ok, res.summary()
        out = _fsck_clean(c.shm)
        with s.region(c.shm) as r:
            ci = r.cache_info()
        assert ci["pins"] == 0 and ci["pending"] == 0, ci
        assert s.digests() == digests
    reads = {g: int(res.guests[g].results[f"reads_{g}"]) for g in "ABC"}
    reads["H"] = host["p1"]["backing_reads"]
    want = _pages(size for _, size in fit + c_only)
    print(f"\nbacking reads per host in phase 1: {reads}, distinct pages {want}, "
          f"cluster fills {host['p1']['fills']}, served {host['p1']['served']}\n{out}")
    print(res.summary())
    assert reads["C"] == 0, reads
    assert sum(reads.values()) == want, reads
    assert host["p1"]["fills"] == want and host["p1"]["evictions"] == 0, host["p1"]
    # C's misses of the file only C read were filled by A and B on request
    assert host["p1"]["served"] >= _pages(size for _, size in c_only), host["p1"]
    assert reads["A"] + reads["B"] >= _pages(size for _, size in c_only), reads


def test_kernel_pcache_pressure(request, built, split):
    """Working set about 4x the cache: guests A (3 readers + a writer to backed files) and
    B (3 readers) and the host read random pages and check them; the writes (copied up into
    the overlay) are seen everywhere; the backing files are unchanged; fsck clean."""
    fit = [(f"/p/{i}.bin", 300000 + 977 * i) for i in range(6)]
    w = [("/w/0.bin", 30000), ("/w/1.bin", 9000)]
    s = split(fit, w=w)
    with Cluster(label=request.node.name, size=SIZE, timeout=400) as c:
        s.mkfs(c.shm, 512 * KiB)
        digests = s.digests()

        def host_peer():
            import random
            rnd = random.Random(7)
            with s.region(c.shm, fill_timeout_ms=60000) as r:
                fs = kg.LibFS(r)
                for _ in range(200):
                    name, _ = rnd.choice(fit)
                    off = rnd.randrange(0, s.sizes[name], PAGE)
                    assert fs.pread(name, PAGE, off) == pk.source(s.dir, name)[off:off + PAGE]
                kg.fs_wait(fs, ["pdone-A", "pdone-B"], 400)
                pk.check_written(fs, s.dir, s.m)
                return r.cache_info()

        steps = ["load", "mount:phys:" + s.opts(), "pc:pressure:%s:{}:3:150:A" % s.rel,
                 "umount", "rmmod", "clean"]
        res = c.run([Guest(g, "daxfs-k", [x.replace("{}", g) for x in steps]) for g in "AB"],
                    host_fn=host_peer)
        assert res.ok, res.summary()
        out = _fsck_clean(c.shm)
        assert s.digests() == digests
    ci = res.host.value
    print(f"\nslots {ci['nr_slots']}, working set {_pages(x for _, x in fit)} pages, "
          f"fills {ci['fills']}, evictions {ci['evictions']}, reads "
          f"{[res.guests[g].results[f'reads_{g}'] for g in 'AB']} + H {ci['backing_reads']}"
          f"\n{out}")
    assert ci["evictions"] > 0, ci


def test_kernel_pcache_mmap_pins(request, built, split):
    """Guest A maps a cached file; while it keeps the mapping the host drops the whole cache:
    the mapped slots stay (pinned, contents right), everything else goes; after munmap the
    pins are gone.  A private mapping's write stays private, and a write(2) on the same host
    to a mapped page moves the mapping to the new bytes (its pin is dropped)."""
    s = split([("/a.bin", 9000), ("/m.bin", 10 * PAGE + 300)], w=[("/w/0.bin", 3 * PAGE)])
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        s.mkfs(c.shm, 2 * MiB)
        pages = 11
        seen = {}

        def host_peer():
            with s.region(c.shm) as r:
                fs = kg.LibFS(r)
                fs.read("/a.bin")                   # something unpinned in the cache
                kg.fs_wait(fs, ["mapped"], 300)
                seen["dropped"] = r.cache_drop()
                seen["after_drop"] = r.cache_info()
                kg.fs_mark(fs, "H", "dropped")
                kg.fs_wait(fs, ["unmapped"], 300)
                seen["after_unmap"] = r.cache_info()
                r.cache_drop()
                seen["final"] = r.cache_info()
            return True

        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys:" + s.opts(),
                                            f"pc:mmap:{s.rel}:A", "umount", "rmmod",
                                            "clean"])], host_fn=host_peer)
        assert res.ok, res.summary()
        _fsck_clean(c.shm)
    print(f"\n{seen}")
    assert res.guests["A"].results["mmap"] == "ok"
    assert seen["dropped"] >= 3, seen                   # /a.bin's pages went
    assert seen["after_drop"]["pins"] == pages and seen["after_drop"]["valid"] == pages, seen
    assert seen["after_unmap"]["pins"] == 0, seen
    assert seen["final"]["valid"] == 0, seen


def test_kernel_pcache_host_killed(request, built, split):
    """Guest V maps a file (pins) and then hangs in a fill (fill_delay_ms); its QEMU is
    killed.  Guest S and the host read the page V was filling (a survivor takes the fill
    over once V's lease ran out), V's pins are released after its recovery, fsck clean."""
    s = split([("/pin.bin", 6 * PAGE), ("/x.bin", 40 * PAGE)])
    s.m["victim_page"] = ["/x.bin", 5 * PAGE]
    seen = {}
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        s.mkfs(c.shm, 2 * MiB, "--lease-ms", "3000")

        def host_peer():
            with s.region(c.shm, fill_timeout_ms=60000) as r:
                fs = kg.LibFS(r)
                kg.fs_wait(fs, ["victim-filling"], 200)
                end = time.monotonic() + 60
                while r.cache_info()["pending"] == 0:
                    assert time.monotonic() < end, "the victim never started its fill"
                    time.sleep(0.1)
                seen["before"] = r.cache_info()
                pid = _qemu_pid(c.shm, "V")
                assert pid, "guest V's qemu not found"
                os.kill(pid, signal.SIGKILL)
                kg.fs_mark(fs, "H", "killed")
                name, off = s.m["victim_page"]
                assert fs.pread(name, PAGE, off) == pk.source(s.dir, name)[off:off + PAGE]
                kg.fs_wait(fs, ["survived-S"], 200)
                end = time.monotonic() + 90
                while (r.cache_info()["pins"] or
                       any(h["name"] == "guest-V" and h["state"] == "alive"
                           for h in r.info()["hosts"])):
                    assert time.monotonic() < end, (r.cache_info(), r.info()["hosts"])
                    fs.tick()
                    time.sleep(0.5)
                seen["after"] = r.cache_info()
                kg.fs_mark(fs, "H", "recovered")
            return True

        res = c.run([Guest("V", "daxfs-k", ["load", "mount:phys:" + s.opts(),
                                            f"pc:victim:{s.rel}"]),
                     Guest("S", "daxfs-k", ["load", "mount:phys:" + s.opts(),
                                            f"pc:survivor:{s.rel}:S", "umount", "rmmod",
                                            "clean"])],
                    host_fn=host_peer)
        assert res.guests["S"].ok and res.host.rc == 0, res.summary()
        assert res.guests["V"].rc != 0
        out = _fsck_clean(c.shm)
    print(f"\n{seen}\n{out}\n{res.summary()}")
    assert seen["before"]["pins"] >= 6, seen
    assert seen["after"]["pins"] == 0 and seen["after"]["takeovers"] >= 1, seen


def test_kernel_pcache_long_fault_keeps_lease(request, built, split):
    """Guest L faults on a mapped page whose fill takes five leases (fill_delay_ms); the
    fault holds the inode's pin_lock, which the lease work's mapping revalidation needs
    too.  Renewal has a work of its own that waits for nothing (issue 16 item 11), so the
    host H, reaping all along, never finds L's lease run out: L stays alive in the same
    generation and keeps working afterwards."""
    lease_ms, delay_ms = 2000, 10000
    s = split([("/pin.bin", 6 * PAGE), ("/x.bin", 40 * PAGE)])
    s.m["victim_page"] = ["/x.bin", 5 * PAGE]
    seen = {}
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        s.mkfs(c.shm, 2 * MiB, "--lease-ms", str(lease_ms))

        def host_peer():
            with s.region(c.shm) as r:
                fs = kg.LibFS(r)
                end = time.monotonic() + 200
                while not [h for h in r.info()["hosts"] if h["name"] == "guest-L"]:
                    assert time.monotonic() < end, "guest L never mounted"
                    time.sleep(0.2)
                gen = [h for h in r.info()["hosts"] if h["name"] == "guest-L"][0]["gen"]
                kg.fs_mark(fs, "H", "long-watching")
                t = time.monotonic()
                while not fs.exists("/sync/long-done"):
                    r.reclaim()                 # reaps the hosts it judges expired
                    h = [h for h in r.info()["hosts"] if h["name"] == "guest-L"]
                    assert h and h[0]["state"] == "alive" and h[0]["gen"] == gen, h
                    assert time.monotonic() - t < 200, "guest L never finished its fault"
                    time.sleep(0.2)
                seen["watched_s"] = time.monotonic() - t
            return True

        res = c.run([Guest("L", "daxfs-k", ["load", "mount:phys:" + s.opts(),
                                            f"pc:longfault:{s.rel}:{delay_ms}",
                                            "umount", "rmmod", "clean"])],
                    host_fn=host_peer)
        assert res.ok, res.summary()
        _fsck_clean(c.shm)
    rl = res.guests["L"].results
    assert rl["longfault"] == "ok", rl
    print(f"\nfault took {rl['fault_s']}s, host watched {seen['watched_s']:.1f}s\n"
          f"{res.summary()}")


def test_kernel_pcache_bad_options(request, built, split):
    """backing= naming another filesystem's backing file, a random file, a missing file,
    or given for a filesystem that keeps its data in the region: refused with a dmesg line
    saying why.  Without backing= and with no host to fill, a read fails with ETIMEDOUT
    after the bounded wait instead of hanging.  backing= shows in /proc/mounts."""
    s = split([("/a.bin", 5000)])
    other = split([("/o.bin", 7000)], tag="-o", nr_backing=1)
    (s.dir / "random.bin").write_bytes(os.urandom(64 * KiB))
    plain = f"/dev/shm/daxfs-pct-{os.getpid()}-plain"
    with Cluster(label=request.node.name, size=SIZE, timeout=200, extra_shm=[plain]) as c:
        s.mkfs(c.shm, 1 * MiB, "--lease-ms", "1000")
        other.mkfs(other.dir / "region", 1 * MiB, "-s", "32M")
        mkfs(c.extra_shm[0])
        r, o = f"@REPO/{s.rel}", f"@REPO/{other.rel}"
        g = Guest("A", "daxfs-k", [
            "load", f"badmount:phys:backing={o}/bk0", f"badmount:phys:backing={r}/random.bin",
            f"badmount:phys:backing={r}/missing", f"badmount:phys2:backing={r}/bk0",
            "mount:phys", f"pc:timeout:{s.rel}", "umount",
            f"mount:phys:backing={r}/bk0+backing={r}/bk1+backing={r}/bk0", "mounts",
            "umount", "rmmod", "clean"])
        res = c.run([g])
        assert res.ok, res.summary()
        _fsck_clean(c.shm)
    log = res.guests["A"].log
    refusals = [x for x in log.splitlines() if "refused as expected" in x]
    print("\n" + "\n".join(refusals))
    assert len(refusals) == 4, log[-3000:]
    assert "is not a backing file of this filesystem" in refusals[0]
    assert "is not a backing file of this filesystem" in refusals[1]
    assert "cannot open" in refusals[2]
    assert "keeps its data in the region" in refusals[3]
    ra = res.guests["A"].results
    assert ra["timeout"] == "ETIMEDOUT", ra
    assert ra["mounts"].count("backing=") == 3, ra       # as given


def test_kernel_pcache_killed_reader_stops_waiting(request, built, split):
    """Without backing= and with no host to fill, a read waits (bounded: 2 x the lease,
    here 120 s); a reader killed during the wait exits instead of sitting it out
    (docs/kernel.md "User buffers" / the pcache fill wait stops on a fatal signal)."""
    s = split([("/a.bin", 5000)])
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        s.mkfs(c.shm, 1 * MiB, "--lease-ms", "60000")
        g = Guest("A", "daxfs-k", ["load", "mount:phys", f"pc:killwait:{s.rel}", "umount",
                                   "rmmod", "clean"])
        res = c.run([g])
        assert res.ok, res.summary()
        _fsck_clean(c.shm)
    assert res.guests["A"].results["killwait"] == "ok", res.summary()


def test_kernel_pcache_lifetime(request, built, split):
    """One guest, several checks of the kernel side (vm/pcache_kguest.py lifetime): pins
    of mapped cache slots follow fork, VMA splits, mremap and madvise, and go with the
    last mapping; another process's truncate inside a mapped page, write(2) and write
    fault show in our mapping at once and drop each pin once; remounts keep backing=;
    the idle fill server sleeps; umount does not wait for a slow backing read that
    serves the host's request (DAXFS_PC_SLOW_MS, 600000: a wait shows as a timeout)."""
    lt = {"lt_fork": 4, "lt_split": 8, "lt_truncate": 3, "lt_copyup": 3}
    s = split([("/r.bin", 5000), ("/u.bin", 4 * PAGE)] +
              [(f"/{k}.bin", n * PAGE) for k, n in lt.items()], nr_backing=1)
    for k in lt:
        s.m[k] = [f"/{k}.bin"]
    slow = int(os.environ.get("DAXFS_PC_SLOW_MS", "600000"))
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        s.mkfs(c.shm, 2 * MiB)
        digests = s.digests()

        def host_peer():
            import daxfs
            # no backing here: our read is a request that guest A's fill server takes
            with daxfs.Region(str(c.shm), fill_timeout_ms=20000) as r:
                fs = kg.LibFS(r)
                kg.fs_wait(fs, ["slow-ready"], 250)
                try:
                    fs.pread("/u.bin", PAGE, PAGE)
                    return "read"
                except OSError as e:
                    return errno.errorcode.get(e.errno, str(e.errno))

        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys:" + s.opts(),
                                            f"pc:lifetime:{s.rel}:{slow}", "rmmod",
                                            "clean"])], host_fn=host_peer)
        print(f"\n{res.guests['A'].results}\nhost read: {res.host.value}")
        assert res.ok, res.summary()
        _fsck_clean(c.shm)
        assert s.digests() == digests
    ra = res.guests["A"].results
    assert all(ra[k] == "ok" for k in list(lt) + ["lt_remount", "lt_idle",
                                                  "lt_slow_umount"]), ra


def test_kernel_pcache_stale_unpin(request, built, split):
    """Guest V maps a file (pins) and its QEMU is stopped past its lease: the host H
    recovers it (V's pins reaped), and a new host H2 joins in V's host slot and pins one
    of those pages.  V resumes, finds itself dead (EIO) and unmaps: H2's pin must stay
    (V's late release may not touch the pin column it lost)."""
    s = split([("/pin.bin", 4 * PAGE), ("/r.bin", 100)])
    seen = {}
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        # 8 s: at load 12 a TCG guest stalled past a 3 s lease before the test
        # stopped it (EIO at its "mapped" marker, a clean-clone run of 2026-11-28)
        s.mkfs(c.shm, 2 * MiB, "--lease-ms", "8000")

        def host_peer():
            with s.region(c.shm) as r:
                fs = kg.LibFS(r)
                kg.fs_wait(fs, ["mapped"], 200)
                # V reads in a loop from its marker on, and a read pins a page for
                # the length of its copy: the least of a few looks is what V's
                # mapping holds (a pin that stayed would show in every look)
                looks = []
                for _ in range(20):
                    looks.append(r.cache_info()["pins"])
                    time.sleep(0.01)
                seen["mapped"] = min(looks)
                slot = next(i for i, h in enumerate(r.info()["hosts"])
                            if h["name"] == "guest-V" and h["state"] == "alive")
                pid = _qemu_pid(c.shm, "V")
                assert pid, "guest V's qemu not found"
                os.kill(pid, signal.SIGSTOP)
                try:
                    end = time.monotonic() + 90
                    while (r.cache_info()["pins"] or
                           r.info()["hosts"][slot]["state"] == "alive"):
                        assert time.monotonic() < end, (r.cache_info(), r.info()["hosts"])
                        fs.tick()
                        r.cache_drop()              # meets V's pins: reaps them
                        time.sleep(0.5)
                    with s.region(c.shm) as r2:
                        assert r2.info()["self_slot"] == slot, (slot, r2.info()["self_slot"])
                        page, ref = r2.page_map(r2.stat("/pin.bin").st_ino, 0)
                        seen["h2_pinned"] = r.cache_info()["pins"]
                        os.kill(pid, signal.SIGCONT)
                        end = time.monotonic() + 120
                        while os.path.exists(f"/proc/{pid}"):
                            assert time.monotonic() < end, "guest V did not finish"
                            time.sleep(0.5)
                        seen["after_v"] = r.cache_info()["pins"]
                        r2.page_release(ref)
                finally:
                    os.kill(pid, signal.SIGCONT) if os.path.exists(f"/proc/{pid}") else None
            return True

        res = c.run([Guest("V", "daxfs-k", ["load", "mount:phys:" + s.opts(),
                                            f"pc:stale:{s.rel}", "umount", "rmmod",
                                            "clean"])], host_fn=host_peer)
        print(f"\n{seen}\n{res.summary()}")
        assert res.ok, res.summary()
        _fsck_clean(c.shm)
    assert seen["mapped"] == 4 and seen["h2_pinned"] == 1, seen
    assert seen["after_v"] == 1, seen


def test_kernel_pcache_mmap_follows_other_hosts(request, built, split):
    """Guest A maps two cached files read-only (zero copy: pinned cache slots) and makes no
    system call on them; host H writes a page of one (copy-up into the overlay) and
    truncates the other.  Within 10 s A's mappings show H's bytes, zeros past the cut and
    SIGBUS beyond the new EOF (the lease work revalidates borrowed pages and drops the
    pins of those it zaps).  No pins are left after munmap; fsck clean."""
    s = split([("/coh_w.bin", 4 * PAGE), ("/coh_t.bin", 4 * PAGE)])
    with Cluster(label=request.node.name, size=SIZE, timeout=240) as c:
        s.mkfs(c.shm, 2 * MiB, "--lease-ms", "2000")

        def host_peer():
            with s.region(c.shm) as r:
                kg.coherent_peer(kg.LibFS(r), r, "/coh_w.bin", "/coh_t.bin")
            return True

        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys:" + s.opts(),
                                            "py:coherent:A:/coh_w.bin:/coh_t.bin",
                                            "umount", "rmmod", "clean"])],
                    host_fn=host_peer)
        assert res.ok, res.summary()
        _fsck_clean(c.shm)
        with s.region(c.shm) as r:
            ci = r.cache_info()
    rg = res.guests["A"].results
    print(f"\ndelays seen by the mapper after the writer's marker: {rg}")
    assert rg["coherent"] == "ok", rg
    assert ci["pins"] == 0, ci
