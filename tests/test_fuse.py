"""The FUSE mount as one host (docs/fuse.md): what a program sees on it.

Every test mounts a fresh region with build/bin/daxfs-fuse and checks
POSIX behaviour through ordinary system calls: permissions for the
caller's uid and gid, hard links, symlinks, rename flags, unlink of open
files, shared and private mappings, O_APPEND, statfs, readdir under
change, and a clean unmount that leaves the host table.  Skipped, with
the reason, where FUSE cannot be mounted.
"""
import ctypes
import errno
import mmap
import os
import resource
import stat
import subprocess
import sys
import threading
import time

import pytest

from helpers import env
from helpers import fuse as hf

import daxfs

sys.path.insert(0, os.path.join(env.REPO, "vm"))
import ro_calls  # noqa: E402

pytestmark = pytest.mark.skipif(hf.skip_reason() is not None,
                                reason=str(hf.skip_reason()))

NOBODY = 65534
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
RENAME_WHITEOUT = 4

_libc = ctypes.CDLL(None, use_errno=True)


def renameat2(src, dst, flags):
    AT_FDCWD = -100
    r = _libc.renameat2(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), flags)
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), src)


@pytest.fixture
def mnt(region):
    m = hf.Mount(region, opts=["allow_other"])
    yield m
    m.close()


def as_user(uid, gid, code):
    """Runs python code as uid/gid; returns (exit code, output)."""
    def drop():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    p = subprocess.run(["python3", "-c", code], capture_output=True, text=True,
                       preexec_fn=drop, timeout=60)
    return p.returncode, p.stdout + p.stderr


def open_files(region):
    """Opens published in the open sets of all hosts."""
    with daxfs.Region(region, readonly=True) as fs:
        return sum(h["open_files"] for h in fs.info()["hosts"])


def wait_open_files(region, want, limit=30.0):
    """open_files(region) once it is want, or its value after limit s."""
    deadline = time.monotonic() + limit
    n = open_files(region)
    while n != want and time.monotonic() < deadline:
        time.sleep(0.02)
        n = open_files(region)
    return n


def hosts_in_use(region):
    with daxfs.Region(region, readonly=True) as fs:
        return [h for h in fs.info()["hosts"] if h["state"] == 1]


def test_mount_shows_and_unmount_leaves_host_table(region):
    m = hf.Mount(region)
    try:
        line = hf.mounted(m.mp)
        assert line.split()[2] == "fuse.daxfs"
        assert line.split()[0] == region
        assert "nosuid" in line and "nodev" in line
        assert len(hosts_in_use(region)) == 1
        with open(m.path("f"), "w") as f:
            f.write("kept")
    finally:
        rc = m.umount()
    assert rc == 0, m.output()
    assert hosts_in_use(region) == []
    with daxfs.Region(region) as fs:
        assert fs.read_file("/f") == b"kept"
    code, out = env.fsck(region)
    assert code == 0, out


def test_daxfs_mount_and_umount_commands(region):
    mp = os.path.join(os.path.dirname(region), os.path.basename(region) + ".mp")
    os.mkdir(mp)
    daxfs_cmd = env.tool("daxfs")
    try:
        subprocess.run([daxfs_cmd, "-r", region, "mount", mp], check=True, timeout=60)
        assert hf.mounted(mp).split()[2] == "fuse.daxfs"
        with open(os.path.join(mp, "x"), "w") as f:
            f.write("via daxfs mount")
        subprocess.run([daxfs_cmd, "umount", mp], check=True, timeout=60)
        assert hf.mounted(mp) is None
        # the server leaves the host table once the kernel lets it go
        deadline = time.monotonic() + 30
        while hosts_in_use(region) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert hosts_in_use(region) == []
    finally:
        if hf.mounted(mp):
            subprocess.run(["umount", "-l", mp])
        os.rmdir(mp)


def test_permissions_for_caller(mnt):
    secret = mnt.path("secret")
    with open(secret, "w") as f:
        f.write("root only")
    os.chmod(secret, 0o600)
    code, out = as_user(NOBODY, NOBODY, "open(%r).read()" % secret)
    assert code != 0 and "PermissionError" in out
    os.chmod(secret, 0o644)
    code, out = as_user(NOBODY, NOBODY, "print(open(%r).read())" % secret)
    assert code == 0 and "root only" in out
    code, out = as_user(NOBODY, NOBODY, "open(%r, 'a').write('x')" % secret)
    assert code != 0 and "PermissionError" in out
    # a directory nobody may write into: no create, no unlink
    code, out = as_user(NOBODY, NOBODY, "open(%r, 'w')" % mnt.path("new"))
    assert code != 0 and "PermissionError" in out
    code, out = as_user(NOBODY, NOBODY, "import os; os.unlink(%r)" % secret)
    assert code != 0 and "PermissionError" in out
    # a shared directory: new files belong to their creator
    shared = mnt.path("tmp")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    code, out = as_user(NOBODY, NOBODY, "open(%r, 'w').write('mine')" %
                        os.path.join(shared, "n"))
    assert code == 0, out
    st = os.stat(os.path.join(shared, "n"))
    assert (st.st_uid, st.st_gid) == (NOBODY, NOBODY)
    # chown is root's; the sticky bit keeps others' files
    code, out = as_user(NOBODY, NOBODY, "import os; os.chown(%r, 0, 0)" %
                        os.path.join(shared, "n"))
    assert code != 0 and "PermissionError" in out
    with open(os.path.join(shared, "r"), "w"):
        pass
    code, out = as_user(NOBODY, NOBODY, "import os; os.unlink(%r)" %
                        os.path.join(shared, "r"))
    assert code != 0 and "PermissionError" in out


def test_setgid_directory_gives_its_group(mnt):
    d = mnt.path("grp")
    os.mkdir(d)
    os.chown(d, 0, 1234)
    os.chmod(d, 0o2775)
    with open(os.path.join(d, "f"), "w"):
        pass
    os.mkdir(os.path.join(d, "sub"))
    assert os.stat(os.path.join(d, "f")).st_gid == 1234
    sub = os.stat(os.path.join(d, "sub"))
    assert sub.st_gid == 1234 and sub.st_mode & stat.S_ISGID


def test_hard_links_and_symlinks(mnt):
    a, b, s = mnt.path("a"), mnt.path("b"), mnt.path("s")
    with open(a, "w") as f:
        f.write("data")
    os.link(a, b)
    os.symlink("a", s)
    sa, sb = os.stat(a), os.stat(b)
    assert sa.st_ino == sb.st_ino and sa.st_nlink == 2
    assert os.readlink(s) == "a"
    assert stat.S_ISLNK(os.lstat(s).st_mode)
    with open(s) as f:
        assert f.read() == "data"
    with open(b, "a") as f:
        f.write("+")
    with open(a) as f:
        assert f.read() == "data+"
    os.unlink(a)
    assert os.stat(b).st_nlink == 1
    with pytest.raises(FileNotFoundError):
        os.stat(s)                          # dangling now
    long_target = "x" * 4000
    os.symlink(long_target, mnt.path("long"))
    assert os.readlink(mnt.path("long")) == long_target


def test_rename_flags(mnt):
    a, b = mnt.path("a"), mnt.path("b")
    for p, text in ((a, "A"), (b, "B")):
        with open(p, "w") as f:
            f.write(text)
    with pytest.raises(OSError) as ei:
        renameat2(a, b, RENAME_NOREPLACE)
    assert ei.value.errno == errno.EEXIST
    renameat2(a, b, RENAME_EXCHANGE)
    assert open(a).read() == "B" and open(b).read() == "A"
    renameat2(a, mnt.path("c"), RENAME_NOREPLACE)
    assert not os.path.exists(a) and open(mnt.path("c")).read() == "B"
    os.mkdir(mnt.path("d"))
    renameat2(mnt.path("d"), b, RENAME_EXCHANGE)     # a directory and a file
    assert os.path.isdir(b) and open(mnt.path("d")).read() == "A"
    os.mkdir(mnt.path("full"))
    open(mnt.path("full", "x"), "w").close()
    with pytest.raises(OSError) as ei:
        os.rename(b, mnt.path("full"))              # over a non-empty directory
    assert ei.value.errno == errno.ENOTEMPTY


def test_rename_whiteout(mnt):
    """RENAME_WHITEOUT (overlayfs asks it of an upper layer): the file
    moves and a character device 0/0 takes its old name, in one core
    rename (before: EINVAL)."""
    a, c = mnt.path("wa"), mnt.path("wc")
    with open(a, "w") as f:
        f.write("A")
    renameat2(a, c, RENAME_WHITEOUT)
    st = os.lstat(a)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == 0 and st.st_nlink == 1
    assert st.st_uid == os.getuid()
    assert open(c).read() == "A"
    with pytest.raises(OSError) as ei:
        renameat2(c, a, RENAME_WHITEOUT | RENAME_EXCHANGE)
    assert ei.value.errno == errno.EINVAL


def test_unlink_of_open_file(mnt, region):
    p = mnt.path("open")
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"x" * 100000)
        os.unlink(p)
        assert not os.path.exists(p)
        assert os.fstat(fd).st_nlink == 0
        os.pwrite(fd, b"after", 5)
        assert os.pread(fd, 10, 0) == b"xxxxxafter"
        # another host sees the name gone, and the file held open
        with daxfs.Region(region, readonly=True) as fs:
            assert not fs.exists("/open")
        assert open_files(region) == 1
    finally:
        os.close(fd)
    # the kernel sends the release after close(2) returns: wait for it
    assert wait_open_files(region, 0) == 0


def test_many_opens_of_one_file_take_one_open_set_entry(mnt, region):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 9100:
        pytest.skip("needs 9,100 open files; the hard limit is %d" % hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 9100), hard))
    p = mnt.path("many")
    open(p, "w").close()
    fds = [os.open(p, os.O_RDONLY) for _ in range(9000)]   # past the set's 8064
    try:
        assert open_files(region) == 1
    finally:
        for fd in fds:
            os.close(fd)
    assert wait_open_files(region, 0) == 0


def test_mmap_shared_and_private(mnt):
    p = mnt.path("map")
    with open(p, "wb") as f:
        f.write(b"\0" * 8192)
    with open(p, "r+b") as f:
        shared = mmap.mmap(f.fileno(), 8192, mmap.MAP_SHARED)
        shared[0:5] = b"hello"
        shared.flush()
        private = mmap.mmap(f.fileno(), 8192, mmap.MAP_PRIVATE)
        private[4096:4101] = b"priv!"
        assert private[0:5] == b"hello"
        shared.close()
        private.close()
    with open(p, "rb") as f:
        data = f.read()
    assert data[0:5] == b"hello"
    assert data[4096:4101] == b"\0" * 5


def test_o_append(mnt):
    p = mnt.path("log")
    fds = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) for _ in range(2)]
    try:
        for i in range(50):
            os.write(fds[i % 2], b"%02d\n" % i)
    finally:
        for fd in fds:
            os.close(fd)
    with open(p, "rb") as f:
        assert f.read() == b"".join(b"%02d\n" % i for i in range(50))


def test_statfs_tells_the_truth(mnt, region):
    v = os.statvfs(mnt.mp)
    with daxfs.Region(region, readonly=True) as fs:
        s = fs.statfs()
    assert v.f_frsize == 4096
    assert v.f_blocks == s["pool_bytes"] // 4096
    before = v.f_bfree
    with open(mnt.path("big"), "wb") as f:
        f.write(b"z" * (8 << 20))
    assert os.statvfs(mnt.mp).f_bfree <= before - (8 << 20) // 4096


def test_readdir_stable_under_change(mnt):
    d = mnt.path("dir")
    os.mkdir(d)
    stable = {"s%03d" % i for i in range(300)}
    for n in stable:
        open(os.path.join(d, n), "w").close()
    stop = threading.Event()

    def churn():
        i = 0
        while not stop.is_set():
            q = os.path.join(d, "t%d" % (i % 50))
            try:
                open(q, "w").close()
                os.unlink(q)
            except OSError:
                pass
            i += 1

    t = threading.Thread(target=churn)
    t.start()
    try:
        for _ in range(20):
            names = [e.name for e in os.scandir(d)]
            seen = [n for n in names if n.startswith("s")]
            assert len(seen) == len(set(seen)), "an entry came twice"
            assert set(seen) == stable
    finally:
        stop.set()
        t.join()


def test_read_only_mount(region):
    with daxfs.Region(region) as fs:
        fs.write_file("/f", b"old")
    m = hf.Mount(region, opts=["ro"])
    try:
        assert " ro," in hf.mounted(m.mp)
        assert open(m.path("f"), "rb").read() == b"old"
        with pytest.raises(OSError) as ei:
            open(m.path("g"), "w")
        assert ei.value.errno == errno.EROFS
    finally:
        m.close()


def test_split_mode_backing_files(tmp_path, region_path):
    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    data = os.urandom(3 * (1 << 20) + 123)
    (src / "a.bin").write_bytes(data)
    (src / "d" / "b.txt").write_bytes(b"hello")
    bk = str(tmp_path / "bk0")
    subprocess.run([env.tool("mkfs.daxfs"), "-q", "-s", str(64 * env.MiB), "--source",
                    str(src), "--cache-size", str(4 * env.MiB), "--backing", bk,
                    region_path], check=True)
    before = open(bk, "rb").read()
    m = hf.Mount(region_path, opts=["backing=" + bk])
    try:
        assert open(m.path("a.bin"), "rb").read() == data
        assert open(m.path("d", "b.txt"), "rb").read() == b"hello"
        with open(m.path("a.bin"), "r+b") as f:    # copy-on-write to the region
            f.seek(1 << 20)
            f.write(b"changed")
        with open(m.path("a.bin"), "rb") as f:
            f.seek(1 << 20)
            assert f.read(7) == b"changed"
    finally:
        m.close()
    assert open(bk, "rb").read() == before       # backing files never written


def test_mount_helper_as_mount_8_runs_it(region, tmp_path):
    """mount -t fuse.daxfs REGION DIR runs /sbin/mount.fuse.daxfs REGION DIR
    -o OPTS with mount(8)'s own flags: a link named so is that helper."""
    helper = tmp_path / "mount.fuse.daxfs"
    helper.symlink_to(env.tool("daxfs-fuse"))
    mp = tmp_path / "mnt"
    mp.mkdir()
    subprocess.run([str(helper), region, str(mp), "-n", "-o", "rw,relatime,defaults"],
                   check=True, timeout=60)
    try:
        line = hf.mounted(str(mp))
        assert line.split()[0] == region and line.split()[2] == "fuse.daxfs"
        (mp / "x").write_bytes(b"via the helper")
    finally:
        subprocess.run([env.tool("daxfs"), "umount", str(mp)], check=True, timeout=60)
    deadline = time.monotonic() + 30
    while hosts_in_use(region) and time.monotonic() < deadline:
        time.sleep(0.02)
    with daxfs.Region(region, readonly=True) as fs:
        assert fs.read_file("/x") == b"via the helper"


def _atime_after_read(region, opts):
    """(atime before, atime after) of a file written, then read through a
    fresh mount with opts; the read changes neither ctime nor mtime (tar
    checks them: "file changed as we read it")."""
    with daxfs.Region(region) as fs:
        fs.write_file("/a", b"x" * 100)
        fs.utime("/a", atime_ns=10**18, mtime_ns=10**18 + 1)   # atime before mtime
        st = fs.stat("/a")
    m = hf.Mount(region, opts=opts)
    try:
        with open(m.path("a"), "rb") as f:
            f.read()
    finally:
        m.close()
    with daxfs.Region(region, readonly=True) as fs:
        after = fs.stat("/a")
    assert (after.st_ctime_ns, after.st_mtime_ns) == (st.st_ctime_ns, st.st_mtime_ns)
    return st.st_atime_ns, after.st_atime_ns


def test_atime_relatime_by_default(region):
    before, after = _atime_after_read(region, [])
    assert after > before


def test_atime_noatime(region):
    before, after = _atime_after_read(region, ["noatime"])
    assert after == before


def test_fstat_of_open_directory_removed(mnt):
    for how in ("rmdir", "rename over"):
        victim, other = mnt.path("victim"), mnt.path("other")
        os.mkdir(victim)
        fd = os.open(victim, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if how == "rmdir":
                os.rmdir(victim)
            else:
                os.mkdir(other)
                os.rename(other, victim)
            st = os.fstat(fd)
            assert stat.S_ISDIR(st.st_mode) and st.st_nlink == 0, how
        finally:
            os.close(fd)
        if how != "rmdir":
            os.rmdir(victim)


def test_remount_read_only_and_back(region, tmp_path):
    """mount -o remount,ro runs the helper with remount: the running mount
    turns read-only, then writable again."""
    helper = tmp_path / "mount.fuse.daxfs"
    helper.symlink_to(env.tool("daxfs-fuse"))
    m = hf.Mount(region)
    try:
        subprocess.run([str(helper), region, m.mp, "-o", "remount,ro"], check=True,
                       timeout=60)
        assert " ro," in hf.mounted(m.mp)
        with pytest.raises(OSError) as ei:
            open(m.path("f"), "w")
        assert ei.value.errno == errno.EROFS
        subprocess.run([str(helper), region, m.mp, "-o", "remount,rw"], check=True,
                       timeout=60)
        with open(m.path("f"), "w") as f:
            f.write("writable again")
    finally:
        m.close()


@pytest.mark.parametrize("trust", [False, True], ids=["default", "trust_dev"])
def test_device_nodes_only_when_trusted(region, trust):
    """Any peer can make /dev/mem-like nodes: the mount is nodev unless
    -o trust_dev (and nosuid unless trust_suid), as daxfs.ko's."""
    m = hf.Mount(region, opts=["trust_dev,trust_suid"] if trust else [])
    try:
        flags = hf.mounted(m.mp).split()[3].split(",")
        assert ("nodev" in flags, "nosuid" in flags) == (not trust, not trust)
        os.mknod(m.path("null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        if trust:
            with open(m.path("null"), "w") as f:
                f.write("gone")
        else:
            with pytest.raises(PermissionError):
                open(m.path("null"), "w")
    finally:
        m.close()


def test_times_before_1970_and_beyond_the_range(mnt):
    """utimensat through the mount, read back by stat: a time before 1970
    keeps its nanoseconds (never negative: they were before), and one
    beyond the region's s64 nanoseconds is clamped to its last whole
    second, as daxfs.ko does."""
    p = mnt.path("t")
    open(p, "w").close()
    for ns in (-250_000_000, -302_443_199_250_000_000, 1_500_000_000_750_000_000):
        os.utime(p, ns=(ns, ns))
        st = os.stat(p)
        assert (st.st_atime_ns, st.st_mtime_ns) == (ns, ns)
    os.utime(p, (99999999999, -99999999999))
    st = os.stat(p)
    assert (st.st_atime, st.st_mtime) == (9223372035, -9223372035)


def test_o_trunc_and_ftruncate_move_mtime_at_any_size(mnt):
    """open(O_TRUNC) and ftruncate move mtime and ctime even when the size
    stays (an empty file truncated again: `: > log`), as on Linux's own
    filesystems: the kernel sends both as a size alone, with no time."""
    p = mnt.path("f")
    old = 10**18
    for data in (b"x" * 10, b""):
        with open(p, "wb") as f:
            f.write(data)
        os.utime(p, ns=(old, old))
        fd = os.open(p, os.O_RDWR | os.O_TRUNC)
        os.close(fd)
        st = os.stat(p)
        assert st.st_size == 0 and st.st_mtime_ns != old, data
    os.utime(p, ns=(old, old))
    ctime = os.stat(p).st_ctime_ns
    fd = os.open(p, os.O_RDWR)
    try:
        os.ftruncate(fd, 0)
        st = os.fstat(fd)
    finally:
        os.close(fd)
    assert st.st_mtime_ns != old and st.st_ctime_ns >= ctime
    os.truncate(p, 5)
    assert os.stat(p).st_size == 5


@pytest.mark.parametrize("opts,locks", [(["ro"], 0), (["ro", "nohost"], errno.ENOLCK)])
def test_read_only_mount_every_call(region, opts, locks):
    """Every system call a user can make on a read-only mount (vm/ro_calls.py,
    the list daxfs.ko's host-less mount answers in a guest): reads, seeks,
    sendfile, copy_file_range, the flags ioctl and read-only mappings work
    (the kernel's FUSE page cache), every change fails with EROFS; a lock is
    taken in the region's lock table, or on a host-less mount (nohost), which
    holds none, fails with ENOLCK as on daxfs.ko's (it said EROFS before); the
    server stays up.  A host-less mount leaves the region's bytes as they
    were; a plain read-only one joins the host table and publishes its
    opens."""
    data = b"HELLO" * 1000
    with daxfs.Region(region) as fs:
        fs.mkdir("/d")
        fs.mkdir("/d/e")
        fs.write_file("/d/f", data)
        fs.symlink("f", "/d/s")
        fs.setxattr("/d/f", "user.k", b"v")
    before = ro_calls.file_digest(region)
    m = hf.Mount(region, opts=opts)
    try:
        bad = ro_calls.sweep(m.path("d"), data, (0,), (locks,),
                             log=lambda _: None)
        assert m.proc.poll() is None, m.output()
    finally:
        m.close()
    assert not bad, bad
    if "nohost" in opts:
        assert ro_calls.file_digest(region) == before


def test_mount_over_the_region_file_is_refused(tmp_path):
    """A mount point that holds the region file (its directory, a parent)
    would hide it from every program, this host's next mount included:
    refused with exit status 2, nothing mounted."""
    d = tmp_path / "dir"
    d.mkdir()
    path = str(d / "region")
    env.mkfs(path, 16 * env.MiB)
    for mnt in (d, tmp_path):
        res = subprocess.run([env.tool("daxfs"), "-r", path, "mount",
                              str(mnt)], capture_output=True, text=True,
                             timeout=60)
        if res.returncode == 0:     # the old code mounted: leave nothing
            subprocess.run([env.tool("daxfs"), "umount", str(mnt)],
                           timeout=60)
        assert res.returncode == 2, res
        assert "choose another mount point" in res.stderr, res.stderr
        assert os.path.exists(path)
        with open("/proc/self/mounts") as f:
            assert str(mnt) not in f.read()


def test_region_the_user_may_only_read_mounts_ro(tmp_path):
    """A region file this user may only read (here immutable, chattr +i,
    which refuses root too) is mounted ro,nohost with a note, as mount(8)
    does for a write-protected device: reads work, changes get EROFS.
    Before session 55 the mount failed with EPERM."""
    path = str(tmp_path / "region")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    env.mkfs(path, 16 * env.MiB)
    with daxfs.Region(path) as r:
        r.write_file("/h", b"kept\n")
    if subprocess.run(["chattr", "+i", path], capture_output=True).returncode:
        pytest.skip("no immutable flag on this filesystem (chattr +i)")
    try:
        res = subprocess.run([env.tool("daxfs"), "-r", path, "mount",
                              str(mnt)], capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 0, res
        try:
            assert "mounting ro,nohost" in res.stderr, res.stderr
            with open(mnt / "h", "rb") as f:
                assert f.read() == b"kept\n"
            with pytest.raises(OSError) as e:
                open(mnt / "new", "wb").close()
            assert e.value.errno == errno.EROFS
        finally:
            subprocess.run([env.tool("daxfs"), "umount", str(mnt)],
                           timeout=60)
    finally:
        subprocess.run(["chattr", "-i", path])
