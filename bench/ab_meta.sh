#!/bin/sh
# Wall-clock A/B of two meta_bench binaries (libdaxfs of two trees, as
# bench/ab.sh builds them), natively, old and new alternating:
#   bench/ab_meta.sh [-c] [-n N] [-r ROUNDS] [-w WARM] OLD_BIN NEW_BIN
# Each round runs `BIN daxfs REGION N 1 WARM` (create, stat, readdir,
# unlink of N files in one new directory, after WARM untimed create and
# unlink passes: default 1, so that the timed pass does not fault in a
# fresh region page every two files) old then new (new then old on odd
# rounds).  Prints a CSV row per run and per op the medians of µs per file,
# the new/old ratio of the medians, the median of the per-round ratios,
# and the new binary's operations per second.  Defaults: N 100000, 9
# rounds.  On a shared machine quote only the per-round ratios; -c
# measures the thread's CPU time instead of the wall clock
# (DAXFS_BENCH_CPU=1: meta_bench.c).
set -e
n=100000 rounds=9 warm=1 cpu=0
while getopts cn:r:w: c; do
	case $c in
	c) cpu=1 ;;
	n) n=$OPTARG ;;
	r) rounds=$OPTARG ;;
	w) warm=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { echo "usage: $0 [-c] [-n N] [-r ROUNDS] [-w WARM] OLD_BIN NEW_BIN" >&2; exit 2; }
tmp=$(mktemp -d /tmp/daxfs-abmeta.XXXXXX)
shm=/dev/shm/daxfs-abmeta-$$
trap 'rm -rf "$tmp" "$shm"' EXIT

run() {
	DAXFS_BENCH_CPU=$cpu "$2" daxfs "$shm" "$n" 1 "$warm" | awk -F, -v r="$1" -v t="$3" \
		'NR > 1 && $1 != "readdir" { print r "," t "," $1 "," $4 }'
}

echo "round,tree,op,us_per_file" | tee "$tmp/csv"
r=0
while [ $r -lt "$rounds" ]; do
	if [ $((r % 2)) = 0 ]; then
		run $r "$1" old; run $r "$2" new
	else
		run $r "$2" new; run $r "$1" old
	fi | tee -a "$tmp/csv"
	r=$((r + 1))
done
python3 - "$tmp/csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("op,old_us,new_us,new/old,median_round_ratio,new_ops_per_s")
for op in ("create", "stat", "unlink"):
    v = {(r["round"], r["tree"]): float(r["us_per_file"]) for r in rows if r["op"] == op}
    old = [x for (k, t), x in v.items() if t == "old"]
    new = [x for (k, t), x in v.items() if t == "new"]
    ratios = [v[(k, "new")] / v[(k, "old")] for (k, t) in v if t == "old" and (k, "new") in v]
    mo, mn = statistics.median(old), statistics.median(new)
    print("%s,%.3f,%.3f,%.3f,%.3f,%.0f" % (op, mo, mn, mn / mo,
          statistics.median(ratios), 1e6 / mn))
EOF
