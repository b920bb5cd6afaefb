#!/usr/bin/env bash
# Builds daxfs.ko against newer Debian kernels than the 6.1 of vm/ (docs/kernel.md,
# "Supported kernels").  Not part of `make check`: it needs the Debian archive.
#
#   scripts/kernel-compat.sh [-i] [SUITE ...]      (default: bookworm-backports)
#   make module-check [SUITES="bookworm-backports trixie"] [BOOT=1]
#
# For each suite: the suite's linux-headers-amd64 points at one kernel version; its
# headers, -common and linux-kbuild packages are fetched with a private apt
# configuration and unpacked (dpkg -x) under $DAXFS_KCOMPAT_DIR (default
# /tmp/daxfs-kcompat), nothing is installed and /lib/modules is left alone.  daxfs.ko is
# built there (build/kmod-VER/, build/daxfs-VER.ko); any compiler warning fails the run.
# -i also unpacks the kernel image and runs depmod -b, so that the QEMU guests of vm/
# can boot it:  DAXFS_VM_ROOT=$DAXFS_KCOMPAT_DIR/VER/img (printed at the end, and
# "VER ROOT" written to build/kernels/SUITE).  A suite whose gcc this host lacks is
# built in a debootstrapped Debian root instead (scripts/kernel-root.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/debian-kver.sh
REPO=$PWD
WORK=${DAXFS_KCOMPAT_DIR:-/tmp/daxfs-kcompat}
IMAGE=0
while getopts "ih" o; do
	case $o in
	i) IMAGE=1 ;;
	*) sed -n '2,17p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
SUITES=("${@:-bookworm-backports}")

# 6.12's Kbuild runs pahole (BTF) when CONFIG_DEBUG_INFO_BTF is set: dwarves
command -v pahole >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q dwarves >/dev/null

APTD=$WORK/apt
mkdir -p "$APTD/lists/partial" "$APTD/cache/archives/partial"
: > "$APTD/sources.list"
for s in "${SUITES[@]}"; do
	echo "deb http://deb.debian.org/debian $s main" >> "$APTD/sources.list"
done
APT=(-o Dir::Etc::SourceList="$APTD/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o Dir::State::Lists="$APTD/lists" -o Dir::Cache="$APTD/cache"
     -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
apt-get "${APT[@]}" -q update >/dev/null

apt_cache() { apt-cache "${APT[@]}" "$@"; }

# unpack PKG... (exact names) under DIR
unpack() {
	local dir=$1 d
	shift
	mkdir -p "$dir/debs"
	(cd "$dir/debs" && apt-get "${APT[@]}" -q download "$@" >/dev/null)
	for d in "$dir"/debs/*.deb; do dpkg -x "$d" "$dir/root"; done
}

fail=0
boot=()
mkdir -p "$REPO/build/kernels"
for s in "${SUITES[@]}"; do
	kver=$(suite_kver "$s") || { echo "== $s: no kernel headers found"; fail=1; continue; }
	abi=${kver%-amd64}
	dir=$WORK/$kver
	hdr=$dir/root/usr/src/linux-headers-$kver
	if [ ! -f "$hdr/Makefile" ]; then
		unpack "$dir" "linux-headers-$kver" "linux-headers-$abi-common" "linux-kbuild-$abi"
		# Debian's per-flavour Makefile includes the -common tree by absolute path
		sed -i "s#/usr/src/#$dir/root/usr/src/#" "$hdr/Makefile"
	fi
	cc=$(sed -n 's/^CC = .*(CROSS_COMPILE)\(gcc-[0-9]*\).*/\1/p' "$hdr/.kernelvariables")
	if ! command -v "x86_64-linux-gnu-$cc" >/dev/null; then
		echo "== $kver ($s): needs $cc, not installed here: built in a Debian root"
		scripts/kernel-root.sh $([ $IMAGE = 0 ] || echo -i) "$s" || fail=1
		continue
	fi
	log=$REPO/build/kmod-$kver.log
	mkdir -p "$REPO/build"
	echo "== $kver ($s, $cc)"
	if ! make -s -C kernel KDIR="$hdr" KMOD_OUT="$REPO/build/kmod-$kver" \
	     KMOD_KO="$REPO/build/daxfs-$kver.ko" > "$log" 2>&1; then
		tail -30 "$log"
		echo "   FAILED (log: $log)"
		fail=1
		continue
	fi
	if grep -Ei 'warning|error' "$log"; then
		echo "   built WITH WARNINGS (log: $log)"
		fail=1
		continue
	fi
	echo "   ok: build/daxfs-$kver.ko"
	[ $IMAGE = 1 ] || continue
	# the guests' other module: the 16-byte CAS check (tests/vm/test_kernel_cas16.py)
	if ! make -s -C vm/cas16 module KDIR="$hdr" OUT="$REPO/build/cas16-$kver" >> "$log" 2>&1; then
		tail -30 "$log"
		echo "   cas16mod.ko FAILED (log: $log)"
		fail=1
		continue
	fi
	if [ ! -f "$dir/img/lib/modules/$kver/modules.dep" ]; then
		(cd "$dir/debs" && apt-get "${APT[@]}" -q download "linux-image-$kver-unsigned" >/dev/null)
		dpkg -x "$dir/debs/linux-image-$kver-unsigned"_*.deb "$dir/img"
		depmod -b "$dir/img" "$kver"
	fi
	boot+=("$kver")
	echo "$kver $dir/img" > "$REPO/build/kernels/$s"
done
for k in "${boot[@]}"; do
	echo "boot $k in the guests (they load build/daxfs-$k.ko):"
	echo "  DAXFS_VM_ROOT=$WORK/$k/img" \
	     "DAXFS_VM_NOBUILD=1 python3 -m pytest -q tests/vm/test_kernel_cluster.py"
done
exit $fail
