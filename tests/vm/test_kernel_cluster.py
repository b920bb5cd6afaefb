"""daxfs.ko in QEMU guests sharing one memory file with each other and with a user-space
host (libdaxfs through python/daxfs on the same file).

Skip/fail rules as in test_vm_smoke.py: skipped when qemu or the guest kernel are missing
(vm/setup.sh installs them) or when daxfs.ko cannot be built (no kernel headers), unless
DAXFS_VM_TESTS=1, which turns that into failures; DAXFS_VM_TESTS=0 skips.
The tests run `make all module` first (DAXFS_VM_NOBUILD=1: use what is built).
The module is never loaded into this machine's kernel, only inside the guests.
Guest side: vm/guest/daxfs-k.sh (steps) and vm/daxfs_kguest.py (scenarios).
Console logs: build/vm/logs/<test name>/<guest>.log.  About 2-3 minutes in all under TCG.
"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import build  # noqa: E402  (tests/ is on sys.path: conftest.py)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))
import cluster  # noqa: E402
from cluster import Cluster, Guest  # noqa: E402
import daxfs_kguest as kg  # noqa: E402

SIZE = 256 << 20
MIB = 1 << 20
BIN = REPO / "build" / "bin"
KO = REPO / "kernel" / "daxfs.ko"


def _need(msg):
    if os.environ.get("DAXFS_VM_TESTS") == "1":
        pytest.fail(msg + " [DAXFS_VM_TESTS=1]", pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="module")
def built():
    """VM prerequisites, the user-space tools and daxfs.ko (built for the guest kernel)."""
    cluster.require_vm(pytest)
    if os.environ.get("DAXFS_VM_NOBUILD") == "1":     # use what is built already
        assert KO.is_file() and (BIN / "mkfs.daxfs").is_file(), "nothing built"
        return True
    p = build.make("-s", "-C", str(REPO), "all", capture_output=True, text=True)
    if p.returncode != 0:
        pytest.fail("user-space build failed:\n" + p.stdout[-2000:] + p.stderr[-2000:])
    p = build.make("-s", "-C", str(REPO), "module", capture_output=True, text=True)
    if p.returncode != 0:
        if "kernel headers not found" in p.stderr:
            _need("cannot build daxfs.ko: " + p.stderr.strip())
        pytest.fail("make module failed:\n" + p.stdout[-3000:] + p.stderr[-3000:])
    assert KO.is_file()
    return True


def mkfs(target, *args):
    subprocess.run([str(BIN / "mkfs.daxfs"), "-f", "-q", *args, str(target)], check=True)


def fsck(target, *args):
    p = subprocess.run([str(BIN / "fsck.daxfs"), *args, str(target)], capture_output=True,
                       text=True)
    return p.returncode, p.stdout + p.stderr


def region(path):
    import daxfs
    return daxfs.Region(str(path))


def guest_with_host(c, scenario, peer):
    """Guest A runs py:SCENARIO on its phys= mount of cluster c while this process is host
    H, running peer(LibFS, region) on the same file; then fsck -n is clean.  A's results."""
    def host_peer():
        with region(c.shm) as r:
            peer(kg.LibFS(r), r)
        return True

    res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", "py:" + scenario,
                                        "umount", "rmmod", "clean"])],
                host_fn=host_peer)
    assert res.ok, res.summary()
    rc, out = fsck(c.shm, "-n")
    assert rc == 0, out
    return res.guests["A"].results


def steps(*s):
    return list(s)


def test_kernel_single_host_semantics_and_remount(request, built):
    """One guest: VFS semantics through daxfs.ko (phys= mount), options in /proc/mounts,
    umount + rmmod + insmod + mount again (nothing leaked, data still there), -o dax
    accepted and dax=never refused, and images that must be refused: a zeroed range, a superblock with a bad checksum, and a block
    device that is not in fsdax mode.  Then fsck.daxfs finds the region clean."""
    with Cluster(label=request.node.name, size=SIZE, timeout=150,
                 extra_shm=[f"/dev/shm/daxfs-kt-{os.getpid()}-zero",
                            f"/dev/shm/daxfs-kt-{os.getpid()}-crc"]) as c:
        mkfs(c.shm)
        mkfs(c.extra_shm[1])
        with open(c.extra_shm[1], "r+b") as f:   # corrupt the label: CRC mismatch
            f.seek(200)
            f.write(b"\xff\xfe")
        g = Guest("A", "daxfs-k", steps(
            "load", "badmount:pmem1", "badmount:phys2", "badmount:phys3",
            "badmount:phys:dax=never", "mount:phys:validate+dax", "mounts", "py:basic", "py:put:keep/file:K33P",
            "umount", "rmmod", "load", "mount:phys", "py:expect:keep/file:K33P",
            "umount", "mount:phys:ro", "py:expect:keep/file:K33P", "py:rofs", "umount",
            "mount:phys", "umount", "rmmod", "clean"))
        res = c.run([g])
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
        with region(c.shm) as r:
            assert r.read_file("/keep/file") == b"K33P" * 1000
            assert r.readlink("/keep-link") == kg.LONG_LINK    # written by daxfs.ko
            assert all(h["state"] != "alive" for h in r.info()["hosts"] if not h["self"])
    ra = res.guests["A"].results
    assert ra["basic"] == "ok" and ra["expect"] == "ok" and ra["rofs"] == "ok"
    assert "phys=0x" in ra["mounts"] and "validate" in ra["mounts"], ra
    assert "dax=always" in ra["mounts"], ra
    assert "always_DAX" in ra["badmount_phys"], ra        # dax=never refused, saying why
    for k in ("badmount_phys2", "badmount_phys3", "badmount_pmem1"):
        assert k in ra, ra
    print(res.summary())


def test_kernel_multi_host(request, built):
    """Guests A and B (daxfs.ko, phys= mounts) and host H (libdaxfs on the shared file) at
    once: files written anywhere are read everywhere; concurrent creates into one directory
    all present exactly once; racing creates of one name have one winner; concurrent appends
    keep every record once; renames and unlinks are seen by the others (dentry
    revalidation); df shows a big file's space on every host and its return after unlink;
    a store through a shared mapping on one guest is read by the other guest and the host;
    a file open on A and unlinked by H stays readable and writable through A's descriptor
    and its space comes back after A closes it.  Then fsck.daxfs finds the region clean."""
    peers = "A+B+H"
    with Cluster(label=request.node.name, size=SIZE, timeout=240) as c:
        mkfs(c.shm, "--lease-ms", "5000")

        def host_peer():
            with region(c.shm) as r:
                kg.multi(kg.LibFS(r), "H", peers.split("+"))
            return True

        guest = ["load", "mount:phys", f"py:multi:{{}}:{peers}", "umount", "rmmod", "clean"]
        res = c.run([Guest("A", "daxfs-k", [s.format("A") for s in guest]),
                     Guest("B", "daxfs-k", [s.format("B") for s in guest])],
                    host_fn=host_peer)
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
        with region(c.shm) as r:
            assert len(r.listdir("/shared")) == 3 * kg.N_CREATES
            assert r.read_file("/moved-A") == b"hello from A"
    for g in "AB":
        rg = res.guests[g].results
        assert rg[f"multi_{g}"] == "ok", rg
        assert int(rg[f"df_grew_{g}"]) >= kg.BIG - MIB, rg
        assert rg[f"held_{g}"] == "ok", rg
    print(res.summary())


def test_kernel_cached_names_follow_other_host(request, built):
    """A guest walks its paths until every dentry (positive and negative) and inode is
    cached and trusted by its change counter with no core op (docs/kernel.md "Dentries"),
    and makes a symlink, a directory and a FIFO (trusted from their creates), then host H
    renames, unlinks, makes again under the same name, renames over a name,
    exchanges, links, moves a directory above cached names, chmods and writes: the guest's
    next system call sees each change, with no retry (vm/daxfs_kguest.py scen_names)."""
    with Cluster(label=request.node.name, size=SIZE, timeout=240) as c:
        mkfs(c.shm, "--lease-ms", "5000")

        rg = guest_with_host(c, "names", lambda fs, r: kg.names_host(fs))
    assert rg["names"] == "ok", rg


def test_kernel_kept_listings_follow_other_host(request, built):
    """A guest lists directories until daxfs.ko keeps their listings (trusted while the
    directory's change counter stands, docs/kernel.md "Listings"); between rounds host H
    creates, unlinks, renames (within, in, out, over, exchange), links, makes and removes
    directories, moves them (their ".." changes) and changes a directory of 750 names:
    the guest's next listing, through a 32 KiB and a 200-byte getdents buffer, holds what
    H's does, inode numbers and ".." included.  Then a listing of the 750 names that H
    changes part-way through names nothing twice and misses nothing that stayed
    (vm/daxfs_kguest.py scen_listing)."""
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        mkfs(c.shm, "--lease-ms", "5000")
        rg = guest_with_host(c, "listing", lambda fs, r: kg.listing_host(fs))
    assert rg["listing"] == "ok", rg


def _leak_raise(shm, r):
    """leak(path): one raise on path's change counter, stored straight into the shared
    file as a host fenced between its check and its add leaves it; returns the word
    before."""
    from crashlib import settled
    from test_fsck import Image

    def leak(path):
        ino = r.lstat(path).st_ino
        im = Image(str(shm))
        off = im.inode(ino) + Image.FIELDS["change"][0]
        w = im.u64(off)
        assert settled(w), hex(w)
        with open(shm, "r+b") as f:
            f.seek(off)
            f.write((w + (1 << 48)).to_bytes(8, "little"))
        assert not settled(r.lstat(path).st_change)
        return w
    return leak


def test_kernel_heals_raise_nobody_settles(request, built):
    """Host H leaves a raise on a directory's change counter that no op will settle (as a
    host fenced between its check and its add does).  Guest A, whose names and listing of
    the directory were warm, answers every look right while the raise stands (never
    trusting what it kept), and heals the counter after a second of sightings: H then
    finds the count moved by one with nothing in flight (docs/kernel.md "Changes in
    flight", vm/daxfs_kguest.py scen_heal)."""
    left = {}

    def peer(fs, r):
        left["w"] = kg.heal_host(fs, _leak_raise(c.shm, r))
        left["now"] = r.lstat("/hl").st_change

    with Cluster(label=request.node.name, size=SIZE, timeout=240) as c:
        mkfs(c.shm, "--lease-ms", "5000")
        rg = guest_with_host(c, "heal", peer)
    assert rg["heal"] == "ok", rg
    w = left["w"]
    assert left["now"] == ((w & ((1 << 48) - 1)) + 1), (hex(w), hex(left["now"]))


def test_kernel_default_acl_follows_other_host(request, built):
    """A guest makes files in a directory with a default ACL (its ACLs stay cached across
    its own creates there), then host H replaces the default ACL: the next file the guest
    makes inherits H's (vm/daxfs_kguest.py scen_aclx)."""
    with Cluster(label=request.node.name, size=SIZE, timeout=240) as c:
        mkfs(c.shm, "--lease-ms", "5000")
        rg = guest_with_host(c, "aclx", lambda fs, r: kg.acl_host(fs))
    assert rg["aclx"] == "ok", rg


def test_kernel_single_host_stress(request, built):
    """One guest, 6 processes of random operations (write, append, rename, unlink, mkdir,
    rmdir, link, truncate, readdir, stat, read, mmap store, symlink) on one small set of
    names: no unexpected errors, everything removed afterwards gives the space back, and
    fsck.daxfs finds the region clean."""
    with Cluster(label=request.node.name, size=SIZE, timeout=150) as c:
        mkfs(c.shm)
        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", "py:stress:6:1500",
                                            "umount", "rmmod", "clean"])])
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
    assert res.guests["A"].results["stress_A"] == "6x1500", res.summary()


def test_kernel_region_atomics_always_locked(built):
    """The core's read-modify-writes on region words must stay atomic against other
    machines.  x86 "SMP alternatives" rewrite every LOCK_PREFIX (cmpxchg(), atomic64_*())
    to a plain prefix on a kernel booted with one present CPU, modules loaded later
    included; so core/compat.h uses always-locked forms and the core's objects of the
    kernel build carry no .smp_locks section (no patchable lock prefix)."""
    objs = sorted((REPO / "build" / "kmod" / "core").glob("*.o"))
    assert objs, "no core objects under build/kmod/core"
    bad = [o.name for o in objs
           if ".smp_locks" in subprocess.run(["objdump", "-h", str(o)], capture_output=True,
                                             text=True, check=True).stdout]
    assert not bad, "patchable lock prefixes (LOCK_PREFIX) in the core: %s" % bad


GUEST_INSERTS = 20000


def test_kernel_cross_host_inserts(request, built, tmp_path):
    """Guests A and B (one vCPU each, so their kernels run UP-patched code) and host H create
    files in one directory and append one record per file to one shared file at once
    (bench/xhost_bench, the cross-host part of bench/run) for a few seconds: every insert
    is there exactly once and fsck.daxfs -n finds the region clean.  Regression test for
    CAS/FAA that lost their lock prefix in daxfs.ko (two guests popped the same free
    object: a dirent named twice, EEXIST on a name only one host creates, EUCLEAN)."""
    p = build.make("-s", "-C", str(REPO / "bench"), "../build/bench/xhost_bench",
                   capture_output=True, text=True)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    xb = str(REPO / "build" / "bench" / "xhost_bench")
    peers, secs = "A+B+H", "5"
    with Cluster(label=request.node.name, size=SIZE, timeout=150) as c:
        mkfs(c.shm)
        # at most 20,000 inserts per guest: an idle machine's guests did about 52,000 each
        # in 5 s and filled the 256 MiB region (ENOSPC), a loaded one about 33,000
        guests = [Guest(g, "daxfs-bench", ["xhost", g, peers, secs, str(GUEST_INSERTS)],
                        outdir=tmp_path / g) for g in "AB"]
        res = c.run(guests, host_cmd=[xb, "run", "daxfs", str(c.shm), "H", peers, secs,
                                      "2500", "paced"])
        assert res.ok, res.summary()
        v = subprocess.run([xb, "verify", str(c.shm), peers], capture_output=True, text=True)
        rc, out = fsck(c.shm, "-n")
    assert v.returncode == 0, v.stdout + v.stderr
    assert rc == 0, out
    print(v.stdout)


def test_kernel_cross_host_stress(request, built):
    """Guests A and B, 4 processes each, random operations on the same small set of names at
    once, then A removes everything: no unexpected errors on either guest, the space comes
    back, and fsck.daxfs finds the region clean."""
    with Cluster(label=request.node.name, size=SIZE, timeout=150) as c:
        mkfs(c.shm)
        g = ["load", "mount:phys", "py:stress:4:800:{}:A+B", "umount", "rmmod", "clean"]
        res = c.run([Guest(n, "daxfs-k", [x.format(n) for x in g]) for n in "AB"])
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out


def test_kernel_pmem_fsdax_route(request, built):
    """The block-device route: guest A converts the nvdimm to fsdax, formats /dev/pmem0 from
    inside the guest (mkfs.daxfs through the host root) and mounts it with
    `mount -t daxfs /dev/pmem0`; guest B, booted next, mounts it too and reads A's data.
    The host then checks the image, which starts 2 MiB into the shared file."""
    with Cluster(label=request.node.name, size=SIZE, timeout=150) as c:
        a = Guest("A", "daxfs-k", steps(
            "load", "badmount:pmem", "fsdax", "mkfs:pmem", "mount:pmem", "mounts",
            "py:basic", "py:put:pm/file:PMEM", "umount", "rmmod", "clean"))
        b = Guest("B", "daxfs-k", steps(
            "load", "mount:pmem", "py:expect:pm/file:PMEM", "umount", "rmmod", "clean"))
        res = c.run([a, b], sequential=True)
        assert res.ok, res.summary()
        img = Path(str(c.shm) + ".img")
        try:
            with open(c.shm, "rb") as src, open(img, "wb") as dst:
                src.seek(2 * MIB)
                dst.write(src.read())
            rc, out = fsck(img, "-n")
            assert rc == 0, out
            with region(img) as r:
                assert r.read_file("/pm/file") == b"PMEM" * 1000
        finally:
            img.unlink(missing_ok=True)
    assert res.guests["A"].results["mounts"].startswith("rw"), res.summary()
    print(res.summary())


def test_user_devdax_route(request, built):
    """libdaxfs on a devdax device (no daxfs.ko): inside a guest, namespace0.0 becomes
    /dev/dax0.0 (2 MiB alignment); mkfs.daxfs formats it, `daxfs run` writes and reads a
    file through a mapping of the device that starts 2 MiB aligned and uses 2 MiB pages,
    and fsck.daxfs finds it clean (docs/libdaxfs.md "Huge pages")."""
    with Cluster(label=request.node.name, size=SIZE, timeout=150) as c:
        res = c.run([Guest("A", "daxfs-k", steps("devdax", "udax"))])
        assert res.ok, res.summary()
    r = res.guests["A"].results
    assert r["udax_data"] == "devdax-data", res.summary()
    assert r["udax_page_kb"] == "2048", res.summary()
    assert r["udax_aligned"] == "1", res.summary()
    assert r["udax_fsck"] == "0", res.summary()
    print(res.summary())


def _qemu_pid(shm, name):
    """PID of the QEMU process of guest NAME using shared file SHM (started by this test)."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (cmd and cmd[0].endswith(b"qemu-system-x86_64") and f"daxfs-{name}".encode() in cmd
                and any(str(shm).encode() in a for a in cmd)):
            return int(d.name)
    return None


def test_kernel_host_killed_mid_write(request, built):
    """Guest A appends and renames in a loop; the test kills A's QEMU process mid-write.
    Guest B and the host carry on: creates, appends, renames (the rename claim a dead host
    may hold) and space reuse (epochs wait for the dead host's lanes until its lease runs
    out and a survivor recovers it).  fsck.daxfs afterwards: nothing left to repair but
    leaked space (repaired by -y), then clean."""
    with Cluster(label=request.node.name, size=SIZE, timeout=200) as c:
        mkfs(c.shm, "--lease-ms", "3000")
        killed = {}

        def host_peer():
            with region(c.shm) as r:
                fs = kg.LibFS(r)
                kg.fs_wait(fs, ["victim-writing"], 150)
                time.sleep(1.0)
                pid = _qemu_pid(c.shm, "A")
                assert pid, "guest A's qemu not found"
                os.kill(pid, signal.SIGKILL)
                killed["pid"] = pid
                killed["t"] = time.monotonic()
                kg.fs_mark(fs, "H", "killed")
                kg.survivor(fs, "H", big=4 << 20)
                kg.fs_wait(fs, ["survived-B"], 150)
                # A's slot leaves the ALIVE state once its lease (3 s) runs out and a
                # survivor declares it dead and recovers it
                end = time.monotonic() + 60
                while True:
                    hosts = r.info()["hosts"]
                    a = [h for h in hosts if h["name"] == "guest-A" and h["state"] == "alive"]
                    if not a:
                        break
                    assert time.monotonic() < end, hosts
                    fs.tick()
                    time.sleep(0.5)
                killed["recovered_s"] = time.monotonic() - killed["t"]
            return True

        res = c.run([Guest("A", "daxfs-k", ["load", "mount:phys", "py:crash-victim"]),
                     Guest("B", "daxfs-k", ["load", "mount:phys", "py:crash-survivor:B",
                                            "umount", "rmmod", "clean"])],
                    host_fn=host_peer)
        assert killed, res.summary()
        assert res.guests["B"].ok and res.host.rc == 0, res.summary()
        assert res.guests["A"].rc != 0          # killed
        rc, out = fsck(c.shm, "-n")
        print(f"fsck.daxfs -n after the crash: rc={rc}\n{out}")
        if rc != 0:
            assert rc == 4, out                 # findings to repair, nothing worse
            rc, out2 = fsck(c.shm, "-y")
            assert rc in (0, 1), out + out2
            rc, out3 = fsck(c.shm, "-n")
            assert rc == 0, out3
        with region(c.shm) as r:
            assert len(r.listdir("/after-B")) == 41 and len(r.listdir("/after-H")) == 41
    print(res.summary(), f"\nvictim's slot recovered {killed['recovered_s']:.1f}s after the kill")


def test_kernel_wall_clock_step_declares_nobody_dead(request, built):
    """Guests A and B (daxfs.ko) and host H (libdaxfs) work on one region; mid-workload A
    steps its wall clock forward by an hour and B back by an hour, while every host keeps
    reaping expired hosts (its renew/maintenance works, H's reclaim).  Leases are a
    heartbeat counter each observer times with its own monotonic clock (docs/hosts.md
    "Leases"), so nobody is declared dead: no guest logs it, every slot stays alive in
    the same generation, nothing is recovered, and fsck finds the region clean."""
    lease_ms = 3000
    with Cluster(label=request.node.name, size=SIZE, timeout=300) as c:
        mkfs(c.shm, "--lease-ms", str(lease_ms))
        seen = {}

        def host_peer():
            with region(c.shm) as r:
                fs = kg.LibFS(r)
                fs.mkdir("/clock-H")
                kg.fs_mark(fs, "H", "clock-ready-H")
                kg.fs_wait(fs, ["clock-ready-A", "clock-ready-B"], 200)
                gens = {h["name"]: h["gen"] for h in r.info()["hosts"]
                        if h["name"].startswith("guest-")}
                assert sorted(gens) == ["guest-A", "guest-B"], gens
                while not all(fs.exists(f"/sync/clock-done-{g}") for g in "AB"):
                    r.reclaim()                 # reaps the hosts it judges expired
                    for h in r.info()["hosts"]:
                        assert h["state"] != "recovered", h
                        if h["name"] in gens:
                            assert h["state"] == "alive" and h["gen"] == gens[h["name"]], h
                    fs.write("/clock-H/f", b"H" * 4096)
                    time.sleep(0.2)
                seen["hosts"] = r.info()["hosts"]
                kg.fs_mark(fs, "H", "clock-done-H")
            return True

        res = c.run([Guest(g, "daxfs-k", ["load", "mount:phys",
                                          f"py:clock-step:{g}:{step}:{lease_ms}",
                                          "umount", "rmmod", "clean"])
                     for g, step in (("A", 3600), ("B", -3600))],
                    host_fn=host_peer)
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
    ra, rb = res.guests["A"].results, res.guests["B"].results
    assert ra["clock_A"] == "ok" and rb["clock_B"] == "ok", (ra, rb)
    print(res.summary(), f"\nops: A {ra['clock_ops_A']}, B {rb['clock_ops_B']}")


def test_kernel_mmap_base_pages_follow_other_hosts(request, built, tmp_path):
    """Guest A maps two files of the base image (mkfs --source) read-only and then makes no
    system call on them; host H writes a page of one and truncates the other (inside page
    1, page 2 beyond the new EOF).  Within 10 s, with no read or stat on A, A's mappings
    show H's bytes, zeros past the cut, and SIGBUS beyond EOF (the lease work revalidates
    borrowed pages; docs/kernel.md).  Prints the delays A saw (lease 2 s: tick 0.5 s)."""
    src = tmp_path / "src"
    src.mkdir()
    for i, name in enumerate(("w.bin", "t.bin")):
        (src / name).write_bytes(bytes((i * 7 + j) % 251 + 1 for j in range(4 * 4096)))
    with Cluster(label=request.node.name, size=SIZE, timeout=240) as c:
        mkfs(c.shm, "--source", str(src), "--lease-ms", "2000")

        rg = guest_with_host(c, "coherent:A:/w.bin:/t.bin",
                             lambda fs, r: kg.coherent_peer(fs, r, "/w.bin", "/t.bin"))
    print(f"\ndelays seen by the mapper after the writer's marker: {rg}")
    assert rg["coherent"] == "ok", rg
