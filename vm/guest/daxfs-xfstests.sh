# vm/guest/daxfs-xfstests.sh XFS [TMO [PER]] - xfstests on daxfs.ko in one guest (driven by
# vm/xfstests.py; docs/testing.md "xfstests on daxfs.ko").  XFS is the path, as the
# chroot into the host root sees it, of a writable copy of an xfstests tree built OUTSIDE the
# repository, prepared by vm/xfstests.py (local.config, the exclude list and
# vm/xfstests/rc-daxfs.sed in place; /mnt/out/tree, in the writable share); check's arguments are in
# /out/check.args (e.g. -g generic/quick, or generic/003 generic/080).  Both nvdimms become
# fsdax namespaces (/dev/pmem0 = TEST_DEV, /dev/pmem1 = SCRATCH_DEV) and are formatted
# here.  check runs chrooted into the host root with build/bin first in PATH (mkfs -t daxfs
# and fsck -t daxfs find the tools there); results go to /out/results, check's summary to
# the console.  PER (seconds, 0: none) stops a test that runs longer (watch_tests below).
# Result line: DAXFS-VM-RESULT: xfstests_rc=N.
XFS=$1 TMO=${2:-3000} PER=${3:-0}
KO=$(vm_daxfs_ko)
[ -n "$XFS" ] || vm_fail "usage: daxfs-xfstests XFS [TMO]"
[ -d /out ] || vm_fail "needs a writable share at /out (Guest outdir)"
TESTS=$(cat /out/check.args) || vm_fail "no /out/check.args"
hostname "guest-$DAXFS_VM_ID"
insmod $KO 2>/tmp/err || vm_fail "insmod: $(cat /tmp/err)"
for n in 0 1; do
    out=$(host ndctl create-namespace -f -e namespace$n.0 -m fsdax --map=mem 2>&1) ||
        vm_fail "ndctl create-namespace -m fsdax namespace$n.0: $out"
    out=$(host $DAXFS_REPO_HOST/build/bin/mkfs.daxfs -f -q /dev/pmem$n 2>&1) ||
        vm_fail "mkfs.daxfs /dev/pmem$n: $out"
done
mkdir -p /host/mnt/xfst-test /host/mnt/xfst-scratch /out/results
# the chroot's /dev is a bare devtmpfs: bash's process substitution (check uses it) and
# tests that read /dev/stdin need the /proc/self/fd links that udev would make
ln -sfn /proc/self/fd /host/dev/fd
for n in 0:stdin 1:stdout 2:stderr; do ln -sfn /proc/self/fd/${n%%:*} /host/dev/${n#*:}; done
# the guest has no network but loopback, which /init leaves down: locktest (generic/131
# and others) talks to its own server over 127.0.0.1
busybox ifconfig lo 127.0.0.1 up || vm_fail "cannot bring loopback up"
# The pids of process $1 and of all its descendants.
proc_tree() {
    local all=" $1 " grew=1 s pid comm state ppid rest
    while [ $grew = 1 ]; do
        grew=0
        for s in /proc/[0-9]*/stat; do
            read -r pid comm state ppid rest < $s 2>/dev/null || continue
            case "$all" in *" $pid "*) continue ;; *" $ppid "*) all="$all$pid "; grew=1 ;; esac
        done
    done
    echo $all
}

# A test still running after PER seconds is stopped, so that one slow test (a loop of a
# thousand xfs_io processes takes most of an hour under TCG) does not hold the rest of a
# run back.  check then records it as failed; its name goes to /out/overtime.log, and
# vm/xfstests_counts.py counts it as cut off, not as a failure.  The running test is the
# last line of check.log while it has no verdict yet ("generic/027   ").
watch_tests() {
    local cur= since=0 line now pids root
    while sleep 10; do
        line=$(tail -c 200 /out/check.log 2>/dev/null | tail -n 1)
        case "$line" in
        generic/[0-9]*[0-9]|generic/[0-9]*[0-9]" "*) ;;
        *) cur=; continue ;;
        esac
        set -- $line
        [ $# = 1 ] || { cur=; continue; }
        now=$(date +%s)
        [ "$1" = "$cur" ] || { cur=$1; since=$now; continue; }
        [ $((now - since)) -ge $PER ] || continue
        root=
        for c in /proc/[0-9]*/cmdline; do
            case "$(tr '\0' ' ' < $c 2>/dev/null)" in
            *"/tests/$cur "*) root=${c#/proc/}; root=${root%/cmdline}; break ;;
            esac
        done
        [ -n "$root" ] || continue
        pids=$(proc_tree $root)
        echo "$cur $PER" >> /out/overtime.log
        vm_log "$cur: over the per-test limit of $PER s, stopping it"
        kill -TERM $root
        sleep 20
        kill -KILL $pids 2>/dev/null
        since=$((now + 1000000))
    done
}
[ "$PER" -gt 0 ] && { watch_tests & }
vm_log "running ./check on $(echo $TESTS | wc -w) arguments"
host env PATH="$DAXFS_REPO_HOST/build/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    timeout $TMO bash -c "cd $XFS && ./check -E $XFS/daxfs.exclude $TESTS" \
    > /out/check.log 2>&1
rc=$?
tail -40 /out/check.log
vm_result xfstests_rc=$rc
umount /host/mnt/xfst-test /host/mnt/xfst-scratch 2>/dev/null
exit 0
