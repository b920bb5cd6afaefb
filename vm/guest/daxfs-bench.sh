# vm/guest/daxfs-bench.sh MODE ARGS... - the guest side of bench/evaluate.py (bench/run).
# Results go to /out (the host directory given with Guest(outdir=...)); progress lines
# "DAXFS-VM: bench: ..." go to the console, which the host tails.
#
#   table2 REPS RUNTIME NFILES TARGETS [SECTIONS]
#       Mounts daxfs.ko on the first nvdimm (phys= route), ext4 -o dax on the second
#       (namespace1.0 converted to fsdax, mkfs.ext4 through the host root) and a tmpfs;
#       then REPS times, for each target of TARGETS (e.g. daxfs+tmpfs+ext4dax, order rotated
#       per repetition): one fio run of bench/fio/table2.fio (its sections one after the
#       other; JSON to /out/fio-TARGET-REP.json), then bench/meta_bench on NFILES files
#       (/out/meta-TARGET-REP.csv).  SECTIONS (a+b+c) runs only those sections.
#   ratio ROUNDS RUNTIME TARGETS [SECTIONS [MODULE]]
#       The same three mounts; then ROUNDS times, for each section of the job file in
#       its order, each target (order rotated per round) runs that one section right
#       after the others did (JSON to /out/ratio-TARGET-ROUND-SECTION.json): pairs close
#       in time, for per-round ratios (bench/guest_ratio.py).  A first-write section
#       starts from an empty directory; every round starts from empty directories.
#   meta ROUNDS NFILES[:LISTINGS] TARGETS [MODULE]
#       The same three mounts; then ROUNDS times, each target (order rotated per
#       round) runs bench/meta_bench posix on NFILES files right after the others
#       (CSV to /out/meta-TARGET-ROUND.csv): per-round ratios of the metadata
#       operations (bench/guest_ratio.py --meta).
#   metaprofile NFILES[:LISTINGS[:STATS[:g]]] TARGETS [MODULE]
#       meta_bench once per target under perf record (cpu-clock, every CPU);
#       /out/profile-TARGET-meta.txt (bench/guest_ratio.py --meta N --profile).
#       :g records call graphs and reports each function with its callees
#       (perf report --children: bench/guest_ratio.py --callers), and in
#       /out/callers-TARGET-meta.txt who calls each (perf report -G).
#   profile RUNTIME[:g] TARGETS SECTIONS [MODULE]
#       The same three mounts; for each section and target: the section once (its
#       files laid out), then again under `perf record -e cpu-clock -a` (the host's perf
#       through the host root); `perf report` by symbol to
#       /out/profile-TARGET-SECTION.txt.  Under the instruction clock a sample is a
#       number of guest instructions (bench/guest_ratio.py --profile).
#   mapread ROUNDS MIB [MODULE]
#       daxfs.ko (phys=, with pmd where the kernel takes it) and ext4 -o dax; then ROUNDS times, for each of daxfs, daxfs-pte
#       (daxfs.ko with THP "never": no PMD faults) and ext4dax, order rotated per round:
#       build/bench/preload_io FILE MIB mapread (a file of 2 MiB pieces mapped shared,
#       first touch of every page, then random 8-byte loads) to /out/map-TARGET-ROUND.txt
#       (bench/guest_pmd.py).
#   xhost ROLE PEERS SECONDS MAXOPS [paced]
#       Mounts daxfs.ko (phys=) and runs bench/xhost_bench run posix as host ROLE
#       (/out/xhost-ROLE.csv).
MNT=/host/mnt
R=$DAXFS_REPO_HOST
BIN=$R/build/bench
mode=$1; shift

bench_log() { echo "DAXFS-VM: bench: $*"; }

# SPEC[:g]: perf's record and report options for a profile (call graphs,
# each function reported with its callees, with :g) in $graph and
# $children; $spec gets SPEC without the :g
perf_mode() {
    spec=$1; graph=; children=--no-children
    case $spec in *:g) spec=${spec%:g}; graph=-g; children="--children -g none" ;; esac
}

# MODULE: daxfs.ko's path in the repository (default kernel/daxfs.ko); OPTS: more
# mount options, dropped when the kernel refuses them (pmd before 6.12)
mount_daxfs() {
    hostname "guest-$DAXFS_VM_ID"
    insmod $(vm_daxfs_ko "$1") 2>/tmp/err || vm_fail "insmod: $(cat /tmp/err)"
    r=$(grep 'Persistent Memory' /proc/iomem | sed -n 1p | sed 's/^ *//' | cut -d' ' -f1)
    [ -n "$r" ] || vm_fail "no Persistent Memory range"
    start=0x${r%-*}
    sz=$(( 0x${r#*-} - start + 1 ))
    pmem_unbind_in $start $(( start + sz - 1 ))
    mkdir -p $MNT/daxfs
    if [ -n "$2" ] && mount -t daxfs -o phys=$start,size=$sz,$2 none $MNT/daxfs 2>/tmp/err; then
        bench_log "daxfs mounted phys=$start size=$sz,$2"
        return
    fi
    mount -t daxfs -o phys=$start,size=$sz none $MNT/daxfs 2>/tmp/err ||
        vm_fail "mount daxfs: $(cat /tmp/err)"
    bench_log "daxfs mounted phys=$start size=$sz"
}

mount_ext4dax() {
    out=$(host ndctl create-namespace -f -e namespace1.0 -m fsdax --map=mem 2>&1) ||
        vm_fail "ndctl create-namespace namespace1.0 fsdax: $out"
    dev=$(echo "$out" | sed -n 's/.*"blockdev":"\([a-z0-9.]*\)".*/\1/p' | head -1)
    [ -n "$dev" ] || dev=$(echo "$out" | tr -d ' \n' | sed -n 's/.*"blockdev":"\([a-z0-9.]*\)".*/\1/p')
    [ -n "$dev" ] || vm_fail "no block device in: $out"
    [ "$(cat /sys/block/$dev/queue/dax)" = 1 ] || vm_fail "/dev/$dev does not support DAX"
    out=$(host mkfs.ext4 -q -F -b 4096 /dev/$dev 2>&1) || vm_fail "mkfs.ext4 -b 4096 /dev/$dev: $out"
    mkdir -p $MNT/ext4dax
    mount -t ext4 -o dax /dev/$dev $MNT/ext4dax 2>/tmp/err || vm_fail "mount ext4 -o dax: $(cat /tmp/err)"
    opts=$(grep " $MNT/ext4dax " /proc/mounts | cut -d' ' -f4)
    case ",$opts," in *,dax*) ;; *) vm_fail "ext4 mounted without dax: $opts" ;; esac
    bench_log "ext4 mounted on /dev/$dev with $opts"
    vm_result ext4_opts=$opts
}

# daxfs.ko, ext4 -o dax and a tmpfs, each under $MNT/TARGET
mount_all() {
    mount_daxfs "$1"
    mount_ext4dax
    mkdir -p $MNT/tmpfs
    mount -t tmpfs -o size=400m tmpfs $MNT/tmpfs || vm_fail "mount tmpfs"
}

umount_all() {
    umount $MNT/tmpfs; umount $MNT/ext4dax; umount $MNT/daxfs
    rmmod daxfs
}

# the job file's sections, or SECTIONS (a+b+c) unless empty or "all"
job_sections() {
    sections=$(sed -n 's/^\[\(.*\)\]$/\1/p' /host$R/bench/fio/table2.fio | grep -v '^global$')
    [ -n "$1" ] && [ "$1" != all ] && sections=$(echo "$1" | tr '+' ' ')
    echo $sections
}

# TARGETS rotated left by N - 1: no target always runs first or last
rotated() {
    n=$1; shift
    i=1
    while [ $i -lt $n ]; do t1=$1; shift; set -- "$@" $t1; i=$((i + 1)); done
    echo "$@"
}

case $mode in
table2)
    reps=$1; rt=$2; nfiles=$3; targets=$(echo "$4" | tr '+' ' ')
    mount_all
    sections=$(job_sections "$5")
    nsec=$(echo $sections | wc -w)
    secargs=""
    for s in $sections; do secargs="$secargs --section=$s"; done
    ntg=$(echo $targets | wc -w)
    total=$(( reps * ntg * 2 ))
    step=0
    bench_log "start reps=$reps runtime=$rt targets=[$targets] sections=$nsec steps=$total vcpus=$(nproc)"
    for rep in $(seq 1 $reps); do
        # rotate the target order so that no target always runs first or last
        set -- $(rotated $rep $targets)
        for t in "$@"; do
            d=$MNT/$t/fio
            rm -rf $d; mkdir -p $d
            # one fio run of the job file's sections (stonewalled, one after the other)
            DAXFS_BENCH_DIR=/mnt/$t/fio DAXFS_BENCH_RUNTIME=$rt \
                host fio $secargs --output-format=json $R/bench/fio/table2.fio \
                > /out/fio-$t-$rep.json 2>/out/fio-$t-$rep.err ||
                vm_fail "fio on $t: $(tail -3 /out/fio-$t-$rep.err)"
            step=$((step + 1))
            bench_log "progress $step/$total fio $t rep $rep ($nsec sections) done"
            rm -rf $d
            host $BIN/meta_bench posix /mnt/$t/meta $nfiles > /out/meta-$t-$rep.csv 2>/tmp/err ||
                vm_fail "meta_bench on $t: $(cat /tmp/err)"
            step=$((step + 1))
            bench_log "progress $step/$total meta $t rep $rep: $(tr '\n' ' ' < /out/meta-$t-$rep.csv)"
        done
    done
    umount_all
    vm_result table2=ok ;;
ratio)
    rounds=$1; rt=$2; targets=$(echo "$3" | tr '+' ' ')
    mount_all "$5"
    sections=$(job_sections "$4")
    bench_log "ratio start rounds=$rounds runtime=$rt targets=[$targets] vcpus=$(nproc)"
    for rnd in $(seq 1 $rounds); do
        set -- $(rotated $rnd $targets)
        for t in "$@"; do rm -rf $MNT/$t/fio; mkdir -p $MNT/$t/fio; done
        for s in $sections; do
            for t in "$@"; do
                case $s in seqwrite-first-*) rm -f $MNT/$t/fio/* ;; esac
                DAXFS_BENCH_DIR=/mnt/$t/fio DAXFS_BENCH_RUNTIME=$rt \
                    host fio --section=$s --output-format=json $R/bench/fio/table2.fio \
                    > /out/ratio-$t-$rnd-$s.json 2>/tmp/err ||
                    vm_fail "fio $s on $t: $(tail -3 /tmp/err)"
            done
        done
        bench_log "ratio round $rnd/$rounds done"
    done
    umount_all
    vm_result ratio=ok ;;
meta)
    # NFILES or NFILES:LISTINGS (meta_bench's listings per round: 10)
    rounds=$1; nfiles=${2%%:*}; targets=$(echo "$3" | tr '+' ' ')
    listings=10
    case $2 in *:*) listings=${2#*:} ;; esac
    mount_all "$4"
    bench_log "meta start rounds=$rounds nfiles=$nfiles listings=$listings targets=[$targets] vcpus=$(nproc)"
    for rnd in $(seq 1 $rounds); do
        set -- $(rotated $rnd $targets)
        for t in "$@"; do
            # daxfsnotrust: the daxfs mount with trust_cached=0 (every
            # name looked up again, no listing kept: docs/kernel.md); the
            # plain daxfs runs set it back to 1, the default
            d=$t
            [ $t = daxfsnotrust ] && d=daxfs
            [ $d = daxfs ] && echo $([ $t = daxfsnotrust ] && echo 0 || echo 1) \
                > /sys/module/daxfs/parameters/trust_cached
            rm -rf $MNT/$d/meta
            host $BIN/meta_bench posix /mnt/$d/meta $nfiles $listings > /out/meta-$t-$rnd.csv 2>/tmp/err ||
                vm_fail "meta_bench on $t: $(cat /tmp/err)"
        done
        bench_log "meta round $rnd/$rounds done"
    done
    umount_all
    vm_result meta=ok ;;
profile)
    # RUNTIME:g call graphs, each function with its callees
    perf_mode "$1"; rt=$spec; targets=$(echo "$2" | tr '+' ' ')
    mount_all "$4"
    for s in $(job_sections "$3"); do
        for t in $targets; do
            rm -rf $MNT/$t/fio; mkdir -p $MNT/$t/fio
            run="fio --section=$s --output-format=json $R/bench/fio/table2.fio"
            DAXFS_BENCH_DIR=/mnt/$t/fio DAXFS_BENCH_RUNTIME=$rt host $run \
                > /out/profile-$t-$s.json 2>/tmp/err || vm_fail "fio $s on $t: $(tail -3 /tmp/err)"
            DAXFS_BENCH_DIR=/mnt/$t/fio DAXFS_BENCH_RUNTIME=$rt \
                host perf record -q $graph -e cpu-clock -F 20000 -a -o /tmp/perf.data -- $run \
                > /out/profile-$t-$s.json 2>/tmp/err || vm_fail "perf fio $s on $t: $(tail -3 /tmp/err)"
            host perf report -i /tmp/perf.data --stdio --sort sym $children \
                > /out/profile-$t-$s.txt 2>/tmp/err || vm_fail "perf report: $(tail -3 /tmp/err)"
            bench_log "profile $s on $t done"
        done
    done
    umount_all
    vm_result profile=ok ;;
metaprofile)
    # NFILES[:LISTINGS] TARGETS [MODULE]: meta_bench once per target under perf
    # NFILES:LISTINGS:STATS: every file stat'ed STATS times (a stat profile)
    # NFILES:LISTINGS:STATS:g call graphs, each function with its callees
    perf_mode "$1"
    nfiles=${spec%%:*}; listings=10; stats=1; targets=$(echo "$2" | tr '+' ' ')
    case $spec in *:*) listings=${spec#*:} ;; esac
    case $listings in *:*) stats=${listings#*:}; listings=${listings%%:*} ;; esac
    mount_all "$3"
    for t in $targets; do
        # daxfsnotrust as in meta: every listing walks the directory
        d=$t
        [ $t = daxfsnotrust ] && d=daxfs
        [ $d = daxfs ] && echo $([ $t = daxfsnotrust ] && echo 0 || echo 1) \
            > /sys/module/daxfs/parameters/trust_cached
        rm -rf $MNT/$d/meta
        DAXFS_BENCH_STATS=$stats host perf record -q $graph -e cpu-clock -F 20000 -a -o /tmp/perf.data -- \
            $BIN/meta_bench posix /mnt/$d/meta $nfiles $listings \
            > /out/meta-$t-1.csv 2>/tmp/err || vm_fail "perf meta_bench on $t: $(tail -3 /tmp/err)"
        host perf report -i /tmp/perf.data --stdio --sort sym $children \
            > /out/profile-$t-meta.txt 2>/tmp/err || vm_fail "perf report: $(tail -3 /tmp/err)"
        # with call graphs, also who calls each function (-G: callers first;
        # chains down to 0.02% of the run, so that a path's self costs add up)
        [ -z "$graph" ] || host perf report -i /tmp/perf.data --stdio --sort sym \
            --no-children -G --percent-limit 0.02 > /out/callers-$t-meta.txt 2>/tmp/err ||
            vm_fail "perf report -G: $(tail -3 /tmp/err)"
        bench_log "meta profile on $t done"
    done
    umount_all
    vm_result metaprofile=ok ;;
xhost)
    role=$1; peers=$2; secs=$3; maxops=$4; paced=$5
    mount_daxfs
    bench_log "xhost $role peers $peers: waiting for the others"
    host $BIN/xhost_bench run posix /mnt/daxfs $role $peers $secs $maxops $paced > /out/xhost-$role.csv 2>/tmp/err ||
        vm_fail "xhost_bench: $(cat /tmp/err)"
    bench_log "xhost $role done: $(tail -1 /out/xhost-$role.csv)"
    umount $MNT/daxfs
    vm_result xhost_$role=ok ;;
mapread)
    rounds=$1; mib=$2
    mount_daxfs "$3" pmd
    mount_ext4dax
    thp=/sys/kernel/mm/transparent_hugepage/enabled
    thp_was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' $thp)
    bench_log "mapread start rounds=$rounds mib=$mib thp=$thp_was kernel=$(uname -r)"
    vm_result map_thp=$thp_was map_kernel=$(uname -r)
    for rnd in $(seq 1 $rounds); do
        for t in $(rotated $rnd daxfs daxfs-pte ext4dax); do
            d=${t%-pte}
            [ $t = daxfs-pte ] && echo never > $thp
            host $BIN/preload_io /mnt/$d/map $mib mapread > /out/map-$t-$rnd.txt 2>/tmp/err ||
                vm_fail "preload_io mapread on $t: $(cat /tmp/err)"
            echo $thp_was > $thp
            rm -f $MNT/$d/map
            bench_log "mapread $t round $rnd: $(tr '\n' ' ' < /out/map-$t-$rnd.txt)"
        done
    done
    umount $MNT/ext4dax; umount $MNT/daxfs; rmmod daxfs
    vm_result mapread=ok ;;
*) vm_fail "daxfs-bench: unknown mode $mode" ;;
esac
