"""Split mode and the shared page cache, end to end (docs/pcache.md).

mkfs.daxfs --source DIR --backing FILE... writes the metadata into the region
and the file data into backing files; hosts (separate processes here) read
through the shared page cache.  Checked: correct data (files > 4 GiB,
several backing files, working sets below and above the cache, many
readers and writers at once), each backing page read once for the whole
cluster when the working set fits (counted per process), writes going to
the overlay with the backing files untouched, hosts without backing access
served by hosts with it (or a bounded error), wrong backing files refused,
a process killed in the middle of a fill or while pinning a page not
wedging the others, and `daxfs info` reporting the cache.
"""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from helpers import build  # noqa: E402  (tests/ is on sys.path: conftest.py)

from helpers import env
import crashlib as cl

import daxfs

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30
PAGE = 4096


def _content(seed, size):
    out = bytearray()
    n = 0
    while len(out) < size:
        out += hashlib.sha256(b"%d-%d" % (seed, n)).digest()
        n += 1
    return bytes(out[:size])


@pytest.fixture
def split_fs(tmp_path):
    """A split-mode filesystem: region in /dev/shm, 2 backing files."""
    made = []

    def make(files, region_size=64 * MiB, cache=4 * MiB, nr_backing=2,
             lease_ms=None, extra=()):
        src = tmp_path / ("src%d" % len(made))
        src.mkdir()
        for name, data in files.items():
            p = src / name
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(data, int):          # sparse: size only
                with open(p, "wb") as f:
                    f.truncate(data)
                    f.seek(data - 5)
                    f.write(b"tail!")
            else:
                p.write_bytes(data)
        region = env.region_path("pcache")
        backing = [str(tmp_path / ("bk%d-%d" % (len(made), i)))
                   for i in range(nr_backing)]
        cmd = [env.tool("mkfs.daxfs"), "-q", "-s", str(region_size),
               "--source", str(src), "--cache-size", str(cache)]
        for b in backing:
            cmd += ["--backing", b]
        if lease_ms:
            cmd += ["--lease-ms", str(lease_ms)]
        cmd += list(extra) + [region]
        subprocess.run(cmd, check=True)
        made.append(region)
        return region, backing, src

    yield make
    for r in made:
        env.remove(r)


def _expect_file(src, name, size):
    p = os.path.join(src, name)
    with open(p, "rb") as f:
        return f.read(size)


def test_split_roundtrip_and_overlay(split_fs):
    files = {"a.bin": _content(1, 3 * MiB + 123), "d/b.txt": b"hello",
             "big.sparse": 5 * GiB + 7, "empty": b""}
    region, backing, src = split_fs(files)
    digests = [hashlib.sha256(open(b, "rb").read(1 << 20)).hexdigest()
               for b in backing]
    with daxfs.Region(region, backing=backing) as r:
        assert r.read_file("/a.bin") == files["a.bin"]
        assert r.read_file("/d/b.txt") == b"hello"
        assert r.read_file("/empty") == b""
        with r.open("/big.sparse") as f:
            assert f.pread(5, 5 * GiB + 2) == b"tail!"
            assert f.pread(8192, 4 * GiB - 4096) == bytes(8192)
        ci = r.cache_info()
        assert ci["nr_backing"] == 2 and ci["pending"] == 0
        # writes go to the overlay; reads prefer it
        with r.open("/a.bin") as f:
            f.pwrite(b"X" * 5000, 4000)
            want = bytearray(files["a.bin"])
            want[4000:9000] = b"X" * 5000
            assert f.pread(20000, 0) == bytes(want[:20000])
        r.cache_drop()
        assert r.read_file("/a.bin") == bytes(want)
    # the backing files were never modified
    assert digests == [hashlib.sha256(open(b, "rb").read(1 << 20)).hexdigest()
                       for b in backing]
    # fsck is happy with a split-mode filesystem
    out = subprocess.run([env.tool("fsck.daxfs"), "-n", region],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_wrong_backing_refused(split_fs, tmp_path):
    region, backing, _ = split_fs({"a": _content(2, 100000)})
    region2, backing2, _ = split_fs({"a": _content(3, 100000)})
    with pytest.raises(OSError) as ei:
        daxfs.Region(region, backing=[backing2[0]])
    assert ei.value.errno == 124 or "backing" in str(ei.value)   # EMEDIUMTYPE
    bad = tmp_path / "bad"
    shutil.copy(backing[0], bad)
    with open(bad, "r+b") as f:
        f.truncate(os.path.getsize(backing[0]) - 4096)
    with pytest.raises(OSError):
        daxfs.Region(region, backing=[str(bad)])
    out = subprocess.run([env.tool("daxfs"), "-r", region, "--backing",
                          backing2[0], "ls", "/"], capture_output=True, text=True)
    assert out.returncode != 0 and "backing" in out.stderr


WORKER = textwrap.dedent("""
    import json, os, random, sys, time
    sys.path.insert(0, %(pydir)r)
    import daxfs
    region, backing, mode, seed, iters = sys.argv[1], json.loads(sys.argv[2]), \\
        sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    files = json.loads(sys.argv[6])
    rnd = random.Random(seed)
    r = daxfs.Region(region, backing=backing, fill_timeout_ms=20000)
    if os.environ.get("DAXFS_TEST_WATCH"):
        r.watch_hosts()     # times the others' leases: a dead one shows
    bad = 0
    if mode == "pin":
        data, ref = r.page_map(r.stat(files[0][0]).st_ino, 3)
        print("PINNED", flush=True)
        time.sleep(600)
    for i in range(iters):
        name, size, path = files[rnd.randrange(len(files))]
        if size == 0:
            continue
        off = rnd.randrange(size)
        n = min(size - off, rnd.randrange(1, 20000))
        with r.open(name) as f:
            got = f.pread(n, off)
        with open(path, "rb") as src:
            src.seek(off)
            if got != src.read(n):
                bad += 1
    ci = r.cache_info()
    print(json.dumps({"bad": bad, "reads": ci["backing_reads"],
                      "hits": ci["host_hits"], "misses": ci["host_misses"]}))
    r.close()
""") % {"pydir": env.PYDIR}


def _spawn(region, backing, mode, seed, iters, files, envx=None):
    e = dict(os.environ)
    e.update(envx or {})
    return subprocess.Popen([sys.executable, "-c", WORKER, region,
                             json.dumps(backing), mode, str(seed), str(iters),
                             json.dumps(files)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=e)


def _finish(p, timeout=300):
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _file_list(src, files):
    return [["/" + n, len(d) if not isinstance(d, int) else d,
             os.path.join(src, n)] for n, d in files.items()]


def test_cluster_reads_each_page_once(split_fs):
    # working set 2 MiB, cache 8 MiB: every backing page read once in total
    files = {"f%d" % i: _content(10 + i, 256 * KiB - 77 * i) for i in range(8)}
    region, backing, src = split_fs(files, cache=8 * MiB)
    fl = _file_list(src, files)
    procs = [_spawn(region, backing, "read", s, 400, fl) for s in range(6)]
    res = [_finish(p) for p in procs]
    assert all(x["bad"] == 0 for x in res)
    pages = sum((len(d) + PAGE - 1) // PAGE for d in files.values())
    with daxfs.Region(region, backing=backing) as r:
        ci = r.cache_info()
    total_reads = sum(x["reads"] for x in res)
    assert total_reads == ci["fills"]
    assert total_reads <= pages            # never a duplicate fill
    assert ci["valid"] == total_reads and ci["evictions"] == 0
    assert ci["pins"] == 0 and ci["pending"] == 0


def test_pressure_readers_and_writers(split_fs):
    # working set 4x the cache, readers and writers at once
    files = {"f%d" % i: _content(20 + i, 1 * MiB) for i in range(4)}
    region, backing, src = split_fs(files, cache=1 * MiB)
    fl = _file_list(src, files)
    procs = [_spawn(region, backing, "read", s, 300, fl) for s in range(4)]
    # a writer on a copy-on-write file of its own
    with daxfs.Region(region, backing=backing) as r:
        with r.open("/f3") as f:
            for k in range(50):
                f.pwrite(b"W%d" % k * 100, k * 20000)
        res = [_finish(p) for p in procs[:]]
        want = bytearray(files["f3"])
        for k in range(50):
            w = b"W%d" % k * 100
            want[k * 20000:k * 20000 + len(w)] = w
        assert r.read_file("/f3") == bytes(want)
        ci = r.cache_info()
    # f3's reads by the workers raced the writes: only f0..f2 must match
    assert ci["evictions"] > 0 and ci["pins"] == 0 and ci["pending"] == 0
    for x in res:
        assert x["reads"] > 0


def test_no_access_host_served_and_bounded(split_fs):
    files = {"a": _content(5, 300 * KiB)}
    region, backing, src = split_fs(files)
    # nobody can fill: bounded error
    with daxfs.Region(region, fill_timeout_ms=500) as r:
        t0 = time.time()
        with pytest.raises(OSError):
            r.read_file("/a")
        assert time.time() - t0 < 10
        assert r.cache_info()["pending"] == 0
    # a host with access (its helper thread) fills for one without
    with daxfs.Region(region, backing=backing) as server:
        with daxfs.Region(region, fill_timeout_ms=10000) as client:
            assert client.read_file("/a") == files["a"]
        assert server.cache_info()["served"] > 0


def test_kill_mid_fill(split_fs):
    files = {"a": _content(7, 64 * KiB)}
    region, backing, src = split_fs(files, lease_ms=500)
    fl = _file_list(src, files)
    # the victim's backing reads take 60 s: it is killed inside one
    victim = _spawn(region, backing, "read", 1, 1, fl,
                    {"DAXFS_TEST_FILL_DELAY_MS": "60000"})
    deadline = time.time() + 20
    while time.time() < deadline:
        with daxfs.Region(region, join=False) as r:
            if r.cache_info()["pending"]:
                break
        time.sleep(0.05)
    victim.kill()
    victim.wait()
    t0 = time.time()
    with daxfs.Region(region, backing=backing, fill_timeout_ms=20000) as r:
        assert r.read_file("/a") == files["a"]
        ci = r.cache_info()
    assert time.time() - t0 < 15
    assert ci["pending"] == 0 and ci["takeovers"] >= 1


def test_crash_at_fill(split_fs, tmp_path):
    """Crash build: a host dies at pcache.fill (slot claimed PENDING, tag
    written, backing not read yet) on its first and its fifth fill; the
    next reader takes the slot over and reads the right bytes."""
    res = build.make("-s", "-C", cl.REPO, "crash", capture_output=True,
                     text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    files = {"a": _content(17, 64 * KiB)}
    for nth in (1, 5):
        region, backing, src = split_fs(files, lease_ms=300)	# cache cold
        fl = _file_list(src, files)
        log = str(tmp_path / ("points%d" % nth))
        victim = _spawn(region, backing, "read", nth, 50, fl,
                        {"DAXFS_LIB": cl.CRASH_LIB, "DAXFS_CRASH_LOG": log,
                         "DAXFS_CRASH_AT": "pcache.fill:%d" % nth})
        victim.communicate(timeout=120)
        assert victim.returncode == -9
        with open(log) as f:
            assert f.read().split() == ["pcache.fill", str(nth)]
        time.sleep(0.4)
        with daxfs.Region(region, backing=backing, fill_timeout_ms=20000) as r:
            assert r.read_file("/a") == files["a"]
            assert r.cache_info()["pending"] == 0


def test_kill_while_pinned(split_fs):
    files = {"a": _content(8, 256 * KiB), "b": _content(9, 4 * MiB)}
    region, backing, src = split_fs(files, cache=256 * KiB, lease_ms=500)
    fl = _file_list(src, files)
    victim = _spawn(region, backing, "pin", 1, 0, fl)
    assert victim.stdout.readline().strip() == "PINNED"
    with daxfs.Region(region, join=False) as r:
        assert r.cache_info()["pins"] == 1
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    time.sleep(1.0)
    # pressure from live hosts: the dead host's pin is released exactly
    # (by hosts that timed its silent heartbeat with their own clock)
    procs = [_spawn(region, backing, "read", s, 200, fl, {"DAXFS_TEST_WATCH": "1"})
             for s in range(3)]
    res = [_finish(p) for p in procs]
    assert all(x["bad"] == 0 for x in res)
    with daxfs.Region(region, backing=backing) as r:
        ci = r.cache_info()
    assert ci["pins"] == 0 and ci["pending"] == 0 and ci["evictions"] > 0


def test_info_shows_cache(split_fs):
    region, backing, _ = split_fs({"a": _content(4, 50000)})
    out = subprocess.run([env.tool("daxfs"), "-r", region, "-b", backing[0],
                          "-b", backing[1], "cat", "/a"], capture_output=True)
    assert out.returncode == 0 and out.stdout == _content(4, 50000)
    out = subprocess.run([env.tool("daxfs"), "-r", region, "info"],
                         capture_output=True, text=True)
    assert "Page cache:" in out.stdout and "sweep hand" in out.stdout
    out = subprocess.run([env.tool("daxfs"), "-r", region, "info", "--json"],
                         capture_output=True, text=True)
    js = json.loads(out.stdout)
    assert js["cache"]["valid"] == 13 and js["cache"]["pending"] == 0


def test_fsck_releases_dead_hosts_pin(split_fs):
    # a host killed while pinning leaves a pin that only it could drop:
    # fsck -n reports it (exit 4, region untouched), -y releases it
    files = {"a": _content(11, 64 * KiB)}
    region, backing, src = split_fs(files, lease_ms=300)
    victim = _spawn(region, backing, "pin", 1, 0, _file_list(src, files))
    assert victim.stdout.readline().strip() == "PINNED"
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    time.sleep(0.8)                        # its lease expires
    fsck = env.tool("fsck.daxfs")
    with open(region, "rb") as f:
        before = hashlib.sha256(f.read()).digest()
    out = subprocess.run([fsck, "-n", region], capture_output=True, text=True)
    assert out.returncode == 4, out.stdout + out.stderr
    pins = re.search(r"page cache: \d+ stale claim\(s\), (\d+) stale pin",
                     out.stdout)
    assert pins and int(pins.group(1)) >= 1, out.stdout
    with open(region, "rb") as f:
        assert hashlib.sha256(f.read()).digest() == before
    out = subprocess.run([fsck, "-y", region], capture_output=True, text=True)
    assert out.returncode == 1, out.stdout + out.stderr
    out = subprocess.run([fsck, "-n", region], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    with daxfs.Region(region, backing=backing) as r:
        assert r.read_file("/a") == files["a"]
        assert r.cache_info()["pins"] == 0


# the page cache header: backing descriptors from offset 120, 64 bytes
# each (size, id[16], hdr_csum + reserved, name[32]); checksum at 1148
DESC_AT, DESC_SIZE, PC_CSUM_AT = 120, 64, 1148


def _pc_header_csum_fixed(im):
    """The page cache header's checksum recomputed (CRC32C, as fsck's
    checksum repair leaves it): the stray store then only shows against
    the backing file."""
    from helpers.superblock import crc32c

    off = im.regions[6][0]
    im.put32(off + PC_CSUM_AT, crc32c(bytes(im.b[off:off + PC_CSUM_AT])))


def _hit_descriptor(region, index, words):
    """Stray stores into descriptor words (0 size, 1-2 id, 3 header
    checksum) of backing file index, under a header checksum that matches
    (as fsck's checksum repair leaves it)."""
    from test_fsck import Image

    im = Image(region)
    for word in words:
        at = im.regions[6][0] + DESC_AT + DESC_SIZE * index + 8 * word
        im.put64(at, im.u64(at) ^ (0x5a << (8 * word)))
    _pc_header_csum_fixed(im)
    im.save()


@pytest.mark.parametrize("words", [[0], [1], [2], [3], [0, 1], [2, 3],
                                   [0, 2, 3]])
def test_fsck_backing_descriptor_repaired(split_fs, words):
    """Stray stores in descriptor words of backing file 1: the mount
    refuses the right file; fsck --backing names each word (-n changes
    nothing), -y puts them back, and the data reads again.  One word, or
    any number with half the id intact, identifies the file."""
    from test_fsck import fsck, sha

    files = {"a": _content(21, 300 * KiB), "b": _content(22, 200 * KiB)}
    region, backing, src = split_fs(files)
    region2, backing2, _ = split_fs({"a": _content(23, 100 * KiB)})
    _hit_descriptor(region, 1, words)
    with pytest.raises(OSError):
        daxfs.Region(region, backing=backing)
    before = sha(region)
    rc, out = fsck(region, "-n", "--backing", backing[0], "--backing",
                   backing[1])
    assert rc == 4 and out.count("backing file descriptor") == len(words), out
    assert sha(region) == before
    # somebody else's file is refused, and nothing changes
    rc, out = fsck(region, "-y", "--backing", backing2[1])
    assert rc == 8 and "not one of this filesystem's backing files" in out, out
    assert sha(region) == before
    rc, out = fsck(region, "-y", "--backing", backing[1])
    assert rc == 1 and "FIXED" in out, out
    rc, out = fsck(region, "-n", "--backing", backing[0], "--backing",
                   backing[1])
    assert rc == 0, out
    with daxfs.Region(region, backing=backing) as r:
        for name, data in files.items():
            assert r.read_file("/" + name) == data


def test_fsck_backing_with_bad_header_checksum(split_fs):
    """A descriptor word and a reserved word of the header hit, its
    checksum not repaired: fsck -y --backing puts the descriptor's word
    back, then the header's own repair the rest and the checksum."""
    from test_fsck import Image, fsck

    files = {"a": _content(24, 64 * KiB)}
    region, backing, _ = split_fs(files)
    im = Image(region)
    im.put64(im.regions[6][0] + DESC_AT, 12345)     # backing 0's size
    im.put64(im.regions[6][0] + 72, 777)            # reserved[0]
    im.save()
    rc, out = fsck(region, "-y", *sum((["--backing", b] for b in backing), []))
    assert rc == 1 and "size differs" in out and "reserved" in out, out
    rc, out = fsck(region, "-n")
    assert rc == 0, out
    with daxfs.Region(region, backing=backing) as r:
        assert r.read_file("/a") == files["a"]


def test_fsck_backing_needs_split_mode(tmp_path, split_fs):
    from test_fsck import fsck

    _, backing, _ = split_fs({"a": b"x" * 5000})
    plain = env.region_path("plain")
    try:
        subprocess.run([env.tool("mkfs.daxfs"), "-q", "-s", str(16 * MiB),
                        plain], check=True)
        rc, out = fsck(plain, "-n", "--backing", backing[0])
        assert rc == 8 and "not a split-mode filesystem" in out, out
        rc, out = fsck(plain, "-n", "--backing", str(tmp_path / "none"))
        assert rc == 8 and "cannot open backing file" in out, out
    finally:
        env.remove(plain)


def test_fsck_backing_whole_id_hit_refused(split_fs):
    """Both halves of the id hit: the file cannot be told from somebody
    else's; fsck says so, exit 8, and changes nothing."""
    from test_fsck import fsck, sha

    region, backing, _ = split_fs({"a": _content(25, 64 * KiB)})
    _hit_descriptor(region, 0, [1, 2])
    before = sha(region)
    rc, out = fsck(region, "-y", "--backing", backing[0])
    assert rc == 8 and "not one of this filesystem's backing files" in out, out
    assert sha(region) == before
