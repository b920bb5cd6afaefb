# vm/guest/daxfs-ab.sh ROUNDS RUNTIME SECTIONS - the guest side of bench/ab.sh -g.
# Loads $DAXFS_REPO/build/ab/daxfs-old.ko (region on the first nvdimm) and
# daxfs-new.ko (second nvdimm) in turn, ROUNDS times, in the order old new,
# new old, ... (so neither always runs first), and runs the fio SECTIONS
# (a+b+c) of bench/fio/table2.fio on each: JSON to /out/fio-TREE-ROUND.json.
# The job file is used without unlink=1: a module before 03aa375 fails a
# write of another job with ESTALE once the first job unlinks the file.
MNT=/host/mnt
R=$DAXFS_REPO_HOST
rounds=$1; rt=$2
secargs=""
for s in $(echo "$3" | tr '+' ' '); do secargs="$secargs --section=$s"; done
sed '/^unlink=1/d' /host$R/bench/fio/table2.fio > /host/tmp/ab.fio

run_one() {
    v=$1; n=$2; i=$3
    insmod $DAXFS_REPO/build/ab/daxfs-$v.ko 2>/tmp/err || vm_fail "insmod $v: $(cat /tmp/err)"
    r=$(grep 'Persistent Memory' /proc/iomem | sed -n "${n}p" | sed 's/^ *//' | cut -d' ' -f1)
    start=0x${r%-*}
    pmem_unbind_in $start 0x${r#*-}
    mkdir -p $MNT/$v
    mount -t daxfs -o phys=$start,size=$(( 0x${r#*-} - start + 1 )) none $MNT/$v 2>/tmp/err ||
        vm_fail "mount $v: $(cat /tmp/err)"
    rm -rf $MNT/$v/fio; mkdir -p $MNT/$v/fio
    DAXFS_BENCH_DIR=/mnt/$v/fio DAXFS_BENCH_RUNTIME=$rt host fio $secargs \
        --output-format=json /tmp/ab.fio > /out/fio-$v-$i.json 2>/out/fio-$v-$i.err ||
        vm_fail "fio on $v: $(tail -3 /out/fio-$v-$i.err)"
    rm -rf $MNT/$v/fio; umount $MNT/$v
    rmmod daxfs
    vm_log "ab: round $i $v done"
}

for i in $(seq 1 $rounds); do
    if [ $((i % 2)) = 1 ]; then run_one old 1 $i; run_one new 2 $i
    else run_one new 2 $i; run_one old 1 $i; fi
done
vm_result ab=ok
