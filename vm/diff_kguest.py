#!/usr/bin/env python3
"""vm/diff_kguest.py - guest side of tests/vm/test_kernel_diff.py: the randomized
differential test of tests/test_preload_diff.py, against daxfs.ko.

Runs inside a QEMU guest as `host python3 vm/diff_kguest.py diff MNT [SEEDS [OPS [FIRST TAG]]]`
through vm/guest/daxfs-k.sh's `df:` step (`split` and `peer`: one sequence from two
guests, below).  The call sequences of
tests/helpers/preload_diff_ops.py (seeds 1..SEEDS, OPS calls each) run once in a
tmpfs this script mounts and once in MNT/diff, in the same guest kernel; their
outputs must be the same.  Prints DAXFS-VM-RESULT diff=ok, or diff=fail with the
first differing seed and lines (diff_seed=N; rerun with SEEDS=N... as the host
test's docstring says).
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OPS_SCRIPT = os.path.join(HERE, "..", "tests", "helpers", "preload_diff_ops.py")
sys.path.insert(0, os.path.dirname(OPS_SCRIPT))
import diff_split  # noqa: E402
BATCH = 30


def short(text):
    """The generator's 255-byte names abbreviated, as it prints them."""
    return text.replace("L" * 255, "<L>")


def result(**kv):
    print("DAXFS-VM-RESULT: " + " ".join(f"{k}={v}" for k, v in kv.items()), flush=True)


def sections(out):
    """{seed: [lines]} of one run's output."""
    res, cur = {}, None
    for line in out.splitlines():
        if line.startswith("seed "):
            cur = res.setdefault(int(line.split()[1]), [])
        elif cur is not None:
            cur.append(line)
    return res


def run_ops(d, ops, seeds, split=None):
    os.makedirs(d, exist_ok=True)
    env = dict(os.environ, DAXFS_DIFF_SPLIT=split) if split else None
    p = subprocess.run([sys.executable, OPS_SCRIPT, d, str(ops)] + [str(s) for s in seeds],
                       capture_output=True, text=True, timeout=1800, env=env)
    if p.returncode:
        print(f"generator in {d} failed ({p.returncode}): {short(p.stderr[-1500:])}", flush=True)
    elif os.environ.get("DAXFS_DIFF_SPLIT_TRACE") == "1":
        print(short(p.stderr), flush=True)
    return p.returncode, sections(p.stdout)


def first_difference(seed, a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    print(f"seed {seed}: first difference at line {n}", flush=True)
    for line in a[max(0, n - 6):n]:
        print("    " + line, flush=True)
    print("tmpfs:  " + " | ".join(a[n:n + 3]), flush=True)
    print("daxfs:  " + " | ".join(b[n:n + 3]), flush=True)


def options(args):
    """The keyed step arguments (fam=, uid=, keep=1) into the generator's
    environment; returns the positional ones."""
    keys = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in args if "=" in a}
    if "fam" in keys:
        # '+' between them: the guest's step arguments hold no ','
        os.environ["DAXFS_DIFF_FAMILIES"] = keys["fam"].replace("+", ",")
    if "uid" in keys:
        os.environ["DAXFS_DIFF_UID"] = keys["uid"]
    if keys.get("keep") == "1":
        os.environ["DAXFS_DIFF_KEEP_REMOVED"] = "1"
    if keys.get("trace") == "1":
        # split mode: the peer's calls, printed after the run
        os.environ["DAXFS_DIFF_SPLIT_TRACE"] = "1"
    print("call families: %s, user %s" % (
        os.environ.get("DAXFS_DIFF_FAMILIES") or "-", keys.get("uid", "root")),
        flush=True)
    return [a for a in args if "=" not in a]


def tmpfs_mount():
    tmp = tempfile.mkdtemp(prefix="diff-tmpfs-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m,mode=755", "none", tmp],
                   check=True)
    return tmp


def tmpfs_umount(tmp):
    subprocess.run(["umount", tmp])
    os.rmdir(tmp)


def compare(want, got, seeds):
    """Whether they match; prints and reports the first difference."""
    for s in seeds:
        if want.get(s) != got.get(s):
            first_difference(s, want.get(s, []), got.get(s, []))
            result(diff="fail", diff_seed=s)
            return False
    return True


def scen_diff(mnt, *args):
    """scen_diff(MNT, [fam=F1+F2...] [uid=N] [keep=1] [SEEDS [OPS [FIRST TAG]]]): seeds
    first..first+nseeds-1, in MNT/diff<tag>*: two guests on one region (two
    hosts) run at once, each with its own tag and seeds.  fam: the
    generator's DAXFS_DIFF_FAMILIES (its further calls), uid: its
    DAXFS_DIFF_UID (the calls as that user), keep=1: DAXFS_DIFF_KEEP_REMOVED
    (descriptors of removed directories stay open), for both runs."""
    pos = options(args)
    nseeds, ops, first, tag = (pos + ["60", "300", "1", ""][len(pos):])[:4]
    seeds = list(range(int(first), int(first) + int(nseeds)))
    tmp = tmpfs_mount()
    try:
        for b in range(0, len(seeds), BATCH):
            batch = seeds[b:b + BATCH]
            trc, want = run_ops(os.path.join(tmp, "t%d" % b), int(ops), batch)
            drc, got = run_ops(os.path.join(mnt, "diff%s%d" % (tag, b)), int(ops), batch)
            if trc or drc:
                result(diff="fail", diff_rc=f"{trc}/{drc}")
                return
            if not compare(want, got, batch):
                return
            print(f"seeds {batch[0]}-{batch[-1]} match", flush=True)
    finally:
        tmpfs_umount(tmp)
    result(diff="ok", diff_seeds=len(seeds))


def scen_split(mnt, *args):
    """scen_split(MNT, [fam=...] [uid=N] [keep=1] [trace=1] [SEEDS [OPS [FIRST]]]): one
    sequence per seed from two hosts (docs/testing.md "One tree, two hosts"): this
    guest runs the generator, and about half of its calls by path are made by the
    other guest, whose `peer` step serves MNT/split.mbox.  The reference: the same
    on a tmpfs, with the peer a process of this guest.  trace=1 prints the peer's
    calls (DAXFS_DIFF_SPLIT_TRACE) of both runs."""
    pos = options(args)
    nseeds, ops, first = (pos + ["60", "300", "1"][len(pos):])[:3]
    seeds = list(range(int(first), int(first) + int(nseeds)))
    tmp = tmpfs_mount()
    try:
        with diff_split.peer(os.path.join(tmp, "mbox")) as local:
            trc, want = run_ops(os.path.join(tmp, "t"), int(ops), seeds, split=local)
    finally:
        tmpfs_umount(tmp)
    # the other guest waits for this name
    mb = os.path.join(mnt, "split.mbox")
    diff_split.Mailbox(mb, create=True)
    drc, got = run_ops(os.path.join(mnt, "split"), int(ops), seeds, split=mb)
    if drc:
        diff_split.abandon(mb)
    if trc or drc:
        result(diff="fail", diff_rc=f"{trc}/{drc}")
        return
    if compare(want, got, seeds):
        result(diff="ok", diff_seeds=len(seeds))


def scen_peer(mnt, *args):
    """scen_peer(MNT [uid=N] [WAIT]): the other guest of scen_split: waits up to
    WAIT s (1200) for MNT/split.mbox, then makes the calls it is sent until told to
    end, as user N if given (the generator's)."""
    wait = (options(args) + ["1200"])[0]
    mb = os.path.join(mnt, "split.mbox")
    end = time.monotonic() + float(wait)
    while not os.path.exists(mb):
        if time.monotonic() > end:
            result(peer="fail", peer_why="no mailbox")
            return
        time.sleep(0.2)
    result(peer="ok", peer_calls=diff_split.serve(mb))


SCENARIOS = {"diff": scen_diff, "split": scen_split, "peer": scen_peer}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in SCENARIOS:
        print(__doc__)
        sys.exit(2)
    SCENARIOS[sys.argv[1]](sys.argv[2], *sys.argv[3:])


if __name__ == "__main__":
    main()
