"""Smoke tests of the emulated-cluster harness (vm/): QEMU guests sharing one /dev/shm file.

Skipped when qemu / the Debian guest kernel are missing (vm/setup.sh installs them), unless
DAXFS_VM_TESTS=1, which turns missing prerequisites into failures. DAXFS_VM_TESTS=0 skips.
Console logs: build/vm/logs/<test name>/<guest>.log. About 35 s in all under TCG.
"""
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
import cluster  # noqa: E402
from cluster import Cluster, Guest  # noqa: E402

SIZE = 256 << 20
MIB = 1 << 20


def _marker(token, who):
    return f"DAXFS-SMOKE:{token}:{who}".encode()


def test_two_guests_and_host_share_pmem(request):
    """Guests A and B (raw /dev/pmem0) and the host exchange markers through one file."""
    cluster.require_vm(pytest)   # skip, or FAIL when DAXFS_VM_TESTS=1
    token = uuid.uuid4().hex[:12]
    off_a, off_b, off_h = MIB, MIB + 4096, MIB + 8192
    a_mark, b_mark = _marker(token, "a:A"), _marker(token, "b:B")

    with Cluster(label=request.node.name, size=SIZE, timeout=240) as c:
        def host_peer():
            # wait for both guests' writes, then answer with the host's own marker
            assert c.wait_shm(off_a, a_mark, 200), "guest A's marker never reached the file"
            assert c.wait_shm(off_b, b_mark, 200), "guest B's marker never reached the file"
            with open(c.shm, "r+b") as f:
                f.seek(off_h)
                f.write(_marker(token, "host"))
            return True

        res = c.run([Guest("A", "smoke", ["a", token]), Guest("B", "smoke", ["b", token])],
                    host_fn=host_peer)
        assert res.ok, res.summary()
        data = c.read_shm(0, 2 * MIB)

    # the host sees both guests' markers at the same offsets they used on /dev/pmem0
    assert data[off_a:off_a + len(a_mark) + 1] == a_mark + b"\0"
    assert data[off_b:off_b + len(b_mark) + 1] == b_mark + b"\0"
    ra, rb = res.guests["A"].results, res.guests["B"].results
    # each guest read the other's marker (and A the host's) through the shared memory
    assert ra["peer"] == b_mark.decode() and rb["peer"] == a_mark.decode(), res.summary()
    assert ra["host"] == _marker(token, "host").decode(), res.summary()
    # both see the nvdimm at the same physical range, of the file's size, in raw mode
    for r in (ra, rb):
        start, end = int(r["phys_start"], 16), int(r["phys_end"], 16)
        assert end - start + 1 == SIZE and int(r["dev_size"]) == SIZE, r
        assert int(r["sysfs_start"], 16) == start and int(r["sysfs_size"]) == SIZE, r
        assert r["mode"] == "raw", r
    assert ra["phys_start"] == rb["phys_start"]
    print(res.summary())


def test_fsdax_conversion_and_raw_phys(request):
    """A converts the shared nvdimm to fsdax (map=mem): device offset 0 = file offset 2 MiB,
    and B, booted next, finds fsdax mode and A's data. C boots without nd_pmem and reads the
    raw physical range (region start + file offset) through /dev/mem."""
    cluster.require_vm(pytest)
    token = uuid.uuid4().hex[:12]
    mark = f"FSDAX-{token}"
    with Cluster(label=request.node.name, size=SIZE, timeout=240) as c:
        res = c.run([Guest("A", "pmem", ["mode:raw", "fsdax", "info", f"write:0:{mark}"]),
                     Guest("B", "pmem", ["mode:fsdax", "info", f"expect:0:{mark}"])],
                    sequential=True)
        assert res.ok, res.summary()
        head = c.read_shm(0, 3 * MIB)
    assert head[4096:4096 + 16] == b"NVDIMM_PFN_INFO\0"          # PFN info block at 4 KiB
    assert head[2 * MIB:2 * MIB + len(mark)] == mark.encode()    # fsdax data starts at 2 MiB
    assert head.find(mark.encode()) == 2 * MIB
    ra, rb = res.guests["A"].results, res.guests["B"].results
    region = int(ra["region"].split("-")[0], 16)
    for r in (ra, rb):
        assert r["mode"] == "fsdax" and r["dax"] == "1", r
        assert int(r["pfn_start"], 16) == region + 2 * MIB, r
        assert int(r["dev_size"]) == SIZE - 2 * MIB, r

    # raw physical access: host writes a word, guest C (nd_pmem not loaded, so the range is
    # unclaimed) reads it at region start + file offset via /dev/mem
    with Cluster(label=request.node.name + "-phys", size=SIZE, timeout=240) as c:
        with open(c.shm, "r+b") as f:
            f.seek(3 * MIB)
            f.write((0x1122334455667788).to_bytes(8, "little"))
        addr = hex(region + 3 * MIB)
        res = c.run([Guest("C", "pmem", ["info", f"devmem:{addr}"], append="daxfsvm.skipmods=nd_pmem")])
        assert res.ok, res.summary()
    rc_ = res.guests["C"].results
    assert int(rc_[f"devmem_{addr}"], 16) == 0x1122334455667788, res.summary()
    assert rc_["region"] == ra["region"]
