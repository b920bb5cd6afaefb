#!/bin/sh
# Shared page cache benchmarks (docs/benchmarks.md, "Shared page cache").
# Usage: bench/pcache_run.sh [CACHE_MIB]   (default 64)
set -e
TOP=$(cd "$(dirname "$0")/.." && pwd)
CACHE_MIB=${1:-64}
W=$(mktemp -d /tmp/pcache-bench.XXXXXX)
trap 'rm -rf "$W" /dev/shm/pcache-bench-$$' EXIT
make -s -C "$TOP" build/libdaxfs.a build/bin/mkfs.daxfs
make -s -C "$TOP/bench" ../build/bench/pcache_bench
mkdir "$W/src"
# a dataset of 4.5x the cache
head -c $((CACHE_MIB * 9 / 2))M /dev/urandom > "$W/src/data"
R=/dev/shm/pcache-bench-$$
"$TOP/build/bin/mkfs.daxfs" -q -s $((CACHE_MIB * 2 + 64))M --source "$W/src" \
	--backing "$W/bk0" --cache-size ${CACHE_MIB}M "$R"
echo "# sweep: random 4 KiB reads, working set / cache"
"$TOP/build/bench/pcache_bench" sweep "$R" /data "$W/bk0"
rm -f "$R"
head -c $((CACHE_MIB / 2))M /dev/urandom > "$W/src/data"
"$TOP/build/bin/mkfs.daxfs" -q -f -s $((CACHE_MIB * 2 + 64))M --source "$W/src" \
	--backing "$W/bk0" --cache-size ${CACHE_MIB}M "$R"
echo "# memory: N hosts read the same $((CACHE_MIB / 2)) MiB file"
for n in 1 2 4 8; do
	"$TOP/build/bench/pcache_bench" mem "$R" /data $n "$W/bk0" | tail -n +$([ $n = 1 ] && echo 1 || echo 2)
done
