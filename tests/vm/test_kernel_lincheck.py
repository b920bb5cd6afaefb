"""Linearizability with kernel guests (docs/lincheck.md, "Guests"): two QEMU guests, each a
daxfs.ko mount (phys=) of the shared region, and a libdaxfs worker process on this machine
run namespace rounds, then data rounds, then nested rounds (names under directories that
the clients create, remove and move), together; lc_run (tests/lincheck/lc_driver.c)
formats the region, runs the rounds and observes, the guests' client
(tests/lincheck/lc_guest.c, static, through system calls on the mount) records in a shared
page on a second nvdimm, and the Go checker (tools/lincheck) must find every round
linearizable.  Three more tests make one guest lie (lc_run -X), in a namespace, a data and
a nested round, and the checker must say so.  One kills guest B's QEMU inside one of its
operations (lc_run -K): the rounds go on with the survivors, who recover its host, and the
history must still be linearizable.

Skip/fail rules as in test_kernel_cluster.py (DAXFS_VM_TESTS); Go is needed for the
checker.  The module is only ever loaded inside the guests.  About 3-5 minutes under TCG.
DAXFS_LC_ROUNDS=N: N namespace rounds (400); DAXFS_LC_DATA_ROUNDS=N: N data rounds (300);
DAXFS_LC_NEST_ROUNDS=N: N nested rounds (1200);
DAXFS_LC_SECONDS=S: rounds of each for S seconds (a long run).
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import build  # noqa: E402  (tests/ is on sys.path: conftest.py)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
import cluster  # noqa: E402
from cluster import Cluster, Guest  # noqa: E402

LC_RUN = REPO / "build" / "lincheck" / "lc_run"
CHECKER = REPO / "build" / "lincheck" / "lincheck"
FSCK = REPO / "build" / "bin" / "fsck.daxfs"
LC_GUEST = REPO / "build" / "vm-helpers" / "lc_guest"
KO = REPO / "kernel" / "daxfs.ko"
SIZE_MB = 64
LC_STAT, LC_READDIR = 8, 9      # tests/lincheck/lc.h enum lc_op
ROUNDS = int(os.environ.get("DAXFS_LC_ROUNDS", "400"))
DATA_ROUNDS = int(os.environ.get("DAXFS_LC_DATA_ROUNDS", "300"))
NEST_ROUNDS = int(os.environ.get("DAXFS_LC_NEST_ROUNDS", "1200"))
SECONDS = int(os.environ.get("DAXFS_LC_SECONDS", "0"))   # a long run: -t instead of -n


def _need(msg):
    if os.environ.get("DAXFS_VM_TESTS") == "1":
        pytest.fail(msg + " [DAXFS_VM_TESTS=1]", pytrace=False)
    pytest.skip(msg)


def _make(*targets):
    return build.make("-s", "-C", str(REPO), *targets, capture_output=True,
                      text=True)


@pytest.fixture(scope="module")
def built():
    """VM prerequisites, lc_run, lc_guest, the checker and daxfs.ko."""
    cluster.require_vm(pytest)
    if os.environ.get("DAXFS_VM_NOBUILD") != "1":
        p = _make("all")
        if p.returncode != 0:
            pytest.fail("user-space build failed:\n" + p.stdout[-2000:] + p.stderr[-2000:])
        p = _make("module")
        if p.returncode != 0:
            if "kernel headers not found" in p.stderr:
                _need("cannot build daxfs.ko: " + p.stderr.strip())
            pytest.fail("make module failed:\n" + p.stdout[-3000:] + p.stderr[-3000:])
        go = shutil.which("go") or "/usr/local/go/bin/go"
        assert os.access(go, os.X_OK), "Go is missing: tools/lincheck needs it (scripts/setup.sh)"
        p = _make("lincheck-checker")
        assert p.returncode == 0, p.stdout + p.stderr
    for f in (LC_RUN, CHECKER, LC_GUEST, KO):
        assert f.is_file(), f"{f} not built"
    return True


def run_guest_lincheck(label, lc_args, timeout, check_args="-max-violations 3",
                       expect_clean=True, mode="ns", pidfile_b=None, after=None):
    """lc_run with 1 host worker and 2 guests (clients 1, 2), piped into the checker; the
    histories stay in build/vm/logs/LABEL/history, and those of a run that expected no
    violation and failed also in build/vm/logs/LABEL-TIME/.  pidfile_b: where guest B's
    QEMU writes its pid; after(cluster): called once everything ended, while the region
    still exists (its result is kept in res.after).
    Returns (cluster result, the checker's counts, host.log text); res.history is the
    history's file."""
    page = f"/dev/shm/daxfs-lc-{os.getpid()}-page"
    with Cluster(label=label, size=f"{SIZE_MB}M", extra_shm=[page], timeout=timeout) as c:
        hist = c.log_dir / "history"
        cmd = (f"set -o pipefail; {LC_RUN} -r \"$DAXFS_VM_SHM\" -S {SIZE_MB} -l 10000 -w 1 "
               f"-g 2 -x {page} -m {mode} {lc_args} | tee {hist} | {CHECKER} {check_args}")
        res = c.run([Guest("A", "lincheck", ["1"]),
                     Guest("B", "lincheck", ["2"], pidfile=pidfile_b)],
                    host_cmd=["bash", "-c", cmd])
        res.after = after(c) if after else None
        # where the log folder is (another root's kernel logs under its version)
        res.history = hist
    out = res.host.output if res.host else ""
    m = re.search(r"lincheck: (\d+) rounds, (\d+) operations, (\d+) violations", out)
    counts = tuple(int(x) for x in m.groups()) if m else None
    # a guest killed on purpose (pidfile_b) has no result of its own
    ok = res.host and res.host.rc == 0 and all(
        g.ok for g in res.guests.values() if not (pidfile_b and g.name == "B"))
    if expect_clean and hist.exists() and not (ok and counts and counts[2] == 0):
        # the next run of the test starts its log folder afresh: keep this one's
        # histories and report beside it for a second look
        keep = c.log_dir.parent / f"{label}-{time.strftime('%Y%m%d-%H%M%S')}"
        keep.mkdir(exist_ok=True)
        shutil.copy(hist, keep / "history")
        (keep / "report").write_text(out)
    return res, counts, out


# the observer's operations in a round: namespace, an lstat of each name; data, an fstat
# and a read of each file; nested, the mkdirs of a and b before the round and an lstat of
# each of the 12 names
OBSERVED = {"ns": 4, "data": 4, "nest": 2 + 12}


def check_clean(request, mode, rounds, more=""):
    """ROUNDS rounds of MODE (or SECONDS): 0 violations, every operation recorded.
    more: lc_run options added.  Returns the report."""
    run = f"-t {SECONDS}" if SECONDS else f"-n {rounds}"
    res, counts, out = run_guest_lincheck(request.node.name, f"{run} -o 20 -d 300 {more}",
                                          timeout=300 + SECONDS, mode=mode)
    assert res.ok and res.host.rc == 0, res.summary() + "\n" + out[-3000:]
    assert counts and counts[2] == 0 and (SECONDS or counts[0] == rounds), out[-3000:]
    # 3 clients x 20 ops and the observer's
    assert counts[1] == counts[0] * (3 * 20 + OBSERVED[mode]), out[-3000:]
    print(out[-500:])
    return out


def check_lie_seen(request, mode):
    """100 rounds of MODE where guest A's client (slot 1) lies once a round (lc_run -X 1):
    the checker must report it (and stops at the first, -stop, which stops lc_run too)."""
    res, counts, out = run_guest_lincheck(request.node.name, "-n 100 -o 20 -d 300 -X 1",
                                          timeout=300, check_args="-max-violations 1 -stop",
                                          expect_clean=False, mode=mode)
    assert all(g.ok for g in res.guests.values()), res.summary()
    assert counts and counts[2] > 0, out[-3000:]
    assert res.host.rc != 0, out[-3000:]      # the checker's exit status 1
    print(out[-1500:])


def test_kernel_guests_linearizable(request, built):
    """ROUNDS namespace rounds, 1 libdaxfs worker + 2 daxfs.ko guests x 20 operations each
    (every client paced by -d, up to 300 us before each operation, so that the host's
    operations spread over the slower guests'): 0 violations, every operation recorded."""
    check_clean(request, "ns", ROUNDS)


def test_kernel_guests_whiteout_linearizable(request, built):
    """The namespace rounds with RENAME_WHITEOUT in the mix (lc_run -W): the guests'
    renameat2 goes through daxfs.ko's one core rename, which leaves the whiteout at the
    old name in its own step (docs/kernel.md): 0 violations, and whiteouts were left."""
    out = check_clean(request, "ns", ROUNDS, "-W")
    m = re.search(r"lc_run: (\d+) renames left a whiteout", out)
    assert m and int(m.group(1)) > 0, out[-3000:]


def test_kernel_guests_lie_is_seen(request, built):
    """The same run, but guest A's client reports EEXIST for the first mkdir of each round
    that made its directory: the checker must report it."""
    check_lie_seen(request, "ns")


def test_kernel_guests_nested_linearizable(request, built):
    """NEST_ROUNDS nested rounds (lc_run -m nest: the names a b c d and x, y under each,
    a and b made directories before each round), 1 libdaxfs worker + 2 daxfs.ko guests x
    20 operations each, paced as above: a guest walks to a nested name's parent through
    its dentry cache (revalidated by daxfs.ko) while the other clients create, remove,
    move and exchange the directories it walks through.  0 violations, every operation
    recorded (docs/lincheck.md "Nested rounds with guests")."""
    check_clean(request, "nest", NEST_ROUNDS)


def test_kernel_guests_nested_lie_is_seen(request, built):
    """Nested rounds where guest A's client reports EEXIST for the first mkdir of each
    round that made its directory: the checker must report it."""
    check_lie_seen(request, "nest")


def test_kernel_guests_data_linearizable(request, built):
    """DATA_ROUNDS data rounds (2 files; pwrite at overlapping offsets on a 512-byte grid,
    O_APPEND write, ftruncate, pread, fstat, each guest operation on its own open of the
    file), 1 libdaxfs worker + 2 daxfs.ko guests x 20 operations each, paced as above:
    0 violations, every operation recorded.  A guest's append has no offset (write(2)
    returns a count): the checker checks it by the size alone (lc.h LC_VFS_APPEND)."""
    check_clean(request, "data", DATA_ROUNDS)


def test_kernel_guests_data_lie_is_seen(request, built):
    """Data rounds where guest A's client adds 1 to the size its first fstat of each round
    saw (a size off the 512-byte grid, which no client makes): the checker must report it."""
    check_lie_seen(request, "data")


def read_history(path):
    """The rounds of a history file: {round: [(client, call, ret, op), ...]}."""
    rounds, cur = {}, None
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if f[0] == "R":
            cur = rounds.setdefault(int(f[1]), [])
        else:
            cur.append(tuple(int(x) for x in f[:4]))
    return rounds


def test_kernel_guest_killed_mid_round(request, built):
    """200 namespace rounds; lc_run -K kills guest B's QEMU (client 2) inside one of its
    operations that change something (not lstat or readdir), in a random round among the
    first 50 (SIGSTOP, a call without a return in its slot, SIGKILL).  The history must be linearizable with that operation open-ended
    (it may or may not have happened); the rounds after it run with the host worker and
    guest A only; the survivors (guest A's daxfs.ko, the libdaxfs host) recover B's host
    once its lease ran out, so fsck -n finds no host left, dead or alive; guest A unmounts
    with a clean dmesg (vm/guest/lincheck.sh)."""
    rounds = 200
    pidfile = Path(f"/dev/shm/daxfs-lc-{os.getpid()}-qemu-B.pid")
    pidfile.unlink(missing_ok=True)
    seed = random.randrange(1, 1 << 30)

    def fsck(c):
        p = subprocess.run([str(FSCK), "-n", "--json", str(c.shm)], capture_output=True,
                           text=True)
        return p.returncode, p.stdout, p.stderr

    try:
        res, counts, out = run_guest_lincheck(
            request.node.name, f"-n {rounds} -o 20 -d 300 -s {seed} -K 2:{pidfile}",
            timeout=300, pidfile_b=pidfile, after=fsck)
    finally:
        pidfile.unlink(missing_ok=True)
    why = f"seed {seed}\n" + res.summary() + "\n" + out[-3000:]
    # guest B's QEMU was SIGKILLed (run-guest.sh: exit 137), its script never ended; A,
    # lc_run and the checker all passed
    b = res.guests["B"]
    assert "qemu exit 137" in b.log and "DAXFS-VM: script rc=" not in b.log, why
    assert res.guests["A"].ok and res.host.rc == 0, why
    assert counts and counts[2] == 0 and counts[0] == rounds, why
    m = re.search(r"lc_run: guest client 2 killed in round (\d+), (\d+) operation\(s\) open; "
                  r"(\d+) rounds after it", out)
    assert m, why
    kill_round, nr_open, after = (int(x) for x in m.groups())
    assert nr_open == 1 and kill_round + after == rounds and after >= 100, why

    hist = read_history(res.history)
    assert sorted(hist) == list(range(1, rounds + 1)), why
    assert sum(len(ops) for ops in hist.values()) == counts[1], why
    for n, ops in hist.items():
        per = {k: [o for o in ops if o[0] == k] for k in range(4)}
        open_ops = [o for o in ops if o[2] == 0]
        # 20 operations of each live client, 4 observations (client 3), all returned
        # but the killed one; client 2 stops at the operation it was killed in
        assert len(per[0]) == len(per[1]) == 20 and len(per[3]) == 4, (n, why)
        if n < kill_round:
            assert len(per[2]) == 20 and not open_ops, (n, why)
        elif n == kill_round:
            assert 1 <= len(per[2]) <= 20 and open_ops == [per[2][-1]], (n, why)
            assert open_ops[0][3] not in (LC_STAT, LC_READDIR), (n, why)
        else:
            assert not per[2] and not open_ops, (n, why)

    # B's host slot was recovered by the survivors: no host left, dead or alive.  Exit
    # 4 is allowed for what a dead host leaves by design (leaked space, counts high).
    rc, report, err = res.after
    r = json.loads(report)
    assert rc in (0, 4), f"fsck rc {rc}\n{report}\n{err}"
    assert r["summary"]["live_hosts"] == 0 and r["summary"]["dead_hosts"] == 0, report
    assert not [p for p in r["problems"] if p["code"] == "host-dead"], report
    print(out[-800:])
