# vm/guest/kfuzz.sh - the guest side of the kernel corrupt-image fuzz (vm/kfuzz.py):
# loads daxfs.ko, turns on the lockup detectors, and runs build/vm-helpers/kfuzz on the
# first nvdimm (the image, mounted with phys=) and the second (the handshake, /dev/pmem1)
# until the host says stop.  Every bad kernel log line is counted per image by the helper;
# a final scan here catches whatever came after its last look.
# args: HUNG_TASK_SECS [verbose|quiet [MODULE (relative to the repository)]]
KO=$(vm_daxfs_ko "$3")
MNT=/mnt/kfuzz
mkdir -p $MNT

# lockups and hangs are reported, not fatal: the helper counts them
sysctl -q -w kernel.softlockup_panic=0 kernel.panic_on_warn=0 kernel.watchdog=1 \
    kernel.hung_task_timeout_secs=${1:-10} kernel.hung_task_panic=0 \
    kernel.hung_task_warnings=-1 2>/tmp/err ||
    vm_fail "sysctl: $(cat /tmp/err)"
vm_log "watchdog=$(cat /proc/sys/kernel/watchdog) hung_task_timeout_secs=$(cat /proc/sys/kernel/hung_task_timeout_secs)"
hostname "guest-$DAXFS_VM_ID"
insmod $KO 2>/tmp/err || vm_fail "insmod: $(cat /tmp/err)"
r=$(grep 'Persistent Memory' /proc/iomem | sed -n 1p | sed 's/^ *//' | cut -d' ' -f1)
[ -n "$r" ] || vm_fail "no Persistent Memory range in /proc/iomem"
start=0x${r%-*}
size=$(( 0x${r#*-} - start + 1 ))
pmem_unbind_in $start $(( start + size - 1 ))
[ -b /dev/pmem1 ] || vm_fail "no /dev/pmem1 (the handshake nvdimm)"
[ "$2" = verbose ] && export KFUZZ_VERBOSE=1
$DAXFS_REPO/build/vm-helpers/kfuzz $start $size /dev/pmem1 $MNT ||
    vm_fail "kfuzz helper rc=$?"
bad=$(dmesg | grep -E "WARNING:|BUG:|Oops|soft lockup|blocked for more than|general protection" |
      grep -v -e "module verification" -e "ommand line:" -e "kfuzz self-test")
vm_result final_bad="$(echo "$bad" | grep -c .)"
[ -z "$bad" ] || vm_fail "dmesg: $bad"
vm_log "kfuzz done, dmesg clean"
