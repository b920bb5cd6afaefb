"""pytest configuration for the user-space DaxFS suites.

Puts python/ (the daxfs bindings) and tests/ (the helpers package) on
sys.path, registers the Hypothesis profiles and provides region fixtures.
Regions live in /dev/shm under unique names and are removed afterwards.
"""

import os
import re
import sys

import pytest

_TESTS = os.path.dirname(os.path.abspath(__file__))
for _p in (os.environ.get("DAXFS_PYDIR", os.path.join(os.path.dirname(_TESTS), "python")),
           _TESTS):
    if _p not in sys.path:
        sys.path.insert(0, _p)

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # only test_model.py needs it
    settings = None

if settings is not None:
    # "ci" (the default): fixed seed, no example database, bounded sizes.
    # "dev": random seeds, remembers failures in .hypothesis/.
    # "long": for soak runs (DAXFS_HYPOTHESIS_PROFILE=long).
    _common = dict(deadline=None,
                   suppress_health_check=[HealthCheck.too_slow,
                                          HealthCheck.data_too_large,
                                          HealthCheck.filter_too_much])
    settings.register_profile("ci", derandomize=True, database=None,
                              max_examples=100, stateful_step_count=50,
                              print_blob=True, **_common)
    settings.register_profile("dev", max_examples=200, stateful_step_count=60,
                              **_common)
    settings.register_profile("long", max_examples=2000, stateful_step_count=100,
                              **_common)
    settings.load_profile(os.environ.get("DAXFS_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def region_path(request):
    """A unique, not yet created region path in /dev/shm; removed afterwards."""
    from helpers import env
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)[:40]
    path = env.region_path(tag)
    yield path
    env.remove(path)


@pytest.fixture
def region(region_path):
    """A fresh 128 MiB region, formatted; yields its path."""
    from helpers import env
    env.mkfs(region_path, 128 * env.MiB)
    return region_path


@pytest.fixture
def need_fsck():
    from helpers import env
    if env.tool("fsck.daxfs") is None:
        pytest.fail("build/bin/fsck.daxfs is missing: run make first")


@pytest.fixture(scope="session")
def crash_build():
    """build/crash/libdaxfs.so (`make crash`): the library with crash points."""
    import crashlib as cl
    from helpers import build
    res = build.make("-s", "-C", cl.REPO, "crash", capture_output=True,
                     text=True, timeout=600)
    if res.returncode != 0 or not os.path.exists(cl.CRASH_LIB):
        pytest.fail("crash build failed: %s" % res.stderr[-2000:])
    return cl.CRASH_LIB


# make check runs the suite in several processes (pytest-xdist; docs/testing.md
# "Parallel runs").  The QEMU guest tests (tests/vm, test_kernel_compat.py) form
# two groups, each run in file order by one process: a file's module-scoped
# fixture (one guest boot for its tests) stays in one process, and at most two
# clusters of TCG guests run at once.  xdist hands out the largest groups first,
# so both start at once and the other tests fill in around them.  Seconds each
# file took alone (2026-12-03):
GUEST_GROUP_1 = {
    "test_kernel_compat.py",        # 180 building, ~400 booting 6.12
    "test_kernel_pcache.py",        # 272
    "test_kernel_mmap_reuse.py",    # 138
    "test_kernel_lincheck.py",      # 135
    "test_vm_smoke.py",             # 62
}                                   # all other tests/vm files: about 1,220 s


def guest_group(path):
    """The group of a test file (a path relative to the repository): a guest
    group's name, or None."""
    parts = path.split("/")
    if parts[-1] in GUEST_GROUP_1:
        return "guests-1"
    return "guests-2" if parts[-2:-1] == ["vm"] else None


# Not xdist's own xdist_group mark: pytest 9.2 keeps a test's id where
# xdist 3.8 no longer appends the group to it, and the groups came apart.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class GuestGroups(LoadScopeScheduling):
        """One work unit per guest group; every other test is one of its own."""

        def _split_scope(self, nodeid):
            return guest_group(nodeid.split("::", 1)[0]) or nodeid

    return GuestGroups(config, log)


# CI shows only the tail of a run's output, and a run cut off by CI's time
# limit never prints its summary (stop 45: one F in a dotted line, nothing
# else).  So a failure is named the moment it happens, with the start of its
# message, and so is every test that took long, with its time.
SLOW_TEST_S = 240
_config = None


def pytest_configure(config):
    global _config
    _config = config


def pytest_runtest_logreport(report):
    terminal = _config and _config.pluginmanager.get_plugin("terminalreporter")
    if not terminal:
        return
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        msg = crash.message if crash else str(report.longrepr)
        msg = " ".join(msg.split())[:300]
        terminal.write_line(f"\n!! {report.when} FAILED {report.nodeid} "
                             f"({report.duration:.0f} s): {msg}")
    elif report.when == "call" and report.duration >= SLOW_TEST_S:
        terminal.write_line(f"\n.. slow: {report.nodeid} {report.duration:.0f} s")
