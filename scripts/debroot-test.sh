#!/usr/bin/env bash
# The Debian-root test of the packages (docs/packaging.md), opt-in: needs
# root, the Debian archive (deb.debian.org) and QEMU (vm/setup.sh).
#
#   scripts/debroot-test.sh [-n] [-k]
#
# 1. debootstraps Debian 12 with its kernel and headers into build/roots/
#    bookworm (once; kept for the next run), nothing on this host changes;
# 2. `make deb`, then installs daxfs-dkms and daxfs-tools there with apt
#    (their dependencies from the archive): DKMS builds daxfs.ko for the
#    root's kernel; checks `modinfo daxfs` and that the tools run from
#    /sbin and /usr/bin;
# 3. boots that kernel in a QEMU guest (vm/) with the DKMS-built module, and
#    there, chrooted into the root: mkfs.daxfs /dev/pmem0, `fsck -A` and
#    `mount -a` of the fstab line
#        /dev/pmem0 /mnt/daxfs daxfs defaults,nofail 0 2
#    (vm/guest/debroot-fstab.sh).
# -n: skip `make deb` (use build/deb/ as it is).  -k: stop after step 2.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
ROOT=$REPO/build/roots/bookworm
MIRROR=${DAXFS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
MAKEDEB=1
BOOT=1
while getopts "nkh" o; do
	case $o in
	n) MAKEDEB=0 ;;
	k) BOOT=0 ;;
	*) sed -n '2,19p' "$0"; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "debroot-test: needs root (debootstrap, chroot)" >&2; exit 1; }
say() { echo "== $*"; }

if [ ! -x "$ROOT/usr/bin/apt-get" ] || [ ! -f "$ROOT/.daxfs-debootstrap-done" ]; then
	say "debootstrap bookworm into $ROOT (a few minutes)"
	rm -rf "$ROOT"
	mkdir -p "$(dirname "$ROOT")"
	debootstrap --variant=minbase \
		--include=linux-image-amd64,linux-headers-amd64,kmod,ca-certificates \
		bookworm "$ROOT" "$MIRROR"
	touch "$ROOT/.daxfs-debootstrap-done"
fi
kver=$(ls "$ROOT/lib/modules" | sort -V | tail -1)
say "the root's kernel: $kver"

[ $MAKEDEB = 0 ] || make deb
debs=("$REPO"/build/deb/daxfs-dkms_*_all.deb "$REPO"/build/deb/daxfs-tools_*_amd64.deb)

# the root's own /proc, /sys, /dev while apt and DKMS run there
mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" || true; done
}
trap cleanup EXIT
for m in proc sys dev; do
	mount --rbind "/$m" "$ROOT/$m"
	mount --make-rslave "$ROOT/$m"
	mounted+=("$ROOT/$m")
done
in_root() { chroot "$ROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	DEBIAN_FRONTEND=noninteractive HOME=/root "$@"; }

say "installing ${debs[*]##*/} in the root"
rm -rf "$ROOT/tmp/debs"
mkdir -p "$ROOT/tmp/debs"
cp "${debs[@]}" "$ROOT/tmp/debs/"
echo "deb $MIRROR bookworm main" > "$ROOT/etc/apt/sources.list"
in_root apt-get -q update >/dev/null
in_root apt-get -y -q --no-install-recommends install \
	"/tmp/debs/${debs[0]##*/}" "/tmp/debs/${debs[1]##*/}"
# the package's postinst builds for the running kernel (this machine's,
# which the root has no headers for) and the root's newest: make sure the
# root's kernel is covered either way
ver=$(dpkg-deb -f "${debs[0]}" Version)
in_root dkms status -m daxfs -v "$ver" -k "$kver" | grep -q installed ||
	in_root dkms install "daxfs/$ver" -k "$kver"
in_root dkms status -m daxfs -k "$kver"

say "modinfo daxfs"
info=$(in_root modinfo -k "$kver" daxfs)
echo "$info" | grep -E '^(filename|vermagic|license):'
echo "$info" | grep -q "^filename:.*/updates/dkms/daxfs.ko" ||
	{ echo "debroot-test: daxfs.ko is not the DKMS-built one" >&2; exit 1; }
echo "$info" | grep -q "^vermagic: *$kver " ||
	{ echo "debroot-test: daxfs.ko not built for $kver" >&2; exit 1; }

say "the tools from /sbin and /usr/bin"
in_root /sbin/mkfs.daxfs -q -s 16M /tmp/region
in_root /usr/bin/daxfs -r /tmp/region mkdir -p /from/debian
echo "packaged" | in_root /usr/bin/daxfs -r /tmp/region write /from/debian/hello
[ "$(in_root /usr/bin/daxfs -r /tmp/region cat /from/debian/hello)" = packaged ]
in_root /sbin/fsck.daxfs -n /tmp/region
in_root fsck -T -t daxfs -a /tmp/region
rm -f "$ROOT/tmp/region"

echo "/dev/pmem0 /mnt/daxfs daxfs defaults,nofail 0 2" > "$ROOT/etc/fstab"
mkdir -p "$ROOT/mnt/daxfs"
cleanup
mounted=()
[ $BOOT = 1 ] || { say "packages ok (no boot: -k)"; exit 0; }

say "booting $kver with the DKMS-built daxfs.ko (QEMU TCG)"
initrd=$REPO/build/vm/initrd-debroot.cpio.gz
DAXFS_VM_ROOT=$ROOT vm/mkinitrd.sh -k "$kver" -m daxfs -o "$initrd"
shm=/dev/shm/daxfs-debroot-$$
trap 'rm -f "$shm"' EXIT
DAXFS_VM_ROOT=$ROOT vm/run-guest.sh -n D -k "$ROOT/boot/vmlinuz-$kver" -i "$initrd" \
	-s "$shm" -z 256M -t "${DAXFS_DEBROOT_TIMEOUT:-900}" \
	-l "$REPO/build/vm/logs/debroot.log" debroot-fstab
rc=$?
grep -E "DAXFS-VM(-RESULT)?:" "$REPO/build/vm/logs/debroot.log" | tail -20
exit $rc
