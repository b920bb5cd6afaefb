"""A host that writes and reads back files until stopped, for the lease tests.

Run as a script (its own process, so its own host):

    python3 lease_workers.py REGION LOG PYDIR DIR NFILES REPEAT RUN_S RECLAIM

It writes DIR/f<k % NFILES> with a body of REPEAT copies of "<k>:", reads it
back, optionally reaps expired hosts (RECLAIM=1), and logs one line per
operation to LOG: "ok K", or "stale K" then "rejoined K" when the region told
it that it had been declared dead (ESTALE): it then comes back as a new host.
RUN_S <= 0 runs until killed; otherwise it stops after RUN_S seconds and logs
"done K".  Any other error ends it with a traceback on stderr.
"""

import errno
import os
import sys
import time


def write_loop(daxfs, path, log, dirname, nfiles, repeat, run_s, reclaim):
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    r = daxfs.Region(path)
    r.makedirs(dirname)
    end = time.monotonic() + run_s if run_s > 0 else None
    k = 0
    while end is None or time.monotonic() < end:
        k += 1
        try:
            name = "%s/f%d" % (dirname, k % nfiles)
            body = (b"%d:" % k) * repeat
            r.write_file(name, body)
            assert r.read_file(name) == body
            if reclaim:
                r.reclaim()             # reaps the hosts it judges expired
            os.write(fd, b"ok %d\n" % k)
        except OSError as e:
            if e.errno != errno.ESTALE:
                raise
            os.write(fd, b"stale %d\n" % k)
            r.close()
            r = daxfs.Region(path)      # rejoin as a new host
            os.write(fd, b"rejoined %d\n" % k)
        if end is not None:
            time.sleep(0.005)
    os.write(fd, b"done %d\n" % k)
    r.close()


def command(path, log, pydir, dirname, nfiles, repeat, run_s=0, reclaim=False):
    """The argv that runs write_loop in a new Python process."""
    return [sys.executable, os.path.abspath(__file__), path, log, pydir,
            dirname, str(nfiles), str(repeat), str(run_s),
            "1" if reclaim else "0"]


if __name__ == "__main__":
    a = sys.argv[1:]
    sys.path.insert(0, a[2])
    import daxfs as _daxfs
    write_loop(_daxfs, a[0], a[1], a[3], int(a[4]), int(a[5]), float(a[6]),
               a[7] == "1")
