#!/bin/sh
# vm/run-suites.sh - pjdfstest, fsx (with mmap) and fsstress on daxfs.ko in one QEMU guest.
# The suites are built outside the repository (docs/testing.md, "External suites"); this
# script fetches and builds nothing.  Usage:
#   vm/run-suites.sh --pjdfstest DIR --xfstests DIR [--run pjd+fsx+fsxnomap+fsstress] ...
#   DAXFS_SUITES=DIR vm/run-suites.sh        (DIR/pjdfstest and DIR/xfstests)
# Needs `make all module` and vm/setup.sh.  See vm/suites.py --help for every option.
exec python3 "$(dirname "$0")/suites.py" "$@"
