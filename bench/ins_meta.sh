#!/bin/sh
# Instructions per create, stat and unlink of libdaxfs' path calls,
# natively, under callgrind: deterministic, so a change of a few
# instructions per call shows in one run (docs/benchmarks.md, "The
# metadata path").
#   bench/ins_meta.sh [-n N] [-p FILE] [META_BENCH]
# Runs META_BENCH (default: build/bench/meta_bench, built by make -C bench)
# `daxfs REGION N 1` once per call, counting only the instructions inside
# daxfs_path_create, daxfs_path_stat or daxfs_path_unlink
# (--toggle-collect) on one directory of N files (default 10000), and
# prints
#   op,n,ins_op,core_op
# ins_op: instructions per call (the library's path walk and the core);
# core_op: of those, the ones inside the core call that does the change
# (daxfs_mknod or daxfs_mknod_at for create, daxfs_unlink or
# daxfs_unlink_at for unlink; 0 for stat).  The _at calls, since
# 2026-11-29, also look up the directory the name is in.  readdir: one
# listing of the N names (daxfs_path_readdir), per name; core_op:
# daxfs_readdir, the core's walk (daxfs.ko's first listing runs it too).
# Then the open set and the kernel's create path, from CREATE_PATH (default:
# create_path beside META_BENCH, bench/create_path.c) run `REGION N 1`
# (N creates each way) with only its two loops collected, a row each of
# instructions per call (core_op 0):
#   open_get       daxfs_open_get, the direct way's open of the new file
#   open_put       daxfs_open_put, the close of a new file (all three ways)
#   tmpfile        daxfs_tmpfile_attr, the held way's unnamed file
#   link_created   daxfs_link_created, its naming
#   create_held    daxfs_create_held: the two in one op (daxfs.ko's create
#                  since session 59; its close open_put)
#   unlink_fc      daxfs_unlink_fc, daxfs.ko's unlink (the three ways'
#                  files, 3N calls, through caches a getattr filled)
# (tmpfile and link_created: with the attributes daxfs.ko asks for.)
# -p FILE: also writes the inclusive profile of the create calls
# (callgrind_annotate --inclusive=yes, per create) to FILE.
# Compare two trees: build meta_bench of each (as bench/ab.sh does) and
# run this on both binaries.  Needs valgrind (not in setup.sh).
set -e
n=10000 prof=
while getopts n:p: c; do
	case $c in
	n) n=$OPTARG ;;
	p) prof=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
command -v valgrind >/dev/null ||
	{ echo "bench/ins_meta.sh: valgrind missing: apt-get install valgrind" >&2; exit 1; }
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$top/build/bench/meta_bench}
cpath=${CREATE_PATH:-$(dirname "$bin")/create_path}
tmp=$(mktemp -d /tmp/daxfs-insmeta.XXXXXX)
trap 'rm -rf "$tmp" /dev/shm/daxfs-insmeta-$$' EXIT

# total FUNCTION [INNER]: instructions inside FUNCTION over the run, and
# those of them inside INNER (callgrind_annotate's inclusive count)
total() {
	valgrind -q --tool=callgrind --callgrind-out-file="$tmp/cg" \
		--toggle-collect="$1" "$bin" daxfs /dev/shm/daxfs-insmeta-$$ "$n" 1 \
		>/dev/null
	callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg" 2>/dev/null |
		awk -v inner="${2:-none}" '
		{ v = $1; gsub(",", "", v) }
		/PROGRAM TOTALS/ { all = v }
		$0 ~ ":" inner " " { core = v }
		END { print all + 0, core + 0 }'
}

echo "op,n,ins_op,core_op"
for op in 'create:daxfs_mknod(_at)?' stat: readdir:daxfs_readdir \
	'unlink:daxfs_unlink(_at)?'; do
	name=${op%%:*}
	r=$(total "daxfs_path_$name" "${op#*:}")
	if [ "$name" = create ] && [ -n "$prof" ]; then
		callgrind_annotate --inclusive=yes --auto=no --threshold=99.5 "$tmp/cg" 2>/dev/null |
			awk -v n="$n" '
			/^ *[0-9,]+ \(/ {
				v = $1; gsub(",", "", v)
				f = $0; sub(/^ *[0-9,]+ \( *[0-9.]+%\) */, "", f)
				sub(/ \[.*/, "", f); sub(/.*:/, "", f)
				if (f ~ /^(PROGRAM|\(below|__libc|main$|0x)/ || f in seen)
					next
				printf "%8.0f  %s\n", v / n, f
				seen[f] = 1
			}' >"$prof"
	fi
	echo "$r" | awk -v op="$name" -v n="$n" \
		'{ printf "%s,%d,%.0f,%.0f\n", op, n, $1 / n, $2 / n }'
done

# the open set's calls and the held create's, per call (open_put and unlink_fc: 3n calls)
[ -x "$cpath" ] || { echo "bench/ins_meta.sh: $cpath missing: make -C bench" >&2; exit 1; }
valgrind -q --tool=callgrind --callgrind-out-file="$tmp/cp" \
	--toggle-collect=way_direct --toggle-collect=way_held \
	--toggle-collect=way_named --toggle-collect=unlink_all \
	"$cpath" /dev/shm/daxfs-insmeta-$$ "$n" 1 >/dev/null
callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$tmp/cp" 2>/dev/null |
	awk -v n="$n" '
	{ v = $1; gsub(",", "", v) }
	/^ *[0-9,]+ .*:daxfs_open_get / { c["open_get"] = v }
	/^ *[0-9,]+ .*:daxfs_open_put / { c["open_put"] = v }
	/^ *[0-9,]+ .*:daxfs_tmpfile_attr / { c["tmpfile"] = v }
	/^ *[0-9,]+ .*:daxfs_link_created / { c["link_created"] = v }
	/^ *[0-9,]+ .*:daxfs_create_held / { c["create_held"] = v }
	/^ *[0-9,]+ .*:daxfs_unlink_fc / { c["unlink_fc"] = v }
	END {
		printf "open_get,%d,%.0f,0\n", n, c["open_get"] / n
		printf "open_put,%d,%.0f,0\n", 3 * n, c["open_put"] / (3 * n)
		printf "tmpfile,%d,%.0f,0\n", n, c["tmpfile"] / n
		printf "link_created,%d,%.0f,0\n", n, c["link_created"] / n
		printf "create_held,%d,%.0f,0\n", n, c["create_held"] / n
		printf "unlink_fc,%d,%.0f,0\n", 3 * n, c["unlink_fc"] / (3 * n)
	}'
