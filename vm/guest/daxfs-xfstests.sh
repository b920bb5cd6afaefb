# vm/guest/daxfs-xfstests.sh XFS [TMO] - xfstests on daxfs.ko in one guest (driven by
# vm/xfstests.py; docs/testing.md "xfstests on daxfs.ko").  XFS is the path, as the
# chroot into the host root sees it, of a writable copy of an xfstests tree built OUTSIDE the
# repository, prepared by vm/xfstests.py (local.config, the exclude list and
# vm/xfstests/rc-daxfs.sed in place; /mnt/out/tree, in the writable share); check's arguments are in
# /out/check.args (e.g. -g generic/quick, or generic/003 generic/080).  Both nvdimms become
# fsdax namespaces (/dev/pmem0 = TEST_DEV, /dev/pmem1 = SCRATCH_DEV) and are formatted
# here.  check runs chrooted into the host root with build/bin first in PATH (mkfs -t daxfs
# and fsck -t daxfs find the tools there); results go to /out/results, check's summary to
# the console.  Result line: DAXFS-VM-RESULT: xfstests_rc=N.
XFS=$1 TMO=${2:-3000}
KO=$DAXFS_REPO/kernel/daxfs.ko
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
vm_log "running ./check on $(echo $TESTS | wc -w) arguments"
host env PATH="$DAXFS_REPO_HOST/build/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    timeout $TMO bash -c "cd $XFS && ./check -E $XFS/daxfs.exclude $TESTS" \
    > /out/check.log 2>&1
rc=$?
tail -40 /out/check.log
vm_result xfstests_rc=$rc
umount /host/mnt/xfst-test /host/mnt/xfst-scratch 2>/dev/null
exit 0
