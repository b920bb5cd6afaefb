#!/usr/bin/env python3
"""The emulated cluster in one command (`make cluster`).

Builds the user-space tools and daxfs.ko, formats one shared memory file,
boots three QEMU guests (Debian's 6.1 kernel, TCG) that mount it with
daxfs.ko, and runs the multi-host workload of tests/vm on all of them
while this machine's own process works on the same region through
libdaxfs as a fourth host.  Then it prints what every host saw, the host
table, the namespace and fsck's verdict.

Every QEMU run is bounded by a timeout; console logs stay in
build/vm/logs/cluster-demo/.
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "vm"))
sys.path.insert(0, str(REPO / "python"))

import cluster  # noqa: E402
from cluster import Cluster, Guest  # noqa: E402
import daxfs_kguest as kg  # noqa: E402
import daxfs  # noqa: E402

BIN = REPO / "build" / "bin"


def say(msg):
    print(f"==> {msg}", flush=True)


def run(cmd):
    subprocess.run(cmd, check=True)


def build():
    say("building libdaxfs, the tools and daxfs.ko")
    run(["make", "-s", "-C", str(REPO), "all"])
    run(["make", "-s", "-C", str(REPO), "module"])


def host_peer(shm, peers):
    """The fourth host; returns the host table as seen at the end of the
    workload, when every peer has passed the last barrier (all mounted)."""
    with daxfs.Region(str(shm)) as r:
        kg.multi(kg.LibFS(r), "H", peers)
        return [h for h in r.info()["hosts"] if str(h["state"]) == "alive"]


def show_guest(name, g):
    res = g.results
    print(f"  guest {name}: rc={g.rc}, boot {g.boot_s or 0:.1f}s, "
          f"run {g.elapsed:.1f}s")
    for key in (f"shared_{name}", f"race_wins_{name}", f"appends_{name}",
                f"df_grew_{name}", f"multi_{name}"):
        if key in res:
            print(f"    {key:22} {res[key]}")


def show_region(shm):
    tool = str(BIN / "daxfs")
    say("the namespace as the host sees it (daxfs ls -l /)")
    subprocess.run([tool, "-r", str(shm), "ls", "-l", "/"])
    say("host table (daxfs info)")
    subprocess.run([tool, "-r", str(shm), "info"])
    say("fsck.daxfs -n")
    return subprocess.run([str(BIN / "fsck.daxfs"), "-n", str(shm)]).returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--guests", type=int, default=3, choices=(1, 2, 3),
                    help="number of QEMU guests (default 3)")
    ap.add_argument("--no-build", action="store_true",
                    help="use what is built already")
    args = ap.parse_args()

    missing = cluster.missing_prerequisites()
    if missing:
        sys.exit("missing: " + ", ".join(missing) +
                 "\nrun: bash scripts/setup.sh")
    if not args.no_build:
        build()
    names = "ABC"[:args.guests]
    peers = list(names) + ["H"]
    steps = ["load", "mount:phys", "py:multi:{}:" + "+".join(peers),
             "umount", "rmmod", "clean"]
    with Cluster(label="cluster-demo", size=256 << 20, timeout=420) as c:
        say(f"formatting {c.shm} (256 MiB) with mkfs.daxfs")
        run([str(BIN / "mkfs.daxfs"), "-f", "-q", "--lease-ms", "5000",
             str(c.shm)])
        say(f"booting {len(names)} guests ({', '.join(names)}) under QEMU "
            "(TCG) + this host through libdaxfs, all on one memory file")
        res = c.run([Guest(n, "daxfs-k", [s.format(n) for s in steps])
                     for n in names],
                    host_fn=lambda: host_peer(c.shm, peers))
        say("what each host saw")
        for n in names:
            show_guest(n, res.guests[n])
        h = res.host
        print(f"  host H (libdaxfs): {'ok' if h and h.rc == 0 else 'FAILED'}")
        if h and h.value:
            say("host table while all were mounted")
            for e in h.value:
                print(f"  slot {e['slot']:2}  {e['name']:28} pid {e['pid']:<7} "
                      f"lease age {e['lease_age_ns'] / 1e6:7.1f} ms")
        rc = show_region(c.shm)
        if not res.ok:
            print(res.summary())
            say("FAILED (console logs under build/vm/logs/cluster-demo/)")
            return 1
        say("every host read every other host's files, raced creates with "
            "one winner each, appended without loss, saw renames, unlinks, "
            "df and mmap stores of the others" +
            ("" if rc == 0 else "; but fsck found problems"))
        return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
