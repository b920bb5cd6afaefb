"""fsck(8) runs fsck.daxfs with its usual flags and gets its exit codes.

Each case goes through util-linux's fsck (`fsck -t daxfs FLAGS TARGET`,
which finds fsck.daxfs on PATH) as a boot or an operator would: -a, -p,
-y repair (1), -n only reports (4), a clean image gives 0 with every flag,
-f (systemd-fsck's forced check, passed along with -a) never repairs over
a host that holds a fresh lease, a missing target is 8, a bad option 16,
and a signal while checking 32.
"""

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from test_fsck import FSCK, Image

import daxfs

BIN = Path(FSCK).parent
FLAGS = ["-a", "-p", "-n", "-y", "-f", "-a -f", "-p -f", "-y -f"]


def fsck8(path, flags):
    """`fsck -t daxfs FLAGS PATH` through util-linux's fsck(8)."""
    assert shutil.which("fsck"), "util-linux fsck missing"
    env = dict(os.environ, PATH="%s:%s" % (BIN, os.environ["PATH"]))
    res = subprocess.run(["fsck", "-T", "-t", "daxfs", *flags.split(), path],
                         capture_output=True, text=True, env=env, timeout=120)
    return res.returncode, res.stdout + res.stderr


def make_orphan(path):
    """A filesystem whose file /d/file lost its name (an orphan inode)."""
    daxfs.mkfs(path, 16 << 20, lease_ms=1000)
    with daxfs.Region(path) as r:
        r.mkdir("/d")
        r.write_file("/d/file", b"orphan data")
        d = r.stat("/d").st_ino
    im = Image(path)
    _off, link, _is_slot, _ino = im.dirents(d)["file"]
    im.put64(link, 0)
    im.set_field(d, "aux", im.field(d, "aux") - 1)
    im.save()


@pytest.mark.parametrize("flags", FLAGS)
def test_clean_image_is_0_with_every_flag(region_path, flags):
    daxfs.mkfs(region_path, 16 << 20)
    with daxfs.Region(region_path) as r:
        r.write_file("/f", b"data")
    rc, out = fsck8(region_path, flags)
    assert rc == 0, out


@pytest.mark.parametrize("flags", ["-a", "-p", "-y", "-y -f", "-a -f"])
def test_repair_flags_correct_errors(region_path, flags):
    make_orphan(region_path)
    rc, out = fsck8(region_path, "-n")
    assert rc == 4, out
    rc, out = fsck8(region_path, flags)
    assert rc == 1, out
    rc, out = fsck8(region_path, "-n")
    assert rc == 0, out


def test_forced_boot_check_never_repairs_over_a_live_host(region_path):
    """systemd-fsck with fsck.mode=force runs `fsck -a -f`: with another
    host mounted, errors are reported (4) and left alone, as with -a."""
    make_orphan(region_path)
    host = daxfs.Region(region_path, heartbeat=False)
    stop = threading.Event()

    def renew():
        while not stop.wait(0.05):
            host.renew()
    t = threading.Thread(target=renew)
    t.start()
    try:
        for flags in ("-a -f", "-p -f", "-a"):
            rc, out = fsck8(region_path, flags)
            assert rc == 4 and "NOT REPAIRING" in out, (flags, out)
    finally:
        stop.set()
        t.join()
        host.close()
    rc, out = fsck8(region_path, "-n")
    assert rc == 4, "a forced boot check repaired under a live host: " + out


def test_operational_and_usage_errors(tmp_path):
    assert fsck8(str(tmp_path / "missing"), "-a")[0] == 8
    (tmp_path / "img").write_bytes(b"\0" * (1 << 20))
    assert fsck8(str(tmp_path / "img"), "-p")[0] == 8	# not a DaxFS
    assert fsck8(str(tmp_path / "img"), "-a -Z")[0] == 16
    assert fsck8(str(tmp_path / "img"), "-n -y")[0] == 16


def test_signal_while_checking_is_32(tmp_path):
    """SIGINT while fsck.daxfs waits to open its target (a FIFO nobody
    writes: its open blocks, after the signal handlers are in place)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    p = subprocess.Popen([FSCK, "-n", str(fifo)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while Path("/proc/%d/syscall" % p.pid).read_text().split()[0] != "257":
            assert p.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)	# still starting: not yet blocked in openat
        p.send_signal(2)
        assert p.wait(timeout=60) == 32
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
