# vm/guest/debroot-fstab.sh - the boot half of scripts/debroot-test.sh: this
# guest runs the Debian root's kernel with the daxfs.ko that DKMS built there
# (loaded by /init from the root's modules).  Chrooted into that root (read
# only over 9p, with fresh /dev /proc /sys and a tmpfs /mnt), its own
# mkfs.daxfs formats /dev/pmem0, `fsck -A` runs fsck.daxfs -a for the fstab
# line (pass 2) and `mount -a` mounts it:
#     /dev/pmem0 /mnt/daxfs daxfs defaults,nofail 0 2
R=$DAXFS_REPO/build/roots/bookworm
[ -x "$R/sbin/mkfs.daxfs" ] || vm_fail "no Debian root with daxfs-tools at $R"
grep -q "^daxfs " /proc/modules || vm_fail "daxfs.ko not loaded"
vm_log "daxfs.ko loaded from the root's modules, kernel $(uname -r)"

out=$(host ndctl create-namespace -f -e namespace0.0 -m fsdax --map=mem 2>&1) ||
    vm_fail "ndctl create-namespace -m fsdax: $out"
i=0
while [ ! -b /dev/pmem0 ] && [ $i -lt 100 ]; do usleep 100000; i=$((i + 1)); done
[ -b /dev/pmem0 ] || vm_fail "no /dev/pmem0 after ndctl"
mount -t devtmpfs dev "$R/dev" && mount -t proc proc "$R/proc" &&
    mount -t sysfs sys "$R/sys" && mount -t tmpfs mnt "$R/mnt" &&
    mount -t tmpfs tmp "$R/tmp" && mount -t tmpfs run "$R/run" ||
    vm_fail "cannot prepare the root's /dev /proc /sys /mnt"
mkdir -p "$R/mnt/daxfs"
in_root() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

out=$(in_root mkfs.daxfs -q -f /dev/pmem0 2>&1) || vm_fail "mkfs.daxfs /dev/pmem0: $out"
out=$(in_root fsck -A -T -a 2>&1)
rc=$?
vm_log "fsck -A: rc=$rc $out"
[ $rc = 0 ] || vm_fail "fsck -A (fsck.daxfs -a of the fstab line) returned $rc"
out=$(in_root mount -a -v 2>&1) || vm_fail "mount -a: $out"
vm_log "mount -a: $out"
# the root's own view (its /proc/mounts names mount points inside it)
line=$(in_root grep " /mnt/daxfs " /proc/mounts) || vm_fail "mount -a did not mount /mnt/daxfs"
vm_log "/proc/mounts: $line"
case $line in "/dev/pmem0 /mnt/daxfs daxfs "*) ;; *) vm_fail "unexpected mount: $line" ;; esac
echo "mounted from fstab" > "$R/mnt/daxfs/hello" || vm_fail "write on the mount"
in_root umount /mnt/daxfs || vm_fail "umount"
got=$(in_root daxfs -r /dev/pmem0 cat /hello 2>&1)
[ "$got" = "mounted from fstab" ] || vm_fail "daxfs cat /hello after umount: $got"
out=$(in_root fsck.daxfs -n /dev/pmem0 2>&1) || vm_fail "fsck.daxfs -n after umount: $out"
vm_result debroot_fstab=ok
