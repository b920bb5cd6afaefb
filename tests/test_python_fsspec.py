"""The daxfs:// fsspec filesystem (python/daxfs/fsspec_impl.py,
docs/python.md "fsspec").

Through fsspec.filesystem("daxfs", region=...) and fsspec.open
("daxfs:///...") files are written, read, listed, copied, moved and
removed, and another host of the region sees them; fsspec's own abstract
test classes (copy, get, put, open, pipe) run against the filesystem.
The entry point itself is checked where the package is installed
(tests/test_python_package.py); here, in the tree, the class is
registered by hand as the entry point would.
"""

import os
import posixpath

import pytest

fsspec = pytest.importorskip("fsspec", reason="fsspec is not installed "
                             "(tests/requirements.txt installs it)")
from fsspec.tests import abstract  # noqa: E402

import daxfs  # noqa: E402
from daxfs.fsspec_impl import DaxfsFileSystem  # noqa: E402

fsspec.register_implementation("daxfs", DaxfsFileSystem, clobber=True)


@pytest.fixture
def dfs(region):
    fs = fsspec.filesystem("daxfs", region=region, skip_instance_cache=True)
    yield fs
    fs.region.close()


def test_write_read_list_remove(dfs, region):
    dfs.mkdir("/data/sub")
    with dfs.open("/data/a.bin", "wb") as f:
        f.write(b"\x00\x01" * 5000)
    with dfs.open("daxfs:///data/t.txt", "w") as f:
        f.write("one\ntwo\n")
    dfs.pipe("/data/sub/p", b"piped")
    assert sorted(dfs.ls("/data", detail=False)) == [
        "/data/a.bin", "/data/sub", "/data/t.txt"]
    info = {i["name"]: i for i in dfs.ls("daxfs:///data")}
    assert info["/data/a.bin"]["size"] == 10000
    assert info["/data/a.bin"]["type"] == "file"
    assert info["/data/sub"]["type"] == "directory"
    assert dfs.cat("/data/sub/p") == b"piped"
    assert dfs.cat_file("/data/a.bin", start=2, end=6) == b"\x00\x01" * 2
    with dfs.open("/data/t.txt", "r") as f:
        assert f.readlines() == ["one\n", "two\n"]
    assert sorted(dfs.find("/")) == ["/data/a.bin", "/data/sub/p",
                                     "/data/t.txt"]
    # another host of the region sees it all
    with daxfs.Region(region) as other:
        assert other.read_file("/data/t.txt") == b"one\ntwo\n"
        other.write_file("/data/from-other", b"hi")
    assert dfs.cat("/data/from-other") == b"hi"

    dfs.cp_file("/data/a.bin", "/data/copy.bin")
    assert dfs.cat("/data/copy.bin") == dfs.cat("/data/a.bin")
    dfs.mv("/data/copy.bin", "/data/sub")       # into the directory
    dfs.mv("/data/t.txt", "/data/moved.txt")
    assert not dfs.exists("/data/t.txt")
    assert dfs.cat("/data/moved.txt") == b"one\ntwo\n"
    assert dfs.isfile("/data/sub/copy.bin")
    with pytest.raises(ValueError):
        dfs.rm("/data/sub")
    dfs.rm("/data/sub", recursive=True)
    dfs.rm("/data/moved.txt")
    assert sorted(dfs.ls("/data", detail=False)) == [
        "/data/a.bin", "/data/from-other"]
    with pytest.raises(FileNotFoundError):
        dfs.info("/data/sub")
    with pytest.raises(FileExistsError):
        dfs.mkdir("/data")


def test_fsspec_open_urls(region, monkeypatch):
    with fsspec.open("daxfs:///x.txt", "w", region=region) as f:
        f.write("by url\n")
    with fsspec.open("daxfs:///x.txt", "rb", region=region) as f:
        assert f.read() == b"by url\n"
    # no region option: $DAXFS_REGION
    monkeypatch.setenv("DAXFS_REGION", region)
    with fsspec.open("daxfs:///x.txt", "r") as f:
        assert f.read() == "by url\n"
    of = fsspec.open_files("daxfs:///*.txt")
    assert [o.path for o in of] == ["/x.txt"]
    monkeypatch.delenv("DAXFS_REGION")
    with pytest.raises(ValueError):
        DaxfsFileSystem(skip_instance_cache=True)


def test_pandas_read_csv(dfs, region):
    pd = pytest.importorskip("pandas", reason="pandas is not installed "
                             "(not in tests/requirements.txt)")
    dfs.pipe("/t.csv", b"a,b\n1,2\n3,4\n")
    df = pd.read_csv("daxfs:///t.csv", storage_options={"region": region})
    assert df.to_dict("list") == {"a": [1, 3], "b": [2, 4]}


class DaxfsFixtures(abstract.AbstractFixtures):
    """fsspec's abstract tests on a fresh region each (auto_mkdir as the
    local filesystem they compare with)."""

    @pytest.fixture
    def fs(self, region):
        fs = DaxfsFileSystem(region=region, auto_mkdir=True,
                             skip_instance_cache=True)
        yield fs
        fs.region.close()

    @pytest.fixture
    def fs_join(self):
        return posixpath.join

    @pytest.fixture
    def fs_path(self):
        return "/work"


class TestDaxfsCopy(DaxfsFixtures, abstract.AbstractCopyTests):
    pass


class TestDaxfsGet(DaxfsFixtures, abstract.AbstractGetTests):
    pass


class TestDaxfsPut(DaxfsFixtures, abstract.AbstractPutTests):
    pass


class TestDaxfsOpen(DaxfsFixtures, abstract.AbstractOpenTests):
    pass


class TestDaxfsPipe(DaxfsFixtures, abstract.AbstractPipeTests):
    pass
