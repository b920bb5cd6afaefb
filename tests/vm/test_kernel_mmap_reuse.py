"""A page mapped by one host is not reused while that host still maps it (docs/reclaim.md,
"Mapping hosts"; docs/kernel.md, "Mappings across hosts").

Guest A (daxfs.ko) maps a file read-only and keeps reading it; the user-space host H
truncates the file to 0 and regrows it to the same size (A's size never shrinks, so only
the change counter can tell A), then keeps the pool full of other files.  A must never see
another file's bytes through its mapping (each byte old or zero: a page read while the lease
pass unmaps it has some of each), and must see zeros once its lease work revalidated.
Skip/fail rules as in test_kernel_cluster.py.
Guest side: vm/mmap_kguest.py.  Console logs: build/vm/logs/<test name>/A.log.
"""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
import mmap_kguest as mk  # noqa: E402
from test_kernel_cluster import built, fsck, mkfs, region  # noqa: E402,F401

SIZE = 64 << 20


def run_mapper(request, lease_ms, step, peer, mount="mount:phys"):
    """Guest A mounts with `mount` (a vm/guest/daxfs-k.sh step) and runs the mapper step
    `step` while the host runs `peer(region)`; returns A's results and what the peer
    returned, after checking the run and fsck."""
    host = {}
    with Cluster(label=request.node.name, size=SIZE, timeout=400) as c:
        mkfs(c.shm, "--lease-ms", str(lease_ms))

        def host_peer():
            with region(c.shm) as r:
                host.update(peer(r) or {})
            return True

        res = c.run([Guest("A", "daxfs-k", ["load", mount, step,
                                            "umount", "rmmod", "clean"])],
                    host_fn=host_peer)
        ra = res.guests["A"].results
        print(f"\nmapper A: {ra}\nhost H: {host}")
        assert res.ok, res.summary()
        rc, out = fsck(c.shm, "-n")
        assert rc == 0, out
    return ra, host


def test_kernel_mmap_truncated_pages_not_reused_under_mapping(request, built):
    """A maps /victim (64 pages); H truncates it to 0, regrows it and refills the whole
    pool with other files for 8 s (lease 5 s: A's tick is 1.25 s; a loaded machine can
    stall a TCG guest for seconds, and a 2 s lease then got A declared dead).  A sees only
    the victim's bytes or zeros, and zeros at the end; H did reuse the freed pages (it wrote
    at least half as many pages after the cut as the victim had, on a pool that was full
    before it); fsck clean."""
    ra, host = run_mapper(request, 5000, "mm:reuse:A:/victim",
                          lambda r: mk.reuse_peer(r, "/victim"))
    assert ra["reuse"] == "ok", ra
    assert host["pages_after_cut"] >= mk.REUSE_PAGES // 2, host


def test_kernel_mmap_hole_filled_by_other_host(request, built):
    """A maps /holes (16 pages, all holes) read-only and shared and reads it: zeros.  H
    writes the odd pages.  Without any read(2) of the file, A's mapping comes to show
    them (it kept the zero page forever while read(2) showed the data), the even pages
    stay zeros; a hole A fills with its own pwrite(2) shows at once; fsck clean.  Lease
    5 s, as above: with 2 s H declared the stalled guest dead once in 20 runs at load 37."""
    ra, _ = run_mapper(request, 5000, "mm:hole:A:/holes",
                       lambda r: mk.hole_peer(r, "/holes"))
    assert ra["hole"] == "ok", ra


def test_kernel_mmap_pass_on_ask(request, built):
    """A maps /asked and holds the mapping; H fills the pool, deletes the filler and
    writes all but a MiB of it again, twice (docs/reclaim.md "Asking for a pass").  Each
    write waits for the deleted file's pages until A's mapping announcement moves past
    them; H asks A for a pass, and A's mount answers within its poll (20 ms), not at its
    lease tick (lease 60 s: a tick of 15 s; the second round starts just after the
    first one's pass, so without asks the two writes wait about a tick in all).  Both
    writes succeed, within 5 s together (0.11-0.18 s each when A answers; a daxfs.ko
    that does not poll made each give up with ENOSPC after 15.1 s); A's mapping is
    intact; fsck clean."""
    ra, host = run_mapper(request, 60000, "mm:ask:A:/asked",
                          lambda r: mk.ask_peer(r, "/asked"))
    assert ra["ask"] == "ok", ra
    assert not host["ask_enospc"], host
    assert sum(host["ask_waits"]) < 5.0, host


RUN_FILE_PAGES = 2 * mk.RUN_PAGES


def pmd_kernel(release):
    """Whether daxfs.ko maps runs with PMDs on this guest kernel: special huge PFN
    mappings came with 6.12 (docs/kernel.md "PMD mappings of runs")."""
    major, minor = (int(x) for x in release.split(".")[:2])
    return (major, minor) >= (6, 12)


# runs map with PMDs only where the mount asks (docs/kernel.md "PMD mappings of
# runs"); a kernel without them refuses the option, and the guest mounts without it
PMD_MOUNT = "trymount:phys:pmd"


def assert_fault_kind(ra, faults, pages):
    """One minor fault per 2 MiB where PMDs map the runs (a few more for the
    interpreter's own pages), one per page where they cannot; the pmd mount option
    taken where the kernel has PMD mappings, refused with a message elsewhere."""
    release = ra["kernel"]
    if pmd_kernel(release):
        assert ra.get("mount_opts") == "given", ra
        assert faults < pages // 8, f"{faults} faults for {pages} pages of runs on {release}"
    else:
        assert "pmd" in ra.get("mount_refused", ""), ra
        assert faults >= pages, f"{faults} faults for {pages} pages on {release}"


def test_kernel_mmap_truncated_runs_not_reused_under_pmds(request, built):
    """As the first test with /victim written as two 2 MiB runs (1,024 pages): on a kernel
    with special huge PFN mappings A maps each run with one PMD (its first scan takes a
    fault per run, not per page), and H's truncate must still not let another file's bytes
    show through it: A's lease pass zaps a PMD whose run the file no longer shows before
    it announces (docs/kernel.md "PMD mappings of runs").  On 6.1 the same test maps pages."""
    ra, host = run_mapper(request, 5000, f"mm:reuse:A:/victim:{RUN_FILE_PAGES}",
                          lambda r: mk.reuse_peer(r, "/victim", RUN_FILE_PAGES),
                          mount=PMD_MOUNT)
    assert ra["reuse"] == "ok", ra
    assert host["pages_after_cut"] >= RUN_FILE_PAGES // 2, host
    assert_fault_kind(ra, int(ra["reuse_faults"]), RUN_FILE_PAGES)


def test_kernel_mmap_runs_store_and_truncate(request, built):
    """A writes a file of two 2 MiB runs with pwrite(2) and maps it shared and writable:
    the bytes read through the mapping, its own pagemap, clear_refs, smaps and
    /proc/self/mem over it do not crash the kernel (a huge PMD in a VM_MIXEDMAP
    mapping oopsed 6.12's pagemap), stores through it are seen by pread(2) and move
    mtime, a truncate into the second run leaves the first run's bytes and the cut run's
    bytes below EOF mapped right and makes loads past EOF SIGBUS; PMDs on 6.12 and later
    (a fault per run, and one per run for the first stores), pages on 6.1; fsck clean."""
    ra, _ = run_mapper(request, 5000, "mm:pmdrw:A:/pmdrw", lambda r: {}, mount=PMD_MOUNT)
    assert ra["pmdrw"] == "ok", ra
    assert_fault_kind(ra, int(ra["pmdrw_read_faults"]), RUN_FILE_PAGES)
    if pmd_kernel(ra["kernel"]):
        assert int(ra["pmdrw_store_faults"]) <= 8, ra
        assert ra["pmdrw_dontneed"] == "EINVAL", ra     # the option's documented cost
    else:
        assert ra["pmdrw_dontneed"] == "ok", ra


def test_kernel_mmap_runs_without_pmd_option(request, built):
    """The same without the pmd mount option: pages on every kernel (a fault per page),
    and madvise(MADV_DONTNEED) works (mappings stay VM_MIXEDMAP)."""
    ra, _ = run_mapper(request, 5000, "mm:pmdrw:A:/pmdrw", lambda r: {})
    assert ra["pmdrw"] == "ok", ra
    assert int(ra["pmdrw_read_faults"]) >= RUN_FILE_PAGES, ra
    assert ra["pmdrw_dontneed"] == "ok", ra
