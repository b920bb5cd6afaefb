"""Run a SPIN model (docs/models/*.pml) exhaustively and report violations.

Each protocol model lives beside its doc in docs/models/.  A test calls
check_model() once with the model as written (it must verify) and, where
the model has a bug switch (a #define that re-introduces the defect the
protocol closes), once more with that switch to show the model can fail.
"""

import os
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "docs", "models")


def require_spin():
    if shutil.which("spin") is None:
        pytest.fail("spin is not installed: run scripts/setup.sh")


def check_model(name, defines=(), max_depth=100000, timeout=600):
    """Verify docs/models/NAME with safety checks and assertions.

    Returns (ok, report): ok is False when pan found an error (an assertion
    violated, an invalid end state, or an acceptance cycle); report is
    pan's output, to show in an assertion message.
    """
    require_spin()
    src = os.path.join(MODELS, name)
    with tempfile.TemporaryDirectory(prefix="daxfs-spin-") as work:
        shutil.copy(src, work)
        flags = ["-D%s" % d for d in defines]
        subprocess.run(["spin", "-a"] + flags + [name], cwd=work, check=True,
                       capture_output=True, text=True, timeout=timeout)
        subprocess.run(["gcc", "-O2", "-DSAFETY", "-DXUSAFE",
                        "-o", "pan", "pan.c"], cwd=work, check=True,
                       capture_output=True, text=True, timeout=timeout)
        run = subprocess.run(["./pan", "-m%d" % max_depth], cwd=work,
                             capture_output=True, text=True, timeout=timeout)
        report = run.stdout + run.stderr
        if "error: max search depth too small" in report:
            pytest.fail("%s: search depth %d too small\n%s" % (name, max_depth, report))
        errors = None
        for line in report.splitlines():
            if "errors:" in line:
                errors = int(line.split("errors:")[1].split()[0])
        if errors is None:
            pytest.fail("%s: pan gave no result\n%s" % (name, report))
        return errors == 0, report


def assert_verifies(name, defines=()):
    """docs/models/NAME with defines must verify (pan finds no error)."""
    ok, report = check_model(name, defines)
    assert ok, "%s %s: pan found an error\n%s" % (name, list(defines), report)


def assert_violates(name, defines, expect="assertion violated"):
    """docs/models/NAME with defines (a bug switch) must fail, with expect
    in pan's report: the model can catch that bug."""
    ok, report = check_model(name, defines)
    assert not ok, "%s %s: pan found no violation\n%s" % (name, list(defines), report)
    assert expect in report, report
