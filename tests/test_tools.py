"""Tests of the DaxFS command-line tools: mkfs.daxfs and daxfs.

Runs the programs in build/bin (built with `make` when missing) against
regions in temporary files and in /dev/shm.
"""

import hashlib
import json
import os
import pty
import re
import shutil
import stat
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from helpers import build  # noqa: E402  (tests/ is on sys.path: conftest.py)

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "build" / "bin"
MKFS = BIN / "mkfs.daxfs"
DAXFS = BIN / "daxfs"
MIB = 1 << 20


@pytest.fixture(scope="session", autouse=True)
def built():
    """Builds the tools once per session if they are missing."""
    if not (MKFS.exists() and DAXFS.exists()):
        res = build.make("-j8", cwd=ROOT, capture_output=True,
                         text=True)
        if res.returncode != 0 or not (MKFS.exists() and DAXFS.exists()):
            pytest.fail("make failed:\n" + res.stdout[-3000:]
                        + res.stderr[-3000:])


def run(prog, *args, region=None, env=None, input=None, text=True,
        expect=0):
    """Runs prog with args; checks the exit status when expect is not None."""
    cmd = [str(prog)]
    if region is not None:
        cmd += ["-r", str(region)]
    cmd += [str(a) for a in args]
    full_env = dict(os.environ)
    full_env.pop("DAXFS_REGION", None)
    if env:
        full_env.update(env)
    res = subprocess.run(cmd, capture_output=True, env=full_env, input=input,
                         text=text, timeout=120)
    if expect is not None:
        assert res.returncode == expect, (
            f"{cmd} exited {res.returncode}, expected {expect}\n"
            f"stdout: {res.stdout!r}\nstderr: {res.stderr!r}")
    return res


def dx(region, *args, **kw):
    """Runs `daxfs -r region args...`."""
    return run(DAXFS, *args, region=region, **kw)


def mkfs(*args, **kw):
    return run(MKFS, *args, **kw)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def stat_fields(out):
    """Parses `daxfs stat` output into a dict of the interesting fields."""
    fields = {}
    m = re.search(r"Size: (\d+)\s+Blocks: (\d+)\s+IO Block: \d+\s+(.+)", out)
    fields["size"] = int(m.group(1))
    fields["blocks"] = int(m.group(2))
    fields["type"] = m.group(3).strip()
    fields["ino"] = int(re.search(r"Inode: (\d+)", out).group(1))
    fields["links"] = int(re.search(r"Links: (\d+)", out).group(1))
    m = re.search(r"Access: \((\d+)/(\S+)\)\s+"
                  r"Uid: \(\s*(\d+)/.*Gid: \(\s*(\d+)/", out)
    fields["mode"] = int(m.group(1), 8)
    fields["modestr"] = m.group(2)
    fields["uid"] = int(m.group(3))
    fields["gid"] = int(m.group(4))
    fields["mtime"] = re.search(r"Modify: (.+)", out).group(1).strip()
    m = re.search(r"Device type: (\d+),(\d+)", out)
    if m:
        fields["rdev"] = (int(m.group(1)), int(m.group(2)))
    m = re.search(r"File: \S+ -> (.*)", out)
    if m:
        fields["target"] = m.group(1)
    return fields


def df_used_kib(region):
    out = dx(region, "df").stdout.splitlines()
    assert out[0].split()[:5] == ["Filesystem", "1K-blocks", "Used",
                                  "Available", "Use%"]
    cols = out[1].split()
    return int(cols[1]), int(cols[2]), int(cols[3])


@pytest.fixture
def region(tmp_path):
    path = tmp_path / "region.img"
    mkfs("-q", "-s", "64M", path)
    return path


# ---------------------------------------------------------------- mkfs


def test_mkfs_regular_file(tmp_path):
    path = tmp_path / "r.img"
    res = mkfs("-s", "32M", "-L", "testlabel", path)
    assert path.stat().st_size == 32 * MIB
    assert "32 MiB" in res.stdout
    assert "buckets" in res.stdout and "pool" in res.stdout
    assert dx(path, "ls", "/").stdout == ""
    info = json.loads(dx(path, "info", "--json").stdout)
    assert info["label"] == "testlabel"
    assert info["total_size"] == 32 * MIB
    assert info["pool"]["size"] > 0


def test_mkfs_quiet_prints_nothing(tmp_path):
    res = mkfs("-q", "-s", "16M", tmp_path / "q.img")
    assert res.stdout == "" and res.stderr == ""


def test_mkfs_dev_shm():
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        pytest.skip("no writable /dev/shm")
    path = shm / f"daxfs-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        mkfs("-q", "-s", "16M", path)
        assert path.stat().st_size == 16 * MIB
        dx(path, "mkdir", "/d")
        dx(path, "write", "/d/f", input="hello shm\n")
        assert dx(path, "cat", "/d/f").stdout == "hello shm\n"
    finally:
        if path.exists():
            path.unlink()


def test_mkfs_refuses_existing_filesystem(tmp_path):
    path = tmp_path / "r.img"
    mkfs("-q", "-s", "16M", "-L", "keepme", path)
    dx(path, "write", "/precious", input="data")
    res = mkfs("-s", "16M", path, expect=8)
    assert "DaxFS" in res.stderr and "-f" in res.stderr
    # nothing was touched
    assert dx(path, "cat", "/precious").stdout == "data"
    mkfs("-q", "-f", "-s", "16M", path)
    dx(path, "cat", "/precious", expect=1)


def test_mkfs_refuses_other_data(tmp_path):
    path = tmp_path / "ext.img"
    data = bytearray(16 * MIB)
    data[1080:1082] = b"\x53\xef"      # ext2/3/4 superblock magic
    path.write_bytes(bytes(data))
    res = mkfs("-s", "16M", path, expect=8)
    assert "ext" in res.stderr and "-f" in res.stderr
    path.write_bytes(os.urandom(4096) + bytes(16 * MIB - 4096))
    res = mkfs(path, expect=8)
    assert "-f" in res.stderr
    mkfs("-q", "-f", path)           # size from the existing file
    assert path.stat().st_size == 16 * MIB


def test_mkfs_bad_size_suffix(tmp_path):
    path = tmp_path / "r.img"
    res = mkfs("-s", "12Q", path, expect=1)
    assert "invalid size '12Q'" in res.stderr
    assert "K, M, G or T" in res.stderr
    res = mkfs("-s", "abc", path, expect=1)
    assert "invalid size" in res.stderr
    assert not path.exists()


def test_mkfs_needs_size_for_new_file(tmp_path):
    path = tmp_path / "new.img"
    res = mkfs(path, expect=1)
    assert "-s SIZE" in res.stderr
    assert not path.exists()


def test_mkfs_size_suffixes(tmp_path):
    for arg, size in (("8M", 8 * MIB), ("8192K", 8 * MIB),
                      ("0.0078125G", 8 * MIB), ("8MiB", 8 * MIB)):
        path = tmp_path / f"s{arg}.img"
        mkfs("-q", "-s", arg, path)
        assert path.stat().st_size == size, arg


def test_mkfs_sized_like_mke2fs(tmp_path):
    """xfstests' _scratch_mkfs_sized formats with `mkfs -F -b BLOCKSIZE DEV BLOCKS`
    (the mke2fs convention: BLOCKS in units of -b); a second run shrinks the region
    on the same target; -b must be a power of two, and BLOCKS must agree with -s."""
    path = tmp_path / "sized.img"
    mkfs("-q", "-F", "-b", "4096", path, "4096")
    assert path.stat().st_size == 16 * MIB
    mkfs("-q", "-F", "-b", "4096", path, "2560")
    assert path.stat().st_size == 10 * MIB
    run(BIN / "fsck.daxfs", "-n", path)
    assert "power of two" in mkfs("-F", "-b", "3000", path, "10", expect=1).stderr
    assert "disagree" in mkfs("-F", "-b", "4096", "-s", "1M", path, "10", expect=1).stderr


def test_mkfs_too_small(tmp_path):
    res = mkfs("-s", "8K", tmp_path / "tiny.img", expect=8)
    assert "tiny.img" in res.stderr


def test_mkfs_usage_errors(tmp_path):
    assert "missing TARGET" in mkfs(expect=1).stderr
    mkfs("--buckets", "1000", "-s", "16M", tmp_path / "b.img", expect=1)
    mkfs("--max-hosts", "100000", "-s", "16M", tmp_path / "b.img", expect=1)
    mkfs("--bogus", tmp_path / "b.img", expect=1)
    res = mkfs("-L", "x" * 40, "-s", "16M", tmp_path / "b.img", expect=1)
    assert "label" in res.stderr
    assert "Usage:" in mkfs("--help").stdout


def test_mkfs_options(tmp_path):
    path = tmp_path / "o.img"
    mkfs("-q", "-s", "32M", "--buckets", "4096", "--max-hosts", "8",
         "--lease-ms", "5000", path)
    info = json.loads(dx(path, "info", "--json").stdout)
    assert info["overlay"]["buckets"] == 4096
    assert info["max_hosts"] == 8
    assert info["lease_ms"] == 5000


def test_mkfs_t_daxfs(tmp_path):
    if not shutil.which("mkfs"):
        pytest.skip("mkfs(8) not installed")
    path = tmp_path / "t.img"
    env = {"PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    run("mkfs", "-t", "daxfs", "-q", "-s", "16M", path, env=env)
    assert dx(path, "ls", "/").returncode == 0


# ------------------------------------------------------- base image


def make_tree(root):
    """Builds a source tree with every kind of object; returns facts."""
    root.mkdir()
    (root / "hello.txt").write_text("hello, base image\n")
    os.chmod(root / "hello.txt", 0o640)
    big = os.urandom(MIB + 123457)
    (root / "big.bin").write_bytes(big)
    (root / "empty").write_bytes(b"")
    deep = root / "d1" / "d2" / "d3"
    deep.mkdir(parents=True)
    (deep / "leaf.txt").write_text("deep leaf\n")
    (root / "d1" / "mid.txt").write_text("middle\n")
    os.symlink("hello.txt", root / "link")
    os.symlink("/d1/d2", root / "abslink")
    os.link(root / "hello.txt", root / "d1" / "hard")
    os.mkfifo(root / "fifo", 0o600)
    os.utime(root / "d1" / "mid.txt", (1000000000, 1234567890))
    os.chmod(root / "d1" / "d2", 0o750)
    dev = False
    if os.geteuid() == 0:
        try:
            os.mknod(root / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            dev = True
        except OSError:
            pass
    return {"big": big, "dev": dev}


def test_mkfs_source_tree(tmp_path):
    src = tmp_path / "src"
    facts = make_tree(src)
    path = tmp_path / "base.img"
    res = mkfs("-s", "64M", "--source", src, path)
    assert "base image" in res.stdout
    assert res.stderr == ""          # no progress when not a tty

    names = dx(path, "ls", "/").stdout.split()
    expect = sorted(p.name for p in src.iterdir())
    assert names == expect

    assert dx(path, "cat", "/hello.txt").stdout == "hello, base image\n"
    assert dx(path, "cat", "/d1/d2/d3/leaf.txt").stdout == "deep leaf\n"
    assert dx(path, "cat", "/empty").stdout == ""
    big = dx(path, "cat", "/big.bin", text=False).stdout
    assert sha256(big) == sha256(facts["big"])

    # attributes
    st = stat_fields(dx(path, "stat", "/hello.txt").stdout)
    local = os.lstat(src / "hello.txt")
    assert st["mode"] == 0o640 and st["modestr"] == "-rw-r-----"
    assert st["uid"] == local.st_uid and st["gid"] == local.st_gid
    assert st["links"] == 2 and st["size"] == local.st_size
    hard = stat_fields(dx(path, "stat", "/d1/hard").stdout)
    assert hard["ino"] == st["ino"] and hard["links"] == 2

    mid = stat_fields(dx(path, "stat", "/d1/mid.txt").stdout)
    assert mid["mtime"].startswith(time.strftime(
        "%Y-%m-%d %H:%M:%S", time.localtime(1234567890)))

    d2 = stat_fields(dx(path, "stat", "/d1/d2").stdout)
    assert d2["type"] == "directory" and d2["mode"] == 0o750
    assert d2["links"] == 3          # . , .. in d3, entry in d1
    root = stat_fields(dx(path, "stat", "/").stdout)
    assert root["ino"] == 1

    link = stat_fields(dx(path, "stat", "/link").stdout)
    assert link["type"] == "symbolic link" and link["target"] == "hello.txt"
    assert dx(path, "readlink", "/abslink").stdout == "/d1/d2\n"
    assert dx(path, "cat", "/link").stdout == "hello, base image\n"
    assert dx(path, "ls", "/abslink").stdout.split() == ["d3"]

    fifo = stat_fields(dx(path, "stat", "/fifo").stdout)
    assert fifo["type"] == "fifo" and fifo["mode"] == 0o600
    assert stat_fields(dx(path, "stat", "/empty").stdout)["type"] == \
        "regular empty file"
    if facts["dev"]:
        null = stat_fields(dx(path, "stat", "/null").stdout)
        assert null["type"] == "character special file"
        assert null["rdev"] == (1, 3)

    # ls -l looks like ls -l
    long = dx(path, "ls", "-l", "/").stdout.splitlines()
    assert long[0].startswith("total ")
    byname = {ln.split()[-1]: ln for ln in long[1:] if "->" not in ln}
    assert byname["hello.txt"].startswith("-rw-r----- 2 ")
    assert byname["fifo"].startswith("prw------- 1 ")
    assert byname["d1"].startswith("d")
    assert any(ln.startswith("lrwxrwxrwx") and ln.endswith("link -> hello.txt")
               for ln in long)

    # the base is writable through the overlay
    dx(path, "write", "/hello.txt", input="changed\n")
    assert dx(path, "cat", "/hello.txt").stdout == "changed\n"
    assert dx(path, "cat", "/d1/hard").stdout == "changed\n"
    dx(path, "rm", "/big.bin")
    dx(path, "cat", "/big.bin", expect=1)
    dx(path, "put", src / "d1" / "mid.txt", "/d1/d2/new.txt")
    assert dx(path, "cat", "/d1/d2/new.txt").stdout == "middle\n"
    assert "new.txt" in dx(path, "ls", "/d1/d2").stdout.split()


def test_mkfs_progress_on_tty(tmp_path):
    src = tmp_path / "many"
    src.mkdir()
    for i in range(2500):
        (src / f"f{i:04d}").write_bytes(b"x" * (i % 7))
    path = tmp_path / "many.img"
    master, slave = pty.openpty()
    try:
        res = subprocess.run([str(MKFS), "-s", "64M", "--source", str(src),
                              str(path)], stdout=subprocess.PIPE,
                             stderr=slave, timeout=120)
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    assert res.returncode == 0
    err = b"".join(chunks).decode(errors="replace")
    assert "scanning source, entries: 1000" in err
    assert "2500 inodes" not in err   # the summary goes to stdout
    assert dx(path, "cat", "/f0006").stdout == "xxxxxx"
    # -q silences progress even on a terminal
    master, slave = pty.openpty()
    try:
        run(MKFS, "-q", "-f", "-s", "64M", "--source", src, path)
    finally:
        os.close(master)
        os.close(slave)


def test_mkfs_source_errors(tmp_path):
    res = mkfs("-s", "16M", "--source", tmp_path / "nope", tmp_path / "x.img",
               expect=8)
    assert "nope" in res.stderr
    src = tmp_path / "src"
    src.mkdir()
    (src / "big").write_bytes(os.urandom(2 * MIB))
    res = mkfs("-s", "1M", "--source", src, tmp_path / "y.img", expect=8)
    assert "larger -s" in res.stderr


# ---------------------------------------------------------- daxfs


def test_put_get_roundtrip(region, tmp_path):
    data = os.urandom(3 * MIB + 17)
    local = tmp_path / "in.bin"
    local.write_bytes(data)
    dx(region, "put", local, "/file.bin")
    out = tmp_path / "out.bin"
    dx(region, "get", "/file.bin", out)
    assert sha256(out.read_bytes()) == sha256(data)
    cat = dx(region, "cat", "/file.bin", text=False).stdout
    assert sha256(cat) == sha256(data)
    st = stat_fields(dx(region, "stat", "/file.bin").stdout)
    assert st["size"] == len(data)
    # put into a directory keeps the local name; get into a directory too
    dx(region, "mkdir", "/dir")
    dx(region, "put", local, "/dir")
    outdir = tmp_path / "outdir"
    outdir.mkdir()
    dx(region, "get", "/dir/in.bin", outdir)
    assert sha256((outdir / "in.bin").read_bytes()) == sha256(data)
    # overwrite with something shorter
    local.write_bytes(b"short")
    dx(region, "put", local, "/file.bin")
    assert dx(region, "cat", "/file.bin").stdout == "short"


def test_namespace_ops(region):
    dx(region, "mkdir", "-p", "/a/b/c")
    dx(region, "mkdir", "-p", "/a/b/c")      # no error when it exists
    res = dx(region, "mkdir", "/a", expect=1)
    assert res.stderr == "daxfs: mkdir: /a: File exists\n"
    assert dx(region, "ls", "/a/b").stdout.split() == ["c"]
    dx(region, "write", "/a/b/c/f", input="content\n")
    dx(region, "mv", "/a/b/c/f", "/a/g")
    assert dx(region, "ls", "/a").stdout.split() == ["b", "g"]
    dx(region, "mv", "/a/g", "/a/b")         # into a directory
    assert dx(region, "ls", "/a/b").stdout.split() == ["c", "g"]
    dx(region, "mv", "/a/b/g", "/a/g")

    dx(region, "ln", "/a/g", "/a/h")
    g = stat_fields(dx(region, "stat", "/a/g").stdout)
    h = stat_fields(dx(region, "stat", "/a/h").stdout)
    assert g["ino"] == h["ino"] and g["links"] == 2
    dx(region, "ln", "-s", "/a/g", "/a/s")
    assert dx(region, "readlink", "/a/s").stdout == "/a/g\n"
    assert dx(region, "cat", "/a/s").stdout == "content\n"

    dx(region, "truncate", "-s", "3", "/a/g")
    assert dx(region, "cat", "/a/h").stdout == "con"
    dx(region, "truncate", "-s", "1M", "/a/g")
    st = stat_fields(dx(region, "stat", "/a/g").stdout)
    assert st["size"] == MIB
    data = dx(region, "cat", "/a/g", text=False).stdout
    assert data == b"con" + bytes(MIB - 3)
    dx(region, "truncate", "-s", "5X", "/a/g", expect=2)

    res = dx(region, "rmdir", "/a/b", expect=1)
    assert "daxfs: rmdir: /a/b: Directory not empty" in res.stderr
    res = dx(region, "rm", "/a/b", expect=1)
    assert "Is a directory" in res.stderr
    dx(region, "rm", "-r", "/a/b")
    assert dx(region, "ls", "/a").stdout.split() == ["g", "h", "s"]
    dx(region, "rm", "/a/h")
    assert stat_fields(dx(region, "stat", "/a/g").stdout)["links"] == 1

    res = dx(region, "rm", "/nope", expect=1)
    assert res.stderr == "daxfs: rm: /nope: No such file or directory\n"
    dx(region, "rm", "-f", "/nope")
    res = dx(region, "ls", "/x", expect=1)
    assert res.stderr == "daxfs: ls: /x: No such file or directory\n"
    res = dx(region, "cat", "/a", expect=1)
    assert "Is a directory" in res.stderr

    dx(region, "chmod", "600", "/a/g")
    assert stat_fields(dx(region, "stat", "/a/g").stdout)["mode"] == 0o600
    dx(region, "chmod", "u+x,g+r", "/a/g")
    assert stat_fields(dx(region, "stat", "/a/g").stdout)["mode"] == 0o740
    dx(region, "touch", "/a/t")
    st = stat_fields(dx(region, "stat", "/a/t").stdout)
    assert st["size"] == 0 and st["type"] == "regular empty file"

    dx(region, "write", "/log", input="one\n")
    dx(region, "write", "-a", "/log", input="two\n")
    assert dx(region, "cat", "/log").stdout == "one\ntwo\n"

    dx(region, "rmdir", "/a", expect=1)
    dx(region, "rm", "-rf", "/a")
    dx(region, "rm", "-r", "/", expect=1)
    assert dx(region, "ls", "/").stdout.split() == ["log"]
    assert dx(region, "ls", "-a", "/").stdout.split() == [".", "..", "log"]


def test_df_shows_space_freed(region, tmp_path):
    size0, used0, _ = df_used_kib(region)
    local = tmp_path / "big"
    local.write_bytes(os.urandom(8 * MIB))
    dx(region, "put", local, "/big")
    size1, used1, avail1 = df_used_kib(region)
    assert size1 == size0
    assert used1 >= used0 + 8 * 1024
    dx(region, "rm", "/big")
    used2 = used1
    for _ in range(10):
        _, used2, avail2 = df_used_kib(region)
        if used2 < used1 - 7 * 1024:
            break
        time.sleep(0.2)
    assert used2 < used1 - 7 * 1024, (used0, used1, used2)
    assert avail2 > avail1
    human = dx(region, "df", "-h").stdout.splitlines()
    assert human[0].split()[:4] == ["Filesystem", "Size", "Used", "Avail"]


def test_enospc_leaves_nothing_and_frees_space(tmp_path):
    path = tmp_path / "small.img"
    mkfs("-q", "-s", "16M", path)
    _, used_empty, _ = df_used_kib(path)
    local = tmp_path / "big"
    local.write_bytes(os.urandom(32 * MIB))
    res = dx(path, "put", local, "/big", expect=1)
    assert "no space left" in res.stderr
    # the failed put left no file, under its name or any other
    assert dx(path, "ls", "-a", "/").stdout.split() == [".", ".."]
    _, used, _ = df_used_kib(path)
    assert used < used_empty + 1024


def test_info(region):
    dx(region, "write", "/f", input="x")
    info = json.loads(dx(region, "info", "--json").stdout)
    for key in ("total_size", "regions", "overlay", "pool", "hosts",
                "max_hosts", "lease_ms", "uuid", "epoch"):
        assert key in info
    names = {r["name"] for r in info["regions"]}
    assert {"state", "hosts", "buckets", "pool"} <= names
    assert info["self_slot"] is None
    # every command so far has left: no host may still be alive
    for host in info["hosts"]:
        assert host["state"].lower() != "alive" or host["expired"], host
    text = dx(region, "info").stdout
    assert "Pool:" in text and "Hosts:" in text and "Layout:" in text


def test_region_from_environment(region):
    env = {"DAXFS_REGION": str(region)}
    run(DAXFS, "mkdir", "/viaenv", env=env)
    assert run(DAXFS, "ls", "/", env=env).stdout.split() == ["viaenv"]
    res = run(DAXFS, "ls", "/", expect=2)
    assert "DAXFS_REGION" in res.stderr


def test_help_and_usage(region):
    res = run(DAXFS, "--help")
    for sub in ("info", "ls", "stat", "cat", "put", "get", "mkdir", "rm",
                "rmdir", "mv", "ln", "truncate", "df"):
        assert f"  {sub} " in res.stdout
    assert "Usage: daxfs [-r REGION] ls" in run(DAXFS, "ls", "--help").stdout
    assert "Usage:" in run(DAXFS, "help", "put").stdout
    assert "unknown command" in run(DAXFS, "frobnicate", expect=2).stderr
    dx(region, "ls", "-Z", expect=2)
    dx(region, "put", "onlyone", expect=2)
    dx(region, "truncate", "/f", expect=2)


def test_missing_region(tmp_path):
    res = dx(tmp_path / "nonexistent", "ls", expect=1)
    assert "No such file or directory" in res.stderr
    empty = tmp_path / "zero.img"
    empty.write_bytes(bytes(1 * MIB))
    res = dx(empty, "ls", expect=1)
    assert "mkfs.daxfs" in res.stderr


def test_corrupt_superblock(region):
    with open(region, "r+b") as f:
        f.seek(0x60)
        f.write(b"\xde\xad\xbe\xef")
    for args in (("ls", "/"), ("info",), ("df",), ("cat", "/x")):
        res = dx(region, *args, expect=None)
        assert res.returncode == 1, (args, res)
        assert "fsck.daxfs" in res.stderr, res.stderr
    with open(region, "r+b") as f:
        f.write(b"\0" * 8)           # destroy the magic
    res = dx(region, "ls", expect=1)
    assert "not a DaxFS filesystem" in res.stderr


def test_rm_r_of_a_tree_deeper_than_path_max(region):
    """A tree whose paths are longer than PATH_MAX (built here by moving
    one deep chain under another, as any host may) goes with rm -r; rm
    -r stopped with ENAMETOOLONG before and left the tree."""
    link = "/" + "d" * 200
    chain = link * 16                  # 3,216 bytes, within PATH_MAX
    inodes_before = dx(region, "df", "-i").stdout
    dx(region, "mkdir", "-p", "/top" + chain)
    dx(region, "mkdir", "-p", "/low" + chain)
    dx(region, "write", "/low" + chain + "/deepest", input="x")
    dx(region, "mv", "/low", "/top" + chain + "/low")
    # /top/.../low/.../deepest is 6,448 bytes: the path API refuses it
    res = dx(region, "stat", "/top" + chain + "/low" + chain + "/deepest",
             expect=1)
    assert "File name too long" in res.stderr
    dx(region, "rm", "-r", "/top")
    assert dx(region, "ls", "/").stdout.split() == []
    assert dx(region, "df", "-i").stdout == inodes_before


def test_address_space_limit_is_named_not_a_full_disk(tmp_path):
    """Under `ulimit -v` smaller than the region, mkfs, the daxfs tool
    and `daxfs run` say so; they said the filesystem holding the region
    had no room and told the user to free space there (session 56)."""
    img = tmp_path / "r.img"
    mkfs("-q", "-s", "256M", img)
    new = tmp_path / "new.img"
    limited = ("ulimit -v 100000; "
               f"{MKFS} -q -s 256M {new}; echo mkfs=$?; "
               f"echo hi | {DAXFS} -r {img} write /f; echo write=$?; "
               f"{DAXFS} -r {img} run -- true; echo run=$?")
    res = subprocess.run(["bash", "-c", limited], capture_output=True,
                         text=True, timeout=60)
    assert "mkfs=8" in res.stdout and "write=1" in res.stdout \
        and "run=1" in res.stdout, (res.stdout, res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 3, res.stderr
    for line in lines:
        assert "(256 MiB) under an address-space limit of" in line \
            and "(ulimit -v)" in line, line
        assert "room" not in line and "free space" not in line, line
    assert not new.exists()
    # without the limit the same commands work
    mkfs("-q", "-s", "256M", new)
    dx(img, "write", "/f", input="hi\n")


def test_process_limit_names_the_thread_and_lets_reads_through():
    """A user at RLIMIT_NPROC (root is exempt, so as nobody) cannot start
    libdaxfs's heartbeat thread: a write says why and changes nothing,
    a read goes through read-only.  Both said only "Resource temporarily
    unavailable" before session 56."""
    if os.geteuid() != 0 or not shutil.which("prlimit"):
        pytest.skip("needs root (to run as nobody) and prlimit")
    img = Path("/dev/shm") / f"daxfs-nproc-{uuid.uuid4().hex}"
    try:
        mkfs("-q", "-s", "16M", img)
        dx(img, "write", "/old", input="kept\n")
        os.chmod(img, 0o666)
        limited = (f"echo new | prlimit --nproc=1:1 {DAXFS} -r {img} "
                   f"write /new; echo write=$?; "
                   f"prlimit --nproc=1:1 {DAXFS} -r {img} cat /old; "
                   f"echo cat=$?")
        res = subprocess.run(["su", "nobody", "-s", "/bin/sh", "-c",
                              limited], capture_output=True, text=True,
                             timeout=60)
        assert "write=1" in res.stdout and "kept\ncat=0" in res.stdout, \
            (res.stdout, res.stderr)
        assert "cannot start libdaxfs's heartbeat thread" in res.stderr \
            and "ulimit -u" in res.stderr, res.stderr
        assert dx(img, "ls", "/").stdout.split() == ["old"]
    finally:
        img.unlink(missing_ok=True)
