"""Model-based tests of the daxfs bindings (Hypothesis stateful testing).

A RuleBasedStateMachine drives one region through random sequences of
namespace and data operations and compares every result (return value or
errno) with a small in-memory model of POSIX semantics.  After every step
the whole tree is compared: directory listings, types, permission bits,
sizes, link counts, inode identity of hard links, file contents and
symlink targets.  Checks read through a second host (a second Region on
the same file) on alternate steps, so a stale per-host cache would show.

Where Linux would report one of several errors depending on check order,
any of the applicable errnos is accepted; success where the model expects
an error (or the reverse) always fails.

Profiles (tests/conftest.py): "ci" (default) is derandomized with no
example database; DAXFS_HYPOTHESIS_PROFILE=dev or long for wider runs.
"""

import errno
import random
import stat as st_mod

import pytest
from hypothesis import event, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from helpers import env

daxfs = env.daxfs

NAMES = ["a", "b", "c", "d", "e", "f"]
MAX_DEPTH = 4
REGION_SIZE = 32 * env.MiB
FILE_MODES = [0o644, 0o600, 0o755, 0o700, 0o640]  # unchanged by umask 022
DIR_MODES = [0o755, 0o700, 0o750]
CHMOD_MODES = [0o777, 0o750, 0o644, 0o400, 0o000, 0o1777]
BIG_SPAN = 3 * 4096 + 100  # writes mostly land in the first pages

DT = {"dir": 4, "file": 8, "link": 10}

RENAME_NOREPLACE = getattr(daxfs, "RENAME_NOREPLACE", 1)
RENAME_EXCHANGE = getattr(daxfs, "RENAME_EXCHANGE", 2)


def ename(e):
    return errno.errorcode.get(e, str(e))


# ---------------------------------------------------------------- model

class MNode:
    def __init__(self, mode):
        self.mode = mode  # permission bits only
        self.ino = None  # learned from the first lstat
        self.uid = None
        self.gid = None


class MFile(MNode):
    kind = "file"

    def __init__(self, mode):
        super().__init__(mode)
        self.data = bytearray()
        self.nlink = 0


class MDir(MNode):
    kind = "dir"

    def __init__(self, mode, parent):
        super().__init__(mode)
        self.children = {}
        self.parent = parent  # root: itself

    @property
    def nlink(self):
        return 2 + sum(isinstance(c, MDir) for c in self.children.values())


class MLink(MNode):
    kind = "link"

    def __init__(self, target):
        super().__init__(0o777)
        self.target = target
        self.nlink = 1


def split(path):
    comps = [c for c in path.split("/") if c]
    return comps[:-1], comps[-1]


def join(parent, name):
    return parent.rstrip("/") + "/" + name


def is_within(node, top):
    """True when dir node is top or lies below it."""
    for _ in range(64):
        if node is top:
            return True
        if node.parent is node:
            return False
        node = node.parent
    raise AssertionError("model parent chain too long")


def gen_bytes(seed, n):
    return random.Random(seed).randbytes(n)


# ---------------------------------------------------------- state machine

paths_universe = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(
    lambda cs: "/" + "/".join(cs))
symlink_targets = st.one_of(
    st.text(alphabet="xyz/.", max_size=24).map(lambda s: "zz" + s),
    st.integers(2, 60).map(lambda n: "zz" + ("/" + "q" * 60) * n))
offsets = st.one_of(st.integers(0, BIG_SPAN), st.integers(0, 64 * 1024),
                    st.sampled_from([4095, 4096, 4097, 8191, 8192]))
lengths = st.one_of(st.integers(0, 600), st.integers(0, 9000),
                    st.sampled_from([1, 4095, 4096, 4097]))
sizes = st.one_of(st.integers(0, BIG_SPAN), st.integers(0, 70 * 1024),
                  st.sampled_from([0, 1, 4095, 4096, 4097, 8192]))


class DaxfsMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.path = env.region_path("model")
        env.mkfs(self.path, REGION_SIZE)
        self.r = daxfs.Region(self.path)
        self.r2 = daxfs.Region(self.path)  # second host, for checks
        self.root = MDir(0o755, None)
        self.root.parent = self.root
        self.steps = 0

    def teardown(self):
        try:
            for reg in (getattr(self, "r", None), getattr(self, "r2", None)):
                if reg is not None:
                    reg.close()
            if env.tool("fsck.daxfs") is not None:
                rc, out = env.fsck(self.path, "-n")
                assert rc == 0, "fsck.daxfs -n after the run: exit %d\n%s" % (rc, out)
        finally:
            env.remove(self.path)

    # ---- model helpers

    def walk(self):
        """(path, node) for every node, parents first."""
        out = [("/", self.root)]
        i = 0
        while i < len(out):
            p, n = out[i]
            i += 1
            if isinstance(n, MDir):
                for name in sorted(n.children):
                    out.append((join(p, name), n.children[name]))
        return out

    def resolve_parent(self, path):
        """(parent MDir, name) or a set of acceptable errnos."""
        comps, name = split(path)
        cur = self.root
        for c in comps:
            node = cur.children.get(c)
            if node is None:
                return {errno.ENOENT}
            if isinstance(node, MLink):  # dangling, whether followed or not
                return {errno.ENOENT, errno.ENOTDIR}
            if isinstance(node, MFile):
                return {errno.ENOTDIR}
            cur = node
        return cur, name

    def lookup(self, path):
        """The node at path, None if absent, or a set of errnos."""
        res = self.resolve_parent(path)
        if isinstance(res, set):
            return res
        d, name = res
        return d.children.get(name)

    def call_new(self, data, fn, args):
        """Draws a path for a new name and calls fn(*args(path)).  It must
        fail as the model says when the parent does not resolve or the name
        exists (then None); else returns (parent, name, fn's result)."""
        path = self.draw_path(data, new=3)
        res = self.resolve_parent(path)
        if isinstance(res, set):
            self.call(res, fn, *args(path))
            return None
        d, name = res
        if name in d.children:
            self.call({errno.EEXIST}, fn, *args(path))
            return None
        return d, name, self.call(None, fn, *args(path))

    def existing_node(self, path, fn):
        """The node at path; None after checking that fn(path) fails with
        the model's errno when path does not resolve or is absent."""
        node = self.lookup(path)
        if isinstance(node, set) or node is None:
            self.call(node or {errno.ENOENT}, fn, path)
            return None
        return node

    def draw_path(self, data, kinds=None, new=1, existing=2, anywhere=1):
        """A path: an existing node (of kinds), a child of an existing dir
        (often a new name) or any path in the small universe; the weights
        say how often each is tried."""
        nodes = [p for p, n in self.walk()[1:] if kinds is None or n.kind in kinds]
        dirs = [p for p, n in self.walk() if isinstance(n, MDir)
                and p.count("/") < MAX_DEPTH]
        options = [paths_universe] * anywhere
        if nodes:
            options += [st.sampled_from(nodes)] * existing
        if dirs:
            options += [st.tuples(st.sampled_from(dirs), st.sampled_from(NAMES))
                        .map(lambda t: join(*t))] * new
        return data.draw(st.one_of(options))

    def call(self, expected, fn, *args):
        """Calls fn; expected is None (success) or a set of errnos."""
        desc = "%s%r" % (fn.__name__, args)
        desc = desc if len(desc) < 200 else desc[:200] + "..."
        try:
            res = fn(*args)
        except OSError as e:
            event("%s -> %s" % (fn.__name__, ename(e.errno)))
            if not expected:
                raise AssertionError("%s failed with %s; the model expects success"
                                     % (desc, ename(e.errno))) from e
            assert e.errno in expected, "%s: %s, the model expects one of %s" % (
                desc, ename(e.errno), sorted(ename(x) for x in expected))
            return e
        event("%s -> ok" % fn.__name__)
        assert not expected, "%s succeeded; the model expects %s" % (
            desc, sorted(ename(x) for x in expected))
        return res

    @staticmethod
    def failed(res):
        return isinstance(res, OSError)

    # ---- a random starting tree (so most examples have work to do)

    @initialize(tree=st.lists(st.tuples(paths_universe, st.sampled_from(["dir", "file"])),
                              max_size=12))
    def populate(self, tree):
        for path, kind in tree:
            if self.lookup(path) is not None:
                continue  # exists, or a parent is missing / not a dir
            d, name = self.resolve_parent(path)
            if kind == "dir":
                self.r.mkdir(path, 0o755)
                d.children[name] = MDir(0o755, d)
            else:
                self.r.write_file(path, gen_bytes(path, 5000), 0o644)
                f = MFile(0o644)
                f.nlink = 1
                f.data[:] = gen_bytes(path, 5000)
                d.children[name] = f

    # ---- namespace rules

    @rule(data=st.data(), mode=st.sampled_from(DIR_MODES))
    def mkdir(self, data, mode):
        made = self.call_new(data, self.r.mkdir, lambda path: (path, mode))
        if made:
            d, name, _ = made
            d.children[name] = MDir(mode, d)

    @rule(data=st.data(), mode=st.sampled_from(FILE_MODES))
    def create(self, data, mode):
        made = self.call_new(data, self.r.create, lambda path: (path, mode))
        if not made:
            return
        d, name, ino = made
        f = MFile(mode)
        f.nlink = 1
        f.ino = ino
        d.children[name] = f

    @rule(data=st.data())
    def unlink(self, data):
        path = self.draw_path(data, new=0, existing=3)
        node = self.existing_node(path, self.r.unlink)
        if node is None:
            return
        if isinstance(node, MDir):
            self.call({errno.EISDIR, errno.EPERM}, self.r.unlink, path)
            return
        self.call(None, self.r.unlink, path)
        d, name = self.resolve_parent(path)
        del d.children[name]
        node.nlink -= 1

    @rule(data=st.data())
    def rmdir(self, data):
        path = self.draw_path(data, kinds={"dir"}, new=0, existing=4)
        node = self.existing_node(path, self.r.rmdir)
        if node is None:
            return
        if not isinstance(node, MDir):
            self.call({errno.ENOTDIR}, self.r.rmdir, path)
            return
        if node.children:
            self.call({errno.ENOTEMPTY}, self.r.rmdir, path)
            return
        self.call(None, self.r.rmdir, path)
        d, name = self.resolve_parent(path)
        del d.children[name]

    @rule(data=st.data(), flags=st.sampled_from([0, 0, RENAME_NOREPLACE, RENAME_EXCHANGE]))
    def rename(self, data, flags):
        src = self.draw_path(data, new=0, existing=4)
        dst = self.draw_path(data, new=2)
        expected = self.rename_errors(src, dst, flags)
        self.call(expected or None, self.r.rename, src, dst, flags)
        if expected:
            return
        sdir, sname = self.resolve_parent(src)
        ddir, dname = self.resolve_parent(dst)
        snode = sdir.children[sname]
        dnode = ddir.children.get(dname)
        if dnode is snode:
            return  # same inode (or same path): no-op
        if flags & RENAME_EXCHANGE:
            sdir.children[sname], ddir.children[dname] = dnode, snode
            for n, parent in ((dnode, sdir), (snode, ddir)):
                if isinstance(n, MDir):
                    n.parent = parent
            return
        if dnode is not None and not isinstance(dnode, MDir):
            dnode.nlink -= 1
        del sdir.children[sname]
        ddir.children[dname] = snode
        if isinstance(snode, MDir):
            snode.parent = ddir

    @rule(data=st.data(), flags=st.sampled_from([0, RENAME_NOREPLACE, RENAME_EXCHANGE]))
    def rename_more(self, data, flags):
        """Rename is where most namespace bugs hide: draw it twice as often."""
        self.rename(data, flags)

    def rename_errors(self, src, dst, flags):
        errs = set()
        sres = self.resolve_parent(src)
        dres = self.resolve_parent(dst)
        for res in (sres, dres):
            if isinstance(res, set):
                errs |= res
        if errs:
            if not isinstance(sres, set) and sres[1] not in sres[0].children:
                errs.add(errno.ENOENT)
            return errs
        sdir, sname = sres
        ddir, dname = dres
        snode = sdir.children.get(sname)
        if snode is None:
            return {errno.ENOENT}
        dnode = ddir.children.get(dname)
        if flags & RENAME_NOREPLACE and dnode is not None:
            errs.add(errno.EEXIST)
        if flags & RENAME_EXCHANGE and dnode is None:
            errs.add(errno.ENOENT)
        if dnode is snode:
            return errs
        if isinstance(snode, MDir) and is_within(ddir, snode):
            errs.add(errno.EINVAL)  # into its own subtree
        if isinstance(dnode, MDir) and is_within(sdir, dnode):
            # the target is an ancestor of the source
            errs.add(errno.EINVAL if flags & RENAME_EXCHANGE else errno.ENOTEMPTY)
        if dnode is not None and not flags & RENAME_EXCHANGE:
            if isinstance(snode, MDir) and not isinstance(dnode, MDir):
                errs.add(errno.ENOTDIR)
            if not isinstance(snode, MDir) and isinstance(dnode, MDir):
                errs.add(errno.EISDIR)
            if (isinstance(snode, MDir) and isinstance(dnode, MDir)
                    and dnode.children):
                errs.add(errno.ENOTEMPTY)
        if errno.ENOTEMPTY in errs:
            errs.add(errno.EEXIST)  # POSIX allows either
        return errs

    @rule(data=st.data())
    def link(self, data):
        src = self.draw_path(data, kinds={"file", "dir"}, new=0, existing=4)
        dst = self.draw_path(data, new=2)
        snode = self.lookup(src)
        dres = self.resolve_parent(dst)
        errs = set()
        if isinstance(snode, set):
            errs |= snode
        elif snode is None:
            errs.add(errno.ENOENT)
        elif isinstance(snode, MLink):
            return  # link(2) on a symlink: not modelled
        if isinstance(dres, set):
            errs |= dres
        elif dres[1] in dres[0].children:
            errs.add(errno.EEXIST)
        if isinstance(snode, MDir):
            errs.add(errno.EPERM)
        if errs:
            self.call(errs, self.r.link, src, dst)
            return
        self.call(None, self.r.link, src, dst)
        ddir, dname = dres
        ddir.children[dname] = snode
        snode.nlink += 1

    @rule(data=st.data(), dest=symlink_targets)
    def symlink(self, data, dest):
        made = self.call_new(data, self.r.symlink, lambda path: (dest, path))
        if made:
            d, name, _ = made
            d.children[name] = MLink(dest)

    @rule(data=st.data())
    def readlink(self, data):
        path = self.draw_path(data)
        node = self.existing_node(path, self.r.readlink)
        if node is None:
            return
        if not isinstance(node, MLink):
            self.call({errno.EINVAL}, self.r.readlink, path)
        else:
            assert self.call(None, self.r.readlink, path) == node.target

    # ---- data rules

    def file_or_error(self, path, dir_err=errno.EISDIR):
        """The MFile at path (following: a dangling symlink is ENOENT),
        or the set of errnos an operation on path must give."""
        node = self.lookup(path)
        if isinstance(node, set):
            return node
        if node is None or isinstance(node, MLink):
            return {errno.ENOENT}
        if isinstance(node, MDir):
            return {dir_err}
        return node

    @rule(data=st.data(), off=offsets, n=lengths, seed=st.integers(0, 1 << 30))
    def pwrite(self, data, off, n, seed):
        path = self.draw_path(data, kinds={"file"})
        node = self.file_or_error(path)
        if isinstance(node, set):
            if errno.EISDIR not in node:
                self.call(node, self.r.open, path)
            return
        buf = gen_bytes(seed, n)
        f = self.call(None, self.r.open, path)
        try:
            assert f.pwrite(buf, off) == n
        finally:
            f.close()
        if n:
            end = off + n
            if len(node.data) < end:
                node.data.extend(bytes(end - len(node.data)))
            node.data[off:end] = buf

    @rule(data=st.data(), n=lengths, seed=st.integers(0, 1 << 30))
    def append(self, data, n, seed):
        path = self.draw_path(data, kinds={"file"})
        node = self.file_or_error(path)
        if isinstance(node, set):
            return
        buf = gen_bytes(seed, n)
        f = self.call(None, self.r.open, path)
        try:
            pos = f.append(buf)
        finally:
            f.close()
        assert pos == len(node.data), "append went to %d, size was %d" % (pos, len(node.data))
        node.data.extend(buf)

    @rule(data=st.data(), n=lengths, seed=st.integers(0, 1 << 30),
          mode=st.sampled_from(FILE_MODES))
    def write_file(self, data, n, seed, mode):
        path = self.draw_path(data, kinds={"file", "dir"})
        node = self.lookup(path)
        buf = gen_bytes(seed, n)
        if isinstance(node, set):
            self.call(node, self.r.write_file, path, buf, mode)
            return
        if isinstance(node, MLink):
            return  # would create the target: not modelled
        if isinstance(node, MDir):
            self.call({errno.EISDIR}, self.r.write_file, path, buf, mode)
            return
        self.call(None, self.r.write_file, path, buf, mode)
        if node is None:
            d, name = self.resolve_parent(path)
            node = MFile(mode)
            node.nlink = 1
            d.children[name] = node
        node.data[:] = buf

    @rule(data=st.data(), size=sizes, via_handle=st.booleans())
    def truncate(self, data, size, via_handle):
        path = self.draw_path(data, kinds={"file"})
        node = self.file_or_error(path)
        if isinstance(node, set):
            self.call(node, self.r.truncate, path, size)
            return
        if via_handle:
            f = self.call(None, self.r.open, path)
            try:
                f.truncate(size)
            finally:
                f.close()
        else:
            self.call(None, self.r.truncate, path, size)
        if size < len(node.data):
            del node.data[size:]
        else:
            node.data.extend(bytes(size - len(node.data)))

    @rule(data=st.data(), off=offsets, n=lengths)
    def pread(self, data, off, n):
        path = self.draw_path(data, kinds={"file"})
        node = self.file_or_error(path)
        if isinstance(node, set):
            self.call(node, self.r.read_file, path)
            return
        f = self.call(None, self.r.open, path)
        try:
            got = f.pread(n, off)
            assert f.size == len(node.data)
        finally:
            f.close()
        exp = bytes(node.data[off:off + n])
        assert got == exp, "pread(%d, %d) of %s: %d bytes, expected %d%s" % (
            n, off, path, len(got), len(exp),
            "" if len(got) != len(exp) else " (contents differ)")

    # ---- attribute rules

    @rule(data=st.data(), mode=st.sampled_from(CHMOD_MODES))
    def chmod(self, data, mode):
        path = self.draw_path(data)
        node = self.lookup(path)
        if isinstance(node, set) or node is None or isinstance(node, MLink):
            self.call(node if isinstance(node, set) else {errno.ENOENT},
                      self.r.chmod, path, mode)
            return
        self.call(None, self.r.chmod, path, mode)
        node.mode = mode

    @rule(data=st.data(), uid=st.integers(0, 70000), gid=st.integers(0, 70000))
    def chown(self, data, uid, gid):
        path = self.draw_path(data, kinds={"file", "dir"})
        node = self.lookup(path)
        if isinstance(node, set) or node is None or isinstance(node, MLink):
            self.call(node if isinstance(node, set) else {errno.ENOENT},
                      self.r.chown, path, uid, gid)
            return
        self.call(None, self.r.chown, path, uid, gid)
        node.uid, node.gid = uid, gid

    @rule(data=st.data(), atime=st.integers(0, 1 << 62), mtime=st.integers(0, 1 << 62))
    def utime(self, data, atime, mtime):
        path = self.draw_path(data, kinds={"file", "dir"})
        node = self.lookup(path)
        if isinstance(node, set) or node is None or isinstance(node, MLink):
            self.call(node if isinstance(node, set) else {errno.ENOENT},
                      self.r.utime, path, atime, mtime)
            return
        self.call(None, self.r.utime, path, atime, mtime)
        s = self.r2.stat(path)
        assert (s.st_atime_ns, s.st_mtime_ns) == (atime, mtime), \
            "utime(%s): stat shows atime %d mtime %d" % (path, s.st_atime_ns, s.st_mtime_ns)

    # ---- listing and hosts

    @rule(data=st.data(), chunk=st.integers(1, 5))
    def readdir_chunked(self, data, chunk):
        path = self.draw_path(data, kinds={"dir"})
        node = self.lookup(path)
        if not isinstance(node, MDir):
            if node is None or isinstance(node, set):
                self.call(node or {errno.ENOENT}, self.r.listdir, path)
            elif isinstance(node, MLink):
                self.call({errno.ENOENT, errno.ENOTDIR}, self.r.listdir, path)
            else:
                self.call({errno.ENOTDIR}, self.r.listdir, path)
            return
        seen = {}
        pos, last = 0, -1
        for _ in range(1000):
            entries, nxt = self.r.readdir_chunk(path, pos, chunk)
            assert len(entries) <= chunk
            for name, ino, dtype, epos in entries:
                if name in (".", ".."):
                    continue
                assert name not in seen, "readdir %s returned %r twice" % (path, name)
                assert epos >= last, "readdir %s: positions go backwards" % path
                last = epos
                seen[name] = (ino, dtype)
            if nxt is None:
                break
            assert entries, "readdir_chunk returned nothing but no EOF"
            pos = nxt
        else:
            raise AssertionError("readdir of %s did not reach EOF" % path)
        assert sorted(seen) == sorted(node.children)
        for name, (ino, dtype) in seen.items():
            child = node.children[name]
            if child.ino is not None:
                assert ino == child.ino, "readdir ino of %s/%s" % (path, name)
            assert dtype in (DT[child.kind], 0), "readdir d_type of %s/%s: %d" % (
                path, name, dtype)

    @rule()
    def swap_hosts(self):
        self.r, self.r2 = self.r2, self.r

    @rule()
    def reopen(self):
        """The acting host leaves; a new one joins (persistence)."""
        self.r.close()
        self.r = daxfs.Region(self.path)

    @rule()
    def reclaim(self):
        self.r.reclaim()
        self.r2.reclaim()

    # ---- whole-tree comparison

    @invariant()
    def tree_matches(self):
        self.steps += 1
        reg = self.r if self.steps % 2 else self.r2
        seen_inos = {}
        for path, node in self.walk():
            if isinstance(node, MDir):
                names = [n for n in reg.listdir(path) if n not in (".", "..")]
                assert sorted(names) == sorted(node.children), \
                    "listdir(%s) = %s, model %s" % (path, sorted(names), sorted(node.children))
            s = reg.lstat(path)
            kind = {st_mod.S_IFDIR: "dir", st_mod.S_IFREG: "file",
                    st_mod.S_IFLNK: "link"}.get(st_mod.S_IFMT(s.st_mode))
            assert kind == node.kind, "%s is a %s, model: %s" % (path, kind, node.kind)
            if node.ino is None:
                node.ino = s.st_ino
            assert s.st_ino == node.ino, "%s: ino %d, was %d" % (path, s.st_ino, node.ino)
            other = seen_inos.setdefault(s.st_ino, node)
            assert other is node, "%s shares ino %d with another object" % (path, s.st_ino)
            if not isinstance(node, MLink):
                assert st_mod.S_IMODE(s.st_mode) == node.mode, "%s: mode %o, model %o" % (
                    path, st_mod.S_IMODE(s.st_mode), node.mode)
            assert s.st_nlink == node.nlink, "%s: nlink %d, model %d" % (
                path, s.st_nlink, node.nlink)
            if node.uid is None:
                node.uid, node.gid = s.st_uid, s.st_gid
            assert (s.st_uid, s.st_gid) == (node.uid, node.gid), "%s: owner" % path
            if isinstance(node, MFile):
                assert s.st_size == len(node.data), "%s: size %d, model %d" % (
                    path, s.st_size, len(node.data))
                got = reg.read_file(path)
                if got != node.data:
                    bad = next((i for i in range(min(len(got), len(node.data)))
                                if got[i] != node.data[i]), min(len(got), len(node.data)))
                    raise AssertionError("%s: contents differ at offset %d (%d bytes read, "
                                         "model %d)" % (path, bad, len(got), len(node.data)))
            elif isinstance(node, MLink):
                assert s.st_size == len(node.target.encode())
                assert reg.readlink(path) == node.target


TestModel = DaxfsMachine.TestCase


# ------------------------------------------------------------ direct tests

def test_sparse_beyond_4gib(region):
    """Files are not capped near 4 GiB; holes read zero; space stays small."""
    with daxfs.Region(region) as r:
        before = r.statfs()["used_bytes"]
        r.create("/sparse")
        f = r.open("/sparse")
        try:
            marks = {5 << 30: b"five-gib", (1 << 40) + 123: b"one-tib", 4095: b"x" * 2}
            for off, buf in marks.items():
                assert f.pwrite(buf, off) == len(buf)
            end = (1 << 40) + 123 + len(b"one-tib")
            assert f.size == end
            for off, buf in marks.items():
                assert f.pread(len(buf), off) == buf
            assert f.pread(64, (3 << 30) + 7) == bytes(64)
            assert f.pread(100, end - 10) == bytes(3) + b"one-tib"
        finally:
            f.close()
        s = r.stat("/sparse")
        assert s.st_size == end
        assert s.st_blocks * 512 < 1 << 20, "sparse file uses %d blocks" % s.st_blocks
        assert r.statfs()["used_bytes"] - before < 8 << 20
        r.truncate("/sparse", 4096)
        r.truncate("/sparse", 5 << 30)  # re-extended: old bytes must not return
        f = r.open("/sparse")
        try:
            assert f.pread(8, 5 << 30) == b""  # exactly at EOF
            assert f.pread(8, (5 << 30) - 8) == bytes(8)
            assert f.pread(2, 4095) == b"x\x00"
        finally:
            f.close()


def test_file_size_limit(region):
    with daxfs.Region(region) as r:
        r.create("/big")
        f = r.open("/big")
        try:
            with pytest.raises(OSError) as ei:
                f.pwrite(b"z", 1 << 48)
            assert ei.value.errno in (errno.EFBIG, errno.EINVAL)
        finally:
            f.close()
        with pytest.raises(OSError) as ei:
            r.truncate("/big", (1 << 48) + 1)
        assert ei.value.errno in (errno.EFBIG, errno.EINVAL)


def test_name_length(region):
    with daxfs.Region(region) as r:
        r.create("/" + "n" * 255)
        assert r.listdir("/") == ["n" * 255]
        with pytest.raises(OSError) as ei:
            r.create("/" + "n" * 256)
        assert ei.value.errno == errno.ENAMETOOLONG


def test_makedirs_exists(region):
    with daxfs.Region(region) as r:
        r.makedirs("/x/y/z")
        assert r.exists("/x/y/z") and not r.exists("/x/q")
        r.makedirs("/x/y/z", exist_ok=True)
        with pytest.raises(OSError) as ei:
            r.makedirs("/x/y/z", exist_ok=False)
        assert ei.value.errno == errno.EEXIST
        r.mknod("/x/fifo", st_mod.S_IFIFO | 0o600)
        assert st_mod.S_ISFIFO(r.lstat("/x/fifo").st_mode)
        r.mknod("/x/chr", st_mod.S_IFCHR | 0o600, rdev=(1 << 8) | 3)
        assert r.lstat("/x/chr").st_rdev == (1 << 8) | 3
