"""The randomized differential test (tests/test_preload_diff.py's calls,
tests/helpers/preload_diff_ops.py) against a FUSE mount: the same seeds run
on tmpfs and on `daxfs-fuse`, natively, and must print the same; fsck is
clean after.

One difference is FUSE's own and documented (docs/fuse.md "Truncation
times"): the kernel sends truncate(2) by path as it sends O_TRUNC, so a
truncate to the size a file has moves its mtime here.  Both runs therefore
set a fresh mtime after each truncate by path (DAXFS_DIFF_TRUNC_TOUCH=1).
DAXFS_DIFF_SEEDS, DAXFS_DIFF_OPS and DAXFS_DIFF_FAMILIES as for the
preload's test.

The second test runs the seeds in four processes at once, on two mounts of
one region (two hosts), each in its own directory: what one host does to
its names must not show in the other's answers, whatever the shared
structures (allocator, directory tries, open sets, reclamation) go through
meanwhile.
"""
import os
import subprocess
import sys
import tempfile

import pytest

from helpers import diff_split, env
from helpers import fuse as hf
from test_preload_diff import (OPS_SCRIPT, families, first_difference, seeds,
                               sections)

pytestmark = pytest.mark.skipif(hf.skip_reason() is not None,
                                reason=str(hf.skip_reason()))
BATCH = 30


def start_ops(d, ops, batch, uid=None, split=None):
    os.makedirs(d, exist_ok=True)
    e = dict(os.environ, DAXFS_DIFF_TRUNC_TOUCH="1",
             DAXFS_DIFF_UNLOCK_AT_CLOSE="1", DAXFS_DIFF_FAMILIES=families(
                 split=split is not None))
    if uid is not None:
        e["DAXFS_DIFF_UID"] = str(uid)
    if split is not None:
        # no twin opens: the other mount sees a change to a file open on
        # both within poll_ms, not at once (docs/fuse.md "Coherence")
        e["DAXFS_DIFF_SPLIT"] = split
        e["DAXFS_DIFF_SPLIT_TWINS"] = "0"
    return subprocess.Popen([sys.executable, OPS_SCRIPT, d, str(ops)] +
                            [str(s) for s in batch], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=e)


def collect(procs):
    """{seed: [lines]} of all of procs' outputs, once each has ended."""
    res = {}
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, "generator failed: %s" % (
            err[-3000:].decode(errors="replace"))
        res.update(sections(out))
    return res


def run_ops(d, ops, batch, uid=None):
    return collect([start_ops(d, ops, batch, uid)])


def split_ops(d, peer_d, ops, batch, scratch, uid=None):
    """run_ops from d, with about half of the calls by path made by a
    peer process below peer_d (tests/helpers/diff_split.py)."""
    e = dict(os.environ)
    if uid is not None:
        e["DAXFS_DIFF_UID"] = str(uid)
    with diff_split.peer(os.path.join(scratch, "mailbox"), d, peer_d,
                         env=e) as mb:
        return collect([start_ops(d, ops, batch, uid, split=mb)])


def differences(want, got, batch):
    return [first_difference(seed, want.get(seed, []), got.get(seed, []))
            .replace("preload:", "fuse:   ")
            for seed in batch if want.get(seed) != got.get(seed)]


def end_clean(region_path, mounts):
    rcs = [m.umount(timeout=120) for m in mounts]
    assert rcs == [0] * len(mounts), [m.output() for m in mounts]
    code, out = env.fsck(region_path)
    assert code == 0, out


def one_host(region_path, uid=None):
    """The seeds in batches on tmpfs and on one FUSE mount; the first
    batch's differences."""
    env.mkfs(region_path, 256 * env.MiB)
    ops = int(os.environ.get("DAXFS_DIFF_OPS", "300"))
    all_seeds = seeds()
    failures = []
    m = hf.Mount(region_path, opts=["allow_other"])
    try:
        for b in range(0, len(all_seeds), BATCH):
            batch = all_seeds[b:b + BATCH]
            with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
                os.chmod(tmp, 0o755)    # for the user's walk to t
                want = run_ops(os.path.join(tmp, "t"), ops, batch, uid)
            got = run_ops(m.path("diff%d" % b), ops, batch, uid)
            failures += differences(want, got, batch)
            if failures:
                break
    except BaseException:
        m.close()
        raise
    end_clean(region_path, [m])
    return failures


@pytest.mark.timeout(900)
def test_fuse_random_calls_match_tmpfs(region_path):
    failures = one_host(region_path)
    assert not failures, "\n\n".join(failures[:3])


@pytest.mark.timeout(900)
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become a user")
def test_fuse_random_calls_as_a_user_match_tmpfs(region_path):
    """The same as user nobody (65534), owner of its directories: every
    EACCES and EPERM of the modes the calls set (0, 0444, sticky, set-id
    bits) must be tmpfs'."""
    failures = one_host(region_path, uid=65534)
    assert not failures, "\n\n".join(failures[:3])


@pytest.mark.timeout(900)
def test_fuse_two_hosts_random_calls_match_tmpfs(region_path):
    env.mkfs(region_path, 512 * env.MiB)
    ops = int(os.environ.get("DAXFS_DIFF_OPS", "300"))
    all_seeds = seeds()
    groups = [all_seeds[k::4] for k in range(4)]
    with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        want = collect([start_ops(os.path.join(tmp, "g%d" % k), ops, g)
                        for k, g in enumerate(groups)])
    mounts = [hf.Mount(region_path, opts=["allow_other"]) for _ in range(2)]
    try:
        got = collect([start_ops(mounts[k % 2].path("g%d" % k), ops, g)
                       for k, g in enumerate(groups)])
    except BaseException:
        for m in mounts:
            m.close()
        raise
    end_clean(region_path, mounts)
    failures = differences(want, got, all_seeds)
    assert not failures, "\n\n".join(failures[:3])


def one_sequence_two_hosts(region_path, uid=None):
    """The seeds on tmpfs and on two FUSE mounts, split (split_ops); the
    first batch's differences."""
    env.mkfs(region_path, 256 * env.MiB)
    ops = int(os.environ.get("DAXFS_DIFF_OPS", "300"))
    all_seeds = seeds()
    opts = ["allow_other", "timeout=0"]
    mounts = [hf.Mount(region_path, opts=opts) for _ in range(2)]
    failures = []
    try:
        for b in range(0, len(all_seeds), BATCH):
            batch = all_seeds[b:b + BATCH]
            with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
                os.chmod(tmp, 0o755)    # for the user's walk to t
                t = os.path.join(tmp, "t")
                want = split_ops(t, t, ops, batch, tmp, uid)
                got = split_ops(mounts[0].path("split%d" % b),
                                mounts[1].path("split%d" % b), ops, batch,
                                tmp, uid)
            failures += differences(want, got, batch)
            if failures:
                break
    except BaseException:
        for m in mounts:
            m.close()
        raise
    end_clean(region_path, mounts)
    return failures


@pytest.mark.timeout(900)
def test_fuse_one_sequence_from_two_hosts_matches_tmpfs(region_path):
    """One sequence on one tree from two FUSE mounts of the region, about
    half of its calls by path made on the second (docs/testing.md "One
    tree, two hosts"): with timeout=0 (docs/fuse.md "Coherence") each
    mount must answer at once for what the other just did."""
    failures = one_sequence_two_hosts(region_path)
    assert not failures, "\n\n".join(failures[:3])


@pytest.mark.timeout(900)
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become a user")
def test_fuse_one_sequence_from_two_hosts_as_a_user(region_path):
    """The same as user nobody (65534) on both hosts: a mode one host sets
    must decide the other's next call at once (EACCES, EPERM)."""
    failures = one_sequence_two_hosts(region_path, uid=65534)
    assert not failures, "\n\n".join(failures[:3])
