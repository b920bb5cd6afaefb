# vm/guest/daxfs-suites.sh KEY=VALUE... - run public file-system test suites on a daxfs.ko
# mount in one guest (driven by vm/run-suites.sh / vm/suites.py; see docs/testing.md,
# "External suites").  The suites are host binaries built OUTSIDE the repository; they run
# chrooted into the host root (/host), where the daxfs mount (/host/mnt/daxfs, a tmpfs
# mount point) appears as /mnt/daxfs.  Nothing is fetched or built here.
#   pjd=DIR        pjdfstest source tree with the built ./pjdfstest binary (tests in DIR/tests)
#   xfs=DIR        xfstests tree with ltp/fsx and ltp/fsstress built
#   run=A+B+...    which runs, in this order (default pjd+fsx+fsxnomap+fsstress):
#                    pjd        prove -r DIR/tests (all of pjdfstest), from /mnt/daxfs/pjd
#                    pjd:SUB    only DIR/tests/SUB (pjd:unlink, pjd:unlink/14.t; results and
#                               logs are named pjd-SUB with / and . as _)
#                    fsx        fsx with mapped reads and writes (its default), seeds 1 and 2
#                    fsxnomap   fsx -W -R (no mmap), seed 3
#                    fsstress   fsstress -d /mnt/daxfs/fss -n N -p P -s 1
#   fsxn=N         fsx operations per run (20000)
#   fssn=N fssp=P  fsstress operations per process and processes (2000, 4)
#   tmo=SECS       timeout for each run (1800)
#   pjdj=N         prove -j N (parallel test files; 1)
# Full logs go to /out/<run>.log when a writable share is given (else /tmp, and their tails
# to the console).  Result lines: DAXFS-VM-RESULT: <run>=ok|fail ... and pjd counts.
# The script fails (rc 1) only when setup, umount, rmmod or the dmesg check fails; suite
# failures are reported as results, so one boot gives all the numbers.
PJD= XFS= RUN=pjd+fsx+fsxnomap+fsstress FSXN=20000 FSSN=2000 FSSP=4 TMO=1800 PJDJ=1
for kv in "$@"; do
    case $kv in
    pjd=*) PJD=${kv#*=} ;; xfs=*) XFS=${kv#*=} ;; run=*) RUN=${kv#*=} ;;
    fsxn=*) FSXN=${kv#*=} ;; fssn=*) FSSN=${kv#*=} ;; fssp=*) FSSP=${kv#*=} ;;
    tmo=*) TMO=${kv#*=} ;; pjdj=*) PJDJ=${kv#*=} ;;
    *) vm_fail "unknown argument $kv" ;;
    esac
done
MNT=/host/mnt/daxfs          # /mnt/daxfs inside the chroot
M=/mnt/daxfs
LOGD=${DAXFS_VM_OUT:-/tmp}
KO=$(vm_daxfs_ko)

[ -f "$KO" ] || vm_fail "$KO missing: run make module"
hostname "guest-$DAXFS_VM_ID"
insmod $KO 2>/tmp/err || vm_fail "insmod: $(cat /tmp/err)"
r=$(grep -m1 'Persistent Memory' /proc/iomem | sed 's/^ *//' | cut -d' ' -f1)
[ -n "$r" ] || vm_fail "no Persistent Memory range in /proc/iomem"
start=0x${r%-*}
sz=$(( 0x${r#*-} - start + 1 ))
pmem_unbind_in $start $(( start + sz - 1 ))
mkdir -p $MNT
mount -t daxfs -o phys=$start,size=$sz none $MNT 2>/tmp/err || vm_fail "mount: $(cat /tmp/err)"
vm_log "mounted daxfs phys=$start size=$sz at $MNT"

# run NAME CMD... : CMD in the chroot with a timeout, full log to $LOGD/NAME.log
run_logged() {
    local name=$1 rc t0
    shift
    t0=$(cut -d' ' -f1 /proc/uptime)
    host timeout -k 10 $TMO "$@" > $LOGD/$name.log 2>&1
    rc=$?
    vm_log "$name: rc=$rc in $(awk -v a=$t0 '{printf "%.0f", $1 - a}' /proc/uptime) s: $*"
    return $rc
}

for r in $(echo "$RUN" | tr '+' ' '); do
    case $r in
    pjd|pjd:*)
        [ -x "/host$PJD/pjdfstest" ] || vm_fail "pjd=$PJD: no pjdfstest binary there"
        sub=${r#pjd}; sub=${sub#:}
        name=pjd${sub:+-$(echo $sub | tr '/.' '__')}
        mkdir -p $MNT/pjd
        run_logged $name sh -c "cd $M/pjd && prove -j $PJDJ -r $PJD/tests/$sub"
        rc=$?
        l=$LOGD/$name.log
        tail -n 40 $l | sed 's/^/  /'
        # "Files=235, Tests=8789, ..." and "Failed N/M subtests" lines
        files=$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\1/p' $l)
        tests=$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\2/p' $l)
        failed=$(sed -n 's/.*Failed \([0-9]*\)\/[0-9]* subtests.*/\1/p' $l | awk '{s+=$1} END {print s+0}')
        badfiles=$(grep -c '^/.*\.t .*\(Wstat\|Failed\|Dubious\)' $l)
        vm_result "${name}=$([ $rc = 0 ] && echo ok || echo fail)" "${name}_files=${files:-0}" \
            "${name}_tests=${tests:-0}" "${name}_failed=$failed" "${name}_badfiles=$badfiles"
        rm -rf $MNT/pjd ;;
    fsx)
        ok=ok
        for seed in 1 2; do
            run_logged fsx$seed $XFS/ltp/fsx -N $FSXN -S $seed -l 262144 -o 65536 \
                $M/fsx$seed || { ok=fail; tail -n 30 $LOGD/fsx$seed.log | sed 's/^/  /'; }
        done
        vm_result fsx=$ok ;;
    fsxnomap)
        ok=ok
        run_logged fsxnomap $XFS/ltp/fsx -N $FSXN -S 3 -W -R -l 262144 -o 65536 \
            $M/fsxnomap || { ok=fail; tail -n 30 $LOGD/fsxnomap.log | sed 's/^/  /'; }
        vm_result fsxnomap=$ok ;;
    fsstress)
        mkdir -p $MNT/fss
        ok=ok
        run_logged fsstress $XFS/ltp/fsstress -d $M/fss -n $FSSN -p $FSSP -s 1 || ok=fail
        tail -n 30 $LOGD/fsstress.log | sed 's/^/  /'
        # fsstress only fails on its own errors; also check the tree can be walked + removed
        host sh -c "find $M/fss | wc -l && rm -rf $M/fss" > $LOGD/fsstress-rm.log 2>&1 ||
            { ok=fail; cat $LOGD/fsstress-rm.log; }
        [ -e $MNT/fss ] && { ok=fail; vm_log "fsstress tree not removed"; }
        vm_result fsstress=$ok ;;
    *) vm_fail "unknown run $r" ;;
    esac
done

# fsx leaves FILE.fsxlog and FILE.fsxgood beside its file: keep them with the logs
for f in $MNT/fsx*; do
    case $f in *.fsxlog|*.fsxgood) cp $f $LOGD/ 2>/dev/null ;; esac
done
rm -f $MNT/fsx*
left=$(ls -A $MNT | tr '\n' ' ')
[ -z "$left" ] || vm_log "left in the mount: $left"
umount $MNT 2>/tmp/err || vm_fail "umount: $(cat /tmp/err)"
rmmod daxfs 2>/tmp/err || vm_fail "rmmod: $(cat /tmp/err)"
bad=$(dmesg | grep -E "BUG|WARNING|Oops|still has objects|general protection|daxfs.*leak" |
      grep -v -e "module verification" -e "ommand line:")  # the repo path is no report
dmesg > $LOGD/dmesg.log
[ -z "$bad" ] || vm_fail "dmesg: $bad"
vm_log "umount + rmmod done, dmesg clean"
