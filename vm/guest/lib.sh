# vm/guest/lib.sh - helpers sourced by /init before every guest script (busybox sh).
# Environment set by /init: DAXFS_VM_ID (guest name), DAXFS_REPO (repo inside the guest,
# e.g. /host/work/main, empty without 9p), DAXFS_REPO_HOST (repo path on the host),
# DAXFS_HOST (/host or empty), DAXFS_VM_OUT (/out when a writable share was given).

# log line on the console
vm_log() { echo "DAXFS-VM: [$DAXFS_VM_ID $(cut -d' ' -f1 /proc/uptime)] $*"; }
# result line parsed by vm/cluster.py (GuestResult.results): vm_result key=value ...
vm_result() { echo "DAXFS-VM-RESULT: $*"; }
vm_fail() { vm_log "FAIL: $*"; exit 1; }
# run a host binary inside the guest: host python3 -c ..., host ndctl list
host() { chroot /host "$@"; }

# physical range of the first nvdimm region, "START END" in hex (0x...), from /proc/iomem
# (the "Persistent Memory" resource exists in raw and in fsdax mode). Returns 1 if none.
pmem_phys_range() {
    local r
    r=$(grep -m1 'Persistent Memory' /proc/iomem | sed 's/^ *//' | cut -d' ' -f1)
    [ -n "$r" ] || return 1
    echo "0x${r%-*} 0x${r#*-}"
}
# same from sysfs: the nd region's resource (start) and size, both in hex/decimal as sysfs gives
pmem_region_sysfs() {
    local r
    for r in /sys/bus/nd/devices/region*; do
        [ -f $r/resource ] && { echo "$(cat $r/resource) $(cat $r/size)"; return 0; }
    done
    return 1
}
# mode of namespace0.0: raw / fsdax / devdax
# (sysfs says "memory" for fsdax and "dax" for devdax; normalized to ndctl names)
pmem_mode() { sed -e "s/^memory$/fsdax/" -e "s/^dax$/devdax/" /sys/bus/nd/devices/namespace0.0/mode 2>/dev/null; }

# write STRING at byte OFFSET of block device DEV bypassing the page cache
# (O_DIRECT needs a full aligned block: OFFSET must be 4096-aligned; the block is zero-padded)
pmem_write_block() {
    local dev=$1 off=$2 str=$3
    printf '%s' "$str" | dd of=/tmp/.blk bs=4096 count=1 conv=sync 2>/dev/null
    dd if=/tmp/.blk of=$dev bs=4096 count=1 seek=$((off / 4096)) oflag=direct conv=notrunc 2>/dev/null
}
# print the NUL-terminated string at OFFSET of DEV (O_DIRECT read of one 4 KiB block)
pmem_read_block() {
    local dev=$1 off=$2
    dd if=$dev bs=4096 count=1 skip=$((off / 4096)) iflag=direct 2>/dev/null | tr -d '\000'
}
# wait up to SECS for the block at OFFSET of DEV to contain STRING
pmem_wait_for() {
    local dev=$1 off=$2 str=$3 secs=${4:-30} i=0
    while [ $i -lt $((secs * 10)) ]; do
        case "$(pmem_read_block $dev $off)" in *"$str"*) return 0 ;; esac
        usleep 100000; i=$((i + 1))
    done
    return 1
}

# Unbinds nd_pmem from every namespace that starts inside [$1, $2]: a daxfs phys=
# mount claims its range, which an active namespace holds.
pmem_unbind_in() {
    local d r
    for d in /sys/bus/nd/drivers/nd_pmem/namespace*; do
        [ -e "$d/resource" ] || continue
        r=$(cat $d/resource)
        [ $((r)) -ge $(($1)) ] && [ $((r)) -le $(($2)) ] || continue
        echo ${d##*/} > /sys/bus/nd/drivers/nd_pmem/unbind ||
            vm_fail "cannot unbind nd_pmem from ${d##*/}"
        vm_log "nd_pmem unbound from ${d##*/} (daxfs claims its range)"
    done
}

# A module for the running kernel: $DAXFS_REPO/DEFAULT when its vermagic is this kernel's,
# else $DAXFS_REPO/PER_KERNEL with VER in it replaced by the kernel's version, the one
# scripts/kernel-compat.sh made for it (a guest booted from DAXFS_VM_ROOT: docs/kernel.md
# "Supported kernels").
vm_module_ko() {
    local ko=$DAXFS_REPO/$1 r
    r=$(uname -r)
    if ! grep -aq "vermagic=$r " "$ko" 2>/dev/null && [ -f "$DAXFS_REPO/${2//VER/$r}" ]; then
        ko=$DAXFS_REPO/${2//VER/$r}
    fi
    echo "$ko"
}

# the daxfs.ko for the running kernel (default kernel/daxfs.ko, else build/daxfs-VER.ko)
vm_daxfs_ko() {
    vm_module_ko "${1:-kernel/daxfs.ko}" build/daxfs-VER.ko
}
