"""Runs the C unit test programs (tests/c/*.c -> build/tests/*).

`make` runs once per session (fixture); every test program is its own
parametrized test that must exit 0.  A program whose source exists but
whose binary is missing fails (it did not build), it is never skipped.
"""

import glob
import os
import re
import subprocess

import pytest

from helpers import build  # noqa: E402  (tests/ is on sys.path: conftest.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "tests", "c")
BIN = os.path.join(ROOT, "build", "tests")
TIMEOUT = int(os.environ.get("DAXFS_C_TEST_TIMEOUT", "600"))

PROGRAMS = sorted(f[:-2] for f in os.listdir(SRC) if f.endswith(".c"))


@pytest.fixture(scope="session")
def built():
    """Builds everything once; the output is shown if the build fails."""
    r = build.make("-C", ROOT, "-j4", "-k",
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                   text=True)
    return r


def run_program(built, path, prefix=()):
    """Runs the test program at path (under prefix, e.g. an emulator);
    fails when it was not built or does not exit 0."""
    if not os.path.exists(path):
        pytest.fail("%s was not built (make exit %d):\n%s"
                    % (path, built.returncode, built.stdout[-6000:]))
    r = subprocess.run([*prefix, path], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, "%s exited %d:\n%s" % (path, r.returncode,
                                                     r.stdout[-12000:])


@pytest.mark.parametrize("name", PROGRAMS)
def test_c_unit(built, name):
    run_program(built, os.path.join(BIN, name))


# Programs that time real leases on purpose (expiry, bounded waits).
LEASE_TIMED = {"test_hosts"}
SHORT_LEASE_MS = "300"


@pytest.mark.parametrize("name", [p for p in PROGRAMS
                                  if p not in LEASE_TIMED])
def test_c_unit_short_lease(built, name, monkeypatch):
    """The same program with regions formatted for a 300 ms lease
    (DAXFS_TEST_LEASE_MS, tests/c/tutil.h).  A host the test leaves
    idle while others work must keep its lease as a front end's heartbeat
    does (t_renew_start, t_join_kept); otherwise a CI machine that starves
    it for the default 10 s lease declares it dead and the test fails by
    chance (stops 46 and 47: qemu-aarch64 under the parallel suite).
    Here the idle spell only has to outlast 300 ms, every run."""
    monkeypatch.setenv("DAXFS_TEST_LEASE_MS", SHORT_LEASE_MS)
    run_program(built, os.path.join(BIN, name))


def test_hostless_sweep_covers_every_call():
    """tests/c/test_hostless.c calls every public libdaxfs function that
    takes a handle on a host-less view: a function added to the headers
    without a line there fails here, not on a user's read-only mount."""
    declared = set()
    for header in glob.glob(os.path.join(ROOT, "include", "daxfs",
                                         "libdaxfs*.h")):
        with open(header) as f:
            declared.update(re.findall(
                r"\b(daxfs_\w+)\(\s*(?:const\s+)?struct daxfs_handle\s*\*",
                f.read()))
    with open(os.path.join(SRC, "test_hostless.c")) as f:
        sweep = f.read()
    assert len(declared) > 80, sorted(declared)    # the parse found them
    missing = sorted(d for d in declared
                     if not re.search(r"\b%s\(" % d, sweep))
    assert not missing, "not in tests/c/test_hostless.c: %s" % missing
