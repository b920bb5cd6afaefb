"""`make deb` (scripts/make-deb.sh): the Debian packages build, lintian
finds no error, and what they install works where it is installed.

Opt-in (DAXFS_DEB_TESTS=1): dpkg-buildpackage and lintian take a few
minutes.  The Debian-root test (scripts/debroot-test.sh) goes further:
it installs the packages in a debootstrapped Debian 12 and boots them.
"""

import os
import subprocess
from pathlib import Path

import pytest

from helpers import build, env

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(os.environ.get("DAXFS_DEB_TESTS") != "1",
                                reason="set DAXFS_DEB_TESTS=1 (slow: make deb)")

PROG = r'''
#include <stdio.h>
#include <daxfs/libdaxfs.h>

int main(int argc, char **argv)
{
	struct daxfs_handle *h;
	struct daxfs_attr st;
	int err;

	err = daxfs_region_create(argv[1], 16 << 20, NULL);
	if (!err)
		err = daxfs_region_open(argv[1], 0, &h);
	if (err)
		return fprintf(stderr, "region: %d\n", err), 1;
	err = daxfs_path_mkdir(h, "/made-by-libdaxfs", 0755);
	if (!err)
		err = daxfs_path_stat(h, "/made-by-libdaxfs", &st);
	daxfs_region_close(h);
	printf("%d\n", err);
	return err != 0;
}
'''


def run(*argv, **kw):
    res = subprocess.run([str(a) for a in argv], capture_output=True,
                         text=True, timeout=1800, **kw)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def left_behind():
    """What a build could leave: ignored paths, anything under debian/
    (other untracked files may be a developer's work in progress)."""
    lines = run("git", "-C", ROOT, "status", "--porcelain",
                "--ignored").splitlines()
    return sorted(x for x in lines if x.startswith("!!") or " debian/" in x)


@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    """The .deb files of `make deb`, unpacked under root/."""
    out = tmp_path_factory.mktemp("deb")
    with build.lock():      # no other test's build adds files to the tree meanwhile
        before = left_behind()
        run(ROOT / "scripts" / "make-deb.sh", out)	# fails on a lintian error
        assert left_behind() == before, "make deb left files in the tree"
    root = out / "root"
    for deb in out.glob("daxfs-*_all.deb"), out.glob("daxfs-tools_*.deb"):
        for d in deb:
            run("dpkg-deb", "-x", d, root)
    return root


def test_installs_tools_library_man_pages_completion(debs):
    multiarch = run("dpkg-architecture", "-qDEB_HOST_MULTIARCH").strip()
    for p in ("sbin/mkfs.daxfs", "sbin/fsck.daxfs", "sbin/mount.fuse.daxfs",
              "usr/bin/daxfs", "usr/bin/daxfs-fuse",
              "usr/lib/daxfs/libdaxfs-preload.so",
              "usr/lib/%s/libdaxfs.so.0" % multiarch,
              "usr/lib/%s/pkgconfig/daxfs.pc" % multiarch,
              "usr/include/daxfs/libdaxfs.h",
              "usr/share/man/man8/fsck.daxfs.8.gz",
              "usr/share/man/man5/daxfs.5.gz",
              "usr/share/bash-completion/completions/daxfs"):
        assert os.path.lexists(debs / p), p
    conf = (next((debs / "usr/src").glob("daxfs-*")) / "dkms.conf").read_text()
    assert 'BUILT_MODULE_NAME[0]="daxfs"' in conf


def test_header_and_pkg_config_build_a_program(debs, tmp_path, region_path):
    multiarch = run("dpkg-architecture", "-qDEB_HOST_MULTIARCH").strip()
    e = dict(os.environ, PKG_CONFIG_SYSROOT_DIR=str(debs),
             PKG_CONFIG_PATH=str(debs / "usr/lib" / multiarch / "pkgconfig"))
    flags = run("pkg-config", "--cflags", "--libs", "daxfs", env=e).split()
    (tmp_path / "prog.c").write_text(PROG)
    run("cc", "-o", tmp_path / "prog", tmp_path / "prog.c", *flags)
    e = dict(os.environ, LD_LIBRARY_PATH=str(debs / "usr/lib" / multiarch))
    assert run(tmp_path / "prog", region_path, env=e).strip() == "0"
    assert "made-by-libdaxfs" in run(debs / "usr/bin/daxfs", "-r",
                                     region_path, "ls")


def test_installed_daxfs_run_finds_its_preload(debs, region_path):
    env.mkfs(region_path, 16 * env.MiB)
    daxfs = debs / "usr/bin/daxfs"
    run(daxfs, "-r", region_path, "write", "/f", input="through the preload\n")
    out = run(daxfs, "-r", region_path, "run", "--", "cat", "/daxfs/f")
    assert out == "through the preload\n"


def test_dkms_tree_builds_the_module(debs, tmp_path):
    kver = subprocess.run(["bash", "-c", ". vm/common.sh && daxfs_vm_kver"],
                          cwd=ROOT, capture_output=True, text=True).stdout.strip()
    kdir = Path("/lib/modules/%s/build" % kver)
    if not kver or not kdir.is_dir():
        pytest.skip("no guest kernel headers (vm/setup.sh)")
    src = next((debs / "usr/src").glob("daxfs-*"))
    build = tmp_path / "build"
    run("cp", "-r", src, build)		# as dkms copies it to its build/
    out = run("make", "-C", kdir, "M=%s" % build, "modules")
    assert (build / "daxfs.ko").exists()
    assert "warning" not in out.lower()
