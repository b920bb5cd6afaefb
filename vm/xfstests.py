#!/usr/bin/env python3
"""vm/xfstests.py - xfstests on daxfs.ko in one QEMU guest (docs/testing.md, "xfstests on
daxfs.ko").  The xfstests tree is built outside the repository (docs/testing.md says how);
this script fetches and builds nothing.  It copies the tree to OUT/tree (check writes into
its tree, and the guest sees the host's files read-only), copies vm/xfstests/local.config
and vm/xfstests/exclude into the copy (as local.config and daxfs.exclude), applies
vm/xfstests/rc-daxfs.sed to its common/rc (the daxfs case of _scratch_mkfs_sized) and
vm/xfstests/attr-daxfs.sed to its common/attr (daxfs' maximum ACL count), and boots a guest with two nvdimms that runs vm/guest/daxfs-xfstests.sh.  check's
arguments reach the guest in OUT/check.args (a long list does not fit a kernel command line).

    vm/xfstests.py --xfstests /work/ext/xfstests [--out DIR] [--chunk K/N] [TESTS...]
    (default TESTS: -g generic/quick; needs `make all module` and vm/setup.sh)

--chunk K/N expands the groups named by -g into their tests and runs every N-th from the
K-th (1-based): N runs with their own --out run side by side, each in its own guest with
its own devices.  vm/xfstests_counts.py adds up their check.log files.  --skip-done LOG
(repeatable) leaves out the tests that have a verdict in an earlier run's check.log, so a
run of the whole group can go on, in another session, where the last one stopped.
"""
import argparse
import shutil
import subprocess
import sys
from pathlib import Path

VM = Path(__file__).resolve().parent
REPO = VM.parent
sys.path.insert(0, str(VM))
from cluster import Cluster, Guest  # noqa: E402

MARK = "# daxfs: vm/xfstests/ patch applied"
CHROOT_OUT = "/mnt/out"     # the writable share (OUT), where check runs (chrooted)


# The external tree's files that need a daxfs case, the sed script that adds it, and a
# string that is in the file only once the script applied.
PATCHES = [("common/rc", "rc-daxfs.sed", "\tdaxfs)"),
           ("common/attr", "attr-daxfs.sed", "\tdaxfs)")]


def prepare(tree):
    shutil.copy(VM / "xfstests" / "local.config", tree / "local.config")
    shutil.copy(VM / "xfstests" / "exclude", tree / "daxfs.exclude")
    for rel, script, applied in PATCHES:
        path = tree / rel
        if MARK in path.read_text():
            continue
        subprocess.run(["sed", "-i", "-f", str(VM / "xfstests" / script), str(path)],
                       check=True)
        if applied not in path.read_text():
            sys.exit(f"{script} did not apply to this xfstests version's {rel}")
        with path.open("a") as f:
            f.write("\n" + MARK + "\n")


def group_tests(tree, group):
    """The tests of GROUP ("generic/quick"; "generic/all": every one), sorted:
    a test names its groups on its _begin_fstest line."""
    kind, name = group.split("/")
    out = []
    for t in sorted((tree / "tests" / kind).glob("[0-9]*")):
        if not t.name.isdigit():
            continue
        if name == "all":
            out.append(f"{kind}/{t.name}")
            continue
        for line in t.read_text(errors="replace").splitlines():
            if line.startswith("_begin_fstest"):
                if name in line.split()[1:]:
                    out.append(f"{kind}/{t.name}")
                break
    return out


def expand(tree, tests):
    """TESTS with every -g GROUP expanded into its test names."""
    names, it = [], iter(tests)
    for arg in it:
        if arg == "-g":
            names += group_tests(tree, next(it))
        elif arg.startswith("-"):
            sys.exit(f"--chunk, --skip-done: only -g GROUP and test names, not {arg}")
        else:
            names.append(arg)
    return names


def chunk(names, spec):
    """Every N-th of names from the K-th."""
    k, n = (int(x) for x in spec.split("/"))
    if not 1 <= k <= n:
        sys.exit(f"--chunk {spec}: want K/N with 1 <= K <= N")
    return names[k - 1::n]


def done_in(logs):
    """The tests with a verdict (passed, failed, not run, excluded) in the
    check.log files logs: a run that goes on where those stopped skips them."""
    from xfstests_counts import parse_file
    done = set()
    for log in logs:
        done |= {t for t, (v, _) in parse_file(log).items() if v != "cutoff"}
    return done


def run(tree, tests, out, size="2G", timeout=3600, label=None, test_limit=0):
    """One guest runs ./check TESTS on daxfs.ko; returns the cluster result
    (the guest's xfstests_rc, and OUT/check.log)."""
    out.mkdir(parents=True, exist_ok=True)
    # check writes into its tree (_link_out_file: generic/035, 050), and the
    # host root is read-only in the guest: run a copy in the writable share
    copy = out / "tree"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tree, copy, symlinks=True)
    prepare(copy)
    (out / "check.args").write_text(" ".join(tests) + "\n")
    (out / "check.log").unlink(missing_ok=True)
    (out / "overtime.log").unlink(missing_ok=True)
    scratch = Path(f"/dev/shm/daxfs-xfst-scratch-{out.stat().st_ino}")
    try:
        with Cluster(label=label or f"xfstests-{out.name}", size=size, extra_shm=[scratch],
                     timeout=timeout + 120) as c:
            return c.run([Guest("A", "daxfs-xfstests", [CHROOT_OUT + "/tree", str(timeout),
                                                      str(test_limit)],
                                mem="2G", outdir=out)])
    finally:
        scratch.unlink(missing_ok=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--xfstests", required=True, type=Path)
    ap.add_argument("--out", type=Path, default=REPO / "build" / "xfstests")
    ap.add_argument("--size", default="2G", help="each nvdimm (2G)")
    ap.add_argument("--timeout", type=int, default=3600, help="guest timeout, s")
    ap.add_argument("--test-limit", type=int, default=0, metavar="S",
                    help="stop a test that runs longer than S seconds (0: never)")
    ap.add_argument("--chunk", help="K/N: every N-th test from the K-th")
    ap.add_argument("--skip-done", type=Path, action="append", default=[], metavar="LOG",
                    help="leave out the tests with a verdict in this check.log (repeatable)")
    ap.add_argument("tests", nargs="*", default=["-g", "generic/quick"])
    a = ap.parse_args()
    tree = a.xfstests.resolve()
    tests = a.tests
    if a.chunk or a.skip_done:
        done = done_in(a.skip_done)
        tests = [t for t in expand(tree, tests) if t not in done]
        if a.chunk:
            tests = chunk(tests, a.chunk)
    res = run(tree, tests, a.out, a.size, a.timeout, test_limit=a.test_limit)
    print(res.summary())
    print(f"check.log and results: {a.out}")
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
