"""Power-failure states (docs/testing.md "Power-failure states",
docs/modes.md): a workload on a traced build of libdaxfs (`make pmem`)
where only flushed-and-drained cache lines reach the "media"; crash
states are the media plus a random subset of the other lines, taken after
every call and inside calls.  tests/powerfail.py has the harness.

* sync: every state taken after a call returned holds every call that
  returned, and fsck.daxfs -n is clean after recovery;
* states taken inside a call hold the calls before it and the one in
  flight done, not done or (its file) torn, as after a host crash
  (crashlib.check_victim), and fsck repairs what it finds;
* strict: as sync, and an append in flight is whole or absent;
* posix (DAXFS_OPEN_PERSISTENT, no sync): fsck -y repairs every state.
"""

import os
import subprocess
import sys

import pytest

from helpers import build  # noqa: E402  (tests/ is on sys.path: conftest.py)

from helpers import env
import powerfail as pf


@pytest.fixture(scope="module")
def pmem_build():
    res = build.make("-s", "-C", pf.REPO, "pmem",
                     capture_output=True, text=True, timeout=600)
    if res.returncode != 0 or not os.path.exists(pf.PMEM_LIB):
        pytest.fail("pmem build failed: %s" % res.stderr[-2000:])
    return pf.PMEM_LIB


def run_states(lib, mode, seed, nops):
    e = dict(os.environ)
    e["DAXFS_LIB"] = lib
    res = subprocess.run([sys.executable, os.path.join(env.TESTS, "powerfail.py"),
                          mode, str(seed), str(nops)], env=e,
                         capture_output=True, text=True, timeout=600)
    return res.returncode, res.stdout + res.stderr


@pytest.mark.parametrize("seed", [11, 12])
def test_sync_states(pmem_build, seed):
    code, out = run_states(pmem_build, "sync", seed, 50)
    assert code == 0, out[-4000:]
    assert "0 problems" in out, out[-4000:]


def test_strict_appends_whole(pmem_build):
    """strict: as sync, and an append in flight is whole or absent in
    every state (seed 11 tore one before appends published by their size
    CAS)."""
    code, out = run_states(pmem_build, "strict", 11, 50)
    assert code == 0, out[-4000:]
    assert "0 problems" in out, out[-4000:]


def test_strict_overwrites_whole(pmem_build):
    """strict: a pwrite over existing bytes (and on beyond EOF) is whole
    or absent in every state, a state at every drain (format 6 stored it
    in place: torn states in the 30000-byte overwrite; format 7 logs it
    out of place and commits it with one store, docs/modes.md)."""
    code, out = run_states(pmem_build, "strict", 1, "overwrite")
    assert code == 0, out[-4000:]
    assert "0 problems" in out, out[-4000:]


@pytest.mark.parametrize("mode", ["sync", "strict"])
def test_runs_states(pmem_build, mode):
    """2 MiB runs (format 11): every state, a state at every drain, holds
    the calls that returned and fsck is clean; the run published by one
    CAS is never seen with pages that did not reach the media."""
    code, out = run_states(pmem_build, mode, 1, "runs")
    assert code == 0, out[-4000:]
    assert "0 problems" in out, out[-4000:]


def test_posix_states_structure(pmem_build):
    code, out = run_states(pmem_build, "posix", 13, 40)
    assert code == 0, out[-4000:]
