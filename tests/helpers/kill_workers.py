"""Worker and log replay for tests/test_kill.py.

A worker (its own process and host) runs random operations in its own
directory /w<wid> and appends records to /shared/log.  Around every
operation it writes to its own log file, each line fsync'd before going on:

    B <seq> <json op>       about to start the operation
    E <seq> <json result>   the operation returned success
    D <json message>        the host was declared dead (ESTALE): it stops
    X <traceback>           the worker failed (a product or test bug)

A worker killed with SIGKILL, or declared dead, leaves at most one B
without an E: that operation may or may not have happened.  replay() turns a log into the
expected state: which names must exist, which may, and with what contents.
"""

import errno
import json
import os
import random
import sys
import traceback

from helpers import content, env

daxfs = env.daxfs

OWN_REC = 128  # record sizes: own log, shared log
SHARED_REC = 200
SIZES = [0, 1, 100, 4095, 4096, 5000, 20000, 70000]
DECLARED_DEAD_EXIT = 75  # the worker's host was declared dead (a D line)


class Log:
    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def line(self, text):
        os.write(self.fd, (text + "\n").encode())
        os.fsync(self.fd)


def kill_worker(wid, path, logpath, seed, stop):
    log = Log(logpath)
    try:
        _work(wid, path, log, seed, stop)
    except OSError as e:
        if e.errno != errno.ESTALE:
            log.line("X " + json.dumps(traceback.format_exc()))
            raise
        # Silent for longer than its lease (a starved process on a loaded
        # machine: docs/hosts.md), this host was declared dead, recovered
        # and fenced: its operation in flight may or may not have happened,
        # exactly as if it had been killed, and its open files are stale.
        # It ends like a killed host; the parent starts a replacement.
        log.line("D " + json.dumps(str(e)))
        sys.exit(DECLARED_DEAD_EXIT)
    except BaseException:
        log.line("X " + json.dumps(traceback.format_exc()))
        raise


def _work(wid, path, log, seed, stop):
    rng = random.Random("%d/%d" % (seed, wid))
    base = "/w%d" % wid
    files = {}  # name -> inode id
    dirs = set()
    nextid = [0]
    seq = 0
    own_seq = shared_seq = 0

    def fresh(prefix):
        nextid[0] += 1
        d = rng.choice([""] + sorted(dirs))
        return (d + "/" if d else "") + "%s%d" % (prefix, nextid[0])

    with daxfs.Region(path) as r:
        log.line("B 0 " + json.dumps({"op": "setup"}))
        r.mkdir(base)
        r.create(base + "/log")
        own = r.open(base + "/log")
        shared = r.open("/shared/log")
        log.line("E 0 {}")
        while not stop.is_set():
            seq += 1
            p = rng.random()
            names = sorted(files)
            if len(names) > 40 and p < 0.5:  # bound the working set
                op = {"op": "unlink", "name": rng.choice(names)}
            elif p < 0.22 or not names:
                op = {"op": "write", "name": fresh("f"), "size": rng.choice(SIZES),
                      "tag": "w%d-%d" % (wid, seq)}
            elif p < 0.30:
                op = {"op": "write", "name": rng.choice(names), "size": rng.choice(SIZES),
                      "tag": "w%d-%d" % (wid, seq)}
            elif p < 0.40:
                op = {"op": "append_own", "seq": own_seq}
                own_seq += 1
            elif p < 0.50:
                op = {"op": "append_shared", "seq": shared_seq}
                shared_seq += 1
            elif p < 0.62:
                dst = fresh("f") if rng.random() < 0.6 else rng.choice(names)
                op = {"op": "rename", "src": rng.choice(names), "dst": dst}
            elif p < 0.72:
                op = {"op": "unlink", "name": rng.choice(names)}
            elif p < 0.76 and len(dirs) < 3:
                op = {"op": "mkdir", "name": "d%d" % seq}
            elif p < 0.80 and dirs:
                d = rng.choice(sorted(dirs))
                op = {"op": "rename_dir", "src": d, "dst": "d%d" % seq}
            elif p < 0.88:
                op = {"op": "link", "src": rng.choice(names), "dst": fresh("l")}
            else:
                op = {"op": "truncate", "name": rng.choice(names),
                      "size": rng.choice([0, 1, 100, 4096, 5000])}
            log.line("B %d %s" % (seq, json.dumps(op)))
            res = _do(r, base, op, own, shared, wid)
            log.line("E %d %s" % (seq, json.dumps(res)))
            # keep the worker's own view in step (for choosing operations)
            kind = op["op"]
            if kind == "write":
                files[op["name"]] = files.get(op["name"], seq)
            elif kind == "rename" and files.get(op["dst"]) != files[op["src"]]:
                files[op["dst"]] = files.pop(op["src"])  # (same inode: no-op)
            elif kind == "unlink":
                del files[op["name"]]
            elif kind == "mkdir":
                dirs.add(op["name"])
            elif kind == "rename_dir":
                dirs.discard(op["src"])
                dirs.add(op["dst"])
                pre = op["src"] + "/"
                for n in [n for n in files if n.startswith(pre)]:
                    files[op["dst"] + "/" + n[len(pre):]] = files.pop(n)
            elif kind == "link":
                files[op["dst"]] = files[op["src"]]
        own.close()
        shared.close()


def _do(r, base, op, own, shared, wid):
    kind = op["op"]
    if kind == "write":
        r.write_file("%s/%s" % (base, op["name"]), content.make(op["tag"], op["size"]))
        return {}
    if kind == "append_own":
        return {"off": own.append(content.record(wid, op["seq"], OWN_REC))}
    if kind == "append_shared":
        return {"off": shared.append(content.record(wid, op["seq"], SHARED_REC))}
    if kind in ("rename", "rename_dir"):
        r.rename("%s/%s" % (base, op["src"]), "%s/%s" % (base, op["dst"]))
        return {}
    if kind == "unlink":
        r.unlink("%s/%s" % (base, op["name"]))
        return {}
    if kind == "mkdir":
        r.mkdir("%s/%s" % (base, op["name"]))
        return {}
    if kind == "link":
        r.link("%s/%s" % (base, op["src"]), "%s/%s" % (base, op["dst"]))
        return {}
    if kind == "truncate":
        r.truncate("%s/%s" % (base, op["name"]), op["size"])
        return {}
    raise AssertionError("unknown op %r" % op)


# ------------------------------------------------------------------ replay

class Expected:
    """What one worker's log promises about the region."""

    def __init__(self, wid):
        self.wid = wid
        self.files = {}  # name -> inode key
        self.inodes = {}  # key -> ("tag", tag, size) or ("=", bytes)
        self.dirs = set()
        self.maybe = set()  # names that may or may not exist
        self.unsure_inodes = set()  # contents not known
        self.unsure_nlink = set()  # link count not known
        self.own = {}  # seq -> offset in /w<wid>/log
        self.shared = {}  # seq -> offset in /shared/log
        self.setup = False
        self.done = 0  # operations that returned success
        self.error = None


def parse_log(path):
    """[(seq, op, result or None)]; result None only for a last B."""
    out = []
    pending = {}
    error = None
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:  # killed before it logged anything
        return out, None
    lines = raw.split(b"\n")
    if not raw.endswith(b"\n"):
        lines = lines[:-1]  # cut by the kill: ignore the torn line
    for ln in lines:
        if not ln:
            continue
        kind, _, rest = ln.decode().partition(" ")
        if kind == "X":
            error = json.loads(rest)
            continue
        if kind == "D":  # declared dead: the last B stays in doubt
            continue
        seq, _, payload = rest.partition(" ")
        seq = int(seq)
        if kind == "B":
            pending[seq] = json.loads(payload)
            out.append([seq, pending[seq], None])
        elif kind == "E":
            assert out and out[-1][0] == seq, "log out of order at E %d" % seq
            out[-1][2] = json.loads(payload)
    unfinished = [o for o in out if o[2] is None]
    assert len(unfinished) <= 1 and (not unfinished or unfinished[0] is out[-1]), \
        "%s: operations without a result in the middle of the log" % path
    return out, error


def replay(wid, logpath):
    ex = Expected(wid)
    entries, ex.error = parse_log(logpath)
    key = 0
    for seq, op, res in entries:
        sure = res is not None
        kind = op["op"]
        if sure:
            ex.done += 1
        if kind == "setup":
            ex.setup = sure
            continue
        if not sure:
            _mark_unsure(ex, op)
            continue
        if kind == "write":
            name = op["name"]
            if name in ex.files:
                k = ex.files[name]
            else:
                key += 1
                k = ex.files[name] = key
            ex.inodes[k] = ("tag", op["tag"], op["size"])
        elif kind == "append_own":
            ex.own[op["seq"]] = res["off"]
        elif kind == "append_shared":
            ex.shared[op["seq"]] = res["off"]
        elif kind == "rename":
            if ex.files.get(op["dst"]) != ex.files[op["src"]]:  # same inode: no-op
                ex.files[op["dst"]] = ex.files.pop(op["src"])
        elif kind == "unlink":
            del ex.files[op["name"]]
        elif kind == "mkdir":
            ex.dirs.add(op["name"])
        elif kind == "rename_dir":
            ex.dirs.discard(op["src"])
            ex.dirs.add(op["dst"])
            pre = op["src"] + "/"
            for n in [n for n in ex.files if n.startswith(pre)]:
                ex.files[op["dst"] + "/" + n[len(pre):]] = ex.files.pop(n)
        elif kind == "link":
            ex.files[op["dst"]] = ex.files[op["src"]]
        elif kind == "truncate":
            k = ex.files[op["name"]]
            cur = expected_bytes(ex, k)
            n = op["size"]
            ex.inodes[k] = ("=", cur[:n] + bytes(max(0, n - len(cur))))
    return ex


def _mark_unsure(ex, op):
    kind = op["op"]
    if kind == "setup":
        return
    for field in ("name", "src", "dst"):
        if op.get(field) in ex.files:
            ex.unsure_nlink.add(ex.files[op[field]])
    if kind in ("write", "truncate"):
        ex.maybe.add(op["name"])
        if op["name"] in ex.files:
            ex.unsure_inodes.add(ex.files[op["name"]])
    elif kind == "rename":
        ex.maybe |= {op["src"], op["dst"]}
        if op["dst"] in ex.files:
            ex.unsure_inodes.add(ex.files[op["dst"]])
    elif kind == "unlink":
        ex.maybe.add(op["name"])
    elif kind == "mkdir":
        ex.maybe.add(op["name"])
    elif kind == "rename_dir":
        ex.maybe |= {op["src"], op["dst"]}
        for pre in (op["src"] + "/", op["dst"] + "/"):
            for n in list(ex.files):
                if n.startswith(pre):
                    ex.maybe.add(n)
                    ex.maybe.add(op["dst"] + "/" + n[len(pre):])
    elif kind == "link":
        ex.maybe.add(op["dst"])


def expected_bytes(ex, key):
    ino = ex.inodes[key]
    if ino[0] == "=":
        return ino[1]
    return content.make(ino[1], ino[2])


def walk(r, base):
    """{relative path: stat} of everything below base except 'log'."""
    out = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        for name in r.listdir(base + ("/" + rel if rel else "")):
            p = (rel + "/" if rel else "") + name
            if p == "log":
                continue
            s = r.lstat("%s/%s" % (base, p))
            out[p] = s
            if (s.st_mode & 0o170000) == 0o040000:
                stack.append(p)
    return out


def verify(r, ex, exact_nlink):
    """Checks one worker's promises against region r."""
    base = "/w%d" % ex.wid
    if not ex.setup:
        return
    actual = walk(r, base)
    expected = set(ex.files) | ex.dirs
    sure = expected - ex.maybe
    missing = sure - set(actual)
    assert not missing, "w%d: logged names missing: %s" % (ex.wid, sorted(missing)[:8])
    extra = set(actual) - expected - ex.maybe
    assert not extra, "w%d: names that should be gone: %s" % (ex.wid, sorted(extra)[:8])
    by_key = {}
    for name, k in ex.files.items():
        if name in ex.maybe:
            continue
        by_key.setdefault(k, []).append(name)
        if k in ex.unsure_inodes:
            continue
        got = r.read_file("%s/%s" % (base, name))
        exp = expected_bytes(ex, k)
        if got != exp:
            bad = next((i for i in range(min(len(got), len(exp))) if got[i] != exp[i]),
                       min(len(got), len(exp)))
            raise AssertionError("w%d/%s: %d bytes, expected %d; first difference at %d"
                                 % (ex.wid, name, len(got), len(exp), bad))
    for k, names in by_key.items():
        inos = {actual[n].st_ino for n in names}
        assert len(inos) == 1, "w%d: hard links %s are different inodes" % (ex.wid, names)
        all_names = [n for n, kk in ex.files.items() if kk == k]
        if len(all_names) == len(names) and k not in ex.unsure_nlink:
            nl = actual[names[0]].st_nlink
            if exact_nlink:
                assert nl == len(names), "w%d/%s: nlink %d, %d names" % (
                    ex.wid, names[0], nl, len(names))
            else:  # a crash may leave counts high, never low
                assert nl >= len(names), "w%d/%s: nlink %d < %d names" % (
                    ex.wid, names[0], nl, len(names))
    data = r.read_file(base + "/log")
    for seq, off in ex.own.items():
        rec = content.parse_record(data[off:off + OWN_REC])
        assert rec == (ex.wid, seq), "w%d/log: record %d not intact at %d" % (ex.wid, seq, off)


def verify_shared(r, exps):
    data = r.read_file("/shared/log")
    for ex in exps:
        for seq, off in ex.shared.items():
            rec = content.parse_record(data[off:off + SHARED_REC])
            assert rec == (ex.wid, seq), \
                "/shared/log: record (%d, %d) not intact at %d" % (ex.wid, seq, off)
    # no record may appear twice (an append reservation handed out twice)
    seen = set()
    for off in range(0, len(data) - SHARED_REC + 1, SHARED_REC):
        rec = content.parse_record(data[off:off + SHARED_REC])
        if rec is not None:
            assert rec not in seen, "/shared/log: record %s twice" % (rec,)
            seen.add(rec)


def count_done(logpath):
    """Operations a worker has finished so far (cheap, for progress)."""
    try:
        with open(logpath, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return 0
    return data.count(b"\nE ") + data.startswith(b"E ")
