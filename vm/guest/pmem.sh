# vm/guest/pmem.sh ACTION... - pmem probing / preparation steps, run in order. Actions:
#   info            iomem, nd namespaces, /dev/pmem*, dax flag (+ DAXFS-VM-RESULT lines)
#   fsdax           ndctl create-namespace -f -e namespace0.0 -m fsdax --map=mem (once per file)
#   raw             ndctl create-namespace -f -e namespace0.0 -m raw
#   unbind          detach nd_pmem from namespace0.0 (frees the range in /proc/iomem)
#   write:OFF:STR   write STR at byte OFF (4 KiB aligned) of /dev/pmem0, O_DIRECT
#   expect:OFF:STR  fail unless /dev/pmem0 holds STR at OFF
#   mode:MODE       fail unless namespace0.0 is in MODE (raw/fsdax/devdax)
#   devmem:ADDR     read 64 bits at physical ADDR through /dev/mem (busybox devmem)
for act in "$@"; do
    IFS=: read -r a x y <<EOT
$act
EOT
    case $a in
    info)
        vm_log "iomem: $(grep -i -E 'persistent|namespace|pfn|dax' /proc/iomem | sed 's/^ *//' | tr '\n' ';')"
        for n in /sys/bus/nd/devices/namespace*; do
            [ -f $n/mode ] && vm_log "$(basename $n) mode=$(cat $n/mode) size=$(cat $n/size) resource=$(cat $n/resource 2>/dev/null)"
        done
        for p in /sys/bus/nd/devices/pfn*; do
            [ -f $p/resource ] && [ -n "$(cat $p/namespace 2>/dev/null)" ] &&
                { vm_log "$(basename $p) resource=$(cat $p/resource) size=$(cat $p/size) align=$(cat $p/align) mode=$(cat $p/mode)"
                  vm_result pfn_start=$(cat $p/resource) pfn_size=$(cat $p/size); }
        done
        for b in /sys/block/pmem*; do
            [ -d $b ] && vm_log "$(basename $b) dax=$(cat $b/queue/dax) size=$(( $(cat $b/size) * 512 ))"
        done
        r=$(pmem_phys_range) && vm_result region="${r% *}-${r#* }"
        ns=$(grep -m1 'namespace0.0' /proc/iomem | sed 's/^ *//' | cut -d' ' -f1)
        [ -n "$ns" ] && vm_result ns_iomem=0x${ns%-*}-0x${ns#*-}
        vm_result mode=$(pmem_mode) dax=$(cat /sys/block/pmem0/queue/dax 2>/dev/null || echo none) \
            dev_size=$(( $(cat /sys/block/pmem0/size 2>/dev/null || echo 0) * 512 )) ;;
    fsdax|raw|devdax)
        vm_log "ndctl create-namespace -m $a"
        out=$(host ndctl create-namespace -f -e namespace0.0 -m $a --map=mem 2>&1) ||
            vm_fail "ndctl create-namespace -m $a: $out"
        vm_log "ndctl: $(echo $out | tr -d '\n ')" ;;
    unbind)
        echo namespace0.0 > /sys/bus/nd/drivers/nd_pmem/unbind || vm_fail "unbind failed"
        vm_log "nd_pmem unbound from namespace0.0" ;;
    write)
        pmem_write_block /dev/pmem0 $x "$y" || vm_fail "write $x failed"
        vm_log "wrote '$y' at $x" ;;
    expect)
        got=$(pmem_read_block /dev/pmem0 $x)
        [ "$got" = "$y" ] || vm_fail "at $x expected '$y' got '$got'"
        vm_log "found '$y' at $x" ;;
    mode)
        [ "$(pmem_mode)" = "$x" ] || vm_fail "namespace0.0 mode $(pmem_mode), expected $x"
        vm_log "namespace0.0 mode $x" ;;
    devmem)
        v=$(devmem $x 64 2>&1) || vm_fail "devmem $x: $v"
        vm_log "devmem $x = $v"; vm_result devmem_$x=$v ;;
    *) vm_fail "unknown action $act" ;;
    esac
done
