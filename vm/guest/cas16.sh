# vm/guest/cas16.sh ITERS MIN_RETRIES PARTIES - guest side of tests/vm/test_kernel_cas16.py:
# loads build/cas16/cas16mod.ko on the shared nvdimm and reports its result.
iters=$1
min_retries=$2
parties=$3
phys=$(pmem_phys_range | cut -d' ' -f1)
[ -n "$phys" ] || vm_fail "no nvdimm"
insmod "$DAXFS_REPO/build/cas16/cas16mod.ko" phys="$phys" iters="$iters" \
    min_retries="$min_retries" parties="$parties" ||
    vm_fail "insmod cas16mod"
line=$(dmesg | grep -o 'cas16: RESULT.*' | tail -1)
rmmod cas16mod
vm_log "$line"
vm_result ${line#cas16: RESULT }
