#!/usr/bin/env python3
"""vm/cluster.py - emulated DaxFS cluster: N QEMU guests sharing one memory file (+ host peer).

Each guest is one ``vm/run-guest.sh`` process (QEMU TCG, Debian kernel, our busybox initrd,
bounded by ``timeout``) that boots, runs one guest script (``vm/guest/NAME.sh``) and powers
off. All guests map the same ``/dev/shm`` file as an nvdimm (``/dev/pmem0`` in the guest), so
they and a host-side process (which opens/mmaps the file itself) are peers on one memory.

Python use (pytest)::

    from cluster import Cluster, Guest
    with Cluster(label="smoke", size="256M") as c:        # fresh zeroed shm file
        res = c.run([Guest("A", "smoke", ["a"]), Guest("B", "smoke", ["b"])],
                    host_fn=lambda: check(c.shm))          # runs while the guests run
        assert res.ok, res.summary()
        res.guests["A"].results["key"]                    # from "DAXFS-VM-RESULT: key=val"

CLI::

    python3 vm/cluster.py -n 2 hello x y                  # 2 guests, same script
    python3 vm/cluster.py --guest A:smoke:a,TOK --guest B:smoke:b,TOK --host-cmd 'python3 ...'
    python3 vm/cluster.py --extra-module kernel/daxfs.ko -n 3 mytest

Console logs: build/vm/logs/<label>/<guest>.log (kept; the host command's output is
host.log there). Exit status of the CLI: 0 when every guest script and the host command
returned 0.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Union

VM_DIR = Path(__file__).resolve().parent
REPO = VM_DIR.parent
BUILD = Path(os.environ.get("DAXFS_VM_BUILD", REPO / "build" / "vm"))
RUN_GUEST = VM_DIR / "run-guest.sh"
MKINITRD = VM_DIR / "mkinitrd.sh"

RC_RE = re.compile(r"DAXFS-VM: script rc=(\d+)")
RESULT_RE = re.compile(r"DAXFS-VM-RESULT: (.*)")
UPTIME_RE = re.compile(r"DAXFS-VM: script start .* uptime=([0-9.]+)")
_counter = itertools.count()


# --------------------------------------------------------------------------- prerequisites
# where boot/ and lib/modules/ of the guest kernels are (vm/common.sh: DAXFS_VM_ROOT)
VM_ROOT = os.environ.get("DAXFS_VM_ROOT", "")


def detect_kver() -> Optional[str]:
    """Newest Debian kernel with /boot/vmlinuz-KVER and /lib/modules/KVER/modules.dep."""
    k = os.environ.get("DAXFS_VM_KVER")
    if k:   # explicit choice: only if that kernel is really there
        return k if Path(f"{VM_ROOT}/boot/vmlinuz-{k}").is_file() and Path(f"{VM_ROOT}/lib/modules/{k}/modules.dep").is_file() else None
    best = None
    mods = Path(f"{VM_ROOT}/lib/modules")
    if not mods.is_dir():
        return None
    def vkey(s: str):
        return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)]
    for k in sorted((p.name for p in mods.iterdir()), key=vkey):
        if Path(f"{VM_ROOT}/boot/vmlinuz-{k}").is_file() and (mods / k / "modules.dep").is_file():
            best = k
    return best


def missing_prerequisites() -> List[str]:
    """What is missing to boot guests (empty list: all there). vm/setup.sh installs it."""
    miss = []
    if not shutil.which("qemu-system-x86_64"):
        miss.append("qemu-system-x86_64 (package qemu-system-x86)")
    kver = detect_kver()
    if not kver:
        miss.append("Debian guest kernel /boot/vmlinuz-* + /lib/modules/*/modules.dep (linux-image-amd64)")
    elif not os.access(f"{VM_ROOT}/boot/vmlinuz-{kver}", os.R_OK):  # Ubuntu-style 0600 images
        miss.append(f"read access to /boot/vmlinuz-{kver}")
    if not Path("/bin/busybox").is_file():
        miss.append("/bin/busybox (busybox-static)")
    if not shutil.which("cpio"):
        miss.append("cpio")
    if not Path("/dev/shm").is_dir():
        miss.append("/dev/shm")
    return miss


def require_vm(pytest_module) -> None:
    """In a pytest test: skip when the VM prerequisites are missing, unless DAXFS_VM_TESTS=1
    (then fail). DAXFS_VM_TESTS=0 skips VM tests explicitly."""
    flag = os.environ.get("DAXFS_VM_TESTS", "")
    if flag == "0":
        pytest_module.skip("VM tests disabled (DAXFS_VM_TESTS=0)")
    miss = missing_prerequisites()
    if miss:
        msg = "VM prerequisites missing (run vm/setup.sh): " + "; ".join(miss)
        if flag == "1":
            pytest_module.fail(msg + " [DAXFS_VM_TESTS=1]", pytrace=False)
        pytest_module.skip(msg)


# --------------------------------------------------------------------------- initrd
def ensure_initrd(extra_modules: Sequence[Union[str, Path]] = (), more_mods: str = "") -> Path:
    """Build (or reuse, if newer than all inputs) the initramfs with the given extra .ko files."""
    extras = [Path(m).resolve() for m in extra_modules]
    for m in extras:
        if not m.is_file():
            raise FileNotFoundError(f"extra module {m} not found")
    kver = detect_kver()
    if not kver:
        raise RuntimeError("no guest kernel (run vm/setup.sh)")
    key = hashlib.sha1(("|".join(map(str, extras)) + "|" + more_mods + "|" + kver).encode()).hexdigest()[:10]
    # the plain name is the default kernel's: a DAXFS_VM_ROOT kernel gets its own file
    plain = not extras and not more_mods and not VM_ROOT
    out = BUILD / ("initrd.cpio.gz" if plain else f"initrd-{key}.cpio.gz")
    inputs = [VM_DIR / "init", MKINITRD, VM_DIR / "common.sh", Path(f"{VM_ROOT}/lib/modules/{kver}/modules.dep")]
    inputs += list((VM_DIR / "guest").glob("*.sh")) + extras
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(BUILD / ".initrd.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.exists() and all(out.stat().st_mtime >= p.stat().st_mtime for p in inputs if p.exists()):
            return out
        cmd = [str(MKINITRD), "-o", str(out), "-k", kver]
        if more_mods:
            cmd += ["-m", more_mods]
        cmd += [str(m) for m in extras]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"mkinitrd failed (rc {p.returncode}):\n{p.stdout}")
    return out


def parse_size(s: Union[str, int]) -> int:
    if isinstance(s, int):
        return s
    m = re.fullmatch(r"(\d+)([KMGT]?)B?", s.strip(), re.I)
    if not m:
        raise ValueError(f"bad size {s!r}")
    return int(m.group(1)) << (10 * " KMGT".index((m.group(2) or " ").upper()))


def descendants(pid):
    """The processes below pid (from /proc): what a timeout kills, QEMU
    included, where a process group does not reach (each guest has its own)."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


# --------------------------------------------------------------------------- results
@dataclass

class Guest:
    """One guest to boot: NAME runs vm/guest/SCRIPT.sh with ARGS (no ',' or ' ' in args)."""
    name: str
    script: str
    args: Sequence[str] = ()
    cpus: int = 1
    mem: str = "1G"
    timeout: Optional[int] = None     # default: the run's timeout
    append: str = ""                  # extra kernel command line
    outdir: Optional[Union[str, Path]] = None   # host dir shared writable at /out
    pidfile: Optional[Union[str, Path]] = None  # QEMU writes its pid there (to kill it)


@dataclass
class GuestResult:
    name: str
    rc: int                       # script rc; 124 timeout; 125 no rc marker (panic, boot failure)
    log: str                      # the whole console log
    log_path: Path
    elapsed: float                # seconds, QEMU start to exit
    results: Dict[str, str] = field(default_factory=dict)   # DAXFS-VM-RESULT key=value pairs
    result_lines: List[str] = field(default_factory=list)
    boot_s: Optional[float] = None   # guest uptime when the script started

    @property
    def ok(self) -> bool:
        return self.rc == 0

    @property
    def timed_out(self) -> bool:
        return self.rc == 124

    def tail(self, n: int = 40) -> str:
        return "\n".join(self.log.splitlines()[-n:])


@dataclass
class HostResult:
    rc: int
    output: str
    elapsed: float
    value: object = None              # return value of host_fn
    error: Optional[BaseException] = None


@dataclass
class ClusterResult:
    guests: Dict[str, GuestResult]
    host: Optional[HostResult]
    elapsed: float

    @property
    def ok(self) -> bool:
        return all(g.ok for g in self.guests.values()) and (self.host is None or self.host.rc == 0)

    def summary(self, tail: int = 25) -> str:
        out = [f"cluster run {self.elapsed:.1f}s"]
        for g in self.guests.values():
            out.append(f"--- guest {g.name}: rc={g.rc} {g.elapsed:.1f}s boot={g.boot_s}s "
                       f"log={g.log_path} results={g.results}")
            if not g.ok:
                out.append(g.tail(tail))
        if self.host is not None:
            out.append(f"--- host: rc={self.host.rc} {self.host.elapsed:.1f}s error={self.host.error!r}")
            if self.host.rc != 0:
                out.append(self.host.output[-3000:])
        return "\n".join(out)


def parse_log(name: str, text: str, log_path: Path, elapsed: float, run_rc: int) -> GuestResult:
    m = RC_RE.findall(text)
    rc = int(m[-1]) if m else (124 if run_rc in (124, 137, -9) else 125)
    if run_rc == 124:
        rc = 124
    res: Dict[str, str] = {}
    lines = []
    for line in RESULT_RE.findall(text):
        line = line.strip()
        lines.append(line)
        for tok in line.split():
            if "=" in tok:
                k, v = tok.split("=", 1)
                res[k] = v
    b = UPTIME_RE.search(text)
    return GuestResult(name, rc, text, log_path, elapsed, res, lines, float(b.group(1)) if b else None)


# --------------------------------------------------------------------------- cluster
class Cluster:
    """A set of guests sharing one (or more) fresh memory files in /dev/shm.

    shm: path of the shared file (default /dev/shm/daxfs-vm-<pid>-<n>); recreated zeroed by
    prepare() unless fresh=False. extra_shm: more shared files (guest /dev/pmem1...).
    """

    def __init__(self, label: str = "run", size: Union[str, int] = "256M",
                 shm: Optional[Union[str, Path]] = None, extra_shm: Sequence[Union[str, Path]] = (),
                 extra_modules: Sequence[Union[str, Path]] = (), more_mods: str = "",
                 timeout: int = 120, log_dir: Optional[Union[str, Path]] = None,
                 fresh: bool = True, keep_shm: bool = False, kernel: Optional[str] = None):
        self.label = re.sub(r"[^A-Za-z0-9_.-]", "_", label)
        self.size = parse_size(size)
        if self.size % (2 << 20):
            raise ValueError("shared size must be a multiple of 2 MiB")
        self.shm = Path(shm) if shm else Path(f"/dev/shm/daxfs-vm-{os.getpid()}-{next(_counter)}")
        self.extra_shm = [Path(p) for p in extra_shm]
        self.extra_modules = list(extra_modules)
        self.more_mods = more_mods
        self.timeout = timeout
        # the guests of another root's kernel (DAXFS_VM_ROOT, tests/test_kernel_compat.py)
        # log under its version: its tests bear the names of the 6.1 ones, which
        # may run at the same time (make check's parallel processes)
        label_dir = f"{detect_kver()}/{self.label}" if VM_ROOT else self.label
        self.log_dir = Path(log_dir) if log_dir else BUILD / "logs" / label_dir
        self.fresh = fresh
        self.keep_shm = keep_shm
        self.kernel = kernel
        self.initrd: Optional[Path] = None

    # ---- lifecycle
    def prepare(self) -> "Cluster":
        self.initrd = ensure_initrd(self.extra_modules, self.more_mods)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for f in [self.shm] + self.extra_shm:
            if self.fresh and f.exists():
                f.unlink()
            with open(f, "ab") as fh:
                if os.fstat(fh.fileno()).st_size < self.size:
                    fh.truncate(self.size)
        return self

    def cleanup(self) -> None:
        if not self.keep_shm:
            for f in [self.shm] + self.extra_shm:
                try:
                    f.unlink()
                except FileNotFoundError:
                    pass

    def __enter__(self) -> "Cluster":
        return self.prepare()

    def __exit__(self, *exc) -> None:
        self.cleanup()

    # ---- shared memory from the host side
    def read_shm(self, offset: int, length: int, path: Optional[Path] = None) -> bytes:
        with open(path or self.shm, "rb") as f:
            f.seek(offset)
            return f.read(length)

    def wait_shm(self, offset: int, data: bytes, timeout: float = 30.0, path: Optional[Path] = None) -> bool:
        """Poll until the file holds DATA at OFFSET (host-side peer waiting on a guest)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.read_shm(offset, len(data), path) == data:
                return True
            time.sleep(0.1)
        return False

    # ---- running
    def guest_cmd(self, g: Guest, log: Path, timeout: int) -> List[str]:
        cmd = [str(RUN_GUEST), "-n", g.name, "-l", str(log), "-t", str(timeout),
               "-z", str(self.size), "-i", str(self.initrd), "-m", g.mem, "-c", str(g.cpus)]
        for f in [self.shm] + self.extra_shm:
            cmd += ["-s", str(f)]
        if self.kernel:
            cmd += ["-k", self.kernel]
        if g.append:
            cmd += ["-e", g.append]
        if g.outdir:
            cmd += ["-o", str(g.outdir)]
        if g.pidfile:
            cmd += ["-p", str(g.pidfile)]
        for a in g.args:
            if not a or any(c in str(a) for c in ", '\""):
                raise ValueError(f"guest arg {a!r}: must be non-empty, without ',', space or quotes")
        return cmd + [g.script] + [str(a) for a in g.args]

    def run(self, guests: Sequence[Guest], host_cmd: Optional[Union[str, Sequence[str]]] = None,
            host_fn: Optional[Callable[[], object]] = None, sequential: bool = False,
            stagger: float = 0.0) -> ClusterResult:
        """Boot the guests (in parallel, or one after the other with sequential=True), run
        host_cmd (shell string or argv; env DAXFS_VM_SHM/DAXFS_VM_SHM_SIZE) and/or host_fn
        (a Python callable, in a thread) alongside, wait for everything, return the results.
        host_fn's rc is 0 unless it raises (AssertionError -> rc 1)."""
        if self.initrd is None:
            self.prepare()
        names = [g.name for g in guests]
        if len(set(names)) != len(names):
            raise ValueError(f"guest names must be unique: {names}")
        t0 = time.monotonic()
        host_res: Dict[str, HostResult] = {}
        threads = []
        if host_cmd is not None:
            threads.append(threading.Thread(target=self._host_cmd, args=(host_cmd, host_res), daemon=True))
        if host_fn is not None:
            threads.append(threading.Thread(target=self._host_fn, args=(host_fn, host_res), daemon=True))
        for t in threads:
            t.start()
        results: Dict[str, GuestResult] = {}
        if sequential:
            for g in guests:
                results.update(self._run_guests([g]))
        else:
            results = self._run_guests(guests, stagger)
        for t in threads:
            t.join(self.timeout + 30)
        host = None
        if host_res:
            hs = list(host_res.values())
            host = HostResult(max(h.rc for h in hs), "\n".join(h.output for h in hs),
                              max(h.elapsed for h in hs),
                              host_res["fn"].value if "fn" in host_res else None,
                              next((h.error for h in hs if h.error), None))
        elif threads:
            host = HostResult(124, "host side did not finish", self.timeout + 30)
        return ClusterResult(results, host, time.monotonic() - t0)

    def _run_guests(self, guests: Sequence[Guest], stagger: float = 0.0) -> Dict[str, GuestResult]:
        procs = []
        for i, g in enumerate(guests):
            if i and stagger:
                time.sleep(stagger)
            tmo = g.timeout or self.timeout
            log = self.log_dir / f"{g.name}.log"
            p = subprocess.Popen(self.guest_cmd(g, log, tmo), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 start_new_session=True, text=True)
            procs.append((g, p, log, tmo, time.monotonic()))
        out: Dict[str, GuestResult] = {}
        for g, p, log, tmo, t0 in procs:
            try:
                msg, _ = p.communicate(timeout=max(1.0, tmo + 20 - (time.monotonic() - t0)))
                rc = p.returncode
            except subprocess.TimeoutExpired:   # run-guest.sh's own timeout failed: kill its group
                os.killpg(p.pid, signal.SIGKILL)
                msg, _ = p.communicate()
                rc = 124
            text = log.read_text(errors="replace") if log.exists() else ""
            if msg:
                text += "\n" + msg
            out[g.name] = parse_log(g.name, text, log, time.monotonic() - t0, rc)
        return out

    def _env(self) -> Dict[str, str]:
        env = dict(os.environ)
        env["DAXFS_VM_SHM"] = str(self.shm)
        env["DAXFS_VM_SHM_SIZE"] = str(self.size)
        return env

    def _host_cmd(self, cmd, res: Dict[str, HostResult]) -> None:
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, shell=isinstance(cmd, str), env=self._env(), cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=self.timeout + 20)
            rc, out = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, out = 124, f"host command timed out: {e}"
        (self.log_dir / "host.log").write_text(out)
        res["cmd"] = HostResult(rc, out, time.monotonic() - t0)

    def _host_fn(self, fn, res: Dict[str, HostResult]) -> None:
        t0 = time.monotonic()
        try:
            v = fn()
            res["fn"] = HostResult(0, "", time.monotonic() - t0, v)
        except BaseException as e:    # reported, not raised, so the guests are still collected
            res["fn"] = HostResult(1, f"host_fn raised {e!r}", time.monotonic() - t0, None, e)


# --------------------------------------------------------------------------- CLI
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Boot N DaxFS test guests sharing one /dev/shm file.")
    ap.add_argument("script", nargs="?", help="guest script (vm/guest/SCRIPT.sh) for -n guests")
    ap.add_argument("args", nargs="*", help="its arguments (no ',' or spaces)")
    ap.add_argument("-n", "--guests", type=int, default=2, help="number of guests named A, B, C... (2)")
    ap.add_argument("--guest", action="append", default=[], metavar="NAME:SCRIPT[:a,b]",
                    help="a guest with its own script and args (repeatable; replaces -n)")
    ap.add_argument("--shm", help="shared file (default /dev/shm/daxfs-vm-PID-N, recreated)")
    ap.add_argument("--size", default="256M", help="shared size (256M)")
    ap.add_argument("--keep", action="store_true", help="keep an existing shm file and keep it after")
    ap.add_argument("--timeout", type=int, default=120, help="per-guest timeout, s (120)")
    ap.add_argument("--cpus", type=int, default=1, help="vCPUs per guest (1; maxcpus is >=2 anyway)")
    ap.add_argument("--mem", default="1G", help="guest RAM (1G)")
    ap.add_argument("--sequential", action="store_true", help="boot guests one after the other")
    ap.add_argument("--extra-module", action="append", default=[], help=".ko to add to the initrd (insmod at boot)")
    ap.add_argument("--host-cmd", help="shell command run on the host alongside (env DAXFS_VM_SHM)")
    ap.add_argument("--label", default="cli", help="log dir name under build/vm/logs (cli)")
    ap.add_argument("--append", default="", help="extra kernel command line for every guest")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every guest's log")
    a = ap.parse_args(argv)
    if a.guest:
        guests = []
        for spec in a.guest:
            parts = spec.split(":", 2)
            if len(parts) < 2:
                ap.error(f"--guest {spec}: NAME:SCRIPT[:args]")
            args = parts[2].split(",") if len(parts) > 2 and parts[2] else []
            guests.append(Guest(parts[0], parts[1], args, a.cpus, a.mem, append=a.append))
    elif a.script:
        guests = [Guest(chr(ord("A") + i), a.script, a.args, a.cpus, a.mem, append=a.append)
                  for i in range(a.guests)]
    else:
        ap.error("give a SCRIPT or --guest")
    miss = missing_prerequisites()
    if miss:
        print("missing:", "; ".join(miss), "(run vm/setup.sh)", file=sys.stderr)
        return 2
    c = Cluster(label=a.label, size=a.size, shm=a.shm, extra_modules=a.extra_module,
                timeout=a.timeout, fresh=not a.keep, keep_shm=a.keep)
    with c:
        print(f"shared file {c.shm} ({c.size >> 20} MiB), logs {c.log_dir}", flush=True)
        res = c.run(guests, host_cmd=a.host_cmd, sequential=a.sequential)
    if a.verbose:
        for g in res.guests.values():
            print(f"===== {g.name} ({g.log_path})\n{g.log}")
    print(res.summary())
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
