"""vm/media_base_kguest.py - guest side of tests/vm/test_kernel_media.py's
test_kernel_base_image_bad_after_mount (docs/kernel.md "Media errors": the base image's
inode table and directory entries going bad after the mount).  The scenarios run through
harden_kguest.py (`hd:` steps), which imports them.

  base-src   (before mkfs) a source tree for mkfs --source under /tmp/base/src: /files
             and /more (BASE_FILES files each: pages of base inode records of files
             only; mkfs numbers breadth first) and /names (BASE_NAMES files: a few pages
             of directory entries), /link, a symlink, and /big, BIG_PAGES pages of data
  base-bad   (fsdax /dev/pmem0, mounted rw) finds in the device's base image a page of
             the inode table that holds records of files only, a page of /names'
             directory entries, the page of /link's target and /big's second data page,
             and lists them in the pmem driver's list.  Then exactly
             what loads them fails with EIO: stat and open of a file whose record is on
             the page, readdir of /names, a lookup in /names that scans past its listed
             entries, a create there, readlink of /link, a read of /big's second page and
             a write of part of it (the write keeps the page's other base bytes: it
             would load them); the rest works (the
             other files read back, readdir of / and /files, a lookup that finds its name
             before the listed entries, a new file at the root, a write into /big's first
             page, a write of /big's whole second page, which loads nothing of it), and
             the kernel said that fsck is needed
  base-fsck  (unmounted) fsck.daxfs -n reads the device's list, names the base image
             (four bad ranges) and exits 4
"""
import errno
import os
import struct
from pathlib import Path

import daxfs_kguest as kg
from daxfs_kguest import check, log, result
from media_fixed_kguest import PAGE, _device, _region, _list_bad, _dmesg, fsck_names

RGN_BASE = 5
SRC = Path("/tmp/base/src")
BASE_FILES, BASE_NAMES = 60, 40     # <= 64 each: a writable host scans them unimported
DIRS = {"files": BASE_FILES, "more": BASE_FILES, "names": BASE_NAMES}
INODE, DIRENT = 64, 272             # struct daxfs_base_inode, struct daxfs_base_dirent
S_IFMT, S_IFDIR, S_IFLNK = 0o170000, 0o040000, 0o120000
LINK = "names/n000"
BIG_PAGES = 3


def _content(d, name):
    return b"base %s/%s\n" % (d.encode(), name.encode())


def scen_base_src(args):
    for d, n in DIRS.items():
        (SRC / d).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (SRC / d / ("n%03d" % i)).write_bytes(_content(d, "n%03d" % i))
    if not (SRC / "link").is_symlink():
        (SRC / "link").symlink_to(LINK)
    (SRC / "big").write_bytes(b"".join(_big_page(i) for i in range(BIG_PAGES)))


def _big_page(i):
    return (b"big page %d " % i).ljust(PAGE, b"b")


def _base(dev):
    """The base image as the device holds it: (device offset of the base region,
    inode table offset, inodes [(mode, data, count)], dirent offset, dirents
    [(ino, name)]), offsets from the base region."""
    base, _ = _region(dev, RGN_BASE)
    _, _, _, n_ino, ino_off, n_de, de_off = struct.unpack_from("<QIIQQQQ", dev, base)
    inodes = []
    for i in range(n_ino):
        mode, _, _, _, size, _, _, data, count, _ = struct.unpack_from(
            "<IIIIQqQQQQ", dev, base + ino_off + i * INODE)
        inodes.append((mode, data, count if mode & S_IFMT == S_IFDIR else size))
    dirents = []
    for i in range(n_de):
        ino, nlen = struct.unpack_from("<QH", dev, base + de_off + i * DIRENT)
        at = base + de_off + i * DIRENT + 16
        dirents.append((ino, dev[at:at + nlen].decode()))
    return base, ino_off, inodes, de_off, dirents


def _on(page, off, length):
    """Does [off, off + length) touch the page at device offset page?"""
    return off < page + PAGE and off + length > page


def _big_data_page(base, inodes, dirents):
    """The device offset of /big's second data page (base file data is page aligned)."""
    root_first, root_count = inodes[0][1], inodes[0][2]
    ino = next(e[0] for e in dirents[root_first:root_first + root_count] if e[1] == "big")
    mode, data, size = inodes[ino - 1]
    check(size == BIG_PAGES * PAGE and (base + data) % PAGE == 0,
          f"/big in the base: size {size}, data at {base + data}")
    return base + data + PAGE


def _big_writes():
    """/big's second page is listed bad: what would load it fails with EIO, what does
    not works."""
    fd = os.open(kg.p("big"), os.O_RDWR)
    try:
        e = kg.errno_of(lambda: os.pread(fd, PAGE, PAGE))
        check(e == errno.EIO, f"read of /big's listed page: errno {e}, not EIO")
        # a part of the page: the write would copy the page's other base bytes
        e = kg.errno_of(lambda: os.pwrite(fd, b"X", PAGE + 100))
        check(e == errno.EIO, f"a one-byte write into /big's listed page: errno {e}, "
              "not EIO (it copied the page's base bytes)")
        e = kg.errno_of(lambda: os.pread(fd, PAGE, PAGE))
        check(e == errno.EIO, f"read of /big's listed page after the refused write: "
              f"errno {e}, not EIO")
        os.pwrite(fd, b"Y", 100)
        check(os.pread(fd, PAGE, 0) == _big_page(0)[:100] + b"Y" + _big_page(0)[101:],
              "a write into /big's first page")
        os.pwrite(fd, _big_page(7), PAGE)       # the whole page: nothing of it loaded
        check(os.pread(fd, PAGE, PAGE) == _big_page(7), "/big's rewritten second page")
        check(os.pread(fd, PAGE, 2 * PAGE) == _big_page(2), "/big's third page")
    finally:
        os.close(fd)


def scen_base_bad(args):
    dev = _device()
    base, ino_off, inodes, de_off, dirents = _base(dev)
    de_end = de_off + len(dirents) * DIRENT

    def rec(ino):
        return base + ino_off + (ino - 1) * INODE

    def dent(i):
        return base + de_off + i * DIRENT
    # every base path: its directory's dirent range and its own index there
    where = {}
    for d, n in DIRS.items():
        ino = next(e[0] for e in dirents[inodes[0][1]:inodes[0][1] + inodes[0][2]]
                   if e[1] == d)
        first, count = inodes[ino - 1][1], inodes[ino - 1][2]
        check(count == n, f"/{d}: {count} entries, not {n}")
        for i in range(first, first + count):
            where[f"{d}/{dirents[i][1]}"] = (dirents[i][0], first, i)
    dirs = [ino for ino in range(1, len(inodes) + 1) if inodes[ino - 1][0] & S_IFMT == S_IFDIR]
    # a page of the inode table with records of files only (no directory's, no dirents)
    ino_pages = [p for p in range(base + ino_off - (base + ino_off) % PAGE,
                                  rec(len(inodes)), PAGE)
                 if p >= base + ino_off and p + PAGE <= base + de_off and
                 not any(_on(p, rec(i), INODE) for i in dirs)]
    check(ino_pages, f"no page of the inode table holds files only ({len(inodes)} inodes)")
    ino_page = ino_pages[-1]
    # a page of /names' entries, none of any other directory's, not its first
    nfirst = where["names/n000"][1]
    de_pages = [p for p in range(dent(nfirst) - dent(nfirst) % PAGE + PAGE,
                                 dent(nfirst + BASE_NAMES), PAGE)
                if p + PAGE <= dent(nfirst + BASE_NAMES) and p + PAGE <= base + de_end]
    check(de_pages, "no page of /names' entries after its first")
    de_page = de_pages[-1]      # the names before it are found before it
    _list_bad(ino_page, "a page of the base inode table")
    _list_bad(de_page, "a page of /names' base directory entries")
    links = [i for i in inodes if i[0] & S_IFMT == S_IFLNK]
    check(len(links) == 1, f"symlinks in the base: {links}")
    ln_page = (base + links[0][1]) // PAGE * PAGE
    check(ln_page >= base + de_end and ln_page + PAGE > base + links[0][1] + links[0][2],
          "/link's target shares a page with directory entries, or crosses one")
    _list_bad(ln_page, "the page of /link's target")
    check(os.path.islink(kg.p("link")), "stat /link")
    e = kg.errno_of(lambda: os.readlink(kg.p("link")))
    check(e == errno.EIO, f"readlink /link: errno {e}, not EIO")

    eio, ok = {}, {}
    for path, (ino, first, idx) in sorted(where.items()):
        lost = _on(ino_page, rec(ino), INODE) or any(
            _on(de_page, dent(i), DIRENT) for i in range(first, idx + 1))
        e = kg.errno_of(lambda: os.stat(kg.p(path)))
        if lost:
            check(e == errno.EIO, f"stat /{path} (its record or an entry before it on "
                  f"a listed page): errno {e}, not EIO")
            check(kg.errno_of(lambda: kg.read_file(kg.p(path))) == errno.EIO,
                  f"read /{path}")
            eio[path.split("/")[0]] = eio.get(path.split("/")[0], 0) + 1
            continue
        check(not e, f"stat /{path}: errno {e} (nothing of it is listed)")
        d, name = path.split("/")
        check(kg.read_file(kg.p(path)) == _content(d, name), f"/{path} reads back wrong")
        ok[d] = ok.get(d, 0) + 1
    check(sum(eio.values()) > eio.get("names", 0) and eio.get("names", 0) >= 1,
          f"files failing with EIO: {eio}: a listed page was read")
    check(ok.get("names", 0) >= 1, "no name of /names before its listed entries was found")
    e = kg.errno_of(lambda: os.listdir(kg.p("names")))
    check(e == errno.EIO, f"readdir /names: errno {e}, not EIO")
    for d in ("files", "more"):
        check(sorted(os.listdir(kg.p(d))) == sorted(
            p.split("/")[1] for p in where if p.startswith(d + "/")), f"readdir /{d}")
    check(sorted(os.listdir(kg.MNT)) == sorted([*DIRS, "link", "big"]), "readdir /")
    big_page = _big_data_page(base, inodes, dirents)
    _list_bad(big_page, "/big's second data page")
    _big_writes()
    e = kg.errno_of(lambda: kg.write_file(kg.p("names", "new"), b"x"))
    check(e == errno.EIO, f"a create in /names (imports its entries): errno {e}, not EIO")
    kg.write_file(kg.p("new"), b"new at the root\n")
    check(kg.read_file(kg.p("new")) == b"new at the root\n", "a new file at the root")
    check("lies on a bad block" in _dmesg(), "the kernel did not say that fsck is needed")
    log(f"listed: inode table page {ino_page}, /names entries page {de_page}; EIO: {eio}, "
        f"fine: {ok}")
    result(base_bad="ok", base_eio=sum(eio.values()), base_ok=sum(ok.values()),
           base_names_eio=eio["names"], base_names_ok=ok["names"])


def scen_base_fsck(args):
    fsck_names("the base image", 4)
    result(base_fsck="ok")
