"""link(2) and rename(2) racing the removal of their source's last name
(docs/namespace.md, "Link racing the removal of its source"; found by the
linearizability checker, docs/lincheck.md).

A linker host (the crash build, `make crash`) runs link("/x/d", "/x/b")
and stops itself (DAXFS_CRASH_STOP) at `link.nlink_raised`: it has
resolved /x/d to inode I and raised I's link count, its new name is not
published yet.  Another host then removes I's only name: a rename of /x/x
over /x/d, or an unlink of /x/d.  If that removal completes while the
linker is stopped, I has no name left before the link took effect, and
the link must fail with ENOENT (as on Linux).  A link that succeeds
instead gives a nameless inode a name: no serial order of the two calls
explains it.  The fix holds the source name until the link is in, so the
removal waits for the linker; then the link comes first.
"""

import os
import signal
import subprocess
import sys

import pytest

from helpers import env
import crashlib as cl

daxfs = env.daxfs

# Far longer than the test: nobody declares the stopped linker dead.
LEASE_MS = 60000
SIZE = 16 * env.MiB
# How long the remover gets to finish while the linker is stopped (only
# the old code lets it finish; the fixed code makes it wait for the link).
REMOVER_SECONDS = 3
I_BODY = cl.data("i", 700)
X_BODY = cl.data("x", 300)
PYDIR = os.path.join(cl.REPO, "python")

LINKER = r'''
import errno, sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
try:
    r.link("/x/d", "/x/b")
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
r.close()
'''

REMOVER = r'''
import sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
if sys.argv[3] == "unlink":
    r.unlink("/x/d")
else:
    r.rename("/x/x", "/x/d")
r.close()
'''


@pytest.fixture
def region():
    yield from env.lease_region("linkrace", SIZE, LEASE_MS)


def stopped_host(r, region, point, script):
    """Makes /x/d (I) and /x/x (X), starts script on another host (the
    crash build) and waits until it stopped itself at point."""
    points = region + ".points"
    r.mkdir("/x")
    r.write_file("/x/d", I_BODY)
    r.write_file("/x/x", X_BODY)
    env_l = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB, DAXFS_CRASH_AT=point,
                 DAXFS_CRASH_STOP="1", DAXFS_CRASH_LOG=points)
    host = subprocess.Popen([sys.executable, "-c", script, region, PYDIR],
                            env=env_l, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        cl.wait_point(host, points, point)
    except BaseException:
        host.kill()
        raise
    return host


def stopped_linker(r, region, point, new="b"):
    """link("/x/d", "/x/NEW") stopped at point (stopped_host)."""
    return stopped_host(r, region, point, LINKER.replace("/x/b", "/x/" + new))


def other_host_then_resume(linker, region, script, *args, between=None):
    """Runs script (with args) on another host while the linker is
    stopped, calls between(), then lets the linker go on; returns what it
    printed (ok or an errno name)."""
    try:
        other = subprocess.run([sys.executable, "-c", script, region, PYDIR]
                               + list(args), capture_output=True, text=True,
                               timeout=120)
        assert other.returncode == 0, other.stderr
        if between:
            between()
        os.kill(linker.pid, signal.SIGCONT)
        out, err = linker.communicate(timeout=120)
        assert linker.returncode == 0, err
    finally:
        if linker.poll() is None:
            linker.kill()
    return out.strip()


@pytest.mark.parametrize("removal", ["rename-replace", "unlink"])
def test_link_racing_removal(crash_build, region, removal):
    with daxfs.Region(region) as r:
        linker = stopped_linker(r, region, "link.nlink_raised")
        ino_i = r.lstat("/x/d").st_ino
        try:
            remover = subprocess.Popen(
                [sys.executable, "-c", REMOVER, region, PYDIR,
                 "unlink" if removal == "unlink" else "rename"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                remover.wait(timeout=REMOVER_SECONDS)
                removed_first = True
            except subprocess.TimeoutExpired:
                removed_first = False
            if removed_first:
                # I lost its last name; the link has not taken effect
                assert remover.returncode == 0, remover.communicate()
                assert "b" not in r.listdir("/x")
            os.kill(linker.pid, signal.SIGCONT)
            out, err = linker.communicate(timeout=120)
            assert linker.returncode == 0, err
            assert remover.wait(timeout=120) == 0, remover.communicate()
        finally:
            for p in (linker,):
                if p.poll() is None:
                    p.kill()
        result = out.strip()
        names = sorted(r.listdir("/x"))
        if removed_first:
            # the serial order "removal, then link": the link finds no
            # /x/d naming I and fails; nothing named b
            assert result == "ENOENT", (result, names)
            assert "b" not in names
        else:
            # "link, then removal": b names I, alone
            assert result == "ok", result
            st = r.lstat("/x/b")
            assert st.st_ino == ino_i
            assert st.st_nlink == 1
            assert r.read_file("/x/b") == I_BODY
        # a rename leaves d (X); an unlink leaves x
        want = ["d"] if removal == "rename-replace" else ["x"]
        if not removed_first:
            want.insert(0, "b")
        assert names == want, names
        if removal == "rename-replace":
            assert r.read_file("/x/d") == X_BODY
            assert r.lstat("/x/d").st_nlink == 1
    code, out = env.fsck(region, "-n")
    assert code == 0, out


EXCHANGER = r'''
import sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
r.rename("/x/d", "/x/x", daxfs.RENAME_EXCHANGE)
r.close()
'''


@pytest.mark.parametrize("new", ["b", "x"])
def test_link_after_exchange(crash_build, region, new):
    """link("/x/d", NEW) resolved /x/d (to I) and stopped (`link.begin`)
    before the core looked the name up; another host exchanged /x/d and
    /x/x.  /x/d never stopped existing, so the link must not say ENOENT:
    with NEW free it links what /x/d names when it takes effect (X: the
    exchange came first); with NEW taken (/x/x) it says EEXIST."""
    with daxfs.Region(region) as r:
        linker = stopped_linker(r, region, "link.begin", new)
        ino_x = r.lstat("/x/x").st_ino
        out = other_host_then_resume(linker, region, EXCHANGER)
        if new == "x":
            assert out == "EEXIST"
            assert sorted(r.listdir("/x")) == ["d", "x"]
        else:
            assert out == "ok"
            assert sorted(r.listdir("/x")) == ["b", "d", "x"]
            assert r.lstat("/x/b").st_ino == ino_x
            assert r.lstat("/x/d").st_nlink == 2
            assert r.read_file("/x/b") == X_BODY
    code, out = env.fsck(region, "-n")
    assert code == 0, out


MOVE_THEN_TAKE = r'''
import sys
sys.path.insert(0, sys.argv[2])
import daxfs
r = daxfs.Region(sys.argv[1])
r.rename("/x/d", "/x/e")
r.write_file("/x/c", b"new")
r.close()
'''


def test_link_source_gone_before_target_taken(crash_build, region):
    """link("/x/d", "/x/c") stopped (`link.begin`) after libdaxfs found
    /x/d; another host then renamed /x/d away and only afterwards made
    /x/c.  No moment had both names, so the link must not say EEXIST (the
    source was gone first): ENOENT, and nothing changed."""
    with daxfs.Region(region) as r:
        linker = stopped_linker(r, region, "link.begin", "c")
        out = other_host_then_resume(linker, region, MOVE_THEN_TAKE)
        assert out == "ENOENT"
        assert sorted(r.listdir("/x")) == ["c", "e", "x"]
        assert r.read_file("/x/c") == b"new"
        assert r.lstat("/x/e").st_nlink == 1
    code, out = env.fsck(region, "-n")
    assert code == 0, out


RENAMER = LINKER.replace('r.link("/x/d", "/x/b")',
                         'r.rename("/x/d", "/x/DST", FLAGS)')


@pytest.mark.parametrize("kind", ["move", "replace", "exchange"])
def test_rename_source_unlinked_before_publish(crash_build, region, kind):
    """rename("/x/d", DST) looked both names up, pinned, and stopped
    (`rename.prepared`) before publishing DST; another host then unlinked
    /x/d, and that unlink returned, and an observer saw DST unchanged.
    The rename may not publish DST now: /x/d was gone before DST changed
    (the checker's history: an lstat of the old target after the unlink,
    and the exchanged target dropped later).  The serial order is
    "unlink, then rename": the rename fails with ENOENT, DST as it was."""
    dst, flags = {"move": ("e", "0"), "replace": ("x", "0"),
                  "exchange": ("x", "daxfs.RENAME_EXCHANGE")}[kind]
    script = RENAMER.replace("DST", dst).replace("FLAGS", flags)
    with daxfs.Region(region) as r:
        renamer = stopped_host(r, region, "rename.prepared", script)
        ino_x = r.lstat("/x/x").st_ino

        def unlinked():
            # the unlink returned: /x/d is gone, the rest as it was
            assert sorted(r.listdir("/x")) == ["x"]
        out = other_host_then_resume(renamer, region, REMOVER, "unlink",
                                     between=unlinked)
        assert out == "ENOENT"
        assert sorted(r.listdir("/x")) == ["x"]
        st = r.lstat("/x/x")
        assert st.st_ino == ino_x
        assert st.st_nlink == 1
        assert r.read_file("/x/x") == X_BODY
    code, out = env.fsck(region, "-n")
    assert code == 0, out


# A dead remover's lease: its host is never declared dead during the test
# (the fix does not need that), and without the fix a link's (or
# rename's) wait for the mark to go runs out after four leases.
DEAD_LEASE_MS = 2000


@pytest.mark.parametrize("op", ["link", "rename"])
def test_mark_left_by_dead_remover(crash_build, op):
    """An unlink of /x/d died (`dir.marked`) after marking the leaf of d
    removed and before taking it out: d is still there, and a mark is
    never cleared.  A link or rename of d must still work (as for any
    name that is there): before the fix the link waited four leases for
    the leaf to go and answered ENOENT (the rename: EAGAIN) while lstat
    showed d."""
    gen = env.lease_region("deadmark", SIZE, DEAD_LEASE_MS)
    region = next(gen)
    points = region + ".points"
    try:
        with daxfs.Region(region) as r:
            r.mkdir("/x")
            r.write_file("/x/d", I_BODY)
            ino = r.lstat("/x/d").st_ino
            venv = dict(os.environ, DAXFS_LIB=cl.CRASH_LIB,
                        DAXFS_CRASH_AT="dir.marked", DAXFS_CRASH_LOG=points)
            victim = subprocess.run([sys.executable, "-c", REMOVER, region,
                                     PYDIR, "unlink"], env=venv,
                                    capture_output=True, timeout=120)
            assert victim.returncode == -signal.SIGKILL, victim.stderr
            assert open(points).read().split()[0] == "dir.marked"
            assert r.listdir("/x") == ["d"]
            if op == "link":
                r.link("/x/d", "/x/b")
                want = {"b": 2, "d": 2}
            else:
                r.rename("/x/d", "/x/b")
                want = {"b": 1}
            assert {n: r.lstat("/x/" + n).st_nlink
                    for n in r.listdir("/x")} == want
            assert r.lstat("/x/b").st_ino == ino
            assert r.read_file("/x/b") == I_BODY
            # the dead unlinker did nothing: unlinking works as ever
            for n in want:
                r.unlink("/x/" + n)
            assert r.listdir("/x") == []
    finally:
        next(gen, None)
