"""daxfs.ko and media errors that the mount learns of late or from its administrator
(docs/kernel.md "Media errors"; issue 16 item 5 leftovers).

* Metadata that goes bad after the mount: a page of inode records is listed in the pmem
  driver's list while mounted (the driver does so for a page that a scrub or a machine
  check found bad). What depends on it fails with EIO, the rest works, the kernel says
  that fsck is needed, nothing oopses; then fsck.daxfs reads the device's list, names
  the inode without loading the page, and -y repairs.
* The free lists and the fixed metadata going bad after the mount: a page on the page
  stack is listed bad, then the host table's first page.  A file written after the first
  reads back (the listed page is never handed out again: the stack stops before it), and
  after the second every operation fails with EIO (the host stops, it cannot even renew
  its lease); fsck.daxfs names the host table.
* Metadata that the core loads directly going bad after the mount: the page of this
  host's open set (a file held open), the lock table's bucket page (a POSIX lock held) or,
  in split mode, the page of the shared page cache's slot table (a base file read through
  the cache) is listed bad.  The next operation that loads it (an open, a lock, a cached
  read) and then every operation fail with EIO, no oops or WARN, the kernel names the
  structure, and the mount unmounts; fsck finds the host that stopped without leaving.
* The base image going bad after the mount: a page of the base inode table (records of
  files only) and a page of a base directory's entries are listed bad.  A stat, open or
  lookup that would load them fails with EIO, readdir of that directory too; the other
  files, directories and a new file work, the kernel says that fsck is needed, the mount
  unmounts, and fsck.daxfs names the base image.
* phys= mounts get their list from badblocks=FILE (the format of
  /sys/block/pmemN/badblocks, sectors from the start of phys=): the mount is read-only,
  a read of the listed page fails with EIO, the rest reads back, a mapping of it gets
  SIGBUS.

QEMU has no real poison: these test the lists and the paths that consult them.
Skip/fail rules as in test_kernel_cluster.py.
"""
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cluster import Cluster, Guest  # noqa: E402
from test_kernel_cluster import built, mkfs  # noqa: E402,F401
from test_kernel_hardening import run_guest  # noqa: E402
import harden_kguest as hk  # noqa: E402

import daxfs  # noqa: E402

SIZE = 64 << 20


def test_kernel_metadata_bad_after_mount(request, built):
    # fsck runs unmounted; the mount after it shows the repaired device mounts again
    ra = run_guest(request, ["hd:meta-write", "hd:meta-inject", "hd:meta-read", "umount",
                             "hd:meta-fsck", "mount:pmem"], pmem=True)
    assert ra.get("meta_read") == "ok", ra
    assert int(ra["meta_eio"]) >= 1 and int(ra["meta_ok"]) >= 1, ra
    assert ra.get("meta_fsck") == "ok", ra


def test_kernel_phys_badblocks_list(request, built):
    with Cluster(label=request.node.name, size=SIZE, timeout=500) as c:
        mkfs(c.shm)
        with daxfs.Region(str(c.shm)) as r:     # a host process writes the files
            for name in ("bad", "good"):
                r.write_file(f"/media-{name}", b"".join(hk.media_page(name, i)
                                                        for i in range(hk.MEDIA_PAGES)))
        data = Path(c.shm).read_bytes()
        off = data.find(hk.media_page("bad", hk.MEDIA_BAD_PAGE))
        assert off >= 0 and off % hk.PAGE == 0
        lst = REPO / "build" / "vm" / f"bb-{os.getpid()}-{request.node.name}.list"
        lst.parent.mkdir(parents=True, exist_ok=True)
        lst.write_text(f"# sectors from the start of phys=\n{off // 512} {hk.PAGE // 512}\n")
        try:
            rel = lst.relative_to(REPO)
            res = c.run([Guest("A", "daxfs-k", [
                "load", f"mount:phys:badblocks=@REPO/{rel}", "mounts", "hd:media-read",
                "umount", "badmount:phys:badblocks=@REPO/build/vm/no-such-list", "rmmod",
                "clean"])])
        finally:
            lst.unlink(missing_ok=True)
        ra = res.guests["A"].results
        print(f"\nguest A: {ra}")
        assert res.ok, res.summary()
        assert ra.get("media_read") == "ok", ra
        assert ra["mounts"].startswith("ro"), ra
        assert "cannot_read_it" in ra.get("badmount_phys", ""), ra


def test_kernel_free_list_and_host_table_bad_after_mount(request, built):
    # the listed host table page refuses the mount after fsck, with a message
    ra = run_guest(request, ["hd:fixed-free", "hd:fixed-host", "umount", "hd:fixed-fsck",
                             "badmount:pmem"], mkfs_args=("--lease-ms", "2000"), pmem=True,
                   umount=False, left_dead=True)
    assert ra.get("fixed_free") == "ok", ra
    assert ra.get("fixed_host") == "ok", ra
    assert ra.get("fixed_fsck") == "ok", ra
    assert "host_table" in ra.get("badmount_pmem", ""), ra


# split mode: a base image from the guest's /tmp, its data in a backing file there
SPLIT = {"pre": ["hd:split-src"],
         "mkfs_args": ["--source", "/tmp/split/src", "--backing", "/tmp/split/bk0",
                       "--cache-size", "1M"],
         "mount_opts": ["backing=/host/tmp/split/bk0"]}


@pytest.mark.parametrize("what", ["open", "lock", "pcache"])
def test_kernel_open_set_lock_table_and_cache_bad_after_mount(request, built, what):
    kw = SPLIT if what == "pcache" else {"mkfs_args": []}
    ra = run_guest(request, [f"hd:direct-{what}"], pmem=True, left_dead=True,
                   **{**kw, "mkfs_args": ["--lease-ms", "2000", *kw["mkfs_args"]]})
    assert ra.get(f"direct_{what}") == "ok", ra


def test_kernel_base_image_bad_after_mount(request, built):
    # the host goes on (the base is read-only: nothing another host needs is lost), so the
    # guest's fsck runs after an ordinary unmount; the listed pages in BASE then refuse
    # a mount, so the run ends unmounted
    ra = run_guest(request, ["hd:base-bad", "umount", "hd:base-fsck"], pmem=True,
                   umount=False, pre=["hd:base-src"],
                   mkfs_args=["--source", "/tmp/base/src"])
    assert ra.get("base_bad") == "ok", ra
    assert ra.get("base_fsck") == "ok", ra
