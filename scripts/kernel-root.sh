#!/usr/bin/env bash
# Builds daxfs.ko inside a debootstrapped Debian build root, for a kernel whose
# compiler this host does not have (docs/kernel.md, "Supported kernels"): trixie's
# and trixie-backports' kernels want gcc-14, Debian 12 has gcc-12.
#
#   scripts/kernel-root.sh [-i] SUITE      (e.g. trixie-backports, trixie, sid)
#
# The root is build/roots/kernel-RELEASE (RELEASE: SUITE without -backports), made
# once with debootstrap --variant=minbase and reused; its sources list RELEASE and,
# for a backports SUITE, SUITE too.  In the root, chroot apt-get installs make,
# binutils, dwarves and linux-headers-VER (which pulls that kernel's gcc) for the VER
# that SUITE's linux-headers-amd64 points at.  kernel/, core/ and include/ are copied
# into the root's /src/daxfs and built there; the module and the build log come back
# as build/daxfs-VER.ko and build/kmod-VER.log.  Any compiler warning fails the run.
# Nothing on this host is installed or changed (debootstrap itself excepted).
# -i also builds the guests' cas16mod.ko (build/cas16-VER/) and installs
# linux-image-VER(-unsigned) in the root, which then holds
# boot/vmlinuz-VER and lib/modules/VER/: the guests of vm/ boot it with
# DAXFS_VM_ROOT=build/roots/kernel-RELEASE (printed at the end; "VER ROOT" is
# written to build/kernels/SUITE).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/debian-kver.sh
REPO=$PWD
MIRROR=${DAXFS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
IMAGE=0
while getopts "ih" o; do
	case $o in
	i) IMAGE=1 ;;
	*) sed -n '2,19p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { sed -n '2,19p' "$0"; exit 2; }
SUITE=$1
RELEASE=${SUITE%-backports}
ROOT=$REPO/build/roots/kernel-$RELEASE
[ "$(id -u)" = 0 ] || { echo "kernel-root: needs root (debootstrap, chroot)" >&2; exit 1; }
say() { echo "== $*"; }

if [ ! -f "$ROOT/.daxfs-debootstrap-done" ]; then
	say "debootstrap $RELEASE into $ROOT (a few minutes)"
	rm -rf "$ROOT"
	mkdir -p "$(dirname "$ROOT")"
	debootstrap --variant=minbase --include=ca-certificates "$RELEASE" "$ROOT" "$MIRROR"
	touch "$ROOT/.daxfs-debootstrap-done"
fi

# the root's own /proc (objtool reads it; dpkg's scripts want it)
if ! mountpoint -q "$ROOT/proc"; then
	mount -t proc proc "$ROOT/proc"
	trap 'umount "$ROOT/proc"' EXIT
fi
in_root() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	DEBIAN_FRONTEND=noninteractive HOME=/root "$@"; }

{
	echo "deb $MIRROR $RELEASE main"
	[ "$SUITE" = "$RELEASE" ] || echo "deb $MIRROR $SUITE main"
} > "$ROOT/etc/apt/sources.list"
in_root apt-get -q update >/dev/null

apt_cache() { in_root apt-cache "$@"; }
kver=$(suite_kver "$SUITE")
pkgs=(make binutils dwarves "linux-headers-$kver")
# the unsigned image (6.x), or, where there is none (7.x splits the image), the plain one
img=linux-image-$kver-unsigned
in_root apt-cache show "$img" >/dev/null 2>&1 || img=linux-image-$kver
[ $IMAGE = 0 ] || pkgs+=("$img" initramfs-tools)	# (not dracut, the first choice)
say "$kver ($SUITE): installing ${pkgs[*]} in the root"
in_root apt-get -y -q --no-install-recommends -t "$SUITE" install "${pkgs[@]}" >/dev/null

src=$ROOT/src/daxfs
rm -rf "$src"
mkdir -p "$src"
cp -a kernel core include "$src/"
log=$REPO/build/kmod-$kver.log
say "building daxfs.ko for $kver in the root"
if ! in_root make -C /src/daxfs/kernel KDIR="/usr/src/linux-headers-$kver" \
     KMOD_OUT=/src/daxfs/build/kmod KMOD_KO=/src/daxfs/daxfs.ko > "$log" 2>&1; then
	tail -30 "$log"
	echo "   FAILED (log: $log)"
	exit 1
fi
cp "$src/daxfs.ko" "$REPO/build/daxfs-$kver.ko"
if grep -Ei 'warning|error' "$log"; then
	echo "   built WITH WARNINGS (log: $log)"
	exit 1
fi
say "ok: build/daxfs-$kver.ko"
[ $IMAGE = 1 ] || exit 0
# the guests' other module: the 16-byte CAS check (tests/vm/test_kernel_cas16.py)
csrc=$ROOT/src/cas16
rm -rf "$csrc"
mkdir -p "$csrc"
cp vm/cas16/cas16mod.c vm/cas16/cas16.h vm/cas16/Kbuild "$csrc/"
# the core daxfs.ko was built from above (paths as the root sees them)
ln -s /src/daxfs/core /src/daxfs/include "$csrc/"
if ! in_root make -C "/usr/src/linux-headers-$kver" M=/src/cas16 modules >> "$log" 2>&1; then
	tail -30 "$log"
	echo "   cas16mod.ko FAILED (log: $log)"
	exit 1
fi
mkdir -p "$REPO/build/cas16-$kver"
cp "$csrc/cas16mod.ko" "$REPO/build/cas16-$kver/"
say "ok: build/cas16-$kver/cas16mod.ko"
mkdir -p "$REPO/build/kernels"
echo "$kver $ROOT" > "$REPO/build/kernels/$SUITE"
echo "boot $kver in the guests (they load build/daxfs-$kver.ko):"
echo "  DAXFS_VM_ROOT=$ROOT" \
     "DAXFS_VM_NOBUILD=1 python3 -m pytest -q tests/vm/test_kernel_cluster.py"
