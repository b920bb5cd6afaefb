#!/usr/bin/env python3
"""vm/diff_kguest.py - guest side of tests/vm/test_kernel_diff.py: the randomized
differential test of tests/test_preload_diff.py, against daxfs.ko.

Runs inside a QEMU guest as `host python3 vm/diff_kguest.py diff MNT [SEEDS [OPS [FIRST TAG]]]`
through vm/guest/daxfs-k.sh's `df:` step.  The call sequences of
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

HERE = os.path.dirname(os.path.abspath(__file__))
OPS_SCRIPT = os.path.join(HERE, "..", "tests", "helpers", "preload_diff_ops.py")
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


def run_ops(d, ops, seeds):
    os.makedirs(d, exist_ok=True)
    p = subprocess.run([sys.executable, OPS_SCRIPT, d, str(ops)] + [str(s) for s in seeds],
                       capture_output=True, text=True, timeout=1800)
    if p.returncode:
        print(f"generator in {d} failed ({p.returncode}): {short(p.stderr[-1500:])}", flush=True)
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


def scen_diff(mnt, *args):
    """scen_diff(MNT, [fam=F1+F2...] [uid=N] [keep=1] [SEEDS [OPS [FIRST TAG]]]): seeds
    first..first+nseeds-1, in MNT/diff<tag>*: two guests on one region (two
    hosts) run at once, each with its own tag and seeds.  fam: the
    generator's DAXFS_DIFF_FAMILIES (its further calls), uid: its
    DAXFS_DIFF_UID (the calls as that user), keep=1: DAXFS_DIFF_KEEP_REMOVED
    (descriptors of removed directories stay open), for both runs."""
    keys = {a.split("=", 1)[0]: a.split("=", 1)[1] for a in args if "=" in a}
    if "fam" in keys:
        # '+' between them: the guest's step arguments hold no ','
        os.environ["DAXFS_DIFF_FAMILIES"] = keys["fam"].replace("+", ",")
    if "uid" in keys:
        os.environ["DAXFS_DIFF_UID"] = keys["uid"]
    if keys.get("keep") == "1":
        os.environ["DAXFS_DIFF_KEEP_REMOVED"] = "1"
    print("call families: %s, user %s" % (
        os.environ.get("DAXFS_DIFF_FAMILIES") or "-", keys.get("uid", "root")),
        flush=True)
    pos = [a for a in args if "=" not in a]
    nseeds, ops, first, tag = (pos + ["60", "300", "1", ""][len(pos):])[:4]
    seeds = list(range(int(first), int(first) + int(nseeds)))
    tmp = tempfile.mkdtemp(prefix="diff-tmpfs-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m,mode=755", "none", tmp],
                   check=True)
    try:
        for b in range(0, len(seeds), BATCH):
            batch = seeds[b:b + BATCH]
            trc, want = run_ops(os.path.join(tmp, "t%d" % b), int(ops), batch)
            drc, got = run_ops(os.path.join(mnt, "diff%s%d" % (tag, b)), int(ops), batch)
            if trc or drc:
                result(diff="fail", diff_rc=f"{trc}/{drc}")
                return
            for s in batch:
                if want.get(s) != got.get(s):
                    first_difference(s, want.get(s, []), got.get(s, []))
                    result(diff="fail", diff_seed=s)
                    return
            print(f"seeds {batch[0]}-{batch[-1]} match", flush=True)
    finally:
        subprocess.run(["umount", tmp])
        os.rmdir(tmp)
    result(diff="ok", diff_seeds=len(seeds))


SCENARIOS = {"diff": scen_diff}


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in SCENARIOS:
        print(__doc__)
        sys.exit(2)
    SCENARIOS[sys.argv[1]](sys.argv[2], *sys.argv[3:])


if __name__ == "__main__":
    main()
