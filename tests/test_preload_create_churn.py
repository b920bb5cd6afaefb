"""open(O_CREAT) through the preload while other hosts create and unlink
the same name (docs/preload.md).

Three programs under `daxfs run` (each its own host) loop open(O_CREAT),
write, close and unlink of one name for a while.  In an existing directory
open(O_CREAT) must always give a descriptor: the file was there or it made
it.  Before session 53 the open gave ENOENT when the inode it found or
made was unlinked and freed before its descriptor held it, and could give
EAGAIN after 16 lost rounds (lib/path.c do_path_create, lib/preload/
open.c pl_open_region; tests/c/test_create_churn.c checks the library's
call).
"""
import os
import subprocess

from helpers import create_churn, env
from helpers import preload


def test_create_while_other_hosts_churn_the_name(region):
    def under_preload(argv, **kw):
        return preload.popen(region, argv, **kw)

    results = create_churn.run([preload.AT + "/x"] * 3, 2.0, under_preload)
    assert all(r["ok"] > 0 for r in results), results
    assert [r["failed"] for r in results] == [{}, {}, {}], results


def test_binding_create_while_other_hosts_churn_the_name(region):
    """The same through the Python binding (Region.open(create=True)),
    whose create and open-set hold are two calls with the same window."""
    def with_path(argv, **kw):
        return subprocess.Popen(argv, env=dict(os.environ, PYTHONPATH=env.PYDIR),
                                **kw)

    results = create_churn.run([region + ":/x"] * 3, 2.0, with_path,
                               create_churn.BINDING)
    assert all(r["ok"] > 0 for r in results), results
    assert [r["failed"] for r in results] == [{}, {}, {}], results
