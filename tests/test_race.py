"""Double-fetch tests (tests/race/*.c, `make race`).

The programs link a core built with its race points live: a hook changes
a region value between its validation and its use, as a buggy peer could.
Built under AddressSanitizer; each program must exit 0.
"""

import os
import subprocess

import pytest

from helpers import build  # noqa: E402  (tests/ is on sys.path: conftest.py)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "tests", "race")
BIN = os.path.join(ROOT, "build", "race", "race")
PROGRAMS = sorted(f[:-2] for f in os.listdir(SRC) if f.endswith(".c"))


@pytest.fixture(scope="module")
def race_build():
    r = build.make("-s", "-C", ROOT, "race",
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                   text=True)
    assert r.returncode == 0, "make race failed:\n%s" % r.stdout[-6000:]


@pytest.mark.parametrize("name", PROGRAMS)
def test_race(race_build, name):
    r = subprocess.run([os.path.join(BIN, name)], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    assert r.returncode == 0, "%s exited %d:\n%s" % (name, r.returncode,
                                                       r.stdout[-12000:])
