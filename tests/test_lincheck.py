"""Linearizability check (docs/lincheck.md).

Worker processes, each its own host, run random operations on a few names
or files of a fresh directory per round (tests/lincheck/lc_run); the
porcupine-based checker (tools/lincheck, Go) decides whether each round's
history is linearizable against a sequential model of the filesystem.

The bounded checks must find nothing; the detection tests re-introduce a
defect and must see the checker report it.
"""

import json
import os
import re
import shutil
import subprocess

import pytest

from helpers import build, env
import crashlib as cl

daxfs = env.daxfs

REPO = env.REPO
CHECKER = os.path.join(REPO, "build", "lincheck", "lincheck")

# The detection tests build lc_run with -DDAXFS_BUG_<NAME> and crash points
# (`make lincheck-bugs BUG=NAME`): on a tree where the defect is still
# there the flag changes nothing; where its fix landed (branch append:
# APPEND_TRUNCATE, SHORT_GIVEBACK; branch rename: EXCHANGE_RECOVERY) the
# flag brings the old behaviour back.  Either way that build has the defect.
DETECT_SECONDS = 90     # give up (fail) if no violation shows by then


def fixed(bug):
    """Whether the fix of `bug` landed (its flag is in the core)."""
    flag = "DAXFS_BUG_" + bug
    core = os.path.join(REPO, "core")
    return any(flag in open(os.path.join(core, f)).read()
               for f in os.listdir(core) if f.endswith(".c"))


def make(*targets):
    res = build.make("-s", "-C", REPO, *targets,
                     capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    return res


@pytest.fixture(scope="module")
def checker():
    """The checker and the plain workers; a missing Go fails, loudly."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    assert os.access(go, os.X_OK), \
        "Go is missing: tools/lincheck needs it (run scripts/setup.sh)"
    make("lincheck-checker", "build/lincheck/lc_run")
    return CHECKER


def bug_build(bug):
    """The build folder of lc_run with the defect `bug` and crash points."""
    make("lincheck-bugs", "BUG=" + bug)
    return os.path.join(REPO, "build", "bug-" + bug)


def lincheck(build, *args, stop=False, environ=None, after=None):
    """Runs lc_run | lincheck; returns (checker status, its report and
    lc_run's).
    stop: the checker exits at the first violation, and lc_run with it.
    environ: lc_run's environment (the test's by default).
    after: called with the region's path once lc_run ended well."""
    region = env.region_path("lincheck")
    lc_run = os.path.join(build, "lincheck", "lc_run")
    try:
        run = subprocess.Popen([lc_run, "-r", region] + list(args),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=environ)
        chk = subprocess.run([CHECKER, "-max-violations", "1"] +
                             (["-stop"] if stop else []),
                             stdin=run.stdout, capture_output=True,
                             text=True, timeout=600)
        run.stdout.close()
        err = run.stderr.read().decode()
        assert run.wait(timeout=120) == 0, err
        if after:
            after(region)
    finally:
        if os.path.exists(region):
            os.unlink(region)
    print(err + chk.stdout)
    assert chk.returncode in (0, 1), chk.stdout + chk.stderr
    return chk.returncode, chk.stdout + chk.stderr + err


def detect(bug, *args):
    """Runs the workload on the build with `bug` until the checker
    reports a violation (at most DETECT_SECONDS)."""
    rc, out = lincheck(bug_build(bug), "-t", str(DETECT_SECONDS), *args,
                       stop=True)
    assert rc == 1, "no violation in %d s: %s" % (DETECT_SECONDS, out)
    assert "NOT LINEARIZABLE" in out


def clean_run(*args):
    """lc_run on the plain build with args: no violation."""
    rc, out = lincheck(os.path.join(REPO, "build"), *args)
    assert rc == 0, out
    assert " 0 violations" in out
    return out


# What dead hosts may leave behind once recovered (docs/recovery.md,
# "Published or not"): a count high where recovery cannot tell whose
# removal it saw (an unlink dead at step 1 with its leaf gone, a plain
# rename's old name taken by an unlinker), the inode such a count keeps
# (named nowhere), and leaked space, which the used-bytes counter still
# counts; an inode named nowhere, whatever its link count (a directory
# an rmdir or a rename over it left at 0 and did not free: unreachable,
# leaked); and a change counter left showing a change in flight (a raise
# recovery cannot see, docs/kernel.md "Changes in flight": safe, healed
# online).  Never a count low where a name can reach it: an entry count
# low lets rmdir take a directory that still holds names, a link count
# low frees a file that still has one.
RESIDUAL_HIGH = {"dir-count", "nlink", "leak", "used-bytes"}


def residual(p, orphans):
    if p.get("code") == "inode":
        return "entry change in flight" in p.get("message", "")
    if p.get("code") == "orphan" or (p.get("code") == "nlink" and
                                     p.get("ino") in orphans):
        return True
    return p.get("code") in RESIDUAL_HIGH and p.get("have", 0) > p.get("want", 0)


def fsck_after_crashes(region):
    """fsck of a region the crash runs left: only residual() problems;
    then fsck -y repairs it and fsck -n finds it clean."""
    with daxfs.Region(region) as r:
        cl.recover_others(r)		# the last round's dead
    fsck = env.tool("fsck.daxfs")
    res = subprocess.run([fsck, "--json", "-n", region], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode in (0, 4), res.stdout[-3000:] + res.stderr
    problems = json.loads(res.stdout)["problems"]
    orphans = {p.get("ino") for p in problems if p.get("code") == "orphan"}
    bad = [p for p in problems if not residual(p, orphans)]
    assert not bad, json.dumps(bad[:10])
    code, out = env.fsck(region, "-y", timeout=300)
    assert code in (0, 1), out[-3000:]
    code, out = env.fsck(region, "-n", timeout=300)
    assert code == 0, out[-3000:]
    print("fsck after the crash runs: %d residual problem(s) %s" % (
        len(problems), sorted({p["code"] for p in problems})))


def crash_point_run(*args, crash_at="random:0.0005", environ=None):
    """lc_run on the crash build for 45 s, 4 workers x 20 operations, each
    protocol point a worker passes SIGKILLing it with probability 1/2000
    (lease 50 ms; crash_at: another DAXFS_CRASH_AT): no violation, some
    worker died, and fsck finds only the residuals recovery may leave
    (fsck_after_crashes).  Returns the report."""
    rc, out = lincheck(os.path.join(REPO, "build", "crash"), "-w", "4",
                       "-o", "20", "-t", "45", "-c", crash_at,
                       "-l", "50", *args, environ=environ,
                       after=fsck_after_crashes)
    assert rc == 0, out
    assert " 0 violations" in out
    died = re.search(r"lc_run: (\d+) workers died", out)
    assert died and int(died.group(1)) > 0, "no worker died: " + out
    return out


def test_namespace_linearizable(checker):
    """Creates, renames with every flag, unlinks, rmdirs, symlinks,
    links, stats and readdirs from 4 hosts, some SIGKILLed mid-round and
    recovered by a survivor: every round linearizable.  (Links were left
    out until the rename that published after an unlink of its source
    was fixed: docs/lincheck.md, "What it found".)"""
    clean_run("-m", "ns", "-w", "4", "-o", "20", "-n", "600", "-k", "0.05",
              "-l", "100", "-s", "11")


def test_namespace_crash_points(checker, crash_build):
    """Namespace rounds on the crash build: workers die at random
    protocol points (each point with probability 1/2000), survivors and
    the driver recover them: every round linearizable (the checker lets a
    killed operation take effect or not).  Bounded by time (45 s).
    With links: the violation a clean-clone CI run found with them (an
    rmdir killed after a rename moved its directory, whose recovery freed
    the directory under its new name) is fixed (docs/lincheck.md, "Crash
    points with links")."""
    crash_point_run("-m", "ns", "-s", "41")


@pytest.mark.parametrize("mode,seed,p", [("ns", 47, "0.00001"),
                                         ("data", 53, "0.00001"),
                                         ("nest", 59, "0.00003")])
def test_killed_at_random_stores(checker, crash_build, mode, seed, p):
    """Workers die after a random store, not at a named point: each store
    into the region, plain ones and the lines of a data copy included
    (DAXFS_CRASH_PLAIN=1, lib/crash-plain.c), kills with probability
    p (1/100,000, and more for the shorter nested ops), in more than a
    tenth of the rounds.  A named point sits between
    protocol steps; this cut also falls inside a step (a record half
    written, a leaf before its CAS, a page half copied).  Survivors
    recover the dead: every round linearizable, a killed call taking
    effect or not."""
    out = crash_point_run("-m", mode, "-s", str(seed),
                          crash_at="store-random:" + p,
                          environ=dict(os.environ, DAXFS_CRASH_PLAIN="1"))
    rounds = re.search(r"lc_run: (\d+) rounds", out)
    died = re.search(r"lc_run: (\d+) workers died", out)
    # a kill in at least a tenth of the rounds, or the cuts were too rare
    # to mean much
    assert int(died.group(1)) * 10 >= int(rounds.group(1)), out


def test_namespace_whiteout_linearizable(checker):
    """With RENAME_WHITEOUT in the mix (-W): the old name becomes a
    whiteout in the rename's second step, so no observer ever finds it
    missing nor takes it in between (docs/recovery.md "RENAME_WHITEOUT");
    workers SIGKILLed mid-round and recovered, every round linearizable.
    Before format 10 lc_run had no -W and the core refused the flag."""
    rc, out = lincheck(os.path.join(REPO, "build"), "-m", "ns", "-w", "4",
                       "-o", "20", "-n", "600", "-k", "0.05", "-l", "100",
                       "-s", "13", "-W")
    assert rc == 0, out
    assert " 0 violations" in out
    wh = re.search(r"lc_run: (\d+) renames left a whiteout", out)
    assert wh and int(wh.group(1)) > 0, "no whiteout: " + out


def test_namespace_whiteout_crash_points(checker, crash_build):
    """The same on the crash build: workers die at random protocol points
    (the whiteout's tmpfile.* and every rename.* included), survivors and
    the driver recover them: every round linearizable (45 s)."""
    out = crash_point_run("-m", "ns", "-s", "43", "-W")
    wh = re.search(r"lc_run: (\d+) renames left a whiteout", out)
    assert wh and int(wh.group(1)) > 0, "no whiteout: " + out


def test_namespace_threads(checker):
    """The namespace rounds with clients that are threads of one host
    sharing one handle (-P), not only processes: link and rename racing
    unlink inside one host (the rename claim names the host, not the
    thread: docs/namespace.md "Threads of one host"), then two hosts of
    three threads each with SIGKILLs (a kill takes a host's three
    operations in flight at once): every round linearizable."""
    build = os.path.join(REPO, "build")
    rc, out = lincheck(build, "-m", "ns", "-w", "1", "-P", "4", "-o", "20",
                       "-n", "8000", "-s", "51")
    assert rc == 0, out
    assert " 0 violations" in out
    rc, out = lincheck(build, "-m", "ns", "-w", "2", "-P", "3", "-o", "20",
                       "-n", "1500", "-k", "0.05", "-l", "100", "-s", "52")
    assert rc == 0, out
    assert " 0 violations" in out


def test_nested_linearizable(checker):
    """Nested rounds (-m nest, docs/lincheck.md "Nested rounds"): the
    names of two directories made before the round (a/x, a/y, b/x ...)
    beside the round's own, so that creates, links and renames into a
    directory race its rmdir and its rename, and directories move under
    one another; workers SIGKILLed in 5% of the rounds: every round
    linearizable.  The flat rounds never created inside a directory,
    which is why they missed session 53's rename and count defects."""
    clean_run("-m", "nest", "-w", "4", "-o", "20", "-n", "600", "-k",
              "0.05", "-l", "100", "-s", "71")


def test_nested_crash_points(checker, crash_build):
    """Nested rounds on the crash build, workers dying at random protocol
    points (45 s): every round linearizable.  The first such run found a
    rename whose host died inside step 3 leave the moved directory's
    parent word naming its old directory (a later rename then made a
    loop: tests/test_rename_unpin_crash.py)."""
    crash_point_run("-m", "nest", "-s", "73")


def test_nested_threads(checker):
    """Nested rounds with two hosts of three threads each, SIGKILLs
    taking a host's three operations at once: every round
    linearizable."""
    clean_run("-m", "nest", "-w", "2", "-P", "3", "-o", "20", "-n", "1500",
              "-k", "0.05", "-l", "100", "-s", "75")


def check_saved(name):
    """The checker on a saved history: (exit status, its report)."""
    hist = os.path.join(REPO, "tests", "lincheck", name)
    res = subprocess.run([CHECKER, hist], capture_output=True, text=True,
                         timeout=60)
    return res.returncode, res.stdout + res.stderr


def test_checker_killed_remover(checker):
    """A round from a crash-point run (docs/lincheck.md, "What it
    found"): truncate(d) answered ENOENT while rename(a, d), whose worker
    was killed in it, replaced d (recovery rolled it forward): the
    truncate found d's old inode and then saw it freed.  A killed remover
    races the operations after its call as a returned one does; the
    checker used to count only returned ones and reported this round."""
    rc, out = check_saved("killed-rename-race.hist")
    assert rc == 0 and " 0 violations" in out, out


def test_checker_guest_vfs_rename(checker):
    """A round with two daxfs.ko guests (docs/lincheck.md, "Guests"):
    a guest's rename(a, b, EXCHANGE) answered 0 while another guest's
    rename(b, a, NOREPLACE) had published a and not yet dropped b, both
    names one file.  The VFS answers a rename of two names of one inode
    itself, without the rename claim; the checker used to report it."""
    rc, out = check_saved("guest-vfs-rename-noop.hist")
    assert rc == 0 and " 0 violations" in out, out


def test_checker_guest_vfs_rename_lookups(checker):
    """A round with two daxfs.ko guests: a guest's rename(b, d, EXCHANGE)
    answered 0 although b and d never named one file at the same time:
    the VFS looked b up (file F), then, after a host had renamed b to c
    and exchanged c with d, looked d up (F again) and answered "same
    inode" without calling the filesystem.  The checker models the VFS's
    two lookups (model_ns.go, vfsCheck); it used to report this round."""
    rc, out = check_saved("guest-vfs-rename-lookups.hist")
    assert rc == 0 and " 0 violations" in out, out


def test_checker_guest_vfs_link_lookups(checker):
    """A round of the second long run with daxfs.ko guests: a guest's
    link(c, d) answered EPERM although c was a directory only before d
    was removed: the VFS looked c up (a directory), then d (free by then)
    and refused the directory.  The checker models link's two lookups as
    rename's (model_ns.go, vfsLinkCheck); it used to report this round."""
    rc, out = check_saved("guest-vfs-link-lookups.hist")
    assert rc == 0 and " 0 violations" in out, out


def test_checker_guest_create_redone(checker):
    """A round with two daxfs.ko guests where a guest's
    open(b, O_CREAT | O_EXCL) made b, the other guest unlinked it before
    the creating kernel attached its inode, and the kernel's -ESTALE made
    the VFS create b again (the observer finds b after the unlink; the
    inode number was reused).  A real defect, fixed in daxfs.ko since (a
    regular file's create is a held tmpfile, then named: docs/lincheck.md,
    "Kernel guests"): the checker must report the round."""
    rc, out = check_saved("guest-create-redone.hist")
    assert rc == 1 and " 1 violations" in out, out


def test_checker_guest_lookup_replaced(checker):
    """A round of the first long run with daxfs.ko guests: a guest's
    link(c, a) answered EPERM (c a directory, a looked free) while a was
    always there: the kernel's lookup found a's inode gone by its iget (a
    rename had just replaced it) and made a negative entry.  Fixed in
    daxfs.ko since (the lookup looks again); the checker must report it."""
    rc, out = check_saved("guest-lookup-replaced.hist")
    assert rc == 1 and " 1 violations" in out, out


def test_checker_guest_truncate_removed(checker):
    """A round of a clean-clone run's whiteout lincheck (session 32): a
    guest's truncate(a, 100) answered ENOENT while the host's lstat(a) in
    the middle of it read size 100: daxfs.ko's setattr cut the size, then
    a host's rename replaced a and freed its inode before the second step
    set the times, whose ENOENT became the call's.  Fixed in core/namei.c
    since (tests/race/test_setattr_removed.c); the checker must report
    the round."""
    rc, out = check_saved("guest-truncate-removed.hist")
    assert rc == 1 and " 1 violations" in out, out


def test_checker_guest_negative_trusted(checker):
    """A round of the whiteout lincheck in a 6.1 guest (session 32): guest
    B's symlink(a) published a (the host's mkdir(a) answered EEXIST), and
    guest A's unlink(a) answered ENOENT afterwards, before B's call
    returned: A trusted its negative dentry for a by the directory's change
    counter, which B's create moves only after the name is published
    (docs/kernel.md "Dentries: names trusted by a counter", the window).
    Fixed by format 13 (the counter says that a change is in flight:
    docs/kernel.md "Changes in flight"); the checker must report the
    round."""
    rc, out = check_saved("guest-negative-trusted.hist")
    assert rc == 1 and " 1 violations" in out, out


def test_checker_crash_rename_enoent(checker):
    """A round of the threaded crash-point sweep of 2026-11-28 (seed 228,
    `-w 2 -P 2 -c random:0.0005`): rename(d, a) answered ENOENT while the
    directory d existed throughout and another thread rmdir'ed the
    directory a during the rename (docs/lincheck.md, "Seeds on the final
    build").  A real defect (the rename met its target freed by an rmdir
    between two looks), fixed in core/namei.c since; the checker must
    report the round."""
    rc, out = check_saved("crash-rename-enoent.hist")
    assert rc == 1 and " 1 violations" in out, out


def test_checker_nested_stale_parent(checker):
    """The round of the first nested crash-point run (docs/lincheck.md,
    "Nested rounds"): rename(b, d/x) answered EINVAL after a dead host's
    exchange had put directory d back in the round's directory, its
    parent word still naming b.  No order explains it: reported."""
    rc, out = check_saved("nest-stale-parent.hist")
    assert rc == 1 and " 1 violations" in out, out


def test_checker_nested_walk_before_claim(checker):
    """A rename whose walk to a nested name failed (ENOTDIR, ENOENT)
    returns before the core takes the rename claim, so it may fall while
    another rename is between its two steps; the checker used to make it
    wait for the claim and reported this round."""
    rc, out = check_saved("nest-walk-before-claim.hist")
    assert rc == 0 and " 0 violations" in out, out


def test_checker_nested_link_source_then_walk(checker):
    """A round of the threaded nested crash-point run: link(d, a/x)
    answered ENOTDIR.  libdaxfs looked d up while it was a file, then
    walked to a/x after a had become a file, by which time d was gone;
    the checker looked at the source when the link acted and wanted
    EPERM or ENOENT.  A walk that failed later answers for the source
    looked up before it."""
    rc, out = check_saved("nest-link-source-then-walk.hist")
    assert rc == 0 and " 0 violations" in out, out


def test_checker_guest_nest_rename_trap(checker):
    """A round of the first nested run with daxfs.ko guests: a guest's
    rename(d/y, d) of the file d/y answered ENOTEMPTY, where POSIX (and
    libdaxfs) give EISDIR.  The VFS's lock_rename returns d's dentry as the
    trap (the old parent, below the new one), and do_renameat2 answers
    ENOTEMPTY when the target is the trap, before vfs_rename (docs/lincheck.md
    "Nested rounds with guests"); the checker without the trap reported it."""
    rc, out = check_saved("guest-nest-rename-trap.hist")
    assert rc == 0 and " 0 violations" in out, out


# Nested rounds by hand (mode 2; names: a 0, c 2, a/x 4, a/y 5, c/x 8): the
# checker must refuse what no filesystem may do and take what it may.
NESTED = {
    "create in a removed directory": (1, [
        "0 1 2 3 0 0 0 0 0 0 0 0",          # mkdir(a)
        "0 3 4 4 0 0 0 0 0 0 0 0",          # rmdir(a)
        "0 5 6 1 4 0 1 0 1 0 77 0"]),       # create(a/x) -> created
    "rmdir of a directory with a name": (1, [
        "0 1 2 3 0 0 0 0 0 0 0 0",
        "0 3 4 1 4 0 1 0 1 0 77 0",
        "1 5 6 4 0 0 0 0 0 0 0 0"]),        # rmdir(a) -> 0
    "a directory into itself": (1, [
        "0 1 2 3 0 0 0 0 0 0 0 0",
        "0 3 4 5 0 4 0 0 0 0 0 0"]),        # rename(a, a/x) -> 0
    "names move with their directory": (0, [
        "0 1 2 3 0 0 0 0 0 0 0 0",
        "0 3 4 1 4 0 1 0 1 0 77 0",
        "0 5 6 5 0 2 0 0 0 0 0 0",          # rename(a, c)
        "1 7 8 8 8 0 0 0 0 257 77 0",       # lstat(c/x): the file
        "1 9 10 8 4 0 0 0 -2 0 0 0"]),      # lstat(a/x): ENOENT
    # a guest's (d = 1): the VFS's lock_rename trap answers a rename of a/x onto
    # a, the directory it walked to, before vfs_rename's EISDIR
    "a guest renames a file onto its directory: ENOTEMPTY": (0, [
        "0 1 2 3 0 0 0 0 0 0 0 0",
        "0 3 4 1 4 0 1 0 1 0 77 0",
        "1 5 6 5 4 0 0 1 -39 0 0 0"]),      # rename(a/x, a) -> ENOTEMPTY
    "a guest renames a file onto its directory: EISDIR": (1, [
        "0 1 2 3 0 0 0 0 0 0 0 0",
        "0 3 4 1 4 0 1 0 1 0 77 0",
        "1 5 6 5 4 0 0 1 -21 0 0 0"]),
    "a guest renames a directory into itself: EINVAL": (0, [
        "0 1 2 3 0 0 0 0 0 0 0 0",
        "1 3 4 5 0 5 0 1 -22 0 0 0"]),      # rename(a, a/y) -> EINVAL
    # do_linkat walks to the new name's parent before vfs_link sees a
    # directory (libdaxfs may answer EPERM first)
    "a guest links a directory into nowhere: ENOENT": (0, [
        "0 1 2 3 0 0 0 0 0 0 0 0",
        "1 3 4 6 0 8 0 1 -2 0 0 0"]),       # link(a, c/x) -> ENOENT
    "a guest links a directory into nowhere: EPERM": (1, [
        "0 1 2 3 0 0 0 0 0 0 0 0",
        "1 3 4 6 0 8 0 1 -1 0 0 0"]),
    # ESTALE: a libdaxfs host declared dead mid-call (recovery decides); a
    # guest's is the VFS's retry that lost again, which changed nothing
    "a dead host's mkdir that answered ESTALE made its directory": (0, [
        "0 1 2 3 0 0 0 0 -116 0 0 0",       # mkdir(a) -> ESTALE
        "1 3 4 8 0 0 0 0 0 514 0 0"]),      # lstat(a): a directory
    "a guest's mkdir that answered ESTALE made its directory": (1, [
        "0 1 2 3 0 0 0 1 -116 0 0 0",
        "1 3 4 8 0 0 0 0 0 514 0 0"]),
    "a create walks, then acts where the directory went": (0, [
        "0 1 2 3 0 0 0 0 0 0 0 0",
        "1 3 8 1 4 0 1 0 1 0 77 0",         # create(a/x) over ...
        "0 4 5 5 0 2 0 0 0 0 0 0",          # ... rename(a, c)
        "2 9 10 8 8 0 0 0 0 257 77 0"]),    # lstat(c/x): the file
}


@pytest.mark.parametrize("case", sorted(NESTED))
def test_checker_nested_by_hand(checker, tmp_path, case):
    bad, lines = NESTED[case]
    hist = tmp_path / "nested.hist"
    hist.write_text("R 1 2\n" + "\n".join(lines) + "\n")
    res = subprocess.run([CHECKER, str(hist)], capture_output=True,
                         text=True, timeout=60)
    out = res.stdout + res.stderr
    assert res.returncode == bad and (" %d violations" % bad) in out, out


def test_checker_vfs_append_by_size(checker, tmp_path):
    """A guest's append (write(2) with O_APPEND, d = 256 + the fill byte:
    lc.h LC_VFS_APPEND) says no offset, so the checker checks it by the
    size alone; a libdaxfs append says its offset and must have it right.
    One round: a pwrite makes f0 512 bytes, an append of 512 with offset 0
    follows, the observer sees 1024 (or 1536: no order explains that)."""
    def check(append_d, final):
        hist = tmp_path / f"append-{append_d}-{final}.hist"
        hist.write_text("R 1 1\n"
                        "0 1 2 20 0 0 512 7 512 0 0 0\n"
                        f"1 3 4 21 0 0 512 {append_d} 512 0 0 0\n"
                        f"2 5 6 24 0 0 0 0 0 0 0 {final}\n")
        res = subprocess.run([CHECKER, str(hist)], capture_output=True,
                             text=True, timeout=60)
        return res.returncode, res.stdout + res.stderr

    rc, out = check(256 + 7, 1024)
    assert rc == 0 and " 0 violations" in out, out
    rc, out = check(7, 1024)
    assert rc == 1 and " 1 violations" in out, out
    rc, out = check(256 + 7, 1536)
    assert rc == 1 and " 1 violations" in out, out


def test_data_linearizable(checker):
    """pwrite, append, ftruncate, pread and fstat on two files from 4
    hosts, then with the pool nearly full so that some stop short: every
    round linearizable.  Before the write gate (format version 4) the
    first part found 4 to 30 violations per 1500 rounds (appends and
    pwrites racing truncates) and the second 40 to 50 per 300 (appends
    that reserved, then failed on the full pool, could not give their
    range back)."""
    rc, out = lincheck(os.path.join(REPO, "build"), "-m", "data", "-w", "4",
                       "-o", "30", "-n", "1500", "-s", "12")
    assert rc == 0, out
    rc, out = lincheck(os.path.join(REPO, "build"), "-m", "data", "-w", "4",
                       "-o", "30", "-n", "300", "-f", "16", "-S", "16",
                       "-s", "13")
    assert rc == 0, out


def test_data_fallocate_linearizable(checker):
    """The data rounds with fallocate in the mix (-F: mode 0, KEEP_SIZE,
    PUNCH_HOLE, ZERO_RANGE with and without KEEP_SIZE), then with the
    pool nearly full so that some fail with ENOSPC: every round
    linearizable (docs/files.md "fallocate": a punch or a zeroing is one
    step under the gate; a failed fallocate moves no size).  A build
    whose ZERO_RANGE ignored KEEP_SIZE was reported within 10 s."""
    rc, out = lincheck(os.path.join(REPO, "build"), "-m", "data", "-F",
                       "-w", "4", "-o", "30", "-n", "800", "-s", "14")
    assert rc == 0, out
    rc, out = lincheck(os.path.join(REPO, "build"), "-m", "data", "-F",
                       "-w", "4", "-o", "30", "-n", "200", "-f", "16",
                       "-S", "16", "-s", "15")
    assert rc == 0, out


def test_data_killed_linearizable(checker, crash_build):
    """Data rounds whose hosts die mid-operation: first SIGKILLed at a
    random moment of a round (-k), then at random protocol points of the
    crash build (a write between its pages and its size, an append after
    its reservation, a shrink with the gate closed...).  Survivors and
    the driver recover them, and every round is linearizable: a killed
    operation took effect whole or not at all, as far as sizes show
    (docs/lincheck.md "Kills in data rounds").  A checker that takes
    every killed operation as never having happened reports violations
    on these histories (1 and 21 with these seeds): the kills land inside
    operations whose effects the others see."""
    for build_dir, args in ((os.path.join(REPO, "build"),
                             ["-o", "60", "-n", "300", "-k", "0.2", "-s", "16"]),
                            (os.path.join(REPO, "build", "crash"),
                             ["-o", "30", "-t", "30", "-c", "random:0.002",
                              "-s", "17"])):
        rc, out = lincheck(build_dir, "-m", "data", "-w", "4", *args)
        assert rc == 0, out
        assert " 0 violations" in out
        died = re.search(r"lc_run: (\d+) workers died", out)
        assert died and int(died.group(1)) > 0, "no worker died: " + out


def test_detects_append_truncate(checker):
    """Defect 2: an append that reserved [s, s + len) and lost to a
    truncate to t < s moved the size back up to s + len."""
    detect("APPEND_TRUNCATE", "-m", "data", "-w", "4", "-o", "30",
           "-s", "21")


def test_detects_short_giveback(checker):
    """Defect 6: a short append (a full pool) gave back its unwritten
    tail by CAS s + len -> s + w, cutting what a completed pwrite had put
    up to s + len.  No truncate in the mix: defect 2 cannot be the cause."""
    detect("SHORT_GIVEBACK", "-m", "data", "-T", "-w", "4", "-o", "30",
           "-f", "16", "-S", "16", "-s", "22")


def test_detects_fcache_trust(checker):
    """A per-open-file cache believed without its check (the bucket and
    the record, docs/open-files.md "Per-open-file cache"): each round's
    files are new, so a worker's cache of the last round's file names a
    freed (and maybe reused) record.  The workers' data calls go through
    their caches (tests/lincheck/lc_worker.c)."""
    detect("FCACHE_TRUST", "-m", "data", "-w", "4", "-s", "41")


def test_detects_whiteout_steps(checker):
    """The whiteout of a RENAME_WHITEOUT named by a second operation after
    the rename, as daxfs.ko did before format 10: the old name is missing
    in between (an lstat sees ENOENT, a create takes it and the rename
    then fails with EEXIST)."""
    detect("WHITEOUT_STEPS", "-m", "ns", "-w", "4", "-o", "20", "-l", "100",
           "-s", "13", "-W")


@pytest.mark.skipif(not fixed("EXCHANGE_RECOVERY"),
                    reason="needs the crash point rename.linked (between "
                    "a rename's publishing CAS and its step mark), which "
                    "comes with the fix of defect 4 (branch rename)")
def test_detects_exchange_recovery(checker):
    """Defect 4: a host that died after publishing a rename's new name and
    before marking the step, whose new name another host unlinked before
    recovery, was rolled back: the file came back under its old name.
    Every worker dies at its first publish; survivors unlink and look."""
    detect("EXCHANGE_RECOVERY", "-m", "ns", "-w", "4", "-o", "20",
           "-l", "30", "-c", "rename.linked", "-s", "31")
