# vm/guest/lincheck.sh SLOT - a lincheck client in a guest (docs/lincheck.md, "Guests"):
# loads daxfs.ko, lets nd_pmem go of both nvdimms (the first is the region, mounted with
# phys=; the second holds lc_run's shared page: clock, records, round barrier, mapped
# through /dev/mem), and runs build/vm-helpers/lc_guest as client SLOT until lc_run on the
# host says stop.  The kernel log must stay clean.
KO=$(vm_daxfs_ko)
MNT=/mnt/lc
mkdir -p $MNT
hostname "guest-$DAXFS_VM_ID"
insmod $KO 2>/tmp/err || vm_fail "insmod: $(cat /tmp/err)"
set -- "$1" $(grep 'Persistent Memory' /proc/iomem | sed 's/^ *//' | cut -d' ' -f1)
[ $# -ge 3 ] || vm_fail "two nvdimms needed: $(grep 'Persistent Memory' /proc/iomem)"
for r in $2 $3; do
    pmem_unbind_in 0x${r%-*} 0x${r#*-}
done
r=$2
start=0x${r%-*}
size=$(( 0x${r#*-} - start + 1 ))
$DAXFS_REPO/build/vm-helpers/lc_guest $start $size 0x${3%-*} $1 $MNT ||
    vm_fail "lc_guest rc=$?"
bad=$(dmesg | grep -E "BUG|WARNING|Oops|still has objects|general protection" |
      grep -v -e "module verification" -e "ommand line:")
[ -z "$bad" ] || vm_fail "dmesg: $bad"
vm_log "lincheck client $1 done, dmesg clean"
