"""Build of the daxfs package with libdaxfs bundled (docs/python.md).

`pip install ./python`, `pip wheel ./python` and `python3 -m build python`
compile the library into the package as daxfs/_libdaxfs.so: the sources
and flags of the top Makefile's build/libdaxfs.so (core/*.c and lib/*.c,
its CFLAGS; tests/test_python_package.py checks that they agree).  The C
sources are found beside python/ in a clone, or in csrc/ inside an sdist
(the sdist command copies them in).  CC and CFLAGS are taken from the
environment as make takes them (CFLAGS default: -O2 -g).
"""

import glob
import os
import shlex
import shutil
import subprocess
import warnings
from concurrent.futures import ThreadPoolExecutor

from setuptools import setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
LIB_NAME = "_libdaxfs.so"
# the Makefile's CFLAGS after its default "-O2 -g" (less -MMD -MP, which
# only write make's dependency files, and $(EXTRA_CFLAGS))
MAKE_CFLAGS = [
    "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter",
    "-Werror=implicit-function-declaration",
    "-Werror=incompatible-pointer-types", "-fPIC", "-pthread", "-I.",
    "-Iinclude",
]
LDFLAGS = ["-shared", "-Wl,-soname,libdaxfs.so.0", "-pthread"]
# what the library is built from, relative to the repository root
SOURCE_GLOBS = ("core/*.c", "lib/*.c")
COPY_GLOBS = SOURCE_GLOBS + ("core/*.h", "lib/*.h", "include/daxfs/*.h")


def source_root():
    """The directory holding core/, lib/ and include/: csrc/ in an sdist,
    else the repository around python/."""
    for root in (os.path.join(HERE, "csrc"), os.path.dirname(HERE)):
        if os.path.isfile(os.path.join(root, "core", "daxfs_core.h")):
            return root
    raise RuntimeError("libdaxfs sources (core/, lib/, include/) not found "
                       "beside %s or in its csrc/" % HERE)


def sources(root):
    return sorted(os.path.relpath(p, root) for g in SOURCE_GLOBS
                  for p in glob.glob(os.path.join(root, g)))


def compile_library(root, tmp, out, jobs=None):
    """Compiles the library from root into out, objects in tmp."""
    tmp, out = os.path.abspath(tmp), os.path.abspath(out)
    cc = shlex.split(os.environ.get("CC", "cc"))
    cflags = shlex.split(os.environ.get("CFLAGS", "-O2 -g")) + MAKE_CFLAGS

    def one(src):
        obj = os.path.join(tmp, src[:-2] + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        subprocess.run(cc + cflags + ["-c", src, "-o", obj], cwd=root,
                       check=True)
        return obj

    srcs = sources(root)
    if not srcs:
        raise RuntimeError("no C sources under %s" % root)
    with ThreadPoolExecutor(jobs or os.cpu_count() or 1) as pool:
        objs = list(pool.map(one, srcs))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run(cc + LDFLAGS + ["-o", out] + objs, check=True)


class BuildLibdaxfs(build_ext):
    """build_ext that builds libdaxfs (a plain shared object for ctypes,
    no Python extension) into the daxfs package."""

    def run(self):
        base = HERE if self.inplace else self.build_lib
        compile_library(source_root(), os.path.join(self.build_temp, "c"),
                        os.path.join(base, "daxfs", LIB_NAME),
                        self.parallel if isinstance(self.parallel, int)
                        else None)

    def get_outputs(self):
        return [os.path.join(self.build_lib, "daxfs", LIB_NAME)]

    def get_output_mapping(self):
        return {os.path.join(self.build_lib, "daxfs", LIB_NAME):
                os.path.join(HERE, "daxfs", LIB_NAME)}


class SdistWithSources(sdist):
    """sdist that carries the C sources in csrc/ (same layout as the
    repository), so that the sdist builds without the clone."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        root = source_root()
        for g in COPY_GLOBS:
            for p in glob.glob(os.path.join(root, g)):
                dst = os.path.join(base_dir, "csrc", os.path.relpath(p, root))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(p, dst)


class BinaryDistribution(Distribution):
    """Has a compiled part: the wheel gets a platform tag."""

    def has_ext_modules(self):
        return True


CMDCLASS = {"build_ext": BuildLibdaxfs, "sdist": SdistWithSources}
try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    try:
        with warnings.catch_warnings():     # "moved into setuptools 70.1"
            warnings.simplefilter("ignore", FutureWarning)
            from wheel.bdist_wheel import bdist_wheel
    except ImportError:
        bdist_wheel = None
if bdist_wheel is not None:
    class BdistWheel(bdist_wheel):
        """The library is loaded with ctypes: any Python 3, one platform."""

        def get_tag(self):
            return ("py3", "none") + tuple(super().get_tag()[2:])

    CMDCLASS["bdist_wheel"] = BdistWheel

if __name__ == "__main__":
    setup(cmdclass=CMDCLASS, distclass=BinaryDistribution)
