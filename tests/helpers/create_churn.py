"""Programs that loop open(O_CREAT), write, close and unlink of one name,
each for a while, and report how their opens went (tests/test_preload_
create_churn.py, tests/test_fuse_hosts.py).  In an existing directory an
open(O_CREAT) must always give a descriptor, however other hosts create
and unlink the name meanwhile."""
import json
import subprocess
import sys

LOOP = r"""
import errno, json, os, sys, time
path, end = sys.argv[1], time.monotonic() + float(sys.argv[2])
ok = 0
failed = {}
while time.monotonic() < end:
    try:
        f = create(path)
    except OSError as e:
        name = errno.errorcode.get(e.errno, str(e.errno))
        failed[name] = failed.get(name, 0) + 1
        continue
    write_close(f)
    ok += 1
    try:
        unlink(path)
    except FileNotFoundError:
        pass
print(json.dumps({"ok": ok, "failed": failed}))
"""

# through the system calls (the preload, a FUSE mount)
PROGRAM = r"""
import os
def create(p): return os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
def write_close(fd): os.write(fd, b"x"); os.close(fd)
unlink = os.unlink
""" + LOOP

# through the Python binding: argv[1] is REGION:PATH
BINDING = r"""
import sys, daxfs
region, sys.argv[1] = sys.argv[1].split(":", 1)
fs = daxfs.Region(region)
def create(p): return fs.open(p, create=True)
def write_close(f): f.pwrite(b"x", 0); f.close()
unlink = fs.unlink
""" + LOOP


def run(paths, secs, popen=subprocess.Popen, program=PROGRAM):
    """One program per path in paths, all at once, each for secs seconds
    (popen(argv, **kw) starts one: under `daxfs run`, say).  Returns their
    reports: {"ok": opens, "failed": {errno name: count}}."""
    procs = [popen([sys.executable, "-c", program, p, str(secs)],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for p in paths]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120 + secs)
        assert p.returncode == 0, err.decode(errors="replace")
        results.append(json.loads(out))
    return results
