"""FUSE mounts of a region for the tests (docs/fuse.md).

Each mount runs build/bin/daxfs-fuse in the foreground as a child of the
test, so a test can kill -9 it.  skip_reason() says why FUSE tests cannot
run here (no /dev/fuse, no fusermount3, daxfs-fuse not built, no right to
mount), or None.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time

from helpers import env

_probe = None


def mounted(mp):
    """The /proc/mounts line of mount point mp, or None."""
    mp = os.path.realpath(mp)
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[1] == mp:
                return line
    return None


class Mount:
    """daxfs-fuse -f serving region at a fresh mount point."""

    def __init__(self, region, opts=(), mp=None):
        self.region = region
        self.mp = mp or tempfile.mkdtemp(prefix="dxfuse-")
        self.own_mp = mp is None
        cmd = [env.tool("daxfs-fuse"), "-f", "-r", region]
        for o in opts:
            cmd += ["-o", o]
        cmd.append(self.mp)
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not mounted(self.mp):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("daxfs-fuse did not mount: %s" % self.output())
            time.sleep(0.02)

    def output(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def path(self, *names):
        return os.path.join(self.mp, *names)

    def umount(self, timeout=30):
        """Ends the mount as a user would (fusermount3 -u); waits for
        daxfs-fuse to leave.  Returns its exit status."""
        # the kernel releases files after close(2) returns: a mount whose
        # last file was just closed can be busy for a moment
        deadline = time.monotonic() + timeout
        while mounted(self.mp):
            p = subprocess.run(["fusermount3", "-u", self.mp], capture_output=True,
                               text=True, timeout=timeout)
            if p.returncode == 0:
                break
            if "busy" not in p.stderr or time.monotonic() > deadline:
                raise subprocess.CalledProcessError(p.returncode, p.args, p.stdout,
                                                    p.stderr)
            time.sleep(0.02)
        rc = self.proc.wait(timeout=timeout)
        self._cleanup()
        return rc

    def kill(self):
        """kill -9 of the server: this host dies; the mount point stays
        (ENOTCONN) until someone unmounts it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)

    def close(self):
        """Whatever state it is in: no mount, no process, no directory."""
        if self.proc.poll() is None and mounted(self.mp):
            try:
                self.umount()
                return
            except (subprocess.SubprocessError, OSError):
                pass
        self.kill()
        if mounted(self.mp):
            subprocess.run(["umount", "-l", self.mp], timeout=30)
        self._cleanup()

    def _cleanup(self):
        if self.own_mp and not mounted(self.mp):
            shutil.rmtree(self.mp, ignore_errors=True)


def skip_reason():
    """Why FUSE mounts cannot be tested here, or None (checked once)."""
    global _probe
    if _probe is not None:
        return _probe or None
    _probe = ""
    if not os.path.exists("/dev/fuse"):
        _probe = "/dev/fuse is missing (no FUSE in this kernel or container)"
    elif shutil.which("fusermount3") is None:
        _probe = "fusermount3 is missing: run scripts/setup.sh (Debian fuse3)"
    elif env.tool("daxfs-fuse") is None:
        _probe = ("build/bin/daxfs-fuse is not built: run scripts/setup.sh "
                  "(libfuse3-dev), then make")
    else:
        region = env.region_path("fuseprobe")
        try:
            env.mkfs(region, 16 * env.MiB)
            m = Mount(region)
            m.umount()
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            _probe = "cannot mount FUSE here: %s" % e
        finally:
            env.remove(region)
    return _probe or None
