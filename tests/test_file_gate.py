"""The write gate of a regular file (docs/files.md "Append versus
truncate", format version 4): its parent word is 0 or the claim word of the
host that is shrinking it.  A gate that a gone host left closed must not
stop writers, and fsck.daxfs reports and opens it offline."""

import os
import subprocess

from helpers import env

import daxfs
from test_convert import Raw, RDEV_OFF, PARENT_OFF, DATA

FSCK = os.path.join(env.BIN, "fsck.daxfs")


def claim(slot, gen):
    return gen << 16 | (slot + 1)


def image_with_gate(path, gate, rdev=0):
    """A region holding /f, its gate word and rdev set by hand."""
    daxfs.mkfs(path, 16 << 20)
    with daxfs.Region(path) as r:
        r.write_file("/f", DATA)
        ino = r.stat("/f").st_ino
    im = Raw(path)
    rec = im.inode(ino)
    im.put(rec + PARENT_OFF, gate)
    im.put(rec + RDEV_OFF, rdev)
    im.save()
    return rec


def fsck(*args):
    r = subprocess.run([FSCK] + list(args), capture_output=True, text=True,
                       timeout=60)
    return r.returncode, r.stdout + r.stderr


def test_fsck_opens_gate_of_gone_host(region_path):
    rec = image_with_gate(region_path, claim(2, 9), rdev=5)
    rc, out = fsck("-n", region_path)
    assert rc == 4, out
    assert "write gate left closed" in out, out
    # rdev is the gate's sequence since format 7: any value is valid
    assert "device number" not in out, out
    rc, out = fsck("-y", region_path)
    assert rc == 1, out
    im = Raw(region_path)
    assert im.words(rec + PARENT_OFF, 1) == [0]
    assert im.words(rec + RDEV_OFF, 1) == [5]
    rc, out = fsck("-n", region_path)
    assert rc == 0 and "clean" in out, out


def test_writers_pass_gate_of_gone_host(region_path):
    """A truncater's slot that is free (its host gone and recovered, or
    garbage): writers and truncates clear the word and go on."""
    for gate in (claim(5, 3), claim(60000, 1), 0xdeadbeef00000000):
        image_with_gate(region_path, gate)
        with daxfs.Region(region_path) as r:
            f = r.open("/f")
            f.append(b"more")
            f.pwrite(b"xy", 0)
            f.close()
            r.truncate("/f", 10)
            assert r.read_file("/f") == b"xy" + DATA[2:10]
        rc, out = fsck("-n", region_path)
        assert rc == 0 and "clean" in out, out
        env.remove(region_path)
