"""A region that fills during a copy (issue "Trust under concurrency",
defect 1): `daxfs put` and `daxfs write` must fail with a clear message
and never leave a partial file that looks complete; the Python helpers
must raise.
"""

import errno
import os

import pytest

from test_tools import DAXFS, mkfs, run

KIB = 1 << 10
PIECE = 768 * KIB       # under the tools' 1 MiB copy chunk: one write each


def fill_with(region, tmp_path, how):
    """Copies PIECE-sized files into /f0, /f1, ... until a copy fails.
    Returns the failing command's result and the names it tried."""
    names = []
    for i in range(64):
        name = f"/f{i}"
        data = os.urandom(PIECE)
        local = tmp_path / "piece"
        local.write_bytes(data)
        names.append((name, data))
        if how == "put":
            res = run(DAXFS, "put", local, name, region=region, expect=None)
        else:
            res = run(DAXFS, "write", name, region=region, input=data,
                      text=False, expect=None)
        if res.returncode != 0:
            return res, names
    pytest.fail("a 16 MiB region took 48 MiB")


@pytest.mark.parametrize("how", ["put", "write"])
def test_full_region_is_an_error_and_leaves_no_partial_file(tmp_path, how):
    region = tmp_path / "r.img"
    mkfs("-q", "-s", "16M", region)
    res, names = fill_with(region, tmp_path, how)
    assert res.returncode == 1
    err = res.stderr if isinstance(res.stderr, str) else res.stderr.decode()
    assert "no space left" in err.lower(), err
    listed = run(DAXFS, "ls", "/", region=region).stdout.split()
    # every file that exists holds all of its bytes: none is short
    for name, data in names:
        if name[1:] not in listed:
            continue
        got = run(DAXFS, "cat", name, region=region, text=False).stdout
        assert len(got) == len(data), (name, len(got))
        assert got == data, name
    # the failed copy left nothing behind under any name
    assert names[-1][0][1:] not in listed
    assert len(listed) == len(names) - 1, listed


def test_put_failure_keeps_the_old_file(tmp_path):
    region = tmp_path / "r.img"
    mkfs("-q", "-s", "16M", region)
    old = b"old content\n"
    run(DAXFS, "write", "/keep", region=region, input=old, text=False)
    big = tmp_path / "big"
    big.write_bytes(os.urandom(32 << 20))
    res = run(DAXFS, "put", big, "/keep", region=region, expect=1)
    assert "no space left" in res.stderr.lower()
    got = run(DAXFS, "cat", "/keep", region=region, text=False).stdout
    assert got == old
    assert run(DAXFS, "ls", "/", region=region).stdout.split() == ["keep"]


def python_region(tmp_path):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
    import daxfs
    path = str(tmp_path / "py.img")
    daxfs.mkfs(path, 16 << 20)
    return daxfs, path


def test_python_write_file_full_region(tmp_path):
    daxfs, path = python_region(tmp_path)
    with daxfs.Region(path) as fs:
        fs.write_file("/keep", b"old\n")
        with pytest.raises(OSError) as exc:
            fs.write_file("/new", os.urandom(32 << 20))
        assert exc.value.errno == errno.ENOSPC
        with pytest.raises(OSError):
            fs.write_file("/keep", os.urandom(32 << 20))
        # nothing short looks complete: /new is gone, /keep is empty
        assert not fs.exists("/new")
        assert fs.read_file("/keep") == b""


def test_python_append_full_region_raises(tmp_path):
    daxfs, path = python_region(tmp_path)
    with daxfs.Region(path) as fs:
        with fs.open("/log", create=True) as f:
            done = 0
            with pytest.raises(OSError) as exc:
                for _ in range(64):
                    f.append(os.urandom(PIECE))
                    done += 1
            assert exc.value.errno == errno.ENOSPC
            # every append that returned put all of its bytes in
            assert f.size >= done * PIECE


def test_write_append_full_region(tmp_path):
    region = tmp_path / "r.img"
    mkfs("-q", "-s", "16M", region)
    done = 0
    for _ in range(64):
        res = run(DAXFS, "write", "-a", "/log", region=region,
                  input=os.urandom(PIECE), text=False, expect=None)
        if res.returncode:
            break
        done += 1
    assert res.returncode == 1
    assert b"no space left" in res.stderr.lower(), res.stderr
    size = len(run(DAXFS, "cat", "/log", region=region, text=False).stdout)
    # every append that exited 0 put all of its bytes in
    assert size >= done * PIECE, (size, done)
