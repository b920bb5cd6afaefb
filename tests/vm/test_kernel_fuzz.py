"""daxfs.ko on corrupt images: a bounded run of the kernel image fuzz (vm/kfuzz.py,
docs/testing.md "Kernel image fuzz").  One QEMU guest mounts a few hundred images, each a
populated base image with 1 to 12 live words of one kind of structure corrupted (superblock,
base image, overlay buckets, inodes, tries, dirents, radix nodes, symlinks, free and limbo
chains, open sets, host table, lanes, state page, page-cache slots of a split-mode base, all
at once, any used word; and the base untouched as a control), and runs a short workload on
each.

What a user may expect: no image oopses, WARNs, BUGs, locks up or hangs the guest kernel, and
every image unmounts; an image is refused at mount or its operations fail with an errno (the
counts are printed, not judged); the untouched base mounts and works.
Slow (QEMU TCG, about a minute); runs with the other VM tests (DAXFS_VM_TESTS=1).
DAXFS_KFUZZ_N and DAXFS_KFUZZ_SEED make longer or other runs (make kfuzz: the long run).
"""
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "tests" / "vm"))
import kfuzz  # noqa: E402
from test_kernel_cluster import built  # noqa: E402,F401

N = int(os.environ.get("DAXFS_KFUZZ_N", "240"))
SEED = int(os.environ.get("DAXFS_KFUZZ_SEED", "1"))


def _results(out):
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_kernel_survives_corrupt_images(built, tmp_path):
    # image 7's guest also logs a fake WARNING: the watch must catch it; two broken images
    # are enough to fail on (a hang costs 90 s and a boot: 9 of them ate the CI's timeout)
    rc = kfuzz.main(["-n", str(N), "--seed", str(SEED), "--out", str(tmp_path),
                     "--selftest", "7", "--stop-after", "2"])
    s = json.loads((tmp_path / "summary.json").read_text())
    print(json.dumps(s, indent=1, sort_keys=True))
    assert s.get("selftest") == "caught", s
    assert not s["errors"], s["errors"]
    assert not s["failures"], (f"{len(s['failures'])} image(s) broke the guest kernel "
                               f"(kept in {tmp_path}/found): {s['failures'][:5]}")
    assert rc == 0 and s["images"] == N, s
    res = _results(tmp_path)
    control = [r for r in res if r["kind"] == "none"]
    assert control and all(r["mount_err"] == 0 and r["wrong"] == 0 and
                           set(r["errs"]) <= {"ENOENT", "EISDIR"} for r in control), control
    # the corruption reaches the kernel: some images are refused, some operations fail
    assert s["refused"] and s["fails"].get("EUCLEAN"), s
    # regression: a size beyond the maximum is damage (stat said 2^64 - 1; the kernel's
    # i_size went negative), so the file answers EUCLEAN, never an impossible size
    size = [r for r in res if r["kind"] == "size"]
    assert size and all(r["wrong"] == 0 and (r["mount_err"] or r["errs"].get("EUCLEAN"))
                        for r in size), size
