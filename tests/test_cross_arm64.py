"""The C unit test programs built for arm64 and run under qemu-user
(docs/design.md "Memory ordering").

`make cross-arm64` builds libdaxfs and tests/c/*.c with Debian's
aarch64-linux-gnu-gcc into build/arm64/tests/ (static), and each program
runs under qemu-aarch64-static, which executes the guest's atomics with
the host's.  x86's strong ordering still hides most arm64 reorderings, so
this checks that the core builds and behaves on arm64 code (its barriers,
its 64-bit atomics, no x86-only builtin), not the ordering itself.
Skipped where the cross tools are absent (scripts/setup.sh installs them).
"""

import os
import shutil
import subprocess

import pytest

from helpers import build  # noqa: E402  (tests/ is on sys.path: conftest.py)

from test_c_units import PROGRAMS, ROOT, run_program

BIN = os.path.join(ROOT, "build", "arm64", "tests")
QEMU = "qemu-aarch64-static"
CC = "aarch64-linux-gnu-gcc"
EM_AARCH64 = 183


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """make's result, and a copy of the programs it built: another test
    process's make may relink them while this one runs them (a program
    read while its link rewrote it was empty), and the copy is taken under
    the build lock."""
    for tool in (CC, QEMU):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not installed (scripts/setup.sh)")
    copy = str(tmp_path_factory.mktemp("arm64"))
    with build.lock():
        res = subprocess.run(["make", "-C", ROOT, "-j2", "cross-arm64"],
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        for name in PROGRAMS:
            if os.path.exists(os.path.join(BIN, name)):
                shutil.copy2(os.path.join(BIN, name), copy)
    return res, copy


def elf_machine(path):
    with open(path, "rb") as f:
        head = f.read(20)
    assert head[:4] == b"\x7fELF", path
    return int.from_bytes(head[18:20], "little")


@pytest.mark.parametrize("name", PROGRAMS)
def test_c_unit_arm64(built, name, monkeypatch):
    # steps that qemu-user cannot run (a fork while other threads run can
    # deadlock the child inside the emulator) are left out under it
    monkeypatch.setenv("DAXFS_TEST_EMULATED", "1")
    res, copy = built
    path = os.path.join(copy, name)
    if os.path.exists(path):
        assert elf_machine(path) == EM_AARCH64
    run_program(res, path, prefix=(QEMU,))
