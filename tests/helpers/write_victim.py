"""A writer host for tests/test_write_crash_leak.py: run with the crash
build of libdaxfs (DAXFS_LIB, DAXFS_CRASH_AT), it writes, appends and
truncates one file of its own until a crash point kills it, or it runs
out of rounds and exits 0.

Usage: python3 write_victim.py REGION ROUNDS
"""

import sys

import daxfs

# (kind, size or offset): pwrites over holes and over existing pages,
# single and multi-page appends, shrinks that cut and free pages, a grow
# back over the cut range, and a 2 MiB run cut in the middle
STEPS = [
    ("pwrite", 0, 100),
    ("pwrite", 8192, 4096),
    ("append", 0, 4096),
    ("append", 0, 20000),
    ("pwrite", 0, 9000),
    ("truncate", 5000, 0),
    ("append", 0, 300000),
    ("truncate", 12000, 0),
    ("pwrite", 40000, 70000),
    # a whole aligned 2 MiB: one run (format 11), then a cut inside it
    # (the run is split into a leaf first); inside the size, so that a
    # run published by a writer killed before it moved the size holds
    # no bytes beyond EOF (fsck counts those, docs/files.md)
    ("truncate", 4 << 20, 0),
    ("pwrite", 2 << 20, 2 << 20),
    ("truncate", (3 << 20) + 100, 0),
    ("truncate", 0, 0),
]


def main(region, rounds):
    with daxfs.Region(region) as r:
        f = r.open("/v", create=True)
        for k in range(rounds):
            for kind, a, b in STEPS:
                if kind == "pwrite":
                    f.pwrite_all(bytes([k & 0xff]) * b, a)
                elif kind == "append":
                    f.append(b"a" * b)
                else:
                    f.truncate(a)
        f.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
