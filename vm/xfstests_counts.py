#!/usr/bin/env python3
"""vm/xfstests_counts.py - pass / fail / not-run counts from xfstests check.log files
(docs/testing.md, "xfstests on daxfs.ko").  One line per test of check's console output
counts; a test with no verdict (the run was cut off by its time limit) is "cut off", and so
is a test the guest stopped at its per-test limit (named in overtime.log beside check.log).

    vm/xfstests_counts.py [-v] CHECK.LOG...      (several: the chunks of one run)
"""
import argparse
import re
import sys
from collections import OrderedDict
from pathlib import Path

TEST = re.compile(r"^((?:generic|shared|daxfs)/\d+)\s*(.*)$")
PASSED = re.compile(r"^\d+s\b")


def verdict(rest):
    if rest.startswith("[not run]"):
        return "notrun", rest[len("[not run]"):].strip()
    if rest.startswith("[expunged]"):
        return "excluded", ""
    if PASSED.match(rest):
        return "pass", ""
    if not rest:
        return "cutoff", ""
    return "fail", rest


def parse(text):
    """{test: (verdict, detail)} in the order check ran them; later lines win
    (check prints a test's name first, then its verdict on the same line)."""
    out = OrderedDict()
    for line in text.splitlines():
        m = TEST.match(line)
        if m:
            out[m.group(1)] = verdict(m.group(2).strip())
    return out


def parse_file(path):
    """parse() of the check.log at path, with the tests named in the overtime.log
    beside it (stopped at vm/xfstests.py --test-limit) marked cut off."""
    path = Path(path)
    res = parse(path.read_text(errors="replace"))
    over = path.with_name("overtime.log")
    if over.exists():
        for line in over.read_text().splitlines():
            name, _, limit = line.partition(" ")
            if name in res:
                res[name] = ("cutoff", f"stopped after the per-test limit of {limit} s")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-v", action="store_true", help="list every failure and not-run test")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()
    res = OrderedDict()
    for path in a.logs:
        res.update(parse_file(path))
    counts = OrderedDict((k, 0) for k in ("pass", "fail", "notrun", "excluded", "cutoff"))
    for v, _ in res.values():
        counts[v] += 1
    ran = counts["pass"] + counts["fail"]
    pct = 100.0 * counts["pass"] / ran if ran else 0.0
    print(" ".join(f"{k}={n}" for k, n in counts.items()) +
          f" total={len(res)} pass_of_run={pct:.1f}%")
    if a.v:
        for t, (v, d) in res.items():
            if v in ("fail", "notrun", "cutoff"):
                print(f"{v:7} {t} {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
