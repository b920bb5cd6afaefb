"""Region files on a filling filesystem (issue "Trust under concurrency",
defect 8).  Each test mounts a small tmpfs inside a private mount
namespace (`unshare -m`, needs root), so that nothing fills the real
/dev/shm.  mkfs must allocate the whole region or refuse and leave
nothing behind; a host opening a region file with holes must allocate
them or refuse, never die of SIGBUS part way through an operation.
"""

import os
import subprocess

import pytest

from test_tools import DAXFS, MKFS

MIB = 1 << 20


def in_tmpfs(tmp_path, size, script):
    """Runs the bash script with $T a fresh tmpfs of size bytes (private
    mount namespace).  Returns the CompletedProcess."""
    mnt = tmp_path / "mnt"
    mnt.mkdir(exist_ok=True)
    full = (f"set -u; mount -t tmpfs -o size={size} daxfs-test {mnt} || exit 99\n"
            f"T={mnt}; MKFS={MKFS}; DAXFS={DAXFS}\n" + script)
    return subprocess.run(["unshare", "-m", "--propagation", "private",
                           "bash", "-c", full],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(autouse=True)
def need_unshare(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root for unshare -m and mount")
    res = in_tmpfs(tmp_path, MIB, "true")
    if res.returncode != 0:
        pytest.skip("cannot mount a tmpfs in a private namespace: "
                    + res.stderr)


def test_mkfs_larger_than_its_filesystem_refuses_and_leaves_nothing(tmp_path):
    res = in_tmpfs(tmp_path, 100 * MIB, """
$MKFS -q -s 20G $T/r.img; echo "rc=$?"
ls -A $T; echo "used=$(df --output=used -B1 $T | tail -1)"
""")
    out = res.stdout
    assert "rc=8" in out, (out, res.stderr)   # mkfs's error; not 135: SIGBUS
    assert "r.img" not in out.split("rc=8")[1]        # nothing left behind
    used = int(out.split("used=")[1])
    assert used < MIB
    assert "room" in res.stderr and "r.img" in res.stderr, res.stderr


def test_mkfs_force_over_a_file_keeps_its_size_on_failure(tmp_path):
    res = in_tmpfs(tmp_path, 100 * MIB, """
head -c 12345 /dev/urandom > $T/r.img; sum1=$(md5sum < $T/r.img)
$MKFS -q -f -s 20G $T/r.img; echo "rc=$?"
[ "$(md5sum < $T/r.img)" = "$sum1" ] && echo same
""")
    assert "rc=8" in res.stdout, (res.stdout, res.stderr)
    assert "same" in res.stdout


def test_mkfs_allocates_the_whole_region(tmp_path):
    res = in_tmpfs(tmp_path, 100 * MIB, """
$MKFS -q -s 64M $T/r.img; echo "rc=$?"
echo "blocks=$(( $(stat -c %b $T/r.img) * 512 ))"
""")
    assert "rc=0" in res.stdout, res.stderr
    assert int(res.stdout.split("blocks=")[1]) >= 64 * MIB


def test_host_on_a_sparse_region_without_room_refuses(tmp_path):
    # a 64 MiB region copied sparse into a 40 MiB tmpfs: a host writing
    # into its holes would fill the tmpfs and die of SIGBUS part way
    src = tmp_path / "src.img"
    subprocess.run([str(MKFS), "-q", "-s", "64M", str(src)], check=True)
    big = tmp_path / "big"
    big.write_bytes(os.urandom(45 * MIB))
    res = in_tmpfs(tmp_path, 40 * MIB, f"""
cp --sparse=always {src} $T/r.img
$DAXFS -r $T/r.img put {big} /big; echo "rc=$?"
(ulimit -v 8000000; $DAXFS -r $T/r.img put {big} /big; echo "limited=$?")
""")
    assert "rc=1" in res.stdout, (res.stdout, res.stderr)
    assert "room" in res.stderr, res.stderr
    # an address-space limit the region fits under is not blamed
    assert "limited=1" in res.stdout, (res.stdout, res.stderr)
    assert "ulimit -v" not in res.stderr, res.stderr


def test_host_allocates_the_holes_of_a_region_that_fits(tmp_path):
    src = tmp_path / "src.img"
    subprocess.run([str(MKFS), "-q", "-s", "64M", str(src)], check=True)
    res = in_tmpfs(tmp_path, 100 * MIB, f"""
cp --sparse=always {src} $T/r.img
echo "before=$(( $(stat -c %b $T/r.img) * 512 ))"
echo hi | $DAXFS -r $T/r.img write /f; echo "rc=$?"
echo "after=$(( $(stat -c %b $T/r.img) * 512 ))"
""")
    assert "rc=0" in res.stdout, (res.stdout, res.stderr)
    assert int(res.stdout.split("before=")[1].split()[0]) < 64 * MIB
    assert int(res.stdout.split("after=")[1]) >= 64 * MIB
