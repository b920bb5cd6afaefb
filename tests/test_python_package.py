"""The daxfs package installs with libdaxfs bundled (docs/python.md).

`pip install ./python` into a fresh virtual environment, and the sdist and
wheel that `python3 -m build` makes, give a package that works from a
directory outside the repository with no sys.path edit, no DAXFS_LIB and
no `make`: it loads daxfs/_libdaxfs.so, compiled by the package's build,
and fsspec finds its daxfs:// filesystem through the entry point.
The builds run without network (no build isolation, no index): setuptools
comes with the venv, wheel and build from tests/requirements.txt.  About
25 s per build on two cores.
"""

import importlib.util
import json
import os
import re
import runpy
import subprocess
import sys
import tarfile
import zipfile

import pytest

from helpers import env

SETUP = runpy.run_path(os.path.join(env.PYDIR, "setup.py"),
                       run_name="daxfs_setup")

# run by the venv's Python from a directory outside the repository
CHECK = r"""
import json, sys
import daxfs, daxfs._lib
path, data = sys.argv[1], bytes.fromhex(sys.argv[2])
daxfs.mkfs(path, 32 << 20)
with daxfs.Region(path) as r:
    r.mkdir("/d")
    r.write_file("/d/f", data)
    got = r.read_file("/d/f")
try:
    import fsspec
except ImportError:
    via = cls = None
else:                           # the entry point registers daxfs://
    with fsspec.open("daxfs:///d/f", "rb", region=path) as f:
        via = f.read().hex()
    cls = sys.modules[fsspec.get_filesystem_class("daxfs").__module__]
    cls = cls.__file__
print(json.dumps({"module": daxfs.__file__, "lib": daxfs._lib.lib()._name,
                  "got": got.hex(), "path": sys.path, "fsspec": via,
                  "fsspec_impl": cls}))
"""


def _run(cmd, cwd, timeout=600):
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                         timeout=timeout, env=_clean_env())
    assert res.returncode == 0, "%s failed:\n%s%s" % (
        " ".join(cmd), res.stdout[-3000:], res.stderr[-3000:])
    return res.stdout


def _clean_env():
    e = dict(os.environ)
    for k in ("PYTHONPATH", "DAXFS_LIB", "DAXFS_PYDIR", "PYTHONHOME"):
        e.pop(k, None)
    return e


def _venv(where):
    # system site-packages: the host's wheel for the offline build; the
    # repository's python/ is on no path there
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                    str(where)], check=True, timeout=300)
    return str(where / "bin" / "python")


def _check_installed(py, tmp_path, region_path):
    data = os.urandom(3000) + b"daxfs"
    out = _run([py, "-c", CHECK, region_path, data.hex()], cwd=str(tmp_path))
    res = json.loads(out.strip().splitlines()[-1])
    venv = os.path.dirname(os.path.dirname(py))
    pkg = os.path.dirname(res["module"])
    assert pkg.startswith(venv + os.sep), res["module"]
    assert res["lib"] == os.path.join(pkg, "_libdaxfs.so")
    assert os.path.isfile(res["lib"])
    assert env.PYDIR not in res["path"]
    assert bytes.fromhex(res["got"]) == data
    if importlib.util.find_spec("fsspec") is not None:
        assert res["fsspec_impl"] == os.path.join(pkg, "fsspec_impl.py")
        assert bytes.fromhex(res["fsspec"]) == data


def test_setup_follows_makefile():
    """setup.py compiles what the Makefile puts into libdaxfs.so, with its
    flags: one side changed alone fails here."""
    with open(os.path.join(env.REPO, "Makefile")) as f:
        mk = f.read()
    m = re.search(r"^CFLAGS\s*\+=((?:.*\\\n)*.*)$", mk, re.M)
    flags = m.group(1).replace("\\\n", " ").split()
    flags = [x for x in flags if x not in ("-MMD", "-MP", "$(EXTRA_CFLAGS)")]
    assert flags == SETUP["MAKE_CFLAGS"]
    assert re.search(r"^CFLAGS\s*\?=\s*-O2 -g\s*$", mk, re.M)
    assert re.search(r"^\$\(LIBSO\): \$\(CORE_OBJ\) \$\(LIB_OBJ\)\n"
                     r"\t\$\(CC\) -shared -Wl,-soname,libdaxfs.so.0 -o \$@ "
                     r"\$\^ \$\(LDLIBS\)$", mk, re.M)
    assert "-Wl,-soname,libdaxfs.so.0" in SETUP["LDFLAGS"]
    wild = dict(re.findall(r"^(CORE_SRC|LIB_SRC)\s*:=\s*\$\(wildcard (\S+)\)",
                           mk, re.M))
    assert sorted(wild.values()) == sorted(SETUP["SOURCE_GLOBS"])


# the suites of the Python package, run again on the installed copy
INSTALLED_SUITES = ("test_python_basic.py", "test_python_io.py",
                    "test_python_map.py", "test_python_fsspec.py")


def test_pip_install_bundles_library(tmp_path, region_path):
    py = _venv(tmp_path / "venv")
    _run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index",
          env.PYDIR], cwd=str(tmp_path))
    _check_installed(py, tmp_path, region_path)
    # the package's own tests against the installed package: DAXFS_PYDIR
    # names the venv's site-packages, so the suites import it, never
    # python/ (a check first: the import that conftest's path gives)
    site = _run([py, "-c", "import daxfs, os; "
                 "print(os.path.dirname(os.path.dirname(daxfs.__file__)))"],
                cwd=str(tmp_path)).strip()
    assert site.startswith(str(tmp_path / "venv") + os.sep), site
    e = _clean_env()
    e["DAXFS_PYDIR"] = site
    tests = os.path.join(env.REPO, "tests")
    res = subprocess.run(
        [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
         os.devnull, "--rootdir", tests] +
        [os.path.join(tests, t) for t in INSTALLED_SUITES] +
        ["-o", "python_files=test_*.py"],
        cwd=str(tmp_path), capture_output=True, text=True, timeout=900, env=e)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert re.search(r"\b\d+ passed", res.stdout), res.stdout[-2000:]


def test_build_sdist_and_wheel(tmp_path, region_path):
    """The sdist carries the C sources (csrc/), its wheel the library."""
    pytest.importorskip("build", reason="tests/requirements.txt installs "
                        "build (scripts/setup.sh)")
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--no-isolation", "-o", str(dist),
          env.PYDIR], cwd=str(tmp_path))
    sdists = list(dist.glob("daxfs-*.tar.gz"))
    wheels = list(dist.glob("daxfs-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, os.listdir(dist)
    with tarfile.open(sdists[0]) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    want = {"csrc/" + s for s in SETUP["sources"](env.REPO)}
    assert want and want <= names, sorted(want - names)
    assert "csrc/include/daxfs/libdaxfs.h" in names
    assert re.search(r"-py3-none-linux_[a-z0-9_]+\.whl$", wheels[0].name)
    with zipfile.ZipFile(wheels[0]) as z:
        assert "daxfs/_libdaxfs.so" in z.namelist()
    py = _venv(tmp_path / "venv")
    _run([py, "-m", "pip", "install", "--no-index", "--no-deps",
          str(wheels[0])], cwd=str(tmp_path))
    _check_installed(py, tmp_path, region_path)
