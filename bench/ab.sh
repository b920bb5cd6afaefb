#!/bin/sh
# A/B of libdaxfs between two commits on one fio job section, natively:
#   bench/ab.sh [-g] [-n ROUNDS] [-S SECTIONS] [-t RUNTIME] OLD_REV [NEW_REV]
# builds build/libdaxfs.a of OLD_REV (and of NEW_REV, default: this working
# tree) in temporary worktrees, links this tree's bench/io_bench.c against
# each, then runs `io_bench -j bench/fio/table2.fio -S SECTIONS` old, new,
# old, new ... ROUNDS times each.  Prints one CSV row per run and, per
# section, the medians and new/old ratios of MiB/s (wall clock), of
# cpu_ns_op (CPU time per block: less disturbed by a shared machine) and
# of ins_op (user-space instructions per block: nearly deterministic, 0
# where perf events are not allowed).
# Default: 8 rounds of layout,randwrite-4k-4j with 1 s sections.
# -j JOBFILE: another job file than bench/fio/table2.fio (native only), e.g.
# bench/fio/runs.fio (whole 2 MiB writes: format 11's runs).
#
# -g: the same in one QEMU TCG guest (2 vCPUs, as bench/run) instead: builds
# daxfs.ko and mkfs.daxfs of both trees, one fresh nvdimm per tree, and
# vm/guest/daxfs-ab.sh loads the modules in turn (old new, new old, ...)
# and runs fio; prints MiB/s per round and section, the medians and the
# per-round new/old ratios.  Default there: 2 s sections.
set -e
rounds=8 sections=layout,randwrite-4k-4j runtime= guest=0
jobfile=bench/fio/table2.fio
while getopts gj:n:S:t: c; do
	case $c in
	g) guest=1 ;;
	j) jobfile=$OPTARG ;;
	n) rounds=$OPTARG ;;
	S) sections=$OPTARG ;;
	t) runtime=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-g] [-j JOBFILE] [-n N] [-S sect,...] [-t 1s] OLD [NEW]" >&2; exit 2; }
[ -n "$runtime" ] || runtime=$([ $guest = 1 ] && echo 2s || echo 1s)
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/daxfs-ab.XXXXXX)
shm=/dev/shm/daxfs-ab-$$
trap 'for w in "$tmp"/src-*; do [ -d "$w" ] && git -C "$top" worktree remove --force "$w"; done; rm -rf "$tmp" "$shm"* "$top/build/ab"' EXIT

# build TAG REV ("" = this tree): REV's libdaxfs linked with this tree's
# io_bench.c; for -g its daxfs.ko in build/ab/ (the guest sees the repo)
# and a region made by its mkfs.daxfs
build() {
	src=$top
	if [ -n "$2" ]; then
		src=$tmp/src-$1
		git -C "$top" worktree add -q --detach "$src" "$2"
	fi
	if [ $guest = 1 ]; then
		make -s -C "$src" -j2 build/bin/mkfs.daxfs module >&2
		mkdir -p "$top/build/ab"
		cp "$src/kernel/daxfs.ko" "$top/build/ab/daxfs-$1.ko"
		truncate -s 512M "$shm-$1"
		"$src/build/bin/mkfs.daxfs" -f -q "$shm-$1"
		return
	fi
	make -s -C "$src" -j2 build/libdaxfs.a >&2
	cc -O2 -g -std=gnu11 -pthread -I"$src" -I"$src/include" \
	   -o "$tmp/io_bench.$1" "$top/bench/io_bench.c" "$src/build/libdaxfs.a"
}
build old "$1"
build new "${2:-}"

if [ $guest = 1 ]; then
	nsec=$(echo "$sections" | tr ',' '\n' | wc -l)
	"$top/vm/run-guest.sh" -n ab -s "$shm-old" -s "$shm-new" -z 512M -c 2 \
		-m 2G -o "$tmp/out" -l "$tmp/guest.log" \
		-t $((rounds * 2 * (nsec * 20 + 30) + 120)) daxfs-ab \
		"$rounds" "$runtime" "$(echo "$sections" | tr ',' '+')" ||
		{ tail -20 "$tmp/guest.log" >&2; exit 1; }
	python3 - "$tmp/out" <<'PY'
import glob, json, os, re, statistics, sys
bw = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "fio-*.json"))):
    tree, rnd = re.match(r"fio-(\w+)-(\d+)\.json", os.path.basename(f)).groups()
    text = open(f).read()
    for job in json.loads(text[text.index("{"):])["jobs"]:
        mib = (job["read"]["bw_bytes"] + job["write"]["bw_bytes"]) / 2**20
        bw.setdefault(job["jobname"], {}).setdefault(tree, {})[int(rnd)] = mib
print("tree,round,test,mib_s")
for test, t in bw.items():
    for tree in ("old", "new"):
        for rnd in sorted(t[tree]):
            print("%s,%d,%s,%.1f" % (tree, rnd, test, t[tree][rnd]))
for test, t in bw.items():
    mo, mn = (statistics.median(t[x].values()) for x in ("old", "new"))
    rr = [t["new"][r] / t["old"][r] for r in t["old"] if t["old"][r]]
    print("# %s: MiB/s old %.0f new %.0f new/old %.2f; per-round new/old: "
          "median %.2f, range %.2f-%.2f, new faster in %d of %d" %
          (test, mo, mn, mn / mo, statistics.median(rr), min(rr), max(rr),
           sum(x > 1 for x in rr), len(rr)))
PY
	exit 0
fi

export DAXFS_BENCH_DIR=/ DAXFS_BENCH_RUNTIME=$runtime
echo "tree,round,suite,test,rw,bs,numjobs,bytes,seconds,mib_s,cpu_ns_op,ins_op" |
	tee "$tmp/rows.csv"
i=1
while [ $i -le "$rounds" ]; do
	for t in old new; do
		"$tmp/io_bench.$t" -j "$top/$jobfile" -S "$sections" \
			-f "$shm" | sed -n "2,\$s/^/$t,$i,/p"
	done
	i=$((i + 1))
done | tee -a "$tmp/rows.csv"
python3 - "$tmp/rows.csv" <<'PY'
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
PY
