"""Smoke test of the Python bindings (python/daxfs) over build/libdaxfs.so.

Each Region method once, plus the mapping of library errors to
DaxfsError / the builtin OSError subclasses.  Needs `make` first.
"""

import errno
import os
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import daxfs  # noqa: E402

SIZE = 64 << 20


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "fs.img"
    daxfs.mkfs(str(path), SIZE)
    return str(path)


@pytest.fixture
def fs(image):
    with daxfs.Region(image) as region:
        yield region


def test_mkfs_refuses_existing_fs(image):
    with pytest.raises(daxfs.DaxfsError) as exc:
        daxfs.mkfs(image, SIZE)
    assert exc.value.errno == errno.EEXIST
    daxfs.mkfs(image, SIZE, force=True, buckets=4096, max_hosts=8)
    with daxfs.Region(image) as region:
        assert region.listdir("/") == []
        info = region.info()
        assert info["nr_buckets"] == 4096
        assert info["max_hosts"] == 8


def test_empty_root(fs):
    st = fs.stat("/")
    assert stat.S_ISDIR(st.st_mode)
    assert st.st_nlink == 2
    assert fs.listdir("/") == []
    assert fs.exists("/")
    assert not fs.exists("/nope")


def test_mkdir_makedirs_rmdir(fs):
    fs.mkdir("/a", 0o700)
    st = fs.stat("/a")
    assert stat.S_ISDIR(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o700
    assert fs.stat("/").st_nlink == 3
    fs.makedirs("/a/b/c")
    fs.makedirs("/a/b/c")
    with pytest.raises(FileExistsError):
        fs.makedirs("/a/b/c", exist_ok=False)
    assert fs.listdir("/a/b") == ["c"]
    with pytest.raises(daxfs.DaxfsError) as exc:
        fs.rmdir("/a")
    assert exc.value.errno == errno.ENOTEMPTY
    fs.rmdir("/a/b/c")
    fs.rmdir("/a/b")
    fs.rmdir("/a")
    assert fs.listdir("/") == []
    assert fs.stat("/").st_nlink == 2


def test_create_and_mknod(fs):
    ino = fs.create("/f", 0o600)
    st = fs.stat("/f")
    assert st.st_ino == ino
    assert stat.S_ISREG(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_size == 0
    assert st.st_uid == os.geteuid()
    with pytest.raises(FileExistsError) as exc:
        fs.create("/f")
    assert exc.value.errno == errno.EEXIST
    assert isinstance(exc.value, daxfs.DaxfsError)
    assert fs.create("/f", exclusive=False) == ino
    fs.mknod("/fifo", stat.S_IFIFO | 0o644)
    assert stat.S_ISFIFO(fs.stat("/fifo").st_mode)
    dev = os.makedev(8, 1)
    fs.mknod("/blk", stat.S_IFBLK | 0o600, dev)
    st = fs.stat("/blk")
    assert stat.S_ISBLK(st.st_mode)
    assert st.st_rdev == dev


def test_unlink(fs):
    fs.write_file("/f", b"x" * 10000)
    fs.unlink("/f")
    assert not fs.exists("/f")
    with pytest.raises(FileNotFoundError):
        fs.unlink("/f")
    fs.mkdir("/d")
    with pytest.raises(IsADirectoryError):
        fs.unlink("/d")
    # a trailing slash: a directory is still one, a file is not one
    with pytest.raises(IsADirectoryError):
        fs.unlink("/d/")
    fs.write_file("/g", b"")
    with pytest.raises(NotADirectoryError):
        fs.unlink("/g/")
    with pytest.raises(FileNotFoundError):
        fs.unlink("/nope/")
    assert fs.exists("/g")


def test_walk_attributes(fs):
    """What a path call reports about the name it ends on, however the
    walk reached it (the walk keeps the attributes it read)."""
    fs.mkdir("/d")
    fs.mkdir("/d/e")
    ino = fs.create("/d/e/f", 0o640)
    fs.symlink("e/f", "/d/l")
    fs.symlink("/d/e", "/d/le")
    for p in ("/d/e/f", "/d/e/../e/f", "/d/./e//f", "/d/l", "/d/le/f"):
        st = fs.stat(p)
        assert st.st_ino == ino and stat.S_ISREG(st.st_mode), p
    assert stat.S_ISLNK(fs.lstat("/d/l").st_mode)
    assert stat.S_ISDIR(fs.stat("/d/le").st_mode)
    assert stat.S_ISDIR(fs.stat("/d/e/..").st_mode)
    assert fs.stat("/d/e/..").st_ino == fs.stat("/d").st_ino
    assert stat.S_ISDIR(fs.stat("/").st_mode)
    with pytest.raises(NotADirectoryError):
        fs.stat("/d/e/f/")
    with pytest.raises(NotADirectoryError):
        fs.stat("/d/l/")
    assert stat.S_ISDIR(fs.stat("/d/le/").st_mode)
    # create: an existing name, directly, through a symlink, as "dir/"
    assert fs.create("/d/e/f", exclusive=False) == ino
    assert fs.create("/d/l", exclusive=False) == ino
    with pytest.raises(FileExistsError):
        fs.create("/d/l")
    with pytest.raises(IsADirectoryError):
        fs.create("/d/e", exclusive=False)
    with pytest.raises(IsADirectoryError):
        fs.create("/d/new/", exclusive=False)
    with pytest.raises(NotADirectoryError):
        fs.create("/d/e/f/x")
    with pytest.raises(FileNotFoundError):
        fs.create("/d/nope/x")
    n = fs.create("/d/le/new")
    assert fs.stat("/d/e/new").st_ino == n


def test_last_two_names(fs):
    """create, mknod, unlink and stat look a path's last directory up in
    the core call that uses it; where that name is no directory (a
    symlink, a file, nothing) the walk answers as it always did."""
    fs.mkdir("/d")
    fs.mkdir("/d/e")
    fs.write_file("/d/f", b"")
    fs.symlink("e", "/d/le")
    fs.symlink("nope", "/d/dangling")
    fs.symlink("loop", "/d/loop")
    for p in ("/d/le/x", "/d/e/../e/x", "/d/./e/x", "/d//e//x"):
        ino = fs.create(p)
        st = fs.stat(p)
        assert st.st_ino == ino and fs.stat("/d/e/x").st_ino == ino, p
        assert fs.create(p, exclusive=False) == ino, p
        with pytest.raises(FileExistsError):
            fs.create(p)
        fs.unlink(p)
        assert not fs.exists("/d/e/x"), p
        fs.mknod(p, stat.S_IFIFO | 0o600)
        assert stat.S_ISFIFO(fs.stat("/d/e/x").st_mode), p
        fs.unlink(p)
    for p, err in (("/d/f/x", NotADirectoryError),
                   ("/d/nope/x", FileNotFoundError),
                   ("/d/dangling/x", FileNotFoundError)):
        with pytest.raises(err):
            fs.create(p)
        with pytest.raises(err):
            fs.mknod(p, stat.S_IFIFO | 0o600)
        with pytest.raises(err):
            fs.unlink(p)
        with pytest.raises(err):
            fs.stat(p)
    for call in (fs.create, fs.unlink, fs.stat):
        with pytest.raises(OSError) as exc:
            call("/d/loop/x")
        assert exc.value.errno == errno.ELOOP
    # a symlink last: stat follows it, create opens what it names
    fs.write_file("/d/e/t", b"t")
    fs.symlink("t", "/d/e/lt")
    assert fs.stat("/d/le/lt").st_ino == fs.stat("/d/e/t").st_ino
    assert stat.S_ISLNK(fs.lstat("/d/le/lt").st_mode)
    assert fs.create("/d/le/lt", exclusive=False) == fs.stat("/d/e/t").st_ino
    # an immutable directory: an existing name opens, a new one is refused
    fs.setflags("/d/e", daxfs.FL_IMMUTABLE)
    assert fs.create("/d/e/t", exclusive=False) == fs.stat("/d/e/t").st_ino
    with pytest.raises(FileExistsError):
        fs.create("/d/e/t")
    for call in (fs.create, fs.unlink):
        with pytest.raises(PermissionError):
            call("/d/e/n" if call == fs.create else "/d/e/t")
    fs.setflags("/d/e", 0)
    fs.unlink("/d/le/t")
    assert not fs.exists("/d/e/t")


def test_rename(fs):
    fs.write_file("/a", b"A")
    fs.write_file("/b", b"B")
    fs.mkdir("/d")
    fs.rename("/a", "/d/a2")
    assert fs.read_file("/d/a2") == b"A"
    assert not fs.exists("/a")
    with pytest.raises(FileExistsError):
        fs.rename("/b", "/d/a2", daxfs.RENAME_NOREPLACE)
    fs.rename("/b", "/d/a2", daxfs.RENAME_EXCHANGE)
    assert fs.read_file("/d/a2") == b"B"
    assert fs.read_file("/b") == b"A"
    fs.rename("/b", "/d/a2")
    assert fs.read_file("/d/a2") == b"A"
    assert sorted(fs.listdir("/")) == ["d"]


def walk_errno(call, path):
    """0, or the errno call(path) raised."""
    try:
        call(path)
        return 0
    except OSError as e:
        return e.errno


def test_symlink_chains_that_grow_the_path_as_linux(fs, tmp_path):
    """Links whose targets put more path in front of what is left to
    walk: a chain of 40 of them resolves, on Linux and here, however long
    the path it spells out (more than 30 KiB here), and a link that
    grows into itself is ELOOP, not ENAMETOOLONG.  The preload's
    differential test found the second (lib/path.c "struct walk")."""
    n = "x" * 255
    climb = "/".join([n, ".."] * 3)
    for mkdir, symlink, base in ((os.mkdir, os.symlink, str(tmp_path)),
                                 (fs.mkdir, fs.symlink, "/t")):
        if base == "/t":
            fs.mkdir(base)
        mkdir(base + "/" + n)
        for i in range(1, 40):
            symlink("l%d/%s" % (i + 1, climb), base + "/l%d" % i)
        symlink(".", base + "/l40")
        symlink("g/" + climb, base + "/g")
    assert walk_errno(os.stat, str(tmp_path / "l1")) == 0
    assert walk_errno(os.stat, str(tmp_path / "g")) == errno.ELOOP
    assert stat.S_ISDIR(fs.stat("/t/l1").st_mode)
    assert fs.stat("/t/l1").st_ino == fs.stat("/t").st_ino
    assert walk_errno(fs.stat, "/t/g") == errno.ELOOP
    assert walk_errno(fs.stat, "/t/g/" + n) == errno.ELOOP


def test_link_symlink_readlink(fs):
    fs.write_file("/f", b"data")
    fs.link("/f", "/g")
    assert fs.stat("/f").st_nlink == 2
    assert fs.stat("/g").st_ino == fs.stat("/f").st_ino
    fs.symlink("/f", "/s")
    assert fs.readlink("/s") == "/f"
    assert stat.S_ISLNK(fs.lstat("/s").st_mode)
    assert stat.S_ISREG(fs.stat("/s").st_mode)
    assert fs.read_file("/s") == b"data"
    fs.mkdir("/d")
    fs.symlink("../d", "/d/up")
    assert fs.stat("/d/up").st_ino == fs.stat("/d").st_ino
    fs.symlink("loop2", "/loop1")
    fs.symlink("loop1", "/loop2")
    with pytest.raises(daxfs.DaxfsError) as exc:
        fs.stat("/loop1")
    assert exc.value.errno == errno.ELOOP
    with pytest.raises(daxfs.DaxfsError) as exc:
        fs.readlink("/f")
    assert exc.value.errno == errno.EINVAL


def test_listdir_and_readdir_chunk(fs):
    names = {f"n{i:03d}" for i in range(300)}
    fs.mkdir("/d")
    for name in names:
        fs.create("/d/" + name)
    assert set(fs.listdir("/d")) == names
    seen = []
    pos = 0
    while pos is not None:
        ents, pos = fs.readdir_chunk("/d", pos, 7)
        assert len(ents) <= 7
        seen.extend(ents)
    assert {e[0] for e in seen} == names
    assert len(seen) == len(names)
    for name, ino, dtype, epos in seen[:5]:
        assert fs.stat("/d/" + name).st_ino == ino
        assert dtype == 8           # DT_REG
        assert epos >= 2
    with pytest.raises(NotADirectoryError):
        fs.listdir("/d/n000")


def test_read_write_file(fs):
    data = os.urandom(3 * 4096 + 123)
    fs.write_file("/f", data)
    assert fs.read_file("/f") == data
    fs.write_file("/f", b"short")
    assert fs.read_file("/f") == b"short"
    assert fs.stat("/f").st_size == 5


def test_file_object(fs):
    with fs.open("/f", create=True) as f:
        assert f.size == 0
        assert f.pwrite(b"hello", 0) == 5
        assert f.pwrite(b"world", 10000) == 5
        assert f.size == 10005
        assert f.pread(5, 0) == b"hello"
        assert f.pread(10, 100) == bytes(10)        # hole reads zeros
        assert f.pread(100, 10000) == b"world"      # short at EOF
        assert f.append(b"!!") == 10005
        assert f.read_all()[-7:] == b"world!!"
        f.truncate(3)
        assert f.size == 3
        assert f.read_all() == b"hel"
        f.truncate(8192)
        assert f.read_all() == b"hel" + bytes(8189)
        ino = f.ino
    assert fs.stat("/f").st_ino == ino
    with pytest.raises(FileNotFoundError):
        fs.open("/missing")
    fs.mkdir("/d")
    with pytest.raises(IsADirectoryError):
        fs.open("/d")


def test_truncate_chmod_chown_utime(fs):
    fs.write_file("/f", b"0123456789")
    fs.truncate("/f", 4)
    assert fs.read_file("/f") == b"0123"
    fs.chmod("/f", 0o640)
    assert stat.S_IMODE(fs.stat("/f").st_mode) == 0o640
    assert stat.S_ISREG(fs.stat("/f").st_mode)
    fs.chown("/f", 1234, 5678)
    st = fs.stat("/f")
    assert (st.st_uid, st.st_gid) == (1234, 5678)
    fs.chown("/f", -1, 42)
    st = fs.stat("/f")
    assert (st.st_uid, st.st_gid) == (1234, 42)
    fs.utime("/f", 1_000_000_000_123, 2_000_000_000_456)
    st = fs.stat("/f")
    assert st.st_atime_ns == 1_000_000_000_123
    assert st.st_mtime_ns == 2_000_000_000_456
    assert st.st_ctime_ns > 2_000_000_000_456


def test_statfs_info_reclaim(fs):
    sf = fs.statfs()
    for key in ("pool_bytes", "used_bytes", "free_bytes", "nr_buckets",
                "used_buckets", "inodes"):
        assert key in sf
    assert 0 < sf["pool_bytes"] <= SIZE
    info = fs.info()
    assert info["regions"]
    names = {r["name"] for r in info["regions"]}
    assert names >= {"state", "hosts", "buckets", "pool"}
    me = [h for h in info["hosts"] if h["pid"] == os.getpid()]
    assert len(me) == 1
    assert me[0]["state"] == "alive"
    assert me[0]["name"].endswith(f":{os.getpid()}")
    assert me[0]["lease_age_ns"] < 60 * 10**9
    for key in ("slot", "gen"):
        assert key in me[0]

    before = fs.statfs()["used_bytes"]
    fs.write_file("/big", bytes(4 << 20))
    grown = fs.statfs()["used_bytes"]
    assert grown >= before + (4 << 20)
    fs.unlink("/big")
    fs.reclaim()
    assert fs.statfs()["used_bytes"] < grown - (3 << 20)


def test_two_hosts_and_readonly(image):
    with daxfs.Region(image) as a, daxfs.Region(image) as b:
        a.write_file("/shared", b"from a")
        assert b.read_file("/shared") == b"from a"
        pids = [h["pid"] for h in a.info()["hosts"]]
        assert pids.count(os.getpid()) == 2
        with daxfs.Region(image, readonly=True) as ro:
            assert ro.read_file("/shared") == b"from a"
            with pytest.raises(daxfs.DaxfsError) as exc:
                ro.mkdir("/x")
            assert exc.value.errno == errno.EROFS
    region = daxfs.Region(image)
    region.close()
    with pytest.raises(ValueError):
        region.stat("/")


def test_fork_child_is_a_new_host(fs):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            fs.write_file("/child", b"hi")
            me = [h for h in fs.info()["hosts"] if h["self"]]
            code = 0 if me and me[0]["pid"] == os.getpid() else 2
            fs.close()          # leaves the child's own slot
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert fs.read_file("/child") == b"hi"
    me = [h for h in fs.info()["hosts"] if h["self"]]
    assert me[0]["pid"] == os.getpid()


def test_error_mapping(fs):
    with pytest.raises(daxfs.DaxfsError) as exc:
        fs.stat("/nope")
    assert exc.value.errno == errno.ENOENT
    assert isinstance(exc.value, FileNotFoundError)
    assert exc.value.filename == "/nope"
    fs.write_file("/f", b"")
    with pytest.raises(NotADirectoryError):
        fs.mkdir("/f/x")
    with pytest.raises(daxfs.DaxfsError) as exc:
        fs.mkdir("/" + "x" * 300)
    assert exc.value.errno == errno.ENAMETOOLONG
    assert "fsck.daxfs" in daxfs.strerror(errno.EUCLEAN)
