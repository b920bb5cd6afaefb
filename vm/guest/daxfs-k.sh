# vm/guest/daxfs-k.sh STEP... - daxfs.ko steps inside a guest, run in order (stops at the
# first failure).  The filesystem is mounted at /host/mnt/daxfs, which chrooted host tools
# (`host python3 ...`, build/bin/*) see as /mnt/daxfs.  Steps:
#   load                  insmod $DAXFS_REPO/kernel/daxfs.ko (and hostname guest-ID: the name
#                         this guest's kernel mounts give themselves in the host table)
#   load:REL              the same with $DAXFS_REPO/REL (a module with a re-introduced
#                         defect, make module-bug)
#   mount:phys[:OPTS]     mount -t daxfs -o phys=<nvdimm start>,size=<nvdimm size>[,OPTS] none
#                         (physN: the Nth nvdimm's range, N = 1, 2, ...); nd_pmem is unbound
#                         from the namespaces in that range first (daxfs claims it);
#                         physkeep: the 1st, left bound; physover: the 1st and 2 MiB beyond
#   mount:pmem[:OPTS]     mount -t daxfs [-o OPTS] /dev/pmem0            (OPTS: '+' stands for ',',
#                         @REPO for $DAXFS_REPO, e.g. backing=@REPO/build/pc/x/bk0)
#   trymount:phys|pmem:OPTS  mount as mount:, and where the kernel refuses OPTS mount without
#                         them (vm_result mount_opts=given, or mount_refused=its dmesg line)
#   param:NAME:VAL        echo VAL > /sys/module/daxfs/parameters/NAME
#   badmount:physN|pmemN  the mount must fail without an oops, and dmesg must say why
#   umount                umount the filesystem
#   rmmod                 rmmod daxfs (the inode cache must be empty: no "still has objects")
#   fsdax                 convert namespace0.0 to fsdax (/dev/pmem0 data at file offset 2 MiB)
#   mkfs:pmem[:ARGS]      host mkfs.daxfs -f -q [ARGS ('+' for ' ')] /dev/pmem0
#   devdax                convert namespace0.0 to devdax, 2 MiB alignment (/dev/dax0.0)
#   udax                  the user-space tools on /dev/dax0.0: mkfs.daxfs, a file written and
#                         read back through `daxfs run`, whose mapping of the device is
#                         reported (vm_result udax_data, udax_page_kb, udax_aligned), then
#                         fsck.daxfs -n (vm_result udax_fsck=exit code)
#   mounts                report the /proc/mounts line (vm_result mounts=...)
#   iomem                 how many /proc/iomem entries daxfs owns (vm_result iomem_daxfs=N)
#   py:SCEN[:ARG...]      host python3 vm/daxfs_kguest.py SCEN /mnt/daxfs ARG...
#   pc:SCEN[:ARG...]      host python3 vm/pcache_kguest.py SCEN /mnt/daxfs ARG... (split mode)
#   mm:SCEN[:ARG...]      host python3 vm/mmap_kguest.py SCEN /mnt/daxfs ARG... (mappings)
#   hd:SCEN[:ARG...]      host python3 vm/harden_kguest.py SCEN /mnt/daxfs ARG... (hardening)
#   fa:SCEN[:ARG...]      host python3 vm/falloc_kguest.py SCEN /mnt/daxfs ARG... (fallocate)
#   xa:SCEN[:ARG...]      host python3 vm/xattr_kguest.py SCEN /mnt/daxfs ARG... (xattrs, ACLs)
#   vf:SCEN[:ARG...]      host python3 vm/vfs_kguest.py SCEN /mnt/daxfs ARG... (O_TMPFILE,
#                         whiteouts, overlayfs, atime, mapped-write mtime)
#   df:SCEN[:ARG...]      host python3 vm/diff_kguest.py SCEN /mnt/daxfs ARG... (the
#                         differential test of random calls against a tmpfs)
#   uffd:N                build/vm-helpers/uffd_stall on the mount: N threads block in user
#                         page faults (userfaultfd) inside read/write/getdents; the mount must
#                         keep working and reclaiming meanwhile (vm_result uffd_*)
#   clean                 fail if dmesg shows a daxfs BUG/WARNING/leak
#   sleep:N
MNT=/host/mnt/daxfs
KO=$(vm_daxfs_ko)
mkdir -p $MNT

# The kernel command line names the repository path (daxfsvm.repo=), which
# may itself contain a pattern word ("leak"): those lines are no report.
daxfs_dmesg_bad() {
    dmesg | grep -E "BUG|WARNING|Oops|still has objects|general protection|daxfs.*leak" |
        grep -v -e "module verification" -e "ommand line:"
}

for step in "$@"; do
    IFS=: read -r a x rest <<EOT
$step
EOT
    opts=$(echo "$rest" | tr '+' ',' | sed "s#@REPO#$DAXFS_REPO#g")
    case $a in
    load)
        [ -z "$x" ] || KO=$DAXFS_REPO/$x
        [ -f "$KO" ] || vm_fail "$KO missing: run make module"
        hostname "guest-$DAXFS_VM_ID"
        insmod $KO 2>/tmp/err || vm_fail "insmod: $(cat /tmp/err)"
        vm_log "daxfs.ko loaded: ${KO#$DAXFS_REPO/}" ;;
    mount|badmount|trymount)
        case $x in
        phys*)
            n=${x#phys}
            keep= over=0
            [ "$n" = keep ] && { keep=1; n=1; }
            [ "$n" = over ] && { over=$((2 << 20)); n=1; }
            r=$(grep 'Persistent Memory' /proc/iomem | sed -n "${n:-1}p" | sed 's/^ *//' | cut -d' ' -f1)
            [ -n "$r" ] || vm_fail "no Persistent Memory range ${n:-1} in /proc/iomem"
            start=0x${r%-*}
            sz=$(( 0x${r#*-} - start + 1 + over ))
            # daxfs claims the range: the pmem namespace on it must let go
            # first (physkeep: leave it bound, the mount must be refused)
            [ -n "$keep" ] || pmem_unbind_in $start $(( start + sz - 1 ))
            o="phys=$start,size=$sz${opts:+,$opts}"
            cmd="mount -t daxfs -o $o none $MNT"
            plain="mount -t daxfs -o phys=$start,size=$sz none $MNT" ;;
        pmem*)
            n=${x#pmem}
            cmd="mount -t daxfs ${opts:+-o $opts} /dev/pmem${n:-0} $MNT"
            plain="mount -t daxfs /dev/pmem${n:-0} $MNT" ;;
        *) vm_fail "mount: phys or pmem, not '$x'" ;;
        esac
        if [ $a = trymount ]; then
            if $cmd 2>/tmp/err; then
                vm_result mount_opts=given
            else
                why=$(dmesg | grep -i "daxfs" | tail -1)
                vm_log "refused: $cmd: $(cat /tmp/err) / dmesg: $why"
                vm_result mount_refused="$(echo $why | tr ' =' '_-' | cut -c1-200)"
                cmd=$plain
            fi
        fi
        if [ $a = trymount ] && grep -q " $MNT " /proc/mounts; then
            vm_log "mounted: $cmd"
        elif [ $a != badmount ]; then
            $cmd 2>/tmp/err || vm_fail "$cmd: $(cat /tmp/err); dmesg: $(dmesg | grep daxfs | tail -3 | tr '\n' ';')"
            vm_log "mounted: $cmd"
        else
            $cmd 2>/tmp/err && { umount $MNT; vm_fail "$cmd succeeded on a bad image"; }
            why=$(dmesg | grep -i "daxfs" | tail -1)
            vm_log "refused as expected: $(cat /tmp/err) / dmesg: $why"
            echo "$why" | grep -q "daxfs" || vm_fail "no daxfs message in dmesg"
            vm_result badmount_$x="$(echo $why | tr ' =' '_-' | cut -c1-120)"
        fi ;;
    umount)
        umount $MNT 2>/tmp/err || vm_fail "umount: $(cat /tmp/err)"
        vm_log "unmounted" ;;
    rmmod)
        rmmod daxfs 2>/tmp/err || vm_fail "rmmod: $(cat /tmp/err)"
        vm_log "daxfs.ko removed" ;;
    fsdax)
        out=$(host ndctl create-namespace -f -e namespace0.0 -m fsdax --map=mem 2>&1) ||
            vm_fail "ndctl create-namespace -m fsdax: $out"
        vm_log "namespace0.0 now fsdax" ;;
    devdax)
        out=$(host ndctl create-namespace -f -e namespace0.0 -m devdax --align=2M 2>&1) ||
            vm_fail "ndctl create-namespace -m devdax: $out"
        [ -c /host/dev/dax0.0 ] || vm_fail "no /dev/dax0.0 after: $out"
        vm_log "namespace0.0 now devdax" ;;
    udax)
        b=$DAXFS_REPO_HOST/build/bin
        out=$(host $b/mkfs.daxfs -f -q /dev/dax0.0 2>&1) || vm_fail "mkfs.daxfs /dev/dax0.0: $out"
        host $b/daxfs -r /dev/dax0.0 run -- sh -c \
            'echo devdax-data > /daxfs/x && cat /daxfs/x /proc/self/smaps' > /tmp/udax 2>&1 ||
            vm_fail "daxfs run on /dev/dax0.0: $(head -c 300 /tmp/udax)"
        range=$(grep -m1 ' /dev/dax0.0$' /tmp/udax | cut -d' ' -f1)
        start=$(( 0x${range%-*} ))
        vm_result udax_data="$(head -1 /tmp/udax)" \
            udax_page_kb="$(grep -A30 ' /dev/dax0.0$' /tmp/udax | grep -m1 KernelPageSize |
                            tr -s ' ' | cut -d' ' -f2)" \
            udax_aligned=$(( start % (2 << 20) == 0 ))
        host $b/fsck.daxfs -n /dev/dax0.0 > /tmp/udax 2>&1
        vm_result udax_fsck=$?
        vm_log "user space on /dev/dax0.0: $(tr '\n' ';' < /tmp/udax)" ;;
    mkfs)
        args=$(echo "$rest" | tr '+' ' ')
        out=$(host $DAXFS_REPO_HOST/build/bin/mkfs.daxfs -f -q $args /dev/pmem0 2>&1) ||
            vm_fail "mkfs.daxfs /dev/pmem0: $out"
        vm_log "mkfs.daxfs /dev/pmem0 done $out" ;;
    iomem)
        n=$(grep -c ' : daxfs$' /proc/iomem)
        vm_log "/proc/iomem: $(grep -B1 ' : daxfs$' /proc/iomem | tr '\n' ';')"
        vm_result iomem_daxfs=$n ;;
    mounts)
        l=$(grep " $MNT " /proc/mounts) || vm_fail "not in /proc/mounts"
        vm_log "/proc/mounts: $l"
        vm_result mounts="$(echo "$l" | cut -d' ' -f4)" ;;
    py|pc|mm|hd|fa|xa|vf|df)
        pargs=$(echo "$rest" | tr ':' ' ')
        script=daxfs_kguest.py
        [ $a = pc ] && script=pcache_kguest.py
        [ $a = mm ] && script=mmap_kguest.py
        [ $a = hd ] && script=harden_kguest.py
        [ $a = fa ] && script=falloc_kguest.py
        [ $a = xa ] && script=xattr_kguest.py
        [ $a = vf ] && script=vfs_kguest.py
        [ $a = df ] && script=diff_kguest.py
        host python3 $DAXFS_REPO_HOST/vm/$script $x /mnt/daxfs $pargs ||
            vm_fail "scenario $x failed"
        vm_log "scenario $x done" ;;
    param)
        echo "$rest" > /sys/module/daxfs/parameters/$x || vm_fail "cannot set $x=$rest"
        vm_log "daxfs.$x=$rest" ;;
    clean)
        bad=$(daxfs_dmesg_bad)
        [ -z "$bad" ] || vm_fail "dmesg: $bad"
        vm_log "dmesg clean" ;;
    uffd)
        out=$($DAXFS_REPO/build/vm-helpers/uffd_stall $MNT $x 2>&1)
        rc=$?
        echo "$out" | while read -r l; do vm_log "uffd_stall: $l"; done
        vm_result uffd_result="$(echo "$out" | sed -n 's/^result=//p')" \
            uffd_blocked="$(echo "$out" | sed -n 's/^blocked=\([0-9]*\).*/\1/p')"
        [ $rc = 0 ] || vm_fail "uffd_stall: $(echo "$out" | grep fail= | head -3 | tr '\n' ' ')" ;;
    sleep) sleep $x ;;
    *) vm_fail "unknown step $step" ;;
    esac
done
