"""daxfs.File is an io.RawIOBase and Region.open_file() is open()
(docs/python.md "File objects").

The modes are checked against the built-in open() on a real file: the
same operations in both must give the same results, object types and
final contents.  Then the readers of file objects from the standard
library (tarfile, zipfile, pickle, shutil.copyfileobj) and numpy's
save/load run over region files, and the older File API (pread, pwrite,
append, truncate(n)) keeps working beside the position.
"""

import array
import io
import os
import pickle
import random
import shutil
import tarfile
import zipfile

import pytest

import daxfs

MODES = ["r", "rb", "r+", "rb+", "w", "wb", "w+", "wb+", "a", "ab", "a+",
         "ab+", "x", "xb", "x+", "xb+", "rt", "wt"]
INITIAL = "first line\nsecond line\nthird\n"


@pytest.fixture
def fs(region):
    with daxfs.Region(region) as r:
        yield r


def _script(f, mode):
    """The same steps on a file of either kind; returns what they saw."""
    text = "b" not in mode
    conv = (lambda s: s) if text else (lambda s: s.encode())
    out = [type(f).__name__, f.readable(), f.writable(), f.seekable(),
           f.tell()]
    if f.readable():
        out.append(f.readline())
        out.append(f.read(4))
        out.append(f.tell())
    if f.writable():
        out.append(f.write(conv("written\n")))
        out.append(f.tell())
        f.seek(0)
        out.append(f.write(conv("W")))
        out.append(f.seek(0, os.SEEK_END))
        if f.readable():
            f.seek(0)
            out.append(f.read())
        if not text:
            out.append(f.truncate(5))
            out.append(f.tell())
    return out


@pytest.mark.parametrize("mode", MODES)
def test_open_modes_match_builtin(fs, tmp_path, mode):
    real = tmp_path / "f"
    exists = mode[0] != "x"
    if exists:
        real.write_text(INITIAL)
        fs.write_file("/f", INITIAL)
    with open(real, mode) as a, fs.open_file("/f", mode) as b:
        assert getattr(b, "mode", mode) == a.mode
        assert b.name == "/f"
        assert _script(b, mode) == _script(a, mode)
    assert fs.read_file("/f") == real.read_bytes()
    if mode[0] == "x":
        with pytest.raises(FileExistsError):
            fs.open_file("/f", mode)
    if mode[0] == "r":
        with pytest.raises(FileNotFoundError):
            fs.open_file("/missing", mode)


def test_open_rejects_what_open_rejects(fs):
    fs.write_file("/f", b"x")
    fs.mkdir("/d")
    for mode in ("", "rw", "rr", "bt", "q", "rbt", "r+w"):
        with pytest.raises(ValueError):
            fs.open_file("/f", mode)
        with pytest.raises(ValueError):
            open(os.devnull, mode)
    with pytest.raises(ValueError):
        fs.open_file("/f", "r", buffering=0)
    with pytest.raises(ValueError):
        fs.open_file("/f", "rb", encoding="utf-8")
    with pytest.raises(IsADirectoryError):
        fs.open_file("/d", "rb")
    # nothing stays open after a refused open
    assert _open_files(fs) == 0


def test_raw_file(fs):
    fs.write_file("/f", bytes(range(256)) * 40)
    with fs.open_file("/f", "rb+", buffering=0) as f:
        assert isinstance(f, io.RawIOBase) and isinstance(f, daxfs.File)
        with pytest.raises(io.UnsupportedOperation):
            f.fileno()
        buf = bytearray(300)
        assert f.readinto(buf) == 300 and bytes(buf) == bytes(range(256)) + \
            bytes(range(44))
        mv = memoryview(buf)[10:20]
        assert f.readinto(mv) == 10 and bytes(mv) == bytes(range(44, 54))
        ints = array.array("i", [0] * 4)
        assert f.readinto(ints) == 16
        assert ints.tobytes() == bytes(range(54, 70))
        assert f.tell() == 326
        assert f.seek(-6, os.SEEK_END) == 10234
        assert f.read() == bytes(range(250, 256))
        assert f.read(5) == b"" and f.readinto(bytearray(5)) == 0
        assert f.seek(10, os.SEEK_CUR) == 10250
        assert f.write(b"end") == 3 and f.tell() == 10253
        assert fs.stat("/f").st_size == 10253
        with pytest.raises(OSError):
            f.seek(-1)
        with pytest.raises(TypeError):
            f.readinto(b"read-only")
        with pytest.raises(TypeError):
            f.write("text")
        f.seek(100)
        assert f.truncate() == 100 and f.tell() == 100
        assert fs.stat("/f").st_size == 100
    assert f.closed
    with pytest.raises(ValueError):
        f.read()
    with fs.open_file("/f", "rb", buffering=0) as f:
        with pytest.raises(io.UnsupportedOperation):
            f.write(b"x")
    with fs.open_file("/f", "wb", buffering=0) as f:
        with pytest.raises(io.UnsupportedOperation):
            f.read()


def test_append_mode_appends_at_the_end(fs):
    fs.write_file("/log", b"0123")
    with fs.open_file("/log", "ab", buffering=0) as a:
        assert a.tell() == 4
        with fs.open("/log") as other:
            other.append(b"xy")              # another writer appended
        a.seek(0)
        assert a.write(b"AB") == 2 and a.tell() == 8
    assert fs.read_file("/log") == b"0123xyAB"


@pytest.mark.parametrize("seed", range(4))
def test_random_ops_match_real_file(fs, tmp_path, seed):
    """Random reads, writes, seeks and truncates through BufferedRandom
    agree with the same on a real file."""
    rnd = random.Random(seed)
    real = tmp_path / "f"
    real.write_bytes(b"")
    fs.write_file("/f", b"")
    with open(real, "rb+", buffering=rnd.choice([0, 64, 4096])) as a, \
            fs.open_file("/f", "rb+",
                         buffering=rnd.choice([0, 64, 4096])) as b:
        for _ in range(300):
            op = rnd.choice("wwrrsst")
            if op == "w":
                data = rnd.randbytes(rnd.randrange(1, 3000))
                assert b.write(data) == a.write(data)
            elif op == "r":
                n = rnd.randrange(-1, 5000)
                assert b.read(n) == a.read(n)
            elif op == "s":
                off, whence = rnd.randrange(0, 20000), rnd.choice([0, 1, 2])
                if whence:
                    off -= min(off, a.seek(0, whence))
                assert b.seek(off, whence) == a.seek(off, whence)
            else:
                size = rnd.randrange(0, 20000)
                assert b.truncate(size) == a.truncate(size)
            assert b.tell() == a.tell()
    assert fs.read_file("/f") == real.read_bytes()


def test_stdlib_readers_and_writers(fs, tmp_path):
    members = {"a.bin": os.urandom(70000), "dir/b.txt": b"hello\n" * 999}
    with fs.open_file("/x.tar", "wb") as f:
        with tarfile.open(fileobj=f, mode="w") as t:
            for name, data in members.items():
                ti = tarfile.TarInfo(name)
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
    with fs.open_file("/x.tar", "rb") as f, tarfile.open(fileobj=f) as t:
        assert {m.name: t.extractfile(m).read() for m in t} == members

    with fs.open_file("/x.zip", "wb") as f:
        with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in members.items():
                z.writestr(name, data)
    with fs.open_file("/x.zip", "rb+") as f:   # adds to the archive
        with zipfile.ZipFile(f, "a") as z:
            z.writestr("c", b"added")
    with fs.open_file("/x.zip", "rb") as f, zipfile.ZipFile(f) as z:
        assert z.testzip() is None
        assert {n: z.read(n) for n in z.namelist()} == dict(members,
                                                             c=b"added")

    obj = {"k": list(range(5000)), "s": "\u00e9" * 100, "b": members}
    with fs.open_file("/o.pkl", "wb") as f:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.dump("second", f)
    with fs.open_file("/o.pkl", "rb") as f:
        assert pickle.load(f) == obj and pickle.load(f) == "second"

    # copyfileobj both ways between a region file and a real file
    with fs.open_file("/x.tar", "rb") as src, open(tmp_path / "t", "wb") as d:
        shutil.copyfileobj(src, d, 4096)
    with open(tmp_path / "t", "rb") as src, fs.open_file("/y.tar", "xb") as d:
        shutil.copyfileobj(src, d)
    assert fs.read_file("/y.tar") == fs.read_file("/x.tar") == \
        (tmp_path / "t").read_bytes()

    # the older API's File in an io.BufferedReader, lines as text
    fs.write_file("/lines", b"".join(b"%d\n" % i for i in range(3000)))
    with fs.open("/lines") as raw:
        with io.TextIOWrapper(io.BufferedReader(raw), "ascii") as t:
            assert [int(x) for x in t] == list(range(3000))


def test_numpy_save_load(fs):
    np = pytest.importorskip("numpy", reason="numpy is not installed "
                             "(tests/requirements.txt installs it)")
    a = np.random.default_rng(1).standard_normal((300, 7))
    b = np.arange(10000, dtype=np.int32)
    with fs.open_file("/a.npy", "wb") as f:
        np.save(f, a)
    with fs.open_file("/a.npy", "rb") as f:
        assert np.array_equal(np.load(f), a)
    with fs.open_file("/ab.npz", "wb") as f:
        np.savez_compressed(f, a=a, b=b)
    with fs.open_file("/ab.npz", "rb") as f, np.load(f) as z:
        assert np.array_equal(z["a"], a) and np.array_equal(z["b"], b)
    # readinto straight into an array's memory
    out = np.empty(10000, dtype=np.int32)
    fs.write_file("/raw", b.tobytes())
    with fs.open_file("/raw", "rb", buffering=0) as f:
        assert f.readinto(out) == b.nbytes
    assert np.array_equal(out, b)


def test_file_api_beside_the_position(fs):
    with fs.open("/f", create=True) as f:
        assert f.mode == "rb+" and f.tell() == 0
        assert f.pwrite(b"hello world", 0) == 11
        assert f.tell() == 0                  # pwrite leaves the position
        assert f.read(5) == b"hello" and f.tell() == 5
        assert f.append(b"!") == 11 and f.tell() == 5
        assert f.pread(3, 6) == b"wor"
        f.truncate(8)
        assert f.read_all() == b"hello wo" and f.tell() == 5
        assert f.read() == b" wo"
    assert fs.read_file("/f") == b"hello wo"


def _open_files(fs):
    return [h for h in fs.info()["hosts"] if h["self"]][0]["open_files"]


def test_collected_file_stays_open_buffered_closes(fs):
    """A dropped File keeps its open-set entry (as before io); a dropped
    BufferedWriter closes its File, writing what it buffered."""
    import gc
    fs.write_file("/f", b"x")
    f = fs.open("/f")
    del f
    gc.collect()
    assert _open_files(fs) == 1
    w = fs.open_file("/g", "wb")
    w.write(b"buffered")
    assert _open_files(fs) == 2
    del w
    gc.collect()
    assert _open_files(fs) == 1
    assert fs.read_file("/g") == b"buffered"
