#!/bin/bash
# vm/run-guest.sh - boot one emulated DaxFS host (QEMU TCG guest, Debian kernel, our initrd)
# that runs one guest script and powers off. Always bounded by `timeout`.
#
#   vm/run-guest.sh [options] SCRIPT [ARG...]
#
#   SCRIPT     vm/guest/SCRIPT.sh, or a path relative to the repo / an absolute host path
#   -n NAME    guest name, given to the script as $DAXFS_VM_ID          (default A)
#   -s FILE    shared memory backing file (nvdimm 0 -> /dev/pmem0)      (default /dev/shm/daxfs-vm)
#              may be given again for a 2nd, 3rd... nvdimm; "-s none" for no nvdimm
#   -z SIZE    size of each backing file (QEMU suffix: M, G)            (default 256M)
#   -l LOG     console log                                              (default build/vm/logs/NAME.log)
#   -t SECS    timeout of the whole QEMU run                            (default 120)
#   -i INITRD  initramfs                                  (default build/vm/initrd.cpio.gz, built if missing)
#   -k KERNEL  guest kernel                               (default /boot/vmlinuz-<detected version>)
#   -m MEM     guest RAM                                                (default 1G)
#   -c CPUS    vCPUs; maxcpus is always >= 2 (TCG cmpxchg atomicity)    (default 1)
#   -o DIR     host directory shared writable at /out in the guest
#   -e ARGS    extra kernel command line
#   -p FILE    QEMU writes its pid there (a test that kills the guest mid-run)
#   -v         also copy the console to stdout
#   -x         print the QEMU command line and exit
# Every option also has an environment default: DAXFS_VM_{NAME,SHM,SHM_SIZE,LOG,TIMEOUT,INITRD,
# KERNEL,MEM,CPUS,OUT,APPEND,PIDFILE}; DAXFS_VM_ACCEL=tcg (default; /dev/kvm here is PVM and cannot
# boot a stock kernel) or kvm.  DAXFS_VM_ICOUNT=shift=0,sleep=off (TCG only): the guest's
# clocks count its instructions (1 ns each) and not host time, so its timings do not
# depend on the machine's load (bench/guest_ratio.py); one TCG thread runs all vCPUs, so
# cmpxchg is atomic only inside this guest: not for guests sharing a region.
# Exit status: the guest script's rc (from the "DAXFS-VM: script rc=N" console line),
# 124 on timeout, 125 if the guest ended without that line (panic, boot failure).
set -uo pipefail
. "$(dirname "$0")/common.sh"

NAME=${DAXFS_VM_NAME:-A}
SHMS=()
[ -n "${DAXFS_VM_SHM:-}" ] && SHMS=("$DAXFS_VM_SHM")
SIZE=${DAXFS_VM_SHM_SIZE:-256M}
LOG=${DAXFS_VM_LOG:-}
TMO=${DAXFS_VM_TIMEOUT:-120}
INITRD=${DAXFS_VM_INITRD:-$DAXFS_VM_BUILD/initrd.cpio.gz}
KERNEL=${DAXFS_VM_KERNEL:-}
MEM=${DAXFS_VM_MEM:-1G}
CPUS=${DAXFS_VM_CPUS:-1}
OUTDIR=${DAXFS_VM_OUT:-}
APPEND=${DAXFS_VM_APPEND:-}
PIDFILE=${DAXFS_VM_PIDFILE:-}
ACCEL=${DAXFS_VM_ACCEL:-tcg}
VERBOSE=0
DRY=0
while getopts "n:s:z:l:t:i:k:m:c:o:e:p:vxh" o; do
    case $o in
        n) NAME=$OPTARG ;; s) SHMS+=("$OPTARG") ;; z) SIZE=$OPTARG ;; l) LOG=$OPTARG ;;
        t) TMO=$OPTARG ;; i) INITRD=$OPTARG ;; k) KERNEL=$OPTARG ;; m) MEM=$OPTARG ;;
        c) CPUS=$OPTARG ;; o) OUTDIR=$OPTARG ;; e) APPEND="$APPEND $OPTARG" ;;
        p) PIDFILE=$OPTARG ;;
        v) VERBOSE=1 ;; x) DRY=1 ;;
        *) sed -n '2,30p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '2,30p' "$0"; exit 2; }
SCRIPT=$1; shift
[ ${#SHMS[@]} -gt 0 ] || SHMS=(/dev/shm/daxfs-vm)
[ "${SHMS[0]}" = none ] && SHMS=()
ARGS=$(IFS=,; echo "$*")
case "$SCRIPT $ARGS $NAME" in *\"*|*\'*) echo "run-guest: quotes not allowed in script/args/name" >&2; exit 2 ;; esac
for a in "$@"; do case $a in *,*|*\ *|"") echo "run-guest: guest args must be non-empty without ',' or ' ': '$a'" >&2; exit 2 ;; esac; done

if [ -z "$KERNEL" ]; then KVER=$(daxfs_vm_kver) || exit 1; KERNEL=$DAXFS_VM_ROOT/boot/vmlinuz-$KVER; fi
[ -r "$KERNEL" ] || { echo "run-guest: kernel $KERNEL not readable" >&2; exit 1; }
# the default initrd is (re)built when missing or older than its inputs
if [ "$INITRD" = "$DAXFS_VM_BUILD/initrd.cpio.gz" ] &&
   { [ ! -f "$INITRD" ] || [ -n "$(find "$DAXFS_VM_DIR/init" "$DAXFS_VM_DIR/mkinitrd.sh" "$DAXFS_VM_DIR/common.sh" \
                               "$DAXFS_VM_DIR"/guest/*.sh -newer "$INITRD" 2>/dev/null)" ]; }; then
    "$DAXFS_VM_DIR/mkinitrd.sh" -o "$INITRD" >&2 || exit 1
fi
[ -f "$INITRD" ] || { echo "run-guest: initrd $INITRD missing" >&2; exit 1; }
[ -n "$LOG" ] || LOG=$DAXFS_VM_BUILD/logs/$NAME.log
mkdir -p "$(dirname "$LOG")"
# maxcpus >= 2: with a single possible vCPU, QEMU TCG emits non-atomic cmpxchg (lost updates
# between QEMU processes sharing the backing file).  The guest kernel with one present vCPU
# still patches LOCK_PREFIX away (SMP alternatives, UP code): region atomics in guest code must
# carry a literal lock prefix (core/compat.h does; vm/README.md).
MAXCPUS=$(( CPUS > 2 ? CPUS : 2 ))

args=(-name "daxfs-$NAME" -nodefaults -nographic -display none -serial stdio -monitor none
      -no-reboot -smp "$CPUS,maxcpus=$MAXCPUS")
[ -n "$PIDFILE" ] && args+=(-pidfile "$PIDFILE")
if [ "$ACCEL" = kvm ]; then args+=(-accel kvm -cpu host)
elif [ -n "${DAXFS_VM_ICOUNT:-}" ]; then
    args+=(-accel tcg,thread=single,tb-size=256 -icount "$DAXFS_VM_ICOUNT" -cpu max)
else args+=(-accel tcg,thread=multi,tb-size=256 -cpu max); fi
if [ ${#SHMS[@]} -gt 0 ]; then
    args+=(-machine pc,nvdimm=on -m "$MEM,slots=$(( ${#SHMS[@]} > 4 ? ${#SHMS[@]} : 4 )),maxmem=64G")
    i=0
    for f in "${SHMS[@]}"; do
        args+=(-object "memory-backend-file,id=m$i,share=on,mem-path=$f,size=$SIZE"
               -device "nvdimm,memdev=m$i,id=nv$i")
        i=$((i + 1))
    done
else
    args+=(-machine pc -m "$MEM")
fi
args+=(-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap)
# the repository again on its own: init mounts it back at its host path
# after covering /host/tmp etc. with tmpfs (a checkout under /tmp, as in CI)
args+=(-virtfs "local,path=$DAXFS_REPO,mount_tag=repo,security_model=none,readonly=on,multidevs=remap")
if [ -n "$OUTDIR" ]; then
    mkdir -p "$OUTDIR"
    args+=(-virtfs "local,path=$(cd "$OUTDIR" && pwd),mount_tag=out,security_model=none,multidevs=remap")
fi
# oops=panic + panic=-1 + -no-reboot: a kernel oops ends the run at once (log keeps the trace).
# no_timer_check: on a loaded host the TCG guest's early check that the 8254 timer ticks
# through the IO-APIC can time out, and the boot panics ("IO-APIC + timer doesn't work").
CMDLINE="console=ttyS0 quiet loglevel=4 panic=-1 oops=panic no_timer_check daxfsvm.id=$NAME daxfsvm.repo=$DAXFS_REPO daxfsvm.script=$SCRIPT"
[ -n "$ARGS" ] && CMDLINE="$CMDLINE daxfsvm.args=$ARGS"
CMDLINE="$CMDLINE $APPEND"
args+=(-kernel "$KERNEL" -initrd "$INITRD" -append "$CMDLINE")

if [ $DRY = 1 ]; then printf '%q ' timeout -k 5 "$TMO" qemu-system-x86_64 "${args[@]}"; echo; exit 0; fi
echo "DAXFS-VM-HOST: $(date +%T.%N | cut -c1-12) start guest $NAME timeout=${TMO}s" > "$LOG"
for attempt in 1 2; do
    if [ $VERBOSE = 1 ]; then
        timeout -k 5 "$TMO" qemu-system-x86_64 "${args[@]}" < /dev/null 2>&1 | tee -a "$LOG"
        qrc=${PIPESTATUS[0]}
    else
        timeout -k 5 "$TMO" qemu-system-x86_64 "${args[@]}" < /dev/null >> "$LOG" 2>&1
        qrc=$?
    fi
    echo "DAXFS-VM-HOST: $(date +%T.%N | cut -c1-12) qemu exit $qrc" >> "$LOG"
    # QEMU itself killed by a signal before the guest's init ran (a SIGSEGV of
    # the emulator while SeaBIOS booted, seen once on a loaded machine,
    # 2026-11-29): nothing reached the shared file yet, so boot once more
    if [ $attempt = 1 ] && [ "$qrc" -gt 128 ] && [ "$qrc" != 137 ] &&
       ! grep -q "DAXFS-VM: init start" "$LOG"; then
        echo "DAXFS-VM-HOST: $(date +%T.%N | cut -c1-12) qemu died by signal $((qrc - 128)) before init: booting again" >> "$LOG"
        continue
    fi
    break
done
if [ $qrc = 124 ] || [ $qrc = 137 ]; then echo "run-guest: guest $NAME timed out after ${TMO}s (log $LOG)" >&2; exit 124; fi
rc=$(sed -n 's/.*DAXFS-VM: script rc=\([0-9]*\).*/\1/p' "$LOG" | tail -1)
if [ -z "$rc" ]; then echo "run-guest: guest $NAME ended without a script rc (qemu rc $qrc, log $LOG)" >&2; exit 125; fi
exit "$rc"
