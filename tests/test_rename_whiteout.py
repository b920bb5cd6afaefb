"""RENAME_WHITEOUT is one atomic, crash-safe rename (docs/recovery.md,
"Namespace protocols"; docs/kernel.md "O_TMPFILE and whiteouts").

A victim host (the crash build: `make crash`) renames with
RENAME_WHITEOUT and SIGKILLs itself at one step: after the whiteout was
made nameless and held (`tmpfile.orphan`, before the rename began), or at
any crash point of the rename.  This process, another host, checks that
the old name never went missing while the victim lay dead (it names the
file or the whiteout, never nothing), then recovers the victim and checks
all or nothing: the file at its old name and no whiteout anywhere, or the
file at its new name and a whiteout (character device 0/0, one link) at
the old one; every name and link count right; fsck clean (nothing leaked:
a whiteout never named is freed with the dead host's opens).
"""

import stat
import time

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

LEASE_MS = 400
SIZE = 16 * env.MiB
A = cl.data("a", 5000)
B = cl.data("b", 300)


# The steps before publication roll back; from the publishing CAS on
# (rename.linked) the rename rolls forward.
BEFORE = ("tmpfile.orphan", "rename.prepared")
AFTER = ("rename.linked", "rename.published", "rename.moved",
         "rename.unpinned", "rename.counted")
# (source, destination, whether the destination exists: only a replace
# reaches rename.done)
CASES = {
    "move": ("/x/a", "/x/c", False),
    "replace": ("/x/a", "/x/b", True),
    "cross": ("/x/a", "/y/c", False),
    "cross-replace": ("/x/a", "/y/b", True),
    "dir": ("/x/d", "/y/d", False),
}
RUNS = [(c, p) for c in sorted(CASES) for p in BEFORE + AFTER] + \
       [(c, "rename.done") for c in sorted(CASES) if CASES[c][2]]


@pytest.fixture
def region():
    yield from env.lease_region("rnwh", SIZE, LEASE_MS)


def what(r, path, counts=True):
    """What a name holds: A, B, a directory, a whiteout, or None; counts:
    check link counts (not in the middle of a rename, whose pin raises
    the renamed file's)."""
    try:
        st = r.stat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISCHR(st.st_mode):
        assert st.st_rdev == 0 and (st.st_nlink == 1 or not counts), (path, st)
        return "whiteout"
    if stat.S_ISDIR(st.st_mode):
        return "dir:" + ",".join(sorted(r.listdir(path)))
    assert st.st_nlink == 1 or not counts, (path, st)
    return {A: "A", B: "B"}.get(r.read_file(path), "?")


def tree(r):
    return {d + "/" + n: what(r, d + "/" + n)
            for d in ("/x", "/y") for n in r.listdir(d)}


@pytest.mark.parametrize("case,point", RUNS)
def test_whiteout_rename_crash(crash_build, region, case, point):
    src, dst, _ = CASES[case]
    with daxfs.Region(region) as r:
        r.mkdir("/x")
        r.mkdir("/y")
        r.mkdir("/x/d")
        r.write_file("/x/d/in", A)
        r.write_file("/x/a", A)
        r.write_file("/x/b", B)
        r.write_file("/y/b", B)
        before = tree(r)
        after = dict(before)
        after[dst] = before[src]
        after[src] = "whiteout"
        cl.run_rename_victim(region, point, src, dst, daxfs.RENAME_WHITEOUT)
        # the old name is never missing, not even while the victim is dead
        # in the middle (before: another host could take it in that gap)
        assert what(r, src, False) in (before[src], "whiteout")
        assert cl.victim_state(r) == "alive"
        time.sleep(LEASE_MS / 1000 * 1.5)
        r.reclaim()
        assert cl.victim_state(r) == "recovered"
        got = tree(r)
        assert got == (before if point in BEFORE else after), got
        assert r.stat("/x").st_nlink == (3 if point in BEFORE or case != "dir" else 2)
    code, out = env.fsck(region, "-n")
    assert code == 0 and "clean" in out, out
