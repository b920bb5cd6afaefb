"""Ordinary programs on the FUSE mount give what they give on tmpfs
(issue 12, "done when"): coreutils, tar, git, sqlite3 in WAL mode,
python3 and fio run one script (tests/helpers/everyday.py, which the
preload's and daxfs.ko's tests run too) in a tmpfs directory and in a
FUSE mount; the script's output and the trees it leaves (names, types,
modes, link counts, sizes, contents, symlink targets) must be the same.
"""
import os
import shutil
import tempfile

import pytest

from helpers import env
from helpers import fuse as hf
from helpers.everyday import manifest, run_script

pytestmark = [
    pytest.mark.skipif(hf.skip_reason() is not None, reason=str(hf.skip_reason())),
    pytest.mark.skipif(any(shutil.which(p) is None for p in ("git", "sqlite3", "tar", "fio")),
                       reason="needs git, sqlite3, tar and fio"),
]


def test_programs_same_as_tmpfs(region_path):
    env.mkfs(region_path, 512 * env.MiB)
    ref = tempfile.mkdtemp(prefix="dxref-", dir=env.SHM)       # /dev/shm is tmpfs
    m = hf.Mount(region_path)
    try:
        work = m.path("w")
        os.mkdir(work)
        docs = os.path.join(env.REPO, "docs")
        rc, out_fuse, err = run_script(work, docs)
        assert rc == 0, "on FUSE:\n%s%s" % (out_fuse[-3000:], err[-3000:])
        rc, out_ref, err = run_script(ref, docs)
        assert rc == 0, "on tmpfs:\n%s%s" % (out_ref[-3000:], err[-3000:])
        assert out_fuse == out_ref
        assert manifest(work) == manifest(ref)
    finally:
        m.close()
        shutil.rmtree(ref, ignore_errors=True)
    code, out = env.fsck(region_path)
    assert code == 0, out
