"""One random call sequence, two hosts: the split mode of the
differential test (docs/testing.md "One tree, two hosts").

preload_diff_ops.py runs its calls in one process.  With
DAXFS_DIFF_SPLIT=MAILBOX, a part of its path calls (stat, lstat, mkdir,
rename, unlink, chmod, truncate by path, ...) run instead in a second
process, the peer, which may be another host of the same region:

    python3 diff_split.py serve MAILBOX [FROM TO]

The peer executes each call it is sent and answers with the result or
the errno.  The sequence goes on in lock-step, so each call still sees
everything before it, whichever host made it.  What the output prints
does not say which host made a call: on tmpfs both processes see one
file system, and on a region the output must be the same.  A cache a
host keeps of the region (names, attributes, record copies, a last
directory looked up) that misses another host's change shows as a
difference.

The two processes talk through MAILBOX, a file both map shared: on tmpfs
natively, and on the daxfs.ko mount itself in guests (where the two
guests share nothing else).  Layout: a request sequence number, a reply
sequence number, two lengths, then the request and the reply, pickled.
On x86 the stores of the body and then of its sequence number are seen
in that order.

A regular file opened by such a path has a twin at the peer: the peer
opens it too, and about half of the calls on the descriptor (read,
write, pread, pwrite, fstat, ftruncate, ...: FD_CALLS) run on the twin,
read and write from this host's file offset (SplitOS.open, fd_call).

Only calls by path go to the peer, and only when their paths mean the
same there: no directory descriptor, and a relative path only while
this process's working directory is one the sequence never moves (its
root, whose path is absolute and fixed); the peer gets the path made
absolute.  Which calls go is drawn from a generator of its own, seeded
by the sequence's seed, so the calls themselves are the same as without
the split; only calls on paths below the sequence's top draw, because
the runs of one comparison differ above it (/dev/shm/... or /daxfs).
"""

import contextlib
import mmap
import os
import pickle
import random
import stat
import struct
import subprocess
import sys
import time

SIZE = 1 << 24   # room for a window's read (diff_data_ops.window: 4 MiB)
BODY = 64
HALF = (SIZE - BODY) // 2
HEAD = struct.Struct("<QQII")
SHARE = 0.5     # of the calls that may go, how many go
# DAXFS_DIFF_SPLIT_TRACE=1: each call the peer made, and its answer, on
# stderr (to see which host did what in a failing seed)
TRACE = os.environ.get("DAXFS_DIFF_SPLIT_TRACE") == "1"
# DAXFS_DIFF_SPLIT_TWINS=0: no twins (SplitOS.open), for a front end
# whose hosts see each other's changes to a file open on both only within
# a bound (the FUSE mount, docs/fuse.md "Coherence")
TWINS = os.environ.get("DAXFS_DIFF_SPLIT_TWINS", "1") != "0"

# name: (positions of path arguments, keyword arguments that name a
# descriptor and keep the call here when set)
CALLS = {
    "stat": ((0,), ("dir_fd",)),
    "lstat": ((0,), ("dir_fd",)),
    "mkdir": ((0,), ("dir_fd",)),
    "rmdir": ((0,), ("dir_fd",)),
    "unlink": ((0,), ("dir_fd",)),
    "remove": ((0,), ("dir_fd",)),
    "rename": ((0, 1), ("src_dir_fd", "dst_dir_fd")),
    "replace": ((0, 1), ("src_dir_fd", "dst_dir_fd")),
    "link": ((0, 1), ("src_dir_fd", "dst_dir_fd")),
    "symlink": ((1,), ("dir_fd",)),
    "readlink": ((0,), ("dir_fd",)),
    "chmod": ((0,), ("dir_fd",)),
    "chown": ((0,), ("dir_fd",)),
    "lchown": ((0,), ()),
    "utime": ((0,), ("dir_fd",)),
    "truncate": ((0,), ()),
    "listdir": ((0,), ()),
    "access": ((0,), ("dir_fd",)),
    "getxattr": ((0,), ()),
    "setxattr": ((0,), ()),
    "listxattr": ((0,), ()),
    "removexattr": ((0,), ()),
    # the tree walk reads each file (diff_data_ops.file_digest): the peer
    # reads what this host wrote
    "file_digest": ((0,), ()),
}

REMOVALS = {"rmdir", "unlink", "remove", "rename", "replace"}

# Calls on a descriptor that may run on the peer's twin of it (a second
# open of the same file there, see SplitOS.open); read and write carry
# this host's file offset over and back.  The others here take a path
# or a descriptor: only the descriptor form goes as a twin call.
FD_CALLS = {"read", "write", "pread", "pwrite", "fstat", "ftruncate",
            "fsync", "fdatasync", "fchmod", "fchown", "utime", "getxattr",
            "setxattr", "listxattr", "removexattr"}
OFFSET_CALLS = {"read", "write"}


def function(name):
    """What a call in CALLS runs, here or at the peer."""
    if name == "file_digest":
        import diff_data_ops
        return diff_data_ops.file_digest
    return getattr(os, name)


def twin_open(path, flags):
    """The peer's open of a file open at the generator: its descriptor
    and inode number (that both opens name one file)."""
    fd = os.open(path, flags)
    return fd, os.fstat(fd).st_ino


def twin_call(name):
    """What a twin call runs at the peer: name on the twin descriptor,
    from this host's offset if it is given; the result and the offset
    after it."""
    def run(twin, off, *a, **kw):
        if off is not None:
            os.lseek(twin, off, os.SEEK_SET)
        res = getattr(os, name)(twin, *a, **kw)
        end = os.lseek(twin, 0, os.SEEK_CUR) if off is not None else None
        return res, end
    return run


def peer_function(name):
    """What a request names, at the peer."""
    if name == "twin_open":
        return twin_open
    if name == "twin_close":
        return os.close
    if name.startswith("twin:"):
        return twin_call(name[len("twin:"):])
    return function(name)


def become_user():
    """DAXFS_DIFF_UID: the same user as the generator (preload_diff_ops.py
    become_user).  What the calls need is imported first: the user may not
    read the interpreter's modules (a virtual environment below /root)."""
    uid = int(os.environ.get("DAXFS_DIFF_UID", "-1"))
    if uid < 0:
        return
    function("file_digest")
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


class Mailbox:
    def __init__(self, path, create=False):
        if create:
            # whole before it has its name: a peer may wait for the name
            fd = os.open(path + ".new", os.O_RDWR | os.O_CREAT | os.O_TRUNC,
                         0o600)
            os.ftruncate(fd, SIZE)
            os.rename(path + ".new", path)
        else:
            fd = os.open(path, os.O_RDWR)
        self.map = mmap.mmap(fd, SIZE)
        os.close(fd)

    def head(self):
        return HEAD.unpack_from(self.map, 0)

    def put(self, slot, obj):
        data = pickle.dumps(obj)
        if len(data) > HALF:
            data = pickle.dumps(("exc", "reply of %d bytes" % len(data)))
        at = BODY + slot * HALF
        self.map[at:at + len(data)] = data
        struct.pack_into("<I", self.map, 16 + 4 * slot, len(data))

    def get(self, slot):
        n = self.head()[2 + slot]
        at = BODY + slot * HALF
        return pickle.loads(self.map[at:at + n])

    def wait(self, slot, seq, deadline=600.0):
        """Until the sequence number of slot (0 request, 1 reply) is
        seq; sleeps more the longer it waits."""
        nap, end = 0.0, time.monotonic() + deadline
        while self.head()[slot] != seq:
            if time.monotonic() > end:
                raise TimeoutError("diff_split: no %s %d" %
                                   ("request" if slot == 0 else "reply", seq))
            time.sleep(nap)
            nap = min(0.002, nap + 0.00005)

    def send(self, slot, obj):
        """obj into slot (0 request, 1 reply), then the slot's next
        sequence number, which the other side waits for; returns it."""
        self.put(slot, obj)
        seq = self.head()[slot] + 1
        struct.pack_into("<Q", self.map, 8 * slot, seq)
        return seq


class SplitOS:
    """The os module as preload_diff_ops sees it in split mode: calls
    in CALLS may go to the peer, everything else is os itself."""

    def __init__(self, real, mailbox):
        self.real = real
        self.mb = mailbox
        self.r = random.Random(0)
        self.fixed = set()
        self.top = "/"
        self.cwd = None         # the working directory, if fixed
        self.sent = 0           # calls the peer made
        self.removals_sent = 0  # of them, those that may remove a name
        self.twins = {}         # descriptor here: the peer's of its file
        self.twin_calls = 0

    def __getattr__(self, name):
        if name in CALLS or name in FD_CALLS:
            return lambda *a, **kw: self.call(name, a, kw)
        return getattr(self.real, name)

    def anchor(self, seed, root, top):
        """A new sequence: its seed, its root (which it never moves) and
        the top it works below (paths above it differ between the runs
        of a comparison, so calls on them neither go nor draw)."""
        self.r = random.Random(seed * 7919 + 17)
        self.fixed = {root, top}
        self.top = top

    def chdir(self, p):
        self.real.chdir(p)
        self.moved()

    def fchdir(self, fd):
        self.real.fchdir(fd)
        self.moved()

    def moved(self):
        """The working directory changed: is it one of the fixed ones
        (by inode, whichever way it was reached)?"""
        self.cwd = None
        try:
            here = self.real.stat(".")
            for f in self.fixed:
                st = self.real.stat(f)
                if (st.st_dev, st.st_ino) == (here.st_dev, here.st_ino):
                    self.cwd = f
                    return
        except OSError:
            pass

    def absolute(self, p):
        if not isinstance(p, str):
            return None
        if p == "":
            return p
        if not p.startswith("/"):
            if self.cwd is None:
                return None
            p = self.cwd + "/" + p
        return p if p == self.top or p.startswith(self.top + "/") else None

    def remote_args(self, name, a, kw):
        """The arguments as the peer gets them, or None: stays here."""
        paths, fdkw = CALLS[name]
        if any(kw.get(k) is not None for k in fdkw):
            return None
        if not a and name == "listdir":
            a = (".",)
        a = list(a)
        for i in paths:
            if i >= len(a):
                return None
            p = self.absolute(a[i])
            if p is None:
                return None
            a[i] = p
        return a

    def call(self, name, a, kw):
        if name in FD_CALLS and a and isinstance(a[0], int):
            return self.fd_call(name, a, kw)
        if name not in CALLS:
            return function(name)(*a, **kw)
        ra = self.remote_args(name, a, kw)
        if ra is None or self.r.random() >= SHARE:
            return function(name)(*a, **kw)
        self.sent += 1
        if name in REMOVALS:
            self.removals_sent += 1
        return self.ask(name, ra, kw)

    def ask(self, name, ra, kw):
        """The peer runs name(*ra, **kw); its result, or its error
        raised here."""
        self.mb.wait(1, self.mb.send(0, (name, ra, kw)))
        kind, val = self.mb.get(1)
        if TRACE:
            sys.stderr.write("peer: %s %r %r -> %s %r\n" % (name, ra, kw, kind,
                                                          val))
        if kind == "ok":
            return val
        if kind == "err":
            raise OSError(val, os.strerror(val))
        if kind == "value":
            raise ValueError(val)
        raise RuntimeError("diff_split peer: %s" % val)

    # -- twins: the peer's own descriptors of the files open here ----

    def open(self, path, flags, mode=0o777, *, dir_fd=None):
        """os.open; a regular file opened by a path that means the same at
        the peer gets a twin there: the peer opens the same path with the
        same access and O_APPEND (not O_CREAT, O_EXCL, O_TRUNC, whose
        work is done), right after, so both name one file.  Calls on the
        descriptor may then run on the twin (fd_call): one host reads what
        the other wrote through its own open, the cached runs and sizes
        of both opens included.  The twin open may fail (a mode the
        creator alone may open): the descriptor then stays here."""
        fd = self.real.open(path, flags, mode, dir_fd=dir_fd)
        self.forget(fd)
        ra = None if dir_fd is not None else self.absolute(path)
        if not TWINS or ra is None or flags & (os.O_DIRECTORY | os.O_PATH |
                                  getattr(os, "O_TMPFILE", 0)):
            return fd
        st = self.real.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return fd
        keep = flags & ~(os.O_CREAT | os.O_EXCL | os.O_TRUNC)
        try:
            twin, ino = self.ask("twin_open", [ra, keep], {})
        except OSError:
            return fd
        if ino != st.st_ino:
            raise RuntimeError("diff_split: %s is inode %d here and %d at "
                               "the peer" % (ra, st.st_ino, ino))
        self.twins[fd] = twin
        return fd

    def forget(self, fd):
        """fd is no longer what it was (closed, reused, a dup2 target):
        its twin, if any, is closed."""
        twin = self.twins.pop(fd, None)
        if twin is not None:
            self.ask("twin_close", [twin], {})

    def close(self, fd):
        self.forget(fd)
        self.real.close(fd)

    def dup(self, fd):
        new = self.real.dup(fd)
        self.forget(new)
        return new

    def dup2(self, fd, fd2, inheritable=True):
        self.forget(fd2)
        return self.real.dup2(fd, fd2, inheritable)

    def copy_file_range(self, src, dst, count, *a, **kw):
        """os.copy_file_range here, after an fstat of a source open on
        both hosts, as cp makes: the VFS clamps the copy to the size this
        kernel has cached before daxfs.ko sees the call, and the other
        host may have grown the file since (docs/kernel.md "Coherence",
        copy_file_range)."""
        if src in self.twins:
            self.real.fstat(src)
        return self.real.copy_file_range(src, dst, count, *a, **kw)

    def fd_call(self, name, a, kw):
        """A call on descriptor a[0]: on its twin at the peer for about
        SHARE of the calls on descriptors that have one.  read and write
        start at this host's offset, which is then moved to where the
        twin's ended."""
        twin = self.twins.get(a[0])
        if twin is None or self.r.random() >= SHARE:
            return getattr(self.real, name)(*a, **kw)
        self.twin_calls += 1
        off = None
        if name in OFFSET_CALLS:
            off = self.real.lseek(a[0], 0, os.SEEK_CUR)
        res, end = self.ask("twin:" + name, [twin, off] + list(a[1:]), kw)
        if end is not None:
            self.real.lseek(a[0], end, os.SEEK_SET)
        return res

    def close_peer(self):
        """Ends the peer; says how many calls it made."""
        sys.stderr.write("diff_split: the peer made %d calls by path and "
                         "%d on descriptors\n" % (self.sent, self.twin_calls))
        self.mb.wait(1, self.mb.send(0, None))


def install(modules, path):
    """Split mode for these modules (their global os), the mailbox at
    path, which the peer serves."""
    so = SplitOS(os, Mailbox(path))
    for m in modules:
        m.os = so
    return so


def translate(a, frm, to):
    """Paths below frm, the generator's top, as below to, the peer's."""
    if frm is None:
        return a
    return [to + x[len(frm):] if isinstance(x, str) and
            (x == frm or x.startswith(frm + "/")) else x for x in a]


def serve(path, frm=None, to=None):
    """The peer: executes requests until the empty one; paths below frm
    are taken as below to (a FUSE mount of its own, elsewhere).  Returns
    how many it executed."""
    mb = Mailbox(path)
    become_user()       # once the mailbox (root's) is open
    # from 0, the fresh mailbox's: the generator may have sent its first
    # request before this process came this far
    seq = 0
    while True:
        seq += 1
        mb.wait(0, seq, deadline=3600.0)
        req = mb.get(0)
        if req is None:
            mb.send(1, ("ok", None))
            return seq - 1
        name, a, kw = req
        a = translate(a, frm, to)
        try:
            res = ("ok", peer_function(name)(*a, **kw))
        except OSError as e:
            res = ("err", e.errno)
        except ValueError as e:
            res = ("value", str(e))
        except Exception as e:     # noqa: BLE001 - told to the caller
            res = ("exc", repr(e))
        mb.send(1, res)


def abandon(path):
    """Tells the peer to end when the generator could not: it died, maybe
    between a request and its reply; the peer ends at the next request it
    takes (a peer in another guest cannot be killed from here)."""
    Mailbox(path).send(0, None)


@contextlib.contextmanager
def peer(path, frm=None, to=None, start=subprocess.Popen, env=None):
    """A peer process serving a fresh mailbox at path (start(argv, env=)
    runs it: under `daxfs run`, say), for a generator run in the block;
    waited for after it, and killed if the generator never told it to
    end."""
    Mailbox(path, create=True)
    argv = [sys.executable, __file__, "serve", path]
    if frm is not None and frm != to:
        argv += [frm, to]
    proc = start(argv, env=env)
    try:
        yield path
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main():
    if len(sys.argv) in (3, 5) and sys.argv[1] == "serve":
        serve(*sys.argv[2:])
    else:
        sys.exit("usage: diff_split.py serve MAILBOX [FROM TO]")


if __name__ == "__main__":
    main()
