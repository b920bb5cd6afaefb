"""Bash completion for daxfs (completion/daxfs), driven through bash.

Each case sources the completion script in a fresh `bash`, sets
COMP_WORDS/COMP_CWORD as readline would for a command line, calls the
completion function and reads COMPREPLY back.  Commands and options come
from the programs' --help; paths inside the filesystem from the region.
"""

import os
import subprocess
from pathlib import Path

import pytest

from helpers import env

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "build" / "bin"
SCRIPT = ROOT / "completion" / "daxfs"

DRIVER = r'''
source "$1"; shift
func=$1; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
"$func"
printf '%s\n' "${COMPREPLY[@]}"
'''


def complete(*words, func="_daxfs", region=None, cwd=None):
    e = dict(os.environ, PATH="%s:%s" % (BIN, os.environ["PATH"]))
    e.pop("DAXFS_REGION", None)
    if region:
        e["DAXFS_REGION"] = region
    res = subprocess.run(["bash", "--norc", "--noprofile", "-c", DRIVER, "_",
                          str(SCRIPT), func, *words], capture_output=True,
                         text=True, env=e, cwd=cwd, timeout=60)
    assert res.returncode == 0 and not res.stderr, res.stderr
    return sorted(line for line in res.stdout.splitlines() if line)


@pytest.fixture(scope="module")
def tree():
    path = env.region_path("completion")
    env.mkfs(path, 16 * env.MiB)
    daxfs = str(BIN / "daxfs")
    for argv in (["mkdir", "-p", "/data/in", "/dir two"],
                 ["touch", "/data/a.csv", "/data/b.csv", "/dir two/x"],
                 ["ln", "-s", "/data", "/link"]):
        subprocess.run([daxfs, "-r", path, *argv], check=True)
    yield path
    env.remove(path)


def test_commands():
    assert complete("daxfs", "l") == ["ln", "locks", "ls", "lsattr"]
    assert complete("daxfs", "-r", "/x", "mk") == ["mkdir"]
    assert "fallocate" in complete("daxfs", "")


def test_global_and_command_options():
    assert complete("daxfs", "--re") == ["--region"]
    assert complete("daxfs", "ls", "-") == ["-a", "-d", "-i", "-l"]
    assert complete("daxfs", "fallocate", "-") == ["-l", "-n", "-o", "-p", "-z"]
    assert complete("daxfs", "run", "--") == ["--at", "--mode", "--prefault",
                                             "--region"]
    assert complete("mkfs.daxfs", "--lab", func="_daxfs_tool") == ["--label"]
    assert complete("fsck.daxfs", "--b", func="_daxfs_tool") == \
        ["--backing", "--badblocks"]


def test_paths_inside_the_region(tree):
    assert complete("daxfs", "ls", "/", region=tree) == \
        ["/data/", "/dir two/", "/link"]
    assert complete("daxfs", "-r", tree, "cat", "/data/") == \
        ["/data/a.csv", "/data/b.csv", "/data/in/"]
    assert complete("daxfs", "rm", "/dir two/", region=tree) == ["/dir two/x"]
    assert complete("daxfs", "ls", "", region=tree) == \
        ["data/", "dir two/", "link"]
    assert complete("daxfs", "--region=" + tree, "stat", "d") == \
        ["data/", "dir two/"]
    assert complete("daxfs", "get", "/data/a", region=tree) == ["/data/a.csv"]


def test_local_paths(tree, tmp_path):
    (tmp_path / "local.bin").write_bytes(b"x")
    (tmp_path / "mnt").mkdir()
    assert complete("daxfs", "put", "loc", region=tree, cwd=tmp_path) == \
        ["local.bin"]
    assert complete("daxfs", "put", "local.bin", "/data/i", region=tree,
                    cwd=tmp_path) == ["/data/in/"]
    assert complete("daxfs", "get", "/data/a.csv", "lo", region=tree,
                    cwd=tmp_path) == ["local.bin"]
    assert complete("daxfs", "mount", "m", cwd=tmp_path) == ["mnt"]
    assert complete("daxfs", "-r", "lo", cwd=tmp_path) == ["local.bin"]
