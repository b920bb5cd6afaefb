#!/bin/sh
# DaxFS benchmarks: builds libdaxfs and the benchmark programs, then runs
# overlay_bench, io_bench and fio on tmpfs; prints markdown tables and
# writes raw CSV under bench/results/.  Options go to run.py
# (-t SECONDS per timed test, -n KEYS, -s FILESIZE, --skip overlay,io,fio).
# See docs/benchmarks.md.
set -e
cd "$(dirname "$0")"
if ! command -v fio >/dev/null 2>&1; then
	echo "fio missing: trying apt-get install fio" >&2
	(apt-get install -y fio >/dev/null 2>&1 ||
	 (apt-get update >/dev/null 2>&1 && apt-get install -y fio >/dev/null 2>&1)) ||
		echo "could not install fio: the tmpfs column will be empty" >&2
fi
make -s >&2
exec python3 run.py "$@"
