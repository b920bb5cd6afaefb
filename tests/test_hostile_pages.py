"""Every metadata page of a small region garbled in turn, then read with
`daxfs ls -l`, `daxfs stat` and `daxfs cat`: each gives a result or a
clear error, never a hang or a signal.

A garbled lane page of a free host slot used to look like 32 busy lanes
to the host that joined that slot: every operation then waited for a
free lane (a million yields, about 15 s) and `daxfs ls` took minutes
(docs/hosts.md "Joining").  The subprocess timeout below only tells a
hang from a slow machine; it is no speed assertion.
"""

import os
import random
import re
import subprocess

import pytest

from helpers import env
from test_fsck import Image

import daxfs

DAXFS = os.path.join(env.BIN, "daxfs")
PAGE = 4096
HANG_S = 20
BODY = b"hostile page body\n" * 500
# what a failure may say: the damage, or that a name is not there (a
# garbled bucket page loses names); never "busy" or a wait for hosts
CLEAR = re.compile(rb"corrupt|fsck|No such file|Not a directory|not a DaxFS|"
                   rb"needs cleaning|Input/output error")


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("hpages") / "golden.img")
    daxfs.mkfs(path, 2 << 20, max_hosts=8)
    with daxfs.Region(path) as r:
        r.mkdir("/d")
        r.write_file("/d/f", BODY)
        r.symlink("/d/f", "/d/s")
    with open(path, "rb") as f:
        return path, f.read(), Image(path)


def garbled(gold, page, fill, seed):
    b = bytearray(gold)
    if fill == "random":
        rng = random.Random(seed)
        b[page:page + PAGE] = bytes(rng.getrandbits(8) for _ in range(PAGE))
    else:
        b[page:page + PAGE] = bytes([fill]) * PAGE
    return bytes(b)


COMMANDS = [
    ("ls", ["ls", "-l", "/", "/d"]),
    ("stat", ["stat", "/d/f", "/d/s"]),
    ("cat", ["cat", "/d/f"]),
]


def test_garbled_metadata_pages(golden, tmp_path):
    _, gold, im = golden
    assert im.pool_off % PAGE == 0 and im.pool_off >= 8 * PAGE
    problems = []
    path = str(tmp_path / "case.img")
    for page in range(0, im.pool_off, PAGE):
        for fill in ("random", 0xff, 0x01):
            for name, args in COMMANDS:
                # each command on a fresh copy: a command that joins
                # changes the image (its host slot)
                with open(path, "wb") as f:
                    f.write(garbled(gold, page, fill, page))
                what = "page %#x (%s) %s" % (page, fill, name)
                try:
                    res = subprocess.run([DAXFS, "-r", path] + args,
                                         capture_output=True, timeout=HANG_S)
                except subprocess.TimeoutExpired:
                    problems.append("%s: no answer in %d s" % (what, HANG_S))
                    continue
                if res.returncode < 0:
                    problems.append("%s: killed by signal %d" %
                                    (what, -res.returncode))
                elif res.returncode not in (0, 1):
                    problems.append("%s: exit %d" % (what, res.returncode))
                elif res.returncode == 1 and not all(
                        CLEAR.search(ln) for ln in res.stderr.splitlines()):
                    problems.append("%s: unclear error %r" %
                                    (what, res.stderr[-200:]))
                elif res.returncode == 1 and not res.stderr.strip():
                    problems.append("%s: failed without a message" % what)
                elif res.returncode == 0 and name == "cat" and \
                        res.stdout != BODY:
                    problems.append("%s: wrong contents" % what)
    assert not problems, "\n".join(problems[:30])
