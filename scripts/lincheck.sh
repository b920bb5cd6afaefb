#!/usr/bin/env bash
# Runs the linearizability check (docs/lincheck.md): lc_run's rounds piped
# into the porcupine checker as they are written.  Exit status: 0 every
# round linearizable, 1 a violation (reported on stderr), 2 a failure of
# either program.
#
#   scripts/lincheck.sh [-b BUILD] [-t SECONDS] [-w WORKERS] [-o FILE]
#                       [-- LC_RUN OPTIONS]
#
# -o FILE keeps the histories (about 60 bytes an operation) for a second
# look at a violation: build/lincheck/lincheck FILE.  BUILD holds lincheck/lc_run and lincheck/lincheck (default build); the
# other options go to lc_run (tests/lincheck/lc_driver.c: -m, -k, -c ...).
set -euo pipefail

build=build
secs=60
workers=8
save=/dev/null
while getopts "b:t:w:o:" opt; do
	case $opt in
	b) build=$OPTARG ;;
	t) secs=$OPTARG ;;
	w) workers=$OPTARG ;;
	o) save=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))

checker=${LINCHECK:-build/lincheck/lincheck}
region=/dev/shm/lincheck-$$
trap 'rm -f "$region"' EXIT
set +e
"$build/lincheck/lc_run" -r "$region" -t "$secs" -w "$workers" "$@" |
	tee "$save" | "$checker"
st=("${PIPESTATUS[@]}")
set -e
if [ "${st[0]}" != 0 ] || [ "${st[1]}" != 0 ]; then
	echo "lincheck.sh: lc_run or tee failed (status ${st[*]})" >&2
	exit 2
fi
exit "${st[2]}"
