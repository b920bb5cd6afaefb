#!/bin/sh
# Fresh page batches mapped at once (DAXFS_POPULATE, docs/alloc.md): CPU
# time per 4 KiB call of a process that writes pages new to it, with and
# without, and tmpfs, side by side in every round.
#   bench/populate_ab.sh [-n ROUNDS] [-m MIB]
# Each round and side gets a fresh region (so every page the writer
# touches is new to its page tables, as for a program that starts, writes
# and exits) and runs build/bench/preload_io under `daxfs run` for the
# rows "first" (sequential writes of a new file) and "append" (O_APPEND
# writes); tmpfs runs the same rows on a /dev/shm file.  Prints ns per
# call of every round, then the medians and populate/plain, tmpfs/populate.
set -e
rounds=7 mib=64
while getopts n:m: c; do
	case $c in
	n) rounds=$OPTARG ;;
	m) mib=$OPTARG ;;
	*) exit 2 ;;
	esac
done
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/build/bin io=$top/build/bench/preload_io
[ -x "$io" ] || { echo "build/bench/preload_io missing: make -C bench" >&2; exit 1; }
r=/dev/shm/daxfs-popab-$$ t=/dev/shm/daxfs-popab-tmpfs-$$
trap 'rm -f "$r" "$t"' EXIT
out=$(mktemp /tmp/daxfs-popab.XXXXXX)
i=0
while [ $i -lt "$rounds" ]; do
	for row in first append; do
		for side in plain populate tmpfs; do
			rm -f "$r" "$t"
			if [ $side = tmpfs ]; then
				ns=$("$io" "$t" "$mib" $row | awk '{print $2}')
			else
				"$bin/mkfs.daxfs" -s $((mib * 4))M "$r" >/dev/null
				p=1
				[ $side = plain ] && p=0
				ns=$(DAXFS_POPULATE=$p "$bin/daxfs" -r "$r" run -- \
					"$io" /daxfs/f "$mib" $row | awk '{print $2}')
			fi
			echo "$row,$side,$ns" | tee -a "$out"
		done
	done
	i=$((i + 1))
done
for row in first append; do
	med() { grep "^$row,$1," "$out" | cut -d, -f3 | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
	a=$(med plain) b=$(med populate) c=$(med tmpfs)
	echo "# $row: median ns/call plain $a populate $b tmpfs $c;" \
		"populate/plain $(awk -v x="$b" -v y="$a" 'BEGIN { printf "%.3f", x / y }')" \
		"tmpfs/populate $(awk -v x="$c" -v y="$b" 'BEGIN { printf "%.3f", x / y }')"
done
rm -f "$out"
