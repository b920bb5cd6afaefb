#!/bin/sh
# Instructions per block of libdaxfs' read and write calls, natively, under
# callgrind: deterministic (no timer, no other process counts), so a 1%
# change in the core's per-call work shows in one run.
#   bench/ins_op.sh [-j JOBFILE] [-S SECTIONS] [IO_BENCH]
# Runs IO_BENCH (default: build/bench/io_bench, built by make -C bench)
# once per section of bench/fio/table2.fio (or of JOBFILE) (random sections after the
# layout section) with a 64 MiB file, counting only instructions inside
# daxfs_pread / daxfs_pwrite and their per-open-file cache forms
# daxfs_pread_fc / daxfs_pwrite_fc (--toggle-collect), and prints
#   section,ops,ins_op,core_op
# ops: blocks the section moved (io_bench's bytes / bs); ins_op: the
# instructions of those calls per block (the library's work plus the copy).
# core_op: the same without the instructions in libc's memcpy / memmove /
# memset (the copy itself): the part a change to the core moves.
# Time-based sections run 0.2 s of valgrind time: fewer blocks, same
# per-block figure.  Needs valgrind (a benchmark tool: not in setup.sh).
# Compare two trees: build io_bench of each (as bench/ab.sh does) and run
# this on both binaries.
set -e
sections=seqwrite-first-4k,seqwrite-rewrite-4k,seqread-4k,seqwrite-first-64k,seqwrite-rewrite-64k,seqread-64k,seqwrite-first-1m,seqwrite-rewrite-1m,seqread-1m,randread-4k-1j,randread-64k-4j,randwrite-4k-1j
jobfile=bench/fio/table2.fio
while getopts j:S: c; do
	case $c in
	j) jobfile=$OPTARG ;;
	S) sections=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
command -v valgrind >/dev/null ||
	{ echo "bench/ins_op.sh: valgrind missing: apt-get install valgrind" >&2; exit 1; }
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$top/build/bench/io_bench}
tmp=$(mktemp -d /tmp/daxfs-insop.XXXXXX)
trap 'rm -rf "$tmp" /dev/shm/daxfs-insop-$$' EXIT
export DAXFS_BENCH_DIR=/ DAXFS_BENCH_RUNTIME=200ms

# ir SECTIONS FUNCTION: "all copy", the instructions inside FUNCTION over
# SECTIONS run in one fresh region, and those of them in libc's memcpy /
# memmove / memset; io_bench's CSV is left in $tmp/csv
ir() {
	rm -f /dev/shm/daxfs-insop-$$
	tc=
	for f in $2; do tc="$tc --toggle-collect=$f"; done
	valgrind -q --tool=callgrind --callgrind-out-file="$tmp/cg" \
		$tc "$bin" -j "$top/$jobfile" \
		-S "$1" -f /dev/shm/daxfs-insop-$$ >"$tmp/csv"
	callgrind_annotate --auto=no --threshold=100 "$tmp/cg" 2>/dev/null | awk '
		{ n = $1; gsub(",", "", n) }
		/PROGRAM TOTALS/ { all = n }
		/:__(memcpy|memmove|memset)/ { copy += n }
		END { print all + 0, copy + 0 }'
}

# A read section counts only daxfs_pread and daxfs_pread_fc (io_bench writes its file
# first).  A write section that needs another before it (a rewrite: the
# first write; a random one: layout) runs after it, and that one's
# instructions, measured alone, are taken off.
echo "section,ops,ins_op,core_op"
for s in $(echo "$sections" | tr , ' '); do
	# the plain calls or their per-open-file cache forms, by exact name:
	# a pattern matching a function and one it calls (daxfs_pread_fc
	# calls daxfs_pread_try) toggles collection off inside the callee
	fn='daxfs_pwrite daxfs_pwrite_fc' pre=
	case $s in
	*read*) fn='daxfs_pread daxfs_pread_fc' ;;
	seqwrite-rewrite-*) pre=seqwrite-first-${s#seqwrite-rewrite-} ;;
	rand*-runs) pre=layout-runs ;;	# bench/fio/runs.fio
	rand*) pre=layout ;;
	esac
	base="0 0"
	if [ -n "$pre" ] && [ "${fn%% *}" = daxfs_pwrite ]; then
		base=$(ir "$pre" "$fn")
	fi
	n=$(ir "${pre:+$pre,}$s" "$fn")
	awk -F, -v s="$s" -v n="$n" -v base="$base" '
		$1 == "daxfs" && $2 == s { ops = $6 / $4 }
		END {
			split(n, a, " "); split(base, b, " ")
			all = a[1] - b[1]; copy = a[2] - b[2]
			printf "%s,%d,%.0f,%.0f\n", s, ops, all / ops,
			       (all - copy) / ops
		}' "$tmp/csv"
done
