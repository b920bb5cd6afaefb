"""fsck.daxfs -y killed part way, then run again, finishes the repair.

docs/fsck.md promises that a repair "writes with plain atomic stores and
is idempotent: if it is interrupted (crash), running fsck.daxfs -y again
finishes the job".  Nothing tested it.  Here fsck's repair of a damaged
region dies after its Nth store (the crash build's `store:N` point,
lib/crash.c: a SIGKILL after the Nth change of memory through the
core's atomics, the host recovery fsck runs first included), for N
spread over the whole repair; then a plain `fsck.daxfs -y` runs, and a
user must find what an uninterrupted repair gives:

  * the second repair ends with 0 or 1, and `fsck.daxfs -n` is clean;
  * everything in the region can be used (test_fsck_sweep's checks);
  * a file that no store of the damage touched and neither repair
    reported reads back its bytes.

The repair runs twice: counting its atomics only, and with
DAXFS_CRASH_PLAIN=1 ("plain"), where the crash build also counts every
plain C store into the mapped region and each cache line of a block copy
there (lib/crash-plain.c): most of a repair's writes are plain stores.

A failure names the seed and N: `daxfs-chaos -s SEED -n 50` on the
worked region, then `DAXFS_CRASH_AT=store:N build/crash/bin/fsck.daxfs
-y -f` (with DAXFS_CRASH_PLAIN=1 for a plain cut), replays it.
"""

import json
import os
import shutil
import subprocess

import pytest

import crashlib as cl
import daxfs
import test_fsck_sweep as sweep

SEEDS = int(os.environ.get("DAXFS_INTERRUPT_SEEDS", "6"))
CUTS = int(os.environ.get("DAXFS_INTERRUPT_CUTS", "40"))   # N per seed
CRASH_FSCK = os.path.join(cl.REPO, "build", "crash", "bin", "fsck.daxfs")


def _killed_fsck(img, n, counting):
    """fsck -y -f of img, killed after its nth store: its exit status
    (-9 when the cut came before the repair's end)."""
    env = dict(os.environ, DAXFS_CRASH_AT="store:%d" % n,
               DAXFS_CRASH_PLAIN="1" if counting == "plain" else "0")
    return subprocess.run([CRASH_FSCK, "-y", "-f", img], env=env,
                          capture_output=True, timeout=120).returncode


def _stores(damaged, img, counting):
    """An upper bound of the stores the repair of damaged makes: the
    first power of two it does not reach."""
    n = 1
    while True:
        shutil.copyfile(damaged, img)
        if _killed_fsck(img, n, counting) != -9:
            return n
        n *= 2


def _cuts(total, seed):
    """Where to kill: the first stores one by one (the host recovery
    and the first repairs), then spread evenly to the end."""
    first = list(range(1, min(total, 12)))
    step = max(1, total // (CUTS - len(first)))
    return sorted(set(first + list(range(12 + seed % step, total, step))))


def _reported(out):
    return {p.get("ino") for p in json.loads(out)["problems"]}


@pytest.mark.parametrize("counting", ["atomics", "plain"])
@pytest.mark.parametrize("with_base", [False, True],
                         ids=["overlay-only", "base-image"])
def test_fsck_killed_at_any_store_then_rerun_converges(crash_build,
                                                        tmp_path, with_base,
                                                        counting):
    base = sweep._worked_region(tmp_path, with_base)
    before = sweep._file_bytes(base)
    damaged = str(tmp_path / "damaged.img")
    img = str(tmp_path / "cut.img")
    log = str(tmp_path / "chaos.log")
    failures, cuts_run, plain_more = [], 0, 0
    for seed in range(SEEDS):
        shutil.copyfile(base, damaged)
        if os.path.exists(log):
            os.unlink(log)
        chaos = subprocess.run([sweep._tool("daxfs-chaos"), "-q", "-s",
                                str(seed), "-n", str(sweep.DAMAGE), "-l",
                                log, damaged],
                               capture_output=True, text=True, timeout=60)
        assert chaos.returncode == 0, chaos.stderr
        with open(log) as f:
            hits = [int(line.split()[2], 16) for line in f]
        shutil.copyfile(damaged, img)
        whole = sweep._fsck("--json", "-y", "-f", img)
        assert whole.returncode in (0, 1), whole.stdout[-2000:]
        reported_whole = _reported(whole.stdout)
        total = _stores(damaged, img, counting)
        if counting == "plain":
            # the repair's plain stores are counted, or the plain cuts
            # would land where the atomics' cuts do
            plain_more += total > _stores(damaged, img, "atomics")
        for n in _cuts(total, seed):
            shutil.copyfile(damaged, img)
            if _killed_fsck(img, n, counting) != -9:
                continue        # the repair ended before its nth store
            cuts_run += 1
            fix = sweep._fsck("--json", "-y", "-f", img)
            again = sweep._fsck("-n", img)
            if fix.returncode not in (0, 1) or again.returncode != 0:
                failures.append("seed %d store %d: rerun exit %d; -n exit "
                                "%d %s" % (seed, n, fix.returncode,
                                           again.returncode,
                                           sweep._errors(again.stdout)))
                continue
            reported = reported_whole | _reported(fix.stdout)
            with daxfs.Region(img) as r:
                bad = sweep._use_everything(r)
                bad += sweep._changed_silently(r, before, hits, reported)
            if bad:
                failures.append("seed %d store %d: clean, but %s" % (
                    seed, n, "; ".join(bad[:3])))
    # the cuts must have landed inside repairs, or this tested nothing
    assert cuts_run >= SEEDS * CUTS // 2, cuts_run
    assert counting == "atomics" or plain_more == SEEDS, plain_more
    assert not failures, "%d of %d cuts:\n%s" % (
        len(failures), cuts_run, "\n".join(failures[:10]))
