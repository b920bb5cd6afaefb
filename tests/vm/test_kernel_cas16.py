"""The 16-byte CAS of the free-stack heads (core/compat.h daxfs_cas16, x86-64
`lock cmpxchg16b`) must be atomic across machines sharing memory: two QEMU TCG
guests (a kernel module each, vm/cas16/cas16mod.c) and a host process
(vm/cas16/hostcas16.c) add 1 to both halves of one 16-byte word in the shared
file with the core's own daxfs_cas16: each guest ITERS times and on until it
has seen MIN_RETRIES failed CASes (contention, however loaded the machine), the
host all the while the guests run.  No update may be lost
on either half, and every pair a failed CAS hands back must have equal halves
(the value was read as one).  Failed CASes show the contention was real.

Skip/fail rules as in test_kernel_cluster.py (DAXFS_VM_TESTS=1: fail instead of
skip).  About a minute under TCG.
"""
import os
import sys
from pathlib import Path

import pytest

from helpers import build  # noqa: E402  (tests/ is on sys.path: conftest.py)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
import cluster  # noqa: E402
from cluster import Cluster, Guest  # noqa: E402

ITERS = int(os.environ.get("DAXFS_CAS16_ITERS", "200000"))
MIN_RETRIES = 300
PARTIES = 3         # guests A, B and the host
HOST = REPO / "build" / "cas16" / "hostcas16"


@pytest.fixture(scope="module")
def built():
    cluster.require_vm(pytest)
    # guests of another root's kernel (tests/test_kernel_compat.py) load the
    # module kernel-compat.sh -i built for it: its headers may want a
    # compiler that only that root has
    kver = os.environ.get("DAXFS_VM_KVER") if os.environ.get("DAXFS_VM_ROOT") else None
    p = build.make("-s", "-C", str(REPO / "vm" / "cas16"), "host" if kver else "all",
                   capture_output=True, text=True)
    if p.returncode != 0:
        if "kernel headers not found" in p.stderr and os.environ.get("DAXFS_VM_TESTS") != "1":
            pytest.skip(p.stderr.strip())
        pytest.fail("building the cas16 check failed:\n" + p.stdout[-3000:] + p.stderr[-3000:])
    if kver and not (REPO / "build" / f"cas16-{kver}" / "cas16mod.ko").is_file():
        pytest.fail(f"no build/cas16-{kver}/cas16mod.ko: scripts/kernel-compat.sh -i SUITE builds it")
    return True


def parse(line):
    return {k: int(v) for k, v in (t.split("=", 1) for t in line.split() if "=" in t)}


def test_cas16_atomic_across_guests_and_host(request, built):
    with Cluster(label=request.node.name, size=64 << 20, timeout=300) as c:
        guests = [Guest(g, "cas16", [str(ITERS), str(MIN_RETRIES), str(PARTIES)]) for g in "AB"]
        res = c.run(guests, host_cmd=[str(HOST), str(c.shm), "0", str(PARTIES)])
    assert res.ok, res.summary()
    seen = {g: parse(" ".join(r.result_lines)) for g, r in res.guests.items()}
    seen["host"] = parse(res.host.output.strip().splitlines()[-1])
    print(seen)
    want = sum(s["done"] for s in seen.values())
    for who, s in seen.items():
        assert s["err"] == 0, (who, s)
        assert (s["lo"], s["hi"]) == (want, want), (who, s)
        assert s["bad_pairs"] == 0, (who, s)
    for g in "AB":
        assert seen[g]["done"] >= ITERS and seen[g]["retries"] >= MIN_RETRIES, seen
