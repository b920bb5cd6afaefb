# vm/guest/cas16.sh ITERS MIN_RETRIES PARTIES - guest side of tests/vm/test_kernel_cas16.py:
# loads cas16mod.ko (build/cas16/, or build/cas16-KVER/) on the shared nvdimm and reports its result.
iters=$1
min_retries=$2
parties=$3
phys=$(pmem_phys_range | cut -d' ' -f1)
[ -n "$phys" ] || vm_fail "no nvdimm"
# a newer kernel's module comes from scripts/kernel-compat.sh -i (vm/cas16/Makefile)
insmod "$(vm_module_ko build/cas16/cas16mod.ko build/cas16-VER/cas16mod.ko)" \
    phys="$phys" iters="$iters" \
    min_retries="$min_retries" parties="$parties" ||
    vm_fail "insmod cas16mod"
line=$(dmesg | grep -o 'cas16: RESULT.*' | tail -1)
rmmod cas16mod
vm_log "$line"
vm_result ${line#cas16: RESULT }
