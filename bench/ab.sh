#!/bin/sh
# A/B of libdaxfs between two commits on one fio job section, natively:
#   bench/ab.sh [-n ROUNDS] [-S SECTIONS] [-t RUNTIME] OLD_REV [NEW_REV]
# builds build/libdaxfs.a of OLD_REV (and of NEW_REV, default: this working
# tree) in temporary worktrees, links this tree's bench/io_bench.c against
# each, then runs `io_bench -j bench/fio/table2.fio -S SECTIONS` old, new,
# old, new ... ROUNDS times each.  Prints one CSV row per run and, per
# section, the medians and new/old ratios of MiB/s (wall clock), of
# cpu_ns_op (CPU time per block: less disturbed by a shared machine) and
# of ins_op (user-space instructions per block: nearly deterministic, 0
# where perf events are not allowed).
# Default: 8 rounds of layout,randwrite-4k-4j with 1 s sections.
set -e
rounds=8 sections=layout,randwrite-4k-4j runtime=1s
while getopts n:S:t: c; do
	case $c in
	n) rounds=$OPTARG ;;
	S) sections=$OPTARG ;;
	t) runtime=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n N] [-S sect,...] [-t 1s] OLD [NEW]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/daxfs-ab.XXXXXX)
trap 'for w in "$tmp"/src-*; do [ -d "$w" ] && git -C "$top" worktree remove --force "$w"; done; rm -rf "$tmp"' EXIT

# build TAG REV: $tmp/io_bench.TAG against REV's libdaxfs ("" = this tree)
build() {
	src=$top
	if [ -n "$2" ]; then
		src=$tmp/src-$1
		git -C "$top" worktree add -q --detach "$src" "$2"
	fi
	make -s -C "$src" -j2 build/libdaxfs.a >&2
	cc -O2 -g -std=gnu11 -pthread -I"$src" -I"$src/include" \
	   -o "$tmp/io_bench.$1" "$top/bench/io_bench.c" "$src/build/libdaxfs.a"
}
build old "$1"
build new "${2:-}"

export DAXFS_BENCH_DIR=/ DAXFS_BENCH_RUNTIME=$runtime
echo "tree,round,suite,test,rw,bs,numjobs,bytes,seconds,mib_s,cpu_ns_op,ins_op" |
	tee "$tmp/rows.csv"
i=1
while [ $i -le "$rounds" ]; do
	for t in old new; do
		"$tmp/io_bench.$t" -j "$top/bench/fio/table2.fio" -S "$sections" \
			-f /dev/shm/daxfs-ab-$$ | sed -n "2,\$s/^/$t,$i,/p"
	done
	i=$((i + 1))
done | tee -a "$tmp/rows.csv"
python3 - "$tmp/rows.csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for test in dict.fromkeys(r["test"] for r in rows):
    m = {(t, k): statistics.median(float(r[k]) for r in rows
                                   if r["tree"] == t and r["test"] == test)
         for t in ("old", "new") for k in ("mib_s", "cpu_ns_op", "ins_op")}
    print("# %s:" % test, "; ".join(
        "%s old %.0f new %.0f new/old %.3f" %
        (name, m["old", k], m["new", k], m["new", k] / (m["old", k] or 1))
        for name, k in (("MiB/s", "mib_s"), ("CPU ns/block", "cpu_ns_op"),
                        ("instructions/block", "ins_op"))))
EOF
