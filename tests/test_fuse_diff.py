"""The randomized differential test (tests/test_preload_diff.py's calls,
tests/helpers/preload_diff_ops.py) against a FUSE mount: the same seeds run
on tmpfs and on `daxfs-fuse`, natively, and must print the same; fsck is
clean after.

One difference is FUSE's own and documented (docs/fuse.md "Truncation
times"): the kernel sends truncate(2) by path as it sends O_TRUNC, so a
truncate to the size a file has moves its mtime here.  Both runs therefore
set a fresh mtime after each truncate by path (DAXFS_DIFF_TRUNC_TOUCH=1).
DAXFS_DIFF_SEEDS and DAXFS_DIFF_OPS as for the preload's test.
"""
import os
import subprocess
import sys
import tempfile

import pytest

from helpers import env
from helpers import fuse as hf
from test_preload_diff import OPS_SCRIPT, first_difference, seeds, sections

pytestmark = pytest.mark.skipif(hf.skip_reason() is not None,
                                reason=str(hf.skip_reason()))
BATCH = 30


def run_ops(d, ops, batch):
    e = dict(os.environ, DAXFS_DIFF_TRUNC_TOUCH="1")
    p = subprocess.run([sys.executable, OPS_SCRIPT, d, str(ops)] +
                       [str(s) for s in batch], capture_output=True, env=e,
                       timeout=600)
    assert p.returncode == 0, "generator in %s failed: %s" % (
        d, p.stderr[-3000:].decode(errors="replace"))
    return sections(p.stdout)


@pytest.mark.timeout(900)
def test_fuse_random_calls_match_tmpfs(region_path):
    env.mkfs(region_path, 256 * env.MiB)
    ops = int(os.environ.get("DAXFS_DIFF_OPS", "300"))
    all_seeds = seeds()
    failures = []
    m = hf.Mount(region_path, opts=["allow_other"])
    try:
        for b in range(0, len(all_seeds), BATCH):
            batch = all_seeds[b:b + BATCH]
            with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
                want = run_ops(os.path.join(tmp, "t"), ops, batch)
            got = run_ops(m.path("diff%d" % b), ops, batch)
            for seed in batch:
                if want.get(seed) != got.get(seed):
                    failures.append(first_difference(seed, want.get(seed, []),
                                                     got.get(seed, [])))
            if failures:
                break
    finally:
        rc = m.umount(timeout=120)
    assert not failures, "\n\n".join(failures[:3]).replace("preload:", "fuse:   ")
    assert rc == 0, m.output()
    code, out = env.fsck(region_path)
    assert code == 0, out
