#!/usr/bin/env bash
# `make kernels` (docs/kernel.md, "Supported kernels"): daxfs.ko built warning-free for
# Debian 12's 6.1 and for the kernels of the newer suites, and the kernel cluster and VFS
# tests (tests/vm/test_kernel_cluster.py, test_kernel_vfs.py) run in QEMU guests booted
# with each kernel.
#
#   scripts/kernels.sh [-b] [SUITE ...]   (default: bookworm-backports trixie-backports)
#
# 6.1: `make module`, the guests' own kernel.  Each SUITE: scripts/kernel-compat.sh -i
# (this host's gcc, or a debootstrapped Debian root through scripts/kernel-root.sh),
# then the guests with DAXFS_VM_ROOT= its kernel load that module (build/daxfs-VER.ko,
# vm/guest/lib.sh vm_daxfs_ko).  -b: build only, no guest tests.
# Needs root and the Debian archive; results in build/kernels/summary.
set -uo pipefail
cd "$(dirname "$0")/.."
TESTS=1
while getopts "bh" o; do
	case $o in
	b) TESTS=0 ;;
	*) sed -n '2,12p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
SUITES=("${@:-bookworm-backports trixie-backports}")
[ $# -gt 0 ] || read -ra SUITES <<< "${SUITES[0]}"
OUT=build/kernels
mkdir -p "$OUT"
: > "$OUT/summary"
fail=0

# one kernel's guest tests: $1 name, then the environment for pytest
run_tests() {
	local name=$1 log="$OUT/pytest-$1.log"
	shift
	[ $TESTS = 1 ] || return 0
	echo "== $name: tests/vm/test_kernel_cluster.py test_kernel_vfs.py (log: $log)"
	if env DAXFS_VM_TESTS=1 "$@" python3 -m pytest -q -p no:cacheprovider \
	   tests/vm/test_kernel_cluster.py tests/vm/test_kernel_vfs.py > "$log" 2>&1; then
		echo "$name: tests: $(tail -1 "$log")" >> "$OUT/summary"
	else
		tail -20 "$log"
		echo "$name: tests FAILED: $(tail -1 "$log")" >> "$OUT/summary"
		fail=1
	fi
}

# warnings (any line saying warning or error) in a build log
warnings() { grep -Eci 'warning|error' "$1"; }

make -s all || exit 1
echo "== 6.1 (the guests' kernel): make module"
if make -s module > "$OUT/kmod-6.1.log" 2>&1; then
	kver=$(bash -c '. vm/common.sh && daxfs_vm_kver')
	echo "$kver: built, $(warnings "$OUT/kmod-6.1.log") warnings" >> "$OUT/summary"
	run_tests "$kver"
else
	cat "$OUT/kmod-6.1.log"
	echo "6.1: build FAILED" >> "$OUT/summary"
	fail=1
fi

for s in "${SUITES[@]}"; do
	rm -f "$OUT/$s"
	scripts/kernel-compat.sh -i "$s" || fail=1
	if [ ! -f "$OUT/$s" ]; then
		echo "$s: build FAILED" >> "$OUT/summary"
		continue
	fi
	read -r kver root < "$OUT/$s"
	echo "$kver ($s): built, $(warnings "build/kmod-$kver.log") warnings" >> "$OUT/summary"
	run_tests "$kver" DAXFS_VM_ROOT="$root" DAXFS_VM_NOBUILD=1
done
echo "== summary"
cat "$OUT/summary"
exit $fail
