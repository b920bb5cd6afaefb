#!/usr/bin/env python3
"""vm/vfs_kguest.py - guest side of tests/vm/test_kernel_vfs.py: O_TMPFILE, linkat of
it, RENAME_WHITEOUT, overlayfs on daxfs, atime and mtime after mapped writes, in
daxfs.ko (docs/kernel.md "O_TMPFILE and whiteouts", "Timestamps").

Runs inside a QEMU guest as `host python3 vm/vfs_kguest.py SCENARIO MNT ARGS...` through
vm/guest/daxfs-k.sh's `vf:` step.  Each scenario prints DAXFS-VM-RESULT lines: SCENARIO=ok,
or SCENARIO=fail at its first failed check (the guest goes on with the next step).

Scenarios:
  tmpfile   O_TMPFILE files in MNT/t: no name anywhere, nlink 0, I/O works; one is
            linked through /proc/self/fd (AT_SYMLINK_FOLLOW), one with linkat
            AT_EMPTY_PATH, one dropped at close; O_TMPFILE|O_EXCL cannot be linked
  whiteoutfull  RENAME_WHITEOUT on a full filesystem: all of it or nothing
  shortfull  a write larger than what is left stores what fits and returns its count
            (a short write), the next one ENOSPC; nothing written before is lost
  whiteout  renameat2(RENAME_WHITEOUT): the new name has the file, the old name is a
            character device 0/0; with a file already at the target too
  overlay   a root-file-system-like tar unpacked into MNT/ovl/lower; an overlay with its
            upper and work directories on daxfs; modify, create, delete, rename and
            chmod through the merged view; the merged view, the upper layer (copied-up
            files, whiteouts) and the untouched lower layer checked, again after a
            remount of the overlay; dmesg without "does not support tmpfile" or
            "RENAME_WHITEOUT".  overlay=needs-xattrs when overlayfs refuses the upper
            layer and daxfs has no xattrs (it takes daxfs, which revalidates dentries,
            for a remote filesystem and then insists on them)
  atime     relatime (the default mount), strictatime and noatime (remount): which
            reads and readdirs move atime; then the cost of atime stores: NREADS 4 KiB reads
            with each option (vm_result atime_cost_*)
  mmtime    stores through a shared mapping move mtime and ctime: the first store of a
            fresh mapping (write fault), a store after a read fault (pfn_mkwrite), and a
            store after msync on the same mapping
  shutdown  FS_IOC_SHUTDOWN (xfstests' godown): afterwards write, read, create and statfs
            fail with EIO, and a process reading a mapping made before gets SIGBUS; a second shutdown is no error, a bad flag EINVAL; then
            umount and mount again: what was written before is there, new writes work,
            and the slot the shutdown left was recovered (the host's fsck after the
            guest is clean)
  freeze    fsfreeze -f: reads go on; a write system call, a create and a store
            through a mapping made writable before the freeze all wait (nothing of
            theirs is in the file, the processes have not ended) until fsfreeze -u; a
            second freeze is refused (EBUSY); after the thaw all three land
  follow    [APPENDS CHUNK] a process appends while another follows the file by fstat
            and pread (`tail -f`): no zero byte is ever read, the appends are whole
  appendfault  [APPENDS CHUNK] O_APPEND writes and pwrites whose source pages (a
            shared memfd mapping) another thread keeps zapping (MADV_DONTNEED): the
            copy then faults after the kernel faulted the buffer in; every write is
            whole and contiguous, the file exactly the bytes written, no zero gap;
            then preadv into those pages reads the bytes whole; pwrites
            from pages not present, half readable (a short count) and not
            readable (EFAULT, the file unchanged)
  programs  the everyday script of every front end (tests/helpers/everyday.py:
            coreutils, tar, git, sqlite3, python3, fio) in MNT/programs and in a
            tmpfs directory of the guest: the same output and the same tree
  renameparent  ROLE (A or B, two guests; barriers in MNT/chs): A holds rp/a and rp/b
            open (directories) and rp/a/y a file; B moves a to b/y; A renames y from its
            descriptor of a to y in its descriptor of b, an exchange and a plain
            rename: the lookup of b/y finds a, one of the rename's two locked
            directories.  Each call must return (EINVAL or ESTALE) with nothing moved
            (a deadlock in vfs_rename before: docs/kernel.md "Stale directory dentries")
  reopen    a file unlinked while open is opened again through /proc/self/fd: a
            write through the new descriptor is read through the old, nlink 0
  chattr    ROLE (A or B, two guests; barriers are files in MNT/chs): A makes MNT/ch/f
            and MNT/ch/d; B opens f for writing and maps it shared and writable; A runs
            `chattr +i f` and `chattr +a d`; B sees both with lsattr, and its write
            through the descriptor opened before, a new open for writing, rm, mv, a
            store through its mapping (after a lease pass: SIGBUS) all fail (EPERM);
            in d it creates a file and cannot remove it; A `chattr -i f`, then B's
            write through the same descriptor works and A reads it (docs/attrs.md)
  stalewrite  ROLE [ROUNDS] (A or B, two guests; barriers in MNT/chs): a write checked
            on attributes another host changed since this host last looked
            (docs/kernel.md "Writes checked on cached attributes").  A's uid-1000
            process holds MNT/sw/f open for writing and MNT/sw/g for appending; each
            round B sets f's mode 04755 (every other round also security.capability)
            and truncates g and writes 10 bytes to it, then A, with no look at either
            first, writes f (the set-uid bit and the capability must go) and appends
            10 bytes to g (they must follow B's, at offset 10)
  creat     ROLE (A or B, two guests; barriers as chattr's, in MNT/chs): open(O_CREAT)
            through daxfs.ko's atomic_open.  A alone: O_EXCL makes a file (empty, mode
            with the umask, in a setgid directory its group) and answers EEXIST on a
            file, a directory and a dangling symlink (whose target stays absent);
            without O_EXCL it opens the file there (O_TRUNC empties it); a 256-byte
            name ENAMETOOLONG with nothing made, 255 bytes made; a plain open of a name
            no dentry holds (after drop_caches) opens it, of a missing one ENOENT; uid
            1000 in a directory it may not write: EEXIST for O_EXCL on a name there,
            EACCES on a missing one, O_CREAT|O_RDONLY opens the existing file.  Both:
            B caches the absence of names, A makes them, B's O_EXCL answers EEXIST and
            its O_CREAT opens A's file; B renames a directory A holds open, A creates
            in it through the descriptor and then finds the old name gone; then both
            race O_EXCL creates of NRACE names, each in its own random order: each
            name has exactly one winner, whose role is in the file
"""
import ctypes
import errno
import fcntl
import mmap
import os
import random
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tarfile
import time

AT_FDCWD = -100
AT_EMPTY_PATH = 0x1000
AT_SYMLINK_FOLLOW = 0x400
RENAME_EXCHANGE = 1 << 1
RENAME_WHITEOUT = 1 << 2
OLD_NS = 1_000_000_000 * 1_000_000	# 2001-09-09, before any "now"
# struct vfs_cap_data, revision 2, effective: cap_net_raw permitted
CAP_BLOB = struct.pack("<5I", 0x02000001, 1 << 13, 0, 0, 0)

libc = ctypes.CDLL(None, use_errno=True)


def result(**kv):
    print("DAXFS-VM-RESULT: " + " ".join(f"{k}={v}" for k, v in kv.items()), flush=True)


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def linkat(src, dst, flags, fd=AT_FDCWD):
    """linkat(2) itself: os.link(follow_symlinks=True) calls link(2), which
    does not follow /proc/self/fd/N (EXDEV: the link is on procfs)."""
    if libc.linkat(fd, os.fsencode(src), AT_FDCWD, os.fsencode(dst), flags):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), dst)


def link_proc_fd(fd, path):
    linkat(f"/proc/self/fd/{fd}", path, AT_SYMLINK_FOLLOW)


def renameat2(src, dst, flags):
    if libc.renameat2(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), flags):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), src)


def free_blocks(mnt, want, timeout=30):
    """statvfs free blocks once they reach want (freed space waits for the
    lease work's reclaim), or the last value after timeout."""
    end = time.monotonic() + timeout
    while True:
        f = os.statvfs(mnt).f_bfree
        if f >= want or time.monotonic() > end:
            return f
        time.sleep(0.2)


def scen_tmpfile(mnt):
    d = os.path.join(mnt, "t")
    os.makedirs(d, exist_ok=True)
    body = b"tmpfile " * 2000
    free0 = os.statvfs(mnt).f_bfree
    # linked through /proc/self/fd, as most programs do
    fd = os.open(d, os.O_TMPFILE | os.O_RDWR, 0o640)
    os.write(fd, body)
    st = os.fstat(fd)
    check(st.st_nlink == 0 and stat.S_ISREG(st.st_mode), f"tmpfile fstat {st}")
    check(os.listdir(d) == [], f"a name for a tmpfile: {os.listdir(d)}")
    link_proc_fd(fd, os.path.join(d, "proc"))
    check(os.fstat(fd).st_nlink == 1, "nlink after linkat")
    os.close(fd)
    with open(os.path.join(d, "proc"), "rb") as f:
        check(f.read() == body, "linked tmpfile contents")
    check(stat.S_IMODE(os.stat(os.path.join(d, "proc")).st_mode) == 0o640, "tmpfile mode")
    # linkat(fd, "", AT_EMPTY_PATH)
    fd = os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o600)
    os.write(fd, b"empty-path")
    linkat("", os.path.join(d, "empty"), AT_EMPTY_PATH, fd)
    os.close(fd)
    with open(os.path.join(d, "empty"), "rb") as f:
        check(f.read() == b"empty-path", "AT_EMPTY_PATH contents")
    # O_EXCL: never linkable
    fd = os.open(d, os.O_TMPFILE | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        link_proc_fd(fd, os.path.join(d, "excl"))
        check(False, "O_TMPFILE|O_EXCL was linked")
    except OSError as e:
        check(e.errno == errno.ENOENT, f"O_EXCL link: {e}")
    os.close(fd)
    # dropped: its space comes back
    big = os.open(d, os.O_TMPFILE | os.O_RDWR, 0o600)
    os.write(big, b"x" * (4 << 20))
    mid = os.statvfs(mnt).f_bfree
    check(mid < free0 - 900, f"4 MiB tmpfile took no space: {free0} -> {mid}")
    os.close(big)
    after = free_blocks(mnt, mid + 1000)
    check(after >= mid + 1000, f"space of a closed tmpfile not back: {mid} -> {after}")
    check(sorted(os.listdir(d)) == ["empty", "proc"], f"names: {os.listdir(d)}")
    link_removed_name(d)
    tmpfile_modes(d)
    result(tmpfile="ok", tmpfile_free=f"{free0}/{mid}/{after}")


def link_removed_name(d):
    """linkat through /proc/self/fd of a file whose name this host removed
    while another name keeps it: linked by number, as on tmpfs (it was
    ENOENT, by the removed name; the differential test found it)."""
    a, b, c = (os.path.join(d, n) for n in ("la", "lb", "lc"))
    with open(a, "wb") as f:
        f.write(b"kept by lb")
    os.link(a, b)
    fd = os.open(a, os.O_RDONLY)
    os.unlink(a)
    link_proc_fd(fd, c)
    os.close(fd)
    check(os.stat(c).st_nlink == 2 and os.stat(c).st_ino == os.stat(b).st_ino,
          f"link of a removed name: {os.stat(c)}")
    with open(c, "rb") as f:
        check(f.read() == b"kept by lb", "contents through the new name")
    os.unlink(b)
    os.unlink(c)


def tmpfile_modes(d):
    """The umask, and a default ACL of the directory, shape an O_TMPFILE's
    mode as a create's (xfstests generic/389)."""
    old = os.umask(0o022)
    try:
        fd = os.open(d, os.O_TMPFILE | os.O_RDWR, 0o666)
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        os.close(fd)
        check(mode == 0o644, f"O_TMPFILE 0666 under umask 022: {mode:o}")
        acl = os.path.join(d, "acl")
        os.mkdir(acl)
        run("setfacl", "-d", "-m", "u::rwx,g::rwx,o::rx", acl)
        fd = os.open(acl, os.O_TMPFILE | os.O_RDWR, 0o666)
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        os.close(fd)
        check(mode == 0o664, f"O_TMPFILE 0666 under a default ACL o::rx: {mode:o}")
    finally:
        os.umask(old)
    # setfacl keeps S_ISGID for an owner in the group (here root): the mode
    # update starts from the region's mode, not the VFS's, which hides
    # set-id bits without trust_suid (xfstests generic/375)
    f = os.path.join(d, "sgid")
    with open(f, "w"):
        pass
    os.chmod(f, 0o2755)
    run("setfacl", "-m", "u::rwx,g::rwx,o::rwx", f)
    mode = stat.S_IMODE(os.stat(f).st_mode)
    check(mode == 0o2777, f"setfacl on a 2755 file: {mode:o}, not 2777")
    os.unlink(f)


def scen_whiteout(mnt):
    d = os.path.join(mnt, "w")
    os.makedirs(d, exist_ok=True)
    src, dst = os.path.join(d, "a"), os.path.join(d, "b")
    with open(src, "wb") as f:
        f.write(b"moved")
    renameat2(src, dst, RENAME_WHITEOUT)
    st = os.lstat(src)
    check(stat.S_ISCHR(st.st_mode) and st.st_rdev == 0, f"whiteout {st}")
    with open(dst, "rb") as f:
        check(f.read() == b"moved", "renamed contents")
    # over an existing target
    with open(os.path.join(d, "c"), "wb") as f:
        f.write(b"c")
    renameat2(dst, os.path.join(d, "c"), RENAME_WHITEOUT)
    check(stat.S_ISCHR(os.lstat(dst).st_mode), "second whiteout")
    with open(os.path.join(d, "c"), "rb") as f:
        check(f.read() == b"moved", "renamed over c")
    check(sorted(os.listdir(d)) == ["a", "b", "c"], f"names {os.listdir(d)}")
    result(whiteout="ok")


def fill_region(d):
    """Fills the filesystem: one big file until ENOSPC, then empty files until
    no more can be made (what xfstests generic/626 does).  Returns the names."""
    names = [os.path.join(d, "big")]
    with open(names[0], "wb") as f:
        try:
            while True:
                f.write(b"\xa5" * (1 << 20))
                f.flush()
        except OSError as e:
            check(e.errno == errno.ENOSPC, f"filling: {e}")
    for i in range(100000):
        n = os.path.join(d, f"e{i}")
        try:
            open(n, "wb").close()
        except OSError as e:
            check(e.errno == errno.ENOSPC, f"filling with files: {e}")
            break
        names.append(n)
    return names


def whiteout_each(d, srcs):
    """renameat2(RENAME_WHITEOUT) of each src to d/dI: all of it or nothing.
    Returns (renamed, refused with ENOSPC)."""
    done = failed = 0
    for i, src in enumerate(srcs):
        dst = os.path.join(d, f"d{i}")
        try:
            renameat2(src, dst, RENAME_WHITEOUT)
        except OSError as e:
            check(e.errno == errno.ENOSPC, f"rename {i}: {e}")
            check(os.path.exists(src), f"rename {i} failed with ENOSPC but moved {src}")
            with open(src, "rb") as f:
                check(f.read() == b"s%d" % i, f"rename {i} failed but {src} changed")
            check(not os.path.exists(dst), f"rename {i} failed but {dst} exists")
            failed += 1
            continue
        st = os.lstat(src)
        check(stat.S_ISCHR(st.st_mode) and st.st_rdev == 0, f"rename {i}: no whiteout")
        with open(dst, "rb") as f:
            check(f.read() == b"s%d" % i, f"rename {i}: {dst} lost its bytes")
        done += 1
    return done, failed


def scen_whiteoutfull(mnt):
    """RENAME_WHITEOUT on a full filesystem either does all of it (the file at
    the new name, a whiteout at the old) or nothing (ENOSPC, the file still at
    its old name, no new name).  Before, the whiteout was made after the
    rename: ENOSPC came back with the file already moved (xfstests generic/626)."""
    d = os.path.join(mnt, "wf")
    os.makedirs(d, exist_ok=True)
    srcs = []
    for i in range(64):
        srcs.append(os.path.join(d, f"s{i}"))
        with open(srcs[-1], "wb") as f:
            f.write(b"s%d" % i)
    fill = fill_region(os.path.join(mnt, "wf"))
    try:
        done, failed = whiteout_each(d, srcs)
    finally:
        # the scenarios after this one need the space back
        for n in fill:
            os.unlink(n)
    result(whiteoutfull="ok", whiteoutfull_done=done, whiteoutfull_enospc=failed)


def scen_shortfull(mnt):
    """On a full filesystem with 1 MiB given back, a 4 MiB write stores what
    fits and returns that count, as POSIX has it for a full medium: the write
    is whole or nothing only while the space wait may run it again, its last
    try writes what fits (docs/reclaim.md "Short writes")."""
    d = os.path.join(mnt, "sf")
    os.makedirs(d, exist_ok=True)
    fill = fill_region(d)
    big = os.path.getsize(fill[0])
    try:
        check(big > (2 << 20), f"filling wrote only {big} bytes")
        os.truncate(fill[0], big - (1 << 20))
        data = bytes(range(256)) * (4 << 12)
        fd = os.open(os.path.join(d, "short"), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            n = os.write(fd, data)
            check(0 < n < len(data), f"4 MiB write on a nearly full filesystem: {n}")
            try:
                m = os.write(fd, data[n:])
            except OSError as e:
                check(e.errno == errno.ENOSPC, f"the write after: {e}")
                m = 0
            check(m < (64 << 10), f"the write after a short one stored {m}")
        finally:
            os.close(fd)
        with open(os.path.join(d, "short"), "rb") as f:
            check(f.read(n) == data[:n], "the short write's bytes")
        with open(fill[0], "rb") as f:
            check(f.read(1 << 20) == b"\xa5" * (1 << 20), "the filling file's bytes")
    finally:
        for name in fill + [os.path.join(d, "short")]:
            if os.path.exists(name):
                os.unlink(name)
    result(shortfull="ok", shortfull_n=n)


# ---- overlayfs ----

TREE = {
    "etc/passwd": b"root:x:0:0:root:/root:/bin/sh\n",
    "etc/hostname": b"lower\n",
    "etc/motd": b"welcome\n" * 50,
    "usr/bin/tool1": b"\x7fELF tool1" + bytes(range(256)) * 40,
    "usr/bin/tool2": b"\x7fELF tool2" * 3000,
    "usr/lib/libx.so.1": bytes(range(256)) * 200,
    "usr/share/doc/readme": b"docs\n" * 1000,
    "var/log/messages": b"",
    "home/user/.profile": b"export PATH=/usr/bin\n",
}
LINKS = {"usr/lib/libx.so": "libx.so.1", "bin": "usr/bin"}


def make_tar(path):
    src = path + ".d"
    for rel, data in TREE.items():
        p = os.path.join(src, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    for rel, target in LINKS.items():
        os.symlink(target, os.path.join(src, rel))
    os.chmod(os.path.join(src, "usr/bin/tool1"), 0o755)
    with tarfile.open(path, "w") as t:
        t.add(src, arcname=".")


def run(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    check(r.returncode == 0, f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


def tree_of(root):
    """{relative path: bytes, ('link', target), ('dir',) or ('chr', rdev)}"""
    out = {}
    for dp, dns, fns in os.walk(root):
        for n in dns + fns:
            p = os.path.join(dp, n)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir",)
            elif stat.S_ISCHR(st.st_mode):
                out[rel] = ("chr", st.st_rdev)
            else:
                with open(p, "rb") as f:
                    out[rel] = f.read()
    return out


def xattrs_work(path):
    try:
        os.setxattr(path, "trusted.overlay.probe", b"1")
        os.removexattr(path, "trusted.overlay.probe")
        return True
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.ENOTSUP):
            return False
        raise


def scen_overlay(mnt):
    base = os.path.join(mnt, "ovl")
    lower, upper, work, merged = (os.path.join(base, n) for n in
                                  ("lower", "upper", "work", "merged"))
    for p in (lower, upper, work, merged):
        os.makedirs(p, exist_ok=True)
    tar = "/tmp/rootfs.tar"
    make_tar(tar)
    run("tar", "-xf", tar, "-C", lower)
    lower_before = tree_of(lower)
    dmesg0 = run("dmesg")
    opts = f"lowerdir={lower},upperdir={upper},workdir={work}"
    r = subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, merged],
                       capture_output=True, text=True)
    warn = [ln for ln in run("dmesg")[len(dmesg0):].splitlines() if "overlay" in ln]
    print("overlay dmesg: " + " | ".join(warn), flush=True)
    if r.returncode and not xattrs_work(base):
        # daxfs revalidates dentries, so overlayfs takes it for a remote
        # upper and insists on xattrs (6.1 ovl_make_workdir): not yet here
        result(overlay="needs-xattrs")
        return
    check(r.returncode == 0, f"mount overlay: {r.stderr.strip()}")
    for bad in ("does not support tmpfile", "does not support RENAME_WHITEOUT",
                "does not support file handles"):
        check(not any(bad in ln for ln in warn), f"overlay: {bad}")

    def m(rel):
        return os.path.join(merged, rel)
    # the container-like workload
    with open(m("etc/passwd"), "ab") as f:			# copy-up by a write
        f.write(b"user:x:1000:1000::/home/user:/bin/sh\n")
    with open(m("etc/hostname"), "wb") as f:			# truncated copy-up
        f.write(b"container\n")
    os.unlink(m("usr/bin/tool2"))				# lower file: a whiteout
    os.rename(m("usr/lib/libx.so.1"), m("usr/lib/libx.so.2"))	# RENAME_WHITEOUT
    os.chmod(m("usr/bin/tool1"), 0o700)			# metadata copy-up
    os.makedirs(m("opt/app"))
    with open(m("opt/app/config"), "wb") as f:
        f.write(b"new=1\n")
    os.unlink(m("usr/share/doc/readme"))
    os.rmdir(m("usr/share/doc"))				# lower dir: a whiteout
    with open(m("var/log/messages"), "ab") as f:
        f.write(b"boot\n" * 100)
    # a file made and removed in the upper layer only
    with open(m("tmpf"), "wb") as f:
        f.write(b"gone")
    os.unlink(m("tmpf"))

    want = {k: v for k, v in lower_before.items()}
    want["etc/passwd"] = TREE["etc/passwd"] + b"user:x:1000:1000::/home/user:/bin/sh\n"
    want["etc/hostname"] = b"container\n"
    del want["usr/bin/tool2"]
    want["usr/lib/libx.so.2"] = want.pop("usr/lib/libx.so.1")
    want["opt"] = ("dir",)
    want["opt/app"] = ("dir",)
    want["opt/app/config"] = b"new=1\n"
    del want["usr/share/doc/readme"]
    del want["usr/share/doc"]
    want["var/log/messages"] = b"boot\n" * 100

    def check_merged(tag):
        got = tree_of(merged)
        diff = sorted(set(got) ^ set(want)) + sorted(k for k in got if k in want and got[k] != want[k])
        check(not diff, f"merged view {tag}: differs at {diff[:8]}")
        check(stat.S_IMODE(os.stat(m("usr/bin/tool1")).st_mode) == 0o700, f"chmod {tag}")
    check_merged("live")
    up = tree_of(upper)
    wh = sorted(k for k, v in up.items() if v == ("chr", 0))
    check(wh == ["usr/bin/tool2", "usr/lib/libx.so.1", "usr/share/doc"], f"whiteouts {wh}")
    check(up.get("etc/hostname") == b"container\n", "upper etc/hostname")
    check(up.get("usr/lib/libx.so.2") == TREE["usr/lib/libx.so.1"], "upper renamed file")
    check("etc/motd" not in up and "home/user/.profile" not in up,
          f"untouched files copied up: {sorted(up)}")
    check("tmpf" not in up, "upper-only file left behind")
    check(tree_of(lower) == lower_before, "the lower layer changed")
    run("umount", merged)
    # overlayfs (5.8+) keeps one shared whiteout in work/work for hard-linking
    # and clears the directory at its next mount: only whiteouts may be left
    wdir = os.path.join(work, "work")
    left = {n: os.lstat(os.path.join(wdir, n)) for n in os.listdir(wdir)}
    check(all(stat.S_ISCHR(st.st_mode) and st.st_rdev == 0 for st in left.values()),
          f"work dir holds more than whiteouts: {sorted(left)}")
    run("mount", "-t", "overlay", "overlay", "-o", opts, merged)
    check_merged("remounted")
    run("umount", merged)
    result(overlay="ok", overlay_whiteouts=len(wh), overlay_upper=len(up))


# ---- atime ----

def ns(t):
    return t.st_atime_ns


def remount(mnt, opt):
    run("mount", "-o", f"remount,{opt}", mnt)


def read_once(p):
    with open(p, "rb") as f:
        f.read(1)


def scen_atime(mnt, nreads="2000"):
    p = os.path.join(mnt, "atime")
    d = os.path.join(mnt, "adir")
    os.makedirs(d, exist_ok=True)
    with open(p, "wb") as f:
        f.write(b"a" * 8192)
    mounts = open("/proc/mounts").read()
    line = [ln for ln in mounts.splitlines() if f" {mnt} " in ln]
    check(line and "relatime" in line[0].split()[3], f"default is not relatime: {line}")
    # relatime: atime older than mtime moves on the first read, not the second
    os.utime(p, ns=(OLD_NS, time.time_ns()))
    read_once(p)
    a1 = ns(os.stat(p))
    check(a1 > OLD_NS, "relatime: read did not move an old atime")
    read_once(p)
    check(ns(os.stat(p)) == a1, "relatime: a second read moved atime")
    os.utime(d, ns=(OLD_NS, time.time_ns()))
    os.listdir(d)
    check(ns(os.stat(d)) > OLD_NS, "relatime: readdir did not move the dir's atime")
    # strictatime: every read
    remount(mnt, "strictatime")
    read_once(p)
    a2 = ns(os.stat(p))
    check(a2 > a1, "strictatime: read did not move atime")
    time.sleep(0.05)
    read_once(p)
    a3 = ns(os.stat(p))
    check(a3 > a2, "strictatime: second read did not move atime")
    # noatime: never
    remount(mnt, "noatime")
    os.utime(p, ns=(OLD_NS, time.time_ns()))
    read_once(p)
    os.listdir(d)
    check(ns(os.stat(p)) == OLD_NS, "noatime: read moved atime")
    # the cost of the stores: n 4 KiB preads of one page, per option
    # (the best of 5 rounds each, interleaved: a loaded host stalls TCG guests)
    n = int(nreads)
    cost = {}
    for _ in range(5):
        for opt in ("noatime", "relatime", "strictatime"):
            remount(mnt, opt)
            fd = os.open(p, os.O_RDONLY)
            t = time.perf_counter()
            for _ in range(n):
                os.pread(fd, 4096, 0)
            us = (time.perf_counter() - t) / n * 1e6
            cost[opt] = min(cost.get(opt, us), us)
            os.close(fd)
    remount(mnt, "relatime")
    # the host compares what the region holds with what we saw last
    seen = ns(os.stat(p))
    result(atime="ok", atime_seen=seen,
           **{f"atime_cost_{k}_us": f"{v:.1f}" for k, v in cost.items()})


# ---- mtime after mapped writes ----

def old_times(p):
    os.utime(p, ns=(OLD_NS, OLD_NS))
    check(os.stat(p).st_mtime_ns == OLD_NS, "utime")
    return os.stat(p).st_ctime_ns


def moved(p, ctime0, what):
    st = os.stat(p)
    check(st.st_mtime_ns > OLD_NS, f"{what}: mtime not updated")
    check(st.st_ctime_ns > ctime0, f"{what}: ctime not updated")


def scen_mmtime(mnt):
    p = os.path.join(mnt, "mmtime")
    with open(p, "wb") as f:
        f.write(b"\0" * 8192)
    fd = os.open(p, os.O_RDWR)
    # the first access is a store: a write fault
    c0 = old_times(p)
    time.sleep(0.05)
    with mmap.mmap(fd, 8192, mmap.MAP_SHARED) as mm:
        mm[0:4] = b"wflt"
        moved(p, c0, "write fault")
        # same mapping, after msync: the next store faults again
        c1 = old_times(p)
        mm.flush()
        time.sleep(0.05)
        mm[8:12] = b"sync"
        moved(p, c1, "store after msync")
    # read first, then store: the read-only PTE's write notification
    with mmap.mmap(fd, 8192, mmap.MAP_SHARED) as mm:
        check(mm[4096] == 0, "read")
        c2 = old_times(p)
        time.sleep(0.05)
        mm[4096:4100] = b"rfwr"
        moved(p, c2, "store after a read fault")
    os.close(fd)
    with open(p, "rb") as f:
        data = f.read()
    check(data[0:4] == b"wflt" and data[8:12] == b"sync" and data[4096:4100] == b"rfwr",
          "mapped stores lost")
    result(mmtime="ok")


def _appender(path, n, chunk):
    """Child: N O_APPEND writes of CHUNK bytes, each of one non-zero byte value."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    for i in range(n):
        buf = bytes([i % 255 + 1]) * chunk
        check(os.write(fd, buf) == chunk, f"short append {i}")
    os.close(fd)


def scen_follow(mnt, appends="200", chunk="131072"):
    """A reader on this host follows a file another process appends to, as `tail -f`
    does: every byte below the size it sees must be an append's, never a zero of a
    range an append reserved and has not copied yet (ext4 and xfs order a read after
    a write on one host; docs/kernel.md "Reads and writes on one host")."""
    n, chunk = int(appends), int(chunk)
    p = os.path.join(mnt, "follow")
    os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    pid = os.fork()
    if pid == 0:
        try:
            _appender(p, n, chunk)
            os._exit(0)
        except BaseException as e:          # noqa: BLE001 - the child's only report
            print(f"appender: {e!r}", flush=True)
            os._exit(1)
    fd = os.open(p, os.O_RDONLY)
    pos = zeros = looks = 0
    first = status = None
    while True:
        if status is None:
            status = os.waitpid(pid, os.WNOHANG)
            status = status[1] if status[0] else None
        size = os.fstat(fd).st_size
        if status is not None and pos == size:
            break
        looks += 1
        while pos < size:
            data = os.pread(fd, size - pos, pos)
            if not data:
                break
            z = data.count(0)
            if z and first is None:
                first = pos + data.index(0)
            zeros += z
            pos += len(data)
    os.close(fd)
    result(follow_zeros=zeros, follow_looks=looks, follow_bytes=pos)
    check(status == 0, f"appender ended with status {status}")
    check(zeros == 0, f"{zeros} zero bytes read in appended ranges, the first at {first}")
    check(pos == n * chunk, f"followed {pos} bytes of {n * chunk}")
    with open(p, "rb") as f:
        for i in range(n):
            check(f.read(chunk) == bytes([i % 255 + 1]) * chunk, f"append {i} not whole")
    os.unlink(p)
    result(follow="ok")


def _zapper(m, stop):
    """Thread: drops the mapping's page table entries over and over; the memfd
    keeps the bytes, so a fault maps the same bytes again."""
    import threading  # noqa: F401 - the caller starts us as a thread
    zaps = 0
    while not stop.is_set():
        m.madvise(mmap.MADV_DONTNEED)
        zaps += 1
    stop.zaps = zaps


def scen_appendfault(mnt, appends="50", chunk="1048576"):
    """A write whose source page goes between the kernel's fault-in and its copy
    (which runs with page faults off) must still land whole where it was meant to:
    an append that stored part of its range and went on at the end of the file left
    the rest of the range zero, inside one write() that returned its whole count."""
    import threading
    n, chunk = int(appends), int(chunk)
    mfd = os.memfd_create("src")
    os.ftruncate(mfd, chunk)
    m = mmap.mmap(mfd, chunk)
    word = struct.Struct("<Q")
    for off in range(0, chunk, 8):
        word.pack_into(m, off, off // 8 + 1)    # never zero, each word its own
    src = bytes(m)
    stop = threading.Event()
    t = threading.Thread(target=_zapper, args=(m, stop))
    t.start()
    try:
        a = os.path.join(mnt, "appendfault")
        fd = os.open(a, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        short = 0
        for _ in range(n):
            short += os.write(fd, m) != chunk
        os.close(fd)
        w = os.path.join(mnt, "pwritefault")
        fd = os.open(w, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for i in range(n):
            short += os.pwrite(fd, m, i * chunk) != chunk
        os.close(fd)
        # and reads into such pages: the bytes land whole, where asked
        fd = os.open(a, os.O_RDONLY)
        bad_reads = 0
        for i in range(0, n, 10):
            m[:] = bytes(chunk)
            got = os.preadv(fd, [m], i * chunk)
            bad_reads += got != chunk or m[:] != src
        os.close(fd)
    finally:
        stop.set()
        t.join()
    result(appendfault_zaps=stop.zaps, appendfault_short=short,
           appendfault_bad_reads=bad_reads)
    check(short == 0, f"{short} short writes")
    check(bad_reads == 0, f"{bad_reads} reads into zapped pages wrong")
    for p in (a, w):
        size = os.stat(p).st_size
        check(size == n * chunk, f"{p}: size {size}, not {n} x {chunk}")
        with open(p, "rb") as f:
            for i in range(n):
                got = f.read(chunk)
                if got != src:
                    z = next((k for k in range(0, len(got), 8)
                              if got[k:k + 8] != src[k:k + 8]), None)
                    check(False, f"{p}: write {i} differs at byte {z}")
        os.unlink(p)
    m.close()
    os.close(mfd)
    # an append from a mapping of region pages, which have no struct page
    # for the kernel to hold: copied through a kernel buffer instead
    x, y = os.path.join(mnt, "mapsrc"), os.path.join(mnt, "mapdst")
    data = (src * 5)[:5 * chunk + 12345]
    with open(x, "wb") as f:
        f.write(data)
    fd = os.open(x, os.O_RDONLY)
    xm = mmap.mmap(fd, len(data), prot=mmap.PROT_READ)
    yfd = os.open(y, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    with memoryview(xm) as view:
        wrote = [os.write(yfd, view), os.write(yfd, view[7:chunk])]
    os.close(yfd)
    xm.close()
    os.close(fd)
    check(wrote == [len(data), chunk - 7], f"appends from a mapping wrote {wrote}")
    with open(y, "rb") as f:
        check(f.read() == data + data[7:chunk], "appends from a mapping differ")
    os.unlink(x)
    os.unlink(y)
    bad_buffers(mnt)
    result(appendfault="ok")


def bad_buffers(mnt):
    """pwrite from pages not present (a fresh anonymous mapping: zeros), from
    a buffer whose second page may not be read (the first page lands, a short
    count), and from one that may not be read at all (EFAULT, the file as it
    was: size and blocks): the kernel's first op copies without a fault-in."""
    libc = ctypes.CDLL(None, use_errno=True)
    pg = mmap.PAGESIZE
    p = os.path.join(mnt, "badbuf")
    fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.pwrite(fd, b"\x5a" * (3 * pg), 0)
    fresh = mmap.mmap(-1, 64 * pg)
    check(os.pwrite(fd, fresh, pg) == 64 * pg, "pwrite from fresh pages short")
    check(os.pread(fd, 64 * pg, pg) == bytes(64 * pg), "fresh pages not zeros")
    fresh.close()
    half = mmap.mmap(-1, 2 * pg)
    half[:] = b"\xa5" * (2 * pg)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(half))
    check(libc.mprotect(ctypes.c_void_p(addr + pg), pg, 0) == 0, "mprotect")
    end = 80 * pg
    got = os.pwrite(fd, half, end)
    check(got == pg, f"pwrite half readable: {got}, not {pg}")
    check(os.fstat(fd).st_size == end + pg,
          f"size {os.fstat(fd).st_size} after a short pwrite")
    check(os.pread(fd, pg, end) == b"\xa5" * pg, "short pwrite's bytes")
    check(libc.mprotect(ctypes.c_void_p(addr), pg, 0) == 0, "mprotect")
    before = os.fstat(fd)
    for off in (0, 200 * pg):     # over bytes, and into a hole past EOF
        try:
            got = os.pwrite(fd, half, off)
            check(False, f"pwrite from an unreadable buffer wrote {got}")
        except OSError as e:
            check(e.errno == errno.EFAULT, f"unreadable buffer: {e}")
    after = os.fstat(fd)
    check((after.st_size, after.st_blocks) == (before.st_size, before.st_blocks),
          f"EFAULT changed the file: {before.st_size}/{before.st_blocks} -> "
          f"{after.st_size}/{after.st_blocks}")
    check(os.pread(fd, pg, 0) == b"\x5a" * pg, "EFAULT changed the bytes")
    os.close(fd)
    os.unlink(p)
    result(badbuf="ok")


FS_IOC_SHUTDOWN = 0x8004587D		# _IOR('X', 125, __u32): godown's


def shut_down(fd, how):
    fcntl.ioctl(fd, FS_IOC_SHUTDOWN, struct.pack("I", how))


def mount_of(mnt):
    """(source, options) of the mount at mnt, from /proc/mounts."""
    with open("/proc/mounts") as f:
        for line in f:
            src, where, _, opts = line.split()[:4]
            if where == mnt:
                return src, opts
    raise Failed(f"{mnt} is not mounted")


def expect_eio(what, fn):
    try:
        fn()
    except OSError as e:
        check(e.errno == errno.EIO, f"{what} after the shutdown: {e!r}, not EIO")
        return
    raise Failed(f"{what} after the shutdown succeeded")


class MappingReader:
    """map() maps path shared and reads it once; then read_until_sigbus() reads it
    every 10 ms and returns (a child then exits 0) only if no SIGBUS came within
    seconds."""
    def __init__(self, path, seconds=30):
        self.path, self.seconds, self.m = path, seconds, None

    def map(self):
        with open(self.path, "rb") as f:
            self.m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)
        self.m[0]

    def read_until_sigbus(self):
        signal.signal(signal.SIGBUS, signal.SIG_DFL)
        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            self.m[0]
            time.sleep(0.01)


def scen_shutdown(mnt):
    d = os.path.join(mnt, "shut")
    os.makedirs(d, exist_ok=True)
    kept, held = os.path.join(d, "kept"), os.path.join(d, "held")
    data = os.urandom(3 * 4096 + 100)
    with open(kept, "wb") as f:
        f.write(data)
    w = os.open(held, os.O_CREAT | os.O_RDWR, 0o644)
    os.write(w, b"h" * 4096)
    reader = MappingReader(kept)
    mapper = child(reader.read_until_sigbus, reader.map)
    dfd = os.open(mnt, os.O_RDONLY)
    try:
        shut_down(dfd, 7)
        raise Failed("shutdown with flag 7 succeeded")
    except OSError as e:
        check(e.errno == errno.EINVAL, f"shutdown with flag 7: {e!r}")
    shut_down(dfd, 2)				# NOLOGFLUSH: at once
    # a mapping made before the shutdown: the maintenance work drops it, and
    # the next access faults and gets SIGBUS (docs/kernel.md "Shutdown")
    os.write(mapper[1], b"g")
    status = os.waitpid(mapper[0], 0)[1]
    check(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGBUS,
          f"a mapping's reads after the shutdown: wait status {status:#x}, not SIGBUS")
    os.close(mapper[1])
    expect_eio("write", lambda: os.pwrite(w, b"y", 0))
    expect_eio("read", lambda: os.pread(w, 1, 0))
    expect_eio("create", lambda: os.close(os.open(os.path.join(d, "new"),
                                                  os.O_CREAT | os.O_WRONLY, 0o644)))
    expect_eio("statfs", lambda: os.statvfs(mnt))
    shut_down(dfd, 0)				# again: nothing more to do
    os.close(w)
    os.close(dfd)
    src, opts = mount_of(mnt)
    run("umount", mnt)
    run("mount", "-t", "daxfs", "-o", opts, src, mnt)
    with open(kept, "rb") as f:
        check(f.read() == data, "a file written before the shutdown changed")
    with open(held, "rb") as f:
        check(f.read() == b"h" * 4096, "the file open at the shutdown changed")
    check(not os.path.exists(os.path.join(d, "new")), "a create after the shutdown left a name")
    with open(os.path.join(d, "after"), "wb") as f:
        f.write(b"after")
    with open(os.path.join(d, "after"), "rb") as f:
        check(f.read() == b"after", "a write after the remount")
    log = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    check("shut down (FS_IOC_SHUTDOWN)" in log, "dmesg does not name the shutdown")
    result(shutdown="ok")


def child(fn, first=None):
    """A process that runs first() (if any), says so, and runs fn() once the parent
    writes to the pipe returned with its pid; it exits 0 when fn returned.  Returns
    once first() has run."""
    r, w = os.pipe()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(w)
            if first:
                first()
            os.write(ready_w, b"r")
            os.read(r, 1)
            fn()
            os._exit(0)
        except BaseException:
            os._exit(1)
    os.close(r)
    os.close(ready_w)
    check(os.read(ready_r, 1) == b"r", "a child process died before it was ready")
    os.close(ready_r)
    return pid, w


def scen_freeze(mnt):
    d = os.path.join(mnt, "frz")
    os.makedirs(d, exist_ok=True)
    path, new = os.path.join(d, "f"), os.path.join(d, "new")
    with open(path, "wb") as f:
        f.write(b"a" * 8192)
    fd = os.open(path, os.O_RDWR)
    mfd = os.open(path, os.O_RDWR)
    m = mmap.mmap(mfd, 8192)

    def first_store():		# before the freeze: the child's page is writable
        m[0:1] = b"b"

    def store():
        m[200:201] = b"M"
    kids = {"write": child(lambda: os.pwrite(fd, b"W", 100)),
            "create": child(lambda: os.close(os.open(new, os.O_CREAT | os.O_WRONLY, 0o644))),
            "mapped store": child(store, first_store)}
    run("fsfreeze", "-f", mnt)
    try:
        check(os.pread(fd, 1, 0) == b"b", "a read while frozen")
        again = subprocess.run(["fsfreeze", "-f", mnt], capture_output=True, text=True)
        check(again.returncode != 0, "a second freeze succeeded")
        for pid, w in kids.values():
            os.write(w, b"g")
        time.sleep(3)
        for what, (pid, _) in kids.items():
            check(os.waitpid(pid, os.WNOHANG) == (0, 0), f"the {what} ended while frozen")
        check(os.pread(fd, 1, 100) == b"a", "the write landed while frozen")
        check(os.pread(fd, 1, 200) == b"a", "the mapped store landed while frozen")
        check(not os.path.exists(new), "the create landed while frozen")
    finally:
        subprocess.run(["fsfreeze", "-u", mnt])
    for what, (pid, w) in kids.items():
        os.close(w)
        check(os.waitpid(pid, 0)[1] == 0, f"the {what} failed after the thaw")
    check(os.pread(fd, 1, 100) == b"W", "the write is not in the file after the thaw")
    check(os.pread(fd, 1, 200) == b"M", "the mapped store is not in the file after the thaw")
    check(os.path.exists(new), "the create did not happen after the thaw")
    m.close()
    os.close(mfd)
    os.close(fd)
    result(freeze="ok")


def ch_mark(mnt, name):
    d = os.path.join(mnt, "chs")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "." + name), "w") as f:
        f.write("x")
    os.rename(os.path.join(d, "." + name), os.path.join(d, name))


def ch_wait(mnt, name, timeout=300):
    end = time.monotonic() + timeout
    while not os.path.exists(os.path.join(mnt, "chs", name)):
        check(time.monotonic() < end, f"marker {name} never appeared")
        time.sleep(0.1)


def run_out(*args):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def lsattr_flags(path, d=False):
    rc, out = run_out("lsattr", *(["-d"] if d else []), path)
    check(rc == 0, f"lsattr {path}: {out}")
    return out.split()[0]


STATX_ATTR_IMMUTABLE, STATX_ATTR_APPEND, STATX_ATTR_NODUMP = 0x10, 0x20, 0x40


def statx_attrs(path):
    """statx(2)'s stx_attributes and stx_attributes_mask of path."""
    buf = ctypes.create_string_buffer(256)
    if libc.statx(AT_FDCWD, os.fsencode(path), 0, 0x7ff, buf):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), path)
    attrs, = struct.unpack_from("<Q", buf, 8)
    mask, = struct.unpack_from("<Q", buf, 56)
    return attrs, mask


def eperm(what, fn, *args):
    try:
        fn(*args)
    except OSError as e:
        check(e.errno == errno.EPERM, f"{what}: {e!r}, want EPERM")
        return
    check(False, f"{what} was allowed")


def store_in_child(m):
    """A store through the shared mapping m in a child: its exit signal (0: none)."""
    pid = os.fork()
    if pid == 0:
        m[0:1] = b"M"
        os._exit(0)
    _, st = os.waitpid(pid, 0)
    return os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0


def scen_chattr(mnt, role):
    f, d = os.path.join(mnt, "ch", "f"), os.path.join(mnt, "ch", "d")
    if role == "A":
        os.makedirs(d)
        with open(f, "wb") as fp:
            fp.write(b"v1\n" + b"." * 8000)
        ch_mark(mnt, "made")
        ch_wait(mnt, "opened")
        rc, out = run_out("chattr", "+i", f)
        check(rc == 0, f"chattr +i: {out}")
        rc, out = run_out("chattr", "+a", d)
        check(rc == 0, f"chattr +a: {out}")
        check("i" in lsattr_flags(f), "lsattr on A after +i")
        check("a" in lsattr_flags(d, True), "lsattr -d on A after +a")
        ch_mark(mnt, "locked")
        ch_wait(mnt, "checked")
        check(os.pread(os.open(f, os.O_RDONLY), 3, 0) == b"v1\n",
              "the immutable file changed")
        rc, out = run_out("chattr", "-i", f)
        check(rc == 0, f"chattr -i: {out}")
        rc, out = run_out("chattr", "-a", d)
        check(rc == 0, f"chattr -a: {out}")
        ch_mark(mnt, "unlocked")
        ch_wait(mnt, "done")
        with open(f, "rb") as fp:
            check(fp.read(3) == b"B2\n", "B's write after chattr -i")
        result(chattr="ok")
        return
    ch_wait(mnt, "made")
    fd = os.open(f, os.O_RDWR)
    m = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    m[3:4] = b"m"               # the page is mapped writable before the flag
    ch_mark(mnt, "opened")
    ch_wait(mnt, "locked")
    flags = lsattr_flags(f)
    check("i" in flags, f"lsattr on B: {flags}")
    check("a" in lsattr_flags(d, True), "lsattr -d on B")
    # statx shows them too (xfstests generic/424)
    attrs, mask = statx_attrs(f)
    check(attrs & STATX_ATTR_IMMUTABLE and mask & STATX_ATTR_IMMUTABLE,
          f"statx of f on B: attributes {attrs:#x}, mask {mask:#x}")
    attrs, _ = statx_attrs(d)
    check(attrs & STATX_ATTR_APPEND and not attrs & STATX_ATTR_IMMUTABLE,
          f"statx of d on B: attributes {attrs:#x}")
    eperm("write through the open descriptor", os.pwrite, fd, b"x", 0)
    eperm("open for writing", os.open, f, os.O_WRONLY)
    eperm("unlink", os.unlink, f)
    eperm("rename", os.rename, f, f + "2")
    eperm("truncate", os.truncate, f, 0)
    eperm("chmod", os.chmod, f, 0o600)
    rc, out = run_out("sh", "-c", f"echo x >> {f}")
    check(rc != 0, "sh appended to an immutable file")
    # the lease pass drops this host's writable mappings of a locked file
    time.sleep(8)
    sig = store_in_child(m)
    check(sig == 7, f"store through a mapping made before +i: signal {sig}")
    n = os.path.join(d, "n")
    with open(n, "wb") as fp:
        fp.write(b"n")
    eperm("unlink in an append-only directory", os.unlink, n)
    ch_mark(mnt, "checked")
    ch_wait(mnt, "unlocked")
    os.pwrite(fd, b"B2\n", 0)
    m.close()
    os.close(fd)
    os.unlink(n)
    ch_mark(mnt, "done")
    result(chattr="ok")


class Uid1000Checker:
    """A process of uid and gid 1000 that lives across the checks, its
    working directory d and an O_PATH descriptor of d/f held: "read"
    opens f again through /proc/self/fd (no walk, so no revalidation
    refreshes f first: the permission check alone decides), "walk" stats
    f from the working directory (d's search permission, d not
    revalidated), "list" opens "." for reading.  ask() answers the
    errno (0: allowed)."""

    CALLS = {"read": b"r", "walk": b"w", "list": b"l"}

    def __init__(self, d, f):
        cmd_r, self.cmd_w = os.pipe()
        self.ans_r, ans_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.cmd_w)
            os.close(self.ans_r)
            code = 1
            try:
                os.chdir(d)
                fd = os.open(f, os.O_PATH)
                os.setgid(1000)
                os.setuid(1000)
                calls = {
                    b"r": lambda: errno_of(os.open, f"/proc/self/fd/{fd}",
                                           os.O_RDONLY),
                    b"w": lambda: errno_of(os.stat, "f"),
                    b"l": lambda: errno_of(os.open, ".", os.O_RDONLY),
                }
                while True:
                    c = os.read(cmd_r, 1)
                    if not c:
                        break
                    os.write(ans_w, bytes([calls[c]()]))
                code = 0
            except Exception as e:      # noqa: BLE001 - the child's report
                print(f"uid 1000 checker: {e!r}", file=sys.stderr, flush=True)
            finally:
                os._exit(code)
        os.close(cmd_r)
        os.close(ans_w)

    def ask(self, call):
        os.write(self.cmd_w, self.CALLS[call])
        a = os.read(self.ans_r, 1)
        check(len(a) == 1, "the uid 1000 checker died")
        return a[0]

    def close(self):
        os.close(self.cmd_w)
        os.close(self.ans_r)
        return os.waitpid(self.pid, 0)[1]


def scen_permepoch(mnt, role):
    """A change of permission attributes on one host decides the other's very
    next permission check of an inode it has cached and checked many times
    (docs/kernel.md "Permission checks and the attribute epoch"): guest B
    chmods, chowns and setfacls pe/d/f and chmods pe/d while a uid-1000
    process of guest A, its working directory pe/d, opens f again through
    its descriptor, stats it from d and opens d, before and right after.
    None of these walks revalidates the inode it checks, so nothing but the
    permission check refreshes it."""
    d = os.path.join(mnt, "pe", "d")
    f = os.path.join(d, "f")
    # (what B does, A's call, A's errno before, A's errno after)
    steps = [
        (lambda: os.chmod(f, 0o600), "read", 0, errno.EACCES),
        (lambda: os.chown(f, 1000, -1), "read", errno.EACCES, 0),
        (lambda: os.chown(f, 0, 1000), "read", 0, errno.EACCES),
        (lambda: os.chmod(f, 0o640), "read", errno.EACCES, 0),
        (lambda: run("setfacl", "-m", "u:1000:---", f), "read", 0,
         errno.EACCES),
        (lambda: run("setfacl", "-b", f), "read", errno.EACCES, 0),
        (lambda: os.chmod(d, 0o751), "list", 0, errno.EACCES),
        (lambda: os.chmod(d, 0o754), "walk", 0, errno.EACCES),
        (lambda: os.chmod(d, 0o711), "walk", errno.EACCES, 0),
    ]
    if role == "A":
        os.makedirs(d)
        os.chmod(d, 0o755)
        with open(f, "wb") as fp:
            fp.write(b"pe\n")
        os.chmod(f, 0o644)
        ch_mark(mnt, "pe-made")
        who = Uid1000Checker(d, f)
        for i, (_, call, before, after) in enumerate(steps):
            # the second and third answer from the inode (the epoch saved)
            for k in range(3):
                got = who.ask(call)
                check(got == before, f"step {i} ({call}) before, try {k}: "
                      f"errno {got}, want {before}")
            ch_mark(mnt, f"pe-warm{i}")
            ch_wait(mnt, f"pe-done{i}")
            got = who.ask(call)
            check(got == after, f"step {i} ({call}): errno {got} right after "
                  f"B's change, want {after}")
        check(who.close() == 0, "the uid 1000 checker failed")
        ch_mark(mnt, "pe-end")
        result(permepoch="ok")
        return
    ch_wait(mnt, "pe-made")
    for i, (change, _, _, _) in enumerate(steps):
        ch_wait(mnt, f"pe-warm{i}")
        change()
        ch_mark(mnt, f"pe-done{i}")
    ch_wait(mnt, "pe-end")
    result(permepoch="ok")


def errno_of(fn, *args):
    """The errno fn(*args) fails with, 0 when it succeeds (a descriptor it
    returns is closed)."""
    try:
        r = fn(*args)
    except OSError as e:
        return e.errno
    if isinstance(r, int):
        os.close(r)
    return 0


EXCL = os.O_CREAT | os.O_EXCL | os.O_WRONLY


def creat_alone(d):
    """One host's open(O_CREAT) answers, as any Linux filesystem gives them."""
    old = os.umask(0o022)
    f = os.path.join(d, "f")
    fd = os.open(f, EXCL, 0o666)
    os.write(fd, b"one")
    os.close(fd)
    st = os.stat(f)
    check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o644,
          f"O_EXCL create: mode {st.st_mode:o}")
    os.mkdir(os.path.join(d, "dir"))
    os.symlink("target", os.path.join(d, "dangling"))
    for name in ("f", "dir", "dangling"):
        e = errno_of(os.open, os.path.join(d, name), EXCL, 0o644)
        check(e == errno.EEXIST, f"O_EXCL on {name}: errno {e}")
    check(not os.path.lexists(os.path.join(d, "target")),
          "O_EXCL through a dangling symlink made its target")
    fd = os.open(f, os.O_CREAT | os.O_RDWR, 0o600)
    check(os.pread(fd, 8, 0) == b"one", "O_CREAT on a file did not open it")
    os.close(fd)
    os.close(os.open(f, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600))
    check(os.stat(f).st_size == 0, "O_CREAT|O_TRUNC did not empty the file")
    e = errno_of(os.open, os.path.join(d, "n" * 256), EXCL, 0o644)
    check(e == errno.ENAMETOOLONG, f"256-byte name: errno {e}")
    check(sorted(os.listdir(d)) == ["dangling", "dir", "f"],
          f"after the long name: {sorted(os.listdir(d))}")
    os.close(os.open(os.path.join(d, "n" * 255), EXCL, 0o644))
    sg = os.path.join(d, "sgid")
    os.mkdir(sg)
    os.chown(sg, 0, 4321)
    os.chmod(sg, 0o2777)
    os.close(os.open(os.path.join(sg, "g"), EXCL, 0o644))
    gid = os.stat(os.path.join(sg, "g")).st_gid
    check(gid == 4321, f"a file made in a setgid directory: group {gid}")
    with open("/proc/sys/vm/drop_caches", "w") as dc:
        dc.write("2")
    fd = os.open(f, os.O_RDONLY)
    os.close(fd)
    e = errno_of(os.open, os.path.join(d, "missing"), os.O_RDONLY)
    check(e == errno.ENOENT, f"open of a missing name: errno {e}")
    ro = os.path.join(d, "ro")
    os.mkdir(ro)
    with open(os.path.join(ro, "have"), "wb") as fp:
        fp.write(b"have")
    os.chmod(ro, 0o555)
    os.umask(old)
    def refused():
        return (errno_of(os.open, os.path.join(ro, "have"), EXCL, 0o644) == errno.EEXIST
                and errno_of(os.open, os.path.join(ro, "new"), EXCL, 0o644)
                == errno.EACCES
                and errno_of(os.open, os.path.join(ro, "have"),
                             os.O_CREAT | os.O_RDONLY, 0o644) == 0)
    st = as_uid_1000(refused)
    check(st == 0, f"uid 1000 in a directory it may not write: status {st:#x}")
    check(not os.path.exists(os.path.join(ro, "new")), "uid 1000 made a file in ro")


def as_uid_1000(fn):
    """Runs fn() in a child process as uid and gid 1000; its exit status: 0 when
    fn returned true, 3 when it returned false, 1 when it raised (said on
    stderr)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgid(1000)
            os.setuid(1000)
            code = 0 if fn() else 3
        except Exception as e:      # noqa: BLE001 - the child's report
            print(f"as uid 1000: {e!r}", file=sys.stderr, flush=True)
        finally:
            os._exit(code)
    return os.waitpid(pid, 0)[1]


def creat_race(d, role, n):
    """O_EXCL creates of the same n names on both hosts at once: the names this
    host won, each file holding its winner's role."""
    won = []
    order = list(range(n))
    random.Random(role).shuffle(order)     # the hosts meet on many names
    for i in order:
        try:
            fd = os.open(os.path.join(d, f"r{i}"), EXCL, 0o644)
        except FileExistsError:
            continue
        os.write(fd, role.encode())
        os.close(fd)
        won.append(i)
    return won


def creat_moved_dir(mnt, d, role):
    """A create by this host in a directory another host renamed since this
    host last looked its name up moves no vouch of the old name: A holds a
    descriptor of cr/mv, B renames it to cr/mv2, A creates in it through the
    descriptor (no path walk through the name); then cr/mv is gone on A."""
    mv, mv2 = os.path.join(d, "mv"), os.path.join(d, "mv2")
    if role == "A":
        os.mkdir(mv)
        dfd = os.open(mv, os.O_RDONLY | os.O_DIRECTORY)
        os.stat(mv)
        ch_mark(mnt, "mv-ready")
        ch_wait(mnt, "mv-moved")
        os.close(os.open("f", EXCL, 0o644, dir_fd=dfd))
        os.close(dfd)
        e = errno_of(os.stat, mv)
        check(e == errno.ENOENT, f"stat of the renamed directory's old name: errno {e}")
        check(os.listdir(mv2) == ["f"], f"mv2 holds {os.listdir(mv2)}")
        return
    ch_wait(mnt, "mv-ready")
    os.rename(mv, mv2)
    ch_mark(mnt, "mv-moved")


def scen_creat(mnt, role, nrace="400"):
    d, c = os.path.join(mnt, "cr"), os.path.join(mnt, "cr", "x")
    n = int(nrace)
    if role == "A":
        os.makedirs(c)
        ch_mark(mnt, "cr-made")
        os.makedirs(os.path.join(d, "alone"))
        creat_alone(os.path.join(d, "alone"))
        ch_wait(mnt, "cr-absent")
        for name in ("seen", "unseen"):
            with open(os.path.join(c, name), "wb") as fp:
                fp.write(b"A:" + name.encode())
        ch_mark(mnt, "cr-there")
    else:
        ch_wait(mnt, "cr-made")
        e = errno_of(os.stat, os.path.join(c, "seen"))
        check(e == errno.ENOENT, f"stat before A's create: errno {e}")
        ch_mark(mnt, "cr-absent")
        ch_wait(mnt, "cr-there")
        for name in ("seen", "unseen"):
            p = os.path.join(c, name)
            e = errno_of(os.open, p, EXCL, 0o644)
            check(e == errno.EEXIST, f"O_EXCL on A's {name}: errno {e}")
            fd = os.open(p, os.O_CREAT | os.O_RDWR, 0o644)
            got = os.pread(fd, 16, 0)
            os.close(fd)
            check(got == b"A:" + name.encode(), f"O_CREAT on A's {name}: {got!r}")
    creat_moved_dir(mnt, d, role)
    ch_mark(mnt, "cr-race-" + role)
    ch_wait(mnt, "cr-race-" + ("B" if role == "A" else "A"))
    won = creat_race(c, role, n)
    with open(os.path.join(d, "won-" + role), "w") as fp:
        fp.write(" ".join(map(str, won)))
    ch_mark(mnt, "cr-done-" + role)
    ch_wait(mnt, "cr-done-" + ("B" if role == "A" else "A"))
    wins = {}
    for r in ("A", "B"):
        with open(os.path.join(d, "won-" + r)) as fp:
            for i in fp.read().split():
                check(int(i) not in wins, f"r{i} won by both hosts")
                wins[int(i)] = r
    check(sorted(wins) == list(range(n)), f"names nobody won: {set(range(n)) - set(wins)}")
    for i, r in wins.items():
        with open(os.path.join(c, f"r{i}"), "rb") as fp:
            got = fp.read()
        check(got == r.encode(), f"r{i} won by {r} holds {got!r}")
    result(creat="ok", **{f"creat_won_{role}": sum(1 for r in wins.values() if r == role)})


def scen_churn(mnt, role, secs="20"):
    """Both guests loop open(O_CREAT), write, close and unlink of one name for
    secs seconds: in a directory that exists no open gives ENOENT, and at
    most one in 200 ESTALE, however the other host creates and unlinks the
    name (docs/kernel.md limitation 10)."""
    d = os.path.join(mnt, "churn")
    if role == "A":
        os.makedirs(d)
        ch_mark(mnt, "churn-made")
    else:
        ch_wait(mnt, "churn-made")
    ch_mark(mnt, "churn-go-" + role)
    ch_wait(mnt, "churn-go-" + ("B" if role == "A" else "A"))
    p, end = os.path.join(d, "x"), time.monotonic() + float(secs)
    ok, failed = 0, {}
    while time.monotonic() < end:
        try:
            fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
        except OSError as e:
            name = errno.errorcode.get(e.errno, str(e.errno))
            failed[name] = failed.get(name, 0) + 1
            continue
        os.write(fd, role.encode())
        os.close(fd)
        ok += 1
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
    print(f"churn {role}: {ok} opens, failed {failed}", flush=True)
    # ENOENT never (a directory that exists); ESTALE seldom: an open through a
    # cached dentry whose file the other host freed before it, twice in a row
    # (the VFS looks again once): docs/kernel.md limitation 10
    stale = failed.pop("ESTALE", 0)
    check(ok > 0 and not failed and stale * 200 <= ok,
          f"open(O_CREAT) failed: {failed}, ESTALE {stale} ({ok} opened)")
    ch_mark(mnt, "churn-done-" + role)
    ch_wait(mnt, "churn-done-" + ("B" if role == "A" else "A"))
    result(churn="ok", **{f"churn_opens_{role}": ok})


def scen_replace(mnt, role, secs="20"):
    """Guest B replaces f (and the symlink l) again and again the way programs
    update a file atomically: write a new file, rename it over the name.  The
    names never go missing, so guest A's calls on them must never answer
    ENOENT: open, stat, chmod, utime, link, getxattr, readlink.  ESTALE (the
    VFS's one retry meeting the race again) may come for at most one call
    in 50 of each kind, and link's ENOENT for at most one link in 20: Linux's
    own answer to a link racing a rename over its source, on any filesystem
    (vfs_link refuses an inode at link count 0; docs/kernel.md limitation
    10)."""
    d = os.path.join(mnt, "replace")
    f, l = os.path.join(d, "f"), os.path.join(d, "l")
    if role == "B":
        os.makedirs(d)
        with open(f, "wb") as fp:
            fp.write(b"0")
        os.symlink("f", l)
        ch_mark(mnt, "rp-made")
    else:
        ch_wait(mnt, "rp-made")
    ch_mark(mnt, "rp-go-" + role)
    ch_wait(mnt, "rp-go-" + ("B" if role == "A" else "A"))
    end = time.monotonic() + float(secs)
    if role == "B":
        i = 0
        while time.monotonic() < end:
            i += 1
            t = os.path.join(d, "t")
            with open(t, "wb") as fp:
                fp.write(b"%d" % i)
            os.rename(t, f)
            os.symlink("f", t)
            os.rename(t, l)
        ch_mark(mnt, "rp-done-B")
        result(replace="ok", replace_rounds=i)
        return
    calls = {
        "open": lambda: os.close(os.open(f, os.O_RDONLY)),
        "stat": lambda: os.stat(f),
        "chmod": lambda: os.chmod(f, 0o644),
        "utime": lambda: os.utime(f),
        "link": lambda: (os.link(f, os.path.join(d, "g")),
                         os.unlink(os.path.join(d, "g"))),
        "getxattr": lambda: getxattr_quiet(f),
        "readlink": lambda: os.readlink(l),
    }
    rounds, failed = 0, {}
    while time.monotonic() < end:
        rounds += 1
        for name, fn in calls.items():
            try:
                fn()
            except OSError as e:
                k = name + ":" + errno.errorcode.get(e.errno, str(e.errno))
                failed[k] = failed.get(k, 0) + 1
    ch_wait(mnt, "rp-done-B")
    print(f"replace A: {rounds} rounds of {len(calls)} calls, failed {failed}",
          flush=True)
    # ESTALE: the VFS's one retry met the race again, at most one call in
    # 50 of each kind.  link's ENOENT: vfs_link's refusal of a source whose
    # count the rename dropped to 0, read by may_linkat's permission check
    # (docs/kernel.md limitation 10): 0.5-2.2% of the links in ten runs,
    # 0.015% with fs.protected_hardlinks=0; at most one in 20
    bad = {k: n for k, n in failed.items()
           if not k.endswith(":ESTALE") and k != "link:ENOENT"}
    stale = max([0] + [n for k, n in failed.items() if k.endswith(":ESTALE")])
    check(rounds > 0 and not bad and stale * 50 <= rounds and
          failed.get("link:ENOENT", 0) * 20 <= rounds,
          f"calls on a name never missing failed: {failed} ({rounds} rounds)")
    result(replace="ok", replace_rounds=rounds,
           replace_failed=",".join(f"{k}={n}" for k, n in failed.items())
           or "none")


def getxattr_quiet(p):
    """getxattr of an attribute f does not have: ENODATA is the answer."""
    try:
        os.getxattr(p, "user.none")
    except OSError as e:
        if e.errno != errno.ENODATA:
            raise


def stalewrite_writer(mnt, f, g, rounds):
    """A's uid-1000 process: each round, after B's changes, one write to f and one
    append to g through descriptors opened before, with no look at either first."""
    fd = os.open(f, os.O_WRONLY)
    gd = os.open(g, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"w" * 4096)
    os.write(gd, b"a" * 100)
    for i in range(rounds):
        ch_mark(mnt, f"sw-w{i}")
        ch_wait(mnt, f"sw-c{i}")
        check(os.write(fd, b"x" * 100) == 100, f"round {i}: write to f")
        check(os.write(gd, b"A" * 10) == 10, f"round {i}: append to g")
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        check(mode == 0o755, f"round {i}: the write left f's mode {mode:o}")
        e = errno_of(os.getxattr, f, "security.capability")
        check(e == errno.ENODATA, f"round {i}: the write left f's capability ({e})")
        with open(g, "rb") as fp:
            got = fp.read(64)
        check(got == b"B" * 10 + b"A" * 10,
              f"round {i}: g holds {got!r}, not B's 10 bytes and then ours")
    os.close(fd)
    os.close(gd)
    return True


def scen_stalewrite(mnt, role, rounds="10"):
    d = os.path.join(mnt, "sw")
    f, g = os.path.join(d, "f"), os.path.join(d, "g")
    n = int(rounds)
    if role == "B":
        ch_wait(mnt, "sw-made")
        for i in range(n):
            # A marks sw-done also when its writer failed: no wait for rounds
            # that will not come
            end = time.monotonic() + 300
            while not os.path.exists(os.path.join(mnt, "chs", f"sw-w{i}")):
                check(not os.path.exists(os.path.join(mnt, "chs", "sw-done")),
                      f"A stopped before round {i}")
                check(time.monotonic() < end, f"round {i} never came")
                time.sleep(0.1)
            os.chmod(f, 0o4755)
            if i % 2:
                os.setxattr(f, "security.capability", CAP_BLOB)
            fd = os.open(g, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, b"B" * 10)
            os.close(fd)
            ch_mark(mnt, f"sw-c{i}")
        ch_wait(mnt, "sw-done")
        check(stat.S_IMODE(os.stat(f).st_mode) == 0o755, "B sees f's set-uid bit kept")
        with open(g, "rb") as fp:
            check(fp.read() == b"B" * 10 + b"A" * 10, "B sees g wrong")
        result(stalewrite="ok")
        return
    chs = os.path.join(mnt, "chs")
    os.makedirs(chs, exist_ok=True)
    os.chmod(chs, 0o777)        # A's writer marks as uid 1000
    os.makedirs(d)
    for p in (f, g):
        open(p, "wb").close()
        os.chown(p, 1000, 1000)
        os.chmod(p, 0o644)
    ch_mark(mnt, "sw-made")
    st = as_uid_1000(lambda: stalewrite_writer(mnt, f, g, n))
    ch_mark(mnt, "sw-done")
    check(st == 0, f"the uid-1000 writer failed: status {st:#x}")
    result(stalewrite="ok")


def scen_staledir(mnt, role):
    """Names another host moved, used here by dentries this kernel kept
    (docs/kernel.md "Stale directory dentries"; found by the two-guest
    differential test, 2026-12-05).  A holds sd/x/f open and has looked at
    sd/x and sd/u; B moves x and u into sd/y (x2, u2) and renames x2/f to g;
    then A, with no look at the old names: links the open file through
    /proc/self/fd (ENOENT by its stale name before), renames y/x2, whose
    stale dentry A's descriptor keeps in use, and y/u2, whose stale dentry
    nothing uses, into sd (both ESTALE in rename(2) before)."""
    d = os.path.join(mnt, "sd")
    if role == "B":
        ch_wait(mnt, "sd-made")
        os.mkdir(os.path.join(d, "y"))
        os.rename(os.path.join(d, "x"), os.path.join(d, "y", "x2"))
        os.rename(os.path.join(d, "u"), os.path.join(d, "y", "u2"))
        os.rename(os.path.join(d, "y", "x2", "f"), os.path.join(d, "y", "x2", "g"))
        ch_mark(mnt, "sd-moved")
        ch_wait(mnt, "sd-done")
        check(sorted(os.listdir(d)) == ["h", "u3", "x3", "y"],
              f"B sees sd: {sorted(os.listdir(d))}")
        check(os.listdir(os.path.join(d, "x3")) == ["g"], "B sees x3")
        check(os.stat(os.path.join(d, "h")).st_nlink == 2, "B sees h's links")
        result(staledir="ok")
        return
    os.makedirs(os.path.join(d, "x"))
    os.mkdir(os.path.join(d, "u"))
    fd = os.open(os.path.join(d, "x", "f"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, b"staledir")
    os.stat(os.path.join(d, "u"))
    ch_mark(mnt, "sd-made")
    ch_wait(mnt, "sd-moved")
    try:
        linkat(f"/proc/self/fd/{fd}", os.path.join(d, "h"), AT_SYMLINK_FOLLOW)
        check(os.fstat(fd).st_nlink == 2, f"nlink {os.fstat(fd).st_nlink} after the link")
        os.rename(os.path.join(d, "y", "x2"), os.path.join(d, "x3"))
        os.rename(os.path.join(d, "y", "u2"), os.path.join(d, "u3"))
        with open(os.path.join(d, "x3", "g"), "rb") as fp:
            check(fp.read() == b"staledir", "x3/g's bytes")
        check(os.pread(fd, 8, 0) == b"staledir", "the open file's bytes")
    finally:
        os.close(fd)
        ch_mark(mnt, "sd-done")
    result(staledir="ok")


def renameat2_in(olddir, newdir, name, flags, timeout=60):
    """renameat2(olddir, name, newdir, name, flags) of two directory descriptors, in a
    thread: its errno (0), or None if it did not return within timeout (the thread is
    left, stuck in the kernel)."""
    import threading
    got = []

    def call():
        n = os.fsencode(name)
        rc = libc.renameat2(olddir, n, newdir, n, flags)
        got.append(ctypes.get_errno() if rc else 0)

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(timeout)
    return got[0] if got else None


def scen_renameparent(mnt, role):
    """A rename whose lookup finds one of its own two directories, which another
    host moved under the other one since (docs/kernel.md "Stale directory
    dentries").  A holds rp/a and rp/b open and has looked at rp/a/y (a file) and
    rp/b/y (none); B moves a to b/y.  A's renameat2 of y from its descriptor of a
    to y in its descriptor of b (an exchange, then a plain rename) takes both
    directories' locks (lock_rename: unrelated directories), and its lookup of
    b/y finds directory a, whose dentry is rp/a, in use.  daxfs.ko moved that
    dentry to b/y: the rename's target became one of its own locked directories,
    and vfs_rename locked it again, a deadlock.  Now the lookup answers ESTALE (the
    VFS's retry, by the same descriptors, too): each call returns, nothing moves."""
    d = os.path.join(mnt, "rp")
    if role == "B":
        ch_wait(mnt, "rp-made")
        os.rename(os.path.join(d, "a"), os.path.join(d, "b", "y"))
        ch_mark(mnt, "rp-moved")
        ch_wait(mnt, "rp-done")
        check(os.listdir(d) == ["b"], f"B sees rp: {os.listdir(d)}")
        check(os.listdir(os.path.join(d, "b", "y")) == ["y"], "B sees b/y")
        result(renameparent="ok")
        return
    os.makedirs(os.path.join(d, "a"))
    os.mkdir(os.path.join(d, "b"))
    with open(os.path.join(d, "a", "y"), "wb") as f:
        f.write(b"y")
    ino = os.stat(os.path.join(d, "a")).st_ino
    fa = os.open(os.path.join(d, "a"), os.O_RDONLY | os.O_DIRECTORY)
    fb = os.open(os.path.join(d, "b"), os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(3):
        os.stat(os.path.join(d, "a", "y"))
        check(not os.path.exists(os.path.join(d, "b", "y")), "b/y before the move")
    ch_mark(mnt, "rp-made")
    ch_wait(mnt, "rp-moved")
    try:
        for flags in (RENAME_EXCHANGE, 0):
            e = renameat2_in(fa, fb, "y", flags)
            check(e is not None, f"renameat2(flags {flags}) hung")
            print(f"renameparent: flags {flags}: {errno.errorcode.get(e, e)}", flush=True)
            check(e in (errno.EINVAL, errno.ESTALE),
                  f"renameat2(flags {flags}): {e and errno.errorcode.get(e, e)}")
        check(os.listdir(d) == ["b"], f"A sees rp: {os.listdir(d)}")
        check(os.stat(os.path.join(d, "b", "y")).st_ino == ino, "b/y is a")
        check(os.listdir(os.path.join(d, "b", "y")) == ["y"], "a/y stayed")
        # by the names as they are now it works
        os.rename(os.path.join(d, "b", "y", "y"), os.path.join(d, "b", "z"))
        os.rename(os.path.join(d, "b", "z"), os.path.join(d, "b", "y", "y"))
    finally:
        os.close(fa)
        os.close(fb)
        ch_mark(mnt, "rp-done")
    result(renameparent="ok")


def scen_reopen(mnt):
    """A file unlinked while open is opened again through /proc/self/fd."""
    d = os.path.join(mnt, "reopen")
    os.makedirs(d)
    f = os.path.join(d, "f")
    with open(f, "wb") as fp:
        fp.write(b"abc")
    fd = os.open(f, os.O_RDWR)
    os.unlink(f)
    fd2 = os.open(f"/proc/self/fd/{fd}", os.O_RDWR)
    os.pwrite(fd2, b"X", 0)
    check(os.pread(fd, 3, 0) == b"Xbc", "a write through the reopened descriptor")
    check(os.fstat(fd2).st_nlink == 0, f"nlink {os.fstat(fd2).st_nlink}")
    os.close(fd)
    os.close(fd2)
    check(os.listdir(d) == [], f"left: {os.listdir(d)}")
    result(reopen="ok")


def scen_exec(mnt):
    """Programs stored on daxfs run: an ELF copy (mapped privately from
    the region), a script, a program rewritten between two runs (the new
    bytes run), and a running program's file cannot be opened for writing
    on its host (ETXTBSY, the VFS's deny_write_access)."""
    d = os.path.join(mnt, "exec")
    os.makedirs(d)
    prog = os.path.join(d, "echo")
    shutil.copy("/bin/echo", prog)
    os.chmod(prog, 0o755)
    out = subprocess.run([prog, "from", "daxfs"], capture_output=True)
    check(out.stdout == b"from daxfs\n", f"echo: {out}")
    script = os.path.join(d, "s.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho script $1\n")
    os.chmod(script, 0o755)
    out = subprocess.run([script, "ran"], capture_output=True)
    check(out.stdout == b"script ran\n", f"script: {out}")
    shutil.copy("/bin/true", prog)
    out = subprocess.run([prog, "x"], capture_output=True)
    check((out.returncode, out.stdout) == (0, b""), f"rewritten: {out}")
    sleeper = os.path.join(d, "sleep")
    shutil.copy("/bin/sleep", sleeper)
    os.chmod(sleeper, 0o755)
    p = subprocess.Popen([sleeper, "30"])
    try:
        time.sleep(0.5)
        try:
            os.open(sleeper, os.O_WRONLY)
            check(False, "a running program opened for writing")
        except OSError as e:
            check(e.errno == errno.ETXTBSY, f"open for writing: {e}")
    finally:
        p.kill()
        p.wait()
    with open(sleeper, "r+b") as f:     # once it has exited: writable
        f.write(b"\x7f")
    result(exec="ok")


def scen_programs(mnt):
    """The everyday script of every front end (tests/helpers/everyday.py:
    coreutils, tar, git, sqlite3 in WAL mode, python3, fio verifying) in
    MNT/programs and in a tmpfs directory of this guest: the same output
    and the same tree.  A difference is printed as a diff."""
    import difflib
    import tempfile
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(repo, "tests", "helpers"))
    import everyday
    docs = os.path.join(repo, "docs")
    runs = []
    for where in (tempfile.mkdtemp(prefix="everyday-", dir="/tmp"),
                  os.path.join(mnt, "programs")):
        rc, out, err = everyday.run_script(where, docs, timeout=1500)
        check(rc == 0, f"in {where}: rc {rc}: {out[-1500:]}{err[-1500:]}")
        runs.append(out.splitlines() + ["--- tree"] + everyday.manifest(where))
    diff = list(difflib.unified_diff(runs[0], runs[1], "tmpfs", "daxfs",
                                     lineterm=""))
    for line in diff[:80]:
        print("programs diff: " + line, flush=True)
    check(not diff, f"daxfs differs from tmpfs in {len(diff)} diff lines")
    result(programs="ok")


SCENARIOS = {
    "programs": scen_programs,
    "exec": scen_exec,
    "chattr": scen_chattr,
    "permepoch": scen_permepoch,
    "creat": scen_creat,
    "churn": scen_churn,
    "replace": scen_replace,
    "stalewrite": scen_stalewrite,
    "staledir": scen_staledir,
    "renameparent": scen_renameparent,
    "reopen": scen_reopen,
    "freeze": scen_freeze,
    "shutdown": scen_shutdown,
    "follow": scen_follow,
    "appendfault": scen_appendfault,
    "tmpfile": scen_tmpfile,
    "whiteout": scen_whiteout,
    "whiteoutfull": scen_whiteoutfull,
    "shortfull": scen_shortfull,
    "overlay": scen_overlay,
    "atime": scen_atime,
    "mmtime": scen_mmtime,
}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in SCENARIOS:
        print(__doc__)
        sys.exit(2)
    # a failed check is this scenario's result, not the guest's end: the
    # next scenarios still run (each test checks its own key)
    try:
        SCENARIOS[sys.argv[1]](sys.argv[2], *sys.argv[3:])
    except (Failed, OSError) as e:
        print(f"FAIL: {sys.argv[1]}: {e!r}", flush=True)
        result(**{sys.argv[1]: "fail"})


if __name__ == "__main__":
    main()
