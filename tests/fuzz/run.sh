#!/bin/sh
# Builds the fsck/core fuzzer with libFuzzer + ASan + UBSan and runs it.
#   tests/fuzz/run.sh [SECONDS] [JOBS] [extra libFuzzer args...]
# Needs clang (apt-get install clang).  Output: build/fuzz/; new corpus
# entries in build/fuzz/corpus; crashes in tests/fuzz/crashes/ (kept
# only when small: the lead decides what to commit).
# FUZZ_STRICT=1 makes "repair then check still finds errors" a crash.
set -e
cd "$(dirname "$0")/../.."
SECS=${1:-60}
JOBS=${2:-1}
[ $# -ge 1 ] && shift
[ $# -ge 1 ] && shift
OUT=build/fuzz
mkdir -p "$OUT/corpus" tests/fuzz/crashes
CC=${CLANG:-clang}
$CC -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer -Wno-comment \
    -I. -Iinclude core/*.c tests/fuzz/fuzz_check.c -o "$OUT/fuzz_check"
[ -d tests/fuzz/seeds ] && SEEDS=tests/fuzz/seeds || SEEDS=
# fork mode keeps fuzzing after a crash or timeout (every artifact is
# kept); FUZZ_STOP=1 stops at the first one instead
if [ -n "$FUZZ_STOP" ]; then
	PAR=
else
	PAR="-fork=$JOBS -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1"
fi
[ -n "$BUILD_ONLY" ] && exit 0
exec "$OUT/fuzz_check" -max_total_time="$SECS" -max_len=4096 -timeout=${FUZZ_TIMEOUT:-20} \
	-rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix=tests/fuzz/crashes/ $PAR "$@" "$OUT/corpus" $SEEDS
