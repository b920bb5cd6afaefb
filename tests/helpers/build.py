"""make for the tests, one run at a time.

make check runs the suite in several pytest processes at once (pytest-xdist,
docs/testing.md "Parallel runs").  Two makes of one target in one tree write
the same objects at once (a truncated .o, a program linked from half of
one), and a build that adds files to the tree while test_deb.py compares the
tree before and after `make deb` looks like a leftover.  Every make the
tests start therefore holds one lock, build/.make.lock, while it runs.
"""

import contextlib
import fcntl
import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOCK = os.path.join(REPO, "build", ".make.lock")


@contextlib.contextmanager
def lock():
    """Held while the caller builds; other test processes' builds wait."""
    os.makedirs(os.path.dirname(LOCK), exist_ok=True)
    with open(LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def make(*args, **kwargs):
    """subprocess.run(["make", *args], **kwargs) under the build lock."""
    with lock():
        return subprocess.run(["make", *args], **kwargs)


def run_with_defect(name, flag, program, timeout=300, race_secs=30):
    """Builds the C test program tests/PROGRAM in build/bug-NAME with
    -DFLAG (a re-introduced defect, docs/testing.md) and runs it; returns
    the CompletedProcess, stdout and stderr together.  The build must
    succeed: the caller asserts how the program fails.  Its races that
    must catch the defect run up to race_secs (DAXFS_TEST_RACE_SECS,
    tests/c/tutil.h t_race_secs) and stop at their first catch: the
    programs' own 1.5-2 s missed the defect in CI rehearsals on a loaded
    2-core machine (test_peek, session 52; test_optread, session 53)."""
    bug_build = os.path.join(REPO, "build", "bug-" + name)
    prog = os.path.join(bug_build, "tests", program)
    r = make("-C", REPO, "-j2", "BUILD=" + bug_build, "EXTRA_CFLAGS=-D" + flag,
             prog, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
             text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:]
    return subprocess.run([prog], cwd=REPO, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True,
                          timeout=timeout,
                          env=dict(os.environ,
                                   DAXFS_TEST_RACE_SECS=str(race_secs)))
