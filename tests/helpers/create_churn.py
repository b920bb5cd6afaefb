"""Programs that loop open(O_CREAT), write, close and unlink of one name,
each for a while, and report how their opens went (tests/test_preload_
create_churn.py, tests/test_fuse_hosts.py).  In an existing directory an
open(O_CREAT) must always give a descriptor, however other hosts create
and unlink the name meanwhile."""
import json
import subprocess
import sys

PROGRAM = r"""
import errno, json, os, sys, time
path, end = sys.argv[1], time.monotonic() + float(sys.argv[2])
ok = 0
failed = {}
while time.monotonic() < end:
    try:
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o644)
    except OSError as e:
        name = errno.errorcode.get(e.errno, str(e.errno))
        failed[name] = failed.get(name, 0) + 1
        continue
    os.write(fd, b"x")
    os.close(fd)
    ok += 1
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
print(json.dumps({"ok": ok, "failed": failed}))
"""


def run(paths, secs, popen=subprocess.Popen):
    """One program per path in paths, all at once, each for secs seconds
    (popen(argv, **kw) starts one: under `daxfs run`, say).  Returns their
    reports: {"ok": opens, "failed": {errno name: count}}."""
    procs = [popen([sys.executable, "-c", PROGRAM, p, str(secs)],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for p in paths]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120 + secs)
        assert p.returncode == 0, err.decode(errors="replace")
        results.append(json.loads(out))
    return results
