# vm/guest/smoke.sh ROLE TOKEN - harness smoke test, one of two guests (ROLE a or b) sharing
# the nvdimm /dev/pmem0 (raw mode: device offset == backing-file offset).
#   a: writes "DAXFS-SMOKE:TOKEN:a:<id>" at 1 MiB, then waits for b's marker at 1 MiB + 4 KiB
#   b: waits for a's marker, writes its own at 1 MiB + 4 KiB
#   a: finally waits for the host's marker "DAXFS-SMOKE:TOKEN:host" at 1 MiB + 8 KiB
# so each guest reads the other's write through the shared memory; the host verifies both
# and answers with its own write (three peers on one memory).
ROLE=${1:?role a|b}; TOKEN=${2:?token}
DEV=/dev/pmem0
OFF_A=1048576; OFF_B=$((1048576 + 4096)); OFF_H=$((1048576 + 8192))
[ -b $DEV ] || vm_fail "$DEV missing: $(ls /dev | grep -E 'pmem|dax' | tr '\n' ' ')"

R=$(pmem_phys_range) || vm_fail "no Persistent Memory in /proc/iomem"
set -- $R
START=$1; END=$2
set -- $(pmem_region_sysfs)
vm_log "iomem: $(grep -A3 'Persistent Memory' /proc/iomem | tr '\n' ';')"
vm_result phys_start=$START phys_end=$END sysfs_start=$1 sysfs_size=$2 \
    dev_size=$(( $(cat /sys/block/pmem0/size) * 512 )) mode=$(pmem_mode)

MINE="DAXFS-SMOKE:$TOKEN:$ROLE:$DAXFS_VM_ID"
case $ROLE in
    a) MYOFF=$OFF_A; PEEROFF=$OFF_B; PEERPAT="DAXFS-SMOKE:$TOKEN:b:" ;;
    b) MYOFF=$OFF_B; PEEROFF=$OFF_A; PEERPAT="DAXFS-SMOKE:$TOKEN:a:"
       pmem_wait_for $DEV $PEEROFF "$PEERPAT" 40 || vm_fail "a's marker never appeared" ;;
    *) vm_fail "bad role $ROLE" ;;
esac
pmem_write_block $DEV $MYOFF "$MINE" || vm_fail "write failed"
vm_log "wrote '$MINE' at $MYOFF"
[ "$(pmem_read_block $DEV $MYOFF)" = "$MINE" ] || vm_fail "read-back mismatch"
pmem_wait_for $DEV $PEEROFF "$PEERPAT" 40 || vm_fail "peer marker not seen at $PEEROFF"
PEER=$(pmem_read_block $DEV $PEEROFF)
vm_log "peer marker at $PEEROFF: '$PEER'"
vm_result wrote=$MINE peer=$PEER
if [ $ROLE = a ]; then
    pmem_wait_for $DEV $OFF_H "DAXFS-SMOKE:$TOKEN:host" 40 || vm_fail "host marker not seen at $OFF_H"
    vm_result host=$(pmem_read_block $DEV $OFF_H)
fi
