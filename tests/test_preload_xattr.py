"""Extended attributes under the preload (`daxfs run`, docs/xattr.md):
setfattr, getfattr and Python's os.*xattr by path, by descriptor and on a
symlink itself give the same results on a region as on tmpfs, and another
host of the region sees them."""
import os

import pytest

from helpers import env
from helpers import preload as pl

SCRIPT = r'''
set -e
mkdir "$D"
cd "$D"
echo data > f
setfattr -n trusted.color -v blue f
setfattr -n trusted.big -v 0x$(head -c 3000 /dev/zero | od -An -tx1 -v | tr -d ' \n') f
getfattr -d -m trusted f | cut -c1-60
"$PY" -c "
import os
print(os.getxattr('f', 'trusted.color'))
try:
    os.setxattr('f', 'trusted.color', b'x', os.XATTR_CREATE)
except OSError as e:
    print('create', e.errno)
try:
    os.getxattr('f', 'trusted.none')
except OSError as e:
    print('get', e.errno)
fd = os.open('f', os.O_RDONLY)
os.setxattr(fd, 'trusted.fd', b'via-fd')
print(os.getxattr(fd, 'trusted.fd'), sorted(os.listxattr(fd)))
os.removexattr('f', 'trusted.big')
print(sorted(os.listxattr('f')))
os.symlink('f', 'l')
os.setxattr('l', 'trusted.own', b'link', follow_symlinks=False)
print(os.listxattr('l', follow_symlinks=False), sorted(os.listxattr('l')))
"
'''


@pytest.fixture(autouse=True)
def _built():
    if not os.path.exists(pl.PRELOAD_LIB):
        pytest.fail("%s is missing: run make first" % pl.PRELOAD_LIB)
    if not all(os.path.exists("/usr/bin/" + t) for t in ("setfattr", "getfattr")):
        pytest.skip("attr is needed (scripts/setup.sh)")


def test_xattrs_match_tmpfs(region):
    out = pl.compare(region, SCRIPT, "xattr")
    assert b"trusted.color=\"blue\"" in out
    assert b"['trusted.color', 'trusted.fd']" in out
    with env.daxfs.Region(region) as r:
        assert r.getxattr("/xattr/f", "trusted.color") == b"blue"
        assert r.getxattr("/xattr/f", "trusted.fd") == b"via-fd"
